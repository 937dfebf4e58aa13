"""Tests of the MJCF loader: parse-level semantics, errors, and parity with MuJoCo's compiler.

Parse-level tests check the `ModelSpec` that `parse_mjcf` builds, most of them against the
same document compiled by MuJoCo (bodies, joints and geoms are numbered depth-first in both,
so spec elements line up with MuJoCo's arrays). Parity tests compile with jointspace's
`compile_model` and compare the compiled `Model` with `mujoco.MjModel` field by field.
"""

import math
import warnings

import numpy as np
import pytest

from jointspace import types as T
from jointspace.errors import JointspaceWarning, ModelError
from jointspace.io.mjcf import load_mjcf, load_mjcf_string, parse_mjcf
from tests.mjcf_cases import CASES

# Loading is a handful of float64 operations per element, so agreement is to rounding.
TOL = 1e-9

TREE = """
<mujoco model="tree">
  <compiler angle="degree"/>
  <option timestep="0.004" gravity="0 0 -9.8"/>
  <default>
    <joint damping="0.5" armature="0.01"/>
    <geom density="800" friction="0.8"/>
    <default class="limb">
      <joint type="hinge" axis="0 1 0" range="-90 45" stiffness="2" springref="10"/>
      <geom type="capsule" size="0.05" rgba="1 0 0 1"/>
      <default class="heavy">
        <geom density="3000" friction="0.6 0.01"/>
      </default>
    </default>
    <default class="ballj">
      <joint type="ball" range="0 60" damping="0.2"/>
    </default>
  </default>
  <asset>
    <mesh name="tet" vertex="0 0 0  0.2 0 0  0 0.3 0  0 0 0.25"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1.2" euler="10 20 30">
      <freejoint name="root"/>
      <geom name="g_sphere" type="sphere" size="0.15"/>
      <geom name="g_box" type="box" size="0.1 0.2 0.05" pos="0 0 -0.2" axisangle="1 1 0 30"/>
      <geom name="g_ell" type="ellipsoid" size="0.1 0.07 0.05" pos="0.1 0 0.1" euler="0 45 0"/>
      <geom name="g_cyl" type="cylinder" fromto="-0.1 -0.1 0 0.1 0.1 0.05" size="0.03"/>
      <body name="arm" pos="0.2 0 0" childclass="limb">
        <joint name="shoulder"/>
        <geom name="upper" fromto="0 0 0 0.3 0 0"/>
        <body name="forearm" pos="0.3 0 0" axisangle="0 0 1 20">
          <joint name="elbow" axis="0 0 1" ref="15"/>
          <geom name="lower" class="heavy" fromto="0 0 0 0 0 -0.25" size="0.04"/>
          <geom name="hand_box" type="box" class="heavy" fromto="0 0 -0.25 0.05 0 -0.35"
                size="0.03 0.02"/>
        </body>
      </body>
      <body name="head" pos="0 0 0.3">
        <joint name="neck" class="ballj"/>
        <geom name="skull" type="ellipsoid" size="0.08 0.09 0.1"/>
        <geom name="nose" type="mesh" mesh="tet" pos="0.05 0 0" euler="0 0 90"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

INERTIA = """
<mujoco model="inertia">
  <compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0 0 1" quat="0.9 0.1 0.2 0.3">
      <joint name="a_slide" type="slide" axis="1 1 0" range="-0.5 0.5"/>
      <inertial pos="0.1 0.2 0.3" quat="0.8 0.3 -0.2 0.1" mass="2.5" diaginertia="0.3 0.2 0.25"/>
      <geom size="0.1"/>
      <body name="b" pos="0.5 0 0">
        <joint name="b_hinge" axis="0 0 1" range="-1 1.5" ref="0.3"/>
        <inertial pos="0 0.1 0" mass="1.5" fullinertia="0.04 0.05 0.06 0.001 -0.002 0.003"/>
        <geom type="box" size="0.1 0.1 0.1"/>
        <body name="c" pos="0 0.4 0">
          <joint name="c_ball" type="ball"/>
          <inertial pos="0 0 0" euler="0.3 0.2 0.1" mass="0.7" diaginertia="0.01 0.02 0.015"/>
        </body>
      </body>
    </body>
    <body name="d" pos="1 1 1">
      <freejoint/>
      <inertial pos="0.05 0 0" mass="3" fullinertia="0.3 0.3 0.2 0 0 0.05"/>
    </body>
  </worldbody>
</mujoco>
"""

ORIENT = """
<mujoco model="orient">
  <compiler angle="radian" eulerseq="ZYX"/>
  <default>
    <geom type="box" size="0.05 0.04 0.03"/>
  </default>
  <worldbody>
    <body name="e1" euler="0.3 -0.2 0.5">
      <joint name="j1" type="slide" axis="0 0 1"/>
      <geom/>
      <body name="e2" pos="0 0 0.2" xyaxes="0 1 0 -1 0 0.2">
        <joint name="j2" axis="1 0 0" springref="0.2" stiffness="3"/>
        <geom zaxis="0 0 -1" pos="0.1 0 0"/>
        <geom zaxis="1 1 1" pos="0 0.1 0"/>
        <body name="e3" pos="0.1 0 0" zaxis="0 -1 0.2">
          <joint name="j3" axis="0 1 1" range="-0.3 0.4"/>
          <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.02"/>
          <geom type="cylinder" fromto="0 0 0 0 0 -0.3" size="0.02"/>
          <geom type="ellipsoid" fromto="0.1 0.1 0.1 0.2 0.3 0.1" size="0.02"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

FRAMES = """
<mujoco model="frames">
  <default>
    <default class="f">
      <geom type="capsule" size="0.02 0.1"/>
      <joint axis="1 0 0"/>
    </default>
  </default>
  <worldbody>
    <frame pos="0.5 0 0" euler="0 0 90">
      <body name="p" pos="0.1 0.2 0.3">
        <joint name="pj"/>
        <geom type="sphere" size="0.1"/>
        <frame pos="0 0 0.1" axisangle="0 1 0 30" childclass="f">
          <joint name="pj2" pos="0 0 0.05"/>
          <geom pos="0.1 0 0"/>
          <frame euler="90 0 0">
            <body name="q" pos="0 0.2 0">
              <joint name="qj"/>
              <geom/>
              <site name="qs" pos="0.1 0 0" euler="0 90 0"/>
            </body>
          </frame>
        </frame>
      </body>
    </frame>
  </worldbody>
</mujoco>
"""

