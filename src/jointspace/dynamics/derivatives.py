"""Analytical derivatives of RNEA and ABA, O(n·d) (Carpentier & Mansard, RSS 2018).

J. Carpentier and N. Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms"
(RSS 2018): differentiate the recursions of the RNEA once, and the ABA through the RNEA,
q̈ = M⁻¹(τ - b) ⇒ ∂q̈/∂x = -M⁻¹ ∂τ/∂x at q̈ = ABA(q, v, τ) (their §IV.C; Pinocchio's
computeABADerivatives). Derivatives with respect to q are taken in the tangent space:
column j is d/dε at ε = 0 of the value at `integrate_pos(q, ε e_j)`, with MuJoCo's velocity
conventions (free joint: linear velocity in world axes, angular in the body frame; ball:
angular velocity in the joint's frame), so perturbation j moves every body below dof j by
the twist S_j = cdof[j].

We write the paper's derivation in MuJoCo's com-based frame (world axes, one origin per
tree, held fixed while differentiating: τ is a scalar, the same in every frame) and per
dof, a body with several dofs being a chain of dofs as in `aba` and `minv`. What the paper's
joint-level derivation gets from each joint's model we get from one rule: perturbing dof j
turns the axis S_k by S_j × S_k for every k at or after the start g_j of j's group (the
group of a hinge or slide is itself; of a ball, its three dofs; of a free joint, its
translations, then its rotations: rotating the body does not turn the world-fixed
translation axes). With u_j the velocity before j's group (MuJoCo's cdof_dot_j =
u_j × S_j), a_j⁻ the acceleration before it and v_j⁺ the velocity after it:

    ∂v_c/∂q_j = S_j × (v_c - u_j),
    ∂a_c/∂q_j = S_j × (a_c - a_j⁻) - (S_j × u_j) × (v_c - u_j),
    ∂v_c/∂q̇_j = S_j,  ∂a_c/∂q̇_j = S_j × v_c - S_j × (u_j + v_j⁺)

for every body c below j. Put into f_c = I_c a_c + v_c ×* I_c v_c - f_ext,c and summed over
subtrees, with the body operator B_c w = I_c (v_c × w) - v_c ×* (I_c w) - w ×* (I_c v_c)
and its subtree sums Bc, the composite inertias Ic (`d.crb`):

    ∂F_b/∂q_j = S_j ×* F_b⁰ - Ic_b y_j + Bc_b w_j - ∂E_b/∂q_j,
        w_j = S_j × u_j,  y_j = S_j × a_j⁻ - w_j × u_j,  F⁰ = F without f_ext,
    ∂F_b/∂q̇_j = -Bc_b S_j - Ic_b z_j,  z_j = S_j × (u_j + v_j⁺).

With τ_k = S_k · F_b(k) + armature_k q̈_k, each entry is a few dot products of 6-vectors
prepared once per dof (Bt_k = Bcᵀ S_k, IS_k = Ic S_k, Φ_j = ∂F_b(j)/∂q_j, Ψ_j =
∂F_b(j)/∂q̇_j):

    k at or after g_j, below j:  ∂τ_k/∂q_j = Bt_k · w_j - IS_k · y_j - XS_k · S_j,
                                 ∂τ_k/∂q̇_j = -Bt_k · S_j - IS_k · z_j
    k before g_j, above j:       ∂τ_k/∂q_j = S_k · Φ_j,  ∂τ_k/∂q̇_j = S_k · Ψ_j
    M[k, j] = IS_k · S_j (+ armature on the diagonal)

and zero where k and j are on different branches. External forces (MuJoCo's
`xfrc_applied`: world-fixed force and torque at the body's com) do not turn with the body;
their point p moves, which gives the term XS_k = Xcᵀ S_k with
Xc S_j = ((n× + Σ p fᵀ - Σ p·f) ω_j, f × ω_j), (n, f) the subtree's summed c-frame wrench.
The pairs are walked along `dof_parentid`: O(Σ depth) work, O(n²) for a chain.

Scratch: d.crb (Ic), d.scratch_body[b, :36] (Bc, row-major 6×6).
"""

