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
