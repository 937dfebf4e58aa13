"""Newton's method on the primal cost with exact line search (MuJoCo's default solver).

The cost c(a) of `jointspace.solver.cost` is convex and piecewise quadratic in a, except on
elliptic cones. Each iteration solves H s = −∇c with the generalized Hessian
    H = M + Jᵀ diag(D_i [row i quadratic]) J + Σ_cones J_cᵀ H_c J_c,
where H_c is the Hessian of the cone's middle-zone cost (MuJoCo mj_solNewton,
engine_solver.c), then moves a ← a + α s with α from the exact line search.

When every constraint's Jacobian pattern lies on one path from a dof to the root (contacts
with the world, joint limits: see _tree_pattern), H has M's branch-induced sparsity and is
kept in qM's layout, factored by the same no-fill LᵀDL as M (factor_ld); the rows that enter
or leave their quadratic zone are added to or taken from it and its factor by rank-one
changes on their root paths (O(depth²) each), and it is factored anew when cones are in
their middle zone; this costs less than MuJoCo's dense factor below nv 60. Otherwise H is
dense (nv × nv, lower triangle): the factor of M + Jᵀ D_quad J is computed once, then
updated by rank-one changes for each row that enters or leaves its quadratic zone
(refactored when a downdate loses definiteness), and the middle-zone cones are added to a
copy of it by rank-one updates, as MuJoCo's HessianIncremental and HessianCone do.
When only a few rows leave the root paths (kcross of them: a contact between two legs of
one body tree), the rows on root paths keep the tree factor T and the others enter as a
low-rank correction H = T + V Vᵀ, V's columns √D_r J_rᵀ for their quadratic rows and
J_cᵀ U_c for their cones in the middle zone (H_c = U_c U_cᵀ); H s = r is solved by the
Woodbury identity with the k × k capacitance I + Vᵀ T⁻¹ V, formed from W = L⁻ᵀ V and
refactored when T or those rows change (`_cross_factor`, `_woodbury_solve`). W's rows are
zero off their group's support (the union of its columns' root paths), where alone they are
solved and multiplied. Measured on the dog (nv 85, nM 1345) with full-length rows: the first
factor and solve took 0.3–0.6× the dense path's at kcross ≤ 4, but a rebuild of W and C
0.5–1.1× a one-row dense update and solve at kcross ≤ 4 and 1.6–1.7× at 8; at nv 22 it was
1.2–1.3× the dense path, so below nv 32 (LOW_RANK_MIN_NV) the dense path is kept. Above it,
`_low_rank_pays` estimates the rebuild and solve's work on the supports against one dense
update and solve (2 nv²): along the dog's trajectory the states with kcross 1–4 and 10 take
this path, those with 20 the dense one.
From SPARSE_MIN_NV dofs, when the low-rank correction does not pay, H is factored sparse as
MuJoCo does at large nv: L's pattern is M's (each dof's ancestors) with every row group's
columns made a clique and the fill-in of eliminating the dofs from the last to the first
(`_sparse_pattern`, once per solve: the rows' patterns do not change within it); H is
assembled and factored on it (`_sparse_factor`), rows that change zone are rank-one
changes along the elimination tree (`_sparse_rank1`), and the middle-zone cones are added
to a copy (`_add_cones`). It is taken when its factor's work is at most half the dense
one's. The dog at a state with 20 rows between its legs (L with 1,468 off-diagonal entries
against M's 1,260): Newton's solve 279 → 139 µs (MuJoCo's 86), its step 1.41 → 1.17 ×
mj_step.
Termination (MuJoCo's): scaled improvement or gradient below the tolerance, or the Newton
decrement ½ ∇cᵀ H⁻¹ ∇c (scaled) below it; a warm start whose gradient and M⁻¹ gap are
already below the tolerance skips the iterations.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.dense import chol_factor, chol_solve, chol_update
from jointspace._numba.scratch import shaped
from jointspace.constraint import CNSTR_CONTACT_ELLIPTIC, STATE_CONE, STATE_QUADRATIC
from jointspace.dynamics.factor import factor_ld, solve_ld, solve_lt
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

# Below this many dofs the low-rank path is not taken: its group bookkeeping costs more than
# the dense factor it saves (ball_in_cup, nv 4, one tendon row across branches: 1.21 → 1.33–1.38
# × mj_step with the correction; the rule's first version measured 1.2–1.3× the dense path at
# nv 22; the crossed-legs scene, nv 38, and the dog, nv 85, gain from it).
LOW_RANK_MIN_NV = 32
# From this many dofs a Hessian that is neither on root paths nor a low-rank correction is
# factored sparse (`_sparse_pattern`, `_sparse_factor`, `_sparse_rank1`) when its factor's
# multiply-adds (half the pattern's Σ nnz²) are at most SPARSE_SHARE of the dense factor's
# (nv³ / 6): the sparse loops index through the pattern, the dense ones vectorize.
SPARSE_MIN_NV = 32
SPARSE_SHARE = 0.5


@njit(cache=True)
def _row_pattern(d, gstart, gnnz, gind):
    """Groups of rows with one non-zero pattern, and that pattern (the union over the group).

    A group is a run of rows of one constraint (same efc_type and efc_id: a contact's rows,
    a connect's or weld's rows), which share one index efc_J_colind; returns the number of
    groups, the group of row i spanning rows gstart[g] … gstart[g + 1] − 1 with gnnz[g]
    columns gind[g, :gnnz[g]] (increasing).
    """
    nefc = d.nefc[0]
    ind = d.efc_J_colind
    ng = 0
    i = 0
    while i < nefc:
        e = i + 1
        while e < nefc and d.efc_id[e] == d.efc_id[i] and d.efc_type[e] == d.efc_type[i]:
            e += 1
        n = d.efc_J_rownnz[i]
        for j in range(n):
            gind[ng, j] = ind[i, j]
        gstart[ng] = i
        gnnz[ng] = n
        ng += 1
        i = e
    gstart[ng] = nefc
    return ng


@njit(cache=True)
def _same_pattern(gnnz, gind, g, h):
    """Whether groups g and h have one column pattern."""
    if gnnz[g] != gnnz[h]:
        return False
    for q in range(gnnz[g]):
        if gind[g, q] != gind[h, q]:
            return False
    return True


@njit(cache=True)
def _group_block(d, state, g, gstart, gnnz, gind, G, vals, fresh):
    """G (lower triangle, nz × nz) += Σ D_r v_r v_rᵀ over group g's quadratic rows r.

    v_r is row r of J on the group's pattern; with fresh, G is zeroed before the first
    quadratic row. Returns False (G untouched) when no row of the group is quadratic.
    """
    J = d.efc_J
    D = d.efc_D
    nz = gnnz[g]
    used = False
    for r in range(gstart[g], gstart[g + 1]):
        if state[r] != STATE_QUADRATIC:
            continue
        if not used and fresh:
            used = True
            for p in range(nz):
                for q in range(p + 1):
                    G[p, q] = 0.0
        used = True
        for q in range(nz):
            vals[q] = J[r, gind[g, q]]
        Dr = D[r]
        for p in range(nz):
            t = Dr * vals[p]
            for q in range(p + 1):
                G[p, q] += t * vals[q]
    return used


@njit(cache=True)
def _run_block(d, state, g, ng, gstart, gnnz, gind, G, vals):
    """G ← Σ D_r v_r v_rᵀ over the run of groups from g on that share g's pattern.

    (Contacts of one body come one after the other and share its pattern: their rows are
    added to H once.) Returns the group after the run, negated when G holds a sum (some
    row was quadratic).
    """
    e = g + 1
    while e < ng and _same_pattern(gnnz, gind, g, e):
        e += 1
    used = False
    for h in range(g, e):
        if _group_block(d, state, h, gstart, gnnz, gind, G, vals, not used):
            used = True
    return -e if used else e


@njit(cache=True)
def _quad_factor(m, d, state, ng, gstart, gnnz, gind, H, G, vals):
    """H (lower triangle) ← the Cholesky factor of M + Jᵀ D_quad J.

    Each group of rows (see _row_pattern) is summed in a compact block G on its pattern,
    then added to H once; the cones' middle-zone terms are added by _add_cones.
    """
    nv = m.nv
    for a in range(nv):
        for b in range(a + 1):
            H[a, b] = 0.0
    _assemble(m, d, state, ng, gstart, gnnz, gind, H, G, vals)
    chol_factor(H, nv, MINVAL)


@njit(cache=True)
def _assemble(m, d, state, ng, gstart, gnnz, gind, H, G, vals):
    """H (lower triangle, zero where M + Jᵀ D_quad J is not) += M + Jᵀ D_quad J."""
    g = np.int64(0)  # not the literal 0, which would compile a second _run_block
    while g < ng:
        e = _run_block(d, state, g, ng, gstart, gnnz, gind, G, vals)
        if e < 0:
            e = -e
            for p in range(gnnz[g]):
                a = gind[g, p]
                for q in range(p + 1):
                    H[a, gind[g, q]] += G[p, q]
        g = e
    madr = m.dof_Madr
    parent = m.dof_parentid
    for a in range(m.nv):
        adr = madr[a]
        b = a
        while b >= 0:
            H[a, b] += d.qM[adr]
            adr += 1
            b = parent[b]


@njit(cache=True)
def _on_root_path(parent, g, gnnz, gind, gpos):
    """Whether group g's columns lie on one path from a dof to the root (gpos: _tree_pattern)."""
    j = gnnz[g] - 1
    if j < 0:
        return True
    gpos[g, j] = 0
    i = parent[gind[g, j]]
    j -= 1
    pos = 1
    while j >= 0 and i >= 0:
        if i == gind[g, j]:
            gpos[g, j] = pos
            j -= 1
        i = parent[i]
        pos += 1
    return j < 0


