"""Cameras, materials, the camprojection sensor and the rangefinder's data, against MuJoCo.

CAMERAS holds a camera of every mode (fixed, track, trackcom, targetbody, targetbodycom),
every orientation form (quat, axisangle, euler, xyaxes, zaxis), one inside a <frame>, one
from a default class, and every intrinsics form (fovy; sensorsize with focal, focalpixel,
principal, principalpixel; orthographic). Its compiled cam_* and mat_* fields, and
cam_xpos/cam_xmat and sensordata after mj_forward at seeded random states, are compared with
MuJoCo's.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests._util import random_state

# compiled camera fields and camera poses: the same products as MuJoCo's (local2Global,
# the target frame's cross products), roundoff only; measured below 1e-15
POSE_TOL = 1e-12
# camprojection and rangefinder sensordata: pixels and distances from the poses above; the
# pixel values are ~1e2 so roundoff is ~1e-13
SENSOR_TOL = 1e-9
# colors: MuJoCo stores rgba in single precision, jointspace the double written in the file
RGBA_TOL = 1e-7

CAMERAS = """<mujoco model="cameras">
<compiler angle="degree"/>
<visual><map znear="0.02"/><global offwidth="800"/></visual>
<asset>
  <texture name="grid" type="2d" builtin="checker" width="8" height="8"/>
  <material name="red" rgba="1 0 0 1"/>
  <material name="ghost" rgba="0 1 0 0"/>
  <material name="classy" class="tinted"/>
  <material name="textured" texture="grid"/>
</asset>
<default>
  <camera fovy="50"/>
  <material rgba="0.2 0.3 0.4 1"/>
  <default class="tinted">
    <camera mode="trackcom" fovy="70" resolution="64 48"/>
    <material rgba="0 0 1 0.5"/>
    <geom material="red"/>
  </default>
</default>
<worldbody>
  <light name="sun" pos="0 0 3" dir="0 0 -1"/>
  <geom name="floor" type="plane" size="5 5 .1" material="red"/>
  <camera name="world_fixed" pos="3 0 1" xyaxes="0 1 0 -0.3 0 1"/>
  <camera name="look" mode="targetbody" target="arm" pos="2 2 2"/>
  <camera name="look_com" mode="targetbodycom" target="arm" pos="-2 1 3"/>
  <site name="origin_site" pos="0.1 0.2 0.3"/>
  <site name="down" pos="-0.05 0 2.5" zaxis="0.03 0 -1"/>
  <site name="up" pos="0 0 0.5"/>
  <body name="torso" pos="0 0 1">
    <freejoint/>
    <geom name="torso" type="box" size=".2 .15 .1" rgba=".5 .5 .5 1"/>
    <geom name="hidden" type="sphere" size=".1" pos="0 0 .3" material="ghost"/>
    <geom name="shown" type="sphere" size=".1" pos="0 0 -.3" material="ghost" rgba="1 1 1 1"/>
    <geom name="painted" type="capsule" size=".05 .1" pos=".3 0 0" class="tinted"/>
    <site name="nose" pos=".25 0 .05"/>
    <camera name="q" pos=".3 0 .2" quat="0.5 0.5 -0.5 -0.5"/>
    <camera name="aa" pos="0 .3 .2" axisangle="1 1 0 40"/>
    <camera name="eu" pos="0 -.3 .2" euler="10 -80 20" fovy="30"/>
    <camera name="za" pos="-.3 0 .2" zaxis="-1 0 .5" mode="track"/>
    <camera name="tc" class="tinted" pos="0 0 1.5"/>
    <frame pos=".1 .2 .3" euler="0 30 0">
      <camera name="framed" pos="0 0 .4" xyaxes="1 0 0 0 0 1" resolution="320 240"
              sensorsize=".0048 .0036" focal=".004 .0035" principal=".0001 -.0002"/>
    </frame>
    <camera name="pix" pos="0 0 .5" resolution="640 480" sensorsize=".0064 .0048"
            focalpixel="600 620" principalpixel="10 -5"/>
    <camera name="ortho" pos="0 0 2" projection="orthographic" fovy="3" ipd=".1"/>
    <body name="arm" pos=".2 0 0">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .4 0 0" size=".04"/>
      <site name="hand" pos=".4 0 0"/>
      <body name="forearm" pos=".4 0 0">
        <joint type="ball"/>
        <geom type="box" size=".1 .03 .03" pos=".1 0 0" material="classy"/>
        <camera name="wrist" mode="targetbody" target="torso" pos=".2 0 .1"/>
      </body>
    </body>
  </body>
