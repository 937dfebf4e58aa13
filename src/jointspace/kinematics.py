"""Forward kinematics, com-based quantities and Jacobians.

Stages (each a compiled kernel over the model/data structs, mirroring MuJoCo's
engine_core_smooth.c):
  _kinematics: xpos, xquat, xmat, xanchor, xaxis, xipos, ximat (_kinematics_bodies), then
               geom_xpos/xmat, site_xpos/xmat (_kinematics_frames)
  _com_pos:    subtree_com, cinert, cdof
  _com_vel:    cvel, cdof_dot
Quaternions are composed along the tree and renormalized after every joint rotation, as the
slides (000, "Forward kinematics") advise, so round-off does not accumulate.

Com-based ("c-frame") spatial quantities use world axes and the origin at the subtree center
of mass of the body's kinematic-tree root, exactly as MuJoCo does, so they compare by name.
"""

import math

import numpy as np
from numba import njit, uint64

from jointspace import _entry
from jointspace.rotation import (
    cross_motion,
    quat_mul_s,
    quat_normalize_s,
    quat_to_mat_row,
    rot_vec_quat_s,
)
from jointspace.types import JNT_BALL, JNT_FREE, JNT_SLIDE

_MINVAL = 1e-15


@njit(cache=True)
def _kinematics_bodies(m, d):
    """World poses of bodies, joint anchors/axes and inertial frames (mj_kinematics).

    x_b = x_parent + R_parent body_pos,  q_b = q_parent ⊗ body_quat, then for each joint:
    slide  x += axis (q - q0);  hinge/ball  q ← normalize(q ⊗ q_loc), x = anchor - R jnt_pos.
    A free joint reads the pose from qpos. Scalar style: no array views or temporaries.
    """
    nbody = m.nbody
    parentid = m.body_parentid
    jntadr_ = m.body_jntadr
    jntnum_ = m.body_jntnum
    mocapid = m.body_mocapid
    body_pos = m.body_pos
    body_quat = m.body_quat
    body_ipos = m.body_ipos
    body_iquat = m.body_iquat
    jnt_type = m.jnt_type
    jnt_qposadr = m.jnt_qposadr
    jnt_pos = m.jnt_pos
    jnt_axis = m.jnt_axis
    qpos0 = m.qpos0
    qpos = d.qpos
    xpos = d.xpos
    xquat = d.xquat
    xmat = d.xmat
    xipos = d.xipos
    ximat = d.ximat
    xanchor = d.xanchor
    xaxis = d.xaxis
    mocap_pos = d.mocap_pos
    mocap_quat = d.mocap_quat
    for k in range(3):
        xpos[0, k] = 0.0
        xipos[0, k] = 0.0
    xquat[0, 0] = 1.0
    xquat[0, 1] = xquat[0, 2] = xquat[0, 3] = 0.0
    quat_to_mat_row(xmat, 0, 1.0, 0.0, 0.0, 0.0)
    quat_to_mat_row(ximat, 0, 1.0, 0.0, 0.0, 0.0)
    for i in range(1, nbody):
        ja = uint64(jntadr_[i])
        jn = jntnum_[i]
        if jn == 1 and jnt_type[ja] == JNT_FREE:
            qa = uint64(jnt_qposadr[ja])
            p0 = qpos[qa]
            p1 = qpos[qa + 1]
            p2 = qpos[qa + 2]
            q0, q1, q2, q3 = quat_normalize_s(qpos[qa + 3], qpos[qa + 4], qpos[qa + 5],
                                              qpos[qa + 6])
            xanchor[ja, 0] = p0
            xanchor[ja, 1] = p1
            xanchor[ja, 2] = p2
            xaxis[ja, 0] = jnt_axis[ja, 0]
            xaxis[ja, 1] = jnt_axis[ja, 1]
            xaxis[ja, 2] = jnt_axis[ja, 2]
        else:
            p = uint64(parentid[i])
            mc = mocapid[i]
            if mc >= 0:
                b0 = mocap_pos[mc, 0]
                b1 = mocap_pos[mc, 1]
                b2 = mocap_pos[mc, 2]
                c0, c1, c2, c3 = quat_normalize_s(mocap_quat[mc, 0], mocap_quat[mc, 1],
                                                  mocap_quat[mc, 2],
                                       mocap_quat[mc, 3])
            else:
                b0 = body_pos[i, 0]
                b1 = body_pos[i, 1]
                b2 = body_pos[i, 2]
                c0 = body_quat[i, 0]
                c1 = body_quat[i, 1]
                c2 = body_quat[i, 2]
                c3 = body_quat[i, 3]
            # x = x_parent + R_parent body_pos;  q = q_parent ⊗ body_quat
            p0 = xpos[p, 0] + xmat[p, 0] * b0 + xmat[p, 1] * b1 + xmat[p, 2] * b2
            p1 = xpos[p, 1] + xmat[p, 3] * b0 + xmat[p, 4] * b1 + xmat[p, 5] * b2
            p2 = xpos[p, 2] + xmat[p, 6] * b0 + xmat[p, 7] * b1 + xmat[p, 8] * b2
            q0, q1, q2, q3 = quat_mul_s(xquat[p, 0], xquat[p, 1], xquat[p, 2], xquat[p, 3],
                                  c0, c1, c2, c3)
            for jj in range(jn):
                j = ja + uint64(jj)
                qa = uint64(jnt_qposadr[j])
                jt = jnt_type[j]
                a0, a1, a2 = rot_vec_quat_s(q0, q1, q2, q3, jnt_axis[j, 0], jnt_axis[j, 1],
                                            jnt_axis[j, 2])
                xaxis[j, 0] = a0
                xaxis[j, 1] = a1
                xaxis[j, 2] = a2
                r0, r1, r2 = rot_vec_quat_s(q0, q1, q2, q3, jnt_pos[j, 0], jnt_pos[j, 1],
                                            jnt_pos[j, 2])
                n0 = p0 + r0
                n1 = p1 + r1
                n2 = p2 + r2
                xanchor[j, 0] = n0
                xanchor[j, 1] = n1
                xanchor[j, 2] = n2
                if jt == JNT_SLIDE:
                    dq = qpos[qa] - qpos0[qa]
                    p0 += a0 * dq
                    p1 += a1 * dq
                    p2 += a2 * dq
                else:
                    if jt == JNT_BALL:
                        l0, l1, l2, l3 = quat_normalize_s(qpos[qa], qpos[qa + 1], qpos[qa + 2],
                                                          qpos[qa + 3])
                    else:
                        half = 0.5 * (qpos[qa] - qpos0[qa])
                        s = math.sin(half)
                        l0 = math.cos(half)
                        l1 = jnt_axis[j, 0] * s
                        l2 = jnt_axis[j, 1] * s
                        l3 = jnt_axis[j, 2] * s
                    q0, q1, q2, q3 = quat_mul_s(q0, q1, q2, q3, l0, l1, l2, l3)
                    q0, q1, q2, q3 = quat_normalize_s(q0, q1, q2, q3)
                    r0, r1, r2 = rot_vec_quat_s(q0, q1, q2, q3, jnt_pos[j, 0], jnt_pos[j, 1],
                                                jnt_pos[j, 2])
                    p0 = n0 - r0
                    p1 = n1 - r1
                    p2 = n2 - r2
        q0, q1, q2, q3 = quat_normalize_s(q0, q1, q2, q3)
        xpos[i, 0] = p0
        xpos[i, 1] = p1
        xpos[i, 2] = p2
        xquat[i, 0] = q0
        xquat[i, 1] = q1
        xquat[i, 2] = q2
        xquat[i, 3] = q3
        quat_to_mat_row(xmat, i, q0, q1, q2, q3)
        # inertial frame: xipos = x + R body_ipos, ximat = R(q ⊗ body_iquat)
        w0, w1, w2, w3 = quat_mul_s(q0, q1, q2, q3, body_iquat[i, 0], body_iquat[i, 1],
                              body_iquat[i, 2], body_iquat[i, 3])
        quat_to_mat_row(ximat, i, w0, w1, w2, w3)
        r0, r1, r2 = rot_vec_quat_s(q0, q1, q2, q3, body_ipos[i, 0], body_ipos[i, 1],
                                    body_ipos[i, 2])
        xipos[i, 0] = p0 + r0
        xipos[i, 1] = p1 + r1
        xipos[i, 2] = p2 + r2


