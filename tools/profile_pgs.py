"""Time the parts of one PGS constraint solve on gymnasium's humanoid, each in a compiled loop.

    python tools/profile_pgs.py [SETTLE]

MuJoCo steps the file SETTLE steps (default 300) from its initial state; our Data takes
that full-physics state and runs `forward`. Then `solve_stage` (PGS, 50 sweeps at most,
from the warm start forward left), its parts (the cone arrays, the islands, AR = J M⁻¹ Jᵀ
+ R, the warm-start test, 1 and 11 sweeps from f = 0 at tolerance 0, dual_finish), MuJoCo's
whole `mj_forward`, and both steps (RK4, as the file selects) run n times each; the best of
15 rounds of CPU time per call is printed in µs. tools/profile_forward.py sets the solve
beside MuJoCo's other stages.
"""

import pathlib
import sys

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import jointspace as js  # noqa: E402
from jointspace.solver import cone_arrays, solve_stage  # noqa: E402
from jointspace.solver.cost import dual_cost, dual_finish, make_ar  # noqa: E402
from jointspace.solver.island import efc_islands  # noqa: E402
from jointspace.solver.pgs import sol_pgs  # noqa: E402
from tools.profile_forward import best, settled  # noqa: E402


@njit(cache=True)
def L_solve(m, d, ws, n):
    """solve_stage with PGS from the warm start, n times."""
    for _ in range(n):
        d.qacc_warmstart[:] = ws
        solve_stage(m, d, 0, 50)  # SOLVER_PGS


@njit(cache=True)
def L_cone(m, d, n):
    """cone_arrays, n times."""
    for _ in range(n):
        cone_arrays(m, d)


@njit(cache=True)
def _island_arrays(nefc):
    return (np.empty(nefc, dtype=np.int64), np.empty(nefc, dtype=np.int64),
            np.empty(nefc, dtype=np.int64), np.empty(nefc, dtype=np.int64),
            np.empty(nefc, dtype=np.int64), np.empty(nefc))


@njit(cache=True)
def L_islands(m, d, n):
    """efc_islands, n times."""
    rows, adr, cnt, nei, nfi, sc = _island_arrays(d.nefc[0])
    dof_island = np.empty(m.nv, dtype=np.int64)
    trees = np.empty(4 * max(m.nv, 1) + d.nefc[0], dtype=np.int64)
    k = 0
    for _ in range(n):
        k += efc_islands(m, d, rows, adr, cnt, nei, nfi, sc, dof_island, trees)
    return k


@njit(cache=True)
def L_ar(m, d, n):
    """make_ar, n times."""
    nefc = d.nefc[0]
    AR = np.empty((nefc, nefc))
    for _ in range(n):
        make_ar(m, d, AR)


@njit(cache=True)
def L_dualcost(m, d, n):
    """the warm start's dual cost, n times."""
    nefc = d.nefc[0]
    AR = np.empty((nefc, nefc))
    make_ar(m, d, AR)
    s = 0.0
    for _ in range(n):
        s += dual_cost(d, AR, d.efc_force)
    return s


@njit(cache=True)
def L_sweeps(m, d, f0, maxiter, n):
    """sol_pgs alone from the forces f0 with maxiter sweeps, n times."""
    nefc = d.nefc[0]
    AR = np.empty((nefc, nefc))
    make_ar(m, d, AR)
    cdim, cmu, cfr = cone_arrays(m, d)
    rows, adr, cnt, nei, nfi, sc = _island_arrays(nefc)
    nisland = efc_islands(m, d, rows, adr, cnt, nei, nfi, sc, np.empty(m.nv, dtype=np.int64),
                          np.empty(4 * max(m.nv, 1) + nefc, dtype=np.int64))
    for _ in range(n):
        d.efc_force[:nefc] = f0
        sol_pgs(m, d, maxiter, cdim, cmu, cfr, AR, rows, adr, cnt, nei, nfi, sc, nisland)


@njit(cache=True)
def L_finish(m, d, n):
    """dual_finish, n times."""
    for _ in range(n):
        dual_finish(m, d)


def main():
    """Settle the file in MuJoCo, take its state, print the table."""
    settle = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    mj, md, m, d = settled("gymnasium/envs/mujoco/assets/humanoid.xml", settle)
    ws = d.qacc_warmstart.copy()
    ms, ds = m._s, d._s
    print(f"gymnasium humanoid: nv {m.nv}, nefc {d.nefc[0]}, sweeps {d.solver_niter[0]} "
          f"(MuJoCo {md.solver_niter[0]})")
    z = np.zeros(d.nefc[0])
    tol = float(m.opt.tolerance)
    m.opt.tolerance = 0.0
    rows = [
        ("solve_stage (PGS, warm start)", lambda n: L_solve(ms, ds, ws, n), 2000),
        ("cone arrays", lambda n: L_cone(ms, ds, n), 20000),
        ("islands", lambda n: L_islands(ms, ds, n), 20000),
        ("AR = J M⁻¹ Jᵀ + R", lambda n: L_ar(ms, ds, n), 5000),
        ("warm-start dual cost", lambda n: L_dualcost(ms, ds, n), 20000),
        ("sweeps from f = 0: 1", lambda n: L_sweeps(ms, ds, z, 1, n), 5000),
        ("sweeps from f = 0: 11 (tolerance 0)", lambda n: L_sweeps(ms, ds, z, 11, n), 1000),
        ("dual_finish", lambda n: L_finish(ms, ds, n), 20000),
        ("MuJoCo mj_forward (whole)", lambda n: [mujoco.mj_forward(mj, md) for _ in range(n)],
         2000),
        ("js.step, n steps in one call", lambda n: js.step(m, d, n), 500),
        ("mujoco.mj_step, n steps in one call", lambda n: mujoco.mj_step(mj, md, n), 500),
    ]
    for name, fn, n in rows:
        m.opt.tolerance = 0.0 if name.startswith("sweeps") else tol
        print(f"{name:36s} {best(fn, n):9.2f} µs")
    print(f"after the steps: nefc {d.nefc[0]} (MuJoCo {md.nefc}), sweeps {d.solver_niter[0]} "
          f"(MuJoCo {md.solver_niter[0]})")


if __name__ == "__main__":
    main()
