"""Actuator shortcuts and their default classes, compiled as MuJoCo compiles them.

Each case is a default-class tree and one actuator element; MuJoCo's compiled
actuator_gainprm/biasprm/dynprm, types, ctrl/force ranges and gear are the oracle. The cases
cover every shortcut (motor, position with kp/kv/dampratio/timeconst/inheritrange, velocity,
intvelocity, damper, cylinder, muscle, adhesion, general) set directly, in the main class,
in nested classes and through childclass, overridden on the element, and mixed (a class
whose last actuator default is another shortcut), with their activation fields (actadr,
actnum, actlimited, actrange, actearly), lengthrange (given, or found by simulation) and
acc0. Adhesion must be refused with a ModelError that names the element and the cause.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError

# compile-time arithmetic (a sqrt for dampratio, a mean for inheritrange): rounding only
TOL = 1e-9

J = 'joint="j"'
# (the <default> body, the <actuator> body)
CASES = [
    ('<position kp="10"/>', f'<position {J}/>'),
    ('<position kp="10"/>', f'<position {J} kp="3"/>'),
    ('<position kp="10" kv="2"/>', f'<position {J}/>'),
    ('<position kp="10" kv="2"/>', f'<position {J} kp="4"/>'),
    ('<motor gear="2" ctrlrange="-1 1"/>', f'<position {J} kp="3"/>'),
    ('<general gainprm="5 1" biasprm="1 2 3" dynprm="0.3"/>', f'<position {J}/>'),
    ('<general gainprm="5 1" biasprm="1 2 -3" dynprm="0.3"/>', f'<position {J}/>'),
    ('<general gainprm="5 1" biasprm="1 2 3" dynprm="0.3"/>', f'<motor {J}/>'),
    ('<general gainprm="5 1" biasprm="1 2 3" dynprm="0.3"/>', f'<velocity {J}/>'),
    ('<general gainprm="5 1" biasprm="1 -5 -3" biastype="affine"/>', f'<general {J}/>'),
    ('<general gainprm="5 1" biasprm="1 -5 -3" biastype="affine"/>',
     f'<general {J} gainprm="2"/>'),
    ('<general gaintype="affine" gainprm="1 2 3"/>', f'<general {J}/>'),
    ('<position kp="10" kv="2"/>', f'<velocity {J}/>'),
    ('<position kp="10" kv="2"/>', f'<motor {J}/>'),
    ('<position kp="10" kv="2"/>', f'<general {J}/>'),
    ('<velocity kv="7"/>', f'<position {J}/>'),
    ('<velocity kv="7"/>', f'<velocity {J}/>'),
    ('<velocity kv="7"/>', f'<general {J}/>'),
    ('<motor/>', f'<velocity {J}/>'),
    ('<position kp="10" dampratio="1"/>', f'<position {J}/>'),
    ('<position kp="10" dampratio="1"/>', f'<position {J} kv="1"/>'),
    ('<position kp="10"/>', f'<position {J} dampratio="0.5"/>'),
    ('<position kp="10"/>', '<position site="s" gear="0 1 0 0 0 0" dampratio="0.7"/>'),
    ('<position kp="10" dampratio="1" gear="3"/>', '<position joint="j2"/>'),
    ('<position kp="10" timeconst="0.1"/>', f'<position {J} timeconst="0"/>'),
    ('<default class="a"><position kp="4"/></default><position kp="10"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><velocity kv="4"/></default><position kp="10" kv="3"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><default class="b"><position kv="1"/></default></default>'
     '<position kp="10"/>', f'<position {J} class="b"/>'),
    ('<default class="a"><general ctrlrange="-2 2" forcerange="-5 5"/></default>'
     '<position kp="10"/>', f'<position {J} class="a"/>'),
    ('<position kp="10" inheritrange="0.5"/>', f'<position {J}/>'),
    ('<motor ctrlrange="-1 1"/>', f'<position {J} kp="10" inheritrange="0.5"/>'),
    ('<position kp="10" ctrlrange="-1 1"/>', f'<position {J} forcerange="-3 3"/>'),
    ('<damper kv="3" ctrlrange="0 1"/>', f'<damper {J}/>'),
    ('<damper kv="3" ctrlrange="0 1"/>', f'<damper {J} kv="1"/>'),
    ('<damper kv="3" ctrlrange="0 1"/>', f'<position {J}/>'),
    ('<damper kv="3" ctrlrange="0 1"/>', f'<general {J}/>'),
    ('<damper kv="2" ctrlrange="0 1"/><position kp="5"/>', f'<damper {J}/>'),
    ('<intvelocity kp="3"/>', f'<position {J}/>'),
    ('<cylinder area="2"/>', f'<position {J}/>'),
    ('<cylinder area="2" bias="1 2 3"/>', f'<velocity {J}/>'),
    ('<muscle force="10"/>', f'<position {J}/>'),
    ('<muscle force="10"/>', f'<motor {J}/>'),
    ('<adhesion gain="3" ctrlrange="0 1"/>', f'<position {J}/>'),
    ('<adhesion gain="3" ctrlrange="0 1"/>', f'<motor {J}/>'),
    ('<motor ctrlrange="-1 1"/>', f'<motor {J} ctrllimited="false"/>'),
    ('<general forcelimited="true" forcerange="-1 1"/>', f'<velocity {J} kv="2"/>'),
    ('', f'<position {J} kp="5" kv="2" gear="3"/>'),
    ('', f'<velocity {J} kv="5" ctrlrange="-1 1"/>'),
    ('', f'<damper {J} kv="5" ctrlrange="0 1"/>'),
    ('<general gainprm="3"/><position kp="10"/>', f'<velocity {J}/>'),
    ('<position kp="10"/><general gainprm="3"/>', f'<position {J}/>'),
    ('<position kp="10" kv="2"/><general gainprm="3"/>', f'<position {J}/>'),
    ('<position kp="10" kv="1"/><velocity kv="3"/>', f'<general {J}/>'),
    ('<velocity kv="3"/><position kp="10" kv="1"/>', f'<general {J}/>'),
    ('<velocity kv="3"/><position kp="10" kv="1"/>', f'<velocity {J}/>'),
    ('<position kp="10" kv="1"/><velocity kv="3"/>', f'<position {J}/>'),
    ('<position kp="10" kv="1" ctrlrange="-1 1"/><velocity kv="3" gear="2"/>',
     f'<position {J}/>'),
    ('<general gainprm="3 1" biasprm="0 -3 -1" biastype="affine"/><velocity kv="3"/>',
     f'<position {J}/>'),
    ('<general gainprm="3 1" biasprm="0 -3 -1" biastype="affine"/><velocity kv="3"/>',
     f'<general {J}/>'),
    ('<default class="a"><general gainprm="7"/></default><position kp="10" kv="3"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><motor/></default><position kp="10" kv="3"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><position kv="5"/></default><velocity kv="4"/>',
     f'<velocity {J} class="a"/>'),
    ('<position kp="10" kv="1"/><motor/>', f'<position {J}/>'),
    ('<position kp="10" kv="1"/><motor/>', f'<general {J}/>'),
    ('<default class="a"><motor gear="2"/></default><position kp="10" kv="3"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><motor gear="2"/></default><position kp="10" kv="3"/>',
     f'<general {J} class="a"/>'),
    ('<default class="a"><default class="b"><velocity kv="2"/></default><position kp="4"/>'
     '</default><position kp="10" kv="3"/>', f'<position {J} class="b"/>'),
    ('<default class="a"><default class="b"><velocity kv="2"/></default><motor/></default>'
     '<position kp="10" kv="3"/>', f'<position {J} class="b"/>'),
    ('<default class="a"><default class="b"><position kv="2"/></default><motor/></default>'
     '<position kp="10" kv="3"/>', f'<position {J} class="b"/>'),
    ('<default class="a"><default class="b"><general gainprm="6"/></default><motor/>'
     '</default><position kp="10" kv="3"/>', f'<position {J} class="b"/>'),
    ('<default class="a"><default class="b"/><motor/></default><position kp="10" kv="3"/>',
     f'<position {J} class="b"/>'),
    ('<default class="a"><motor/><position kv="1"/></default><position kp="10" kv="3"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><position kv="1"/><motor/></default><position kp="10" kv="3"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><velocity kv="2"/></default>'
     '<general gainprm="5" biasprm="0 -5 -1" biastype="affine"/>',
     f'<position {J} class="a"/>'),
    ('<default class="a"><velocity kv="2"/></default>'
     '<general gainprm="5" biasprm="0 -5 -1" biastype="affine"/>',
     f'<general {J} class="a"/>'),
    # childclass: a body's childclass does not reach the actuators (they use "main")
    ('<default class="a"><position kp="4"/></default><position kp="10"/>', f'<position {J}/>'),
]

# activation dynamics (act state) and muscles
CASES += [
    ('<position kp="10" timeconst="0.1"/>', f'<position {J}/>'),
    ('<position kp="10" timeconst="0.1"/>', f'<general {J}/>'),
    ('', f'<position {J} kp="5" timeconst="0.2"/>'),
    ('', f'<intvelocity {J} kp="5" actrange="-1 1"/>'),
    ('<intvelocity kp="3" actrange="-1 1"/>', f'<intvelocity {J} kv="2"/>'),
    ('<intvelocity kp="3"/>', f'<general {J}/>'),
    ('', f'<intvelocity {J} kp="3" inheritrange="0.8"/>'),
    ('<intvelocity kp="2" inheritrange="0.5"/>', f'<intvelocity {J}/>'),
    ('', f'<cylinder {J} area="2"/>'),
    ('', f'<cylinder {J} diameter="0.5" timeconst="0.3" bias="1 2 3"/>'),
    ('<cylinder/>', f'<general {J}/>'),
    ('<cylinder timeconst="0.5"/>', f'<cylinder {J} area="3"/>'),
    ('', f'<general {J} dyntype="integrator" actlimited="true" actrange="-2 3"/>'),
    ('<general dyntype="filterexact" dynprm="0.3" actearly="true"/>', f'<general {J}/>'),
    ('<general dyntype="filter" actrange="0 1"/>', f'<general {J} dynprm="0.2"/>'),
    ('', f'<muscle {J} lengthrange="-1 1"/>'),
    ('<muscle force="10"/>', f'<muscle {J} lengthrange="-1 1"/>'),
    ('', f'<muscle {J} lengthrange="-1 1" timeconst="0.02 0.05" tausmooth="0.1" '
         f'range="0.5 1.2" scale="100" lmin=".4" lmax="1.7" vmax="2" fpmax="1.5" '
         f'fvmax="1.3"/>'),
    ('<muscle range="0.6 1.1"/>', f'<muscle {J} force="5" lengthrange="-1 1"/>'),
    ('<default class="a"><muscle timeconst="0.02 0.06"/></default>'
     '<muscle scale="300" fvmax="1.4"/>', f'<muscle {J} class="a" lengthrange="-1 1"/>'),
    ('<muscle lmin="0.3"/>', f'<general {J} lengthrange="-1 1"/>'),
    ('', f'<general {J} gaintype="muscle" biastype="muscle" lengthrange="-0.5 1" '
         f'gainprm="0.7 1.1 20 200 0.5 1.6 1.5 1.3 1.2" '
         f'biasprm="0.7 1.1 20 200 0.5 1.6 1.5 1.3 1.2"/>'),
]

# muscles without lengthrange: found by MuJoCo's compiler simulation (mj_setLengthRange)
CASES += [
    ('', f'<muscle {J}/>'),
    ('<muscle/>', f'<general {J}/>'),
]

# actuator damping and armature (MuJoCo 4), directly and through classes, entry by entry
CASES += [
    ('', f'<motor {J} armature="0.1" damping="0.3 0.2 0.1"/>'),
    ('<motor damping="1 2 3" armature="0.2"/>', f'<motor {J} damping="4"/>'),
    ('<position kp="5" damping="0 1"/>', f'<position {J} armature="0.5" gear="2"/>'),
    ('<position kp="5" dampratio="1"/>', f'<position {J} armature="0.5" gear="2"/>'),
]

# MuJoCo loads these; jointspace refuses them with a ModelError naming the cause
REFUSED = [
    ('', f'<motor {J} armature="-0.1"/>', "armature=-0.1 is negative"),
    ('<motor damping="1 -2"/>', f'<motor {J}/>', "has a negative value"),
]

# the body transmission of adhesion actuators: their parameters and acc0 (0: no contacts
# at qpos0), directly and through a default class
CASES += [
    ('', '<adhesion body="b" gain="2" ctrlrange="0 1"/>'),
    ('<adhesion gain="3" ctrlrange="0 2" forcerange="0 4"/>', '<adhesion body="b"/>'),
]

_DYN = ("none", "integrator", "filter", "filterexact", "muscle")


def _doc(default, actuator):
    return f"""<mujoco><compiler autolimits="true"/><default>{default}</default><worldbody>
