"""Fixed tendons against MuJoCo: lengths, Jacobians, forces, rows, trajectories, inverse.

One focused model holds every fixed-tendon feature: a spring with a dead band and damping,
armature, friction loss, range limits, a tendon equality with its polynomial, a motor and a
position actuator on tendons, and the tendon sensors. A second model has springs, dampers,
armature and actuators only (no constraint row), for trajectories to rounding.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from jointspace.sensor import STAGE_ACC
from tests._util import rel_err

# smooth quantities (no constraint solve): float64 rounding, relative to max(1, |x|)
SMOOTH_TOL = 1e-9
# qacc through the constraint solvers: both stop at their tolerance (MuJoCo's 1e-8 on the
# relative cost improvement); the iterates agree to this, relative to max(1, |qacc|)
CONSTRAINED_TOL = 1e-6
# 1000 steps without constraint rows: rounding grows along the trajectory
TRAJECTORY_TOL = 1e-8
# qfrc_inverse vs mj_inverse: the same formulas, rounding only
INVERSE_TOL = 1e-8
# energy drift of RK4 at h = 1 ms over 2 s, relative to the energy exchanged (measured 1e-9)
ENERGY_TOL = 1e-6
# the same over a wrap geom at h = 0.5 ms: the length's curvature jumps where the path starts
# or stops touching the geom, which RK4 steps across (measured 1.7e-4)
WRAP_ENERGY_TOL = 1e-3

TENDONS = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}" solver="{solver}"/>
  <default>
    <tendon stiffness="3"/>
    <default class="stiff"><tendon stiffness="7" damping="0.2"/></default>
  </default>
  <worldbody>
    <body name="a"><joint name="j0" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="b" pos="0 0 -0.5"><joint name="j1" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
        <body name="c" pos="0 0 -0.5"><joint name="j2" type="slide" axis="1 0 0"/>
          <geom type="sphere" size="0.1"/>
        </body>
      </body>
    </body>
    <body name="e" pos="1 0 0"><joint name="j3" type="hinge" axis="1 0 0"/>
      <geom type="box" size="0.1 0.2 0.3"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t0" limited="true" range="-0.3 0.4" damping="0.7" springlength="0.1 0.2"
           armature="0.05" frictionloss="0.2">
      <joint joint="j0" coef="1"/><joint joint="j1" coef="-0.5"/>
    </fixed>
    <fixed name="t1" stiffness="0"><joint joint="j2" coef="2"/><joint joint="j1" coef="0.3"/>
    </fixed>
    <fixed name="t2" class="stiff" springlength="0.05" limited="true" range="-0.2 0.2"
           margin="0.05" solreflimit="0.05 0.8">
      <joint joint="j3" coef="-1.5"/><joint joint="j2" coef="0.5"/>
    </fixed>
  </tendon>
  <equality><tendon tendon1="t1" tendon2="t0" polycoef="0.01 0.5 0.1 0 0"/></equality>
  <actuator>
    <motor tendon="t0" gear="2"/>
    <position tendon="t1" kp="5"/>
    <general tendon="t2" gainprm="3" biasprm="0.1 -2 -0.5" biastype="affine"/>
  </actuator>
  <sensor>
    <tendonpos tendon="t0"/><tendonvel tendon="t1"/><tendonpos tendon="t2"/>
    <tendonlimitpos tendon="t0"/><tendonlimitvel tendon="t0"/><tendonlimitfrc tendon="t0"/>
    <tendonlimitpos tendon="t2"/><tendonlimitfrc tendon="t2"/>
    <tendonactuatorfrc tendon="t2"/>
  </sensor>
</mujoco>
"""

SMOOTH = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <worldbody>
    <body name="a"><joint name="j0" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="b" pos="0 0 -0.5"><joint name="j1" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
        <body name="c" pos="0 0 -0.5"><joint name="j2" type="slide" axis="1 0 0"/>
          <geom type="sphere" size="0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t0" stiffness="4" damping="0.7" springlength="0.1 0.2" armature="0.05">
      <joint joint="j0" coef="1"/><joint joint="j1" coef="-0.5"/>
    </fixed>
    <fixed name="t1" damping="1.5" stiffness="2">
      <joint joint="j2" coef="2"/><joint joint="j1" coef="0.3"/>
    </fixed>
  </tendon>
  <actuator><motor tendon="t0" gear="2"/><velocity tendon="t1" kv="0.5"/></actuator>
