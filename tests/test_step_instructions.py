"""tools/step_instructions.py's reading of callgrind files and perf maps (no valgrind run).

The file below is written in callgrind's format as valgrind 3.19 writes it: compressed
names ((id) name the first time, (id) after), self-cost lines, and a calls= line whose
next cost line is the call's inclusive cost, which must not count as the caller's own;
blank lines between blocks.
"""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "tools" / "step_instructions.py"
_spec = importlib.util.spec_from_file_location("step_instructions", _PATH)
si = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(si)

# two Numba kernels at 0x1000 (size 0x100) and 0x2000 (0x80), as perf_map.py names them
PERF_MAP = ("1000 100 _ZN10jointspace6solver6newton10sol_newtonB2v5E\n"
            "2000 80 _ZN10jointspace8dynamics6factor9factor_ldB2v9E\n")

CALLGRIND = """version: 1
creator: callgrind-3.19.0

events: Ir Bc

ob=(1) ???
fn=(1) 0x0000000000001010
0x1010 100 10
+4 20 2
cfn=(2) 0x0000000000002004
calls=3 0x2004
0x1018 900 90
cob=(2) /x/libmujoco.so.4.0.0
cfn=(3) mj_solveLD
calls=2 0
0x101c 100 10
ob=(2)
fn=(3)
0 50 5
cob=(1)
cfn=(2)
calls=1 0
0 300 30

fn=(4) mj_step'2
0 7 0
ob=(1)
fn=(2)
0x2004 300 30
ob=(3) /usr/lib/libc.so.6
fn=(5) memset
0 11 1
fn=(6) 0x0000000000009000
0 17 0
ob=(1)
fn=(7) 0x0000000000009000
0 13 0
"""


@pytest.fixture
def files(tmp_path):
    cg = tmp_path / "run.cg"
    cg.write_text(CALLGRIND)
    pm = tmp_path / "perf.map"
    pm.write_text(PERF_MAP)
    return cg, pm


def test_demangle_names_numba_kernels():
    assert si.demangle("_ZN10jointspace6solver6newton10sol_newtonB2v5E") \
        == "jointspace.solver.newton.sol_newton"
    assert si.demangle("mj_step") == "mj_step"


def test_self_costs_calls_and_names(files):
    events, cost, calls = si.read_callgrind(*files)
    assert events == ["Ir", "Bc"]
    # self cost only: the 900 after calls= is factor_ld's inclusive cost inside sol_newton
    assert cost["jointspace.solver.newton.sol_newton"] == [120, 12]
    assert cost["jointspace.dynamics.factor.factor_ld"] == [300, 30]
    assert cost["mj:mj_solveLD"] == [50, 5]
    assert cost["mj:mj_step"] == [7, 0]  # a recursion suffix ('2) folds into its function
    assert cost["other"] == [28, 1]  # libc, with one of its functions unnamed
    assert cost["jit?"] == [13, 0]  # code in no file (Numba's) that the map does not cover
    assert calls["jointspace.dynamics.factor.factor_ld"] == 4
    assert calls["mj:mj_solveLD"] == 2
    assert set(cost) == {"jointspace.solver.newton.sol_newton", "mj:mj_solveLD", "mj:mj_step",
                         "jointspace.dynamics.factor.factor_ld", "other", "jit?"}


def test_per_step_is_the_difference_over_n(files, tmp_path):
    run_n = si.read_callgrind(*files)
    empty = tmp_path / "empty.cg"
    empty.write_text("events: Ir Bc\nob=(1) ???\nfn=(1) 0x0000000000001010\n0x1010 20 2\n")
    run_0 = si.read_callgrind(empty, files[1])
    cost, calls, events = si.per_step((run_n, run_0), 4)
    assert cost["jointspace.solver.newton.sol_newton"] == [25.0, 2.5]
    assert cost["mj:mj_solveLD"] == [12.5, 1.25]
    assert "other" not in cost
    assert calls["jointspace.dynamics.factor.factor_ld"] == 1.0
