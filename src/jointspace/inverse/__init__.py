"""Inverse dynamics with contacts: the soft model's analytical inverse, trajectories, Jacobians.

`core`: the inverse (mj_inverse), its discrete form, the fwdinv comparison, Algorithm 5.
`trajectory`: the inverse along arrays of states and the controls it implies.
`derivatives`: ∂qfrc_inverse/∂(qpos, qvel, qacc) (mjd_inverseFD).
"""

from jointspace.inverse.core import compare_fwd_inv, cone_project, inverse, inverse_step
from jointspace.inverse.derivatives import inverse_derivatives
from jointspace.inverse.trajectory import InverseTrajectory, inverse_trajectory

__all__ = ["compare_fwd_inv", "cone_project", "inverse", "inverse_step", "inverse_derivatives",
           "InverseTrajectory", "inverse_trajectory"]
