"""Argument handling shared by the controllers: gains, actuated dofs, where τ goes."""

import warnings

import numpy as np

from jointspace._numba import entry
from jointspace.control.kernels import OUT_CTRL, OUT_NONE, OUT_QFRC
from jointspace.diagnostics import raise_pivot
from jointspace.errors import JointspaceError, JointspaceWarning
from jointspace.types import (
    BIAS_AFFINE,
    BIAS_NONE,
    DYN_NONE,
    GAIN_FIXED,
    JNT_FREE,
    JNT_HINGE,
    JNT_SLIDE,
    TRN_JOINT,
    Model,
    make_data,
)

OUTPUTS = {None: OUT_NONE, "qfrc_applied": OUT_QFRC, "ctrl": OUT_CTRL}
ON_INFEASIBLE = ("warn", "raise", "ignore")


def check_model(m, who):
    """Raise a TypeError naming `who` unless m is a jointspace Model."""
    if type(m) is not Model:
        raise TypeError(f"{who}: first argument must be a jointspace Model, "
                        f"got {type(m).__name__}")


def finite(x, name, who):
    """x as a float64 array, or a ValueError naming the argument if it is not finite."""
    x = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{who}: argument {name} must be finite, got {x}")
    return x


def gain_matrix(x, n, name, who):
    """A gain as an (n, n) matrix: a scalar (times I), a diagonal (n,) or a full (n, n)."""
    x = finite(x, name, who)
    if x.ndim == 0:
        return float(x) * np.eye(n)
    if x.shape == (n,):
        return np.diag(x)
    if x.shape == (n, n):
        return x.copy()
    raise ValueError(f"{who}: argument {name} must be a scalar, shape ({n},) or ({n}, {n}), "
                     f"got shape {x.shape}")


def gain_vector(x, n, name, who):
    """A gain as an (n,) vector of per-row values: a scalar or a sequence of length n."""
    x = finite(x, name, who)
    if x.ndim == 0:
        return np.full(n, float(x))
    if x.shape == (n,):
        return x.copy()
    raise ValueError(f"{who}: argument {name} must be a scalar or have shape ({n},), "
                     f"got shape {x.shape}")


def dof_list(m, dofs, name, who):
    """Dof indices from ints or joint names (a joint name stands for all its dofs)."""
    out = []
    for x in dofs:
        if isinstance(x, str):
            j = m.id("joint", x)
            n = {JNT_FREE: 6, 1: 3}.get(int(m.jnt_type[j]), 1)
            out.extend(range(int(m.jnt_dofadr[j]), int(m.jnt_dofadr[j]) + n))
        elif isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x < m.nv:
            out.append(int(x))
        else:
            raise ValueError(f"{who}: {name} must hold dof indices in [0, {m.nv}) or joint "
                             f"names, got {x!r}")
    return sorted(set(out))


def actuated_mask(m, actuated, who):
    """(nv,) int64 mask of the dofs the controller may push on.

    Default: with actuators, the dofs their transmissions move at qpos0 (non-zero columns of
    actuator_moment); without, every dof except those of free joints (driven through
    qfrc_applied).
    """
    mask = np.zeros(m.nv, dtype=np.int64)
    if actuated is not None:
        mask[dof_list(m, actuated, "actuated", who)] = 1
        return mask
    if m.nactuator > 0:
        from jointspace.forward import forward

        d = make_data(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            forward(m, d)
        mask[np.any(d.actuator_moment != 0.0, axis=0)] = 1
        return mask
    mask[:] = 1
    for j in range(m.njnt):
        if m.jnt_type[j] == JNT_FREE:
            mask[m.jnt_dofadr[j]:m.jnt_dofadr[j] + 6] = 0
    return mask


def output_mode(m, output, mask, who):
    """(mode, act_dof): where τ goes, and for "ctrl" the dof each actuator drives."""
    if output not in OUTPUTS:
        raise ValueError(f"{who}: argument output must be 'qfrc_applied', 'ctrl' or None, "
                         f"got {output!r}")
    act_dof = np.full(m.nactuator, -1, dtype=np.int64)
    mode = OUTPUTS[output]
    if mode != OUT_CTRL:
        return mode, act_dof
    names = m.names.get("actuator", [])
    for a in range(m.nactuator):
        label = f"actuator {names[a]!r}" if a < len(names) and names[a] else f"actuator {a}"
        j = int(m.actuator_trnid[a, 0])
        ok = (m.actuator_trntype[a] == TRN_JOINT and m.jnt_type[j] in (JNT_HINGE, JNT_SLIDE)
              and m.actuator_dyntype[a] == DYN_NONE and m.actuator_gaintype[a] == GAIN_FIXED
              and m.actuator_biastype[a] in (BIAS_NONE, BIAS_AFFINE)
              and m.actuator_gainprm[a, 0] != 0 and m.actuator_gear[m.actuator_outadr[a], 0] != 0)
        if not ok:
            raise JointspaceError(
                f"{who}: output='ctrl' needs every actuator to drive one hinge or slide joint "
                f"with a fixed non-zero gain and no activation dynamics; {label} does not. "
                f"Use output='qfrc_applied' (τ goes to d.qfrc_applied) instead")
        act_dof[a] = int(m.jnt_dofadr[j])
    for k in np.flatnonzero(mask):
        n = int(np.sum(act_dof == k))
        if n != 1:
            raise JointspaceError(
                f"{who}: output='ctrl' needs exactly one actuator on each actuated dof; dof "
                f"{k} has {n}. Use output='qfrc_applied' instead")
    return mode, act_dof


def check_pivot(m, bad, who):
    """Raise SingularMassError naming the dof if a factorization returned pivot `bad` >= 0."""
    if bad >= 0:
        raise_pivot(m, int(bad), who, "LᵀDL")


def infeasible(policy, message):
    """Report an infeasible command as the controller's on_infeasible policy says."""
    if policy == "raise":
        raise JointspaceError(message)
    if policy == "warn":
        warnings.warn(message, JointspaceWarning, stacklevel=3)


def check_policy(policy, who):
    """Raise a ValueError unless policy is one of ON_INFEASIBLE."""
    if policy not in ON_INFEASIBLE:
        raise ValueError(f"{who}: argument on_infeasible must be one of {ON_INFEASIBLE}, "
                         f"got {policy!r}")


check_pair = entry.check_pair
vec = entry.vec
