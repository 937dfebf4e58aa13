"""Time the parts of one Newton solve on the lying humanoid, each in a compiled loop.

    python tools/profile_newton.py [pyramidal|elliptic]

The scene is benchmarks/bench_constraint.py's (the humanoid lying on the floor, MuJoCo's
warm start). Each part of `solve_stage` with Newton (cone data, the constraint update, the
products with J, M and M⁻¹, the Cholesky factorization and solve at nv, the row pattern,
the line search, the dense and the tree-sparse Hessian factors, three scratch allocations)
runs n times in its own compiled loop; the best of 15 rounds of CPU time per call is
printed in µs. docs/speed.md ("Rollouts") quotes a run on a quiet machine.
"""

import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "benchmarks"))
import bench_constraint as bc  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace._numba.dense import chol_factor, chol_solve  # noqa: E402
from jointspace.solver import cone_arrays, solve_stage  # noqa: E402
from jointspace.solver import newton as nw  # noqa: E402
from jointspace.solver.cost import (  # noqa: E402
    constraint_update,
    linesearch,
    mul_j,
    mul_m,
    primal_scale,
    solve_m,
)
from jointspace.solver.island import one_island  # noqa: E402


@njit(cache=True)
def L_solve(m, d, ws, n):
    """solve_stage with Newton from the warm start, n times."""
    for _ in range(n):
        d.qacc_warmstart[:] = ws
        solve_stage(m, d, 2, 100)

@njit(cache=True)
def L_cone(m, d, n):
    """cone_arrays, n times."""
    for _ in range(n):
        cone_arrays(m, d)

@njit(cache=True)
def L_newton(m, d, ws, n):
    """sol_newton alone from the warm start, n times."""
    cdim, cmu, cfr = cone_arrays(m, d)
    nefc = d.nefc[0]
    rows = np.empty(nefc, dtype=np.int64)
    adr = np.empty(nefc, dtype=np.int64)
    cnt = np.empty(nefc, dtype=np.int64)
    sc = np.empty(nefc)
    dof_island = np.empty(m.nv, dtype=np.int64)
    one_island(m, d, rows, adr, cnt, np.empty(nefc, dtype=np.int64),
               np.empty(nefc, dtype=np.int64), sc, dof_island)
    for _ in range(n):
        d.qacc[:] = ws
        nw.sol_newton(m, d, 100, cdim, cmu, cfr, False, 0.0, 1, sc, rows, adr, cnt,
                      dof_island)

@njit(cache=True)
def L_update(m, d, n):
    """constraint_update at the current qacc, n times."""
    cdim, cmu, cfr = cone_arrays(m, d)
    nefc = d.nefc[0]
    jar = np.empty(nefc)
    hc = np.empty((nefc, 36))
    mul_j(d, d.qacc, jar)
    for _ in range(n):
        constraint_update(d, jar, cdim, cmu, cfr, d.efc_force, d.efc_state, hc, False)

@njit(cache=True)
def L_mulj(m, d, n):
    """J x, n times."""
    nefc = d.nefc[0]
    jar = np.empty(nefc)
    for _ in range(n):
        mul_j(d, d.qacc, jar)

@njit(cache=True)
def L_mulm(m, d, n):
    """M x, n times."""
    out = np.empty(m.nv)
    for _ in range(n):
        mul_m(m, d.qM, d.qacc, out)

@njit(cache=True)
def L_solvem(m, d, n):
    """M⁻¹ x by the sparse factor, n times."""
    x = np.ones(m.nv)
    for _ in range(n):
        solve_m(m, d, x)

@njit(cache=True)
def L_chol(m, d, n):
    """chol_factor of a dense nv × nv matrix (after copying it in), n times."""
    nv = m.nv
    H = np.empty((nv, nv))
    for _ in range(n):
        for a in range(nv):
            for b in range(nv):
                H[a, b] = 1.0 if a == b else 0.01
        chol_factor(H, nv, 1e-15)

@njit(cache=True)
def L_cholsolve(m, d, n):
    """chol_solve with an nv × nv factor, n times."""
    nv = m.nv
    H = np.empty((nv, nv))
    for a in range(nv):
        for b in range(nv):
            H[a, b] = 1.0 if a == b else 0.01
    chol_factor(H, nv, 1e-15)
    x = np.ones(nv)
    for _ in range(n):
        chol_solve(H, nv, x)

@njit(cache=True)
def _pattern_arrays(m, d):
    """The group arrays _row_pattern fills: gstart, gnnz, gind."""
    nefc = d.nefc[0]
    return (np.empty(nefc + 1, dtype=np.int32), np.empty(nefc, dtype=np.int32),
            np.empty((nefc, m.nv), dtype=np.int32))

@njit(cache=True)
def L_rowpat(m, d, n):
    """the Hessian's row pattern, n times."""
    gstart, gnnz, gind = _pattern_arrays(m, d)
    for _ in range(n):
        nw._row_pattern(d, gstart, gnnz, gind)

