"""1000 steps of every real file against mj_step (issue 23's trajectory parity).

Each dm_control and gymnasium file that loads, and the mesh robots of our own making, step
1000 steps in both engines from the file's first keyframe (or its initial state) under the
same seeded controls (`controls`); the mesh robots from their settled scenes, controls held.
Where the motion is not chaotic, qpos stays within TRAJ_TOL of MuJoCo's for all 1000 steps
(measured: 3.9e-7 humanoid_CMU, 6e-11 inverted_double_pendulum, the rest ≤ 2e-11). Where it
is (CHAOTIC: MuJoCo's own run moves a 1e-10 velocity perturbation by the growth factor
listed, measured with tools/trajectory_parity.py), a round-off difference grows as fast,
so the first 100 steps are compared instead (measured ≤ 1e-13); PARTED lists the file
whose motion parts for a known difference, with the steps compared.
"""

import pathlib
import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from tests._mesh_robots import into_ours, mesh_gripper, mesh_quadruped, settle
from tests._real_models import real_model
from tests.test_real_sweep import FILES

NSTEP = 1000
SETTLE = 300  # MuJoCo steps that settle a mesh robot's scene (as benchmarks/bench_real.py)
# MuJoCo's convex collision (GJK/EPA) run to convergence: (ccd_iterations, ccd_tolerance)
TIGHT_CCD = (1000, 1e-12)
NSTEP_CHAOTIC = 100
# |qpos − MuJoCo's| along the way: the bound
TRAJ_TOL = 1e-6
# file -> MuJoCo's own growth of a 1e-10 qvel perturbation, largest over 1000 steps
# (tools/trajectory_parity.py): at 1e6 and above, round-off (1e-16) may reach 1e-10 and more
CHAOTIC = {
    "humanoid (dm)": 1.1e8, "quadruped (dm)": 8.8e7, "point (gym)": 2.4e6,
    "walker2d (gym)": 1.2e10, "walker2d_v5 (gym)": 3.1e10,
}
# file -> the steps compared where the motions part for a known difference, and why
PARTED = {
    # chaotic (growth 8.4e9): from step 83 (1e-6) the capsule–ellipsoid contacts' last
    # digits part (both run MuJoCo 4.0's GJK and EPA to ccd_tolerance, bit for bit over
    # their first 10 iterations, not over longer runs: docs/conventions.md)
    "dog (dm)": 80,
}


def controls(mj, n, seed=0):
    """(n, nu) seeded piecewise-constant controls: half the range (±0.5 if unlimited)."""
    rng = np.random.default_rng(seed)
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
    u = np.zeros((n, mj.nu))
    for s in range(0, n, 100):
        u[s:s + 100] = 0.5 * rng.uniform(lo, hi)
    return u


def _start(mj, md, settled):
    if settled is not None:
        mujoco.mj_setState(mj, md, settled, mujoco.mjtState.mjSTATE_INTEGRATION)
    elif mj.nkey:
        mujoco.mj_resetDataKeyframe(mj, md, 0)
    else:
        mujoco.mj_resetData(mj, md)


def run(mj, m, n, growth=False, settled=None, tight=False):
    """|qpos − MuJoCo's| after each of n steps, and with growth=True MuJoCo's own growth.

    Growth: |Δqpos| / 1e-10 of MuJoCo's run from the same state with qvel + 1e-10 · (a
    seeded unit direction), step by step; None without growth. settled: a MuJoCo
    integration state to start from, its controls held (the mesh robots' scenes); tight:
    both engines' convex collision run to convergence (TIGHT_CCD).
    """
    if tight:
        mj.opt.ccd_iterations, mj.opt.ccd_tolerance = TIGHT_CCD
        m.opt.ccd_iterations, m.opt.ccd_tolerance = TIGHT_CCD
    md = mujoco.MjData(mj)
    _start(mj, md, settled)
    u = controls(mj, n) if settled is None else np.tile(md.ctrl, (n, 1))
    d = js.make_data(m)
    into_ours(m, d, mj, md)
    mp = None
    eps = 1e-10
    if growth:
        mp = mujoco.MjData(mj)
        _start(mj, mp, settled)
        dv = np.random.default_rng(1).normal(size=mj.nv)
        mp.qvel[:] += eps * dv / max(np.linalg.norm(dv), 1e-300)
    dev = np.zeros(n)
    grow = np.zeros(n) if growth else None
    for t in range(n):
        md.ctrl[:] = u[t]
        d.ctrl[:] = u[t]
        mujoco.mj_step(mj, md)
        js.step(m, d)
        dev[t] = np.max(np.abs(d.qpos - md.qpos), initial=0.0)
        if growth:
            mp.ctrl[:] = u[t]
            mujoco.mj_step(mj, mp)
            grow[t] = np.max(np.abs(mp.qpos - md.qpos), initial=0.0) / eps
    return dev, grow


def _load(src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(src, str):
            return mujoco.MjModel.from_xml_string(src), js.load_string(src)
        return mujoco.MjModel.from_xml_path(str(src)), js.load(src)


def _settled(xml):
    """A mesh robot's models and MuJoCo's integration state once its scene has settled."""
    mj, md = settle(xml, SETTLE)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    state = np.empty(mujoco.mj_stateSize(mj, spec))
    mujoco.mj_getState(mj, md, state, spec)
    return _load(xml) + (state,)


def cases():
    """(name, loader) of every case: the real files, then the mesh robots (settled).

    A loader returns (MuJoCo's model, ours) or, for a settled scene, also the state.
    """
    out = []
    for dist, path in FILES:
        name = f"{pathlib.Path(path).stem} ({'dm' if dist == 'dm-control' else 'gym'})"
        out.append((name, lambda d=dist, p=path: _load(real_model(d, p))))
    out.append(("mesh quadruped (ours)", lambda: _settled(mesh_quadruped())))
    out.append(("mesh gripper (ours)", lambda: _settled(mesh_gripper())))
    return out


CASES = cases()


@pytest.mark.parametrize("name, load", CASES, ids=[n for n, _ in CASES])
def test_real_trajectory_follows_mj_step(name, load):
    mj, m, *settled = load()
    n = PARTED.get(name, NSTEP_CHAOTIC if name in CHAOTIC else NSTEP)
    dev, _ = run(mj, m, n, settled=settled[0] if settled else None)
    worst = int(np.argmax(dev))
    assert dev.max() <= TRAJ_TOL, f"{name}: |Δqpos| {dev.max():.2e} at step {worst + 1}"