@njit(cache=True)
def _tree_pattern(m, ng, gnnz, gind, gpos):
    """Whether every group's columns lie on one path from a dof to the root.

    Then each D_r J_rᵀ J_r, and each cone's J_cᵀ H_c J_c, is non-zero only at pairs (a, b)
    with b an ancestor of a, where M itself is: H keeps M's sparsity and its factor costs
    what M's does (factor_ld, no fill-in). Contacts with the world or between bodies of one
    chain, joint limits and friction loss have such rows; a contact between two branches,
    a connect or weld between them, or a tendon across them does not. gpos[g, q] is the
    number of steps from the group's last column up to its column q, so that (a_p, a_q) is
    qM[dof_Madr[a_p] + gpos[g, q] − gpos[g, p]].
    """
    for g in range(ng):
        if not _on_root_path(m.dof_parentid, g, gnnz, gind, gpos):
            return False
    return True


@njit(cache=True)
def _cross_groups(m, ng, gstart, gnnz, gind, gpos, gcross, mark):
    """Mark the groups not on one root path; returns their row count, kcross.

    gcross[g] ← 0 for a group on one root path (gpos written as `_tree_pattern` does), else
    the size of its support, the union of its columns' root paths, listed in gpos[g, :]
    from the last dof to the first (L⁻ᵀ keeps a vector on it; leaves first). mark: nv
    scratch, zero on entry and exit.
    """
    parent = m.dof_parentid
    n = 0
    for g in range(ng):
        if _on_root_path(parent, g, gnnz, gind, gpos):
            gcross[g] = 0
            continue
        n += gstart[g + 1] - gstart[g]
        for q in range(gnnz[g]):
            i = gind[g, q]
            while i >= 0 and mark[i] == 0:
                mark[i] = 1
                i = parent[i]
        ns = 0
        for i in range(m.nv - 1, -1, -1):
            if mark[i] != 0:
                mark[i] = 0
                gpos[g, ns] = i
                ns += 1
        gcross[g] = ns
    return n


