"""Actuation: transmission, actuator forces and their velocity derivative.

Mirrors MuJoCo's mj_transmission (engine_core_smooth.c), mj_fwdActuation and
mj_nextActivation (engine_forward.c) and the muscle curves (engine_util_misc.c):

  transmission  joint (hinge/slide): length = gear₀ q,  moment = gear₀ e_dof
                joint (ball):        length = gear₀:₃ · log(q),  moment = gear₀:₃ on its dofs
                joint (free):        length = 0,  moment = gear on its 6 dofs
                tendon:              length = gear₀ ten_length,  moment = gear₀ ten_J
                jointinparent: as joint, the rotational gear given in the parent frame
                                     (rotated into the child frame by q⁻¹)
                site (no refsite):   length = 0,  moment = jacpᵀ R gear₀:₃ + jacrᵀ R gear₃:₆
                site with refsite:   length = the site's position and rotation vector in the
                                     refsite frame · gear, moment from the Jacobian differences
                slidercrank:         length = a·v − sqrt((a·v)² + r² − v·v) (`_slidercrank_moment`)
                body (adhesion):     length = 0, moment = −mean of the normal Jacobians of
                                     the body's contacts (`body_transmission`, after the
                                     constraint rows)
  velocity      actuator_velocity = moment · qvel
  force         f = gain · ctrl + bias,  gain = gainprm₀ (fixed) or
                gainprm₀ + gainprm₁ length + gainprm₂ velocity (affine),
                bias = biasprm₀ + biasprm₁ length + biasprm₂ velocity (affine)
                ctrl is that of d.ctrl, or for a delayed actuator (actuator_delay ≠ 0) the
                one its history buffer holds for d.time − delay (`jointspace.history`);
                ctrl is clamped to ctrlrange when ctrllimited (d.ctrl itself is untouched),
                f to forcerange when forcelimited (after the tendon clamp below)
  activation    act_dot (actuators with dynamics; act is their last activation):
                integrator  u;  filter, filterexact  (u − act) / max(MINVAL, τ), τ = dynprm₀;
                muscle  (ū − act) / τ(ū − act), ū = clamp(u, 0, 1), τ from dynprm (τ_act,
                τ_deact, smoothing width) at clamp(act, 0, 1) (`muscle_dynamics`).
                With dynamics the force is gain · act, or gain · (the next step's act) with
                actearly; the next act (`next_activation`) is act + h act_dot, or with
                filterexact act + act_dot τ (1 − exp(−h/τ)), then clamped to actrange when
                actlimited. Muscle gain and bias: `muscle_gain`, `muscle_bias`.
  tendon clamp  the forces of the actuators on a tendon with actuatorfrclimited are scaled
                so that their sum lies in tendon_actfrcrange (`_tendon_level`), before the
                forcerange clamp
  groups        an actuator whose group is disabled (opt_disableactuator, MJCF
                actuatorgroupdisable) has force 0 and activation rate 0 in the integrators
                (its act_dot is still computed), as MuJoCo's mj_actuatorDisabled
  joint space   qfrc_actuator = momentᵀ f, plus qfrc_gravcomp on the dofs of joints with
                actuatorgravcomp; then each joint with actuatorfrclimited has its (first)
                dof's qfrc_actuator clamped to jnt_actfrcrange (MuJoCo's per-joint clamp)

  pid           a pid actuator reads ctrl[ctrladr : ctrladr + ctrlnum], its inputs [pos, vel,
                ff] as actuator_ctrlspec selects, and holds up to two activations [slew,
                integral] (`_pid`); every other actuator but orientation reads the one
                control ctrl[ctrladr]
  orientation   gaintype/biastype so3 (trntype so3, `_so3_transmission`): 3 outputs, lengths
                log(q) of a ball joint's quaternion or of a site's in its refsite, moment rows
                the joint's dofs or the relative rotational Jacobian on the site's axes;
                force_k = kp log(q⁻¹ q_t)_k + biasprm₀ + biasprm₂ velocity_k, q = exp(length),
                q_t from 3 controls (expmap), 4 (quat) or 3 activations (integrator); the
                norm of the 3 torques clamped to forcerange₁ (`_so3`, `_so3_clamp_apply`)

Per-output arrays (actuator_length, _velocity, _force, _moment rows; actuator_gear,
_lengthrange, _acc0) hold actuator i's outputs at [outadr_i, outadr_i + outnum_i); every
classic actuator has one output. actuator_moment is stored dense, (nout, nv).
"""

import numpy as np
from numba import njit

from jointspace.actuator_passive import actuator_disabled
from jointspace.history import read_ctrl_kernel
from jointspace.kinematics import jac_point
from jointspace.passive import quat_to_vel, sub_quat
from jointspace.rotation import quat_mul, rot_vec_quat
from jointspace.types import (
    BIAS_AFFINE,
    BIAS_DCMOTOR,
    BIAS_MUSCLE,
    CHART_QUAT,
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CONE_ELLIPTIC,
    DSBL_ACTUATION,
    DSBL_CLAMPCTRL,
    DSBL_GRAVITY,
    DYN_DCMOTOR,
    DYN_FILTER,
    DYN_FILTEREXACT,
    DYN_INTEGRATOR,
    DYN_MUSCLE,
    DYN_NONE,
    DYN_PID,
    GAIN_AFFINE,
    GAIN_DCMOTOR,
    GAIN_FIXED,
    GAIN_MUSCLE,
    GAIN_PID,
    GAIN_SO3,
    INPUT_FF,
    INPUT_NONE,
    INPUT_POS,
    INPUT_VEL,
    JNT_BALL,
    JNT_FREE,
    MAXVAL,
    MINVAL,
    SMALL_TRANSMISSION,
    TRN_BODY,
    TRN_JOINT,
    TRN_JOINTINPARENT,
    TRN_SITE,
    TRN_SLIDERCRANK,
    TRN_SO3,
    TRN_TENDON,
)


@njit(cache=True)
def transmission(m, d):
    """actuator_length and actuator_moment from the current pose (mj_transmission)."""
    if m.nactuator == 0:
        return
    d.actuator_moment[:, :] = 0.0
    buf = d.scratch_small
    t = SMALL_TRANSMISSION
    quat = buf[t:t + 4]
    axis = buf[t + 4:t + 7]
    wrench = buf[t + 7:t + 13]
    for i in range(m.nactuator):
        o = m.actuator_outadr[i]
        gear = m.actuator_gear[o]
        tid = m.actuator_trnid[i, 0]
        mom = d.actuator_moment[o]
        trn = m.actuator_trntype[i]
        if trn == TRN_JOINT or trn == TRN_JOINTINPARENT:
            jt = m.jnt_type[tid]
            qadr = m.jnt_qposadr[tid]
            dadr = m.jnt_dofadr[tid]
            if jt == JNT_FREE or jt == JNT_BALL:
                # the joint's (normalized) orientation, for the ball's length and for gears
                # given in the parent frame (rotated into the child frame by its inverse)
                qa = qadr + (3 if jt == JNT_FREE else 0)
                nrm = 0.0
                for k in range(4):
                    quat[k] = d.qpos[qa + k]
                    nrm += quat[k] * quat[k]
                nrm = np.sqrt(nrm)
                if nrm > 1e-15:
                    quat /= nrm
                g = gear[3:6] if jt == JNT_FREE else gear[0:3]
                if trn == TRN_JOINT:
                    wrench[0:3] = g
                else:
                    quat[1:4] *= -1.0
                    rot_vec_quat(wrench[0:3], g, quat)
                    quat[1:4] *= -1.0
            if jt == JNT_FREE:
                d.actuator_length[o] = 0.0
                for k in range(3):
                    mom[dadr + k] = gear[k]
                    mom[dadr + 3 + k] = wrench[k]
            elif jt == JNT_BALL:
                # length = gear · expmap(q)
                quat_to_vel(axis, quat)
                d.actuator_length[o] = (axis[0] * wrench[0] + axis[1] * wrench[1]
                                        + axis[2] * wrench[2])
                for k in range(3):
                    mom[dadr + k] = wrench[k]
            else:
                d.actuator_length[o] = d.qpos[qadr] * gear[0]
                mom[dadr] = gear[0]
        elif trn == TRN_TENDON:
            # length = gear₀ ten_length,  moment = gear₀ ten_J
            d.actuator_length[o] = gear[0] * d.ten_length[tid]
            for c in range(m.nv):
                mom[c] = gear[0] * d.ten_J[tid, c]
        elif trn == TRN_SITE:
            if m.actuator_trnid[i, 1] < 0:
                _site_moment(m, d, o, tid, gear, wrench, mom)
            else:
                _refsite_moment(m, d, o, tid, m.actuator_trnid[i, 1], gear, wrench, mom)
        elif trn == TRN_SLIDERCRANK:
            _slidercrank_moment(m, d, i, o, tid, m.actuator_trnid[i, 1], gear[0], mom)
        elif trn == TRN_BODY:
            # set by body_transmission once the contacts and their rows are known
            d.actuator_length[o] = 0.0
        elif trn == TRN_SO3:
            _so3_transmission(m, d, i, o, quat, axis)


