"""Passive forces: springs, dampers, gravity compensation, fluid (MuJoCo's mj_passive).

MuJoCo's engine_passive.c and the "Computation" chapter's fluid forces, both fluid models.

qfrc_passive = qfrc_spring + qfrc_damper + qfrc_fluid + qfrc_gravcomp (on the dofs of joints
without actuatorgravcomp; the others get it through qfrc_actuator, `jointspace.actuation`)
+ qfrc_adhesion:
  hinge, slide:  qfrc_spring = -k (q - q_spring)
  ball:          qfrc_spring = -k log(q_spring⁻¹ ⊗ q)   (rotation vector in the joint frame)
  free:          the ball rule for the rotation, -k (p - p_spring) for the world translation
  every dof:     qfrc_damper = -c(qvel) qvel,  c(v) = b + p₀ |v| + p₁ v²
  tendons:       qfrc_spring += ten_Jᵀ (-k_t x_t), x_t the length outside the dead band
                 tendon_lengthspring; qfrc_damper += ten_Jᵀ (-c_t(v_t) v_t), v_t = ten_velocity
  gravcomp:      qfrc_gravcomp = Σ_b J_bᵀ (-gravcomp_b m_b g)   (J_b at the body's com)
  fluid:         qfrc_fluid = Σ_b J_bᵀ R_b f_b, with f_b the inertia-box drag and viscous
                 force of body b in its inertial frame (below), or, for a body with a geom of
                 fluidshape="ellipsoid", the ellipsoid model's force on each such geom
  adhesion:      qfrc_adhesion = Σ_c J_cᵀ (−δ_c n_c) over the contacts of the last collision
                 with adhesion δ_c ≠ 0 (J_c the Jacobian of geom 2's point minus geom 1's at
                 the contact point, n_c the normal): the constant pull that, with the
                 reference bias of `jointspace.constraint.reference`, translates the
                 friction cone by δ_c (MuJoCo 4.0's mj_adhesion; only when m.flg_adhesion)
with k = jnt_stiffness, b = dof_damping and p = dof_dampingpoly (MuJoCo 4's damping
polynomial, the second and third values of `damping`; tendon_damping and tendon_dampingpoly
for tendons), each plus what the joint's or tendon's actuators lend it, their damping
times gear₀² (`jointspace.actuator_passive`). The implicit integrators and the inverse use
the damper's velocity derivative −c'(v) with c'(v) = ∂(c(v) v)/∂v = b + 2 p₀ |v| + 3 p₁ v²
(`damping_deriv`). The spring forces are exact gradients of the energies that
`jointspace.dynamics.energy` reports (½ k |x|² with x the displacement above). With both
the "spring" and "damper" flags disabled every passive force is zero, as in MuJoCo;
gravity compensation also needs gravity (flag and a nonzero vector).

The inertia-box model (MuJoCo's "Computation" chapter, fluid forces) replaces body b of mass
m and principal inertia (I₀, I₁, I₂) by the uniform box of the same inertia, of sides
s_i = sqrt(6 (I_j + I_k − I_i) / m). With ω, v the body's angular and linear velocity at its
com in its inertial frame, less the wind (v − Rᵀ wind), viscosity β and density ρ:
  viscous (Stokes)   τ = −π d³ β ω,   f = −3 π d β v,   d = (s₀ + s₁ + s₂) / 3
  drag (quadratic)   f_i = −½ ρ s_j s_k |v_i| v_i,   τ_i = −ρ s_i (s_j⁴ + s_k⁴) |ω_i| ω_i / 64

The ellipsoid model replaces a geom by the ellipsoid of semi-axes r (its size) and, with ω, v
at the geom's center in its frame (less the wind), adds: the added-mass force and torque
(p_v = ρ m_v ∘ v, p_ω = ρ I_v ∘ ω: f = p_v × ω, τ = p_v × v + p_ω × ω, m_v and I_v the
compiled virtual mass and inertia, geom_fluid), the Magnus lift c_M ρ V ω × v, the Kutta
lift (c_K ρ cos α A_p n × v) × v with A_p the area projected along v and n its normal, and
the drag −(β 3π D + ρ |v| (c_b A_p + c_s (A_max − A_p))) v and torque
−(β π D³ + ρ |m_ω|) ω, D = 2 (r₀ + r₁ + r₂) / 3, m_ω the slender/angular drag moments.
"""

import math

import numpy as np
from numba import njit

