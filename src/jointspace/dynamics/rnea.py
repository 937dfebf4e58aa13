"""Inverse dynamics by the recursive Newton–Euler algorithm, in MuJoCo's com-based frame.

Every spatial quantity uses world axes with the origin at the subtree center of mass of the
body's kinematic-tree root (the "c-frame" of `jointspace.kinematics`), so no transform is
needed between a body and its parent:

    cacc_i = cacc_parent + Σ cdof_dot qvel + Σ cdof qacc,   cacc_world = (0, -gravity)
    cfrc_i = cinert_i cacc_i + cvel_i ×* (cinert_i cvel_i) - cfrc_ext_i
    cfrc_parent += cfrc_i   (backward),   tau = cdof · cfrc_body(dof) + armature qacc
                                          + Σ_t tendon armature_t ten_Jᵀ ten_J qacc

Reference: RBDA §5.3; MuJoCo mj_rne (engine_core_smooth.c). Gravity enters as the world's
acceleration -g, so one pass gives M qacc + C(q, v) qvel + g(q).

External forces `f_ext` follow MuJoCo's `xfrc_applied` convention: one row per body,
(force (3), torque (3)) in world axes, the force applied at the body's center of mass
(`xipos`). Their generalized effect Jᵀf is subtracted from tau (they help the motion).
Unlike MuJoCo's mj_rne, armature is included (armature · qacc), so that rnea agrees with
`crba` (whose M carries armature on its diagonal) and with Pinocchio's rnea.
"""

from numba import njit, uint64

from jointspace._numba import entry
from jointspace._numba.entry import empty
from jointspace.actuator_passive import dof_armature
from jointspace.kinematics import com_vel_stage, poses_at
from jointspace.spatial import (
    ZERO6,
    add6,
    add_scl6,
    cross_force6,
    dot6,
    inert_mul6,
    row6,
    set_row6,
    sub6,
    world_wrench_to_com,
)
from jointspace.tendon import tendon_armature_force
from jointspace.types import DSBL_GRAVITY, Data, Model

RNE_VEL = 1  # include velocity-product terms (cdof_dot qvel, cvel ×* I cvel)
RNE_ACC = 2  # include qacc (and armature · qacc)
RNE_FEXT = 4  # subtract the external forces given as f_ext
RNE_GRAVITY = 8  # include gravity (world acceleration -g)
_ALL = RNE_VEL | RNE_ACC | RNE_GRAVITY


@njit(cache=True)
def rne(m, d, flags, fext, tau):
    """RNEA over the c-frame quantities of d (needs com_pos, and com_vel_stage with RNE_VEL).

    Reads qvel and qacc from d; writes cacc, cfrc_int (the spatial force each body receives
    from its parent, c-frame), cfrc_ext (f_ext in the c-frame, or zero) and tau (nv,).
    Indices read from the model are made unsigned: Numba then emits no negative-index
    fix-ups (the same in every dynamics kernel). Mirrors mj_rne, engine_core_smooth.c.
    """
    use_vel = (flags & RNE_VEL) != 0
    use_acc = (flags & RNE_ACC) != 0
    use_fext = (flags & RNE_FEXT) != 0
    parentid = m.body_parentid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    qvel = d.qvel
    qacc = d.qacc
    cdof = d.cdof
    cdof_dot = d.cdof_dot
    cinert = d.cinert
    cvel = d.cvel
    cacc = d.cacc
    cfrc = d.cfrc_int
    cfrc_ext = d.cfrc_ext
    rootid = m.body_rootid
    xipos = d.xipos
    com = d.subtree_com
    # cacc_world = (0, -g)
    for k in range(6):
        cacc[0, k] = 0.0
        cfrc[0, k] = 0.0
        cfrc_ext[0, k] = 0.0
    # the "gravity" disable flag wins over RNE_GRAVITY, as in mj_rne
    if (flags & RNE_GRAVITY) != 0 and (m.opt_disableflags[0] & DSBL_GRAVITY) == 0:
        for k in range(3):
            cacc[0, 3 + k] = -m.opt_gravity[k]
    for i in range(1, m.nbody):
        # cacc = cacc_parent + Σ cdof_dot qvel + Σ cdof qacc
        a = row6(cacc, uint64(parentid[i]))
        for j in range(uint64(dofadr[i]), uint64(dofadr[i]) + uint64(dofnum[i])):
            if use_vel:
                a = add_scl6(a, row6(cdof_dot, j), qvel[j])
            if use_acc:
                a = add_scl6(a, row6(cdof, j), qacc[j])
        set_row6(cacc, i, a)
        # cfrc = cinert cacc + cvel ×* (cinert cvel) - cfrc_ext
        f = inert_mul6(cinert, i, a)
        if use_vel:
            v = row6(cvel, i)
            f = add6(f, cross_force6(v, inert_mul6(cinert, i, v)))
        e = ZERO6
        if use_fext:
            r = uint64(rootid[i])
            e = world_wrench_to_com(fext, i, xipos[i, 0], xipos[i, 1], xipos[i, 2],
                                    com[r, 0], com[r, 1], com[r, 2])
            f = sub6(f, e)
        set_row6(cfrc_ext, i, e)
        set_row6(cfrc, i, f)
    # cfrc_parent += cfrc_child (trees do not share a frame origin: stop below the world)
    for i in range(m.nbody - 1, 0, -1):
        p = uint64(parentid[i])
        if p > 0:
            set_row6(cfrc, p, add6(row6(cfrc, p), row6(cfrc, i)))
    # tau = cdof · cfrc_body + armature qacc
    bodyid = m.dof_bodyid
    for j in range(m.nv):
        t = dot6(row6(cdof, j), row6(cfrc, uint64(bodyid[j])))
        if use_acc:
            t += dof_armature(m, j) * qacc[j]
        tau[j] = t
    # tau += Σ_t armature_t ten_Jᵀ ten_J qacc (tendon armature, as crba's M carries it)
    if use_acc and m.ntendon:
        tendon_armature_force(m, d, qacc, tau)


