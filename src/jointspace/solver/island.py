"""Constraint islands (MuJoCo's mj_island): the rows that share no moving tree split apart.

A kinematic tree starts at each dof without a parent dof, in dof order. A row couples the
trees it acts on: a contact the trees of its two geoms' bodies, a joint's friction or limit
row its joint's tree, a connect or weld constraint its two bodies' trees, any other row
the trees of the nonzeros of its Jacobian; a body welded to the world (or a mocap body)
is in no tree. Trees joined by rows form an island; islands are numbered by their
smallest tree, and an island's rows keep their order in efc_*, so each island has its own
equality, friction and inequality blocks, in that order.

Rows of two islands meet in no dof and M is block-diagonal over trees, so the dual
matrix J M⁻¹ Jᵀ and the primal Hessian are block-diagonal over islands: every solver
solves each island on its own, with its own line searches and stopping test (Newton, CG)
or sweeps (PGS, noslip), as MuJoCo does unless the "island" flag is disabled.
"""

from numba import njit, uint64

from jointspace.constraint import STATE_QUADRATIC, STATE_SATISFIED
from jointspace.constraint.softness import equality_bodies
from jointspace.solver.cost import linesearch, primal_scale
from jointspace.types import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    CNSTR_EQUALITY,
    CNSTR_FRICTION_DOF,
    CNSTR_FRICTION_TENDON,
    CNSTR_LIMIT_JOINT,
    EQ_CONNECT,
    EQ_WELD,
    MINVAL,
)


@njit(cache=True)
def _root(parent, t):
    r = t
    while parent[r] != r:
        r = parent[r]
    while parent[t] != t:
        nxt = parent[t]
        parent[t] = r
        t = nxt
    return r


@njit(cache=True)
def _merge(parent, t1, t2):
    """Join trees t1 and t2 (−1: the static world, which joins nothing)."""
    if t1 < 0:
        t1 = t2
    if t2 < 0:
        t2 = t1
    if parent[t1] < 0:
        parent[t1] = t1
    if parent[t2] < 0:
        parent[t2] = t2
    r1 = _root(parent, t1)
    r2 = _root(parent, t2)
    if r1 < r2:
        parent[r2] = r1
    elif r2 < r1:
        parent[r1] = r2


@njit(cache=True)
def _body_tree(m, dof_tree, b):
    w = m.body_weldid[b]
    if w <= 0 or m.body_dofadr[w] < 0:
        return -1
    return dof_tree[m.body_dofadr[w]]


@njit(cache=True)
def _dof_trees(m, dof_tree):
    """dof_tree[k] = the tree of dof k (trees numbered in dof order); returns their number."""
    ntree = 0
    for k in range(m.nv):
        if m.dof_parentid[k] < 0:
            ntree += 1
        dof_tree[k] = ntree - 1
    return ntree


@njit(cache=True)
def _join_rows(m, d, dof_tree, parent, efc_tree):
    """Join the trees each row acts on: union–find in parent (−1 on entry for every tree).

    Afterwards parent[t] ≥ 0 exactly for the trees some row acts on, and efc_tree[i] is one
    tree of row i (−1 for a row on no tree).
    """
    nefc = d.nefc[0]
    for i in range(nefc):
        typ = d.efc_type[i]
        oid = d.efc_id[i]
        if i > 0 and typ == d.efc_type[i - 1] and oid == d.efc_id[i - 1]:
            efc_tree[i] = efc_tree[i - 1]  # another row of the same constraint
            continue
        t1 = -2
        t2 = -2
        if typ == CNSTR_FRICTION_DOF:
            t1 = dof_tree[oid]
        elif typ == CNSTR_LIMIT_JOINT:
            t1 = dof_tree[m.jnt_dofadr[oid]]
        elif (typ == CNSTR_CONTACT_FRICTIONLESS or typ == CNSTR_CONTACT_PYRAMIDAL
              or typ == CNSTR_CONTACT_ELLIPTIC):
            t1 = _body_tree(m, dof_tree, m.geom_bodyid[d.contact_geom[oid, 0]])
            t2 = _body_tree(m, dof_tree, m.geom_bodyid[d.contact_geom[oid, 1]])
        elif typ == CNSTR_EQUALITY and (m.eq_type[oid] == EQ_CONNECT
                                        or m.eq_type[oid] == EQ_WELD):
            b1, b2 = equality_bodies(m, oid)
            t1 = _body_tree(m, dof_tree, b1)
            t2 = _body_tree(m, dof_tree, b2)
        if t1 != -2:
            first = t1 if t1 >= 0 else t2
            if first >= 0:
                _merge(parent, t1, t2 if t2 != -2 else -1)
        else:
            # the trees of the row's Jacobian nonzeros
            first = -1
            for t in range(d.efc_J_rownnz[i]):
                k = d.efc_J_colind[i, t]
                if d.efc_J[i, k] == 0.0:
                    continue
                tr = dof_tree[k]
                if first < 0:
                    first = tr
                    _merge(parent, tr, -1)
                elif tr != first:
                    _merge(parent, first, tr)
        efc_tree[i] = first


