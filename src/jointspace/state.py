"""The simulation state as MuJoCo packs it, reset, and keyframes.

A state is a flat float64 vector of the components a `spec` selects, in the order of the
bits of MuJoCo's `mjtState` (mj_getState / mj_setState / mj_stateSize), so that a state
saved by MuJoCo sets jointspace's Data and the other way round:

    bit     component      size              bit     component      size
    1       time           1                 256     xfrc_applied   6 · nbody
    2       qpos           nq                512     eq_active      neq (0.0 or 1.0)
    4       qvel           nv                1024    mocap_pos      3 · nmocap
    8       act            na                2048    mocap_quat     4 · nmocap
    16      history        nhistory          4096    userdata       nuserdata
    32      warmstart      nv                8192    plugin         0 (no plugins)
    64      ctrl           nu                16384   plastic        0 (no flex)
    128     qfrc_applied   nv

The groups are MuJoCo's: PHYSICS = qpos | qvel | act | history | plastic; FULLPHYSICS =
time | PHYSICS | plugin; USER = ctrl | qfrc_applied | xfrc_applied | eq_active | mocap_pos |
mocap_quat | userdata; INTEGRATION = FULLPHYSICS | USER | warmstart. A spec is such an
integer mask (a `mujoco.mjtState` value works), a name ("fullphysics", "qpos", …) or a list
of names.

`reset(m, d)` is mj_resetData: every field of d as `make_data` leaves it (qpos = qpos0,
mocap bodies at their model pose, eq_active = eq_active0, the history buffers at their
initial times with zero values (`jointspace.history`), the rest zero).
`reset(m, d, key)` is mj_resetDataKeyframe: that, then time, qpos, qvel, act, ctrl and the
mocap poses from keyframe `key` (a name or an index).
"""

from __future__ import annotations

import operator

import numpy as np

from jointspace._numba.entry import check_pair
from jointspace.types import DATA_FIELDS, Data, Model, reset_data

STATE_TIME = 1 << 0
STATE_QPOS = 1 << 1
STATE_QVEL = 1 << 2
STATE_ACT = 1 << 3
STATE_HISTORY = 1 << 4
STATE_WARMSTART = 1 << 5
STATE_CTRL = 1 << 6
STATE_QFRC_APPLIED = 1 << 7
STATE_XFRC_APPLIED = 1 << 8
STATE_EQ_ACTIVE = 1 << 9
STATE_MOCAP_POS = 1 << 10
STATE_MOCAP_QUAT = 1 << 11
STATE_USERDATA = 1 << 12
STATE_PLUGIN = 1 << 13
STATE_PLASTIC = 1 << 14
STATE_PHYSICS = STATE_QPOS | STATE_QVEL | STATE_ACT | STATE_HISTORY | STATE_PLASTIC
STATE_FULLPHYSICS = STATE_TIME | STATE_PHYSICS | STATE_PLUGIN
STATE_USER = (STATE_CTRL | STATE_QFRC_APPLIED | STATE_XFRC_APPLIED | STATE_EQ_ACTIVE
              | STATE_MOCAP_POS | STATE_MOCAP_QUAT | STATE_USERDATA)
STATE_INTEGRATION = STATE_FULLPHYSICS | STATE_USER | STATE_WARMSTART
_NBITS = 15

# (bit, name, the Data field it packs; None: a component jointspace's models never have)
_COMPONENTS = (
    (STATE_TIME, "time", "time"),
    (STATE_QPOS, "qpos", "qpos"),
    (STATE_QVEL, "qvel", "qvel"),
    (STATE_ACT, "act", "act"),
    (STATE_HISTORY, "history", "history"),
    (STATE_WARMSTART, "warmstart", "qacc_warmstart"),
    (STATE_CTRL, "ctrl", "ctrl"),
    (STATE_QFRC_APPLIED, "qfrc_applied", "qfrc_applied"),
    (STATE_XFRC_APPLIED, "xfrc_applied", "xfrc_applied"),
    (STATE_EQ_ACTIVE, "eq_active", "eq_active"),
    (STATE_MOCAP_POS, "mocap_pos", "mocap_pos"),
    (STATE_MOCAP_QUAT, "mocap_quat", "mocap_quat"),
    (STATE_USERDATA, "userdata", "userdata"),
    (STATE_PLUGIN, "plugin", None),
    (STATE_PLASTIC, "plastic", None),
)
_GROUPS = {"physics": STATE_PHYSICS, "fullphysics": STATE_FULLPHYSICS, "user": STATE_USER,
           "integration": STATE_INTEGRATION, **{name: bit for bit, name, _ in _COMPONENTS}}
_SHAPES = {name: shape for name, _, shape, _ in DATA_FIELDS}


