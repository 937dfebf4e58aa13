"""Forward kinematics, com-based quantities and Jacobians.

Stages (each a compiled kernel over the model/data structs, mirroring MuJoCo's
engine_core_smooth.c):
  kinematics_stage: xpos, xquat, xmat, xanchor, xaxis, xipos, ximat (kinematics_bodies), then
               geom_xpos/xmat, site_xpos/xmat (_kinematics_frames)
  com_pos:    subtree_com, cinert, cdof
  com_vel_stage:    cvel, cdof_dot
  camlight:   cam_xpos, cam_xmat (after com_pos, as mj_camlight; only when ncam > 0)
Quaternions are composed along the tree and renormalized after every joint rotation, as the
slides (000, "Forward kinematics") advise, so round-off does not accumulate.

Com-based ("c-frame") spatial quantities use world axes and the origin at the subtree center
of mass of the body's kinematic-tree root, exactly as MuJoCo does, so they compare by name.
"""

import math

import numpy as np
from numba import njit, uint64

from jointspace._numba import entry
from jointspace.actuator_passive import tendon_armature as tendon_armature_total
from jointspace.diagnostics import element_id
from jointspace.rotation import quat_mul_s, quat_normalize_s, quat_to_mat_row, rot_vec_quat_s
from jointspace.spatial import add_scaled6, row6
from jointspace.tendon import tendon_stage
from jointspace.types import (
    CAM_TARGETBODY,
    CAM_TARGETBODYCOM,
    CAM_TRACK,
    CAM_TRACKCOM,
    JNT_BALL,
    JNT_FREE,
    JNT_SLIDE,
    MINVAL,
    SAMEFRAME_BODY,
    SAMEFRAME_BODYROT,
    SAMEFRAME_INERTIA,
    SAMEFRAME_INERTIAROT,
    SAMEFRAME_NONE,
    WRAP_JOINT,
    WRAP_PULLEY,
)


@njit(cache=True, inline="always")
def _point_on_body(xpos, xmat, b, e0, e1, e2):
    """R_b e + x_b, the sum in mji_mulMatVec3's order and then the offset (bit for bit)."""
    return ((xmat[b, 0] * e0 + xmat[b, 1] * e1 + xmat[b, 2] * e2) + xpos[b, 0],
            (xmat[b, 3] * e0 + xmat[b, 4] * e1 + xmat[b, 5] * e2) + xpos[b, 1],
            (xmat[b, 6] * e0 + xmat[b, 7] * e1 + xmat[b, 8] * e2) + xpos[b, 2])


@njit(cache=True, inline="always")
def _local_to_global(b, sf, pos, quat, g, out_pos, out_mat, xpos, xquat, xmat, xipos, ximat):
    """out_pos[g], out_mat[g]: the frame (pos[g], quat[g]) on body b (mj_local2Global).

    sf is the frame's SAMEFRAME_* relation: the body's or the inertial frame's position and
    rotation are copied where the compiler found them equal (within SAMEFRAME_EPS), else
    x = x_b + R_b pos, R = R(q_b ⊗ quat).
    """
    if sf == SAMEFRAME_BODY:
        for k in range(3):
            out_pos[g, k] = xpos[b, k]
    elif sf == SAMEFRAME_INERTIA:
        for k in range(3):
            out_pos[g, k] = xipos[b, k]
    else:
        out_pos[g, 0], out_pos[g, 1], out_pos[g, 2] = _point_on_body(
            xpos, xmat, b, pos[g, 0], pos[g, 1], pos[g, 2])
    if sf == SAMEFRAME_BODY or sf == SAMEFRAME_BODYROT:
        for k in range(9):
            out_mat[g, k] = xmat[b, k]
    elif sf == SAMEFRAME_INERTIA or sf == SAMEFRAME_INERTIAROT:
        for k in range(9):
            out_mat[g, k] = ximat[b, k]
    else:
        w0, w1, w2, w3 = quat_mul_s(xquat[b, 0], xquat[b, 1], xquat[b, 2], xquat[b, 3],
                                    quat[g, 0], quat[g, 1], quat[g, 2], quat[g, 3])
        quat_to_mat_row(out_mat, g, w0, w1, w2, w3)


