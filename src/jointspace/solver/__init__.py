"""Constraint solvers: turn qacc_smooth and the efc_* rows into qacc and constraint forces.

    newton.py  Newton on the primal with exact line search (default; MuJoCo mj_solNewton)
    cg.py      preconditioned nonlinear conjugate gradient on the primal (mj_solCG)
    pgs.py     projected Gauss–Seidel on the dual with elliptic-cone projection (mj_solPGS)
    ipm.py     log-barrier interior-point method on the dual (slides 000)
    cost.py    the problem they share: cost, forces, states, line search, dual matrices
    barrier.py the slides' log-barrier contact model, forward and inverse (not a stage of
               `forward`: `barrier_forward`, `barrier_inverse`)

The stage (MuJoCo mj_fwdConstraint): efc_b = J qacc_smooth − aref; warm start from
d.qacc_warmstart when that beats qacc_smooth (primal cost) or f = 0 (dual cost), unless the
"warmstart" flag is disabled; run the solver with m.opt.iterations and m.opt.tolerance;
dual solvers finish with qfrc_constraint = Jᵀ f and qacc = qacc_smooth + M⁻¹ qfrc_constraint.
Statistics per iteration go to d.solver_improvement, _gradient, _lineslope, _cost,
_nactive, _nchange, _neval, _nupdate (the first 200 iterations), the count to
d.solver_niter. `forward` (its `fwd_constraint` stage) calls `solve_stage` on the rows that
`fwd_rows` built and then saves qacc to d.qacc_warmstart for the next call.
"""

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace._numba.scratch import borrow, keep, shaped
from jointspace.constraint import (
    cone_info,
    warn_cnstrfull,
)
from jointspace.solver.cg import sol_cg
from jointspace.solver.cost import (
    constraint_update,
    dual_finish,
    gauss,
    make_ar,
    mul_j,
    mul_jt,
    mul_m,
)
from jointspace.solver.ipm import sol_ipm
from jointspace.solver.island import efc_islands, one_island
from jointspace.solver.newton import sol_newton
from jointspace.solver.noslip import sol_noslip
from jointspace.solver.pgs import sol_pgs
from jointspace.types import (
    DSBL_ISLAND,
    DSBL_WARMSTART,
    SMALL_SOLVE,
    SOLVER_CG,
    SOLVER_IPM,
    SOLVER_NEWTON,
    SOLVER_PGS,
)

SOLVERS = ("PGS", "CG", "Newton", "IPM")


@njit(cache=True, inline="always")
def _cones_into(m, d, cdim, buf, n):
    """The rows' cones in the given scratch: (cdim, cmu, cfr) as views.

    cdim[:n] gets the cone dimensions, buf[:6 n] the friction coefficients (n) and the
    cone parameters (n × 5).
    """
    k = np.int64(n)
    dims = cdim[:k]
    dims[:] = 0
    cmu = buf[:k]
    cmu[:] = 0.0
    cfr = shaped(buf[k:6 * k], (k, 5))
    cfr[:, :] = 1.0
    cone_info(m, d, dims, cmu, cfr)
    return dims, cmu, cfr


@njit(cache=True)
def cone_arrays(m, d):
    """(cdim, cmu, cfr) of the rows (`constraint.cone_info`), in arrays of their own."""
    n = max(d.nefc[0], 1)
    return _cones_into(m, d, np.empty(n, dtype=np.int32), np.empty(6 * n), n)


