"""Model and Data: the compiled model description and the simulation state.

Field names and meanings follow MuJoCo's public vocabulary (mjmodel.h, mjdata.h) so that
people who know MuJoCo can read jointspace and parity tests can compare fields by name.

The tables below are the single source of truth: each row is (name, dtype, shape, meaning).
`dtype` is "f" (float64), "i" (int32), "l" (int64, scratch) or "b" (uint8 flag); `shape`
lists sizes by name (looked up among the model sizes, and Data's nsolve: `data_sizes`),
number, (name, a, b) for a · size + b, or ((name, a), (name, name, b), …, c) for a sum of
multiples of sizes and of two sizes' products plus c. A scalar field has shape ().

Python sees `Model` and `Data` as plain objects whose attributes are NumPy arrays. Compiled
code sees them through a Numba structref (`model._s`, `data._s`) that references the very
same buffers, so a public call crosses into compiled code with one pointer per object
(DESIGN.md §2.4). `tools/gen_structs.py` turns these tables into `_numba/structs.py`. The
structs borrow the buffers (no reference count of their own, so compiled code reads fields
without atomic operations); Model and Data own them (in `_own`) and never rebind a field:
assigning one (`d.qpos = q`) copies into it, as MuJoCo's bindings do, and a model's sizes
are fixed. The attributes Python sees are views of the buffers, so that no statement can
resize or free memory that compiled code holds. Integer fields that compiled code uses as
counts, ids, addresses or types are read-only views: of Data all but the inputs, of Model
all but the bit masks and flags in MODEL_WRITABLE_INTS (options change through `m.opt`,
which checks them). Numeric parameters and the state stay writable.
"""

from __future__ import annotations

import copy
import difflib
import math

import numpy as np

# Enumerations (values match MuJoCo's mjtJoint, mjtGeom, mjtIntegrator, mjtCone, mjtSolver).
JNT_FREE, JNT_BALL, JNT_SLIDE, JNT_HINGE = 0, 1, 2, 3
GEOM_PLANE, GEOM_HFIELD, GEOM_SPHERE, GEOM_CAPSULE = 0, 1, 2, 3
GEOM_ELLIPSOID, GEOM_CYLINDER, GEOM_BOX, GEOM_MESH = 4, 5, 6, 7
INT_EULER, INT_RK4, INT_IMPLICIT, INT_IMPLICITFAST = 0, 1, 2, 3
CONE_PYRAMIDAL, CONE_ELLIPTIC = 0, 1
SOLVER_PGS, SOLVER_CG, SOLVER_NEWTON, SOLVER_IPM = 0, 1, 2, 3
# option disable flags: bit k is set when DISABLE_FLAGS[k] is disabled (MuJoCo's mjtDisableBit)
DISABLE_FLAGS = ("constraint", "equality", "frictionloss", "limit", "contact", "spring",
                 "damper", "gravity", "clampctrl", "warmstart", "filterparent", "actuation",
                 "refsafe", "sensor", "midphase", "eulerdamp", "autoreset", "nativeccd",
                 "island", "multiccd")
(DSBL_CONSTRAINT, DSBL_EQUALITY, DSBL_FRICTIONLOSS, DSBL_LIMIT, DSBL_CONTACT, DSBL_SPRING,
 DSBL_DAMPER, DSBL_GRAVITY, DSBL_CLAMPCTRL, DSBL_WARMSTART, DSBL_FILTERPARENT, DSBL_ACTUATION,
 DSBL_REFSAFE, DSBL_SENSOR, DSBL_MIDPHASE, DSBL_EULERDAMP) = (1 << k for k in range(16))
DSBL_ISLAND = 1 << DISABLE_FLAGS.index("island")
DSBL_AUTORESET = 1 << DISABLE_FLAGS.index("autoreset")
# option enable flags: bit k is set when ENABLE_FLAGS[k] is enabled (MuJoCo's mjtEnableBit)
ENABLE_FLAGS = ("override", "energy", "fwdinv", "invdiscrete", "sleep", "diagexact", "ipc",
                "speculative")
ENBL_OVERRIDE, ENBL_FWDINV, ENBL_INVDISCRETE = 1 << 0, 1 << 2, 1 << 3
ENBL_DIAGEXACT = 1 << ENABLE_FLAGS.index("diagexact")
ENBL_ENERGY = 1 << ENABLE_FLAGS.index("energy")
# enable flags of MuJoCo 4.0 whose computation jointspace does not have: refused in MJCF, in
# a ModelSpec and when set at run time (`m.opt.enableflags`), never silently ignored
ENABLE_REFUSED = {"sleep": "sleeping islands", "ipc": "an alternative contact model",
                  "speculative": "speculative contacts"}
ENBL_REFUSED = sum(1 << ENABLE_FLAGS.index(f) for f in ENABLE_REFUSED)
# frames that coincide with their body's or inertial frame (MuJoCo's mjtSameFrame): the
# compiler sets them where positions and quaternion components agree within SAMEFRAME_EPS,
# and kinematics then copies the body's (or inertial) pose instead of composing the offset
SAMEFRAME_NONE, SAMEFRAME_BODY, SAMEFRAME_INERTIA, SAMEFRAME_BODYROT, SAMEFRAME_INERTIAROT = (
    0, 1, 2, 3, 4)
SAMEFRAME_EPS = 1e-6
TRN_JOINT, TRN_JOINTINPARENT, TRN_SLIDERCRANK, TRN_TENDON, TRN_SITE, TRN_BODY = 0, 1, 2, 3, 4, 5
TRN_SO3 = 6  # MuJoCo 4's mjTRN_SO3: orientation of a ball joint, or of a site in a refsite
DYN_NONE, DYN_INTEGRATOR, DYN_FILTER, DYN_FILTEREXACT, DYN_MUSCLE = 0, 1, 2, 3, 4
DYN_DCMOTOR = 5  # MuJoCo 4's mjDYN_DCMOTOR: up to five states [slew, integral, T, z, current]
DYN_PID = 6  # MuJoCo 4's mjDYN_PID: the pid's slew and integral states
GAIN_FIXED, GAIN_AFFINE, GAIN_MUSCLE = 0, 1, 2
GAIN_DCMOTOR = 3  # MuJoCo 4's mjGAIN_DCMOTOR: R, K, thermal and controller in gainprm
GAIN_SO3 = 4  # MuJoCo 4's mjGAIN_SO3 (with BIAS_SO3): the orientation servo, kp in gainprm[0]
GAIN_PID = 5  # MuJoCo 4's mjGAIN_PID: kp, kv in biasprm, ki in gainprm[0]
# actuator_ctrlspec of an so3 actuator (MuJoCo's mjtChart): its setpoint's chart
CHART_EXPMAP, CHART_QUAT = 1, 2
# actuator_ctrlspec bits (MuJoCo's mjtInput): which controls a pid or dcmotor reads
INPUT_POS, INPUT_VEL, INPUT_FF = 1, 2, 4
INPUT_VOLTAGE = 8  # a dcmotor's raw terminal voltage
INPUT_NONE = 16  # a dcmotor without controls (passive)
BIAS_NONE, BIAS_AFFINE, BIAS_MUSCLE = 0, 1, 2
BIAS_DCMOTOR = 3  # MuJoCo 4's mjBIAS_DCMOTOR: back-EMF, cogging and LuGre in biasprm
BIAS_SO3 = 4  # MuJoCo 4's mjBIAS_SO3: the orientation servo, kv in biasprm[2]


def dcmotor_slots(dynprm, gainprm):
    """A dcmotor's state slots (slew, integral, temperature, bristle, current, count).

    In this order, each present when its parameter is positive (MuJoCo's mj_dcmotorSlots):
    slewmax dynprm[7], ki gainprm[5], thermal resistance dynprm[2], LuGre stiffness
    dynprm[5], electrical time constant dynprm[0]; an absent slot is −1.
    """
    slots = [-1] * 5
    n = 0
    for k, on in enumerate((dynprm[7] > 0, gainprm[5] > 0, dynprm[2] > 0, dynprm[5] > 0,
                            dynprm[0] > 0)):
        if on:
            slots[k] = n
            n += 1
    return (*slots, n)


EQ_CONNECT, EQ_WELD, EQ_JOINT, EQ_TENDON = 0, 1, 2, 3
# object types of connect and weld constraints (MuJoCo's mjtObj values)
OBJ_BODY, OBJ_SITE = 1, 6
# tendon path elements (MuJoCo's mjtWrap)
WRAP_JOINT, WRAP_PULLEY, WRAP_SITE, WRAP_SPHERE, WRAP_CYLINDER = 1, 2, 3, 4, 5
# camera modes (MuJoCo's mjtCamLight) and projections (mjtProjection)
CAM_FIXED, CAM_TRACK, CAM_TRACKCOM, CAM_TARGETBODY, CAM_TARGETBODYCOM = 0, 1, 2, 3, 4
PROJ_PERSPECTIVE, PROJ_ORTHOGRAPHIC = 0, 1
# constraint row types (MuJoCo's mjtConstraint)
CNSTR_EQUALITY = 0
CNSTR_FRICTION_DOF = 1
CNSTR_FRICTION_TENDON = 2
CNSTR_LIMIT_JOINT = 3
CNSTR_LIMIT_TENDON = 4
CNSTR_CONTACT_FRICTIONLESS = 5
CNSTR_CONTACT_PYRAMIDAL = 6
CNSTR_CONTACT_ELLIPTIC = 7

# row states at the solution (MuJoCo's mjtConstraintState)
STATE_SATISFIED = 0
STATE_QUADRATIC = 1
STATE_LINEARNEG = 2
STATE_LINEARPOS = 3
STATE_CONE = 4

# MuJoCo's numeric limits (mjMINVAL, mjMAXVAL, mjMINIMP, mjMAXIMP, mjMINMU), one home for all
MINVAL = 1e-15  # a pivot, mass, norm or denominator at or below it counts as zero
MAXVAL = 1e10  # larger state or force values count as diverged
MINIMP = 0.0001  # least constraint impedance
MAXIMP = 0.9999  # largest constraint impedance
MINMU = 1e-5  # least friction coefficient a contact gets

JOINT_NQ = {JNT_FREE: 7, JNT_BALL: 4, JNT_SLIDE: 1, JNT_HINGE: 1}
JOINT_NV = {JNT_FREE: 6, JNT_BALL: 3, JNT_SLIDE: 1, JNT_HINGE: 1}