@njit(cache=True)
def body_transmission(m, d):
    """actuator_moment of body transmissions (adhesion) from the contacts of their body.

    Runs after the constraint rows, as mj_transmission runs after mj_makeConstraint. Over
    the n contacts of a geom of body b (either side), each contact's normal Jacobian row
    (efc_J: the normal row for condim 1 and elliptic cones, the mean of the 2(dim − 1)
    pyramid edges otherwise; for a contact in the margin's gap, with no rows,
    n · (jacp(b2, p) − jacp(b1, p))) is summed, and

        actuator_moment = −(Σ normal Jacobians) / n,   actuator_length = 0,

    zero without contacts: a positive force pulls the body onto what it touches.
    """
    nbody = 0
    for i in range(m.nactuator):
        if m.actuator_trntype[i] == TRN_BODY:
            nbody += 1
    if nbody == 0:
        return
    jacp = np.empty((3, m.nv))
    jacr = np.empty((3, m.nv))
    jac2 = np.empty((3, m.nv))
    elliptic = m.opt_cone[0] == CONE_ELLIPTIC
    for i in range(m.nactuator):
        if m.actuator_trntype[i] != TRN_BODY:
            continue
        b = m.actuator_trnid[i, 0]
        o = m.actuator_outadr[i]
        mom = d.actuator_moment[o]
        mom[:] = 0.0
        d.actuator_length[o] = 0.0
        counter = 0
        for c in range(d.ncon[0]):
            b1 = m.geom_bodyid[d.contact_geom[c, 0]]
            b2 = m.geom_bodyid[d.contact_geom[c, 1]]
            if b1 != b and b2 != b:
                continue
            counter += 1
            if d.contact_exclude[c] == 0:
                continue
            # in the gap: the normal component of the relative Jacobian at the contact point
            jac_point(m, d, b1, d.contact_pos[c], jacp, jacr)
            jac_point(m, d, b2, d.contact_pos[c], jac2, jacr)
            n = d.contact_frame[c]
            for k in range(m.nv):
                mom[k] += (n[0] * (jac2[0, k] - jacp[0, k]) + n[1] * (jac2[1, k] - jacp[1, k])
                           + n[2] * (jac2[2, k] - jacp[2, k]))
        if counter == 0:
            continue
        # active contacts: efc_Jᵀ w, w selecting (or averaging) each contact's normal rows
        prev = -1
        for r in range(d.nefc[0]):
            ct = d.efc_type[r]
            if ct < CNSTR_CONTACT_FRICTIONLESS or ct > CNSTR_CONTACT_ELLIPTIC:
                continue
            c = d.efc_id[r]
            first = c != prev
            prev = c
            b1 = m.geom_bodyid[d.contact_geom[c, 0]]
            b2 = m.geom_bodyid[d.contact_geom[c, 1]]
            if b1 != b and b2 != b:
                continue
            dim = d.contact_dim[c]
            if dim == 1 or elliptic:
                wr = 1.0 if first else 0.0
            else:
                wr = 0.5 / (dim - 1)
            if wr != 0.0:
                for k in range(m.nv):
                    mom[k] += wr * d.efc_J[r, k]
        for k in range(m.nv):
            mom[k] *= -1.0 / counter


@njit(cache=True)
def _site_moment(m, d, o, s, gear, wrench, mom):
    """Site without refsite: length 0, moment = jacpᵀ R gear₀:₃ + jacrᵀ R gear₃:₆ (output o)."""
    nv = m.nv
    d.actuator_length[o] = 0.0
    jacp = np.empty((3, nv))
    jacr = np.empty((3, nv))
    xmat = d.site_xmat[s]
    for r in range(3):
        wrench[r] = xmat[3 * r] * gear[0] + xmat[3 * r + 1] * gear[1] + xmat[3 * r + 2] * gear[2]
        wrench[3 + r] = (xmat[3 * r] * gear[3] + xmat[3 * r + 1] * gear[4]
                         + xmat[3 * r + 2] * gear[5])
    jac_point(m, d, m.site_bodyid[s], d.site_xpos[s], jacp, jacr)
    for c in range(nv):
        mom[c] = (jacp[0, c] * wrench[0] + jacp[1, c] * wrench[1] + jacp[2, c] * wrench[2]
                  + jacr[0, c] * wrench[3] + jacr[1, c] * wrench[4] + jacr[2, c] * wrench[5])


@njit(cache=True)
def _common_dof(m, s0, s1):
    """The last dof shared by the chains of two sites' bodies, −1 if none (mj_transmission)."""
    b0 = m.body_weldid[m.site_bodyid[s0]]
    b1 = m.body_weldid[m.site_bodyid[s1]]
    a0 = m.body_dofadr[b0] + m.body_dofnum[b0] - 1
    a1 = m.body_dofadr[b1] + m.body_dofnum[b1] - 1
    if a0 < 0 or a1 < 0:
        return -1
    while a0 != a1:
        if a0 < a1:
            a1 = m.dof_parentid[a1]
        else:
            a0 = m.dof_parentid[a0]
        if a0 == -1 or a1 == -1:
            return -1
    return a0


@njit(cache=True)
def _refsite_moment(m, d, o, s, ref, gear, wrench, mom):
    """Site relative to a refsite, output o (mj_transmission).

    length = (R_refᵀ (p − p_ref)) · gear₀:₃ + log(q_ref⁻¹ ⊗ q_site) · gear₃:₆; moment = the
    Jacobian differences projected on the gears in the refsite frame, with the dofs both
    chains share cleared (their columns cancel).
    """
    nv = m.nv
    jp = np.empty((3, nv))
    jr = np.empty((3, nv))
    kp = np.empty((3, nv))
    kr = np.empty((3, nv))
    jac_point(m, d, m.site_bodyid[s], d.site_xpos[s], jp, jr)
    jac_point(m, d, m.site_bodyid[ref], d.site_xpos[ref], kp, kr)
    common = _common_dof(m, s, ref)
    rmat = d.site_xmat[ref]
    length = 0.0
    if gear[0] != 0.0 or gear[1] != 0.0 or gear[2] != 0.0:
        v = d.site_xpos[s] - d.site_xpos[ref]
        for r in range(3):
            # (R_refᵀ v)_r · gear_r; wrench = R_ref gear₀:₃
            length += (rmat[r] * v[0] + rmat[3 + r] * v[1] + rmat[6 + r] * v[2]) * gear[r]
            wrench[r] = (rmat[3 * r] * gear[0] + rmat[3 * r + 1] * gear[1]
                         + rmat[3 * r + 2] * gear[2])
        for c in range(nv):
            mom[c] = ((jp[0, c] - kp[0, c]) * wrench[0] + (jp[1, c] - kp[1, c]) * wrench[1]
                      + (jp[2, c] - kp[2, c]) * wrench[2])
    if gear[3] != 0.0 or gear[4] != 0.0 or gear[5] != 0.0:
        # each site's orientation: its body's xquat ⊗ site_quat (as MuJoCo 4.0 composes it)
        qs = np.empty(4)
        qr = np.empty(4)
        quat_mul(qs, d.xquat[m.site_bodyid[s]], m.site_quat[s])
        quat_mul(qr, d.xquat[m.site_bodyid[ref]], m.site_quat[ref])
        vec = np.empty(3)
        sub_quat(vec, qs, qr)
        length += vec[0] * gear[3] + vec[1] * gear[4] + vec[2] * gear[5]
        for r in range(3):
            wrench[3 + r] = (rmat[3 * r] * gear[3] + rmat[3 * r + 1] * gear[4]
                             + rmat[3 * r + 2] * gear[5])
        for c in range(nv):
            mom[c] += ((jr[0, c] - kr[0, c]) * wrench[3] + (jr[1, c] - kr[1, c]) * wrench[4]
                       + (jr[2, c] - kr[2, c]) * wrench[5])
    da = common
    while da >= 0:
        mom[da] = 0.0
        da = m.dof_parentid[da]
    d.actuator_length[o] = length


