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


def table(rows, header):
    """Format rows (lists of str) under header as a Markdown table."""
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep] + [line(r) for r in rows])


def us(t):
    """Seconds as a microsecond string."""
    return f"{t * 1e6:.2f}"
