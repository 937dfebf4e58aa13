"""Preconditioned nonlinear conjugate gradient on the primal cost.

Same cost, gradient, line search and termination as `newton` (MuJoCo mj_solCG), with the
mass matrix as preconditioner instead of the Hessian: g = ∇c(a), z = M⁻¹ g (sparse LᵀDL
solve), direction s = −z + β s_prev. β is Hager and Zhang's (SIAM J. Optim. 2005), in the
M⁻¹ metric and with their lower bound, as MuJoCo 4.0 uses it: with y = g − g_prev,
    β = (yᵀz − 2 (yᵀ(z − z_prev) / sᵀy) sᵀg) / sᵀy,
which keeps MuJoCo's iterates step for step (the Polak–Ribière+ β of older MuJoCo reaches
the same minimum in a few more or fewer iterations). Each iteration costs O(nefc nv) and
no factorization, so CG wins on large sparse problems and needs more iterations than Newton.
"""

import math

import numpy as np
from numba import njit, uint64

from jointspace._numba.scratch import borrow, keep, shaped
from jointspace.solver.cost import (
    constraint_update,
    dot_on,
    gauss,
    mul_j,
    mul_jt,
    mul_m,
    save_stats,
    solve_m,
)
from jointspace.solver.island import island_counts, island_dofs, island_searches
from jointspace.types import MINVAL


@njit(cache=True)
def _hz_direction(search, grad, gradold, Mgrad, Mgradold, dofs, lo, n):
    """search ← −z + β search on one island's dofs, β Hager and Zhang's (module docstring)."""
    sy = 0.0
    yz = 0.0
    yzy = 0.0
    sg = 0.0
    for t in range(uint64(lo), uint64(lo + n)):
        k = uint64(dofs[t])
        y = grad[k] - gradold[k]
        sy += search[k] * y
        yz += y * Mgrad[k]
        yzy += y * (Mgrad[k] - Mgradold[k])
        sg += search[k] * grad[k]
    if sy < MINVAL:
        beta = 0.0
    else:
        snorm = math.sqrt(dot_on(search, search, dofs, lo, n))
        gnorm = math.sqrt(dot_on(grad, grad, dofs, lo, n))
        beta = max((yz - 2.0 * yzy / sy * sg) / sy,
                   -1.0 / max(MINVAL, snorm * min(0.01, gnorm)))
    for t in range(uint64(lo), uint64(lo + n)):
        k = uint64(dofs[t])
        search[k] = -Mgrad[k] + beta * search[k]


@njit(cache=True)
def sol_cg(m, d, maxiter, cdim, cmu, cfr, nisland, iscale, rows, adr, cnt, dof_island):
    """CG iterations from d.qacc; writes qacc, efc_force, efc_state, qfrc_constraint.

    Island by island, each with its own line searches, directions, iteration count and
    termination tests scaled by iscale[k] (see sol_newton for the arguments).
    """
    nv = m.nv
    nefc = np.int64(d.nefc[0])
    tol = m.opt_tolerance[0]
    qacc = d.qacc
    force = d.efc_force
    state = d.efc_state
    # scratch in one block, used through borrowed views (`_numba.scratch`)
    f_own = np.empty(7 * nv + 11 * nefc + 32 + 2 * nisland)
    i_own = np.empty(nefc + nv + 6 * nisland, dtype=np.int32)
    fb = borrow(f_own)
    ib = borrow(i_own)
    Ma = fb[0:nv]
    Mv = fb[nv:2 * nv]
    grad = fb[2 * nv:3 * nv]
    Mgrad = fb[3 * nv:4 * nv]
    gradold = fb[4 * nv:5 * nv]
    Mgradold = fb[5 * nv:6 * nv]
    search = fb[6 * nv:7 * nv]
    o = 7 * nv
    jar = fb[o:o + nefc]
    Jv = fb[o + nefc:o + 2 * nefc]
    quad = shaped(fb[o + 2 * nefc:o + 11 * nefc], (nefc, 9))
    o += 11 * nefc
    hcone = shaped(fb[o:o + 1], (1, 1))
    res = fb[o + 1:o + 4]
    pts = shaped(fb[o + 4:o + 32], (7, 4))
    o += 32
    imp = fb[o:o + nisland]
    slope = fb[o + nisland:o + 2 * nisland]
    oldstate = ib[0:nefc]
    dofs = ib[nefc:nefc + nv]
    o = nefc + nv
    dadr = ib[o:o + nisland]
    dcnt = ib[o + nisland:o + 2 * nisland]
    done = ib[o + 2 * nisland:o + 3 * nisland]
    moved = ib[o + 3 * nisland:o + 4 * nisland]
    iters = ib[o + 4 * nisland:o + 5 * nisland]
    neval = ib[o + 5 * nisland:o + 6 * nisland]
    island_dofs(nv, dof_island, nisland, dofs, dadr, dcnt)
    whole = nisland == 1 and dcnt[0] == nv  # one island of every dof: no masking

    mul_m(m, d.qM, qacc, Ma)
    mul_j(d, qacc, jar)
    for i in range(nefc):
        jar[i] -= d.efc_aref[i]
    cost = constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, np.bool_(False))
    cost += gauss(m, d, qacc, Ma)
    mul_jt(d, force, d.qfrc_constraint)
    for k in range(nv):
        grad[k] = Ma[k] - d.qfrc_smooth[k] - d.qfrc_constraint[k]
        Mgrad[k] = grad[k]
    solve_m(m, d, Mgrad)
    # the cost is strongly convex in the M-norm: c(a) − c* ≤ ½ gᵀ M⁻¹ g, island by island
    for k in range(nisland):
        gap = max(0.0, 0.5 * iscale[k] * dot_on(grad, Mgrad, dofs, dadr[k], dcnt[k]))
        done[k] = 1 if gap < tol else 0
        iters[k] = 0
        moved[k] = 0
    for k in range(nv):
        search[k] = -Mgrad[k]
    while True:
        if not island_searches(m, d, maxiter, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad,
                               res, pts, nisland, iscale, dofs, dadr, dcnt, rows, adr, cnt,
                               whole, done, iters, moved, neval, imp, slope):
            break
        for k in range(nv):
            gradold[k] = grad[k]
            Mgradold[k] = Mgrad[k]
        for i in range(nefc):
            oldstate[i] = state[i]
        cost = constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, np.bool_(False))
        cost += gauss(m, d, qacc, Ma)
        mul_jt(d, force, d.qfrc_constraint)
        for k in range(nv):
            grad[k] = Ma[k] - d.qfrc_smooth[k] - d.qfrc_constraint[k]
            Mgrad[k] = grad[k]
        solve_m(m, d, Mgrad)
        for k in range(nisland):
            if moved[k] == 0:
                continue
            moved[k] = 0
            gradient = iscale[k] * math.sqrt(dot_on(grad, grad, dofs, dadr[k], dcnt[k]))
            if k == 0:
                nch, _, nact = island_counts(state, oldstate, rows, adr[0], cnt[0])
                save_stats(d, iters[0], imp[0], gradient, slope[0], cost, nact, nch, neval[0],
                           0)
            iters[k] += 1
            if (imp[k] > 0.0 and imp[k] < tol) or gradient < tol:
                done[k] = 1
            else:
                _hz_direction(search, grad, gradold, Mgrad, Mgradold, dofs, dadr[k],
                              dcnt[k])
    d.solver_niter[0] = iters[0]
    keep(f_own)
    keep(i_own)