@njit(cache=True)
def _so3_transmission(m, d, i, o, quat, axis):
    """Orientation transmission: 3 lengths and 3 moment rows at outputs o, o + 1, o + 2.

    Ball joint: lengths = log(q) (q its normalized qpos), rows = e_dof+k. Site with refsite:
    lengths = log(q_ref⁻¹ q_site), rows = (jacr_site − jacr_ref)ᵀ x_k with x_k the site's
    axis k in the world (torque and velocity in the site frame), the dofs both chains share
    cleared (mj_transmission, mjTRN_SO3).
    """
    tid = m.actuator_trnid[i, 0]
    ref = m.actuator_trnid[i, 1]
    if ref < 0:
        qa = m.jnt_qposadr[tid]
        for k in range(4):
            quat[k] = d.qpos[qa + k]
        _normalize4(quat)
        _quat_vel(axis, quat)
        dadr = m.jnt_dofadr[tid]
        for k in range(3):
            d.actuator_length[o + k] = axis[k]
            d.actuator_moment[o + k, dadr + k] = 1.0
        return
    nv = m.nv
    qs = np.empty(4)
    qr = np.empty(4)
    quat_mul(qs, d.xquat[m.site_bodyid[tid]], m.site_quat[tid])
    quat_mul(qr, d.xquat[m.site_bodyid[ref]], m.site_quat[ref])
    _sub_quat(axis, qs, qr)
    jp = np.empty((3, nv))
    jr = np.empty((3, nv))
    kp = np.empty((3, nv))
    kr = np.empty((3, nv))
    jac_point(m, d, m.site_bodyid[tid], d.site_xpos[tid], jp, jr)
    jac_point(m, d, m.site_bodyid[ref], d.site_xpos[ref], kp, kr)
    # jr = relative rotational Jacobian, zero on the dofs both chains share
    for r in range(3):
        for c in range(nv):
            jr[r, c] -= kr[r, c]
    da = _common_dof(m, tid, ref)
    while da >= 0:
        jr[0, da] = 0.0
        jr[1, da] = 0.0
        jr[2, da] = 0.0
        da = m.dof_parentid[da]
    xmat = d.site_xmat[tid]
    for k in range(3):
        d.actuator_length[o + k] = axis[k]
        mom = d.actuator_moment[o + k]
        for c in range(nv):
            mom[c] = xmat[k] * jr[0, c] + xmat[k + 3] * jr[1, c] + xmat[k + 6] * jr[2, c]


