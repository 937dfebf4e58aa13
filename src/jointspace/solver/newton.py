"""Newton's method on the primal cost with exact line search (MuJoCo's default solver).

The cost c(a) of `jointspace.solver.cost` is convex and piecewise quadratic in a, except on
elliptic cones. Each iteration solves H s = −∇c with the generalized Hessian
    H = M + Jᵀ diag(D_i [row i quadratic]) J + Σ_cones J_cᵀ H_c J_c,
where H_c is the Hessian of the cone's middle-zone cost (MuJoCo mj_solNewton,
engine_solver.c), then moves a ← a + α s with α from the exact line search. H is dense
(nv × nv, lower triangle) and refactored by Cholesky whenever the active set changes or a
cone is in its middle zone. Termination (MuJoCo's): scaled improvement or gradient below
the tolerance, or the Newton decrement ½ ∇cᵀ H⁻¹ ∇c (scaled) below it; a warm start whose
gradient and M⁻¹ gap are already below the tolerance skips the iterations.
"""

import math

import numpy as np
from numba import njit

from jointspace.constraint import CNSTR_CONTACT_ELLIPTIC, STATE_CONE, STATE_QUADRATIC
from jointspace.solver.cost import (
    _MINVAL,
    _chol_factor,
    _chol_solve,
    _constraint_update,
    _count_active,
    _dot,
    _gauss,
    _linesearch,
    _mul_j,
    _mul_jt,
    _mul_m,
    _primal_scale,
    _save_stats,
    _solve_m,
)


@njit(cache=True)
def _row_pattern(d, cdim, rnnz, rind):
    """Column indices of the non-zeros of each row of efc_J (rows touch few dofs).

    The rows of an elliptic contact all get the union of their patterns.
    """
    J = d.efc_J
    nv = J.shape[1]
    nefc = d.nefc[0]
    i = 0
    while i < nefc:
        dim = max(cdim[i], 1)
        n = 0
        for k in range(nv):
            for r in range(dim):
                if J[i + r, k] != 0.0:
                    rind[i, n] = k
                    n += 1
                    break
        for r in range(dim):
            rnnz[i + r] = n
            for q in range(n):
                rind[i + r, q] = rind[i, q]
        i += dim


@njit(cache=True)
def _hessian(m, d, state, cdim, hcone, rnnz, rind, H, W):
    """H (lower triangle) = M + Jᵀ D_quad J + Σ_cones J_cᵀ H_c J_c, then its Cholesky factor.

    Products run over each row's non-zero pattern (rnnz, rind from _row_pattern).
    Returns the number of cones in the middle zone.
    """
    nv = m.nv
    nefc = d.nefc[0]
    J = d.efc_J
    D = d.efc_D
    for a in range(nv):
        for b in range(a + 1):
            H[a, b] = 0.0
    for i in range(nefc):
        if state[i] != STATE_QUADRATIC:
            continue
        row = J[i]
        ind = rind[i]
        Di = D[i]
        # column indices are increasing, so ind[q] ≤ ind[p] for q ≤ p
        for p in range(rnnz[i]):
            a = ind[p]
            t = Di * row[a]
            for q in range(p + 1):
                b = ind[q]
                H[a, b] += t * row[b]
    ncone = 0
    i = 0
    while i < nefc:
        dim = cdim[i]
        if dim == 0:
            i += 1
            continue
        if state[i] == STATE_CONE:
            ncone += 1
            # the rows of one contact share their union pattern: W = H_c J_c, H += J_cᵀ W
            hc = hcone[i]
            ind = rind[i]
            nz = rnnz[i]
            for r in range(dim):
                for q in range(nz):
                    k = ind[q]
                    s = 0.0
                    for c in range(dim):
                        s += hc[r * dim + c] * J[i + c, k]
                    W[r, k] = s
            for r in range(dim):
                row = J[i + r]
                for p in range(nz):
                    a = ind[p]
                    ja = row[a]
                    for q in range(p + 1):
                        b = ind[q]
                        H[a, b] += ja * W[r, b]
        i += dim
    madr = m.dof_Madr
    parent = m.dof_parentid
    for a in range(nv):
        adr = madr[a]
        b = a
        while b >= 0:
            H[a, b] += d.qM[adr]
            adr += 1
            b = parent[b]
    _chol_factor(H, nv, _MINVAL)
    return ncone


