"""A model's derived constants (MuJoCo's mj_setConst), and the default row capacity.

`set_const(m)` computes them from the model's parameters at qpos0: subtree masses, the
diagonal of M (dof_M0) and the dofs that move no mass, body and dof inverse weights (the
constraint stage's diagApprox), the mean inertia that scales the solvers' tolerance, the
equality data that depends on qpos0, position actuators' damping from their damping
ratio, actuator_acc0, and the flags flg_surfacevel and flg_adhesion (whether any geom has
a surface velocity, any geom or pair an adhesion). The compiler runs it once; a user who
changes masses, inertias, armature, geometry, surface velocities or adhesion runs it again
(`js.set_const`). The derived fields are read-only from Python (types.MODEL_DERIVED): it
writes them through the model's buffers; the two flags are writable, as MuJoCo's.
"""

import warnings

import numpy as np

from jointspace.actuation import transmission
from jointspace.diagnostics import lent_armature
from jointspace.dynamics.crba import crb_stage, dense_from_sparse
from jointspace.errors import JointspaceWarning
from jointspace.kinematics import camlight, jac_point, kinematics_com_pos
from jointspace.types import (
    EQ_CONNECT,
    EQ_JOINT,
    EQ_WELD,
    GAIN_PID,
    JNT_BALL,
    JNT_FREE,
    JNT_HINGE,
    JNT_SLIDE,
    MINVAL,
    OBJ_SITE,
    TRN_JOINT,
    TRN_JOINTINPARENT,
    TRN_TENDON,
    Data,
    Model,
)


def _body_simple(m):
    """MuJoCo's body_simple == 2 test: a slide-only body that moves as a point mass.

    True for a body with dofs, com at the body origin with aligned inertia axes, only slide
    joints at the origin along coordinate axes, no child bodies, and a parent that is the
    world or a jointless child of the world.
    """
    eps = 1e-6
    simple = np.zeros(m.nbody, dtype=bool)
    has_child = np.zeros(m.nbody, dtype=bool)
    has_child[m.body_parentid[1:]] = True
    for b in range(1, m.nbody):
        if m.body_dofnum[b] == 0 or has_child[b]:
            continue
        q = m.body_iquat[b]
        if np.any(np.abs(m.body_ipos[b]) >= eps) or not (
                np.all(np.abs(q - [1, 0, 0, 0]) < eps) or np.all(np.abs(q + [1, 0, 0, 0]) < eps)):
            continue
        p = m.body_parentid[b]
        if not (m.body_rootid[b] == b or (m.body_parentid[p] == 0 and m.body_dofnum[p] == 0)):
            continue
        ok = True
        for j in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]):
            aligned = int(np.sum(np.abs(m.jnt_axis[j]) > 1e-14)) == 1
            if (m.jnt_type[j] != JNT_SLIDE or np.any(np.abs(m.jnt_pos[j]) >= eps)
                    or not aligned):
                ok = False
                break
        simple[b] = ok
    return simple


def set_const(m, *, stat=False):
    """Recompute m's derived constants from its parameters (MuJoCo's mj_setConst).

    Call it after changing masses, inertias, body or joint frames, armature (actuators'
    included: which actuators lend damping or armature is decided here) or geometry
    of a compiled model: the constraint stage's softness (diagApprox, from the inverse
    weights), subtree masses, dof_M0 and the connect and weld anchors depend on them.
    Warns (JointspaceWarning) when some dofs move no mass. Like mj_setConst, it leaves
    stat_meaninertia (the solvers' scale, a statistic of the model as compiled) unless
    `stat` is true, as the compiler asks.

    Args:
        m: a compiled Model.
        stat: also recompute stat_meaninertia (mean diagonal of M at qpos0).
    """
    if type(m) is not Model:
        raise TypeError(f"set_const: argument m must be a jointspace Model, "
                        f"got {type(m).__name__}")
    d = mass_constants(m)
    inertia_constants(m, d, stat)
    contact_flags(m)