@njit(cache=True)
def _tree_factor(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, gpos, gcross, G, vals, W,
                 Hq, Hf, hdiag, assemble):
    """Hf, hdiag ← the LᵀDL factor (qM's layout) of H = M + Jᵀ D_quad J + Σ_cones J_cᵀ H_c J_c.

    Over the groups on one root path (gcross[g] == 0: `_cross_groups`); the others are the
    low-rank part of `_cross_factor`. With assemble, Hq ← M + Jᵀ D_quad J first (otherwise
    Hq holds it from an earlier call with the same quadratic rows). Returns the number of
    cones in their middle zone, or −1 when a pivot is not positive.
    """
    nM = Hq.shape[0]
    madr = m.dof_Madr
    J = d.efc_J
    if assemble:
        for t in range(nM):
            Hq[t] = d.qM[t]
        g = np.int64(0)
        while g < ng:
            if gcross[g] != 0:
                g += 1
                continue
            # a run shares one pattern: its groups are all on one root path
            e = _run_block(d, state, g, ng, gstart, gnnz, gind, G, vals)
            if e < 0:
                for p in range(gnnz[g]):
                    base = madr[gind[g, p]] - gpos[g, p]
                    for q in range(p + 1):
                        Hq[base + gpos[g, q]] += G[p, q]
            g = abs(e)
    for t in range(nM):
        Hf[t] = Hq[t]
    ncone = 0
    for g in range(ng):
        i0 = gstart[g]
        dim = cdim[i0]
        if dim <= 0 or state[i0] != STATE_CONE or gcross[g] != 0:
            continue
        ncone += 1
        nz = gnnz[g]
        # W = H_c J_c on the pattern, then Hf += J_cᵀ W
        for r in range(dim):
            for q in range(nz):
                s = 0.0
                for c in range(dim):
                    s += hcone[i0, r * dim + c] * J[i0 + c, gind[g, q]]
                W[r, q] = s
        for p in range(nz):
            base = madr[gind[g, p]] - gpos[g, p]
            for q in range(p + 1):
                s = 0.0
                for r in range(dim):
                    s += J[i0 + r, gind[g, p]] * W[r, q]
                Hf[base + gpos[g, q]] += s
    if factor_ld(m, Hf, hdiag) >= 0:
        return -1
    return ncone


@njit(cache=True)
def _tree_update(m, d, state, oldstate, ng, gstart, gnnz, gind, gpos, gcross, Hq, vals):
    """Hq ± D_r v_r v_rᵀ for each row r that entered (+) or left (−) its quadratic zone.

    Hq holds M + Jᵀ D_quad J in qM's layout (`_tree_factor`'s assembly) for the zones of
    oldstate; afterwards it holds it for those of state, at the cost of the changed rows
    alone (MuJoCo's HessianIncremental updates its dense factor row by row instead). Rows
    of groups across branches (gcross) are left out. Returns the number of rows applied.
    """
    n = 0
    madr = m.dof_Madr
    J = d.efc_J
    D = d.efc_D
    for g in range(ng):
        if gcross[g] != 0:
            continue
        nz = gnnz[g]
        for r in range(gstart[g], gstart[g + 1]):
            now = state[r] == STATE_QUADRATIC
            if now == (oldstate[r] == STATE_QUADRATIC):
                continue
            Dr = D[r] if now else -D[r]
            n += 1
            for q in range(nz):
                vals[q] = J[r, gind[g, q]]
            for p in range(nz):
                base = madr[gind[g, p]] - gpos[g, p]
                t = Dr * vals[p]
                for q in range(p + 1):
                    Hq[base + gpos[g, q]] += t * vals[q]
    return n


@njit(cache=True)
def _ld_rank1(m, Hf, hdiag, w, sigma, lo):
    """Hf, hdiag ← the LᵀDL factor (qM's layout) of H + σ w wᵀ, from that of H.

    w is zero outside the path from dof lo to the root and is overwritten there. Dofs are
    taken in elimination order (leaves first), as in Gill, Golub, Murray and Saunders's
    method C1 for LDLᵀ; off the path w stays zero, so only the path's rows change and the
    update costs O(depth²). Returns False when a pivot falls to MINVAL or below (a downdate
    that lost definiteness: the factor is then unusable).
    """
    madr = m.dof_Madr
    parent = m.dof_parentid
    alpha = sigma
    k = lo
    while k >= 0:
        p = w[k]
        if p != 0.0:
            start = madr[k]
            dk = Hf[start]
            dnew = dk + alpha * p * p
            if not dnew > MINVAL:
                return False
            beta = p * alpha / dnew
            alpha = dk * alpha / dnew
            Hf[start] = dnew
            hdiag[k] = 1.0 / dnew
            adr = start + 1
            i = parent[k]
            while i >= 0:
                w[i] -= p * Hf[adr]
                Hf[adr] += beta * w[i]
                adr += 1
                i = parent[i]
        k = parent[k]
    return True


@njit(cache=True)
def _tree_rank1(m, d, state, oldstate, ng, gstart, gnnz, gind, gcross, Hf, hdiag, w):
    """Update the factor Hf, hdiag by ± D_r v_r v_rᵀ for the rows that changed zone.

    The rows that entered their quadratic zone are added first, then those that left it
    taken away (downdates last, so that the factor stays definite as long as it can).
    `_tree_update`'s change, applied to the factor instead of refactoring. Returns False
    when a downdate failed (refactor from Hq then). w: nv scratch, zero on entry and exit.
    """
    J = d.efc_J
    D = d.efc_D
    parent = m.dof_parentid
    for sign in (1.0, -1.0):
        for g in range(ng):
            nz = gnnz[g]
            if nz == 0 or gcross[g] != 0:
                continue
            lo = gind[g, nz - 1]
            for r in range(gstart[g], gstart[g + 1]):
                now = state[r] == STATE_QUADRATIC
                if now == (oldstate[r] == STATE_QUADRATIC) or now != (sign > 0.0):
                    continue
                for q in range(nz):
                    w[gind[g, q]] = J[r, gind[g, q]]
                ok = _ld_rank1(m, Hf, hdiag, w, sign * D[r], lo)
                k = lo
                while k >= 0:
                    w[k] = 0.0
                    k = parent[k]
                if not ok:
                    return False
    return True


