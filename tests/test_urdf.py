"""URDF loader: spec-level semantics, error messages, and parity with Pinocchio's URDF parser."""

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import jointspace as js
from jointspace.errors import JointspaceWarning, ModelError
from jointspace.io.urdf import load_urdf, load_urdf_string, parse_urdf
from jointspace.types import JNT_FREE
from tests._util import erd_robots_dir

TOL = 1e-10  # parity with Pinocchio: both sides compose the same rigid transforms in float64
SPEC_TOL = 1e-14  # spec-level values computed two ways from the same numbers



ROBOTS = erd_robots_dir()
ROBOT_FILES = sorted(ROBOTS.glob("*/urdf/*.urdf")) + sorted(ROBOTS.glob("*/robots/*.urdf"))

# Files of example-robot-data that do not load, and why (the message we expect).
KNOWN_FAILURES = {
    # an empty <robot> (Pinocchio rejects it too)
    "ur_description/urdf/ur3.urdf": "the robot has no <link>",
    # a merged link's inertia tensor has ixz² > ixx·izz: not a physical inertia
    "romeo_description/urdf/romeo_laas_small.urdf": "not positive semi-definite",
    # RShoulderYawLink's principal moments violate the triangle inequality
    "romeo_description/urdf/romeo_small.urdf": "triangle inequality",
    # Left_index_q2 mimics 'index_q1', which is not a joint (Pinocchio's mimic=True refuses
    # it too); load with mimic=False to ignore the <mimic>s
    "alex_description/urdf/alex_psyonic_hands.urdf":
        "joint 'Left_index_q2' mimics joint 'index_q1', which is not defined",
}
# Files whose mimic model Pinocchio cannot build ("The parent joint of the mimic joint is not in
# the kinematic tree": a mimicked joint comes after its mimicking joint in Pinocchio's order)
PIN_MIMIC_UNSUPPORTED = {"romeo_description/urdf/romeo.urdf",
                         "talos_data/robots/talos_full_v2.urdf",
                         "talos_data/robots/talos_full_v2_box.urdf"}


def _rel(path):
    return path.relative_to(ROBOTS).as_posix()


def _spec_bodies(spec):
    out, stack = {}, [spec.world]
    while stack:
        b = stack.pop()
        out[b.name] = b
        stack.extend(b.children)
    return out


def _rpy_mat(rpy):
    return Rotation.from_euler("xyz", rpy).as_matrix()  # extrinsic x, y, z = Rz Ry Rx


def _quat_mat(q):
    return Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()


def _inertial(mass, xyz="0 0 0", rpy="0 0 0", inertia=(1, 1, 1, 0, 0, 0)):
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" '
            f'iyz="{iyz}"/></inertial>')


TET_STL = """solid tet
facet normal 0 0 -1
 outer loop
  vertex 0 0 0
  vertex 0 1 0
  vertex 1 0 0
 endloop
endfacet
facet normal 0 -1 0
 outer loop
  vertex 0 0 0
  vertex 1 0 0
  vertex 0 0 1
 endloop
endfacet
facet normal -1 0 0
 outer loop
  vertex 0 0 0
  vertex 0 0 1
  vertex 0 1 0
 endloop
endfacet
facet normal 1 1 1
 outer loop
  vertex 1 0 0
  vertex 0 1 0
  vertex 0 0 1
 endloop
endfacet
endsolid tet
"""


# --------------------------------------------------------------------------------------------
# spec level


ARM = f"""<robot name="arm">
  <material name="steel"><color rgba="0.1 0.2 0.3 1"/></material>
  <link name="base">{_inertial(2.0, "0 0 0.1", inertia=(0.02, 0.02, 0.01, 0, 0, 0))}</link>
  <link name="upper">
    {_inertial(1.5, "0.1 0.02 -0.03", "0.3 -0.2 0.5", (0.03, 0.04, 0.05, 0.001, -0.002, 0.003))}
    <collision><origin xyz="0 0 0.2" rpy="0 1.5707963267948966 0"/>
      <geometry><cylinder radius="0.05" length="0.4"/></geometry></collision>
    <visual><geometry><box size="0.1 0.2 0.3"/></geometry><material name="steel"/></visual>
  </link>
  <link name="tool">
    {_inertial(0.5, "0.01 0 0.05", "0.1 0.2 0.3", (0.002, 0.003, 0.004, 0.0001, 0, -0.0002))}
    <collision><origin xyz="0 0 0.05"/><geometry><sphere radius="0.03"/></geometry></collision>
    <visual><geometry><sphere radius="0.02"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
  </link>
  <link name="tip"/>
  <link name="finger">{_inertial(0.1)}</link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 2"/>
    <limit lower="-1.5" upper="2.0" effort="10" velocity="2"/>
    <dynamics damping="0.7" friction="0.2"/>
  </joint>
  <joint name="wrist_mount" type="fixed">
    <parent link="upper"/><child link="tool"/><origin xyz="0.4 0 0" rpy="0 0 1.0"/>
  </joint>
  <joint name="tip_mount" type="fixed">
    <parent link="tool"/><child link="tip"/><origin xyz="0 0 0.1" rpy="0.5 0 0"/>
  </joint>
  <joint name="slider" type="prismatic">
    <parent link="tip"/><child link="finger"/><origin xyz="0 0.02 0"/>
    <limit lower="0" upper="0.04"/>
  </joint>
</robot>
"""


