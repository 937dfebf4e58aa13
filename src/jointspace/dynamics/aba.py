"""Forward dynamics by Featherstone's articulated-body algorithm, O(n), in the c-frame.

Reference: RBDA §7.3 (Table 7.1). All spatial quantities use the com-based frame of
`jointspace.kinematics` (world axes, origin at the subtree com of the tree's root), so the
parent/child transforms iXλ of the book are identities and articulated inertias simply add.

Each dof is treated as a joint of its own, a body with several dofs (ball, free, or stacked
joints) being a chain of massless virtual links: this is exact (a massless link transmits
its child's force unchanged) and keeps every D a scalar, so no 3x3 or 6x6 inverse is needed
and multi-dof joints need no special case. With s = cdof[k] and c = cdof_dot[k] qvel[k]:

    backward, over dofs k = nv-1 … 0 (IA, pA of the body of k, updated in place):
        U = IA s,  D = sᵀ U + armature,  u = τ_k - sᵀ pA
        IA ← IA - U Uᵀ / D,  pA ← pA + IA c + U u / D
        after a body's first dof: IA_parent += IA, pA_parent += pA
    forward, over dofs in order (a starts at the parent's cacc, the world's is (0, -g)):
        a ← a + c,  q̈_k = (u - Uᵀ a) / D,  a ← a + s q̈_k

with IA, pA starting at cinert and cvel ×* (cinert cvel) - cfrc_ext. D equals the pivot
of M's LᵀDL factorization, so D ≤ 0 means M is singular.

Scratch: scratch_body[b, 0:21] holds IA (packed lower triangle), [b, 21:27] pA;
scratch_nv[k] holds U (6), 1/D, u.
"""

from numba import njit, uint64

from jointspace._numba import entry
from jointspace.kinematics import com_pos, com_vel_stage, kinematics_bodies
from jointspace.spatial import (
    cross_force6,
    inert_mul,
    sym_add,
    sym_from_cinert,
    sym_mul,
    sym_mul_scalars,
    sym_rank1_sub,
    world_wrench_to_com,
)
from jointspace.types import MINVAL, Data, Model

_PA = 21  # scratch_body column of pA