@njit(cache=True, nogil=True)
def solve_stage(m, d, solver, maxiter):
    """The constraint solve on the current rows (mj_fwdConstraint)."""
    nv = m.nv
    nefc = d.nefc[0]
    for k in range(nv):
        d.qfrc_constraint[k] = 0.0
    d.solver_niter[0] = 0
    if nefc == 0:
        for k in range(nv):
            d.qacc[k] = d.qacc_smooth[k]
        return
    # b = J a0 − aref
    mul_j(d, d.qacc_smooth, d.efc_b)
    for i in range(nefc):
        d.efc_b[i] -= d.efc_aref[i]
    # the cones, islands and scales in the stage's scratch (d.scratch_solve_*: views of
    # borrowed fields, no allocation per solve), or in arrays of their own past its rows
    if nefc <= d.scratch_solve_i.shape[0]:
        si = d.scratch_solve_i
        sf = d.scratch_solve_f
        g = d.scratch_solve_l
    else:
        si = np.empty(nefc, dtype=np.int32)
        sf = np.empty(7 * nefc)
        g = np.empty(6 * nefc + 5 * nv + 4, dtype=np.int64)
    cdim, cmu, cfr = _cones_into(m, d, si, sf, nefc)
    hc = shaped(d.scratch_small[SMALL_SOLVE:SMALL_SOLVE + 1], (1, 1))
    dual = solver == SOLVER_PGS or solver == SOLVER_IPM
    # primed: qacc is the warm start, and its J qacc − aref (scratch_efc), M qacc
    # (scratch_v[1]), forces, zones and cost (cost_ws) are those Newton starts from
    primed = False
    cost_ws = 0.0
    cost_con = 0.0
    if (m.opt_disableflags[0] & DSBL_WARMSTART) == 0:
        # cost at the warm start (after the smooth point's, so that efc_force and
        # efc_state are the warm start's), primal or dual
        cost_smooth = 0.0
        if not dual:
            cost_smooth = constraint_update(d, d.efc_b, cdim, cmu, cfr, d.efc_force,
                                             d.efc_state, hc, False)
        jar = d.scratch_efc[:nefc]
        mul_j(d, d.qacc_warmstart, jar)
        for i in range(nefc):
            jar[i] -= d.efc_aref[i]
        cost_con = constraint_update(d, jar, cdim, cmu, cfr, d.efc_force, d.efc_state, hc,
                                     False)
        for k in range(nv):
            d.qacc[k] = d.qacc_warmstart[k]
        if not dual:
            Ma = d.scratch_v[1]
            mul_m(m, d.qM, d.qacc_warmstart, Ma)
            cost_ws = cost_con + gauss(m, d, d.qacc_warmstart, Ma)
            primed = cost_ws <= cost_smooth
            if not primed:
                for k in range(nv):
                    d.qacc[k] = d.qacc_smooth[k]
    else:
        for k in range(nv):
            d.qacc[k] = d.qacc_smooth[k]
        for i in range(nefc):
            d.efc_force[i] = 0.0
    noslip = m.opt_noslip_iterations[0]
    gs = solver == SOLVER_PGS or noslip > 0  # Gauss–Seidel on the dual
    # the islands (solver.island), or all rows as one; AR for Gauss–Seidel
    rows = g[0:nefc]
    adr = g[nefc:2 * nefc]
    cnt = g[2 * nefc:3 * nefc]
    nei = g[3 * nefc:4 * nefc]
    nfi = g[4 * nefc:5 * nefc]
    dof_island = g[5 * nefc:5 * nefc + nv]
    iscale = sf[6 * nefc:7 * nefc]
    nisland = 0
    if (m.opt_disableflags[0] & DSBL_ISLAND) == 0:
        nisland = efc_islands(m, d, rows, adr, cnt, nei, nfi, iscale, dof_island,
                              g[5 * nefc + nv:])
    if nisland == 0:
        # islands off, or rows on no moving tree: one problem (MuJoCo's monolithic solve)
        nisland = one_island(m, d, rows, adr, cnt, nei, nfi, iscale, dof_island)
        if (m.opt_disableflags[0] & DSBL_ISLAND) == 0:
            d.nisland[0] = 0
    if not dual:
        # dofs in no island start (and stay) at qacc_smooth
        changed = 0
        for k in range(nv):
            if dof_island[k] < 0 and d.qacc[k] != d.qacc_smooth[k]:
                d.qacc[k] = d.qacc_smooth[k]
                changed += 1
        if changed > 0 and primed:
            Ma = d.scratch_v[1]
            mul_m(m, d.qM, d.qacc, Ma)
            cost_ws = cost_con + gauss(m, d, d.qacc, Ma)
    if gs:
        ar_own = np.empty(nefc * nefc)
        AR = shaped(borrow(ar_own), (nefc, nefc))
        make_ar(m, d, AR)
    if solver == SOLVER_NEWTON:
        sol_newton(m, d, maxiter, cdim, cmu, cfr, primed, cost_ws, nisland, iscale, rows, adr,
                   cnt, dof_island)
    elif solver == SOLVER_CG:
        sol_cg(m, d, maxiter, cdim, cmu, cfr, nisland, iscale, rows, adr, cnt, dof_island)
    elif solver == SOLVER_PGS:
        sol_pgs(m, d, maxiter, cdim, cmu, cfr, AR, rows, adr, cnt, nei, nfi, iscale, nisland)
    else:
        sol_ipm(m, d, maxiter, cdim, cmu, cfr)
    if noslip > 0:
        sol_noslip(m, d, noslip, cdim, cmu, cfr, AR, rows, adr, cnt, nei, nfi, iscale, nisland)
    if dual or noslip > 0:
        dual_finish(m, d)
    if gs:
        keep(ar_own)


