"""No ordinary Python statement on a Model or Data can make compiled code go out of bounds.

Compiled code holds the field buffers of Model and Data by pointer and trusts their
integer fields (counts, ids, addresses) as loop bounds and indices. So the fields Python
sees are views that cannot be resized or rebound; integer fields that compiled code computes
or indexes with are read-only; numeric parameters stay writable. Each repro of issue 18
runs in a subprocess, so that a crash fails the test instead of ending the run.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jointspace as js
from jointspace.types import DATA_FIELDS, MODEL_DERIVED, MODEL_FIELDS, MODEL_WRITABLE_INTS

CRASH_TIMEOUT = 300  # s: a cold cache compiles the step kernels inside the subprocess


def _run(code):
    """Run code in a fresh interpreter; return (exit status, stderr)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=CRASH_TIMEOUT)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture(scope="module")
def humanoid():
    m = js.models.load("humanoid")
    d = js.make_data(m)
    js.step(m, d, 5)
    return m, d


@pytest.mark.parametrize("field", ["ncon", "nefc", "ne", "nf", "nl", "contact_geom",
                                   "contact_dim", "efc_id", "efc_type", "efc_J_colind",
                                   "efc_J_rownnz", "solver_niter", "scratch_pairs"])
def test_counters_and_indices_of_data_are_read_only(humanoid, field):
    _, d = humanoid
    arr = getattr(d, field)
    with pytest.raises(ValueError, match="read-only"):
        arr.reshape(-1)[0] = 2**31 - 1
    with pytest.raises(AttributeError, match=f"Data.{field} is read-only"):
        setattr(d, field, 0)


def test_every_integer_field_of_data_but_the_inputs_is_read_only(humanoid):
    _, d = humanoid
    for name, dt, _, _ in DATA_FIELDS:
        arr = getattr(d, "_time" if name == "time" else name)
        assert arr.flags.writeable == (dt == "f" or name == "eq_active"), name


def test_structural_model_fields_are_read_only_and_parameters_writable(humanoid):
    m, _ = humanoid
    for name, dt, _, _ in MODEL_FIELDS:
        arr = getattr(m, name)
        writable = (dt == "f" and name not in MODEL_DERIVED) or name in MODEL_WRITABLE_INTS
        assert arr.flags.writeable == writable, name
    with pytest.raises(ValueError, match="read-only"):
        m.body_parentid[3] = 7
    with pytest.raises(AttributeError, match="Model.dof_Madr is read-only"):
        m.dof_Madr = np.zeros_like(m.dof_Madr)
    m2 = js.models.load("humanoid")
    m2.body_mass[1] = 2.0  # a parameter: writable
    m2.geom_contype[:] = 0  # a bit mask: writable
    assert m2.body_mass[1] == 2.0 and not m2.geom_contype.any()


@pytest.mark.parametrize("field", ["contact_pos", "xpos", "qM", "efc_J", "qpos"])
def test_data_fields_cannot_be_resized(humanoid, field):
    _, d = humanoid
    arr = getattr(d, field)
    with pytest.raises(ValueError, match="does not own its data|referenced"):
        arr.resize((1, 3))
    with pytest.raises(ValueError, match="referenced"):
        arr.base.resize((1, 3))  # the buffer behind the view is referenced by it


@pytest.mark.parametrize("field", ["body_parentid", "dof_Madr", "body_mass"])
def test_model_fields_cannot_be_resized(humanoid, field):
    m, _ = humanoid
    with pytest.raises(ValueError, match="does not own its data|referenced"):
        getattr(m, field).resize((1,))


TOL_SETCONST = 1e-9  # the compile-time constants' tolerance against MuJoCo (test_compile.py)


