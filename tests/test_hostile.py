"""Hostile input gets our own clear error, never a foreign exception, a hang or a silent result.

Regression tests of issue 18 ("Memory safety and hostile input"), one section per report:
deep trees, massless moving bodies, overflowing sizes, non-finite IK arguments, complex
arrays, bad element ids and counts, and the rigid-contact inverse's gap gain. Repros that
could hang or crash the interpreter run in a subprocess with a timeout, so that a hang or a
crash fails the test instead of ending the run.
"""

import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceWarning, ModelError, SingularMassError
from jointspace.ik import Target, ik

SUBPROCESS_TIMEOUT = 300  # s: a cold cache compiles the kernels inside the subprocess
DEPTH = 10_000  # bodies in the deep chains: ten times the depth that broke the recursion
SPACING = 0.01  # m between bodies of the deep chains
JOINT_EVERY = 100  # a joint on every 100th body: 100 dofs keep M (nv² / 2) small and loading fast


def _run(code):
    """Run code in a fresh interpreter; return (exit status, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=SUBPROCESS_TIMEOUT)
    return r.returncode, r.stdout, r.stderr


# ---------------------------------------------------------------------------------------------
# 1. trees deeper than Python's recursion limit


def _deep_mjcf(n):
    parts = ["<mujoco><worldbody>"]
    for i in range(n):
        joint = '<joint type="hinge" axis="0 1 0"/>' if i % JOINT_EVERY == 0 else ""
        parts.append(f'<body name="b{i}" pos="0 0 {SPACING}">{joint}'
                     f'<geom type="sphere" size="0.005" mass="0.01"/>')
    parts.append("</body>" * n + "</worldbody></mujoco>")
    return "".join(parts)


def _deep_urdf(n):
    inertial = ('<inertial><mass value="0.01"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6" '
                'ixy="0" ixz="0" iyz="0"/></inertial>')
    parts = [f'<robot name="deep"><link name="l0">{inertial}</link>']
    for i in range(1, n + 1):
        kind = "revolute" if i % JOINT_EVERY == 0 else "fixed"
        parts.append(f'<link name="l{i}">{inertial}</link><joint name="j{i}" type="{kind}">'
                     f'<parent link="l{i - 1}"/><child link="l{i}"/><origin xyz="0 0 {SPACING}"/>'
                     '<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                     '</joint>')
    parts.append("</robot>")
    return "".join(parts)


def test_mjcf_chain_10000_bodies_deep_loads():
    """A chain 1,000 bodies deep raised RecursionError in io/mjcf.py and io/compile.py."""
    m = js.load_string(_deep_mjcf(DEPTH))
    assert m.nbody == DEPTH + 1 and m.nv == DEPTH // JOINT_EVERY
    np.testing.assert_array_equal(m.body_parentid, np.r_[0, np.arange(DEPTH)])
    assert m.jnt_bodyid[1] == 1 + JOINT_EVERY and m.names["body"][-1] == f"b{DEPTH - 1}"
    d = js.make_data(m)
    js.kinematics(m, d)
    assert d.xpos[-1, 2] == pytest.approx(DEPTH * SPACING, rel=1e-12)


def test_urdf_chain_10000_links_deep_loads():
    """The URDF reader walks iteratively; its fixed joints merge links into 100 bodies."""
    m = js.load_string(_deep_urdf(DEPTH))
    assert m.nv == DEPTH // JOINT_EVERY and m.nbody == 2 + DEPTH // JOINT_EVERY
    np.testing.assert_array_equal(m.body_parentid, np.r_[0, np.arange(m.nbody - 1)])
    assert m.body_mass[1] == pytest.approx(0.01 * JOINT_EVERY)  # l0 … l99 merged


def test_deep_frames_defaults_and_includes_load():
    """Nested <frame>, <default> and <include> were walked recursively too."""
    n = 3000
    frames = ('<mujoco><worldbody><body name="b"><joint type="slide"/>'
              + '<frame pos="0 0 0.001">' * n + '<geom type="sphere" size="0.1"/>'
              + "</frame>" * n + "</body></worldbody></mujoco>")
    m = js.load_string(frames)
    assert m.geom_pos[0, 2] == pytest.approx(n * 0.001)
    defaults = ("<mujoco><default>" + "".join(f'<default class="c{i}">' for i in range(n))
                + '<geom size="0.2"/>' + "</default>" * n + "</default><worldbody><body>"
                + f'<joint type="slide"/><geom type="sphere" class="c{n - 1}"/></body>'
                + "</worldbody></mujoco>")
    assert js.load_string(defaults).geom_size[0, 0] == 0.2
    assets = {f"f{i}.xml": f'<mujoco><include file="f{i + 1}.xml"/></mujoco>' for i in range(n)}
    assets[f"f{n}.xml"] = ('<mujoco><worldbody><body><joint type="slide"/>'
                           '<geom type="sphere" size="0.3"/></body></worldbody></mujoco>')
    from jointspace.io.mjcf import load_mjcf_string

    m = load_mjcf_string('<mujoco><include file="f0.xml"/></mujoco>', assets=assets)
    assert m.geom_size[0, 0] == 0.3


def test_body_listed_twice_in_a_spec_is_refused():
    """The iterative walk refuses a BodySpec below itself instead of looping forever."""
    spec = js.ModelSpec()
    a = spec.world.add_body(name="a")
    a.add_geom(type="sphere", size=[0.1])
    a.children.append(a)
    with pytest.raises(ModelError, match="body 'a' appears twice"):
        js.compile_model(spec)


# ---------------------------------------------------------------------------------------------
# 2. massless moving bodies


MASSLESS_BALL = """<mujoco><option integrator="{integrator}" solver="{solver}"/><worldbody>
  <geom type="plane" size="5 5 .1"/>
  <body name="ball" pos="0 0 0.09"><freejoint name="root"/>{inside}</body>
