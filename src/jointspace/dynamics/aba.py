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
    row6_at,
    scale6,
    set_row6,
    set_row6_at,
    sub6,
    sym_add,
    sym_from_cinert,
    sym_mul6,
    sym_rank1_sub,
    world_wrench_to_com,
)
from jointspace.types import MINVAL, Data, Model

_PA = 21  # scratch_body column of pA


@njit(cache=True)
def aba_kernel(m, d, tau, use_fext, fext, qacc):
    """Articulated-body algorithm (needs com_pos and com_vel_stage); returns -1 or a bad dof.

    RBDA §7.3 per dof, as in the module docstring, in the book's symbols: IA, pA (rows of
    scratch_body: IA[b, :21] packed, pA[b] = IA[b, _PA:_PA + 6]), U, D, u (W[k] = U, 1/D, u),
    s = cdof[k], c = cdof_dot[k] qvel[k], a the body's acceleration. Reads qvel and cvel,
    cdof, cdof_dot, cinert from d; writes qacc (nv,), d.cacc and d.cfrc_ext (f_ext in the
    c-frame, or zero).
    """
    parentid = m.body_parentid
    dofadr = m.body_dofadr
    dofnum = m.body_dofnum
    qvel = d.qvel
    cdof = d.cdof
    cdof_dot = d.cdof_dot
    cinert = d.cinert
    cacc = d.cacc
    cvel = d.cvel
    cfrc_ext = d.cfrc_ext
    rootid = m.body_rootid
    xipos = d.xipos
    com = d.subtree_com
    IA = d.scratch_body
    W = d.scratch_nv
    # IA = cinert;  pA = cvel ×* (cinert cvel) - cfrc_ext
    set_row6(cfrc_ext, 0, ZERO6)
    for b in range(1, m.nbody):
        sym_from_cinert(IA, b, cinert, b)
        v = row6(cvel, b)
        pAb = cross_force6(v, inert_mul6(cinert, b, v))
        e = ZERO6
        if use_fext:
            r = uint64(rootid[b])
            e = world_wrench_to_com(fext, b, xipos[b, 0], xipos[b, 1], xipos[b, 2],
                                    com[r, 0], com[r, 1], com[r, 2])
            pAb = sub6(pAb, e)
        set_row6(cfrc_ext, b, e)
        set_row6_at(IA, b, _PA, pAb)
    # backward, over dofs k = nv-1 … 0
    for b in range(m.nbody - 1, 0, -1):
        pA = row6_at(IA, b, _PA)
        for kk in range(dofadr[b] + dofnum[b] - 1, dofadr[b] - 1, -1):
            k = uint64(kk)
            s = row6(cdof, k)
            # U = IA s,  D = sᵀ U + armature,  u = τ - sᵀ pA
            U = sym_mul6(IA, b, s)
            D = dot6(s, U) + dof_armature(m, k)
            if not D > MINVAL:
                return kk
            Dinv = 1.0 / D
            u = tau[k] - dot6(s, pA)
            set_row6(W, k, U)
            W[k, 6] = Dinv
            W[k, 7] = u
            # IA ← IA - U Uᵀ / D;  pA ← pA + IA c + U u / D
            sym_rank1_sub(IA, b, U, Dinv)
            c = scale6(row6(cdof_dot, k), qvel[k])
            pA = add6(pA, add_scl6(sym_mul6(IA, b, c), U, u * Dinv))
        set_row6_at(IA, b, _PA, pA)
        # IA_parent += IA;  pA_parent += pA
        p = uint64(parentid[b])
        if p > 0:
            sym_add(IA, p, b)
            set_row6_at(IA, p, _PA, add6(row6_at(IA, p, _PA), pA))
    # forward, over dofs in order: a ← a + c;  q̈ = (u - Uᵀ a) / D;  a ← a + s q̈
    g = m.opt_gravity
    set_row6(cacc, 0, (0.0, 0.0, 0.0, -g[0], -g[1], -g[2]))
    for b in range(1, m.nbody):
        a = row6(cacc, uint64(parentid[b]))
        for k in range(uint64(dofadr[b]), uint64(dofadr[b] + dofnum[b])):
            a = add_scl6(a, row6(cdof_dot, k), qvel[k])
            qa = W[k, 6] * (W[k, 7] - dot6(row6(W, k), a))
            qacc[k] = qa
            a = add_scl6(a, row6(cdof, k), qa)
        set_row6(cacc, b, a)
    return -1


@entry.checked("_k_aba", q="nq", v="nv", tau="nv", fext="nbody, 6")
@njit(cache=True)
def _aba_driver(d, q, v, tau, use_fext, fext):
    """Set qpos, qvel = q, v; run kinematics → com_pos → com_vel → ABA into d.qacc."""
    m = d.model
    poses_at(m, d, q)
    qvel = d.qvel
    for k in range(v.shape[0]):
        qvel[k] = v[k]
    com_vel_stage(m, d)
    return aba_kernel(m, d, tau, use_fext, fext, d.qacc)


# ── generated by tools/gen_entries.py from the declaration above: do not edit ──


@njit(cache=True, nogil=True)
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