import numpy as np
from numba import njit, uint64

from jointspace._numba import entry
from jointspace._numba.entry import empty
from jointspace.actuator_passive import dof_armature
from jointspace.dynamics.aba import aba_kernel
from jointspace.dynamics.minv import minv_kernel
from jointspace.dynamics.rnea import RNE_ACC, RNE_FEXT, RNE_GRAVITY, RNE_VEL, rne
from jointspace.kinematics import com_vel_stage, poses_at
from jointspace.spatial import (
    add6,
    add_scl6,
    cross_force6,
    dot6,
    inert_mul6,
    row6,
    scale6,
    sub6,
)
from jointspace.types import JNT_BALL, JNT_FREE, Data, Model

_FLAGS = RNE_VEL | RNE_ACC | RNE_GRAVITY
# per-dof columns of the work array: w, y, z, Bt, IS (6 each), XS (3), Φ, Ψ (6 each)
_W, _Y, _Z, _BT, _IS, _XS, _PHI, _PSI, _NW = 0, 6, 12, 18, 24, 30, 33, 39, 45


@njit(cache=True, inline="always")
def _cross6(a, b):
    """a ×ₘ b for spatial motions given as 6-tuples (rot : lin)."""
    return (a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
            a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1],
            a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2],
            a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0])


@njit(cache=True, inline="always")
def _mat_mul6(B, b, x):
    """B[b] x for the row-major 6×6 matrix B[b, :36] and a 6-tuple x."""
    return (B[b, 0] * x[0] + B[b, 1] * x[1] + B[b, 2] * x[2] + B[b, 3] * x[3]
            + B[b, 4] * x[4] + B[b, 5] * x[5],
            B[b, 6] * x[0] + B[b, 7] * x[1] + B[b, 8] * x[2] + B[b, 9] * x[3]
            + B[b, 10] * x[4] + B[b, 11] * x[5],
            B[b, 12] * x[0] + B[b, 13] * x[1] + B[b, 14] * x[2] + B[b, 15] * x[3]
            + B[b, 16] * x[4] + B[b, 17] * x[5],
            B[b, 18] * x[0] + B[b, 19] * x[1] + B[b, 20] * x[2] + B[b, 21] * x[3]
            + B[b, 22] * x[4] + B[b, 23] * x[5],
            B[b, 24] * x[0] + B[b, 25] * x[1] + B[b, 26] * x[2] + B[b, 27] * x[3]
            + B[b, 28] * x[4] + B[b, 29] * x[5],
            B[b, 30] * x[0] + B[b, 31] * x[1] + B[b, 32] * x[2] + B[b, 33] * x[3]
            + B[b, 34] * x[4] + B[b, 35] * x[5])


@njit(cache=True, inline="always")
def _mat_tmul6(B, b, x):
    """B[b]ᵀ x for the row-major 6×6 matrix B[b, :36] and a 6-tuple x."""
    return (B[b, 0] * x[0] + B[b, 6] * x[1] + B[b, 12] * x[2] + B[b, 18] * x[3]
            + B[b, 24] * x[4] + B[b, 30] * x[5],
            B[b, 1] * x[0] + B[b, 7] * x[1] + B[b, 13] * x[2] + B[b, 19] * x[3]
            + B[b, 25] * x[4] + B[b, 31] * x[5],
            B[b, 2] * x[0] + B[b, 8] * x[1] + B[b, 14] * x[2] + B[b, 20] * x[3]
            + B[b, 26] * x[4] + B[b, 32] * x[5],
            B[b, 3] * x[0] + B[b, 9] * x[1] + B[b, 15] * x[2] + B[b, 21] * x[3]
            + B[b, 27] * x[4] + B[b, 33] * x[5],
            B[b, 4] * x[0] + B[b, 10] * x[1] + B[b, 16] * x[2] + B[b, 22] * x[3]
            + B[b, 28] * x[4] + B[b, 34] * x[5],
            B[b, 5] * x[0] + B[b, 11] * x[1] + B[b, 17] * x[2] + B[b, 23] * x[3]
            + B[b, 29] * x[4] + B[b, 35] * x[5])


