"""Coriolis matrix and Christoffel symbols, from spatial algebra in the c-frame.

Notation: S_a = cdof[a] (motion axis of dof a), I_b = cinert[b], Ic_b = crb[b] (composite
inertia of the subtree of b), v_b = cvel[b], ×ₘ / ×* the motion / force cross products,
a ≼ b "dof a is an ancestor of dof b or b itself". Every quantity is expressed in one frame
(world axes at the c-frame origin of this instant), so time and configuration derivatives
follow the rigid-motion rules Ṡ = w ×ₘ S and İ = v ×* I − I (v ×ₘ ·).

Coriolis matrix (Echeandia & Wensing 2021, "Numerical methods to compute the Coriolis
matrix and Christoffel symbols for rigid-body systems", J. Comput. Nonlinear Dyn. 16(9);
Pinocchio's computeCoriolisMatrix):
    B_b = ½ (v_b ×* I_b − I_b (v_b ×ₘ ·) + (I_b v_b) ×̄),   with (f ×̄) u = u ×* f
    C_ij = S_i · (Ic_d Ṡ_j + Bc_d S_j),   d = the body of the deeper of i, j
with Bc the subtree sums of B and Ṡ_a the true time derivative of S_a: w_a ×ₘ S_a, w_a the
velocity of the frame carrying the axis (the body velocity up to and including a's joint;
free-joint translation axes are fixed, Ṡ = 0). Then C v = c(q, v) − g(q) (the bias force
without gravity) and Ṁ − 2C is skew-symmetric.

Christoffel symbols of the first kind, Γ_ijk = ½ (∂_k M_ij + ∂_j M_ik − ∂_i M_jk), with
M_ij = S_i · Ic_d S_j and, for a perturbation of q_k (a rigid motion with twist S_k of the
bodies it carries),
    ∂_k M_ij = [k moves S_i] (S_k ×ₘ S_i) · Ic_d S_j + [k moves S_j] S_i · Ic_d (S_k ×ₘ S_j)
               + S_i · (S_k ×* (Ic' S_j) − Ic' (S_k ×ₘ S_j))
where Ic' is the part of Ic_d that q_k moves: Ic_d when body(k) is an ancestor of d (or d),
Ic_body(k) when body(k) is a descendant of d, 0 otherwise. "k moves S_a" when k ≼ a, or when
a and k are rotational dofs of the same ball or free joint (their axes turn together).
References: Featherstone, RBDA §2.9 and §6.2 for the derivative rules; Todorov's slides (000)
for Γ and the geodesic form q̈ + M⁻¹Γ(q̇, q̇) = 0 of unforced motion.

Ball and free joints: q-derivatives are taken along `integrate_pos`, i.e. in the local
tangent coordinates of the velocity (ω in the child frame). These coordinates are not
holonomic, so for models with ball or free joints Σ_jk Γ_ijk v_j v_k differs from the
velocity product c − g by the Boltzmann–Hamel (Lie bracket) terms, and C_ij ≠ Σ_k Γ_ijk v_k
(example: a free rigid body has constant M in local coordinates, so Γ = 0, yet
c = ω × I ω). For hinge and slide joints the identities C = Γ·v and c − g = Γ(v, v) hold.
As in MuJoCo, only slide joints may follow a ball joint in the same body.
"""

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.dynamics.crba import crb_stage
from jointspace.dynamics.factor import factor_m_stage, solve_ld
from jointspace.kinematics import com_pos, com_vel_stage, kinematics_bodies
from jointspace.spatial import cross_force, cross_motion, dot6, mul_inert_vec
from jointspace.types import JNT_BALL, JNT_FREE


@njit(cache=True)
def _inert_mat(out, c):
    """Write into out (6×6) the com-based inertia c (MuJoCo's 10-number layout) as a matrix."""
    e = np.zeros(6)
    col = np.empty(6)
    for k in range(6):
        e[k] = 1.0
        mul_inert_vec(col, c, e)
        out[:, k] = col
        e[k] = 0.0


