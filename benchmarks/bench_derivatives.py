"""Analytical RNEA and ABA derivatives: jointspace vs Pinocchio, same process, same run.

Run: python benchmarks/bench_derivatives.py [--quick]

Models: MuJoCo's 27-dof humanoid and a 30-link hinge chain (`jointspace.models`), which
Pinocchio gets through `pinocchio.buildModelFromMJCF` (the same tree and joint count;
timings only), and the Panda arm from example-robot-data's URDF when it is installed.

Columns: median µs per call from Python of `js.rnea_derivatives` against
`pin.computeRNEADerivatives`, and `js.aba_derivatives` against `pin.computeABADerivatives`
(both return ∂/∂q, ∂/∂v and M or M⁻¹), timed in alternation batch by batch; the ratio is
the median over rounds of ours / theirs. "compiled loop" is our per-evaluation time when a
Numba loop calls the same driver N times (no crossing), next to Pinocchio's per-call time
minus its binding overhead (a trivial call, pin.computeTotalMass), an estimate of its
compute time.
"""

import argparse
import importlib.metadata
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import interleaved, table  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.dynamics.derivatives import (  # noqa: E402
    _aba_derivatives_driver,
    _rnea_derivatives_driver,
)


@njit(cache=True)
def _loop_rnea_derivatives(d, q, v, a, dq, dv, mass, n):
    for _ in range(n):
        _rnea_derivatives_driver(d, q, v, a, False, d.cfrc_ext, dq, dv, mass)


@njit(cache=True)
def _loop_aba_derivatives(d, q, v, tau, dq, dv, minv, n):
    for _ in range(n):
        _aba_derivatives_driver(d, q, v, tau, False, d.cfrc_ext, dq, dv, minv)


def _panda():
    """(jointspace model, Pinocchio model) of the Panda URDF, or None if not installed."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/"
                                 "panda_description/urdf/panda.urdf"))
    if not path.is_file():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load(path), pin.buildModelFromUrdf(str(path))


def _from_mjcf(xml):
    m = js.load_string(xml)
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    try:
        pm = pin.buildModelFromMJCF(f.name)
    finally:
        os.unlink(f.name)
    return m, pm


def bench_model(label, m, pm, repeat, n_loop):
    """Rows of the table for one model."""
    d = js.make_data(m)
    pd = pm.createData()
    assert pm.nv == m.nv
    rng = np.random.default_rng(0)
    q = np.array(m.qpos0) + 0.1 * rng.normal(size=m.nq)
    if m.njnt > 0 and m.jnt_type[0] == 0:
        q[3:7] /= np.linalg.norm(q[3:7])
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    qp = pin.neutral(pm)
    tau = js.rnea(m, d, q, v, a)
    mats = [np.empty((m.nv, m.nv)) for _ in range(3)]
    pin_over = float(np.median(interleaved([lambda: pin.computeTotalMass(pm)], repeat)[0]))
    ops = [
        ("rnea_derivatives", lambda: js.rnea_derivatives(m, d, q, v, a),
         lambda: pin.computeRNEADerivatives(pm, pd, qp, v, a),
         lambda: _loop_rnea_derivatives(d._s, q, v, a, *mats, n_loop)),
        ("aba_derivatives", lambda: js.aba_derivatives(m, d, q, v, tau),
         lambda: pin.computeABADerivatives(pm, pd, qp, v, tau),
         lambda: _loop_aba_derivatives(d._s, q, v, tau, *mats, n_loop)),
    ]
    rows = []
    for name, ours, theirs, loop in ops:
        o, p, t = interleaved([ours, theirs, loop], repeat)
        t = t / n_loop
        p_est = np.maximum(p - pin_over, 1e-9)
        rows.append([f"{label} {name}", f"{np.median(o) * 1e6:.2f}",
                     f"{np.median(p) * 1e6:.2f}", f"{np.median(o / p):.2f}",
                     f"{np.median(t) * 1e6:.2f}", f"{np.median(p_est) * 1e6:.2f}",
                     f"{np.median(t / p_est):.2f}"])
    return rows


def main(argv=None):
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 15
    n_loop = 50 if args.quick else 2000
    t0 = time.perf_counter()
    models = [("humanoid", *_from_mjcf(js.models.xml("humanoid"))),
              ("chain30", *_from_mjcf(js.models.xml("chain", n=30)))]
    panda = _panda()
    if panda is not None:
        models.append(("panda", *panda))
    rows = []
    for label, m, pm in models:
        rows += bench_model(label, m, pm, repeat, n_loop)
    print(table(rows, ["operation", "jointspace µs (Python)", "Pinocchio µs (Python)",
                       "ours/Pinocchio", "ours in compiled loop µs",
                       "Pinocchio compute µs (est.)", "loop/Pinocchio"]))
    print(f"\n(total benchmark time {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