from jointspace.actuator_passive import dof_damping, tendon_damping
from jointspace.rotation import quat_mul
from jointspace.types import (
    DSBL_CONTACT,
    DSBL_DAMPER,
    DSBL_GRAVITY,
    DSBL_SPRING,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_SPHERE,
    JNT_BALL,
    JNT_FREE,
    MINVAL,
    SMALL_SPRING,
)


@njit(cache=True, inline="always")
def damping_coef(b, p0, p1, v):
    """c(v) = b + p₀ |v| + p₁ v²: the damper force is −c(v) v (mju_polyForce, odd)."""
    x = abs(v)
    return b + p0 * x + p1 * (x * x)


@njit(cache=True, inline="always")
def damping_deriv(b, p0, p1, v):
    """∂(c(v) v)/∂v = b + 2 p₀ |v| + 3 p₁ v², the damper's velocity derivative (mjd_xPolyForce)."""
    x = abs(v)
    return b + 2.0 * p0 * x + 3.0 * p1 * (x * x)


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
def _tendon_springs_dampers(m, d, flags):
    """Tendon springs (dead band [lower, upper]) and dampers, through ten_J (mj_springdamper).

    x = L − upper above the band, L − lower below it, 0 inside;
    qfrc_spring += ten_Jᵀ (−k x),  qfrc_damper += ten_Jᵀ (−c(v) v), v = ten_velocity,
    c(v) = b + p₀ |v| + p₁ v² (`damping_coef`), the tendon's actuators' damping included.
    """
    spring = not flags & DSBL_SPRING
    damper = not flags & DSBL_DAMPER
    for t in range(m.ntendon):
        k = m.tendon_stiffness[t] if spring else 0.0
        b, p0, p1 = tendon_damping(m, t)
        if not damper:
            b = p0 = p1 = 0.0
        if k == 0.0 and b == 0.0 and p0 == 0.0 and p1 == 0.0:
            continue
        length = d.ten_length[t]
        lower = m.tendon_lengthspring[t, 0]
        upper = m.tendon_lengthspring[t, 1]
        x = length - upper if length > upper else length - lower if length < lower else 0.0
        fs = -k * x
        v = d.ten_velocity[t]
        fd = -v * damping_coef(b, p0, p1, v) if damper else 0.0
        J = d.ten_J[t]
        for c in range(m.nv):
            if J[c] != 0.0:
                d.qfrc_spring[c] += J[c] * fs
                d.qfrc_damper[c] += J[c] * fd


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


@njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def _max_moment(r0, r1, r2):
    """8/15 π r₀ max(r₁, r₂)⁴: the largest moment of the ellipsoid about axis 0's normal."""
    q = max(r1, r2)
    return 8.0 / 15.0 * math.pi * r0 * (q * q) * (q * q)


