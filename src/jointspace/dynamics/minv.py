"""The inverse of the joint-space inertia, M⁻¹, without forming M (Carpentier 2018).

J. Carpentier, "Analytical Inverse of the Joint Space Inertia Matrix" (LAAS report, 2018),
Algorithm 1: the articulated-body algorithm with the affine terms removed, run on every unit
force at once. Row k of M⁻¹ maps τ to q̈_k; F_b (6 × nv) collects, column by column, the
bias force that unit torques in b's subtree send up to b, and P_b (6 × nv) the acceleration
of b that unit torques produce. Three passes:

    kinematics and com_pos (positions only);
    backward, over dofs k = nv-1 … 0, with IA, F of the body of k updated in place:
        U = IA s,  D = sᵀ U + armature,  M⁻¹[k, k] = 1 / D
        M⁻¹[k, sub(k)∖k] = -sᵀ F[:, sub(k)∖k] / D,   F[:, sub(k)] += U M⁻¹[k, sub(k)]
        IA ← IA - U Uᵀ / D;  after a body: IA_parent += IA,  F_parent += F
    forward, over dofs in order (P_src: the parent's P, or this body's for its later dofs):
        M⁻¹[k, k:] -= Uᵀ P_src[:, k:] / D,   P[:, k:] = P_src[:, k:] + s M⁻¹[k, k:]

then the upper triangle is mirrored. As in `aba`, quantities live in the com-based frame
(no transforms between bodies) and each dof is a joint of its own (scalar D, multi-dof
joints as chains of massless virtual links). sub(k) is the column range from k to the last
dof of k's body's subtree (contiguous under the compiler's depth-first numbering; entries of
other columns in the range stay zero, so the algorithm is exact for any topological order).

Scratch: scratch_body[b, 0:21] IA (packed), [b, 21], [b, 22] the first and one-past-last
dof of b's subtree; scratch_nv[k, 0:6] U, [k, 6] 1/D; scratch_body_nv[b] F in the backward
pass, P in the forward pass.
"""

import numpy as np
from numba import njit

from jointspace import _entry
from jointspace.dynamics._args import check_not_singular, check_pair, raise_pivot, vec
from jointspace.dynamics._spatial import sym_add, sym_from_cinert, sym_mul, sym_rank1_sub
from jointspace.kinematics import _com_pos, _kinematics

_MINVAL = 1e-15  # MuJoCo's mjMINVAL: a pivot at or below it counts as zero
_LO = 21  # scratch_body column: first dof of the body's subtree
_HI = 22  # scratch_body column: one past the last dof of the body's subtree


