"""Embedded models: robots and mechanisms that need no file from the user.

Each model is an MJCF document shipped with the package (fixed models, as .xml files next to
this module) or generated from a template (parametric models). `xml(name, **kw)` returns the
document, so the same text can be handed to MuJoCo; `load(name, **kw)` and the per-model
functions return the compiled jointspace `Model`.

    import jointspace as js
    m = js.models.humanoid()
    m = js.models.load("arm2", l1=0.5, gravity=False)
    text = js.models.xml("chain", n=10)

| name           | what it is                                                        | nq  | nv  |
|----------------|-------------------------------------------------------------------|-----|-----|
| arm2           | the slides' 2-link planar arm (point masses or thin rods)         | 2   | 2   |
| chain          | n-link hinge chain of capsules, gravity off (default n = 30)      | n   | n   |
| pendulum       | n-link planar pendulum hanging under gravity (default n = 1)      | n   | n   |
| humanoid       | 27-dof humanoid (free joint + 21 hinges, 21 motors) on a floor    | 28  | 27  |
| quadruped      | floating-base quadruped, 12 hinges with position servos           | 19  | 18  |
| arm_box        | 7-dof arm with a 2-finger gripper, a table, a free box on it      | 16  | 15  |
| arm7           | 7-dof torque-driven arm without contacts (control examples)      | 7   | 7   |
| hinge_friction | ICRA 2014 Fig. 1 left: one hinge, dry friction, ground contact    | 1   | 1   |
| painleve       | Painlevé's problem: a tilted rod with friction on a table         | 7   | 6   |
"""

from __future__ import annotations

import builtins
import difflib
import inspect
import math
from importlib import resources

from jointspace.errors import ModelError
from jointspace.models._generate import (
    ARM2_LINKS,
    POINT_INERTIA,
    arm2_mass_matrix,
    arm2_xml,
    chain_xml,
    painleve_coefficient,
    painleve_xml,
)


def _read(filename):
    return resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")


def _humanoid_xml():
    return _read("humanoid.xml")


def _quadruped_xml():
    return _read("quadruped.xml")


def _arm_box_xml():
    return _read("arm_box.xml")


def _arm7_xml():
    return _read("arm7.xml")


def _hinge_friction_xml():
    return _read("hinge_friction.xml")


def _pendulum_xml(n=1, link_length=0.5, radius=0.02, damping=0.0):
    return chain_xml(n=n, link_length=link_length, radius=radius, axes="y", gravity=True,
                     damping=damping, name="pendulum")


# name -> (MJCF text function, one-line description)
_REGISTRY = {
    "arm2": (arm2_xml, "the slides' 2-link planar arm in the vertical x-z plane "
                       "(point masses or thin rods)"),
    "chain": (chain_xml, "serial chain of n capsule links on hinges, gravity off "
                         "(default n = 30, the slides' speed-table size)"),
    "pendulum": (_pendulum_xml, "n-link planar pendulum of capsules hanging under gravity"),
    "humanoid": (_humanoid_xml, "27-dof humanoid (free joint + 21 hinges, 21 motors) "
                                "on a floor, after MuJoCo's classic humanoid"),
    "quadruped": (_quadruped_xml, "floating-base quadruped, 12 hinges with position servos, "
                                  "standing on straight legs"),
    "arm_box": (_arm_box_xml, "7-dof arm with a two-finger gripper, a table and a free box "
                              "on it"),
    "arm7": (_arm7_xml, "7-dof arm on torque motors, no contacts, for control (KUKA iiwa-like "
                        "layout)"),
    "hinge_friction": (_hinge_friction_xml, "one hinge with dry friction whose link rests on "
                                            "the ground (ICRA 2014 Fig. 1 left)"),
    "painleve": (painleve_xml, "Painleve's problem: a tilted rod with friction mu = 2 on a "
                               "table"),
}


