"""Paper 002 §7–8: a quadruped trotting under inverse-dynamics control, μ from 0.1 to "∞".

The embedded quadruped (18 dofs, 12 actuated hinges) trots by joint-space control: foot
trajectories in the torso frame (diagonal pairs, period 0.5 s, duty 0.5, 4 cm swing height,
0.2 m/s) are turned into joint references by the legs' closed-form inverse kinematics, and
each controller makes the joints follow them while jointspace simulates the robot:

  PD, PID                 error feedback (kp 100 N m/rad, kd 2, ki 20)
  ID (sensed contact)     computed torque with the simulator's last contact forces
  ID (rigid, noslip|coulomb|coulomb_enum|cfree)
                          computed torque with contact forces predicted by jointspace.rigid
  ID (soft inverse)       computed torque with the soft-contact analytical inverse
                          (jointspace.inverse on the simulator's own contact model; the
                          base acceleration solved so that the base needs no force)
  ID (no contact)         computed torque ignoring contact (a baseline)

Every inverse-dynamics controller also balances the torso, as the paper's controller does:
a task-space PD on the base (height 100/s², 20/s; roll, pitch and yaw 100/s², 20/s;
forward speed 5/s towards the gait's) gives the desired base acceleration, which is the
unactuated part of q̈_des; each stance leg whose foot is on the floor takes, instead of
joint tracking, the acceleration that keeps its foot still while the base accelerates
(J_leg q̈_leg = −J_base q̈_base − J̇v − 50 v_foot). Swing legs track their joint
references. `--balance add` adds the base task's leg accelerations to every scheduled
stance leg's joint tracking instead (no J̇v, no contact check); `--balance none` runs the
open-loop joint tracking of the first version.

on flat ground with friction μ ∈ {0.1, 0.5, 1, ∞} (∞: μ = 100 on an elliptic cone; the
predictors then use μ = 100, the no-slip model needs none) and two contact models:
"stiff" (impedance 0.99, time constant 2h = 4 ms, the stiffest the soft model allows
stably: close to the rigid contact the controllers assume) and "compliant" (MuJoCo's
default soft contact: time constant 0.02 s, impedance 0.9–0.95). The rigid predictors use
gap_gain = 0: the simulator's contacts always penetrate a little, and the paper's full
correction (gain 1) would ask for the penetration to vanish within one period.

Printed per run: RMS joint tracking error (rad), torque total variation (mean over steps of
Σ_j |τ_j(t) − τ_j(t − h)|, N m: the chatter measure), success (torso upright within 45° and
above 0.25 m at the end: the robot did not fall), the distance walked and the controller's
median compute time per step. Writes a
Markdown table with --out, and, if matplotlib is installed, the torque traces as
img/<name>_torques.png beside it (docs/img/ for --out docs/rigid_quadruped.md).

    python examples/rigid_quadruped_trot.py [--quick] [--balance feet|add|none] [--out F.md]
"""

import argparse
import math
import os
import time

import numpy as np

import jointspace as js
from jointspace import control, rigid
from jointspace.types import DSBL_ACTUATION

H = 0.002               # control period = simulation step (s)
L = 0.25                # thigh and shin lengths (m)
R_FOOT = 0.035
STANCE = (0.4, -0.8)    # hip_y, knee of the standing pose (rad)
PERIOD, STEP_HEIGHT, SPEED = 0.5, 0.04, 0.2
LEGS = ("fl", "fr", "hl", "hr")
PHASE = {"fl": 0.0, "hr": 0.0, "fr": 0.5, "hl": 0.5}


def body_height():
    """Torso height of the standing pose with the feet on the floor."""
    return L * math.cos(STANCE[0]) + L * math.cos(STANCE[0] + STANCE[1]) + R_FOOT