@njit(cache=True, inline="always")
def _set6(a, i, c, v):
    """a[i, c:c + 6] = v."""
    a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5] = v


@njit(cache=True, inline="always")
def _get6(a, i, c):
    """a[i, c:c + 6] as a 6-tuple."""
    return a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5]


@njit(cache=True, inline="always")
def _group(m, k):
    """(first dof, dof count) of the group of dof k: the dofs whose axes turn each other."""
    jnt = m.dof_jntid[k]
    jt = m.jnt_type[jnt]
    adr = int(m.jnt_dofadr[jnt])
    if jt == JNT_BALL:
        return adr, 3
    if jt == JNT_FREE:
        return (adr, 3) if k < adr + 3 else (adr + 3, 3)
    return int(k), 1


@njit(cache=True)
def _body_terms(m, d, use_fext, fext, X):
    """Per body: Bc into scratch_body, Ic into crb, the f_ext sums into X; subtree sums.

    B_c w = I_c (v_c × w) - v_c ×* (I_c w) - w ×* (I_c v_c), built column by column;
    X[b] = (n, f) summed c-frame f_ext, Σ p fᵀ (row-major), Σ p · f, p = xipos - origin.
    """
    nbody = m.nbody
    cinert = d.cinert
    cvel = d.cvel
    crb = d.crb
    B = d.scratch_body
    for b in range(1, nbody):
        for t in range(10):
            crb[b, t] = cinert[b, t]
        v = row6(cvel, b)
        h = inert_mul6(cinert, b, v)
        for c in range(6):
            e = (1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0,
                 1.0 if c == 3 else 0.0, 1.0 if c == 4 else 0.0, 1.0 if c == 5 else 0.0)
            col = sub6(sub6(inert_mul6(cinert, b, _cross6(v, e)),
                            cross_force6(v, inert_mul6(cinert, b, e))), cross_force6(e, h))
            for r in range(6):
                B[b, 6 * r + c] = col[r]
        if use_fext:
            r0 = uint64(m.body_rootid[b])
            p0 = d.xipos[b, 0] - d.subtree_com[r0, 0]
            p1 = d.xipos[b, 1] - d.subtree_com[r0, 1]
            p2 = d.xipos[b, 2] - d.subtree_com[r0, 2]
            f0 = fext[b, 0]
            f1 = fext[b, 1]
            f2 = fext[b, 2]
            for t in range(6):
                X[b, t] = d.cfrc_ext[b, t]
            X[b, 6] = p0 * f0
            X[b, 7] = p0 * f1
            X[b, 8] = p0 * f2
            X[b, 9] = p1 * f0
            X[b, 10] = p1 * f1
            X[b, 11] = p1 * f2
            X[b, 12] = p2 * f0
            X[b, 13] = p2 * f1
            X[b, 14] = p2 * f2
            X[b, 15] = p0 * f0 + p1 * f1 + p2 * f2
    # subtree sums (trees do not share a frame origin: stop below the world)
    for b in range(nbody - 1, 0, -1):
        p = uint64(m.body_parentid[b])
        if p > 0:
            for t in range(10):
                crb[p, t] += crb[b, t]
            for t in range(36):
                B[p, t] += B[b, t]
            if use_fext:
                for t in range(16):
                    X[p, t] += X[b, t]


