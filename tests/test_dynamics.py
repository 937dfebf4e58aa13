"""Smooth dynamics (rnea, crba, factor_m/solve_m, aba, minv) against MuJoCo and each other.

MuJoCo is the oracle for MJCF (DESIGN.md §5): each model is loaded from the same XML by both
libraries and compared at random states. MuJoCo's mj_rne leaves armature out of M qacc, so
its result plus armature · qacc is what our rnea returns.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceWarning, SingularMassError
from tests._models import random_state, random_tree
from tests.mjcf_cases import CASES

TOL = 1e-9  # relative to the largest entry: the same float64 products in another order
NSTATES = 50

RANDOM_TREES = {
    f"tree{seed}": dict(seed=seed, nbody=n, branching=br, armature=arm)
    for seed, n, br, arm in [(0, 4, 0.0, 0.0), (1, 8, 0.4, 0.0), (2, 12, 0.6, 0.02),
                             (3, 16, 0.3, 0.0), (4, 10, 0.8, 0.1), (5, 20, 0.5, 0.01)]
}
MODELS = {**CASES, **{k: random_tree(**v) for k, v in RANDOM_TREES.items()},
          "humanoid": js.models.xml("humanoid"), "chain": js.models.xml("chain", n=12),
          "quadruped": js.models.xml("quadruped")}


def _close(actual, desired, what, tol=TOL):
    """Assert |actual - desired| <= tol · max(1, max |desired|)."""
    scale = max(1.0, float(np.max(np.abs(desired)))) if np.size(desired) else 1.0
    err = float(np.max(np.abs(np.asarray(actual) - desired))) if np.size(desired) else 0.0
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


def _load(name):
    xml = MODELS[name]
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def _states(m, seed, n=NSTATES):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q, v, a = random_state(m, rng)
        yield q, v, a, rng


def _mj_forward(mm, md, q, v, tau=None, f_ext=None):
    md.qpos[:] = q
    md.qvel[:] = v
    md.qfrc_applied[:] = 0.0 if tau is None else tau
    md.xfrc_applied[:] = 0.0 if f_ext is None else f_ext
    md.ctrl[:] = 0.0
    mujoco.mj_forward(mm, md)


def _mj_fullM(mm, md):
    M = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, md, M)
    return M


def _mj_jt_f(mm, md, f_ext):
    """Generalized force Jᵀ f of world wrenches f_ext (force, torque) at each body's com."""
    out = np.zeros(mm.nv)
    for b in range(1, mm.nbody):
        mujoco.mj_applyFT(mm, md, f_ext[b, :3], f_ext[b, 3:], md.xipos[b], b, out)
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_crba_and_bias_match_mujoco(name):
    """M (dense and sparse qM) equals mj_fullM, bias_forces equals qfrc_bias, gravity too."""
    m, d, mm, md = _load(name)
    for q, v, _, _ in _states(m, 1):
        _mj_forward(mm, md, q, v)
        M = js.crba(m, d, q)
        _close(M, _mj_fullM(mm, md), f"{name} crba")
        _close(d.qM[m.dof_Madr], np.diag(M), f"{name} qM diagonal")
        _close(js.bias_forces(m, d, q, v), md.qfrc_bias, f"{name} bias_forces")
        _close(d.qfrc_bias, md.qfrc_bias, f"{name} d.qfrc_bias")
        _mj_forward(mm, md, q, np.zeros(m.nv))
        _close(js.gravity_forces(m, d, q), md.qfrc_bias, f"{name} gravity_forces")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_rnea_matches_mujoco(name):
    """rnea(q, v, a, f_ext) = mj_rne(flg_acc=1) + armature·a - Jᵀ f_ext."""
    m, d, mm, md = _load(name)
    out = np.zeros(m.nv)
    for q, v, a, rng in _states(m, 2):
        f_ext = rng.normal(size=(m.nbody, 6))
        _mj_forward(mm, md, q, v)
        md.qacc[:] = a
        mujoco.mj_rne(mm, md, 1, out)
        ref = out + mm.dof_armature * a
        _close(js.rnea(m, d, q, v, a), ref, f"{name} rnea")
        _close(js.rnea(m, d, q, v, a, f_ext), ref - _mj_jt_f(mm, md, f_ext),
               f"{name} rnea with f_ext")
        np.testing.assert_array_equal(d.qacc, a)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_aba_matches_mujoco(name):
    """aba(q, v, tau, f_ext) equals MuJoCo's qacc_smooth with qfrc_applied = tau.

    MuJoCo adds its passive and actuator forces; we pass them to aba inside tau.
    """
    m, d, mm, md = _load(name)
    for q, v, _, rng in _states(m, 3):
        tau = rng.normal(size=m.nv)
        f_ext = rng.normal(size=(m.nbody, 6))
        _mj_forward(mm, md, q, v, tau, f_ext)
        qacc = js.aba(m, d, q, v, tau + md.qfrc_passive + md.qfrc_actuator, f_ext)
        _close(qacc, md.qacc_smooth, f"{name} aba")
        np.testing.assert_array_equal(d.qacc, qacc)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_factor_and_minv_match_mujoco(name):
    """solve_m equals mj_solveM (vector and matrix right-hand sides); minv equals M⁻¹."""
    m, d, mm, md = _load(name)
    for q, v, _, rng in _states(m, 4):
        _mj_forward(mm, md, q, v)
        js.crba(m, d, q)
        js.factor_m(m, d)
        rhs = rng.normal(size=(3, m.nv))
        ref = np.zeros_like(rhs)
        mujoco.mj_solveM(mm, md, ref, rhs)
        _close(js.solve_m(m, d, rhs), ref, f"{name} solve_m (matrix)")
        _close(js.solve_m(m, d, rhs[1]), ref[1], f"{name} solve_m (vector)")
        minv_ref = np.zeros((m.nv, m.nv))
        mujoco.mj_solveM(mm, md, minv_ref, np.eye(m.nv))
        _close(js.minv(m, d, q), minv_ref, f"{name} minv")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_mul_m_matches_crba_and_mujoco(name):
    """mul_m(q, x) = crba(q) x = MuJoCo's mj_mulM; arguments converted and named as elsewhere."""
    m, d, mm, md = _load(name)
    for q, v, _, rng in _states(m, 15, n=5):
        x = rng.normal(size=m.nv)
        y = js.mul_m(m, d, q, x)
        _close(y, js.crba(m, d, q) @ x, f"{name} mul_m vs crba")
        _mj_forward(mm, md, q, v)
        ref = np.zeros(m.nv)
        mujoco.mj_mulM(mm, md, ref, x)
        _close(y, ref, f"{name} mul_m vs mj_mulM")
    np.testing.assert_array_equal(js.mul_m(m, d, list(q), x.astype(np.float32).tolist()),
                                  js.mul_m(m, d, q, x.astype(np.float32)))
    np.testing.assert_array_equal(js.mul_m(m, d, q, np.repeat(x, 2)[::2]), y)
    with pytest.raises(ValueError, match=r"mul_m: argument x must have shape"):
        js.mul_m(m, d, q, x[:-1])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_algorithms_agree(name):
    """M = RNEA columns; aba(rnea(a)) = a; M⁻¹ M = I; solve_m(M x) = x; nle, gravity."""
    m, d, _, _ = _load(name)
    nv = m.nv
    zero = np.zeros(nv)
    for q, v, a, rng in _states(m, 5, n=10):
        M = js.crba(m, d, q)
        tau0 = js.rnea(m, d, q, zero, zero)
        cols = np.stack([js.rnea(m, d, q, zero, e) - tau0 for e in np.eye(nv)], axis=1)
        _close(cols, M, f"{name} M vs RNEA columns")
        f_ext = rng.normal(size=(m.nbody, 6))
        tau = js.rnea(m, d, q, v, a, f_ext)
        _close(js.aba(m, d, q, v, tau, f_ext), a, f"{name} aba(rnea(a))")
        Minv = js.minv(m, d, q)
        _close(Minv @ M, np.eye(nv), f"{name} minv @ crba")
        _close(Minv, Minv.T, f"{name} minv symmetric", tol=0)
        js.factor_m(m, d, q)
        x = rng.normal(size=(4, nv))
        _close(js.solve_m(m, d, x @ M), x, f"{name} solve_m(M x)")
        _close(js.bias_forces(m, d, q, v), js.rnea(m, d, q, v, zero), f"{name} nle")
        _close(js.gravity_forces(m, d, q), tau0, f"{name} gravity")