def leg_ik(x, y, z):
    """hip_x, hip_y, knee placing the foot sphere's centre at (x, y, z) from the hip."""
    alpha = math.atan2(y, -z)
    zp = -math.hypot(y, z)
    u, w = -x, -zp
    c = (u * u + w * w) / (2 * L * L) - 1.0
    gamma = -math.acos(max(-1.0, min(1.0, c)))
    beta = math.atan2(u, w) - gamma / 2
    return alpha, beta, gamma


def foot_target(leg, t, ramp):
    """Foot centre relative to its hip in the torso frame at time t (trot)."""
    step = SPEED * PERIOD / 2 * ramp
    s = (t / PERIOD + PHASE[leg]) % 1.0
    z0 = -(body_height() - R_FOOT)
    if s < 0.5:                                   # stance: the foot moves backward
        return step * (0.5 - 2 * s), 0.0, z0
    r = (s - 0.5) / 0.5                           # swing: forward along a smooth arc
    x = step * (-0.5 + (r - math.sin(2 * math.pi * r) / (2 * math.pi)))
    return x, 0.0, z0 + STEP_HEIGHT * ramp * math.sin(math.pi * r) ** 2


def references(m, t):
    """q_ref (12,) at time t in the order of rigid.actuated_dofs (fl, fr, hl, hr legs)."""
    ramp = min(1.0, max(0.0, (t - 0.2) / 0.5))
    q = np.empty(12)
    for i, leg in enumerate(LEGS):
        q[3 * i:3 * i + 3] = leg_ik(*foot_target(leg, t, ramp))
    return q


def ref_derivatives(m, t, dt=1e-4):
    """q_ref, v_ref, a_ref by central differences of the references."""
    q0, qm, qp = references(m, t), references(m, t - dt), references(m, t + dt)
    return q0, (qp - qm) / (2 * dt), (qp - 2 * q0 + qm) / dt**2


KP, KD = 400.0, 40.0     # joint feedback of the inverse-dynamics controllers (1/s², 1/s)
KP_BASE, KD_BASE, KD_SPEED, KD_FOOT = 100.0, 20.0, 5.0, 50.0


def stance(leg, t):
    """Whether the gait schedule has the leg on the ground at time t."""
    return t < 0.2 or (t / PERIOD + PHASE[leg]) % 1.0 < 0.5


def torso_task(m, d, t, q_ref, v_ref, a_ref, mode="feet"):
    """Base task: (nv,) desired q̈ with the base's PD acceleration; a_ref gets the legs'.

    The free joint's qvel is (linear velocity in world axes, angular in the torso frame);
    the attitude error is the rotation vector of q⁻¹ (upright, heading +x), in the torso
    frame. A leg in stance by the schedule whose foot touches the floor (within 2 mm) gets
    the joint accelerations that keep its foot still while the base follows the task,
    J_leg q̈_leg = −J_base q̈_base − J̇v − KD_FOOT v_foot, instead of its joint tracking
    (its a_ref is offset by the controller's joint feedback, which then cancels). With
    mode "add" (the first version) every scheduled stance leg instead adds J_leg⁻¹(−J_base
    q̈_base) to its joint tracking.
    """
    ramp = min(1.0, max(0.0, (t - 0.2) / 0.5))
    qw, qv = d.qpos[3], d.qpos[4:7]
    acc = np.zeros(m.nv)
    acc[0] = KD_SPEED * (SPEED * ramp - d.qvel[0])
    acc[1] = -KD_SPEED * d.qvel[1]
    acc[2] = KP_BASE * (body_height() - d.qpos[2]) - KD_BASE * d.qvel[2]
    acc[3:6] = KP_BASE * (-2.0 * math.copysign(1.0, qw) * qv) - KD_BASE * d.qvel[3:6]
    js.kinematics(m, d)
    for i, leg in enumerate(LEGS):
        toe = m.geom(leg + "_toe")
        if not stance(leg, t) or (mode == "feet" and d.geom_xpos[toe][2] - R_FOOT > 2e-3):
            continue
        foot = d.geom_xpos[toe] - np.array([0.0, 0.0, R_FOOT])
        shin = m.body(leg + "_shin")
        jacp, _ = js.jacobian(m, d, shin, foot)
        bias = js.jacobian_dot_qvel(m, d, shin, foot)[:3]
        cols = 6 + 3 * i + np.arange(3)
        j = slice(3 * i, 3 * i + 3)
        if mode == "add":
            a_ref[j] += np.linalg.lstsq(jacp[:, cols], -jacp[:, :6] @ acc[:6], rcond=1e-6)[0]
            continue
        rhs = -jacp[:, :6] @ acc[:6] - bias - KD_FOOT * (jacp @ d.qvel)
        a_leg = np.linalg.lstsq(jacp[:, cols], rhs, rcond=1e-6)[0]
        e, ed = q_ref[j] - d.qpos[cols + 1], v_ref[j] - d.qvel[cols]
        a_ref[j] = a_leg - KP * e - KD * ed
    return acc


