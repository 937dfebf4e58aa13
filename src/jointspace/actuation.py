"""Actuation: transmission, actuator forces and their velocity derivative.

Mirrors MuJoCo's mj_transmission (engine_core_smooth.c) and mj_fwdActuation
(engine_forward.c) for actuators without activation dynamics:

  transmission  joint (hinge/slide): length = gear₀ q,  moment = gear₀ e_dof
                joint (ball):        length = gear₀:₃ · log(q),  moment = gear₀:₃ on its dofs
                joint (free):        length = 0,  moment = gear on its 6 dofs
                tendon:              length = gear₀ ten_length,  moment = gear₀ ten_J
                site (no refsite):   length = 0,  moment = jacpᵀ R gear₀:₃ + jacrᵀ R gear₃:₆
  velocity      actuator_velocity = moment · qvel
  force         f = gain · ctrl + bias,  gain = gainprm₀ (fixed) or
                gainprm₀ + gainprm₁ length + gainprm₂ velocity (affine),
                bias = biasprm₀ + biasprm₁ length + biasprm₂ velocity (affine)
                ctrl is clamped to ctrlrange when ctrllimited (d.ctrl itself is untouched),
                f to forcerange when forcelimited
  joint space   qfrc_actuator = momentᵀ f, plus qfrc_gravcomp on the dofs of joints with
                actuatorgravcomp; then each joint with actuatorfrclimited has its (first)
                dof's qfrc_actuator clamped to jnt_actfrcrange (MuJoCo's per-joint clamp)

actuator_moment is stored dense, (nu, nv).
"""

import numpy as np
from numba import njit

from jointspace.kinematics import jac_point
from jointspace.passive import quat_to_vel
from jointspace.types import (
    BIAS_AFFINE,
    DSBL_ACTUATION,
    DSBL_CLAMPCTRL,
    DSBL_GRAVITY,
    GAIN_AFFINE,
    JNT_BALL,
    JNT_FREE,
    MAXVAL,
    SMALL_TRANSMISSION,
    TRN_JOINT,
    TRN_SITE,
    TRN_TENDON,
)


@njit(cache=True)
def transmission(m, d):
    """actuator_length and actuator_moment from the current pose (mj_transmission)."""
    nv = m.nv
    if m.nu == 0:
        return
    d.actuator_moment[:, :] = 0.0
    buf = d.scratch_small
    t = SMALL_TRANSMISSION
    quat = buf[t:t + 4]
    axis = buf[t + 4:t + 7]
    wrench = buf[t + 7:t + 13]
    for i in range(m.nu):
        gear = m.actuator_gear[i]
        tid = m.actuator_trnid[i, 0]
        mom = d.actuator_moment[i]
        if m.actuator_trntype[i] == TRN_JOINT:
            jt = m.jnt_type[tid]
            qadr = m.jnt_qposadr[tid]
            dadr = m.jnt_dofadr[tid]
            if jt == JNT_FREE:
                d.actuator_length[i] = 0.0
                for k in range(6):
                    mom[dadr + k] = gear[k]
            elif jt == JNT_BALL:
                # length = gear · expmap(q)
                nrm = 0.0
                for k in range(4):
                    quat[k] = d.qpos[qadr + k]
                    nrm += quat[k] * quat[k]
                nrm = np.sqrt(nrm)
                if nrm > 1e-15:
                    quat /= nrm
                quat_to_vel(axis, quat)
                d.actuator_length[i] = axis[0] * gear[0] + axis[1] * gear[1] + axis[2] * gear[2]
                for k in range(3):
                    mom[dadr + k] = gear[k]
            else:
                d.actuator_length[i] = d.qpos[qadr] * gear[0]
                mom[dadr] = gear[0]
        elif m.actuator_trntype[i] == TRN_TENDON:
            # length = gear₀ ten_length,  moment = gear₀ ten_J
            d.actuator_length[i] = gear[0] * d.ten_length[tid]
            for c in range(nv):
                mom[c] = gear[0] * d.ten_J[tid, c]
        elif m.actuator_trntype[i] == TRN_SITE:
            # wrench = (R gear_lin, R gear_rot) in world axes; moment = jacpᵀ f + jacrᵀ τ
            d.actuator_length[i] = 0.0
            jacp = np.empty((3, nv))
            jacr = np.empty((3, nv))
            xmat = d.site_xmat[tid]
            for r in range(3):
                wrench[r] = xmat[3 * r] * gear[0] + xmat[3 * r + 1] * gear[1] + \
                    xmat[3 * r + 2] * gear[2]
                wrench[3 + r] = xmat[3 * r] * gear[3] + xmat[3 * r + 1] * gear[4] + \
                    xmat[3 * r + 2] * gear[5]
            jac_point(m, d, m.site_bodyid[tid], d.site_xpos[tid], jacp, jacr)
            for c in range(nv):
                mom[c] = (jacp[0, c] * wrench[0] + jacp[1, c] * wrench[1] + jacp[2, c] * wrench[2]
                          + jacr[0, c] * wrench[3] + jacr[1, c] * wrench[4]
                          + jacr[2, c] * wrench[5])