def test_factor_m_layout_reconstructs_m():
    """The factor holds L below the diagonal and D on it, M = Lᵀ D L, in qM's layout."""
    m, d, _, _ = _load("tree2")
    q, _, _, _ = next(_states(m, 6, n=1))
    M = js.crba(m, d, q)
    js.factor_m(m, d)
    L = np.eye(m.nv)
    D = np.zeros(m.nv)
    for i in range(m.nv):
        adr = m.dof_Madr[i]
        D[i] = d.qLD[adr]
        j = m.dof_parentid[i]
        while j >= 0:
            adr += 1
            L[i, j] = d.qLD[adr]
            j = m.dof_parentid[j]
    _close(L.T @ np.diag(D) @ L, M, "Lᵀ D L")
    np.testing.assert_allclose(d.qLDiagInv, 1.0 / D, rtol=1e-15)


def test_factor_m_at_q_equals_crba_then_factor():
    """factor_m(m, d, q) is crba at q followed by factor_m(m, d)."""
    m, d, _, _ = _load("humanoid")
    q, _, _, _ = next(_states(m, 7, n=1))
    js.crba(m, d, q)
    js.factor_m(m, d)
    ld = d.qLD.copy()
    d2 = js.make_data(m)
    js.factor_m(m, d2, q)
    np.testing.assert_array_equal(d2.qLD, ld)


