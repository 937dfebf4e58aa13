"""Tactile sensors (MuJoCo's <tactile>) against MuJoCo 4.0.0's sensordata.

A free hand carries a box geom with three taxel meshes: a plate and a wedge (MuJoCo's
procedural taxel grids, with per-vertex frames) and a mesh given its own three normals per
vertex, plus one without frames. At seeded poses and velocities it is pressed into the
floor, a sphere, a capsule, a box (shallow and deep inside, where the box's distance is
MuJoCo's radial field), an ellipsoid, a cylinder and a mesh (which MuJoCo skips: it builds
no SDF for meshes); the obstacles move on hinge and slide joints. sensordata after
`forward` equals MuJoCo's after `mj_forward` entry by entry, and along `mj_step` from
MuJoCo's states. Bad sensors are refused with the element named.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError

# sensordata, relative to max(1, |value|): the same float32 taxels, tangents and closed-form
# distances as MuJoCo's, so roundoff only (measured: see docs/testing.md)
TOL = 1e-12

_NORMALS = " ".join(f"{x:.6f}" for x in np.random.default_rng(7).normal(size=6 * 9))

TACTILE = f"""<mujoco model="tactile">
<asset>
  <mesh name="plate" builtin="plate" params="4 3" scale=".04 .03 .02"/>
  <mesh name="wedge" builtin="wedge" params="5 4 70 40 0.3" scale=".04 .03 .03"
        refquat="1 .2 .3 .1"/>
  <mesh name="framed" vertex="-1 -1 -1  1 -1 -1  -1 1 -1  1 1 -1  0 0 1  .3 .2 .8"
        scale=".04 -.03 .02" refquat=".3 1 .2 .5" normal="{_NORMALS}"/>
  <mesh name="plain" vertex="-1 -1 -1  1 -1 -1  -1 1 -1  1 1 -1  0 0 1" scale=".04 .03 .02"/>
  <mesh name="rock" vertex="0 0 0  .1 0 0  0 .1 0  0 0 .1  .1 .1 .1"/>
</asset>
<worldbody>
  <geom name="floor" type="plane" size="5 5 .1"/>
  <body name="hand" pos="0 0 .5">
    <freejoint/>
    <geom name="palm" type="box" size=".04 .03 .02" margin=".01"/>
    <body name="knuckle" pos=".06 0 0">
      <geom name="finger" type="capsule" size=".01 .02" euler="0 90 0"/>
    </body>
  </body>
  <body name="sphere" pos="1 0 .3"><joint type="hinge" axis="1 1 0"/><joint type="slide"/>
    <geom name="sphere" type="sphere" size=".06"/></body>
  <body name="capsule" pos="2 0 .3"><joint type="hinge" axis="0 1 1"/><joint type="slide"/>
    <geom name="capsule" type="capsule" size=".04 .05" euler="20 30 0"/></body>
  <body name="box" pos="3 0 .3"><joint type="hinge" axis="1 0 1"/><joint type="slide"/>
    <geom name="box" type="box" size=".08 .06 .05" euler="10 0 40"/></body>
  <body name="ellipsoid" pos="4 0 .3"><joint name="ell" type="hinge"/>
    <joint type="slide" axis="1 0 0"/>
    <geom name="ellipsoid" type="ellipsoid" size=".07 .05 .04" euler="0 20 10"/></body>
  <body name="cylinder" pos="5 0 .3"><joint type="hinge" axis="0 1 0"/><joint type="slide"/>
    <geom name="cylinder" type="cylinder" size=".05 .04" euler="30 0 0"/></body>
  <body name="rock" pos="6 0 .3"><joint type="hinge"/>
    <geom name="rock" type="mesh" mesh="rock"/></body>
</worldbody>
<sensor>
  <tactile name="plate" geom="palm" mesh="plate"/>
  <tactile name="wedge" geom="palm" mesh="wedge"/>
  <tactile name="framed" geom="palm" mesh="framed"/>
  <tactile name="plain" geom="palm" mesh="plain" cutoff=".015"/>
  <jointvel joint="ell"/>
