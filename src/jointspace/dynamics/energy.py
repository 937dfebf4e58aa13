"""Energies and momentum: the Lagrangian and Hamiltonian quantities of the smooth dynamics.

  kinetic     T = ½ vᵀ M(q) v               (M with armature, as MuJoCo's mj_energyVel)
  potential   V = −Σ_b m_b g · xipos_b + Σ_joints ½ k |x_j|²       (mj_energyPos)
              x_j: the spring displacement of `jointspace.passive` (hinge/slide q − q_spring,
              ball the rotation vector log(q_spring⁻¹ ⊗ q), free also the world translation)
  momentum    p = M(q) v
  Hamiltonian H = T + V

The generalized forces are their gradients: g(q) = ∂V_gravity/∂q is the gravity part of
qfrc_bias and −∂V_spring/∂q is the spring part of qfrc_passive, with ∂/∂q along
`integrate_pos` for ball and free joints. d.energy = (V, T), filled by these functions
always and by `forward` and `step` with the model's energy flag (MuJoCo's mjENBL_ENERGY:
without it they set zeros, as mj_forward does).
"""

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.dynamics.crba import crb_stage
from jointspace.kinematics import com_pos, kinematics_bodies
from jointspace.passive import spring_displacement
from jointspace.types import DSBL_GRAVITY, DSBL_SPRING, SMALL_ENERGY


@njit(cache=True)
def _mul_m(m, qM, x, out):
    """Product out = M x for a symmetric M stored in qM's sparse layout."""
    for i in range(m.nv):
        out[i] = qM[m.dof_Madr[i]] * x[i]
    for i in range(m.nv):
        adr = m.dof_Madr[i] + 1
        j = m.dof_parentid[i]
        while j >= 0:
            out[i] += qM[adr] * x[j]
            out[j] += qM[adr] * x[i]
            adr += 1
            j = m.dof_parentid[j]


@njit(cache=True)
def energy_pos(m, d):
    """energy[0] = gravitational + spring potential energy (mj_energyPos); needs kinematics.

    A term is left out when its disable flag ("gravity", "spring") is set.
    """
    g = m.opt_gravity
    e = 0.0
    flags = m.opt_disableflags[0]
    # V_gravity = −Σ m g · xipos
    for b in range(1, m.nbody if (flags & DSBL_GRAVITY) == 0 else 1):
        e -= m.body_mass[b] * (g[0] * d.xipos[b, 0] + g[1] * d.xipos[b, 1]
                               + g[2] * d.xipos[b, 2])
    # V_spring = Σ ½ k |x|²
    x = d.scratch_small[SMALL_ENERGY:SMALL_ENERGY + 6]
    for j in range(m.njnt if (flags & DSBL_SPRING) == 0 else 0):
        k = m.jnt_stiffness[j]
        if k == 0.0:
            continue
        n = spring_displacement(m, d.qpos, j, x)
        if n == 6:
            e += 0.5 * k * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
            e += 0.5 * k * (x[3] * x[3] + x[4] * x[4] + x[5] * x[5])
        else:
            s = 0.0
            for i in range(n):
                s += x[i] * x[i]
            e += 0.5 * k * s
    # tendon springs: ½ k x², x the length outside the dead band tendon_lengthspring
    for t in range(m.ntendon if (flags & DSBL_SPRING) == 0 else 0):
        length = d.ten_length[t]
        lower = m.tendon_lengthspring[t, 0]
        upper = m.tendon_lengthspring[t, 1]
        xt = length - upper if length > upper else length - lower if length < lower else 0.0
        e += 0.5 * m.tendon_stiffness[t] * xt * xt
    d.energy[0] = e


@njit(cache=True)
def energy_vel(m, d):
    """energy[1] = ½ qvelᵀ M qvel (mj_energyVel); needs qM."""
    mv = d.scratch_v[0]
    _mul_m(m, d.qM, d.qvel, mv)
    t = 0.0
    for i in range(m.nv):
        t += mv[i] * d.qvel[i]
    d.energy[1] = 0.5 * t


@njit(cache=True, nogil=True)
def _lagrangian(m, d, p):
    """Kinematics, M, energies (d.energy) and momentum p = M qvel, in one compiled call."""
    kinematics_bodies(m, d)
    com_pos(m, d)
    crb_stage(m, d)
    energy_pos(m, d)
    _mul_m(m, d.qM, d.qvel, p)
    t = 0.0
    for i in range(m.nv):
        t += p[i] * d.qvel[i]
    d.energy[1] = 0.5 * t


_k_lagrangian = entry.Kernel(_lagrangian)


def _evaluate(m, d, q, v, fname):
    entry.check_pair(m, d, fname)
    if q is not None:
        d.qpos[:] = entry.vec(q, m.nq, "q", fname)
    if v is not None:
        d.qvel[:] = entry.vec(v, m.nv, "v", fname)
    p = np.empty(m.nv)
    ep = _k_lagrangian.ep
    ep(m._s, d._s, p)
    return p


def kinetic_energy(m, d, q=None, v=None):
    """Kinetic energy T = ½ vᵀ M(q) v (M includes armature, as in MuJoCo's energy[1]).

    Args:
        m: the Model.
        d: a Data for m; q and v, when given, are copied into d.qpos and d.qvel (else d's
            state is used). Fills the kinematic fields, qM and d.energy.
        q: (nq,) positions.
        v: (nv,) velocities.

    Returns:
        T as a float.
    """
    _evaluate(m, d, q, v, "kinetic_energy")
    return float(d.energy[1])


def potential_energy(m, d, q=None):
    """Potential energy V(q): gravity −Σ m_b g·xipos_b plus joint springs ½ k |x|² (mj_energyPos).

    Args:
        m: the Model.
        d: a Data for m; q, when given, is copied into d.qpos. Fills d.energy.
        q: (nq,) positions.

    Returns:
        V as a float.
    """
    _evaluate(m, d, q, None, "potential_energy")
    return float(d.energy[0])


def momentum(m, d, q=None, v=None):
    """Generalized momentum p = M(q) v, the conjugate of v in the Hamiltonian form.

    Args:
        m: the Model.
        d: a Data for m; q and v, when given, are copied into d.qpos and d.qvel.
        q: (nq,) positions.
        v: (nv,) velocities.

    Returns:
        (nv,) momentum.
    """
    return _evaluate(m, d, q, v, "momentum")


def hamiltonian(m, d, q=None, v=None):
    """Total energy H = T + V at (q, v), which the passive, undamped dynamics conserve.

    Args:
        m: the Model.
        d: a Data for m; q and v, when given, are copied into d.qpos and d.qvel.
        q: (nq,) positions.
        v: (nv,) velocities.

    Returns:
        H as a float.
    """
    _evaluate(m, d, q, v, "hamiltonian")
    return float(d.energy[0] + d.energy[1])
