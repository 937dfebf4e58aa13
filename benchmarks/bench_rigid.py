"""Rigid-contact inverse dynamics (jointspace.rigid) per call, against MuJoCo's inverse.

No library offers Zapolsky–Drumwright inverse dynamics, so the peer is MuJoCo's soft-contact
inverse dynamics on the same robot and state (mj_inverse after mj_fwdPosition and
mj_fwdVelocity, i.e. what a controller pays to get torques from accelerations with
contacts), plus jointspace's own forward step for scale. Scenes: the quadruped standing on
four feet (nv 18, 4 contacts) and the arm holding the box between its fingers (nv 15, 8
contacts). Each call of ours is one compiled call: kinematics, M, bias, collision, the
formulation's LCP/QP, torques; warm-started from the previous call as in a control loop.

    python benchmarks/bench_rigid.py [--quick]
"""

import argparse
import sys

import mujoco
import numpy as np

import jointspace as js
from jointspace import rigid

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import per_call, table, us  # noqa: E402


def quadruped():
    """Bent-knee stance, feet 1e-6 m into the floor."""
    m = js.models.quadruped()
    q = m.qpos0.copy()
    for leg in ("fl", "fr", "hl", "hr"):
        q[m.jnt_qposadr[m.joint(leg + "_hip_y")]] = 0.4
        q[m.jnt_qposadr[m.joint(leg + "_knee")]] = -0.8
    q[2] = 0.25 * np.cos(0.4) + 0.25 * np.cos(-0.4) + 0.035 - 1e-6
    return "quadruped", "quadruped", m, q


def arm_holding_box():
    """Arm upright, the box between its closed fingers (pads 1e-6 m into the box)."""
    m = js.models.arm_box()
    q = m.qpos0.copy()
    for f in ("finger_left", "finger_right"):
        q[m.jnt_qposadr[m.joint(f)]] = 0.015 + 1e-6
    d = js.make_data(m)
    d.qpos[:] = q
    js.kinematics(m, d)
    b = m.body("link7")
    a = m.jnt_qposadr[m.joint("box")]
    q[a:a + 3] = d.xpos[b] + d.xmat[b].reshape(3, 3) @ [0.0, 0.0, 0.095]
    return "arm holding box", "arm_box", m, q


def main():
    """Time every formulation and the peers; print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeat = 3 if args.quick else 15
    rows = []
    for name, xml, m, q in (quadruped(), arm_holding_box()):
        d = js.make_data(m)
        d.qpos[:] = q
        a = np.zeros(m.nv)
        mjm = mujoco.MjModel.from_xml_string(js.models.xml(xml))
        mjd = mujoco.MjData(mjm)
        mjd.qpos[:] = q

        def mj_inv():
            mujoco.mj_fwdPosition(mjm, mjd)
            mujoco.mj_fwdVelocity(mjm, mjd)
            mujoco.mj_inverse(mjm, mjd)

        t_mj = per_call(mj_inv, repeat=repeat)
        t_fwd = per_call(lambda: js.forward(m, d), repeat=repeat)
        for f in ("noslip", "coulomb", "cfree"):
            state = {"prev": None}

            def ours():
                state["prev"] = rigid.inverse_dynamics(m, d, a, f, previous=state["prev"],
                                                       gap_gain=0.0)

            t = per_call(ours, repeat=repeat)
            rows.append([name, f, us(t), us(t_mj), f"{t / t_mj:.1f}", us(t_fwd),
                         str(d.ncon[0])])
    print(table(rows, ["scene", "formulation", "ours (µs)", "mj_inverse (µs)",
                       "ours / mj_inverse", "js.forward (µs)", "contacts"]))


if __name__ == "__main__":
    main()
