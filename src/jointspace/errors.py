"""Exceptions and warnings raised by jointspace.

Every message names where the problem is (file and line, element, or argument) and what to
do about it (DESIGN.md §2.8).
"""


class JointspaceError(Exception):
    """Base class for errors raised by jointspace."""


class ModelError(JointspaceError, ValueError):
    """A model description is invalid (bad XML, unknown element, inconsistent values)."""


class SingularMassError(JointspaceError, ValueError):
    """An operation needs M⁻¹ but the model has dofs whose subtree carries no mass."""


class JointspaceWarning(UserWarning):
    """Something was accepted but may not behave as the user expects."""