@njit(cache=True, inline="always")
def _attached_frames(n, bodyid, pos, quat, xpos, xquat, out_pos, out_mat):
    """Poses of n frames attached to bodies: x = x_b + R_b pos, R = R(q_b ⊗ quat)."""
    for g in range(n):
        b = uint64(bodyid[g])
        q0 = xquat[b, 0]
        q1 = xquat[b, 1]
        q2 = xquat[b, 2]
        q3 = xquat[b, 3]
        w0, w1, w2, w3 = quat_mul_s(q0, q1, q2, q3, quat[g, 0], quat[g, 1], quat[g, 2],
                                    quat[g, 3])
        quat_to_mat_row(out_mat, g, w0, w1, w2, w3)
        r0, r1, r2 = rot_vec_quat_s(q0, q1, q2, q3, pos[g, 0], pos[g, 1], pos[g, 2])
        out_pos[g, 0] = xpos[b, 0] + r0
        out_pos[g, 1] = xpos[b, 1] + r1
        out_pos[g, 2] = xpos[b, 2] + r2


@njit(cache=True)
def _kinematics_frames(m, d):
    """World poses of geoms and sites from their bodies' poses (mj_kinematics, second part)."""
    _attached_frames(m.ngeom, m.geom_bodyid, m.geom_pos, m.geom_quat, d.xpos, d.xquat,
                     d.geom_xpos, d.geom_xmat)
    _attached_frames(m.nsite, m.site_bodyid, m.site_pos, m.site_quat, d.xpos, d.xquat,
                     d.site_xpos, d.site_xmat)


