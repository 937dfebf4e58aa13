"""Delayed and sampled signals: the history buffers of actuators and sensors (MuJoCo 4.0).

An actuator or sensor with nsample > 0 owns a ring buffer in d.history at its historyadr
(`actuator_historyadr`, `sensor_historyadr`), laid out as MuJoCo lays it out:

    [user, cursor, times (n), values (n · dim)]        n = nsample, dim = ctrlnum or sensor_dim

`cursor` is the slot of the newest sample (logical index n − 1; logical 0, the oldest, is
slot cursor + 1 mod n); `user` is the time a sampled sensor was last computed (the
interval's clock; 0 for actuators). The buffer is part of the physics state (MuJoCo's
mjSTATE_HISTORY, `jointspace.get_state`).

Writing (MuJoCo's mj_advance, first thing in every integrator, with d.time the time the
step started from; RK4 writes the sensors before its stages, from the first forward, and
the controls after them, as MuJoCo 4.0 does, measured): each actuator's control block (its
ctrlnum controls from ctrladr: a pid's or dcmotor's inputs, an orientation's chart) at d.time;
each sensor by its mode, with delay = sensor_delay, period = sensor_interval[0]:

    delay   period   written at d.time                     sensordata
    = 0     = 0      sensordata, every step                computed
    > 0     = 0      the sensor computed now, every step   read at time − delay
    = 0     > 0      sensordata, when user + period ≤ time computed when due, else read
    > 0     > 0      the sensor computed now, when due     read at time − delay

and `user` advances by period when the sample is due. Reading at time t (MuJoCo's
mju_historyRead): the oldest value for t ≤ oldest time, the newest for t ≥ newest time,
a stored time within 1e-15 its value, else between the bracketing samples by the buffer's
interp: zero-order hold (the older), linear, or cubic Hermite with Catmull-Rom slopes (zero
at the ends). An actuator with actuator_delay ≠ 0 drives its force with its control block
read at d.time − delay, every control of it delayed (`jointspace.actuation`; MuJoCo 4.0.0,
measured: its published source reads back only the first); a sensor with delay > 0 shows
the value read at d.time − delay.

`reset` (MuJoCo's mj_resetData) sets every buffer to zero values (an orientation servo's
quaternion target: the identity, its neutral control) at the times [−n·h, …, −h]
(h = opt.timestep); a sampled sensor's at its period, rounded up to the time
grid: t_j = ⌈(t₀ − (n − 1 − j)·period) / h⌉·h with t₀ = phase (−period when phase is 0),
and user = t₀.

A cursor that is not a slot index (a hand-written buffer) reads as slot 0, so that compiled
code never indexes outside the buffer.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.entry import check_pair
from jointspace.types import CHART_QUAT, GAIN_SO3, MINVAL

INTERP_ZOH, INTERP_LINEAR, INTERP_CUBIC = 0, 1, 2
INTERP_NAMES = ("zoh", "linear", "cubic")


@njit(cache=True, inline="always")
def _cursor(buf, adr, n):
    """The newest sample's slot, buf[adr + 1] (0 when it is not an index in [0, n))."""
    c = buf[adr + 1]
    if c >= 0.0 and c < n:
        return int(c)
    return 0


@njit(cache=True, inline="always")
def _slot(cursor, n, k):
    """Slot of logical index k (0 oldest, n − 1 newest)."""
    return (cursor + 1 + k) % n


@njit(cache=True)
def _find(buf, adr, n, cursor, t):
    """The least logical i with times[i] ≥ t: 0 if t ≤ oldest, n if t > newest (bisection)."""
    times = adr + 2
    if t <= buf[times + _slot(cursor, n, 0)]:
        return 0
    if t > buf[times + _slot(cursor, n, n - 1)]:
        return n
    lo = 0
    hi = n - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if buf[times + _slot(cursor, n, mid)] < t:
            lo = mid
        else:
            hi = mid
    return hi


@njit(cache=True)
def insert(buf, adr, n, dim, t):
    """Make room for a sample at time t; returns the index in buf of its dim values.

    A time within 1e-15 of a stored one reuses that slot; a time newer than all advances
    the cursor over the oldest slot; one older than all replaces the oldest; one in between
    shifts the older samples down, dropping the oldest (mju_historyInsert).
    """
    cursor = _cursor(buf, adr, n)
    times = adr + 2
    values = adr + 2 + n
    i = _find(buf, adr, n, cursor, t)
    if i < n:
        s = _slot(cursor, n, i)
        if abs(t - buf[times + s]) < MINVAL:
            return values + s * dim
    if i == 0:
        s = _slot(cursor, n, 0)
        buf[times + s] = t
        return values + s * dim
    if i == n:
        cursor = (cursor + 1) % n
        buf[adr + 1] = cursor
        buf[times + cursor] = t
        return values + cursor * dim
    for j in range(i - 1):
        src = _slot(cursor, n, j + 1)
        dst = _slot(cursor, n, j)
        buf[times + dst] = buf[times + src]
        for k in range(dim):
            buf[values + dst * dim + k] = buf[values + src * dim + k]
    s = _slot(cursor, n, i - 1)
    buf[times + s] = t
    return values + s * dim