def test_fixed_joints_merge_into_parent():
    """Fixed-joint children become sites; their inertia and geoms move into the parent body."""
    spec = parse_urdf(ARM)
    bodies = _spec_bodies(spec)
    assert set(bodies) == {"world", "base", "upper", "finger"}
    upper, finger = bodies["upper"], bodies["finger"]
    assert finger in upper.children  # the merged links' child hangs from the merged body
    # sites: every link, at its frame in the body that holds it
    sites = {s.name: s for b in bodies.values() for s in b.sites}
    assert set(sites) == {"base", "upper", "tool", "tip", "finger"}
    assert sites["tool"] in upper.sites and sites["tip"] in upper.sites
    R_tool = _rpy_mat([0, 0, 1.0])
    p_tip = np.array([0.4, 0, 0]) + R_tool @ [0, 0, 0.1]
    R_tip = R_tool @ _rpy_mat([0.5, 0, 0])
    np.testing.assert_allclose(sites["tool"].pos, [0.4, 0, 0], atol=SPEC_TOL)
    np.testing.assert_allclose(sites["tip"].pos, p_tip, atol=SPEC_TOL)
    np.testing.assert_allclose(_quat_mat(sites["tip"].quat), R_tip, atol=SPEC_TOL)
    np.testing.assert_allclose(finger.pos, p_tip + R_tip @ [0, 0.02, 0], atol=SPEC_TOL)
    np.testing.assert_allclose(_quat_mat(finger.quat), R_tip, atol=SPEC_TOL)

    # combined inertia of upper + tool about their joint com, in upper's frame
    def part(m, c, rpy, ixx, iyy, izz, ixy, ixz, iyz, R=np.eye(3), p=np.zeros(3)):
        Ri = R @ _rpy_mat(rpy)
        Ic = Ri @ np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]) @ Ri.T
        return m, p + R @ np.asarray(c, dtype=float), Ic

    parts = [part(1.5, [0.1, 0.02, -0.03], [0.3, -0.2, 0.5], 0.03, 0.04, 0.05, 0.001, -0.002,
                  0.003),
             part(0.5, [0.01, 0, 0.05], [0.1, 0.2, 0.3], 0.002, 0.003, 0.004, 0.0001, 0,
                  -0.0002, R_tool, np.array([0.4, 0, 0]))]
    mass = sum(p[0] for p in parts)
    com = sum(p[0] * p[1] for p in parts) / mass
    inertia = sum(Ic + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com))
            for m, c, Ic in parts)
    it = upper.inertial
    assert it.mass == pytest.approx(2.0, abs=SPEC_TOL)
    np.testing.assert_allclose(it.pos, com, atol=SPEC_TOL)
    R = _quat_mat(it.quat)
    xx, yy, zz, xy, xz, yz = it.fullinertia
    got = R @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ R.T
    np.testing.assert_allclose(got, inertia, atol=SPEC_TOL)
    # geoms of the merged link, with composed poses
    spheres = sorted((g for g in upper.geoms if g.type == "sphere"), key=lambda g: g.size[0])
    np.testing.assert_allclose(spheres[1].pos, [0.4, 0, 0] + R_tool @ [0, 0, 0.05],
                               atol=SPEC_TOL)
    assert [g.size[0] for g in spheres] == [0.02, 0.03]


def test_single_link_inertia_kept_as_given():
    """A body made of one link keeps the URDF's inertial frame and tensor unchanged."""
    spec = parse_urdf(ARM)
    it = _spec_bodies(spec)["base"].inertial
    assert it.mass == 2.0
    np.testing.assert_array_equal(it.pos, [0, 0, 0.1])
    np.testing.assert_array_equal(it.fullinertia, [0.02, 0.02, 0.01, 0, 0, 0])
    assert _spec_bodies(spec)["finger"].inertial.mass == 0.1


def test_joint_conversion():
    """Revolute/prismatic limits, axis normalization, origin as the child body's frame."""
    spec = parse_urdf(ARM)
    bodies = _spec_bodies(spec)
    (sh,) = bodies["upper"].joints
    assert sh.name == "shoulder" and sh.type == "hinge"
    np.testing.assert_array_equal(sh.pos, [0, 0, 0])
    np.testing.assert_array_equal(sh.axis, [0, 0, 1])
    assert sh.limited and sh.range == (-1.5, 2.0)
    assert sh.damping == 0.7 and sh.frictionloss == 0.2
    np.testing.assert_array_equal(bodies["upper"].pos, [0, 0, 0.3])
    np.testing.assert_allclose(_quat_mat(bodies["upper"].quat), _rpy_mat([0.1, 0.2, 0.3]),
                               atol=SPEC_TOL)
    (sl,) = bodies["finger"].joints
    assert sl.type == "slide" and sl.limited and sl.range == (0.0, 0.04)
    np.testing.assert_array_equal(sl.axis, [1, 0, 0])  # URDF's default axis
    assert bodies["base"].joints == []  # the root is welded to the world


def test_continuous_planar_floating_joints():
    """Continuous → unlimited hinge; planar → two slides + a hinge; floating under world → free."""
    urdf = """<robot name="r">
      <link name="world"/><link name="a"/><link name="b"/><link name="c"/>
      <joint name="free" type="floating"><parent link="world"/><child link="a"/></joint>
      <joint name="spin" type="continuous"><parent link="a"/><child link="b"/>
        <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="slide2d" type="planar"><parent link="b"/><child link="c"/>
        <axis xyz="1 0 0"/></joint>
    </robot>"""
    spec = parse_urdf(urdf)
    bodies = _spec_bodies(spec)
    assert "a" in [c.name for c in spec.world.children]
    assert [j.type for j in bodies["a"].joints] == ["free"]
    (spin,) = bodies["b"].joints
    assert spin.type == "hinge" and not spin.limited
    js_ = bodies["c"].joints
    assert [(j.name, j.type) for j in js_] == [("slide2d_tx", "slide"), ("slide2d_ty", "slide"),
                                                ("slide2d_rz", "hinge")]
    u, v, n = (np.asarray(j.axis) for j in js_)
    np.testing.assert_allclose(n, [1, 0, 0])
    np.testing.assert_allclose(np.cross(u, v), n, atol=SPEC_TOL)
    assert abs(u @ n) < SPEC_TOL and abs(v @ n) < SPEC_TOL
    assert [s.name for s in spec.world.sites] == ["world"]


def test_floating_base_adds_root_joint():
    """floating_base=True puts a free joint named root_joint (Pinocchio's name) on the root."""
    spec = parse_urdf(ARM, floating_base=True)
    (j,) = _spec_bodies(spec)["base"].joints
    assert j.type == "free" and j.name == "root_joint"


def test_geometry_conversion():
    """Full sizes become half sizes; collision geoms collide, visual geoms do not; no geom mass."""
    spec = parse_urdf(ARM)
    upper = _spec_bodies(spec)["upper"]
    by_type = {}
    for g in upper.geoms:
        by_type.setdefault(g.type, []).append(g)
    (cyl,) = by_type["cylinder"]
    np.testing.assert_array_equal(cyl.size[:2], [0.05, 0.2])
    assert (cyl.contype, cyl.conaffinity, cyl.group) == (1, 1, 0)
    np.testing.assert_allclose(_quat_mat(cyl.quat) @ [0, 0, 1], [1, 0, 0], atol=SPEC_TOL)
    (box,) = by_type["box"]
    np.testing.assert_array_equal(box.size, [0.05, 0.1, 0.15])
    assert (box.contype, box.conaffinity, box.group) == (0, 0, 1)
    assert box.rgba == (0.1, 0.2, 0.3, 1.0)  # named material defined at the top level
    red = min(by_type["sphere"], key=lambda g: g.size[0])
    assert red.rgba == (1.0, 0.0, 0.0, 1.0) and red.contype == 0
    assert all(g.mass == 0.0 for g in upper.geoms)
    assert spec.inertiafromgeom == "false"


