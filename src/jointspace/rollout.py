"""Batched rollouts (MuJoCo's `mujoco.rollout`): many trajectories, on threads, GIL released.

rollout(model, data, initial_state, control) runs nbatch open-loop trajectories of nstep
steps each and returns every state they pass through:

    state[r, t] = x_{t+1} of rollout r,  x_{t+1} = step(x_t, u_t),  x_0 = initial_state[r],
    u_t = control[r, t]

with singleton dimensions of initial_state, control and initial_warmstart tiled (without a
copy). The state is MuJoCo's mjSTATE_FULLPHYSICS layout (time, qpos, qvel, act, history,
plastic, plugin state); jointspace models have no plastic or plugin state, so a state is
[time, qpos, qvel, act, history], nstate = 1 + nq + nv + na + nhistory, as mj_stateSize
gives for the same model (`jointspace.get_state(m, d, "fullphysics")` packs the same
vector; the history buffers are those of delayed and sampled actuators and sensors,
`jointspace.history`). After each step the rollout also records d.sensordata, as MuJoCo's
does.

Each rollout is a function of its arguments alone, as in MuJoCo: it starts from the inputs
that the control does not set reset (ctrl zero when no control is given, qfrc_applied and
xfrc_applied zero, eq_active = eq_active0, mocap bodies at the model's pose), the warm start
zero (or initial_warmstart) and the warning counters cleared. A step that finds a NaN, inf
or |x| > 1e10 (`step`'s state checks, which reset the state to qpos0) stops the rollout:
diverged[r] is that step and the rest of the trajectory repeats the state it left, as
MuJoCo's rollout repeats the state after a warning.

Threads: the batch is cut into chunks of `chunk_size` rollouts; `nthread` workers (the
calling thread and nthread − 1 threads of a persistent pool) each make one compiled call
(`_rollout_chunks`) that releases the GIL and takes chunks in turn from a shared atomic
counter until none is left, each worker with a Data of its own; a chunk costs no Python
and no GIL, so small chunks balance the load for free. Every rollout starts from the same reset
state whichever Data runs it, so the results are bitwise the same for any nthread and
chunk_size.
"""

import atexit
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, Optional

import numpy as np
from numba import njit, types

from jointspace._numba import entry
from jointspace._numba.atomic import fetch_add
from jointspace.diagnostics import check_not_singular, division_error
from jointspace.errors import JointspaceWarning
from jointspace.state import (
    STATE_CTRL,
    STATE_EQ_ACTIVE,
    STATE_MOCAP_POS,
    STATE_MOCAP_QUAT,
    STATE_QFRC_APPLIED,
    STATE_USER,
    STATE_USERDATA,
    STATE_XFRC_APPLIED,
    state_spec,
)
from jointspace.state import state_size as spec_size
from jointspace.step import step_entry
from jointspace.types import Data, Model

# ---------------------------------------------------------------------------------------------
# the state vector (MuJoCo's mjSTATE_FULLPHYSICS), compiled


def state_size(m):
    """Length of a full-physics state of model m: 1 + nq + nv + na + nhistory.

    That is (time, qpos, qvel, act, history).
    """
    return 1 + m.nq + m.nv + m.na + m.nhistory


@njit(cache=True)
def _get_fullphysics(m, d, x):
    """x = [time, qpos, qvel, act, history] of d (mj_getState with mjSTATE_FULLPHYSICS)."""
    nq, nv = m.nq, m.nv
    x[0] = d.time[0]
    x[1:1 + nq] = d.qpos
    x[1 + nq:1 + nq + nv] = d.qvel
    a = 1 + nq + nv
    x[a:a + m.na] = d.act
    if m.nhistory > 0:
        x[a + m.na:a + m.na + m.nhistory] = d.history