</mujoco>
"""

# spatial tendons through sites on two trees (one body free), with a pulley; {rows} adds the
# limit and friction-loss rows
SPATIAL = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}" solver="{solver}">
    <flag contact="disable"/>
  </option>
  <worldbody>
    <site name="anchor" pos="0 0 1"/>
    <body name="a" pos="0 0 0.5">
      <joint name="a1" type="hinge" axis="0 1 0"/><joint name="a2" type="slide" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
      <site name="sa" pos="0.3 0 0"/>
      <body name="c" pos="0.3 0 0"><joint name="a3" type="hinge" axis="0 1 0"/>
        <geom type="sphere" size="0.05" pos="0.1 0 0"/><site name="sc" pos="0.1 0.02 0"/>
      </body>
    </body>
    <body name="b" pos="0.6 0 0.2"><freejoint/><geom type="box" size="0.05 0.05 0.05"/>
      <site name="sb" pos="0.05 0 0.05"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="s0" stiffness="20" damping="0.5" springlength="0.3 0.5" {rows}>
      <site site="anchor"/><site site="sa"/><pulley divisor="2"/><site site="sa"/>
      <site site="sc"/><site site="sb"/>
    </spatial>
    <spatial name="s1" stiffness="5"><site site="sc"/><site site="sb"/></spatial>
  </tendon>
  <actuator><motor tendon="s0" gear="3"/><position tendon="s1" kp="4"/></actuator>
  <sensor><tendonpos tendon="s0"/><tendonvel tendon="s1"/><tendonactuatorfrc tendon="s1"/>
    <e_potential/>
  </sensor>
</mujoco>
"""
# wrapping around a cylinder and a sphere, each on two paths; the end sites move on slides and
# a hinge
WRAPPING = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}">
    <flag contact="disable" gravity="{gravity}" energy="enable"/>
  </option>
  <worldbody>
    <site name="top" pos="0 0 1"/>
    <body name="w" pos="0 0 0.5"><joint name="w1" type="hinge" axis="0 1 0"/>
      <geom name="cyl" type="cylinder" size="0.1 0.2" euler="90 0 0"/>
      <geom name="ball" type="sphere" size="0.08" pos="0.3 0 -0.2"/>
    </body>
    <body name="p" pos="0.2 0 -0.2">
      <joint name="px" type="slide" axis="1 0 0"/><joint name="pz" type="slide" axis="0 0 1"/>
      <joint name="ph" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.05"/><site name="end" pos="0 0 -0.05"/>
      <site name="end2" pos="0.05 0 0"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="c" stiffness="30">
      <site site="top"/><geom geom="cyl"/><site site="end"/>
    </spatial>
    <spatial name="s" stiffness="10"><site site="top"/><geom geom="ball"/><site site="end2"/>
    </spatial>
    <spatial name="si" stiffness="10">
      <site site="top"/><geom geom="ball"/><site site="end"/>
    </spatial>
    <spatial name="cn"><site site="top"/><geom geom="cyl"/><site site="end2"/></spatial>
  </tendon>
