"""MJCF text of the parametric embedded models (arm2, chain, pendulum, painleve).

Each function checks its arguments, fills a template and returns the MJCF document as a
string that MuJoCo and jointspace's MJCF loader both accept. The fixed models live next to
this file as .xml files.
"""

from __future__ import annotations

import math

import numpy as np

from jointspace.errors import ModelError

POINT_INERTIA = 1e-9
"""Rotational inertia (kg m², about every axis) given to arm2's point masses.

MuJoCo refuses moving bodies whose principal inertias are below 1e-15, so a point mass
carries this small isotropic inertia; `arm2_mass_matrix` includes it exactly.
"""

GRAVITY = 9.81


def _positive(name, value, model):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"jointspace.models.{model}: argument {name}={value!r} is not a "
                         "number; pass a positive float") from None
    if not math.isfinite(v) or v <= 0.0:
        raise ModelError(f"jointspace.models.{model}: argument {name}={value!r} must be a "
                         "positive, finite number")
    return v


def _nonnegative(name, value, model):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"jointspace.models.{model}: argument {name}={value!r} is not a "
                         "number; pass a float >= 0") from None
    if not math.isfinite(v) or v < 0.0:
        raise ModelError(f"jointspace.models.{model}: argument {name}={value!r} must be a "
                         "finite number >= 0")
    return v


def _count(name, value, model):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ModelError(f"jointspace.models.{model}: argument {name}={value!r} must be an "
                         "integer >= 1")
    return int(value)


def _f(x):
    """Shortest decimal text that reads back as the same float64."""
    return repr(float(x))


# ------------------------------------------------------------------------------------------
# arm2: the 2-link planar arm of Todorov's slides ("Example: 2-link arm").

_ARM2 = """\
<!--
  jointspace embedded model: the 2-link planar arm of Todorov's lecture slides
  ("Multi-joint dynamics", example "2-link arm"), links = {links}.

  The arm moves in the vertical x-z plane. Both hinges turn about -y, so with the slides'
  notation the elbow is at (x1, x2) = l1 (cos q1, sin q1) in world (x, z) and the hand at
  (x3, x4) = (x1, x2) + l2 (cos(q1+q2), sin(q1+q2)). Gravity, when on, points along -z.
  Link masses: {mass_text}
  The geoms are for display and do not collide; masses come from the inertial elements.

  Sizes: nq 2, nv 2, nu 2 (motors, gear 1), 3 bodies (world included), 3 geoms.
  Sites: elbow, hand.
-->
<mujoco model="arm2">
  <compiler angle="radian" inertiafromgeom="false"/>
  <option timestep="0.001" gravity="0 0 {gz}"/>

  <worldbody>
    <body name="link1" pos="0 0 0">
      <joint name="shoulder" type="hinge" axis="0 -1 0"/>
      <inertial pos="{c1} 0 0" mass="{m1}" diaginertia="{i1}"/>
      <geom name="link1" type="capsule" size="{r}" fromto="0 0 0 {l1} 0 0" contype="0"
            conaffinity="0"/>
      <site name="elbow" pos="{l1} 0 0"/>
      <body name="link2" pos="{l1} 0 0">
        <joint name="elbow" type="hinge" axis="0 -1 0"/>
        <inertial pos="{c2} 0 0" mass="{m2}" diaginertia="{i2}"/>
        <geom name="link2" type="capsule" size="{r}" fromto="0 0 0 {l2} 0 0" contype="0"
              conaffinity="0"/>
        <geom name="hand" type="sphere" size="{r2}" pos="{l2} 0 0" contype="0"
              conaffinity="0"/>
        <site name="hand" pos="{l2} 0 0"/>
      </body>
    </body>
  </worldbody>

  <actuator>
    <motor name="shoulder" joint="shoulder" gear="1"/>
    <motor name="elbow" joint="elbow" gear="1"/>
  </actuator>
</mujoco>
"""