@njit(cache=True)
def _kinematics(m, d):
    """World poses of bodies, joints, inertial frames, geoms and sites (mj_kinematics)."""
    _kinematics_bodies(m, d)
    _kinematics_frames(m, d)


@njit(cache=True)
def _com_pos(m, d):
    """Subtree centers of mass, com-based inertias and motion axes (mj_comPos)."""
    nbody = m.nbody
    # subtree_com = Σ m_k xipos_k / Σ m_k over each subtree (backward pass)
    for i in range(nbody):
        for k in range(3):
            d.subtree_com[i, k] = d.xipos[i, k] * m.body_mass[i]
    for i in range(nbody - 1, 0, -1):
        p = m.body_parentid[i]
        for k in range(3):
            d.subtree_com[p, k] += d.subtree_com[i, k]
    for i in range(nbody):
        if m.body_subtreemass[i] < _MINVAL:
            d.subtree_com[i, :] = d.xipos[i]
        else:
            inv = 1.0 / m.body_subtreemass[i]
            for k in range(3):
                d.subtree_com[i, k] *= inv
    # cinert: I_c = R diag(I) Rᵀ + m (|r|² E - r rᵀ), r = xipos - subtree_com[root]
    d.cinert[0, :] = 0.0
    for i in range(1, nbody):
        root = m.body_rootid[i]
        mat = d.ximat[i]
        inert = m.body_inertia[i]
        mass = m.body_mass[i]
        r0 = d.xipos[i, 0] - d.subtree_com[root, 0]
        r1 = d.xipos[i, 1] - d.subtree_com[root, 1]
        r2 = d.xipos[i, 2] - d.subtree_com[root, 2]
        c = d.cinert[i]
        c[0] = (mat[0] * mat[0] * inert[0] + mat[1] * mat[1] * inert[1]
                + mat[2] * mat[2] * inert[2] + mass * (r1 * r1 + r2 * r2))
        c[1] = (mat[3] * mat[3] * inert[0] + mat[4] * mat[4] * inert[1]
                + mat[5] * mat[5] * inert[2] + mass * (r0 * r0 + r2 * r2))
        c[2] = (mat[6] * mat[6] * inert[0] + mat[7] * mat[7] * inert[1]
                + mat[8] * mat[8] * inert[2] + mass * (r0 * r0 + r1 * r1))
        c[3] = (mat[0] * mat[3] * inert[0] + mat[1] * mat[4] * inert[1]
                + mat[2] * mat[5] * inert[2] - mass * r0 * r1)
        c[4] = (mat[0] * mat[6] * inert[0] + mat[1] * mat[7] * inert[1]
                + mat[2] * mat[8] * inert[2] - mass * r0 * r2)
        c[5] = (mat[3] * mat[6] * inert[0] + mat[4] * mat[7] * inert[1]
                + mat[5] * mat[8] * inert[2] - mass * r1 * r2)
        c[6] = mass * r0
        c[7] = mass * r1
        c[8] = mass * r2
        c[9] = mass
    # cdof: rotation axis a with linear part a × (c - anchor); translation axis (0, a)
    off = np.empty(3)
    for i in range(1, nbody):
        root = m.body_rootid[i]
        for j in range(m.body_jntadr[i], m.body_jntadr[i] + m.body_jntnum[i]):
            da = m.jnt_dofadr[j]
            jt = m.jnt_type[j]
            for k in range(3):
                off[k] = d.subtree_com[root, k] - d.xanchor[j, k]
            if jt == JNT_FREE or jt == JNT_BALL:
                if jt == JNT_FREE:
                    for t in range(3):
                        d.cdof[da + t, :] = 0.0
                        d.cdof[da + t, 3 + t] = 1.0
                    da += 3
                xm = d.xmat[i]
                for t in range(3):
                    cd = d.cdof[da + t]
                    cd[0] = xm[t]
                    cd[1] = xm[t + 3]
                    cd[2] = xm[t + 6]
                    cd[3] = cd[1] * off[2] - cd[2] * off[1]
                    cd[4] = cd[2] * off[0] - cd[0] * off[2]
                    cd[5] = cd[0] * off[1] - cd[1] * off[0]
            elif jt == JNT_SLIDE:
                cd = d.cdof[da]
                cd[0] = cd[1] = cd[2] = 0.0
                cd[3:6] = d.xaxis[j]
            else:
                cd = d.cdof[da]
                ax = d.xaxis[j]
                cd[0:3] = ax
                cd[3] = ax[1] * off[2] - ax[2] * off[1]
                cd[4] = ax[2] * off[0] - ax[0] * off[2]
                cd[5] = ax[0] * off[1] - ax[1] * off[0]