</mujoco>
"""
SPATIAL_ROWS = 'limited="true" range="0.2 0.9" frictionloss="0.3"'


def _pair(xml, **fmt):
    xml = xml.format(**{"integrator": "Euler", "solver": "Newton", "rows": "", **fmt})
    return js.load_string(xml), mujoco.MjModel.from_xml_string(xml), xml


def _dense_ten_J(mj, md):
    J = np.zeros((mj.ntendon, mj.nv))
    mujoco.mju_sparse2dense(J, md.ten_J, mj.ten_J_rownnz, mj.ten_J_rowadr, mj.ten_J_colind)
    return J


def _states(m, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = m.qpos0 + 0.4 * rng.normal(size=m.nq)
        for j in range(m.njnt):
            if m.jnt_type[j] == js.types.JNT_FREE:
                a = m.jnt_qposadr[j] + 3
                q[a:a + 4] /= np.linalg.norm(q[a:a + 4])
        yield q, rng.normal(size=m.nv), rng.normal(size=m.nu)


def _set(m, d, mj, md, q, v, u):
    d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
    md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u


def test_model_fields_equal_mujoco():
    """Compiled tendon parameters, the qpos0 constants and the default spring length."""
    m, mj, _ = _pair(TENDONS)
    assert (m.ntendon, m.nwrap) == (mj.ntendon, mj.nwrap)
    for name in ("tendon_adr", "tendon_num", "tendon_limited", "tendon_range",
                 "tendon_margin", "tendon_stiffness", "tendon_damping", "tendon_armature",
                 "tendon_frictionloss", "tendon_lengthspring", "tendon_solref_lim",
                 "tendon_solimp_lim", "tendon_solref_fri", "tendon_solimp_fri",
                 "tendon_length0", "tendon_invweight0", "wrap_type", "wrap_objid",
                 "wrap_prm", "actuator_trntype", "actuator_trnid", "actuator_gainprm",
                 "actuator_biasprm", "eq_type", "eq_obj1id", "eq_obj2id"):
        a, b = getattr(m, name), getattr(mj, name)
        assert rel_err(a, np.asarray(b).reshape(a.shape)) <= SMOOTH_TOL, name
    assert rel_err(m.eq_data[:, :5], mj.eq_data[:, :5]) <= SMOOTH_TOL  # the polynomial


@pytest.mark.parametrize("xml, solver", [(TENDONS, "Newton"), (TENDONS, "CG"), (TENDONS, "PGS"),
                                         (SPATIAL, "Newton"), (SPATIAL, "PGS")],
                         ids=["fixed-Newton", "fixed-CG", "fixed-PGS", "spatial-Newton",
                              "spatial-PGS"])
def test_forward_matches_mujoco(xml, solver):
    """ten_*, actuators, passive parts, M with armature, efc rows and qacc, seeded states."""
    m, mj, _ = _pair(xml, solver=solver, rows=SPATIAL_ROWS)
    d, md = js.make_data(m), mujoco.MjData(mj)
    M = np.zeros((m.nv, m.nv))
    rows_seen = set()
    for q, v, u in _states(m, 6, 7):
        _set(m, d, mj, md, q, v, u)
        js.forward(m, d)
        mujoco.mj_forward(mj, md)
        for name in ("ten_length", "ten_velocity", "actuator_length", "actuator_velocity",
                     "actuator_force", "qfrc_spring", "qfrc_damper",
                     "qfrc_passive", "qfrc_actuator", "qfrc_bias", "qacc_smooth"):
            a = getattr(d, name)
            assert rel_err(a, np.asarray(getattr(md, name)).reshape(a.shape)) <= SMOOTH_TOL, name
        assert rel_err(d.ten_J, _dense_ten_J(mj, md)) <= SMOOTH_TOL
        moment = np.zeros((mj.nu, mj.nv))
        mujoco.mju_sparse2dense(moment, md.actuator_moment, md.moment_rownnz, md.moment_rowadr,
                                md.moment_colind)
        assert rel_err(d.actuator_moment, moment) <= SMOOTH_TOL
        mujoco.mj_fullM(mj, md, M)
        assert rel_err(js.crba(m, d, q), M) <= SMOOTH_TOL
        n = d.nefc[0]
        assert n == md.nefc
        assert list(d.efc_type[:n]) == list(md.efc_type)
        assert list(d.efc_id[:n]) == list(md.efc_id)
        rows_seen |= set(int(t) for t in md.efc_type)
        efc_J = np.zeros((md.nefc, mj.nv))
        if mujoco.mj_isSparse(mj):
            mujoco.mju_sparse2dense(efc_J, md.efc_J, md.efc_J_rownnz, md.efc_J_rowadr,
                                    md.efc_J_colind)
        else:
            efc_J[:] = md.efc_J[:md.nefc * mj.nv].reshape(md.nefc, mj.nv)
        assert rel_err(d.efc_J[:n], efc_J) <= SMOOTH_TOL
        for name in ("efc_pos", "efc_margin", "efc_frictionloss", "efc_R", "efc_D",
                     "efc_aref", "efc_vel"):
            assert rel_err(getattr(d, name)[:n], getattr(md, name)) <= SMOOTH_TOL, name
        assert rel_err(d.qacc, md.qacc) <= CONSTRAINED_TOL
        # position and velocity sensors are smooth; the force sensors follow the solve
        acc = np.zeros(m.nsensordata, dtype=bool)
        for i in range(m.nsensor):
            if m.sensor_needstage[i] == STAGE_ACC:
                acc[m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]] = True
        assert acc.any() and not acc.all()
        assert rel_err(d.sensordata[~acc], md.sensordata[~acc]) <= SMOOTH_TOL
        assert rel_err(d.sensordata[acc], md.sensordata[acc]) <= CONSTRAINED_TOL
        nw = md.ten_wrapadr[-1] + md.ten_wrapnum[-1]
        assert list(d.ten_wrapadr) == list(md.ten_wrapadr)
        assert list(d.ten_wrapnum) == list(md.ten_wrapnum)
        assert list(d.wrap_obj[:nw]) == list(md.wrap_obj.reshape(-1)[:nw])
        assert rel_err(d.wrap_xpos[:nw], md.wrap_xpos.reshape(-1, 3)[:nw]) <= SMOOTH_TOL
    # the states exercise the tendon rows: friction, limits (and the fixed tendons' equality)
    assert {mujoco.mjtConstraint.mjCNSTR_FRICTION_TENDON,
            mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON} <= rows_seen
    if xml is TENDONS:
        assert mujoco.mjtConstraint.mjCNSTR_EQUALITY in rows_seen


@pytest.mark.parametrize("xml", [SMOOTH, SPATIAL], ids=["fixed", "spatial"])
@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_1000_steps_match_mj_step(xml, integrator):
    """Springs, dampers (implicit where MuJoCo makes them so), armature, tendon actuators."""
    m, mj, _ = _pair(xml, integrator=integrator)
    d, md = js.make_data(m), mujoco.MjData(mj)
    q, v, u = next(_states(m, 1, 3))
    _set(m, d, mj, md, q, v, u)
    for _ in range(1000):
        js.step(m, d)
        mujoco.mj_step(mj, md)
    assert rel_err(d.qpos, md.qpos) <= TRAJECTORY_TOL
    assert rel_err(d.qvel, md.qvel) <= TRAJECTORY_TOL


@pytest.mark.parametrize("xml", [TENDONS, SPATIAL], ids=["fixed", "spatial"])
def test_inverse_matches_mj_inverse(xml):
    """qfrc_inverse with tendon springs, dampers, armature and all tendon rows."""
    m, mj, _ = _pair(xml, rows=SPATIAL_ROWS)
    d, md = js.make_data(m), mujoco.MjData(mj)
    rng = np.random.default_rng(11)
    for q, v, u in _states(m, 4, 5):
        _set(m, d, mj, md, q, v, u)
        a = rng.normal(size=m.nv)
        d.qacc[:] = a
        md.qacc[:] = a
        js.inverse(m, d)
        mujoco.mj_inverse(mj, md)
        assert rel_err(d.qfrc_inverse, md.qfrc_inverse) <= INVERSE_TOL
        assert rel_err(d.qfrc_constraint, md.qfrc_constraint) <= INVERSE_TOL


def test_spatial_tendon_spring_conserves_energy():
    """No damping, no gravity: kinetic + potential (tendon springs included) stays constant.

    The spatial tendons pull the two trees through sites and a pulley; their springs
    exchange energy with the bodies' motion, so the potential term is the tendons' own.
    """
    xml = SPATIAL.format(integrator="RK4", solver="Newton", rows="")
    xml = xml.replace('damping="0.5"', "").replace('timestep="0.002"', 'timestep="0.001"')
    xml = xml.replace("<flag ", '<flag gravity="disable" energy="enable" ')
    xml = xml.replace('<motor tendon="s0" gear="3"/><position tendon="s1" kp="4"/>', "")
    m = js.load_string(xml)
    d = js.make_data(m)
    q, v, _ = next(_states(m, 1, 4))
    d.qpos[:], d.qvel[:] = q, v
    js.forward(m, d)
    e0 = d.energy.sum()
    potential = 0.0
    for _ in range(2000):
        js.step(m, d)
        potential = max(potential, d.energy[0])
    js.forward(m, d)
    assert potential > 0.1 * abs(e0)  # the springs do store a real share of the energy
    assert abs(d.energy.sum() - e0) <= ENERGY_TOL * abs(e0)


def _forward_matches_at_states(xml, seed):
    """The number of seeded states, of 40, in which each tendon wraps.

    At each: ten_length, ten_J, the path points (sites, tangent points, their geoms) and
    qacc against mj_forward.
    """
    m, mj, _ = _pair(xml, gravity="enable")
    d, md = js.make_data(m), mujoco.MjData(mj)
    wrapped = np.zeros(m.ntendon, dtype=int)
    rng = np.random.default_rng(seed)
    for _ in range(40):
        q = 0.8 * rng.normal(size=m.nq)
        v = rng.normal(size=m.nv)
        _set(m, d, mj, md, q, v, np.zeros(0))
        js.forward(m, d)
        mujoco.mj_forward(mj, md)
        assert rel_err(d.ten_length, md.ten_length) <= SMOOTH_TOL
        assert rel_err(d.ten_J, _dense_ten_J(mj, md)) <= SMOOTH_TOL
        assert list(d.ten_wrapnum) == list(md.ten_wrapnum)
        nw = md.ten_wrapadr[-1] + md.ten_wrapnum[-1]
        assert list(d.wrap_obj[:nw]) == list(md.wrap_obj.reshape(-1)[:nw])
        assert rel_err(d.wrap_xpos[:nw], md.wrap_xpos.reshape(-1, 3)[:nw]) <= SMOOTH_TOL
        assert rel_err(d.qacc, md.qacc) <= SMOOTH_TOL
        wrapped += np.array(md.ten_wrapnum) > 2
    return wrapped


def test_wrapping_matches_mujoco():
    """Sphere and cylinder wrapping without side sites (with them: the tests below).

    The seeded states wrap every tendon in some and leave it straight in others.
    """
    wrapped = _forward_matches_at_states(WRAPPING, 0)
    assert np.all(wrapped > 0) and np.all(wrapped < 40), wrapped


# side sites: a tendon over the cylinder with a side site behind it, and one over the ball
# with a side site inside it (the single-contact path)
WRAPPING_SIDE = WRAPPING.replace(
    '<geom name="ball" type="sphere" size="0.08" pos="0.3 0 -0.2"/>',
    '<geom name="ball" type="sphere" size="0.08" pos="0.3 0 -0.2"/>'
    '<site name="far" pos="-0.3 0 0.1"/><site name="core" pos="0.33 0 -0.18"/>').replace(
    '<spatial name="cn">',
    '<spatial name="cs" stiffness="20"><site site="top"/><geom geom="cyl" sidesite="far"/>'
    '<site site="end"/></spatial><spatial name="bs" stiffness="5"><site site="top"/>'
    '<geom geom="ball" sidesite="core"/><site site="end2"/></spatial><spatial name="cn">')

# the path points of one spatial tendon site, geom, site set directly (mocap bodies): both
# geoms share a body, so each pose wraps the same sites around a sphere and a cylinder
SIDE_POSES = """
<mujoco>
  <worldbody>
    <body name="geoms" mocap="true">
      <geom name="ball" type="sphere" size="0.1" contype="0" conaffinity="0"/>
      <geom name="can" type="cylinder" size="0.1 0.5" contype="0" conaffinity="0"/>
    </body>
    <body name="b0" mocap="true"><site name="x0"/></body>
    <body name="b1" mocap="true"><site name="x1"/></body>
    <body name="bs" mocap="true"><site name="side"/></body>
  </worldbody>
  <tendon>
    <spatial name="ball_side"><site site="x0"/><geom geom="ball" sidesite="side"/>
      <site site="x1"/></spatial>
    <spatial name="can_side"><site site="x0"/><geom geom="can" sidesite="side"/>
      <site site="x1"/></spatial>
    <spatial name="ball"><site site="x0"/><geom geom="ball"/><site site="x1"/></spatial>
    <spatial name="can"><site site="x0"/><geom geom="can"/><site site="x1"/></spatial>
  </tendon>