@njit(cache=True)
def L_ls(m, d, n):
    """the exact line search along qacc_smooth − qacc, n times."""
    nv = m.nv
    nefc = d.nefc[0]
    cdim, cmu, cfr = cone_arrays(m, d)
    Ma = np.empty(nv)
    Mv = np.empty(nv)
    Jv = np.empty(nefc)
    jar = np.empty(nefc)
    quad = np.empty((nefc, 9))
    res = np.empty(3)
    search = np.empty(nv)
    for k in range(nv):
        search[k] = d.qacc_smooth[k] - d.qacc[k]
    mul_m(m, d.qM, d.qacc, Ma)
    mul_j(d, d.qacc, jar)
    for i in range(nefc):
        jar[i] -= d.efc_aref[i]
    scale = primal_scale(m, d)
    pts = np.empty((7, 4))
    dofs = np.arange(nv)
    rows = np.arange(nefc)
    a = 0.0
    for _ in range(n):
        a += linesearch(m, d, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad, scale, res, pts,
                        dofs, 0, nv, rows, 0, nefc, True)
    return res[2]

@njit(cache=True)
def L_quad(m, d, n):
    """the Hessian M + Jᵀ D J of the quadratic rows and its factor (_quad_factor), n times."""
    nv = m.nv
    gstart, gnnz, gind = _pattern_arrays(m, d)
    ng = nw._row_pattern(d, gstart, gnnz, gind)
    H = np.empty((nv, nv))
    G = np.empty((nv, nv))
    vals = np.empty(nv)
    for _ in range(n):
        nw._quad_factor(m, d, d.efc_state, ng, gstart, gnnz, gind, H, G, vals)

@njit(cache=True)
def L_tree(m, d, n):
    """the Hessian in qM's layout and its no-fill LᵀDL (_tree_factor), n times."""
    nv = m.nv
    nM = d.qM.shape[0]
    gstart, gnnz, gind = _pattern_arrays(m, d)
    ng = nw._row_pattern(d, gstart, gnnz, gind)
    gpos = np.empty_like(gind)
    if not nw._tree_pattern(m, ng, gnnz, gind, gpos):
        return
    cdim, _, _ = cone_arrays(m, d)
    hcone = np.zeros((d.nefc[0], 36))
    G = np.empty((nv, nv))
    W = np.empty((nv, nv))
    vals = np.empty(nv)
    Hq = np.empty(nM)
    Hf = np.empty(nM)
    hdiag = np.empty(nv)
    gcross = np.zeros(ng, np.int32)
    for _ in range(n):
        nw._tree_factor(m, d, d.efc_state, cdim, hcone, ng, gstart, gnnz, gind, gpos, gcross,
                        G, vals, W, Hq, Hf, hdiag, True)


@njit(cache=True)
def L_alloc(m, d, n):
    """three scratch allocations of the solve's sizes, n times."""
    nv = m.nv
    nefc = d.nefc[0]
    s = 0.0
    for _ in range(n):
        a = np.empty((nefc, 36))
        b = np.empty((nefc, nv), dtype=np.int32)
        c = np.empty(nv)
        s += a.shape[0] + b.shape[0] + c.shape[0]
    return s

def best_us(f, *args, n=5000):
    """Best of 15 rounds of CPU time per call of the loop f(*args, n), in µs."""
    f(*args, 1)
    best = 1e9
    for _ in range(15):
        t0 = time.process_time()
        f(*args, n)
        best = min(best, (time.process_time() - t0) / n)
    return best * 1e6


def main():
    """Print each part's time per call."""
    cone = sys.argv[1] if len(sys.argv) > 1 else "pyramidal"
    m, d, _, mjd = bc.scene(cone)
    ws = mjd.qacc_warmstart.copy()
    ms, ds = m._s, d._s
    d.qacc_warmstart[:] = ws
    js.solve(m, d, "Newton", iterations=100)
    n = d.nefc[0]
    print(f"{cone}: nefc {n}, nv {m.nv}, Newton iterations {d.solver_niter[0]}, "
          f"rows per state {np.bincount(d.efc_state[:n]).tolist()}")
    parts = [("solve_stage", L_solve, (ms, ds, ws)), ("sol_newton", L_newton, (ms, ds, ws)),
             ("cone_arrays", L_cone, (ms, ds)), ("constraint_update", L_update, (ms, ds)),
             ("mul_j", L_mulj, (ms, ds)), ("mul_m", L_mulm, (ms, ds)),
             ("solve_m", L_solvem, (ms, ds)), ("chol_factor (nv)", L_chol, (ms, ds)),
             ("chol_solve (nv)", L_cholsolve, (ms, ds)), ("row_pattern", L_rowpat, (ms, ds)),
             ("linesearch", L_ls, (ms, ds)), ("quad_factor (H, chol)", L_quad, (ms, ds)),
             ("tree_factor (H, LDL)", L_tree, (ms, ds)),
             ("3 allocations", L_alloc, (ms, ds))]
    for name, f, args in parts:
        print(f"{name:20s} {best_us(f, *args):8.3f} µs")


if __name__ == "__main__":
    main()