MODEL_SIZES = (
    ("nq", "number of generalized coordinates"),
    ("nv", "number of degrees of freedom"),
    ("nu", "number of scalar controls = len(d.ctrl) (equal to nactuator unless an actuator "
     "reads several controls: pid, dcmotor)"),
    ("nactuator", "number of actuators"),
    ("nout", "number of actuator force outputs = Σ actuator_outnum (equal to nactuator unless "
     "an actuator has several outputs: orientation, 3)"),
    ("na", "number of activation states (0: no actuator has activation dynamics)"),
    ("nbody", "number of bodies, world included"),
    ("njnt", "number of joints"),
    ("ngeom", "number of geoms"),
    ("nsite", "number of sites"),
    ("nmesh", "number of meshes"),
    ("nmeshvert", "number of mesh vertices, all meshes"),
    ("nmeshface", "number of mesh faces, all meshes"),
    ("nmeshtangent", "number of taxel frames, all meshes (the vertices of meshes given three "
     "normals per vertex)"),
    ("nhfield", "number of height fields"),
    ("nhfielddata", "number of height-field elevation values, all height fields"),
    ("nhullvert", "number of convex-hull vertices, all meshes"),
    ("nhullpoly", "number of convex-hull polygons, all meshes"),
    ("nhullpolyvert", "number of convex-hull polygon vertex indices, all meshes"),
    ("nhullgraph", "number of convex-hull graph entries, all meshes"),
    ("neq", "number of equality constraints"),
    ("npair", "number of explicit contact pairs"),
    ("nexclude", "number of excluded body pairs"),
    ("nmocap", "number of mocap bodies"),
    ("nkey", "number of keyframes"),
    ("nuserdata", "number of user data values in Data (MJCF <size nuserdata>)"),
    ("ntendon", "number of tendons"),
    ("nwrap", "number of tendon path elements (fixed: joints; spatial: sites, geoms, pulleys)"),
    ("nsensor", "number of sensors"),
    ("nsensordata", "number of values all sensors write into d.sensordata"),
    ("nhistory", "number of values in d.history, the delay and sample buffers of actuators "
     "and sensors (0: none)"),
    ("ncam", "number of cameras"),
    ("nmat", "number of materials"),
    ("nM", "number of non-zeros in the sparse lower triangle of M"),
    ("nconmax", "contact capacity of Data (more contacts are dropped, with a warning)"),
    ("njmax", "constraint-row capacity of Data (rows beyond it are dropped, with a warning)"),
)