ACTUATORS = """
<mujoco model="actuators">
  <default>
    <motor ctrlrange="-1 1" gear="2"/>
    <default class="servo">
      <position kp="50" kv="3" forcerange="-20 20"/>
    </default>
    <default class="damped">
      <velocity kv="4"/>
    </default>
  </default>
  <worldbody>
    <body name="b1">
      <joint name="j1" range="-45 45"/>
      <geom size="0.1" pos="0 0 -0.2"/>
      <site name="s1" pos="0 0 -0.2"/>
      <body name="b2" pos="0 0 -0.4">
        <joint name="j2" type="slide" axis="0 0 1" range="-0.1 0.1"/>
        <geom type="box" size="0.05 0.05 0.05"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m1" joint="j1"/>
    <motor name="m2" joint="j2" gear="3" ctrllimited="false"/>
    <position name="p1" joint="j1" class="servo"/>
    <position name="p2" joint="j2" class="servo" kp="80"/>
    <position name="p3" joint="j1" kp="10" inheritrange="0.5"/>
    <velocity name="v1" joint="j1" class="damped"/>
    <velocity name="v2" joint="j2" kv="7"/>
    <general name="g1" joint="j1" gainprm="5 1" biastype="affine" biasprm="0.1 -2 -0.3" gear="1.5"/>
    <general name="g2" site="s1" gear="0 0 1 0 0 0" forcerange="-3 3"/>
    <position name="p4" joint="j2" class="damped" kp="3"/>
    <velocity name="v3" joint="j2" class="servo"/>
  </actuator>
</mujoco>
"""

GEOMINERTIA = """
<mujoco model="geominertia">
  <compiler inertiafromgeom="true"/>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint type="ball"/>
      <inertial pos="0 0 0" mass="100" diaginertia="1 1 1"/>
      <geom type="capsule" fromto="0 0 0 0.2 0.1 -0.3" size="0.04"/>
      <geom type="box" size="0.1 0.05 0.02" pos="0.1 0 0" euler="10 20 30" mass="0.7"/>
      <body name="b" pos="0.2 0.1 -0.3">
        <joint axis="0 1 0"/>
        <geom type="cylinder" size="0.03 0.1" euler="0 90 0" density="5000"/>
        <geom type="ellipsoid" size="0.05 0.03 0.02" pos="0 0 -0.1"/>
        <geom type="sphere" size="0.04" pos="0 0 -0.2" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

EQUALITY = """
<mujoco model="equality">
  <worldbody>
    <body name="a" pos="0 0 1">
      <freejoint/>
      <geom name="a_g" size="0.1"/>
    </body>
    <body name="b" pos="0.5 0 1">
      <joint name="jb" axis="0 1 0"/>
      <geom size="0.1"/>
      <body name="c" pos="0.3 0 0">
        <joint name="jc" axis="0 1 0"/>
        <geom name="c_g" size="0.05"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <connect body1="a" body2="b" anchor="0.1 0 0" solref="0.01 1"/>
    <weld body1="c" anchor="0 0 0.1" relpose="0.1 0.2 0.3 1 0 0 0" torquescale="2"/>
    <joint joint1="jc" joint2="jb" polycoef="0.1 2" active="false"/>
  </equality>
  <contact>
    <exclude body1="a" body2="b"/>
    <pair geom1="a_g" geom2="c_g" condim="4" friction="0.5"/>
  </contact>