def contact_flags(m):
    """flg_surfacevel and flg_adhesion from geom_surfacevel, geom_adhesion, pair_adhesion.

    The contact stages skip surface velocities and adhesion when their flag is 0, as
    MuJoCo's mj_setConst sets them (1 if any value is nonzero).
    """
    m.flg_surfacevel[0] = bool(np.any(m.geom_surfacevel != 0))
    m.flg_adhesion[0] = bool(np.any(m.geom_adhesion != 0) or np.any(m.pair_adhesion != 0))


def actuator_ids(m):
    """jnt_actuatorid and tendon_actuatorid (mj_setConst's setFixed).

    For each joint (tendon): the id of the one joint or jointinparent (tendon) actuator on
    it with nonzero damping, damping polynomial or armature, −1 if none, −2 if several;
    `jointspace.actuator_passive` reads them.
    """
    o = m._own
    o.jnt_actuatorid[:] = -1
    o.tendon_actuatorid[:] = -1
    for i in range(m.nactuator):
        if (m.actuator_damping[i] == 0 and not np.any(m.actuator_dampingpoly[i])
                and m.actuator_armature[i] == 0):
            continue
        trn = m.actuator_trntype[i]
        if trn == TRN_JOINT or trn == TRN_JOINTINPARENT:
            ids = o.jnt_actuatorid
        elif trn == TRN_TENDON:
            ids = o.tendon_actuatorid
        else:
            continue
        k = m.actuator_trnid[i, 0]
        ids[k] = i if ids[k] == -1 else -2


def _tendon_armature_diag(m, d):
    """Σ_t a_t ten_J_t² per dof: the tendon armature's share of diag(M) (a_t its total)."""
    out = np.zeros(m.nv)
    for t in range(m.ntendon):
        a = m.tendon_armature[t] + lent_armature(m, t, True)
        if a != 0.0:
            out += a * d.ten_J[t] ** 2
    return out


def mass_constants(m):
    """body_subtreemass and dof_M0 at qpos0; returns the Data holding M there.

    dof_M0 is M's diagonal without the tendon armature (mj_setM0 takes it from the
    composite inertias and the dofs' armature, their joint's actuators' included). Sets the
    actuator ids first (`actuator_ids`): M's diagonal has the actuators' armature.
    """
    o = m._own  # the derived fields are read-only views; their buffers are written here
    actuator_ids(m)
    o.body_subtreemass[:] = m.body_mass
    for i in range(m.nbody - 1, 0, -1):
        o.body_subtreemass[m.body_parentid[i]] += o.body_subtreemass[i]
    d = Data(m)
    kinematics_com_pos(m._s, d._s)
    crb_stage(m._s, d._s)
    # dof_M0 = diag(M) less the tendon armature's a_t ten_J_t², as mj_setM0 (crb only)
    o.dof_M0[:] = d.qM[m.dof_Madr] - _tendon_armature_diag(m, d)
    if m.ncam:  # camera offsets at qpos0, every camera posed as fixed (mj_setConst)
        camlight(m._s, d._s, True)
        b, t = m.cam_bodyid, m.cam_targetbodyid
        o.cam_pos0[:] = d.cam_xpos - d.xpos[b]
        o.cam_poscom0[:] = d.cam_xpos - d.subtree_com[np.where(t >= 0, t, b)]
        o.cam_mat0[:] = d.cam_xmat
    return d


def inertia_constants(m, d, stat):
    """The dofs that move no mass (warned), then set_constants on d's M at qpos0."""
    bad = [i for i in range(m.nv) if not m.dof_M0[i] > MINVAL]
    if bad:
        jn = [m.names["joint"][m.dof_jntid[i]] or f"#{m.dof_jntid[i]}" for i in bad]
        msg = (f"M is singular: dof(s) {bad} (joints {sorted(set(jn))}) move no mass or "
               "inertia. Kinematics and inverse dynamics work; anything that needs M⁻¹ "
               "(forward dynamics, aba, minv) will refuse. Give the bodies below these joints "
               "mass and inertia, or add armature")
        if msg not in m.warnings:
            m.warnings.append(msg)
        warnings.warn(msg, JointspaceWarning, stacklevel=4)
    m.singular_dofs = bad
    set_constants(m, d, stat)
    resolve_dampratio(m, d)
    actuator_acc0(m, d)