@njit(cache=True)
def _quad_update(m, d, state, oldstate, L, x, rowadr, colind):
    """Update the factor L for rows that entered or left the quadratic zone.

    One rank-one update (entered) or downdate (left) of L's matrix by √D_i J_i per changed
    row, as MuJoCo's HessianIncremental. L is _quad_factor's dense Cholesky factor (rowadr
    empty) or `_sparse_factor`'s on the pattern rowadr, colind (x then zero on entry and
    exit). Returns the number of updates, or −1 when a downdate lost definiteness (L is
    then unusable and must be refactored).
    """
    nv = m.nv
    J = d.efc_J
    ind = d.efc_J_colind
    sparse = rowadr.shape[0] > 0
    nupdate = 0
    for i in range(d.nefc[0]):
        now = state[i] == STATE_QUADRATIC
        if now == (oldstate[i] == STATE_QUADRATIC):
            continue
        if not sparse:
            for k in range(nv):
                x[k] = 0.0
        sq = math.sqrt(d.efc_D[i])
        for j in range(d.efc_J_rownnz[i]):
            k = ind[i, j]
            x[k] = sq * J[i, k]
        nupdate += 1
        if sparse:
            ok = _sparse_rank1(nv, L, rowadr, colind, x, 1.0 if now else -1.0)
        else:
            ok = chol_update(L, nv, x, now, MINVAL)
        if not ok:
            return -1
    return nupdate


@njit(cache=True)
def _cone_factor(hcone, i0, dim, U):
    """U (lower triangle) ← the Cholesky factor of the cone at row i0's Hessian H_c."""
    for r in range(dim):
        for c in range(r + 1):
            U[r, c] = hcone[i0, r * dim + c]
    chol_factor(U, dim, MINVAL)


@njit(cache=True)
def _cone_row(J, U, i0, dim, r, g, gnnz, gind, out):
    """out ← J_cᵀ U[:, r] (row r of Uᵀ J_c), zero off group g's pattern."""
    for t in range(out.shape[0]):
        out[t] = 0.0
    for q in range(gnnz[g]):
        k = gind[g, q]
        s = 0.0
        for c in range(r, dim):
            s += U[c, r] * J[i0 + c, k]
        out[k] = s


@njit(cache=True)
def _add_cones(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, L, Lc, U, x, rowadr, colind):
    """Lc ← the factor of L's matrix + Σ_cones J_cᵀ H_c J_c over the middle-zone cones.

    With H_c = U Uᵀ (its Cholesky factor) each cone adds the dim rows of Uᵀ J_c by
    rank-one updates (MuJoCo's HessianCone). L is the dense path's Cholesky factor (rowadr
    empty) or `_sparse_factor`'s on the pattern rowadr, colind (x then zero on entry and
    exit). Returns the number of cones; Lc is not written when there is none.
    """
    sparse = rowadr.shape[0] > 0
    nv = m.nv
    J = d.efc_J
    ncone = 0
    for g in range(ng):
        i0 = gstart[g]
        dim = cdim[i0]
        if dim <= 0 or state[i0] != STATE_CONE:
            continue
        if ncone == 0:
            for a in range(nv):
                if sparse:
                    Lc[a, a] = L[a, a]
                    for t in range(rowadr[a], rowadr[a + 1]):
                        Lc[a, colind[t]] = L[a, colind[t]]
                else:
                    for b in range(a + 1):
                        Lc[a, b] = L[a, b]
        ncone += 1
        _cone_factor(hcone, i0, dim, U)
        for r in range(dim):
            _cone_row(J, U, i0, dim, r, g, gnnz, gind, x)
            if sparse:
                _sparse_rank1(nv, Lc, rowadr, colind, x, 1.0)
            else:
                chol_update(Lc, nv, x, np.bool_(True), MINVAL)
    return ncone


@njit(cache=True)
def _any_cone(state, cdim, ng, gstart, gcross, cross):
    """Whether a contact across branches (cross) or on a root path is a middle-zone cone."""
    for g in range(ng):
        i0 = gstart[g]
        if (gcross[g] != 0) == cross and cdim[i0] > 0 and state[i0] == STATE_CONE:
            return True
    return False


@njit(cache=True)
def _cross_moved(state, oldstate, ng, gstart, gcross):
    """Rows across branches that entered or left their quadratic zone, and cone movement.

    Returns (their number, whether such a group is a cone in its middle zone now or was
    before: its H_c moved or it came or went), what `_cross_factor` must be redone for.
    """
    n = 0
    cone = False
    for g in range(ng):
        if gcross[g] == 0:
            continue
        i0 = gstart[g]
        if state[i0] == STATE_CONE or oldstate[i0] == STATE_CONE:
            cone = True
        for r in range(i0, gstart[g + 1]):
            if (state[r] == STATE_QUADRATIC) != (oldstate[r] == STATE_QUADRATIC):
                n += 1
    return n, cone