</mujoco>
"""


PARITY_DOCS = {
    "tree": TREE, "inertia": INERTIA, "orient": ORIENT, "frames": FRAMES,
    "actuators": ACTUATORS, "geominertia": GEOMINERTIA, "equality": EQUALITY, **CASES,
}


# ------------------------------------------------------------------------------------------
# helpers


def _parse(xml, **kw):
    """parse_mjcf with warnings silenced (tests of warnings catch them themselves)."""
    kw.setdefault("filename", "model.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        return parse_mjcf(xml, **kw)


def _mj(xml):
    mujoco = pytest.importorskip("mujoco")
    return mujoco.MjModel.from_xml_string(xml)


def _bodies(spec):
    """Bodies depth-first (MuJoCo's numbering) with their parent index."""
    out = []

    def visit(b, parent):
        out.append((b, parent))
        me = len(out) - 1
        for c in b.children:
            visit(c, me)

    visit(spec.world, 0)
    return out


def _elements(spec, kind):
    return [e for b, _ in _bodies(spec) for e in getattr(b, kind)]


def _assert_quat(a, b, tol=TOL):
    """Quaternions equal up to sign, row by row."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    err = np.minimum(np.abs(a - b).max(axis=1), np.abs(a + b).max(axis=1))
    assert err.max() <= tol, err


def _doc(body, pre=""):
    """A document whose <worldbody> holds `body`; `pre` goes before the worldbody."""
    return f"<mujoco>\n{pre}\n<worldbody>\n{body}\n</worldbody>\n</mujoco>"


def _error(xml, *fragments, **kw):
    """The ModelError message of parsing `xml`, checked to contain `fragments`."""
    with pytest.raises(ModelError) as info:
        _parse(xml, **kw)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, msg
    return msg


# ------------------------------------------------------------------------------------------
# frames and orientations, against MuJoCo's compiled model


ORIENTATION_CASES = [
    ("", 'euler="10 20 30"'),
    ('<compiler eulerseq="ZYX"/>', 'euler="10 -20 30"'),
    ('<compiler eulerseq="zxz"/>', 'euler="40 20 -70"'),
    ('<compiler eulerseq="XyZ" angle="radian"/>', 'euler="0.4 0.2 -0.7"'),
    ("", 'axisangle="1 2 3 75"'),
    ('<compiler angle="radian"/>', 'axisangle="0 0 -2 1.2"'),
    ("", 'xyaxes="0 1 0 -1 0 0"'),
    ("", 'xyaxes="1 1 0 0 1 1"'),
    ("", 'xyaxes="-1 0 0 0 -1 0.1"'),
    ("", 'zaxis="0 0 -1"'),
    ("", 'zaxis="1 -2 0.5"'),
    ("", 'zaxis="0 0 3"'),
    ("", 'quat="1 2 3 4"'),
]


@pytest.mark.parametrize("pre, attr", ORIENTATION_CASES)
def test_orientation_matches_mujoco(pre, attr):
    xml = _doc(f'<body name="b" pos="1 2 3" {attr}><joint/><geom size="0.1" {attr}/>'
               f'<site name="s" {attr}/></body>', pre)
    spec, m = _parse(xml), _mj(xml)
    body = spec.world.children[0]
    _assert_quat(body.quat, m.body_quat[1])
    _assert_quat(body.geoms[0].quat, m.geom_quat[0])
    _assert_quat(body.sites[0].quat, m.site_quat[0])
    np.testing.assert_allclose(np.linalg.norm(body.quat), 1.0, atol=TOL)


def test_degree_and_radian_give_the_same_frames():
    deg = _parse(_doc('<body euler="90 0 45" pos="0 0 1"><joint range="-90 45" ref="30"/>'
                      '<geom size="0.1"/></body>'))
    rad = _parse(_doc(f'<body euler="{math.pi / 2} 0 {math.pi / 4}" pos="0 0 1">'
                      f'<joint range="{-math.pi / 2} {math.pi / 4}" ref="{math.pi / 6}"/>'
                      f'<geom size="0.1"/></body>', '<compiler angle="radian"/>'))
    bd, br = deg.world.children[0], rad.world.children[0]
    _assert_quat(bd.quat, br.quat)
    np.testing.assert_allclose(bd.joints[0].range, br.joints[0].range, atol=TOL)
    assert bd.joints[0].ref == pytest.approx(math.pi / 6, abs=TOL)


def test_fromto_geoms_match_mujoco():
    geoms = "\n".join([
        '<geom type="capsule" fromto="0 0 0 0 0 -1" size="0.1"/>',
        '<geom type="capsule" fromto="0 0 0 0 0 1" size="0.1"/>',
        '<geom type="cylinder" fromto="0.1 0.2 0.3 -0.4 0.5 0.9" size="0.05"/>',
        '<geom type="box" fromto="0 0 0 1 0 0" size="0.1 0.2"/>',
        '<geom type="ellipsoid" fromto="0 0 0 0.3 0.3 0.3" size="0.1 0.3"/>',
        '<geom type="capsule" fromto="1 1 1 1 1 0.4" size="0.05 0.7"/>',
    ])
    xml = _doc(f'<body><freejoint/>{geoms}</body>')
    spec, m = _parse(xml), _mj(xml)
    g = _elements(spec, "geoms")
    np.testing.assert_allclose([x.pos for x in g], m.geom_pos, atol=TOL)
    np.testing.assert_allclose([x.size for x in g], m.geom_size, atol=TOL)
    np.testing.assert_allclose([x.quat for x in g], m.geom_quat, atol=TOL)


def test_frame_element_composes_into_children():
    spec, m = _parse(FRAMES), _mj(FRAMES)
    bodies = _bodies(spec)
    np.testing.assert_allclose([b.pos for b, _ in bodies], m.body_pos, atol=TOL)
    _assert_quat([b.quat for b, _ in bodies], m.body_quat)
    joints = _elements(spec, "joints")
    np.testing.assert_allclose([j.pos for j in joints], m.jnt_pos, atol=TOL)
    np.testing.assert_allclose([j.axis for j in joints], m.jnt_axis, atol=TOL)
    geoms = _elements(spec, "geoms")
    np.testing.assert_allclose([g.pos for g in geoms], m.geom_pos, atol=TOL)
    _assert_quat([g.quat for g in geoms], m.geom_quat)
    np.testing.assert_allclose([g.size for g in geoms], m.geom_size, atol=TOL)
    site = _elements(spec, "sites")[0]
    np.testing.assert_allclose(site.pos, m.site_pos[0], atol=TOL)
    _assert_quat(site.quat, m.site_quat[0])


@pytest.mark.parametrize("name", ["tree", "orient", "frames", "actuators", "geominertia",
                                  "equality", *CASES])
def test_parsed_elements_line_up_with_mujoco(name):
    """Every body, joint and geom of the spec equals MuJoCo's compiled value at its index."""
    xml = PARITY_DOCS[name]
    spec, m = _parse(xml), _mj(xml)
    bodies = _bodies(spec)
    assert len(bodies) == m.nbody
    assert [p for _, p in bodies] == list(m.body_parentid)
    np.testing.assert_allclose([b.pos for b, _ in bodies], m.body_pos, atol=TOL)
    _assert_quat([b.quat for b, _ in bodies], m.body_quat)
    joints = _elements(spec, "joints")
    assert len(joints) == m.njnt
    types = {"free": 0, "ball": 1, "slide": 2, "hinge": 3}
    assert [types[j.type] for j in joints] == list(m.jnt_type)
    if joints:
        np.testing.assert_allclose([j.pos for j in joints], m.jnt_pos, atol=TOL)
        np.testing.assert_allclose([j.axis for j in joints], m.jnt_axis, atol=TOL)
        np.testing.assert_allclose([j.range for j in joints], m.jnt_range, atol=TOL)
        assert [j.limited for j in joints] == list(m.jnt_limited)
        np.testing.assert_allclose([j.stiffness for j in joints], m.jnt_stiffness, atol=TOL)
        np.testing.assert_allclose([j.solref_limit for j in joints], m.jnt_solref, atol=TOL)
        np.testing.assert_allclose([j.solimp_limit for j in joints], m.jnt_solimp, atol=TOL)
        dof = [m.jnt_dofadr[i] for i in range(m.njnt)]
        np.testing.assert_allclose([j.armature for j in joints], m.dof_armature[dof], atol=TOL)
        np.testing.assert_allclose([j.damping for j in joints], m.dof_damping[dof], atol=TOL)
    geoms = _elements(spec, "geoms")
    assert len(geoms) == m.ngeom
    prim = [i for i, g in enumerate(geoms) if g.type != "mesh"]
    np.testing.assert_allclose([geoms[i].size for i in prim], m.geom_size[prim], atol=TOL)
    np.testing.assert_allclose([geoms[i].pos for i in prim], m.geom_pos[prim], atol=TOL)
    _assert_quat([geoms[i].quat for i in prim], m.geom_quat[prim])
    np.testing.assert_allclose([g.friction for g in geoms], m.geom_friction, atol=TOL)
    np.testing.assert_allclose([g.solref for g in geoms], m.geom_solref, atol=TOL)
    np.testing.assert_allclose([g.solimp for g in geoms], m.geom_solimp, atol=TOL)
    assert [g.condim for g in geoms] == list(m.geom_condim)
    assert [g.contype for g in geoms] == list(m.geom_contype)


# ------------------------------------------------------------------------------------------
# default classes


def test_nested_defaults_inherit_and_merge_partial_vectors():
    spec = _parse(TREE)
    by_name = {g.name: g for g in _elements(spec, "geoms")}
    # main: density 800, friction 0.8 (rest from MuJoCo: 0.005, 0.0001)
    assert by_name["g_sphere"].density == 800.0
    assert by_name["g_sphere"].friction == (0.8, 0.005, 0.0001)
    # limb (via childclass): capsule of radius 0.05, inherits density from main
    assert by_name["upper"].type == "capsule" and by_name["upper"].density == 800.0
    assert by_name["upper"].size[0] == 0.05
    # heavy (class=): nested in limb, partial friction merged over main's
    assert by_name["lower"].density == 3000.0
    assert by_name["lower"].friction == (0.6, 0.01, 0.0001)
    assert by_name["lower"].size[0] == 0.04
    joints = {j.name: j for j in _elements(spec, "joints")}
    assert joints["shoulder"].damping == 0.5 and joints["shoulder"].stiffness == 2.0
    np.testing.assert_allclose(joints["shoulder"].axis, [0, 1, 0])
    np.testing.assert_allclose(joints["elbow"].axis, [0, 0, 1])
    assert joints["neck"].type == "ball" and joints["neck"].damping == 0.2
    # the free joint takes no defaults, as in MuJoCo
    assert joints["root"].damping == 0.0 and joints["root"].armature == 0.0


def test_childclass_propagates_to_descendants_and_class_overrides_it():
    xml = """<mujoco>
      <default>
        <default class="a"><geom size="0.1" density="10"/></default>
        <default class="b"><geom size="0.2" density="20"/></default>
      </default>
      <worldbody>
        <body name="p" childclass="a">
          <geom name="g1"/>
          <body name="q"><geom name="g2"/><geom name="g3" class="b"/>
            <body name="r" childclass="b"><geom name="g4"/></body>
          </body>
        </body>
        <geom name="g5" size="0.3"/>
      </worldbody>
    </mujoco>"""
    g = {x.name: x for x in _elements(_parse(xml), "geoms")}
    assert [g[n].density for n in ("g1", "g2", "g3", "g4", "g5")] == [10, 10, 20, 20, 1000]
    assert [g[n].size[0] for n in ("g1", "g2", "g3", "g4", "g5")] == [0.1, 0.1, 0.2, 0.2, 0.3]


def test_class_orientation_applies_unless_the_element_gives_one():
    xml = _doc('<geom size="1"/><geom size="1" quat="0 1 0 0"/><geom size="1" zaxis="1 0 0"/>',
               '<default><geom euler="90 0 0"/></default>')
    spec, m = _parse(xml), _mj(xml)
    _assert_quat([g.quat for g in spec.world.geoms], m.geom_quat)


# ------------------------------------------------------------------------------------------
# joints: units and limits


def test_joint_units_follow_the_compiler_angle():
    xml = _doc("""<body><joint name="h" range="-30 60" ref="10" springref="20"/>
      <joint name="s" type="slide" range="-30 60" ref="10" springref="20"/>
      <geom size="0.1"/>
      <body><joint name="b" type="ball" range="0 90"/><geom size="0.1"/></body></body>""")
    j = {x.name: x for x in _elements(_parse(xml), "joints")}
    np.testing.assert_allclose(j["h"].range, np.radians([-30, 60]), atol=TOL)
    assert j["h"].ref == pytest.approx(math.radians(10), abs=TOL)
    assert j["h"].springref == pytest.approx(math.radians(20), abs=TOL)
    assert j["s"].range == (-30.0, 60.0) and j["s"].ref == 10.0 and j["s"].springref == 20.0
    np.testing.assert_allclose(j["b"].range, [0.0, math.pi / 2], atol=TOL)


def test_unlimited_hinge_keeps_its_range_unconverted_like_mujoco():
    xml = _doc('<body><joint range="-90 90" limited="false"/><geom size="1"/></body>')
    spec, m = _parse(xml), _mj(xml)
    joint = spec.world.children[0].joints[0]
    assert not joint.limited
    np.testing.assert_allclose(joint.range, m.jnt_range[0])


@pytest.mark.parametrize("compiler, attrs, limited", [
    ("", 'range="-1 1"', True),
    ("", "", False),
    ("", 'range="-1 1" limited="false"', False),
    ("", 'limited="auto" range="-1 1"', True),
    ('<compiler autolimits="false"/>', 'range="-1 1" limited="true"', True),
    ('<compiler autolimits="false"/>', "", False),
])
def test_autolimits(compiler, attrs, limited):
    xml = _doc(f'<body><joint {attrs}/><geom size="1"/></body>', compiler)
    assert _parse(xml).world.children[0].joints[0].limited is limited
    assert bool(_mj(xml).jnt_limited[0]) is limited


def test_range_without_limited_needs_autolimits():
    xml = _doc('<body>\n<joint range="-1 1"/><geom size="1"/></body>',
               '<compiler autolimits="false"/>')
    _error(xml, "model.xml:5 <joint>", "autolimits")


# ------------------------------------------------------------------------------------------
# actuators


def test_actuator_shortcuts_map_to_gain_and_bias():
    acts = {a.name: a for a in _parse(ACTUATORS).actuators}
    assert acts["m1"].gainprm[0] == 1 and acts["m1"].biastype == "none"
    assert acts["m1"].gear[0] == 2 and acts["m1"].ctrllimited and acts["m1"].ctrlrange == (-1, 1)
    assert acts["m2"].gear[0] == 3 and not acts["m2"].ctrllimited
    p1 = acts["p1"]
    assert p1.gainprm[0] == 50 and p1.biasprm[1] == -50 and p1.biasprm[2] == -3
    assert p1.biastype == "affine" and p1.forcelimited and p1.forcerange == (-20, 20)
    p2 = acts["p2"]
    assert p2.gainprm[0] == 80 and p2.biasprm[1] == -80 and p2.biasprm[2] == -3
    v1 = acts["v1"]
    assert v1.gainprm[0] == 4 and v1.biasprm[2] == -4 and v1.biasprm[1] == 0
    assert acts["v2"].gainprm[0] == 7 and acts["v2"].biasprm[2] == -7
    g1 = acts["g1"]
    np.testing.assert_allclose(g1.gainprm[:3], [5, 1, 0])
    np.testing.assert_allclose(g1.biasprm[:3], [0.1, -2, -0.3])
    assert g1.gear[0] == 1.5
    assert acts["g2"].site == "s1" and acts["g2"].forcelimited
    np.testing.assert_allclose(acts["g2"].gear, [0, 0, 1, 0, 0, 0])


def test_inheritrange_sets_ctrlrange_from_the_joint_range():
    p3 = {a.name: a for a in _parse(ACTUATORS).actuators}["p3"]
    half = math.radians(45) * 0.5
    np.testing.assert_allclose(p3.ctrlrange, [-half, half], atol=TOL)
    assert p3.ctrllimited


@pytest.mark.parametrize("defaults", [
    '<position kp="10"/>',
    '<position kp="10" kv="1"/>',
    '<general gainprm="5"/><position kp="10"/>',
    '<position kp="10"/><general gainprm="5"/>',
    '<position kp="10" ctrlrange="-1 1"/><motor gear="3"/>',
    '<motor gear="3"/><velocity kv="4"/>',
    '<velocity kv="7"/>',
    '<general gainprm="2 3" biasprm="1 -2" biastype="affine"/>',
    '<general gainprm="5 2" biasprm="1 2 -3" biastype="affine"/>',
    '<position kp="4" kv="2"/><default class="c"><motor gear="2"/></default>',
])
def test_actuator_default_classes_match_mujoco(defaults):
    """One actuator default per class; shortcuts reuse it as MuJoCo 4.0 does."""
    xml = f"""<mujoco><default>{defaults}</default>
      <worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
      <actuator><general joint="j"/><motor joint="j"/><position joint="j"/>
        <velocity joint="j"/><position joint="j" kp="3"/><velocity joint="j" kv="2"/>
      </actuator></mujoco>"""
    acts, m = _parse(xml).actuators, _mj(xml)
    np.testing.assert_allclose([a.gainprm for a in acts], m.actuator_gainprm, atol=TOL)
    np.testing.assert_allclose([a.biasprm for a in acts], m.actuator_biasprm, atol=TOL)
    np.testing.assert_allclose([a.gear for a in acts], m.actuator_gear, atol=TOL)
    np.testing.assert_allclose([a.ctrlrange for a in acts], m.actuator_ctrlrange, atol=TOL)
    assert [a.ctrllimited for a in acts] == list(m.actuator_ctrllimited)
    assert [{"none": 0, "affine": 1}[a.biastype] for a in acts] == list(m.actuator_biastype)


# ------------------------------------------------------------------------------------------
# inertia, meshes, options, equality and contact


def test_inertial_is_kept_with_its_frame():
    spec = _parse(INERTIA)
    a = spec.world.children[0]
    assert a.inertial.mass == 2.5
    np.testing.assert_allclose(a.inertial.diaginertia, [0.3, 0.2, 0.25])
    np.testing.assert_allclose(a.inertial.quat, np.array([0.8, 0.3, -0.2, 0.1]) /
                               np.linalg.norm([0.8, 0.3, -0.2, 0.1]))
    b = a.children[0]
    np.testing.assert_allclose(b.inertial.fullinertia, [0.04, 0.05, 0.06, 0.001, -0.002, 0.003])
    assert b.inertial.diaginertia is None
    assert spec.inertiafromgeom == "auto"


def test_inertiafromgeom_true_drops_explicit_inertials():
    spec = _parse(GEOMINERTIA)
    assert spec.inertiafromgeom == "true"
    assert all(b.inertial is None for b, _ in _bodies(spec))


def test_inline_mesh_and_mesh_geom():
    spec = _parse(TREE)
    (mesh,) = spec.meshes
    assert mesh.name == "tet" and mesh.vertices.shape == (4, 3)
    np.testing.assert_allclose(mesh.vertices[1], [0.2, 0, 0])
    nose = {g.name: g for g in _elements(spec, "geoms")}["nose"]
    assert nose.type == "mesh" and nose.mesh == "tet"


OBJ_WEDGE = """v 0 0 0
v 0.3 0 0
v 0 0.2 0
v 0 0 0.1
v 0.3 0.2 0.1
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 5
f 2 5 4
f 3 4 5
"""


def test_mesh_files_resolve_with_meshdir_and_match_mujoco(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "wedge.obj").write_text(OBJ_WEDGE)
    path = tmp_path / "m.xml"
    path.write_text("""<mujoco>
      <compiler meshdir="assets"/>
      <asset><mesh file="wedge.obj"/><mesh name="w2" file="wedge.obj" scale="1.5 -1 2"/></asset>
      <worldbody><body name="b"><freejoint/><geom type="mesh" mesh="wedge"/>
        <geom type="mesh" mesh="w2" pos="0.1 0 0"/></body></worldbody>
    </mujoco>""")
    spec = _parse(str(path), filename=None)
    assert [m.name for m in spec.meshes] == ["wedge", "w2"]
    assert spec.meshes[0].file == str(tmp_path / "assets" / "wedge.obj")
    model = _compile_quiet(load_mjcf, str(path))
    mujoco = pytest.importorskip("mujoco")
    ref = mujoco.MjModel.from_xml_path(str(path))
    np.testing.assert_allclose(model.body_mass, ref.body_mass, rtol=TOL)
    np.testing.assert_allclose(_inertia_tensors(model), _inertia_tensors(ref), atol=TOL)
    np.testing.assert_allclose(model.geom_pos, ref.geom_pos, atol=TOL)
    np.testing.assert_allclose(model.geom_size, ref.geom_size, atol=TOL)
    _assert_quat(model.geom_quat, ref.geom_quat)


def test_mesh_file_from_assets_mapping():
    xml = _doc('<body><freejoint/><geom type="mesh" mesh="wedge"/></body>',
               '<asset><mesh file="wedge.obj"/></asset>')
    spec = _parse(xml, assets={"wedge.obj": OBJ_WEDGE.encode()})
    assert spec.meshes[0].vertices.shape == (5, 3)


def test_option_and_flags():
    xml = """<mujoco><option timestep="0.001" gravity="0 0 -1" integrator="RK4" cone="elliptic"
      solver="CG" iterations="7" tolerance="1e-6" impratio="2" noslip_iterations="0">
      <flag contact="disable" gravity="disable" energy="enable" spring="enable"/></option>
      <worldbody/></mujoco>"""
    opt = _parse(xml).option
    assert opt.timestep == 0.001 and opt.gravity == (0, 0, -1) and opt.integrator == "RK4"
    assert opt.cone == "elliptic" and opt.solver == "CG" and opt.iterations == 7
    assert opt.tolerance == 1e-6 and opt.impratio == 2 and opt.noslip_iterations == 0
    assert set(opt.disable_flags) == {"contact", "gravity"}
    assert opt.enable_flags == ("energy",)


def test_compiler_mass_options():
    xml = _doc("", '<compiler balanceinertia="true" boundmass="0.01" boundinertia="0.001" '
                   'settotalmass="12" inertiafromgeom="false"/>')
    spec = _parse(xml)
    assert spec.balanceinertia and spec.boundmass == 0.01 and spec.boundinertia == 0.001
    assert spec.settotalmass == 12 and spec.inertiafromgeom == "false"


def test_equality_and_contact_elements():
    spec = _parse(EQUALITY)
    connect, weld, joint = spec.equalities
    assert (connect.type, connect.obj1, connect.obj2) == ("connect", "a", "b")
    np.testing.assert_allclose(connect.anchor, [0.1, 0, 0])
    assert connect.solref == (0.01, 1.0)
    assert (weld.type, weld.obj1, weld.obj2, weld.torquescale) == ("weld", "c", "", 2.0)
    np.testing.assert_allclose(weld.relpose, [0.1, 0.2, 0.3, 1, 0, 0, 0])
    assert (joint.obj1, joint.obj2, joint.active) == ("jc", "jb", False)
    np.testing.assert_allclose(joint.polycoef, [0.1, 2, 0, 0, 0])
    (ex,) = spec.excludes
    assert (ex.body1, ex.body2) == ("a", "b")
    (pair,) = spec.pairs
    assert pair.condim == 4 and pair.friction == (0.5, 1.0, 0.005, 0.0001, 0.0001)
    assert pair.solref == (0.02, 1.0) and pair.margin == 0.0


def _line_of(text, fragment):
    """1-based line number of the first line of `text` containing `fragment`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_sources_name_file_line_and_element():
    spec = _parse(TREE)
    joints = {j.name: j for j in _elements(spec, "joints")}
    line = _line_of(TREE, '<joint name="shoulder"/>')
    assert joints["shoulder"].source == f"model.xml:{line} <joint name='shoulder'>"
    line = _line_of(TREE, '<body name="torso"')
    assert spec.world.children[0].source == f"model.xml:{line} <body name='torso'>"
    line = _line_of(TREE, '<mesh name="tet"')
    assert spec.meshes[0].source == f"model.xml:{line} <mesh name='tet'>"
    acts = parse_mjcf(ACTUATORS, filename="act.xml").actuators
    line = _line_of(ACTUATORS, '<position name="p1"')
    assert acts[2].source == f"act.xml:{line} <position name='p1'>"


# ------------------------------------------------------------------------------------------
# include


def test_include_merges_children_relative_to_the_including_file(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "arm.xml").write_text(
        '<mujoco>\n<include file="hand.xml"/>\n'
        '<body name="arm"><joint name="j"/><geom size="0.1"/></body>\n</mujoco>')
    (tmp_path / "parts" / "hand.xml").write_text(
        '<mujoco>\n\n<body name="hand"><geom size="0.05"/></body>\n</mujoco>')
    (tmp_path / "defaults.xml").write_text(
        '<mujoco><default><geom density="5"/></default></mujoco>')
    main = tmp_path / "main.xml"
    main.write_text('<mujoco>\n<include file="defaults.xml"/>\n<worldbody>\n'
                    '<include file="parts/arm.xml"/>\n</worldbody>\n</mujoco>')
    spec = _parse(str(main), filename=None)
    assert [b.name for b in spec.world.children] == ["hand", "arm"]
    assert spec.world.children[0].geoms[0].density == 5.0
    hand_src = spec.world.children[0].source
    assert hand_src == f"{tmp_path / 'parts' / 'hand.xml'}:3 <body name='hand'>"


def test_missing_include_names_the_including_file_and_line(tmp_path):
    main = tmp_path / "main.xml"
    main.write_text('<mujoco>\n<worldbody>\n\n<include file="nope.xml"/>\n</worldbody>\n'
                    '</mujoco>')
    with pytest.raises(ModelError) as info:
        parse_mjcf(str(main))
    assert f"{main}:4 <include file='nope.xml'>" in str(info.value)
    assert "not found" in str(info.value)


def test_include_cycle_is_an_error(tmp_path):
    (tmp_path / "a.xml").write_text('<mujoco><include file="b.xml"/></mujoco>')
    (tmp_path / "b.xml").write_text('<mujoco><include file="a.xml"/></mujoco>')
    with pytest.raises(ModelError, match="includes itself"):
        parse_mjcf(str(tmp_path / "a.xml"))


# ------------------------------------------------------------------------------------------
# warnings


def test_skipped_elements_are_listed_in_one_warning():
    xml = """<mujoco><visual/><statistic center="0 0 1"/><extension/>
      <asset><texture name="t" builtin="checker" width="8" height="8"/></asset>
      <worldbody><light pos="0 0 3"/><camera name="c"/>
        <body><joint/><geom size="0.1"/><camera name="c2"/></body></worldbody>
      <keyframe><key qpos="0"/></keyframe></mujoco>"""
    with pytest.warns(JointspaceWarning) as rec:
        parse_mjcf(xml, filename="model.xml")
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert "<extension>" in msg, msg
    for tag in ("<visual>", "<light>", "<camera>", "<statistic>", "<texture>"):
        assert tag not in msg, msg  # read: tests/test_camera.py, test_visual_elements_...
    assert "<keyframe>" not in msg  # read: tests/test_state.py (sensors: tests/test_sensor.py)


def test_visual_elements_are_read_in_silence():
    """What only renders or holds user data loads without a word, as in MuJoCo."""
    xml = """<mujoco><visual><global offwidth="64"/></visual>
      <statistic center="0 0 1" extent="2" meansize="0.1"/>
      <custom><numeric name="n" data="1 2"/><text name="t" data="hello"/>
        <tuple name="tp"><element objtype="body" objname="b" prm="1"/></tuple></custom>
      <asset><texture name="t" builtin="checker" width="8" height="8" rgb1="1 0 0"/>
        <texture name="sky" type="skybox" builtin="gradient" width="8" height="8"/>
        <material name="m" texture="t" texrepeat="2 2"/>
        <material name="m2"><layer texture="t" role="rgb"/></material></asset>
      <worldbody><light pos="0 0 3" dir="0 0 -1" diffuse="1 1 1"/>
        <body name="b"><joint/><geom size="0.1" material="m"/></body></worldbody></mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = parse_mjcf(xml, filename="model.xml")
    assert spec.warnings == []
    assert [mat.name for mat in spec.materials] == ["m", "m2"]


def test_unknown_children_of_visual_elements_are_refused():
    for bad, what in (('<custom><float name="f"/></custom>', "<float> in <custom>"),
                      ('<statistic><x/></statistic>', "<x> in <statistic>")):
        with pytest.raises(ModelError, match=what):
            parse_mjcf(f"<mujoco>{bad}<worldbody/></mujoco>", filename="model.xml")


def test_unknown_attributes_are_listed_in_one_warning():
    xml = _doc('<body foo="1"><joint bar="2"/><geom size="0.1" baz="3"/></body>')
    with pytest.warns(JointspaceWarning) as rec:
        parse_mjcf(xml, filename="model.xml")
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert "<body> foo" in msg and "<joint> bar" in msg and "<geom> baz" in msg
    assert "model.xml:4 <joint>" in msg


def test_clean_document_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_mjcf(ACTUATORS)


# ------------------------------------------------------------------------------------------
# errors: each names file:line and the element


def test_malformed_xml_reports_line_and_column():
    msg = _error("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>",
                 "model.xml:4:", "malformed XML")
    assert "mismatched tag" in msg


ERROR_CASES = [
    ('<body>\n<joint type="hinged"/></body>', "model.xml:5 <joint>", "'hinged'"),
    ('<geom type="cube" size="1"/>', "model.xml:4 <geom>", "'cube'"),
    ('<body>\n<inertial pos="0 0 0" mass="-1" diaginertia="1 1 1"/></body>',
     "model.xml:5 <inertial>", "negative"),
    ('<body>\n<geom name="g" size="1" mass="-2"/></body>', "model.xml:5 <geom name='g'>",
     "negative"),
    ('<geom size="1" density="-2"/>', "model.xml:4 <geom>", "negative"),
    ('<geom type="sphere"/>', "model.xml:4 <geom>", "size[0]"),
    ('<geom type="box" size="1 1"/>', "model.xml:4 <geom>", "size[2]"),
    ('<geom type="capsule" size="1"/>', "model.xml:4 <geom>", "size[1]"),
    ('<geom type="plane" size="1 1 0"/>', "model.xml:4 <geom>", "plane"),
    ('<geom class="nope" size="1"/>', "model.xml:4 <geom>", "'nope'"),
    ('<body childclass="nope"/>', "model.xml:4 <body>", "'nope'"),
    ('<geom size="1" pos="1 2"/>', "model.xml:4 <geom>", "pos='1 2'"),
    ('<geom size="1" pos="1 2 x"/>', "model.xml:4 <geom>", "'x' is not a finite number"),
    ('<geom size="1,2"/>', "model.xml:4 <geom>", "'1,2'"),
    ('<geom size="1" pos="1 2 nan"/>', "model.xml:4 <geom>", "'nan'"),
    ('<geom size="1" contype="1.5"/>', "model.xml:4 <geom>", "integer"),
    ('<geom size="1" quat="1 0 0 0" euler="0 0 1"/>', "model.xml:4 <geom>", "orientation"),
    ('<body>\n<joint limited="yes"/></body>', "model.xml:5 <joint>", "'yes'"),
    ('<body>\n<joint range="1 -1"/><geom size="1"/></body>', "model.xml:5 <joint>",
     "range[0]"),
    ('<body>\n<joint type="ball" range="10 20"/></body>', "model.xml:5 <joint>", "ball"),
    ('<body>\n<joint type="free" limited="true"/></body>', "model.xml:5 <joint>", "free"),
    ('<body>\n<joint axis="0 0 0"/></body>', "model.xml:5 <joint>", "axis"),
    ('<joint/>', "model.xml:4 <joint>", "world body"),
    ('<body>\n<wheel/></body>', "model.xml:5 <wheel>", "unknown element"),
    ('<body>\n<composite type="grid" count="2 2 1"/></body>', "model.xml:5 <composite>",
     "not supported"),
    ('<body>\n<replicate count="0"/></body>', "model.xml:5 <replicate>", "count=0"),
    ('<body>\n<joint springdamper="1 0"/><geom size="1"/></body>', "model.xml:5 <joint>",
     "springdamper"),
    ('<body>\n<joint actuatorfrcrange="1 -1"/><geom size="1"/></body>', "model.xml:5 <joint>",
     "actuatorfrcrange"),
    ('<geom size="1" condim="2"/>', "model.xml:4 <geom>", "condim"),
    ('<geom type="sphere" size="1" fromto="0 0 0 0 0 1"/>', "model.xml:4 <geom>", "fromto"),
    ('<geom type="capsule" size="1" pos="0 0 1" fromto="0 0 0 0 0 1"/>', "model.xml:4 <geom>",
     "pos and fromto"),
    ('<geom type="capsule" size="1" fromto="0 0 1 0 0 1"/>', "model.xml:4 <geom>",
     "coincide"),
    ('<geom type="hfield" hfield="h"/>', "model.xml:4 <geom>", "unknown hfield 'h'"),
    ('<geom type="mesh" mesh="nope"/>', "model.xml:4 <geom>", "unknown mesh 'nope'"),
    ('<geom mesh="m" size="1"/>', "model.xml:4 <geom>", "unknown mesh 'm'"),
    ('<frame childclass="x"/>', "model.xml:4 <frame>", "'x'"),
    ('<body>\n<inertial pos="0 0 0" mass="1" euler="0 0 1" fullinertia="1 1 1 0 0 0"/></body>',
     "model.xml:5 <inertial>", "fullinertia"),
    ('<body>\n<inertial pos="0 0 0" diaginertia="1 1 1"/></body>', "model.xml:5 <inertial>",
     "mass"),
]


@pytest.mark.parametrize("body, where, what", ERROR_CASES)
def test_model_errors_name_file_line_and_element(body, where, what):
    _error(_doc(body), where, what)


SECTION_ERRORS = [
    ('<actuator>\n<motor joint="nope"/></actuator>', "model.xml:5 <motor>", "'nope'"),
    ('<actuator>\n<motor/></actuator>', "model.xml:5 <motor>", "transmission"),
    ('<actuator>\n<motor joint="j" site="s"/></actuator>', "model.xml:5 <motor>", "exactly one"),
    ('<actuator>\n<motor tendon="t"/></actuator>', "model.xml:5 <motor>", "tendon"),
    ('<actuator>\n<muscle joint="j" tausmooth="-1"/></actuator>', "model.xml:5 <muscle>",
     "tausmooth"),
    ('<actuator>\n<position joint="j" dampratio="-1"/></actuator>', "model.xml:5 <position>",
     "dampratio"),
    ('<actuator>\n<general joint="j" dyntype="user"/></actuator>', "model.xml:5 <general>",
     "dyntype"),
    ('<actuator>\n<motor joint="j" refsite="s"/></actuator>', "model.xml:5 <motor>",
     "refsite"),
    ('<actuator>\n<general joint="j" dyntype="filter" actrange="1 0"/></actuator>',
     "model.xml:5 <general>", "actrange"),
    ('<actuator>\n<motor class="x" joint="j"/></actuator>', "model.xml:5 <motor>", "'x'"),
    ('<equality>\n<weld body1="b" body2="ghost"/></equality>', "model.xml:5 <weld>",
     "'ghost'"),
    ('<equality>\n<connect body1="ghost" anchor="0 0 0"/></equality>', "model.xml:5 <connect>",
     "'ghost'"),
    ('<equality>\n<connect body1="b"/></equality>', "model.xml:5 <connect>", "anchor"),
    ('<equality>\n<joint joint1="nope"/></equality>', "model.xml:5 <joint>", "'nope'"),
    ('<equality>\n<tendon tendon1="t"/></equality>', "model.xml:5 <tendon>",
     "unknown tendon 't'"),
    ('<tendon>\n<fixed name="t" limited="true" range="1 0"><joint joint="j" coef="1"/></fixed>'
     '</tendon>', "model.xml:5 <fixed name='t'>", "range"),
    ('<default><tendon damping="-1"/></default><tendon>\n<fixed name="t"><joint joint="j" '
     'coef="1"/></fixed></tendon>', "model.xml:5 <fixed name='t'>", "damping"),
    ('<tendon>\n<fixed name="t"/></tendon>', "model.xml:5 <fixed name='t'>",
     "at least one <joint>"),
    ('<contact>\n<pair geom1="g" geom2="nope"/></contact>', "model.xml:5 <pair>", "'nope'"),
    ('<contact>\n<exclude body1="b" body2="nope"/></contact>', "model.xml:5 <exclude>",
     "'nope'"),
    ('<asset>\n<mesh name="m"/></asset>', "model.xml:5 <mesh name='m'>", "file or vertex"),
    ('<asset>\n<mesh file="missing.stl"/></asset>', "model.xml:5 <mesh>", "not found"),
    ('<asset>\n<mesh name="m" vertex="0 0 0 1 0"/></asset>', "model.xml:5 <mesh name='m'>",
     "multiple of 3"),
    ('<default>\n<default class="a"/>\n<default class="a"/></default>',
     "model.xml:6 <default class='a'>", "twice"),
    ('<default>\n<geom class="a"/></default>', "model.xml:5 <geom>", "class"),
    ('<compiler\nangle="grad"/>', "model.xml:4 <compiler>", "'grad'"),
    ('<compiler eulerseq="xyw"/>', "model.xml:4 <compiler>", "eulerseq"),
    ('<option\nintegrator="Verlet"/>', "model.xml:4 <option>", "'Verlet'"),
    ('<bogus/>', "model.xml:4 <bogus>", "unknown MJCF element"),
]


@pytest.mark.parametrize("section, where, what", SECTION_ERRORS)
def test_section_errors_name_file_line_and_element(section, where, what):
    world = '<body name="b">\n<joint name="j"/><geom name="g" size="1"/><site name="s"/></body>'
    xml = f"<mujoco>\n\n\n{section}\n<worldbody>{world}</worldbody>\n</mujoco>"
    # line 4 holds `section`; the element of interest sits on line 4 or 5 (or 6)
    _error(xml, where, what)


def test_root_must_be_mujoco():
    _error("<robot name='r'/>", "model.xml:1 <robot name='r'>", "<mujoco>")


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        parse_mjcf(str(tmp_path / "nothing.xml"))


# ------------------------------------------------------------------------------------------
# parity of the compiled model with MuJoCo


def _compile_quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        return fn(*args, **kw)


def _inertia_tensors(m):
    """R diag(I) Rᵀ per body: principal axes may differ in order and sign, tensors may not."""
    out = []
    for q, inertia in zip(np.asarray(m.body_iquat), np.asarray(m.body_inertia)):
        w, x, y, z = q / np.linalg.norm(q)
        R = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ])
        out.append(R @ np.diag(inertia) @ R.T)
    return np.array(out)