</worldbody>
<sensor>
  <camprojection name="nose_in_world" site="nose" camera="world_fixed"/>
  <camprojection name="hand_in_look" site="hand" camera="look" cutoff="60"/>
  <camprojection name="nose_in_framed" site="nose" camera="framed"/>
  <camprojection name="hand_in_pix" site="hand" camera="pix"/>
  <camprojection name="origin_in_wrist" site="origin_site" camera="wrist"/>
  <camprojection name="hand_in_tc" site="hand" camera="tc"/>
  <framepos name="cam_pos" objtype="camera" objname="za"/>
  <framequat name="cam_quat" objtype="camera" objname="look" reftype="camera" refname="q"/>
  <rangefinder name="rf_all" site="down" data="dist dir origin point normal depth"/>
  <rangefinder name="rf_some" site="up" data="dir point" cutoff="0.5"/>
  <rangefinder name="rf_dist" site="nose"/>
</sensor>
</mujoco>"""

CAM_FIELDS = ("cam_mode", "cam_bodyid", "cam_targetbodyid", "cam_pos", "cam_quat",
              "cam_poscom0", "cam_pos0", "cam_mat0", "cam_projection", "cam_fovy", "cam_ipd",
              "cam_resolution", "cam_sensorsize", "cam_intrinsic")


def _load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # textures and lights are read in silence
        m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def test_camera_and_material_fields_equal_mujoco():
    m, _, mm, _ = _load(CAMERAS)
    assert (m.ncam, m.nmat) == (mm.ncam, mm.nmat)
    assert m.names["camera"] == [mm.camera(i).name for i in range(mm.ncam)]
    for f in CAM_FIELDS:
        np.testing.assert_allclose(getattr(m, f), np.asarray(getattr(mm, f), dtype=np.float64),
                                   rtol=0, atol=POSE_TOL, err_msg=f)
    np.testing.assert_array_equal(m.geom_matid, mm.geom_matid)
    np.testing.assert_allclose(m.mat_rgba, mm.mat_rgba, rtol=0, atol=RGBA_TOL)
    np.testing.assert_allclose(m.geom_rgba, mm.geom_rgba, rtol=0, atol=RGBA_TOL)
    assert m.camera("framed") == mm.camera("framed").id
    assert m.material("classy") == mm.material("classy").id


def test_camera_poses_and_sensors_equal_mujoco_at_random_states():
    m, d, mm, md = _load(CAMERAS)
    rng = np.random.default_rng(19)
    err_pose = err_sens = 0.0
    for trial in range(20):
        qpos, qvel = random_state(mm, rng)
        if trial == 0:
            qpos = mm.qpos0.copy()
        md.qpos[:], md.qvel[:] = qpos, qvel
        mujoco.mj_forward(mm, md)
        d.qpos[:], d.qvel[:] = qpos, qvel
        js.forward(m, d)
        err_pose = max(err_pose, np.abs(d.cam_xpos - md.cam_xpos).max(),
                       np.abs(d.cam_xmat - md.cam_xmat).max())
        scale = np.maximum(1.0, np.abs(md.sensordata))
        err_sens = max(err_sens, (np.abs(d.sensordata - md.sensordata) / scale).max())
    assert err_pose <= POSE_TOL
    assert err_sens <= SENSOR_TOL


def test_rangefinder_layout_and_material_visibility():
    """The rangefinders' layouts, and rays skip geoms whose material has alpha 0.

    "hidden" (material alpha 0) is skipped by rays, "shown" too (its own rgba does not count
    when it has a material), as mj_ray does.
    """
    m, d, mm, md = _load(CAMERAS)
    np.testing.assert_array_equal(m.sensor_dim, mm.sensor_dim)
    np.testing.assert_array_equal(m.sensor_intprm, mm.sensor_intprm)
    np.testing.assert_array_equal(m.sensor_reftype, mm.sensor_reftype)
    np.testing.assert_array_equal(m.sensor_refid, mm.sensor_refid)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    for name in ("hidden", "shown", "torso"):
        g = m.geom(name)
        p = d.geom_xpos[g] + np.array([0.0, 0.0, 2.0])
        got = js.ray(m, d, p, [0.0, 0.0, -1.0])
        gid = np.zeros(1, dtype=np.int32)
        want = mujoco.mj_ray(mm, md, p, np.array([0.0, 0.0, -1.0]), None, 1, -1, gid)
        assert got[1] == gid[0]
        assert abs(got[0] - want) <= SENSOR_TOL
    assert js.sensor(m, d, "rf_all")[0] > 0


@pytest.mark.parametrize("which", ["CONTACT", "MESHES"])
def test_ray_normals_equal_mj_ray(which):
    """The rangefinder's normal field, as mj_ray's normal output.

    Every primitive (CONTACT) and mesh triangles (MESHES) of tests/test_sensor_contact_ray.py,
    at rays aimed near each geom's center.
    """
    from jointspace.collision.ray import ray_normal
    from tests import test_sensor_contact_ray as rays

    xml = getattr(rays, which)
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    d, md = js.make_data(m), mujoco.MjData(mm)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    rng = np.random.default_rng(25)
    hits, err = 0, 0.0
    for _ in range(400):
        g = rng.integers(m.ngeom)
        pnt = md.geom_xpos[g] + rng.normal(size=3)
        vec = md.geom_xpos[g] + rng.normal(scale=0.1, size=3) - pnt
        gid, want = np.zeros(1, dtype=np.int32), np.zeros(3)
        dist = mujoco.mj_ray(mm, md, pnt, vec, None, True, -1, gid, want)
        got_dist, got_g = js.ray(m, d, pnt, vec)
        assert got_g == gid[0]
        if dist >= 0:
            hits += 1
            err = max(err, np.abs(np.array(ray_normal(m._s, d._s, got_g, pnt, vec, got_dist))
                                  - want).max())
    assert hits > 200
    assert err <= SENSOR_TOL


DEPTH = """<mujoco>
<asset>
  <mesh name="gem" vertex="0 0 .2  .15 0 .05  0 .15 .05  -.15 0 .05  0 -.15 .05  0 0 -.2"/>