@njit(cache=True)
def efc_islands(m, d, rows, adr, cnt, nei, nfi, scale, dof_island, buf):
    """Partition d's rows into islands; returns their number (0 without rows).

    rows (nefc) lists the rows island after island, each island's rows in efc order;
    island k's rows are rows[adr[k] : adr[k] + cnt[k]], of which the first nei[k] are
    equality rows and the next nfi[k] friction-loss rows; scale[k] = 1 / the trace of M
    over its dofs, the scale of its solvers' cost improvements (as MuJoCo 4.0's);
    dof_island[k] (nv) = the island of dof k, −1 for a dof in none (no row acts on its
    tree). Writes d.efc_island and d.nisland. buf: int64 scratch of 4 max(nv, 1) + nefc.
    """
    nv = m.nv
    nefc = d.nefc[0]
    n = max(nv, 1)  # bounds the trees and the islands
    dof_tree = buf[0:nv]
    parent = buf[n:2 * n]
    tree_island = buf[2 * n:3 * n]
    fill = buf[3 * n:4 * n]
    efc_tree = buf[4 * n:]
    ntree = _dof_trees(m, dof_tree)
    for t in range(ntree):
        parent[t] = -1
        tree_island[t] = -1
    _join_rows(m, d, dof_tree, parent, efc_tree)
    nisland = 0
    for t in range(ntree):
        if parent[t] < 0:
            continue
        r = _root(parent, t)
        if r == t:
            tree_island[t] = nisland
            nisland += 1
        else:
            tree_island[t] = tree_island[r]
    for k in range(nisland):
        cnt[k] = 0
        nei[k] = 0
        nfi[k] = 0
        scale[k] = 0.0
    for k in range(nv):
        isl = tree_island[dof_tree[k]]
        dof_island[k] = isl
        if isl >= 0:
            scale[isl] += d.qM[m.dof_Madr[k]]
    for k in range(nisland):
        scale[k] = 1.0 / max(scale[k], MINVAL)
    if nisland == 0:  # rows on no moving tree: no island (the solvers then take all rows)
        for i in range(nefc):
            d.efc_island[i] = -1
        d.nisland[0] = 0
        return 0
    for i in range(nefc):
        isl = tree_island[efc_tree[i]] if efc_tree[i] >= 0 else 0
        d.efc_island[i] = isl
        cnt[isl] += 1
        typ = d.efc_type[i]
        if typ == CNSTR_EQUALITY:
            nei[isl] += 1
        elif typ == CNSTR_FRICTION_DOF or typ == CNSTR_FRICTION_TENDON:
            nfi[isl] += 1
    pos = 0
    for k in range(nisland):
        adr[k] = pos
        pos += cnt[k]
    for k in range(nisland):
        fill[k] = 0
    for i in range(nefc):
        isl = d.efc_island[i]
        rows[adr[isl] + fill[isl]] = i
        fill[isl] += 1
    d.nisland[0] = nisland
    return nisland