@njit(cache=True)
def _fluid_ellipsoid(m, d, b):
    """qfrc_fluid += the ellipsoid-model force on body b's fluid geoms (mj_ellipsoidFluidModel)."""
    rho = m.opt_density[0]
    beta = m.opt_viscosity[0]
    root = m.body_rootid[b]
    w0, w1, w2 = d.cvel[b, 0], d.cvel[b, 1], d.cvel[b, 2]
    for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
        c = m.geom_fluid[g]
        if c[0] == 0.0:
            continue
        size = m.geom_size[g]
        gt = m.geom_type[g]
        if gt == GEOM_SPHERE:
            r0 = r1 = r2 = size[0]
        elif gt == GEOM_CAPSULE:
            r0, r1, r2 = size[0], size[0], size[1] + size[0]
        elif gt == GEOM_CYLINDER:
            r0, r1, r2 = size[0], size[0], size[1]
        else:
            r0, r1, r2 = size[0], size[1], size[2]
        R = d.geom_xmat[g]
        p0, p1, p2 = d.geom_xpos[g, 0], d.geom_xpos[g, 1], d.geom_xpos[g, 2]
        # velocity at the geom center, less the wind, in the geom frame
        e0 = p0 - d.subtree_com[root, 0]
        e1 = p1 - d.subtree_com[root, 1]
        e2 = p2 - d.subtree_com[root, 2]
        v0 = d.cvel[b, 3] + w1 * e2 - w2 * e1 - m.opt_wind[0]
        v1 = d.cvel[b, 4] + w2 * e0 - w0 * e2 - m.opt_wind[1]
        v2 = d.cvel[b, 5] + w0 * e1 - w1 * e0 - m.opt_wind[2]
        a0 = R[0] * w0 + R[3] * w1 + R[6] * w2
        a1 = R[1] * w0 + R[4] * w1 + R[7] * w2
        a2 = R[2] * w0 + R[5] * w1 + R[8] * w2
        l0 = R[0] * v0 + R[3] * v1 + R[6] * v2
        l1 = R[1] * v0 + R[4] * v1 + R[7] * v2
        l2 = R[2] * v0 + R[5] * v1 + R[8] * v2
        # added mass: p_v = ρ m_v ∘ v, p_ω = ρ I_v ∘ ω; f = p_v × ω, τ = p_v × v + p_ω × ω
        pv0, pv1, pv2 = rho * c[6] * l0, rho * c[7] * l1, rho * c[8] * l2
        pw0, pw1, pw2 = rho * c[9] * a0, rho * c[10] * a1, rho * c[11] * a2
        f0, f1, f2 = _cross(pv0, pv1, pv2, a0, a1, a2)
        t0, t1, t2 = _cross(pv0, pv1, pv2, l0, l1, l2)
        u0, u1, u2 = _cross(pw0, pw1, pw2, a0, a1, a2)
        t0 += u0
        t1 += u1
        t2 += u2
        # Magnus lift c_M ρ V ω × v
        volume = 4.0 / 3.0 * math.pi * r0 * r1 * r2
        dmax = max(max(r0, r1), r2)
        dmin = min(min(r0, r1), r2)
        dmid = r0 + r1 + r2 - dmax - dmin
        a_max = math.pi * dmax * dmid
        k = c[5] * rho * volume
        g0, g1, g2 = _cross(a0, a1, a2, l0, l1, l2)
        f0 += k * g0
        f1 += k * g1
        f2 += k * g2
        # Kutta lift: (c_K ρ cos α A_p n × v) × v, n the (unnormalized) normal of the area
        # A_p projected along v
        q0, q1, q2 = r1 * r2, r2 * r0, r0 * r1
        q0, q1, q2 = q0 * q0, q1 * q1, q2 * q2
        proj_denom = q0 * q0 * l0 * l0 + q1 * q1 * l1 * l1 + q2 * q2 * l2 * l2
        proj_num = q0 * l0 * l0 + q1 * l1 * l1 + q2 * l2 * l2
        a_proj = math.pi * math.sqrt(proj_denom / max(MINVAL, proj_num))
        speed = math.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
        cos_alpha = proj_num / max(MINVAL, speed * proj_denom)
        k = c[4] * rho * cos_alpha * a_proj
        n0, n1, n2 = _cross(q0 * l0, q1 * l1, q2 * l2, l0, l1, l2)
        g0, g1, g2 = _cross(k * n0, k * n1, k * n2, l0, l1, l2)
        f0 += g0
        f1 += g1
        f2 += g2
        # drag: linear (Stokes) plus quadratic, force and torque
        diam = 2.0 / 3.0 * (r0 + r1 + r2)
        i_max = 8.0 / 15.0 * math.pi * dmid * (dmax * dmax) * (dmax * dmax)
        ii0 = _max_moment(r0, r1, r2)
        ii1 = _max_moment(r1, r2, r0)
        ii2 = _max_moment(r2, r0, r1)
        m0 = a0 * (c[3] * ii0 + c[2] * (i_max - ii0))
        m1 = a1 * (c[3] * ii1 + c[2] * (i_max - ii1))
        m2 = a2 * (c[3] * ii2 + c[2] * (i_max - ii2))
        drag_lin = beta * 3.0 * math.pi * diam + rho * speed * (
            a_proj * c[1] + c[2] * (a_max - a_proj))
        drag_ang = beta * math.pi * diam * diam * diam + rho * math.sqrt(
            m0 * m0 + m1 * m1 + m2 * m2)
        t0 -= drag_ang * a0
        t1 -= drag_ang * a1
        t2 -= drag_ang * a2
        f0 -= drag_lin * l0
        f1 -= drag_lin * l1
        f2 -= drag_lin * l2
        s = c[0]
        t0, t1, t2, f0, f1, f2 = s * t0, s * t1, s * t2, s * f0, s * f1, s * f2
        apply_ft(m, d,
                 R[0] * f0 + R[1] * f1 + R[2] * f2, R[3] * f0 + R[4] * f1 + R[5] * f2,
                 R[6] * f0 + R[7] * f1 + R[8] * f2,
                 R[0] * t0 + R[1] * t1 + R[2] * t2, R[3] * t0 + R[4] * t1 + R[5] * t2,
                 R[6] * t0 + R[7] * t1 + R[8] * t2, p0, p1, p2, b, d.qfrc_fluid)