@njit(cache=True)
def _cross_factor(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, gpos, gcross, Hf, hdiag, W,
                  C, U, wgrp):
    """W, C ← the low-rank part V Vᵀ of H over the groups across branches, against T.

    H = T + V Vᵀ with T = Lᵀ D L (Hf, hdiag: `_tree_factor` over the groups on a root
    path) and V's columns v_j: √D_r J_rᵀ for each quadratic row r of a group across
    branches, and for each such cone in its middle zone the dim columns J_cᵀ U_c, where
    H_c = U_c U_cᵀ (its Cholesky factor, as `_add_cones`). W's row j ← L⁻ᵀ v_j and C (lower,
    k × k) ← the Cholesky factor of the capacitance I + Vᵀ T⁻¹ V = I + W D⁻¹ Wᵀ, whose
    pivots are ≥ 1. W's row j is zero off its group's support (`_cross_groups`), on which
    alone it is solved and multiplied; wgrp[j] ← that group. Returns k, the number of
    columns.
    """
    nv = m.nv
    J = d.efc_J
    D = d.efc_D
    madr = m.dof_Madr
    col = m.M_col
    nM = Hf.shape[0]
    k = 0
    for g in range(ng):
        if gcross[g] == 0:
            continue
        i0 = gstart[g]
        nz = gnnz[g]
        dim = cdim[i0]
        if dim > 0 and state[i0] == STATE_CONE:
            _cone_factor(hcone, i0, dim, U)
            for r in range(dim):
                _cone_row(J, U, i0, dim, r, g, gnnz, gind, W[k])
                wgrp[k] = g
                k += 1
            continue
        for r in range(i0, gstart[g + 1]):
            if state[r] != STATE_QUADRATIC:
                continue
            # v = √D_r J_rᵀ
            sq = math.sqrt(D[r])
            for t in range(nv):
                W[k, t] = 0.0
            for q in range(nz):
                a = gind[g, q]
                W[k, a] = sq * J[r, a]
            wgrp[k] = g
            k += 1
    # W[j] ← L⁻ᵀ W[j] on its support, leaves first (solve_lt's sweep)
    for j in range(k):
        g = wgrp[j]
        w = W[j]
        for q in range(gcross[g]):
            a = gpos[g, q]
            wa = w[a]
            if wa != 0.0:
                end = madr[a + 1] if a + 1 < nv else nM
                for adr in range(madr[a] + 1, end):
                    w[col[adr]] -= Hf[adr] * wa
    # C = I + W D⁻¹ Wᵀ, each product on the support of row a
    for a in range(k):
        g = wgrp[a]
        for b in range(a + 1):
            s = 0.0
            for q in range(gcross[g]):
                t = gpos[g, q]
                s += W[a, t] * hdiag[t] * W[b, t]
            C[a, b] = s
        C[a, a] += 1.0
    chol_factor(C, k, MINVAL)
    return k


@njit(cache=True)
def _woodbury_solve(m, Hf, hdiag, W, C, k, gpos, gcross, wgrp, x, t):
    """x ← (T + V Vᵀ)⁻¹ x by the Woodbury identity, with `_cross_factor`'s W and C.

    T⁻¹ − T⁻¹ V (I + Vᵀ T⁻¹ V)⁻¹ Vᵀ T⁻¹ with T⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ and W = (L⁻ᵀ V)ᵀ:
        y = L⁻ᵀ x;  t = C⁻¹ W D⁻¹ y;  x = L⁻¹ D⁻¹ (y − Wᵀ t),
    W's rows taken on their supports (gpos, gcross, wgrp: `_cross_factor`). t: k scratch.
    """
    nv = m.nv
    madr = m.dof_Madr
    col = m.M_col
    nM = Hf.shape[0]
    solve_lt(m, Hf, x)
    for a in range(k):
        g = wgrp[a]
        s = 0.0
        for q in range(gcross[g]):
            j = gpos[g, q]
            s += W[a, j] * hdiag[j] * x[j]
        t[a] = s
    chol_solve(C, k, t)
    for a in range(k):
        g = wgrp[a]
        ta = t[a]
        for q in range(gcross[g]):
            j = gpos[g, q]
            x[j] -= W[a, j] * ta
    # x ← L⁻¹ D⁻¹ x, root first
    for j in range(nv):
        end = madr[j + 1] if j + 1 < nv else nM
        s = x[j] * hdiag[j]
        for adr in range(madr[j] + 1, end):
            s -= Hf[adr] * x[col[adr]]
        x[j] = s


@njit(cache=True)
def _low_rank_pays(m, nM, ng, gstart, gpos, gcross, kcross):
    """Whether the kcross rows across branches are cheaper as `_cross_factor`'s correction.

    Its work per iteration: per column, W's row zeroed (nv) and solved on its group's
    support (the support's rows of L); C's k²/2 products on a support (at most smax long);
    the solve's 2 k smax and the solve with T (nM). Against the dense path's least per
    iteration, one rank-one update and a solve (2 nv²), while its first factor (nv³/6)
    costs more than the tree factor with the correction (measurements: module docstring).
    W and C must also fit in H's nv² floats.
    """
    nv = m.nv
    madr = m.dof_Madr
    if nv < LOW_RANK_MIN_NV or kcross * nv + kcross * kcross > nv * nv:
        return False
    work = nM
    smax = 0
    for g in range(ng):
        ns = gcross[g]
        if ns == 0:
            continue
        smax = max(smax, ns)
        lsup = 0
        for q in range(ns):
            a = gpos[g, q]
            lsup += (madr[a + 1] if a + 1 < nv else nM) - madr[a]
        work += (gstart[g + 1] - gstart[g]) * (nv + lsup)
    work += kcross * kcross * smax // 2 + 2 * kcross * smax
    return work <= 2 * nv * nv


@njit(cache=True)
def _sparse_pattern(m, ng, gnnz, gind, mask, rowadr, colind):
    """L's pattern for the reverse LᵀDL factor of H over every row group; returns Σ nnz².

    H's lower triangle is non-zero where M's is (each dof's ancestors) and on every
    group's pattern × pattern; eliminating the dofs from the last to the first (as
    factor_ld does for M, with no fill-in there) makes row k's columns fill its elimination
    parent p (the largest of them): row p gains row k's columns below p. Row k of L lists
    colind[rowadr[k] : rowadr[k + 1]], increasing. mask: nv × nv scratch (lower triangle
    read and written). The sum of the squared row lengths measures the factor's work.
    """
    nv = m.nv
    parent = m.dof_parentid
    for a in range(nv):
        for b in range(a):
            mask[a, b] = 0
        b = parent[a]
        while b >= 0:
            mask[a, b] = 1
            b = parent[b]
    g = np.int64(0)
    while g < ng:
        for p in range(gnnz[g]):
            a = gind[g, p]
            for q in range(p):
                mask[a, gind[g, q]] = 1
        e = g + 1
        while e < ng and _same_pattern(gnnz, gind, g, e):
            e += 1
        g = e
    for k in range(nv - 1, 0, -1):
        p = k - 1
        while p >= 0 and mask[k, p] == 0:
            p -= 1
        for b in range(p):
            if mask[k, b] != 0:
                mask[p, b] = 1
    n = 0
    work = 0
    for a in range(nv):
        rowadr[a] = n
        for b in range(a):
            if mask[a, b] != 0:
                colind[n] = b
                n += 1
        work += (n - rowadr[a]) * (n - rowadr[a])
    rowadr[nv] = n
    return work