def test_set_const_recomputes_what_a_changed_parameter_invalidates():
    """Derived constants are read-only; set_const recomputes them as mj_setConst does."""
    import mujoco

    m = js.models.load("humanoid")
    with pytest.raises(AttributeError, match="set_const"):
        m.body_invweight0 = 0.0
    with pytest.raises(ValueError, match="read-only"):
        m.dof_M0[0] = 0.0
    ref = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    for mm in (m, ref):
        mm.body_mass[3] *= 2.5
        mm.body_inertia[3] *= 2.5
        mm.dof_armature[7] = 0.3
    js.set_const(m)
    mujoco.mj_setConst(ref, mujoco.MjData(ref))
    for f in ("body_subtreemass", "body_invweight0", "dof_invweight0", "dof_M0"):
        np.testing.assert_allclose(getattr(m, f), getattr(ref, f), rtol=TOL_SETCONST,
                                   atol=TOL_SETCONST, err_msg=f)
    np.testing.assert_allclose(m.stat_meaninertia[0], ref.stat.meaninertia, rtol=TOL_SETCONST)
    before = m.stat_meaninertia[0]
    js.set_const(m, stat=True)  # the compiler's statistic, recomputed on request
    assert m.stat_meaninertia[0] > before


def test_options_change_through_opt_only_and_are_checked():
    m = js.models.load("arm2")
    with pytest.raises(ValueError, match="read-only"):
        m.opt_iterations[0] = 10**9
    m.opt.iterations = 20
    assert m.opt_iterations[0] == 20 and m.opt.iterations == 20
    m.opt.solver = "CG"
    assert m.opt.solver == "CG"
    for bad in (-1, 2**31, 1.5, "many"):
        with pytest.raises((ValueError, TypeError), match="iterations"):
            m.opt.iterations = bad
    m.opt_disableflags[0] |= js.types.DSBL_GRAVITY  # a bit mask: writable as in MuJoCo


def test_copies_keep_the_protection(humanoid):
    import copy

    m, d = humanoid
    d2 = copy.deepcopy(d)
    m2 = copy.deepcopy(m)
    assert not d2.ncon.flags.writeable and not m2.body_parentid.flags.writeable
    with pytest.raises(ValueError):
        d2.qpos.resize((1,))
    js.step(m2, js.make_data(m2), 2)
    js.forward(m, d2)
    js.forward(m, d)
    np.testing.assert_array_equal(d2.qacc, d.qacc)
    d2.qpos[7] += 0.3  # the copy's views are of the buffers its own struct holds
    js.forward(m, d2)
    assert not np.array_equal(d2.xpos, d.xpos)
    js.forward(m, d)
    np.testing.assert_array_equal(d2.xpos[:2], d.xpos[:2])  # the root did not move


_REPROS = {
    "ncon": "d.ncon[0] = 2**31 - 1; js.make_constraint(m, d)",
    "nefc": "d.nefc[0] = 10**9; js.solve(m, d)",
    "ncon_negative": "d.ncon[0] = -5; js.forward(m, d)",
    "ne": "d.ne[0] = 10**6; js.forward(m, d)",
    "resize_contact": "d.contact_pos.resize((1, 3)); js.step(m, d, 100)",
    "resize_xpos": "d.xpos.resize((1, 3)); js.inverse(m, d)",
    "resize_qM": "d.qM.resize((1,)); js.forward(m, d)",
    "resize_parent": "m.body_parentid.resize((1,)); js.forward(m, d)",
    "parentid": "m.body_parentid[3] = 10**6; js.kinematics(m, d)",
    "dof_Madr": "m.dof_Madr[2] = -10**6; js.rnea(m, d, m.qpos0, d.qvel, d.qacc)",
    "geom_bodyid": "m.geom_bodyid[1] = 10**6; js.step(m, d, 1)",
    "jnt_qposadr": "m.jnt_qposadr[1] = 10**6; js.forward(m, d)",
}


def test_issue_repros_get_a_clear_error_not_a_crash():
    """All repros in one fresh interpreter (each on a new Model and Data): a crash fails."""
    lines = ["import jointspace as js", "m0 = js.models.load('humanoid')"]
    for name, stmt in _REPROS.items():
        lines += ["m = js.models.load('humanoid'); d = js.make_data(m); js.step(m, d, 20)",
                  "try:", f"    {stmt}", "except (ValueError, AttributeError) as e:",
                  f"    print({name!r}, 'refused:', e, flush=True)", "else:",
                  f"    print({name!r}, 'ran', flush=True)"]
    code, out, err = _run("\n".join(lines))
    assert code == 0, (out, err[-3000:])
    got = dict(line.split(" ", 1) for line in out.splitlines())
    assert set(got) == set(_REPROS), out
    for name, msg in got.items():
        assert msg.startswith("refused:"), (name, msg)
        assert any(w in msg for w in ("read-only", "does not own its data", "referenced")), msg