@njit(cache=True)
def _copy(dst, src):
    for k in range(src.shape[0]):
        dst[k] = src[k]


@entry.checked("_k_rnea", q="nq", v="nv", a="nv", fext="nbody, 6", tau="out: nv")
@njit(cache=True)
def _rnea_driver(d, q, v, a, flags, fext, tau):
    """Set qpos, qvel, qacc = q, v, a; run kinematics → com_pos → (com_vel) → RNEA."""
    m = d.model
    poses_at(m, d, q)
    if (flags & RNE_VEL) != 0:
        _copy(d.qvel, v)
    if (flags & RNE_ACC) != 0:
        _copy(d.qacc, a)
    if (flags & RNE_VEL) != 0:
        com_vel_stage(m, d)
    rne(m, d, flags, fext, tau)


# ── generated by tools/gen_entries.py from the declaration above: do not edit ──


@njit(cache=True, nogil=True)
def _rnea_checked(d, q, v, a, flags, fext, tau):
    """_rnea_driver once the arguments' sizes match d's model; else entry.BAD_SHAPE."""
    m = d.model
    if (q.shape[0] != m.nq or v.shape[0] != m.nv or a.shape[0] != m.nv
            or fext.shape[0] != m.nbody or fext.shape[1] != 6 or tau.shape[0] != m.nv):
        return entry.BAD_SHAPE
    _rnea_driver(d, q, v, a, flags, fext, tau)
    return entry.OK


_k_rnea = entry.Kernel(
    _rnea_checked, sig=(None, entry.IN1, entry.IN1, entry.IN1, None, entry.IN2, entry.OUT1))
# ── end of generated code ──


@entry.public("_k_rnea(q, v, a, _ALL, d.cfrc_ext, tau) if f_ext is None "
              "else _k_rnea(q, v, a, _ALL | RNE_FEXT, f_ext, tau)", new="tau: nv", returns="tau")