@njit(cache=True)
def _com_vel(m, d):
    """Com-based body velocities and dof-axis derivatives (mj_comVel).

    cvel = cvel_parent + Σ cdof qvel;  cdof_dot = cvel_parent ×ₘ cdof (free translation: 0).
    """
    d.cvel[0, :] = 0.0
    cvel = np.empty(6)
    for i in range(1, m.nbody):
        cvel[:] = d.cvel[m.body_parentid[i]]
        bda = m.body_dofadr[i]
        j = 0
        n = m.body_dofnum[i]
        while j < n:
            dof = bda + j
            jt = m.jnt_type[m.dof_jntid[dof]]
            if jt == JNT_FREE:
                for t in range(3):
                    d.cdof_dot[dof + t, :] = 0.0
                    for k in range(6):
                        cvel[k] += d.cdof[dof + t, k] * d.qvel[dof + t]
                j += 3
                dof += 3
                jt = JNT_BALL
            if jt == JNT_BALL:
                for t in range(3):
                    cross_motion(d.cdof_dot[dof + t], cvel, d.cdof[dof + t])
                for t in range(3):
                    for k in range(6):
                        cvel[k] += d.cdof[dof + t, k] * d.qvel[dof + t]
                j += 3
            else:
                cross_motion(d.cdof_dot[dof], cvel, d.cdof[dof])
                for k in range(6):
                    cvel[k] += d.cdof[dof, k] * d.qvel[dof]
                j += 1
        d.cvel[i, :] = cvel


@njit(cache=True)
def _position(m, d):
    _kinematics(m, d)
    _com_pos(m, d)


@njit(cache=True)
def _position_velocity(m, d):
    _kinematics(m, d)
    _com_pos(m, d)
    _com_vel(m, d)