# ---------------------------------------------------------------------------------------------
# bad input


def test_wrong_shapes_name_the_argument():
    """Shape errors name the function and the argument; wrong Model/Data pairs are refused."""
    m, d, _, _ = _load("branched")
    q, v, a = m.qpos0, np.zeros(m.nv), np.zeros(m.nv)
    with pytest.raises(ValueError, match=r"rnea: argument q must have shape"):
        js.rnea(m, d, q[:-1], v, a)
    with pytest.raises(ValueError, match=r"rnea: argument a must have shape"):
        js.rnea(m, d, q, v, np.zeros(m.nv + 1))
    with pytest.raises(ValueError, match=r"rnea: argument f_ext must have shape"):
        js.rnea(m, d, q, v, a, np.zeros((m.nbody, 3)))
    with pytest.raises(ValueError, match=r"aba: argument tau must have shape"):
        js.aba(m, d, q, v, np.zeros(2))
    with pytest.raises(ValueError, match=r"bias_forces: argument v must have shape"):
        js.bias_forces(m, d, q, np.zeros((m.nv, 1)))
    with pytest.raises(ValueError, match=r"minv: argument q must have shape"):
        js.minv(m, d, np.zeros(3))
    js.factor_m(m, d, q)
    with pytest.raises(ValueError, match=r"solve_m: argument x must have shape"):
        js.solve_m(m, d, np.zeros((2, m.nv + 1)))
    with pytest.raises(ValueError, match="different model"):
        js.crba(m, js.make_data(js.load_string(MODELS["tree1"])), q)
    with pytest.raises(TypeError, match="gravity_forces: first argument must be"):
        js.gravity_forces(d, d, q)


def test_lists_and_integer_arrays_are_accepted():
    """Lists, non-contiguous views and integer arrays are converted, not refused."""
    m, d, _, _ = _load("tree1")
    q, v, a, _ = next(_states(m, 8, n=1))
    ref = js.rnea(m, d, q, v, a)
    _close(js.rnea(m, d, list(q), v.tolist(), a[::-1].copy()[::-1]), ref, "rnea from lists")
    np.testing.assert_array_equal(js.rnea(m, d, q, np.zeros(m.nv, dtype=int),
                                          np.zeros(m.nv, dtype=int)),
                                  js.gravity_forces(m, d, q))