def make_sim(mu, contact):
    """The simulated robot: friction mu, "stiff" or "compliant" contact, standing."""
    m = js.models.quadruped()
    m.opt.timestep = H
    m.opt_disableflags[0] |= DSBL_ACTUATION
    m.geom_friction[:, 0] = mu
    if mu >= 100:
        m.opt.cone = "elliptic"     # a pyramid with μ = 100 leaves the normal direction soft
    if contact == "stiff":
        rigid.stiff_contacts(m, H)
    d = js.make_data(m)
    d.qpos[:] = m.qpos0
    d.qpos[2] = body_height()
    d.qpos[rigid.actuated_dofs(m) + 1] = references(m, 0.0)
    return m, d


def controllers(m, mu):
    """Every controller of the comparison, by name."""
    kp, kd = KP, KD
    out = {
        "PD": control.PD(m, 100.0, 2.0),
        "PID": control.PD(m, 100.0, 2.0, ki=20.0),
        "ID (sensed contact)": control.InverseDynamics(m, kp, kd, control.SensedContacts()),
        "ID (no contact)": control.InverseDynamics(m, kp, kd, control.NoContacts()),
    }
    kw = {"gap_gain": 0.0} if mu is None else {"mu": mu, "gap_gain": 0.0}
    for f in ("noslip", "coulomb", "coulomb_enum", "cfree"):
        pred = control.RigidContacts(f, **({"gap_gain": 0.0} if f == "noslip" else kw))
        out[pred.name] = control.InverseDynamics(m, kp, kd, pred)
    out["ID (soft inverse)"] = control.InverseDynamics(m, kp, kd, control.SoftContacts())
    return out


def run(ctrl, mu, contact, duration, balance="feet"):
    """Simulate one controller; tracking error, torque variation, success, compute time."""
    m, d = make_sim(mu, contact)
    n = int(round(duration / H))
    err, taus, secs = [], [], []
    dofs = rigid.actuated_dofs(m)
    ok = True
    for k in range(n):
        t = k * H
        q_ref, v_ref, a_ref = ref_derivatives(m, t)
        if balance != "none" and isinstance(ctrl, control.InverseDynamics):
            base = torso_task(m, d, t, q_ref, v_ref, a_ref, balance)
            out = ctrl(m, d, q_ref, v_ref, a_ref, qacc_unactuated=base)
        elif isinstance(ctrl, control.InverseDynamics):
            out = ctrl(m, d, q_ref, v_ref, a_ref, qacc_unactuated=np.zeros(m.nv))
        else:
            out = ctrl(m, d, q_ref, v_ref, a_ref)
        secs.append(out.seconds)
        d.qfrc_applied[:] = out.qfrc
        taus.append(out.tau)
        js.step(m, d)
        err.append(q_ref - d.qpos[dofs + 1])
        if d.warning[:3, 0].any() or d.qpos[2] < 0.1:    # a NaN reset, or fallen
            ok = False
            break
    zaxis = 1.0 - 2.0 * (d.qpos[4] ** 2 + d.qpos[5] ** 2)      # torso z·world z
    success = ok and d.qpos[2] > 0.25 and zaxis > math.cos(math.radians(45))
    taus = np.array(taus)
    tv = float(np.abs(np.diff(taus, axis=0)).sum(axis=1).mean()) if len(taus) > 1 else 0.0
    return {"rms": float(np.sqrt(np.mean(np.square(err)))), "tv": tv, "success": success,
            "ms": 1e3 * float(np.median(secs)), "x": float(d.qpos[0]), "taus": taus}