@njit(cache=True)
def _dof_terms(m, d, use_fext, X, W):
    """Per dof: w, y, z along the chain, then Bt, IS, XS, Φ, Ψ from the subtree sums."""
    cdof = d.cdof
    cdd = d.cdof_dot
    qvel = d.qvel
    qacc = d.qacc
    crb = d.crb
    B = d.scratch_body
    for b in range(1, m.nbody):
        p = uint64(m.body_parentid[b])
        v = row6(d.cvel, p)
        a = row6(d.cacc, p)
        u = v
        ap = a
        vu = v
        lo = m.body_dofadr[b]
        for k in range(lo, lo + m.body_dofnum[b]):
            g, n = _group(m, k)
            if k == g:
                # u, a⁻: before the group;  vu = u + v⁺: u plus the velocity after it
                u = v
                ap = a
                ve = v
                for t in range(g, g + n):
                    ve = add_scl6(ve, row6(cdof, t), qvel[t])
                vu = add6(u, ve)
            s = row6(cdof, k)
            w = _cross6(s, u)
            _set6(W, k, _W, w)
            _set6(W, k, _Y, sub6(_cross6(s, ap), _cross6(w, u)))
            _set6(W, k, _Z, _cross6(s, vu))
            # v ← v + S q̇;  a ← a + Ṡ q̇ + S q̈
            v = add_scl6(v, s, qvel[k])
            a = add_scl6(add_scl6(a, row6(cdd, k), qvel[k]), s, qacc[k])
    for k in range(m.nv):
        b = uint64(m.dof_bodyid[k])
        s = row6(cdof, k)
        _set6(W, k, _BT, _mat_tmul6(B, b, s))
        _set6(W, k, _IS, inert_mul6(crb, b, s))
        # Φ = S ×* F - Xc S - Ic y + Bc w;  Ψ = -Bc S - Ic z
        phi = sub6(add6(cross_force6(s, row6(d.cfrc_int, b)), _mat_mul6(B, b, _get6(W, k, _W))),
                   inert_mul6(crb, b, _get6(W, k, _Y)))
        if use_fext:
            o0, o1, o2, l0, l1, l2 = s
            n0, n1, n2, f0, f1, f2 = row6(X, b)
            es = X[b, 15]
            # Xc S = ((n× + Σ p fᵀ - Σ p·f) ω, f × ω)
            phi = sub6(phi, (n1 * o2 - n2 * o1 + X[b, 6] * o0 + X[b, 7] * o1 + X[b, 8] * o2
                             - es * o0,
                             n2 * o0 - n0 * o2 + X[b, 9] * o0 + X[b, 10] * o1 + X[b, 11] * o2
                             - es * o1,
                             n0 * o1 - n1 * o0 + X[b, 12] * o0 + X[b, 13] * o1 + X[b, 14] * o2
                             - es * o2,
                             f1 * o2 - f2 * o1, f2 * o0 - f0 * o2, f0 * o1 - f1 * o0))
            # XS = Xcᵀ S (its rotational part; the linear part is zero)
            W[k, _XS] = (n2 * o1 - n1 * o2 + X[b, 6] * o0 + X[b, 9] * o1 + X[b, 12] * o2
                         - es * o0 - (f1 * l2 - f2 * l1))
            W[k, _XS + 1] = (n0 * o2 - n2 * o0 + X[b, 7] * o0 + X[b, 10] * o1 + X[b, 13] * o2
                             - es * o1 - (f2 * l0 - f0 * l2))
            W[k, _XS + 2] = (n1 * o0 - n0 * o1 + X[b, 8] * o0 + X[b, 11] * o1 + X[b, 14] * o2
                             - es * o2 - (f0 * l1 - f1 * l0))
        else:
            W[k, _XS] = 0.0
            W[k, _XS + 1] = 0.0
            W[k, _XS + 2] = 0.0
        _set6(W, k, _PHI, phi)
        _set6(W, k, _PSI, sub6(scale6(_mat_mul6(B, b, s), -1.0),
                               inert_mul6(crb, b, _get6(W, k, _Z))))