@njit(cache=True)
def _slidercrank_moment(m, d, i, o, crank, slider, gear, mom):
    """Slider-crank of actuator i, output o (mj_transmission).

    With a the slider's z axis, v = crank − slider and rod length r: length = a·v −
    sqrt((a·v)² + r² − v·v) (a·v when the root is not real), times gear; the moment by the
    chain rule through the Jacobians of v and of a.
    """
    nv = m.nv
    xm = d.site_xmat[slider]
    a0, a1, a2 = xm[2], xm[5], xm[8]
    v = d.site_xpos[crank] - d.site_xpos[slider]
    rod = m.actuator_cranklength[i]
    av = v[0] * a0 + v[1] * a1 + v[2] * a2
    det = av * av + rod * rod - (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    dlda = np.empty(3)
    dldv = np.empty(3)
    if det <= 0.0:
        length = av
        dlda[:] = v
        dldv[0], dldv[1], dldv[2] = a0, a1, a2
    else:
        sdet = np.sqrt(det)
        length = av - sdet
        f = 1.0 - av / sdet
        dldv[0] = a0 * f + v[0] / sdet
        dldv[1] = a1 * f + v[1] / sdet
        dldv[2] = a2 * f + v[2] / sdet
        for k in range(3):
            dlda[k] = v[k] * f
    sp = np.empty((3, nv))
    sr = np.empty((3, nv))
    cp = np.empty((3, nv))
    cr = np.empty((3, nv))
    jac_point(m, d, m.site_bodyid[slider], d.site_xpos[slider], sp, sr)
    jac_point(m, d, m.site_bodyid[crank], d.site_xpos[crank], cp, cr)
    for c in range(nv):
        # ∂a/∂q column: jacr × a
        ja0 = sr[1, c] * a2 - sr[2, c] * a1
        ja1 = sr[2, c] * a0 - sr[0, c] * a2
        ja2 = sr[0, c] * a1 - sr[1, c] * a0
        mom[c] = (dlda[0] * ja0 + dldv[0] * (cp[0, c] - sp[0, c])
                  + dlda[1] * ja1 + dldv[1] * (cp[1, c] - sp[1, c])
                  + dlda[2] * ja2 + dldv[2] * (cp[2, c] - sp[2, c])) * gear
    d.actuator_length[o] = length * gear


@njit(cache=True, inline="always")
def _moment_range(m, i):
    """Dofs [lo, hi) outside which actuator i's moment row is zero.

    A joint transmission's row is zero outside its joint's dofs (`transmission`); products
    over this range equal the dense ones (the skipped terms are zeros).
    """
    trn = m.actuator_trntype[i]
    if (trn == TRN_JOINT or trn == TRN_JOINTINPARENT
            or (trn == TRN_SO3 and m.actuator_trnid[i, 1] < 0)):
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
    for i in range(m.nactuator):
        lo, hi = _moment_range(m, i)
        for o in range(m.actuator_outadr[i], m.actuator_outadr[i] + m.actuator_outnum[i]):
            s = 0.0
            for c in range(lo, hi):
                s += mom[o, c] * qvel[c]
            out[o] = s


@njit(cache=True)
def muscle_gain_length(x, lmin, lmax):
    """Active force–length curve at normalized length x: two quadratic pairs, peak 1 at x = 1."""
    if not lmin <= x <= lmax:
        return 0.0
    a = 0.5 * (lmin + 1.0)
    b = 0.5 * (1.0 + lmax)
    if x <= a:
        y = (x - lmin) / max(MINVAL, a - lmin)
        return 0.5 * y * y
    if x <= 1.0:
        y = (1.0 - x) / max(MINVAL, 1.0 - a)
        return 1.0 - 0.5 * y * y
    if x <= b:
        y = (x - 1.0) / max(MINVAL, b - 1.0)
        return 1.0 - 0.5 * y * y
    y = (lmax - x) / max(MINVAL, lmax - b)
    return 0.5 * y * y


@njit(cache=True, inline="always")
def _muscle_scale(lo, hi, acc0, prm):
    """(peak force, optimal length L0, normalized length offset) of a muscle."""
    force = prm[2]
    if force < 0.0:
        force = prm[3] / max(MINVAL, acc0)
    return force, (hi - lo) / max(MINVAL, prm[1] - prm[0])


@njit(cache=True)
def muscle_gain(length, velocity, lo, hi, acc0, prm):
    """Muscle gain −F₀ FL(L) FV(V) (mju_muscleGain).

    prm = range₂, force, scale, lmin, lmax, vmax, fpmax, fvmax; [lo, hi] the lengthrange;
    F₀ = scale / acc0 when force < 0.
    """
    force, L0 = _muscle_scale(lo, hi, acc0, prm)
    x = prm[0] + (length - lo) / max(MINVAL, L0)
    v = velocity / max(MINVAL, L0 * prm[6])
    fl = muscle_gain_length(x, prm[4], prm[5])
    fvmax = prm[8]
    y = fvmax - 1.0
    if v <= -1.0:
        fv = 0.0
    elif v <= 0.0:
        fv = (v + 1.0) * (v + 1.0)
    elif v <= y:
        fv = fvmax - (y - v) * (y - v) / max(MINVAL, y)
    else:
        fv = fvmax
    return -force * fl * fv


@njit(cache=True)
def muscle_gain_vel(length, velocity, lo, hi, acc0, prm):
    """∂muscle_gain/∂velocity: −F₀ FL(L) FV′(V) / (L0 vmax) (MuJoCo's mjd_muscleGain_vel)."""
    force, L0 = _muscle_scale(lo, hi, acc0, prm)
    x = prm[0] + (length - lo) / max(MINVAL, L0)
    v = velocity / max(MINVAL, L0 * prm[6])
    fl = muscle_gain_length(x, prm[4], prm[5])
    y = prm[8] - 1.0
    if v <= -1.0:
        dfv = 0.0
    elif v <= 0.0:
        dfv = 2.0 * v + 2.0
    elif v <= y:
        dfv = (-2.0 * v + 2.0 * y) / max(MINVAL, y)
    else:
        dfv = 0.0
    return -force * fl * dfv / max(MINVAL, L0 * prm[6])


@njit(cache=True)
def muscle_bias(length, lo, hi, acc0, prm):
    """Passive muscle force (mju_muscleBias).

    0 below L = 1, half-quadratic up to b = (1 + lmax)/2, linear beyond, scaled by −F₀ fpmax.
    """
    force, L0 = _muscle_scale(lo, hi, acc0, prm)
    x = prm[0] + (length - lo) / max(MINVAL, L0)
    b = 0.5 * (1.0 + prm[5])
    if x <= 1.0:
        return 0.0
    if x <= b:
        y = (x - 1.0) / max(MINVAL, b - 1.0)
        return -force * prm[7] * 0.5 * y * y
    y = (x - b) / max(MINVAL, b - 1.0)
    return -force * prm[7] * (0.5 + y)


@njit(cache=True)
def muscle_dynamics(ctrl, act, prm):
    """Muscle activation rate (mju_muscleDynamics, Millard et al. 2013 time scales)."""
    u = min(max(ctrl, 0.0), 1.0)
    a = min(max(act, 0.0), 1.0)
    tau_act = prm[0] * (0.5 + 1.5 * a)
    tau_deact = prm[1] / (0.5 + 1.5 * a)
    width = prm[2]
    du = u - act
    if width < MINVAL:
        tau = tau_act if du > 0.0 else tau_deact
    else:
        # quintic smoothstep of du / width + 1/2 (mju_sigmoid)
        x = du / width + 0.5
        sig = 0.0 if x <= 0.0 else 1.0 if x >= 1.0 else x * x * x * (3.0 * x * (2.0 * x - 5.0)
                                                                    + 10.0)
        tau = tau_deact + (tau_act - tau_deact) * sig
    return du / max(MINVAL, tau)


@njit(cache=True)
def next_activation(m, i, act, act_dot, h):
    """Actuator i's activation after a step h at rate act_dot (mj_nextActivation)."""
    if m.actuator_dyntype[i] == DYN_FILTEREXACT:
        tau = max(MINVAL, m.actuator_dynprm[i, 0])
        act = act + act_dot * tau * (1.0 - np.exp(-h / tau))
    else:
        act = act + act_dot * h
    if m.actuator_actlimited[i]:
        act = min(max(act, m.actuator_actrange[i, 0]), m.actuator_actrange[i, 1])
    return act


@njit(cache=True)
def advance_act(m, d, act_dot, h):
    """act ← next_activation of every stateful actuator at the rates act_dot (mj_advance).

    With actuation disabled act stays as it is (not even clamped), as in MuJoCo 4.0; an
    actuator of a disabled group (`actuator_disabled`) advances at rate 0 (clamped only).
    """
    if m.opt_disableflags[0] & DSBL_ACTUATION:
        return
    for i in range(m.nactuator):
        adr = m.actuator_actadr[i]
        if adr >= 0:
            off = actuator_disabled(m, i)
            dcmotor = m.actuator_dyntype[i] == DYN_DCMOTOR
            for a in range(adr, adr + m.actuator_actnum[i]):
                rate = 0.0 if off else act_dot[a]
                if dcmotor:
                    d.act[a] = _dcmotor_next(m, d, i, a - adr, d.act[a], rate, h)
                else:
                    d.act[a] = next_activation(m, i, d.act[a], rate, h)
            if m.actuator_dyntype[i] == DYN_INTEGRATOR:
                # a rotational setpoint in act: the representative nearest the length
                o = m.actuator_outadr[i]
                period = wrap_period(m, i)
                if period > 0.0:
                    a = adr + m.actuator_actnum[i] - 1
                    d.act[a] -= period * _round((d.act[a] - d.actuator_length[o]) / period)
                elif m.actuator_gaintype[i] == GAIN_SO3:
                    # an orientation setpoint: its representative of angle at most π
                    angle = np.sqrt(d.act[adr] ** 2 + d.act[adr + 1] ** 2 + d.act[adr + 2] ** 2)
                    if angle > np.pi:
                        scale = (angle - 2.0 * np.pi * _round(angle / (2.0 * np.pi))) / angle
                        for k in range(3):
                            d.act[adr + k] *= scale


@njit(cache=True)
def actuation(m, d):
    """act_dot, actuator_force and qfrc_actuator = momentᵀ force (mj_fwdActuation).

    Needs qfrc_gravcomp (`jointspace.passive`) for joints with actuatorgravcomp.
    """
    nact = m.nactuator
    d.qfrc_actuator[:] = 0.0
    if nact == 0:
        return
    if m.opt_disableflags[0] & DSBL_ACTUATION:
        # act_dot keeps its last values (the integrators do not apply them), as in MuJoCo
        d.actuator_force[:] = 0.0
        return
    clamp = (m.opt_disableflags[0] & DSBL_CLAMPCTRL) == 0
    bad = _bad_ctrl(m, d, clamp)
    h = m.opt_timestep[0]
    for i in range(nact):
        if m.actuator_gaintype[i] == GAIN_SO3:
            _so3(m, d, i, clamp, bad, h)
            continue
        if m.actuator_gaintype[i] == GAIN_PID:
            f = _pid(m, d, i, clamp, bad, True)
            d.actuator_force[m.actuator_outadr[i]] = 0.0 if actuator_disabled(m, i) else f
            continue
        if m.actuator_gaintype[i] == GAIN_DCMOTOR:
            f = _dcmotor(m, d, i, clamp, bad, True)[0]
            d.actuator_force[m.actuator_outadr[i]] = 0.0 if actuator_disabled(m, i) else f
            continue
        dyn = m.actuator_dyntype[i]
        adr = m.actuator_actadr[i]
        u = 0.0 if bad else _clamped_ctrl(m, d, i, 0, clamp)
        x = u
        period = wrap_period(m, i)
        if dyn != DYN_NONE:
            act = d.act[adr]
            if dyn == DYN_INTEGRATOR:
                rate = u
            elif dyn == DYN_FILTER or dyn == DYN_FILTEREXACT:
                rate = (u - act) / max(MINVAL, m.actuator_dynprm[i, 0])
            elif dyn == DYN_MUSCLE:
                rate = muscle_dynamics(u, act, m.actuator_dynprm[i])
            else:
                rate = 0.0
            d.act_dot[adr] = rate
            x = next_activation(m, i, act, rate, h) if m.actuator_actearly[i] else act
        if period > 0.0:
            # a rotational setpoint: its representative nearest the length
            x -= period * _round((x - d.actuator_length[m.actuator_outadr[i]]) / period)
        # a disabled group's actuator keeps its act_dot and exerts no force
        d.actuator_force[m.actuator_outadr[i]] = (0.0 if actuator_disabled(m, i)
                                                  else _force(m, d, i, x))
    if m.ntendon:
        _tendon_level(m, d)
    for i in range(nact):
        o = m.actuator_outadr[i]
        if m.actuator_gaintype[i] == GAIN_SO3:
            _so3_clamp_apply(m, d, i, o)
            continue
        f = d.actuator_force[o]
        if m.actuator_forcelimited[i]:
            f = min(max(f, m.actuator_forcerange[i, 0]), m.actuator_forcerange[i, 1])
            d.actuator_force[o] = f
        if m.actuator_biastype[i] == BIAS_DCMOTOR and not actuator_disabled(m, i):
            # cogging and LuGre friction, beyond the current limits
            f = _dcmotor_mechanical(m, d, i, f)
            d.actuator_force[o] = f
        mom = d.actuator_moment[o]
        lo, hi = _moment_range(m, i)
        for c in range(lo, hi):
            d.qfrc_actuator[c] += mom[c] * f
    _joint_level(m, d)


# The orientation servo's quaternion helpers take MuJoCo's operations in MuJoCo's order
# (mju_normalize4, mji_quat2Vel, mji_subQuat, expmap2Quat): its forcerange clamp and the
# implicit integrators' "torque norm at its bound" test see the last bit of the force.


@njit(cache=True, inline="always")
def _normalize4(q):
    """q /= |q| unless |q| is within MINVAL of 1; the identity below MINVAL (mju_normalize4)."""
    nrm = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if nrm < MINVAL:
        q[0], q[1], q[2], q[3] = 1.0, 0.0, 0.0, 0.0
    elif abs(nrm - 1.0) > MINVAL:
        inv = 1.0 / nrm
        for k in range(4):
            q[k] *= inv


@njit(cache=True, inline="always")
def _quat_vel(out, q):
    """Rotation vector of q: unit axis times 2 atan2(|v|, w), wrapped to (−π, π]."""
    a0, a1, a2 = q[1], q[2], q[3]
    s = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if s < MINVAL:
        a0, a1, a2 = 1.0, 0.0, 0.0
    else:
        inv = 1.0 / s
        a0 *= inv
        a1 *= inv
        a2 *= inv
    speed = 2.0 * np.arctan2(s, q[0])
    if speed > np.pi:
        speed -= 2.0 * np.pi
    out[0] = a0 * speed
    out[1] = a1 * speed
    out[2] = a2 * speed


@njit(cache=True, inline="always")
def _sub_quat(out, qa, qb):
    """out = log(qb⁻¹ ⊗ qa) (mji_subQuat)."""
    qd = np.empty(4)
    qd[0] = qb[0] * qa[0] + qb[1] * qa[1] + qb[2] * qa[2] + qb[3] * qa[3]
    qd[1] = qb[0] * qa[1] - qb[1] * qa[0] - qb[2] * qa[3] + qb[3] * qa[2]
    qd[2] = qb[0] * qa[2] + qb[1] * qa[3] - qb[2] * qa[0] - qb[3] * qa[1]
    qd[3] = qb[0] * qa[3] - qb[1] * qa[2] + qb[2] * qa[1] - qb[3] * qa[0]
    _quat_vel(out, qd)


@njit(cache=True)
def _expmap_quat(out, v):
    """Unit quaternion of the rotation vector v (MuJoCo's expmap2Quat): identity below MINVAL."""
    angle = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if angle < MINVAL:
        out[0], out[1], out[2], out[3] = 1.0, 0.0, 0.0, 0.0
        return
    a0, a1, a2 = v[0] / angle, v[1] / angle, v[2] / angle
    s = np.sin(angle * 0.5)
    out[0] = np.cos(angle * 0.5)
    out[1] = a0 * s
    out[2] = a1 * s
    out[3] = a2 * s


@njit(cache=True)
def _so3(m, d, i, clamp, bad, h):
    """Orientation servo i: act_dot (integrator) and its 3 forces before the norm clamp.

    Setpoint q_t: the controls as a quaternion (input quat, normalized; 0 gives the
    identity) or as a rotation vector (expmap), or with the integrator the activations
    (act_dot = the 3 controls; the next step's act with actearly). With q = exp(length),
    force_k = kp · log(q⁻¹ q_t)_k + biasprm₀ + biasprm₂ · velocity_k (mj_fwdActuation).
    """
    o = m.actuator_outadr[i]
    u = np.zeros(4)
    nc = m.actuator_ctrlnum[i]
    if not bad:
        for j in range(nc):
            u[j] = _clamped_ctrl(m, d, i, j, clamp)
    qt = np.empty(4)
    if m.actuator_ctrlspec[i] == CHART_QUAT:
        for k in range(4):
            qt[k] = u[k]
        _normalize4(qt)
    else:
        if m.actuator_dyntype[i] == DYN_INTEGRATOR:
            adr = m.actuator_actadr[i]
            for k in range(3):
                d.act_dot[adr + k] = u[k]
                if m.actuator_actearly[i]:
                    u[k] = next_activation(m, i, d.act[adr + k], u[k], h)
                else:
                    u[k] = d.act[adr + k]
        _expmap_quat(qt, u)
    if actuator_disabled(m, i):
        for k in range(3):
            d.actuator_force[o + k] = 0.0
        return
    q = np.empty(4)
    _expmap_quat(q, d.actuator_length[o:o + 3])
    e = np.empty(3)
    _sub_quat(e, qt, q)
    kp = m.actuator_gainprm[i, 0]
    bp = m.actuator_biasprm[i]
    for k in range(3):
        d.actuator_force[o + k] = kp * e[k] + bp[0] + bp[2] * d.actuator_velocity[o + k]


@njit(cache=True)
def _so3_clamp_apply(m, d, i, o):
    """Clamp an orientation servo's torque norm to forcerange₁, then qfrc += momentᵀ force."""
    f = d.actuator_force[o:o + 3]
    if m.actuator_forcelimited[i]:
        nrm = np.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
        hi = m.actuator_forcerange[i, 1]
        if nrm > hi:
            scale = hi / nrm
            for k in range(3):
                f[k] *= scale
    lo, hi = _moment_range(m, i)
    for k in range(3):
        mom = d.actuator_moment[o + k]
        for c in range(lo, hi):
            d.qfrc_actuator[c] += mom[c] * f[k]


@njit(cache=True, inline="always")
def _clamped_ctrl(m, d, i, j, clamp):
    """Control j of actuator i (ctrl[ctrladr + j]), clamped to its ctrlrange when limited.

    A delayed actuator (actuator_delay ≠ 0) reads its control at d.time − delay from its
    history buffer instead (MuJoCo's mj_readCtrl in mj_fwdActuation).
    """
    k = m.actuator_ctrladr[i] + j
    if m.nhistory > 0 and m.actuator_delay[i] != 0.0:
        u = read_ctrl_kernel(m, d, i, j, d.time[0], -1)
    else:
        u = d.ctrl[k]
    if clamp and m.actuator_ctrllimited[k]:
        u = min(max(u, m.actuator_ctrlrange[k, 0]), m.actuator_ctrlrange[k, 1])
    return u


@njit(cache=True)
def _bad_ctrl(m, d, clamp):
    """True when a (clamped) control is NaN, ±inf or beyond MAXVAL: MuJoCo then zeroes all."""
    for i in range(m.nactuator):
        for j in range(m.actuator_ctrlnum[i]):
            if not (abs(_clamped_ctrl(m, d, i, j, clamp)) <= MAXVAL):
                return True
    return False


@njit(cache=True, inline="always")
def _round(x):
    """x rounded half away from zero, in int32's range (MuJoCo's mju_round)."""
    if x > 2147483647.0:
        return 2147483647.0
    if x < -2147483648.0:
        return -2147483648.0
    return np.floor(x + 0.5) if x >= 0.0 else -np.floor(-x + 0.5)


@njit(cache=True)
def wrap_period(m, i):
    """Period of a servo's rotational transmission, 0 for the others (MuJoCo's wrapPeriod).

    Servos: pid actuators, and fixed gains with an affine bias of matching kp
    (gainprm₀ = −biasprm₁) without dynamics or with an integrator (position, intvelocity).

    2π |gear₃:₆| for a site transmission with a refsite and a purely rotational gear,
    2π |gear₀:₃| for a joint transmission on a ball joint. A setpoint u then counts as
    the representative u − period · round((u − length) / period) nearest the length.
    """
    dyn = m.actuator_dyntype[i]
    servo = (m.actuator_gaintype[i] == GAIN_FIXED and m.actuator_biastype[i] == BIAS_AFFINE
             and m.actuator_gainprm[i, 0] == -m.actuator_biasprm[i, 1]
             and (dyn == DYN_NONE or dyn == DYN_INTEGRATOR))
    if not servo and m.actuator_gaintype[i] != GAIN_PID:
        return 0.0
    g = m.actuator_gear[m.actuator_outadr[i]]
    trn = m.actuator_trntype[i]
    if (trn == TRN_SITE and m.actuator_trnid[i, 1] >= 0 and g[0] == 0.0 and g[1] == 0.0
            and g[2] == 0.0):
        return 2.0 * np.pi * np.sqrt(g[3] * g[3] + g[4] * g[4] + g[5] * g[5])
    if ((trn == TRN_JOINT or trn == TRN_JOINTINPARENT)
            and m.jnt_type[m.actuator_trnid[i, 0]] == JNT_BALL):
        return 2.0 * np.pi * np.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2])
    return 0.0