MODEL_FIELDS = (
    # options (one-element arrays so that Python can change them after compilation)
    ("opt_timestep", "f", (1,), "simulation time step (s)"),
    ("opt_gravity", "f", (3,), "gravitational acceleration (m/s²)"),
    ("opt_magnetic", "f", (3,), "global magnetic flux (what magnetometers read)"),
    ("opt_integrator", "i", (1,), "INT_EULER, INT_RK4, INT_IMPLICIT or INT_IMPLICITFAST"),
    ("opt_cone", "i", (1,), "friction cone: CONE_PYRAMIDAL or CONE_ELLIPTIC"),
    ("opt_solver", "i", (1,), "constraint solver: SOLVER_PGS, _CG, _NEWTON or _IPM"),
    ("opt_iterations", "i", (1,), "maximum solver iterations"),
    ("opt_tolerance", "f", (1,), "solver tolerance on the relative cost improvement"),
    ("opt_impratio", "f", (1,), "ratio of frictional to normal constraint impedance"),
    ("opt_ls_iterations", "i", (1,), "maximum line-search evaluations (Newton, CG)"),
    ("opt_ls_tolerance", "f", (1,), "line-search tolerance, relative to opt_tolerance"),
    ("opt_noslip_iterations", "i", (1,), "noslip post-solver sweeps after the main solver"),
    ("opt_noslip_tolerance", "f", (1,), "noslip tolerance on the relative cost improvement"),
    ("opt_ccd_iterations", "i", (1,),
     "GJK and EPA iterations at most (convex collisions; EPA: at most 1000)"),
    ("opt_ccd_tolerance", "f", (1,), "GJK and EPA tolerance on distance and depth (m)"),
    ("opt_disableflags", "i", (1,), "bit mask of disabled features (see DISABLE_FLAGS)"),
    ("opt_enableflags", "i", (1,), "bit mask of enabled optional features (see ENABLE_FLAGS)"),
    ("opt_disableactuator", "i", (1,),
     "bit mask of disabled actuator groups: bit g disables the actuators of group g (0..30)"),
    ("opt_wind", "f", (3,), "wind velocity (m/s), for the fluid forces"),
    ("opt_density", "f", (1,), "density of the medium (kg/m³), for the fluid forces"),
    ("opt_viscosity", "f", (1,), "viscosity of the medium (Pa·s), for the fluid forces"),
    ("opt_o_margin", "f", (1,), "contact margin of every geom pair with the override flag"),
    ("opt_o_solref", "f", (2,), "contact solref (and solreffriction) with the override flag"),
    ("opt_o_solimp", "f", (5,), "contact solimp with the override flag"),
    ("opt_o_friction", "f", (5,), "contact friction (5 coefficients) with the override flag"),
    ("stat_meaninertia", "f", (1,), "mean diagonal of M at qpos0 (solver scaling)"),
    ("flg_surfacevel", "b", (1,),
     "1 if some geom has a nonzero geom_surfacevel (set by compile and set_const)"),
    ("flg_adhesion", "b", (1,),
     "1 if some geom or pair has a nonzero adhesion (set by compile and set_const)"),
    # bodies
    ("body_parentid", "i", ("nbody",), "id of the parent body (world: 0)"),
    ("body_rootid", "i", ("nbody",), "id of the root body of the kinematic tree"),
    ("body_weldid", "i", ("nbody",), "id of the body this one is welded to (no joint between)"),
    ("body_mocapid", "i", ("nbody",), "mocap id, -1 if not a mocap body"),
    ("body_jntnum", "i", ("nbody",), "number of joints of the body"),
    ("body_jntadr", "i", ("nbody",), "id of the body's first joint, -1 if none"),
    ("body_dofnum", "i", ("nbody",), "number of dofs of the body"),
    ("body_dofadr", "i", ("nbody",), "address of the body's first dof, -1 if none"),
    ("body_geomnum", "i", ("nbody",), "number of geoms of the body"),
    ("body_geomadr", "i", ("nbody",), "id of the body's first geom, -1 if none"),
    ("body_pos", "f", ("nbody", 3), "position offset relative to the parent body"),
    ("body_quat", "f", ("nbody", 4), "orientation offset relative to the parent body"),
    ("body_ipos", "f", ("nbody", 3), "center of mass relative to the body frame"),
    ("body_iquat", "f", ("nbody", 4), "principal axes of inertia relative to the body frame"),
    ("body_sameframe", "i", ("nbody",),
     "SAMEFRAME_BODY / BODYROT / NONE: the inertial frame's offset from the body frame is "
     "taken as none in position and rotation, in rotation only, or computed (set at compile)"),
    ("body_mass", "f", ("nbody",), "mass"),
    ("body_subtreemass", "f", ("nbody",), "mass of the subtree rooted at the body"),
    ("body_inertia", "f", ("nbody", 3), "principal moments of inertia about the com"),
    ("body_gravcomp", "f", ("nbody",), "gravity compensation: fraction of the weight cancelled"),
    ("body_invweight0", "f", ("nbody", 2),
     "mean translational, rotational diagonal of J M⁻¹ Jᵀ of the com at qpos0"),
    # joints
    ("jnt_type", "i", ("njnt",), "JNT_FREE, JNT_BALL, JNT_SLIDE or JNT_HINGE"),
    ("jnt_qposadr", "i", ("njnt",), "start address in qpos"),
    ("jnt_dofadr", "i", ("njnt",), "start address in qvel"),
    ("jnt_bodyid", "i", ("njnt",), "id of the body the joint moves"),
    ("jnt_group", "i", ("njnt",), "group, for visualization"),
    ("jnt_limited", "b", ("njnt",), "1 if the joint has a range limit"),
    ("jnt_solref", "f", ("njnt", 2), "limit constraint solref"),
    ("jnt_solimp", "f", ("njnt", 5), "limit constraint solimp"),
    ("jnt_pos", "f", ("njnt", 3), "anchor position in the body frame"),
    ("jnt_axis", "f", ("njnt", 3), "axis in the body frame (unit)"),
    ("jnt_stiffness", "f", ("njnt",), "spring stiffness toward qpos_spring"),
    ("jnt_range", "f", ("njnt", 2), "joint limits (rad or m)"),
    ("jnt_margin", "f", ("njnt",), "limit becomes active at this distance from the range"),
    ("jnt_actfrclimited", "b", ("njnt",), "1 if qfrc_actuator is clamped to jnt_actfrcrange"),
    ("jnt_actfrcrange", "f", ("njnt", 2), "range of the joint's total actuator force"),
    ("jnt_actgravcomp", "b", ("njnt",),
     "1 if gravity compensation is added to qfrc_actuator, not qfrc_passive"),
    ("jnt_actuatorid", "i", ("njnt",),
     "the one joint actuator with damping or armature; -1: none, -2: several (set_const)"),
    # dofs
    ("dof_bodyid", "i", ("nv",), "id of the body the dof moves"),
    ("dof_jntid", "i", ("nv",), "id of the joint the dof belongs to"),
    ("dof_parentid", "i", ("nv",), "id of the dof's parent dof, -1 if none (tree sparsity)"),
    ("dof_Madr", "i", ("nv",), "address of the diagonal element in qM"),
    ("M_col", "i", ("nM",), "column (dof) of each qM entry: i at dof_Madr[i], then i's ancestors"),
    ("dof_solref", "f", ("nv", 2), "friction-loss constraint solref"),
    ("dof_solimp", "f", ("nv", 5), "friction-loss constraint solimp"),
    ("dof_frictionloss", "f", ("nv",), "dry friction loss (N or N·m)"),
    ("dof_armature", "f", ("nv",), "armature inertia added to M's diagonal"),
    ("dof_damping", "f", ("nv",), "viscous damping (N·s/m or N·m·s/rad)"),
    ("dof_dampingpoly", "f", ("nv", 2),
     "damping polynomial p: force −v (damping + p0 |v| + p1 v²) (MuJoCo 4's mjNPOLY = 2)"),
    ("dof_invweight0", "f", ("nv",), "diagonal of M⁻¹ at qpos0 (for constraint scaling)"),
    ("dof_M0", "f", ("nv",), "diagonal of M at qpos0"),
    ("qpos0", "f", ("nq",), "qpos of the reference configuration"),
    ("qpos_spring", "f", ("nq",), "qpos at which joint springs are at rest"),
    # geoms
    ("geom_type", "i", ("ngeom",), "GEOM_PLANE … GEOM_MESH"),
    ("geom_contype", "i", ("ngeom",), "contact type bitmask"),
    ("geom_conaffinity", "i", ("ngeom",), "contact affinity bitmask"),
    ("geom_condim", "i", ("ngeom",), "contact dimensionality: 1, 3, 4 or 6"),
    ("geom_bodyid", "i", ("ngeom",), "id of the body the geom is attached to"),
    ("geom_dataid", "i", ("ngeom",), "mesh id of a mesh, hfield id of a height field, else -1"),
    ("geom_group", "i", ("ngeom",), "group, for visualization"),
    ("geom_priority", "i", ("ngeom",), "geom with higher priority sets contact parameters"),
    ("geom_solmix", "f", ("ngeom",), "mixing weight of solref/solimp between two geoms"),
    ("geom_solref", "f", ("ngeom", 2), "contact solref"),
    ("geom_solimp", "f", ("ngeom", 5), "contact solimp"),
    ("geom_size", "f", ("ngeom", 3), "type-specific sizes"),
    ("geom_aabb", "f", ("ngeom", 6), "bounding box in the geom frame: center, half-sizes"),
    ("geom_rbound", "f", ("ngeom",), "radius of the bounding sphere (0 for planes)"),
    ("geom_pos", "f", ("ngeom", 3), "position relative to the body frame"),
    ("geom_quat", "f", ("ngeom", 4), "orientation relative to the body frame"),
    ("geom_sameframe", "i", ("ngeom",),
     "SAMEFRAME_*: the geom's frame is taken as its body's or its inertial frame, in position "
     "and rotation or in rotation only, or computed (set at compile)"),
    ("geom_friction", "f", ("ngeom", 3), "sliding, torsional, rolling friction"),
    ("geom_margin", "f", ("ngeom",), "contact detection margin"),
    ("geom_gap", "f", ("ngeom",), "contacts within the margin but beyond gap are inactive"),
    ("geom_rgba", "f", ("ngeom", 4), "color"),
    ("geom_matid", "i", ("ngeom",), "material id, -1: none (its color then is geom_rgba)"),
    ("geom_fluid", "f", ("ngeom", 12),
     "ellipsoid fluid model: 1 if used, fluidcoef (blunt drag, slender drag, angular drag, "
     "Kutta lift, Magnus lift), virtual mass (3), virtual inertia (3)"),
    ("geom_surfacevel", "f", ("ngeom", 6),
     "velocity of the surface as contacts see it, in the geom frame: linear, angular about "
     "the geom origin"),
    ("geom_adhesion", "f", ("ngeom",), "adhesive force of its contacts (pull before breaking)"),
    # sites
    ("site_type", "i", ("nsite",), "geom type used for visualization"),
    ("site_bodyid", "i", ("nsite",), "id of the body the site is attached to"),
    ("site_size", "f", ("nsite", 3), "size, for visualization"),
    ("site_pos", "f", ("nsite", 3), "position relative to the body frame"),
    ("site_quat", "f", ("nsite", 4), "orientation relative to the body frame"),
    ("site_sameframe", "i", ("nsite",), "SAMEFRAME_*, as geom_sameframe"),
    # cameras (MJCF <camera>; poses in d.cam_xpos/cam_xmat, computed by kinematics.camlight)
    ("cam_mode", "i", ("ncam",), "CAM_FIXED, CAM_TRACK, CAM_TRACKCOM, CAM_TARGETBODY(COM)"),
    ("cam_bodyid", "i", ("ncam",), "id of the body the camera is attached to"),
    ("cam_targetbodyid", "i", ("ncam",), "id of the target body, -1: none"),
    ("cam_pos", "f", ("ncam", 3), "position relative to the body frame"),
    ("cam_quat", "f", ("ncam", 4), "orientation relative to the body frame"),
    ("cam_poscom0", "f", ("ncam", 3), "world position relative to the subtree com at qpos0"),
    ("cam_pos0", "f", ("ncam", 3), "world position relative to the body at qpos0"),
    ("cam_mat0", "f", ("ncam", 9), "world orientation at qpos0"),
    ("cam_projection", "i", ("ncam",), "0 perspective, 1 orthographic (mjtProjection)"),
    ("cam_fovy", "f", ("ncam",), "vertical field of view: degrees (perspective), length "
     "(orthographic)"),
    ("cam_ipd", "f", ("ncam",), "inter-pupillary distance"),
    ("cam_resolution", "i", ("ncam", 2), "resolution in pixels: width, height"),
    ("cam_sensorsize", "f", ("ncam", 2), "sensor size (length; single precision as MuJoCo)"),
    ("cam_intrinsic", "f", ("ncam", 4), "focal length x, y and principal point x, y "
     "(length; single precision as MuJoCo)"),
    # materials (MJCF <material>: the color; textures are not loaded)
    ("mat_rgba", "f", ("nmat", 4), "color; its alpha also decides ray visibility"),
    # meshes (vertices in the mesh's inertial frame, as MuJoCo stores them)
    ("mesh_vertadr", "i", ("nmesh",), "first vertex address"),
    ("mesh_vertnum", "i", ("nmesh",), "number of vertices"),
    ("mesh_faceadr", "i", ("nmesh",), "first face address"),
    ("mesh_facenum", "i", ("nmesh",), "number of faces"),
    ("mesh_vert", "f", ("nmeshvert", 3), "vertex positions"),
    ("mesh_face", "i", ("nmeshface", 3), "triangle vertex indices (relative to vertadr)"),
    ("mesh_tangentadr", "i", ("nmesh",), "first row in mesh_tangent (one per vertex), −1 "
     "unless the mesh was given three normals per vertex (MuJoCo's mesh_normalnum = 3 "
     "mesh_vertnum)"),
    ("mesh_tangent", "f", ("nmeshtangent", 6), "taxel tangents 1 and 2 of each vertex, in the "
     "frame of mesh_vert (MuJoCo's mesh_normal, single-precision values)"),
    # height fields (elevations scaled to [0, 1]; row r at y = −size[1] + 2 size[1] r/(nrow−1),
    # column c at x = −size[0] + 2 size[0] c/(ncol−1); the surface is at z = size[2] · data)
    ("hfield_size", "f", ("nhfield", 4), "radius x, radius y, elevation z, base z"),
    ("hfield_nrow", "i", ("nhfield",), "number of grid rows (along y)"),
    ("hfield_ncol", "i", ("nhfield",), "number of grid columns (along x)"),
    ("hfield_adr", "i", ("nhfield",), "first address in hfield_data"),
    ("hfield_data", "f", ("nhfielddata",),
     "elevations in [0, 1], row-major from row 0 (single-precision values, as MuJoCo's)"),
    # convex hulls of meshes, for collision (vertices in the same frame as mesh_vert)
    ("mesh_hullvertadr", "i", ("nmesh",), "first convex-hull vertex address"),
    ("mesh_hullvertnum", "i", ("nmesh",), "number of convex-hull vertices"),
    ("mesh_hullpolyadr", "i", ("nmesh",), "first convex-hull polygon address"),
    ("mesh_hullpolynum", "i", ("nmesh",), "number of convex-hull polygons"),
    ("hull_vert", "f", ("nhullvert", 3), "convex-hull vertex positions"),
    ("hullpoly_vertadr", "i", ("nhullpoly",), "first address of the polygon in hullpoly_vert"),
    ("hullpoly_vertnum", "i", ("nhullpoly",), "number of polygon vertices"),
    ("hullpoly_normal", "f", ("nhullpoly", 3), "outward unit normal of the polygon"),
    ("hullpoly_vert", "i", ("nhullpolyvert",),
     "polygon vertex loops, counter-clockwise about the normal (relative to hullvertadr)"),
    ("mesh_hullgraphadr", "i", ("nmesh",),
     "first address of the hull's graph in hull_graph (−1: none, a hull of few vertices)"),
    ("hull_graph", "i", ("nhullgraph",),
     "hull graphs: direction-grid seeds, vertex neighbours and vertex polygons "
     "(collision.hull.hull_graph)"),
    # actuators
    ("actuator_trntype", "i", ("nactuator",),
     "transmission type: TRN_JOINT, TRN_JOINTINPARENT, TRN_SLIDERCRANK, TRN_SITE, TRN_BODY"),
    ("actuator_dyntype", "i", ("nactuator",),
     "activation dynamics type: DYN_NONE, DYN_INTEGRATOR, DYN_FILTER, DYN_FILTEREXACT, "
     "DYN_MUSCLE, DYN_DCMOTOR, DYN_PID"),
    ("actuator_gaintype", "i", ("nactuator",),
     "gain type: GAIN_FIXED, GAIN_AFFINE, GAIN_MUSCLE, GAIN_DCMOTOR, GAIN_PID"),
    ("actuator_biastype", "i", ("nactuator",),
     "bias type: BIAS_NONE, BIAS_AFFINE, BIAS_MUSCLE, BIAS_DCMOTOR"),
    ("actuator_ctrladr", "i", ("nactuator",), "address of the actuator's first control in ctrl"),
    ("actuator_ctrlnum", "i", ("nactuator",), "number of controls the actuator reads"),
    ("actuator_ctrlspec", "i", ("nactuator",),
     "input signature of pid and dcmotor actuators: bits INPUT_POS 1, INPUT_VEL 2, "
     "INPUT_FF 4, INPUT_VOLTAGE 8, INPUT_NONE 16; of so3 its chart (CHART_EXPMAP 1, "
     "CHART_QUAT 2); of the others their one input"),
    ("actuator_outadr", "i", ("nactuator",),
     "address of the actuator's first output in actuator_force/length/velocity/moment"),
    ("actuator_outnum", "i", ("nactuator",), "number of force outputs (3 for so3, else 1)"),
    ("actuator_trnid", "i", ("nactuator", 2),
     "transmission target ids: joint, tendon, site, crank site or body; refsite or slider "
     "site (-1: none)"),
    ("actuator_ctrllimited", "b", ("nu",),
     "1 if ctrl is clamped to ctrlrange (one per control)"),
    ("actuator_forcelimited", "b", ("nactuator",), "1 if the force is clamped to forcerange"),
    ("actuator_gainprm", "f", ("nactuator", 10), "gain parameters"),
    ("actuator_biasprm", "f", ("nactuator", 10), "bias parameters"),
    ("actuator_dynprm", "f", ("nactuator", 10), "activation dynamics parameters"),
    ("actuator_ctrlrange", "f", ("nu", 2), "range of controls (one per control)"),
    ("actuator_forcerange", "f", ("nactuator", 2), "range of forces"),
    ("actuator_gear", "f", ("nout", 6), "scale of length and transmitted force"),
    ("actuator_group", "i", ("nactuator",),
     "group, for disabling (opt_disableactuator) and display"),
    ("actuator_damping", "f", ("nactuator",),
     "damping the actuator adds to its joint or tendon, times gear₀² (mj_actuatorDamping)"),
    ("actuator_dampingpoly", "f", ("nactuator", 2),
     "damping polynomial (p0, p1) the actuator adds to its joint or tendon, times gear₀²"),
    ("actuator_armature", "f", ("nactuator",),
     "armature the actuator adds to its joint or tendon, times gear₀² (mj_actuatorArmature)"),
    # activation state (MuJoCo's layout: actuator i owns act[actadr : actadr + actnum])
    ("actuator_actadr", "i", ("nactuator",), "first activation address; -1: stateless"),
    ("actuator_actnum", "i", ("nactuator",),
     "number of activation variables (0 or 1; pid: slew and integral states, 0 to 2)"),
    ("actuator_actlimited", "b", ("nactuator",),
     "1 if act is clamped to actrange when integrated"),
    ("actuator_actrange", "f", ("nactuator", 2), "range of activations"),
    ("actuator_actearly", "b", ("nactuator",), "1 if the force uses the next step's activation"),
    ("actuator_lengthrange", "f", ("nout", 2), "feasible actuator length range (muscles)"),
    ("actuator_acc0", "f", ("nout",),
     "norm of the joint acceleration of a unit force at qpos0"),
    ("actuator_cranklength", "f", ("nactuator",),
     "crank length of a slider-crank transmission"),
    # control history (MJCF nsample, interp, delay; see jointspace.history)
    ("actuator_history", "i", ("nactuator", 2),
     "history buffer: [nsample, interp] (interp 0 zero-order hold, 1 linear, 2 cubic)"),
    ("actuator_historyadr", "i", ("nactuator",),
     "address of the buffer in d.history; -1: none"),
    ("actuator_delay", "f", ("nactuator",), "delay (s) of the control the force uses; 0: none"),
    # equality constraints
    ("eq_type", "i", ("neq",), "EQ_CONNECT, EQ_WELD, EQ_JOINT or EQ_TENDON"),
    ("eq_obj1id", "i", ("neq",), "id of object 1 (body, site, joint or tendon)"),
    ("eq_obj2id", "i", ("neq",), "id of object 2 (body, site, joint or tendon; -1: none)"),
    ("eq_objtype", "i", ("neq",), "type of both objects of a connect or weld: OBJ_BODY or "
     "OBJ_SITE; 0 for joint and tendon couplings, as in MuJoCo"),
    ("eq_active0", "b", ("neq",), "initial activation"),
    ("eq_solref", "f", ("neq", 2), "constraint solref"),
    ("eq_solimp", "f", ("neq", 5), "constraint solimp"),
    ("eq_data", "f", ("neq", 12), "type-specific data (anchors, relpose, polycoef; mjNEQDATA)"),
    # explicit contact pairs and exclusions
    ("pair_dim", "i", ("npair",), "contact dimensionality"),
    ("pair_geom1", "i", ("npair",), "id of geom 1"),
    ("pair_geom2", "i", ("npair",), "id of geom 2"),
    ("pair_solref", "f", ("npair", 2), "solref for the normal direction"),
    ("pair_solreffriction", "f", ("npair", 2), "solref for frictional directions"),
    ("pair_solimp", "f", ("npair", 5), "solimp"),
    ("pair_margin", "f", ("npair",), "detection margin"),
    ("pair_gap", "f", ("npair",), "inclusion gap"),
    ("pair_friction", "f", ("npair", 5), "tangent1, 2, spin, roll1, 2"),
    ("pair_adhesion", "f", ("npair",), "adhesive force of its contacts (replaces the geoms')"),
    ("exclude_signature", "i", ("nexclude",), "body1 << 16 + body2, body1 < body2"),
    # tendons (MJCF <tendon>; see jointspace.tendon)
    ("tendon_adr", "i", ("ntendon",), "address of the tendon's first path element in wrap_*"),
    ("tendon_num", "i", ("ntendon",), "number of path elements"),
    ("tendon_limited", "b", ("ntendon",), "1 if the length is limited to tendon_range"),
    ("tendon_solref_lim", "f", ("ntendon", 2), "limit constraint solref"),
    ("tendon_solimp_lim", "f", ("ntendon", 5), "limit constraint solimp"),
    ("tendon_solref_fri", "f", ("ntendon", 2), "friction-loss constraint solref"),
    ("tendon_solimp_fri", "f", ("ntendon", 5), "friction-loss constraint solimp"),
    ("tendon_range", "f", ("ntendon", 2), "length limits"),
    ("tendon_margin", "f", ("ntendon",), "limit becomes active at this distance from the range"),
    ("tendon_stiffness", "f", ("ntendon",), "spring stiffness"),
    ("tendon_damping", "f", ("ntendon",), "damping (N·s/m)"),
    ("tendon_dampingpoly", "f", ("ntendon", 2),
     "damping polynomial p: force −v (damping + p0 |v| + p1 v²) along the tendon"),
    ("tendon_armature", "f", ("ntendon",), "inertia of the tendon's motion, added to M"),
    ("tendon_frictionloss", "f", ("ntendon",), "dry friction loss (N)"),
    ("tendon_actfrclimited", "b", ("ntendon",),
     "1 if the total force of the tendon's actuators is clamped to tendon_actfrcrange"),
    ("tendon_actfrcrange", "f", ("ntendon", 2),
     "range of the total force of the tendon's actuators (their forces scaled into it)"),
    ("tendon_actuatorid", "i", ("ntendon",),
     "the one tendon actuator with damping or armature; -1: none, -2: several (set_const)"),
    ("tendon_lengthspring", "f", ("ntendon", 2),
     "spring rest length: a dead band [lower, upper] with no spring force inside"),
    ("tendon_length0", "f", ("ntendon",), "length at qpos0"),
    ("tendon_invweight0", "f", ("ntendon",), "J M⁻¹ Jᵀ of the tendon at qpos0"),
    ("wrap_type", "i", ("nwrap",), "WRAP_JOINT, WRAP_PULLEY, WRAP_SITE, _SPHERE, _CYLINDER"),
    ("wrap_objid", "i", ("nwrap",), "joint, site or geom id; -1 for a pulley"),
    ("wrap_prm", "f", ("nwrap",), "joint coefficient, pulley divisor or sidesite id"),
    # sensors (MJCF <sensor>; see jointspace.sensor)
    ("sensor_type", "i", ("nsensor",), "sensor type (SENS_*, MuJoCo's mjtSensor)"),
    ("sensor_datatype", "i", ("nsensor",), "real, positive, axis or quaternion (mjtDataType)"),
    ("sensor_needstage", "i", ("nsensor",), "stage the sensor needs: pos 1, vel 2, acc 3"),
    ("sensor_objtype", "i", ("nsensor",), "type of the sensed object (mjtObj)"),
    ("sensor_objid", "i", ("nsensor",), "id of the sensed object, -1 if none"),
    ("sensor_reftype", "i", ("nsensor",), "type of the reference frame's object (mjtObj)"),
    ("sensor_refid", "i", ("nsensor",), "id of the reference frame's object, -1: world"),
    ("sensor_dim", "i", ("nsensor",), "number of values"),
    ("sensor_adr", "i", ("nsensor",), "address of the first value in sensordata"),
    ("sensor_cutoff", "f", ("nsensor",), "clip |value| to this when positive"),
    ("sensor_noise", "f", ("nsensor",), "noise standard deviation (stored, never added)"),
    ("sensor_intprm", "i", ("nsensor", 3),
     "contact sensor: data fields bitmask, reduce (0 none, 1 mindist, 2 maxforce, 3 "
     "netforce), num; rangefinder: data fields bitmask (MuJoCo's sensor_intprm)"),
    # sensor history (MJCF nsample, interp, delay, interval; see jointspace.history)
    ("sensor_history", "i", ("nsensor", 2),
     "history buffer: [nsample, interp] (interp 0 zero-order hold, 1 linear, 2 cubic)"),
    ("sensor_historyadr", "i", ("nsensor",), "address of the buffer in d.history; -1: none"),
    ("sensor_delay", "f", ("nsensor",), "delay (s) of the value in sensordata; 0: none"),
    ("sensor_interval", "f", ("nsensor", 2),
     "[period, phase] (s): computed every period (0: every step); phase sets the first time"),
    # keyframes (MJCF <keyframe><key>): what reset(m, d, key) sets
    ("key_time", "f", ("nkey",), "time"),
    ("key_qpos", "f", ("nkey", "nq"), "position"),
    ("key_qvel", "f", ("nkey", "nv"), "velocity"),
    ("key_act", "f", ("nkey", "na"), "activation"),
    ("key_ctrl", "f", ("nkey", "nu"), "control"),
    ("key_mpos", "f", ("nkey", ("nmocap", 3, 0)), "mocap body positions, 3 per mocap body"),
    ("key_mquat", "f", ("nkey", ("nmocap", 4, 0)), "mocap body orientations, 4 per mocap body"),
)