def actuator_acc0(m, d):
    """actuator_acc0 = ‖M⁻¹ rᵀ‖ for each actuator's moment row r at qpos0 (mj_setConst).

    Muscles with force < 0 take their peak force as scale / acc0. 0 where M is singular.
    """
    if m.nactuator == 0:
        return
    transmission(m._s, d._s)
    M = np.empty((m.nv, m.nv))
    dense_from_sparse(m._s, d.qM, M)
    try:
        x = np.linalg.solve(M, d.actuator_moment.T)
    except np.linalg.LinAlgError:
        return
    m._own.actuator_acc0[:] = np.sqrt(np.sum(x * x, axis=0))


def set_constants(m, d, stat=True):
    """Constants at qpos0 used by the constraint stage (MuJoCo mj_setConst).

    Needs d's position stage and qM at qpos0. Computes body_invweight0 (mean translational
    and rotational diagonal of J M⁻¹ Jᵀ for each body's com Jacobian), dof_invweight0 (per
    joint: mean diagonal of the joint's block of M⁻¹, translation and rotation apart for free
    joints), stat_meaninertia (mean diagonal of M), and the eq_data that depends on qpos0:
    the connect anchor in body2's frame and, unless given, the weld's relative pose.
    """
    o = m._own  # the derived fields are read-only views; their buffers are written here
    nv = m.nv
    if nv:
        M = np.empty((nv, nv))
        dense_from_sparse(m._s, d.qM, M)
        if stat:
            o.stat_meaninertia[0] = float(np.mean(np.diag(M)))
        try:
            Minv = np.linalg.inv(M)
            ok = np.all(np.isfinite(Minv))
        except np.linalg.LinAlgError:
            ok = False
    else:
        ok = False
        if stat:
            o.stat_meaninertia[0] = 1.0
    simple = _body_simple(m)
    jacp = np.zeros((3, nv))
    jacr = np.zeros((3, nv))
    o.body_invweight0[:] = 0.0
    for b in range(1, m.nbody):
        if m.body_dofnum[m.body_weldid[b]] == 0:
            continue
        if simple[b]:
            o.body_invweight0[b] = (1.0 / max(MINVAL, m.body_mass[b]), 0.0)
        elif ok:
            jac_point(m._s, d._s, b, d.xipos[b].copy(), jacp, jacr)
            A = np.vstack((jacp, jacr)) @ Minv @ np.vstack((jacp, jacr)).T
            dg = np.diag(A)
            o.body_invweight0[b] = (dg[:3].mean(), dg[3:].mean())
    o.dof_invweight0[:] = 0.0
    for j in range(m.njnt):
        a = m.jnt_dofadr[j]
        b = m.jnt_bodyid[j]
        if simple[b]:
            o.dof_invweight0[a] = 1.0 / max(MINVAL, m.body_mass[b])
        elif ok:
            jt = m.jnt_type[j]
            n = 6 if jt == JNT_FREE else 3 if jt == JNT_BALL else 1
            dg = np.diag(Minv)[a:a + n]
            if n == 6:
                o.dof_invweight0[a:a + 3] = dg[:3].mean()
                o.dof_invweight0[a + 3:a + 6] = dg[3:].mean()
            else:
                o.dof_invweight0[a:a + n] = dg.mean()
    _tendon_constants(m, d, Minv if ok else None)
    for i in range(m.neq):
        if m.eq_objtype[i] == OBJ_SITE:
            continue  # site semantics: the sites' own frames, nothing computed at qpos0
        b1, b2 = m.eq_obj1id[i], m.eq_obj2id[i]
        data = o.eq_data[i]
        if m.eq_type[i] == EQ_CONNECT:
            # data[3:6] = the anchor (given in body1's frame) in body2's frame at qpos0
            p = d.xpos[b1] + d.xmat[b1].reshape(3, 3) @ data[0:3]
            data[3:6] = d.xmat[b2].reshape(3, 3).T @ (p - d.xpos[b2])
        elif m.eq_type[i] == EQ_WELD and data[11] == 1.0:
            # no relpose given (data[11] = 1, MuJoCo 4.0's flag): data[3:6] = the anchor
            # (given in body2's frame) in body1's frame; data[6:10] = q1⁻¹ ⊗ q2 at qpos0
            p = d.xpos[b2] + d.xmat[b2].reshape(3, 3) @ data[0:3]
            data[3:6] = d.xmat[b1].reshape(3, 3).T @ (p - d.xpos[b1])
            q1 = d.xquat[b1] * np.array([1.0, -1.0, -1.0, -1.0])
            q2 = d.xquat[b2]
            data[6:10] = (
                q1[0] * q2[0] - q1[1] * q2[1] - q1[2] * q2[2] - q1[3] * q2[3],
                q1[0] * q2[1] + q1[1] * q2[0] + q1[2] * q2[3] - q1[3] * q2[2],
                q1[0] * q2[2] - q1[1] * q2[3] + q1[2] * q2[0] + q1[3] * q2[1],
                q1[0] * q2[3] + q1[1] * q2[2] - q1[2] * q2[1] + q1[3] * q2[0])
        elif m.eq_type[i] == EQ_WELD:
            data[6:10] /= np.linalg.norm(data[6:10])