</asset>
<worldbody>
  <geom type="plane" size="4 4 .1"/>
  <geom type="box" size=".3 .2 .1" pos=".4 0 .1" euler="0 0 20"/>
  <geom type="capsule" size=".1 .3" pos="-.4 .3 .3" euler="40 10 0"/>
  <geom type="mesh" mesh="gem" pos=".03 -.5 .3" euler="10 20 30"/>
  <body name="rig" pos="0 0 2">
    <freejoint/>
    <geom size=".05" contype="0" conaffinity="0"/>
    <camera name="wide" fovy="70" resolution="9 7" euler="10 0 0"/>
    <camera name="lens" resolution="8 6" sensorsize=".004 .003" focal=".003 .0032"
            principalpixel="4.5 2.5" euler="0 -15 0"/>
    <camera name="flat" projection="orthographic" fovy="1.5" resolution="6 5"/>
  </body>
</worldbody>
<sensor>
  <rangefinder name="wide_img" camera="wide" data="dist dir origin point normal depth"/>
  <rangefinder name="lens_img" camera="lens" data="dist depth"/>
  <rangefinder name="flat_img" camera="flat" data="origin point normal depth" cutoff="1.9"/>
</sensor>
</mujoco>"""


def test_camera_rangefinders_equal_mujoco_depth_images():
    """Rangefinders on cameras: MuJoCo's depth images, one ray per pixel.

    Perspective (fovy and intrinsics) and orthographic cameras, every data field, at seeded
    poses of the camera rig; a camera without a positive resolution is refused. The gem is
    turned off the cameras' symmetry plane: a ray along a mesh edge is a tie that mj_ray and
    js.ray may break differently.
    """
    m = js.load_string(DEPTH)
    mm = mujoco.MjModel.from_xml_string(DEPTH)
    d, md = js.make_data(m), mujoco.MjData(mm)
    np.testing.assert_array_equal(m.sensor_dim, mm.sensor_dim)
    np.testing.assert_array_equal(m.sensor_objtype, mm.sensor_objtype)
    rng = np.random.default_rng(7)
    hits = 0
    for trial in range(10):
        qpos = mm.qpos0.copy()
        if trial:
            qpos[:3] += rng.uniform(-0.3, 0.3, 3)
            qpos[3:] = mm.qpos0[3:] + rng.normal(scale=0.15, size=4)
        md.qpos[:] = d.qpos[:] = qpos
        mujoco.mj_forward(mm, md)
        js.forward(m, d)
        np.testing.assert_allclose(d.sensordata, md.sensordata, rtol=SENSOR_TOL,
                                   atol=SENSOR_TOL)
        hits += int(np.sum(js.sensor(m, d, "lens_img")[::2] >= 0))
    assert hits > 200
    with pytest.raises(ModelError, match=r"<rangefinder> 'wide_img': camera 'wide' needs a "
                                         r"positive resolution .*<string>:\d+ <rangefinder"):
        js.load_string(DEPTH.replace('resolution="9 7"', 'resolution="0 7"'))


def test_camprojection_cutoff_and_miss_values():
    """Pixels outside the image, cutoff, and rangefinder misses, as MuJoCo computes them.

    A target behind or beside the camera gives pixels outside the image; cutoff clamps them
    to ±cutoff; a rangefinder that hits nothing reads −1 and zeros.
    """
    xml = CAMERAS.replace('<site name="up" pos="0 0 0.5"/>',
                          '<site name="up" pos="0 0 0.5" zaxis="1 0 0.01"/>')
    m, d, mm, md = _load(xml)
    for qpos in (mm.qpos0, mm.qpos0 + np.r_[0, 0, 4, np.zeros(mm.nq - 3)]):
        md.qpos[:] = qpos
        d.qpos[:] = qpos
        mujoco.mj_forward(mm, md)
        js.forward(m, d)
        np.testing.assert_allclose(d.sensordata, md.sensordata, rtol=SENSOR_TOL,
                                   atol=SENSOR_TOL)
    assert np.all(np.abs(js.sensor(m, d, "hand_in_look")) <= 60.0)


def test_what_mujoco_accepts_loads_the_same():
    """What MuJoCo 4.0 accepts loads here with the same fields, poses and pixels.

    A targetbody camera without target stays fixed, and a resolution ≤ 0 without sensorsize
    is kept (a camprojection into such a camera is an error, in MuJoCo too).
    """
    xml = CAMERAS.replace('mode="targetbody" target="arm" pos="2 2 2"',
                          'mode="targetbody" pos="2 2 2"')
    xml = xml.replace('<camera name="q" pos=".3 0 .2"', '<camera name="q" resolution="0 -3" '
                                                       'pos=".3 0 .2"')
    m, d, mm, md = _load(xml)
    for f in CAM_FIELDS:
        np.testing.assert_allclose(getattr(m, f), np.asarray(getattr(mm, f), dtype=np.float64),
                                   rtol=0, atol=POSE_TOL, err_msg=f)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    np.testing.assert_allclose(d.cam_xmat, md.cam_xmat, rtol=0, atol=POSE_TOL)
    np.testing.assert_allclose(d.sensordata, md.sensordata, rtol=SENSOR_TOL, atol=SENSOR_TOL)


def test_model_without_cameras_has_empty_camera_fields():
    m = js.load_string("<mujoco><worldbody><body><freejoint/><geom size='.1'/></body>"
                       "</worldbody></mujoco>")
    d = js.make_data(m)
    js.forward(m, d)
    assert m.ncam == 0 and m.nmat == 0
    assert d.cam_xpos.shape == (0, 3) and m.geom_matid.tolist() == [-1]


def _bad(old, new):
    assert old in CAMERAS
    return CAMERAS.replace(old, new, 1)


@pytest.mark.parametrize("old, new, message", [
    ('target="arm" pos="2 2 2"', 'target="elbow" pos="2 2 2"',
     r"<string>:\d+ <camera name='look'>: unknown camera target body 'elbow'"),
    ('material="classy"', 'material="clasy"',
     r"<string>:\d+ <geom>: unknown material 'clasy'"),
    ('site="nose" camera="framed"', 'site="nose" camera="framd"',
     r"<string>:\d+ <camprojection name='nose_in_framed'>: unknown camera 'framd'"),
    ('resolution="320 240"', 'resolution="0 240"',
     r"camera 'framed': sensorsize needs a positive resolution.*<string>:\d+"),
    ('fovy="30"', 'fovy="180"', r"camera 'eu': fovy=180.0 is too large"),
    ('sensorsize=".0064 .0048"', '',
     r"camera 'pix': focal/principal need sensorsize \(<string>:\d+ <camera name='pix'>\)"),
    ('mode="track"', 'mode="follow"',
     r"<string>:\d+ <camera name='za'>: invalid value 'follow' for attribute 'mode'"),
    ('data="dist dir origin point normal depth"', 'data="point dist"',
     r"<string>:\d+ <rangefinder name='rf_all'>: .*in the order dist, dir"),
    ('data="dir point"', 'data="dir nrm"',
     r"<string>:\d+ <rangefinder name='rf_some'>: .*unknown rangefinder data field 'nrm'"),
    ('<site name="nose" pos=".25 0 .05"/>', '<site name="nose" pos=".25 0 .05" material="x"/>',
     r"<string>:\d+ <site name='nose'>: unknown material 'x'"),
    ('<camera name="tc" class="tinted"', '<camera name="tc" class="tinted" resolution="0 0"',
     r"sensor <camprojection> 'hand_in_tc': camera 'tc' needs a positive resolution.*"
     r"<string>:\d+ <camprojection name='hand_in_tc'>"),
    ('<material name="red" rgba="1 0 0 1"/>', '<material rgba="1 0 0 1"/>',
     r"<string>:\d+ <material>: a material needs a name"),
])
def test_bad_cameras_materials_and_sensors_are_named(old, new, message):
    with pytest.raises(ModelError, match=message):
        js.load_string(_bad(old, new))


SCENE = """<mujoco>
<asset><material name="red" rgba="1 0 0 1"/></asset>
<worldbody>
  <geom type="plane" size="3 3 .1" rgba=".9 .9 .9 1"/>
  <body name="box" pos="0.5 0.3 0.2">
    <freejoint/>
    <geom type="box" size=".1 .1 .1" material="red"/>
    <site name="center"/>
  </body>
  <camera name="overhead" pos="0 0 3" fovy="40" resolution="64 48"/>
  <camera name="side" mode="targetbody" target="box" pos="2 -2 1"/>
  <camera name="top_ortho" pos="0 0 3" projection="orthographic" fovy="2"/>