@njit(cache=True)
def _pid(m, d, i, clamp, bad, write):
    """A pid actuator's force before any clamp; with `write`, its act_dot (mj_fwdActuation).

    Inputs in order [pos, vel, ff] as actuator_ctrlspec selects (absent: 0). States in
    order [slew, integral]: with slewmax = dynprm₁ > 0 the position setpoint moves at
    most slewmax · h from the previous one, act_slew (act_dot = (u_eff − act_slew) / h);
    with ki = gainprm₀ > 0, act_dot = u_pos − length, not accumulating beyond
    ±imax = dynprm₀ (> 0). force = −biasprm₁ u_pos − biasprm₂ u_vel + u_ff + ki z
    + biasprm₀ + biasprm₁ length + biasprm₂ velocity, z the integral (the next step's with
    actearly); on a rotational transmission (`wrap_period`) the setpoint and the error
    are taken nearest the length.
    """
    spec = m.actuator_ctrlspec[i]
    qref, vref, ff = 0.0, 0.0, 0.0
    k = 0
    if not bad:
        if spec & INPUT_POS:
            qref = _clamped_ctrl(m, d, i, k, clamp)
            k += 1
        if spec & INPUT_VEL:
            vref = _clamped_ctrl(m, d, i, k, clamp)
            k += 1
        if spec & INPUT_FF:
            ff = _clamped_ctrl(m, d, i, k, clamp)
    o = m.actuator_outadr[i]
    length = d.actuator_length[o]
    period = wrap_period(m, i)
    h = m.opt_timestep[0]
    gp = m.actuator_gainprm[i]
    bp = m.actuator_biasprm[i]
    adr = m.actuator_actadr[i]
    actnum = m.actuator_actnum[i]
    if m.actuator_dyntype[i] == DYN_PID:
        dp = m.actuator_dynprm[i]
        s = adr
        if write:
            for j in range(actnum):
                d.act_dot[adr + j] = 0.0
        if dp[1] > 0.0:
            # slew limit: u_eff = clamp(u, prev ∓ slewmax h), u taken nearest prev
            prev = d.act[s]
            if period > 0.0:
                qref = qref - period * _round((qref - prev) / period)
            slew = dp[1] * h
            qref = min(max(qref, prev - slew), prev + slew)
            if write:
                d.act_dot[s] = (qref - prev) / h
            s += 1
        if gp[0] > 0.0:
            err = qref - length
            if period > 0.0:
                err -= period * _round(err / period)
            imax = dp[0]
            if imax > 0.0:
                z = d.act[s]
                if z >= imax:
                    err = min(err, 0.0)
                elif z <= -imax:
                    err = max(err, 0.0)
            if write:
                d.act_dot[s] = err
    if period > 0.0:
        qref = qref - period * _round((qref - length) / period)
    f = -bp[1] * qref - bp[2] * vref + ff
    if actnum > 0 and gp[0] > 0.0:
        a = adr + actnum - 1
        z = d.act[a]
        if m.actuator_actearly[i]:
            z = next_activation(m, i, z, d.act_dot[a], h)
        f += gp[0] * z
    return f + (bp[0] + bp[1] * length + bp[2] * d.actuator_velocity[o])


