"""Argument checks and singular-mass errors for the dynamics entry points.

Each public call enters compiled code once (DESIGN.md §2.4): straight away, its array
arguments checked as they cross (`jointspace._entry.CheckedArray`), and through
`check_pair` and `jointspace._entry.fresh` when that call misses. A kernel's
"bad pivot" return code becomes a `SingularMassError` that names the joint.
"""

from jointspace import _entry
from jointspace.errors import SingularMassError

check_pair = _entry.check_pair


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