@njit(cache=True)
def _aba(m, d, tau, use_fext, fext, qacc):
    """Articulated-body algorithm (needs com_pos and com_vel_stage); returns -1 or a bad dof.

    Reads qvel and cvel, cdof, cdof_dot, cinert from d; writes qacc (nv,), d.cacc and
    d.cfrc_ext (f_ext in the c-frame, or zero).
    """
    nbody = m.nbody
    parentid = m.body_parentid
    rootid = m.body_rootid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    armature = m.dof_armature
    qvel = d.qvel
    cdof = d.cdof
    cdof_dot = d.cdof_dot
    cinert = d.cinert
    cvel = d.cvel
    cacc = d.cacc
    cfrc_ext = d.cfrc_ext
    xipos = d.xipos
    com = d.subtree_com
    S = d.scratch_body
    W = d.scratch_nv
    # IA = cinert;  pA = cvel ×* (cinert cvel) - cfrc_ext
    for k in range(6):
        cfrc_ext[0, k] = 0.0
    for b in range(1, nbody):
        sym_from_cinert(S, b, cinert, b)
        v0 = cvel[b, 0]
        v1 = cvel[b, 1]
        v2 = cvel[b, 2]
        v3 = cvel[b, 3]
        v4 = cvel[b, 4]
        v5 = cvel[b, 5]
        h0, h1, h2, h3, h4, h5 = inert_mul(cinert, b, v0, v1, v2, v3, v4, v5)
        p0, p1, p2, p3, p4, p5 = cross_force6(v0, v1, v2, v3, v4, v5, h0, h1, h2, h3, h4, h5)
        if use_fext:
            r = uint64(rootid[b])
            e0, e1, e2, e3, e4, e5 = world_wrench_to_com(
                fext, b, xipos[b, 0], xipos[b, 1], xipos[b, 2], com[r, 0], com[r, 1], com[r, 2])
            cfrc_ext[b, 0] = e0
            cfrc_ext[b, 1] = e1
            cfrc_ext[b, 2] = e2
            cfrc_ext[b, 3] = e3
            cfrc_ext[b, 4] = e4
            cfrc_ext[b, 5] = e5
            p0 -= e0
            p1 -= e1
            p2 -= e2
            p3 -= e3
            p4 -= e4
            p5 -= e5
        else:
            for k in range(6):
                cfrc_ext[b, k] = 0.0
        S[b, _PA + 0] = p0
        S[b, _PA + 1] = p1
        S[b, _PA + 2] = p2
        S[b, _PA + 3] = p3
        S[b, _PA + 4] = p4
        S[b, _PA + 5] = p5
    # backward pass: articulated inertias and bias forces
    for b in range(nbody - 1, 0, -1):
        for kk in range(dofadr[b] + dofnum[b] - 1, dofadr[b] - 1, -1):
            k = uint64(kk)
            s0 = cdof[k, 0]
            s1 = cdof[k, 1]
            s2 = cdof[k, 2]
            s3 = cdof[k, 3]
            s4 = cdof[k, 4]
            s5 = cdof[k, 5]
            # U = IA s, D = sᵀ U + armature, u = τ - sᵀ pA
            u0, u1, u2, u3, u4, u5 = sym_mul(S, b, cdof, k)
            dk = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5 + armature[k]
            if not dk > MINVAL:
                return kk
            dinv = 1.0 / dk
            uk = tau[k] - (s0 * S[b, _PA] + s1 * S[b, _PA + 1] + s2 * S[b, _PA + 2]
                           + s3 * S[b, _PA + 3] + s4 * S[b, _PA + 4] + s5 * S[b, _PA + 5])
            W[k, 0] = u0
            W[k, 1] = u1
            W[k, 2] = u2
            W[k, 3] = u3
            W[k, 4] = u4
            W[k, 5] = u5
            W[k, 6] = dinv
            W[k, 7] = uk
            # IA ← IA - U Uᵀ / D;  pA ← pA + IA c + U u / D
            sym_rank1_sub(S, b, u0, u1, u2, u3, u4, u5, dinv)
            qv = qvel[k]
            g0, g1, g2, g3, g4, g5 = sym_mul_scalars(
                S, b, cdof_dot[k, 0] * qv, cdof_dot[k, 1] * qv, cdof_dot[k, 2] * qv,
                cdof_dot[k, 3] * qv, cdof_dot[k, 4] * qv, cdof_dot[k, 5] * qv)
            w = uk * dinv
            S[b, _PA] += g0 + u0 * w
            S[b, _PA + 1] += g1 + u1 * w
            S[b, _PA + 2] += g2 + u2 * w
            S[b, _PA + 3] += g3 + u3 * w
            S[b, _PA + 4] += g4 + u4 * w
            S[b, _PA + 5] += g5 + u5 * w
        p = uint64(parentid[b])
        if p > 0:
            sym_add(S, p, b)
            for t in range(_PA, _PA + 6):
                S[p, t] += S[b, t]
    # forward pass: accelerations
    for k in range(3):
        cacc[0, k] = 0.0
        cacc[0, 3 + k] = -m.opt_gravity[k]
    for b in range(1, nbody):
        p = uint64(parentid[b])
        a0 = cacc[p, 0]
        a1 = cacc[p, 1]
        a2 = cacc[p, 2]
        a3 = cacc[p, 3]
        a4 = cacc[p, 4]
        a5 = cacc[p, 5]
        for k in range(uint64(dofadr[b]), uint64(dofadr[b] + dofnum[b])):
            # a ← a + c;  q̈ = (u - Uᵀ a) / D;  a ← a + s q̈
            qv = qvel[k]
            a0 += cdof_dot[k, 0] * qv
            a1 += cdof_dot[k, 1] * qv
            a2 += cdof_dot[k, 2] * qv
            a3 += cdof_dot[k, 3] * qv
            a4 += cdof_dot[k, 4] * qv
            a5 += cdof_dot[k, 5] * qv
            qa = W[k, 6] * (W[k, 7] - (W[k, 0] * a0 + W[k, 1] * a1 + W[k, 2] * a2
                                       + W[k, 3] * a3 + W[k, 4] * a4 + W[k, 5] * a5))
            qacc[k] = qa
            a0 += cdof[k, 0] * qa
            a1 += cdof[k, 1] * qa
            a2 += cdof[k, 2] * qa
            a3 += cdof[k, 3] * qa
            a4 += cdof[k, 4] * qa
            a5 += cdof[k, 5] * qa
        cacc[b, 0] = a0
        cacc[b, 1] = a1
        cacc[b, 2] = a2
        cacc[b, 3] = a3
        cacc[b, 4] = a4
        cacc[b, 5] = a5
    return -1