@njit(cache=True)
def _set_fullphysics(m, d, x):
    """d's time, qpos, qvel, act, history = x (mj_setState with mjSTATE_FULLPHYSICS)."""
    nq, nv = m.nq, m.nv
    d.time[0] = x[0]
    d.qpos[:] = x[1:1 + nq]
    d.qvel[:] = x[1 + nq:1 + nq + nv]
    a = 1 + nq + nv
    d.act[:] = x[a:a + m.na]
    if m.nhistory > 0:
        d.history[:] = x[a + m.na:a + m.na + m.nhistory]


@njit(cache=True)
def _reset_inputs(m, d):
    """Inputs outside the control spec back to the model's (MuJoCo rollout's reset).

    ctrl = 0, qfrc_applied = 0, xfrc_applied = 0, eq_active = eq_active0, mocap bodies at
    body_pos, body_quat; warning counters (bad state, contacts and rows beyond capacity)
    cleared.
    """
    d.ctrl[:] = 0.0
    d.qfrc_applied[:] = 0.0
    d.xfrc_applied[:, :] = 0.0
    d.eq_active[:] = m.eq_active0
    for b in range(m.nbody):
        mid = m.body_mocapid[b]
        if mid >= 0:
            d.mocap_pos[mid, :] = m.body_pos[b]
            d.mocap_quat[mid, :] = m.body_quat[b]
    d.warning[:, :] = 0
    d.collision_warning[:, :] = 0
    d.warning_cnstrfull[:] = 0


@njit(cache=True)
def _rows_from(dst, u, a):
    """dst (n × w) = u[a : a + n w] row by row; returns a + n w."""
    n, w = dst.shape
    for i in range(n):
        for k in range(w):
            dst[i, k] = u[a + w * i + k]
    return a + n * w


@njit(cache=True)
def _set_controls(m, d, u, spec):
    """The user inputs that spec selects from u, packed in MuJoCo's order (mj_setState).

    ctrl, qfrc_applied, xfrc_applied, eq_active (nonzero: active), mocap_pos, mocap_quat,
    userdata; the components spec leaves out keep their reset values.
    """
    a = 0
    if spec & STATE_CTRL:
        for i in range(m.nu):
            d.ctrl[i] = u[a + i]
        a += m.nu
    if spec & STATE_QFRC_APPLIED:
        for i in range(m.nv):
            d.qfrc_applied[i] = u[a + i]
        a += m.nv
    if spec & STATE_XFRC_APPLIED:
        a = _rows_from(d.xfrc_applied, u, a)
    if spec & STATE_EQ_ACTIVE:
        for i in range(m.neq):
            d.eq_active[i] = 1 if u[a + i] != 0.0 else 0
        a += m.neq
    if spec & STATE_MOCAP_POS:
        a = _rows_from(d.mocap_pos, u, a)
    if spec & STATE_MOCAP_QUAT:
        a = _rows_from(d.mocap_quat, u, a)
    if spec & STATE_USERDATA:
        for i in range(m.nuserdata):
            d.userdata[i] = u[a + i]