def _lookup(name):
    if not isinstance(name, str) or name not in _REGISTRY:
        close = difflib.get_close_matches(str(name), _REGISTRY, n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        raise ModelError(f"jointspace.models: no embedded model named {name!r}; {hint}"
                         f"the models are: {', '.join(_REGISTRY)}")
    return _REGISTRY[name][0]


def list():  # noqa: A001 - the public name asked for; builtins.list is used inside
    """Names and one-line descriptions of the embedded models.

    Returns:
        A list of (name, description) tuples, in a fixed order.
    """
    return builtins.list((name, desc) for name, (_, desc) in _REGISTRY.items())


def xml(name, **kw):
    """MJCF text of an embedded model.

    Args:
        name: one of the names of `list()`.
        **kw: the model's parameters (see the model's function, e.g. `arm2`).

    Returns:
        The MJCF document as a string, loadable by MuJoCo and by jointspace.

    Raises:
        ModelError: unknown name, unknown parameter, or a parameter out of range.
    """
    fn = _lookup(name)
    try:
        inspect.signature(fn).bind(**kw)
    except TypeError:
        params = builtins.list(inspect.signature(fn).parameters)
        allowed = ", ".join(params) if params else "none"
        bad = sorted(set(kw) - set(params))
        raise ModelError(f"jointspace.models.{name}: unknown parameter(s) {bad}; the "
                         f"parameters are: {allowed}") from None
    return fn(**kw)


def load(name, **kw):
    """Compile an embedded model into a jointspace `Model`.

    Args:
        name: one of the names of `list()`; unknown names raise `ModelError` with the
            closest names.
        **kw: the model's parameters (see the model's function, e.g. `arm2`).

    Returns:
        The compiled `Model`.
    """
    text = xml(name, **kw)
    from jointspace.io.mjcf import load_mjcf_string

    return load_mjcf_string(text, filename=f"jointspace.models.{name}.xml")


def arm2(l1=1.0, l2=1.0, m1=1.0, m2=1.0, gravity=True, link="point"):
    """The 2-link planar arm of Todorov's slides.

    Two hinges about -y at the world origin and at the elbow, so the arm moves in the x-z
    plane: elbow (x1, x2) = l1 (cos q1, sin q1), hand (x3, x4) = elbow + l2 (cos(q1+q2),
    sin(q1+q2)) in world (x, z). With `link="point"` (the slides' model, D = diag(m1, m1, m2,
    m2)) the masses sit at the elbow and the hand, each with the tiny inertia
    `POINT_INERTIA` that MuJoCo requires; with `link="rod"` the links are uniform thin rods.
    `arm2_mass_matrix` gives M in closed form. Sites: elbow, hand. Two motors (gear 1).

    Args:
        l1: length of the upper link (m).
        l2: length of the lower link (m).
        m1: mass of the upper link (kg).
        m2: mass of the lower link (kg).
        gravity: gravity 9.81 m/s² along -z (in the arm's plane) when true, none otherwise.
        link: "point" or "rod".

    Returns:
        The compiled `Model`.
    """
    return load("arm2", l1=l1, l2=l2, m1=m1, m2=m2, gravity=gravity, link=link)


def chain(n=30, link_length=0.1, radius=0.01, axes="yx", gravity=False, damping=0.0,
          armature=0.0, collisions=True):
    """Serial chain of n capsule links on hinges, hanging along -z from a fixed root.

    The default (30 links, axes alternating y and x, so it moves in 3-D) matches the size of
    the "chain" model of the slides' speed table. Masses come from the capsules (density
    1000). Site: tip.

    Args:
        n: number of links (= nq = nv).
        link_length: length of each link (m).
        radius: capsule radius (m), less than link_length / 2.
        axes: hinge axis letters (x, y, z) cycled along the chain; "y" makes it planar.
        gravity: gravity 9.81 m/s² along -z when true.
        damping: joint damping (N m s/rad) on every hinge.
        armature: rotor inertia (kg m²) on every hinge.
        collisions: whether the links collide with each other.

    Returns:
        The compiled `Model`.
    """
    return load("chain", n=n, link_length=link_length, radius=radius, axes=axes,
                gravity=gravity, damping=damping, armature=armature, collisions=collisions)


def pendulum(n=1, link_length=0.5, radius=0.02, damping=0.0):
    """n-link planar pendulum: a chain of capsules on y hinges hanging under gravity.

    qpos0 (all links straight down) is the stable equilibrium. Site: tip.

    Args:
        n: number of links.
        link_length: length of each link (m).
        radius: capsule radius (m), less than link_length / 2.
        damping: joint damping (N m s/rad).

    Returns:
        The compiled `Model`.
    """
    return load("pendulum", n=n, link_length=link_length, radius=radius, damping=damping)


def humanoid():
    """27-dof humanoid on a floor (free joint + 21 hinges, 21 motors with gears).

    Dimensions, masses (40.8 kg in all), joint limits, springs, damping and armature follow
    MuJoCo's classic humanoid, the model of the ICRA 2014 speed experiment, without its two
    hamstring tendons. At qpos0 it stands upright with its feet on the floor. Sites:
    left_foot, right_foot (soles), left_hand, right_hand.
    """
    return load("humanoid")


def quadruped():
    """Floating-base quadruped (free joint + 12 hinges) standing on a floor.

    Box torso, legs of two 0.25 m capsules with a sphere foot, hinges hip_x, hip_y, knee per
    leg (prefixes fl, fr, hl, hr), 12 position servos (kp = 100). At qpos0 the legs are
    straight and vertical and the feet touch the floor; ctrl = 0 holds that standing pose.
    Sites: fl_foot, fr_foot, hl_foot, hr_foot (foot soles), imu (torso centre).
    """
    return load("quadruped")


def arm_box():
    """Fixed-base 7-dof arm with a two-finger gripper, a table and a free box on the table.

    The arm's hinges alternate z/y/z/y/z/y/z like a KUKA iiwa; the 5 cm box rests on the
    table within reach. Position servos on all 9 actuated joints (7 hinges, 2 finger slides)
    hold qpos0 (arm straight up, gripper open) with ctrl = 0. Sites: ee (between the
    fingertips), box.
    """
    return load("arm_box")


ARM7_READY = (0.0, 0.3, 0.0, -1.6, 0.0, math.pi - 1.9, 0.0)
"""A pose of `arm7` for work in front of the base: elbow bent, tool pointing down.

The tool site `ee` is then at about (0.50, 0, 0.44) m, away from singular configurations.
"""


def arm7():
    """Fixed-base 7-dof arm on seven torque motors (gear 1), without contacts.

    The arm of `arm_box` (hinge axes z/y/z/y/z/y/z, KUKA iiwa-like) with a tool instead of the
    gripper; joints have limits, armature 0.1 and damping 0.5. qpos0 points the arm straight
    up; `ARM7_READY` is a working pose. Site: ee (tool point).
    """
    return load("arm7")


def hinge_friction():
    """Single hinge with dry friction whose link rests on the ground (ICRA 2014, Fig. 1 left).

    frictionloss 1 N m, damping 0.1 N m s/rad, armature 0.01; one motor, |ctrl| <= 5 N m.
    At qpos0 the tip sphere touches the floor. Site: tip.
    """
    return load("hinge_friction")


def painleve(mu=2.0, theta=math.atan(2.0), length=1.0, mass=1.0, radius=0.01):
    """Painlevé's problem: a rod on a free joint, tilted on a table, with friction mu.

    The rod (transverse inertia m l²/12) leans toward +x at angle theta above the table with
    its lower end on it. While that end slides toward -x, the contact end's normal
    acceleration has coefficient `painleve_coefficient(mu, theta, length, mass)` in front
    of the normal force; the defaults (mu = 2 > 4/3, theta = atan 2) make it negative, the
    paradox. Sites: low_end, high_end.

    Args:
        mu: friction coefficient of rod and table.
        theta: tilt above the table (radians, in (0, pi/2)).
        length: rod length between the end-cap centres (m).
        mass: rod mass (kg).
        radius: capsule radius (m).

    Returns:
        The compiled `Model`.
    """
    return load("painleve", mu=mu, theta=theta, length=length, mass=mass, radius=radius)


__all__ = [
    "ARM2_LINKS", "ARM7_READY", "POINT_INERTIA", "arm2", "arm2_mass_matrix", "arm7", "arm_box",
    "chain", "hinge_friction", "humanoid", "list", "load", "painleve", "painleve_coefficient",
    "pendulum", "quadruped", "xml",
]