# regions of Data.scratch_small, one per stage that needs a fixed-size buffer (no two of
# these stages run inside one another, but each keeps its own region all the same)
SMALL_CONE = 0  # the inverse's cone projection: y (6), x (6), mu (5)
SMALL_TRANSMISSION = 17  # actuator transmission: quat (4), axis (3), wrench (6)
SMALL_SPRING = 30  # ball and free joint springs: the displacement (6)
SMALL_WRAP = 36  # tendon wrapping: the two tangent points (6)
SMALL_ENERGY = 42  # the potential energy's ball and free joint displacement (6)
SMALL_SOLVE = 48  # the solve's empty cone-Hessian placeholder (1)
SMALL_EQUALITY = 49  # equality rows: anchors (2 × 3), quaternions (4 × 4), axis (3)
SMALL_JDOTV = 74  # the equality rows' J̇ qvel: 6 three-vectors, 5 quaternions, 2 three-vectors
# and 4 quaternions (60)

DATA_FIELDS = (
    # state and inputs
    ("time", "f", (1,), "simulation time (s)"),
    ("qpos", "f", ("nq",), "position"),
    ("qvel", "f", ("nv",), "velocity"),
    ("qacc", "f", ("nv",), "acceleration"),
    ("ctrl", "f", ("nu",), "control"),
    ("qfrc_applied", "f", ("nv",), "applied generalized force"),
    ("xfrc_applied", "f", ("nbody", 6), "applied Cartesian force/torque at the com (world)"),
    ("act", "f", ("na",), "actuator activation"),
    ("mocap_pos", "f", ("nmocap", 3), "positions of mocap bodies (indexed by body_mocapid)"),
    ("mocap_quat", "f", ("nmocap", 4), "orientations of mocap bodies"),
    ("userdata", "f", ("nuserdata",), "user data: never read or written by the pipeline"),
    ("eq_active", "b", ("neq",), "1 if the equality constraint is active (from eq_active0)"),
    ("history", "f", ("nhistory",),
     "delay and sample buffers, per actuator or sensor with nsample > 0 at its historyadr: "
     "[user, cursor, times (nsample), values (nsample · dim)] (see jointspace.history)"),
    # position dependent: kinematics
    ("xpos", "f", ("nbody", 3), "Cartesian position of the body frame"),
    ("xquat", "f", ("nbody", 4), "Cartesian orientation of the body frame"),
    ("xmat", "f", ("nbody", 9), "Cartesian orientation of the body frame (row-major)"),
    ("xipos", "f", ("nbody", 3), "Cartesian position of the body com"),
    ("ximat", "f", ("nbody", 9), "Cartesian orientation of the body inertia frame"),
    ("xanchor", "f", ("njnt", 3), "Cartesian position of the joint anchor"),
    ("xaxis", "f", ("njnt", 3), "Cartesian joint axis"),
    ("geom_xpos", "f", ("ngeom", 3), "Cartesian geom position"),
    ("geom_xmat", "f", ("ngeom", 9), "Cartesian geom orientation"),
    ("site_xpos", "f", ("nsite", 3), "Cartesian site position"),
    ("site_xmat", "f", ("nsite", 9), "Cartesian site orientation"),
    ("cam_xpos", "f", ("ncam", 3), "Cartesian camera position (after com_pos: mj_camlight)"),
    ("cam_xmat", "f", ("ncam", 9), "Cartesian camera orientation"),
    # position dependent: tendons (jointspace.tendon)
    ("ten_length", "f", ("ntendon",), "tendon lengths"),
    ("ten_J", "f", ("ntendon", "nv"), "tendon Jacobians (dense)"),
    ("ten_wrapadr", "i", ("ntendon",), "start address of the tendon's path in wrap_obj"),
    ("ten_wrapnum", "i", ("ntendon",), "number of path points of the tendon"),
    ("wrap_obj", "i", (("nwrap", 2, 0),),
     "geom id of each path point, -1: site, -2: pulley"),
    ("wrap_xpos", "f", (("nwrap", 2, 0), 3), "Cartesian path points"),
    # position dependent: com_pos
    ("subtree_com", "f", ("nbody", 3), "center of mass of each subtree"),
    ("cinert", "f", ("nbody", 10), "com-based body inertia and mass (MuJoCo layout)"),
    ("cdof", "f", ("nv", 6), "com-based motion axis of each dof (rot : lin)"),
    # position dependent: collision (the first ncon rows of contact_* are valid)
    ("ncon", "i", (1,), "number of contacts"),
    ("contact_dist", "f", ("nconmax",), "signed distance between the surfaces (< 0: penetration)"),
    ("contact_pos", "f", ("nconmax", 3), "contact point, midway between the surfaces"),
    ("contact_frame", "f", ("nconmax", 9), "rows: normal (geom 1 to geom 2), tangent, tangent"),
    ("contact_geom", "i", ("nconmax", 2), "ids of the two geoms"),
    ("contact_dim", "i", ("nconmax",), "contact dimensionality: 1, 3, 4 or 6"),
    ("contact_friction", "f", ("nconmax", 5), "tangent1, tangent2, spin, roll1, roll2"),
    ("contact_solref", "f", ("nconmax", 2), "solref for the normal direction"),
    ("contact_solreffriction", "f", ("nconmax", 2), "solref for frictional directions (0: same)"),
    ("contact_solimp", "f", ("nconmax", 5), "solimp"),
    ("contact_includemargin", "f", ("nconmax",), "the contact is active when dist < this"),
    ("contact_gap", "f", ("nconmax",), "detected up to includemargin + gap, inactive beyond"),
    ("contact_exclude", "i", ("nconmax",),
     "1 if inactive (dist >= includemargin and no adhesion), else 0"),
    ("contact_adhesion", "f", ("nconmax",), "adhesive force along the normal"),
    ("contact_surfacevel", "f", ("nconmax", 3),
     "surface velocity of geom 2 minus geom 1 in the contact frame: tangent1, tangent2, spin "
     "(set when flg_surfacevel)"),
    ("collision_warning", "i", (2, 2),
     "contact buffer full (count, contacts dropped), bad geom pose (count, geom id)"),
    # position dependent: crba and factor_m
    ("crb", "f", ("nbody", 10), "com-based composite inertia and mass"),
    ("qM", "f", ("nM",), "joint-space inertia, sparse lower triangle (MuJoCo layout)"),
    ("qLD", "f", ("nM",), "L'DL factor of qM, sparse (D on the diagonal)"),
    ("qLDiagInv", "f", ("nv",), "1 / diag(D)"),
    ("qH", "f", ("nM",), "L'DL factor of M + h·(damping − ∂qfrc_actuator/∂v) (implicit steps)"),
    ("qHDiagInv", "f", ("nv",), "1 / diag(D) of qH"),
    # velocity dependent
    ("ten_velocity", "f", ("ntendon",), "tendon velocities ten_J qvel"),
    ("cvel", "f", ("nbody", 6), "com-based velocity (rot : lin)"),
    ("cdof_dot", "f", ("nv", 6), "time derivative of cdof (rot : lin)"),
    ("qfrc_bias", "f", ("nv",), "C(q, v): Coriolis, centrifugal and gravitational force"),
    ("qfrc_passive", "f", ("nv",),
     "passive force: springs, damping, fluid, gravity compensation (not via actuators), "
     "contact adhesion"),
    ("qfrc_spring", "f", ("nv",), "passive spring force"),
    ("qfrc_damper", "f", ("nv",), "passive damper force"),
    ("qfrc_gravcomp", "f", ("nv",), "gravity compensation force (body_gravcomp)"),
    ("qfrc_fluid", "f", ("nv",), "fluid force (opt_density, opt_viscosity, opt_wind)"),
    ("qfrc_adhesion", "f", ("nv",),
     "contact adhesion: the attraction along the normals of adhesive contacts"),
    ("act_dot", "f", ("na",), "time derivative of the activation"),
    ("actuator_length", "f", ("nout",), "actuator length"),
    ("actuator_velocity", "f", ("nout",), "actuator velocity"),
    ("actuator_force", "f", ("nout",), "actuator force in actuation space"),
    ("actuator_moment", "f", ("nout", "nv"), "actuator moment arms (dense)"),
    ("qfrc_actuator", "f", ("nv",), "actuator force in joint space"),
    ("qfrc_smooth", "f", ("nv",), "net unconstrained force"),
    ("qacc_smooth", "f", ("nv",), "unconstrained acceleration"),
    ("qfrc_constraint", "f", ("nv",), "constraint force"),
    ("qfrc_inverse", "f", ("nv",), "net external force; should equal applied+actuator+constraint"),
    # constraint stage (make_constraint, solve): rows 0 … nefc−1 of efc_* are valid
    ("ne", "i", (1,), "number of equality rows"),
    ("nf", "i", (1,), "number of friction-loss rows"),
    ("nl", "i", (1,), "number of limit rows"),
    ("nefc", "i", (1,), "number of constraint rows (≤ njmax)"),
    ("efc_type", "i", ("njmax",), "row type, jointspace.constraint.CNSTR_*"),
    ("efc_id", "i", ("njmax",), "id of the equality, dof, joint or contact of the row"),
    ("efc_island", "i", ("njmax",), "island of the row (solver.island; 0 with islands off)"),
    ("nisland", "i", (1,), "number of constraint islands of the last solve"),
    ("efc_J", "f", ("njmax", "nv"), "constraint Jacobian (dense)"),
    ("efc_J_rownnz", "i", ("njmax",), "number of structurally nonzero columns of each row"),
    ("efc_J_colind", "i", ("njmax", "nv"),
     "row i's structurally nonzero columns, increasing, in colind[i, :rownnz[i]]; efc_J is zero "
     "in every other column (rows < njmax; make_constraint keeps it so)"),
    ("efc_pos", "f", ("njmax",), "constraint position (violation, distance)"),
    ("efc_margin", "f", ("njmax",), "inclusion margin"),
    ("efc_frictionloss", "f", ("njmax",), "friction-loss bound (friction rows)"),
    ("efc_diagApprox", "f", ("njmax",),
     "approximate diagonal of J M⁻¹ Jᵀ, adjusted so that R = (1−d)/d · it (MuJoCo efc_diagA)"),
    ("efc_R", "f", ("njmax",), "regularizer (softness)"),
    ("efc_D", "f", ("njmax",), "1 / efc_R"),
    ("efc_KBIP", "f", ("njmax", 4), "stiffness, damping, impedance, impedance derivative"),
    ("efc_vel", "f", ("njmax",), "constraint velocity J qvel"),
    ("efc_aref", "f", ("njmax",), "reference acceleration"),
    ("efc_b", "f", ("njmax",), "J qacc_smooth − aref"),
    ("efc_force", "f", ("njmax",), "constraint force in constraint space"),
    ("efc_state", "i", ("njmax",), "row state at the solution, jointspace.constraint.STATE_*"),
    ("qacc_warmstart", "f", ("nv",),
     "acceleration the solver starts from (saved by each step, as mj_advance does)"),
    ("solver_niter", "i", (1,), "solver iterations of the last solve"),
    ("solver_improvement", "f", (200,), "per iteration: scaled cost improvement"),
    ("solver_gradient", "f", (200,), "per iteration: scaled gradient norm (primal solvers)"),
    ("solver_lineslope", "f", (200,), "per iteration: scaled line-search slope (primal solvers)"),
    ("solver_cost", "f", (200,), "per iteration: cost (primal: c(qacc); dual: ½fᵀARf + fᵀb; "
     "PGS: after its last sweep only, NaN before)"),
    ("solver_nactive", "i", (200,), "per iteration: number of active rows"),
    ("solver_nchange", "i", (200,), "per iteration: number of rows that changed state"),
    ("solver_neval", "i", (200,), "per iteration: line-search evaluations"),
    ("solver_nupdate", "i", (200,), "per iteration: rows in the Hessian update (Newton)"),
    ("solver_fwdinv", "f", (2,),
     "forward vs inverse: |Δ qfrc_constraint|, |qfrc_applied + actuator + Jᵀxfrc − qfrc_inverse|"),
    # acceleration dependent (RNEA)
    ("cacc", "f", ("nbody", 6), "com-based acceleration (rot : lin)"),
    ("cfrc_int", "f", ("nbody", 6), "com-based interaction force with the parent"),
    ("cfrc_ext", "f", ("nbody", 6), "com-based external force on the body"),
    ("subtree_linvel", "f", ("nbody", 3), "linear velocity of the subtree com (sensors)"),
    ("subtree_angmom", "f", ("nbody", 3), "angular momentum of the subtree about its com"),
    ("sensordata", "f", ("nsensordata",), "sensor values (see jointspace.sensor)"),
    ("energy", "f", (2,), "potential and kinetic energy (with the energy flag, as MuJoCo; else 0)"),
    ("warning", "i", (3, 2), "bad qpos, qvel, qacc: (count, index of the first bad element)"),
    ("warning_cnstrfull", "i", (2,), "rows beyond njmax: (count of such calls, rows requested)"),
    # scratch for compiled algorithms (no meaning between calls)
    ("scratch_nv", "f", ("nv", 8), "per-dof scratch vectors"),
    ("scratch_body", "f", ("nbody", 36), "per-body scratch (6x6 matrices)"),
    ("scratch_vv", "f", ("nv", "nv"), "dense nv×nv scratch"),
    ("scratch_body_nv", "f", ("nbody", 6, "nv"), "per-body 6×nv scratch (minv's F and P)"),
    ("scratch_efc", "f", ("njmax",),
     "per-row scratch (the inverse's and the solve's J qacc − aref)"),
    ("scratch_v", "f", (4, "nv"),
     "per-stage nv vectors: [0] energy_vel's M qvel, [1] the solve's M qacc_warmstart, "
     "[2] Euler's qacc, [3] diag_exact's row"),
    ("scratch_small", "f", (134,),
     "fixed-size scratch of the stages, in the regions SMALL_CONE, SMALL_TRANSMISSION, "
     "SMALL_SPRING, SMALL_WRAP, SMALL_ENERGY, SMALL_SOLVE, SMALL_EQUALITY, SMALL_JDOTV"),
    ("scratch_small_l", "l", (8,),
     "fixed-size integer scratch of the stages: make_constraint's row counts [0, 2)"),
    ("scratch_solve_f", "f", (("nsolve", 7, 0),),
     "the solve stage: the cones' friction coefficients (nsolve) and parameters (5 nsolve), "
     "the islands' scales (nsolve); nsolve = min(njmax, 64 + 8 nv) rows, more rows are "
     "given arrays of their own"),
    ("scratch_solve_l", "l", ((("nsolve", 6), ("nv", 5), 4),),
     "the solve stage: the island lists (5 nsolve + nv) and efc_islands' trees "
     "(4 max(nv, 1) + nsolve)"),
    ("scratch_solve_i", "i", ("nsolve",), "the solve stage: the cones' dimensions"),
    ("scratch_newton_f", "f",
     ((("nsolve", 49), ("nv", 8), ("nv", "nv", 3), ("nM", 2), 67),),
     "Newton's floats for up to nsolve rows (solver.newton: vectors, row polynomials, cone "
     "Hessians, the dense Hessian, its factor and the low-rank blocks, the tree factor)"),
    ("scratch_newton_i", "i",
     ((("nsolve", "nv", 2), ("nsolve", 13), ("nv", 2), 1),),
     "Newton's integers for up to nsolve rows (row patterns and positions, island lists, "
     "the low-rank groups)"),
    ("scratch_collision_f", "f", (("ngeom", 13, 660),),
     "collision: geom boxes and sweep values (13 per geom), the contact buffer, box polygons, "
     "contact parameters and the convex placeholder (649)"),
    ("scratch_collision_l", "l", (("ngeom", 12, 143),),
     "collision: candidate pairs (2 max(64, 4 ngeom)), geom orders (4 ngeom), the convex "
     "placeholder (15)"),
    ("scratch_pairs", "l", (("ngeom", 48, 64),),
     "collision: pair table and sort keys, 9 per candidate pair + 2 nbody + 1 (a larger need "
     "is allocated for the call)"),
)

