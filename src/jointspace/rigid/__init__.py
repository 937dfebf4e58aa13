"""Inverse dynamics with rigid contact and Coulomb friction (Zapolsky & Drumwright, paper 002).

- `inverse`: `inverse_dynamics` (torques and contact impulses for one control period),
  `RigidIDResult`, `actuated_dofs`, `stiff_contacts`, `contact_forces`.
- `formulations`: the four formulations ("noslip", "coulomb", "coulomb_enum", "cfree") as
  compiled kernels, with the paper's equations in its docstring.
- `lcp`: the LCP solvers (Lemke, warm-started principal pivoting, enumeration).
"""

from jointspace.rigid import lcp
from jointspace.rigid.inverse import (
    FORMULATIONS,
    RigidIDResult,
    actuated_dofs,
    contact_forces,
    inverse_dynamics,
    stiff_contacts,
)

__all__ = ["FORMULATIONS", "RigidIDResult", "actuated_dofs", "contact_forces",
           "inverse_dynamics", "lcp", "stiff_contacts"]
