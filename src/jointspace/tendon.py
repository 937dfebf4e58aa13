"""Tendons: lengths, Jacobians and velocities (MuJoCo's mj_tendon, engine_core_smooth.c).

A spatial tendon is a path through sites, straight between consecutive sites; a pulley
(wrap_prm: its divisor) divides the length and Jacobian of the segments after it:

  ten_length = Σ_seg |p1 − p0| / divisor
  ten_J      = Σ_seg u · (jacp(p1) − jacp(p0)) / divisor,   u = (p1 − p0)/|p1 − p0|

(wrapping around geoms is refused by the loader).

A fixed tendon is a linear combination of scalar (hinge or slide) joint positions, its
path elements wrap_* [tendon_adr, tendon_adr + tendon_num) holding the joints (wrap_objid)
and their coefficients (wrap_prm):

  ten_length = Σ_k coef_k qpos[jnt_qposadr[j_k]]
  ten_J      = Σ_k coef_k e_{jnt_dofadr[j_k]}          (constant: no bias term)
  ten_velocity = ten_J qvel

The tendon's forces reach the joints through ten_J: springs and dampers
(`jointspace.passive`), limit and friction-loss rows (`jointspace.constraint.rows`),
`<equality><tendon>` rows, tendon actuators (`jointspace.actuation`) and the armature,
M += armature ten_Jᵀ ten_J (`tendon_armature`, MuJoCo's mj_tendonArmature). Every stage
returns at once when the model has no tendon.
"""

import math

from numba import njit

from jointspace.types import MINVAL, WRAP_JOINT, WRAP_PULLEY


@njit(cache=True)
def _add_point_jac(m, d, b, p, u0, u1, u2, scale, row):
    """row += scale · uᵀ jacp(b, p): the translation Jacobian of point p fixed to body b.

    Column k of jacp on b's dof chain is cdof_lin[k] + cdof_rot[k] × (p − subtree_com[root]).
    """
    w = m.body_weldid[b]
    num = m.body_dofnum[w]
    if num == 0:
        return
    r = m.body_rootid[b]
    o0 = p[0] - d.subtree_com[r, 0]
    o1 = p[1] - d.subtree_com[r, 1]
    o2 = p[2] - d.subtree_com[r, 2]
    k = m.body_dofadr[w] + num - 1
    while k >= 0:
        c = d.cdof[k]
        jp0 = c[3] + c[1] * o2 - c[2] * o1
        jp1 = c[4] + c[2] * o0 - c[0] * o2
        jp2 = c[5] + c[0] * o1 - c[1] * o0
        row[k] += scale * (u0 * jp0 + u1 * jp1 + u2 * jp2)
        k = m.dof_parentid[k]


@njit(cache=True)
def _spatial(m, d, i, wrapcount):
    """Length, Jacobian and path points of spatial tendon i (sites and pulleys).

    Each site-to-site segment adds |p1 − p0| / divisor to the length and
    u · (jacp(p1) − jacp(p0)) / divisor to ten_J, u = (p1 − p0)/|p1 − p0|; a pulley sets
    the divisor of the segments after it. Path points: every site (wrap_obj −1) and pulley
    (−2, at the origin), as mj_tendon records them. Returns the new wrap count.
    """
    adr = m.tendon_adr[i]
    num = m.tendon_num[i]
    row = d.ten_J[i]
    divisor = 1.0
    length = 0.0
    j = 0
    while j < num - 1:
        t0 = m.wrap_type[adr + j]
        t1 = m.wrap_type[adr + j + 1]
        if t0 == WRAP_PULLEY or t1 == WRAP_PULLEY:
            if t0 == WRAP_PULLEY:
                divisor = m.wrap_prm[adr + j]
                d.wrap_xpos[wrapcount, 0] = 0.0
                d.wrap_xpos[wrapcount, 1] = 0.0
                d.wrap_xpos[wrapcount, 2] = 0.0
                d.wrap_obj[wrapcount] = -2
                d.ten_wrapnum[i] += 1
                wrapcount += 1
            j += 1
            continue
        s0 = m.wrap_objid[adr + j]
        s1 = m.wrap_objid[adr + j + 1]
        p0 = d.site_xpos[s0]
        p1 = d.site_xpos[s1]
        u0 = p1[0] - p0[0]
        u1 = p1[1] - p0[1]
        u2 = p1[2] - p0[2]
        dist = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        length += dist / divisor
        b0 = m.site_bodyid[s0]
        b1 = m.site_bodyid[s1]
        if b0 != b1:
            # u = (p1 − p0)/|p1 − p0| (MuJoCo's mju_normalize3: (1, 0, 0) below MINVAL)
            if dist < MINVAL:
                u0, u1, u2 = 1.0, 0.0, 0.0
            else:
                u0, u1, u2 = u0 / dist, u1 / dist, u2 / dist
            _add_point_jac(m, d, b1, p1, u0, u1, u2, 1.0 / divisor, row)
            _add_point_jac(m, d, b0, p0, u0, u1, u2, -1.0 / divisor, row)
        d.wrap_xpos[wrapcount] = p0
        d.wrap_obj[wrapcount] = -1
        d.ten_wrapnum[i] += 1
        wrapcount += 1
        j += 1
        # the last site before a pulley or the end of the path
        if j == num - 1 or m.wrap_type[adr + j + 1] == WRAP_PULLEY:
            d.wrap_xpos[wrapcount] = p1
            d.wrap_obj[wrapcount] = -1
            d.ten_wrapnum[i] += 1
            wrapcount += 1
    d.ten_length[i] = length
    return wrapcount


