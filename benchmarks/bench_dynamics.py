"""Smooth dynamics: jointspace vs Pinocchio and MuJoCo, same process, same run.

Run: python benchmarks/bench_dynamics.py [--quick]

Two models: MuJoCo's 27-dof humanoid and a 30-link hinge chain (`jointspace.models`).
Pinocchio gets the same MJCF through `pinocchio.buildModelFromMJCF` (the same tree and
joint count; timings only), MuJoCo the same XML.

Table 1, from Python: median µs per call of the public functions, and the median over
rounds of the ratio ours / theirs (the three contenders are timed in alternation, batch by
batch, so that the load of a shared machine falls on all of them alike). Each of ours runs
its whole pipeline in one compiled call (kinematics, com_pos, [com_vel,] the algorithm); the
MuJoCo column strings together the MuJoCo calls that compute the same thing:
    rnea       mj_kinematics + mj_comPos + mj_comVel + mj_rne(flg_acc=1)
    crba       mj_kinematics + mj_comPos + mj_crb + mj_fullM (dense M, as ours and Pinocchio's)
    factor_m   mj_factorM alone (ours factors d.qM as crba left it; Pinocchio: cholesky.decompose)
    solve_m    mj_solveM on one vector (Pinocchio: cholesky.solve)
    aba        mj_kinematics + mj_comPos + mj_comVel + mj_crb + mj_factorM + mj_rne + mj_solveM
               (MuJoCo has no ABA: this is its way to the same qacc)
    minv       mj_kinematics + mj_comPos + mj_crb + mj_factorM + mj_solveM(identity)

Table 2, inside compiled code: our per-evaluation time when a Numba loop calls the same
driver N times (timed in alternation with the rows of table 1), next to the peers' per-call
time from Python minus their binding overhead (estimated from a trivial call:
mj_getTotalmass, pin.computeTotalMass, once per MuJoCo call strung together), which is an
estimate of their compute time. solve_m's loop copies its right-hand side back each time.
"""

import argparse
import os
import sys
import tempfile
import time

import mujoco
import numpy as np
import pinocchio as pin
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import interleaved, table  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.dynamics.aba import _aba_driver  # noqa: E402
from jointspace.dynamics.crba import _crba_driver  # noqa: E402
from jointspace.dynamics.factor import _factor_driver, _solve_driver  # noqa: E402
from jointspace.dynamics.minv import _minv_driver  # noqa: E402
from jointspace.dynamics.rnea import RNE_ACC, RNE_GRAVITY, RNE_VEL, _rnea_driver  # noqa: E402

_ALL = RNE_VEL | RNE_ACC | RNE_GRAVITY


@njit(cache=True)
def _loop_rnea(m, d, q, v, a, tau, n):
    for _ in range(n):
        _rnea_driver(m, d, q, v, a, _ALL, d.cfrc_ext, tau)


@njit(cache=True)
def _loop_crba(m, d, q, out, n):
    for _ in range(n):
        _crba_driver(m, d, q, out)


@njit(cache=True)
def _loop_factor(m, d, q, n):
    for _ in range(n):
        _factor_driver(m, d, q, False)


@njit(cache=True)
def _loop_solve(m, d, src, x, n):
    for _ in range(n):
        x[0, :] = src[0]
        _solve_driver(m, d, x)


@njit(cache=True)
def _loop_aba(m, d, q, v, tau, n):
    for _ in range(n):
        _aba_driver(m, d, q, v, tau, False, d.cfrc_ext)


@njit(cache=True)
def _loop_minv(m, d, q, out, n):
    for _ in range(n):
        _minv_driver(m, d, q, out)



def _random_q(nq, qpos0, free, rng):
    q = qpos0 + 0.1 * rng.normal(size=nq)
    if free:
        q[3:7] /= np.linalg.norm(q[3:7])
    return q