_DTYPES = {"f": np.float64, "i": np.int32, "b": np.uint8, "l": np.int64}

# Integer fields of Model that Python may change after compiling: bit masks and flags that
# select, never index or count. The other integer fields are the model's structure (ids,
# addresses, counts, types, and the options kept in range by `m.opt`): read-only.
MODEL_WRITABLE_INTS = frozenset((
    "opt_disableflags", "geom_contype", "geom_conaffinity", "geom_group",
    "geom_priority", "jnt_group", "jnt_limited", "jnt_actfrclimited", "jnt_actgravcomp",
    "actuator_ctrllimited", "actuator_group", "opt_disableactuator",
    "actuator_forcelimited", "actuator_actlimited", "actuator_actearly", "eq_active0",
    "tendon_limited", "flg_surfacevel", "flg_adhesion"))
# Fields of Model derived from its parameters by `set_const` (MuJoCo's mj_setConst):
# read-only, so that a changed parameter is followed by `js.set_const(m)`, not by a
# hand-made value that compiled code would divide by.
MODEL_DERIVED = frozenset(("body_subtreemass", "body_invweight0", "dof_invweight0", "dof_M0",
                           "stat_meaninertia", "tendon_length0", "tendon_invweight0",
                           "actuator_acc0"))
# Integer fields of Data that are inputs; every other one is computed by compiled code.
DATA_WRITABLE_INTS = frozenset(("eq_active",))