SIZES = ("nq", "nv", "nbody", "njnt", "ngeom", "nsite", "nu", "neq", "npair", "nexclude")
EXACT_FIELDS = ("body_parentid", "jnt_type", "jnt_qposadr", "jnt_dofadr", "jnt_limited",
                "dof_parentid", "geom_type", "geom_bodyid", "geom_condim", "geom_contype",
                "geom_conaffinity", "actuator_trnid",
                "actuator_ctrllimited", "actuator_forcelimited", "actuator_biastype",
                "eq_type", "eq_obj1id", "eq_obj2id", "eq_active0", "pair_dim",
                "exclude_signature")
CLOSE_FIELDS = ("body_pos", "body_mass", "body_ipos", "jnt_pos", "jnt_axis", "jnt_range",
                "jnt_stiffness", "jnt_solref", "jnt_solimp", "dof_armature", "dof_damping",
                "dof_frictionloss", "geom_pos", "geom_friction", "geom_solref", "geom_solimp",
                "geom_margin", "site_pos", "qpos0", "qpos_spring", "actuator_gainprm",
                "actuator_biasprm", "actuator_gear", "actuator_ctrlrange",
                "actuator_forcerange", "eq_solref", "eq_solimp", "pair_friction",
                "pair_solref", "pair_solimp")