@njit(cache=True)
def _sol_newton(m, d, maxiter, cdim, cmu, cfr):
    """Newton iterations from d.qacc; writes qacc, efc_force, efc_state, qfrc_constraint."""
    nv = m.nv
    nefc = d.nefc[0]
    tol = m.opt_tolerance[0]
    elliptic = False
    for i in range(nefc):
        if d.efc_type[i] == CNSTR_CONTACT_ELLIPTIC:
            elliptic = True
            break
    qacc = d.qacc
    force = d.efc_force
    state = d.efc_state
    Ma = np.empty(nv)
    Mv = np.empty(nv)
    grad = np.empty(nv)
    Mgrad = np.empty(nv)
    search = np.empty(nv)
    jar = np.empty(nefc)
    Jv = np.empty(nefc)
    quad = np.empty((nefc, 9))
    hcone = np.empty((nefc, 36))
    oldstate = np.empty(nefc, dtype=np.int32)
    H = np.empty((nv, nv))
    W = np.empty((6, nv))
    res = np.empty(3)
    rnnz = np.empty(nefc, dtype=np.int32)
    rind = np.empty((nefc, nv), dtype=np.int32)
    _row_pattern(d, cdim, rnnz, rind)

    # jar = J a − aref, cost, forces, gradient ∇c = M a − qfrc_smooth − Jᵀ f
    _mul_m(m, d.qM, qacc, Ma)
    _mul_j(d, qacc, jar)
    for i in range(nefc):
        jar[i] -= d.efc_aref[i]
    cost = _constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, elliptic)
    cost += _gauss(m, d, qacc, Ma)
    _mul_jt(d, force, d.qfrc_constraint)
    for k in range(nv):
        grad[k] = Ma[k] - d.qfrc_smooth[k] - d.qfrc_constraint[k]
    scale = _primal_scale(m, d)
    for k in range(nv):
        Mgrad[k] = grad[k]
    _solve_m(m, d, Mgrad)
    gradnorm = math.sqrt(_dot(grad, grad, nv))
    gradient_ok = scale * gradnorm < tol
    done = gradient_ok and max(0.0, 0.5 * scale * _dot(grad, Mgrad, nv)) < tol
    if not done:
        _hessian(m, d, state, cdim, hcone, rnnz, rind, H, W)
        for k in range(nv):
            Mgrad[k] = grad[k]
        _chol_solve(H, nv, Mgrad)
        done = gradient_ok and max(0.0, 0.5 * scale * _dot(grad, Mgrad, nv)) < tol
    for k in range(nv):
        search[k] = -Mgrad[k]
    it = 0
    while not done and it < maxiter:
        alpha = _linesearch(m, d, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad, scale, res)
        if alpha == 0.0:
            break
        for k in range(nv):
            qacc[k] += alpha * search[k]
            Ma[k] += alpha * Mv[k]
        for i in range(nefc):
            jar[i] += alpha * Jv[i]
            oldstate[i] = state[i]
        cost = _constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, elliptic)
        cost += _gauss(m, d, qacc, Ma)
        _mul_jt(d, force, d.qfrc_constraint)
        for k in range(nv):
            grad[k] = Ma[k] - d.qfrc_smooth[k] - d.qfrc_constraint[k]
        nchange = 0
        for i in range(nefc):
            if state[i] != oldstate[i]:
                nchange += 1
        nupdate = 0
        ncone = 0
        for i in range(nefc):
            if state[i] == STATE_CONE:
                ncone += 1
        if nchange > 0 or ncone > 0:
            _hessian(m, d, state, cdim, hcone, rnnz, rind, H, W)
            nupdate = nefc
        for k in range(nv):
            Mgrad[k] = grad[k]
        _chol_solve(H, nv, Mgrad)
        improvement = scale * res[0]
        gradient = scale * math.sqrt(_dot(grad, grad, nv))
        _save_stats(d, it, improvement, gradient, res[1], cost, _count_active(d, state),
                    nchange, int(res[2]), nupdate)
        decrement = max(0.0, 0.5 * scale * _dot(grad, Mgrad, nv))
        it += 1
        if (improvement > 0.0 and improvement < tol) or gradient < tol or decrement < tol:
            break
        for k in range(nv):
            search[k] = -Mgrad[k]
    d.solver_niter[0] = it
