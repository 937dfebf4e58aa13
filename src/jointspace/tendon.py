"""Tendons: lengths, Jacobians and velocities (MuJoCo's mj_tendon, engine_core_smooth.c).

A fixed tendon is a linear combination of scalar (hinge or slide) joint positions, its
path elements wrap_* [tendon_adr, tendon_adr + tendon_num) holding the joints (wrap_objid)
and their coefficients (wrap_prm):

  ten_length = Σ_k coef_k qpos[jnt_qposadr[j_k]]
  ten_J      = Σ_k coef_k e_{jnt_dofadr[j_k]}          (constant: no bias term)
  ten_velocity = ten_J qvel

The tendon's forces reach the joints through ten_J: springs and dampers
(`jointspace.passive`), limit and friction-loss rows (`jointspace.constraint.rows`),
`<equality><tendon>` rows, tendon actuators (`jointspace.actuation`) and the armature,
M += armature ten_Jᵀ ten_J (`tendon_armature`, MuJoCo's mj_tendonArmature). Every stage
returns at once when the model has no tendon.
"""

from numba import njit


@njit(cache=True)
def tendon_stage(m, d):
    """ten_length, ten_J (dense, ntendon × nv), ten_wrapadr and ten_wrapnum (mj_tendon)."""
    if m.ntendon == 0:
        return
    J = d.ten_J
    for i in range(m.ntendon):
        for c in range(m.nv):
            J[i, c] = 0.0
        # fixed tendons record no path points
        d.ten_wrapadr[i] = 0
        d.ten_wrapnum[i] = 0
        adr = m.tendon_adr[i]
        length = 0.0
        for k in range(adr, adr + m.tendon_num[i]):
            j = m.wrap_objid[k]
            coef = m.wrap_prm[k]
            # L += coef q_j;  J[dof_j] += coef
            length += coef * d.qpos[m.jnt_qposadr[j]]
            J[i, m.jnt_dofadr[j]] += coef
        d.ten_length[i] = length


@njit(cache=True)
def tendon_velocity(m, d):
    """ten_velocity = ten_J qvel."""
    for i in range(m.ntendon):
        s = 0.0
        for c in range(m.nv):
            s += d.ten_J[i, c] * d.qvel[c]
        d.ten_velocity[i] = s


@njit(cache=True)
def tendon_armature(m, d):
    """qM += Σ_t armature_t ten_J_tᵀ ten_J_t on M's sparsity (mj_tendonArmature).

    The compiler allows armature only on tendons whose dofs lie on one branch of the tree,
    so every product ten_J[i] ten_J[j] has its (i, ancestor j) entry in qM.
    """
    for t in range(m.ntendon):
        a = m.tendon_armature[t]
        if a == 0.0:
            continue
        J = d.ten_J[t]
        for i in range(m.nv):
            if J[i] == 0.0:
                continue
            # row i of the lower triangle: M[i, j] for j = i and its ancestors
            adr = m.dof_Madr[i]
            j = i
            while j >= 0:
                d.qM[adr] += a * J[i] * J[j]
                adr += 1
                j = m.dof_parentid[j]


@njit(cache=True)
def tendon_armature_force(m, d, qacc, tau):
    """tau += Σ_t armature_t ten_J_tᵀ (ten_J_t qacc): the tendon armature's share of M qacc."""
    for t in range(m.ntendon):
        a = m.tendon_armature[t]
        if a == 0.0:
            continue
        J = d.ten_J[t]
        s = 0.0
        for c in range(m.nv):
            s += J[c] * qacc[c]
        for c in range(m.nv):
            tau[c] += a * s * J[c]