@pytest.mark.parametrize("name", list(PARITY_DOCS))
def test_compiled_model_matches_mujoco(name):
    xml = PARITY_DOCS[name]
    m = _compile_quiet(load_mjcf_string, xml)
    ref = _mj(xml)
    for size in SIZES:
        assert int(np.asarray(getattr(m, size)).ravel()[0]) == getattr(ref, size), size
    for f in EXACT_FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(m, f), dtype=np.int64),
                                      np.asarray(getattr(ref, f), dtype=np.int64), err_msg=f)
    for f in CLOSE_FIELDS:
        np.testing.assert_allclose(getattr(m, f), getattr(ref, f), atol=TOL, rtol=0,
                                   err_msg=f)
    trn = {T.TRN_JOINT: "JOINT", T.TRN_SITE: "SITE", T.TRN_BODY: "BODY"}
    mujoco = pytest.importorskip("mujoco")
    assert [trn[t] for t in m.actuator_trntype] == [
        mujoco.mjtTrn(t).name.removeprefix("mjTRN_") for t in ref.actuator_trntype]
    _assert_quat(m.body_quat, ref.body_quat)
    _assert_quat(m.geom_quat, ref.geom_quat)
    if ref.nsite:
        _assert_quat(m.site_quat, ref.site_quat)
    np.testing.assert_allclose(m.geom_size, ref.geom_size, atol=TOL)
    np.testing.assert_allclose(_inertia_tensors(m), _inertia_tensors(ref), atol=TOL)
    np.testing.assert_allclose(np.asarray(m.eq_data)[:, :3], ref.eq_data[:, :3], atol=TOL)


def test_load_mjcf_reads_a_file(tmp_path):
    path = tmp_path / "tree.xml"
    path.write_text(TREE)
    m = _compile_quiet(load_mjcf, str(path))
    assert m.nq == 7 + 1 + 1 + 4 and m.nv == 6 + 1 + 1 + 3
    assert m.nu == 0 and m.nmesh == 1