ARM2_LINKS = ("point", "rod")


def _arm2_link(link, length, mass):
    """Centre-of-mass distance from the joint and (Ixx, Iyy, Izz) about the COM, link along x."""
    if link == "point":
        return length, (POINT_INERTIA, POINT_INERTIA, POINT_INERTIA)
    transverse = mass * length**2 / 12.0
    return 0.5 * length, (POINT_INERTIA, transverse, transverse)


def arm2_xml(l1=1.0, l2=1.0, m1=1.0, m2=1.0, gravity=True, link="point"):
    """MJCF text of the slides' 2-link planar arm; see `jointspace.models.arm2`."""
    l1 = _positive("l1", l1, "arm2")
    l2 = _positive("l2", l2, "arm2")
    m1 = _positive("m1", m1, "arm2")
    m2 = _positive("m2", m2, "arm2")
    if link not in ARM2_LINKS:
        raise ModelError(f"jointspace.models.arm2: argument link={link!r} must be one of "
                         f"{ARM2_LINKS}")
    c1, i1 = _arm2_link(link, l1, m1)
    c2, i2 = _arm2_link(link, l2, m2)
    if link == "point":
        mass_text = ("point masses m1 at the elbow and m2 at the hand, as in the slides'\n"
                     f"  D = diag(m1, m1, m2, m2) (each with inertia {POINT_INERTIA:g} kg m^2"
                     " as MuJoCo requires).")
    else:
        mass_text = "uniform thin rods (inertia m l^2 / 12 about the centre)."
    r = 0.02 * min(l1, l2)
    return _ARM2.format(
        links=link, mass_text=mass_text, gz=_f(-GRAVITY if gravity else 0.0),
        l1=_f(l1), l2=_f(l2), m1=_f(m1), m2=_f(m2), c1=_f(c1), c2=_f(c2),
        i1=" ".join(_f(x) for x in i1), i2=" ".join(_f(x) for x in i2),
        r=_f(r), r2=_f(2 * r))


def arm2_mass_matrix(q, l1=1.0, l2=1.0, m1=1.0, m2=1.0, link="point"):
    """Closed-form joint-space inertia of `arm2` at angles q = (q1, q2).

    With c_k the centre-of-mass distance of link k from its joint and I_k its inertia about
    the COM (hinge axis): M11 = I1 + m1 c1² + I2 + m2 (l1² + c2² + 2 l1 c2 cos q2),
    M12 = I2 + m2 (c2² + l1 c2 cos q2), M22 = I2 + m2 c2². For point masses (c_k = l_k,
    I_k ≈ 0) this is the slides' M = Jᵀ D J with D = diag(m1, m1, m2, m2).

    Args:
        q: joint angles (2,).
        l1: length of the upper link (m), as given to `arm2`.
        l2: length of the lower link (m).
        m1: mass of the upper link (kg).
        m2: mass of the lower link (kg).
        link: "point" or "rod".

    Returns:
        M, shape (2, 2).
    """
    c1, i1 = _arm2_link(link, l1, m1)
    c2, i2 = _arm2_link(link, l2, m2)
    I1, I2 = i1[1], i2[1]  # inertia about the hinge axis (world y)
    cq2 = math.cos(q[1])
    m22 = I2 + m2 * c2**2
    m12 = m22 + m2 * l1 * c2 * cq2
    m11 = I1 + m1 * c1**2 + m22 + m2 * (l1**2 + 2.0 * l1 * c2 * cq2)
    return np.array([[m11, m12], [m12, m22]])


# ------------------------------------------------------------------------------------------
# chain / pendulum: a serial chain of capsules on hinges.

_AXES = {"x": "1 0 0", "y": "0 1 0", "z": "0 0 1"}