def test_strided_views_match_contiguous_arrays():
    """Vector arguments compiled for any stride: every-other-element and reversed views."""
    m, d, _, _ = _load("tree1")
    q, v, a, _ = next(_states(m, 9, n=1))

    def every_other(x):
        return np.repeat(x, 2)[::2]

    def reversed_view(x):
        return x[::-1].copy()[::-1]

    for view in (every_other, reversed_view):
        qs, vs, as_ = view(q), view(v), view(a)
        assert not qs.flags.c_contiguous
        np.testing.assert_array_equal(js.rnea(m, d, qs, vs, as_), js.rnea(m, d, q, v, a))
        np.testing.assert_array_equal(js.bias_forces(m, d, qs, vs), js.bias_forces(m, d, q, v))
        np.testing.assert_array_equal(js.gravity_forces(m, d, qs), js.gravity_forces(m, d, q))
        np.testing.assert_array_equal(js.crba(m, d, qs), js.crba(m, d, q))
        np.testing.assert_array_equal(js.aba(m, d, qs, vs, as_), js.aba(m, d, q, v, a))
        np.testing.assert_array_equal(js.minv(m, d, qs), js.minv(m, d, q))
        js.factor_m(m, d, qs)
        x1 = js.solve_m(m, d, vs)
        js.factor_m(m, d, q)
        np.testing.assert_array_equal(x1, js.solve_m(m, d, v))


class _Sub(np.ndarray):
    """An ndarray subclass: not an exact ndarray, so the compiled checks refuse it."""


def _unaligned(x):
    """x's values in a float64 array whose data pointer is not 8-byte aligned."""
    raw = np.zeros(x.size * 8 + 1, dtype=np.uint8)
    y = raw[1:].view(np.float64).reshape(x.shape)
    y[...] = x
    assert not y.flags.aligned
    return y


def _read_only(x):
    y = x.copy()
    y.flags.writeable = False
    return y


@pytest.mark.parametrize("kind", ["float32", "big-endian", "unaligned", "subclass", "list",
                                  "read-only", "column"])
def test_arguments_in_any_form_give_the_plain_result(kind):
    """Arguments the compiled checks refuse, or accept in place, give the plain call's result.

    The wrappers first hand the caller's arrays to compiled code, whose unboxing refuses
    anything but an aligned float64 ndarray of the right rank (jointspace._numba.entry) and reads
    read-only and Fortran-ordered inputs in place; the converted retry must be bit-identical,
    and the internal miss must never reach the user.
    """
    m, d, _, _ = _load("tree2")
    q, v, a, rng = next(_states(m, 12, n=1))
    fext = rng.standard_normal((m.nbody, 6))
    convert = {"float32": lambda x: x.astype(np.float32),
               "big-endian": lambda x: x.astype(">f8"), "unaligned": _unaligned,
               "subclass": lambda x: x.copy().view(_Sub), "list": lambda x: x.tolist(),
               "read-only": _read_only, "column": lambda x: np.asfortranarray(x)}[kind]
    if kind == "float32":
        q, v, a, fext = (x.astype(np.float32).astype(np.float64) for x in (q, v, a, fext))
    cq, cv, ca, cf = convert(q), convert(v), convert(a), convert(fext)
    np.testing.assert_array_equal(js.rnea(m, d, cq, cv, ca), js.rnea(m, d, q, v, a))
    np.testing.assert_array_equal(js.rnea(m, d, q, v, a, cf), js.rnea(m, d, q, v, a, fext))
    np.testing.assert_array_equal(js.bias_forces(m, d, cq, cv), js.bias_forces(m, d, q, v))
    np.testing.assert_array_equal(js.gravity_forces(m, d, cq), js.gravity_forces(m, d, q))
    np.testing.assert_array_equal(js.crba(m, d, cq), js.crba(m, d, q))
    np.testing.assert_array_equal(js.aba(m, d, cq, cv, ca, cf), js.aba(m, d, q, v, a, fext))
    np.testing.assert_array_equal(js.minv(m, d, cq), js.minv(m, d, q))
    js.factor_m(m, d, cq)
    x1 = js.solve_m(m, d, ca)
    x2 = js.solve_m(m, d, convert(np.stack([a, v])))
    js.factor_m(m, d, q)
    np.testing.assert_array_equal(x1, js.solve_m(m, d, a))
    np.testing.assert_array_equal(x2, js.solve_m(m, d, np.stack([a, v])))


def test_arguments_that_are_not_arrays_of_floats_are_named():
    """Values NumPy cannot turn into floats raise a TypeError naming function and argument."""
    m, d, _, _ = _load("tree1")
    q, v, a = m.qpos0, np.zeros(m.nv), np.zeros(m.nv)
    with pytest.raises(TypeError, match=r"rnea: argument v must be an array of floats"):
        js.rnea(m, d, q, ["x"] * m.nv, a)
    with pytest.raises(TypeError, match=r"minv: argument q must be an array of floats"):
        js.minv(m, d, {"q": 1})
    with pytest.raises(ValueError, match=r"crba: argument q must have shape"):
        js.crba(m, d, None)
    with pytest.raises(ValueError, match=r"aba: argument q must have shape"):
        js.aba(m, d, q.reshape(1, -1), v, a)


