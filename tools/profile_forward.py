"""Time the stages of `forward` next to MuJoCo's, on a real MJCF file of the test data.

    python tools/profile_forward.py [FILE] [--settle N]

FILE is a path inside the test-data wheels (tests/test_real_sweep.py's FILES; default
gymnasium's humanoid) or an MJCF file on disk. MuJoCo steps it N steps (default 300) from
its initial state; our Data takes that full-physics state. Each of our stages then runs n
times in its own compiled loop, and MuJoCo's matching functions (mj_kinematics + mj_comPos,
mj_crb + mj_factorM, …) n times from Python; the best of 15 rounds of CPU time per call is
printed in µs, with MuJoCo's time less the cost of one binding call (measured on
mj_fwdActuation of a model without actuators). MuJoCo's rows include its islands and the
dual's J M⁻¹ Jᵀ (mj_island, mj_projectConstraint: mj_fwdConstraint needs them), which ours
builds in the solve; our solve includes efc_aref (MuJoCo's is in mj_fwdVelocity). Ratios
below 1: ours is faster.
"""

import argparse
import pathlib
import sys
import time
import warnings

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import jointspace as js  # noqa: E402
from jointspace.actuation import actuation, body_transmission, transmission  # noqa: E402
from jointspace.collision.driver import collision_stage  # noqa: E402
from jointspace.constraint import make_constraint_stage, reference  # noqa: E402
from jointspace.dynamics.crba import crb_stage  # noqa: E402
from jointspace.dynamics.factor import factor_m_stage  # noqa: E402
from jointspace.forward import fwd_acceleration, fwd_velocity  # noqa: E402
from jointspace.kinematics import com_pos, kinematics_stage  # noqa: E402
from jointspace.sensor import sensor_stage  # noqa: E402
from jointspace.solver import solve_stage  # noqa: E402
from tests._real_models import real_model  # noqa: E402
from tests.test_real_sweep import FILES  # noqa: E402


@njit(cache=True)
def L_kin(m, d, n):
    """kinematics_stage and com_pos, n times."""
    for _ in range(n):
        kinematics_stage(m, d)
        com_pos(m, d)


@njit(cache=True)
def L_mass(m, d, n):
    """crb_stage and factor_m_stage, n times."""
    for _ in range(n):
        crb_stage(m, d)
        factor_m_stage(m, d)


@njit(cache=True)
def L_trn(m, d, n):
    """transmission (and body transmissions), n times."""
    for _ in range(n):
        transmission(m, d)
        if m.nu:
            body_transmission(m, d)


@njit(cache=True)
def L_coll(m, d, n):
    """collision_stage, n times."""
    for _ in range(n):
        collision_stage(m, d)


@njit(cache=True)
def L_rows(m, d, n):
    """make_constraint_stage, n times."""
    for _ in range(n):
        make_constraint_stage(m, d)


@njit(cache=True)
def L_vel(m, d, n):
    """fwd_velocity, n times."""
    for _ in range(n):
        fwd_velocity(m, d)


@njit(cache=True)
def L_act(m, d, n):
    """actuation, n times."""
    for _ in range(n):
        actuation(m, d)


@njit(cache=True)
def L_acc(m, d, n):
    """fwd_acceleration, n times."""
    for _ in range(n):
        fwd_acceleration(m, d)


@njit(cache=True)
def L_cons(m, d, ws, n):
    """reference and solve_stage from the warm start ws, n times."""
    for _ in range(n):
        d.qacc_warmstart[:] = ws
        reference(m, d)
        solve_stage(m, d, int(m.opt_solver[0]), int(m.opt_iterations[0]))


@njit(cache=True)
def L_sens(m, d, n):
    """sensor_stage, n times."""
    for _ in range(n):
        sensor_stage(m, d)


def best(fn, n, rounds=15):
    """Best CPU time per call over rounds of n calls, µs."""
    fn(1)
    t = []
    for _ in range(rounds):
        t0 = time.process_time()
        fn(n)
        t.append((time.process_time() - t0) / n)
    return min(t) * 1e6