</worldbody></mujoco>"""
MASSLESS = {"geom mass 0": '<geom type="sphere" size="0.1" mass="0"/>',
            "density 0": '<geom type="sphere" size="0.1" density="0"/>',
            "inertial mass 0": '<inertial pos="0 0 0" mass="0" diaginertia="0 0 0"/>'
                               '<geom type="sphere" size="0.1" mass="0"/>'}
INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")


@pytest.mark.parametrize("what", sorted(MASSLESS))
def test_massless_free_body_is_refused_by_step_not_divided_by(what):
    """A massless free body raised a raw ZeroDivisionError from compiled step (and forward).

    MuJoCo refuses such a model at load ("mass and inertia of moving bodies must be larger
    than mjMINVAL"); jointspace loads it with a warning, so that kinematics and inverse
    dynamics work (tests/test_compile.py), and refuses what needs M⁻¹. step now raises
    SingularMassError naming the joint and the body for every integrator, and forward
    with PGS (which divided by the mean inertia, 0) warns that M is singular. With armature
    on the joint the model loads without a warning and steps.
    """
    for integrator in INTEGRATORS:
        for solver in ("Newton", "PGS"):
            xml = MASSLESS_BALL.format(integrator=integrator, solver=solver,
                                       inside=MASSLESS[what])
            with pytest.warns(JointspaceWarning, match="M is singular"):
                m = js.load_string(xml)
            d = js.make_data(m)
            with pytest.raises(SingularMassError, match=r"step: .*dofs 0–5 \(joint 'root'\) "
                                                        r"of body 'ball' move\(s\) no mass"):
                js.step(m, d)
            with pytest.warns(JointspaceWarning, match="M is singular"):
                js.forward(m, d)
            xml = xml.replace('<freejoint name="root"/>', '<joint type="free" armature="0.1"/>')
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                m = js.load_string(xml)
                d = js.make_data(m)
                js.step(m, d, 3)
            assert np.all(np.isfinite(d.qpos)) and d.time > 0


DEPENDENT = """<mujoco><option integrator="{integrator}" solver="{solver}"/><worldbody>
  <geom type="plane" size="5 5 .1"/>
  <body name="ball" pos="0 0 0.09"><joint name="a" type="slide" axis="0 0 1"/>
    <joint name="b" type="slide" axis="0 0 1"/><geom type="sphere" size="0.1"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_singular_m_in_implicit_integrators_resets_like_euler(integrator, solver):
    """Two identical slides pass the compiler's check but make M singular.

    The implicit integrators divided by the zero pivot (ZeroDivisionError); they now give
    a NaN acceleration, which step's state check resets with a warning, as Euler does
    (tests/test_forward.py::test_singular_inertia_is_reported).
    """
    m = js.load_string(DEPENDENT.format(integrator=integrator, solver=solver))
    d = js.make_data(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        js.step(m, d, 2)
    assert all(w.category is JointspaceWarning for w in caught)
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))


