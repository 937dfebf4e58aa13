"""State checks, element labels and the warnings and errors that name them.

- `bad_element` (compiled): the first NaN, inf or |x| > 1e10 of a vector (MuJoCo's
  mju_isBad), used by forward, step and inverse to refuse or reset a bad state.
- Labels for messages: `joint_label`, `element_name` (qpos/qvel/qacc index → its joint),
  `dof_label`; `element_id`, an element argument (name or id) checked and named in errors.
- `warn_bad_state` (step's reset warning), `check_not_singular` and `raise_pivot` (a
  singular mass matrix, named by joint).
"""

import warnings

import numpy as np
from numba import njit

from jointspace.errors import JointspaceError, JointspaceWarning, SingularMassError
from jointspace.types import DSBL_AUTORESET, MAXVAL, TRN_JOINT, TRN_JOINTINPARENT, TRN_TENDON

WARN_BADQPOS, WARN_BADQVEL, WARN_BADQACC = 0, 1, 2  # rows of d.warning
WARN_FIELDS = ("qpos", "qvel", "qacc")


@njit(cache=True)
def bad_element(x):
    """Index of the first NaN, inf or |x| > 1e10 in x, −1 if none (mju_isBad).

    A branch-free count first (it vectorizes), the search only when something is bad.
    """
    nbad = 0
    for i in range(x.shape[0]):
        nbad += not (abs(x[i]) <= MAXVAL)
    if nbad == 0:
        return -1
    for i in range(x.shape[0]):
        if not (abs(x[i]) <= MAXVAL):
            return i
    return -1


def joint_label(m, j):
    """'joint NAME' (or 'joint j' when unnamed) for messages."""
    name = m.names["joint"][j] if 0 <= j < len(m.names["joint"]) else ""
    return f"joint {name!r}" if name else f"joint {j}"


def element_id(m, kind, x, arg, fname):
    """Id of the `kind` element that argument `arg` of `fname` names (a str) or numbers (an int).

    Raises, naming the function and the argument: TypeError for anything but a str or an
    integer (bool, float, 0-d array, dict, …), KeyError for an unknown name and IndexError
    for an id out of range, as `Model.id`.
    """
    if x.__class__ is int or isinstance(x, (str, np.integer)):  # bool is not an id
        try:
            return m.id(kind, x)
        except KeyError as e:
            raise KeyError(f"{fname}: argument {arg}: {e.args[0]}") from None
        except IndexError as e:
            raise IndexError(f"{fname}: argument {arg}: {e}") from None
    hint = (f"; pass int({arg}) for an array holding one id"
            if isinstance(x, np.ndarray) and x.size == 1 else "")
    got = repr(x)
    got = got if len(got) <= 60 else got[:57] + "..."
    raise TypeError(f"{fname}: argument {arg} must be a {kind} name (str) or id (int), got "
                    f"{type(x).__name__} {got}{hint}")


def element_name(m, kind, i):
    """'qvel[7] (joint 'knee')' for a qpos (kind 0) or dof (kinds 1, 2) index."""
    if kind == WARN_BADQPOS:
        j = int(np.searchsorted(m.jnt_qposadr, i, side="right") - 1)
    else:
        j = int(m.dof_jntid[i])
    return f"{WARN_FIELDS[kind]}[{i}] ({joint_label(m, j)})"


def warn_bad_state(m, d, mask, fname):
    """Warn once per bad kind in mask (bit k: qpos, qvel, qacc) that step reset the state.

    With the "autoreset" flag disabled the state was kept, and the warning says so.
    """
    kept = int(m.opt_disableflags[0]) & DSBL_AUTORESET
    for kind in range(3):
        if mask & (1 << kind):
            what = element_name(m, kind, int(d.warning[kind, 1]))
            done = ("it was kept (the autoreset flag is disabled)" if kept else
                    "the state was reset to qpos0")
            warnings.warn(
                f"{fname}: {what} became NaN, inf or larger than 1e10; {done} "
                f"(d.warning[{kind}, 0] = {int(d.warning[kind, 0])} such events so "
                f"far). Reduce the time step, add damping, or check qpos, qvel, ctrl, "
                f"qfrc_applied and xfrc_applied (a singular M also gives a NaN qacc).",
                JointspaceWarning, stacklevel=3)


