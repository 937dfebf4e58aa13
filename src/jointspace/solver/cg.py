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
from numba import njit

from jointspace._numba.scratch import borrow, keep, shaped
from jointspace.solver.cost import (
    constraint_update,
    count_active,
    dot,
    gauss,
    linesearch,
    mul_j,
    mul_jt,
    mul_m,
    save_stats,
    solve_m,
)
from jointspace.types import MINVAL


@njit(cache=True)
def sol_cg(m, d, maxiter, cdim, cmu, cfr, scale):
    """CG iterations from d.qacc; writes qacc, efc_force, efc_state, qfrc_constraint.

    scale: of the improvement and gradient in the termination tests (see sol_newton).
    """
    nv = m.nv
    nefc = np.int64(d.nefc[0])
    tol = m.opt_tolerance[0]
    qacc = d.qacc
    force = d.efc_force
    state = d.efc_state
    # scratch in one block, used through borrowed views (`_numba.scratch`)
    f_own = np.empty(7 * nv + 11 * nefc + 32)
    i_own = np.empty(nefc, dtype=np.int32)
    fb = borrow(f_own)
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
    oldstate = borrow(i_own)

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
    # the cost is strongly convex in the M-norm: c(a) − c* ≤ ½ gᵀ M⁻¹ g
    done = max(0.0, 0.5 * scale * dot(grad, Mgrad, nv)) < tol
    for k in range(nv):
        search[k] = -Mgrad[k]
    it = 0
    while not done and it < maxiter:
        alpha = linesearch(m, d, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad, scale, res,
                           pts)
        if alpha == 0.0:
            break
        for k in range(nv):
            qacc[k] += alpha * search[k]
            Ma[k] += alpha * Mv[k]
            gradold[k] = grad[k]
            Mgradold[k] = Mgrad[k]
        for i in range(nefc):
            jar[i] += alpha * Jv[i]
            oldstate[i] = state[i]
        cost = constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, np.bool_(False))
        cost += gauss(m, d, qacc, Ma)
        mul_jt(d, force, d.qfrc_constraint)
        for k in range(nv):
            grad[k] = Ma[k] - d.qfrc_smooth[k] - d.qfrc_constraint[k]
            Mgrad[k] = grad[k]
        solve_m(m, d, Mgrad)
        nchange = 0
        for i in range(nefc):
            if state[i] != oldstate[i]:
                nchange += 1
        improvement = scale * res[0]
        gradient = scale * math.sqrt(dot(grad, grad, nv))
        save_stats(d, it, improvement, gradient, res[1], cost, count_active(d, state),
                    nchange, int(res[2]), 0)
        it += 1
        if (improvement > 0.0 and improvement < tol) or gradient < tol:
            break
        # Hager–Zhang: y = g − g_old, z_y = z − z_old,
        # β = (yᵀz − 2 (yᵀz_y / sᵀy) sᵀg) / sᵀy, bounded below by −1/(|s| min(0.01, |g|))
        sy = 0.0
        yz = 0.0
        yzy = 0.0
        sg = 0.0
        for k in range(nv):
            y = grad[k] - gradold[k]
            sy += search[k] * y
            yz += y * Mgrad[k]
            yzy += y * (Mgrad[k] - Mgradold[k])
            sg += search[k] * grad[k]
        if sy < MINVAL:
            beta = 0.0
        else:
            snorm = math.sqrt(dot(search, search, nv))
            gnorm = math.sqrt(dot(grad, grad, nv))
            beta = max((yz - 2.0 * yzy / sy * sg) / sy,
                       -1.0 / max(MINVAL, snorm * min(0.01, gnorm)))
        for k in range(nv):
            search[k] = -Mgrad[k] + beta * search[k]
    d.solver_niter[0] = it
    keep(f_own)
    keep(i_own)