# ---------------------------------------------------------------------------------------------
# 3. values whose derived quantities overflow


def _world(inner):
    return f"<mujoco><worldbody>{inner}</worldbody></mujoco>"


OVERFLOWS = {
    "sphere size 1e300": (
        '<body name="b"><freejoint/><geom name="g" type="sphere" size="1e300"/></body>',
        r"body 'b': the mass of a geom overflows .* its size \[1e\+300, 0.0, 0.0\] times "
        r"density 1000.0 is not finite \(<string>:1 <geom name='g'>\)"),
    "cylinder size 1e155": (
        '<body name="b"><freejoint/><geom name="g" type="cylinder" size="1e155 1e155"/></body>',
        r"body 'b': the mass of a geom overflows .*<geom name='g'>"),
    "box size 1e200": (
        '<body name="b"><freejoint/><geom name="g" type="box" size="1e200 1 1"/></body>',
        r"geom size \[1e\+200, 1.0, 1.0\] is too large: its bounding radius overflows"),
    "mass 1e308 on a sphere of 1e10": (
        '<body name="b"><freejoint/><geom name="g" type="sphere" size="1e10" mass="1e308"/>'
        "</body>",
        r"body 'b': the inertia of a geom overflows .* its size \[10000000000.0, 0.0, 0.0\] "
        r"with mass 1e\+308 is too large \(<string>:1 <geom name='g'>\)"),
    "geoms at +-1e300": (
        '<body name="b"><freejoint/><geom type="sphere" size="0.1" pos="1e300 0 0"/>'
        '<geom type="sphere" size="0.1" pos="-1e300 0 0"/></body>',
        r"body 'b': the inertia computed from its geoms overflows .* the geoms' positions "
        r"\(pos\) are too far apart"),
    "body pos 1e308 twice": (
        '<body name="a" pos="1e308 0 0"><joint type="hinge"/><geom type="sphere" size="0.1"/>'
        '<body name="c" pos="1e308 0 0"><joint type="hinge"/><geom type="sphere" size="0.1"/>'
        "</body></body>",
        r"body 'c': its world position at qpos0 is not finite \(xpos \[inf, 0.0, 0.0\]"),
    "inertial mass 1e308 at 1e300": (
        '<body name="b"><freejoint/><inertial pos="1e300 0 0" mass="1e308" diaginertia="1 1 1"/>'
        "</body>",
        r"body 'b': the joint-space inertia M at qpos0 is not finite at dof 0"),
    "subtree mass 2e308": (
        '<body name="a"><freejoint/><inertial pos="0 0 0" mass="1e308" diaginertia="1 1 1"/>'
        '<body name="c"><inertial pos="0 0 0" mass="1e308" diaginertia="1 1 1"/></body></body>',
        r"body 'a': the total mass of its subtree overflows \(inf\)"),
    "geom mass 1e400": (
        '<body name="b"><freejoint/><geom type="sphere" size="1" mass="1e400"/></body>',
        r"geom mass must be non-negative and finite, got inf"),
}