@njit(cache=True, inline="always")
def _dq_below(W, cdof, k, j):
    """∂τ_k/∂q_j for k at or after the start of j's group: Bt_k·w_j - IS_k·y_j - XS_k·S_j."""
    return (dot6(_get6(W, k, _BT), _get6(W, j, _W)) - dot6(_get6(W, k, _IS), _get6(W, j, _Y))
            - (W[k, _XS] * cdof[j, 0] + W[k, _XS + 1] * cdof[j, 1]
               + W[k, _XS + 2] * cdof[j, 2]))


@njit(cache=True)
def rnea_derivatives_kernel(m, d, use_fext, fext, dtau_dq, dtau_dv, mass):
    """∂τ/∂q, ∂τ/∂q̇ and M after rne (needs com_pos, com_vel_stage, rne at qacc).

    The module docstring's recursion: `_body_terms`, `_dof_terms`, then the pairs (k, j)
    with j an ancestor-or-self of k along dof_parentid, both orders; other entries zero.
    """
    nv = m.nv
    X = np.zeros((m.nbody if use_fext else 1, 16))
    W = np.empty((nv, _NW))
    _body_terms(m, d, use_fext, fext, X)
    _dof_terms(m, d, use_fext, X, W)
    cdof = d.cdof
    parent = m.dof_parentid
    for k in range(nv):
        for j in range(nv):
            dtau_dq[k, j] = 0.0
            dtau_dv[k, j] = 0.0
            mass[k, j] = 0.0
    for k in range(nv):
        s = row6(cdof, k)
        g, n = _group(m, k)
        bt = _get6(W, k, _BT)
        ks = _get6(W, k, _IS)
        mass[k, k] = dot6(ks, s) + dof_armature(m, k)
        dtau_dq[k, k] = _dq_below(W, cdof, k, k)
        dtau_dv[k, k] = -dot6(bt, s) - dot6(ks, _get6(W, k, _Z))
        phi = _get6(W, k, _PHI)
        psi = _get6(W, k, _PSI)
        j = parent[k]
        while j >= 0:
            sj = row6(cdof, j)
            # row k below column j
            dtau_dq[k, j] = _dq_below(W, cdof, k, j)
            dtau_dv[k, j] = -dot6(bt, sj) - dot6(ks, _get6(W, j, _Z))
            x = dot6(ks, sj)
            mass[k, j] = x
            mass[j, k] = x
            # row j above column k
            dtau_dv[j, k] = dot6(sj, psi)
            if j >= g:
                dtau_dq[j, k] = _dq_below(W, cdof, j, k)
            else:
                dtau_dq[j, k] = dot6(sj, phi)
            j = parent[j]


@njit(cache=True)
def _set_state(m, d, q, v):
    """qpos = q (kinematics, com_pos), qvel = v (com_vel)."""
    poses_at(m, d, q)
    qvel = d.qvel
    for k in range(v.shape[0]):
        qvel[k] = v[k]
    com_vel_stage(m, d)


@entry.checked("_k_rnea_derivatives", q="nq", v="nv", a="nv", fext="nbody, 6",
               dtau_dq="out: nv, nv", dtau_dv="out: nv, nv", mass="out: nv, nv")
@njit(cache=True)
def _rnea_derivatives_driver(d, q, v, a, use_fext, fext, dtau_dq, dtau_dv, mass):
    """Set qpos, qvel, qacc = q, v, a; kinematics → com_pos → com_vel → rne → derivatives."""
    m = d.model
    _set_state(m, d, q, v)
    qacc = d.qacc
    for k in range(a.shape[0]):
        qacc[k] = a[k]
    tau = np.empty(m.nv)
    rne(m, d, _FLAGS | RNE_FEXT if use_fext else _FLAGS, fext, tau)
    rnea_derivatives_kernel(m, d, use_fext, entry.plain(fext), entry.plain(dtau_dq),
                            entry.plain(dtau_dv), entry.plain(mass))


