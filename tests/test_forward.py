"""Forward dynamics and stepping against MuJoCo: passive forces, actuation, qacc, integrators.

MuJoCo is the oracle (DESIGN.md §5). Contacts and constraints are disabled in every model
given to MuJoCo (`<flag contact="disable" constraint="disable"/>`): jointspace's pipeline has
no constraint stage yet, so both libraries then compute the same smooth dynamics.
"""

import re
import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceWarning
from tests._models import random_state

FIELD_TOL = 1e-9  # forward fields, relative to max(1, |field|): same float64 sums reordered
TRAJ_TOL = 1e-8  # 1 s trajectories: round-off grows through the dynamics, 1e-14 per step
NSTATES = 10

# One model with every feature of the smooth pipeline: armature, damping, springs with
# springref on hinge, slide and ball joints, actuators of each kind (motor, position with
# kv, velocity with a force limit, general affine on a ball, motor on a free joint, site
# transmission, velocity servo on a standalone free body), ctrl limits.
FEATURES = """<mujoco model="features">
<option timestep="0.002" integrator="{integrator}">
  <flag contact="disable" constraint="disable" energy="enable"/>
</option>
<worldbody>
<body name="a" pos="0 0 1"><freejoint name="root"/>
 <geom type="capsule" size=".1 .2" pos=".1 0 0" quat="0.9 0.1 0.3 0.2"/>
 <geom type="box" size=".1 .2 .3" pos="0 .1 0"/>
 <body name="b" pos="0.3 0 0" quat="0.8 0.2 0.1 0.4">
  <joint name="h1" type="hinge" axis="0 1 1" pos="0.1 0 0" stiffness="3" springref="0.4"
         damping="0.7" armature="0.05"/>
  <joint name="s1" type="slide" axis="1 0 0" stiffness="20" springref="-0.1" damping="1.5"
         armature="0.2"/>
  <geom type="sphere" size=".1" pos="0 0 -.2"/>
  <body name="c" pos="0 0.3 0">
   <joint name="ball" type="ball" pos="0 0 .1" stiffness="2" damping="0.3" armature="0.01"/>
   <geom type="ellipsoid" size=".1 .2 .15"/>
   <site name="s" pos=".1 .2 .3" quat="0.7 0.1 0.7 0.1"/>
  </body>
 </body>
 <body name="e" pos="0 0 -0.3">
  <joint name="h2" type="hinge" axis="1 0 0" ref="0.3" stiffness="1.5" springref="0.5"/>
  <geom type="cylinder" size=".05 .2"/>
 </body>
</body>
<body name="f" pos="1 1 1"><freejoint name="f"/>
 <geom type="box" size=".1 .2 .3" pos="0.05 0.02 0.03"/>
</body>
</worldbody>
<actuator>
 <motor joint="h1" gear="2" ctrlrange="-1 1" ctrllimited="true"/>
 <position joint="s1" kp="30" kv="3"/>
 <velocity joint="h2" kv="4" forcerange="-0.5 0.5" forcelimited="true"/>
 <general joint="ball" gear="0.3 0.2 -0.4 0 0 0" gainprm="2" biasprm="0.1 -0.5 -0.2"
          biastype="affine"/>
 <motor joint="root" gear="1 2 3 0.1 0.2 0.3"/>
 <general site="s" gear="1 0.5 0.2 0.3 0.1 -0.2" gainprm="1.5" biasprm="0.2 0 -0.7"
          biastype="affine" ctrlrange="-2 2" ctrllimited="true"/>
 <velocity joint="f" kv="1.5" gear="0.2 0.1 0.3 1 0.5 0.2"/>
</actuator>
</mujoco>"""

INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")
FIELDS = ("qfrc_passive", "actuator_length", "actuator_velocity", "actuator_force",
          "qfrc_actuator", "qfrc_bias", "qfrc_smooth", "qacc_smooth", "qacc", "energy")


def _smooth_only(xml):
    """The document with contacts and constraints disabled and energy enabled, for MuJoCo."""
    flag = '<flag contact="disable" constraint="disable" energy="enable"/>'
    if "<flag" in xml:
        return xml
    m = re.search(r"<option\b[^>]*?/>", xml)
    if m:
        return xml[:m.start()] + m.group(0)[:-2] + ">" + flag + "</option>" + xml[m.end():]
    m = re.search(r"<option\b[^>]*>", xml)
    if m:
        return xml[:m.end()] + flag + xml[m.end():]
    m = re.search(r"<mujoco\b[^>]*>", xml)
    return xml[:m.end()] + "<option>" + flag + "</option>" + xml[m.end():]