def dof_label(m, i):
    """'dof i (joint NAME)' for error messages."""
    j = int(m.dof_jntid[i])
    name = m.names["joint"][j] if j < len(m.names.get("joint", ())) else ""
    return f"dof {i} (joint {name!r})" if name else f"dof {i} (joint #{j})"


def lent_armature(m, obj, tendon):
    """Σ actuator_armature gear₀² that the actuators lend joint (tendon, when `tendon`) obj.

    As the compiled M adds it (`jointspace.actuator_passive`): through the actuator id
    `set_const` recorded in jnt_actuatorid (tendon_actuatorid): none (−1), that one
    actuator, or every actuator on obj (−2).
    """
    aid = int((m.tendon_actuatorid if tendon else m.jnt_actuatorid)[obj])
    if aid == -1:
        return 0.0
    trn = m.actuator_trntype
    kind = (trn == TRN_TENDON) if tendon else ((trn == TRN_JOINT) | (trn == TRN_JOINTINPARENT))
    on = kind & (m.actuator_trnid[:, 0] == obj)
    if aid >= 0:
        on = np.arange(m.nactuator) == aid
    gear = m.actuator_gear[m.actuator_outadr, 0]
    return float(np.sum(m.actuator_armature[on] * gear[on] ** 2))


def check_not_singular(m, fname):
    """Raise SingularMassError if the compiler found dofs that move no mass or inertia.

    Dofs that have been given armature since compilation (their own, or their joint's
    actuators', times gear₀², those `set_const` has listed in jnt_actuatorid, as the compiled
    M counts them) no longer count as singular.
    """
    bad = getattr(m, "singular_dofs", None)
    if bad:
        bad = [i for i in bad
               if not m.dof_armature[i] + lent_armature(m, m.dof_jntid[i], False) > 0]
        if bad:
            raise SingularMassError(
                f"{fname}: the joint-space inertia M is singular: {_dof_groups(m, bad)} "
                "move(s) no mass or inertia, so M⁻¹ does not exist. Give the bodies below "
                "these joints mass and inertia, or add armature to the joints")


def _dof_groups(m, dofs):
    """'dofs 0–5 (joint 'root') of body 'ball', …': dofs grouped by joint, with the body."""
    groups = {}
    for i in dofs:
        groups.setdefault(int(m.dof_jntid[i]), []).append(i)
    out = []
    for j, g in groups.items():
        b = int(m.dof_bodyid[g[0]])
        body = m.names["body"][b] if b < len(m.names.get("body", ())) else ""
        which = (f"dof {g[0]}" if len(g) == 1 else f"dofs {g[0]}–{g[-1]}"
                 if g[-1] - g[0] == len(g) - 1 else f"dofs {g}")
        out.append(f"{which} ({joint_label(m, j)}) of body {body!r}" if body
                   else f"{which} ({joint_label(m, j)}) of body {b}")
    return ", ".join(out)


def raise_pivot(m, i, fname, what):
    """Raise SingularMassError for a non-positive pivot at dof i."""
    raise SingularMassError(
        f"{fname}: the joint-space inertia M is singular at this configuration: the {what} "
        f"pivot of {dof_label(m, i)} is not positive. Check that the bodies below this joint "
        "have mass and inertia that this dof can move, or add armature to the joint")


def division_error(fname):
    """The error for a division by zero in compiled code (a parameter zero where it divides).

    Compiled code divides by masses, inertias, the time step and derived constants without
    a test (as MuJoCo does); Numba raises ZeroDivisionError for a zero divisor. The wrappers
    of the pipeline turn it into this error.
    """
    return JointspaceError(
        f"{fname}: division by zero in compiled code: a model parameter that compiled code "
        "divides by is zero (a body mass or inertia, armature, a geom size, the time step, "
        "a solref time constant). Check the values written to the model since it was "
        "loaded; after changing masses or inertias call jointspace.set_const(m)")