# ── generated by tools/gen_entries.py from the declaration above: do not edit ──


@njit(cache=True, nogil=True)
def _rnea_derivatives_checked(d, q, v, a, use_fext, fext, dtau_dq, dtau_dv, mass):
    """_rnea_derivatives_driver once the arguments' sizes match d's model; else entry.BAD_SHAPE."""
    m = d.model
    if (q.shape[0] != m.nq or v.shape[0] != m.nv or a.shape[0] != m.nv
            or fext.shape[0] != m.nbody or fext.shape[1] != 6 or dtau_dq.shape[0] != m.nv
            or dtau_dq.shape[1] != m.nv or dtau_dv.shape[0] != m.nv or dtau_dv.shape[1] != m.nv
            or mass.shape[0] != m.nv or mass.shape[1] != m.nv):
        return entry.BAD_SHAPE
    _rnea_derivatives_driver(d, q, v, a, use_fext, fext, dtau_dq, dtau_dv, mass)
    return entry.OK


_k_rnea_derivatives = entry.Kernel(
    _rnea_derivatives_checked,
    sig=(None, entry.IN1, entry.IN1, entry.IN1, None, entry.IN2, entry.OUT2, entry.OUT2,
         entry.OUT2))
# ── end of generated code ──


@njit(cache=True)
def _neg_product(A, X, tmp, out):
    """out = -A X (tmp = A X by BLAS dgemm: 2.4× our best loop at nv = 27, measured)."""
    np.dot(A, X, tmp)
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            out[i, j] = -tmp[i, j]


@entry.checked("_k_aba_derivatives", q="nq", v="nv", tau="nv", fext="nbody, 6",
               ddq_dq="out: nv, nv", ddq_dv="out: nv, nv", minv="out: nv, nv")
@njit(cache=True)
def _aba_derivatives_driver(d, q, v, tau, use_fext, fext, ddq_dq, ddq_dv, minv):
    """q̈ = ABA(q, v, τ); M⁻¹; ∂τ/∂q, ∂τ/∂q̇ at q̈; ∂q̈/∂x = -M⁻¹ ∂τ/∂x. Returns -1 or a code."""
    m = d.model
    nv = m.nv
    _set_state(m, d, q, v)
    bad = aba_kernel(m, d, tau, use_fext, fext, d.qacc)
    if bad >= 0:
        return bad
    work = np.empty((4, nv, nv))
    bad = minv_kernel(m, d, work[3])
    if bad != -1:
        return bad
    tau_id = np.empty(nv)
    rne(m, d, _FLAGS | RNE_FEXT if use_fext else _FLAGS, fext, tau_id)
    rnea_derivatives_kernel(m, d, use_fext, entry.plain(fext), work[0], work[1], work[2])
    _neg_product(work[3], work[0], work[2], ddq_dq)
    _neg_product(work[3], work[1], work[2], ddq_dv)
    for i in range(nv):
        for j in range(nv):
            minv[i, j] = work[3, i, j]
    return -1


# ── generated by tools/gen_entries.py from the declaration above: do not edit ──


@njit(cache=True, nogil=True)
def _aba_derivatives_checked(d, q, v, tau, use_fext, fext, ddq_dq, ddq_dv, minv):
    """_aba_derivatives_driver once the arguments' sizes match d's model; else entry.BAD_SHAPE."""
    m = d.model
    if (q.shape[0] != m.nq or v.shape[0] != m.nv or tau.shape[0] != m.nv
            or fext.shape[0] != m.nbody or fext.shape[1] != 6 or ddq_dq.shape[0] != m.nv
            or ddq_dq.shape[1] != m.nv or ddq_dv.shape[0] != m.nv or ddq_dv.shape[1] != m.nv
            or minv.shape[0] != m.nv or minv.shape[1] != m.nv):
        return entry.BAD_SHAPE
    return _aba_derivatives_driver(d, q, v, tau, use_fext, fext, ddq_dq, ddq_dv, minv)


