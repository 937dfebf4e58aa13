"""Timing helpers for the benchmark scripts: medians of repeated batches, same-run ratios."""

import time

import numpy as np


def per_call(fn, *, number=None, repeat=15, budget=0.05):
    """Median seconds per call of fn() over `repeat` batches of `number` calls.

    `number` is chosen so that one batch takes about `budget` seconds.
    """
    fn()
    if number is None:
        t = time.perf_counter()
        fn()
        one = max(time.perf_counter() - t, 1e-8)
        number = max(1, int(budget / one))
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t) / number)
    return float(np.median(times))


def interleaved(fns, repeat, budget=0.02):
    """Seconds per call of each fn in every round, the contenders timed in alternation.

    Each fn gets a batch size that makes one batch last about `budget` seconds; then every
    round times one batch of each, in turn. On a shared, noisy machine this exposes all
    contenders to the same load: report the median of the per-round ratios.

    Returns:
        One array per fn: its seconds per call in each of the `repeat` rounds.
    """
    numbers = []
    for fn in fns:
        fn()
        t = time.perf_counter()
        fn()
        numbers.append(max(1, int(budget / max(time.perf_counter() - t, 1e-8))))
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, n, ts in zip(fns, numbers, times):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            ts.append((time.perf_counter() - t) / n)
    return [np.array(ts) for ts in times]


def table(rows, header):
    """Format rows (lists of str) under header as a Markdown table."""
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep] + [line(r) for r in rows])


def us(t):
    """Seconds as a microsecond string."""
    return f"{t * 1e6:.2f}"


def load_both(src):
    """(MuJoCo's model, jointspace's Model) of an MJCF file path or XML text, warnings hidden."""
    import warnings

    import mujoco

    import jointspace as js

    is_file = not isinstance(src, str)
    mj = (mujoco.MjModel.from_xml_path(str(src)) if is_file
          else mujoco.MjModel.from_xml_string(src))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = js.load(src) if is_file else js.load_string(src)
    return mj, m


def step_row(name, mj, md, m, d, nstep, repeat):
    """A `STEP_COLUMNS` row: both step nstep steps from their states, then are timed doing so.

    The |Δqpos| column compares the states after the first nstep steps (same start).
    """
    import mujoco

    import jointspace as js

    mujoco.mj_step(mj, md, nstep)
    js.step(m, d, nstep)
    diff = float(np.max(np.abs(d.qpos - md.qpos)))
    ours, theirs = interleaved([lambda: js.step(m, d, nstep),
                                lambda: mujoco.mj_step(mj, md, nstep)], repeat)
    ratio = float(np.median(ours / theirs))
    return [name, str(mj.nv), f"{np.median(ours) / nstep * 1e6:.2f}",
            f"{np.median(theirs) / nstep * 1e6:.2f}", f"{ratio:.2f}", f"{diff:.0e}"]


def step_columns(nstep):
    """The header of `step_row`'s table."""
    return ["model", "nv", "js.step µs/step", "mj_step µs/step", "ratio",
            f"|Δqpos| after {nstep} steps"]
