"""Adhesion actuators (body transmission) against MuJoCo 4.0.

A pad on a two-joint arm presses on a wall; a free box rests on the floor. The adhesion
actuators' moment is minus the mean of the normal Jacobians of their body's contacts (the
contact rows' normal directions; in the margin's gap, where a contact has no rows, the
normal component of the relative Jacobian), their length 0.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from tests._util import rel_err

# mj_forward's smooth quantities: rounding, relative to max(1, |x|)
SMOOTH_TOL = 1e-9
# qacc through the constraint solver: both stop at their tolerance on the cost
CONSTRAINED_TOL = 1e-6
# 1000 steps with contacts (Newton): the solver tolerance compounds along the trajectory
TRAJECTORY_TOL = 1e-6

ADHESION = """<mujoco><option integrator="{integrator}" cone="{cone}"/>
<default><geom condim="{condim}"/></default>
<worldbody>
<geom name="wall" type="plane" pos="0.3 0 0" zaxis="-1 0 0" size="1 1 .1"/>
<geom name="floor" type="plane" size="1 1 .1"/>
<body name="arm" pos="0 0 .5"><joint name="sh" type="hinge" axis="0 1 0" damping=".5"/>
<geom type="capsule" fromto="0 0 0 .15 0 0" size=".03"/>
<body name="pad" pos=".15 0 0"><joint name="sl" type="slide" axis="1 0 0" damping="1"/>
<geom name="p1" type="box" size=".05 .05 .05" pos=".05 0 .02" margin=".02" gap=".01"/>
<geom name="p2" type="sphere" size=".04" pos=".06 0 -.04"/></body></body>
<body name="box" pos="-.3 0 .1"><freejoint/><geom type="box" size=".1 .1 .1" margin=".01"/>
</body>
</worldbody>
<actuator><adhesion body="pad" gain="5" ctrlrange="0 2"/>
<adhesion body="box" gain="3" ctrlrange="0 1"/><motor joint="sl"/></actuator></mujoco>"""


def _pair(integrator="Euler", cone="pyramidal", condim=3):
    xml = ADHESION.format(integrator=integrator, cone=cone, condim=condim)
    return js.load_string(xml), mujoco.MjModel.from_xml_string(xml)


def _states(m, mj, n, seed):
    """Seeded states, then states along a MuJoCo trajectory pressing the pad on the wall.

    The trajectory's states have contacts in the gap (exclude = 1).
    """
    rng = np.random.default_rng(seed)
    md = mujoco.MjData(mj)
    for _ in range(n):
        md.qpos[:] = m.qpos0 + 0.3 * rng.normal(size=m.nq)
        mujoco.mj_normalizeQuat(mj, md.qpos)
        yield md.qpos.copy(), rng.normal(size=m.nv), rng.uniform(0, 2, size=m.nu)
    mujoco.mj_resetData(mj, md)
    md.ctrl[:] = (1.0, 1.0, 3.0)
    for k in range(600):
        mujoco.mj_step(mj, md)
        if k % 100 == 99:
            yield md.qpos.copy(), md.qvel.copy(), md.ctrl.copy()


@pytest.mark.parametrize("cone, condim", [("pyramidal", 1), ("pyramidal", 3),
                                          ("pyramidal", 4), ("elliptic", 3),
                                          ("elliptic", 6)])
def test_adhesion_matches_mujoco(cone, condim):
    """actuator_length, actuator_moment, forces and qacc; some states in the gap."""
    m, mj = _pair(cone=cone, condim=condim)
    np.testing.assert_array_equal(m.actuator_trntype, mj.actuator_trntype)
    np.testing.assert_array_equal(m.actuator_trnid, mj.actuator_trnid)
    d, md = js.make_data(m), mujoco.MjData(mj)
    moment = np.zeros((mj.nu, mj.nv))
    gap = touching = 0
    for q, v, u in _states(m, mj, 6, 3):
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
        js.forward(m, d)
        mujoco.mj_forward(mj, md)
        assert d.ncon[0] == md.ncon
        gap += int(np.sum(md.contact.exclude == 1))
        touching += int(np.any(md.actuator_moment != 0))
        mujoco.mju_sparse2dense(moment, md.actuator_moment, md.moment_rownnz,
                                md.moment_rowadr, md.moment_colind)
        assert rel_err(d.actuator_moment, moment) <= SMOOTH_TOL
        for name in ("actuator_length", "actuator_velocity", "actuator_force",
                     "qfrc_actuator"):
            assert rel_err(getattr(d, name), getattr(md, name)) <= SMOOTH_TOL, name
        assert rel_err(d.qacc, md.qacc) <= CONSTRAINED_TOL
    assert gap > 0 and touching > 0


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_1000_steps_match_mj_step(integrator):
    """The pad pulled onto the wall and held there, the box onto the floor."""
    m, mj = _pair(integrator=integrator)
    d, md = js.make_data(m), mujoco.MjData(mj)
    d.ctrl[:] = md.ctrl[:] = (1.5, 1.0, 2.0)
    for _ in range(1000):
        js.step(m, d)
        mujoco.mj_step(mj, md)
    assert rel_err(d.qpos, md.qpos) <= TRAJECTORY_TOL
    assert rel_err(d.qvel, md.qvel) <= TRAJECTORY_TOL
    assert md.ncon > 0 and np.any(md.actuator_moment != 0)


def test_adhesion_without_contacts_has_no_moment():
    """Contacts disabled: no contact, zero moment, zero force on the joints."""
    m, _ = _pair()
    m.opt_disableflags[0] |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    d = js.make_data(m)
    d.ctrl[:] = (2.0, 1.0, 0.0)
    js.forward(m, d)
    assert d.ncon[0] == 0
    assert not np.any(d.actuator_moment[:2])
    assert d.actuator_force[0] == 10.0 and not np.any(d.qfrc_actuator)