@njit(cache=True)
def kinematics_bodies(m, d):
    """World poses of bodies, joint anchors/axes and inertial frames (mj_kinematics).

    x_b = x_parent + R_parent body_pos,  q_b = q_parent ⊗ body_quat, then for each joint:
    slide  x += axis (q - q0);  hinge/ball  q ← q ⊗ q_loc, x = anchor - R(q) jnt_pos; q is
    normalized once, after the body's joints. A free joint reads the pose from qpos. The
    operations and their order are MuJoCo's, so the poses equal mj_kinematics' bit for bit
    (rotation.py). Scalar style: no array views or temporaries.
    """
    nbody = m.nbody
    parentid = m.body_parentid
    jntadr_ = m.body_jntadr
    jntnum_ = m.body_jntnum
    mocapid = m.body_mocapid
    body_pos = m.body_pos
    body_quat = m.body_quat
    jnt_type = m.jnt_type
    jnt_qposadr = m.jnt_qposadr
    jnt_pos = m.jnt_pos
    jnt_axis = m.jnt_axis
    qpos0 = m.qpos0
    qpos = d.qpos
    xpos = d.xpos
    xquat = d.xquat
    xmat = d.xmat
    xanchor = d.xanchor
    xaxis = d.xaxis
    mocap_pos = d.mocap_pos
    mocap_quat = d.mocap_quat
    for k in range(3):
        xpos[0, k] = 0.0
        d.xipos[0, k] = 0.0
    xquat[0, 0] = 1.0
    xquat[0, 1] = xquat[0, 2] = xquat[0, 3] = 0.0
    for k in range(9):
        xmat[0, k] = 1.0 if k % 4 == 0 else 0.0
        d.ximat[0, k] = xmat[0, k]
    for i in range(1, nbody):
        ja = uint64(jntadr_[i])
        jn = jntnum_[i]
        if jn == 1 and jnt_type[ja] == JNT_FREE:
            qa = uint64(jnt_qposadr[ja])
            p0 = qpos[qa]
            p1 = qpos[qa + 1]
            p2 = qpos[qa + 2]
            q0 = qpos[qa + 3]
            q1 = qpos[qa + 4]
            q2 = qpos[qa + 5]
            q3 = qpos[qa + 6]
            q0, q1, q2, q3 = quat_normalize_s(q0, q1, q2, q3)
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
                                                  mocap_quat[mc, 2], mocap_quat[mc, 3])
            else:
                b0 = body_pos[i, 0]
                b1 = body_pos[i, 1]
                b2 = body_pos[i, 2]
                c0 = body_quat[i, 0]
                c1 = body_quat[i, 1]
                c2 = body_quat[i, 2]
                c3 = body_quat[i, 3]
            if p != 0:
                # x = R_parent body_pos + x_parent;  q = q_parent ⊗ body_quat
                p0, p1, p2 = _point_on_body(xpos, xmat, p, b0, b1, b2)
                q0, q1, q2, q3 = quat_mul_s(xquat[p, 0], xquat[p, 1], xquat[p, 2],
                                            xquat[p, 3], c0, c1, c2, c3)
            else:
                p0, p1, p2 = b0, b1, b2
                q0, q1, q2, q3 = c0, c1, c2, c3
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
                n0 = r0 + p0
                n1 = r1 + p1
                n2 = r2 + p2
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
                        angle = qpos[qa] - qpos0[qa]
                        if angle == 0.0:
                            l0, l1, l2, l3 = 1.0, 0.0, 0.0, 0.0
                        else:
                            s = math.sin(angle * 0.5)
                            l0 = math.cos(angle * 0.5)
                            l1 = jnt_axis[j, 0] * s
                            l2 = jnt_axis[j, 1] * s
                            l3 = jnt_axis[j, 2] * s
                    q0, q1, q2, q3 = quat_mul_s(q0, q1, q2, q3, l0, l1, l2, l3)
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
    # inertial frames: xipos = R body_ipos + x, ximat = R(q ⊗ body_iquat)
    for i in range(1, nbody):
        _local_to_global(i, m.body_sameframe[i], m.body_ipos, m.body_iquat, i, d.xipos,
                         d.ximat, xpos, xquat, xmat, d.xipos, d.ximat)


