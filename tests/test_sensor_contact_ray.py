"""Contact, rangefinder and insidesite sensors, and `js.ray`, against MuJoCo 4.0.

The contact sensors of CONTACT cover every match criterion (geom, body, subtree, site, the
world, none), every data field, the four reductions and several slot counts; the
rangefinders and `js.ray` see planes, every primitive type and a mesh. sensordata is compared
with MuJoCo's after mj_forward at seeded states and at MuJoCo's states along its steps. The
geom distance sensors (geomdist, geomnormal, geomfromto) pair a capsule, a cylinder, an
ellipsoid, a mesh and boxes with each other, the floor and the world's geoms; MuJoCo's
convex solver is set to converge (ccd_tolerance) as jointspace's does.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests._util import random_state

# sensordata relative to max(1, |value|). Geometry (rays, inside tests, distances, and the
# contact sensors' found/dist/pos/normal/tangent at states where both libraries find the
# same contacts): the bound; measured ≤ 6e-15, the box-box distance (GJK) 9e-11.
GEOM_TOL = 1e-8
# the contact sensors' forces and torques (and the netforce centroid they weight): the
# constraint solve's difference from MuJoCo's, CONTACT_TOL of tests/test_sensor.py (CONTACT
# is solved nearly to convergence as SENSORS there); measured ≤ 5.7e-7
FORCE_TOL = 1e-6
# the closest points of an ellipsoid and a mesh (fromto): on a curved surface a distance
# error δ moves them by ~√(δ r); the distances agree to 9e-11, the points measured ≤ 5.3e-6
WITNESS_TOL = 1e-5
RAY_TOL = 1e-10  # ray distances: the same closed forms as MuJoCo's, roundoff only

CONTACT = """<mujoco model="contact sensors">
<option cone="elliptic" tolerance="1e-15" ls_tolerance="1e-6" iterations="200"
        ccd_tolerance="1e-12" ccd_iterations="500"/>
<asset>
  <mesh name="tet" vertex="0 0 0  .2 0 0  0 .2 0  0 0 .2"/>
</asset>
<worldbody>
  <geom name="floor" type="plane" size="3 3 .1"/>
  <geom name="wall" type="box" pos="1.2 0 .3" size=".05 1 .3"/>
  <site name="down" pos="0.05 0.02 1.2" quat="0 1 0 0" size=".05"/>
  <site name="side" pos="-.6 0.01 .2" quat="0.7071 0 0.7071 0" size=".05"/>
  <site name="zone" type="box" pos="0 0 .1" size=".6 .6 .3"/>
  <site name="ball_zone" type="sphere" pos=".3 0 .2" size=".4"/>
  <body name="torso" pos="0 0 .35">
    <freejoint/>
    <geom name="torso_box" type="box" size=".12 .1 .08"/>
    <site name="belly" type="capsule" pos="0 0 -.08" size=".16 .1" quat="0.7071 0.7071 0 0"/>
    <site name="eye" pos=".12 0 0" quat="0.7071 0 0.7071 0" size=".02"/>
    <body name="leg" pos=".15 0 -.05">
      <joint name="hip" type="hinge" axis="0 1 0" range="-60 60"/>
      <geom name="leg_cap" type="capsule" fromto="0 0 0 0 0 -.2" size=".04"/>
      <body name="foot" pos="0 0 -.22">
        <joint name="ankle" type="hinge" axis="1 0 0" range="-45 45"/>
        <geom name="foot_cyl" type="cylinder" size=".05 .02"/>
      </body>
    </body>
    <body name="other_leg" pos="-.15 0 -.05">
      <joint name="hip2" type="hinge" axis="0 1 0" range="-60 60"/>
      <geom name="leg2_ell" type="ellipsoid" size=".05 .04 .12" pos="0 0 -.1"/>
    </body>
  </body>
  <body name="ball" pos=".4 .1 .4">
    <freejoint/>
    <geom name="ball_geom" type="sphere" size=".07"/>
  </body>
  <body name="rock" pos="-.4 -.1 .6" euler="10 20 30">
    <geom name="rock_geom" type="mesh" mesh="tet"/>
  </body>
  <body name="ghost" pos="0 .5 .3">
    <freejoint/>
    <geom name="ghost_geom" type="box" size=".05 .05 .05" rgba="1 1 1 0"
          contype="0" conaffinity="0"/>
  </body>
</worldbody>
<contact>
  <exclude body1="other_leg" body2="foot"/>
  <exclude body1="other_leg" body2="leg"/>
</contact>
<actuator>
  <motor joint="hip" gear="5"/>
  <motor joint="ankle" gear="2"/>
  <motor joint="hip2" gear="5"/>
