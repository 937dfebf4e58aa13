"""The inverse of the joint-space inertia, M⁻¹, without forming M (Carpentier 2018).

J. Carpentier, "Analytical Inverse of the Joint Space Inertia Matrix" (LAAS report, 2018),
Algorithm 1: the articulated-body algorithm with the affine terms removed, run on every unit
force at once. Row k of M⁻¹ maps τ to q̈_k; column j of the force set F holds the bias
force that a unit torque at dof j sends up to the body being processed, and P_b (6 × nv)
the acceleration of body b that unit torques produce. After kinematics and com_pos
(positions only), three passes, Pinocchio's computeMinverse steps:

    `_minv_init`: IA = cinert of every body, each subtree's dof range;
    `_minv_backward`, over dofs k = nv-1 … 0, with IA of the body of k updated in place:
        U = IA s,  D = sᵀ U + armature,  M⁻¹[k, k] = 1 / D,  F[:, k] = U / D
        M⁻¹[k, j] = -sᵀ F[:, j] / D,  F[:, j] += U M⁻¹[k, j]   for j in sub(k)∖k
        IA ← IA - U Uᵀ / D;  after a body: IA_parent += IA
    `_minv_forward`, over dofs in order (P_src: the parent's P, or this body's for its later dofs):
        M⁻¹[k, k:] -= Uᵀ P_src[:, k:] / D,   P[:, k:] = P_src[:, k:] + s M⁻¹[k, k:]

where each final M⁻¹[k, j] is also written to M⁻¹[j, k] (M⁻¹ is symmetric). The paper
keeps one force set per body and adds each into its parent's; under the compiler's
depth-first numbering a subtree's dofs are a contiguous column range, disjoint from its
siblings', so a single 6 × nv F holds them all and the additions vanish (the numbering is
checked). As in `aba`, quantities live in the
com-based frame (no transforms between bodies) and each dof is a joint of its own (scalar D,
multi-dof joints as chains of massless virtual links).

Scratch: scratch_body[b, 0:21] IA (packed), [b, 21:24] the first and one-past-last dof of
b's subtree and their count; scratch_nv[k, 0:6] U, [k, 6] 1/D; scratch_body_nv[0] F,
scratch_body_nv[b] P_b.
"""

from numba import njit, uint64

from jointspace._numba import entry
from jointspace._numba.entry import empty
from jointspace.actuator_passive import dof_armature
from jointspace.kinematics import poses_at
from jointspace.spatial import (
    add_scl6,
    col6,
    dot6,
    row6,
    scale6,
    set_col6,
    set_row6,
    sym_add,
    sym_from_cinert,
    sym_mul6,
    sym_rank1_sub,
)
from jointspace.types import MINVAL, Data, Model

_LO = 21  # scratch_body column: first dof of the body's subtree
_HI = 22  # scratch_body column: one past the last dof of the body's subtree
_CNT = 23  # scratch_body column: number of dofs in the body's subtree


@njit(cache=True)
def _minv_init(m, d):
    """IA = cinert, and each body's subtree dof range and count; False if not contiguous.

    Algorithm 1's first forward pass (Pinocchio's ComputeMinverseForwardStep1), plus the
    column ranges [lo, hi) that let one F serve every body (scratch_body[b, 21:24]).
    """
    nbody = m.nbody
    parentid = m.body_parentid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    cinert = d.cinert
    IA = d.scratch_body
    for b in range(nbody):
        if b > 0:
            sym_from_cinert(IA, b, cinert, b)
        IA[b, _LO] = dofadr[b] if dofnum[b] > 0 else m.nv
        IA[b, _HI] = dofadr[b] + dofnum[b] if dofnum[b] > 0 else 0
        IA[b, _CNT] = dofnum[b]
    for b in range(nbody - 1, 0, -1):
        p = parentid[b]
        IA[p, _LO] = min(IA[p, _LO], IA[b, _LO])
        IA[p, _HI] = max(IA[p, _HI], IA[b, _HI])
        IA[p, _CNT] += IA[b, _CNT]
    for b in range(nbody):
        if IA[b, _CNT] > 0 and IA[b, _HI] - IA[b, _LO] != IA[b, _CNT]:
            return False
    return True


@njit(cache=True)
def _minv_backward(m, d, out):
    """U, D and F, and rows k of M⁻¹ over the subtree of k; returns -1 or a bad pivot's dof.

    Algorithm 1's backward pass (Pinocchio's ComputeMinverseBackwardStep), over dofs
    k = nv-1 … 0 with s = cdof[k]; F's column j is set at dof j and updated by each
    ancestor of j in turn (subtrees own disjoint column ranges).
    """
    parentid = m.body_parentid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    nv = uint64(m.nv)
    cdof = d.cdof
    IA = d.scratch_body
    W = d.scratch_nv
    F = d.scratch_body_nv[0]
    for b in range(m.nbody - 1, 0, -1):
        hi = uint64(IA[b, _HI])
        for kk in range(dofadr[b] + dofnum[b] - 1, dofadr[b] - 1, -1):
            k = uint64(kk)
            s = row6(cdof, k)
            # U = IA s,  D = sᵀ U + armature
            U = sym_mul6(IA, b, s)
            D = dot6(s, U) + dof_armature(m, k)
            if not D > MINVAL:
                return kk
            Dinv = 1.0 / D
            set_row6(W, k, U)
            W[k, 6] = Dinv
            # M⁻¹[k, k] = 1/D;  F[:, k] = U / D
            out[k, k] = Dinv
            set_col6(F, k, scale6(U, Dinv))
            # M⁻¹[k, j] = -sᵀ F[:, j] / D;  F[:, j] += U M⁻¹[k, j]  (j in the subtree after k)
            for j in range(k + uint64(1), hi):
                f = col6(F, j)
                x = -Dinv * dot6(s, f)
                out[k, j] = x
                set_col6(F, j, add_scl6(f, U, x))
            for j in range(hi, nv):
                out[k, j] = 0.0
            # IA ← IA - U Uᵀ / D
            sym_rank1_sub(IA, b, U, Dinv)
        # IA_parent += IA
        p = uint64(parentid[b])
        if p > 0:
            sym_add(IA, p, b)
    return -1


