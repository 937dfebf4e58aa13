"""Paper 002 §7–8: a fixed-base manipulator grasping a box and lifting it, per controller.

The embedded arm_box model (7-dof arm, two slide fingers, a 0.2 kg box on a table) follows a
joint-space plan made with `jointspace.ik`: from the upright pose to above the box with the
gripper pointing down (1 s), down around the box (1 s), fingers closing 5 mm past the box's
faces (0.5 s: the squeeze comes from that position error), lifting by 15 cm (1 s), holding
(1 s). Each controller makes the joints follow the plan while jointspace simulates:

  PD (+ gravity compensation), PID   error feedback with the model's servo gains
  ID (sensed contact)                 computed torque with the simulator's contact forces
  ID (rigid, noslip|coulomb|cfree)    computed torque with jointspace.rigid's predictions;
                                      a grip-force target (GRIP N per finger) picks,
                                      among the rigid model's solutions, the one with that
                                      squeeze (rigid.inverse_dynamics' tau_target: used by
                                      cfree's second stage; Lemke's coulomb and no-slip
                                      without second stage have no selection to make)
  ID (soft inverse)                   computed torque with the soft-contact analytical
                                      inverse (jointspace.inverse; the box's acceleration
                                      solved so that it needs no force)
  ID (no contact)                     computed torque ignoring contact (the box's weight)

with "stiff" and "compliant" contact as in rigid_quadruped_trot.py. Printed per run: RMS
arm tracking error, torque total variation, success (box lifted ≥ 10 cm and still between
the fingers at the end), box height gained and the controller's median time per step.

    python examples/rigid_arm_grasp.py [--out docs/rigid_arm_grasp.md]
"""

import argparse
import time

import numpy as np

import jointspace as js
from jointspace import control, rigid
from jointspace.types import DSBL_ACTUATION

H = 0.002
DOWN = np.array([0.0, 1.0, 0.0, 0.0])          # gripper z axis pointing down
KP_SERVO = np.array([2000, 2000, 1000, 1000, 500, 300, 100, 200, 200], dtype=float)
GRIP = 4.0      # requested squeeze per finger (N); holding the 0.2 kg box needs W/(2μ) = 0.65


def plan(m):
    """Waypoints (time, q of the 9 actuated dofs) of the grasp-and-lift plan."""
    box = np.array([0.55, 0.0, 0.425])
    q0 = m.qpos0.copy()
    pre = js.ik(m, js.Target(site="ee", pos=box + [0, 0, 0.12], quat=DOWN), q_pref=q0).qpos
    at = js.ik(m, js.Target(site="ee", pos=box + [0, 0, -0.005], quat=DOWN), q_pref=pre).qpos
    up = js.ik(m, js.Target(site="ee", pos=box + [0, 0, 0.145], quat=DOWN), q_pref=at).qpos
    closed = 0.02
    arm = slice(0, 7)
    w = []
    for t, q, f in ((0.0, q0, 0.0), (1.0, pre, 0.0), (2.0, at, 0.0), (2.5, at, closed),
                    (3.5, up, closed), (4.5, up, closed)):
        w.append((t, np.r_[q[arm], f, f]))
    return w


def references(waypoints, t):
    """q, v, a of the plan at t: quintic blends between waypoints (zero end rates)."""
    for (t0, q0), (t1, q1) in zip(waypoints[:-1], waypoints[1:]):
        if t <= t1:
            break
    s = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
    T = t1 - t0
    p = 10 * s**3 - 15 * s**4 + 6 * s**5
    dp = (30 * s**2 - 60 * s**3 + 30 * s**4) / T
    ddp = (60 * s - 180 * s**2 + 120 * s**3) / T**2
    if t >= waypoints[-1][0]:
        dp = ddp = 0.0
    dq = q1 - q0
    return q0 + p * dq, dp * dq, ddp * dq


def make_sim(contact):
    """The simulated scene with "stiff" or "compliant" contact, arm upright."""
    m = js.models.arm_box()
    m.opt.timestep = H
    m.opt_disableflags[0] |= DSBL_ACTUATION
    if contact == "stiff":
        rigid.stiff_contacts(m, H)
    d = js.make_data(m)
    return m, d