</actuator>
<sensor>
  <contact name="any"/>
  <contact name="torso_min" geom1="torso_box" num="3" data="found force dist normal"
           reduce="mindist"/>
  <contact name="tree" subtree1="torso" num="4"
           data="found force torque dist pos normal tangent" reduce="maxforce"/>
  <contact name="to_floor" subtree1="torso" geom2="floor" num="2" data="force pos normal"/>
  <contact name="floor_to" geom1="floor" body2="foot" data="found force tangent"/>
  <contact name="into_leg" body2="leg" num="2" data="force normal tangent"/>
  <contact name="belly" site="belly" data="found dist pos"/>
  <contact name="net" subtree1="torso" body2="world" reduce="netforce" num="2"
           data="found force torque dist pos normal tangent"/>
  <contact name="net_all" data="force torque pos" reduce="netforce"/>
  <contact name="first6" num="6" data="dist pos"/>
  <contact name="ball_any" body1="ball" num="2" data="found normal" reduce="mindist"/>
  <rangefinder name="rf_down" site="down"/>
  <rangefinder name="rf_side" site="side"/>
  <rangefinder name="rf_eye" site="eye" cutoff=".5"/>
  <insidesite name="in_ball" site="zone" objtype="body" objname="ball"/>
  <insidesite site="ball_zone" objtype="geom" objname="foot_cyl"/>
  <insidesite site="belly" objtype="xbody" objname="leg"/>
  <insidesite site="zone" objtype="site" objname="eye"/>
  <distance name="cap_ball" geom1="leg_cap" geom2="ball_geom" cutoff="2"/>
  <normal geom1="leg_cap" geom2="ball_geom" cutoff="2"/>
  <fromto geom1="leg_cap" geom2="ball_geom" cutoff="2"/>
  <distance geom1="foot_cyl" geom2="floor" cutoff="1"/>
  <fromto geom1="floor" geom2="foot_cyl" cutoff="1"/>
  <distance geom1="leg2_ell" geom2="rock_geom" cutoff="2"/>
  <fromto name="ell_rock" geom1="leg2_ell" geom2="rock_geom" cutoff="2"/>
  <distance geom1="torso_box" geom2="wall" cutoff="3"/>
  <normal geom1="wall" geom2="torso_box" cutoff="3"/>
  <fromto geom1="ball_geom" geom2="wall" cutoff="3"/>
  <fromto geom1="leg_cap" geom2="wall" cutoff="3"/>
  <fromto geom1="rock_geom" geom2="floor" cutoff="1"/>
  <distance name="near" body1="torso" body2="rock" cutoff="2"/>
  <fromto name="ell_world" body1="other_leg" body2="world" cutoff="2"/>
  <distance body1="leg" body2="ball" cutoff=".05"/>