def settled(file, settle):
    """(MuJoCo's model and data, our Model and Data) of a test-data file in one state.

    MuJoCo steps it `settle` steps from its initial state and runs mj_forward; our Data takes
    that full-physics state and MuJoCo's warm start, then runs `forward`.
    """
    path = pathlib.Path(file)
    if not path.is_file():
        path = real_model(dict((p, dist) for dist, p in FILES)[file], file)
    mj = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mj)
    mujoco.mj_step(mj, md, settle)
    mujoco.mj_forward(mj, md)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(mj, spec))
    mujoco.mj_getState(mj, md, state, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = js.load(path)
    d = js.make_data(m)
    js.set_state(m, d, state)
    d.qacc_warmstart[:] = md.qacc_warmstart
    js.forward(m, d)
    return mj, md, m, d


def main():
    """Load the file, settle it in MuJoCo, print the stage table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default="gymnasium/envs/mujoco/assets/humanoid.xml")
    ap.add_argument("--settle", type=int, default=300)
    args = ap.parse_args()
    mj, md, m, d = settled(args.file, args.settle)
    ws = md.qacc_warmstart.copy()
    ms, ds = m._s, d._s
    empty = mujoco.MjModel.from_xml_string("<mujoco/>")
    ed = mujoco.MjData(empty)
    call = best(lambda n: [mujoco.mj_fwdActuation(empty, ed) for _ in range(n)], 20000)

    def mjt(*fns):
        def run(n):
            for _ in range(n):
                for f in fns:
                    f(mj, md)
        return lambda n: run(n)

    def mj_sens(mj, md):
        # MuJoCo computes the post-constraint and subtree quantities once per forward (the
        # flags below): clear them, as each of our calls computes them
        md.flg_rnepost = 0
        md.flg_subtreevel = 0
        mujoco.mj_sensorPos(mj, md)
        mujoco.mj_sensorVel(mj, md)
        mujoco.mj_sensorAcc(mj, md)

    def mj_cons(mj, md):
        md.qacc_warmstart[:] = ws
        mujoco.mj_fwdConstraint(mj, md)

    rows = [
        ("kinematics, com", lambda n: L_kin(ms, ds, n),
         mjt(mujoco.mj_kinematics, mujoco.mj_comPos), 2, 5000),
        ("mass matrix, factor", lambda n: L_mass(ms, ds, n),
         mjt(mujoco.mj_crb, mujoco.mj_factorM), 2, 5000),
        ("transmission", lambda n: L_trn(ms, ds, n), mjt(mujoco.mj_transmission), 1, 5000),
        ("collision", lambda n: L_coll(ms, ds, n), mjt(mujoco.mj_collision), 1, 5000),
        ("constraint rows", lambda n: L_rows(ms, ds, n),
         mjt(mujoco.mj_makeConstraint, mujoco.mj_island, mujoco.mj_projectConstraint), 3,
         5000),
        ("velocity stage", lambda n: L_vel(ms, ds, n), mjt(mujoco.mj_fwdVelocity), 1, 5000),
        ("actuation", lambda n: L_act(ms, ds, n), mjt(mujoco.mj_fwdActuation), 1, 5000),
        ("acceleration (smooth)", lambda n: L_acc(ms, ds, n), mjt(mujoco.mj_fwdAcceleration),
         1, 5000),
        ("constraint solve", lambda n: L_cons(ms, ds, ws, n), mjt(mj_cons), 1, 2000),
        ("sensors", lambda n: L_sens(ms, ds, n),
         mjt(mj_sens), 3, 5000),
    ]
    print(f"{args.file}: nv {m.nv}, ncon {d.ncon[0]} (MuJoCo {md.ncon}), nefc {d.nefc[0]} "
          f"(MuJoCo {md.nefc}), solver iterations {d.solver_niter[0]} (MuJoCo "
          f"{md.solver_niter[0]}); one binding call {call:.2f} µs")
    print(f"{'stage':24s} {'ours µs':>9s} {'MuJoCo µs':>10s} {'ratio':>6s}")
    tot_o = tot_m = 0.0
    for name, ours, theirs, ncall, n in rows:
        o = best(ours, n)
        t = max(best(theirs, n) - ncall * call, 1e-3)
        tot_o += o
        tot_m += t
        print(f"{name:24s} {o:9.2f} {t:10.2f} {o / t:6.2f}")
    print(f"{'sum':24s} {tot_o:9.2f} {tot_m:10.2f} {tot_o / tot_m:6.2f}")


if __name__ == "__main__":
    main()