@njit(cache=True, nogil=True)
def _rollout_chunks(d, m, next_chunk, nchunk, cs, r0, r1, nstep, state0, warmstart0,
                    use_warmstart, control, use_control, control_spec, state, sensordata,
                    diverged):
    """Chunks of rollouts r0 … r1−1 of model m, taken in turn, on Data d.

    The chunks are numbered 0 … nchunk−1, chunk c holding rollouts r0 + c cs … up to r1;
    the call takes the next number from the shared counter next_chunk[0] (an atomic
    fetch-and-add, so that threads running this call at once each get their own chunks)
    until none is left. The whole loop runs without the GIL: a thread crosses into
    compiled code once per call, however many chunks it runs.

    Rollout r: x_0 = state0[r] (row 0 if state0 has one row), warm start warmstart0[r] or
    0, then for t < nstep: the inputs control_spec selects = control[r, t] (row and column 0
    where control has one), step, state[r, t] = x, sensordata[r, t] = d.sensordata (the
    sensors of the state the step started from). A step that reset a bad state ends the
    rollout: diverged[r] = t and state[r, t + 1:] = state[r, t]; diverged[r] = −1 otherwise.
    d's struct is pointed at m for the call and back at its own model at the end. Returns
    the number of rollouts that diverged.
    """
    own = d.model
    d.model = m
    nv = m.nv
    ndiverged = 0
    while True:
        c = fetch_add(next_chunk, 0, 1)
        if c >= nchunk:
            break
        for r in range(r0 + c * cs, min(r1, r0 + (c + 1) * cs)):
            _reset_inputs(m, d)
            _set_fullphysics(m, d, state0[r if state0.shape[0] > 1 else 0])
            if use_warmstart:
                d.qacc_warmstart[:] = warmstart0[r if warmstart0.shape[0] > 1 else 0, :nv]
            else:
                d.qacc_warmstart[:] = 0.0
            diverged[r] = -1
            rc = r if control.shape[0] > 1 else 0
            for t in range(nstep):
                if use_control:
                    _set_controls(m, d, control[rc, t if control.shape[1] > 1 else 0],
                                  control_spec)
                bad = step_entry(d, np.int64(1), np.bool_(True))  # not literals: _step_entry
                _get_fullphysics(m, d, state[r, t])
                sensordata[r, t] = d.sensordata
                if bad:
                    diverged[r] = t
                    ndiverged += 1
                    for k in range(t + 1, nstep):
                        state[r, k] = state[r, t]
                        sensordata[r, k] = sensordata[r, t]
                    break
    d.model = own
    return ndiverged


_IN2 = types.Array(types.float64, 2, "C", readonly=True)
_IN3 = types.Array(types.float64, 3, "C", readonly=True)
_OUT3 = types.Array(types.float64, 3, "C")
_OUT1I = types.Array(types.int64, 1, "C")
_k_chunks = entry.Kernel(_rollout_chunks, sig=(
    None, None, _OUT1I, types.int64, types.int64, types.int64, types.int64, types.int64, _IN2,
    _IN2, types.boolean, _IN3, types.boolean, types.int64, _OUT3, _OUT3, _OUT1I))

# ---------------------------------------------------------------------------------------------
# the thread pool and the Python side

_NONE2 = np.zeros((1, 1))
_NONE3 = np.zeros((1, 1, 1))
_F64 = np.dtype(np.float64)