def chain_xml(n=30, link_length=0.1, radius=0.01, axes="yx", gravity=False, damping=0.0,
              armature=0.0, collisions=True, name="chain"):
    """MJCF text of an n-link hinge chain hanging along -z; see `jointspace.models.chain`."""
    n = _count("n", n, name)
    length = _positive("link_length", link_length, name)
    radius = _positive("radius", radius, name)
    damping = _nonnegative("damping", damping, name)
    armature = _nonnegative("armature", armature, name)
    if not isinstance(axes, str) or not axes or any(a not in _AXES for a in axes):
        raise ModelError(f"jointspace.models.{name}: argument axes={axes!r} must be a non-empty "
                         "string of the letters x, y, z (cycled along the chain)")
    if 2.0 * radius >= length:
        raise ModelError(f"jointspace.models.{name}: radius={radius} must be less than half of "
                         f"link_length={length} so that non-adjacent links do not overlap")
    contype = 1 if collisions else 0
    lines = [
        "<!--",
        f"  jointspace embedded model: a serial chain of {n} capsule links on hinges.",
        "",
        f"  Link k hangs from link k-1 along -z (length {_f(length)} m, radius {_f(radius)} m,",
        "  density 1000, masses from the geoms); hinge axes cycle through "
        f"'{axes}'. qpos0 is the",
        "  chain hanging straight down from a fixed root at the world origin. Gravity is "
        f"{'on' if gravity else 'off'}.",
        "",
        f"  Sizes: nq {n}, nv {n}, nu 0, {n + 1} bodies (world included), {n} geoms.",
        "  Sites: tip (end of the last link).",
        "-->",
        f'<mujoco model="{name}">',
        '  <compiler angle="radian" inertiafromgeom="true"/>',
        f'  <option timestep="0.002" gravity="0 0 {_f(-GRAVITY if gravity else 0.0)}"/>',
        "  <default>",
        f'    <joint type="hinge" damping="{_f(damping)}" armature="{_f(armature)}"/>',
        f'    <geom type="capsule" size="{_f(radius)}" contype="{contype}" '
        f'conaffinity="{contype}"/>',
        "  </default>",
        "  <worldbody>",
    ]
    for k in range(n):
        pad = "  " * (k + 2)
        pos = "0 0 0" if k == 0 else f"0 0 {_f(-length)}"
        lines.append(f'{pad}<body name="link{k + 1}" pos="{pos}">')
        lines.append(f'{pad}  <joint name="joint{k + 1}" axis="{_AXES[axes[k % len(axes)]]}"/>')
        lines.append(f'{pad}  <geom name="link{k + 1}" fromto="0 0 0 0 0 {_f(-length)}"/>')
    lines.append(f'{"  " * (n + 2)}<site name="tip" pos="0 0 {_f(-length)}" size="0.005"/>')
    for k in reversed(range(n)):
        lines.append(f'{"  " * (k + 2)}</body>')
    lines += ["  </worldbody>", "</mujoco>", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# painleve: a tilted rod on a table (Painlevé's problem in Todorov's slides).

_PAINLEVE = """\
<!--
  jointspace embedded model: Painleve's problem (Todorov's slides, "Example: Painleve's
  problem"): a thin rod on a free joint, tilted at theta = {theta_deg} degrees above a table,
  its lower end touching the table top (z = 0).

  Rod: length l = {length} m (between the centres of the capsule's end caps; cap radius
  {radius} m), mass m = {mass} kg, inertia J = m l^2 / 12 about the transverse axes and
  m r^2 / 2 about its own axis (r the cap radius). Its axis
  lies in the x-z plane, leaning toward +x from the lower end. Friction mu = {mu} on both the
  rod and the table.

  With the lower end sliding toward -x (friction pushing it toward +x), the slides' normal
  acceleration of the contact end is
      ydd_c = [1/m - (l^2 / 4J) cos(theta) (mu sin(theta) - cos(theta))] N + ...
  and its coefficient of N is {coef:.4g} / m here: a negative value means the rigid
  contact problem has no solution or several (the paradox). For a uniform rod this needs
  mu > 4/3 (attained at theta = atan 2). qpos0 has the rod at rest; give qvel[0] < 0 (and
  the same initial velocity to the whole rod) to start the sliding motion.

  What the soft model does: its convex problem always has a unique solution, so there is no
  paradox to resolve. Released at rest, the rod pivots on its lower end, which slides and
  then lifts off (the contact cannot pull); the rod falls flat and comes to rest on the
  table. The contacts are stiffer than MuJoCo's default (solref 0.004 s) so that the thin
  rod, landing flat at about 2 m/s, does not sink into the table.

  Sizes: nq 7, nv 6, nu 0, 2 bodies (world included), 2 geoms. Sites: low_end (centre of
  the lower end cap), high_end.
-->
<mujoco model="painleve">
  <compiler angle="radian" inertiafromgeom="false"/>
  <option timestep="0.001" cone="elliptic"/>

  <worldbody>
    <geom name="table" type="box" size="2 0.5 0.5" pos="0 0 -0.5" condim="3" solref="0.004 1"
          friction="{mu} 0.005 0.0001" rgba="0.6 0.45 0.3 1"/>
    <body name="rod" pos="0 0 {z}" quat="{quat}">
      <freejoint name="rod"/>
      <inertial pos="0 0 0" mass="{mass}" diaginertia="{J} {J} {Jaxis}"/>
      <geom name="rod" type="capsule" size="{radius}" fromto="0 0 {lo} 0 0 {hi}" condim="3"
            solref="0.004 1" friction="{mu} 0.005 0.0001" rgba="0.8 0.3 0.2 1"/>
      <site name="low_end" pos="0 0 {lo}" size="0.005"/>
      <site name="high_end" pos="0 0 {hi}" size="0.005"/>
    </body>
  </worldbody>
</mujoco>
"""


def painleve_coefficient(mu, theta, length=1.0, mass=1.0, inertia=None):
    """Coefficient of N in the contact end's normal acceleration (Todorov's slides).

    1/m − (l²/4J) cos θ (μ sin θ − cos θ), for a rod of length l, mass m, transverse inertia
    J (default m l²/12), tilted θ above the table, whose lower end slides so that friction
    μN points toward the side the rod leans to. Negative: Painlevé's paradox.
    """
    J = mass * length**2 / 12.0 if inertia is None else inertia
    return 1.0 / mass - length**2 / (4.0 * J) * math.cos(theta) * (
        mu * math.sin(theta) - math.cos(theta))


def painleve_xml(mu=2.0, theta=math.atan(2.0), length=1.0, mass=1.0, radius=0.01):
    """MJCF text of the tilted rod of Painlevé's problem; see `jointspace.models.painleve`."""
    mu = _positive("mu", mu, "painleve")
    theta = _positive("theta", theta, "painleve")
    if theta >= 0.5 * math.pi:
        raise ModelError(f"jointspace.models.painleve: argument theta={theta} must be in "
                         "(0, pi/2) radians")
    length = _positive("length", length, "painleve")
    mass = _positive("mass", mass, "painleve")
    radius = _positive("radius", radius, "painleve")
    J = mass * length**2 / 12.0
    # rod axis = local z; rotate about y by alpha = pi/2 - theta: z -> (cos theta, 0, sin theta)
    alpha = 0.5 * math.pi - theta
    quat = (math.cos(0.5 * alpha), 0.0, math.sin(0.5 * alpha), 0.0)
    return _PAINLEVE.format(
        theta_deg=f"{math.degrees(theta):.2f}", length=_f(length), radius=_f(radius),
        mass=_f(mass), mu=_f(mu), coef=painleve_coefficient(mu, theta, length, mass) * mass,
        z=_f(0.5 * length * math.sin(theta) + radius), quat=" ".join(_f(x) for x in quat),
        J=_f(J), Jaxis=_f(0.5 * mass * radius**2), lo=_f(-0.5 * length), hi=_f(0.5 * length))