@njit(cache=True)
def _body_coriolis(out, c, v):
    """Body Coriolis factor out (6×6) = ½ (v ×* I − I (v ×ₘ ·) + (I v) ×̄), inertia c, velocity v."""
    inert = np.empty((6, 6))
    _inert_mat(inert, c)
    h = np.empty(6)
    mul_inert_vec(h, c, v)
    e = np.zeros(6)
    iu = np.empty(6)
    vxu = np.empty(6)
    a = np.empty(6)
    b = np.empty(6)
    f = np.empty(6)
    for k in range(6):
        e[k] = 1.0
        # column k: v ×* (I e_k) − I (v ×ₘ e_k) + e_k ×* h
        for r in range(6):
            iu[r] = inert[r, k]
        cross_force(a, v, iu)
        cross_motion(vxu, v, e)
        for r in range(6):
            s = 0.0
            for t in range(6):
                s += inert[r, t] * vxu[t]
            b[r] = s
        cross_force(f, e, h)
        for r in range(6):
            out[r, k] = 0.5 * (a[r] - b[r] + f[r])
        e[k] = 0.0


@njit(cache=True)
def _axis_rates(m, d, sdot):
    """Axis rates sdot[a] = Ṡ_a = w_a ×ₘ S_a, the true time derivative of dof axes (needs cvel)."""
    w = np.empty(6)
    for b in range(1, m.nbody):
        w[:] = d.cvel[m.body_parentid[b]]
        for j in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]):
            jt = m.jnt_type[j]
            a0 = m.jnt_dofadr[j]
            n = 6 if jt == JNT_FREE else (3 if jt == JNT_BALL else 1)
            # w = velocity of the frame after this joint
            for a in range(a0, a0 + n):
                for k in range(6):
                    w[k] += d.cdof[a, k] * d.qvel[a]
            for a in range(a0, a0 + n):
                if jt == JNT_FREE and a < a0 + 3:
                    sdot[a, :] = 0.0
                else:
                    cross_motion(sdot[a], w, d.cdof[a])


@njit(cache=True)
def _coriolis(m, d, C):
    """C (nv×nv) with C v = c − g and Ṁ − 2C skew; needs kinematics, com_pos, crb, com_vel."""
    nv = m.nv
    nb = m.nbody
    C[:, :] = 0.0
    # Bc_b = Σ B over the subtree of b
    bc = np.zeros((nb, 6, 6))
    for b in range(1, nb):
        _body_coriolis(bc[b], d.cinert[b], d.cvel[b])
    for b in range(nb - 1, 0, -1):
        p = m.body_parentid[b]
        if p > 0:
            bc[p] += bc[b]
    sdot = np.empty((nv, 6))
    _axis_rates(m, d, sdot)
    ys = np.empty(6)
    bts = np.empty(6)
    e = np.empty(6)
    t = np.empty(6)
    for i in range(nv):
        bi = m.dof_bodyid[i]
        s_i = d.cdof[i]
        # i is the deeper dof: ys = Ic S_i, bts = Bcᵀ S_i, e = Ic Ṡ_i + Bc S_i
        mul_inert_vec(ys, d.crb[bi], s_i)
        mul_inert_vec(e, d.crb[bi], sdot[i])
        for r in range(6):
            s1 = 0.0
            s2 = 0.0
            for k in range(6):
                s1 += bc[bi, k, r] * s_i[k]
                s2 += bc[bi, r, k] * s_i[k]
            bts[r] = s1
            t[r] = s2
        for r in range(6):
            e[r] += t[r]
        j = i
        while j >= 0:
            # C_ij = S_i · (Ic Ṡ_j + Bc S_j),  C_ji = S_j · (Ic Ṡ_i + Bc S_i)
            C[i, j] = dot6(ys, sdot[j]) + dot6(bts, d.cdof[j])
            if j != i:
                C[j, i] = dot6(d.cdof[j], e)
            j = m.dof_parentid[j]


@njit(cache=True, nogil=True)
def _coriolis_driver(m, d, C):
    kinematics_bodies(m, d)
    com_pos(m, d)
    crb_stage(m, d)
    com_vel_stage(m, d)
    _coriolis(m, d, C)