@njit(cache=True, nogil=True)
def _primal_cost(m, d, qacc):
    """c(qacc): the primal cost of the current rows (Gauss term plus constraint costs)."""
    nefc = d.nefc[0]
    cdim, cmu, cfr = cone_arrays(m, d)
    jar = np.empty(max(nefc, 1))
    mul_j(d, qacc, jar)
    for i in range(nefc):
        jar[i] -= d.efc_aref[i]
    force = np.empty(max(nefc, 1))
    state = np.empty(max(nefc, 1), dtype=np.int32)
    s = constraint_update(d, jar, cdim, cmu, cfr, force, state, np.empty((1, 1)),
                          np.bool_(False))
    Ma = np.empty(m.nv)
    mul_m(m, d.qM, qacc, Ma)
    return s + gauss(m, d, qacc, Ma)


@njit(cache=True)
def _constraint_force(m, d, qacc, force, qfrc):
    """Constraint force at qacc (primal map f = −∂s/∂jar) and its joint-space image Jᵀ f."""
    nefc = d.nefc[0]
    cdim, cmu, cfr = cone_arrays(m, d)
    jar = np.empty(max(nefc, 1))
    mul_j(d, qacc, jar)
    for i in range(nefc):
        jar[i] -= d.efc_aref[i]
    state = np.empty(max(nefc, 1), dtype=np.int32)
    constraint_update(d, jar, cdim, cmu, cfr, force, state, np.empty((1, 1)),
                          np.bool_(False))
    mul_jt(d, force, qfrc)


_k_solve = entry.Kernel(solve_stage)
_k_cost = entry.Kernel(_primal_cost)


def solver_id(solver, fname="solve"):
    """The SOLVER_* constant for a name ("Newton", "CG", "PGS", "IPM"); None → None."""
    if solver is None:
        return None
    if isinstance(solver, str):
        for i, name in enumerate(SOLVERS):
            if solver.lower() == name.lower():
                return i
    raise ValueError(f"{fname}: argument solver must be one of {SOLVERS} (or None for "
                     f"m.opt.solver), got {solver!r}")


def solve(m, d, solver=None, iterations=None):
    """Solve the constraint problem on d's current rows: qacc, efc_force, qfrc_constraint.

    Run after `jointspace.forward` (which has built the rows and solved with m.opt.solver)
    to solve again, e.g. with another solver; reads qacc_smooth, qfrc_smooth, qM, qLD,
    efc_* and qacc_warmstart, and writes efc_b, efc_force, efc_state, qfrc_constraint,
    qacc and the solver statistics. d.qacc_warmstart is left as it is.

    Args:
        m: the Model.
        d: a Data for m.
        solver: "Newton", "CG", "PGS" or "IPM"; None uses m.opt.solver.
        iterations: iteration limit; None uses m.opt.iterations.

    Returns:
        The number of iterations, d.solver_niter[0].
    """
    entry.check_pair(m, d, "solve")
    sid = solver_id(solver)
    if sid is None:
        sid = int(m.opt_solver[0])
    if iterations is None:
        iterations = int(m.opt_iterations[0])
    elif (isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer))
          or iterations < 0):
        raise ValueError(f"solve: argument iterations must be a non-negative integer, "
                         f"got {iterations!r}")
    ep = _k_solve.ep
    # int32, the types forward's call passes (m.opt_solver, m.opt_iterations): one
    # compiled solve_stage for both
    ep(m._s, d._s, np.int32(sid), np.int32(min(int(iterations), 2**31 - 1)))
    return int(d.solver_niter[0])


def primal_cost(m, d, qacc):
    """The primal cost c(qacc) of d's current rows (see `jointspace.solver.cost`).

    ½ (qacc − qacc_smooth)ᵀ M (qacc − qacc_smooth) + s(J qacc − aref): the objective all
    solvers minimize, to compare solutions (ours, MuJoCo's) by value.
    """
    entry.check_pair(m, d, "primal_cost")
    qacc = entry.vec(qacc, m.nv, "qacc", "primal_cost")
    ep = _k_cost.ep
    return float(ep(m._s, d._s, qacc))


__all__ = ["SOLVERS", "primal_cost", "solve", "solver_id", "warn_cnstrfull"]
