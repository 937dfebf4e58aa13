"""Passive forces: springs, dampers, gravity compensation, fluid (MuJoCo's mj_passive).

MuJoCo's engine_passive.c; the ellipsoid fluid model is not computed (the loader refuses it).

qfrc_passive = qfrc_spring + qfrc_damper + qfrc_fluid + qfrc_gravcomp (on the dofs of joints
without actuatorgravcomp; the others get it through qfrc_actuator, `jointspace.actuation`):
  hinge, slide:  qfrc_spring = -k (q - q_spring)
  ball:          qfrc_spring = -k log(q_spring⁻¹ ⊗ q)   (rotation vector in the joint frame)
  free:          the ball rule for the rotation, -k (p - p_spring) for the world translation
  every dof:     qfrc_damper = -b qvel
  gravcomp:      qfrc_gravcomp = Σ_b J_bᵀ (-gravcomp_b m_b g)   (J_b at the body's com)
  fluid:         qfrc_fluid = Σ_b J_bᵀ R_b f_b, with f_b the inertia-box drag and viscous
                 force of body b in its inertial frame (below)
with k = jnt_stiffness, b = dof_damping. The spring and damper forces are exact gradients of
the energies that `jointspace.dynamics.energy` reports (½ k |x|² with x the displacement
above). With both the "spring" and "damper" flags disabled every passive force is zero, as in
MuJoCo; gravity compensation also needs gravity (flag and a nonzero vector).

The inertia-box model (MuJoCo's "Computation" chapter, fluid forces) replaces body b of mass
m and principal inertia (I₀, I₁, I₂) by the uniform box of the same inertia, of sides
s_i = sqrt(6 (I_j + I_k − I_i) / m). With ω, v the body's angular and linear velocity at its
com in its inertial frame, less the wind (v − Rᵀ wind), viscosity β and density ρ:
  viscous (Stokes)   τ = −π d³ β ω,   f = −3 π d β v,   d = (s₀ + s₁ + s₂) / 3
  drag (quadratic)   f_i = −½ ρ s_j s_k |v_i| v_i,   τ_i = −ρ s_i (s_j⁴ + s_k⁴) |ω_i| ω_i / 64
"""

import math

import numpy as np
from numba import njit

from jointspace.rotation import quat_mul
from jointspace.types import (
    DSBL_DAMPER,
    DSBL_GRAVITY,
    DSBL_SPRING,
    JNT_BALL,
    JNT_FREE,
    MINVAL,
    SMALL_SPRING,
)


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
    """qfrc_spring = −k x: joint spring forces (hinge and slide inline, without scratch)."""
    stiffness = m.jnt_stiffness
    jtype = m.jnt_type
    qpos = d.qpos
    qspring = m.qpos_spring
    out = d.qfrc_spring
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


@njit(cache=True)
def apply_ft(m, d, f0, f1, f2, t0, t1, t2, p0, p1, p2, b, qfrc):
    """qfrc += J(p)ᵀ (f, t): a world force f at point p of body b, and a torque t (mj_applyFT).

    The spatial force in the c-frame of b's tree is (t + r × f, f), r = p − subtree_com[root];
    its generalized force on dof i is cdof_i · (t + r × f, f), over b's dofs and their
    ancestors.
    """
    w = m.body_weldid[b]
    if m.body_dofnum[w] == 0:
        return
    root = m.body_rootid[b]
    r0 = p0 - d.subtree_com[root, 0]
    r1 = p1 - d.subtree_com[root, 1]
    r2 = p2 - d.subtree_com[root, 2]
    m0 = t0 + r1 * f2 - r2 * f1
    m1 = t1 + r2 * f0 - r0 * f2
    m2 = t2 + r0 * f1 - r1 * f0
    i = m.body_dofadr[w] + m.body_dofnum[w] - 1
    while i >= 0:
        c = d.cdof[i]
        qfrc[i] += c[0] * m0 + c[1] * m1 + c[2] * m2 + c[3] * f0 + c[4] * f1 + c[5] * f2
        i = m.dof_parentid[i]


@njit(cache=True)
def gravcomp(m, d):
    """qfrc_gravcomp = Σ_b J_bᵀ (−gravcomp_b m_b g) at each com (mj_gravcomp); True if any."""
    g = m.opt_gravity
    if m.opt_disableflags[0] & DSBL_GRAVITY or (g[0] == 0.0 and g[1] == 0.0 and g[2] == 0.0):
        return False
    found = False
    for b in range(1, m.nbody):
        gc = m.body_gravcomp[b]
        if gc == 0.0:
            continue
        found = True
        s = -m.body_mass[b] * gc
        apply_ft(m, d, s * g[0], s * g[1], s * g[2], 0.0, 0.0, 0.0,
                 d.xipos[b, 0], d.xipos[b, 1], d.xipos[b, 2], b, d.qfrc_gravcomp)
    return found