class _Buffers:
    """The arrays compiled code holds (the struct borrows them); never exposed as such."""


def _expose(obj, own, fields, writable_ints):
    """Set obj's field attributes to views of the buffers in `own` (see the module doc)."""
    for name, dt, _, _ in fields:
        key = "_time" if name == "time" else name
        v = getattr(own, key).view()
        if (dt != "f" and name not in writable_ints) or name in MODEL_DERIVED:
            v.flags.writeable = False
        obj.__dict__[key] = v


def data_sizes(model):
    """The sizes Data's fields are shaped by: the model's, and nsolve.

    nsolve = min(njmax, 64 + 8 nv): the rows the solve stage's and Newton's scratch
    (scratch_solve_*, scratch_newton_*) hold, so that a solve of that many rows allocates
    nothing. njmax (from MuJoCo's memory rule) is often hundreds of times the rows a step
    has; a solve with more rows than nsolve gets arrays of its own.
    """
    sizes = model.sizes
    sizes["nsolve"] = min(sizes["njmax"], 64 + 8 * sizes["nv"])
    return sizes


def _resolve_dim(s, sizes):
    """One dimension of a field's shape from the sizes.

    An int; a size's name; (name, a, b) for a·size + b; or ((name, a), (name, name, b),
    …, c) for a sum of multiples of sizes and of products of two sizes, plus c.
    """
    if isinstance(s, str):
        return sizes[s]
    if isinstance(s, tuple):
        if isinstance(s[0], tuple):
            return sum(math.prod(sizes[n] for n in t[:-1]) * t[-1] for t in s[:-1]) + s[-1]
        return s[1] * sizes[s[0]] + s[2]
    return s


def _resolve_shape(shape, sizes):
    return tuple(_resolve_dim(s, sizes) for s in shape)


def _name_error(kind, name, names):
    close = difflib.get_close_matches(str(name), [n for n in names if n], n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return KeyError(f"no {kind} named {name!r} in the model{hint}")


class Option:
    """Simulation options, a view on the model's `opt_*` arrays.

    Attributes:
        timestep: time step (s).
        gravity: (3,) gravitational acceleration.
        wind: (3,) wind velocity, density and viscosity: the medium of the fluid forces.
        magnetic: (3,) the magnetic flux magnetometers read.
        o_margin, o_solref (2,), o_solimp (5,), o_friction (5,): every contact's margin and
            parameters while the "override" enable flag is set (enableflags bit 0).
        integrator: "Euler", "RK4", "implicit" or "implicitfast".
        cone: "pyramidal" or "elliptic".
        solver: "PGS", "CG", "Newton" or "IPM".
        iterations: maximum solver iterations.
        tolerance: solver tolerance.
        impratio: frictional-to-normal impedance ratio.
        ccd_iterations, ccd_tolerance: where MuJoCo's GJK and EPA stop (convex collisions).
    """

    _ENUMS = {
        "integrator": ("Euler", "RK4", "implicit", "implicitfast"),
        "cone": ("pyramidal", "elliptic"),
        "solver": ("PGS", "CG", "Newton", "IPM"),
    }

    def __init__(self, model):
        object.__setattr__(self, "_m", model)

    def __getattr__(self, name):
        arr = getattr(self._m, "opt_" + name, None)
        if arr is None:
            raise AttributeError(f"Option has no field {name!r}")
        if arr.shape[0] > 1:  # gravity, wind, magnetic, o_solref, o_solimp, o_friction
            return arr
        if name in self._ENUMS:
            return self._ENUMS[name][int(arr[0])]
        return arr[0].item()

    def __setattr__(self, name, value):
        arr = getattr(self._m._own, "opt_" + name, None)
        if arr is None:
            raise AttributeError(f"Option has no field {name!r}")
        if np.iscomplexobj(value):
            raise TypeError(f"option {name}: the value is complex; options are real numbers")
        if name in self._ENUMS:
            choices = self._ENUMS[name]
            if value not in choices:
                raise ValueError(f"option {name} must be one of {choices}, got {value!r}")
            arr[0] = choices.index(value)
        elif arr.shape[0] > 1:
            g = np.asarray(value, dtype=np.float64)
            if g.size != arr.shape[0]:
                raise ValueError(f"option {name} takes {arr.shape[0]} numbers, got {value!r}")
            g = g.reshape(arr.shape)
            if not np.isfinite(g).all():
                raise ValueError(f"option {name} must be finite, got {value!r}")
            arr[:] = g
        elif arr.dtype.kind == "i":
            if (not isinstance(value, (int, np.integer)) or isinstance(value, bool)
                    or not 0 <= value < 2**31):
                raise ValueError(f"option {name} must be an integer in [0, 2**31), "
                                 f"got {value!r}")
            if name == "enableflags" and value & ENBL_REFUSED:
                on = [f for f in ENABLE_REFUSED if value & (1 << ENABLE_FLAGS.index(f))]
                raise ValueError(
                    f"option enableflags: the {', '.join(on)} flag(s) (MuJoCo 4.0: "
                    f"{', '.join(ENABLE_REFUSED[f] for f in on)}) are not computed by "
                    "jointspace; clear their bits")
            arr[0] = value
        else:
            v = float(value)
            if name == "timestep" and not (v > 0 and np.isfinite(v)):
                raise ValueError(f"option timestep must be positive and finite, got {value!r}")
            if not v >= 0 or not np.isfinite(v):
                raise ValueError(f"option {name} must be finite and non-negative, "
                                 f"got {value!r}")
            arr[0] = v

    def __repr__(self):
        keys = ("timestep", "gravity", "integrator", "cone", "solver", "iterations",
                "tolerance", "impratio")
        return "Option(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in keys) + ")"


