"""Passive forces: joint springs and dof damping (MuJoCo's mj_passive, engine_passive.c).

qfrc_passive = qfrc_spring + qfrc_damper, where
  hinge, slide:  qfrc_spring = -k (q - q_spring)
  ball:          qfrc_spring = -k log(q_spring⁻¹ ⊗ q)   (rotation vector in the joint frame)
  free:          the ball rule for the rotation, -k (p - p_spring) for the world translation
  every dof:     qfrc_damper = -b qvel
with k = jnt_stiffness, b = dof_damping. Both are exact gradients of the energies that
`jointspace.dynamics.energy` reports (½ k |x|² with x the displacement above).
"""

import math

import numpy as np
from numba import njit

from jointspace.rotation import quat_mul
from jointspace.types import DSBL_DAMPER, DSBL_SPRING, JNT_BALL, JNT_FREE, MINVAL, SMALL_SPRING


@njit(cache=True, inline="always")
def quat_to_vel(out, quat):
    """Rotation vector out of quat (axis·angle, angle wrapped into (-π, π]) (mju_quat2Vel)."""
    s = math.sqrt(quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3])
    if s < MINVAL:
        out[0] = out[1] = out[2] = 0.0
        return
    angle = 2.0 * math.atan2(s, quat[0])
    if angle > math.pi:
        angle -= 2.0 * math.pi
    scale = angle / s
    out[0] = quat[1] * scale
    out[1] = quat[2] * scale
    out[2] = quat[3] * scale


@njit(cache=True, inline="always")
def sub_quat(out, qa, qb):
    """Quaternion difference out = log(qb⁻¹ ⊗ qa): the rotation vector (qb frame) from qb to qa."""
    qneg = np.empty(4)
    qdif = np.empty(4)
    qneg[0] = qb[0]
    qneg[1] = -qb[1]
    qneg[2] = -qb[2]
    qneg[3] = -qb[3]
    quat_mul(qdif, qneg, qa)
    quat_to_vel(out, qdif)


@njit(cache=True)
def spring_displacement(m, qpos, j, out):
    """Displacement of joint j from its spring rest pose; returns the number of values.

    hinge/slide: 1 value; ball: 3 (rotation vector); free: 6 (world translation, rotation).
    """
    padr = m.jnt_qposadr[j]
    jt = m.jnt_type[j]
    if jt == JNT_FREE or jt == JNT_BALL:
        n = 0
        if jt == JNT_FREE:
            for k in range(3):
                out[k] = qpos[padr + k] - m.qpos_spring[padr + k]
            padr += 3
            n = 3
        quat = np.empty(4)
        nrm = 0.0
        for k in range(4):
            quat[k] = qpos[padr + k]
            nrm += quat[k] * quat[k]
        nrm = math.sqrt(nrm)
        if nrm > MINVAL:
            for k in range(4):
                quat[k] /= nrm
        sub_quat(out[n:n + 3], quat, m.qpos_spring[padr:padr + 4])
        return n + 3
    out[0] = qpos[padr] - m.qpos_spring[padr]
    return 1


@njit(cache=True)
def _springs(m, d):
    """qfrc_passive −= k x: joint spring forces (hinge and slide inline, without scratch)."""
    stiffness = m.jnt_stiffness
    jtype = m.jnt_type
    qpos = d.qpos
    qspring = m.qpos_spring
    out = d.qfrc_passive
    rotational = False
    for j in range(m.njnt):
        k = stiffness[j]
        if k == 0.0:
            continue
        jt = jtype[j]
        if jt == JNT_FREE or jt == JNT_BALL:
            rotational = True
            continue
        padr = m.jnt_qposadr[j]
        out[m.jnt_dofadr[j]] -= k * (qpos[padr] - qspring[padr])
    if not rotational:
        return
    x = d.scratch_small[SMALL_SPRING:SMALL_SPRING + 6]
    for j in range(m.njnt):
        k = stiffness[j]
        jt = jtype[j]
        if k == 0.0 or (jt != JNT_FREE and jt != JNT_BALL):
            continue
        n = spring_displacement(m, qpos, j, x)
        dadr = m.jnt_dofadr[j]
        # qfrc_spring = -k x
        for i in range(n):
            out[dadr + i] -= k * x[i]


@njit(cache=True, nogil=True)
def passive(m, d):
    """qfrc_passive = joint spring forces - dof_damping * qvel (mj_passive, springs/dampers)."""
    out = d.qfrc_passive
    flags = m.opt_disableflags[0]
    # qfrc_damper = -b v
    if flags & DSBL_DAMPER:
        for i in range(m.nv):
            out[i] = 0.0
    else:
        damping = m.dof_damping
        qvel = d.qvel
        for i in range(m.nv):
            out[i] = -damping[i] * qvel[i]
    if not flags & DSBL_SPRING:
        _springs(m, d)