@njit(cache=True)
def _minv(m, d, out):
    """M⁻¹ into out (nv, nv) by Carpentier's Algorithm 1 (needs _com_pos); -1 or a bad dof."""
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
    F = d.scratch_body_nv
    # subtree dof ranges [lo, hi) (backward), then IA = cinert and F = 0 on those columns
    for b in range(nbody):
        if dofnum[b] > 0:
            S[b, _LO] = dofadr[b]
            S[b, _HI] = dofadr[b] + dofnum[b]
        else:
            S[b, _LO] = nv
            S[b, _HI] = 0
    for b in range(nbody - 1, 0, -1):
        p = parentid[b]
        S[p, _LO] = min(S[p, _LO], S[b, _LO])
        S[p, _HI] = max(S[p, _HI], S[b, _HI])
    for b in range(1, nbody):
        sym_from_cinert(S, b, cinert, b)
        lo = int(S[b, _LO])
        hi = int(S[b, _HI])
        for r in range(6):
            for j in range(lo, hi):
                F[b, r, j] = 0.0
    # backward pass
    for b in range(nbody - 1, 0, -1):
        hi = int(S[b, _HI])
        for k in range(dofadr[b] + dofnum[b] - 1, dofadr[b] - 1, -1):
            s0 = cdof[k, 0]
            s1 = cdof[k, 1]
            s2 = cdof[k, 2]
            s3 = cdof[k, 3]
            s4 = cdof[k, 4]
            s5 = cdof[k, 5]
            # U = IA s, D = sᵀ U + armature
            u0, u1, u2, u3, u4, u5 = sym_mul(S, b, cdof, k)
            dk = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5 + armature[k]
            if not dk > _MINVAL:
                return k
            dinv = 1.0 / dk
            W[k, 0] = u0
            W[k, 1] = u1
            W[k, 2] = u2
            W[k, 3] = u3
            W[k, 4] = u4
            W[k, 5] = u5
            W[k, 6] = dinv
            # M⁻¹[k, k] = 1/D;  M⁻¹[k, j] = -sᵀ F[:, j] / D for j in the subtree after k
            out[k, k] = dinv
            for j in range(k + 1, hi):
                out[k, j] = -dinv * (s0 * F[b, 0, j] + s1 * F[b, 1, j] + s2 * F[b, 2, j]
                                     + s3 * F[b, 3, j] + s4 * F[b, 4, j] + s5 * F[b, 5, j])
            for j in range(hi, nv):
                out[k, j] = 0.0
            # F[:, sub(k)] += U M⁻¹[k, sub(k)]
            for j in range(k, hi):
                x = out[k, j]
                F[b, 0, j] += u0 * x
                F[b, 1, j] += u1 * x
                F[b, 2, j] += u2 * x
                F[b, 3, j] += u3 * x
                F[b, 4, j] += u4 * x
                F[b, 5, j] += u5 * x
            # IA ← IA - U Uᵀ / D
            sym_rank1_sub(S, b, W, k, dinv)
        p = parentid[b]
        if p > 0:
            sym_add(S, p, b)
            lo = int(S[b, _LO])
            for r in range(6):
                for j in range(lo, hi):
                    F[p, r, j] += F[b, r, j]
    # forward pass: P = F's storage, now free
    P = F
    for b in range(1, nbody):
        src = weldid[parentid[b]]
        for k in range(dofadr[b], dofadr[b] + dofnum[b]):
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
                for j in range(k, nv):
                    p0 = P[src, 0, j]
                    p1 = P[src, 1, j]
                    p2 = P[src, 2, j]
                    p3 = P[src, 3, j]
                    p4 = P[src, 4, j]
                    p5 = P[src, 5, j]
                    x = out[k, j] - dinv * (u0 * p0 + u1 * p1 + u2 * p2
                                            + u3 * p3 + u4 * p4 + u5 * p5)
                    out[k, j] = x
                    P[b, 0, j] = p0 + s0 * x
                    P[b, 1, j] = p1 + s1 * x
                    P[b, 2, j] = p2 + s2 * x
                    P[b, 3, j] = p3 + s3 * x
                    P[b, 4, j] = p4 + s4 * x
                    P[b, 5, j] = p5 + s5 * x
            else:
                for j in range(k, nv):
                    x = out[k, j]
                    P[b, 0, j] = s0 * x
                    P[b, 1, j] = s1 * x
                    P[b, 2, j] = s2 * x
                    P[b, 3, j] = s3 * x
                    P[b, 4, j] = s4 * x
                    P[b, 5, j] = s5 * x
            src = b
    # M⁻¹ is symmetric: mirror the upper triangle
    for k in range(nv):
        for j in range(k + 1, nv):
            out[j, k] = out[k, j]
    return -1


@njit(cache=True)
def _minv_driver(m, d, q, out):
    """Set qpos = q; run kinematics → com_pos → minv into out."""
    qpos = d.qpos
    for k in range(q.shape[0]):
        qpos[k] = q[k]
    _kinematics(m, d)
    _com_pos(m, d)
    return _minv(m, d, out)


_k_minv = _entry.Kernel(_minv_driver)


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
    check_pair(m, d, "minv")
    check_not_singular(m, "minv")
    q = vec(q, m.nq, "q", "minv")
    out = np.empty((m.nv, m.nv))
    bad = _k_minv(m._s, d._s, q, out)
    if bad >= 0:
        raise_pivot(m, bad, "minv", "articulated-inertia")
    return out