@njit(cache=True, inline="always")
def _dcmotor_slots(dp, gp):
    """A dcmotor's state offsets (slew, integral, temperature, bristle, current) and count.

    Each present when its parameter is positive (slewmax dynprm₇, ki gainprm₅, thermal
    resistance dynprm₂, LuGre σ₀ dynprm₅, τₑ dynprm₀), −1 when absent (mj_dcmotorSlots).
    """
    n = np.int64(0)
    slew = integral = temp = bristle = current = np.int64(-1)
    if dp[7] > 0.0:
        slew = n
        n += 1
    if gp[5] > 0.0:
        integral = n
        n += 1
    if dp[2] > 0.0:
        temp = n
        n += 1
    if dp[5] > 0.0:
        bristle = n
        n += 1
    if dp[0] > 0.0:
        current = n
        n += 1
    return slew, integral, temp, bristle, current, n


@njit(cache=True, inline="always")
def _stribeck(v, bp):
    """LuGre's Stribeck curve g(v) = F_C + (F_S − F_C) exp(−(v / v_S)²), biasprm₃:₆."""
    ratio = v / max(MINVAL, bp[5])
    return bp[3] + (bp[4] - bp[3]) * np.exp(-ratio * ratio)


@njit(cache=True)
def _dcmotor(m, d, i, clamp, bad, write):
    """A dcmotor's force before the clamps; with `write`, its act_dot (mj_fwdActuation).

    gainprm = [R, K, α, T₀, kp, ki, kd, Vmax], dynprm = [τₑ, (di/dt)max, R_T, C, Tₐ, σ₀, σ₁,
    slewmax, Imax], biasprm₃:₆ = [F_C, F_S, v_S]; l, ω the actuator length and velocity.
    Inputs [pos, vel, ff, voltage] as actuator_ctrlspec selects (absent: 0); slewmax
    moves the first one at most slewmax · h from the slew state (act_dot = the move / h).
      voltage   V = clamp((R/K) τ + K ω, ±Vmax) + u_voltage with a controller input,
                τ = kp (u_pos − l) + kd (u_vel − ω) + ki x_I + u_ff; V = u_voltage otherwise
      integral  ẋ_I = u_pos − l, not accumulating beyond ±Imax
      thermal   R_T = R (1 + α (T + Tₐ − T₀)),  Ṫ = (R_T i² − T / R_T,th) / C
      bristle   ż = ω − σ₀ |ω| z / g(ω)
      current   i̇ = clamp((V − K ω) / R_T − i) / τₑ, ±(di/dt)max)
    force = K i⁺ with the current state (i⁺ its next value: actearly), else
    (K / R_T) (V − K ω), the stateless current i = (V − K ω) / R_T.

    Returns (force, R_T, V not clamped to ±Vmax, i̇ not clamped to ±(di/dt)max).
    """
    gp = m.actuator_gainprm[i]
    dp = m.actuator_dynprm[i]
    slew, integral, temp, bristle, current, n = _dcmotor_slots(dp, gp)
    adr = m.actuator_actadr[i]
    spec = m.actuator_ctrlspec[i]
    h = m.opt_timestep[0]
    length = d.actuator_length[m.actuator_outadr[i]]
    vel = d.actuator_velocity[m.actuator_outadr[i]]
    # the inputs [pos, vel, ff, voltage]; `first` the one read first
    u = np.zeros(4)
    first = -1
    k = 0
    if spec != INPUT_NONE:
        for j in range(4):
            if spec & (1 << j):
                if first < 0:
                    first = j
                if not bad:
                    u[j] = _clamped_ctrl(m, d, i, k, clamp)
                k += 1
    if write:
        for j in range(n):
            d.act_dot[adr + j] = 0.0
    if slew >= 0:
        # u_first ← clamp(u_first, prev ∓ slewmax h)
        prev = d.act[adr + slew]
        step = dp[7] * h
        ueff = min(max(u[first], prev - step), prev + step)
        if write:
            d.act_dot[adr + slew] = (ueff - prev) / h
        u[first] = ueff
    x_i = 0.0
    if integral >= 0:
        x_i = d.act[adr + integral]
        err = u[0] - length
        imax = dp[8]
        if imax > 0.0:
            if x_i >= imax:
                err = min(err, 0.0)
            elif x_i <= -imax:
                err = max(err, 0.0)
        if write:
            d.act_dot[adr + integral] = err
    R = gp[0]
    K = gp[1]
    volt = 0.0
    volt_free = True
    rate_free = True
    if spec != INPUT_NONE and spec & (INPUT_POS | INPUT_VEL | INPUT_FF):
        torque = gp[4] * (u[0] - length) + gp[6] * (u[1] - vel) + gp[5] * x_i + u[2]
        volt = R / K * torque + K * vel
        if gp[7] > 0.0:
            volt_free = -gp[7] < volt < gp[7]
            volt = min(max(volt, -gp[7]), gp[7])
    volt = volt + u[3]
    if temp >= 0:
        # R_T = R (1 + α (T + Tₐ − T₀))
        T = d.act[adr + temp]
        R *= 1.0 + gp[2] * (T + dp[4] - gp[3])
        if write:
            cur = d.act[adr + current] if current >= 0 else (volt - K * vel) / R
            d.act_dot[adr + temp] = (R * cur * cur - T / dp[2]) / dp[3]
    if bristle >= 0 and write:
        a = -dp[5] * abs(vel) / max(MINVAL, _stribeck(vel, m.actuator_biasprm[i]))
        d.act_dot[adr + bristle] = a * d.act[adr + bristle] + vel
    if current >= 0:
        te = dp[0]
        cur = d.act[adr + current]
        idot = (volt / R - K / R * vel - cur) / te
        if dp[1] > 0.0:
            rate_free = -dp[1] < idot < dp[1]
            idot = min(max(idot, -dp[1]), dp[1])
        if write:
            d.act_dot[adr + current] = idot
        # force = K i⁺, i⁺ = i + i̇ τₑ (1 − exp(−h/τₑ))
        te = max(MINVAL, te)
        return K * (cur + idot * te * (1.0 - np.exp(-h / te))), R, volt_free, rate_free
    gain = K / max(MINVAL, R)
    return gain * volt + (0.0 - gain * K * vel), R, volt_free, rate_free