@njit(cache=True)
def _kinematics_frames(m, d):
    """World poses of geoms and sites from their bodies' poses (mj_kinematics, second part)."""
    for g in range(m.ngeom):
        _local_to_global(uint64(m.geom_bodyid[g]), m.geom_sameframe[g], m.geom_pos, m.geom_quat,
                         g, d.geom_xpos, d.geom_xmat, d.xpos, d.xquat, d.xmat, d.xipos,
                         d.ximat)
    for g in range(m.nsite):
        _local_to_global(uint64(m.site_bodyid[g]), m.site_sameframe[g], m.site_pos, m.site_quat,
                         g, d.site_xpos, d.site_xmat, d.xpos, d.xquat, d.xmat, d.xipos,
                         d.ximat)


@njit(cache=True, nogil=True)
def kinematics_stage(m, d):
    """World poses of bodies, joints, inertial frames, geoms and sites (mj_kinematics)."""
    kinematics_bodies(m, d)
    _kinematics_frames(m, d)


@njit(cache=True)
def camlight(m, d, fixed):
    """Camera poses cam_xpos, cam_xmat from the body poses and subtree coms (mj_camlight).

    fixed:  x = x_b + R_b cam_pos, R = R(q_b ⊗ cam_quat) (every mode starts here; `fixed`
            true treats every camera so, as the compiler does at qpos0)
    track / trackcom:  R = cam_mat0, x = x_b + cam_pos0 / subtree_com_b + cam_poscom0
    targetbody(com):  z = normalize(x − p_target) (p: the target's xpos / subtree com),
                      x-axis = normalize((0, 0, 1) × z), y-axis = normalize(z × x-axis)
    """
    for i in range(m.ncam):
        b = uint64(m.cam_bodyid[i])
        _local_to_global(b, SAMEFRAME_NONE, m.cam_pos, m.cam_quat, i, d.cam_xpos, d.cam_xmat,
                         d.xpos, d.xquat, d.xmat, d.xipos, d.ximat)
        mode = m.cam_mode[i]
        if fixed:
            continue
        if mode == CAM_TRACK or mode == CAM_TRACKCOM:
            base = d.xpos[b] if mode == CAM_TRACK else d.subtree_com[b]
            off = m.cam_pos0[i] if mode == CAM_TRACK else m.cam_poscom0[i]
            for k in range(9):
                d.cam_xmat[i, k] = m.cam_mat0[i, k]
            for k in range(3):
                d.cam_xpos[i, k] = base[k] + off[k]
        elif (mode == CAM_TARGETBODY or mode == CAM_TARGETBODYCOM) and m.cam_targetbodyid[i] >= 0:
            t = m.cam_targetbodyid[i]
            p = d.xpos[t] if mode == CAM_TARGETBODY else d.subtree_com[t]
            z0, z1, z2 = _unit3(d.cam_xpos[i, 0] - p[0], d.cam_xpos[i, 1] - p[1],
                                d.cam_xpos[i, 2] - p[2])
            x0, x1, x2 = _unit3(-z1, z0, 0.0)  # (0, 0, 1) × z
            y0, y1, y2 = _unit3(z1 * x2 - z2 * x1, z2 * x0 - z0 * x2, z0 * x1 - z1 * x0)
            R = d.cam_xmat[i]
            R[0], R[1], R[2] = x0, y0, z0
            R[3], R[4], R[5] = x1, y1, z1
            R[6], R[7], R[8] = x2, y2, z2


