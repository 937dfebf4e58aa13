"""Model and Data travel: pickle, copy.copy and copy.deepcopy (issue 20).

A pickle carries the arrays (no XML, no struct); unpickling rebuilds the struct over buffers
of its own, so the copy steps bitwise as the original does and keeps every read-only flag
and memory-safety guarantee (docs/architecture.md, "Memory safety"). The oracle is the
original object: every comparison here is exact.
"""

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest

import jointspace as js
from jointspace.types import DATA_FIELDS, MODEL_FIELDS

SCRATCH = [name for name, *_ in DATA_FIELDS if name.startswith("scratch_")]


@pytest.fixture(scope="module")
def humanoid_running():
    """The humanoid after 30 steps under random controls: contacts and rows in use."""
    m = js.models.humanoid()
    d = js.make_data(m)
    rng = np.random.default_rng(0)
    d.qvel[6:] = 0.3 * rng.normal(size=m.nv - 6)  # the hinges; the root rests on its feet
    for _ in range(30):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        js.step(m, d)
    assert d.ncon[0] > 0 and d.nefc[0] > 0
    return m, d


def _run(m, d, nstep, seed):
    """Step d nstep times under seeded random controls; the states passed through."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(nstep):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        js.step(m, d)
        out.append(np.concatenate([[d.time], d.qpos, d.qvel, d.qacc, d.qacc_warmstart]))
    return np.array(out)


def _same_fields(a, b, fields, skip=()):
    for name, *_ in fields:
        if name in skip:
            continue
        key = "_time" if name == "time" else name
        x, y = getattr(a, key), getattr(b, key)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x, y, equal_nan=True), name
        assert x.flags.writeable == y.flags.writeable, name


def test_model_pickle_is_the_arrays_without_xml(humanoid_running):
    m, _ = humanoid_running
    blob = pickle.dumps(m)
    arrays = sum(getattr(m, name).nbytes for name, *_ in MODEL_FIELDS)
    # the arrays (with ~60 bytes of pickle framing each), names and a few attributes
    assert len(blob) < arrays + 100 * len(MODEL_FIELDS) + 4000
    assert b"worldbody" not in blob and b"<geom" not in blob  # no XML travels
    m2 = pickle.loads(blob)
    assert m2 is not m and m2._s is not m._s
    _same_fields(m, m2, MODEL_FIELDS)
    assert (m2.sizes, m2.names, m2.source, m2.warnings, m2.singular_dofs) == (
        m.sizes, m.names, m.source, m.warnings, m.singular_dofs)
    assert repr(m2.opt) == repr(m.opt) and m2.body("head") == m.body("head")


def test_unpickled_pair_steps_bitwise_like_the_original(humanoid_running):
    m, d = humanoid_running
    m1, d1 = copy.deepcopy((m, d))  # the original goes on from the same state
    m2, d2 = pickle.loads(pickle.dumps((m, d)))
    assert d2.model is m2 and d2._ms is m2._s
    _same_fields(d1, d2, DATA_FIELDS, skip=SCRATCH)
    a = _run(m1, d1, 60, seed=1)
    b = _run(m2, d2, 60, seed=1)
    assert np.array_equal(a, b)
    _same_fields(d1, d2, DATA_FIELDS, skip=SCRATCH)  # every field, stale rows included


def test_data_pickle_is_small_and_gives_back_every_field(humanoid_running):
    m, d = humanoid_running
    nbytes = sum(getattr(d._own, "_time" if n == "time" else n).nbytes
                 for n, *_ in DATA_FIELDS)
    blob = pickle.dumps(d)
    assert len(blob) < nbytes / 3  # the rows in use of efc_* and contact_*, no scratch
    d2 = pickle.loads(blob)
    _same_fields(d, d2, DATA_FIELDS, skip=SCRATCH)
    assert not d2.scratch_vv.any()


def test_unpickled_objects_keep_the_read_only_fields(humanoid_running):
    m, d = humanoid_running
    m2, d2 = pickle.loads(pickle.dumps((m, d)))
    assert not d2.ncon.flags.writeable and not m2.body_parentid.flags.writeable
    assert not m2.dof_M0.flags.writeable and d2.eq_active.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        d2.ncon[0] = 2**31 - 1
    with pytest.raises(AttributeError, match="read-only"):
        m2.body_parentid = 0
    with pytest.raises(ValueError):
        d2.contact_pos.resize((1, 3))
    with pytest.raises(ValueError):
        m2.body_parentid.base.resize((1,))
    with pytest.raises(AttributeError, match="fixed"):
        m2.nv = 3
    m2.opt.timestep = 0.001  # options still reach compiled code through m.opt
    js.step(m2, d2)
    assert d2.time == pytest.approx(d.time + 0.001)


def test_zero_copy_read_only_buffers_become_buffers_of_its_own(humanoid_running):
    """Ray hands arrays back as read-only views of its object store (pickle protocol 5)."""
    m, d = humanoid_running
    buffers = []
    blob = pickle.dumps((m, d), protocol=5, buffer_callback=buffers.append)
    assert buffers  # the arrays travelled out of band
    m2, d2 = pickle.loads(blob, buffers=[b.raw().toreadonly() for b in buffers])
    assert m2.body_mass.flags.writeable and d2.qpos.flags.writeable
    assert m2._own.body_parentid.flags.owndata and m2._own.body_parentid.flags.writeable
    m2.body_mass[1] *= 2.0  # the copy's own buffer: the original does not change
    assert m2.body_mass[1] == 2.0 * m.body_mass[1]
    js.step(m2, d2, 3)


def test_copy_copy_shares_the_model_and_deepcopy_copies_it(humanoid_running):
    m, d = humanoid_running
    m_copy = copy.copy(m)  # as MuJoCo's MjModel: a model of its own
    assert m_copy._s is not m._s and not np.shares_memory(m_copy.body_mass, m.body_mass)
    d_copy = copy.copy(d)
    assert d_copy.model is m and not np.shares_memory(d_copy.qpos, d.qpos)
    _same_fields(d, d_copy, DATA_FIELDS)
    d_deep = copy.deepcopy(d)
    assert d_deep.model is not m and d_deep._ms is d_deep.model._s
    base = copy.deepcopy(d)
    a = _run(m, base, 20, seed=2)
    assert np.array_equal(a, _run(m, d_copy, 20, seed=2))
    assert np.array_equal(a, _run(d_deep.model, d_deep, 20, seed=2))
    m_copy.opt.timestep = 0.001
    assert m.opt.timestep != 0.001


def test_a_rebound_data_pickles_with_the_model_it_was_last_used_with():
    m = js.models.pendulum(2)
    m_other = copy.deepcopy(m)
    m_other.body_mass[1] = 3.0
    d = js.make_data(m)
    js.step(m_other, d)  # rebinds d to m_other (same sizes)
    d2 = pickle.loads(pickle.dumps(d))
    assert d2.model.body_mass[1] == 3.0


def test_unpickled_in_another_process_steps_bitwise(tmp_path, humanoid_running):
    m, d = humanoid_running
    m1, d1 = copy.deepcopy((m, d))
    path = tmp_path / "pair.pkl"
    path.write_bytes(pickle.dumps((m, d)))
    code = ("import pickle, sys\nimport jointspace as js\n"
            "m, d = pickle.loads(open(sys.argv[1], 'rb').read())\n"
            "js.step(m, d, 40)\n"
            "open(sys.argv[1], 'wb').write(pickle.dumps(d))\n")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    d2 = pickle.loads(path.read_bytes())
    js.step(m1, d1, 40)
    for name in ("qpos", "qvel", "qacc", "qacc_warmstart", "time"):
        assert np.array_equal(getattr(d1, name), getattr(d2, name)), name


def test_unpickling_refuses_a_field_of_the_wrong_shape(humanoid_running):
    m, d = humanoid_running
    fn, (model, fields) = d.__reduce__()
    bad = dict(fields, qpos=np.zeros(3))
    with pytest.raises(ValueError, match="qpos"):
        fn(model, bad)
    fn, (sizes, arrays, names, extra) = m.__reduce__()
    with pytest.raises(ValueError, match="body_mass"):
        fn(sizes, dict(arrays, body_mass=np.zeros(2)), names, dict(extra))
