"""Recorded simulations: `simulate` steps a model and keeps a `Trajectory` of its states.

A trajectory holds one row per recorded frame (every `record_every` steps, the initial and
the last state included) of

    time           (K,)       simulation time (s)
    qpos, qvel     (K, nq), (K, nv)
    ctrl           (K, nu)    control applied from that state on
    energy         (K, 2)     potential and kinetic energy of that state (mj_energyPos/Vel,
                              whether or not the model enables the energy flag)
    ncon           (K,)       number of contacts at that state
    contact_force  (K,)       sum of the contacts' normal forces (N) at that state

and the run's totals (steps taken, contacts summed over every step, wall time).
The diagnostics of a frame come from the `forward` that the next `step` runs at that very
state, so recording never adds a computation that could change the trajectory.
`save`/`load` keep it in one `.npz` file, written atomically: an interrupted run leaves
a complete, loadable file of the frames recorded so far.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

from jointspace.constraint import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
)
from jointspace.errors import JointspaceError

_ARRAYS = ("time", "qpos", "qvel", "ctrl", "energy", "ncon", "contact_force")
_META = ("model", "joint_names", "qpos_labels", "qvel_labels", "timestep", "record_every",
         "steps", "contacts_total", "wall", "interrupted")


def contact_normal_forces(m, d):
    """Normal force of each contact from the last constraint solve (MuJoCo's mj_contactForce).

    A pyramidal contact's normal force is the sum of its 2(dim − 1) edge forces; an elliptic
    or frictionless contact's is its first row's force.

    Args:
        m: the Model.
        d: a Data after `forward` or `step` (reads efc_type, efc_id, efc_force, ncon).

    Returns:
        (ncon,) normal forces in N, ≥ 0.
    """
    ncon = int(d.ncon[0])
    out = np.zeros(ncon)
    n = int(d.nefc[0])
    if n == 0 or ncon == 0:
        return out
    typ, cid, f = d.efc_type[:n], d.efc_id[:n], d.efc_force[:n]
    pyr = typ == CNSTR_CONTACT_PYRAMIDAL
    np.add.at(out, cid[pyr], f[pyr])
    first = np.ones(n, dtype=bool)
    first[1:] = cid[1:] != cid[:-1]
    one = ((typ == CNSTR_CONTACT_ELLIPTIC) | (typ == CNSTR_CONTACT_FRICTIONLESS)) & first
    out[cid[one]] += f[one]
    return out


def coordinate_labels(m):
    """Names of the qpos and qvel coordinates.

    Each is its joint's name, with a suffix for free and ball joints (x y z qw qx qy qz;
    vx vy vz wx wy wz).
    """
    qpos, qvel = [], []
    suffix_q = {0: ("x", "y", "z", "qw", "qx", "qy", "qz"), 1: ("qw", "qx", "qy", "qz")}
    suffix_v = {0: ("vx", "vy", "vz", "wx", "wy", "wz"), 1: ("wx", "wy", "wz")}
    for j in range(m.njnt):
        name = m.names["joint"][j] or f"joint {j}"
        t = int(m.jnt_type[j])
        qpos += [f"{name}.{s}" for s in suffix_q[t]] if t in suffix_q else [name]
        qvel += [f"{name}.{s}" for s in suffix_v[t]] if t in suffix_v else [name]
    return qpos, qvel


class Trajectory:
    """States of a recorded simulation, one row per frame (see the module docstring).

    Attributes:
        time, qpos, qvel, ctrl, energy, ncon, contact_force: the per-frame arrays.
        model: what the model was loaded from (an embedded name or a path), or "".
        joint_names: names of the model's joints.
        qpos_labels, qvel_labels: names of the coordinates (see `coordinate_labels`).
        timestep: the model's time step (s).
        record_every: steps between frames.
        steps: steps taken in all.
        contacts_total: contacts summed over every step taken.
        wall: wall-clock seconds spent stepping.
        interrupted: True when the run was stopped before the requested duration.
    """

    def __init__(self, *, time, qpos, qvel, ctrl, energy, ncon, contact_force, model="",
                 joint_names=(), qpos_labels=(), qvel_labels=(), timestep=0.0,
                 record_every=1, steps=0, contacts_total=0, wall=0.0, interrupted=False,
                 sensordata=None, sensor_names=(), sensor_adr=(), sensor_dim=()):
        self.time = np.asarray(time, dtype=float)
        self.qpos = np.asarray(qpos, dtype=float)
        self.qvel = np.asarray(qvel, dtype=float)
        self.ctrl = np.asarray(ctrl, dtype=float)
        self.energy = np.asarray(energy, dtype=float)
        self.ncon = np.asarray(ncon, dtype=np.int64)
        self.contact_force = np.asarray(contact_force, dtype=float)
        self.model = str(model)
        self.joint_names = [str(n) for n in joint_names]
        self.qpos_labels = [str(n) for n in qpos_labels]
        self.qvel_labels = [str(n) for n in qvel_labels]
        self.timestep = float(timestep)
        self.record_every = int(record_every)
        self.steps = int(steps)
        self.contacts_total = int(contacts_total)
        self.wall = float(wall)
        self.interrupted = bool(interrupted)
        self.sensordata = (np.zeros((len(self.time), 0)) if sensordata is None
                           else np.asarray(sensordata, dtype=float))
        self.sensor_names = [str(n) for n in sensor_names]
        self.sensor_adr = [int(a) for a in sensor_adr]
        self.sensor_dim = [int(n) for n in sensor_dim]

    def sensor(self, name):
        """The recorded values of sensor `name`: (frames, its dim)."""
        if name not in self.sensor_names:
            raise KeyError(f"no sensor named {name!r} in this trajectory; it has "
                           f"{', '.join(n for n in self.sensor_names if n) or 'none named'}")
        i = self.sensor_names.index(name)
        return self.sensordata[:, self.sensor_adr[i]:self.sensor_adr[i] + self.sensor_dim[i]]

    def __len__(self):
        return self.time.shape[0]

    def __repr__(self):
        return (f"Trajectory({len(self)} frames, t = {self.time[0] if len(self) else 0:g} … "
                f"{self.time[-1] if len(self) else 0:g} s, model {self.model!r})")

    @property
    def contacts_per_step(self):
        """Mean number of contacts per step taken."""
        return self.contacts_total / self.steps if self.steps else 0.0

    @property
    def realtime_factor(self):
        """Simulated seconds per wall-clock second."""
        return self.steps * self.timestep / self.wall if self.wall > 0 else float("inf")

    def save(self, path):
        """Write the trajectory to `path` (.npz), atomically (a temporary file is renamed)."""
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(suffix=".npz", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **{k: getattr(self, k) for k in _ARRAYS},
                         model=np.array(self.model), joint_names=np.array(self.joint_names),
                         qpos_labels=np.array(self.qpos_labels),
                         qvel_labels=np.array(self.qvel_labels),
                         timestep=self.timestep, record_every=self.record_every,
                         steps=self.steps, contacts_total=self.contacts_total, wall=self.wall,
                         interrupted=self.interrupted, sensordata=self.sensordata,
                         sensor_names=np.array(self.sensor_names, dtype=str),
                         sensor_adr=np.array(self.sensor_adr, dtype=np.int64),
                         sensor_dim=np.array(self.sensor_dim, dtype=np.int64))
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path):
        """Read a trajectory written by `save`.

        Raises:
            JointspaceError: the file is missing or is not a saved trajectory.
        """
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise JointspaceError(f"trajectory file not found: {path}")
        try:
            with np.load(path, allow_pickle=False) as z:
                missing = [k for k in _ARRAYS + _META if k not in z.files]
                if missing:
                    raise JointspaceError(
                        f"{path}: not a jointspace trajectory (no {', '.join(missing)}); "
                        f"write one with `jointspace simulate MODEL --out FILE.npz`")
                kw = {k: z[k] for k in _ARRAYS}
                kw.update(model=str(z["model"]), joint_names=list(z["joint_names"]),
                          qpos_labels=list(z["qpos_labels"]),
                          qvel_labels=list(z["qvel_labels"]),
                          timestep=float(z["timestep"]), record_every=int(z["record_every"]),
                          steps=int(z["steps"]), contacts_total=int(z["contacts_total"]),
                          wall=float(z["wall"]), interrupted=bool(z["interrupted"]))
                if "sensordata" in z.files:  # files written before sensors have none
                    kw.update(sensordata=z["sensordata"], sensor_names=list(z["sensor_names"]),
                              sensor_adr=list(z["sensor_adr"]), sensor_dim=list(z["sensor_dim"]))
        except (OSError, ValueError, EOFError) as e:
            raise JointspaceError(f"{path}: cannot read it as a trajectory (.npz): {e}") from None
        return cls(**kw)


def ctrl_table(m, ctrl, nstep):
    """ctrl as None (leave d.ctrl alone) or an (n, nu) table whose row i is applied at step i."""
    if ctrl is None:
        return None
    c = np.asarray(ctrl, dtype=float)
    if c.ndim == 0:
        c = np.full((1, m.nu), float(c))
    elif c.ndim == 1:
        c = c[None, :]
    if c.ndim != 2 or c.shape[1] != m.nu:
        raise ValueError(f"simulate: argument ctrl must have nu = {m.nu} values per row (a "
                         f"scalar, ({m.nu},) or (steps, {m.nu})), got shape {np.shape(ctrl)}")
    if not np.all(np.isfinite(c)):
        raise ValueError("simulate: argument ctrl has NaN or infinite values")
    return c[:nstep]


def simulate(m, d, seconds, *, ctrl=None, record_every=None, progress=None,
             interruptible=False, model_name=""):
    """Step the simulation for `seconds` and record a `Trajectory`.

    Args:
        m: the Model.
        d: a Data for m; stepped in place from its current state.
        seconds: simulated duration, > 0 (rounded to whole time steps, at least one).
        ctrl: None to leave d.ctrl as it is; a scalar (every actuator), an (nu,) vector, or
            an (n, nu) table whose row i is applied at step i (the last row is held).
        record_every: steps between recorded frames (default: about 100 frames per second).
        progress: optional callable progress(done_steps, total_steps, wall_seconds), called
            about ten times a second.
        interruptible: if True, Ctrl-C (KeyboardInterrupt) ends the run early and the
            frames recorded so far are returned with `interrupted=True`.
        model_name: stored as `Trajectory.model` (what the model was loaded from).

    Returns:
        The `Trajectory`.
    """
    from jointspace.dynamics.energy import kinetic_energy
    from jointspace.forward import forward
    from jointspace.step import step
    from jointspace.types import make_data

    if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.floating)) \
            or not seconds > 0 or not np.isfinite(seconds):
        raise ValueError(f"simulate: argument seconds must be a positive number, got {seconds!r}")
    dt = float(m.opt.timestep)
    nstep = max(1, int(round(seconds / dt)))
    if record_every is None:
        record_every = max(1, int(round(0.01 / dt)))
    if isinstance(record_every, bool) or not isinstance(record_every, (int, np.integer)) \
            or record_every < 1:
        raise ValueError(f"simulate: argument record_every must be a positive integer, got "
                         f"{record_every!r}")
    table = ctrl_table(m, ctrl, nstep)
    nframe = nstep // record_every + 1 + (nstep % record_every != 0)
    rec = {"time": np.zeros(nframe), "qpos": np.zeros((nframe, m.nq)),
           "qvel": np.zeros((nframe, m.nv)), "ctrl": np.zeros((nframe, m.nu)),
           "energy": np.zeros((nframe, 2)), "ncon": np.zeros(nframe, dtype=np.int64),
           "contact_force": np.zeros(nframe), "sensordata": np.zeros((nframe, m.nsensordata))}

    # load (or compile) the kernels on a scratch Data so that the timing below is stepping only
    scratch = make_data(m)
    forward(m, scratch)
    step(m, scratch, 1)

    def record_state(k):
        rec["time"][k] = d.time
        rec["qpos"][k] = d.qpos
        rec["qvel"][k] = d.qvel
        rec["ctrl"][k] = d.ctrl

    def record_diagnostics(k):
        # the recorded state's energies, computed on the scratch Data whatever the model's
        # energy flag says (with it off, d.energy holds zeros, as MuJoCo's)
        scratch.mocap_pos[:] = d.mocap_pos
        scratch.mocap_quat[:] = d.mocap_quat
        kinetic_energy(m, scratch, rec["qpos"][k], rec["qvel"][k])
        rec["energy"][k] = scratch.energy
        rec["ncon"][k] = d.ncon[0]
        rec["contact_force"][k] = contact_normal_forces(m, d).sum()
        rec["sensordata"][k] = d.sensordata

    nrec = 0        # frames whose state and diagnostics are both recorded
    done = 0
    contacts = 0
    interrupted = False
    t0 = time.perf_counter()
    last_report = t0
    try:
        for i in range(nstep):
            pending = i % record_every == 0
            if table is not None:
                d.ctrl[:] = table[min(i, table.shape[0] - 1)]
            if pending:
                record_state(nrec)
            step(m, d, 1)
            done = i + 1
            contacts += int(d.ncon[0])
            if pending:
                record_diagnostics(nrec)
                nrec += 1
            if progress is not None and (i & 63) == 0:
                now = time.perf_counter()
                if now - last_report > 0.1:
                    last_report = now
                    progress(done, nstep, now - t0)
        record_state(nrec)
        forward(m, d)
        record_diagnostics(nrec)
        nrec += 1
    except KeyboardInterrupt:
        if not interruptible:
            raise
        interrupted = True
    wall = time.perf_counter() - t0
    if progress is not None:
        progress(done, nstep, wall)
    qlabels, vlabels = coordinate_labels(m)
    return Trajectory(**{k: v[:nrec] for k, v in rec.items()}, model=model_name,
                      joint_names=m.names["joint"], qpos_labels=qlabels, qvel_labels=vlabels,
                      timestep=dt, record_every=record_every,
                      steps=done, contacts_total=contacts, wall=wall, interrupted=interrupted,
                      sensor_names=m.names["sensor"], sensor_adr=m.sensor_adr,
                      sensor_dim=m.sensor_dim)
