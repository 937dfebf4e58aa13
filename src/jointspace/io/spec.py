"""The editable model description that loaders produce and the compiler consumes.

A `ModelSpec` is a tree of `BodySpec` objects rooted at the world body, plus the model-level
lists (meshes, actuators, equality constraints, contact pairs and exclusions, sensors,
keyframes) and options. Everything is plain Python: the MJCF and URDF loaders build one,
users may build one by hand (see `jointspace.io.builder`), and
`jointspace.io.compile.compile_model` turns it into a read-only, flat `Model`.

Conventions (DESIGN.md §2.5): SI units, angles in radians, quaternions (w, x, y, z), frames
given relative to the parent body. Loaders resolve format-specific frame descriptions
(euler, axisangle, xyaxes, zaxis, fromto, rpy) into `pos`/`quat` before the compiler sees
them. Every element may carry a `source` string ("file.xml:42 <joint name='knee'>") that
error messages quote.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

JOINT_TYPES = ("free", "ball", "slide", "hinge")
GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh")
SITE_TYPES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")
INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")
CONES = ("pyramidal", "elliptic")
SOLVERS = ("PGS", "CG", "Newton", "IPM")
EQUALITY_TYPES = ("connect", "weld", "joint", "tendon")
ACTUATOR_KINDS = ("motor", "position", "velocity", "damper", "general", "intvelocity",
                  "cylinder", "muscle", "adhesion", "pid", "orientation",
                  "dcmotor")

# MuJoCo's defaults for soft-constraint parameters (mjmodel.h, mjs_defaultGeom etc.).
DEFAULT_SOLREF = (0.02, 1.0)
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


def _vec(x, n):
    return np.array(x, dtype=np.float64).reshape(n)


@dataclass
class OptionSpec:
    """Simulation options (MJCF <option>)."""

    timestep: float = 0.002
    gravity: tuple = (0.0, 0.0, -9.81)
    wind: tuple = (0.0, 0.0, 0.0)
    magnetic: tuple = (0.0, -0.5, 0.0)
    density: float = 0.0
    viscosity: float = 0.0
    integrator: str = "Euler"
    cone: str = "pyramidal"
    solver: str = "Newton"
    iterations: int = 100
    tolerance: float = 1e-8
    ls_iterations: int = 50
    ls_tolerance: float = 0.01
    impratio: float = 1.0
    noslip_iterations: int = 0
    noslip_tolerance: float = 1e-6
    ccd_iterations: int = 35
    ccd_tolerance: float = 1e-6
    o_margin: float = 0.0
    o_solref: tuple = (0.02, 1.0)
    o_solimp: tuple = (0.9, 0.95, 0.001, 0.5, 2.0)
    o_friction: tuple = (1.0, 1.0, 0.005, 0.0001, 0.0001)
    disable_flags: tuple = ()
    enable_flags: tuple = ()
    disable_actuator_groups: tuple = ()  # actuator groups (0..30) whose actuators are off


@dataclass
class InertialSpec:
    """Mass and inertia of a body about its center of mass.

    Exactly one of `diaginertia` (principal moments in the frame `quat`) or `fullinertia`
    (Ixx, Iyy, Izz, Ixy, Ixz, Iyz in the frame `quat`) is given.
    """

    mass: float
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    diaginertia: np.ndarray | None = None
    fullinertia: np.ndarray | None = None
    source: str = ""


@dataclass
class JointSpec:
    """A joint between a body and its parent (MJCF <joint>).

    `springdamper` = (timeconst, dampratio), both positive, replaces stiffness and damping
    at compile time (MuJoCo's rule, from dof_invweight0); `actfrclimited`/`actfrcrange` clamp
    the joint's (first dof's) qfrc_actuator; `actgravcomp` routes the gravity compensation
    of the bodies it moves through qfrc_actuator instead of qfrc_passive. `dampingpoly`
    (p₀, p₁) makes the damper nonlinear, force −v (damping + p₀ |v| + p₁ v²).
    """

    type: str = "hinge"
    name: str = ""
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    limited: bool = False
    range: tuple = (0.0, 0.0)
    ref: float = 0.0
    springref: float = 0.0
    stiffness: float = 0.0
    damping: float = 0.0
    dampingpoly: tuple = (0.0, 0.0)
    armature: float = 0.0
    frictionloss: float = 0.0
    margin: float = 0.0
    solref_limit: tuple = DEFAULT_SOLREF
    solimp_limit: tuple = DEFAULT_SOLIMP
    solref_friction: tuple = DEFAULT_SOLREF
    solimp_friction: tuple = DEFAULT_SOLIMP
    springdamper: tuple = (0.0, 0.0)
    actfrclimited: bool = False
    actfrcrange: tuple = (0.0, 0.0)
    actgravcomp: bool = False
    group: int = 0
    align: str = "auto"
    source: str = ""


@dataclass
class GeomSpec:
    """A collision/visual geometry attached to a body (MJCF <geom>).

    `size` follows MuJoCo: sphere (r), capsule/cylinder (r, half-length), box (half-sizes),
    ellipsoid (radii), plane (half-sizes x, y, grid spacing). For a mesh, `mesh` names a
    `MeshSpec` and `pos`/`quat` are the mesh's frame in the body; the compiler moves the
    geom frame to the mesh's inertial frame as MuJoCo does.

    `surfacevel` (6: linear, angular) is the velocity of the geom's surface as its contacts
    see it, in this geom frame, the angular part about its origin (conveyors, turntables:
    MuJoCo 4.0's geom surfacevel); `adhesion` is the force each of its contacts can pull
    with before breaking (MuJoCo 4.0's geom adhesion).
    """

    type: str = "sphere"
    name: str = ""
    size: np.ndarray = field(default_factory=lambda: np.zeros(3))
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    mesh: str = ""
    fitscale: float = 1.0
    hfield: str = ""
    mass: float | None = None
    density: float = 1000.0
    shellinertia: bool = False
    friction: tuple = (1.0, 0.005, 0.0001)
    contype: int = 1
    conaffinity: int = 1
    condim: int = 3
    priority: int = 0
    solmix: float = 1.0
    solref: tuple = DEFAULT_SOLREF
    solimp: tuple = DEFAULT_SOLIMP
    margin: float = 0.0
    gap: float = 0.0
    group: int = 0
    rgba: tuple = (0.5, 0.5, 0.5, 1.0)
    material: str = ""
    fluidshape: str = "none"
    fluidcoef: tuple = (0.5, 0.25, 1.5, 1.0, 1.0)
    surfacevel: tuple = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    adhesion: float = 0.0
    source: str = ""


@dataclass
class SiteSpec:
    """A named frame attached to a body (MJCF <site>), for Jacobians, IK and sensors."""

    name: str = ""
    type: str = "sphere"
    size: np.ndarray = field(default_factory=lambda: np.array([0.005, 0.005, 0.005]))
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    group: int = 0
    rgba: tuple = (0.5, 0.5, 0.5, 1.0)
    source: str = ""


@dataclass
class CameraSpec:
    """A camera attached to a body (MJCF <camera>), MuJoCo's mjsCamera fields.

    `mode` is fixed, track, trackcom, targetbody or targetbodycom (`target` names the body
    the last two look at); `fovy` is in degrees (perspective) or length (orthographic);
    `sensorsize`, `focal`/`focalpixel` and `principal`/`principalpixel` are the intrinsics
    that, when a sensor size is given, replace fovy (as MuJoCo's compiler does).
    """

    name: str = ""
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    mode: str = "fixed"
    target: str = ""
    projection: str = "perspective"
    fovy: float = 45.0
    ipd: float = 0.068
    resolution: tuple = (1, 1)
    sensorsize: tuple = (0.0, 0.0)
    focal: tuple = (0.0, 0.0)
    focalpixel: tuple = (0.0, 0.0)
    principal: tuple = (0.0, 0.0)
    principalpixel: tuple = (0.0, 0.0)
    source: str = ""


@dataclass
class MaterialSpec:
    """A material asset (MJCF <material>): its color (textures are not loaded)."""

    name: str = ""
    rgba: tuple = (1.0, 1.0, 1.0, 1.0)
    source: str = ""


@dataclass
class BodySpec:
    """A rigid body, its pose relative to its parent, and what is attached to it.

    `gravcomp` is the fraction of the body's weight cancelled by an upward force at its
    center of mass (MJCF `gravcomp`; qfrc_gravcomp). `compiler`, when set, holds the body's
    own values of the ModelSpec's per-body mass options (inertiafromgeom, boundmass,
    boundinertia, balanceinertia, inertiagrouprange, alignfree): those of the file an MJCF
    `<attach>` copied it from, as MuJoCo compiles each body with its own model's options.
    """

    name: str = ""
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    inertial: InertialSpec | None = None
    joints: list = field(default_factory=list)
    geoms: list = field(default_factory=list)
    sites: list = field(default_factory=list)
    cameras: list = field(default_factory=list)
    children: list = field(default_factory=list)
    mocap: bool = False
    gravcomp: float = 0.0
    compiler: dict | None = None
    source: str = ""

    def add_body(self, **kw) -> BodySpec:
        """Append a child body and return it."""
        b = BodySpec(**kw)
        self.children.append(b)
        return b

    def add_joint(self, **kw) -> JointSpec:
        """Append a joint (between this body and its parent) and return it."""
        j = JointSpec(**kw)
        self.joints.append(j)
        return j

    def add_geom(self, **kw) -> GeomSpec:
        """Append a geom and return it."""
        g = GeomSpec(**kw)
        self.geoms.append(g)
        return g

    def add_site(self, **kw) -> SiteSpec:
        """Append a site and return it."""
        s = SiteSpec(**kw)
        self.sites.append(s)
        return s


@dataclass
class MeshSpec:
    """A triangle mesh asset; the compiler uses its convex hull for inertia and collision.

    As MJCF's <mesh>: the vertices are rounded to single precision, then moved by `refpos`,
    rotated by the inverse of `refquat` and multiplied by `scale`; `inertia` is MuJoCo's mesh
    inertia mode ("legacy", "exact", "convex" or "shell"); `maxhullvert` caps the convex
    hull's vertices as MuJoCo's qhull call does (-1: no cap). `normal` (k, 3) holds the
    normals given with the vertices (MJCF `normal`); only three per vertex (normal, tangent
    1, tangent 2 of each vertex in turn: the taxel frames that tactile sensors read) change
    a result, and the compiler keeps only those (`Model.mesh_tangent`).
    """

    name: str = ""
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    faces: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int32))
    file: str = ""
    scale: tuple = (1.0, 1.0, 1.0)
    refpos: tuple = (0.0, 0.0, 0.0)
    refquat: tuple = (1.0, 0.0, 0.0, 0.0)
    inertia: str = "legacy"
    maxhullvert: int = -1  # -1, or the most vertices of the convex hull (at least 4)
    normal: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    nfilenormal: int = 0  # normals (`vn` records) in an OBJ file, which are not read
    material: str = ""  # the material of the geoms using the mesh that name none
    source: str = ""


@dataclass
class HFieldSpec:
    """A height-field asset (MJCF <hfield>): an elevation grid over a rectangle.

    `size` is (radius_x, radius_y, elevation_z, base_z), all positive: the grid spans
    [−radius_x, radius_x] × [−radius_y, radius_y], elevations run from 0 to elevation_z and
    the solid reaches base_z below 0. `data` holds nrow × ncol elevations, row 0 at
    y = −radius_y, each row from x = −radius_x; the compiler scales them to [0, 1]. A field
    with nrow and ncol but no data is flat (zeros), to be filled in later.
    """

    name: str = ""
    size: tuple = (0.0, 0.0, 0.0, 0.0)
    nrow: int = 0
    ncol: int = 0
    data: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    file: str = ""
    source: str = ""


@dataclass
class ActuatorSpec:
    """A scalar actuator (MJCF <motor>, <position>, <velocity>, <damper>, <general>).

    force = gain · ctrl + bias, with MuJoCo's affine gain/bias parameterization:
    gain = gainprm[0] + gainprm[1]·length + gainprm[2]·velocity,
    bias = biasprm[0] + biasprm[1]·length + biasprm[2]·velocity.
    `joint` (or `site`, `body`, `tendon`) names the transmission target. `nsample` > 0
    gives it a history buffer of its controls, read with `interp` ("zoh", "linear", "cubic");
    `delay` > 0 (needs nsample) drives the force with the control of `delay` seconds ago
    (`jointspace.history`). `damping`, `dampingpoly` (p₀, p₁) and `armature`, non-negative,
    are added, times gear[0]², to the damping and armature of the joint or tendon the
    actuator drives (MuJoCo 4's actuator damping and armature; joint, jointinparent and
    tendon transmissions only).

    A pid (gaintype "pid", biastype "affine", MuJoCo 4's <pid>) reads the controls its
    `input` names ("pos vel" when empty; a subset of "pos vel ff" in this order), one each:
    force = kp (u_pos − length) + kv (u_vel − velocity) + u_ff + ki · act, with
    kp = −biasprm[1], kv = −biasprm[2], ki = gainprm[0] (dyntype "pid" when ki ≠ 0 or
    slewmax ≠ 0), imax = dynprm[0], slewmax = dynprm[1]. The pos control's range is
    `ctrlrange`, the others' `velrange` and `ffrange` (limited when lower < upper).
    """

    name: str = ""
    kind: str = "motor"
    joint: str = ""
    site: str = ""
    body: str = ""
    tendon: str = ""
    jointinparent: str = ""
    cranksite: str = ""
    slidersite: str = ""
    refsite: str = ""
    cranklength: float = 0.0
    gear: np.ndarray = field(default_factory=lambda: np.array([1.0, 0, 0, 0, 0, 0]))
    ctrllimited: bool = False
    ctrlrange: tuple = (0.0, 0.0)
    forcelimited: bool = False
    forcerange: tuple = (0.0, 0.0)
    gainprm: np.ndarray = field(default_factory=lambda: np.r_[1.0, np.zeros(9)])
    biasprm: np.ndarray = field(default_factory=lambda: np.zeros(10))
    dynprm: np.ndarray = field(default_factory=lambda: np.r_[1.0, np.zeros(9)])
    gaintype: str = "fixed"
    biastype: str = "none"
    dyntype: str = "none"
    actlimited: bool = False
    actrange: tuple = (0.0, 0.0)
    actearly: bool = False
    lengthrange: tuple = (0.0, 0.0)
    group: int = 0
    nsample: int = 0
    interp: str = "zoh"
    delay: float = 0.0
    damping: float = 0.0
    dampingpoly: tuple = (0.0, 0.0)
    armature: float = 0.0
    input: str = ""
    velrange: tuple = (0.0, 0.0)
    ffrange: tuple = (0.0, 0.0)
    source: str = ""


@dataclass
class EqualitySpec:
    """An equality constraint (MJCF <equality>): connect, weld, joint or tendon coupling.

    `objtype` "site" makes a connect or weld act between the two sites `obj1` and `obj2`
    (MuJoCo's site semantics: their positions, and for a weld their frames, coincide).
    """

    type: str = "connect"
    name: str = ""
    objtype: str = "body"
    obj1: str = ""
    obj2: str = ""
    anchor: np.ndarray = field(default_factory=lambda: np.zeros(3))
    relpose: np.ndarray | None = None
    torquescale: float = 1.0
    polycoef: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0, 0.0, 0.0, 0.0]))
    solref: tuple = DEFAULT_SOLREF
    solimp: tuple = DEFAULT_SOLIMP
    active: bool = True
    source: str = ""


@dataclass
class TendonSpec:
    """A tendon (MJCF <tendon><fixed> or <spatial>).

    Fixed: length = Σ coef · q over scalar joints; `joints` lists (joint name, coef, source).
    Spatial: a path through sites; `path` lists ("site", name, 0, source) and
    ("pulley", "", divisor, source). `springlength` (lower, upper) is the spring's dead
    band; (-1, -1) means the length at qpos0, as in MuJoCo. `dampingpoly` as JointSpec's.
    """

    name: str = ""
    kind: str = "fixed"
    joints: list = field(default_factory=list)
    path: list = field(default_factory=list)
    limited: bool = False
    range: tuple = (0.0, 0.0)
    margin: float = 0.0
    stiffness: float = 0.0
    damping: float = 0.0
    dampingpoly: tuple = (0.0, 0.0)
    armature: float = 0.0
    frictionloss: float = 0.0
    springlength: tuple = (-1.0, -1.0)
    actfrclimited: bool = False
    actfrcrange: tuple = (0.0, 0.0)
    solref_limit: tuple = DEFAULT_SOLREF
    solimp_limit: tuple = DEFAULT_SOLIMP
    solref_friction: tuple = DEFAULT_SOLREF
    solimp_friction: tuple = DEFAULT_SOLIMP
    source: str = ""


@dataclass
class PairSpec:
    """An explicit contact pair with its own parameters (MJCF <contact><pair>).

    Unset (None) parameters are filled by the compiler from the two geoms; `adhesion`
    replaces the geoms' adhesion for the pair's contacts (0: none, even if they have some).
    """

    geom1: str = ""
    geom2: str = ""
    name: str = ""
    condim: int | None = None
    friction: tuple | None = None
    solref: tuple | None = None
    solreffriction: tuple = (0.0, 0.0)
    solimp: tuple | None = None
    margin: float | None = None
    gap: float | None = None
    adhesion: float = 0.0
    source: str = ""


@dataclass
class ExcludeSpec:
    """A body pair excluded from contact (MJCF <contact><exclude>)."""

    body1: str = ""
    body2: str = ""
    source: str = ""


@dataclass
class SensorSpec:
    """A sensor (MJCF <sensor> children), by MuJoCo's element name in `kind`.

    `objtype`/`objname` name the sensed object (the element's site, joint, actuator, body
    or objname attribute), `reftype`/`refname` a reference frame (frame sensors), `dim`,
    `datatype` and `needstage` the layout of user sensors; `dim` and `intprm` (data fields,
    reduce, num) that of contact sensors. `nsample` > 0 gives it a history buffer read with
    `interp`; `delay` (s) delays its sensordata, `interval` = (period, phase) samples it every
    period (`jointspace.history`).
    """

    kind: str = "jointpos"
    name: str = ""
    objtype: str = ""
    objname: str = ""
    reftype: str = ""
    refname: str = ""
    cutoff: float = 0.0
    noise: float = 0.0
    dim: int = 0
    datatype: str = "real"
    needstage: str = "acc"
    intprm: tuple = (0, 0, 0)
    nsample: int = 0
    interp: str = "zoh"
    delay: float = 0.0
    interval: tuple = (0.0, 0.0)
    source: str = ""


@dataclass
class KeySpec:
    """A keyframe (MJCF <keyframe><key>): a state that `jointspace.reset(m, d, key)` sets.

    Unset (None) values come from the model: qpos from qpos0, mpos and mquat from the mocap
    bodies' poses, the rest zero. A vector shorter than its field is completed from those
    defaults (qpos, qvel, act, ctrl value by value; mpos, mquat body by body), as MuJoCo
    does; a longer one is an error. `by_element` sets values of joints, actuators and mocap
    bodies (their spec objects) over those (a keyframe of a model inserted by MJCF <attach>).
    """

    name: str = ""
    time: float = 0.0
    qpos: np.ndarray | None = None
    qvel: np.ndarray | None = None
    act: np.ndarray | None = None
    ctrl: np.ndarray | None = None
    mpos: np.ndarray | None = None
    mquat: np.ndarray | None = None
    # {"qpos"|"qvel": [(JointSpec, values)], "ctrl"|"act": [(ActuatorSpec, values)],
    #  "mpos"|"mquat": [(mocap BodySpec, values)]}
    by_element: dict | None = None
    source: str = ""


@dataclass
class ModelSpec:
    """A whole model before compilation.

    `balanceinertia` mirrors MJCF's compiler option: when true, principal inertias that
    violate the triangle inequality are raised to satisfy it instead of raising an error.
    `inertiagrouprange` (lowest, highest): only geoms of a group in it give their body mass
    and inertia. `alignfree`: a body whose only joint is free and that has no children gets
    its body frame moved onto its inertial frame (MuJoCo's compiler alignfree; a joint's own
    `align` overrides it). `fitaabb`: a primitive geom that names a mesh is fitted to the
    mesh's bounding box instead of its equivalent inertia box. `discardvisual`: geoms that
    neither collide nor are named by a pair, tendon or sensor are removed after they gave
    their body mass, with the meshes only they used, and every material. `fusestatic`:
    bodies without joints merge into their parents as MuJoCo's compiler fuses them, unless
    they are mocap bodies, carry a force or torque sensor's site, or are named by an element
    (equality, exclude, sensor, actuator, camera target, or a name in `body_refs`: the bodies
    that elements read but not kept name, such as light targets, skin bones and custom
    tuples). `lengthrange`: the <compiler><lengthrange> options given (mode, useexisting,
    uselimit, accel, maxforce, timeconst, timestep, inttotal, interval, tolrange), MuJoCo's
    defaults for the rest.
    """

    name: str = "model"
    option: OptionSpec = field(default_factory=OptionSpec)
    world: BodySpec = field(default_factory=lambda: BodySpec(name="world"))
    meshes: list = field(default_factory=list)
    hfields: list = field(default_factory=list)
    actuators: list = field(default_factory=list)
    tendons: list = field(default_factory=list)
    equalities: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    excludes: list = field(default_factory=list)
    sensors: list = field(default_factory=list)
    keys: list = field(default_factory=list)
    materials: list = field(default_factory=list)
    znear: float = 0.01  # <visual><map znear>: the focal length of cameras without intrinsics
    nuserdata: int = 0
    balanceinertia: bool = False
    boundmass: float = 0.0
    boundinertia: float = 0.0
    inertiafromgeom: str = "auto"
    settotalmass: float = -1.0
    inertiagrouprange: tuple = (0, 5)
    alignfree: bool = False
    fitaabb: bool = False
    discardvisual: bool = False
    fusestatic: bool = False
    lengthrange: dict = field(default_factory=dict)  # <compiler><lengthrange> options given
    body_refs: set = field(default_factory=set)
    source: str = ""
    warnings: list = field(default_factory=list)