@njit(cache=True)
def _fluid_box(m, d, b):
    """qfrc_fluid += the inertia-box fluid force of body b (mj_inertiaBoxFluidModel)."""
    mass = m.body_mass[b]
    inertia = m.body_inertia[b]
    s0 = math.sqrt(max(MINVAL, inertia[1] + inertia[2] - inertia[0]) / mass * 6.0)
    s1 = math.sqrt(max(MINVAL, inertia[0] + inertia[2] - inertia[1]) / mass * 6.0)
    s2 = math.sqrt(max(MINVAL, inertia[0] + inertia[1] - inertia[2]) / mass * 6.0)
    R = d.ximat[b]
    root = m.body_rootid[b]
    # world velocity at the com: v = v_c + ω × (xipos − subtree_com), less the wind
    w0, w1, w2 = d.cvel[b, 0], d.cvel[b, 1], d.cvel[b, 2]
    r0 = d.xipos[b, 0] - d.subtree_com[root, 0]
    r1 = d.xipos[b, 1] - d.subtree_com[root, 1]
    r2 = d.xipos[b, 2] - d.subtree_com[root, 2]
    v0 = d.cvel[b, 3] + w1 * r2 - w2 * r1 - m.opt_wind[0]
    v1 = d.cvel[b, 4] + w2 * r0 - w0 * r2 - m.opt_wind[1]
    v2 = d.cvel[b, 5] + w0 * r1 - w1 * r0 - m.opt_wind[2]
    # in the inertial frame: Rᵀ ω, Rᵀ v (R row-major, world = R local)
    a0 = R[0] * w0 + R[3] * w1 + R[6] * w2
    a1 = R[1] * w0 + R[4] * w1 + R[7] * w2
    a2 = R[2] * w0 + R[5] * w1 + R[8] * w2
    l0 = R[0] * v0 + R[3] * v1 + R[6] * v2
    l1 = R[1] * v0 + R[4] * v1 + R[7] * v2
    l2 = R[2] * v0 + R[5] * v1 + R[8] * v2
    t0 = t1 = t2 = f0 = f1 = f2 = 0.0
    beta = m.opt_viscosity[0]
    if beta > 0.0:
        diam = (s0 + s1 + s2) / 3.0
        ca = -math.pi * diam * diam * diam * beta
        cl = -3.0 * math.pi * diam * beta
        t0, t1, t2 = ca * a0, ca * a1, ca * a2
        f0, f1, f2 = cl * l0, cl * l1, cl * l2
    rho = m.opt_density[0]
    if rho > 0.0:
        f0 -= 0.5 * rho * s1 * s2 * abs(l0) * l0
        f1 -= 0.5 * rho * s0 * s2 * abs(l1) * l1
        f2 -= 0.5 * rho * s0 * s1 * abs(l2) * l2
        q0, q1, q2 = s0 * s0 * s0 * s0, s1 * s1 * s1 * s1, s2 * s2 * s2 * s2
        t0 -= rho * s0 * (q1 + q2) * abs(a0) * a0 / 64.0
        t1 -= rho * s1 * (q0 + q2) * abs(a1) * a1 / 64.0
        t2 -= rho * s2 * (q0 + q1) * abs(a2) * a2 / 64.0
    # back to world axes, applied at the com
    apply_ft(m, d,
             R[0] * f0 + R[1] * f1 + R[2] * f2, R[3] * f0 + R[4] * f1 + R[5] * f2,
             R[6] * f0 + R[7] * f1 + R[8] * f2,
             R[0] * t0 + R[1] * t1 + R[2] * t2, R[3] * t0 + R[4] * t1 + R[5] * t2,
             R[6] * t0 + R[7] * t1 + R[8] * t2,
             d.xipos[b, 0], d.xipos[b, 1], d.xipos[b, 2], b, d.qfrc_fluid)


@njit(cache=True)
def fluid(m, d):
    """qfrc_fluid: the inertia-box model on every body with mass (mj_fluid); True if any.

    The ellipsoid model (geom fluidshape) is refused by the loader.
    """
    if m.opt_viscosity[0] == 0.0 and m.opt_density[0] == 0.0:
        return False
    for b in range(1, m.nbody):
        if m.body_mass[b] >= MINVAL:
            _fluid_box(m, d, b)
    return True


@njit(cache=True, nogil=True)
def passive(m, d):
    """qfrc_passive and its parts qfrc_spring, qfrc_damper, qfrc_gravcomp, qfrc_fluid.

    mj_passive: springs and dampers, gravity compensation and fluid forces; zero when both
    the "spring" and "damper" flags are disabled.
    """
    nv = m.nv
    for i in range(nv):
        d.qfrc_spring[i] = 0.0
        d.qfrc_damper[i] = 0.0
        d.qfrc_gravcomp[i] = 0.0
        d.qfrc_fluid[i] = 0.0
        d.qfrc_passive[i] = 0.0
    flags = m.opt_disableflags[0]
    if flags & DSBL_SPRING and flags & DSBL_DAMPER:
        return
    # qfrc_damper = -b v
    if not flags & DSBL_DAMPER:
        damping = m.dof_damping
        qvel = d.qvel
        for i in range(nv):
            d.qfrc_damper[i] = -damping[i] * qvel[i]
    if not flags & DSBL_SPRING:
        _springs(m, d)
    has_gravcomp = gravcomp(m, d)
    has_fluid = fluid(m, d)
    for i in range(nv):
        d.qfrc_passive[i] = d.qfrc_spring[i] + d.qfrc_damper[i]
    if has_fluid:
        for i in range(nv):
            d.qfrc_passive[i] += d.qfrc_fluid[i]
    if has_gravcomp:
        for i in range(nv):
            if not m.jnt_actgravcomp[m.dof_jntid[i]]:
                d.qfrc_passive[i] += d.qfrc_gravcomp[i]
