"""The inverse of the joint-space inertia, M⁻¹, without forming M (Carpentier 2018).

J. Carpentier, "Analytical Inverse of the Joint Space Inertia Matrix" (LAAS report, 2018),
Algorithm 1: the articulated-body algorithm with the affine terms removed, run on every unit
force at once. Row k of M⁻¹ maps τ to q̈_k; column j of the force set F holds the bias
force that a unit torque at dof j sends up to the body being processed, and P_b (6 × nv)
the acceleration of body b that unit torques produce. Three passes:

    kinematics and com_pos (positions only);
    backward, over dofs k = nv-1 … 0, with IA of the body of k updated in place:
        U = IA s,  D = sᵀ U + armature,  M⁻¹[k, k] = 1 / D,  F[:, k] = U / D
        M⁻¹[k, j] = -sᵀ F[:, j] / D,  F[:, j] += U M⁻¹[k, j]   for j in sub(k)∖k
        IA ← IA - U Uᵀ / D;  after a body: IA_parent += IA
    forward, over dofs in order (P_src: the parent's P, or this body's for its later dofs):
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
from jointspace.kinematics import com_pos, kinematics_bodies
from jointspace.spatial import sym_add, sym_from_cinert, sym_mul, sym_rank1_sub
from jointspace.types import MINVAL, Data, Model

_LO = 21  # scratch_body column: first dof of the body's subtree
_HI = 22  # scratch_body column: one past the last dof of the body's subtree
_CNT = 23  # scratch_body column: number of dofs in the body's subtree


@njit(cache=True)
def minv_kernel(m, d, out):
    """M⁻¹ into out (nv, nv) by Carpentier's Algorithm 1 (needs com_pos).

    Returns -1, the dof of a non-positive pivot, or -2 if the dofs of a subtree are not
    numbered contiguously (the compiler's depth-first numbering guarantees they are).
    """
    nbody = m.nbody
    nv = m.nv
    parentid = m.body_parentid
    weldid = m.body_weldid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    armature = m.dof_armature
    cdof = d.cdof
    cinert = d.cinert
    S = d.scratch_body
    W = d.scratch_nv
    P = d.scratch_body_nv
    F = P[0]
    # IA = cinert; subtree dof ranges [lo, hi) and counts (backward)
    for b in range(nbody):
        if b > 0:
            sym_from_cinert(S, b, cinert, b)
        S[b, _LO] = dofadr[b] if dofnum[b] > 0 else nv
        S[b, _HI] = dofadr[b] + dofnum[b] if dofnum[b] > 0 else 0
        S[b, _CNT] = dofnum[b]
    for b in range(nbody - 1, 0, -1):
        p = parentid[b]
        S[p, _LO] = min(S[p, _LO], S[b, _LO])
        S[p, _HI] = max(S[p, _HI], S[b, _HI])
        S[p, _CNT] += S[b, _CNT]
    for b in range(nbody):
        if S[b, _CNT] > 0 and S[b, _HI] - S[b, _LO] != S[b, _CNT]:
            return -2
    # backward pass; subtrees own disjoint column ranges, so one F serves every body:
    # column j of F is set at dof j and updated by each ancestor of j in turn
    for b in range(nbody - 1, 0, -1):
        hi = uint64(S[b, _HI])
        for kk in range(dofadr[b] + dofnum[b] - 1, dofadr[b] - 1, -1):
            k = uint64(kk)
            s0 = cdof[k, 0]
            s1 = cdof[k, 1]
            s2 = cdof[k, 2]
            s3 = cdof[k, 3]
            s4 = cdof[k, 4]
            s5 = cdof[k, 5]
            # U = IA s, D = sᵀ U + armature
            u0, u1, u2, u3, u4, u5 = sym_mul(S, b, cdof, k)
            dk = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5 + armature[k]
            if not dk > MINVAL:
                return kk
            dinv = 1.0 / dk
            W[k, 0] = u0
            W[k, 1] = u1
            W[k, 2] = u2
            W[k, 3] = u3
            W[k, 4] = u4
            W[k, 5] = u5
            W[k, 6] = dinv
            # M⁻¹[k, k] = 1/D;  F[:, k] = U / D
            out[k, k] = dinv
            F[0, k] = u0 * dinv
            F[1, k] = u1 * dinv
            F[2, k] = u2 * dinv
            F[3, k] = u3 * dinv
            F[4, k] = u4 * dinv
            F[5, k] = u5 * dinv
            # M⁻¹[k, j] = -sᵀ F[:, j] / D;  F[:, j] += U M⁻¹[k, j]  (j in the subtree after k)
            for j in range(k + uint64(1), hi):
                x = -dinv * (s0 * F[0, j] + s1 * F[1, j] + s2 * F[2, j]
                             + s3 * F[3, j] + s4 * F[4, j] + s5 * F[5, j])
                out[k, j] = x
                F[0, j] += u0 * x
                F[1, j] += u1 * x
                F[2, j] += u2 * x
                F[3, j] += u3 * x
                F[4, j] += u4 * x
                F[5, j] += u5 * x
            for j in range(hi, uint64(nv)):
                out[k, j] = 0.0
            # IA ← IA - U Uᵀ / D
            sym_rank1_sub(S, b, u0, u1, u2, u3, u4, u5, dinv)
        p = uint64(parentid[b])
        if p > 0:
            sym_add(S, p, b)
    # forward pass: P[b] (P[0], the world's, was F)
    for b in range(1, nbody):
        src = uint64(weldid[parentid[b]])
        for k in range(uint64(dofadr[b]), uint64(dofadr[b] + dofnum[b])):
            s0 = cdof[k, 0]
            s1 = cdof[k, 1]
            s2 = cdof[k, 2]
            s3 = cdof[k, 3]
            s4 = cdof[k, 4]
            s5 = cdof[k, 5]
            if src > 0:
                # M⁻¹[k, k:] -= Uᵀ P_src[:, k:] / D;  P[:, k:] = P_src[:, k:] + s M⁻¹[k, k:]
                u0 = W[k, 0]
                u1 = W[k, 1]
                u2 = W[k, 2]
                u3 = W[k, 3]
                u4 = W[k, 4]
                u5 = W[k, 5]
                dinv = W[k, 6]
                for j in range(k, uint64(nv)):
                    p0 = P[src, 0, j]
                    p1 = P[src, 1, j]
                    p2 = P[src, 2, j]
                    p3 = P[src, 3, j]
                    p4 = P[src, 4, j]
                    p5 = P[src, 5, j]
                    x = out[k, j] - dinv * (u0 * p0 + u1 * p1 + u2 * p2
                                            + u3 * p3 + u4 * p4 + u5 * p5)
                    out[k, j] = x
                    out[j, k] = x
                    P[b, 0, j] = p0 + s0 * x
                    P[b, 1, j] = p1 + s1 * x
                    P[b, 2, j] = p2 + s2 * x
                    P[b, 3, j] = p3 + s3 * x
                    P[b, 4, j] = p4 + s4 * x
                    P[b, 5, j] = p5 + s5 * x
            else:
                for j in range(k, uint64(nv)):
                    x = out[k, j]
                    out[j, k] = x
                    P[b, 0, j] = s0 * x
                    P[b, 1, j] = s1 * x
                    P[b, 2, j] = s2 * x
                    P[b, 3, j] = s3 * x
                    P[b, 4, j] = s4 * x
                    P[b, 5, j] = s5 * x
            src = uint64(b)
    return -1


@entry.checked("_k_minv", q="nq", out="out: nv, nv")
@njit(cache=True)
def _minv_driver(d, q, out):
    """Set qpos = q; run kinematics → com_pos → minv into out."""
    m = d.model
    qpos = d.qpos
    for k in range(q.shape[0]):
        qpos[k] = q[k]
    kinematics_bodies(m, d)
    com_pos(m, d)
    return minv_kernel(m, d, out)


# ── generated by tools/gen_entries.py from the declaration above: do not edit ──


@njit(cache=True)
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