@njit(cache=True)
def _minv_forward(m, d, out):
    """P and the final M⁻¹, both triangles: Algorithm 1's second forward pass.

    Pinocchio's ComputeMinverseForwardStep2. P_src is the parent's P (none at a tree's
    root: the world's, P[0], was F), or this body's for its later dofs.
    """
    weldid = m.body_weldid
    parentid = m.body_parentid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    nv = uint64(m.nv)
    cdof = d.cdof
    W = d.scratch_nv
    P = d.scratch_body_nv
    for b in range(1, m.nbody):
        src = uint64(weldid[parentid[b]])
        Pb = P[b]
        for k in range(uint64(dofadr[b]), uint64(dofadr[b] + dofnum[b])):
            s = row6(cdof, k)
            if src > 0:
                # M⁻¹[k, k:] -= Uᵀ P_src[:, k:] / D;  P[:, k:] = P_src[:, k:] + s M⁻¹[k, k:]
                U = row6(W, k)
                Dinv = W[k, 6]
                Psrc = P[src]
                for j in range(k, nv):
                    p = col6(Psrc, j)
                    x = out[k, j] - Dinv * dot6(U, p)
                    out[k, j] = x
                    out[j, k] = x
                    set_col6(Pb, j, add_scl6(p, s, x))
            else:
                # P[:, k:] = s M⁻¹[k, k:]
                for j in range(k, nv):
                    x = out[k, j]
                    out[j, k] = x
                    set_col6(Pb, j, scale6(s, x))
            src = uint64(b)


@njit(cache=True)
def minv_kernel(m, d, out):
    """M⁻¹ into out (nv, nv) by Carpentier's Algorithm 1, in three passes (needs com_pos).

    The passes are Pinocchio's computeMinverse: _minv_init (IA = cinert), _minv_backward
    (U, D, F, M⁻¹ over each subtree), _minv_forward (P, the final M⁻¹). Returns -1, the dof
    of a non-positive pivot, or -2 if the dofs of a subtree are not numbered contiguously
    (the compiler's depth-first numbering guarantees they are).
    """
    if not _minv_init(m, d):
        return -2
    bad = _minv_backward(m, d, out)
    if bad < 0:
        _minv_forward(m, d, out)
    return bad


@entry.checked("_k_minv", q="nq", out="out: nv, nv")
@njit(cache=True)
def _minv_driver(d, q, out):
    """Set qpos = q; run kinematics → com_pos → minv into out."""
    m = d.model
    poses_at(m, d, q)
    return minv_kernel(m, d, entry.plain(out))


# ── generated by tools/gen_entries.py from the declaration above: do not edit ──


@njit(cache=True, nogil=True)
def _minv_checked(d, q, out):
    """_minv_driver once the arguments' sizes match d's model; else entry.BAD_SHAPE."""
    m = d.model
    if q.shape[0] != m.nq or out.shape[0] != m.nv or out.shape[1] != m.nv:
        return entry.BAD_SHAPE
    return _minv_driver(d, q, out)


_k_minv = entry.Kernel(_minv_checked, sig=(None, entry.IN1, entry.OUT2))
# ── end of generated code ──


@entry.public("_k_minv(q, out)", new="out: nv, nv", returns="out",
              pivot="articulated-inertia",
              errors={-2: (ValueError, "the model's dofs are not numbered depth-first (a "
                                       "subtree's dofs are not contiguous); build it with "
                                       "jointspace.compile_model")})
def minv(m, d, q):
    """The inverse joint-space inertia M(q)⁻¹, computed without forming M (Carpentier 2018).

    One compiled call runs kinematics, com_pos and the three passes of the module
    docstring; O(nv²) work plus O(n) per body. M includes armature, as in `crba`.

    Args:
        m: the Model.
        d: a Data for m; q is copied into d.qpos and the kinematic fields are filled.
        q: (nq,) positions.

    Returns:
        (nv, nv) dense symmetric M⁻¹.

    Raises:
        SingularMassError: the model has dofs that move no mass, or an articulated-inertia
            pivot is not positive at q.
    """
    # generated by tools/gen_entries.py from the declaration above: do not edit
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s and not m.singular_dofs:
        out = empty((m.nv, m.nv))
        ep = _k_minv.ep
        try:
            if ep(d._s, q, out) == -1:
                return out
        except entry.FastPathMiss:
            pass
    entry.check_pair(m, d, "minv")
    entry.check_not_singular(m, "minv")
    q = entry.fresh(q, m._shq, "q", "minv")
    out = empty((m.nv, m.nv))
    status = _k_minv.ep(d._s, q, out)
    if status >= 0:
        entry.raise_pivot(m, status, "minv", "articulated-inertia")
    if status == -2:
        raise ValueError("minv: the model's dofs are not numbered depth-first (a subtree's dofs "
                         "are not contiguous); build it with jointspace.compile_model")
    return out