@njit(cache=True)
def _dcmotor_mechanical(m, d, i, f):
    """f plus a dcmotor's cogging A sin(N l + φ) and LuGre friction −(σ₀ z + σ₁ ż)."""
    bp = m.actuator_biasprm[i]
    dp = m.actuator_dynprm[i]
    if bp[0] != 0.0:
        f += bp[0] * np.sin(bp[1] * d.actuator_length[m.actuator_outadr[i]] + bp[2])
    if dp[5] > 0.0:
        a = m.actuator_actadr[i] + _dcmotor_slots(dp, m.actuator_gainprm[i])[3]
        f -= dp[5] * d.act[a] + dp[6] * d.act_dot[a]
    return f


@njit(cache=True)
def _dcmotor_next(m, d, i, offset, act, act_dot, h):
    """A dcmotor state after a step h (mj_nextActivation); no actrange clamp.

    current: exact for the linear filter, i + i̇ τₑ (1 − exp(−h/τₑ)); bristle: exact for
    ż = a z + ω at fixed a = −σ₀ |ω| / g(ω), z e^{ah} + ω (e^{ah} − 1) / a (h when
    |a| ≤ MINVAL), independent of act_dot, ω = moment · qvel (under RK4 the step's
    initial velocity, as MuJoCo 4.0.0 takes it, measured); integral: Euler, clamped to ±Imax when
    Imax > 0; slew and temperature: Euler.
    """
    dp = m.actuator_dynprm[i]
    slots = _dcmotor_slots(dp, m.actuator_gainprm[i])
    if offset == slots[4]:
        te = max(MINVAL, dp[0])
        return act + act_dot * te * (1.0 - np.exp(-h / te))
    if offset == slots[3]:
        # the velocity at the state being advanced: moment · qvel (RK4's initial qvel)
        lo, hi = _moment_range(m, i)
        vel = 0.0
        for c in range(lo, hi):
            vel += d.actuator_moment[m.actuator_outadr[i], c] * d.qvel[c]
        a = -dp[5] * abs(vel) / max(MINVAL, _stribeck(vel, m.actuator_biasprm[i]))
        e = np.exp(a * h)
        w = (e - 1.0) / a if abs(a) > MINVAL else h
        return e * act + w * vel
    act = act + act_dot * h
    if offset == slots[1] and dp[8] > 0.0:
        act = min(max(act, -dp[8]), dp[8])
    return act


@njit(cache=True)
def _dcmotor_damping(m, d, i):
    """∂(dcmotor force)/∂ω as MuJoCo 4.0.0's mjd_actuator_vel takes it (measured).

    (K / R_T)(dV/dω − K) stateless, K (dV/dω − K) s / R_T with s = 1 − exp(−h/τₑ) with the
    current state (0 while i̇ is clamped to ±(di/dt)max); the controller's dV/dω = K − kd R/K
    with the nominal R (0 without a controller input or while V is clamped to ±Vmax);
    −σ₁ with LuGre (the bristle's ∂a/∂ω ignored). The electrical part is 0 while its force
    (before cogging and LuGre) is clamped to forcerange, or on a tendon whose total actuator
    force is scaled (`tendon_clamped`); the LuGre part stays.
    """
    gp = m.actuator_gainprm[i]
    dp = m.actuator_dynprm[i]
    lugre = -dp[6] if dp[6] > 0.0 else 0.0
    clamp = (m.opt_disableflags[0] & DSBL_CLAMPCTRL) == 0
    f, RT, volt_free, rate_free = _dcmotor(m, d, i, clamp, _bad_ctrl(m, d, clamp), False)
    if m.actuator_forcelimited[i] and (f <= m.actuator_forcerange[i, 0]
                                       or f >= m.actuator_forcerange[i, 1]):
        return lugre
    if m.ntendon and tendon_clamped(m, d, i):
        return lugre
    RT = max(MINVAL, RT)
    K = gp[1]
    te = dp[0]
    dvdw = 0.0
    spec = m.actuator_ctrlspec[i]
    if spec != INPUT_NONE and spec & (INPUT_POS | INPUT_VEL | INPUT_FF) and volt_free:
        dvdw = -gp[6] * max(MINVAL, gp[0]) / K + K
    dfdv = 0.0
    if te > 0.0:
        if rate_free:
            dfdv = K * (dvdw - K) * (1.0 - np.exp(-m.opt_timestep[0] / te)) / RT
    else:
        dfdv = K / RT * (dvdw - K)
    return dfdv + lugre