# ------------------------------------------------------------------------------------------
# threads


def _kernels():
    import importlib
    import pkgutil

    from jointspace._numba.entry import Kernel

    found = {}
    for info in pkgutil.walk_packages(js.__path__, "jointspace."):
        module = importlib.import_module(info.name)
        for name, v in vars(module).items():
            if isinstance(v, Kernel):
                found[f"{info.name}.{name}"] = v
    return found


# sub-microsecond calls keep the GIL: releasing it costs ≈ 40 ns a call (architecture.md,
# "Threads")
HOLD_GIL = {"jointspace.kinematics._k_jac_site", "jointspace.kinematics._k_jac_body",
            "jointspace.kinematics._k_jac_body_com", "jointspace.kinematics._k_jac",
            "jointspace.kinematics._k_jac_dot", "jointspace.integrate._k_integrate_pos",
            "jointspace.integrate._k_diff_pos", "jointspace.dynamics.factor._k_solve",
            "jointspace.dynamics.factor._k_solve_vec", "jointspace.dynamics.crba._k_mul_m"}


def test_every_entry_kernel_but_the_sub_microsecond_ones_releases_the_gil():
    kernels = _kernels()
    assert len(kernels) >= 45  # every public compiled call
    held = {k for k, v in kernels.items() if not v.disp.targetoptions.get("nogil")}
    assert held == HOLD_GIL


def test_two_threads_stepping_two_data_match_sequential_bitwise():
    import threading

    m = js.models.load("humanoid")
    rng = np.random.default_rng(11)
    seq, thr = [], []
    for _ in range(2):
        v = 0.2 * rng.standard_normal(m.nv)
        for out in (seq, thr):
            d = js.make_data(m)
            d.qvel[:] = v
            out.append(d)
    for d in seq:
        js.step(m, d, 300)
    threads = [threading.Thread(target=js.step, args=(m, d, 300)) for d in thr]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(seq, thr):
        np.testing.assert_array_equal(a.qpos, b.qpos)
        np.testing.assert_array_equal(a.qvel, b.qvel)
        np.testing.assert_array_equal(a.efc_force[:a.nefc[0]], b.efc_force[:b.nefc[0]])


@pytest.mark.parametrize("call", ["step", "forward", "inverse", "inverse_step"])
def test_a_division_by_zero_in_compiled_code_is_our_error(call, monkeypatch):
    """Numba raises ZeroDivisionError for a zero divisor; the pipeline's wrappers name it.

    The derived constants that used to reach it are read-only now, so the kernel is
    replaced by one that divides by zero, as a parameter written as 0 would make it.
    """
    import importlib

    mod = importlib.import_module("jointspace.inverse.core" if call.startswith("inverse")
                                  else f"jointspace.{call}")
    kernel = getattr(mod, "_k_" + call)

    def divides_by_zero(*args):
        return 1 / 0

    m = js.models.load("arm2")
    d = js.make_data(m)
    monkeypatch.setattr(kernel, "ep", divides_by_zero)
    args = {"step": (m, d, 1), "inverse_step": (m, d, np.zeros(m.nv))}.get(call, (m, d))
    with pytest.raises(js.JointspaceError, match=f"{call}: division by zero.*set_const"):
        getattr(js, call)(*args)


def test_complex_input_is_refused_not_cast():
    m = js.models.load("arm2")
    d = js.make_data(m)
    zc = np.zeros(m.nv, complex)
    with pytest.raises(TypeError, match="rnea: argument q is complex"):
        js.rnea(m, d, m.qpos0.astype(complex), zc.real, zc.real)
    with pytest.raises(TypeError, match="kinematics: argument qvel is complex"):
        js.kinematics(m, d, m.qpos0, zc)
    with pytest.raises(TypeError, match="Data.qpos: cannot write complex"):
        d.qpos = m.qpos0 + 1j


@pytest.mark.parametrize("bad", [True, {}, [1], 1.0, np.array(1), None])
def test_model_id_refuses_what_is_neither_a_name_nor_an_id(bad):
    m = js.models.load("arm2")
    with pytest.raises(TypeError, match="named by its name"):
        m.id("body", bad)

