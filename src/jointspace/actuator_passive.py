"""What actuators lend their joints and tendons: damping, armature (MuJoCo 4), and groups.

An actuator with a joint, jointinparent or tendon transmission may carry `damping`
(b, p₀, p₁) and `armature`; its joint's dofs, or its tendon, then behave as if they had
these, scaled by the square of the actuator's gear g = actuator_gear[i, 0]
(mj_actuatorDamping, mj_actuatorArmature, engine_core_util.c):

  damping   b = dof_damping + Σ_a actuator_damping[a] g_a²,
            p = dof_dampingpoly + Σ_a actuator_dampingpoly[a] g_a²     (tendons alike)
  armature  dof_armature + Σ_a actuator_armature[a] g_a²                (tendons alike)

over the actuators a on the joint (tendon). They are read at run time, so a change of
actuator_gear, actuator_damping or actuator_armature takes effect at the next step, as in
MuJoCo. jnt_actuatorid and tendon_actuatorid (set by `set_const`) name the one actuator
with damping or armature on the object, or say none (−1) or several (−2, then every
actuator is scanned): an object without such an actuator costs one comparison.

`actuator_disabled`: an actuator whose group g ∈ [0, 30] has bit g set in
opt_disableactuator (MJCF `<option actuatorgroupdisable>`) produces no force, its
activation does not move, and it has no velocity derivative (mj_actuatorDisabled).
"""

from numba import njit

from jointspace.types import TRN_JOINT, TRN_JOINTINPARENT, TRN_TENDON


@njit(cache=True, inline="always")
def _on(m, a, obj, tendon):
    """True when actuator a transmits through joint obj (tendon obj when `tendon`)."""
    if m.actuator_trnid[a, 0] != obj:
        return False
    trn = m.actuator_trntype[a]
    if tendon:
        return trn == TRN_TENDON
    return trn == TRN_JOINT or trn == TRN_JOINTINPARENT


@njit(cache=True)
def _lent_damping(m, aid, obj, tendon, b, p0, p1):
    """(b + Σ damping g², p0 + Σ poly₀ g², p1 + Σ poly₁ g²) over the actuators on obj.

    aid ≥ 0: that one actuator; −2: every actuator on obj (mj_actuatorDamping, in its
    order of additions: the damping summed from 0, the polynomial onto the given one).
    """
    lo = 0
    hi = m.nactuator
    if aid >= 0:
        lo = aid
        hi = aid + 1
    extra = 0.0
    for a in range(lo, hi):
        if aid < 0 and not _on(m, a, obj, tendon):
            continue
        g = m.actuator_gear[m.actuator_outadr[a], 0]
        g2 = g * g
        extra += m.actuator_damping[a] * g2
        p0 += m.actuator_dampingpoly[a, 0] * g2
        p1 += m.actuator_dampingpoly[a, 1] * g2
    return b + extra, p0, p1


@njit(cache=True)
def _lent_armature(m, aid, obj, tendon):
    """Σ actuator_armature g² over the actuators on obj (aid as in `_lent_damping`)."""
    lo = 0
    hi = m.nactuator
    if aid >= 0:
        lo = aid
        hi = aid + 1
    extra = 0.0
    for a in range(lo, hi):
        if aid < 0 and not _on(m, a, obj, tendon):
            continue
        g = m.actuator_gear[m.actuator_outadr[a], 0]
        extra += m.actuator_armature[a] * (g * g)
    return extra


@njit(cache=True, inline="always")
def dof_damping(m, i):
    """(b, p₀, p₁): dof i's damping and polynomial, its joint's actuators' included."""
    b = m.dof_damping[i]
    p0 = m.dof_dampingpoly[i, 0]
    p1 = m.dof_dampingpoly[i, 1]
    j = m.dof_jntid[i]
    aid = m.jnt_actuatorid[j]
    if aid == -1:
        return b, p0, p1
    return _lent_damping(m, aid, j, False, b, p0, p1)


@njit(cache=True, inline="always")
def tendon_damping(m, t):
    """(b, p₀, p₁): tendon t's damping and polynomial, its actuators' included."""
    b = m.tendon_damping[t]
    p0 = m.tendon_dampingpoly[t, 0]
    p1 = m.tendon_dampingpoly[t, 1]
    aid = m.tendon_actuatorid[t]
    if aid == -1:
        return b, p0, p1
    return _lent_damping(m, aid, t, True, b, p0, p1)


@njit(cache=True, inline="always")
def dof_armature(m, i):
    """dof_armature[i] plus the armature of its joint's actuators (times gear₀²)."""
    j = m.dof_jntid[i]
    aid = m.jnt_actuatorid[j]
    if aid == -1:
        return m.dof_armature[i]
    return m.dof_armature[i] + _lent_armature(m, aid, j, False)


@njit(cache=True, inline="always")
def tendon_armature(m, t):
    """tendon_armature[t] plus the armature of its actuators (times gear₀²)."""
    aid = m.tendon_actuatorid[t]
    if aid == -1:
        return m.tendon_armature[t]
    return m.tendon_armature[t] + _lent_armature(m, aid, t, True)


@njit(cache=True, inline="always")
def actuator_disabled(m, i):
    """True when actuator i's group is disabled in opt_disableactuator (mj_actuatorDisabled)."""
    g = m.actuator_group[i]
    if g < 0 or g > 30:
        return False
    return (m.opt_disableactuator[0] >> g) & 1 != 0