@njit(cache=True, inline="always")
def _moment_range(m, i):
    """Dofs [lo, hi) outside which actuator i's moment row is zero.

    A joint transmission's row is zero outside its joint's dofs (`transmission`); products
    over this range equal the dense ones (the skipped terms are zeros).
    """
    if m.actuator_trntype[i] == TRN_JOINT:
        j = m.actuator_trnid[i, 0]
        jt = m.jnt_type[j]
        lo = m.jnt_dofadr[j]
        return lo, lo + (6 if jt == JNT_FREE else 3 if jt == JNT_BALL else 1)
    return 0, m.nv


@njit(cache=True)
def actuator_velocity(m, d):
    """actuator_velocity = actuator_moment · qvel."""
    mom = d.actuator_moment
    qvel = d.qvel
    out = d.actuator_velocity
    for i in range(m.nu):
        lo, hi = _moment_range(m, i)
        s = 0.0
        for c in range(lo, hi):
            s += mom[i, c] * qvel[c]
        out[i] = s


@njit(cache=True)
def actuation(m, d):
    """actuator_force and qfrc_actuator = momentᵀ force (mj_fwdActuation, no dynamics).

    Needs qfrc_gravcomp (`jointspace.passive`) for joints with actuatorgravcomp.
    """
    nu = m.nu
    d.qfrc_actuator[:] = 0.0
    if nu == 0:
        return
    if m.opt_disableflags[0] & DSBL_ACTUATION:
        d.actuator_force[:] = 0.0
        return
    clamp = (m.opt_disableflags[0] & DSBL_CLAMPCTRL) == 0
    ctrl = np.empty(nu)
    bad = False
    for i in range(nu):
        u = d.ctrl[i]
        if clamp and m.actuator_ctrllimited[i]:
            u = min(max(u, m.actuator_ctrlrange[i, 0]), m.actuator_ctrlrange[i, 1])
        ctrl[i] = u
        if not (abs(u) <= MAXVAL):
            bad = True
    # a bad control (NaN, inf, |u| > 1e10) zeroes all controls, as MuJoCo does
    if bad:
        ctrl[:] = 0.0
    for i in range(nu):
        gp = m.actuator_gainprm[i]
        bp = m.actuator_biasprm[i]
        # force = gain ctrl + bias
        gain = gp[0]
        if m.actuator_gaintype[i] == GAIN_AFFINE:
            gain += gp[1] * d.actuator_length[i] + gp[2] * d.actuator_velocity[i]
        f = gain * ctrl[i]
        if m.actuator_biastype[i] == BIAS_AFFINE:
            f += bp[0] + bp[1] * d.actuator_length[i] + bp[2] * d.actuator_velocity[i]
        if m.actuator_forcelimited[i]:
            f = min(max(f, m.actuator_forcerange[i, 0]), m.actuator_forcerange[i, 1])
        d.actuator_force[i] = f
        mom = d.actuator_moment[i]
        lo, hi = _moment_range(m, i)
        for c in range(lo, hi):
            d.qfrc_actuator[c] += mom[c] * f
    _joint_level(m, d)


@njit(cache=True)
def _joint_level(m, d):
    """qfrc_actuator += qfrc_gravcomp on actuatorgravcomp joints, then the actfrcrange clamp."""
    g = m.opt_gravity
    gravity = not (m.opt_disableflags[0] & DSBL_GRAVITY or (g[0] == 0.0 and g[1] == 0.0
                                                             and g[2] == 0.0))
    for j in range(m.njnt):
        if gravity and m.jnt_actgravcomp[j]:
            jt = m.jnt_type[j]
            a = m.jnt_dofadr[j]
            for k in range(a, a + (6 if jt == JNT_FREE else 3 if jt == JNT_BALL else 1)):
                d.qfrc_actuator[k] += d.qfrc_gravcomp[k]
        if m.jnt_actfrclimited[j]:
            a = m.jnt_dofadr[j]
            d.qfrc_actuator[a] = min(max(d.qfrc_actuator[a], m.jnt_actfrcrange[j, 0]),
                                     m.jnt_actfrcrange[j, 1])


@njit(cache=True)
def actuator_damping(m, d, i):
    """∂(actuator_force_i)/∂(actuator_velocity_i), 0 when the force is clamped (mjd_actuator_vel).

    The affine bias contributes biasprm₂, the affine gain gainprm₂ · ctrl (d.ctrl as given,
    not clamped: mjd_actuator_vel's approximation).
    """
    if m.opt_disableflags[0] & DSBL_ACTUATION:
        return 0.0
    if m.actuator_forcelimited[i]:
        f = d.actuator_force[i]
        if f <= m.actuator_forcerange[i, 0] or f >= m.actuator_forcerange[i, 1]:
            return 0.0
    dfdv = 0.0
    if m.actuator_biastype[i] == BIAS_AFFINE:
        dfdv = m.actuator_biasprm[i, 2]
    if m.actuator_gaintype[i] == GAIN_AFFINE:
        dfdv += m.actuator_gainprm[i, 2] * d.ctrl[i]
    return dfdv