def _tendon_constants(m, d, Minv):
    """tendon_length0, tendon_invweight0 = J M⁻¹ Jᵀ at qpos0, and the default spring length.

    A springlength left at MuJoCo's default (-1, -1) becomes the length at qpos0 (both ends
    of the dead band).
    """
    o = m._own
    if m.ntendon == 0:
        return
    o.tendon_length0[:] = d.ten_length
    for t in range(m.ntendon):
        J = d.ten_J[t]
        o.tendon_invweight0[t] = float(J @ Minv @ J) if Minv is not None else 0.0
        if m.tendon_lengthspring[t, 0] == -1.0 and m.tendon_lengthspring[t, 1] == -1.0:
            m.tendon_lengthspring[t] = d.ten_length[t]


def resolve_dampratio(m, d):
    """Position actuators' damping ratios as damping (mj_setConst).

    A position-like actuator (gainprm[0] = −biasprm[1]) or a pid (kp = −biasprm[1]) with
    biasprm[2] > 0 holds a damping ratio ζ there (MJCF `dampratio`). With its reflected
    inertia at qpos0, m_r = 1 / x with x = r M⁻¹ rᵀ for the moment row r, the mean of
    r_k M⁻¹ r_kᵀ over the rows of an orientation actuator's 3 outputs (m_r = 0 when
    x ≤ MINVAL), biasprm[2] becomes −ζ · 2 sqrt(kp m_r) (measured on MuJoCo 4.0).
    """
    todo = [i for i in range(m.nactuator)
            if (m.actuator_gaintype[i] == GAIN_PID
                or m.actuator_gainprm[i, 0] == -m.actuator_biasprm[i, 1])
            and m.actuator_biasprm[i, 2] > 0]
    if not todo:
        return
    transmission(m._s, d._s)
    M = np.empty((m.nv, m.nv))
    dense_from_sparse(m._s, d.qM, M)
    for i in todo:
        o, n = m.actuator_outadr[i], m.actuator_outnum[i]
        r = d.actuator_moment[o:o + n]
        try:
            x = float(np.sum(r * np.linalg.solve(M, r.T).T)) / n
        except np.linalg.LinAlgError:
            x = 0.0
        mass = 1.0 / x if x > MINVAL else 0.0
        # a pid keeps kp in biasprm[1] only (its gainprm[0] is ki)
        kp = (-m.actuator_biasprm[i, 1] if m.actuator_gaintype[i] == GAIN_PID
              else m.actuator_gainprm[i, 0])
        m.actuator_biasprm[i, 2] = -m.actuator_biasprm[i, 2] * 2.0 * np.sqrt(kp * mass)


