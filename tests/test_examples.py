"""The control and rigid-contact examples run (short durations) and reach what they claim.

Each example is imported from examples/ and its main() run with a short --duration; the
returned figures are checked against the closed-loop behaviour the example describes.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
HOLD_GAP = 5e-3  # rad: zero-order hold over 1 ms steps vs the continuous closed loop (O(h))
FIG2_PAPER = 1e-5  # N·s: the 2014 paper's forward/inverse agreement with its PGS (Fig. 2)
FIG2_CONVERGED = 1e-8  # N·s: the bound with the forward solver run to convergence


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_arm2_tracking_follows_the_linear_closed_loop(capsys):
    r = _load("arm2_tracking").main(["--duration", "0.6"])
    out = capsys.readouterr().out
    assert "final tracking error" in out
    assert r["max_gap"] < HOLD_GAP
    assert r["final_error"] < 0.05 * 0.4


def test_arm7_draws_the_circle_and_keeps_the_posture(capsys):
    r = _load("arm7_circle").main(["--duration", "0.8"])
    assert "tool position error" in capsys.readouterr().out
    assert r["max_position_error_after_start"] < 1e-3
    assert r["max_orientation_error"] < np.radians(0.1)
    assert r["max_posture_distance"] < 0.5
    # the tool moved along the circle: its height rose by a good part of the radius
    assert r["path"][:, 2].max() - r["path"][0, 2] > 0.02


@pytest.mark.parametrize("push", [40.0])
def test_humanoid_recovers_from_the_first_push(capsys, push):
    r = _load("humanoid_push").main(["--duration", "2.0", "--push", str(push)])
    assert "center of mass" in capsys.readouterr().out
    assert r["min_height"] > 1.2
    assert 0.005 < r["max_deviation"] < 0.1
    assert r["final_deviation"] < 0.3 * r["max_deviation"]


@pytest.mark.parametrize("name", ["ID (rigid, coulomb)", "ID (soft inverse)"])
def test_rigid_trot_controllers_keep_the_quadruped_up_through_the_first_steps(name):
    """The trot experiment's controllers (paper 002 §7) over its first 0.3 s, stiff contact."""
    trot = _load("rigid_quadruped_trot")
    m, _ = trot.make_sim(0.5, "stiff")
    r = trot.run(trot.controllers(m, 0.5)[name], 0.5, "stiff", 0.3)
    assert r["success"]
    assert np.isfinite(r["taus"]).all()
    assert r["rms"] < 0.1  # rad: the docs' success bar for tracking


def test_fig2_forward_and_inverse_impulses_agree(capsys):
    """The 2014 paper's Fig. 2 experiment over its full 10 s.

    PGS with 300 iterations within the paper's 1e-5, converged Newton within 1e-8; friction
    both sticks and slips.
    """
    fig2 = _load("fig2_hinge_friction")
    pgs300, newton = fig2.SETTINGS[1], fig2.SETTINGS[4]
    gaps, curves = fig2.main(["--out", "", "--settings", "1,4"])
    assert "max |impulse fwd − inv|" in capsys.readouterr().out
    assert gaps[pgs300] < FIG2_PAPER
    assert gaps[newton] < FIG2_CONVERGED
    # the experiment exercises every case: contact made and broken, friction at its bound
    # (slipping, |impulse| = h · frictionloss) and strictly inside it (sticking)
    m = fig2.js.models.hinge_friction()
    bound = m.opt.timestep * m.dof_frictionloss[0]
    active = np.mean(curves[:, 3] > 0)
    assert 0.2 < active < 0.95
    friction = np.abs(curves[:, 1])
    assert np.any(friction > bound * (1 - 1e-9))
    assert np.any((friction > 0.05 * bound) & (friction < 0.95 * bound))


def test_rollout_mpc_brings_the_tool_closer_to_the_target(capsys):
    """Cross-entropy MPC on batched rollouts: the tool moves toward the target."""
    r = _load("rollout_mpc").main(["--duration", "0.3", "--samples", "16", "--nthread", "2"])
    assert "rollouts of" in capsys.readouterr().out
    assert r["rollouts"] == 16 * 3 * 30  # samples × refits × 10 ms control steps
    assert r["distances"][-1] < 0.8 * r["distances"][0]


# analytical step Jacobians (aba_derivatives) against centered finite differences of the
# step (transition_derivatives, eps 1e-6): the FD truncation error (measured 8e-14 on the
# cart-pole, whose step is smooth and nearly polynomial at that scale)
ILQR_JACOBIAN_TOL = 1e-7


def test_ilqr_swings_the_cartpole_up(capsys):
    """iLQR with the analytical derivatives: the pole ends upright over the origin."""
    r = _load("ilqr_cartpole").main(["--horizon", "2.5", "--iterations", "60"])
    assert "iterations" in capsys.readouterr().out
    assert r["jacobian_error"] <= ILQR_JACOBIAN_TOL
    costs = r["costs"]
    assert all(b < a for a, b in zip(costs, costs[1:]))  # every accepted step lowers it
    assert costs[-1] < 0.1 * costs[0]
    x, theta = r["final_state"][:2]
    assert abs(theta - np.pi) < 0.05 and abs(x) < 0.05


# iLQR pushing a box through contact (examples/ilqr_push.py, 1 s horizon): the box's final
# distance from its target. Its stick–slip friction makes the optimum rough, so the short
# horizon is allowed 1 cm (measured 5.7 mm; 0.8 mm with the default 1.5 s)
PUSH_BOX_TOL = 0.01  # m
# forces js.inverse implies along the optimized trajectory vs the applied torques (and zero
# on the box): equal up to the forward solver's convergence (measured 2e-3 N·m at 1 s)
PUSH_FORCE_TOL = 1e-2  # N·m


def test_ilqr_pushes_the_box(capsys):
    """iLQR through contact: the fingertip pushes the box to its target, where it rests."""
    r = _load("ilqr_push").main(["--horizon", "1.0", "--iterations", "20"])
    out = capsys.readouterr().out
    assert "iterations" in out and "reuse_hessian" in out
    costs = r["costs"]
    assert len(costs) > 2
    assert all(b < a for a, b in zip(costs, costs[1:]))  # every accepted step lowers it
    assert costs[-1] < 0.2 * costs[0]
    assert r["box_error"] < PUSH_BOX_TOL
    assert abs(r["final_state"][4 + 2]) < 0.01  # the box's x velocity (m/s): it ends at rest
    assert r["contact_knots"] > 0  # the fingertip touched the box: the push went through contact
    assert r["force_gap"] < PUSH_FORCE_TOL
    # both ways of differencing the step were timed over the same iterations
    assert r["seconds_reuse"] > 0 and r["seconds_solve"] > 0