</sensor>
</mujoco>"""

# obstacle -> (its centre, how far from it the hand's centre is drawn)
_TARGETS = {"floor": ((0.0, 0.0, 0.0), 0.03), "sphere": ((1.0, 0.0, 0.3), 0.07),
            "capsule": ((2.0, 0.0, 0.3), 0.08), "box": ((3.0, 0.0, 0.3), 0.09),
            "box inside": ((3.0, 0.0, 0.3), 0.02), "ellipsoid": ((4.0, 0.0, 0.3), 0.07),
            "cylinder": ((5.0, 0.0, 0.3), 0.07), "rock": ((6.05, 0.05, 0.35), 0.05)}


def _load(xml=TACTILE):
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def _random_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def _slip_entries(mm):
    """The sensordata entries of the tangential channels of the tactile sensors."""
    out = []
    for i in range(mm.nsensor):
        if mm.sensor_type[i] == mujoco.mjtSensor.mjSENS_TACTILE:
            n = mm.mesh_vertnum[mm.sensor_objid[i]]
            out += range(mm.sensor_adr[i] + n, mm.sensor_adr[i] + 3 * n)
    return out


def _compare(d, md, what):
    err = np.abs(d.sensordata - md.sensordata) / np.maximum(1.0, np.abs(md.sensordata))
    assert err.max() <= TOL, f"{what}: entry {int(err.argmax())}, error {err.max():.2e}"
    return err.max()


def test_layout_and_frames_equal_mujoco():
    """sensor_* as MuJoCo compiles them; the taxel frames of the meshes that have them."""
    m, _, mm, _ = _load()
    for f in ("type", "datatype", "needstage", "objtype", "objid", "reftype", "refid", "dim",
              "adr", "cutoff"):
        np.testing.assert_array_equal(getattr(m, "sensor_" + f), getattr(mm, "sensor_" + f),
                                      err_msg=f)
    framed = mm.mesh_normalnum == 3 * mm.mesh_vertnum
    np.testing.assert_array_equal(m.mesh_tangentadr >= 0, framed)
    np.testing.assert_array_equal(m.mesh_vert, mm.mesh_vert)
    for k in np.flatnonzero(framed):
        n, a = mm.mesh_vertnum[k], mm.mesh_normaladr[k]
        frames = mm.mesh_normal[a:a + 3 * n].reshape(n, 9)
        t = m.mesh_tangentadr[k]
        np.testing.assert_array_equal(m.mesh_tangent[t:t + n], frames[:, 3:], err_msg=str(k))


@pytest.mark.parametrize("target", list(_TARGETS))
def test_sensordata_equals_mujoco_against_each_geom_type(target):
    """Seeded poses of the hand pressed into one obstacle, seeded velocities of all."""
    m, d, mm, md = _load()
    rng = np.random.default_rng(list(_TARGETS).index(target))
    centre, reach = _TARGETS[target]
    hits = slips = 0
    for _ in range(12):
        q = mm.qpos0.copy()
        q[0:3] = np.asarray(centre) + reach * rng.uniform(-1, 1, 3)
        if target == "floor":
            q[2] = abs(q[2])
        q[3:7] = _random_quat(rng)
        q[7:] += rng.uniform(-0.03, 0.03, mm.nq - 7)  # obstacles stay near
        v = rng.normal(size=mm.nv)
        for dd in (d, md):
            dd.qpos[:], dd.qvel[:] = q, v
        js.forward(m, d)
        mujoco.mj_forward(mm, md)
        _compare(d, md, f"{target}: state {_}")
        hits += np.any(md.sensordata[:-1] != 0)
        slips += np.any(md.sensordata[_slip_entries(mm)] != 0)
    # most states press taxels in (the rock only makes contacts MuJoCo does not measure)
    if target == "rock":
        assert hits == 0 and md.ncon > 0
    else:
        assert hits >= 6 and slips >= 3, (hits, slips)


def test_sensordata_equals_mujoco_along_steps():
    """The hand dropped onto the sphere and the floor: sensordata at MuJoCo's states."""
    m, d, mm, md = _load()
    md.qpos[0:3] = (1.02, 0.01, 0.42)
    md.qpos[3:7] = (0.9, 0.1, 0.3, 0.0)
    md.qpos[3:7] /= np.linalg.norm(md.qpos[3:7])
    md.qvel[0:6] = (0.3, -0.2, -1.0, 2.0, 1.0, -1.0)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    x = np.empty(mujoco.mj_stateSize(mm, spec))
    touched = 0
    for k in range(150):
        mujoco.mj_getState(mm, md, x, spec)
        js.set_state(m, d, x, "integration")
        js.step(m, d)
        mujoco.mj_step(mm, md)
        _compare(d, md, f"step {k}")
        touched += np.any(md.sensordata[:-1] != 0)
    assert touched >= 10, touched


def test_no_contact_reads_zeros():
    m, d, mm, md = _load()
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert md.ncon == 0
    np.testing.assert_array_equal(d.sensordata, md.sensordata)


