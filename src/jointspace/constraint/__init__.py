"""Constraint rows (efc_*) and their softness, MuJoCo's engine_core_constraint.c.

- `rows`: equality constraints, friction loss, joint limits and contacts as efc rows
  (`make_constraint_stage`, mj_makeConstraint), with their sparsity index.
- `softness`: impedance, R, B and K of each row (mj_makeImpedance; 004 §V), and the
  paper's (ε, κ) parameters (`softness_from_epsilon_kappa`).
- `reference`: efc_vel and efc_aref (mj_referenceConstraint), the cone data the solvers use.
"""

from numba import njit

from jointspace._numba import entry
from jointspace.constraint.reference import cone_info, reference
from jointspace.constraint.rows import make_constraint_stage, warn_cnstrfull
from jointspace.constraint.softness import softness_from_epsilon_kappa
from jointspace.types import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    CNSTR_EQUALITY,
    CNSTR_FRICTION_DOF,
    CNSTR_FRICTION_TENDON,
    CNSTR_LIMIT_JOINT,
    CNSTR_LIMIT_TENDON,
    STATE_CONE,
    STATE_LINEARNEG,
    STATE_LINEARPOS,
    STATE_QUADRATIC,
    STATE_SATISFIED,
)

__all__ = [
    "CNSTR_CONTACT_ELLIPTIC", "CNSTR_CONTACT_FRICTIONLESS", "CNSTR_CONTACT_PYRAMIDAL",
    "CNSTR_EQUALITY", "CNSTR_FRICTION_DOF", "CNSTR_FRICTION_TENDON", "CNSTR_LIMIT_JOINT",
    "CNSTR_LIMIT_TENDON", "STATE_CONE", "STATE_LINEARNEG", "STATE_LINEARPOS",
    "STATE_QUADRATIC", "STATE_SATISFIED", "cone_info", "make_constraint",
    "make_constraint_stage", "reference",
    "softness_from_epsilon_kappa", "warn_cnstrfull",
]


@njit(cache=True, nogil=True)
def make_constraint_reference(m, d):
    """make_constraint_stage, then reference (efc_vel, efc_aref)."""
    need = make_constraint_stage(m, d)
    reference(m, d)
    return need


_k_make = entry.Kernel(make_constraint_reference)


def make_constraint(m, d):
    """Build the constraint rows efc_* (0 … d.nefc−1) at the current state, in one compiled call.

    Reads the position and velocity stages of `d` (run `jointspace.forward` first, or
    `kinematics(m, d, qpos, qvel)` with the collision stage): writes d.ne, d.nf, d.nl,
    d.nefc and efc_type, efc_id, efc_J, efc_pos, efc_margin, efc_frictionloss,
    efc_diagApprox, efc_R, efc_D, efc_KBIP, efc_vel, efc_aref. See the module docstring for
    the rows and their softness.

    Args:
        m: the Model.
        d: a Data for m.

    Returns:
        The number of rows, d.nefc[0].
    """
    entry.check_pair(m, d, "make_constraint")
    ep = _k_make.ep
    need = ep(m._s, d._s)
    if need < 0:
        warn_cnstrfull(m, d, need, "make_constraint")
    return int(d.nefc[0])