def state_spec(spec) -> int:
    """The integer mask of `spec`: an int mask, a name, or a list of names (see module doc).

    Raises:
        ValueError: an unknown name or a mask with bits beyond MuJoCo's mjtState.
        TypeError: anything else.
    """
    if isinstance(spec, str):
        try:
            return _GROUPS[spec.lower()]
        except KeyError:
            raise ValueError(f"spec: unknown state component {spec!r}; use one of "
                             f"{sorted(_GROUPS)} or an integer mask") from None
    if isinstance(spec, (bool, np.bool_)):
        raise TypeError("spec: a state spec is an integer mask, a name or a list of names, "
                        "not a bool")
    try:
        mask = operator.index(spec)
    except TypeError:
        try:
            mask = int(spec) if type(spec).__module__.startswith("mujoco") else None
        except (TypeError, ValueError):
            mask = None
        if mask is None:
            if isinstance(spec, (list, tuple, set, frozenset)):
                mask = 0
                for s in spec:
                    if not isinstance(s, str):
                        raise TypeError(f"spec: a list of component names holds "
                                        f"{type(s).__name__} {s!r}") from None
                    mask |= state_spec(s)
                return mask
            raise TypeError(f"spec: a state spec is an integer mask, a name or a list of "
                            f"names, got {type(spec).__name__}") from None
    if not 0 <= mask < 1 << _NBITS:
        raise ValueError(f"spec: invalid state mask {mask}: the components are the bits "
                         f"0 … {_NBITS - 1} (mask < {1 << _NBITS})")
    return mask


def _component_size(m, field):
    if field is None:
        return 0
    n = 1
    for s in _SHAPES[field]:
        n *= getattr(m, s) if isinstance(s, str) else s
    return n


def state_size(m: Model, spec="fullphysics") -> int:
    """Length of the state vector that `spec` selects (MuJoCo's mj_stateSize)."""
    _check_model(m)
    mask = state_spec(spec)
    return sum(_component_size(m, f) for bit, _, f in _COMPONENTS if mask & bit)


def get_state(m: Model, d: Data, spec="fullphysics", out=None) -> np.ndarray:
    """The state components `spec` selects, packed in MuJoCo's order (mj_getState).

    Args:
        m: the model.
        d: a Data of m.
        spec: which components (module docstring); default MuJoCo's FULLPHYSICS.
        out: optional float64 vector of length `state_size(m, spec)` to write into.

    Returns:
        The state vector (out, when given).
    """
    check_pair(m, d, "get_state")
    mask = state_spec(spec)
    n = state_size(m, mask)
    if out is None:
        out = np.empty(n)
    elif (not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.shape != (n,)
          or not out.flags.writeable):
        raise ValueError(f"out: expected a writeable float64 array of shape ({n},) for spec "
                         f"{mask}, got {getattr(out, 'dtype', type(out).__name__)} "
                         f"{getattr(out, 'shape', '')}")
    adr = 0
    for bit, _, field in _COMPONENTS:
        if mask & bit and field is not None:
            k = _component_size(m, field)
            src = d._own._time if field == "time" else getattr(d._own, field)
            out[adr:adr + k] = src.reshape(-1)
            adr += k
    return out


def set_state(m: Model, d: Data, state, spec="fullphysics") -> None:
    """Write the components `spec` selects from the packed `state` into d (mj_setState).

    Components not in spec are left as they are. eq_active entries must be 0 or 1.

    Raises:
        ValueError: state of the wrong length, not finite where a time is set, or an
            eq_active entry other than 0 or 1.
    """
    check_pair(m, d, "set_state")
    mask = state_spec(spec)
    n = state_size(m, mask)
    if np.iscomplexobj(state):
        raise TypeError("state: complex values; a state is real")
    try:
        x = np.asarray(state, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"state: expected a float vector, got {type(state).__name__}: {e}") \
            from None
    if x.shape != (n,):
        raise ValueError(f"state: expected shape ({n},) for spec {mask} (state_size), got "
                         f"{x.shape}")
    adr = 0
    for bit, name, field in _COMPONENTS:
        if mask & bit and field is not None:
            k = _component_size(m, field)
            part = x[adr:adr + k]
            if field == "eq_active" and not np.all((part == 0.0) | (part == 1.0)):
                raise ValueError(f"state: eq_active entries (state[{adr}:{adr + k}]) must be "
                                 f"0 or 1, got {part.tolist()}")
            dst = d._own._time if field == "time" else getattr(d._own, field)
            dst.reshape(-1)[:] = part
            adr += k


def reset(m: Model, d: Data, key=None) -> None:
    """Reset d to the model's defaults, or to keyframe `key` (mj_resetData[Keyframe]).

    Args:
        m: the model.
        d: a Data of m; every field is reset (the warning counters too).
        key: None, or a keyframe's name or index (m.names["key"]).
    """
    check_pair(m, d, "reset")
    k = None if key is None else m.id("key", key)
    reset_data(m, d)
    if k is not None:
        d.time = m.key_time[k]
        d.qpos[:] = m.key_qpos[k]
        d.qvel[:] = m.key_qvel[k]
        d.act[:] = m.key_act[k]
        d.ctrl[:] = m.key_ctrl[k]
        d.mocap_pos[:] = m.key_mpos[k].reshape(-1, 3)
        d.mocap_quat[:] = m.key_mquat[k].reshape(-1, 4)


def _check_model(m):
    if not isinstance(m, Model):
        raise TypeError(f"m: expected a jointspace Model, got {type(m).__name__}")