@pytest.mark.parametrize("case", sorted(OVERFLOWS))
def test_overflowing_values_are_refused_by_name(case):
    """Sizes or positions of 1e300 loaded with NaN inertias behind NumPy overflow warnings."""
    inner, message = OVERFLOWS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning on the way
        with pytest.raises(ModelError, match=message):
            js.load_string(_world(inner))


def test_large_but_finite_values_still_load_quietly():
    """Huge values whose derived quantities stay finite are a model, if an odd one."""
    cases = ['<geom type="sphere" size="1e300"/><body><freejoint/>'
             '<geom type="sphere" size="1"/></body>',  # a static geom's mass is never used
             '<body pos="1e300 0 0"><freejoint/><geom type="sphere" size="1"/></body>',
             '<body><freejoint/><geom type="sphere" size="1" mass="1e300"/></body>']
    for inner in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = js.load_string(_world(inner))
        assert np.all(np.isfinite(m.body_inertia)) and np.all(np.isfinite(m.dof_M0))


# ---------------------------------------------------------------------------------------------
# 4. ik with non-finite arguments


def test_ik_refuses_non_finite_arguments_by_name():
    """inf in q_init hung in LAPACK on one model and raised LinAlgError on another.

    Run in a subprocess: a regression would hang, and the timeout turns that into a failure.
    """
    code = """
        import numpy as np
        import jointspace as js
        from jointspace.ik import Target, ik

        for name in ("arm7", "humanoid"):
            m = js.models.load(name)
            for bad in (np.inf, -np.inf, np.nan):
                q = m.qpos0.copy()
                q[1] = bad
                w = np.ones(m.nv)
                w[0] = bad
                cases = {
                    "q_init": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]), q_init=q),
                    "q_pref": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]), q_pref=q),
                    "weights": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]), weights=w),
                    "targets[0].pos": lambda: ik(m, Target(body=2, pos=[bad, 0, 0.4])),
                    "targets[0].quat": lambda: ik(m, Target(body=2, quat=[1, bad, 0, 0])),
                    "targets[0].weight": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4],
                                                              weight=bad)),
                    "tol": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]), tol=bad),
                    "damping": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]), damping=bad),
                }
                for arg, call in cases.items():
                    try:
                        call()
                        print("NO ERROR", name, arg, bad)
                    except ValueError as e:
                        print("OK" if arg in str(e) else "UNNAMED", name, arg, bad, e)
                    except Exception as e:
                        print("FOREIGN", name, arg, bad, type(e).__name__, e)
    """
    rc, out, err = _run(code)
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 2 * 3 * 8
    assert all(line.startswith("OK") for line in lines), "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# 5. complex arrays


# The shared argument helpers (jointspace._numba.entry: vec, mat, fresh) converted with
# np.asarray(x, dtype=float64), which drops the imaginary part behind a NumPy ComplexWarning
# (or raises NumPy's own TypeError for a list holding complex numbers), and so did Data's and
# Model's field assignment (jointspace.types._assign_field, Option.__setattr__). Now each is
# a TypeError naming the function and the argument.
COMPLEX_ARGS = {
    "rnea q": (lambda m, d, z: js.rnea(m, d, m.qpos0 + z, np.zeros(m.nv), np.zeros(m.nv)),
               r"rnea: argument q is complex"),
    "rnea v list": (lambda m, d, z: js.rnea(m, d, m.qpos0, list(np.zeros(m.nv) + z),
                                            np.zeros(m.nv)), r"rnea: argument v is complex"),
    "crba q": (lambda m, d, z: js.crba(m, d, m.qpos0 + z), r"crba: argument q is complex"),
    "aba tau": (lambda m, d, z: js.aba(m, d, m.qpos0, np.zeros(m.nv), np.zeros(m.nv) + z),
                r"aba: argument tau is complex"),
    "kinematics qpos": (lambda m, d, z: js.kinematics(m, d, m.qpos0 + z),
                        r"kinematics: argument qpos is complex"),
    "jacobian point": (lambda m, d, z: js.jacobian(m, d, 1, [0.0, 0.0, z]),
                       r"jacobian: argument point is complex"),
    "integrate_pos qvel": (lambda m, d, z: js.integrate_pos(m, m.qpos0, np.zeros(m.nv) + z, 1.0),
                           r"integrate_pos: argument qvel is complex"),
    "rigid qacc_desired": (lambda m, d, z: js.rigid.inverse_dynamics(m, d, np.zeros(m.nv) + z),
                           r"inverse_dynamics: argument qacc_desired is complex"),
}