def _assign_field(obj, name, value):
    """obj.name = value as an in-place copy into the field's buffer (NumPy broadcasting).

    Compiled code holds the buffers of Model and Data without a reference of its own
    (`jointspace._numba.structs`), so a field is never rebound: as in MuJoCo's bindings,
    `d.qpos = q` writes q into d.qpos.
    """
    arr = obj.__dict__[name]
    if value is arr:
        return
    if not arr.flags.writeable:
        label = name.lstrip("_")
        who = f"{type(obj).__name__}.{label} is read-only"
        if label in MODEL_DERIVED:
            why = ("it is derived from the model's parameters; change those and call "
                   "jointspace.set_const(m)")
        elif isinstance(obj, Data):
            why = "compiled code computes it and uses it as a count, id or address"
        else:
            why = ("compiled code uses it as a count, id, address or type; change the "
                   "ModelSpec (or the MJCF/URDF) and compile again")
        raise AttributeError(f"{who}: {why}")
    if np.iscomplexobj(value) and arr.dtype.kind != "c":
        raise TypeError(f"{type(obj).__name__}.{name.lstrip('_')}: cannot write complex "
                        "values into a real field (pass value.real if the imaginary part "
                        "is zero)")
    try:
        arr[...] = value
    except (TypeError, ValueError) as e:
        label = name.lstrip("_")
        raise ValueError(f"{type(obj).__name__}.{label}: cannot write this value into the "
                         f"field (shape {arr.shape}, {arr.dtype}): {e}. Fields are fixed "
                         f"buffers that compiled code works on; assign an array of their "
                         f"shape (it is copied in)") from None


def _deepcopy_attrs(obj, memo, skip):
    """A new instance of obj's class holding deep copies of its attributes but those in skip."""
    new = object.__new__(type(obj))
    memo[id(obj)] = new
    for k, v in obj.__dict__.items():
        if k not in skip:
            object.__setattr__(new, k, copy.deepcopy(v, memo))
    return new


_MODEL_ARRAYS = frozenset(f[0] for f in MODEL_FIELDS)
_MODEL_SIZE_NAMES = frozenset(k for k, _ in MODEL_SIZES)
_DATA_ARRAYS = frozenset("_time" if f[0] == "time" else f[0] for f in DATA_FIELDS)


_NO_IDS = {}  # Model.id's fast path for an unknown kind (the slow path says why)


class Model:
    """The compiled model: sizes, flat arrays (see MODEL_FIELDS), names and options.

    Build one with `jointspace.load`, `jointspace.load_string`, a function of
    `jointspace.models`, or `jointspace.io.compile_model(spec)`. Bodies and dofs are numbered
    parent-before-child (DESIGN.md §2.3); body 0 is the world.

    Attributes beyond the field table:
        opt: `Option` view on the opt_* fields.
        names: dict kind -> list of names ("body", "joint", "geom", "site", "actuator",
            "mesh", "hfield", "equality", …); unnamed elements have "".
        warnings: messages produced while compiling the model.
        singular_dofs: the dofs the compiler found to move no mass or inertia (M singular;
            functions that need M⁻¹ refuse while they have no armature); usually [].
        source: the file (or "<string>") the model came from.

    A Model pickles as its sizes, arrays, names and attributes, without XML
    (`Model.__reduce__`), and unpickles into buffers and a struct of its own; `copy.copy`
    and `copy.deepcopy` both give an independent Model.
    """

    def __init__(self, sizes, arrays, names, warnings=(), source=""):
        for k, _ in MODEL_SIZES:
            setattr(self, k, int(sizes[k]))
        own = _Buffers()
        for name, dt, shape, _ in MODEL_FIELDS:
            a = np.array(arrays[name], dtype=_DTYPES[dt], order="C")  # a buffer of its own
            want = _resolve_shape(shape, sizes)
            if a.shape != want:
                raise ValueError(f"model field {name}: shape {a.shape}, expected {want}")
            setattr(own, name, a)
        object.__setattr__(self, "_own", own)
        _expose(self, own, MODEL_FIELDS, MODEL_WRITABLE_INTS)
        self.names = {k: list(v) for k, v in names.items()}
        self._ids = {k: {n: i for i, n in enumerate(v) if n} for k, v in self.names.items()}
        self.warnings = list(warnings)
        self.singular_dofs = []
        self.source = source
        self.opt = Option(self)
        self._sizes = tuple(self.sizes.values())
        self._shq = (self.nq,)
        self._shv = (self.nv,)
        from jointspace._numba import structs

        self._s = structs.make_model_struct(self)

    def __setattr__(self, name, value):
        if "_s" in self.__dict__:
            if name in _MODEL_ARRAYS:
                _assign_field(self, name, value)
                return
            if name in _MODEL_SIZE_NAMES:
                raise AttributeError(f"Model.{name} is fixed once the model is compiled; "
                                     "change the ModelSpec (or the MJCF/URDF) and compile again")
        object.__setattr__(self, name, value)

    def __deepcopy__(self, memo):
        """An independent Model: copied arrays and a struct of its own over them."""
        new = _deepcopy_attrs(self, memo, ("_s", "opt", *_MODEL_ARRAYS))
        _expose(new, new._own, MODEL_FIELDS, MODEL_WRITABLE_INTS)
        from jointspace._numba import structs

        object.__setattr__(new, "opt", Option(new))
        object.__setattr__(new, "_s", structs.make_model_struct(new))
        return new

    def __copy__(self):
        """An independent Model, as `copy.deepcopy` (MuJoCo's MjModel copies the same way).

        A copy sharing the buffers would be the same model under another name; compiled code
        could not tell them apart.
        """
        return self.__deepcopy__({})

    def __reduce__(self):
        """Pickle as the sizes, the field buffers, the names and the Python attributes.

        No XML: unpickling (`_model_from_state`) runs the constructor on the arrays, which
        copies them into buffers of its own, checks every shape against the sizes, sets the
        read-only flags and builds the struct. The struct itself never travels, nor do empty
        fields (a model without cameras, say): their zero-size buffers are made again.
        """
        extra = {k: v for k, v in self.__dict__.items() if k not in _MODEL_REBUILT}
        arrays = {name: getattr(self._own, name) for name in _MODEL_ARRAYS
                  if getattr(self._own, name).size}
        return _model_from_state, (self.sizes, arrays, self.names, extra)

    def id(self, kind, name):
        """Id of the element of `kind` ("body", "joint", "geom", …) named `name`.

        Integers pass through after a range check.
        """
        if name.__class__ is str:
            i = self._ids.get(kind, _NO_IDS).get(name)
            if i is not None:
                return i
        elif type(name) is int and kind in self._ids and 0 <= name < len(self.names[kind]):
            return name
        if kind not in self._ids:
            raise KeyError(f"unknown element kind {kind!r}; use one of {sorted(self._ids)}")
        if isinstance(name, (bool, np.bool_)) or not isinstance(name, (str, int, np.integer)):
            raise TypeError(f"a {kind} is named by its name (str) or id (int), got "
                            f"{type(name).__name__} {name!r}")
        if isinstance(name, (int, np.integer)):
            n = len(self.names[kind])
            if not 0 <= int(name) < n:
                raise IndexError(f"{kind} id {int(name)} out of range [0, {n})")
            return int(name)
        try:
            return self._ids[kind][name]
        except KeyError:
            raise _name_error(kind, name, self.names[kind]) from None

    def body(self, name):
        """Id of the body named `name`."""
        return self.id("body", name)

    def joint(self, name):
        """Id of the joint named `name`."""
        return self.id("joint", name)

    def geom(self, name):
        """Id of the geom named `name`."""
        return self.id("geom", name)

    def site(self, name):
        """Id of the site named `name`."""
        return self.id("site", name)

    def actuator(self, name):
        """Id of the actuator named `name`."""
        return self.id("actuator", name)

    def camera(self, name):
        """Id of the camera named `name`."""
        return self.id("camera", name)

    def material(self, name):
        """Id of the material named `name`."""
        return self.id("material", name)

    @property
    def sizes(self):
        """The model sizes as a dict."""
        return {k: getattr(self, k) for k, _ in MODEL_SIZES}

    def __repr__(self):
        return (f"Model({self.source or 'built'}: nq={self.nq}, nv={self.nv}, nbody={self.nbody}, "
                f"njnt={self.njnt}, ngeom={self.ngeom}, nu={self.nu})")


class Data:
    """State and every intermediate of the pipeline, preallocated (see DATA_FIELDS).

    Create with `jointspace.make_data(model)`; stages write into it in place.

    Attributes beyond the field table:
        model: the Model it was made for, or last used with (MuJoCo's `MjData.model`).

    A Data pickles with its model and the fields that hold values (`Data.__reduce__`);
    `copy.copy` gives an independent Data for the same model, `copy.deepcopy` copies the
    model too, as MuJoCo's bindings do.
    """

    def __init__(self, model):
        sizes = data_sizes(model)
        own = _Buffers()
        for name, dt, shape, _ in DATA_FIELDS:
            setattr(own, "_" + name if name == "time" else name,
                    np.zeros(_resolve_shape(shape, sizes), dtype=_DTYPES[dt]))
        object.__setattr__(self, "_own", own)
        _expose(self, own, DATA_FIELDS, DATA_WRITABLE_INTS)
        _initial_values(model, own)
        self._msig = model._sizes
        self._ms = model._s
        self._m = model
        from jointspace._numba import structs

        self._s = structs.make_data_struct(self, model._s)

    def __setattr__(self, name, value):
        if name in _DATA_ARRAYS and name in self.__dict__:
            _assign_field(self, name, value)
            return
        object.__setattr__(self, name, value)

    def __deepcopy__(self, memo):
        """An independent Data and a deep copy of its model (MuJoCo's MjData copies so).

        The model is copied through `memo`, so `copy.deepcopy((m, d))` gives a matched pair;
        `copy.copy(d)` keeps the model.
        """
        new = _deepcopy_attrs(self, memo, ("_s", "_ms", *_DATA_ARRAYS))
        _expose(new, new._own, DATA_FIELDS, DATA_WRITABLE_INTS)
        from jointspace._numba import structs

        object.__setattr__(new, "_ms", new._m._s)
        object.__setattr__(new, "_s", structs.make_data_struct(new, new._ms))
        return new

    def __copy__(self):
        """An independent Data for the same model: copied arrays, a struct of its own."""
        new = Data(self._m)
        for key in _DATA_ARRAYS:
            getattr(new._own, key)[...] = getattr(self._own, key)
        return new

    def __reduce__(self):
        """Pickle as its model (`Model.__reduce__`) and the fields that hold values.

        Scratch fields (no meaning between calls) stay behind, and a contact or
        constraint-row field travels up to its last nonzero row (the rest of its capacity
        is zero, as in a new Data), so that a pickle is a fraction of the Data's memory and
        still gives back every field exactly. Unpickling (`_data_from_state`) makes a Data
        for the model and copies the values into its own buffers.
        """
        fields = {}
        for key, rows in _DATA_PICKLED:
            a = getattr(self._own, key)
            if rows:
                used = np.flatnonzero(a.reshape(len(a), -1).any(axis=1))
                a = a[:used[-1] + 1 if used.size else 0]
            fields[key] = a
        return _data_from_state, (self._m, fields)

    @property
    def model(self):
        """The Model this Data was made for, or last used with (MuJoCo's `MjData.model`)."""
        return self._m

    @property
    def time(self):
        """Simulation time (s)."""
        return float(self._time[0])

    @time.setter
    def time(self, value):
        self._time[0] = value

    @property
    def contact(self):
        """The contacts of the last collision call by field name (a `ContactView`)."""
        return ContactView(self)

    @property
    def efc(self):
        """Read-only views of the constraint rows in use: d.efc.J is d.efc_J[:nefc], etc."""
        return EfcView(self)

    def __repr__(self):
        return f"Data(time={self.time}, nq={self.qpos.size}, nv={self.qvel.size})"