@njit(cache=True)
def _jac(m, d, body, point, jacp, jacr):
    """Point Jacobian (translation) and body Jacobian (rotation), world frame (mj_jac).

    For each dof on the path to the root: jacr[:, i] = cdof_rot, jacp[:, i] = cdof_lin +
    cdof_rot × (point - subtree_com[root]).
    """
    nv = m.nv
    jacp[:, :] = 0.0
    jacr[:, :] = 0.0
    root = m.body_rootid[body]
    o0 = point[0] - d.subtree_com[root, 0]
    o1 = point[1] - d.subtree_com[root, 1]
    o2 = point[2] - d.subtree_com[root, 2]
    b = m.body_weldid[body]
    if m.body_dofnum[b] == 0:
        return
    i = m.body_dofadr[b] + m.body_dofnum[b] - 1
    while i >= 0:
        c = d.cdof[i]
        jacr[0, i] = c[0]
        jacr[1, i] = c[1]
        jacr[2, i] = c[2]
        jacp[0, i] = c[3] + c[1] * o2 - c[2] * o1
        jacp[1, i] = c[4] + c[2] * o0 - c[0] * o2
        jacp[2, i] = c[5] + c[0] * o1 - c[1] * o0
        i = m.dof_parentid[i]
    if nv == 0:
        return


@njit(cache=True)
def _jac_dot_qvel(m, d, body, point, out):
    """Bias acceleration J̇ q̇ of a point fixed to a body (translation : rotation).

    With the body's com-based velocity v = (ω, v_c) and acceleration J̇q̇ = Σ cdof_dot q̇
    (in the same frame), the classical acceleration of the point p is
    a_p = (a_c + ω̇ × r) + ω × (ω × r + v_o) … computed here from spatial terms:
    spatial bias s = Σ_i cdof_dot_i q̇_i along the path, then
    a_rot = s_rot, a_lin = s_lin + s_rot × r + ω × v_p, with v_p the point's velocity.
    """
    root = m.body_rootid[body]
    r = np.empty(3)
    for k in range(3):
        r[k] = point[k] - d.subtree_com[root, k]
    s = np.zeros(6)
    b = m.body_weldid[body]
    if m.body_dofnum[b] > 0:
        i = m.body_dofadr[b] + m.body_dofnum[b] - 1
        while i >= 0:
            for k in range(6):
                s[k] += d.cdof_dot[i, k] * d.qvel[i]
            i = m.dof_parentid[i]
    v = d.cvel[b]
    # point velocity v_p = v_lin + ω × r (spatial velocity at the c-frame origin)
    vp0 = v[3] + v[1] * r[2] - v[2] * r[1]
    vp1 = v[4] + v[2] * r[0] - v[0] * r[2]
    vp2 = v[5] + v[0] * r[1] - v[1] * r[0]
    # the spatial bias acceleration at the point, converted to a classical one: + ω × v_p
    out[0] = s[3] + s[1] * r[2] - s[2] * r[1] + v[1] * vp2 - v[2] * vp1
    out[1] = s[4] + s[2] * r[0] - s[0] * r[2] + v[2] * vp0 - v[0] * vp2
    out[2] = s[5] + s[0] * r[1] - s[1] * r[0] + v[0] * vp1 - v[1] * vp0
    out[3] = s[0]
    out[4] = s[1]
    out[5] = s[2]


@njit(cache=True)
def _jac_site(m, d, s, jacp, jacr):
    _jac(m, d, m.site_bodyid[s], d.site_xpos[s], jacp, jacr)


@njit(cache=True)
def _jac_body(m, d, b, jacp, jacr):
    _jac(m, d, b, d.xpos[b], jacp, jacr)


@njit(cache=True)
def _jac_body_com(m, d, b, jacp, jacr):
    _jac(m, d, b, d.xipos[b], jacp, jacr)


_k_position_velocity = _entry.Kernel(_position_velocity, globals())
_k_com_vel = _entry.Kernel(_com_vel, globals())
_k_jac = _entry.Kernel(_jac, globals())
_k_jac_site = _entry.Kernel(_jac_site, globals())
_k_jac_body = _entry.Kernel(_jac_body, globals())
_k_jac_body_com = _entry.Kernel(_jac_body_com, globals())
_k_jac_dot = _entry.Kernel(_jac_dot_qvel, globals())