@njit(cache=True)
def _sparse_factor(m, d, state, ng, gstart, gnnz, gind, rowadr, colind, H, G, vals):
    """H ← the LᵀDL factor of M + Jᵀ D_quad J on `_sparse_pattern`'s pattern.

    H is assembled on the pattern's entries of its lower triangle (the rest is not read),
    then factored in place from the last dof to the first: row k's entries become L's
    (unit diagonal, not stored) and H[k, k] the pivot D_k. A pivot below MINVAL is raised
    to it and its row of L zeroed, as chol_factor does, so the factor always exists.
    """
    nv = m.nv
    for a in range(nv):
        H[a, a] = 0.0
        for t in range(rowadr[a], rowadr[a + 1]):
            H[a, colind[t]] = 0.0
    _assemble(m, d, state, ng, gstart, gnnz, gind, H, G, vals)
    for k in range(nv - 1, -1, -1):
        s = rowadr[k]
        e = rowadr[k + 1]
        dk = H[k, k]
        if not dk >= MINVAL:
            H[k, k] = MINVAL
            for t in range(s, e):
                H[k, colind[t]] = 0.0
            continue
        inv = 1.0 / dk
        for t in range(s, e):
            i = colind[t]
            lki = H[k, i] * inv
            for u in range(s, t + 1):
                j = colind[u]
                H[i, j] -= lki * H[k, j]
        for t in range(s, e):
            H[k, colind[t]] *= inv


@njit(cache=True)
def _sparse_rank1(nv, H, rowadr, colind, w, sigma):
    """H's factor (`_sparse_factor`'s) ← that of H + sigma w wᵀ, sigma ±1; w is zeroed.

    w's non-zeros must lie on one path of the elimination tree (a group's pattern does:
    `_sparse_pattern` made it a clique), which is walked from the last of them to the root
    (row k's parent is its largest column), each row updated as in Gill, Golub, Murray and
    Saunders' method C1 for L D Lᵀ taken in the reverse order. Returns False when a
    downdate would leave a pivot below MINVAL (the factor is then unusable).
    """
    k = nv - 1
    while k >= 0 and w[k] == 0.0:
        k -= 1
    a = sigma
    while k >= 0:
        s = rowadr[k]
        e = rowadr[k + 1]
        p = w[k]
        w[k] = 0.0
        if p != 0.0:
            dk = H[k, k]
            dnew = dk + a * p * p
            if not dnew >= MINVAL:
                for t in range(nv):
                    w[t] = 0.0
                return False
            beta = p * a / dnew
            a = a * dk / dnew
            H[k, k] = dnew
            for t in range(s, e):
                c = colind[t]
                w[c] -= p * H[k, c]
                H[k, c] += beta * w[c]
        k = colind[e - 1] if e > s else -1
    return True


@njit(cache=True)
def _not_tree_factor(m, d, state, ng, gstart, gnnz, gind, rowadr, colind, H, G, vals):
    """H ← the factor of the path that is not the tree's: sparse or dense.

    `_sparse_factor`'s on the pattern rowadr, colind; `_quad_factor`'s with rowadr empty.
    """
    if rowadr.shape[0] > 0:
        _sparse_factor(m, d, state, ng, gstart, gnnz, gind, rowadr, colind, H, G, vals)
    else:
        _quad_factor(m, d, state, ng, gstart, gnnz, gind, H, G, vals)


@njit(cache=True)
def _sparse_solve(nv, H, rowadr, colind, x):
    """x ← H⁻¹ x with H's factor from `_sparse_factor` (Lᵀ D L x = b: Lᵀ, D, then L)."""
    for k in range(nv - 1, -1, -1):
        xk = x[k]
        for t in range(rowadr[k], rowadr[k + 1]):
            x[colind[t]] -= H[k, colind[t]] * xk
    for k in range(nv):
        x[k] /= H[k, k]
    for k in range(nv):
        s = x[k]
        for t in range(rowadr[k], rowadr[k + 1]):
            s -= H[k, colind[t]] * x[colind[t]]
        x[k] = s