MODELS = {
    "features": FEATURES.format(integrator="Euler"),
    "humanoid": _smooth_only(js.models.xml("humanoid")),
    "quadruped": _smooth_only(js.models.xml("quadruped")),
    "arm2": _smooth_only(js.models.xml("arm2")),
}


def _close(actual, desired, what, tol=FIELD_TOL):
    """Assert |actual - desired| <= tol · max(1, max |desired|)."""
    desired = np.asarray(desired)
    if desired.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(desired))))
    err = float(np.max(np.abs(np.asarray(actual) - desired)))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


def _load(xml):
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def _set_inputs(m, d, md, rng):
    """The same random state and inputs (ctrl beyond its range, forces) in both Data."""
    q, v, _ = random_state(m, rng)
    ctrl = 2.0 * rng.normal(size=m.nu)
    qfrc = rng.normal(size=m.nv)
    xfrc = rng.normal(size=(m.nbody, 6))
    for dd in (d, md):
        dd.qpos[:] = q
        dd.qvel[:] = v
        dd.ctrl[:] = ctrl
        dd.qfrc_applied[:] = qfrc
        dd.xfrc_applied[:] = xfrc


def _mj_moment(mm, md):
    out = np.zeros((mm.nu, mm.nv))
    mujoco.mju_sparse2dense(out, md.actuator_moment, md.moment_rownnz, md.moment_rowadr,
                            md.moment_colind)
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_forward_matches_mujoco(name):
    """Every field of the smooth pipeline equals mj_forward's at random states and inputs."""
    m, d, mm, md = _load(MODELS[name])
    rng = np.random.default_rng(0)
    for _ in range(NSTATES):
        _set_inputs(m, d, md, rng)
        mujoco.mj_forward(mm, md)
        js.forward(m, d)
        for f in FIELDS:
            _close(getattr(d, f), getattr(md, f), f"{name} {f}")
        _close(d.actuator_moment, _mj_moment(mm, md), f"{name} actuator_moment")


def test_forward_clamps_ctrl_and_force():
    """Clamping: ctrl to ctrlrange (d.ctrl untouched), force to forcerange; qfrc = momentᵀf."""
    m, d, _, _ = _load(MODELS["features"])
    d.ctrl[:] = 0.0
    d.ctrl[0] = 5.0  # motor on h1, ctrlrange [-1, 1], gear 2
    d.qvel[m.jnt_dofadr[m.joint("h2")]] = 10.0  # velocity servo, kv 4, forcerange ±0.5
    js.forward(m, d)
    assert d.ctrl[0] == 5.0
    assert d.actuator_force[0] == 1.0
    assert d.actuator_force[2] == -0.5
    assert d.actuator_moment[0, m.jnt_dofadr[m.joint("h1")]] == 2.0
    np.testing.assert_allclose(d.qfrc_actuator, d.actuator_moment.T @ d.actuator_force,
                               rtol=0, atol=1e-14)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_trajectory_matches_mujoco(integrator):
    """1 s of steps with each integrator follows mj_step (positions and velocities)."""
    xml = FEATURES.format(integrator=integrator)
    m, d, mm, md = _load(xml)
    rng = np.random.default_rng(1)
    q, v, _ = random_state(m, rng, scale=0.5)
    ctrl = rng.normal(size=m.nu)
    for dd in (d, md):
        dd.qpos[:] = q
        dd.qvel[:] = v
        dd.ctrl[:] = ctrl
    nstep = round(1.0 / mm.opt.timestep)
    for _ in range(nstep):
        js.step(m, d)
        mujoco.mj_step(mm, md)
    assert d.time == pytest.approx(md.time, abs=1e-12)
    _close(d.qpos, md.qpos, f"{integrator} qpos", TRAJ_TOL)
    _close(d.qvel, md.qvel, f"{integrator} qvel", TRAJ_TOL)
    _close(d.qacc, md.qacc, f"{integrator} qacc", TRAJ_TOL)