def rnea(m, d, q, v, a, f_ext=None):
    """Joint torques that produce acceleration `a` at state (q, v): the inverse dynamics.

    tau = M(q) a + C(q, v) v + g(q) - Jᵀ f_ext, with M including armature. One compiled
    call runs kinematics, com_pos, com_vel and the recursive Newton–Euler algorithm. With
    the "gravity" flag disabled (`<option><flag gravity="disable"/>`) g(q) = 0, as mj_rne.

    Args:
        m: the Model.
        d: a Data for m. q, v, a are copied into d.qpos, d.qvel, d.qacc; the call also fills
            the kinematic fields, cvel, cdof_dot, cacc, cfrc_int (c-frame force each body
            receives from its parent) and cfrc_ext.
        q: (nq,) positions.
        v: (nv,) velocities.
        a: (nv,) accelerations.
        f_ext: optional (nbody, 6) external wrenches, MuJoCo's `xfrc_applied` convention:
            row b = (force, torque) in world axes, the force acting at body b's center of
            mass (`d.xipos[b]`). Row 0 (the world) is ignored.

    Returns:
        (nv,) generalized forces tau.
    """
    # generated by tools/gen_entries.py from the declaration above: do not edit
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s:
        tau = empty(m.nv)
        ep = _k_rnea.ep
        try:
            if f_ext is None:
                if ep(d._s, q, v, a, _ALL, d.cfrc_ext, tau) == -1:
                    return tau
            elif ep(d._s, q, v, a, _ALL | RNE_FEXT, f_ext, tau) == -1:
                return tau
        except entry.FastPathMiss:
            pass
    entry.check_pair(m, d, "rnea")
    q = entry.fresh(q, m._shq, "q", "rnea")
    v = entry.fresh(v, m._shv, "v", "rnea")
    a = entry.fresh(a, m._shv, "a", "rnea")
    tau = empty(m.nv)
    if f_ext is None:
        _k_rnea.ep(d._s, q, v, a, _ALL, d.cfrc_ext, tau)
    else:
        f_ext = entry.fresh(f_ext, (m.nbody, 6), "f_ext", "rnea")
        _k_rnea.ep(d._s, q, v, a, _ALL | RNE_FEXT, f_ext, tau)
    return tau


@entry.public("_k_rnea(q, v, v, RNE_VEL | RNE_GRAVITY, d.cfrc_ext, d.qfrc_bias)",
              returns="d.qfrc_bias.copy()")
def bias_forces(m, d, q, v):
    """Coriolis, centrifugal and gravity forces C(q, v) v + g(q) (Pinocchio's nonLinearEffects).

    Equals rnea(q, v, 0). Also fills d.qfrc_bias (MuJoCo's field of the same meaning) and
    the fields rnea fills; d.qacc is left as it was. The "gravity" disable flag zeroes g(q).

    Args:
        m: the Model.
        d: a Data for m; q, v are copied into d.qpos, d.qvel.
        q: (nq,) positions.
        v: (nv,) velocities.

    Returns:
        (nv,) a copy of d.qfrc_bias.
    """
    # generated by tools/gen_entries.py from the declaration above: do not edit
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s:
        ep = _k_rnea.ep
        try:
            if ep(d._s, q, v, v, RNE_VEL | RNE_GRAVITY, d.cfrc_ext, d.qfrc_bias) == -1:
                return d.qfrc_bias.copy()
        except entry.FastPathMiss:
            pass
    entry.check_pair(m, d, "bias_forces")
    q = entry.fresh(q, m._shq, "q", "bias_forces")
    v = entry.fresh(v, m._shv, "v", "bias_forces")
    _k_rnea.ep(d._s, q, v, v, RNE_VEL | RNE_GRAVITY, d.cfrc_ext, d.qfrc_bias)
    return d.qfrc_bias.copy()


@entry.public("_k_rnea(q, g, g, RNE_GRAVITY, d.cfrc_ext, g)", new="g: nv", returns="g")
def gravity_forces(m, d, q):
    """Generalized gravity force g(q) (Pinocchio's computeGeneralizedGravity).

    Equals rnea(q, 0, 0). Velocities are treated as zero without touching d.qvel; cvel
    and cdof_dot are not updated. Zero when the "gravity" flag is disabled.

    Args:
        m: the Model.
        d: a Data for m; q is copied into d.qpos.
        q: (nq,) positions.

    Returns:
        (nv,) generalized gravity force.
    """
    # generated by tools/gen_entries.py from the declaration above: do not edit
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s:
        g = empty(m.nv)
        ep = _k_rnea.ep
        try:
            if ep(d._s, q, g, g, RNE_GRAVITY, d.cfrc_ext, g) == -1:
                return g
        except entry.FastPathMiss:
            pass
    entry.check_pair(m, d, "gravity_forces")
    q = entry.fresh(q, m._shq, "q", "gravity_forces")
    g = empty(m.nv)
    _k_rnea.ep(d._s, q, g, g, RNE_GRAVITY, d.cfrc_ext, g)
    return g
