"""Compile-time constants of a model (MuJoCo's mj_setConst), and the default row capacity.

Run once by the compiler (`jointspace.io.compile`) at qpos0, after the position stage:
body and dof inverse weights (the constraint stage's diagApprox), the mean inertia that
scales the solvers' tolerance, and the equality data that depends on qpos0.
"""

import numpy as np

from jointspace.dynamics.crba import dense_from_sparse
from jointspace.kinematics import jac_point
from jointspace.types import (
    EQ_CONNECT,
    EQ_JOINT,
    EQ_WELD,
    JNT_BALL,
    JNT_FREE,
    JNT_HINGE,
    JNT_SLIDE,
    MINVAL,
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


def set_constants(m, d):
    """Constants at qpos0 used by the constraint stage (MuJoCo mj_setConst).

    Needs d's position stage and qM at qpos0. Computes body_invweight0 (mean translational
    and rotational diagonal of J M⁻¹ Jᵀ for each body's com Jacobian), dof_invweight0 (per
    joint: mean diagonal of the joint's block of M⁻¹, translation and rotation apart for free
    joints), stat_meaninertia (mean diagonal of M), and the eq_data that depends on qpos0:
    the connect anchor in body2's frame and, unless given, the weld's relative pose.
    """
    nv = m.nv
    if nv:
        M = np.empty((nv, nv))
        dense_from_sparse(m._s, d.qM, M)
        m.stat_meaninertia[0] = float(np.mean(np.diag(M)))
        try:
            Minv = np.linalg.inv(M)
            ok = np.all(np.isfinite(Minv))
        except np.linalg.LinAlgError:
            ok = False
    else:
        ok = False
        m.stat_meaninertia[0] = 1.0
    simple = _body_simple(m)
    jacp = np.zeros((3, nv))
    jacr = np.zeros((3, nv))
    m.body_invweight0[:] = 0.0
    for b in range(1, m.nbody):
        if m.body_dofnum[m.body_weldid[b]] == 0:
            continue
        if simple[b]:
            m.body_invweight0[b] = (1.0 / max(MINVAL, m.body_mass[b]), 0.0)
        elif ok:
            jac_point(m._s, d._s, b, d.xipos[b].copy(), jacp, jacr)
            A = np.vstack((jacp, jacr)) @ Minv @ np.vstack((jacp, jacr)).T
            dg = np.diag(A)
            m.body_invweight0[b] = (dg[:3].mean(), dg[3:].mean())
    m.dof_invweight0[:] = 0.0
    for j in range(m.njnt):
        a = m.jnt_dofadr[j]
        b = m.jnt_bodyid[j]
        if simple[b]:
            m.dof_invweight0[a] = 1.0 / max(MINVAL, m.body_mass[b])
        elif ok:
            jt = m.jnt_type[j]
            n = 6 if jt == JNT_FREE else 3 if jt == JNT_BALL else 1
            dg = np.diag(Minv)[a:a + n]
            if n == 6:
                m.dof_invweight0[a:a + 3] = dg[:3].mean()
                m.dof_invweight0[a + 3:a + 6] = dg[3:].mean()
            else:
                m.dof_invweight0[a:a + n] = dg.mean()
    for i in range(m.neq):
        b1, b2 = m.eq_obj1id[i], m.eq_obj2id[i]
        data = m.eq_data[i]
        if m.eq_type[i] == EQ_CONNECT:
            # data[3:6] = the anchor (given in body1's frame) in body2's frame at qpos0
            p = d.xpos[b1] + d.xmat[b1].reshape(3, 3) @ data[0:3]
            data[3:6] = d.xmat[b2].reshape(3, 3).T @ (p - d.xpos[b2])
        elif m.eq_type[i] == EQ_WELD and not np.any(data[6:10]):
            # data[3:6] = the anchor (given in body2's frame) in body1's frame;
            # data[6:10] = q1⁻¹ ⊗ q2 at qpos0
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


def default_njmax(arrays, nconmax):
    """Default row capacity: every equality, friction and limit row, plus room for contacts.

    Contacts get nconmax contacts of the largest row count any geom or pair needs
    (pyramidal 2(condim − 1), elliptic condim), when any geom can collide.

    Args:
        arrays: the compiler's field arrays by name (eq_type, dof_frictionloss, jnt_limited,
            jnt_type, geom_contype, geom_conaffinity, geom_condim, pair_dim).
        nconmax: the contact capacity.
    """
    a = {k: np.asarray(arrays[k]) for k in ("eq_type", "dof_frictionloss", "jnt_limited",
                                             "jnt_type", "geom_contype", "geom_conaffinity",
                                             "geom_condim", "pair_dim")}
    per_eq = {EQ_CONNECT: 3, EQ_WELD: 6, EQ_JOINT: 1}
    rows = sum(per_eq.get(int(t), 1) for t in a["eq_type"].ravel())
    rows += int(np.count_nonzero(a["dof_frictionloss"]))
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