def default_njmax(arrays, nconmax):
    """Default row capacity: every equality, friction and limit row, plus room for contacts.

    Contacts get nconmax contacts of the largest row count any geom or pair needs
    (pyramidal 2(condim − 1), elliptic condim), when any geom can collide.

    Args:
        arrays: the compiler's field arrays by name (eq_type, dof_frictionloss, jnt_limited,
            jnt_type, geom_contype, geom_conaffinity, geom_condim, pair_dim,
            tendon_frictionloss, tendon_limited).
        nconmax: the contact capacity.
    """
    a = {k: np.asarray(arrays[k]) for k in ("eq_type", "dof_frictionloss", "jnt_limited",
                                             "jnt_type", "geom_contype", "geom_conaffinity",
                                             "geom_condim", "pair_dim", "tendon_frictionloss",
                                             "tendon_limited")}
    per_eq = {EQ_CONNECT: 3, EQ_WELD: 6, EQ_JOINT: 1}
    rows = sum(per_eq.get(int(t), 1) for t in a["eq_type"].ravel())
    rows += int(np.count_nonzero(a["dof_frictionloss"]))
    # a tendon: one friction row, two limit rows
    rows += int(np.count_nonzero(a["tendon_frictionloss"]))
    rows += 2 * int(np.count_nonzero(a["tendon_limited"]))
    for lim, jt in zip(a["jnt_limited"].ravel(), a["jnt_type"].ravel()):
        if lim:
            rows += 2 if int(jt) in (JNT_HINGE, JNT_SLIDE) else 1
    collides = a["pair_dim"].size > 0 or bool(np.any(a["geom_contype"] != 0)
                                              and np.any(a["geom_conaffinity"] != 0))
    if collides:
        condim = max(int(np.max(a["geom_condim"], initial=1)),
                     int(np.max(a["pair_dim"], initial=1)))
        rows += max(condim, 2 * (condim - 1), 1) * int(nconmax)
    return max(rows, 1)


# MuJoCo's default <compiler><lengthrange> options (mjLROpt)
LENGTHRANGE_DEFAULTS = {"mode": "muscle", "useexisting": True, "uselimit": False,
                        "accel": 20.0, "maxforce": 0.0, "timeconst": 1.0, "timestep": 0.01,
                        "inttotal": 10.0, "interval": 2.0, "tolrange": 0.05}