@njit(cache=True)
def _force(m, d, i, x):
    """Actuator i's force before any clamp: gain · x + bias, x its control or activation."""
    gp = m.actuator_gainprm[i]
    bp = m.actuator_biasprm[i]
    o = m.actuator_outadr[i]
    length = d.actuator_length[o]
    vel = d.actuator_velocity[o]
    gt = m.actuator_gaintype[i]
    if gt == GAIN_MUSCLE:
        gain = muscle_gain(length, vel, m.actuator_lengthrange[o, 0],
                           m.actuator_lengthrange[o, 1], m.actuator_acc0[o], gp)
    else:
        gain = gp[0]
        if gt == GAIN_AFFINE:
            gain += gp[1] * length + gp[2] * vel
    f = gain * x
    bt = m.actuator_biastype[i]
    if bt == BIAS_AFFINE:
        f += bp[0] + bp[1] * length + bp[2] * vel
    elif bt == BIAS_MUSCLE:
        f += muscle_bias(length, m.actuator_lengthrange[o, 0], m.actuator_lengthrange[o, 1],
                         m.actuator_acc0[o], bp)
    return f


@njit(cache=True)
def _input(m, d, i):
    """The control or activation actuator i's force is computed from (as in `actuation`).

    With dynamics its activation (the next step's with actearly, from d.act_dot); else its
    clamped control, 0 when some control is bad.
    """
    adr = m.actuator_actadr[i]
    if m.actuator_dyntype[i] != DYN_NONE:
        if m.actuator_actearly[i]:
            return next_activation(m, i, d.act[adr], d.act_dot[adr], m.opt_timestep[0])
        return d.act[adr]
    clamp = (m.opt_disableflags[0] & DSBL_CLAMPCTRL) == 0
    if _bad_ctrl(m, d, clamp):
        return 0.0
    return _clamped_ctrl(m, d, i, 0, clamp)


@njit(cache=True)
def _unclamped_force(m, d, i):
    """Actuator i's force before the clamps, from the current act and act_dot."""
    if m.actuator_gaintype[i] == GAIN_PID or m.actuator_gaintype[i] == GAIN_DCMOTOR:
        clamp = (m.opt_disableflags[0] & DSBL_CLAMPCTRL) == 0
        bad = _bad_ctrl(m, d, clamp)
        if m.actuator_gaintype[i] == GAIN_PID:
            return _pid(m, d, i, clamp, bad, False)
        return _dcmotor(m, d, i, clamp, bad, False)[0]
    return _force(m, d, i, _input(m, d, i))


@njit(cache=True)
def tendon_clamped(m, d, i):
    """True when actuator i acts on a tendon whose total actuator force was scaled.

    The total of the unclamped forces lies outside tendon_actfrcrange (`_tendon_level`).
    """
    if m.actuator_trntype[i] != TRN_TENDON:
        return False
    t = m.actuator_trnid[i, 0]
    if not m.tendon_actfrclimited[t]:
        return False
    total = 0.0
    for k in range(m.nactuator):
        if (m.actuator_trntype[k] == TRN_TENDON and m.actuator_trnid[k, 0] == t
                and not actuator_disabled(m, k)):
            total += _unclamped_force(m, d, k)
    return total != 0.0 and (total < m.tendon_actfrcrange[t, 0]
                             or total > m.tendon_actfrcrange[t, 1])


@njit(cache=True)
def _tendon_level(m, d):
    """Scale the forces of a tendon's actuators so that their sum lies in tendon_actfrcrange.

    F_t = Σ_{i on t} actuator_force_i; outside [lo, hi] each is multiplied by lo / F_t or
    hi / F_t (MuJoCo's clamp of the total tendon actuator force). As in MuJoCo 4.0 this
    comes before each actuator's own forcerange clamp, and the sum is of the forces, not
    of gear · force.
    """
    any_limited = False
    for i in range(m.nactuator):
        if (m.actuator_trntype[i] == TRN_TENDON
                and m.tendon_actfrclimited[m.actuator_trnid[i, 0]]):
            any_limited = True
            break
    if not any_limited:
        return
    total = np.zeros(m.ntendon)
    for i in range(m.nactuator):
        if m.actuator_trntype[i] == TRN_TENDON:
            total[m.actuator_trnid[i, 0]] += d.actuator_force[m.actuator_outadr[i]]
    for i in range(m.nactuator):
        if m.actuator_trntype[i] != TRN_TENDON:
            continue
        t = m.actuator_trnid[i, 0]
        ft = total[t]
        if not m.tendon_actfrclimited[t] or ft == 0.0:
            continue
        o = m.actuator_outadr[i]
        if ft < m.tendon_actfrcrange[t, 0]:
            d.actuator_force[o] *= m.tendon_actfrcrange[t, 0] / ft
        elif ft > m.tendon_actfrcrange[t, 1]:
            d.actuator_force[o] *= m.tendon_actfrcrange[t, 1] / ft


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

    Clamped: at or beyond forcerange, or on a tendon whose total actuator force is scaled
    into tendon_actfrcrange (`tendon_clamped`; MuJoCo 4.0 drops these, measured). 0 too
    for an actuator of a disabled group (`actuator_disabled`). A dcmotor's: `_dcmotor_damping`.

    An orientation servo (so3) gives biasprm₂ (−kv, applied to each of its output rows),
    0 while the norm of its 3 torques is at forcerange₁.

    The affine bias contributes biasprm₂; the affine gain gainprm₂ and the muscle gain its
    velocity derivative (`muscle_gain_vel`), times d.ctrl as given (not clamped:
    mjd_actuator_vel's approximation), or with activation dynamics times act (the next
    step's act with actearly).
    """
    if m.opt_disableflags[0] & DSBL_ACTUATION or actuator_disabled(m, i):
        return 0.0
    o = m.actuator_outadr[i]
    if m.actuator_gaintype[i] == GAIN_SO3:
        # the kv term, on each output row; none while the torque norm is at its bound
        if m.actuator_forcelimited[i]:
            f = d.actuator_force[o:o + 3]
            if np.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]) >= m.actuator_forcerange[i, 1]:
                return 0.0
        return m.actuator_biasprm[i, 2]
    if m.actuator_biastype[i] == BIAS_DCMOTOR:
        return _dcmotor_damping(m, d, i)
    if m.actuator_forcelimited[i]:
        f = d.actuator_force[o]
        if f <= m.actuator_forcerange[i, 0] or f >= m.actuator_forcerange[i, 1]:
            return 0.0
    if m.ntendon and tendon_clamped(m, d, i):
        return 0.0
    dfdv = 0.0
    if m.actuator_biastype[i] == BIAS_AFFINE:
        dfdv = m.actuator_biasprm[i, 2]
    gain_vel = 0.0
    if m.actuator_gaintype[i] == GAIN_AFFINE:
        gain_vel = m.actuator_gainprm[i, 2]
    elif m.actuator_gaintype[i] == GAIN_MUSCLE:
        gain_vel = muscle_gain_vel(d.actuator_length[o], d.actuator_velocity[o],
                                   m.actuator_lengthrange[o, 0], m.actuator_lengthrange[o, 1],
                                   m.actuator_acc0[o], m.actuator_gainprm[i])
    if gain_vel != 0.0:
        adr = m.actuator_actadr[i]
        if adr < 0:
            dfdv += gain_vel * d.ctrl[m.actuator_ctrladr[i]]
        else:
            act = d.act[adr]
            if m.actuator_actearly[i]:
                act = next_activation(m, i, act, d.act_dot[adr], m.opt_timestep[0])
            dfdv += gain_vel * act
    return dfdv