@njit(cache=True)
def tendon_stage(m, d):
    """ten_length, ten_J (dense, ntendon × nv), ten_wrapadr, ten_wrapnum, wrap_obj, wrap_xpos.

    mj_tendon: fixed tendons record no path points; spatial ones their sites and pulleys.
    """
    if m.ntendon == 0:
        return
    J = d.ten_J
    wrapcount = 0
    for i in range(m.ntendon):
        for c in range(m.nv):
            J[i, c] = 0.0
        d.ten_wrapadr[i] = wrapcount
        d.ten_wrapnum[i] = 0
        adr = m.tendon_adr[i]
        if m.wrap_type[adr] != WRAP_JOINT:
            wrapcount = _spatial(m, d, i, wrapcount)
            continue
        length = 0.0
        for k in range(adr, adr + m.tendon_num[i]):
            j = m.wrap_objid[k]
            coef = m.wrap_prm[k]
            # L += coef q_j;  J[dof_j] += coef
            length += coef * d.qpos[m.jnt_qposadr[j]]
            J[i, m.jnt_dofadr[j]] += coef
        d.ten_length[i] = length


@njit(cache=True)
def tendon_velocity(m, d):
    """ten_velocity = ten_J qvel."""
    for i in range(m.ntendon):
        s = 0.0
        for c in range(m.nv):
            s += d.ten_J[i, c] * d.qvel[c]
        d.ten_velocity[i] = s


@njit(cache=True)
def tendon_armature(m, d):
    """qM += Σ_t armature_t ten_J_tᵀ ten_J_t on M's sparsity (mj_tendonArmature).

    The compiler allows armature only on tendons whose dofs lie on one branch of the tree,
    so every product ten_J[i] ten_J[j] has its (i, ancestor j) entry in qM.
    """
    for t in range(m.ntendon):
        a = m.tendon_armature[t]
        if a == 0.0:
            continue
        J = d.ten_J[t]
        for i in range(m.nv):
            if J[i] == 0.0:
                continue
            # row i of the lower triangle: M[i, j] for j = i and its ancestors
            adr = m.dof_Madr[i]
            j = i
            while j >= 0:
                d.qM[adr] += a * J[i] * J[j]
                adr += 1
                j = m.dof_parentid[j]


@njit(cache=True)
def tendon_armature_force(m, d, qacc, tau):
    """tau += Σ_t armature_t ten_J_tᵀ (ten_J_t qacc): the tendon armature's share of M qacc."""
    for t in range(m.ntendon):
        a = m.tendon_armature[t]
        if a == 0.0:
            continue
        J = d.ten_J[t]
        s = 0.0
        for c in range(m.nv):
            s += J[c] * qacc[c]
        for c in range(m.nv):
            tau[c] += a * s * J[c]