@njit(cache=True, inline="always")
def _unit3(a, b, c):
    """(a, b, c) / |(a, b, c)|, or (1, 0, 0) when the norm is below MINVAL (mju_normalize3)."""
    n = math.sqrt(a * a + b * b + c * c)
    if n < MINVAL:
        return 1.0, 0.0, 0.0
    inv = 1.0 / n
    return a * inv, b * inv, c * inv


@njit(cache=True)
def com_pos(m, d):
    """Subtree centers of mass, com-based inertias and motion axes (mj_comPos); tendons.

    Scalar style, like kinematics_bodies: no array views or temporaries.
    """
    nbody = m.nbody
    parentid = m.body_parentid
    rootid = m.body_rootid
    mass = m.body_mass
    smass = m.body_subtreemass
    inertia = m.body_inertia
    jntadr = m.body_jntadr
    jntnum = m.body_jntnum
    jnt_type = m.jnt_type
    jnt_dofadr = m.jnt_dofadr
    xipos = d.xipos
    ximat = d.ximat
    xmat = d.xmat
    xanchor = d.xanchor
    xaxis = d.xaxis
    com = d.subtree_com
    cinert = d.cinert
    cdof = d.cdof
    # subtree_com = Σ m_k xipos_k / Σ m_k over each subtree (backward pass)
    for i in range(nbody):
        w = mass[i]
        com[i, 0] = xipos[i, 0] * w
        com[i, 1] = xipos[i, 1] * w
        com[i, 2] = xipos[i, 2] * w
    for i in range(nbody - 1, 0, -1):
        p = uint64(parentid[i])
        com[p, 0] += com[i, 0]
        com[p, 1] += com[i, 1]
        com[p, 2] += com[i, 2]
    for i in range(nbody):
        if smass[i] < MINVAL:
            com[i, 0] = xipos[i, 0]
            com[i, 1] = xipos[i, 1]
            com[i, 2] = xipos[i, 2]
        else:
            inv = 1.0 / smass[i]
            com[i, 0] *= inv
            com[i, 1] *= inv
            com[i, 2] *= inv
    # cinert: I_c = R diag(I) Rᵀ + m (|r|² E - r rᵀ), r = xipos - subtree_com[root]
    for k in range(10):
        cinert[0, k] = 0.0
    for i in range(1, nbody):
        root = uint64(rootid[i])
        i0 = inertia[i, 0]
        i1 = inertia[i, 1]
        i2 = inertia[i, 2]
        w = mass[i]
        r0 = xipos[i, 0] - com[root, 0]
        r1 = xipos[i, 1] - com[root, 1]
        r2 = xipos[i, 2] - com[root, 2]
        m0 = ximat[i, 0]
        m1 = ximat[i, 1]
        m2 = ximat[i, 2]
        m3 = ximat[i, 3]
        m4 = ximat[i, 4]
        m5 = ximat[i, 5]
        m6 = ximat[i, 6]
        m7 = ximat[i, 7]
        m8 = ximat[i, 8]
        cinert[i, 0] = m0 * m0 * i0 + m1 * m1 * i1 + m2 * m2 * i2 + w * (r1 * r1 + r2 * r2)
        cinert[i, 1] = m3 * m3 * i0 + m4 * m4 * i1 + m5 * m5 * i2 + w * (r0 * r0 + r2 * r2)
        cinert[i, 2] = m6 * m6 * i0 + m7 * m7 * i1 + m8 * m8 * i2 + w * (r0 * r0 + r1 * r1)
        cinert[i, 3] = m0 * m3 * i0 + m1 * m4 * i1 + m2 * m5 * i2 - w * r0 * r1
        cinert[i, 4] = m0 * m6 * i0 + m1 * m7 * i1 + m2 * m8 * i2 - w * r0 * r2
        cinert[i, 5] = m3 * m6 * i0 + m4 * m7 * i1 + m5 * m8 * i2 - w * r1 * r2
        cinert[i, 6] = w * r0
        cinert[i, 7] = w * r1
        cinert[i, 8] = w * r2
        cinert[i, 9] = w
    # cdof: rotation axis a with linear part a × (c - anchor); translation axis (0, a)
    for i in range(1, nbody):
        root = uint64(rootid[i])
        ja = uint64(jntadr[i])
        for j in range(ja, ja + uint64(jntnum[i])):
            da = int(jnt_dofadr[j])
            jt = jnt_type[j]
            o0 = com[root, 0] - xanchor[j, 0]
            o1 = com[root, 1] - xanchor[j, 1]
            o2 = com[root, 2] - xanchor[j, 2]
            if jt == JNT_FREE or jt == JNT_BALL:
                if jt == JNT_FREE:
                    for t in range(3):
                        for k in range(6):
                            cdof[da + t, k] = 0.0
                        cdof[da + t, 3 + t] = 1.0
                    da += 3
                for t in range(3):
                    a0 = xmat[i, t]
                    a1 = xmat[i, t + 3]
                    a2 = xmat[i, t + 6]
                    cdof[da + t, 0] = a0
                    cdof[da + t, 1] = a1
                    cdof[da + t, 2] = a2
                    cdof[da + t, 3] = a1 * o2 - a2 * o1
                    cdof[da + t, 4] = a2 * o0 - a0 * o2
                    cdof[da + t, 5] = a0 * o1 - a1 * o0
            elif jt == JNT_SLIDE:
                cdof[da, 0] = 0.0
                cdof[da, 1] = 0.0
                cdof[da, 2] = 0.0
                cdof[da, 3] = xaxis[j, 0]
                cdof[da, 4] = xaxis[j, 1]
                cdof[da, 5] = xaxis[j, 2]
            else:
                a0 = xaxis[j, 0]
                a1 = xaxis[j, 1]
                a2 = xaxis[j, 2]
                cdof[da, 0] = a0
                cdof[da, 1] = a1
                cdof[da, 2] = a2
                cdof[da, 3] = a1 * o2 - a2 * o1
                cdof[da, 4] = a2 * o0 - a0 * o2
                cdof[da, 5] = a0 * o1 - a1 * o0
    # tendons follow the poses (MuJoCo: mj_comPos, then mj_tendon)
    if m.ntendon:
        tendon_stage(m, d)