def test_geoms_do_not_change_compiled_mass():
    """The compiled masses are the URDF's; collision and visual geoms add nothing."""
    m = load_urdf_string(ARM)
    assert m.body_mass[m.body("upper")] == pytest.approx(2.0, abs=SPEC_TOL)
    assert m.body_mass.sum() == pytest.approx(4.1, abs=SPEC_TOL)
    assert m.ngeom == 4 and m.nsite == 5


def test_visual_false_leaves_out_visual_geoms_only():
    """visual=False drops the non-colliding geoms; bodies, inertias and collisions stay."""
    m, mv = load_urdf_string(ARM), load_urdf_string(ARM, visual=False)
    assert (m.ngeom, mv.ngeom) == (4, 2)
    assert np.all(mv.geom_contype == 1)
    np.testing.assert_array_equal(mv.geom_size, m.geom_size[m.geom_contype == 1])
    for k in ("body_mass", "body_inertia", "body_ipos", "body_pos", "jnt_axis"):
        np.testing.assert_array_equal(getattr(mv, k), getattr(m, k), err_msg=k)


@pytest.fixture
def package_tree(tmp_path, monkeypatch):
    """share/mypkg/{meshes/tet.stl, urdf/robot.urdf} referencing the mesh in two ways."""
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    pkg = tmp_path / "share" / "mypkg"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "urdf").mkdir()
    (pkg / "meshes" / "tet.stl").write_text(TET_STL)
    urdf = """<robot name="r"><link name="a">
      <collision><geometry><mesh filename="package://mypkg/meshes/tet.stl" scale="2 3 4"/>
      </geometry></collision>
      <visual><geometry><mesh filename="../meshes/tet.stl"/></geometry></visual>
    </link></robot>"""
    (pkg / "urdf" / "robot.urdf").write_text(urdf)
    return tmp_path, pkg, urdf


def _mesh_files(spec):
    return sorted((Path(ms.file), float(ms.vertices.max(axis=0)[2])) for ms in spec.meshes)


def test_mesh_paths_relative_to_the_urdf_file(package_tree):
    """package:// found in the folders above the URDF file; plain paths relative to it."""
    root, pkg, urdf = package_tree
    tet = (pkg / "meshes" / "tet.stl").resolve()
    with warnings.catch_warnings():
        warnings.simplefilter("error", JointspaceWarning)
        spec = parse_urdf(pkg / "urdf" / "robot.urdf")
    # the same file at two scales: two mesh assets (z scaled by 4, and unscaled)
    assert _mesh_files(spec) == [(tet, 1.0), (tet, 4.0)]
    geoms = spec.world.children[0].geoms
    assert [g.type for g in geoms] == ["mesh", "mesh"]
    assert len({g.mesh for g in geoms}) == 2
    np.testing.assert_array_equal(spec.meshes[0].vertices.max(axis=0), [2, 3, 4])


PKG_ONLY = """<robot name="r"><link name="a"><collision><geometry>
  <mesh filename="package://mypkg/meshes/tet.stl"/></geometry></collision></link></robot>"""


@pytest.mark.parametrize("dirs", ["dict", "list", "folder"])
def test_package_dirs(package_tree, dirs):
    """package:// through a dict, a list of folders holding packages, or one such folder."""
    root, pkg, _ = package_tree
    package_dirs = {"dict": {"mypkg": pkg}, "list": [root / "nowhere", root / "share"],
                    "folder": str(root / "share")}[dirs]
    with warnings.catch_warnings():
        warnings.simplefilter("error", JointspaceWarning)
        spec = parse_urdf(PKG_ONLY, package_dirs=package_dirs)
    assert _mesh_files(spec) == [((pkg / "meshes" / "tet.stl").resolve(), 1.0)]


def test_package_not_found_without_dirs(package_tree):
    """URDF text with no folder and no package_dirs: the mesh is not found, and said so."""
    with pytest.warns(JointspaceWarning, match="not found.*package://mypkg/meshes/tet.stl"):
        spec = parse_urdf(PKG_ONLY)
    assert spec.meshes == [] and spec.world.geoms == []


def test_ros_package_path(package_tree, monkeypatch):
    """package:// is looked up in ROS_PACKAGE_PATH's folders when package_dirs is not given."""
    root, pkg, urdf = package_tree
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(root / "share"))
    with pytest.warns(JointspaceWarning, match=r"\.\./meshes/tet\.stl"):
        spec = parse_urdf(urdf)  # text: the relative visual mesh has no folder to start from
    assert _mesh_files(spec) == [((pkg / "meshes" / "tet.stl").resolve(), 4.0)]


def test_missing_meshes_warn_once_and_are_left_out(tmp_path):
    """Unfindable and unreadable meshes: one warning naming them; the rest still loads."""
    (tmp_path / "bad.dae").write_text("<COLLADA/>")
    urdf = f"""<robot name="r">
      <link name="a">{_inertial(1.0)}
        <collision><geometry><mesh filename="package://nopkg/x.stl"/></geometry></collision>
        <visual><geometry><mesh filename="bad.dae"/></geometry></visual>
        <visual><geometry><mesh filename="gone.obj"/></geometry></visual>
        <collision><geometry><box size="1 1 1"/></geometry></collision>
      </link>
      <link name="b">{_inertial(1.0)}</link>
      <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
        <limit lower="-1" upper="1"/></joint>
    </robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(urdf)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m = load_urdf(path)
    msgs = [str(w.message) for w in rec if issubclass(w.category, JointspaceWarning)]
    assert len(msgs) == 1
    for name in ("package://nopkg/x.stl", "bad.dae", "gone.obj", str(path)):
        assert name in msgs[0]
    assert m.ngeom == 1 and m.nmesh == 0 and m.njnt == 1
    assert msgs[0] in m.warnings


def test_open_mesh_surfaces_are_not_python_warnings(tmp_path):
    """An open mesh loads without a Python warning; the finding is a line of m.warnings."""
    open_tet = TET_STL[:TET_STL.rindex("facet normal 1 1 1")] + "endsolid tet\n"
    (tmp_path / "open.stl").write_text(open_tet)
    urdf = f"""<robot name="r"><link name="a">{_inertial(1.0)}
      <collision><geometry><mesh filename="open.stl"/></geometry></collision></link></robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(urdf)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JointspaceWarning)
        m = load_urdf(path)
    assert m.nmesh == 1 and m.body_mass[1] == 1.0
    assert [w for w in m.warnings if "surface is not closed" in w and "mesh 'open'" in w]


