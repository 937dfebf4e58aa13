"""jointspace: multi-joint rigid-body dynamics with contacts and constraints, compiled with Numba.

The public API (MuJoCo-style Model/Data, Pinocchio-style functions):

    import jointspace as js
    m = js.models.humanoid()          # or js.load("robot.xml"), js.load("robot.urdf")
    d = js.make_data(m)
    js.kinematics(m, d)               # world poses, com quantities
    jacp, jacr = js.jacobian_site(m, d, "left_foot")
"""

from jointspace._numba import cache, notice

cache.install()  # before any kernel module is imported: see cache's docstring
notice.install()  # a first use that compiles says so on stderr (notice's docstring)

from jointspace import control, history, models, rigid
from jointspace.collision import collision
from jointspace.collision.ray import ray
from jointspace.constraint import make_constraint, softness_from_epsilon_kappa
from jointspace.dynamics.aba import aba
from jointspace.dynamics.christoffel import (
    christoffel,
    christoffel_second_kind,
    coriolis_matrix,
    inertia_derivative,
)
from jointspace.dynamics.crba import crba, mul_m
from jointspace.dynamics.derivatives import aba_derivatives, rnea_derivatives
from jointspace.dynamics.energy import hamiltonian, kinetic_energy, momentum, potential_energy
from jointspace.dynamics.factor import factor_m, solve_m
from jointspace.dynamics.minv import minv
from jointspace.dynamics.rnea import bias_forces, gravity_forces, rnea
from jointspace.errors import JointspaceError, JointspaceWarning, ModelError, SingularMassError
from jointspace.forward import forward
from jointspace.ik import IKResult, Target, ik
from jointspace.integrate import diff_pos, integrate_pos
from jointspace.inverse import (
    InverseTrajectory,
    compare_fwd_inv,
    cone_project,
    inverse,
    inverse_derivatives,
    inverse_step,
    inverse_trajectory,
)
from jointspace.io import compile_model, load, load_string
from jointspace.io.setconst import set_const
from jointspace.io.spec import ModelSpec
from jointspace.kinematics import (
    com_vel,
    jacobian,
    jacobian_body,
    jacobian_body_com,
    jacobian_dot_qvel,
    jacobian_site,
    jacobian_subtree_com,
    kinematics,
)
from jointspace.precompile import compile
from jointspace.rigid import lcp
from jointspace.rollout import Rollout, rollout
from jointspace.sensor import sensor
from jointspace.solver import primal_cost, solve
from jointspace.solver.barrier import barrier_forward, barrier_inverse
from jointspace.state import get_state, reset, set_state, state_size
from jointspace.step import step, transition_derivatives
from jointspace.trajectory import Trajectory, simulate
from jointspace.types import Data, Model, make_data
from jointspace.viz import render
from jointspace.viz.viewer import Viewer, view

__version__ = "0.1.0"

__all__ = [
    "Data", "IKResult", "JointspaceError", "JointspaceWarning", "Model", "ModelError", "ModelSpec",
    "SingularMassError", "Target", "aba", "bias_forces", "christoffel", "christoffel_second_kind",
    "collision", "com_vel", "compile_model", "coriolis_matrix", "crba", "diff_pos", "factor_m",
    "forward", "gravity_forces", "hamiltonian", "ik", "inertia_derivative", "integrate_pos",
    "jacobian", "jacobian_body", "jacobian_body_com", "jacobian_dot_qvel", "jacobian_site",
    "jacobian_subtree_com", "kinematics", "kinetic_energy", "lcp", "load", "load_string",
    "make_constraint", "make_data", "minv", "models", "momentum", "mul_m", "potential_energy",
    "primal_cost", "rigid", "rnea", "softness_from_epsilon_kappa", "solve", "solve_m", "step",
    "InverseTrajectory", "compare_fwd_inv", "cone_project", "inverse", "inverse_step",
    "inverse_trajectory", "barrier_forward", "barrier_inverse", "control",
    "Trajectory", "Viewer", "render", "simulate", "view", "compile", "set_const",
    "get_state", "reset", "set_state", "state_size", "sensor", "ray",
    "rnea_derivatives", "aba_derivatives", "transition_derivatives",
    "inverse_derivatives", "Rollout", "rollout", "history",
]