def test_valid_arguments_pass_the_compiled_checks():
    """Aligned float64 arrays of any stride cross without a miss (the fast path is taken)."""
    from jointspace._numba import entry
    from jointspace._numba.entry import FastPathMiss
    from jointspace.dynamics import minv as minv_mod
    from jointspace.dynamics import rnea as rnea_mod

    m, d, _, _ = _load("tree1")
    q, v, a, _ = next(_states(m, 14, n=1))
    js.rnea(m, d, q, v, a)
    js.minv(m, d, q)
    # a kernel's name stays its Kernel; the wrappers call the entry point it holds
    assert type(rnea_mod._k_rnea) is entry.Kernel and type(minv_mod._k_minv) is entry.Kernel
    strided = np.repeat(v, 2)[::2]
    try:
        assert rnea_mod._k_rnea.ep(d._s, q, strided, a, rnea_mod._ALL, d.cfrc_ext,
                                   np.empty(m.nv)) == entry.OK
        assert minv_mod._k_minv.ep(d._s, q, np.empty((m.nv, m.nv))) == entry.OK
    except FastPathMiss:
        pytest.fail("valid arrays missed the compiled checks")
    with pytest.raises(FastPathMiss):
        rnea_mod._k_rnea.ep(d._s, q, v.astype(np.float32), a, rnea_mod._ALL, d.cfrc_ext,
                            np.empty(m.nv))
    with pytest.raises(FastPathMiss):  # outputs must be C-contiguous
        minv_mod._k_minv.ep(d._s, q, np.empty((m.nv, m.nv)).T)
    assert rnea_mod._k_rnea.ep(d._s, q[:-1], v, a, rnea_mod._ALL, d.cfrc_ext,
                               np.empty(m.nv)) == entry.BAD_SHAPE


def test_calls_leave_their_arguments_reference_counts_alone():
    """Compiled checks borrow the caller's arrays: no reference is taken or dropped."""
    import sys

    m, d, _, _ = _load("tree1")
    q, v, a, rng = next(_states(m, 13, n=1))
    fext = rng.standard_normal((m.nbody, 6))
    js.factor_m(m, d, q)
    before = [sys.getrefcount(x) for x in (q, v, a, fext)]
    for _ in range(200):
        js.rnea(m, d, q, v, a, fext)
        js.aba(m, d, q, v, a, fext)
        js.minv(m, d, q)
        js.crba(m, d, q)
        js.solve_m(m, d, a)
    assert [sys.getrefcount(x) for x in (q, v, a, fext)] == before


def test_data_used_with_another_model_of_its_sizes_follows_that_model():
    """d carries its model into compiled code; handed another model it computes with that one."""
    m1, d1, _, _ = _load("tree1")
    m2 = js.load_string(MODELS["tree1"])
    m2.dof_armature[:] += 0.5
    q, v, a, _ = next(_states(m1, 10, n=1))
    own = js.rnea(m1, d1, q, v, a)
    other = js.rnea(m2, d1, q, v, a)
    np.testing.assert_array_equal(other, js.rnea(m2, js.make_data(m2), q, v, a))
    # armature adds armature · a to each joint's torque
    np.testing.assert_allclose(other - own, 0.5 * a, rtol=0, atol=TOL)
    js.factor_m(m2, d1, q)
    np.testing.assert_allclose(js.solve_m(m2, d1, js.crba(m2, d1, q) @ a), a, rtol=0, atol=TOL)
    np.testing.assert_array_equal(js.rnea(m1, d1, q, v, a), own)