def test_mimic_becomes_joint_equality():
    """<mimic> → joint equality: joint1 the mimicking joint, joint2 the joint it names."""
    urdf = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/><link name="d"/>
      <joint name="j1" type="continuous"><parent link="a"/><child link="b"/></joint>
      <joint name="j2" type="continuous"><parent link="b"/><child link="c"/>
        <mimic joint="j1" multiplier="2" offset="-0.5"/></joint>
      <joint name="j3" type="prismatic"><parent link="c"/><child link="d"/>
        <mimic joint="j1"/></joint></robot>"""
    with warnings.catch_warnings():
        warnings.simplefilter("error", JointspaceWarning)
        spec = parse_urdf(urdf, filename="r.urdf")
    assert len(_spec_bodies(spec)["c"].joints) == 1  # the mimicking joint keeps its dof
    e2, e3 = spec.equalities
    assert (e2.type, e2.name, e2.obj1, e2.obj2) == ("joint", "j2", "j2", "j1")
    np.testing.assert_array_equal(e2.polycoef, [-0.5, 2.0, 0, 0, 0])
    np.testing.assert_array_equal(e3.polycoef, [0.0, 1.0, 0, 0, 0])  # urdfdom's defaults
    assert e2.source == "r.urdf:4 <mimic>"
    assert parse_urdf(urdf, mimic=False).equalities == []


def test_mimic_on_a_fixed_joint_is_ignored():
    """A fixed joint has no coordinate: its <mimic> is moot (Pinocchio and MuJoCo skip it)."""
    urdf = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="continuous"><parent link="a"/><child link="b"/></joint>
      <joint name="j2" type="fixed"><parent link="b"/><child link="c"/>
        <mimic joint="j1"/></joint></robot>"""
    assert parse_urdf(urdf).equalities == []


ERRORS = [
    ('<robot name="r"><link name="a"></robot>', r"r\.urdf:1: malformed XML"),
    ('<robot name="r"><link name="a"/>\n<joint name="j" type="fixed"><parent link="a"/>'
     '<child link="b"/></joint></robot>', r"r\.urdf:2 <joint name='j'>: child link 'b' is not"),
    ('<robot name="r"><link name="a"/>\n<joint name="j" type="fixed"><parent link="x"/>'
     '<child link="a"/></joint></robot>', r"r\.urdf:2 <joint name='j'>: parent link 'x' is not"),
    ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>\n'
     '<joint name="j1" type="fixed"><parent link="b"/><child link="c"/></joint>\n'
     '<joint name="j2" type="fixed"><parent link="c"/><child link="b"/></joint></robot>',
     r"r\.urdf:\d <joint name='j\d'>: the joints form a cycle through links [bc] -> [bc] -> [bc]"),
    ('<robot name="r"><link name="a"/><link name="b"/></robot>',
     r"r\.urdf:1 <robot name='r'>: the robot has 2 root links \(a, b\)"),
    ('<robot name="r"><link name="a"/>\n<link name="a"/></robot>',
     r"r\.urdf:2 <link name='a'>: duplicate link name 'a' \(first at line 1\)"),
    ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>\n'
     '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
     '<joint name="j" type="fixed"><parent link="a"/><child link="c"/></joint></robot>',
     r"r\.urdf:3 <joint name='j'>: duplicate joint name 'j' \(first at line 2\)"),
    ('<robot name="r"><link name="a"/><link name="b"/>\n'
     '<joint name="j" type="hinge"><parent link="a"/><child link="b"/></joint></robot>',
     r"r\.urdf:2 <joint name='j'>: unknown joint type 'hinge'; use one of revolute"),
    ('<robot name="r"><link name="a">\n<inertial><mass value="-1"/></inertial></link></robot>',
     r"r\.urdf:2 <mass>: mass must be non-negative, got -1\.0"),
    ('<robot name="r"><link name="a"/><link name="b"/>\n<joint name="j" type="revolute">'
     '<parent link="a"/><child link="b"/><limit lower="1" upper="0"/></joint></robot>',
     r"r\.urdf:2 <limit>: joint 'j': lower limit 1\.0 is above upper limit 0\.0"),
    ('<robot name="r"><link name="a"/><link name="b"/>\n<joint name="j" type="revolute">'
     '<parent link="a"/><child link="b"/><axis xyz="0 0 0"/></joint></robot>',
     r"r\.urdf:2 <axis>: joint axis \[0\.0, 0\.0, 0\.0\] has zero length"),
    ('<robot name="r"><link name="a"/><link name="b"/>\n<joint name="j" type="floating">'
     '<parent link="a"/><child link="b"/></joint></robot>',
     r"r\.urdf:2 <joint name='j'>: a floating joint is supported only directly below"),
    ('<robot name="r">\n<link name="a"><inertial><origin xyz="0 0"/><mass value="1"/>'
     '</inertial></link></robot>', r"r\.urdf:2 <origin>: attribute xyz='0 0' must be 3"),
    ('<mujoco/>', r"r\.urdf:1 <mujoco>: the root element of a URDF must be <robot>"),
    ('<robot name="r"><link name="a"/><link name="b"/>\n<joint name="j" type="continuous">'
     '<parent link="a"/><child link="b"/><mimic joint="nope"/></joint></robot>',
     r"r\.urdf:2 <mimic>: joint 'j' mimics joint 'nope', which is not defined; fix the file, "
     r"or load with mimic=False"),
    ('<robot name="r"><link name="a"/><link name="b"/>\n<joint name="j" type="continuous">'
     '<parent link="a"/><child link="b"/><mimic/></joint></robot>',
     r"r\.urdf:2 <mimic>: joint 'j' mimics joint '', which is not defined"),
    ('<robot name="r"><link name="a"/><link name="b"/>\n<joint name="j" type="continuous">'
     '<parent link="a"/><child link="b"/><mimic joint="j"/></joint></robot>',
     r"r\.urdf:2 <mimic>: joint 'j' mimics itself"),
    ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>\n'
     '<joint name="f" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
     '<joint name="j" type="revolute"><parent link="b"/><child link="c"/><mimic joint="f"/>'
     '</joint></robot>',
     r"r\.urdf:3 <mimic>: joint 'f' is fixed, but a mimicked joint must be revolute, "
     r"continuous, prismatic \(one coordinate\)"),
    ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>\n'
     '<joint name="f" type="revolute"><parent link="a"/><child link="b"/></joint>\n'
     '<joint name="p" type="planar"><parent link="b"/><child link="c"/><mimic joint="f"/>'
     '</joint></robot>', r"r\.urdf:3 <mimic>: joint 'p' is planar, but a mimicking joint"),
    ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>\n'
     '<joint name="f" type="revolute"><parent link="a"/><child link="b"/></joint>\n'
     '<joint name="j" type="revolute"><parent link="b"/><child link="c"/>'
     '<mimic joint="f" multiplier="two"/></joint></robot>',
     r"r\.urdf:3 <mimic>: attribute multiplier='two' must be 1 number"),
]