</sensor>
</mujoco>"""


def _load(xml):
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def _tolerances(m):
    """Per-value tolerance: FORCE_TOL (contact forces), WITNESS_TOL (ellipsoid points), GEOM_TOL."""
    tol = np.full(m.nsensordata, GEOM_TOL)
    for i in range(m.nsensor):
        a, n = m.sensor_adr[i], m.sensor_dim[i]
        if m.names["sensor"][i] in ("ell_rock", "ell_world"):
            tol[a:a + n] = WITNESS_TOL
        if m.sensor_type[i] != mujoco.mjtSensor.mjSENS_CONTACT:
            continue
        spec, reduce, num = m.sensor_intprm[i]
        if reduce == 3:  # netforce: all of slot 0 is weighted by the forces
            tol[a:a + n] = FORCE_TOL
            continue
        sizes = [1, 3, 3, 1, 3, 3, 3]
        offs = np.cumsum([0] + [sizes[k] if spec >> k & 1 else 0 for k in range(7)])
        for s in range(num):
            for k in (1, 2):
                if spec >> k & 1:
                    b = a + s * (n // num) + offs[k]
                    tol[b:b + 3] = FORCE_TOL
    return tol


def _same_contacts(d, md):
    """Both found the same contacts (geoms, points and frames to 1e-9)."""
    n = d.ncon[0]
    if n != md.ncon:
        return False
    geoms = np.array([[c.geom1, c.geom2] for c in md.contact]).reshape(n, 2)
    return (np.array_equal(d.contact_geom[:n], geoms)
            and np.allclose(d.contact_pos[:n], md.contact.pos, rtol=0, atol=1e-9)
            and np.allclose(d.contact_frame[:n], md.contact.frame, rtol=0, atol=1e-9))


def _check(m, d, md, tol, what):
    """sensordata within tol (relative to max(1, |MuJoCo's|)); the worst ratio to tol."""
    e = np.abs(d.sensordata - md.sensordata) / np.maximum(1.0, np.abs(md.sensordata))
    i = int(np.argmax(e / tol))
    assert e[i] <= tol[i], (what, _name(m, i), e[i])
    return e


def _name(m, k):
    i = int(np.searchsorted(m.sensor_adr, k, side="right")) - 1
    return m.names["sensor"][i]


def test_layout_equals_mujoco():
    m, _, mm, _ = _load(CONTACT)
    assert (m.nsensor, m.nsensordata) == (mm.nsensor, mm.nsensordata)
    for f in ("type", "datatype", "needstage", "objtype", "objid", "reftype", "refid", "dim",
              "adr", "intprm", "cutoff"):
        np.testing.assert_array_equal(getattr(m, "sensor_" + f), getattr(mm, "sensor_" + f),
                                      err_msg=f)


def test_sensors_match_mujoco_at_seeded_states_and_along_its_steps():
    """Seeded states, then MuJoCo's states along 400 of its steps under varying controls.

    Compared where both libraries find the same contacts (all 420 states here): where they
    do not is the collision parity tests' measure. The legs do not collide with each other:
    their ellipsoid-capsule and ellipsoid-cylinder EPA contacts differ from MuJoCo's by more
    than 1e-9 (collision/driver.py), which this test is not about.
    """
    m, d, mm, md = _load(CONTACT)
    tol = _tolerances(m)
    rng = np.random.default_rng(7)
    compared = 0
    seen = np.zeros(m.nsensordata, dtype=bool)
    for k in range(20):
        q, v = random_state(mm, rng, scale=0.4)
        q[2] = 0.3 + 0.02 * k  # the torso from the floor to above it
        q[12] = 0.1 + 0.03 * k  # the ball likewise
        for dd in (d, md):
            dd.qpos[:] = q
            dd.qvel[:] = v
        js.forward(m, d)
        mujoco.mj_forward(mm, md)
        if _same_contacts(d, md):
            _check(m, d, md, tol, f"state {k}")
            compared += 1
        seen |= d.sensordata != 0
    mujoco.mj_resetData(mm, md)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    x = np.empty(mujoco.mj_stateSize(mm, spec))
    for k in range(400):
        md.ctrl[:] = np.sin(0.03 * k + np.arange(m.nu))
        mujoco.mj_getState(mm, md, x, spec)
        js.set_state(m, d, x, "integration")
        js.step(m, d)
        mujoco.mj_step(mm, md)
        if _same_contacts(d, md):
            _check(m, d, md, tol, f"step {k}")
            compared += 1
        seen |= d.sensordata != 0
    assert compared == 420
    # the states exercised every sensor (each has a nonzero value at some state)
    for i in range(m.nsensor):
        a = m.sensor_adr[i]
        assert seen[a:a + m.sensor_dim[i]].any(), m.names["sensor"][i]


def test_ray_matches_mj_ray():
    """js.ray against mj_ray from seeded points, aimed near a geom or anywhere, filtered."""
    m, d, mm, md = _load(CONTACT)
    rng = np.random.default_rng(3)
    hits = set()
    for _ in range(10):
        q, _ = random_state(mm, rng, scale=0.4)
        q[2], q[12] = rng.uniform(0.2, 0.6, 2)  # the torso and the ball above the floor
        d.qpos[:] = md.qpos[:] = q
        js.forward(m, d)
        mujoco.mj_forward(mm, md)
        for _ in range(100):
            pnt = rng.uniform([-1, -1, 0.05], [1.5, 1, 1.0])
            vec = rng.normal(size=3) * rng.uniform(0.5, 2)
            if rng.random() < 0.7:  # towards a point near a random geom's centre
                g = rng.integers(m.ngeom)
                vec = d.geom_xpos[g] + rng.normal(scale=0.05, size=3) - pnt
            groups = None if rng.random() < 0.5 else rng.integers(0, 2, 6).astype(np.uint8)
            static = bool(rng.random() < 0.7)
            exclude = int(rng.integers(-1, m.nbody))
            gid = np.zeros(1, dtype=np.int32)
            want = mujoco.mj_ray(mm, md, pnt, vec, groups, static, exclude, gid)
            got, g = js.ray(m, d, pnt, vec, groups, static, exclude)
            assert g == gid[0] and abs(got - want) <= RAY_TOL * max(1.0, abs(want)), \
                (pnt, vec, got, want, g, gid[0])
            hits.add(g)
    types = {int(m.geom_type[g]) for g in hits if g >= 0}
    assert types == {0, 2, 3, 4, 5, 6, 7}, types  # planes, every primitive and the mesh
    assert m.id("geom", "ghost_geom") not in hits  # invisible
    with pytest.raises(ValueError, match="zero length"):
        js.ray(m, d, [0, 0, 1], [0, 0, 0])


def test_bad_geometric_sensors_are_named():
    def load(old, new):
        assert old in CONTACT
        return js.load_string(CONTACT.replace(old, new, 1))

    where = r"<string>:\d+ <contact name='any'>: attribute "
    with pytest.raises(ModelError, match=where + r".*data='found forc'.*unknown contact data "
                                                 r"field 'forc'"):
        load('name="any"/>', 'name="any" data="found forc"/>')
    with pytest.raises(ModelError, match=r"data='force found'.*in the order found, force"):
        load('name="any"/>', 'name="any" data="force found"/>')
    with pytest.raises(ModelError, match=where + r".*reduce='max'.*none, mindist, maxforce, "
                                                 r"netforce"):
        load('name="any"/>', 'name="any" reduce="max"/>')
    with pytest.raises(ModelError, match=r"num=0.*must be positive"):
        load('name="any"/>', 'name="any" num="0"/>')
    with pytest.raises(ModelError, match=r"sensor <contact> 'tree' refers to unknown body "
                                         r"'torsox'"):
        load('subtree1="torso" num="4"', 'subtree1="torsox" num="4"')
    with pytest.raises(ModelError, match=r"sensor <insidesite> 'in_ball' refers to unknown "
                                         r"site 'zonex'"):
        load('site="zone" objtype="body"', 'site="zonex" objtype="body"')
    with pytest.raises(ModelError, match=r"<rangefinder> 'rf_down' refers to unknown site"):
        load('site="down"/>', 'site="nowhere"/>')
    with pytest.raises(ModelError, match=r"sensor <distance> 'cap_ball' refers to unknown geom "
                                         r"'ball_geomx'"):
        load('geom2="ball_geom" cutoff="2"/>', 'geom2="ball_geomx" cutoff="2"/>')
    with pytest.raises(ModelError, match=r"<distance> needs geom1= or body1= and geom2="):
        load('<distance name="near" body1="torso" body2="rock"', '<distance name="near" '
             'body1="torso"')


MESHES = """<mujoco>
<asset>
  <mesh name="cube" vertex="-.1 -.1 -.1  .1 -.1 -.1  -.1 .1 -.1  .1 .1 -.1  -.1 -.1 .1
                            .1 -.1 .1  -.1 .1 .1  .1 .1 .1"/>
  <mesh name="gem" vertex="0 0 .2  .15 0 .05  0 .15 .05  -.15 0 .05  0 -.15 .05  .1 .1 -.1
                           -.1 .1 -.12  -.1 -.1 -.1  .1 -.1 -.1  0 0 -.2"/>
</asset>
<worldbody>
  <body pos=".3 0 .5" euler="5 -10 40"><freejoint/><geom type="mesh" mesh="cube"/></body>
  <body pos="-.3 0 .5" euler="10 20 30"><geom type="mesh" mesh="gem"/></body>
  <geom type="mesh" mesh="cube" pos="0 .4 .2"/>
</worldbody>
</mujoco>"""


def test_ray_meets_mesh_triangles_as_mj_ray():
    """Rays at meshes, a third along a world axis (onto the world cube's flat faces)."""
    m, d, mm, md = _load(MESHES)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    rng = np.random.default_rng(11)
    hits = 0
    for k in range(600):
        g = rng.integers(m.ngeom)
        pnt = rng.uniform(-1, 1, 3) + [0, 0, 0.5]
        vec = md.geom_xpos[g] + rng.normal(scale=0.08, size=3) - pnt
        if k % 3 == 0:
            vec = np.zeros(3)
            vec[rng.integers(3)] = rng.choice([-1.0, 1.0])
            pnt = md.geom_xpos[g] - 2 * vec + rng.uniform(-0.12, 0.12, 3) * (vec == 0)
        gid = np.zeros(1, dtype=np.int32)
        want = mujoco.mj_ray(mm, md, pnt, vec, None, True, -1, gid)
        got, g_hit = js.ray(m, d, pnt, vec)
        assert g_hit == gid[0] and abs(got - want) <= RAY_TOL * max(1.0, abs(want)), (k, got, want)
        hits += want >= 0
    assert hits > 450


def test_inverse_fills_the_contact_sensors_as_mj_inverse():
    m, d, mm, md = _load(CONTACT)
    mujoco.mj_step(mm, md, 150)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    x = np.empty(mujoco.mj_stateSize(mm, spec))
    mujoco.mj_getState(mm, md, x, spec)
    js.set_state(m, d, x, "integration")
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert md.ncon > 0 and _same_contacts(d, md)
    for dd in (d, md):
        dd.qacc[:] = np.linspace(-1, 1, m.nv)
        dd.sensordata[:] = 0
    js.inverse(m, d)
    mujoco.mj_inverse(mm, md)
    _check(m, d, md, _tolerances(m), "inverse")
    assert np.any(d.sensordata[_tolerances(m) == FORCE_TOL] != 0)