class Rollout:
    """Batched rollouts on a persistent pool of threads (MuJoCo's `mujoco.rollout.Rollout`).

    `Rollout(nthread=n)` keeps n − 1 threads (the calling thread is the n-th worker) and one
    Data per worker between calls, so that a small batch pays no thread start-up. Use it as
    a context manager or call `close()`; calls on one Rollout from several threads at once
    run one after the other.

    Attributes:
        nthread: number of workers.
        diverged: (nbatch,) int64 of the last call: the step at which each rollout diverged
            (its state was reset), −1 for none.
    """

    def __init__(self, *, nthread=None):
        """A pool of `nthread` workers (default 1: the calling thread alone)."""
        self.nthread = _check_count(1 if nthread is None else nthread, "nthread", "Rollout")
        self._pool = (ThreadPoolExecutor(self.nthread - 1, thread_name_prefix="js-rollout")
                      if self.nthread > 1 else None)
        self._data = []
        self._lock = threading.Lock()
        self._closed = False
        self.diverged = None

    def __enter__(self):
        """The Rollout itself."""
        return self

    def __exit__(self, *exc):
        """Close the pool."""
        self.close()

    def close(self):
        """Stop the threads; later calls raise RuntimeError."""
        self._closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._data = []

    def rollout(self, model, data, initial_state, control=None, *, nstep=None,
                initial_warmstart=None, chunk_size=None, state=None, sensordata=None,
                diverged=None, control_spec=STATE_CTRL):
        """Roll out trajectories from initial states under open-loop controls.

        state[r, t] is the full-physics state [time, qpos, qvel, act, history] after step t + 1 of
        rollout r, sensordata[r, t] the sensors of step t + 1; see the module docstring for
        what each rollout resets and how divergence ends it.

        Args:
            model: a Model, or a sequence of nbatch Models (or one) of identical sizes;
                rollout r runs model[r].
            data: None, a Data, or a sequence of Data: worker i uses data[i]; workers
                without one use a Data the Rollout makes and keeps. Each must be made for a
                model of model's sizes; after the call it holds some rollout's last state.
            initial_state: (nbatch | 1, nstate) initial states (a 1-D array: one state).
            control: optional (nbatch | 1, nstep | 1, ncontrol) controls, set before each
                step: the inputs control_spec selects (ncontrol = state_size(m,
                control_spec); nu for ctrl alone); None: no input is set (all at reset).
            nstep: number of steps (default: control's second dimension, or 1).
            initial_warmstart: optional (nbatch | 1, nv) qacc_warmstart at the first step;
                None: zero.
            chunk_size: rollouts per compiled call (default max(1, nbatch // (10 nthread))).
            state: optional output (nbatch, nstep, nstate), C-contiguous float64.
            sensordata: optional output (nbatch, nstep, nsensordata), C-contiguous float64.
            diverged: optional output (nbatch,) int64: the step at which each rollout
                diverged, −1 for none.
            control_spec: which inputs control holds, a subset of MuJoCo's mjSTATE_USER (an
                integer mask, a component name or a list of names, as `get_state`'s spec):
                ctrl, qfrc_applied, xfrc_applied, eq_active, mocap_pos, mocap_quat,
                userdata, packed in that order. Default: ctrl (MuJoCo's mjSTATE_CTRL).

        Returns:
            (state, sensordata): (nbatch, nstep, nstate) and (nbatch, nstep, nsensordata).

        Raises:
            TypeError: model or data is not a jointspace Model or Data, or an array is not
                real numbers.
            ValueError: models of different sizes, a Data for other sizes, or an array of
                the wrong shape; nstep or chunk_size not a count.
            SingularMassError: a model has dofs that move no mass (see `step`).
            RuntimeError: the Rollout was closed.

        Warns:
            JointspaceWarning: some rollouts diverged (names how many and the first).
        """
        if self._closed:
            raise RuntimeError("rollout: this Rollout was closed; make a new one")
        with self._lock:
            return self._run(model, data, initial_state, control, nstep, initial_warmstart,
                             chunk_size, state, sensordata, diverged, control_spec)

    def _run(self, model, data, initial_state, control, nstep, initial_warmstart,
             chunk_size, state, sensordata, diverged, control_spec):
        fname = "rollout"
        quick = (_quick_args(model, initial_state, control)
                 if (nstep is None and initial_warmstart is None and state is None
                     and sensordata is None and diverged is None
                     and control_spec is STATE_CTRL) else None)
        if quick is not None:
            models, x0, ctrl, warm, nbatch, nstep, cspec = quick
            m0 = model
            state = np.empty((nbatch, nstep, x0.shape[1]))
            sensordata = np.empty((nbatch, nstep, m0.nsensordata))
            diverged = np.empty(nbatch, np.int64)
        else:
            models, x0, ctrl, warm, nbatch, nstep, cspec = check_args(
                model, initial_state, control, nstep, initial_warmstart, fname, state=state,
                sensordata=sensordata, diverged=diverged, control_spec=control_spec)
            m0 = models[0]
            state = check_output(state, (nbatch, nstep, state_size(m0)), np.float64, fname,
                                 "state")
            sensordata = check_output(sensordata, (nbatch, nstep, m0.nsensordata), np.float64,
                                      fname, "sensordata")
            diverged = check_output(diverged, (nbatch,), np.int64, fname, "diverged")
        cs = (max(1, nbatch // (10 * self.nthread)) if chunk_size is None
              else _check_count(chunk_size, "chunk_size", fname))
        datas = self._worker_data(data, m0, fname)
        for m in (models if len(models) == 1 else {id(m): m for m in models}.values()):
            if m.singular_dofs:
                check_not_singular(m, fname)
        ndiverged = 0
        if nstep > 0 and nbatch > 0:
            args = (nstep, x0, _NONE2 if warm is None else warm, warm is not None,
                    _NONE3 if ctrl is None else ctrl, ctrl is not None, cspec, state,
                    sensordata, diverged)
            ndiverged = self._dispatch(models, datas, nbatch, cs, args)
        else:
            diverged[:] = -1
        self.diverged = diverged
        if ndiverged:
            r = int(np.flatnonzero(diverged >= 0)[0])
            warnings.warn(
                f"{fname}: {ndiverged} of {nbatch} rollouts diverged (a NaN, inf or |x| > 1e10 "
                f"in qpos, qvel or qacc reset the state to qpos0), the first rollout {r} at step "
                f"{int(diverged[r])}; the rest of each such trajectory repeats its last state "
                f"(see the diverged output). Reduce the time step or check the controls.",
                JointspaceWarning, stacklevel=3)
        return state, sensordata

    def _worker_data(self, data, m0, fname):
        """One Data per worker, made for m0's sizes and bound to m0."""
        mine = self._data
        if data is None and len(mine) == self.nthread:
            ms = m0._s
            for d in mine:
                if d._ms is not ms:
                    break
            else:
                return mine
        if data is None:
            given = []
        elif isinstance(data, Data):
            given = [data]
        elif isinstance(data, (list, tuple)):
            given = list(data)
        else:
            raise TypeError(f"{fname}: data must be a jointspace Data, a list of them or "
                            f"None, got {type(data).__name__}")
        for k, d in enumerate(given):
            if not isinstance(d, Data):
                raise TypeError(f"{fname}: data[{k}] must be a jointspace Data, got "
                                f"{type(d).__name__}")
            if d._msig != m0._sizes:
                raise ValueError(f"{fname}: data[{k}] was made for a model of other sizes; "
                                 "make it with jointspace.make_data(model)")
        if len({id(d) for d in given}) != len(given):
            raise ValueError(f"{fname}: the same Data appears twice in data; each worker "
                             "needs its own")
        datas = given[:self.nthread]
        for k in range(len(datas), self.nthread):
            mine = k < len(self._data) and self._data[k]._msig == m0._sizes
            if not mine:
                if k < len(self._data):
                    self._data[k] = Data(m0)
                else:
                    self._data.append(Data(m0))
            datas.append(self._data[k])
        for d in datas:
            entry.check_pair(m0, d, fname)
        return datas

    def _dispatch(self, models, datas, nbatch, cs, args):
        """Run the chunks on the workers; return how many rollouts diverged.

        One model: each worker makes one compiled call, which takes chunks from a shared
        counter until none is left, so that a chunk costs no GIL and no Python. A list of
        models: the chunks are handed out in Python, and each run of rollouts with the same
        model inside a chunk is a compiled call of its own.
        """
        nchunk = -(-nbatch // cs)
        single = len(models) == 1
        if single:
            next_chunk = np.zeros(1, np.int64)
        else:
            chunks = iter(range(nchunk))

        def work(d):
            ds = d._s
            try:
                if single:
                    ep = _k_chunks.ep
                    return ep(ds, models[0]._s, next_chunk, nchunk, cs, 0, nbatch, *args)
                n = 0
                for c in chunks:
                    r, b = c * cs, min(nbatch, (c + 1) * cs)
                    while r < b:  # runs of rollouts with the same model
                        m, e = models[r], r + 1
                        while e < b and models[e] is m:
                            e += 1
                        ep = _k_chunks.ep
                        n += ep(ds, m._s, np.zeros(1, np.int64), 1, e - r, r, e, *args)
                        r = e
                return n
            except BaseException:
                d._ms = None  # its struct may still point at another model: rebuild it
                raise

        nworker = min(len(datas), nchunk)
        try:
            if nworker == 1:  # the calling thread alone
                return work(datas[0])
            futures = [self._pool.submit(work, d) for d in datas[1:nworker]]
            try:
                n = work(datas[0])
            finally:
                for f in futures:
                    f.exception()
            return n + sum(f.result() for f in futures)
        except ZeroDivisionError:
            raise division_error("rollout") from None


class RolloutArgs(NamedTuple):
    """The arguments of a rollout call, checked (`check_args`); arrays C-contiguous float64."""

    models: list  # one Model, or nbatch Models of one size signature
    initial_state: np.ndarray  # (nbatch | 1, nstate)
    control: Optional[np.ndarray]  # (nbatch | 1, nstep | 1, ncontrol), or None
    initial_warmstart: Optional[np.ndarray]  # (nbatch | 1, nv), or None
    nbatch: int
    nstep: int
    control_spec: int  # the mjSTATE_USER bits control holds


def _quick_args(model, x0, ctrl):
    """check_args for the common call, or None where check_args must look closer.

    The common call: one Model, initial_state (nbatch | 1, nstate) and control None or
    (nbatch | 1, nstep | 1, nu), both C-contiguous float64, nothing else given. A call
    that is not of that form, or has a shape check_args would refuse, gets None, and
    check_args then decides (and words the error); this saves a small batch the general
    checks' ~5 µs.

    Returns:
        RolloutArgs' fields as a plain tuple (cheaper to make than the named one), or None.
    """
    if (type(model) is not Model or type(x0) is not np.ndarray or x0.dtype is not _F64
            or x0.ndim != 2 or not x0.flags.c_contiguous
            or x0.shape[1] != 1 + model.nq + model.nv + model.na + model.nhistory):
        return None
    nbatch, nstep = x0.shape[0], 1
    if ctrl is not None:
        if (type(ctrl) is not np.ndarray or ctrl.dtype is not _F64 or ctrl.ndim != 3
                or not ctrl.flags.c_contiguous or ctrl.shape[2] != model.nu):
            return None
        nc = ctrl.shape[0]
        if nc != nbatch:
            if nbatch == 1:
                nbatch = nc
            elif nc != 1:
                return None
        nstep = ctrl.shape[1]
    return [model], x0, ctrl, None, nbatch, nstep, STATE_CTRL


def check_args(model, initial_state, control=None, nstep=None, initial_warmstart=None,
               fname="rollout", *, state=None, sensordata=None, diverged=None,
               control_spec=STATE_CTRL):
    """Check and convert the arguments of a rollout call (shapes, types, sizes).

    nbatch and nstep are inferred as MuJoCo's rollout infers them: from the arrays'
    leading dimensions (size 1 tiles), the number of models, and nstep or the outputs.

    Returns:
        a `RolloutArgs`.

    Raises:
        TypeError, ValueError: naming the argument and the shape it must have.
    """
    models = _models(model, fname)
    m0 = models[0]
    x0 = _input(initial_state, 2, fname, "initial_state")
    ctrl = None if control is None else _input(control, 3, fname, "control")
    warm = (None if initial_warmstart is None
            else _input(initial_warmstart, 2, fname, "initial_warmstart"))
    _trailing(x0, state_size(m0), fname, "initial_state", "nstate = 1 + nq + nv + na + nhistory")
    if control_spec is STATE_CTRL:
        cspec = STATE_CTRL
    else:
        try:
            cspec = state_spec(control_spec)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{fname}: argument control_{e}") from None
    if cspec & ~STATE_USER:
        raise ValueError(f"{fname}: control_spec {cspec} selects components that are not user "
                         f"inputs; it must be a subset of mjSTATE_USER ({STATE_USER}: ctrl, "
                         "qfrc_applied, xfrc_applied, eq_active, mocap_pos, mocap_quat, "
                         "userdata)")
    if ctrl is not None:
        if cspec == STATE_CTRL:
            _trailing(ctrl, m0.nu, fname, "control", "nu")
        else:
            _trailing(ctrl, spec_size(m0, cspec), fname, "control", f"state_size(m, {cspec})")
    if warm is not None:
        _trailing(warm, m0.nv, fname, "initial_warmstart", "nv")
    nbatch = _infer(0, 1, fname, (("initial_state", x0), ("initial_warmstart", warm),
                                  ("control", ctrl), ("state", state),
                                  ("sensordata", sensordata), ("diverged", diverged)))
    if len(models) > 1:
        if nbatch == 1:
            nbatch = len(models)
        elif len(models) != nbatch:
            raise ValueError(f"{fname}: {len(models)} models for a batch of {nbatch} "
                             "rollouts; give one model or one per rollout")
    for name, a in (("initial_state", x0), ("initial_warmstart", warm), ("control", ctrl)):
        if a is not None and a.shape[0] != nbatch and a.shape[0] != 1:
            raise ValueError(f"{fname}: {name} has {a.shape[0]} rows for {nbatch} "
                             "rollouts; give 1 or nbatch")
    if nstep is not None:
        nstep = _check_count(nstep, "nstep", fname, zero=True)
    nstep = _infer(1, 1 if nstep is None else nstep, fname,
                   (("control", ctrl), ("state", state), ("sensordata", sensordata)))
    if ctrl is not None and ctrl.shape[1] != nstep and ctrl.shape[1] != 1:
        raise ValueError(f"{fname}: control has {ctrl.shape[1]} steps for nstep = "
                         f"{nstep}; give 1 or nstep")
    return RolloutArgs(models, x0, ctrl, warm, nbatch, nstep, cspec)


def _check_count(n, name, fname, zero=False):
    """n as an int ≥ 1 (≥ 0 with zero), or a ValueError naming the argument."""
    least = 0 if zero else 1
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < least:
        what = "a non-negative integer" if zero else "a positive integer"
        raise ValueError(f"{fname}: argument {name} must be {what}, got {n!r}")
    return int(n)


def _models(model, fname):
    """model as a non-empty list of Models of one size signature."""
    if isinstance(model, Model):
        return [model]
    if not isinstance(model, (list, tuple)) or not model:
        raise TypeError(f"{fname}: model must be a jointspace Model or a non-empty list of "
                        f"them, got {type(model).__name__}")
    for k, m in enumerate(model):
        if not isinstance(m, Model):
            raise TypeError(f"{fname}: model[{k}] must be a jointspace Model, got "
                            f"{type(m).__name__}")
        if m._sizes != model[0]._sizes:
            diff = ", ".join(f"{s} {a} vs {b}" for s, a, b in
                             zip(m.sizes, model[0]._sizes, m._sizes) if a != b)
            raise ValueError(f"{fname}: model[{k}] has other sizes than model[0] ({diff}); "
                             "the models of one rollout call must have identical sizes")
    return list(model)


def _input(x, ndim, fname, name):
    """x as a C-contiguous float64 array with leading singleton axes up to ndim."""
    if (type(x) is np.ndarray and x.dtype is _F64 and x.ndim == ndim
            and x.flags.c_contiguous):
        return x
    a = entry.real(x, name, fname)
    if a.ndim > ndim:
        raise ValueError(f"{fname}: argument {name} can have at most {ndim} dimensions, "
                         f"got shape {a.shape}")
    return a.reshape((1,) * (ndim - a.ndim) + a.shape)


def _trailing(a, n, fname, name, what):
    """Refuse a whose last dimension is not n (`what` names the size)."""
    if a.shape[-1] != n:
        raise ValueError(f"{fname}: the last dimension of {name} must be {what} = {n}, got "
                         f"shape {a.shape}")


def _infer(axis, value, fname, arrays):
    """The size along axis that the (name, array) pairs agree on, where size 1 tiles."""
    for name, a in arrays:
        if a is None:
            continue
        n = getattr(a, "shape", ())[axis:axis + 1]
        if not n or n[0] == value:
            continue
        if value == 1:
            value = n[0]
        elif n[0] != 1:
            raise ValueError(f"{fname}: dimension {axis} of {name} is {n[0]}, but the other "
                             f"arguments give {value}")
    return value


def check_output(out, shape, dtype, fname, name):
    """A new array of shape, or the caller's after checking shape, dtype and layout."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if (type(out) is not np.ndarray or out.dtype != dtype or not out.flags.c_contiguous
            or not out.flags.writeable):
        raise TypeError(f"{fname}: output {name} must be a writeable C-contiguous "
                        f"{np.dtype(dtype).name} array of shape {shape}")
    if out.shape != shape:
        raise ValueError(f"{fname}: output {name} must have shape {shape}, got {out.shape}")
    return out


_persistent = {}
_persistent_lock = threading.Lock()


def _shutdown():
    with _persistent_lock:
        for r in _persistent.values():
            r.close()
        _persistent.clear()


atexit.register(_shutdown)


def rollout(model, data, initial_state, control=None, *, nstep=None, initial_warmstart=None,
            nthread=None, chunk_size=None, state=None, sensordata=None, diverged=None,
            control_spec=STATE_CTRL):
    """Roll out trajectories from initial states under open-loop controls, on threads.

    MuJoCo's `mujoco.rollout.rollout`: state[r, t] is the full-physics state
    [time, qpos, qvel, act, history] after step t + 1 of rollout r, started from
    initial_state[r] under control[r, t]; singleton dimensions are tiled. Each rollout resets
    the inputs the control does not set (see the module docstring), so the call is stateless
    and the results are bitwise the same for every nthread and chunk_size. A rollout whose
    state diverges (NaN, inf, |x| > 1e10: `step` resets it to qpos0) stops there:
    diverged[r] names the step and the rest of its trajectory repeats that state.

    Threads come from a persistent pool per nthread, kept between calls (a concurrent call
    while it is busy gets a pool of its own); `Rollout` gives a pool of one's own.

    Args:
        model: a Model, or a sequence of nbatch Models of identical sizes.
        data: None, a Data, or a sequence of Data, one per thread (missing ones are made
            and kept by the pool).
        initial_state: (nbatch | 1, nstate) initial states, nstate = 1 + nq + nv + na + nhistory.
        control: optional (nbatch | 1, nstep | 1, ncontrol) controls: the inputs
            control_spec selects, set before each step; None: ctrl = 0.
        nstep: number of steps (default: control's second dimension, or 1).
        initial_warmstart: optional (nbatch | 1, nv) initial qacc_warmstart; None: zero.
        nthread: number of threads (default: len(data) for a sequence, else 1).
        chunk_size: rollouts per compiled call (default max(1, nbatch // (10 nthread))).
        state: optional output (nbatch, nstep, nstate).
        sensordata: optional output (nbatch, nstep, nsensordata).
        diverged: optional output (nbatch,) int64: the step at which each rollout diverged,
            −1 for none.
        control_spec: which user inputs control holds (default ctrl, MuJoCo's
            mjSTATE_CTRL); see `Rollout.rollout`.

    Returns:
        (state, sensordata): (nbatch, nstep, nstate) and (nbatch, nstep, nsensordata).

    Raises:
        TypeError, ValueError, SingularMassError: as `Rollout.rollout`; ValueError also for
            nthread < 1.
    """
    if nthread is None:
        nthread = len(data) if isinstance(data, (list, tuple)) and data else 1
    if type(nthread) is not int or nthread < 1:
        nthread = _check_count(nthread, "nthread", "rollout")
    pool = _persistent.get(nthread)  # a dict read is atomic; the lock guards the creation
    if pool is None:
        with _persistent_lock:
            pool = _persistent.get(nthread)
            if pool is None:
                pool = _persistent[nthread] = Rollout(nthread=nthread)
    shared = pool._lock.acquire(blocking=False)
    if not shared:  # another thread is using it
        pool = Rollout(nthread=nthread)
    try:
        return pool._run(model, data, initial_state, control, nstep, initial_warmstart,
                         chunk_size, state, sensordata, diverged, control_spec)
    finally:
        if shared:
            pool._lock.release()
        else:
            pool.close()