def _sensor_xml(sensor, extra=""):
    return f"""<mujoco>
<asset><mesh name="pad" builtin="plate" params="2 2"/>
<hfield name="ground" nrow="3" ncol="3" size="1 1 .1 .1"/></asset>
<worldbody>{extra}
  <body name="b" pos="0 0 .5"><freejoint/>
    <geom name="g" type="box" size=".03 .03 .03"/>
    <geom name="ghost" type="sphere" size=".01" contype="0" conaffinity="0"/>
    <body name="c" pos=".2 0 0"><joint type="hinge"/>
      <geom name="quiet" type="sphere" size=".01" contype="0" conaffinity="0"/></body>
  </body>
</worldbody>
<sensor>{sensor}</sensor>
</mujoco>"""


@pytest.mark.parametrize("sensor, extra, message", [
    ('<tactile geom="g"/>', "", r"<tactile> needs the attribute mesh= naming its mesh"),
    ('<tactile mesh="pad"/>', "", r"<tactile> needs the attribute geom= naming its geom"),
    ('<tactile geom="g" mesh="nope"/>', "", r"refers to unknown mesh 'nope'"),
    ('<tactile geom="nope" mesh="pad"/>', "", r"refers to unknown geom 'nope'"),
    ('<tactile geom="b" mesh="pad"/>', "", r"refers to unknown geom 'b'"),
    ('<tactile name="t" geom="quiet" mesh="pad"/>', "",
     r"sensor <tactile> 't': the body of geom 'quiet' has no colliding geom"),
    ('<tactile geom="ghost" mesh="pad"/>', '<geom name="hf" type="hfield" hfield="ground"/>',
     r"may touch the height field geom 'hf'"),
])
def test_bad_tactile_sensors_are_refused(sensor, extra, message):
    """Each refusal names the sensor and what is wrong, as MuJoCo refuses (or would fail)."""
    xml = _sensor_xml(sensor, extra)
    with pytest.raises(ModelError, match=message):
        js.load_string(xml)
    with pytest.raises((ValueError, mujoco.FatalError)):
        mm = mujoco.MjModel.from_xml_string(xml)
        md = mujoco.MjData(mm)
        md.qpos[2] = 0.02  # on the height field
        mujoco.mj_forward(mm, md)


def test_ghost_geom_on_a_colliding_body_is_accepted():
    """A non-colliding geom carries the taxels when its body has a colliding geom."""
    m, d, mm, md = _load(_sensor_xml('<tactile geom="ghost" mesh="pad"/>',
                                     '<geom type="plane" size="1 1 .1"/>'))
    for dd in (d, md):
        dd.qpos[2] = 0.02
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert np.any(md.sensordata != 0)
    _compare(d, md, "ghost")


def _obj(path, normals_per_vertex):
    """A tetrahedron OBJ whose corners name normals: 1 or 3 `vn` records per vertex."""
    v = 0.05 * np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    lines = ["v %g %g %g" % tuple(p) for p in v]
    lines += ["vn %g %g %g" % tuple(np.eye(3)[k % 3]) for k in range(4 * normals_per_vertex)]
    for tri in ((1, 3, 2), (1, 2, 4), (1, 4, 3), (2, 3, 4)):
        lines.append("f " + " ".join(f"{a}//{normals_per_vertex * (a - 1) + 1}" for a in tri))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("per_vertex", [1, 3])
def test_obj_file_normals_as_taxel_frames_are_refused(tmp_path, per_vertex):
    """An OBJ with three normals per vertex gives MuJoCo taxel frames; we refuse it.

    jointspace does not read OBJ normals, so it would read zeros in the slip channels where
    MuJoCo reads slip speeds: refused, naming the sensor and the way out (the mesh's normal
    attribute). One normal per vertex makes no frame in MuJoCo either and loads.
    """
    _obj(tmp_path / "pad.obj", per_vertex)
    xml = (f'<mujoco><compiler meshdir="{tmp_path}"/><asset><mesh name="pad" file="pad.obj"/>'
           '</asset><worldbody><body><freejoint/><geom name="g" type="box" size=".1 .1 .1"/>'
           '</body></worldbody><sensor><tactile name="t" geom="g" mesh="pad"/></sensor>'
           "</mujoco>")
    mm = mujoco.MjModel.from_xml_string(xml)
    assert mm.mesh_normalnum[0] == per_vertex * mm.mesh_vertnum[0]
    if per_vertex == 3:
        with pytest.raises(ModelError, match=r"<tactile> 't'.*OBJ file with three normals"):
            js.load_string(xml)
    else:
        m = js.load_string(xml)
        assert m.sensor_dim[0] == mm.sensor_dim[0]
