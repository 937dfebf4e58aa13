"""Inverse dynamics with contacts: jointspace vs its own forward and vs MuJoCo, same run.

Run: python benchmarks/bench_inverse.py [--quick]

Scenes: MuJoCo's 27-dof humanoid (`jointspace.models.humanoid`) in the air (no contact),
lying on the floor after 1500 MuJoCo steps (11 contacts), and lying with a 0.2 m floor
margin (21 contacts), elliptic and pyramidal cones; forward warm-starts from MuJoCo's last
step (as inside a simulation).

Table 1, whole calls from Python (median µs, batches of each call timed in alternation):
    forward     js.forward (kinematics, M, collision, rows, Newton)
    inverse     js.inverse at forward's qacc (kinematics, collision, rows, analytical forces)
    mj_forward, mj_inverse   MuJoCo from Python on the same state and warm start
Ratios: forward / inverse (ours) and ours inverse / mj_inverse.

Table 2, the dynamics the 2014 paper compares (004 §IV–VI: "an order of magnitude"):
everything after the contacts and their Jacobian rows, which forward and inverse share, in
a compiled loop (no Python crossing). Forward: M and its factor, velocity stage, actuation,
qacc_smooth, aref and the Newton solve, from the warm start and from qacc_smooth (the
first step); inverse: velocity stage, aref, the analytical forces and qfrc_inverse.

Table 3 (the slides' "inverse evaluations per second" vs number of contacts, 000): n spheres
(condim 3, elliptic cones) resting on a plane, n = 2, 5, 10, 20; evaluations per second of
js.inverse and mujoco.mj_inverse, next to the slides' numbers (a 2011 log-barrier inverse on a
3 GHz processor, not the same model: shown for scale).

Table 4, where the time goes: each stage of js.inverse in a compiled loop (µs per call, no
Python crossing) beside the MuJoCo function that does the same work, called from Python
(so MuJoCo's column carries ~0.1-0.3 µs of call overhead per row): kinematics, com_pos,
collision, make_constraint (rows, diagApprox, impedance), the velocity stage (actuator
velocities, cvel, passive, bias forces, efc_vel and aref: mj_fwdVelocity) and the
acceleration stage (J qacc, the analytical forces, Jᵀ f, RNE with qacc; MuJoCo's is part of
mj_inverse and has no Python entry).
"""

import argparse
import os
import sys

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import per_call, table, us  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.actuation import actuation  # noqa: E402
from jointspace.collision.driver import collision_stage  # noqa: E402
from jointspace.constraint import make_constraint_stage, reference  # noqa: E402
from jointspace.dynamics.crba import crb_stage  # noqa: E402
from jointspace.dynamics.factor import factor_m_stage  # noqa: E402
from jointspace.forward import fwd_acceleration, fwd_velocity  # noqa: E402
from jointspace.inverse.core import inv_acceleration  # noqa: E402
from jointspace.kinematics import com_pos, kinematics_stage  # noqa: E402
from jointspace.solver import solve_stage  # noqa: E402

SLIDES = {2: 241774, 5: 54190, 10: 12991, 20: 2361}


@njit(cache=True)
def _loop_forward_dynamics(m, d, ws, warm, n):
    for _ in range(n):
        if warm:
            d.qacc_warmstart[:] = ws
        else:
            d.qacc_warmstart[:] = d.qacc_smooth
        crb_stage(m, d)
        factor_m_stage(m, d)
        fwd_velocity(m, d)
        actuation(m, d)
        fwd_acceleration(m, d)
        reference(m, d)
        solve_stage(m, d, 2, 100)


@njit(cache=True)
def _inv_velocity(m, d):
    """The inverse's velocity stage: forward's, then the reference accelerations."""
    fwd_velocity(m, d)
    reference(m, d)


@njit(cache=True)
def _loop_inverse_dynamics(m, d, qacc, n):
    for _ in range(n):
        d.qacc[:] = qacc
        _inv_velocity(m, d)
        inv_acceleration(m, d, False)


@njit(cache=True)
def _loop_stage(m, d, stage, n):
    for _ in range(n):
        if stage == 0:
            kinematics_stage(m, d)
        elif stage == 1:
            com_pos(m, d)
        elif stage == 2:
            collision_stage(m, d)
        elif stage == 3:
            make_constraint_stage(m, d)
        elif stage == 4:
            _inv_velocity(m, d)
        else:
            inv_acceleration(m, d, False)


STAGES = (("kinematics", mujoco.mj_kinematics), ("com_pos", mujoco.mj_comPos),
          ("collision", mujoco.mj_collision), ("make_constraint", mujoco.mj_makeConstraint),
          ("velocity", mujoco.mj_fwdVelocity), ("acceleration", None))


def _pair(xml, cone, setup):
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    mjd = mujoco.MjData(mjm)
    setup(mjm, mjd)
    m = js.load_string(xml)
    m.opt.cone = cone
    m.geom_margin[:] = mjm.geom_margin
    d = js.make_data(m)
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    ws = mjd.qacc_warmstart.copy()
    d.qacc_warmstart[:] = ws
    js.forward(m, d)
    mujoco.mj_forward(mjm, mjd)
    return m, d, mjm, mjd, ws


def humanoid(kind, cone):
    """The humanoid in the air, lying, or lying with a 0.2 m floor margin."""
    def setup(mjm, mjd):
        if kind == "air":
            mjd.qpos[2] += 1.0
            return
        for _ in range(1500):
            mujoco.mj_step(mjm, mjd)
        if kind == "margin":
            mjm.geom_margin[0] = 0.2
    return _pair(js.models.xml("humanoid"), cone, setup)