def bench_model(label, xml, repeat, n_loop):
    """Time one model; return (rows of table 1, rows of table 2)."""
    m = js.load_string(xml)
    d = js.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    try:
        pm = pin.buildModelFromMJCF(f.name)
    finally:
        os.unlink(f.name)
    pd = pm.createData()
    assert pm.nv == m.nv == mm.nv
    free = m.njnt > 0 and m.jnt_type[0] == 0
    rng = np.random.default_rng(0)
    q = _random_q(m.nq, m.qpos0, free, rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    qp = pin.neutral(pm)
    vp, ap = v.copy(), a.copy()
    md.qpos[:] = q
    md.qvel[:] = v
    md.qacc[:] = a
    mujoco.mj_forward(mm, md)
    tau = js.rnea(m, d, q, v, a)
    x = rng.normal(size=m.nv)
    out, y = np.zeros((1, m.nv)), np.zeros((1, m.nv))
    eye, full, ye = np.eye(m.nv), np.zeros((m.nv, m.nv)), np.zeros((m.nv, m.nv))
    x1 = x.reshape(1, m.nv).copy()

    def mj_rnea():
        mujoco.mj_kinematics(mm, md)
        mujoco.mj_comPos(mm, md)
        mujoco.mj_comVel(mm, md)
        mujoco.mj_rne(mm, md, 1, out[0])

    def mj_crba():
        mujoco.mj_kinematics(mm, md)
        mujoco.mj_comPos(mm, md)
        mujoco.mj_crb(mm, md)
        mujoco.mj_fullM(mm, md, full)

    def mj_aba():
        mujoco.mj_kinematics(mm, md)
        mujoco.mj_comPos(mm, md)
        mujoco.mj_comVel(mm, md)
        mujoco.mj_crb(mm, md)
        mujoco.mj_factorM(mm, md)
        mujoco.mj_rne(mm, md, 0, out[0])
        mujoco.mj_solveM(mm, md, y, out)

    def mj_minv():
        mujoco.mj_kinematics(mm, md)
        mujoco.mj_comPos(mm, md)
        mujoco.mj_crb(mm, md)
        mujoco.mj_factorM(mm, md)
        mujoco.mj_solveM(mm, md, ye, eye)

    js.crba(m, d, q)
    js.factor_m(m, d)
    pin.crba(pm, pd, qp)
    pin.cholesky.decompose(pm, pd)
    ops = [
        ("rnea", lambda: js.rnea(m, d, q, v, a), lambda: pin.rnea(pm, pd, qp, vp, ap), mj_rnea),
        ("crba", lambda: js.crba(m, d, q), lambda: pin.crba(pm, pd, qp), mj_crba),
        ("factor_m", lambda: js.factor_m(m, d), lambda: pin.cholesky.decompose(pm, pd),
         lambda: mujoco.mj_factorM(mm, md)),
        ("solve_m", lambda: js.solve_m(m, d, x), lambda: pin.cholesky.solve(pm, pd, x),
         lambda: mujoco.mj_solveM(mm, md, y, x1)),
        ("aba", lambda: js.aba(m, d, q, v, tau), lambda: pin.aba(pm, pd, qp, vp, ap), mj_aba),
        ("minv", lambda: js.minv(m, d, q), lambda: pin.computeMinverse(pm, pd, qp), mj_minv),
    ]
    # binding overheads, for the peers' compute-time estimates of table 2
    mj_over, pin_over = (float(np.median(t)) for t in interleaved(
        [lambda: mujoco.mj_getTotalmass(mm), lambda: pin.computeTotalMass(pm)], repeat))
    nmj = {"rnea": 4, "crba": 4, "factor_m": 1, "solve_m": 1, "aba": 7, "minv": 5}
    tau_out = np.empty(m.nv)
    mat_out = np.empty((m.nv, m.nv))
    loops = {
        "rnea": (_loop_rnea, (m._s, d._s, q, v, a, tau_out)),
        "crba": (_loop_crba, (m._s, d._s, q, mat_out)),
        "factor_m": (_loop_factor, (m._s, d._s, q)),
        "solve_m": (_loop_solve, (m._s, d._s, x1, x1.copy())),
        "aba": (_loop_aba, (m._s, d._s, q, v, tau)),
        "minv": (_loop_minv, (m._s, d._s, q, mat_out)),
    }
    rows1, rows2 = [], []
    for name, ours, theirs_pin, theirs_mj in ops:
        loop, largs = loops[name]
        o, p, j, t = interleaved([ours, theirs_pin, theirs_mj,
                                   lambda: loop(*largs, n_loop)], repeat)
        t = t / n_loop
        rows1.append([f"{label} {name}", f"{np.median(o) * 1e6:.2f}", f"{np.median(p) * 1e6:.2f}",
                      f"{np.median(j) * 1e6:.2f}", f"{np.median(o / p):.2f}",
                      f"{np.median(o / j):.2f}"])
        p_est = np.maximum(p - pin_over, 1e-9)
        j_est = np.maximum(j - nmj[name] * mj_over, 1e-9)
        rows2.append([f"{label} {name}", f"{np.median(t) * 1e6:.2f}", f"{np.median(o) * 1e6:.2f}",
                      f"{np.median(p_est) * 1e6:.2f}", f"{np.median(j_est) * 1e6:.2f}",
                      f"{np.median(t / p_est):.2f}", f"{np.median(t / j_est):.2f}"])
    return rows1, rows2


def main(argv=None):
    """Run the benchmark and print both tables."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 15
    n_loop = 200 if args.quick else 5000
    t0 = time.perf_counter()
    rows1, rows2 = [], []
    for label, xml in (("humanoid", js.models.xml("humanoid")),
                       ("chain30", js.models.xml("chain", n=30))):
        r1, r2 = bench_model(label, xml, repeat, n_loop)
        rows1 += r1
        rows2 += r2
    print(table(rows1, ["operation (from Python)", "jointspace µs", "Pinocchio µs", "MuJoCo µs",
                        "ours/Pinocchio", "ours/MuJoCo"]))
    print()
    print(table(rows2, ["operation", "ours in compiled loop µs", "ours from Python µs",
                        "Pinocchio compute µs (est.)", "MuJoCo compute µs (est.)",
                        "loop/Pinocchio", "loop/MuJoCo"]))
    print(f"\n(total benchmark time {time.perf_counter() - t0:.1f} s; see the module docstring "
          "for what each MuJoCo column strings together)")


if __name__ == "__main__":
    main()