@njit(cache=True)
def _rotation_group(m):
    """Rotation groups: grp[a] = joint id for rotational dofs of ball/free joints, −1 otherwise."""
    grp = np.full(m.nv, -1, dtype=np.int64)
    for j in range(m.njnt):
        jt = m.jnt_type[j]
        if jt == JNT_BALL:
            for a in range(m.jnt_dofadr[j], m.jnt_dofadr[j] + 3):
                grp[a] = j
        elif jt == JNT_FREE:
            for a in range(m.jnt_dofadr[j] + 3, m.jnt_dofadr[j] + 6):
                grp[a] = j
    return grp


@njit(cache=True)
def _inertia_derivative(m, d, dM):
    """Inertia derivative dM[i, j, k] = ∂M_ij/∂q_k along integrate_pos; needs crb.

    See the module docstring for the formula.
    """
    nv = m.nv
    nb = m.nbody
    dM[:, :, :] = 0.0
    # dof and body ancestry: danc[a, b] = a ≼ b, banc[a, b] = body a is b or an ancestor
    danc = np.zeros((nv, nv), dtype=np.bool_)
    for b in range(nv):
        a = b
        while a >= 0:
            danc[a, b] = True
            a = m.dof_parentid[a]
    banc = np.zeros((nb, nb), dtype=np.bool_)
    for b in range(nb):
        a = b
        while True:
            banc[a, b] = True
            if a == 0:
                break
            a = m.body_parentid[a]
    grp = _rotation_group(m)
    moves = np.zeros((nv, nv), dtype=np.bool_)
    for k in range(nv):
        for a in range(nv):
            moves[k, a] = danc[k, a] or (grp[k] >= 0 and grp[k] == grp[a])
    icsj = np.empty(6)
    skxsi = np.empty(6)
    skxsj = np.empty(6)
    tmp = np.empty(6)
    tmp2 = np.empty(6)
    tmp3 = np.empty(6)
    for i in range(nv):
        bd = m.dof_bodyid[i]
        j = i
        while j >= 0:
            # i is the deeper dof: M_ij = S_j · Ic_bd S_i (symmetric)
            s_i = d.cdof[i]
            s_j = d.cdof[j]
            mul_inert_vec(icsj, d.crb[bd], s_j)
            for k in range(nv):
                s_k = d.cdof[k]
                val = 0.0
                if moves[k, j]:
                    cross_motion(skxsj, s_k, s_j)
                    mul_inert_vec(tmp, d.crb[bd], skxsj)
                    val += dot6(s_i, tmp)
                if moves[k, i]:
                    cross_motion(skxsi, s_k, s_i)
                    val += dot6(skxsi, icsj)
                bk = m.dof_bodyid[k]
                part = -1
                if banc[bk, bd]:
                    part = bd
                elif banc[bd, bk]:
                    part = bk
                if part >= 0:
                    # S_i · (S_k ×* (Ic' S_j) − Ic' (S_k ×ₘ S_j))
                    mul_inert_vec(tmp, d.crb[part], s_j)
                    cross_force(tmp2, s_k, tmp)
                    cross_motion(skxsj, s_k, s_j)
                    mul_inert_vec(tmp3, d.crb[part], skxsj)
                    val += dot6(s_i, tmp2) - dot6(s_i, tmp3)
                dM[i, j, k] = val
                dM[j, i, k] = val
            j = m.dof_parentid[j]


@njit(cache=True)
def _christoffel(m, d, G):
    """Christoffel symbols G[i, j, k] = ½ (∂_k M_ij + ∂_j M_ik − ∂_i M_jk); needs crb."""
    nv = m.nv
    dM = np.empty((nv, nv, nv))
    _inertia_derivative(m, d, dM)
    for i in range(nv):
        for j in range(nv):
            for k in range(nv):
                G[i, j, k] = 0.5 * (dM[i, j, k] + dM[i, k, j] - dM[j, k, i])


@njit(cache=True, nogil=True)
def _christoffel_driver(m, d, G, second_kind):
    kinematics_bodies(m, d)
    com_pos(m, d)
    crb_stage(m, d)
    _christoffel(m, d, G)
    if second_kind:
        nv = m.nv
        bad = factor_m_stage(m, d)
        if bad >= 0:
            return bad
        x = np.empty((1, nv))
        for j in range(nv):
            for k in range(nv):
                for i in range(nv):
                    x[0, i] = G[i, j, k]
                solve_ld(m, d.qLD, d.qLDiagInv, x)
                for i in range(nv):
                    G[i, j, k] = x[0, i]
    return -1