</worldbody>
<sensor><camprojection name="box_px" site="center" camera="overhead"/></sensor>
</mujoco>"""


def _is_red(px):
    return px[0] > 120 and px[1] < 60 and px[2] < 60


def test_render_from_a_named_camera_shows_the_red_box_where_it_projects():
    """The box's material color is drawn where the box projects.

    "overhead": at the pixel camprojection reports (a 64 × 48 image), not at the mirrored
    pixel; "side" (targetbody) keeps the box at the image center; "top_ortho" (orthographic,
    2 m tall) puts the box center (0.5, 0.3) at column 32 + 24·0.5, row 24 − 24·0.3.
    """
    m = js.load_string(SCENE)
    d = js.make_data(m)
    js.forward(m, d)
    u, v = js.sensor(m, d, "box_px")
    img = js.render(m, d, width=64, height=48, camera="overhead")
    assert _is_red(img[int(v), int(u)])
    assert not _is_red(img[47 - int(v), 63 - int(u)])
    assert _is_red(js.render(m, d, width=64, height=48, camera="side")[24, 32])
    img = js.render(m, d, width=64, height=48, camera="top_ortho")
    assert _is_red(img[16, 44]) and not _is_red(img[24, 32])
    with pytest.raises(KeyError, match="camera"):
        js.render(m, d, camera="nope")


def test_cli_render_and_view_take_a_camera_name(tmp_path):
    import subprocess
    import sys

    from PIL import Image

    xml = tmp_path / "scene.xml"
    xml.write_text(SCENE)
    png = tmp_path / "overhead.png"
    run = [sys.executable, "-m", "jointspace", "render", str(xml), "--out", str(png),
           "--width", "64", "--height", "48", "--camera", "overhead"]
    r = subprocess.run(run, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    m = js.load_string(SCENE)
    d = js.make_data(m)
    js.forward(m, d)
    u, v = js.sensor(m, d, "box_px")
    assert _is_red(np.asarray(Image.open(png))[int(v), int(u)])
    r = subprocess.run(run[:-1] + ["nope"], capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and "no camera of that name" in r.stderr
    assert "overhead, side, top_ortho" in r.stderr
    r = subprocess.run([sys.executable, "-m", "jointspace", "view", str(xml), "--camera",
                        "sid", "--no-browser", "--for-seconds", "1"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "--camera sid: the model has no camera" in r.stderr
    v = js.view(m, d, open_browser=False, camera="side")
    try:
        import json
        import urllib.request

        state = json.loads(urllib.request.urlopen(v.url + "state", timeout=30).read())
        np.testing.assert_allclose(state["cam"]["eye"], d.cam_xpos[m.camera("side")],
                                   atol=1e-5)
    finally:
        v.close()


@pytest.mark.parametrize("name", ["cheetah", "humanoid", "humanoid_CMU", "swimmer", "walker",
                                  "acrobot", "cartpole", "reacher"])
def test_dm_control_cameras_equal_mujoco(name):
    """The suite's cameras and materials, from the real files, equal MuJoCo's.

    Fixed and trackcom cameras (and the materials of the shared common/ files): compiled
    fields, and poses at seeded states.
    """
    from tests._real_models import real_model

    path = real_model("dm-control", f"dm_control/suite/{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.JointspaceWarning)  # textures are not loaded
        m = js.load(path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    assert m.ncam == mm.ncam > 0
    for f in CAM_FIELDS:
        np.testing.assert_allclose(getattr(m, f), np.asarray(getattr(mm, f), dtype=np.float64),
                                   rtol=0, atol=POSE_TOL, err_msg=f)
    np.testing.assert_array_equal(m.geom_matid, mm.geom_matid)
    np.testing.assert_allclose(m.mat_rgba, mm.mat_rgba, rtol=0, atol=RGBA_TOL)
    d, md = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(3)
    for _ in range(3):
        md.qpos[:] = d.qpos[:] = random_state(mm, rng)[0]
        js.forward(m, d)
        mujoco.mj_forward(mm, md)
        np.testing.assert_allclose(d.cam_xpos, md.cam_xpos, rtol=0, atol=POSE_TOL)
        np.testing.assert_allclose(d.cam_xmat, md.cam_xmat, rtol=0, atol=POSE_TOL)