_k_aba_derivatives = entry.Kernel(
    _aba_derivatives_checked,
    sig=(None, entry.IN1, entry.IN1, entry.IN1, None, entry.IN2, entry.OUT2, entry.OUT2,
         entry.OUT2))
# ── end of generated code ──


@entry.public("_k_rnea_derivatives(q, v, a, False, d.cfrc_ext, dtau_dq, dtau_dv, M) "
              "if f_ext is None "
              "else _k_rnea_derivatives(q, v, a, True, f_ext, dtau_dq, dtau_dv, M)",
              new=("dtau_dq: nv, nv", "dtau_dv: nv, nv", "M: nv, nv"),
              returns="dtau_dq, dtau_dv, M")
def rnea_derivatives(m, d, q, v, a, f_ext=None):
    """Partial derivatives of the inverse dynamics τ = rnea(q, v, a, f_ext).

    Pinocchio's computeRNEADerivatives: ∂τ/∂q in the tangent space (column j: d/dε of τ
    at `integrate_pos(q, ε e_j)`), ∂τ/∂v, and ∂τ/∂a = M, by the O(n·d) recursion of
    Carpentier & Mansard (RSS 2018) in the module docstring. One compiled call runs
    kinematics, com_pos, com_vel, the RNEA and the derivative passes. As `rnea`: M
    includes armature, gravity is m.opt.gravity, and f_ext are world-fixed wrenches at the
    bodies' centers of mass (so, unlike Pinocchio's local-frame fext, they do not turn with
    the body).

    Args:
        m: the Model.
        d: a Data for m. q, v, a are copied into d.qpos, d.qvel, d.qacc; the call fills what
            `rnea` fills, and d.crb (composite inertias).
        q: (nq,) positions.
        v: (nv,) velocities.
        a: (nv,) accelerations.
        f_ext: optional (nbody, 6) external wrenches, as in `rnea`: row b = (force, torque)
            in world axes, the force acting at body b's center of mass.

    Returns:
        (dtau_dq, dtau_dv, M), each (nv, nv).
    """
    # generated by tools/gen_entries.py from the declaration above: do not edit
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s:
        dtau_dq = empty((m.nv, m.nv))
        dtau_dv = empty((m.nv, m.nv))
        M = empty((m.nv, m.nv))
        ep = _k_rnea_derivatives.ep
        try:
            if f_ext is None:
                if ep(d._s, q, v, a, False, d.cfrc_ext, dtau_dq, dtau_dv, M) == -1:
                    return dtau_dq, dtau_dv, M
            elif ep(d._s, q, v, a, True, f_ext, dtau_dq, dtau_dv, M) == -1:
                return dtau_dq, dtau_dv, M
        except entry.FastPathMiss:
            pass
    entry.check_pair(m, d, "rnea_derivatives")
    q = entry.fresh(q, m._shq, "q", "rnea_derivatives")
    v = entry.fresh(v, m._shv, "v", "rnea_derivatives")
    a = entry.fresh(a, m._shv, "a", "rnea_derivatives")
    dtau_dq = empty((m.nv, m.nv))
    dtau_dv = empty((m.nv, m.nv))
    M = empty((m.nv, m.nv))
    if f_ext is None:
        _k_rnea_derivatives.ep(d._s, q, v, a, False, d.cfrc_ext, dtau_dq, dtau_dv, M)
    else:
        f_ext = entry.fresh(f_ext, (m.nbody, 6), "f_ext", "rnea_derivatives")
        _k_rnea_derivatives.ep(d._s, q, v, a, True, f_ext, dtau_dq, dtau_dv, M)
    return dtau_dq, dtau_dv, M