@njit(cache=True, nogil=True)
def _inertia_derivative_driver(m, d, dM):
    kinematics_bodies(m, d)
    com_pos(m, d)
    crb_stage(m, d)
    _inertia_derivative(m, d, dM)


_k_coriolis = entry.Kernel(_coriolis_driver)
_k_christoffel = entry.Kernel(_christoffel_driver)
_k_inertia_derivative = entry.Kernel(_inertia_derivative_driver)


def _set_state(m, d, q, v, fname):
    entry.check_pair(m, d, fname)
    if q is not None:
        d.qpos[:] = entry.vec(q, m.nq, "q", fname)
    if v is not None:
        d.qvel[:] = entry.vec(v, m.nv, "v", fname)


def coriolis_matrix(m, d, q=None, v=None):
    """Coriolis/centrifugal matrix C(q, v), Pinocchio's computeCoriolisMatrix in our coordinates.

    C v = c(q, v) − g(q) (qfrc_bias without gravity) and Ṁ − 2C is skew-symmetric, so
    d/dt(½ vᵀMv) = vᵀ(τ − g) along the motion. Formula in the module docstring.

    Args:
        m: the Model.
        d: a Data for m; q and v, when given, are copied into d.qpos and d.qvel. Fills the
            kinematic fields, crb, qM, cvel and cdof_dot.
        q: (nq,) positions.
        v: (nv,) velocities.

    Returns:
        (nv, nv) C.
    """
    _set_state(m, d, q, v, "coriolis_matrix")
    C = np.empty((m.nv, m.nv))
    ep = _k_coriolis.ep
    ep(m._s, d._s, C)
    return C


def inertia_derivative(m, d, q=None):
    """∂M/∂q: out[i, j, k] = ∂M_ij/∂q_k, q_k moved along `integrate_pos` (local for ball/free).

    Args:
        m: the Model.
        d: a Data for m; q, when given, is copied into d.qpos.
        q: (nq,) positions.

    Returns:
        (nv, nv, nv) array.
    """
    _set_state(m, d, q, None, "inertia_derivative")
    dM = np.empty((m.nv, m.nv, m.nv))
    ep = _k_inertia_derivative.ep
    ep(m._s, d._s, dM)
    return dM


def christoffel(m, d, q=None):
    """Christoffel symbols of the first kind Γ_ijk = ½ (∂_k M_ij + ∂_j M_ik − ∂_i M_jk).

    Γ is symmetric in (j, k). For hinge and slide joints, c(q, v) − g(q) = Σ_jk Γ_ijk v_j v_k
    and coriolis_matrix = Σ_k Γ_ijk v_k. For ball and free joints the derivatives are taken
    in the local tangent coordinates of the velocity, where these identities gain Lie
    bracket terms (see the module docstring).

    Args:
        m: the Model.
        d: a Data for m; q, when given, is copied into d.qpos.
        q: (nq,) positions.

    Returns:
        (nv, nv, nv) Γ, indexed [i, j, k].
    """
    _set_state(m, d, q, None, "christoffel")
    G = np.empty((m.nv, m.nv, m.nv))
    ep = _k_christoffel.ep
    ep(m._s, d._s, G, False)
    return G


def christoffel_second_kind(m, d, q=None):
    """Christoffel symbols of the second kind Γ^i_jk = Σ_l (M⁻¹)_il Γ_ljk.

    Unforced motion without gravity of a hinge/slide model follows the geodesic equation
    q̈^i + Σ_jk Γ^i_jk q̇^j q̇^k = 0.

    Args:
        m: the Model.
        d: a Data for m; q, when given, is copied into d.qpos. Fills qM and qLD.
        q: (nq,) positions.

    Returns:
        (nv, nv, nv) array indexed [i, j, k].
    """
    from jointspace.diagnostics import raise_pivot

    _set_state(m, d, q, None, "christoffel_second_kind")
    G = np.empty((m.nv, m.nv, m.nv))
    ep = _k_christoffel.ep
    bad = ep(m._s, d._s, G, True)
    if bad >= 0:
        raise_pivot(m, bad, "christoffel_second_kind", "LᵀDL")
    return G
