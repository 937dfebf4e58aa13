"""Actuator transmissions against MuJoCo's mj_transmission.

joint and jointinparent (hinge, slide, ball, free), site with and without refsite
(translation and rotation gears, sites on one chain, on two branches, on the world),
slider-crank (inside and outside its reach): actuator_length, actuator_moment (dense) and
actuator_velocity of mj_forward at random states, and qacc under random controls; the
transmissions' bad input as ModelErrors naming the element.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError

# one forward: the same products in another order (rotations composed as MuJoCo does)
TOL = 1e-9

WORLD = """
<worldbody>
  <site name="w" pos=".1 .2 .3" euler="10 20 30"/>
  <body name="base" pos="0 0 1">
    <joint name="free" type="free"/>
    <geom type="box" size=".1 .08 .05" mass="2"/>
    <site name="sb" pos=".05 0 .05" euler="0 30 0"/>
    <body name="arm" pos=".1 0 0">
      <joint name="ball" type="ball"/>
      <geom type="capsule" size=".03" fromto="0 0 0 .3 0 0" mass=".5"/>
      <site name="s1" pos=".3 0 0" euler="20 0 40"/>
      <body name="fore" pos=".3 0 0">
        <joint name="hinge" axis="0 1 0"/>
        <geom type="capsule" size=".02" fromto="0 0 0 .25 0 0" mass=".3"/>
        <site name="s2" pos=".25 0 .02" euler="0 15 -10"/>
      </body>
    </body>
    <body name="leg" pos="-.1 0 0">
      <joint name="slide" type="slide" axis="0 0 1"/>
      <geom type="capsule" size=".03" fromto="0 0 0 0 0 -.3" mass=".4"/>
      <site name="s3" pos="0 .05 -.3" euler="5 5 5"/>
    </body>
  </body>
</worldbody>"""

ACTUATORS = """
<motor joint="ball" gear="1 2 3"/>
<motor jointinparent="ball" gear="1 2 3"/>
<motor joint="free" gear="1 2 3 .4 .5 .6"/>
<motor jointinparent="free" gear="1 2 3 .4 .5 .6"/>
<motor jointinparent="hinge" gear="2"/>
<motor jointinparent="slide" gear="-1.5"/>
<motor site="s2" gear="1 0 2 .3 0 .1"/>
<motor site="s2" refsite="s1" gear="1 -2 .5 0 0 0"/>
<motor site="s2" refsite="s1" gear="0 0 0 .3 .2 -1"/>
<motor site="s2" refsite="s3" gear="1 2 3 .3 .2 -1"/>
<motor site="s3" refsite="w" gear=".5 1 1 1 0 .2"/>
<motor site="s1" refsite="sb" gear="1 1 1 1 1 1"/>
<motor cranksite="s2" slidersite="s3" cranklength=".6" gear="2"/>
<motor cranksite="s2" slidersite="s1" cranklength=".05"/>
<position cranksite="s3" slidersite="sb" cranklength=".4" kp="5" kv=".3"/>
"""


def _xml(actuators=ACTUATORS):
    return f"<mujoco>{WORLD}<actuator>{actuators}</actuator></mujoco>"


def _load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load_string(xml)


def _dense_moment(mj, md):
    out = np.zeros((mj.nu, mj.nv))
    mujoco.mju_sparse2dense(out, md.actuator_moment, md.moment_rownnz, md.moment_rowadr,
                            md.moment_colind)
    return out


def test_transmissions_match_mujoco():
    xml = _xml()
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    np.testing.assert_array_equal(m.actuator_trntype, mj.actuator_trntype)
    np.testing.assert_array_equal(m.actuator_trnid, mj.actuator_trnid)
    np.testing.assert_allclose(m.actuator_cranklength, mj.actuator_cranklength, rtol=0, atol=0)
    md, d = mujoco.MjData(mj), js.Data(m)
    rng = np.random.default_rng(0)
    reach = np.zeros(2, dtype=bool)  # slider-cranks seen inside and outside their reach
    for _ in range(30):
        q = rng.normal(size=mj.nq) * 0.6
        q[3:7] /= np.linalg.norm(q[3:7])
        q[7:11] /= np.linalg.norm(q[7:11])
        v = rng.normal(size=mj.nv)
        u = rng.uniform(-1, 1, mj.nu)
        for x in (md, d):
            x.qpos[:], x.qvel[:], x.ctrl[:] = q, v, u
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        np.testing.assert_allclose(d.actuator_length, md.actuator_length, rtol=0, atol=TOL)
        np.testing.assert_allclose(d.actuator_moment, _dense_moment(mj, md), rtol=0, atol=TOL)
        np.testing.assert_allclose(d.actuator_velocity, md.actuator_velocity, rtol=0, atol=TOL)
        np.testing.assert_allclose(d.qfrc_actuator, md.qfrc_actuator, rtol=0, atol=TOL)
        np.testing.assert_allclose(d.qacc, md.qacc, rtol=0, atol=TOL * max(1, np.abs(
            md.qacc).max()))
        crank = mj.actuator_trntype == mujoco.mjtTrn.mjTRN_SLIDERCRANK
        # outside its reach a slider-crank's length is a·v with no square root
        xm = md.site_xmat[mj.actuator_trnid[crank, 1]]
        vec = md.site_xpos[mj.actuator_trnid[crank, 0]] - md.site_xpos[
            mj.actuator_trnid[crank, 1]]
        av = np.einsum("ij,ij->i", xm[:, [2, 5, 8]], vec)
        det = av ** 2 + mj.actuator_cranklength[crank] ** 2 - np.einsum("ij,ij->i", vec, vec)
        reach[0] |= np.any(det > 0)
        reach[1] |= np.any(det <= 0)
    assert reach.all()


@pytest.mark.parametrize("actuator, what", [
    ('<motor joint="hinge" refsite="s1"/>', "refsite='s1' can only be used with a site"),
    ('<motor site="s1" refsite="nope"/>', "unknown site 'nope'"),
    ('<motor cranksite="s1"/>', "needs slidersite"),
    ('<motor cranksite="s1" slidersite="s2"/>', "cranklength=0.0 must be positive"),
    ('<motor cranksite="s1" slidersite="s2" cranklength="-1"/>', "must be positive"),
    ('<motor site="s1" slidersite="s2"/>', "slidersite can only be used in a slider-crank"),
    ('<motor joint="hinge" cranklength="1"/>', "cranklength can only be used"),
    ('<motor jointinparent="nope"/>', "unknown joint 'nope'"),
])
def test_bad_transmissions_are_errors(actuator, what):
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(_xml(actuator))  # MuJoCo refuses them too
    with pytest.raises(ModelError, match=what) as err:
        _load(_xml(actuator))
    assert "line" in str(err.value) or "<string>" in str(err.value)
