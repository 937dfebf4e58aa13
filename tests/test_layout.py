"""The package layout is the architecture (docs/architecture.md, "Layout"): imports go down.

Every module sits on one layer; a module may import from its own layer or below, never
from above, and the import graph has no cycle, counting imports inside functions too (a
lazy import would only hide a cycle). No module loads another by `importlib`. Each module
also imports on its own, without the package's __init__ (which imports everything).
"""

import ast
import pathlib
import re
import subprocess
import sys

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "src" / "jointspace"

# lowest first; a module's layer is that of the longest prefix listed here
LAYERS = (
    ("jointspace.errors", "jointspace.types", "jointspace._numba", "jointspace.diagnostics"),
    # io.frames: the frame conversions of the loaders, in NumPy (ik uses them too);
    # tendon: lengths and Jacobians from the poses, below kinematics (whose com_pos runs it);
    # actuator_passive: the damping and armature actuators lend, read by most stages
    ("jointspace.rotation", "jointspace.spatial", "jointspace.io.frames", "jointspace.tendon",
     "jointspace.history", "jointspace.actuator_passive"),
    ("jointspace.kinematics", "jointspace.passive", "jointspace.actuation",
     "jointspace.integrate", "jointspace.dynamics", "jointspace.collision",
     "jointspace.state", "jointspace.sensor"),
    ("jointspace.constraint",),
    ("jointspace.solver",),
    ("jointspace.forward",),
    ("jointspace.inverse",),
    ("jointspace.step",),
    ("jointspace.rigid", "jointspace.control", "jointspace.ik", "jointspace.trajectory",
     "jointspace.rollout"),
    ("jointspace.io", "jointspace.models"),
    ("jointspace.viz", "jointspace.cli", "jointspace.__main__", "jointspace.precompile",
     "jointspace.distributed", "jointspace"),
)


def _modname(p):
    parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_modname(p): p for p in sorted(PKG.rglob("*.py"))}


def _layer(name):
    best, layer = -1, None
    for k, group in enumerate(LAYERS):
        for prefix in group:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, layer = len(prefix), k
    return layer


def _imports(name):
    """The package modules `name` imports, anywhere in its source."""
    out = set()
    for n in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("jointspace"):
            for a in n.names:
                sub = f"{n.module}.{a.name}"
                out.add(sub if sub in MODULES else n.module)
        elif isinstance(n, ast.Import):
            out.update(a.name for a in n.names if a.name.startswith("jointspace"))
    return {m for m in out if m in MODULES and m != name}


GRAPH = {name: _imports(name) for name in MODULES}


def test_every_module_has_a_layer():
    assert [m for m in MODULES if _layer(m) is None] == []


def test_imports_go_down():
    up = [f"{u} (layer {_layer(u)}) imports {v} (layer {_layer(v)})"
          for u, deps in GRAPH.items() for v in sorted(deps) if _layer(v) > _layer(u)]
    assert up == []


def test_import_graph_has_no_cycle():
    state, cycles = {}, []

    def visit(u, path):
        state[u] = 1
        for v in sorted(GRAPH[u]):
            if state.get(v) == 1:
                cycles.append(" -> ".join(path[path.index(v):] + [v]))
            elif v not in state:
                visit(v, path + [v])
        state[u] = 2

    for u in sorted(GRAPH):
        if u not in state:
            visit(u, [u])
    assert cycles == []


def test_no_module_imports_by_name_at_run_time():
    assert [m for m, p in MODULES.items() if "importlib.import_module" in p.read_text()] == []


def test_the_check_sees_a_cycle_and_an_upward_import():
    """The checks above can fail: a planted upward import is an error."""
    assert _layer("jointspace.forward") > _layer("jointspace.kinematics")
    GRAPH["jointspace.kinematics"].add("jointspace.forward")
    try:
        with pytest.raises(AssertionError):
            test_imports_go_down()
        with pytest.raises(AssertionError):
            test_import_graph_has_no_cycle()
    finally:
        GRAPH["jointspace.kinematics"].discard("jointspace.forward")


def test_each_module_imports_in_isolation():
    """Each module imports alone, without jointspace/__init__.py (which imports everything).

    The top package stands empty, so only what the module imports itself is loaded;
    subpackages' own __init__ files run, as part of what the module imports.
    """
    code = ("import importlib, pathlib, sys, types\n"
            "src = pathlib.Path(sys.argv[1])\n"
            "for name in sys.argv[2:]:\n"
            "    for k in [k for k in sys.modules if k.startswith('jointspace')]:\n"
            "        del sys.modules[k]\n"
            "    top = types.ModuleType('jointspace')\n"
            "    top.__path__ = [str(src / 'jointspace')]\n"
            "    sys.modules['jointspace'] = top\n"
            "    importlib.import_module(name)\n")
    names = sorted(m for m in MODULES if m != "jointspace.__main__")
    r = subprocess.run([sys.executable, "-c", code, str(PKG.parent), *names],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


def test_numeric_limits_have_one_home():
    """MuJoCo's mjMINVAL and friends are defined in types.py only (others import them)."""
    limits = re.compile(r"^_?(MINVAL|MAXVAL|MINIMP|MAXIMP|MINMU)\s*=", re.M)
    assert [m for m, p in MODULES.items()
            if m != "jointspace.types" and limits.search(p.read_text())] == []


def test_no_module_imports_a_private_name_of_another():
    """A leading underscore means private to its module: shared names are plain."""
    private = []
    for name, path in MODULES.items():
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("jointspace"):
                private += [f"{name} imports {n.module}.{a.name}" for a in n.names
                            if a.name.startswith("_") and not a.name.startswith("__")]
    assert private == []