@pytest.mark.parametrize("text,pattern", ERRORS)
def test_errors_name_file_and_line(text, pattern):
    """Each malformed input raises ModelError naming the file, line and element."""
    with pytest.raises(ModelError, match=pattern):
        parse_urdf(text, filename="r.urdf")


def test_world_root_cannot_float():
    """A root link named 'world' is the world body: floating_base=True is refused."""
    urdf = '<robot name="r"><link name="world"/></robot>'
    with pytest.raises(ModelError, match="root link is named 'world'.*floating_base=False"):
        parse_urdf(urdf, floating_base=True)


def test_missing_file():
    """A path that does not exist is reported as such (not parsed as XML text)."""
    with pytest.raises(ModelError, match="no_such.urdf' does not exist"):
        parse_urdf("no_such.urdf")


def test_load_dispatches_on_extension(tmp_path):
    """js.load sends .urdf files here and passes floating_base through."""
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    m = js.load(path, floating_base=True)
    assert m.nq == 7 + 2 and m.names["joint"][0] == "root_joint"


# --------------------------------------------------------------------------------------------
# example-robot-data and Pinocchio parity

def _urdf_names(path):
    root = ET.parse(path).getroot()
    links = {e.get("name") for e in root.findall("link")}
    joints = {e.get("name") for e in root.findall("joint") if e.get("type") != "fixed"}
    return links, joints


def _mimics_in_file(path):
    """{mimicking joint: (joint it names, multiplier, offset)} read with ElementTree."""
    out = {}
    for j in ET.parse(path).getroot().findall("joint"):
        mimic = j.find("mimic")
        if mimic is not None and j.get("type") != "fixed":
            out[j.get("name")] = (mimic.get("joint"), float(mimic.get("multiplier", 1)),
                                  float(mimic.get("offset", 0)))
    return out


@pytest.mark.parametrize("path", ROBOT_FILES, ids=lambda p: _rel(p))
def test_example_robot_data_loads(path):
    """Every robot loads with all its collision geometry (.dae included) and equals Pinocchio.

    Except the files in KNOWN_FAILURES, which fail as said. Checked against Pinocchio's model
    of the same file: link placements at 3 seeded configurations and body inertias (TOL), and
    where Pinocchio builds the file's mimic model, the coupled frames, M and RNEA.
    """
    pin = pytest.importorskip("pinocchio")
    rel = _rel(path)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", JointspaceWarning)
        if rel in KNOWN_FAILURES:
            with pytest.raises(ModelError, match=KNOWN_FAILURES[rel]):
                load_urdf(path, visual=False)
            return
        m = load_urdf(path, visual=False)
    unread = [str(w.message) for w in rec if "could not be found or read" in str(w.message)]
    assert unread == []
    links, joints = _urdf_names(path)
    assert set(m.names["site"]) == links
    assert set(m.names["joint"]) == joints
    assert set(m.names["body"]) - {"world"} <= links
    root = ET.parse(path).getroot()
    assert int(np.count_nonzero(m.geom_contype)) == len(root.findall("link/collision"))
    seed = sum(map(ord, rel))
    _check_parity(m, pin.buildModelFromUrdf(str(path)), seed=seed, nconf=3)
    mimics = _mimics_in_file(path)
    assert {m.names["equality"][e]: (m.names["joint"][m.eq_obj2id[e]], m.eq_data[e, 1],
                                     m.eq_data[e, 0]) for e in range(m.neq)} == mimics
    if mimics and rel not in PIN_MIMIC_UNSUPPORTED:
        _check_mimic_parity(m, pin.buildModelFromUrdf(str(path), mimic=True), seed, nconf=2)


def test_supported_robot_list_covers_the_families():
    """The robots the project claims to support are not among the known failures."""
    loaded = {_rel(p) for p in ROBOT_FILES if _rel(p) not in KNOWN_FAILURES}
    for rel in ("panda_description/urdf/panda.urdf", "ur_description/urdf/ur5_robot.urdf",
                "solo_description/robots/solo12.urdf", "talos_data/robots/talos_reduced.urdf",
                "romeo_description/urdf/romeo.urdf",
                "anymal_b_simple_description/robots/anymal.urdf",
                "a1_description/urdf/a1.urdf", "go1_description/urdf/go1.urdf",
                "kinova_description/robots/kinova.urdf"):
        assert rel in loaded


def _pin_q(m, pm, q):
    """Pinocchio's configuration for our qpos q.

    Joints are matched by name; free-joint quaternions become (x, y, z, w); continuous joints
    (Pinocchio's unbounded revolute) become (cos, sin).
    """
    qp = np.zeros(pm.nq)
    for j, name in enumerate(m.names["joint"]):
        a = m.jnt_qposadr[j]
        pj = pm.joints[pm.getJointId(name)]
        if pj.nq == 0:
            continue  # a mimicking joint of Pinocchio's mimic model: no coordinate of its own
        i = pj.idx_q
        if m.jnt_type[j] == JNT_FREE:
            qp[i:i + 3] = q[a:a + 3]
            qp[i + 3:i + 6] = q[a + 4:a + 7]
            qp[i + 6] = q[a + 3]
        elif pj.nq == 2:
            qp[i:i + 2] = np.cos(q[a]), np.sin(q[a])
        else:
            qp[i] = q[a]
    return qp


def _random_q(m, rng):
    q = rng.uniform(-np.pi, np.pi, m.nq)
    for j in range(m.njnt):
        if m.jnt_type[j] == JNT_FREE:
            a = m.jnt_qposadr[j]
            q[a:a + 3] = rng.normal(size=3)
            quat = rng.normal(size=4)
            q[a + 3:a + 7] = quat / np.linalg.norm(quat)
    return q


