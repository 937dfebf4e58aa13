"""Argument checks for the dynamics entry points, with a fast path for well-formed input.

Each public call validates its arguments in Python before it enters compiled code once
(DESIGN.md §2.4); the checks here cost a few hundred nanoseconds when the input is already
right and fall back to `jointspace._entry`'s converting checks (with their clear messages)
otherwise.
"""

import numpy as np

from jointspace import _entry
from jointspace.errors import SingularMassError
from jointspace.types import Data, Model

_F8 = np.dtype(np.float64)


def check_pair(m, d, fname):
    """Raise a clear error unless m is a Model and d a Data made for it."""
    if m.__class__ is not Model or d.__class__ is not Data or d._msig is not m._sizes:
        _entry.check_pair(m, d, fname)


def vec(x, n, name, fname):
    """Return x as a C-contiguous float64 (n,) array, or raise a clear error naming it."""
    if x.__class__ is np.ndarray and x.dtype is _F8 and x.shape == (n,) and x.strides == (8,):
        return x
    return _entry.vec(x, n, name, fname)


def mat(x, shape, name, fname):
    """Return x as a C-contiguous float64 array of the given shape, or raise a clear error."""
    return _entry.mat(x, shape, name, fname)


def dof_label(m, i):
    """'dof i (joint NAME)' for error messages."""
    j = int(m.dof_jntid[i])
    name = m.names["joint"][j] if j < len(m.names.get("joint", ())) else ""
    return f"dof {i} (joint {name!r})" if name else f"dof {i} (joint #{j})"


def check_not_singular(m, fname):
    """Raise SingularMassError if the compiler found dofs that move no mass or inertia.

    Dofs that have been given armature since compilation no longer count as singular.
    """
    bad = getattr(m, "singular_dofs", None)
    if bad:
        bad = [i for i in bad if not m.dof_armature[i] > 0]
        if bad:
            labels = ", ".join(dof_label(m, i) for i in bad)
            raise SingularMassError(
                f"{fname}: the joint-space inertia M is singular: {labels} move(s) no mass "
                "or inertia, so M⁻¹ does not exist. Give the bodies below these joints mass "
                "and inertia, or add armature to the joints")


def raise_pivot(m, i, fname, what):
    """Raise SingularMassError for a non-positive pivot at dof i."""
    raise SingularMassError(
        f"{fname}: the joint-space inertia M is singular at this configuration: the {what} "
        f"pivot of {dof_label(m, i)} is not positive. Check that the bodies below this joint "
        "have mass and inertia that this dof can move, or add armature to the joint")