# ---------------------------------------------------------------------------------------------
# views of Data


class EfcView:
    """Read-only views of the constraint rows in use, by name without the efc_ prefix.

    d.efc.J is d.efc_J[:nefc], d.efc.force is d.efc_force[:nefc], and so on; the views are
    taken when the attribute is read, so they follow later calls.
    """

    __slots__ = ("_d",)

    def __init__(self, d):
        """View the rows of Data d."""
        self._d = d

    @property
    def n(self):
        """Number of rows, d.nefc[0]."""
        return int(self._d.nefc[0])

    def __getattr__(self, name):
        """efc_<name>[:nefc], read-only."""
        arr = getattr(self._d, "efc_" + name, None)
        if arr is None:
            raise AttributeError(f"no constraint field efc_{name}")
        v = arr[:int(self._d.nefc[0])]
        v.flags.writeable = False
        return v

    def __repr__(self):
        """Short description with the number of rows."""
        return f"EfcView(nefc={self.n})"


_CONTACT_FIELDS = ("dist", "pos", "frame", "geom", "dim", "friction", "solref", "solreffriction",
           "solimp", "includemargin", "gap", "exclude", "adhesion", "surfacevel")


class ContactView:
    """The first d.ncon rows of the contact_* arrays of a Data, by MuJoCo's field names.

    Attributes (n = number of contacts; arrays are views into the Data, so they change
    with the next collision call):
        dist            (n,)       signed distance, negative in penetration
        pos             (n, 3)     contact point, midway between the surfaces
        frame           (n, 9)     rows normal, tangent, tangent (each 3)
        normal          (n, 3)     first row of frame, from geom[0] to geom[1]
        geom            (n, 2)     geom ids; geom1, geom2 are its columns
        dim             (n,)       condim: 1, 3, 4 or 6
        friction        (n, 5)     tangent1, tangent2, spin, roll1, roll2
        solref          (n, 2)     normal-direction solref
        solreffriction  (n, 2)     frictional solref (zeros: use solref)
        solimp          (n, 5)     solimp
        includemargin   (n,)       the contact is active while dist < includemargin
        gap             (n,)       detection reaches includemargin + gap
        exclude         (n,)       1 for an inactive contact (in the gap), else 0

    `len(view)` is the number of contacts; `view[i]` is a dict of contact i's fields.
    """

    __slots__ = ("_d",)

    def __init__(self, d):
        """View the contacts of Data d."""
        self._d = d

    def __len__(self):
        """Number of contacts."""
        return int(self._d.ncon[0])

    def __getattr__(self, name):
        """Field `name` of all contacts (a view of the first ncon rows)."""
        if name in _CONTACT_FIELDS:
            return getattr(self._d, "contact_" + name)[: int(self._d.ncon[0])]
        raise AttributeError(f"contact has no field {name!r}; fields: "
                             f"{', '.join(_CONTACT_FIELDS)}, normal, geom1, geom2")

    @property
    def normal(self):
        """(n, 3) contact normals (first frame row), pointing from geom1 to geom2."""
        return self.frame[:, :3]

    @property
    def geom1(self):
        """(n,) id of the first geom of each contact."""
        return self.geom[:, 0]

    @property
    def geom2(self):
        """(n,) id of the second geom of each contact."""
        return self.geom[:, 1]

    def __getitem__(self, i):
        """Contact i as a dict of its fields (copies)."""
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"contact index {i} out of range for {n} contacts")
        i %= n
        out = {k: np.array(getattr(self._d, "contact_" + k)[i]) for k in _CONTACT_FIELDS}
        for k in ("dist", "includemargin", "gap"):
            out[k] = float(out[k])
        for k in ("dim", "exclude"):
            out[k] = int(out[k])
        return out

    def __iter__(self):
        """Iterate over the contacts as dicts."""
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        """A short listing of the contacts."""
        n = len(self)
        if n == 0:
            return "ContactView(0 contacts)"
        rows = [f"  {i}: geoms {tuple(int(g) for g in self.geom[i])}, dist {self.dist[i]:+.3g}, "
                f"pos {np.round(self.pos[i], 4).tolist()}" for i in range(min(n, 8))]
        more = [f"  … {n - 8} more"] if n > 8 else []
        return f"ContactView({n} contacts\n" + "\n".join(rows + more) + ")"


def _initial_values(model, own):
    """Set the buffers of a zeroed Data to MuJoCo's mj_resetData values."""
    own.qpos[:] = model.qpos0
    own.eq_active[:] = model.eq_active0
    own.xquat[:, 0] = 1.0
    mocap = model.body_mocapid >= 0
    own.mocap_pos[model.body_mocapid[mocap]] = model.body_pos[mocap]
    own.mocap_quat[model.body_mocapid[mocap]] = model.body_quat[mocap]
    own.ctrl[model.actuator_ctrladr[_quat_chart(model)]] = 1.0
    if model.nhistory:
        _initial_history(model, own.history)


def _quat_chart(m):
    """Which actuators take a quaternion target, whose neutral control is the identity.

    MuJoCo 4.0's mj_resetCtrl: d.ctrl is zero but for the first control (w) of each, in
    d.ctrl and in the samples of its history buffer (`history.quat_chart`).
    """
    return (m.actuator_gaintype == GAIN_SO3) & (m.actuator_ctrlspec == CHART_QUAT)


def _initial_history(m, history):
    """history = the buffers as mj_resetData leaves them (`jointspace.history`).

    Zero values (a quaternion target's: the identity, `_quat_chart`) at the times
    [−n·h, …, −h]; a sampled sensor's (period > 0) at
    ⌈(t₀ − (n − 1 − j)·period) / h⌉·h, t₀ = phase (−period when phase is 0), and its clock
    (the buffer's first value) at t₀; −h for the other sensors, 0 for actuators. Python twin
    of the compiled `history.reset_history`.
    """
    h = float(m.opt_timestep[0])
    history[:] = 0.0
    for i in range(m.nactuator):
        n = int(m.actuator_history[i, 0])
        if n > 0:
            adr = int(m.actuator_historyadr[i])
            history[adr + 1] = n - 1
            for j in range(n):
                history[adr + 2 + j] = -(n - j) * h
            if _quat_chart(m)[i]:
                dim = int(m.actuator_ctrlnum[i])
                history[adr + 2 + n:adr + 2 + n + n * dim:dim] = 1.0
    for i in range(m.nsensor):
        n = int(m.sensor_history[i, 0])
        if n > 0:
            adr = int(m.sensor_historyadr[i])
            period = float(m.sensor_interval[i, 0])
            phase = float(m.sensor_interval[i, 1])
            t0 = (-period if phase == 0.0 else phase) if period > 0.0 else -h
            history[adr] = t0
            history[adr + 1] = n - 1
            for j in range(n):
                history[adr + 2 + j] = (math.ceil((t0 - (n - 1 - j) * period) / h) * h
                                        if period > 0.0 else -(n - j) * h)


def reset_data(model: Model, d: Data) -> None:
    """Every field of d as make_data(model) leaves it (MuJoCo's mj_resetData)."""
    own = d._own
    for name, _, _, _ in DATA_FIELDS:
        getattr(own, "_time" if name == "time" else name).fill(0)
    _initial_values(model, own)


# Attributes Model's constructor makes (the rest of __dict__ is pickled as it is).
_MODEL_REBUILT = frozenset(("_own", "_s", "opt", "_ids", "_sizes", "_shq", "_shv", "names",
                            *_MODEL_ARRAYS, *_MODEL_SIZE_NAMES))
# Data fields a pickle carries: (buffer name, None for all of it, or the capacity up to whose
# last nonzero row it carries it); scratch fields have no meaning between calls and stay behind.
_DATA_PICKLED = tuple(
    ("_time" if name == "time" else name,
     shape[0] if shape and shape[0] in ("nconmax", "njmax") else None)
    for name, _, shape, _ in DATA_FIELDS if not name.startswith("scratch_"))


def _model_from_state(sizes, arrays, names, extra):
    """Rebuild a pickled Model (`Model.__reduce__`): the constructor on the arrays."""
    for name, dt, shape, _ in MODEL_FIELDS:
        if name not in arrays:
            arrays[name] = np.zeros(_resolve_shape(shape, sizes), dtype=_DTYPES[dt])
    m = Model(sizes, arrays, names, warnings=extra.pop("warnings", ()),
              source=extra.pop("source", ""))
    for k, v in extra.items():
        object.__setattr__(m, k, v)
    return m


def _data_from_state(model, fields):
    """Rebuild a pickled Data (`Data.__reduce__`): a Data for model, the values copied in."""
    d = Data(model)
    own = d._own
    rows_of = dict(_DATA_PICKLED)
    for key, value in fields.items():
        if key not in rows_of:
            raise ValueError(f"unpickling a Data: {key.lstrip('_')} is not a field this "
                             "version of jointspace pickles")
        buf = getattr(own, key)
        value = np.asarray(value)
        n = len(value) if rows_of[key] else len(buf)
        if value.shape != (n, *buf.shape[1:]) or n > len(buf):
            raise ValueError(f"unpickling a Data: field {key.lstrip('_')} has shape "
                             f"{value.shape}, the model's Data has {buf.shape}")
        buf[:n] = value
    return d


def make_data(model: Model) -> Data:
    """Allocate a `Data` for `model`, with qpos = qpos0 and everything else zero."""
    if not isinstance(model, Model):
        raise TypeError(f"make_data expects a jointspace Model, got {type(model).__name__}")
    return Data(model)