@njit(cache=True, nogil=True)
def com_vel_stage(m, d):
    """Com-based body velocities and dof-axis derivatives (mj_comVel).

    cvel = cvel_parent + Σ cdof qvel;  cdof_dot = cvel_parent ×ₘ cdof (free translation: 0).
    For a ball (and a free joint's rotation) every dof's derivative uses the velocity before
    the joint, as MuJoCo does. Scalar style: no array views or temporaries.
    """
    parentid = m.body_parentid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    jnt_type = m.jnt_type
    dof_jntid = m.dof_jntid
    qvel = d.qvel
    cdof = d.cdof
    cdd = d.cdof_dot
    cvel = d.cvel
    for k in range(6):
        cvel[0, k] = 0.0
    for i in range(1, m.nbody):
        v0, v1, v2, v3, v4, v5 = row6(cvel, uint64(parentid[i]))
        bda = int(dofadr[i])
        n = int(dofnum[i])
        j = 0
        while j < n:
            dof = bda + j
            jt = jnt_type[dof_jntid[dof]]
            span = 1
            if jt == JNT_FREE:
                for t in range(dof, dof + 3):
                    for k in range(6):
                        cdd[t, k] = 0.0
                    v0, v1, v2, v3, v4, v5 = add_scaled6(v0, v1, v2, v3, v4, v5, cdof, t,
                                                         qvel[t])
                j += 3
                dof += 3
                span = 3
            elif jt == JNT_BALL:
                span = 3
            # derivatives against the velocity before this joint's rotation dofs
            for t in range(dof, dof + span):
                u0, u1, u2, u3, u4, u5 = row6(cdof, t)
                cdd[t, 0] = v1 * u2 - v2 * u1
                cdd[t, 1] = v2 * u0 - v0 * u2
                cdd[t, 2] = v0 * u1 - v1 * u0
                cdd[t, 3] = v1 * u5 - v2 * u4 + v4 * u2 - v5 * u1
                cdd[t, 4] = v2 * u3 - v0 * u5 + v5 * u0 - v3 * u2
                cdd[t, 5] = v0 * u4 - v1 * u3 + v3 * u1 - v4 * u0
            for t in range(dof, dof + span):
                v0, v1, v2, v3, v4, v5 = add_scaled6(v0, v1, v2, v3, v4, v5, cdof, t, qvel[t])
            j += span
        cvel[i, 0] = v0
        cvel[i, 1] = v1
        cvel[i, 2] = v2
        cvel[i, 3] = v3
        cvel[i, 4] = v4
        cvel[i, 5] = v5