def controllers(m):
    """Every controller of the comparison, by name."""
    kd = 0.05 * KP_SERVO
    out = {
        "PD": control.PD(m, KP_SERVO, kd),
        "PD + gravity": control.PD(m, KP_SERVO, kd, gravity_compensation=True),
        "PID": control.PD(m, KP_SERVO, kd, ki=2 * KP_SERVO, gravity_compensation=True),
        "ID (sensed contact)": control.InverseDynamics(m, 400.0, 40.0,
                                                         control.SensedContacts()),
        "ID (no contact)": control.InverseDynamics(m, 400.0, 40.0, control.NoContacts()),
    }
    target = np.full(9, np.nan)
    target[7:9] = GRIP
    for f in ("noslip", "coulomb", "cfree"):
        pred = control.RigidContacts(f, gap_gain=0.0, tau_target=target)
        out[pred.name] = control.InverseDynamics(m, 400.0, 40.0, pred)
    out["ID (soft inverse)"] = control.InverseDynamics(m, 400.0, 40.0,
                                                         control.SoftContacts())
    return out


def run(ctrl, contact, waypoints):
    """Simulate one controller; tracking error, torque variation, success, compute time."""
    m, d = make_sim(contact)
    dofs = rigid.actuated_dofs(m)
    box = m.jnt_qposadr[m.joint("box")]
    z0 = d.qpos[box + 2]
    n = int(round(waypoints[-1][0] / H))
    err, taus, secs = [], [], []
    reset = False
    for k in range(n):
        q_ref, v_ref, a_ref = references(waypoints, k * H)
        if isinstance(ctrl, control.InverseDynamics):     # the box: no reference
            out = ctrl(m, d, q_ref, v_ref, a_ref, qacc_unactuated=np.zeros(m.nv))
        else:
            out = ctrl(m, d, q_ref, v_ref, a_ref)
        secs.append(out.seconds)
        taus.append(out.tau)
        d.qfrc_applied[:] = out.qfrc
        js.step(m, d)
        err.append(q_ref[:7] - d.qpos[dofs[:7]])
        if d.warning[:3, 0].any():            # diverged: the simulator reset the state
            reset = True
            break
    js.kinematics(m, d)
    gap = np.linalg.norm(d.site_xpos[m.site("box")] - d.site_xpos[m.site("ee")])
    lift = float(d.qpos[box + 2] - z0)
    taus = np.array(taus)
    return {"rms": float(np.sqrt(np.mean(np.square(err)))),
            "tv": float(np.abs(np.diff(taus, axis=0)).sum(axis=1).mean()),
            "success": bool(lift > 0.1 and gap < 0.05 and not reset), "lift": lift,
            "ms": 1e3 * float(np.median(secs))}


def main():
    """Run the comparison and print (and optionally write) the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the Markdown table here")
    ap.add_argument("--only", help="run only controllers whose name contains this")
    args = ap.parse_args()
    rows = []
    for contact in ("stiff", "compliant"):
        m, _ = make_sim(contact)
        waypoints = plan(m)
        for name, ctrl in controllers(m).items():
            if args.only and args.only not in name:
                continue
            t0 = time.perf_counter()
            r = run(ctrl, contact, waypoints)
            rows.append((contact, name, r))
            print(f"{contact:9s} {name:24s} rms {r['rms']:.4f} rad  TV {r['tv']:8.3f} N m  "
                  f"{'ok  ' if r['success'] else 'FAIL'}  lift {r['lift']:+.3f} m  "
                  f"{r['ms']:.3f} ms/step  ({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.out:
        lines = [f"Arm grasping and lifting the box, 4.5 s, h = 2 ms, rigid predictors' grip "
                 f"target {GRIP:g} N (examples/rigid_arm_grasp.py).", "",
                 "| contact | controller | RMS arm error (rad) | torque TV (N m/step) | success "
                 "| box lift (m) | ms/step |", "|---|---|---|---|---|---|---|"]
        for c, name, r in rows:
            lines.append(f"| {c} | {name} | {r['rms']:.4f} | {r['tv']:.3f} | "
                         f"{'yes' if r['success'] else 'no'} | {r['lift']:+.3f} | "
                         f"{r['ms']:.3f} |")
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