@njit(cache=True)
def one_island(m, d, rows, adr, cnt, nei, nfi, scale, dof_island):
    """All rows and dofs as one island (the "island" flag disabled); returns 1."""
    nefc = d.nefc[0]
    for k in range(m.nv):
        dof_island[k] = 0
    for i in range(nefc):
        rows[i] = i
        d.efc_island[i] = 0
    adr[0] = 0
    cnt[0] = nefc
    nei[0] = d.ne[0]
    nfi[0] = d.nf[0]
    scale[0] = primal_scale(m, d)
    d.nisland[0] = 1 if nefc > 0 else 0
    return 1


@njit(cache=True)
def island_dofs(nv, dof_island, nisland, dofs, dadr, dcnt):
    """The dofs of each island: island k's are dofs[dadr[k] : dadr[k] + dcnt[k]], increasing."""
    for k in range(nisland):
        dcnt[k] = 0
    for j in range(nv):
        if dof_island[j] >= 0:
            dcnt[dof_island[j]] += 1
    pos = 0
    for k in range(nisland):
        dadr[k] = pos
        pos += dcnt[k]
        dcnt[k] = 0
    for j in range(nv):
        k = dof_island[j]
        if k >= 0:
            dofs[dadr[k] + dcnt[k]] = j
            dcnt[k] += 1


@njit(cache=True)
def island_move(alpha, v, Mv, Jv, qacc, Ma, jar, dofs, dlo, dn, rows, rlo, rn):
    """qacc, Ma += α (v, Mv) on one island's dofs; jar += α Jv on its rows."""
    for t in range(uint64(dlo), uint64(dlo + dn)):
        k = uint64(dofs[t])
        qacc[k] += alpha * v[k]
        Ma[k] += alpha * Mv[k]
    for t in range(uint64(rlo), uint64(rlo + rn)):
        i = uint64(rows[t])
        jar[i] += alpha * Jv[i]


@njit(cache=True)
def island_counts(state, oldstate, rows, lo, n):
    """(changed state, entered or left the quadratic zone, active) counts of an island's rows.

    The rows are rows[lo:lo + n]; active: not STATE_SATISFIED.
    """
    nchange = 0
    nquad = 0
    nactive = 0
    for t in range(uint64(lo), uint64(lo + n)):
        i = uint64(rows[t])
        s = state[i]
        if s != oldstate[i]:
            nchange += 1
        if (s == STATE_QUADRATIC) != (oldstate[i] == STATE_QUADRATIC):
            nquad += 1
        if s != STATE_SATISFIED:
            nactive += 1
    return nchange, nquad, nactive


@njit(cache=True, inline="always")
def island_searches(m, d, maxiter, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad, res, pts,
                    nisland, iscale, dofs, dadr, dcnt, rows, adr, cnt, whole, done, iters,
                    moved, neval, imp, slope):
    """One step of each open island of a primal solver (Newton, CG); whether one moved.

    Island k (done[k] == 0, fewer than maxiter iterations) takes the exact line search along
    search on its own dofs and rows only (`linesearch`; whole: one island of every dof),
    scaled by iscale[k], and moves d.qacc, Ma and jar by it; its
    scaled improvement, slope and evaluations go to imp[k], slope[k], neval[k] and moved[k]
    is set. An island at maxiter, or whose search finds no descent, is done. Inlined: as
    a call (its 30 arguments) it cost a CG solve on the humanoid 8 µs of 77.
    """
    qacc = d.qacc
    any_moved = False
    for k in range(nisland):
        if done[k] != 0:
            continue
        if iters[k] >= maxiter:
            done[k] = 1
            continue
        alpha = linesearch(m, d, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad, iscale[k], res,
                           pts, dofs, dadr[k], dcnt[k], rows, adr[k], cnt[k], whole)
        if alpha == 0.0:
            done[k] = 1
            continue
        island_move(alpha, search, Mv, Jv, qacc, Ma, jar, dofs, dadr[k], dcnt[k], rows, adr[k],
                    cnt[k])
        imp[k] = iscale[k] * res[0]
        slope[k] = res[1]
        neval[k] = int(res[2])
        moved[k] = 1
        any_moved = True
    return any_moved