def main():
    """Run the comparison and print (and optionally write) the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 s runs, μ ∈ {0.5, ∞} only")
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--balance", choices=("feet", "add", "none"), default="feet",
                    help="torso feedback of the ID controllers (see the module docstring)")
    ap.add_argument("--only", help="run only controllers whose name contains this")
    ap.add_argument("--out", help="write the Markdown table here (and PNG plots in img/ beside it)")
    args = ap.parse_args()
    mus = [(0.5, "0.5"), (100.0, "∞ (100)")] if args.quick else \
        [(0.1, "0.1"), (0.5, "0.5"), (1.0, "1"), (100.0, "∞ (100)")]
    duration = 1.0 if args.quick else args.duration
    rows = []
    traces = {}
    for contact in ("stiff", "compliant"):
        for mu, label in mus:
            m, _ = make_sim(mu, contact)
            for name, ctrl in controllers(m, None if mu >= 100 else mu).items():
                if args.only and args.only not in name:
                    continue
                t0 = time.perf_counter()
                r = run(ctrl, mu, contact, duration, balance=args.balance)
                row = (contact, label, name, r["rms"], r["tv"], r["success"], r["ms"], r["x"])
                rows.append(row)
                traces[(contact, label, name)] = r["taus"]
                print(f"{contact:9s} μ={label:8s} {name:26s} rms {r['rms']:.4f} rad  "
                      f"TV {r['tv']:8.3f} N m  {'ok  ' if r['success'] else 'FAIL'}  "
                      f"{r['ms']:.3f} ms/step  x {r['x']:+.2f} m  "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.out:
        write_table(args.out, rows, duration, args.balance)
        plot(args.out, traces)


def write_table(path, rows, duration, balance):
    """The results as a Markdown table."""
    how = {"feet": "ID controllers balance the torso on still stance feet",
           "add": "ID controllers add the torso task to joint tracking",
           "none": "open-loop joint tracking"}[balance]
    lines = [f"Quadruped trot, {duration:.0f} s per run, h = {H * 1e3:.0f} ms, {how} "
             "(examples/rigid_quadruped_trot.py).", "",
             "| contact | μ | controller | RMS error (rad) | torque TV (N m/step) | success "
             "| ms/step | x (m) |", "|---|---|---|---|---|---|---|---|"]
    for c, mu, name, rms, tv, ok, ms, x in rows:
        lines.append(f"| {c} | {mu} | {name} | {rms:.4f} | {tv:.3f} | {'yes' if ok else 'no'} "
                     f"| {ms:.3f} | {x:+.2f} |")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def plot(path, traces):
    """One torque trace per controller (stiff contact, μ = 0.5), if matplotlib is there."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    keys = [k for k in traces if k[0] == "stiff" and k[1] == "0.5"]
    fig, axes = plt.subplots(len(keys), 1, figsize=(8, 1.6 * len(keys)), sharex=True)
    for ax, k in zip(np.atleast_1d(axes), keys):
        tau = traces[k]
        ax.plot(np.arange(len(tau)) * H, tau[:, 1], lw=0.8)
        ax.set_ylabel("fl hip_y\n(N m)", fontsize=7)
        ax.set_title(k[2], fontsize=8)
    np.atleast_1d(axes)[-1].set_xlabel("time (s)")
    fig.tight_layout()
    folder = os.path.join(os.path.dirname(path), "img")  # the docs' one images folder
    os.makedirs(folder, exist_ok=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    fig.savefig(os.path.join(folder, stem + "_torques.png"), dpi=110)


if __name__ == "__main__":
    main()
