"""Model/Data plumbing: generated structs are current, buffers are shared, options round-trip."""

import importlib.util
import pathlib

import numpy as np
import pytest

import jointspace as js
from jointspace.io.spec import ModelSpec

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _pendulum():
    spec = ModelSpec()
    b = spec.world.add_body(name="link", pos=np.r_[0, 0, 1.0])
    b.add_joint(type="hinge", name="hinge", axis=np.r_[0, 1.0, 0])
    b.add_geom(type="capsule", size=np.r_[0.05, 0.2, 0], pos=np.r_[0, 0, -0.2])
    b.add_site(name="tip", pos=np.r_[0, 0, -0.4])
    return js.compile_model(spec)


def test_generated_structs_are_current():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "tools" / "gen_structs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = (ROOT / "src" / "jointspace" / "_numba" / "structs.py").read_text()
    assert gen.render() == committed, "run: python tools/gen_structs.py"


def test_generated_entries_are_current():
    spec = importlib.util.spec_from_file_location("gen_entries",
                                                  ROOT / "tools" / "gen_entries.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    paths = gen.files()
    assert any(p.name == "rnea.py" for p in paths)
    for path in paths:
        assert gen.render(path) == path.read_text(), f"run: python tools/gen_entries.py ({path})"


def test_compiled_code_writes_the_arrays_python_sees():
    m = _pendulum()
    d = js.make_data(m)
    xpos = d.xpos
    d.qpos[0] = 0.5
    js.kinematics(m, d)
    assert d.xpos is xpos
    np.testing.assert_allclose(d.site_xpos[0], [-0.4 * np.sin(0.5), 0, 1 - 0.4 * np.cos(0.5)],
                               atol=1e-15)


def test_model_edits_from_python_reach_compiled_code():
    m = _pendulum()
    d = js.make_data(m)
    m.body_pos[1, 2] = 2.0
    js.kinematics(m, d)
    assert d.xpos[1, 2] == 2.0


def test_assigning_a_field_copies_into_its_buffer():
    # compiled code holds the buffers without a reference of its own: a field is never
    # rebound, `d.qpos = q` writes into it (as MuJoCo's bindings do)
    m = _pendulum()
    d = js.make_data(m)
    qpos, body_pos = d.qpos, m.body_pos
    d.qpos = [0.5]
    m.body_pos = np.r_[[[0, 0, 0], [0, 0, 2.0]]]
    assert d.qpos is qpos and m.body_pos is body_pos
    js.kinematics(m, d)
    np.testing.assert_allclose(d.site_xpos[0], [-0.4 * np.sin(0.5), 0, 2 - 0.4 * np.cos(0.5)],
                               atol=1e-15)
    d.qvel = 0.0  # broadcasting, as NumPy's in-place assignment
    assert d.qvel[0] == 0.0
    with pytest.raises(ValueError, match=r"Data.qpos: cannot write .* shape \(1,\)"):
        d.qpos = np.zeros(3)
    with pytest.raises(ValueError, match=r"Data.time: cannot write"):
        d._time = "now"
    with pytest.raises(AttributeError, match="Model.nv is fixed"):
        m.nv = 2
    assert m.nv == 1 and d.qpos is qpos


def test_buffers_outlive_their_model_only_through_a_rebound_data():
    # a Data made for a model that is gone is rebound to the model it is next used with
    import gc

    d = js.make_data(_pendulum())
    gc.collect()
    m = _pendulum()
    m.body_pos[1, 2] = 3.0
    d.qpos[0] = 0.0
    js.kinematics(m, d)
    assert d.xpos[1, 2] == 3.0


def test_deep_copies_are_independent_and_outlive_the_original():
    import copy
    import gc

    m = _pendulum()
    d = js.make_data(m)
    d.qpos[0] = 0.3
    d2 = copy.deepcopy(d)
    m2 = copy.deepcopy(m)
    del d
    gc.collect()
    js.kinematics(m, d2)
    np.testing.assert_allclose(d2.site_xpos[0], [-0.4 * np.sin(0.3), 0, 1 - 0.4 * np.cos(0.3)],
                               atol=1e-15)
    m2.body_pos[1, 2] = 2.0
    assert m.body_pos[1, 2] == 1.0 and m2.opt.timestep == m.opt.timestep
    d3 = js.make_data(m2)
    d3.qpos[0] = 0.3
    js.kinematics(m2, d3)
    assert d3.xpos[1, 2] == 2.0 and d2.xpos[1, 2] == 1.0


def test_pickle_and_copy_carry_model_and_data_exactly():
    # a pickled Model carries its buffers, names and options (no XML); a pickled Data comes
    # back with its model; both step on exactly as the originals do (bitwise)
    import copy
    import pickle

    m = js.models.humanoid()
    m.opt.integrator = "RK4"
    d = js.make_data(m)
    d.ctrl[:] = np.linspace(-0.3, 0.3, m.nu)
    js.step(m, d, 5)
    m2, d2 = pickle.loads(pickle.dumps((m, d)))
    assert d2.model is m2 and m2.opt.integrator == "RK4"
    assert m2.names == m.names and m2.sizes == m.sizes
    m3 = copy.copy(m)
    d3 = copy.copy(d)
    assert d3.model is m and not np.shares_memory(d3.qpos, d.qpos)
    assert not np.shares_memory(m3.body_mass, m.body_mass)
    js.step(m, d, 20)
    js.step(m2, d2, 20)
    js.step(m3, d3, 20)
    for f in ("qpos", "qvel", "qacc", "efc_force", "contact_pos"):
        np.testing.assert_array_equal(getattr(d2, f), getattr(d, f), err_msg=f)
        np.testing.assert_array_equal(getattr(d3, f), getattr(d, f), err_msg=f)
    assert d2.time == d.time
    with pytest.raises(AttributeError, match="read-only"):
        m2.jnt_type = 0
    with pytest.raises(ValueError, match="resize|not own"):
        d2.qpos.resize(1000)
    # a Data pickled alone brings its own copy of the model; the Model alone is small
    d4 = pickle.loads(pickle.dumps(d))
    js.step(d4.model, d4, 1)
    # the arrays with ~100 bytes of pickle framing each (empty tendon fields included)
    own = vars(m._own).values()
    assert len(pickle.dumps(m)) < sum(a.nbytes for a in own) + 100 * len(own) + 4000


def test_struct_references_stay_balanced_across_calls():
    # compiled code does not count references to the structs (their data model counts
    # nothing): unboxing must give back the reference it takes, and a struct boxed from
    # compiled code must hold one of its own, or a struct would leak or be freed under us
    from numba import njit

    m = _pendulum()
    d = js.make_data(m)
    before = (m._s._meminfo.refcount, d._s._meminfo.refcount)
    for _ in range(200):
        js.forward(m, d)
        js.inverse(m, d)
        js.rnea(m, d, d.qpos, d.qvel, d.qacc)
    assert (m._s._meminfo.refcount, d._s._meminfo.refcount) == before

    @njit
    def model_of(ds):
        return ds.model

    again = model_of(d._s)
    assert m._s._meminfo.refcount == before[0] + 1
    del again
    assert m._s._meminfo.refcount == before[0]
    js.kinematics(m, d)  # the model struct is still alive and whole
    assert d.xpos[1, 2] == 1.0


def test_struct_unboxing_layout_is_checked(monkeypatch):
    # kernels read a struct's MemInfo pointer at fixed byte offsets in the proxy and in
    # Numba's MemInfo object; the first struct built checks them against the live objects
    from jointspace._numba import structs

    m = _pendulum()
    structs._check_proxy_layout(m._s)
    structs._check_proxy_layout(js.make_data(m)._s)
    monkeypatch.setattr(structs, "_PROXY_MEMINFO", structs._PROXY_MEMINFO + 8)
    with pytest.raises(RuntimeError, match="not laid out as jointspace's compiled code"):
        structs._check_proxy_layout(m._s)


def test_options_round_trip():
    m = _pendulum()
    m.opt.timestep = 0.001
    assert m.opt.timestep == 0.001 and m.opt_timestep[0] == 0.001
    m.opt.integrator = "RK4"
    assert m.opt.integrator == "RK4"
    with pytest.raises(ValueError, match="integrator must be one of"):
        m.opt.integrator = "rk4"
    with pytest.raises(ValueError, match="timestep must be positive"):
        m.opt.timestep = 0.0
    with pytest.raises(AttributeError, match="no field 'timstep'"):
        m.opt.timstep = 1


def test_names_and_ids():
    m = _pendulum()
    assert m.body("link") == 1 and m.joint("hinge") == 0 and m.site("tip") == 0
    assert m.names["body"][0] == "world"
    with pytest.raises(KeyError, match="did you mean 'link'"):
        m.body("lnk")
    with pytest.raises(KeyError, match="unknown element kind"):
        m.id("bodies", "link")


def test_make_data_rejects_non_models():
    with pytest.raises(TypeError, match="make_data expects a jointspace Model"):
        js.make_data("humanoid")