@pytest.mark.parametrize("integrator", ("Euler", "RK4", "implicitfast"))
def test_humanoid_trajectory_matches_mujoco(integrator):
    """The humanoid (27 dofs, damping, armature, 21 motors) for 1 s under random controls."""
    xml = MODELS["humanoid"].replace("<option ", f'<option integrator="{integrator}" ', 1)
    m, d, mm, md = _load(xml)
    assert m.opt.integrator == integrator
    rng = np.random.default_rng(2)
    q, v, _ = random_state(m, rng, scale=0.3)
    for dd in (d, md):
        dd.qpos[:] = q
        dd.qvel[:] = v
    nstep = round(1.0 / mm.opt.timestep)
    for k in range(nstep):
        if k % 50 == 0:
            ctrl = rng.uniform(-1, 1, m.nu)
            d.ctrl[:] = ctrl
            md.ctrl[:] = ctrl
        js.step(m, d)
        mujoco.mj_step(mm, md)
    _close(d.qpos, md.qpos, f"humanoid {integrator} qpos", TRAJ_TOL)
    _close(d.qvel, md.qvel, f"humanoid {integrator} qvel", TRAJ_TOL)


def test_implicit_includes_coriolis_derivative():
    """The implicit and implicitfast steps differ on a spinning chain; each matches MuJoCo's."""
    xml = """<mujoco><option timestep="0.01" integrator="{}" gravity="0 0 0">
      <flag contact="disable" constraint="disable"/></option><worldbody>
      <body><joint type="ball" damping="0.1"/><geom type="box" size=".3 .1 .05" pos=".3 0 0"/>
       <body pos=".6 0 0"><joint type="hinge" axis="0 1 1"/>
        <geom type="capsule" size=".05" fromto="0 0 0 .4 .1 0"/></body></body>
      </worldbody></mujoco>"""
    final = {}
    for integrator in ("implicit", "implicitfast"):
        m, d, mm, md = _load(xml.format(integrator))
        for dd in (d, md):
            dd.qvel[:] = [8.0, -5.0, 6.0, 12.0]
        js.step(m, d, 100)
        mujoco.mj_step(mm, md, 100)
        _close(d.qvel, md.qvel, f"{integrator} qvel", TRAJ_TOL)
        final[integrator] = d.qvel.copy()
    assert np.abs(final["implicit"] - final["implicitfast"]).max() > 1e-3


def test_step_nstep_is_one_call_of_many_steps():
    """step(m, d, n) gives exactly the state of n calls of step(m, d)."""
    m, d1, _, _ = _load(FEATURES.format(integrator="RK4"))
    d2 = js.make_data(m)
    rng = np.random.default_rng(3)
    q, v, _ = random_state(m, rng)
    for dd in (d1, d2):
        dd.qpos[:] = q
        dd.qvel[:] = v
    js.step(m, d1, 25)
    for _ in range(25):
        js.step(m, d2)
    np.testing.assert_array_equal(d1.qpos, d2.qpos)
    np.testing.assert_array_equal(d1.qvel, d2.qvel)
    assert d1.time == d2.time == pytest.approx(25 * m.opt.timestep)


def test_integrate_and_diff_pos_match_mujoco():
    """integrate_pos/diff_pos equal mj_integratePos/mj_differentiatePos and invert each other."""
    m, _, mm, _ = _load(MODELS["features"])
    rng = np.random.default_rng(4)
    for _ in range(NSTATES):
        q, v, _ = random_state(m, rng)
        dt = rng.uniform(-0.5, 0.5)
        q2 = js.integrate_pos(m, q, v, dt)
        ref = q.copy()
        mujoco.mj_integratePos(mm, ref, v, dt)
        _close(q2, ref, "integrate_pos")
        vel = js.diff_pos(m, q, q2, dt)
        ref_v = np.zeros(m.nv)
        mujoco.mj_differentiatePos(mm, ref_v, dt, q, q2)
        _close(vel, ref_v, "diff_pos")
        _close(vel, v, "diff_pos(integrate_pos)")
        _close(js.integrate_pos(m, q, vel, dt), q2, "integrate_pos(diff_pos)")


def test_nan_velocity_warns_and_resets():
    """A NaN in qvel: JointspaceWarning naming the dof's joint, reset to qpos0, counted."""
    m, d, _, _ = _load(MODELS["features"])
    rng = np.random.default_rng(5)
    d.qpos[:], d.qvel[:], _ = random_state(m, rng)
    d.ctrl[:] = 0.5
    bad = int(m.jnt_dofadr[m.joint("s1")])
    d.qvel[bad] = np.nan
    with pytest.warns(JointspaceWarning, match=rf"qvel\[{bad}\] \(joint 's1'\)"):
        js.step(m, d)
    assert d.warning[1, 0] == 1 and d.warning[1, 1] == bad
    # reset, then one clean step from qpos0 at rest
    assert d.time == pytest.approx(m.opt.timestep)
    np.testing.assert_array_equal(d.ctrl, 0.0)
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))
    d0 = js.make_data(m)
    js.step(m, d0)
    np.testing.assert_array_equal(d.qpos, d0.qpos)