def kinematics(m, d, qpos=None, qvel=None):
    """Forward kinematics and com-based quantities, in one compiled call.

    Fills xpos, xquat, xmat, xipos, ximat, xanchor, xaxis, geom_xpos/xmat, site_xpos/xmat,
    subtree_com, cinert, cdof, and, from qvel, cvel and cdof_dot. `qpos`/`qvel`, when
    given, are copied into d first.
    """
    _entry.check_pair(m, d, "kinematics")
    if qpos is not None:
        d.qpos[:] = _entry.vec(qpos, m.nq, "qpos", "kinematics")
    if qvel is not None:
        d.qvel[:] = _entry.vec(qvel, m.nv, "qvel", "kinematics")
    _k_position_velocity(m._s, d._s)


def com_vel(m, d):
    """Com-based velocities cvel and cdof_dot from d.qvel (needs kinematics first)."""
    _entry.check_pair(m, d, "com_vel")
    _k_com_vel(m._s, d._s)


def _outputs(m, jacp, jacr, fname):
    shape = (3, m.nv)
    jacp = np.empty(shape) if jacp is None else _entry.out(jacp, shape, "jacp", fname)
    jacr = np.empty(shape) if jacr is None else _entry.out(jacr, shape, "jacr", fname)
    return jacp, jacr


def jacobian(m, d, body, point, jacp=None, jacr=None):
    """Jacobians of a world point attached to `body` (name or id): (jacp, jacr), each (3, nv).

    jacp maps qvel to the point's linear velocity, jacr to the body's angular velocity, both
    in world axes (MuJoCo's mj_jac). Needs `kinematics(m, d)` first. Pass preallocated
    C-contiguous (3, nv) arrays as jacp/jacr to avoid allocation.
    """
    _entry.check_pair(m, d, "jacobian")
    b = m.id("body", body)
    p = _entry.vec(point, 3, "point", "jacobian")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian")
    _k_jac(m._s, d._s, b, p, jacp, jacr)
    return jacp, jacr


def jacobian_site(m, d, site, jacp=None, jacr=None):
    """Jacobians of a site (name or id), as `jacobian` (MuJoCo's mj_jacSite)."""
    _entry.check_pair(m, d, "jacobian_site")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian_site")
    _k_jac_site(m._s, d._s, m.id("site", site), jacp, jacr)
    return jacp, jacr


def jacobian_body(m, d, body, jacp=None, jacr=None):
    """Jacobians of the origin of `body`'s frame (MuJoCo's mj_jacBody)."""
    _entry.check_pair(m, d, "jacobian_body")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian_body")
    _k_jac_body(m._s, d._s, m.id("body", body), jacp, jacr)
    return jacp, jacr


def jacobian_body_com(m, d, body, jacp=None, jacr=None):
    """Jacobians of `body`'s center of mass (MuJoCo's mj_jacBodyCom)."""
    _entry.check_pair(m, d, "jacobian_body_com")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian_body_com")
    _k_jac_body_com(m._s, d._s, m.id("body", body), jacp, jacr)
    return jacp, jacr


def jacobian_subtree_com(m, d, body):
    """(3, nv) Jacobian of the center of mass of `body`'s subtree (mj_jacSubtreeCom)."""
    _entry.check_pair(m, d, "jacobian_subtree_com")
    b = m.id("body", body)
    jacp = np.zeros((3, m.nv))
    total = 0.0
    for k in range(b, m.nbody):
        a, p = k, k
        while p != 0 and p != b:
            p = int(m.body_parentid[p])
        if a != b and p != b:
            continue
        if m.body_mass[k] > 0:
            jp, _ = jacobian(m, d, k, d.xipos[k])
            jacp += m.body_mass[k] * jp
            total += m.body_mass[k]
    if total <= 0:
        raise ValueError(f"jacobian_subtree_com: the subtree of body {body!r} has no mass")
    return jacp / total


def jacobian_dot_qvel(m, d, body, point):
    """Bias acceleration J̇q̇ of a world point attached to `body`: (6,) = (linear : angular).

    The point's classical acceleration is jacp q̈ + out[:3] and the body's angular
    acceleration is jacr q̈ + out[3:]. Needs `kinematics(m, d)` (which also fills cvel).
    """
    _entry.check_pair(m, d, "jacobian_dot_qvel")
    b = m.id("body", body)
    p = _entry.vec(point, 3, "point", "jacobian_dot_qvel")
    out = np.empty(6)
    _k_jac_dot(m._s, d._s, b, p, out)
    return out