<body name="b" childclass="main"><joint name="j" type="hinge" range="-60 30" axis="0 1 0"/>
<geom size=".1" mass="1"/>
<body pos="0 0 -.3"><joint name="j2" type="slide" axis="1 0 0"/>
<geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/><site name="s" pos=".1 0 0"/>
</body></body></worldbody><actuator>{actuator}</actuator></mujoco>"""


def _load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load_string(xml)


@pytest.mark.parametrize("default, actuator", CASES)
def test_actuator_parameters_match_mujoco(default, actuator):
    xml = _doc(default, actuator)
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    for name in ("gainprm", "biasprm", "dynprm", "ctrlrange", "forcerange", "gear"):
        np.testing.assert_allclose(getattr(m, "actuator_" + name), getattr(mj, "actuator_" + name),
                                   rtol=0, atol=TOL, err_msg=name)
    for name in ("actrange", "lengthrange", "damping", "dampingpoly", "armature"):
        np.testing.assert_allclose(getattr(m, "actuator_" + name), getattr(mj, "actuator_" + name),
                                   rtol=0, atol=TOL, err_msg=name)
    # acc0: a dense solve of M at qpos0 against MuJoCo's sparse factorization
    np.testing.assert_allclose(m.actuator_acc0, mj.actuator_acc0, rtol=1e-12, atol=0)
    assert m.na == mj.na
    for name in ("dyntype", "gaintype", "biastype", "ctrllimited", "forcelimited", "trntype",
                 "actadr", "actnum", "actlimited", "actearly", "group"):
        np.testing.assert_array_equal(getattr(m, "actuator_" + name),
                                      getattr(mj, "actuator_" + name), err_msg=name)


@pytest.mark.parametrize("default, actuator, cause", REFUSED)
def test_values_mujoco_loads_are_refused(default, actuator, cause):
    xml = _doc(default, actuator)
    mujoco.MjModel.from_xml_string(xml)  # a valid model for MuJoCo
    with pytest.raises(ModelError, match=cause) as err:
        _load(xml)
    assert "<string>:" in str(err.value) and "<" in str(err.value)


@pytest.mark.parametrize("bad, what", [
    ('<position joint="j" kp="1" dampratio="-1"/>', "dampratio=-1.0 is negative"),
    ('<position joint="j" kp="1" kv="1" dampratio="1"/>', "kv or dampratio, not both"),
    ('<damper joint="j" kv="1" ctrlrange="-1 1"/>', "must not be negative"),
    ('<position joint="j" kp="1" inheritrange="1" ctrlrange="-1 1"/>', "not both"),
])
def test_bad_shortcut_values_are_errors(bad, what):
    with pytest.raises(ModelError, match=what):
        _load(_doc("", bad))