@njit(cache=True)
def fluid(m, d):
    """qfrc_fluid on every body with mass (mj_fluid); True if the medium is not empty.

    A body with a geom of fluidshape="ellipsoid" gets the ellipsoid model on those geoms,
    every other body the inertia-box model.
    """
    if m.opt_viscosity[0] == 0.0 and m.opt_density[0] == 0.0:
        return False
    for b in range(1, m.nbody):
        if m.body_mass[b] < MINVAL:
            continue
        ellipsoid = False
        for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
            if m.geom_fluid[g, 0] > 0.0:
                ellipsoid = True
        if ellipsoid:
            _fluid_ellipsoid(m, d, b)
        else:
            _fluid_box(m, d, b)
    return True


@njit(cache=True)
def adhesion(m, d):
    """qfrc_adhesion += J_cᵀ (−δ_c n_c) for each adhesive contact (mj_adhesion).

    The Jacobian is walked along both geoms' dof chains (their common dofs cancel);
    returns True if some contact pulled.
    """
    if m.opt_disableflags[0] & DSBL_CONTACT:
        return False
    found = False
    for c in range(d.ncon[0]):
        delta = d.contact_adhesion[c]
        if delta == 0.0 or d.contact_exclude[c] > 1:
            continue
        found = True
        p = d.contact_pos[c]
        f = d.contact_frame[c]
        for side in range(2):
            b = m.geom_bodyid[d.contact_geom[c, side]]
            root = m.body_rootid[b]
            o0 = p[0] - d.subtree_com[root, 0]
            o1 = p[1] - d.subtree_com[root, 1]
            o2 = p[2] - d.subtree_com[root, 2]
            scale = delta if side == 0 else -delta
            w = m.body_weldid[b]
            num = m.body_dofnum[w]
            i = m.body_dofadr[w] + num - 1 if num else -1
            while i >= 0:
                cd = d.cdof[i]
                jp0 = cd[3] + cd[1] * o2 - cd[2] * o1
                jp1 = cd[4] + cd[2] * o0 - cd[0] * o2
                jp2 = cd[5] + cd[0] * o1 - cd[1] * o0
                d.qfrc_adhesion[i] += scale * (f[0] * jp0 + f[1] * jp1 + f[2] * jp2)
                i = m.dof_parentid[i]
    return found


@njit(cache=True, nogil=True)
def passive(m, d):
    """qfrc_passive and its parts (spring, damper, gravcomp, fluid and adhesion forces).

    mj_passive: springs and dampers, gravity compensation, fluid forces and contact
    adhesion (from the contacts in d); zero when both the "spring" and "damper" flags are
    disabled.
    """
    nv = m.nv
    for i in range(nv):
        d.qfrc_spring[i] = 0.0
        d.qfrc_damper[i] = 0.0
        d.qfrc_gravcomp[i] = 0.0
        d.qfrc_fluid[i] = 0.0
        d.qfrc_adhesion[i] = 0.0
        d.qfrc_passive[i] = 0.0
    flags = m.opt_disableflags[0]
    if flags & DSBL_SPRING and flags & DSBL_DAMPER:
        return
    # qfrc_damper = -c(v) v,  c(v) = b + p₀ |v| + p₁ v² (the joint's actuators' included)
    if not flags & DSBL_DAMPER:
        qvel = d.qvel
        for i in range(nv):
            v = qvel[i]
            b, p0, p1 = dof_damping(m, i)
            d.qfrc_damper[i] = -v * damping_coef(b, p0, p1, v)
    if not flags & DSBL_SPRING:
        _springs(m, d)
    if m.ntendon:
        _tendon_springs_dampers(m, d, flags)
    has_gravcomp = gravcomp(m, d)
    has_fluid = fluid(m, d)
    has_adhesion = m.flg_adhesion[0] != 0 and adhesion(m, d)
    for i in range(nv):
        d.qfrc_passive[i] = d.qfrc_spring[i] + d.qfrc_damper[i]
    if has_fluid:
        for i in range(nv):
            d.qfrc_passive[i] += d.qfrc_fluid[i]
    if has_adhesion:
        for i in range(nv):
            d.qfrc_passive[i] += d.qfrc_adhesion[i]
    if has_gravcomp:
        for i in range(nv):
            if not m.jnt_actgravcomp[m.dof_jntid[i]]:
                d.qfrc_passive[i] += d.qfrc_gravcomp[i]