@njit(cache=True)
def read(buf, adr, n, dim, t, interp, out, o):
    """out[o : o + dim] = the buffer's value at time t (mju_historyRead; module docstring)."""
    cursor = _cursor(buf, adr, n)
    times = adr + 2
    values = adr + 2 + n
    oldest = _slot(cursor, n, 0)
    newest = _slot(cursor, n, n - 1)
    src = -1
    if t <= buf[times + oldest] + MINVAL:
        src = oldest
    elif t >= buf[times + newest] - MINVAL:
        src = newest
    else:
        i = _find(buf, adr, n, cursor, t)
        hi = _slot(cursor, n, i)
        lo = _slot(cursor, n, i - 1)
        if abs(t - buf[times + hi]) < MINVAL:
            src = hi
        elif interp == INTERP_ZOH:
            src = lo
        else:
            t_lo = buf[times + lo]
            dt = buf[times + hi] - t_lo
            alpha = (t - t_lo) / dt
            vlo = values + lo * dim
            vhi = values + hi * dim
            if interp == INTERP_LINEAR:
                for k in range(dim):
                    out[o + k] = buf[vlo + k] + alpha * (buf[vhi + k] - buf[vlo + k])
            else:
                # cubic Hermite, Catmull-Rom slopes (0 at the ends)
                a2 = alpha * alpha
                a3 = a2 * alpha
                h00 = 2 * a3 - 3 * a2 + 1
                h10 = a3 - 2 * a2 + alpha
                h01 = -2 * a3 + 3 * a2
                h11 = a3 - a2
                for k in range(dim):
                    m_lo = 0.0
                    if i > 1:
                        prev = _slot(cursor, n, i - 2)
                        m_lo = ((buf[vhi + k] - buf[values + prev * dim + k])
                                / (buf[times + hi] - buf[times + prev]))
                    m_hi = 0.0
                    if i < n - 1:
                        nxt = _slot(cursor, n, i + 1)
                        m_hi = ((buf[values + nxt * dim + k] - buf[vlo + k])
                                / (buf[times + nxt] - t_lo))
                    out[o + k] = (h00 * buf[vlo + k] + h10 * dt * m_lo
                                  + h01 * buf[vhi + k] + h11 * dt * m_hi)
    if src >= 0:
        for k in range(dim):
            out[o + k] = buf[values + src * dim + k]


@njit(cache=True)
def read_ctrl_kernel(m, d, i, j, t, interp):
    """Control j of actuator i at time t − actuator_delay[i] from its buffer (mj_readCtrl).

    d.ctrl[ctrladr[i] + j] when it has no buffer; interp < 0: the actuator's own.
    """
    n = m.actuator_history[i, 0]
    if n <= 0:
        return d.ctrl[m.actuator_ctrladr[i] + j]
    if interp < 0:
        interp = m.actuator_history[i, 1]
    dim = m.actuator_ctrlnum[i]
    res = np.empty(dim)
    read(d.history, m.actuator_historyadr[i], n, dim, t - m.actuator_delay[i], interp, res, 0)
    return res[j]


@njit(cache=True, inline="always")
def quat_chart(m, i):
    """True when actuator i is an orientation servo whose target is a quaternion (4 controls).

    Its neutral control is the identity (1, 0, 0, 0), not zeros: MuJoCo 4.0's mj_resetCtrl,
    which mj_resetData applies to d.ctrl and to the samples of the actuator's history buffer.
    """
    return m.actuator_gaintype[i] == GAIN_SO3 and m.actuator_ctrlspec[i] == CHART_QUAT


@njit(cache=True)
def reset_ctrl(m, d):
    """d.ctrl at its neutral values: zeros, a quaternion target's first control 1."""
    d.ctrl[:] = 0.0
    for i in range(m.nactuator):
        if quat_chart(m, i):
            d.ctrl[m.actuator_ctrladr[i]] = 1.0