</mujoco>
"""
# MuJoCo 4.0's wrap and ours take the same steps (atan2, asin, the same Newton iteration):
# the lengths and points agree to rounding, relative to max(1, |x|)
WRAP_POSE_TOL = 1e-12


def test_side_sites_wrap_as_mujoco_4():
    """5,000 seeded poses: sites and a side site around a sphere and a cylinder.

    MuJoCo 4.0 chooses the side by the sense of the sweep from the first site through the
    side site to the second, and keeps the straight path where it misses the geom with the
    side site's direction between the sites' (which the published mju_wrap wraps); a side
    site inside the geom gives the single-contact path. ten_length, ten_wrapnum, wrap_obj
    and wrap_xpos of every tendon, with and without the side site, against mj_forward.
    """
    m, mj = js.load_string(SIDE_POSES), mujoco.MjModel.from_xml_string(SIDE_POSES)
    d, md = js.make_data(m), mujoco.MjData(mj)
    rng = np.random.default_rng(7)
    r = 0.1
    kinds = {"side wraps, plain straight": 0, "plain wraps, side straight": 0,
             "inside, one contact": 0, "both wrap": 0}
    for _ in range(5000):
        quat = rng.normal(size=4)
        pos = np.empty((4, 3))
        pos[0] = rng.uniform(-0.2, 0.2, 3)
        pos[1:3] = pos[0] + rng.uniform(-4 * r, 4 * r, (2, 3))
        u = rng.normal(size=3)
        if rng.uniform() < 0.25:  # the side site inside the geom
            pos[3] = pos[0] + u / np.linalg.norm(u) * r * rng.uniform() ** (1 / 3)
        else:
            pos[3] = pos[0] + u / np.linalg.norm(u) * r * rng.uniform(1.2, 4)
        for dd in (d, md):
            dd.mocap_pos[:] = pos
            dd.mocap_quat[:] = [quat / np.linalg.norm(quat), [1, 0, 0, 0], [1, 0, 0, 0],
                                [1, 0, 0, 0]]
        js.forward(m, d)
        mujoco.mj_forward(mj, md)
        assert list(d.ten_wrapnum) == list(md.ten_wrapnum)
        nw = md.ten_wrapadr[-1] + md.ten_wrapnum[-1]
        assert list(d.wrap_obj[:nw]) == list(md.wrap_obj.reshape(-1)[:nw])
        assert rel_err(d.ten_length, md.ten_length) <= WRAP_POSE_TOL
        assert rel_err(d.wrap_xpos[:nw], md.wrap_xpos.reshape(-1, 3)[:nw]) <= WRAP_POSE_TOL
        wraps = np.array(md.ten_wrapnum) > 2
        inside = np.linalg.norm(pos[3] - pos[0]) < r
        for side, plain in ((0, 2), (1, 3)):
            if inside and wraps[side]:
                kinds["inside, one contact"] += 1
            elif wraps[side] and not wraps[plain]:
                kinds["side wraps, plain straight"] += 1
            elif wraps[plain] and not wraps[side]:
                kinds["plain wraps, side straight"] += 1
            elif wraps[side]:
                kinds["both wrap"] += 1
    assert min(kinds.values()) >= 100, kinds  # every case the side site decides, often


def test_side_sites_match_mujoco_in_forward_and_1000_steps():
    """Forward at seeded states (both side-site tendons wrap in some), then 1000 steps."""
    wrapped = _forward_matches_at_states(WRAPPING_SIDE, 1)
    assert np.all(wrapped[-3:-1] > 0), wrapped
    m, mj, _ = _pair(WRAPPING_SIDE, gravity="enable")
    d, md = js.make_data(m), mujoco.MjData(mj)
    _set(m, d, mj, md, m.qpos0 + 0.3, np.zeros(m.nv), np.zeros(0))
    for _ in range(1000):
        js.step(m, d)
        mujoco.mj_step(mj, md)
    assert rel_err(d.qpos, md.qpos) <= TRAJECTORY_TOL
    assert rel_err(d.qvel, md.qvel) <= TRAJECTORY_TOL


def test_tendon_over_a_cylinder_conserves_energy():
    """No damping, no gravity: the springs over the cylinder and sphere trade energy only."""
    m = js.load_string(WRAPPING.format(integrator="RK4", gravity="disable"))
    m.opt.timestep = 0.0005
    d = js.make_data(m)
    rng = np.random.default_rng(2)
    d.qpos[:] = 0.3 * rng.normal(size=m.nq)
    d.qvel[:] = rng.normal(size=m.nv)
    js.forward(m, d)
    e0 = d.energy.sum()
    potential = 0.0
    for _ in range(4000):
        js.step(m, d)
        potential = max(potential, d.energy[0])
    js.forward(m, d)
    assert potential > 0.1 * abs(e0)
    assert abs(d.energy.sum() - e0) <= WRAP_ENERGY_TOL * abs(e0)


BAD_ACTUATOR = """<mujoco><worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
<tendon><fixed name="t"><joint joint="j"/></fixed></tendon>
<actuator><motor name="m" tendon="nope"/></actuator></mujoco>"""
BAD_JOINT = """<mujoco><worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
<tendon><fixed name="t">
<joint joint="nope" coef="2"/></fixed></tendon></mujoco>"""
UNLIMITED = """<mujoco><worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
<tendon><fixed name="t"><joint joint="j"/></fixed></tendon>
<sensor><tendonlimitpos tendon="t"/></sensor></mujoco>"""
ONE_SITE = """<mujoco><worldbody><site name="a"/><site name="b" pos="1 0 0"/></worldbody>
<tendon><spatial name="s"><site site="a"/></spatial></tendon></mujoco>"""
SIDESITE = """<mujoco><worldbody><site name="a"/><site name="b" pos="1 0 0"/>
<geom name="g" type="sphere" size="0.1"/></worldbody>
<tendon><spatial name="s"><site site="b"/>
<geom geom="g" sidesite="nope"/><site site="b"/></spatial></tendon></mujoco>"""
WRAP_BOX = """<mujoco><worldbody><site name="a"/><site name="b" pos="1 0 0"/>
<geom name="g" type="box" size="0.1 0.1 0.1"/></worldbody>
<tendon><spatial name="s"><site site="a"/>
<geom geom="g"/><site site="b"/></spatial></tendon></mujoco>"""
BALL_JOINT = """<mujoco><worldbody><body><joint name="j" type="ball"/><geom size="0.1"/></body>
</worldbody><tendon><fixed name="t"><joint joint="j"/></fixed></tendon></mujoco>"""


@pytest.mark.parametrize("xml, words", [
    (BAD_ACTUATOR, ["<string>:3 <motor name='m'> tendon='nope'", "unknown tendon 'nope'"]),
    (BAD_JOINT, ["<string>:3 <joint> joint='nope' in tendon 't'", "unknown joint 'nope'"]),
    (BALL_JOINT, ["<string>:2 <joint>", "joint 'j'", "hinge or a slide"]),
    (UNLIMITED, ["<string>:3 <tendonlimitpos>", "limited tendon"]),
    (ONE_SITE, ["<string>:2 <spatial name='s'>", "at least two sites"]),
    (SIDESITE, ["<string>:4 <geom>", "unknown site 'nope'"]),
    (WRAP_BOX, ["<string>:4 <geom> geom='g'", "sphere or a cylinder", "box"]),
])
def test_bad_tendon_input_is_named(xml, words):
    with pytest.raises(ModelError) as e:
        js.load_string(xml)
    for w in words:
        assert w in str(e.value), str(e.value)