@pytest.mark.parametrize("name", ["tree1", "humanoid"])
def test_M_col_names_the_column_of_every_qM_entry(name):
    """Scattering qM by M_col rebuilds crba's dense M (built by walking dof_parentid)."""
    m, d, _, _ = _load(name)
    q, _, _, _ = next(_states(m, 11, n=1))
    dense = js.crba(m, d, q)
    rebuilt = np.zeros((m.nv, m.nv))
    ends = list(m.dof_Madr[1:]) + [m.nM]
    for i in range(m.nv):
        assert m.M_col[m.dof_Madr[i]] == i
        for adr in range(m.dof_Madr[i], ends[i]):
            j = m.M_col[adr]
            rebuilt[i, j] = rebuilt[j, i] = d.qM[adr]
    np.testing.assert_array_equal(rebuilt, dense)


def test_solve_m_needs_a_factorization():
    """solve_m on a Data that factor_m never ran on refuses instead of returning zeros."""
    m, d, _, _ = _load("tree1")
    with pytest.raises(RuntimeError, match="call factor_m"):
        js.solve_m(m, d, np.ones(m.nv))



def test_actuator_armature_counts_for_the_singular_check_as_for_m():
    """An actuator's armature lifts the singular flag once set_const lists it, as M gets it.

    MuJoCo 4.0 adds actuator armature through jnt_actuatorid (set by mj_setConst): given to
    an actuator that had none, it reaches M, and so the check, only after set_const.
    """
    xml = SINGULAR_XML.replace("</mujoco>",
                               '<actuator><motor joint="massless" gear="2"/></actuator></mujoco>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = js.load_string(xml)
    d = js.make_data(m)
    m.actuator_armature[0] = 0.1
    assert m.jnt_actuatorid[1] == -1
    assert js.crba(m, d, m.qpos0)[1, 1] == 0.0  # M has no armature yet, nor may the check
    with pytest.raises(SingularMassError, match="'massless'"):
        js.minv(m, d, m.qpos0)
    js.set_const(m)
    assert m.jnt_actuatorid[1] == 0
    M = js.crba(m, d, m.qpos0)
    assert M[1, 1] >= 0.4  # armature 0.1 times gear 2 squared
    _close(js.minv(m, d, m.qpos0) @ M, np.eye(m.nv), "minv with actuator armature")


SINGULAR_XML = """
<mujoco>
  <worldbody>
    <body name="arm">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      <body name="ghost" pos="0.5 0 0">
        <joint name="massless" type="hinge" axis="0 1 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# two hinges with the same axis through the same anchor: each dof moves mass, but M has
# identical rows, so only the factorization finds the singularity
DEPENDENT_XML = """
<mujoco>
  <worldbody>
    <body name="arm">
      <joint name="h1" type="hinge" axis="0 0 1"/>
      <joint name="h2" type="hinge" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_singular_model_refuses_inverse_but_keeps_inverse_dynamics():
    """A dof that moves no mass: aba, minv and factor_m raise SingularMassError naming it.

    rnea and crba still work (M has a zero row).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = js.load_string(SINGULAR_XML)
    d = js.make_data(m)
    q, v = m.qpos0, np.ones(m.nv)
    M = js.crba(m, d, q)
    assert M[1, 1] == 0.0 and M[0, 0] > 0
    assert np.all(np.isfinite(js.rnea(m, d, q, v, v)))
    for call in (lambda: js.aba(m, d, q, v, v), lambda: js.minv(m, d, q),
                 lambda: js.factor_m(m, d, q)):
        with pytest.raises(SingularMassError, match="'massless'"):
            call()


def test_dependent_dofs_raise_from_the_pivot():
    """Dependent dofs pass the compiler's check; the zero pivot is caught, never a NaN."""
    m = js.load_string(DEPENDENT_XML)
    d = js.make_data(m)
    q, v = m.qpos0, np.ones(m.nv)
    M = js.crba(m, d, q)
    assert np.all(np.diag(M) > 0)
    for call in (lambda: js.aba(m, d, q, v, v), lambda: js.minv(m, d, q),
                 lambda: js.factor_m(m, d, q)):
        with pytest.raises(SingularMassError, match="pivot"):
            call()
    with pytest.raises(RuntimeError, match="call factor_m"):
        js.solve_m(m, d, v)


def test_armature_makes_the_singular_model_invertible():
    """Armature added after compilation lifts the compiler's singular flag."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = js.load_string(SINGULAR_XML)
    m.dof_armature[:] = 0.1
    d = js.make_data(m)
    M = js.crba(m, d, m.qpos0)
    _close(js.minv(m, d, m.qpos0) @ M, np.eye(m.nv), "minv with armature")