@njit(cache=True)
def reset_history(m, d):
    """Every buffer as mj_resetData leaves it (module docstring).

    The compiled twin of `types._initial_history` (make_data and reset), for step's reset of
    a bad state. An actuator's samples hold its neutral controls (`quat_chart`).
    """
    h = m.opt_timestep[0]
    buf = d.history
    for i in range(m.nactuator):
        n = m.actuator_history[i, 0]
        if n > 0:
            adr = m.actuator_historyadr[i]
            dim = m.actuator_ctrlnum[i]
            buf[adr] = 0.0
            buf[adr + 1] = n - 1
            for j in range(n):
                buf[adr + 2 + j] = -(n - j) * h
                for k in range(dim):
                    buf[adr + 2 + n + j * dim + k] = 1.0 if k == 0 and quat_chart(m, i) else 0.0
    for i in range(m.nsensor):
        n = m.sensor_history[i, 0]
        if n > 0:
            adr = m.sensor_historyadr[i]
            period = m.sensor_interval[i, 0]
            phase = m.sensor_interval[i, 1]
            t0 = (-period if phase == 0.0 else phase) if period > 0.0 else -h
            buf[adr] = t0
            buf[adr + 1] = n - 1
            for j in range(n):
                if period > 0.0:
                    buf[adr + 2 + j] = math.ceil((t0 - (n - 1 - j) * period) / h) * h
                else:
                    buf[adr + 2 + j] = -(n - j) * h
            for k in range(n * m.sensor_dim[i]):
                buf[adr + 2 + n + k] = 0.0


# ---------------------------------------------------------------------------------------------
# reading from Python (MuJoCo's mj_readCtrl, mj_readSensor)


def _interp(interp, own, fname):
    if interp is None:
        return int(own)
    if isinstance(interp, str):
        if interp not in INTERP_NAMES:
            raise ValueError(f"{fname}: interp must be one of {INTERP_NAMES} or 0, 1, 2, got "
                             f"{interp!r}")
        return INTERP_NAMES.index(interp)
    if isinstance(interp, (bool, np.bool_)) or interp not in (0, 1, 2):
        raise ValueError(f"{fname}: interp must be one of {INTERP_NAMES} or 0, 1, 2, got "
                         f"{interp!r}")
    return int(interp)


def read_ctrl(m, d, actuator, time=None, interp=None):
    """The control actuator `actuator` had at `time` − its delay, from d.history (mj_readCtrl).

    Args:
        m: the Model.
        d: a Data of m.
        actuator: the actuator's name or id.
        time: the time to read at (default d.time).
        interp: "zoh", "linear", "cubic" (or 0, 1, 2); default the actuator's own.

    Returns:
        The control, a float, for an actuator with one control; for one with several (a
        pid's or dcmotor's inputs, an orientation's chart) the block of its ctrlnum
        controls, a new (ctrlnum,) array. The current d.ctrl when the actuator has no
        buffer (nsample = 0).
    """
    check_pair(m, d, "read_ctrl")
    i = m.id("actuator", actuator)
    n = int(m.actuator_history[i, 0])
    adr = int(m.actuator_ctrladr[i])
    dim = int(m.actuator_ctrlnum[i])
    if n <= 0:
        out = d.ctrl[adr:adr + dim].copy()
    else:
        k = _interp(interp, m.actuator_history[i, 1], "read_ctrl")
        t = d.time if time is None else float(time)
        out = np.empty(dim)
        read(d.history, int(m.actuator_historyadr[i]), n, dim, t - float(m.actuator_delay[i]),
             k, out, 0)
    return float(out[0]) if dim == 1 else out


def read_sensor(m, d, sensor, time=None, interp=None):
    """Sensor `sensor`'s value at `time` − its delay, from d.history (mj_readSensor).

    Args:
        m: the Model.
        d: a Data of m.
        sensor: the sensor's name or id.
        time: the time to read at (default d.time).
        interp: "zoh", "linear", "cubic" (or 0, 1, 2); default the sensor's own.

    Returns:
        A new (sensor_dim,) array (a copy of its sensordata when it has no buffer).
    """
    check_pair(m, d, "read_sensor")
    i = m.id("sensor", sensor)
    n = int(m.sensor_history[i, 0])
    dim = int(m.sensor_dim[i])
    if n <= 0:
        a = int(m.sensor_adr[i])
        return d.sensordata[a:a + dim].copy()
    k = _interp(interp, m.sensor_history[i, 1], "read_sensor")
    t = d.time if time is None else float(time)
    out = np.empty(dim)
    read(d.history, int(m.sensor_historyadr[i]), n, dim, t - float(m.sensor_delay[i]), k, out,
         0)
    return out