@njit(cache=True)
def sol_newton(m, d, maxiter, cdim, cmu, cfr, primed, cost_primed, nisland, iscale, rows,
               adr, cnt, dof_island):
    """Newton iterations from d.qacc; writes qacc, efc_force, efc_state, qfrc_constraint.

    Island by island (`solver.island`: rows[adr[k] : adr[k] + cnt[k]] are island k's rows,
    dof_island maps dofs to islands, −1 for none, whose qacc is left as it is): each island
    has its own line searches, iteration count and termination tests, scaled by iscale[k]
    (1 / the trace of M over its dofs), as MuJoCo 4.0's per-island solves. The islands
    share one Hessian and its factor, which is block-diagonal over them. d.solver_niter[0]
    and the statistics are island 0's (its cost statistic is the whole problem's).

    primed: solve_stage has evaluated d.qacc (the warm start) already: J qacc − aref is in
    d.scratch_efc, M qacc in d.scratch_v[1], its forces and zones in efc_force and
    efc_state, and its cost is cost_primed; they are taken instead of computed again
    (elliptic cones still need their Hessians, so those contacts are evaluated again).
    """
    nv = m.nv
    nefc = np.int64(d.nefc[0])
    tol = m.opt_tolerance[0]
    elliptic = False
    for i in range(nefc):
        if d.efc_type[i] == CNSTR_CONTACT_ELLIPTIC:
            elliptic = True
            break
    qacc = d.qacc
    force = d.efc_force
    state = d.efc_state
    # scratch: one float and one int block cut into views, Data's (d.scratch_newton_*,
    # no allocation per solve) or, past their rows (`types.data_sizes`), blocks of their
    # own; cone Hessians only for elliptic contacts
    nh = nefc if elliptic else 1
    nM = d.qM.shape[0]
    nf = 8 * nv + 11 * nefc + 36 * nh + 3 * nv * nv + 2 * nM + 67 + 2 * nisland
    ni = nefc * (2 * nv + 5) + 1 + 2 * nv + 8 * nisland
    nsp = nv * nv + nv + 1 + nv * (nv - 1) // 2 if nv >= SPARSE_MIN_NV else 0
    ni += nsp
    if nf <= d.scratch_newton_f.shape[0] and ni <= d.scratch_newton_i.shape[0]:
        fb = d.scratch_newton_f[:nf]
        ib = d.scratch_newton_i[:ni]
    else:
        fb = np.empty(nf)
        ib = np.empty(ni, dtype=np.int32)
    Ma = fb[0:nv]
    Mv = fb[nv:2 * nv]
    grad = fb[2 * nv:3 * nv]
    Mgrad = fb[3 * nv:4 * nv]
    search = fb[4 * nv:5 * nv]
    x = fb[5 * nv:6 * nv]
    x[:] = 0.0  # _tree_rank1's scratch, zero between uses
    vals = fb[6 * nv:7 * nv]
    o = 7 * nv
    jar = fb[o:o + nefc]
    Jv = fb[o + nefc:o + 2 * nefc]
    o += 2 * nefc
    quad = shaped(fb[o:o + 9 * nefc], (nefc, 9))
    o += 9 * nefc
    hcone = shaped(fb[o:o + 36 * nh], (nh, 36))
    o += 36 * nh
    oH = o  # H's floats also hold `_cross_factor`'s W and C (H is dense-path only)
    H = shaped(fb[o:o + nv * nv], (nv, nv))
    Hc = shaped(fb[o + nv * nv:o + 2 * nv * nv], (nv, nv))
    G = shaped(fb[o + 2 * nv * nv:o + 3 * nv * nv], (nv, nv))
    o += 3 * nv * nv
    U = shaped(fb[o:o + 36], (6, 6))
    res = fb[o + 36:o + 39]
    o += 39
    Hq = fb[o:o + nM]
    Hf = fb[o + nM:o + 2 * nM]
    hdiag = fb[o + 2 * nM:o + 2 * nM + nv]
    pts = shaped(fb[o + 2 * nM + nv:o + 2 * nM + nv + 28], (7, 4))
    o += 2 * nM + nv + 28
    imp = fb[o:o + nisland]  # per island: the last line search's scaled improvement
    slope = fb[o + nisland:o + 2 * nisland]  # and its scaled slope
    oldstate = ib[0:nefc]
    gnnz = ib[nefc:2 * nefc]
    gstart = ib[2 * nefc:3 * nefc + 1]
    o = 3 * nefc + 1
    gind = shaped(ib[o:o + nefc * nv], (nefc, nv))
    gpos = shaped(ib[o + nefc * nv:o + 2 * nefc * nv], (nefc, nv))
    o += 2 * nefc * nv
    dofs = ib[o:o + nv]
    o += nv
    dadr = ib[o:o + nisland]
    dcnt = ib[o + nisland:o + 2 * nisland]
    done = ib[o + 2 * nisland:o + 3 * nisland]
    moved = ib[o + 3 * nisland:o + 4 * nisland]
    iters = ib[o + 4 * nisland:o + 5 * nisland]
    neval = ib[o + 5 * nisland:o + 6 * nisland]
    gok = ib[o + 6 * nisland:o + 7 * nisland]
    gcross = ib[o + 7 * nisland:o + 7 * nisland + nefc]
    o += 7 * nisland + nefc
    wgrp = ib[o:o + nefc]
    mark = ib[o + nefc:o + nefc + nv]
    mark[:] = 0  # _cross_groups' scratch, zero between uses
    o += nefc + nv
    ns = nv if nsp > 0 else 0  # the sparse path's scratch, from SPARSE_MIN_NV dofs
    smask = shaped(ib[o:o + ns * nv], (ns, nv))
    o += ns * nv
    srow = ib[o:o + ns + 1] if ns > 0 else ib[o:o]
    scol = ib[o + ns + 1:o + ns + 1 + ns * (ns - 1) // 2]
    island_dofs(nv, dof_island, nisland, dofs, dadr, dcnt)
    whole = nisland == 1 and dcnt[0] == nv  # one island of every dof: no masking
    ng = _row_pattern(d, gstart, gnnz, gind)
    # H with M's tree sparsity over the rows on one root path, the kcross rows across
    # branches as a low-rank correction (`_cross_factor`, their W and C in H's memory) when
    # that pays; the dense factor with rank-one updates otherwise
    kcross = _cross_groups(m, ng, gstart, gnnz, gind, gpos, gcross, mark)
    tree = kcross == 0 or _low_rank_pays(m, nM, ng, gstart, gpos, gcross, kcross)
    sparse = False
    if not tree and nsp > 0:
        # the sparse factor and its rank-one changes when its factor costs less than the dense
        work = _sparse_pattern(m, ng, gnnz, gind, smask, srow, scol)
        sparse = 3 * work <= SPARSE_SHARE * nv * nv * nv
    # the pattern the not-tree helpers take: empty for the dense factor
    prow = srow if sparse else srow[:0]
    pcol = scol if sparse else scol[:0]
    kw = kcross if tree else 0
    Wx = shaped(fb[oH:oH + kw * nv], (kw, nv))
    Cx = shaped(fb[oH + kw * nv:oH + kw * nv + kw * kw], (kw, kw))
    kact = 0
    Hs = shaped(Mgrad, (1, nv))

    # jar = J a − aref, cost, forces, gradient ∇c = M a − qfrc_smooth − Jᵀ f
    if primed:
        for k in range(nv):
            Ma[k] = d.scratch_v[1, k]
        for i in range(nefc):
            jar[i] = d.scratch_efc[i]
    else:
        mul_m(m, d.qM, qacc, Ma)
        mul_j(d, qacc, jar)
        for i in range(nefc):
            jar[i] -= d.efc_aref[i]
    if primed and not elliptic:
        cost = cost_primed
    else:
        cost = constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, elliptic)
        cost += gauss(m, d, qacc, Ma)
    mul_jt(d, force, d.qfrc_constraint)
    for k in range(nv):
        grad[k] = Ma[k] - d.qfrc_smooth[k] - d.qfrc_constraint[k]
    for k in range(nv):
        Mgrad[k] = grad[k]
    solve_m(m, d, Mgrad)
    # an island whose gradient and M⁻¹ gap are below the tolerance is done at once
    alldone = True
    for k in range(nisland):
        sc = iscale[k]
        gnorm = math.sqrt(dot_on(grad, grad, dofs, dadr[k], dcnt[k]))
        gok[k] = 1 if sc * gnorm < tol else 0
        gap = max(0.0, 0.5 * sc * dot_on(grad, Mgrad, dofs, dadr[k], dcnt[k]))
        done[k] = 1 if gok[k] != 0 and gap < tol else 0
        iters[k] = 0
        moved[k] = 0
        alldone = alldone and done[k] != 0
    ncone = 0
    if not alldone:
        if tree:
            ncone = _tree_factor(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, gpos,
                                 gcross, G, vals, Hc, Hq, Hf, hdiag, True)
            tree = ncone >= 0
            if tree and kcross > 0:
                kact = _cross_factor(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, gpos,
                                     gcross, Hf, hdiag, Wx, Cx, U, wgrp)
        if not tree:
            _not_tree_factor(m, d, state, ng, gstart, gnnz, gind, prow, pcol, H, G, vals)
            ncone = _add_cones(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, H, Hc, U, x,
                               prow, pcol)
        for k in range(nv):
            Mgrad[k] = grad[k]
        if tree and kact > 0:
            _woodbury_solve(m, Hf, hdiag, Wx, Cx, kact, gpos, gcross, wgrp, Mgrad, vals)
        elif tree:
            solve_ld(m, Hf, hdiag, Hs)
        elif sparse:
            _sparse_solve(nv, Hc if ncone > 0 else H, srow, scol, Mgrad)
        else:
            chol_solve(Hc if ncone > 0 else H, nv, Mgrad)
        for k in range(nisland):
            if done[k] == 0:
                dec = max(0.0, 0.5 * iscale[k] * dot_on(grad, Mgrad, dofs, dadr[k], dcnt[k]))
                done[k] = 1 if gok[k] != 0 and dec < tol else 0
    for k in range(nv):
        search[k] = -Mgrad[k]
    while True:
        # each open island's exact line search along the Newton direction on its dofs
        if not island_searches(m, d, maxiter, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad,
                               res, pts, nisland, iscale, dofs, dadr, dcnt, rows, adr, cnt,
                               whole, done, iters, moved, neval, imp, slope):
            break
        for i in range(nefc):
            oldstate[i] = state[i]
        cost = constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, elliptic)
        cost += gauss(m, d, qacc, Ma)
        mul_jt(d, force, d.qfrc_constraint)
        for k in range(nv):
            grad[k] = Ma[k] - d.qfrc_smooth[k] - d.qfrc_constraint[k]
        nchange = 0
        for i in range(nefc):
            if state[i] != oldstate[i]:
                nchange += 1
        nupdate = 0
        if tree:
            # rows in or out of their quadratic zone change Hq (`_tree_update`) and, without
            # cones, its factor by rank-one changes (`_tree_rank1`); with cones in their
            # middle zone (whose H_c moved) or after a failed downdate, H is factored anew
            if nchange > 0:
                nupdate = _tree_update(m, d, state, oldstate, ng, gstart, gnnz, gind, gpos,
                                       gcross, Hq, vals)
            cones = ncone > 0 or _any_cone(state, cdim, ng, gstart, gcross, False)
            moved_t = nupdate > 0 or cones
            if moved_t and (
                    cones or not _tree_rank1(m, d, state, oldstate, ng, gstart, gnnz, gind,
                                             gcross, Hf, hdiag, x)):
                ncone = _tree_factor(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, gpos,
                                     gcross, G, vals, Hc, Hq, Hf, hdiag, False)
                if ncone < 0:
                    tree = False
                    _quad_factor(m, d, state, ng, gstart, gnnz, gind, H, G, vals)
            if tree and kcross > 0:
                # the low-rank part against the new T, when T or the rows across moved
                nx, xcone = _cross_moved(state, oldstate, ng, gstart, gcross)
                nupdate += nx
                if moved_t or nx > 0 or xcone:
                    kact = _cross_factor(m, d, state, cdim, hcone, ng, gstart, gnnz, gind,
                                         gpos, gcross, Hf, hdiag, Wx, Cx, U, wgrp)
        elif nchange > 0:
            nupdate = _quad_update(m, d, state, oldstate, H, x, prow, pcol)
            if nupdate < 0:
                _not_tree_factor(m, d, state, ng, gstart, gnnz, gind, prow, pcol, H, G, vals)
                nupdate = nefc
        if not tree:
            ncone = _add_cones(m, d, state, cdim, hcone, ng, gstart, gnnz, gind, H, Hc, U, x,
                               prow, pcol)
        for k in range(nv):
            Mgrad[k] = grad[k]
        if tree and kact > 0:
            _woodbury_solve(m, Hf, hdiag, Wx, Cx, kact, gpos, gcross, wgrp, Mgrad, vals)
        elif tree:
            solve_ld(m, Hf, hdiag, Hs)
        elif sparse:
            _sparse_solve(nv, Hc if ncone > 0 else H, srow, scol, Mgrad)
        else:
            chol_solve(Hc if ncone > 0 else H, nv, Mgrad)
        for k in range(nisland):
            if moved[k] == 0:
                continue
            moved[k] = 0
            sc = iscale[k]
            gradient = sc * math.sqrt(dot_on(grad, grad, dofs, dadr[k], dcnt[k]))
            if k == 0:
                nch, nquad, nact = island_counts(state, oldstate, rows, adr[0], cnt[0])
                save_stats(d, iters[0], imp[0], gradient, slope[0], cost, nact, nch, neval[0],
                           nupdate if nisland == 1 else nquad)
            decrement = max(0.0, 0.5 * sc * dot_on(grad, Mgrad, dofs, dadr[k], dcnt[k]))
            iters[k] += 1
            if (imp[k] > 0.0 and imp[k] < tol) or gradient < tol or decrement < tol:
                done[k] = 1
        for k in range(nv):
            search[k] = -Mgrad[k]
    d.solver_niter[0] = iters[0]