def _check_parity(m, pm, seed, nconf=20):
    """Link placements (sites and bodies) and body inertias against Pinocchio."""
    import pinocchio as pin

    assert m.nv == pm.nv
    assert set(m.names["joint"]) == set(pm.names[1:])
    pd = pm.createData()
    d = js.make_data(m)
    rng = np.random.default_rng(seed)
    assert all(pm.existFrame(name, pin.BODY) for name in m.names["site"])
    frame = {name: pm.getFrameId(name, pin.BODY) for name in m.names["site"]}
    for _ in range(nconf):
        q = _random_q(m, rng)
        js.kinematics(m, d, qpos=q)
        pin.framesForwardKinematics(pm, pd, _pin_q(m, pm, q))
        for s, name in enumerate(m.names["site"]):
            oMf = pd.oMf[frame[name]]
            np.testing.assert_allclose(d.site_xpos[s], oMf.translation, atol=TOL, err_msg=name)
            np.testing.assert_allclose(d.site_xmat[s].reshape(3, 3), oMf.rotation, atol=TOL,
                                       err_msg=name)
        for b in range(1, m.nbody):
            oMf = pd.oMf[frame[m.names["body"][b]]]
            np.testing.assert_allclose(d.xpos[b], oMf.translation, atol=TOL)
            np.testing.assert_allclose(d.xmat[b].reshape(3, 3), oMf.rotation, atol=TOL)
    # inertias: a jointed body against its Pinocchio joint, a welded root against the universe
    compared = set()
    for b in range(1, m.nbody):
        if m.body_jntnum[b]:
            compared.add(pm.getJointId(m.names["joint"][m.body_jntadr[b]]))
            inertia = pm.inertias[pm.getJointId(m.names["joint"][m.body_jntadr[b]])]
        elif m.body_parentid[b] == 0:
            inertia = pm.inertias[0]
        else:
            continue
        R = _quat_mat(m.body_iquat[b])
        assert m.body_mass[b] == pytest.approx(inertia.mass, abs=TOL)
        np.testing.assert_allclose(m.body_ipos[b], inertia.lever, atol=TOL)
        np.testing.assert_allclose(R @ np.diag(m.body_inertia[b]) @ R.T, inertia.inertia,
                                   atol=TOL)
    assert compared == set(range(1, pm.njoints))


PARITY = [
    ("panda_description/urdf/panda.urdf", False),
    ("ur_description/urdf/ur5_robot.urdf", False),
    ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", False),
    ("kinova_description/robots/kinova.urdf", False),
    ("solo_description/robots/solo12.urdf", True),
    ("anymal_b_simple_description/robots/anymal.urdf", True),
    ("go1_description/urdf/go1.urdf", True),
    ("talos_data/robots/talos_reduced.urdf", True),
]


@pytest.mark.parametrize("rel,floating", PARITY, ids=[p[0].split("/")[-1] for p in PARITY])
def test_pinocchio_parity(rel, floating):
    """Link placements at 20 random configurations, and body inertias, equal Pinocchio's."""
    pin = pytest.importorskip("pinocchio")
    path = ROBOTS / rel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = load_urdf(path, floating_base=floating, visual=False)
    args = (pin.JointModelFreeFlyer(),) if floating else ()
    pm = pin.buildModelFromUrdf(str(path), *args)
    _check_parity(m, pm, seed=sum(map(ord, rel)))


def test_pinocchio_parity_planar_and_floating_joints():
    """URDF planar (normal z, Pinocchio's only case) and floating joints, merged fixed links."""
    pin = pytest.importorskip("pinocchio")
    urdf = f"""<robot name="r">
      <link name="world"/>
      <link name="base">{_inertial(3.0, "0.1 0 0", "0.2 0 0", (0.1, 0.2, 0.25, 0.01, 0, 0))}</link>
      <link name="cart">{_inertial(1.0, "0 0.1 0", "0 0 0.4", (0.01, 0.02, 0.025, 0, 0, 0))}</link>
      <link name="lid">{_inertial(0.5, "0 0 0.2", "0.3 0 0", (0.01, 0.01, 0.01, 0, 0, 0))}</link>
      <joint name="float" type="floating"><parent link="world"/><child link="base"/></joint>
      <joint name="plane" type="planar"><parent link="base"/><child link="cart"/>
        <origin xyz="0.3 -0.2 0.1" rpy="0.4 0.5 0.6"/><axis xyz="0 0 1"/></joint>
      <joint name="weld" type="fixed"><parent link="cart"/><child link="lid"/>
        <origin xyz="0.1 0.2 0.3" rpy="1 2 3"/></joint>
    </robot>"""
    m = load_urdf_string(urdf)
    pm = pin.buildModelFromXML(urdf)
    pd = pm.createData()
    d = js.make_data(m)
    rng = np.random.default_rng(7)
    for _ in range(20):
        q = _random_q(m, rng)
        a = m.jnt_qposadr[m.joint("float")]
        qp = np.zeros(pm.nq)
        qp[:3], qp[3:6], qp[6] = q[a:a + 3], q[a + 4:a + 7], q[a + 3]  # quaternion xyzw
        x, y, th = (q[m.jnt_qposadr[m.joint(f"plane_{s}")]] for s in ("tx", "ty", "rz"))
        qp[7:] = x, y, np.cos(th), np.sin(th)
        js.kinematics(m, d, qpos=q)
        pin.framesForwardKinematics(pm, pd, qp)
        for s, name in enumerate(m.names["site"]):
            oMf = pd.oMf[pm.getFrameId(name, pin.BODY)]
            np.testing.assert_allclose(d.site_xpos[s], oMf.translation, atol=TOL)
            np.testing.assert_allclose(d.site_xmat[s].reshape(3, 3), oMf.rotation, atol=TOL)
    cart = pm.inertias[pm.getJointId("plane")]
    b = m.body("cart")
    R = _quat_mat(m.body_iquat[b])
    assert m.body_mass[b] == pytest.approx(cart.mass, abs=TOL)
    np.testing.assert_allclose(m.body_ipos[b], cart.lever, atol=TOL)
    np.testing.assert_allclose(R @ np.diag(m.body_inertia[b]) @ R.T, cart.inertia, atol=TOL)


def test_cycle_message_lists_the_loop():
    """The cycle message lists the links in joint order, closing the loop."""
    text = ERRORS[3][0]
    with pytest.raises(ModelError) as exc:
        parse_urdf(text, filename="r.urdf")
    loop = re.search(r"links (.*?);", str(exc.value)).group(1).split(" -> ")
    assert loop[0] == loop[-1] and set(loop) == {"b", "c"}


# --------------------------------------------------------------------------------------------
# mimic joints against MuJoCo's joint equality and Pinocchio's mimic model

# our step against mj_step on the same constraint rows: the same sums in float64, 100 steps
TRAJ_TOL = 1e-10
# the coupling is a soft constraint (MuJoCo's default solref, time constant 0.02 s): over
# 0.2 s it lags the exact coupling by at most 7e-4 here (measured), and the leader's
# trajectory stays within 2e-4 rad of Pinocchio's exactly coupled one
SOFT_TOL = 2e-3

MIMIC = f"""<robot name="mimic">
  <link name="base"/>
  <link name="arm">{_inertial(1.0, "0.1 0 0.2", inertia=(0.02, 0.03, 0.025, 0.001, 0, 0))}</link>
  <link name="fore">{_inertial(0.7, "0 0.1 0.1", inertia=(0.01, 0.02, 0.015, 0, 0.001, 0))}</link>
  <link name="slider">{_inertial(0.3, "0.05 0 0", inertia=(0.003, 0.002, 0.004, 0, 0, 1e-4))}</link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1" rpy="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="arm"/><child link="fore"/>
    <origin xyz="0.2 0 0.4"/><axis xyz="1 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
    <mimic joint="shoulder" multiplier="-1.5" offset="0.3"/></joint>
  <joint name="slide" type="prismatic"><parent link="fore"/><child link="slider"/>
    <origin xyz="0 0.2 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="shoulder" multiplier="0.2"/></joint>
</robot>"""