def muscle_lengthrange(m, sources=None, options=None):
    """actuator_lengthrange by MuJoCo's simulation (mj_setLengthRange), with its options.

    `options` overrides LENGTHRANGE_DEFAULTS (MJCF <compiler><lengthrange>). The actuators
    computed: with mode "muscle" (and "muscleuser": user gains are refused at load) those
    with a muscle gain or bias, with "all" every one, with "none" none; with `useexisting`
    not those whose range is already nonempty. With `uselimit`, one on a limited joint or
    tendon takes its range. Otherwise for each side, from qpos0 at rest with contacts,
    gravity, springs, dampers, friction loss and actuation disabled and a `timestep` step
    (RK4 steps as Euler): each step damps qvel by exp(−h / timeconst) and pushes along the
    actuator's moment r with the force that gives an acceleration of ±accel (qfrc_applied =
    ±accel r / ‖M⁻¹ r‖, scaled down to norm `maxforce` when that is positive and exceeded);
    the side's end is the least (greatest) length over the last `interval` of `inttotal`
    simulated seconds. Raises ModelError as MuJoCo's compiler does when a simulation resets,
    the range is empty or a side did not converge (its lengths over that window spread more
    than `tolrange` of the range); `sources` (one per actuator, e.g. "model.xml:12
    <muscle>") prefix the messages.
    """
    from jointspace.errors import ModelError
    from jointspace.state import reset
    from jointspace.step import step
    from jointspace.types import (
        BIAS_MUSCLE,
        DSBL_ACTUATION,
        DSBL_CONTACT,
        DSBL_DAMPER,
        DSBL_FRICTIONLOSS,
        DSBL_GRAVITY,
        DSBL_SPRING,
        GAIN_MUSCLE,
        TRN_JOINT,
        TRN_JOINTINPARENT,
        TRN_TENDON,
    )

    opt = {**LENGTHRANGE_DEFAULTS, **(options or {})}
    todo = []
    for i in range(m.nactuator):
        muscle = m.actuator_gaintype[i] == GAIN_MUSCLE or m.actuator_biastype[i] == BIAS_MUSCLE
        if opt["mode"] == "none" or (opt["mode"] != "all" and not muscle):
            continue
        o = m.actuator_outadr[i]
        if opt["useexisting"] and m.actuator_lengthrange[o, 0] < m.actuator_lengthrange[o, 1]:
            continue
        trn, obj = m.actuator_trntype[i], m.actuator_trnid[i, 0]
        if opt["uselimit"] and trn in (TRN_JOINT, TRN_JOINTINPARENT) and m.jnt_limited[obj]:
            m.actuator_lengthrange[o] = m.jnt_range[obj]
        elif opt["uselimit"] and trn == TRN_TENDON and m.tendon_limited[obj]:
            m.actuator_lengthrange[o] = m.tendon_range[obj]
        else:
            todo.append(i)
    if not todo:
        return
    h = opt["timestep"] if opt["timestep"] > 0 else m.opt_timestep[0]
    saved = (m.opt_disableflags[0], m.opt_timestep[0], m.opt.integrator)
    m.opt_disableflags[0] = (DSBL_FRICTIONLOSS | DSBL_CONTACT | DSBL_SPRING | DSBL_DAMPER
                             | DSBL_GRAVITY | DSBL_ACTUATION)
    m.opt_timestep[0] = h
    if saved[2] == "RK4":
        m.opt.integrator = "Euler"
    try:
        d = Data(m)
        decay = np.exp(-h / max(0.01, opt["timeconst"]))
        M = np.empty((m.nv, m.nv))
        for i in todo:
            o = m.actuator_outadr[i]
            where = f"{sources[i]}: " if sources and sources[i] else ""
            lo, hi = [0.0, 0.0], [0.0, 0.0]
            for side in (0, 1):
                reset(m, d)
                updated = False
                while d.time < opt["inttotal"]:
                    d.qvel[:] *= decay
                    kinematics_com_pos(m._s, d._s)
                    crb_stage(m._s, d._s)
                    transmission(m._s, d._s)
                    dense_from_sparse(m._s, d.qM, M)
                    r = d.actuator_moment[o].copy()
                    nrm = float(np.linalg.norm(np.linalg.solve(M, r)))
                    f = r * ((2 * side - 1) * opt["accel"] / max(MINVAL, nrm))
                    nrm = float(np.linalg.norm(f))
                    if opt["maxforce"] > 0 and nrm > opt["maxforce"]:
                        f *= opt["maxforce"] / max(MINVAL, nrm)
                    d.qfrc_applied[:] = f
                    step(m, d)
                    length = float(d.actuator_length[o])
                    if d.time == 0.0:
                        raise ModelError(f"{where}Unstable lengthrange simulation in actuator {i}")
                    if d.time > opt["inttotal"] - opt["interval"]:
                        if length < lo[side] or not updated:
                            lo[side] = length
                        if length > hi[side] or not updated:
                            hi[side] = length
                        updated = True
            rng = (lo[0], hi[1])
            dif = rng[1] - rng[0]
            if dif <= 0:
                raise ModelError(f"{where}Invalid lengthrange ({rng[0]:g}, {rng[1]:g}) in "
                                 f"actuator {i}")
            for side in (0, 1):
                if hi[side] - lo[side] > opt["tolrange"] * dif:
                    raise ModelError(
                        f"{where}Lengthrange computation did not converge in actuator {i} "
                        f"({m.names['actuator'][i] or 'unnamed'}): eval ({lo[side]:g}, "
                        f"{hi[side]:g}), range ({rng[0]:g}, {rng[1]:g}); give lengthrange on "
                        f"the actuator or limit its joint")
            m.actuator_lengthrange[o] = rng
    finally:
        m.opt_disableflags[0], m.opt_timestep[0] = saved[0], saved[1]
        m.opt.integrator = saved[2]