@njit(cache=True)
def poses_at(m, d, q):
    """qpos = q, then the bodies' poses and com quantities (kinematics_bodies, com_pos).

    The position prefix of the smooth-dynamics drivers (rnea, crba, mul_m, factor_m, aba,
    minv), which take q as an argument.
    """
    qpos = d.qpos
    for k in range(q.shape[0]):
        qpos[k] = q[k]
    kinematics_bodies(m, d)
    com_pos(m, d)


@njit(cache=True)
def kinematics_com_pos(m, d):
    """Poses and com quantities: kinematics_stage, then com_pos (the compiler at qpos0)."""
    kinematics_stage(m, d)
    com_pos(m, d)


@njit(cache=True, nogil=True)
def _position_velocity(m, d):
    kinematics_stage(m, d)
    com_pos(m, d)
    com_vel_stage(m, d)


@njit(cache=True)
def jac_point(m, d, body, point, jacp, jacr):
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
def jac_dot_qvel(m, d, body, point, out):
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
def _point_velocity(m, d, body, point, out):
    """World linear velocity of a point fixed to a body: v_lin + ω × r (cvel at subtree_com)."""
    root = m.body_rootid[body]
    v = d.cvel[m.body_weldid[body]]
    r0 = point[0] - d.subtree_com[root, 0]
    r1 = point[1] - d.subtree_com[root, 1]
    r2 = point[2] - d.subtree_com[root, 2]
    out[0] = v[3] + v[1] * r2 - v[2] * r1
    out[1] = v[4] + v[2] * r0 - v[0] * r2
    out[2] = v[5] + v[0] * r1 - v[1] * r0