def _coupled_q(m, q):
    """q with every mimicking joint set from its equality: q1 = a0 + a1 · q2."""
    q = q.copy()
    for e in range(m.neq):
        a1, a2 = m.jnt_qposadr[m.eq_obj1id[e]], m.jnt_qposadr[m.eq_obj2id[e]]
        q[a1] = m.eq_data[e, 0] + m.eq_data[e, 1] * q[a2]
    return q


def _coupling_map(m, pm):
    """G (nv × pm.nv): our joint velocities from Pinocchio's reduced (mimic) velocities."""
    G = np.zeros((m.nv, pm.nv))
    leader = {m.eq_obj1id[e]: (m.eq_obj2id[e], m.eq_data[e, 1]) for e in range(m.neq)}
    for j, name in enumerate(m.names["joint"]):
        lead, scale = leader.get(j, (j, 1.0))
        pj = pm.joints[pm.getJointId(m.names["joint"][lead])]
        n = pj.nv
        G[m.jnt_dofadr[j]:m.jnt_dofadr[j] + n, pj.idx_v:pj.idx_v + n] = scale * np.eye(n)
    return G


def _check_mimic_parity(m, pm, seed, nconf=5):
    """Frames, M and RNEA at coupled configurations equal Pinocchio's mimic model's."""
    import pinocchio as pin

    assert m.nv - m.neq == pm.nv
    mimicking = {pm.names[i] for i in pm.mimicking_joints}
    assert {m.names["equality"][e] for e in range(m.neq)} == mimicking
    for i, k in zip(pm.mimicking_joints, pm.mimicked_joints):
        e = m.names["equality"].index(pm.names[i])
        jm = pm.joints[i].extract()
        assert m.names["joint"][m.eq_obj2id[e]] == pm.names[k]
        assert (m.eq_data[e, 0], m.eq_data[e, 1]) == (jm.offset, jm.scaling)
    pd, d = pm.createData(), js.make_data(m)
    rng = np.random.default_rng(seed)
    G = _coupling_map(m, pm)
    frame = {name: pm.getFrameId(name, pin.BODY) for name in m.names["site"]}
    for _ in range(nconf):
        q = _coupled_q(m, _random_q(m, rng))
        qp = _pin_q(m, pm, q)
        js.kinematics(m, d, qpos=q)
        pin.framesForwardKinematics(pm, pd, qp)
        for s, name in enumerate(m.names["site"]):
            np.testing.assert_allclose(d.site_xpos[s], pd.oMf[frame[name]].translation, atol=TOL)
            np.testing.assert_allclose(d.site_xmat[s].reshape(3, 3),
                                       pd.oMf[frame[name]].rotation, atol=TOL)
        v, a = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
        M = js.crba(m, d, q)
        np.testing.assert_allclose(G.T @ M @ G, pin.crba(pm, pd, qp), atol=TOL)
        tau = js.rnea(m, d, q, G @ v, G @ a)
        np.testing.assert_allclose(G.T @ tau, pin.rnea(pm, pd, qp, v, a), atol=TOL)


def test_mimic_matches_pinocchio_mimic_model():
    """Coupled configurations: frames, GᵀMG and Gᵀτ equal Pinocchio's reduced mimic model."""
    pin = pytest.importorskip("pinocchio")
    m = load_urdf_string(MIMIC)
    assert m.neq == 2
    _check_mimic_parity(m, pin.buildModelFromXML(MIMIC, mimic=True), seed=3)


def test_mimic_trajectory_matches_mujoco_and_stays_coupled():
    """100 steps equal MuJoCo's (its URDF import makes the same joint equalities); coupled."""
    mujoco = pytest.importorskip("mujoco")
    pin = pytest.importorskip("pinocchio")
    mj = mujoco.MjModel.from_xml_string(MIMIC)
    m = load_urdf_string(MIMIC)
    for k in ("eq_type", "eq_obj1id", "eq_obj2id", "eq_solref", "eq_solimp"):
        np.testing.assert_array_equal(getattr(m, k), getattr(mj, k), err_msg=k)
    np.testing.assert_array_equal(m.eq_data[:, :5], mj.eq_data[:, :5])  # polycoef
    md, d = mujoco.MjData(mj), js.make_data(m)
    q0, w0 = 0.4, 1.0
    md.qpos[:] = d.qpos[:] = [q0, 0.3 - 1.5 * q0, 0.2 * q0]
    md.qvel[:] = d.qvel[:] = [w0, -1.5 * w0, 0.2 * w0]
    # Pinocchio's exactly coupled model, integrated as MuJoCo's Euler (v first, then q)
    pm = pin.buildModelFromXML(MIMIC, mimic=True)
    pd = pm.createData()
    qr, vr, h = np.array([q0]), np.array([w0]), m.opt.timestep
    for _ in range(100):
        mujoco.mj_step(mj, md)
        js.step(m, d)
        np.testing.assert_allclose(d.qpos, md.qpos, atol=TRAJ_TOL)
        np.testing.assert_allclose(d.qvel, md.qvel, atol=TRAJ_TOL)
        assert abs(d.qpos[1] - (0.3 - 1.5 * d.qpos[0])) < SOFT_TOL
        assert abs(d.qpos[2] - 0.2 * d.qpos[0]) < SOFT_TOL
        vr = vr + h * np.linalg.solve(pin.crba(pm, pd, qr), -pin.nle(pm, pd, qr, vr))
        qr = qr + h * vr
    assert abs(d.qpos[0] - qr[0]) < SOFT_TOL
    assert abs(d.qpos[0] - q0) > 100 * SOFT_TOL  # it moved
    # without the coupling the same start drifts apart
    free = load_urdf_string(MIMIC, mimic=False)
    df = js.make_data(free)
    df.qpos[:] = [q0, 0.3 - 1.5 * q0, 0.2 * q0]
    df.qvel[:] = [w0, -1.5 * w0, 0.2 * w0]
    js.step(free, df, 100)
    assert abs(df.qpos[1] - (0.3 - 1.5 * df.qpos[0])) > 10 * SOFT_TOL


# --------------------------------------------------------------------------------------------
# COLLADA meshes in URDF files against Pinocchio's geometry model

# vertices are single precision on both sides, ours in the mesh's inertial frame, coal's in
# the file's: a few float32 ulps of the mesh's largest coordinate
F32_TOL = 4 * float(np.finfo(np.float32).eps)