def test_nan_position_and_acceleration_warn():
    """Bad qpos and a force that makes qacc infinite are reported and reset, like MuJoCo."""
    m, d, _, _ = _load(MODELS["features"])
    bad = int(m.jnt_qposadr[m.joint("ball")]) + 2
    d.qpos[bad] = np.inf
    with pytest.warns(JointspaceWarning, match=rf"qpos\[{bad}\] \(joint 'ball'\)"):
        js.step(m, d)
    assert d.warning[0, 0] == 1
    d.qfrc_applied[3] = 1e308
    d.qfrc_applied[4] = 1e308
    with pytest.warns(JointspaceWarning, match=r"qacc\["):
        js.step(m, d)
    assert d.warning[2, 0] == 1
    np.testing.assert_array_equal(d.qfrc_applied, 0.0)
    assert np.all(np.isfinite(d.qacc))


def test_state_made_bad_by_the_last_step_is_reset():
    """A position pushed beyond 1e10 by the final integration is reset before returning."""
    m = js.load_string("""<mujoco><option timestep="1" gravity="0 0 0"/><worldbody><body>
        <joint name="x" type="slide" axis="1 0 0"/><geom type="sphere" size=".1" mass="1"/>
        </body></worldbody></mujoco>""")
    d = js.make_data(m)
    d.qvel[0] = 9e9
    d.qfrc_applied[0] = 9e9
    with pytest.warns(JointspaceWarning, match=r"step: qpos\[0\] \(joint 'x'\)"):
        js.step(m, d)
    assert d.warning[0, 0] == 1
    assert d.qvel[0] == 0.0 and d.qpos[0] == 0.0 and d.time == 0.0


def test_forward_warns_on_bad_state():
    """A bad state in forward is not reset, but the warning says which qacc is not finite."""
    m, d, _, _ = _load(MODELS["features"])
    d.qvel[0] = np.nan
    with pytest.warns(JointspaceWarning, match=r"forward: qacc\["):
        js.forward(m, d)
    assert np.isnan(d.qvel[0])


def test_singular_inertia_is_reported():
    """Two identical slides make M singular: forward says which dof, step resets."""
    m = js.load_string("""<mujoco><worldbody><body>
        <joint name="a" type="slide" axis="1 0 0"/><joint name="b" type="slide" axis="1 0 0"/>
        <geom type="sphere" size=".1"/></body></worldbody></mujoco>""")
    d = js.make_data(m)
    with pytest.warns(JointspaceWarning, match=r"M is singular.*dof 0 \(joint 'a'\)"):
        js.forward(m, d)
    assert np.isnan(d.qacc[0])
    # qacc is NaN, the reset state is singular too: the last check resets the NaN qpos
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        js.step(m, d)
    messages = [str(w.message) for w in caught if w.category is JointspaceWarning]
    assert any(re.match(r"step: qacc\[0\] \(joint 'a'\)", s) for s in messages)
    assert d.warning[2, 0] == 1 and d.warning[0, 0] == 1
    assert np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))


def test_bad_arguments_are_named():
    """Wrong shapes, a wrong nstep and a Data of another model get clear errors."""
    m, d, _, _ = _load(MODELS["features"])
    with pytest.raises(ValueError, match="argument qvel must have shape"):
        js.integrate_pos(m, m.qpos0, np.zeros(m.nv + 1), 0.1)
    with pytest.raises(ValueError, match="argument q2 must have shape"):
        js.diff_pos(m, m.qpos0, np.zeros(3))
    with pytest.raises(ValueError, match="dt must be non-zero"):
        js.diff_pos(m, m.qpos0, m.qpos0, 0.0)
    for nstep in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="nstep must be a positive integer"):
            js.step(m, d, nstep)
    other = js.make_data(js.load_string(MODELS["arm2"]))
    with pytest.raises(ValueError, match="different model"):
        js.step(m, other)
    with pytest.raises(TypeError, match="must be a jointspace Model"):
        js.forward(d, m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        js.step(m, d)