@entry.checked("_k_aba", q="nq", v="nv", tau="nv", fext="nbody, 6")
@njit(cache=True)
def _aba_driver(d, q, v, tau, use_fext, fext):
    """Set qpos, qvel = q, v; run kinematics → com_pos → com_vel → ABA into d.qacc."""
    m = d.model
    qpos = d.qpos
    qvel = d.qvel
    for k in range(q.shape[0]):
        qpos[k] = q[k]
    for k in range(v.shape[0]):
        qvel[k] = v[k]
    kinematics_bodies(m, d)
    com_pos(m, d)
    com_vel_stage(m, d)
    return _aba(m, d, tau, use_fext, fext, d.qacc)


# ── generated by tools/gen_entries.py from the declaration above: do not edit ──


@njit(cache=True)
def _aba_checked(d, q, v, tau, use_fext, fext):
    """_aba_driver once the arguments' sizes match d's model; else entry.BAD_SHAPE."""
    m = d.model
    if (q.shape[0] != m.nq or v.shape[0] != m.nv or tau.shape[0] != m.nv
            or fext.shape[0] != m.nbody or fext.shape[1] != 6):
        return entry.BAD_SHAPE
    return _aba_driver(d, q, v, tau, use_fext, fext)


_k_aba = entry.Kernel(_aba_checked, sig=(None, entry.IN1, entry.IN1, entry.IN1, None, entry.IN2))
# ── end of generated code ──


@entry.public("_k_aba(q, v, tau, False, d.cfrc_ext) if f_ext is None "
              "else _k_aba(q, v, tau, True, f_ext)", returns="d.qacc.copy()",
              pivot="articulated-inertia")
def aba(m, d, q, v, tau, f_ext=None):
    """Accelerations from forces: the forward dynamics, by the articulated-body algorithm.

    Solves M(q) qacc + C(q, v) v + g(q) = tau + Jᵀ f_ext in O(n), M including armature.
    One compiled call runs kinematics, com_pos, com_vel and the ABA.

    Args:
        m: the Model.
        d: a Data for m. q, v are copied into d.qpos, d.qvel; the result goes to d.qacc;
            the kinematic fields, cvel, cdof_dot, cacc and cfrc_ext are filled.
        q: (nq,) positions.
        v: (nv,) velocities.
        tau: (nv,) generalized forces.
        f_ext: optional (nbody, 6) external wrenches, as in `rnea`: row b = (force, torque)
            in world axes, the force acting at body b's center of mass.

    Returns:
        (nv,) accelerations (a copy of d.qacc).

    Raises:
        SingularMassError: the model has dofs that move no mass, or an articulated-inertia
            pivot is not positive at q.
    """
    # generated by tools/gen_entries.py from the declaration above: do not edit
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s and not m.singular_dofs:
        ep = _k_aba.ep
        try:
            if f_ext is None:
                if ep(d._s, q, v, tau, False, d.cfrc_ext) == -1:
                    return d.qacc.copy()
            elif ep(d._s, q, v, tau, True, f_ext) == -1:
                return d.qacc.copy()
        except entry.FastPathMiss:
            pass
    entry.check_pair(m, d, "aba")
    entry.check_not_singular(m, "aba")
    q = entry.fresh(q, m._shq, "q", "aba")
    v = entry.fresh(v, m._shv, "v", "aba")
    tau = entry.fresh(tau, m._shv, "tau", "aba")
    if f_ext is None:
        status = _k_aba.ep(d._s, q, v, tau, False, d.cfrc_ext)
    else:
        f_ext = entry.fresh(f_ext, (m.nbody, 6), "f_ext", "aba")
        status = _k_aba.ep(d._s, q, v, tau, True, f_ext)
    if status >= 0:
        entry.raise_pivot(m, status, "aba", "articulated-inertia")
    return d.qacc.copy()