@entry.public("_k_aba_derivatives(q, v, tau, False, d.cfrc_ext, ddq_dq, ddq_dv, Minv) "
              "if f_ext is None "
              "else _k_aba_derivatives(q, v, tau, True, f_ext, ddq_dq, ddq_dv, Minv)",
              new=("ddq_dq: nv, nv", "ddq_dv: nv, nv", "Minv: nv, nv"),
              returns="ddq_dq, ddq_dv, Minv", pivot="articulated-inertia",
              errors={-2: (ValueError, "the model's dofs are not numbered depth-first (a "
                                       "subtree's dofs are not contiguous); build it with "
                                       "jointspace.compile_model")})
def aba_derivatives(m, d, q, v, tau, f_ext=None):
    """Partial derivatives of the forward dynamics q̈ = aba(q, v, tau, f_ext).

    Pinocchio's computeABADerivatives: ∂q̈/∂q in the tangent space (as
    `rnea_derivatives`), ∂q̈/∂v and ∂q̈/∂τ = M⁻¹. Differentiating M q̈ + b(q, v) = τ
    gives ∂q̈/∂x = -M⁻¹ ∂τ/∂x at q̈ = aba(q, v, tau), with ∂τ/∂x from
    `rnea_derivatives` and M⁻¹ from `minv` (Carpentier & Mansard, RSS 2018, §IV.C). One
    compiled call; O(n·d) for ∂τ/∂x, O(n²) for M⁻¹, and the two dense products (BLAS).

    Args:
        m: the Model.
        d: a Data for m. q, v are copied into d.qpos, d.qvel and the accelerations go to
            d.qacc; the call fills what `aba` and `rnea_derivatives` fill.
        q: (nq,) positions.
        v: (nv,) velocities.
        tau: (nv,) generalized forces.
        f_ext: optional (nbody, 6) external wrenches, as in `aba`.

    Returns:
        (ddq_dq, ddq_dv, Minv), each (nv, nv).

    Raises:
        SingularMassError: the model has dofs that move no mass, or an articulated-inertia
            pivot is not positive at q.
    """
    # generated by tools/gen_entries.py from the declaration above: do not edit
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s and not m.singular_dofs:
        ddq_dq = empty((m.nv, m.nv))
        ddq_dv = empty((m.nv, m.nv))
        Minv = empty((m.nv, m.nv))
        ep = _k_aba_derivatives.ep
        try:
            if f_ext is None:
                if ep(d._s, q, v, tau, False, d.cfrc_ext, ddq_dq, ddq_dv, Minv) == -1:
                    return ddq_dq, ddq_dv, Minv
            elif ep(d._s, q, v, tau, True, f_ext, ddq_dq, ddq_dv, Minv) == -1:
                return ddq_dq, ddq_dv, Minv
        except entry.FastPathMiss:
            pass
    entry.check_pair(m, d, "aba_derivatives")
    entry.check_not_singular(m, "aba_derivatives")
    q = entry.fresh(q, m._shq, "q", "aba_derivatives")
    v = entry.fresh(v, m._shv, "v", "aba_derivatives")
    tau = entry.fresh(tau, m._shv, "tau", "aba_derivatives")
    ddq_dq = empty((m.nv, m.nv))
    ddq_dv = empty((m.nv, m.nv))
    Minv = empty((m.nv, m.nv))
    if f_ext is None:
        status = _k_aba_derivatives.ep(d._s, q, v, tau, False, d.cfrc_ext, ddq_dq, ddq_dv, Minv)
    else:
        f_ext = entry.fresh(f_ext, (m.nbody, 6), "f_ext", "aba_derivatives")
        status = _k_aba_derivatives.ep(d._s, q, v, tau, True, f_ext, ddq_dq, ddq_dv, Minv)
    if status >= 0:
        entry.raise_pivot(m, status, "aba_derivatives", "articulated-inertia")
    if status == -2:
        raise ValueError("aba_derivatives: the model's dofs are not numbered depth-first (a "
                         "subtree's dofs are not contiguous); build it with "
                         "jointspace.compile_model")
    return ddq_dq, ddq_dv, Minv
