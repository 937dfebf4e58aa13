"""Smoke run of the dynamics benchmark (issue: "run in CI as a smoke run only").

The script times jointspace, Pinocchio and MuJoCo in the same run; here it runs with
--quick and must finish and print both tables with a ratio for every operation. Timings are
not asserted (they belong to the script's output, not to tests).
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
OPERATIONS = ("rnea", "crba", "factor_m", "solve_m", "aba", "minv")


def test_bench_dynamics_quick_prints_every_ratio():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_dynamics.py"),
                          "--quick"], capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-2000:]
    for model in ("humanoid", "chain30"):
        for op in OPERATIONS:
            rows = [r for r in out.stdout.splitlines() if r.startswith(f"| {model} {op} ")]
            assert len(rows) == 2, (model, op)  # one row per table
            ratios = [float(c) for c in rows[0].strip("|").split("|")[-2:]]
            assert all(r > 0 for r in ratios)


def test_bench_fig3_quick_prints_the_speedup_table():
    """The 2014 paper's Fig. 3 reproduction runs and reports every column for each bin."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_fig3.py"),
                          "--quick"], capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("humanoid dragged around, condim 6")
    rows = [r.strip("|").split("|") for r in lines[3:] if r.startswith("| ")]
    assert rows
    assert sum(int(r[1]) for r in rows) == 12  # every state lands in one nefc bin
    for r in rows:
        assert all(float(c) > 0 for c in r[2:])  # times and ratios, none NaN or zero