@njit(cache=True)
def tendon_bias(m, d, qfrc):
    """qfrc += Σ_t armature_t (ten_J̇_t q̇) ten_J_t: the tendon armature's bias (mj_tendonBias).

    With M carrying armature ten_Jᵀ ten_J, the tendon's inertial force armature · d/dt(ten_J
    q̇) = armature (ten_J q̈ + ten_J̇ q̇) has this velocity term. Fixed tendons have a
    constant ten_J. For a spatial tendon (sites and pulleys; the compiler refuses armature
    with wrap geoms, as MuJoCo does), each straight segment between sites p0, p1 on
    different bodies, with Δ = p1 − p0, u = Δ/|Δ|, w = ṗ1 − ṗ0 and the points' bias
    accelerations a_k = J̇_k q̇ (`jac_dot_qvel`), adds (mj_tendonDot)

        ten_J̇ q̇ += (u · (a1 − a0) + (w · w − (u · w)²) / |Δ|) / divisor.

    Needs cvel and cdof_dot (com_vel).
    """
    spatial = False  # only spatial tendons with armature have a bias: no scratch otherwise
    for t in range(m.ntendon):
        if tendon_armature_total(m, t) != 0.0 and m.wrap_type[m.tendon_adr[t]] != WRAP_JOINT:
            spatial = True
            break
    if not spatial:
        return
    acc0 = np.empty(6)
    acc1 = np.empty(6)
    vel0 = np.empty(3)
    vel1 = np.empty(3)
    for t in range(m.ntendon):
        arm = tendon_armature_total(m, t)
        adr = m.tendon_adr[t]
        if arm == 0.0 or m.wrap_type[adr] == WRAP_JOINT:
            continue
        num = m.tendon_num[t]
        divisor = 1.0
        dot = 0.0
        for j in range(num - 1):
            t0 = m.wrap_type[adr + j]
            t1 = m.wrap_type[adr + j + 1]
            if t0 == WRAP_PULLEY or t1 == WRAP_PULLEY:
                if t0 == WRAP_PULLEY:
                    divisor = m.wrap_prm[adr + j]
                continue
            s0 = m.wrap_objid[adr + j]
            s1 = m.wrap_objid[adr + j + 1]
            b0 = m.site_bodyid[s0]
            b1 = m.site_bodyid[s1]
            if b0 == b1:
                continue
            p0 = d.site_xpos[s0]
            p1 = d.site_xpos[s1]
            u0 = p1[0] - p0[0]
            u1 = p1[1] - p0[1]
            u2 = p1[2] - p0[2]
            nrm = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
            inv = 1.0 / nrm if nrm > MINVAL else 0.0
            u0 *= inv
            u1 *= inv
            u2 *= inv
            jac_dot_qvel(m, d, b0, p0, acc0)
            jac_dot_qvel(m, d, b1, p1, acc1)
            _point_velocity(m, d, b0, p0, vel0)
            _point_velocity(m, d, b1, p1, vel1)
            w0 = vel1[0] - vel0[0]
            w1 = vel1[1] - vel0[1]
            w2 = vel1[2] - vel0[2]
            uw = u0 * w0 + u1 * w1 + u2 * w2
            # d/dt(jac1 − jac0)ᵀ u q̇  +  (jac1 − jac0)ᵀ u̇ q̇,  u̇ = (w − (u·w) u) / |Δ|
            first = u0 * (acc1[0] - acc0[0]) + u1 * (acc1[1] - acc0[1]) + u2 * (acc1[2] - acc0[2])
            second = (w0 * w0 + w1 * w1 + w2 * w2 - uw * uw) * inv
            dot += (first + second) / divisor
        coef = arm * dot
        if coef != 0.0:
            J = d.ten_J[t]
            for c in range(m.nv):
                qfrc[c] += coef * J[c]


@njit(cache=True)
def _jac_site(m, d, s, jacp, jacr):
    jac_point(m, d, m.site_bodyid[s], d.site_xpos[s], jacp, jacr)


@njit(cache=True)
def _jac_body(m, d, b, jacp, jacr):
    jac_point(m, d, b, d.xpos[b], jacp, jacr)


@njit(cache=True)
def _jac_body_com(m, d, b, jacp, jacr):
    jac_point(m, d, b, d.xipos[b], jacp, jacr)


_k_position_velocity = entry.Kernel(_position_velocity)
_k_com_vel = entry.Kernel(com_vel_stage)
_k_jac = entry.Kernel(jac_point)
_k_jac_site = entry.Kernel(_jac_site)
_k_jac_body = entry.Kernel(_jac_body)
_k_jac_body_com = entry.Kernel(_jac_body_com)
_k_jac_dot = entry.Kernel(jac_dot_qvel)