DAE_PARITY = [("kinova_description/robots/kinova.urdf", "COLLISION"),
              ("hyq_description/robots/hyq_no_sensors.urdf", "COLLISION"),
              ("borinot_description/urdf/borinot_flying_arm_2.urdf", "COLLISION"),
              ("ur_description/urdf/ur5_robot.urdf", "VISUAL")]


def _world_meshes(m, d, colliding):
    """(world vertices, world hull vertices) of our mesh geoms that do or do not collide."""
    out = []
    for g in range(m.ngeom):
        k = m.geom_dataid[g]
        if k < 0 or bool(m.geom_contype[g]) != colliding:
            continue
        v = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        h = m.hull_vert[m.mesh_hullvertadr[k]:m.mesh_hullvertadr[k] + m.mesh_hullvertnum[k]]
        R, p = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g]
        out.append((v @ R.T + p, h @ R.T + p))
    return out


@pytest.mark.parametrize("rel,kind", DAE_PARITY, ids=[p[0].split("/")[-1] for p in DAE_PARITY])
def test_dae_meshes_match_pinocchio_geometry(rel, kind):
    """Each .dae geom's vertices and convex hull, placed in the world, equal Pinocchio's."""
    pin = pytest.importorskip("pinocchio")
    pytest.importorskip("coal")
    from scipy.spatial import ConvexHull, cKDTree

    path = ROBOTS / rel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = load_urdf(path)
    pm = pin.buildModelFromUrdf(str(path))
    gm = pin.buildGeomFromUrdf(pm, str(path), getattr(pin.GeometryType, kind),
                               package_dirs=[str(ROBOTS.parent.parent)])
    q = _random_q(m, np.random.default_rng(sum(map(ord, rel))))
    d = js.make_data(m)
    js.kinematics(m, d, qpos=q)
    pd, gd = pm.createData(), pin.GeometryData(gm)
    pin.updateGeometryPlacements(pm, pd, gm, gd, _pin_q(m, pm, q))
    ours = _world_meshes(m, d, colliding=kind == "COLLISION")
    dae = [i for i, go in enumerate(gm.geometryObjects) if go.meshPath.endswith(".dae")]
    assert len(dae) == len(ours) > 0
    unmatched = list(range(len(ours)))
    for i in dae:
        geom = gm.geometryObjects[i].geometry
        local = np.array(geom.vertices())
        geom.buildConvexHull(False, "Qt")
        X = gd.oMg[i]
        verts = local @ X.rotation.T + X.translation
        hull = np.array(geom.convex.points()) @ X.rotation.T + X.translation
        tol = F32_TOL * float(np.abs(local).max())
        # our geom with as many distinct vertices and the nearest centroid
        n = len(np.unique(local.astype(np.float32), axis=0))
        j = min((j for j in unmatched if len(ours[j][0]) == n),
                key=lambda j: np.linalg.norm(ours[j][0].mean(axis=0) - verts.mean(axis=0)))
        unmatched.remove(j)
        v, h = ours[j]
        gap = max(cKDTree(v).query(verts)[0].max(), cKDTree(verts).query(v)[0].max())
        assert gap <= tol, (gm.geometryObjects[i].name, gap)
        # the hulls are the same solid: each one's vertices inside the other, equal volumes
        ours_h, coal_h = ConvexHull(h), ConvexHull(hull)
        for a, b in ((h, coal_h), (hull, ours_h)):
            assert (a @ b.equations[:, :3].T + b.equations[:, 3]).max() <= tol
        assert ours_h.volume == pytest.approx(coal_h.volume, rel=10 * F32_TOL)


CUBE_DAE = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="24">0 0 0 1 0 0 1 1 0 0 1 0 0 0 1 1 0 1 1 1 1 0 1 1
      </float_array><technique_common><accessor source="#pa" count="8" stride="3"/>
      </technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <polylist count="6"><input semantic="VERTEX" source="#v" offset="0"/>
      <vcount>4 4 4 4 4 4</vcount>
      <p>0 3 2 1 4 5 6 7 0 1 5 4 1 2 6 5 2 3 7 6 3 0 4 7</p></polylist>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n"><translate>5 0 0</translate>
    <instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"""


def test_dae_in_urdf_and_unreadable_dae_named(tmp_path):
    """A .dae mesh becomes a geom (scaled, node transform kept); a truncated one is named."""
    from scipy.spatial.distance import pdist

    (tmp_path / "cube.dae").write_text(CUBE_DAE)
    (tmp_path / "cut.dae").write_text(CUBE_DAE[:len(CUBE_DAE) // 2])
    urdf = f"""<robot name="r"><link name="a">{_inertial(1.0)}
      <collision><geometry><mesh filename="cube.dae" scale="2 2 2"/></geometry></collision>
      <collision><geometry><mesh filename="cut.dae"/></geometry></collision></link></robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(urdf)
    with pytest.warns(JointspaceWarning, match=r"1 mesh file\(s\) could not be found or read.*"
                                               r"cut\.dae:\d+: malformed COLLADA file.*truncated"):
        m = load_urdf(path)
    assert m.ngeom == 1 and m.nmesh == 1
    d = js.make_data(m)
    js.kinematics(m, d, qpos=np.zeros(0))
    # the cube of side 2 centred at 2 · (5.5, 0.5, 0.5) in the link frame
    np.testing.assert_allclose(d.geom_xpos[0], [11, 1, 1], atol=SPEC_TOL)
    assert pdist(m.mesh_vert).max() == pytest.approx(2 * np.sqrt(3), rel=SPEC_TOL)


def test_mimic_equalities_match_mujoco_on_talos():
    """talos_full_v2's 12 mimics make the joint equalities MuJoCo's URDF import makes.

    Pinocchio cannot build this file's mimic model; MuJoCo loads it with its geometry stripped.
    """
    mujoco = pytest.importorskip("mujoco")
    text = (ROBOTS / "talos_data/robots/talos_full_v2.urdf").read_text()
    text = re.sub(r"<(visual|collision)\b.*?</\1>", "", text, flags=re.S)
    mj = mujoco.MjModel.from_xml_string(text)
    m = load_urdf_string(text)

    def equalities(model, joint_name):
        return {(joint_name(model.eq_obj1id[e]), joint_name(model.eq_obj2id[e]),
                 *model.eq_data[e, :5]) for e in range(model.neq)}

    ours = equalities(m, lambda j: m.names["joint"][j])
    assert len(ours) == 12
    assert ours == equalities(mj, lambda j: mj.joint(j).name)
    np.testing.assert_array_equal(m.eq_solref, mj.eq_solref)
    np.testing.assert_array_equal(m.eq_solimp, mj.eq_solimp)