def spheres(n):
    """n spheres resting on a plane in a row, elliptic cones."""
    bodies = "\n".join(f'<body pos="{0.3 * k} 0 0.1"><freejoint/>'
                       f'<geom type="sphere" size="0.1" mass="1"/></body>' for k in range(n))
    xml = f"""<mujoco><option timestep="0.002" cone="elliptic"/><worldbody>
      <geom type="plane" size="20 20 0.1"/>{bodies}</worldbody></mujoco>"""

    def setup(mjm, mjd):
        for _ in range(200):
            mujoco.mj_step(mjm, mjd)
    return _pair(xml, "elliptic", setup)


def alternate(fns, nround, number):
    """Median per-call seconds of each function, timed in alternation batch by batch."""
    times = [[] for _ in fns]
    for _ in range(nround):
        for k, fn in enumerate(fns):
            times[k].append(per_call(fn, number=number, repeat=1))
    return [float(np.median(t)) for t in times]


def bench_humanoid(nround, number):
    """Tables 1 and 2."""
    rows1, rows2 = [], []
    for kind in ("air", "lying", "margin"):
        for cone in ("elliptic", "pyramidal"):
            m, d, mjm, mjd, ws = humanoid(kind, cone)
            qacc = d.qacc.copy()

            def fwd():
                d.qacc_warmstart[:] = ws
                js.forward(m, d)

            def inv():
                d.qacc[:] = qacc
                js.inverse(m, d)

            def mj_fwd():
                mjd.qacc_warmstart[:] = ws
                mujoco.mj_forward(mjm, mjd)

            def mj_inv():
                mjd.qacc[:] = qacc
                mujoco.mj_inverse(mjm, mjd)

            tf, ti, mf, mi = alternate([fwd, inv, mj_fwd, mj_inv], nround, number)
            label = [kind, cone, str(d.ncon[0]), str(d.nefc[0])]
            rows1.append(label + [us(tf), us(ti), f"{tf / ti:.1f}", us(mf), us(mi),
                                  f"{ti / mi:.2f}"])
            ms, ds = m._s, d._s
            fwd()
            _loop_forward_dynamics(ms, ds, ws, True, 1)
            _loop_inverse_dynamics(ms, ds, qacc, 1)
            loops = [lambda: _loop_forward_dynamics(ms, ds, ws, True, number),
                     lambda: _loop_forward_dynamics(ms, ds, ws, False, number),
                     lambda: _loop_inverse_dynamics(ms, ds, qacc, number)]
            warm, cold, invd = (t / number for t in alternate(loops, nround, 1))
            rows2.append(label + [us(warm), us(cold), us(invd), f"{warm / invd:.1f}",
                                  f"{cold / invd:.1f}"])
    print(table(rows1, ["humanoid", "cone", "ncon", "nefc", "forward µs", "inverse µs",
                        "fwd/inv", "mj_forward µs", "mj_inverse µs", "inv/mj_inv"]))
    print()
    print(table(rows2, ["humanoid", "cone", "ncon", "nefc", "fwd dyn warm µs",
                        "fwd dyn cold µs", "inv dyn µs", "warm/inv", "cold/inv"]))


def bench_spheres(nround, number):
    """Table 2 rows."""
    rows = []
    for n in (2, 5, 10, 20):
        m, d, mjm, mjd, _ = spheres(n)
        qacc = d.qacc.copy()

        def inv():
            d.qacc[:] = qacc
            js.inverse(m, d)

        def mj_inv():
            mjd.qacc[:] = qacc
            mujoco.mj_inverse(mjm, mjd)

        ti, mi = alternate([inv, mj_inv], nround, number)
        rows.append([str(n), str(d.ncon[0]), f"{1 / ti:,.0f}", f"{1 / mi:,.0f}",
                     f"{SLIDES[n]:,}", f"{ti / mi:.2f}"])
    print(table(rows, ["contacts", "ncon", "ours inverse/s", "mj_inverse/s",
                       "slides (2011) inverse/s", "ours/MuJoCo time"]))


def bench_stages(nround, number):
    """Table 4."""
    rows = []
    scenes = [("humanoid lying", humanoid("lying", "elliptic")),
              ("humanoid lying", humanoid("lying", "pyramidal")),
              ("20 spheres", spheres(20))]
    for label, (m, d, mjm, mjd, _) in scenes:
        qacc = d.qacc.copy()
        d.qacc[:] = qacc
        js.inverse(m, d)
        mjd.qacc[:] = qacc
        mujoco.mj_inverse(mjm, mjd)
        ms, ds = m._s, d._s
        for k, (stage, mjf) in enumerate(STAGES):
            _loop_stage(ms, ds, k, 1)
            fns = [lambda k=k: _loop_stage(ms, ds, k, number)]
            if mjf is not None:
                def mj_loop(mjf=mjf):
                    for _ in range(number):
                        mjf(mjm, mjd)
                fns.append(mj_loop)
            t = [x / number for x in alternate(fns, nround, 1)]
            ours = t[0]
            theirs = t[1] if mjf is not None else None
            rows.append([label, m.opt.cone, str(d.nefc[0]), stage, us(ours),
                         us(theirs) if theirs else "—",
                         f"{ours / theirs:.2f}" if theirs else "—"])
    print(table(rows, ["scene", "cone", "nefc", "stage", "ours µs (loop)", "MuJoCo µs (Python)",
                       "ours/MuJoCo"]))


def main():
    """Print the tables."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    nround, number = (5, 100) if args.quick else (15, 500)
    bench_humanoid(nround, number)
    print()
    bench_spheres(nround, number)
    print()
    bench_stages(nround, number)


if __name__ == "__main__":
    main()
