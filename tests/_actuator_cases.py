"""What the actuator-type test files share: models, controls, comparisons with MuJoCo 4.0.

The comparisons: forward at a state, 1,000-step trajectories, refusals.

tests/test_pid_dcmotor.py, test_dcmotor.py and test_orientation.py each bring their own
model, cases and tolerances; the loops here are the same for all three.
"""

import re
import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError

FORWARD_FIELDS = ("actuator_length", "actuator_velocity", "actuator_force", "act_dot",
                  "qfrc_actuator")


def load_pair(xml):
    """The model in jointspace (its warnings silenced) and in MuJoCo."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = js.load_string(xml)
    return m, mujoco.MjModel.from_xml_string(xml)


def controls(mm, rng, scale=1.0):
    """Controls mostly inside, sometimes outside, each limited control's range."""
    u = rng.normal(scale=scale, size=mm.nu)
    lim = mm.actuator_ctrllimited.astype(bool)
    lo, hi = mm.actuator_ctrlrange[:, 0], mm.actuator_ctrlrange[:, 1]
    u[lim] = lo[lim] + (hi[lim] - lo[lim]) * rng.uniform(-0.2, 1.2, size=lim.sum())
    return u


def assert_forward(m, mm, d, dd, force_tol, acc_tol, acc_relative=False):
    """forward and mj_forward from the states d and dd agree.

    The actuation fields within force_tol; qacc within acc_tol, times the largest |qacc|
    (at least 1) with acc_relative.
    """
    js.forward(m, d)
    mujoco.mj_forward(mm, dd)
    for f in FORWARD_FIELDS:
        np.testing.assert_allclose(getattr(d, f), getattr(dd, f), rtol=0, atol=force_tol,
                                   err_msg=f)
    scale = max(1.0, float(np.abs(dd.qacc).max())) if acc_relative else 1.0
    np.testing.assert_allclose(d.qacc, dd.qacc, rtol=0, atol=acc_tol * scale)


def assert_trajectory(m, mm, d, dd, rng, tol, make_controls=controls):
    """1,000 steps of both from d and dd, the controls drawn anew every 100.

    qpos, qvel and act within tol all along, and the last actuator forces.
    """
    err = 0.0
    for t in range(1000):
        if t % 100 == 0:
            u = make_controls(mm, rng)
            d.ctrl[:], dd.ctrl[:] = u, u
        js.step(m, d)
        mujoco.mj_step(mm, dd)
        err = max(err, np.abs(d.qpos - dd.qpos).max(), np.abs(d.qvel - dd.qvel).max(),
                  np.abs(d.act - dd.act).max(initial=0.0))
    assert err < tol
    np.testing.assert_allclose(d.actuator_force, dd.actuator_force, rtol=0, atol=tol)


def assert_refused_as_mujoco(xml, words, element=True):
    """MuJoCo refuses xml, and jointspace with a ModelError naming the line (and element).

    The message holds every one of words.
    """
    with pytest.raises(Exception):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError) as e:
        js.load_string(xml)
    msg = str(e.value)
    for w in words:
        assert w in msg, msg
    assert re.search(r"<string>:\d+ <" if element else r"<string>:\d+", msg), msg