@pytest.mark.parametrize("case", sorted(COMPLEX_ARGS))
def test_complex_arrays_through_the_shared_helpers_are_refused(case):
    """js.rnea(m, d, q.astype(complex), ...) dropped the imaginary part (a ComplexWarning)."""
    m = js.models.load("arm7")
    d = js.make_data(m)
    call, message = COMPLEX_ARGS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning is the silent truncation
        with pytest.raises(TypeError, match=message):
            call(m, d, 0.1j)


def test_complex_data_field_assignment_is_refused():
    """d.qpos = q + 0.1j kept the real part (a ComplexWarning)."""
    m = js.models.load("arm7")
    d = js.make_data(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=r"Data.qpos.*complex"):
            d.qpos = m.qpos0 + 0.1j
        with pytest.raises(TypeError, match=r"Model.dof_damping.*complex"):
            m.dof_damping = np.ones(m.nv) * 1j
        with pytest.raises(TypeError, match=r"gravity.*complex"):
            m.opt.gravity = [0.0, 0.0, -9.81j]


def test_complex_ik_arguments_are_refused():
    """ik converts its own arguments: complex targets and postures are refused by name."""
    m = js.models.load("arm7")
    cases = {"targets[0].pos": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4j])),
             "targets[0].quat": lambda: ik(m, Target(body=2, quat=np.array([1, 0, 0, 0]) + 0j)),
             "targets[0].weight": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4], weight=1j)),
             "q_init": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]), q_init=m.qpos0 + 0j),
             "q_pref": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]), q_pref=m.qpos0 + 0j),
             "weights": lambda: ik(m, Target(body=2, pos=[0.3, 0, 0.4]),
                                   weights=np.ones(m.nv) + 0j)}
    for arg, call in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(TypeError, match=rf"ik: (argument )?{re.escape(arg)} is complex"):
                call()


# ---------------------------------------------------------------------------------------------
# 6. element ids, step counts and file names


NOT_IDS = [{}, [1], np.array(2), np.array([2]), 2.0, True, None, 1j, b"link1"]


@pytest.mark.parametrize("fname,arg", [("jacobian_site", "site"), ("jacobian_body", "body"),
                                       ("jacobian_body_com", "body"),
                                       ("jacobian_subtree_com", "body")])
def test_element_ids_must_be_names_or_ints(fname, arg):
    """dicts and arrays raised 'unhashable type', bools were taken as ids 0 and 1."""
    m = js.models.load("arm7")
    d = js.make_data(m)
    js.kinematics(m, d)
    f = getattr(js, fname)
    for x in NOT_IDS:
        with pytest.raises(TypeError, match=rf"{fname}: argument {arg} must be a {arg} name "
                                            r"\(str\) or id \(int\)"):
            f(m, d, x)
    with pytest.raises(IndexError, match=rf"{fname}: argument {arg}: {arg} id 99 out of range"):
        f(m, d, 99)
    with pytest.raises(IndexError, match=rf"{fname}: argument {arg}: {arg} id -1 out of range"):
        f(m, d, -1)
    with pytest.raises(IndexError, match="out of range"):
        f(m, d, 2**70)
    with pytest.raises(KeyError, match=rf"{fname}: argument {arg}: no {arg} named 'nope'"):
        f(m, d, "nope")
    one = "ee" if arg == "site" else "link2"
    np.testing.assert_array_equal(f(m, d, one)[0], f(m, d, np.int64(m.id(arg, one)))[0])