def kinematics(m, d, qpos=None, qvel=None):
    """Forward kinematics and com-based quantities, in one compiled call.

    Fills xpos, xquat, xmat, xipos, ximat, xanchor, xaxis, geom_xpos/xmat, site_xpos/xmat,
    subtree_com, cinert, cdof, and, from qvel, cvel and cdof_dot. `qpos`/`qvel`, when
    given, are copied into d first.
    """
    entry.check_pair(m, d, "kinematics")
    if qpos is not None:
        d.qpos[:] = entry.vec(qpos, m.nq, "qpos", "kinematics")
    if qvel is not None:
        d.qvel[:] = entry.vec(qvel, m.nv, "qvel", "kinematics")
    ep = _k_position_velocity.ep
    ep(m._s, d._s)


def com_vel(m, d):
    """Com-based velocities cvel and cdof_dot from d.qvel (needs kinematics first)."""
    entry.check_pair(m, d, "com_vel")
    ep = _k_com_vel.ep
    ep(m._s, d._s)


def _outputs(m, jacp, jacr, fname):
    shape = (3, m.nv)
    jacp = np.empty(shape) if jacp is None else entry.out(jacp, shape, "jacp", fname)
    jacr = np.empty(shape) if jacr is None else entry.out(jacr, shape, "jacr", fname)
    return jacp, jacr


def jacobian(m, d, body, point, jacp=None, jacr=None):
    """Jacobians of a world point attached to `body` (name or id): (jacp, jacr), each (3, nv).

    jacp maps qvel to the point's linear velocity, jacr to the body's angular velocity, both
    in world axes (MuJoCo's mj_jac). Needs `kinematics(m, d)` first. Pass preallocated
    C-contiguous (3, nv) arrays as jacp/jacr to avoid allocation.
    """
    entry.check_pair(m, d, "jacobian")
    b = element_id(m, "body", body, "body", "jacobian")
    p = entry.vec(point, 3, "point", "jacobian")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian")
    ep = _k_jac.ep
    ep(m._s, d._s, b, p, jacp, jacr)
    return jacp, jacr


def jacobian_site(m, d, site, jacp=None, jacr=None):
    """Jacobians of a site (name or id), as `jacobian` (MuJoCo's mj_jacSite)."""
    entry.check_pair(m, d, "jacobian_site")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian_site")
    ep = _k_jac_site.ep
    ep(m._s, d._s, element_id(m, "site", site, "site", "jacobian_site"), jacp, jacr)
    return jacp, jacr


def jacobian_body(m, d, body, jacp=None, jacr=None):
    """Jacobians of the origin of `body`'s frame (MuJoCo's mj_jacBody)."""
    entry.check_pair(m, d, "jacobian_body")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian_body")
    ep = _k_jac_body.ep
    ep(m._s, d._s, element_id(m, "body", body, "body", "jacobian_body"), jacp, jacr)
    return jacp, jacr


def jacobian_body_com(m, d, body, jacp=None, jacr=None):
    """Jacobians of `body`'s center of mass (MuJoCo's mj_jacBodyCom)."""
    entry.check_pair(m, d, "jacobian_body_com")
    jacp, jacr = _outputs(m, jacp, jacr, "jacobian_body_com")
    ep = _k_jac_body_com.ep
    ep(m._s, d._s, element_id(m, "body", body, "body", "jacobian_body_com"), jacp, jacr)
    return jacp, jacr


def jacobian_subtree_com(m, d, body):
    """(3, nv) Jacobian of the center of mass of `body`'s subtree (mj_jacSubtreeCom)."""
    entry.check_pair(m, d, "jacobian_subtree_com")
    b = element_id(m, "body", body, "body", "jacobian_subtree_com")
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
    entry.check_pair(m, d, "jacobian_dot_qvel")
    b = element_id(m, "body", body, "body", "jacobian_dot_qvel")
    p = entry.vec(point, 3, "point", "jacobian_dot_qvel")
    out = np.empty(6)
    ep = _k_jac_dot.ep
    ep(m._s, d._s, b, p, out)
    return out