def test_jacobian_and_ik_name_their_element_arguments():
    """A 0-d array or a dict as an element of jacobian or of an ik target: unhashable type."""
    m = js.models.load("arm7")
    d = js.make_data(m)
    js.kinematics(m, d)
    with pytest.raises(TypeError, match="jacobian: argument body must be a body name"):
        js.jacobian(m, d, np.array(1), np.zeros(3))
    with pytest.raises(TypeError, match="jacobian_dot_qvel: argument body must be a body name"):
        js.jacobian_dot_qvel(m, d, {}, np.zeros(3))
    with pytest.raises(TypeError, match=r"ik: argument targets\[0\].site must be a site name"):
        ik(m, Target(site=[0], pos=[0.3, 0, 0.4]))
    with pytest.raises(IndexError, match=r"ik: argument targets\[1\].body: body id 50"):
        ik(m, [Target(site=0, pos=[0.3, 0, 0.4]), Target(body=50, pos=[0, 0, 1])])


def test_osc_task_names_its_body():
    """An OSC task on a dict 'body' raised unhashable type from Model.id."""
    m = js.models.load("arm7")
    task = js.control.BodyTask({"body": 1}, kp=100.0, kd=20.0)
    with pytest.raises(TypeError, match=r"BodyTask\(\{'body': 1\}\): argument body must be"):
        js.control.OperationalSpace(m, [task])


def test_step_count_must_fit_int64():
    """step(m, d, 2**63) raised OverflowError while converting nstep for compiled code."""
    m = js.models.load("arm2")
    d = js.make_data(m)
    for nstep in (2**63, 2**64, np.uint64(2**63), -1, 0, 1.5, "3", True, np.array(2)):
        with pytest.raises(ValueError, match=r"step: argument nstep must be a positive integer "
                                             r"at most 2\*\*63 - 1"):
            js.step(m, d, nstep)
    assert d.time == 0.0
    js.step(m, d, np.int64(2))
    assert d.time == pytest.approx(2 * m.opt.timestep)


@pytest.mark.parametrize("uri", ["package://" + "a" * 5000 + "/mesh.stl",
                                 "package://pkg/" + "b/" * 3000 + "m.stl",
                                 "file://" + "/x" * 3000, "x" * 5000 + ".stl"])
def test_urdf_mesh_path_too_long_is_a_missing_mesh(uri, tmp_path):
    """Over-long mesh paths raised OSError (ENAMETOOLONG) from Path.is_file."""
    urdf = ('<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" '
            'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial><visual><geometry>'
            f'<mesh filename="{uri}"/></geometry></visual></link></robot>')
    path = tmp_path / "robot.urdf"
    path.write_text(urdf)
    for load in (lambda: js.load_string(urdf), lambda: js.load(path, package_dirs=[tmp_path]),
                 lambda: js.load(path, package_dirs={"pkg": tmp_path})):
        with pytest.warns(JointspaceWarning, match=r"could not be found or read.*not found"):
            m = load()
        assert m.ngeom == 0 and m.nbody == 2
    with pytest.warns(JointspaceWarning, match=r"not found \(file name too long\)"):
        js.load(path)  # candidates beside the file: the file system refuses the name


# ---------------------------------------------------------------------------------------------
# 7. the rigid-contact inverse on a state the soft simulator settled into


WEIGHT_RTOL = 1e-3  # at rest (|qvel| ≈ 3e-9 after 1 s) only the solver tolerance remains


def _floor_force_z(m, d, res):
    """World-z force of the floor on the robot, summed over the predicted contacts."""
    fz = 0.0
    for k, c in enumerate(res.contact_id):
        g1, g2 = d.contact_geom[c]
        f = d.contact_frame[c].reshape(3, 3).T @ res.contact_force[k]  # on geom 2, world
        fz += f[2] if m.geom_bodyid[g1] == 0 else -f[2]
    return fz


def test_rigid_inverse_on_a_settled_robot_predicts_its_weight():
    """With gap_gain = 1 the prediction was ~20 times the weight of a standing quadruped.

    js.step settles the quadruped on its feet with the soft contact's resting penetration
    (≈ 0.7 mm); gain 1 asked the rigid model to remove it within one 2 ms period. The
    default (0) keeps it: with q̈_des = 0 the feet carry the weight.
    """
    m = js.models.load("quadruped")
    d = js.make_data(m)
    js.step(m, d, round(1.0 / m.opt.timestep))
    assert np.abs(d.qvel).max() < 1e-6 and d.ncon[0] == 4 and d.contact.dist.min() < -1e-4
    weight = m.body_mass.sum() * np.linalg.norm(m.opt.gravity)
    res = js.rigid.inverse_dynamics(m, d, np.zeros(m.nv))
    assert res.status == "solved"
    assert res.contact_force[:, 0].sum() == pytest.approx(weight, rel=WEIGHT_RTOL)
    assert _floor_force_z(m, d, res) == pytest.approx(weight, rel=WEIGHT_RTOL)
    paper = js.rigid.inverse_dynamics(m, d, np.zeros(m.nv), gap_gain=1.0)
    assert paper.contact_force[:, 0].sum() > 10 * weight


def test_rigid_inverse_on_the_humanoid_lying_at_rest():
    """The humanoid has no controller: js.step lets it fall and it lies rocking slowly.

    Put at rest where it lies (qvel = 0), the floor's predicted force is its weight.
    """
    m = js.models.load("humanoid")
    d = js.make_data(m)
    js.step(m, d, round(4.0 / m.opt.timestep))
    d.qvel[:] = 0.0
    weight = m.body_mass.sum() * np.linalg.norm(m.opt.gravity)
    res = js.rigid.inverse_dynamics(m, d, np.zeros(m.nv))
    assert res.status == "solved" and len(res.contact_id) >= 3
    assert _floor_force_z(m, d, res) == pytest.approx(weight, rel=WEIGHT_RTOL)


def test_rigid_inverse_refuses_bad_numbers_by_name():
    """Bad numbers reached the kernel or NumPy unchecked.

    NaN gap gains, 10⁹ cone edges (a huge allocation), enum_max = 60 (2⁶⁰ systems: a hang),
    complex numbers (raw TypeErrors).
    """
    m = js.models.load("quadruped")
    d = js.make_data(m)
    a = np.zeros(m.nv)
    bad = {"gap_gain": [np.nan, -0.1, 2.0], "edges": [10**9, 4.5, True], "enum_max": [60, -1],
           "max_iter": [0, 1.5], "tol": [np.nan, -1.0], "regularization": [np.inf]}
    for name, values in bad.items():
        for x in values:
            with pytest.raises(js.JointspaceError, match=f"inverse_dynamics: {name} must"):
                js.rigid.inverse_dynamics(m, d, a, **{name: x})
    for name in ("mu", "h", "gap_gain", "edges", "tol"):
        with pytest.raises(TypeError, match=f"inverse_dynamics: {name} is complex"):
            js.rigid.inverse_dynamics(m, d, a, **{name: 1 + 1j})
    with pytest.raises(TypeError, match="inverse_dynamics: tau_target is complex"):
        js.rigid.inverse_dynamics(m, d, a, tau_target=np.zeros(12) + 1j)
    with pytest.raises(js.JointspaceError, match="formulation must be one of"):
        js.rigid.inverse_dynamics(m, d, a, formulation={})
