"""Sensors (MuJoCo's mj_sensorPos, mj_sensorVel, mj_sensorAcc; engine_sensor.c).

Each sensor writes `sensor_dim[i]` numbers at `d.sensordata[sensor_adr[i]]`, with MuJoCo's
types (`SENS_*`, the values of mjtSensor), layouts and stages:

  position      magnetometer (site frame), rangefinder (collision.ray along the site's +z,
                its body excluded; the `data` fields dist, dir, origin, point, normal, depth by the
                bitmask in sensor_intprm), camprojection (the site's pixel coordinates in a
                camera, MuJoCo's cam_project), jointpos, actuatorpos, ballquat (normalized),
                jointlimitpos (efc_pos − margin of the joint's limit row, 0 if none),
                framepos / framequat / frame{x,y,z}axis of a body (inertial frame), xbody
                (body frame), geom or site, in the world or in a reference frame,
                subtreecom, insidesite (the object's origin strictly inside the site's
                shape), geomdist / geomnormal / geomfromto (collision.driver.geom_distance over the
                geom pairs, up to the cutoff), the contact sensor when it reads no force,
                e_potential, e_kinetic, clock, tendonpos (ten_length), tendonlimitpos (of the
                tendon's first limit row)
  velocity      velocimeter, gyro (site velocity in the site frame), jointvel,
                actuatorvel, ballangvel, jointlimitvel (efc_vel), framelinvel / frameangvel
                (relative to a moving reference frame as MuJoCo takes it), subtreelinvel,
                subtreeangmom, tendonvel (ten_velocity), tendonlimitvel, tactile (a mesh's
                vertices placed in a geom's frame: their penetration into the geoms
                touching the geom's weld group and the slip speeds along their tangents)
  acceleration  touch (normal forces of the body's contacts whose force ray enters the
                site's volume), accelerometer (site acceleration in the site frame, gravity
                included), force and torque (the interaction wrench between the site's body
                and its parent, in the site frame), actuatorfrc, jointactuatorfrc,
                jointlimitfrc, framelinacc, frameangacc, tendonlimitfrc,
                tendonactuatorfrc (Σ actuator_force of the tendon's actuators), the contact
                sensor with force or torque data or a force reduction

The contact sensor (MuJoCo 3.3+) reads the contacts matching its two criteria (site volume,
body, subtree or geom; either, both or none), oriented from the first to the second; its
`sensor_intprm` holds the data fields (bits in CONDATA_SIZE order), the reduction and the
slot count: `num` slots of the fields, in contact order or sorted by distance (mindist) or
by force (maxforce), or the net wrench about the force-weighted centroid (netforce).

`user` sensors read zero (MuJoCo leaves them to a callback). A positive `sensor_cutoff`
clips real-valued data to ±cutoff and positive data to ≤ cutoff (not contact or geomfromto
data, as in MuJoCo); `sensor_noise` is stored and never added (as in MuJoCo). Every type
that needs no plugin is computed; plugin sensors are refused at load. A sensor with a
history buffer (nsample > 0) that is delayed, or sampled and not due, is read from its
buffer instead (`jointspace.history`; `advance_history` writes the buffers at each step).

All stages run at the end of `forward` (and of `step`'s first forward per step, as
mj_RungeKutta skips sensors at its inner stages) and of `inverse`: every quantity a sensor
reads is final by then, so the values equal those MuJoCo computes stage by stage. The
acceleration-stage quantities come from `rne_post_constraint` (mj_rnePostConstraint:
d.cacc, d.cfrc_ext, d.cfrc_int), the subtree ones from `subtree_vel` (mj_subtreeVel), both
only when a sensor needs them.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.entry import check_pair
from jointspace.collision.ccd import make_workspace
from jointspace.collision.driver import geom_distance
from jointspace.collision.ray import ray_kernel, ray_normal
from jointspace.dynamics.energy import energy_pos, energy_vel
from jointspace.history import insert, read
from jointspace.spatial import cross_force, mul_inert_vec, row6
from jointspace.types import (
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    CNSTR_LIMIT_JOINT,
    CNSTR_LIMIT_TENDON,
    DSBL_GRAVITY,
    DSBL_SENSOR,
    EQ_CONNECT,
    EQ_WELD,
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
    MINVAL,
    PROJ_ORTHOGRAPHIC,
    TRN_TENDON,
)

# sensor types: MuJoCo's mjtSensor values
(SENS_TOUCH, SENS_ACCELEROMETER, SENS_VELOCIMETER, SENS_GYRO, SENS_FORCE, SENS_TORQUE,
 SENS_MAGNETOMETER, SENS_RANGEFINDER, SENS_CAMPROJECTION, SENS_JOINTPOS, SENS_JOINTVEL,
 SENS_TENDONPOS, SENS_TENDONVEL, SENS_ACTUATORPOS, SENS_ACTUATORVEL, SENS_ACTUATORFRC,
 SENS_JOINTACTFRC, SENS_TENDONACTFRC, SENS_BALLQUAT, SENS_BALLANGVEL, SENS_JOINTLIMITPOS,
 SENS_JOINTLIMITVEL, SENS_JOINTLIMITFRC, SENS_TENDONLIMITPOS, SENS_TENDONLIMITVEL,
 SENS_TENDONLIMITFRC, SENS_FRAMEPOS, SENS_FRAMEQUAT, SENS_FRAMEXAXIS, SENS_FRAMEYAXIS,
 SENS_FRAMEZAXIS, SENS_FRAMELINVEL, SENS_FRAMEANGVEL, SENS_FRAMELINACC, SENS_FRAMEANGACC,
 SENS_SUBTREECOM, SENS_SUBTREELINVEL, SENS_SUBTREEANGMOM, SENS_INSIDESITE, SENS_GEOMDIST,
 SENS_GEOMNORMAL, SENS_GEOMFROMTO, SENS_CONTACT, SENS_E_POTENTIAL, SENS_E_KINETIC,
 SENS_CLOCK, SENS_TACTILE, SENS_PLUGIN, SENS_USER) = range(49)
# object types (mjtObj) that sensors refer to
OBJ_UNKNOWN, OBJ_BODY, OBJ_XBODY, OBJ_JOINT, OBJ_GEOM, OBJ_SITE, OBJ_CAMERA = 0, 1, 2, 3, 5, 6, 7
OBJ_MESH = 10
OBJ_ACTUATOR = 19
# stages (mjtStage) and data types (mjtDataType)
STAGE_NONE, STAGE_POS, STAGE_VEL, STAGE_ACC = 0, 1, 2, 3
DATATYPE_REAL, DATATYPE_POSITIVE, DATATYPE_AXIS, DATATYPE_QUATERNION = 0, 1, 2, 3

# the types computed here; the others hold NaN (module docstring)
COMPUTED = frozenset((
    SENS_TOUCH, SENS_ACCELEROMETER, SENS_VELOCIMETER, SENS_GYRO, SENS_FORCE, SENS_TORQUE,
    SENS_MAGNETOMETER, SENS_JOINTPOS, SENS_JOINTVEL, SENS_ACTUATORPOS, SENS_ACTUATORVEL,
    SENS_ACTUATORFRC, SENS_JOINTACTFRC, SENS_BALLQUAT, SENS_BALLANGVEL, SENS_JOINTLIMITPOS,
    SENS_JOINTLIMITVEL, SENS_JOINTLIMITFRC, SENS_FRAMEPOS, SENS_FRAMEQUAT, SENS_FRAMEXAXIS,
    SENS_FRAMEYAXIS, SENS_FRAMEZAXIS, SENS_FRAMELINVEL, SENS_FRAMEANGVEL, SENS_FRAMELINACC,
    SENS_FRAMEANGACC, SENS_SUBTREECOM, SENS_SUBTREELINVEL, SENS_SUBTREEANGMOM,
    SENS_E_POTENTIAL, SENS_E_KINETIC, SENS_CLOCK, SENS_USER, SENS_RANGEFINDER,
    SENS_INSIDESITE, SENS_CONTACT, SENS_GEOMDIST, SENS_GEOMNORMAL, SENS_GEOMFROMTO,
    SENS_TENDONPOS, SENS_TENDONVEL, SENS_TENDONACTFRC, SENS_TENDONLIMITPOS, SENS_TENDONLIMITVEL,
    SENS_TENDONLIMITFRC, SENS_CAMPROJECTION, SENS_TACTILE))
# rangefinder data fields (mjtRayDataField)
RAYDATA_DIST, RAYDATA_DIR, RAYDATA_ORIGIN, RAYDATA_POINT, RAYDATA_NORMAL, RAYDATA_DEPTH = range(6)
RAYDATA_SIZE = (1, 3, 3, 3, 3, 1)
# contact sensor data fields (mjtConDataField, in bit order) and their sizes; reductions
CONDATA_SIZE = (1, 3, 3, 1, 3, 3, 3)  # found, force, torque, dist, pos, normal, tangent
REDUCE_NONE, REDUCE_MINDIST, REDUCE_MAXFORCE, REDUCE_NETFORCE = 0, 1, 2, 3
_ALL_GROUPS = np.zeros(0, dtype=np.uint8)  # mj_ray's geomgroup = NULL: every group


# ---------------------------------------------------------------------------------------------
# frames of objects


@njit(cache=True, inline="always")
def _object_frame(m, d, objtype, objid):
    """(world position, row-major world rotation, the body it moves with) of an object.

    Objects: a body's inertial frame (OBJ_BODY), a body's frame (OBJ_XBODY), a geom, a site,
    a camera.
    """
    if objtype == OBJ_BODY:
        return d.xipos[objid], d.ximat[objid], objid
    if objtype == OBJ_XBODY:
        return d.xpos[objid], d.xmat[objid], objid
    if objtype == OBJ_GEOM:
        return d.geom_xpos[objid], d.geom_xmat[objid], m.geom_bodyid[objid]
    if objtype == OBJ_CAMERA:
        return d.cam_xpos[objid], d.cam_xmat[objid], m.cam_bodyid[objid]
    return d.site_xpos[objid], d.site_xmat[objid], m.site_bodyid[objid]


@njit(cache=True, inline="always")
def _object_quat(m, d, objtype, objid, out):
    """out = the world orientation quaternion of the object (get_xquat)."""
    if objtype == OBJ_XBODY:
        out[:] = d.xquat[objid]
        return
    if objtype == OBJ_BODY:
        b, q = objid, m.body_iquat[objid]
    elif objtype == OBJ_GEOM:
        b, q = m.geom_bodyid[objid], m.geom_quat[objid]
    elif objtype == OBJ_CAMERA:  # the fixed-mode frame whatever the mode, as get_xquat
        b, q = m.cam_bodyid[objid], m.cam_quat[objid]
    else:
        b, q = m.site_bodyid[objid], m.site_quat[objid]
    a = d.xquat[b]
    out[0] = a[0] * q[0] - a[1] * q[1] - a[2] * q[2] - a[3] * q[3]
    out[1] = a[0] * q[1] + a[1] * q[0] + a[2] * q[3] - a[3] * q[2]
    out[2] = a[0] * q[2] - a[1] * q[3] + a[2] * q[0] + a[3] * q[1]
    out[3] = a[0] * q[3] + a[1] * q[2] - a[2] * q[1] + a[3] * q[0]


@njit(cache=True, inline="always")
def _mat_t_vec(out, mat, v0, v1, v2, k):
    """out[k:k+3] = matᵀ v for a row-major 3×3 mat."""
    out[k] = mat[0] * v0 + mat[3] * v1 + mat[6] * v2
    out[k + 1] = mat[1] * v0 + mat[4] * v1 + mat[7] * v2
    out[k + 2] = mat[2] * v0 + mat[5] * v1 + mat[8] * v2


@njit(cache=True, inline="always")
def _spatial_at(m, d, vec, objtype, objid, local, out):
    """out = the com-based motion vec[body] moved to the object's origin (mju_transformSpatial).

    rot unchanged, lin − (p − subtree_com[root]) × rot; with local, both rotated into the
    object's frame. A body welded to the world moves with it: zero velocity, and the world's
    acceleration −gravity (as MuJoCo 4.0's mj_objectAcceleration reports it).
    """
    pos, mat, b = _object_frame(m, d, objtype, objid)
    v = vec[b]
    c = d.subtree_com[m.body_rootid[b]]
    r0, r1, r2 = pos[0] - c[0], pos[1] - c[1], pos[2] - c[2]
    l0 = v[3] - (r1 * v[2] - r2 * v[1])
    l1 = v[4] - (r2 * v[0] - r0 * v[2])
    l2 = v[5] - (r0 * v[1] - r1 * v[0])
    if local:
        _mat_t_vec(out, mat, v[0], v[1], v[2], 0)
        _mat_t_vec(out, mat, l0, l1, l2, 3)
    else:
        out[0], out[1], out[2] = v[0], v[1], v[2]
        out[3], out[4], out[5] = l0, l1, l2


@njit(cache=True)
def object_velocity(m, d, objtype, objid, local, out):
    """6-D velocity (rot : lin) of an object at its origin (mj_objectVelocity)."""
    _spatial_at(m, d, d.cvel, objtype, objid, local, out)


@njit(cache=True)
def object_acceleration(m, d, objtype, objid, local, out, vel):
    """6-D acceleration (rot : lin) of an object at its origin (mj_objectAcceleration).

    With the rotating-frame term lin += ω × v; needs rne_post_constraint. vel: scratch (6)
    for the object's velocity.
    """
    _spatial_at(m, d, d.cacc, objtype, objid, local, out)
    _spatial_at(m, d, d.cvel, objtype, objid, local, vel)
    out[3] += vel[1] * vel[5] - vel[2] * vel[4]
    out[4] += vel[2] * vel[3] - vel[0] * vel[5]
    out[5] += vel[0] * vel[4] - vel[1] * vel[3]


# ---------------------------------------------------------------------------------------------
# subtree velocities and the post-constraint RNE


@njit(cache=True)
def subtree_vel(m, d):
    """subtree_linvel and subtree_angmom of every body (mj_subtreeVel).

    subtree_linvel is the velocity of the subtree's com, subtree_angmom its angular momentum
    about that com. Scratch: scratch_body[b, 0:6] holds body b's velocity at its com.
    """
    nb = m.nbody
    vel = d.scratch_body
    lin = d.subtree_linvel
    ang = d.subtree_angmom
    for b in range(nb):
        # the com-based cvel moved to the body's com (object_velocity of OBJ_BODY, inlined)
        v = d.cvel[b]
        c = d.subtree_com[m.body_rootid[b]]
        r0 = d.xipos[b, 0] - c[0]
        r1 = d.xipos[b, 1] - c[1]
        r2 = d.xipos[b, 2] - c[2]
        vel[b, 0], vel[b, 1], vel[b, 2] = v[0], v[1], v[2]
        vel[b, 3] = v[3] - (r1 * v[2] - r2 * v[1])
        vel[b, 4] = v[4] - (r2 * v[0] - r0 * v[2])
        vel[b, 5] = v[5] - (r0 * v[1] - r1 * v[0])
        # linear momentum m v; angular momentum R I Rᵀ ω about the body com
        for k in range(3):
            lin[b, k] = m.body_mass[b] * vel[b, 3 + k]
        R = d.ximat[b]
        w0 = (R[0] * vel[b, 0] + R[3] * vel[b, 1] + R[6] * vel[b, 2]) * m.body_inertia[b, 0]
        w1 = (R[1] * vel[b, 0] + R[4] * vel[b, 1] + R[7] * vel[b, 2]) * m.body_inertia[b, 1]
        w2 = (R[2] * vel[b, 0] + R[5] * vel[b, 1] + R[8] * vel[b, 2]) * m.body_inertia[b, 2]
        ang[b, 0] = R[0] * w0 + R[1] * w1 + R[2] * w2
        ang[b, 1] = R[3] * w0 + R[4] * w1 + R[5] * w2
        ang[b, 2] = R[6] * w0 + R[7] * w1 + R[8] * w2
    # subtree linear velocity = Σ momentum / subtree mass
    for b in range(nb - 1, -1, -1):
        if b:
            p = m.body_parentid[b]
            for k in range(3):
                lin[p, k] += lin[b, k]
        s = 1.0 / max(1e-15, m.body_subtreemass[b])
        for k in range(3):
            lin[b, k] *= s
    # subtree angular momentum: each body's own, then moments about the parents' coms
    for b in range(nb - 1, 0, -1):
        p = m.body_parentid[b]
        dx0 = d.xipos[b, 0] - d.subtree_com[b, 0]
        dx1 = d.xipos[b, 1] - d.subtree_com[b, 1]
        dx2 = d.xipos[b, 2] - d.subtree_com[b, 2]
        mb = m.body_mass[b]
        dp0 = mb * (vel[b, 3] - lin[b, 0])
        dp1 = mb * (vel[b, 4] - lin[b, 1])
        dp2 = mb * (vel[b, 5] - lin[b, 2])
        ang[b, 0] += dx1 * dp2 - dx2 * dp1
        ang[b, 1] += dx2 * dp0 - dx0 * dp2
        ang[b, 2] += dx0 * dp1 - dx1 * dp0
        for k in range(3):
            ang[p, k] += ang[b, k]
        dx0 = d.subtree_com[b, 0] - d.subtree_com[p, 0]
        dx1 = d.subtree_com[b, 1] - d.subtree_com[p, 1]
        dx2 = d.subtree_com[b, 2] - d.subtree_com[p, 2]
        ms = m.body_subtreemass[b]
        dv0 = ms * (lin[b, 0] - lin[p, 0])
        dv1 = ms * (lin[b, 1] - lin[p, 1])
        dv2 = ms * (lin[b, 2] - lin[p, 2])
        ang[p, 0] += dx1 * dv2 - dx2 * dv1
        ang[p, 1] += dx2 * dv0 - dx0 * dv2
        ang[p, 2] += dx0 * dv1 - dx1 * dv0


@njit(cache=True, inline="always")
def _edge_pair(d, c, i, k, dim):
    """μ_k (f₊ − f₋) of a pyramidal contact's k-th edge pair from row i; 0 past its dims."""
    if k >= dim - 1:
        return 0.0
    return d.contact_friction[c, k] * (d.efc_force[i + 2 * k] - d.efc_force[i + 2 * k + 1])


@njit(cache=True, inline="always")
def _row_force(d, i, k, n):
    """efc_force[i + k] for k < n, else 0."""
    return d.efc_force[i + k] if k < n else 0.0


@njit(cache=True, inline="always")
def _contact_force(d, i):
    """The contact whose rows start at efc row i, its force in its frame, the next row.

    (c, next, normal, tangent 1, tangent 2, torsion, roll 1, roll 2), as mj_contactForce:
    elliptic rows as they are; pyramidal edges decoded as normal = Σ f, f_k = μ_k (f₊ − f₋);
    the normal less the contact's adhesion (the net interface force: the cone force minus
    the adhesive pull, negative under tension, MuJoCo 4.0). Scalars, so the sensors and the
    post-constraint RNE read a contact's force without a buffer.
    """
    c = d.efc_id[i]
    dim = d.contact_dim[c]
    t = d.efc_type[i]
    pull = d.contact_adhesion[c]
    if t == CNSTR_CONTACT_FRICTIONLESS:
        return c, i + 1, d.efc_force[i] - pull, 0.0, 0.0, 0.0, 0.0, 0.0
    if t == CNSTR_CONTACT_PYRAMIDAL:
        n = 0.0
        for k in range(2 * (dim - 1)):
            n += d.efc_force[i + k]
        return (c, i + 2 * (dim - 1), n - pull, _edge_pair(d, c, i, 0, dim),
                _edge_pair(d, c, i, 1, dim), _edge_pair(d, c, i, 2, dim),
                _edge_pair(d, c, i, 3, dim), _edge_pair(d, c, i, 4, dim))
    return (c, i + dim, d.efc_force[i] - pull, _row_force(d, i, 1, dim),
            _row_force(d, i, 2, dim), _row_force(d, i, 3, dim), _row_force(d, i, 4, dim),
            _row_force(d, i, 5, dim))


@njit(cache=True)
def contact_frame_forces(m, d, out):
    """out[c, :6] = force of contact c in its frame (normal, tangents, torsion, rolling).

    mj_contactForce: elliptic rows as they are; pyramidal edges decoded as normal = Σ f,
    f_k = μ_k (f₊ − f₋); the normal less the adhesion; excluded contacts get zeros.
    """
    ncon = d.ncon[0]
    for c in range(ncon):
        for k in range(6):
            out[c, k] = 0.0
    i = d.ne[0] + d.nf[0] + d.nl[0]
    nefc = d.nefc[0]
    while i < nefc:
        c, i, out[c, 0], out[c, 1], out[c, 2], out[c, 3], out[c, 4], out[c, 5] = \
            _contact_force(d, i)


@njit(cache=True, inline="always")
def _add_wrench(m, d, b, sign, t0, t1, t2, f0, f1, f2, p0, p1, p2):
    """cfrc_ext[b] += sign · (world torque t, force f at point p) moved to the c-frame."""
    c = d.subtree_com[m.body_rootid[b]]
    r0, r1, r2 = c[0] - p0, c[1] - p1, c[2] - p2
    e = d.cfrc_ext[b]
    e[0] += sign * (t0 - (r1 * f2 - r2 * f1))
    e[1] += sign * (t1 - (r2 * f0 - r0 * f2))
    e[2] += sign * (t2 - (r0 * f1 - r1 * f0))
    e[3] += sign * f0
    e[4] += sign * f1
    e[5] += sign * f2


@njit(cache=True)
def rne_post_constraint(m, d):
    """cacc, cfrc_ext and cfrc_int with every force known (mj_rnePostConstraint).

    cfrc_ext = xfrc_applied + contact forces + connect/weld forces, in the c-frame;
    cacc = cacc_parent + cdot qvel + cdof qacc with cacc_world = −gravity;
    cfrc_int = cinert cacc + cvel ×* (cinert cvel) − cfrc_ext, summed over the subtree.
    Scratch: scratch_body[0, 0:12].
    """
    nb = m.nbody
    d.cfrc_ext[:, :] = 0.0
    for b in range(1, nb):
        x = d.xfrc_applied[b]
        if x[0] != 0.0 or x[1] != 0.0 or x[2] != 0.0 or x[3] != 0.0 or x[4] != 0.0 \
                or x[5] != 0.0:
            _add_wrench(m, d, b, 1.0, x[3], x[4], x[5], x[0], x[1], x[2], d.xipos[b, 0],
                        d.xipos[b, 1], d.xipos[b, 2])
    # the contacts with rows (the others exert no force), in order
    i = d.ne[0] + d.nf[0] + d.nl[0]
    nefc = d.nefc[0]
    while i < nefc:
        c, i, l0, l1, l2, l3, l4, l5 = _contact_force(d, i)
        fr = d.contact_frame[c]
        # world force and torque: frameᵀ (local force), frameᵀ (local torque)
        f0 = fr[0] * l0 + fr[3] * l1 + fr[6] * l2
        f1 = fr[1] * l0 + fr[4] * l1 + fr[7] * l2
        f2 = fr[2] * l0 + fr[5] * l1 + fr[8] * l2
        t0 = fr[0] * l3 + fr[3] * l4 + fr[6] * l5
        t1 = fr[1] * l3 + fr[4] * l4 + fr[7] * l5
        t2 = fr[2] * l3 + fr[5] * l4 + fr[8] * l5
        p = d.contact_pos[c]
        b1 = m.geom_bodyid[d.contact_geom[c, 0]]
        b2 = m.geom_bodyid[d.contact_geom[c, 1]]
        if b1:
            _add_wrench(m, d, b1, -1.0, t0, t1, t2, f0, f1, f2, p[0], p[1], p[2])
        if b2:
            _add_wrench(m, d, b2, 1.0, t0, t1, t2, f0, f1, f2, p[0], p[1], p[2])
    # connect and weld: the rows' forces act at the anchors (world frame)
    i = 0
    ne = d.ne[0]
    f = d.efc_force
    while i < ne:
        eq = d.efc_id[i]
        t = m.eq_type[eq]
        if t != EQ_CONNECT and t != EQ_WELD:
            i += 1
            continue
        weld = t == EQ_WELD
        t0 = f[i + 3] if weld else 0.0
        t1 = f[i + 4] if weld else 0.0
        t2 = f[i + 5] if weld else 0.0
        site = m.eq_objtype[eq] == OBJ_SITE
        for side in range(2):
            b = m.eq_obj1id[eq] if side == 0 else m.eq_obj2id[eq]
            obj = b
            if site:
                b = m.site_bodyid[obj]
            if b == 0:
                continue
            off = 3 if (weld == (side == 0)) else 0
            if site:  # the anchor is the site, in its body's frame
                a0, a1, a2 = m.site_pos[obj, 0], m.site_pos[obj, 1], m.site_pos[obj, 2]
            else:
                a0, a1, a2 = m.eq_data[eq, off], m.eq_data[eq, off + 1], m.eq_data[eq, off + 2]
            R = d.xmat[b]
            p0 = d.xpos[b, 0] + R[0] * a0 + R[1] * a1 + R[2] * a2
            p1 = d.xpos[b, 1] + R[3] * a0 + R[4] * a1 + R[5] * a2
            p2 = d.xpos[b, 2] + R[6] * a0 + R[7] * a1 + R[8] * a2
            _add_wrench(m, d, b, 1.0 if side == 0 else -1.0, t0, t1, t2, f[i], f[i + 1],
                        f[i + 2], p0, p1, p2)
        i += 6 if weld else 3
    # forward pass: cacc and the body's own force; backward: sum over the subtree
    cacc = d.cacc
    cacc[0, :] = 0.0
    if (m.opt_disableflags[0] & DSBL_GRAVITY) == 0:
        for k in range(3):
            cacc[0, 3 + k] = -m.opt_gravity[k]
    tmp = d.scratch_body[0, 0:6]
    cor = d.scratch_body[0, 6:12]
    d.cfrc_int[0, :] = 0.0
    cd = d.cdof
    cdd = d.cdof_dot
    for b in range(1, nb):
        # in registers: stores into cacc inside the dof loop would be reloaded each time
        p = m.body_parentid[b]
        c0, c1, c2 = cacc[p, 0], cacc[p, 1], cacc[p, 2]
        c3, c4, c5 = cacc[p, 3], cacc[p, 4], cacc[p, 5]
        a = m.body_dofadr[b]
        for j in range(a, a + m.body_dofnum[b]):
            qv = d.qvel[j]
            qa = d.qacc[j]
            c0 += cdd[j, 0] * qv + cd[j, 0] * qa
            c1 += cdd[j, 1] * qv + cd[j, 1] * qa
            c2 += cdd[j, 2] * qv + cd[j, 2] * qa
            c3 += cdd[j, 3] * qv + cd[j, 3] * qa
            c4 += cdd[j, 4] * qv + cd[j, 4] * qa
            c5 += cdd[j, 5] * qv + cd[j, 5] * qa
        cacc[b, 0], cacc[b, 1], cacc[b, 2] = c0, c1, c2
        cacc[b, 3], cacc[b, 4], cacc[b, 5] = c3, c4, c5
        ci = d.cinert[b]
        v = row6(d.cvel, b)
        mul_inert_vec(tmp, ci, (c0, c1, c2, c3, c4, c5))
        mul_inert_vec(cor, ci, v)
        fb = d.cfrc_int[b]
        cross_force(fb, v, cor)
        for k in range(6):
            fb[k] += tmp[k] - d.cfrc_ext[b, k]
    for b in range(nb - 1, 0, -1):
        p = m.body_parentid[b]
        for k in range(6):
            d.cfrc_int[p, k] += d.cfrc_int[b, k]


# ---------------------------------------------------------------------------------------------
# touch: does a contact's force ray enter the site's volume


@njit(cache=True)
def _ray_hits(gtype, size, R, c, p, v0, v1, v2):
    """True if the ray p + t v, t ≥ 0, meets a solid site shape at c with rotation R.

    Shapes: sphere, capsule, ellipsoid, cylinder, box; the ray is taken into the site frame.
    """
    d0, d1, d2 = p[0] - c[0], p[1] - c[1], p[2] - c[2]
    x0 = R[0] * d0 + R[3] * d1 + R[6] * d2
    x1 = R[1] * d0 + R[4] * d1 + R[7] * d2
    x2 = R[2] * d0 + R[5] * d1 + R[8] * d2
    u0 = R[0] * v0 + R[3] * v1 + R[6] * v2
    u1 = R[1] * v0 + R[4] * v1 + R[7] * v2
    u2 = R[2] * v0 + R[5] * v1 + R[8] * v2
    if gtype == GEOM_SPHERE:
        return _ray_ellipsoid(x0, x1, x2, u0, u1, u2, size[0], size[0], size[0])
    if gtype == GEOM_ELLIPSOID:
        return _ray_ellipsoid(x0, x1, x2, u0, u1, u2, size[0], size[1], size[2])
    if gtype == GEOM_BOX:
        lo, hi = _slab(x0, u0, size[0], -math.inf, math.inf)
        lo, hi = _slab(x1, u1, size[1], lo, hi)
        lo, hi = _slab(x2, u2, size[2], lo, hi)
        return lo <= hi and hi >= 0.0
    if gtype == GEOM_CAPSULE:
        if _ray_cylinder(x0, x1, x2, u0, u1, u2, size[0], size[1]):
            return True
        r = size[0]
        return (_ray_ellipsoid(x0, x1, x2 - size[1], u0, u1, u2, r, r, r)
                or _ray_ellipsoid(x0, x1, x2 + size[1], u0, u1, u2, r, r, r))
    if gtype == GEOM_CYLINDER:
        return _ray_cylinder(x0, x1, x2, u0, u1, u2, size[0], size[1])
    return False


@njit(cache=True)
def _slab(x, u, h, lo, hi):
    """Intersect [lo, hi] with the t where |x + t u| ≤ h."""
    if u == 0.0:
        if abs(x) > h:
            return 1.0, -1.0
        return lo, hi
    t1 = (-h - x) / u
    t2 = (h - x) / u
    if t1 > t2:
        t1, t2 = t2, t1
    return max(lo, t1), min(hi, t2)


@njit(cache=True)
def _ray_ellipsoid(x0, x1, x2, u0, u1, u2, a, b, c):
    """The ray meets the solid ellipsoid x²/a² + y²/b² + z²/c² ≤ 1 at some t ≥ 0."""
    y0, y1, y2 = x0 / a, x1 / b, x2 / c
    w0, w1, w2 = u0 / a, u1 / b, u2 / c
    A = w0 * w0 + w1 * w1 + w2 * w2
    B = y0 * w0 + y1 * w1 + y2 * w2
    C = y0 * y0 + y1 * y1 + y2 * y2 - 1.0
    if C <= 0.0:
        return True
    if A == 0.0:
        return False
    disc = B * B - A * C
    return disc >= 0.0 and (-B + math.sqrt(disc)) / A >= 0.0


@njit(cache=True)
def _ray_cylinder(x0, x1, x2, u0, u1, u2, r, h):
    """The ray meets the solid cylinder x² + y² ≤ r², |z| ≤ h at some t ≥ 0."""
    lo, hi = _slab(x2, u2, h, -math.inf, math.inf)
    A = u0 * u0 + u1 * u1
    C = x0 * x0 + x1 * x1 - r * r
    if A == 0.0:
        if C > 0.0:
            return False
    else:
        B = x0 * u0 + x1 * u1
        disc = B * B - A * C
        if disc < 0.0:
            return False
        s = math.sqrt(disc)
        lo = max(lo, (-B - s) / A)
        hi = min(hi, (-B + s) / A)
    return lo <= hi and hi >= 0.0


@njit(cache=True)
def _touch(m, d, site):
    """Σ normal forces of the contacts of the site's body whose ray enters the site.

    The ray's direction is kept in scalars: a 3-vector per call was a heap allocation per
    touch sensor per step (18 on dm_control's humanoid). The contacts with rows (the others
    exert no force) are visited in order, and a contact's force is decoded only when one
    of its bodies is the site's (as MuJoCo's touch sensor): decoding every contact's force
    for each sensor was 17k instructions a step on that humanoid, twice MuJoCo's sensors.
    """
    body = m.site_bodyid[site]
    total = 0.0
    efc_type = d.efc_type
    efc_id = d.efc_id
    cdim = d.contact_dim
    cgeom = d.contact_geom
    gbody = m.geom_bodyid
    i = d.ne[0] + d.nf[0] + d.nl[0]
    nefc = d.nefc[0]
    while i < nefc:
        # the contact's bodies first, from its rows' count; its force only where they match
        start = i
        c = efc_id[i]
        t = efc_type[i]
        if t == CNSTR_CONTACT_FRICTIONLESS:
            i += 1
        elif t == CNSTR_CONTACT_PYRAMIDAL:
            i += 2 * (cdim[c] - 1)
        else:
            i += cdim[c]
        b1 = gbody[cgeom[c, 0]]
        b2 = gbody[cgeom[c, 1]]
        if body != b1 and body != b2:
            continue
        _, _, fn, _, _, _, _, _ = _contact_force(d, start)
        if fn <= 0.0:
            continue
        sign = -1.0 if body == b2 else 1.0
        fr = d.contact_frame[c]
        n = math.sqrt(fr[0] * fr[0] + fr[1] * fr[1] + fr[2] * fr[2])
        if _ray_hits(m.site_type[site], m.site_size[site], d.site_xmat[site], d.site_xpos[site],
                     d.contact_pos[c], sign * fr[0] / n, sign * fr[1] / n, sign * fr[2] / n):
            total += fn
    return total


# ---------------------------------------------------------------------------------------------
# insidesite and the contact sensor


@njit(cache=True)
def inside_geom(pos, mat, size, gtype, point):
    """True if point is strictly inside the solid shape at pos, mat (mju_insideGeom)."""
    v0, v1, v2 = point[0] - pos[0], point[1] - pos[1], point[2] - pos[2]
    if gtype == GEOM_SPHERE:
        return v0 * v0 + v1 * v1 + v2 * v2 < size[0] * size[0]
    x = mat[0] * v0 + mat[3] * v1 + mat[6] * v2
    y = mat[1] * v0 + mat[4] * v1 + mat[7] * v2
    z = mat[2] * v0 + mat[5] * v1 + mat[8] * v2
    if gtype == GEOM_CAPSULE:
        dz = z - min(max(z, -size[1]), size[1])
        return x * x + y * y + dz * dz < size[0] * size[0]
    if gtype == GEOM_ELLIPSOID:
        return (x * x / (size[0] * size[0]) + y * y / (size[1] * size[1])
                + z * z / (size[2] * size[2]) < 1.0)
    if gtype == GEOM_CYLINDER:
        return abs(z) < size[1] and x * x + y * y < size[0] * size[0]
    if gtype == GEOM_BOX:
        return abs(x) < size[0] and abs(y) < size[1] and abs(z) < size[2]
    if gtype == GEOM_PLANE:
        return z < 0.0
    return False


@njit(cache=True)
def _in_criterion(m, body, geom, otype, oid):
    """Does the contact side (body, geom) meet a contact sensor's criterion (type, id)."""
    if otype == OBJ_UNKNOWN or otype == OBJ_SITE:  # the site test is done before
        return True
    if otype == OBJ_GEOM:
        return oid == geom
    if otype == OBJ_BODY:
        return oid == body
    if otype == OBJ_XBODY:  # the subtree of oid
        while body > oid:
            body = m.body_parentid[body]
        return body == oid
    return False


@njit(cache=True)
def _match_contact(m, d, c, t1, i1, t2, i2):
    """0: contact c does not match; 1: it does, normal as is; −1: it does, normal flipped.

    The first criterion's object should be on the normal's tail and the second's at its
    head (MuJoCo's matchContact); a site criterion takes the contacts inside the site.
    """
    if t1 == OBJ_UNKNOWN and t2 == OBJ_UNKNOWN:
        return 1
    if t1 == OBJ_SITE and not inside_geom(d.site_xpos[i1], d.site_xmat[i1], m.site_size[i1],
                                          m.site_type[i1], d.contact_pos[c]):
        return 0
    g1, g2 = d.contact_geom[c, 0], d.contact_geom[c, 1]
    b1, b2 = m.geom_bodyid[g1], m.geom_bodyid[g2]
    m11 = _in_criterion(m, b1, g1, t1, i1)
    m12 = _in_criterion(m, b2, g2, t1, i1)
    m21 = _in_criterion(m, b1, g1, t2, i2)
    m22 = _in_criterion(m, b2, g2, t2, i2)
    if not (m11 or m12) or not (m21 or m22):
        return 0
    if t1 != OBJ_UNKNOWN and t2 != OBJ_UNKNOWN:
        regular = m11 and m22
        reverse = m12 and m21
        return -1 if reverse and not regular else 1
    if t1 != OBJ_UNKNOWN:
        return 1 if m11 else -1
    return 1 if m22 else -1


@njit(cache=True)
def _contact_sensor(m, d, i, out, a, forces):
    """The contact sensor: up to num matching contacts' fields, or their net wrench.

    forces: the acceleration stage's sensor, which reads the contacts' forces.
    """
    frc = np.zeros((d.ncon[0], 6))
    if forces:
        contact_frame_forces(m, d, frc)
    spec = m.sensor_intprm[i, 0]
    reduce = m.sensor_intprm[i, 1]
    dim = m.sensor_dim[i]
    off = np.full(7, -1, dtype=np.int64)  # offset of each requested field within a slot
    size = 0
    for k in range(7):
        if spec >> k & 1:
            off[k] = size
            size += CONDATA_SIZE[k]
    for k in range(a, a + dim):
        out[k] = 0.0
    ncon = d.ncon[0]
    ids = np.empty(ncon, dtype=np.int64)
    sign = np.empty(ncon)
    crit = np.empty(ncon)
    n = np.int64(0)  # not the literal 0, which would compile a second _net_wrench
    for c in range(ncon):
        mt = _match_contact(m, d, c, m.sensor_objtype[i], m.sensor_objid[i],
                            m.sensor_reftype[i], m.sensor_refid[i])
        if mt == 0:
            continue
        ids[n] = c
        sign[n] = mt
        if reduce == REDUCE_MINDIST:
            crit[n] = d.contact_dist[c]
        elif reduce == REDUCE_MAXFORCE:
            crit[n] = -(frc[c, 0] * frc[c, 0] + frc[c, 1] * frc[c, 1] + frc[c, 2] * frc[c, 2])
        n += 1
    if reduce == REDUCE_NETFORCE:  # all zeros when nothing matches
        if n:
            _net_wrench(d, ids, sign, n, frc, off, out, a)
        return
    sort = reduce == REDUCE_MINDIST or reduce == REDUCE_MAXFORCE
    order = np.argsort(crit[:n], kind="mergesort") if sort else ids  # stable: ties by id
    for s in range(min(dim // size, n)):
        j = order[s] if sort else s
        c = ids[j]
        flip = sign[j] < 0.0
        base = a + s * size
        if off[0] >= 0:
            out[base + off[0]] = n
        for k in (1, 2):  # force, torque in the contact frame; z flips with the frame
            if off[k] >= 0:
                for j in range(3):
                    out[base + off[k] + j] = frc[c, 3 * (k - 1) + j]
                if flip:
                    out[base + off[k] + 2] *= -1.0
        if off[3] >= 0:
            out[base + off[3]] = d.contact_dist[c]
        if off[4] >= 0:
            for j in range(3):
                out[base + off[4] + j] = d.contact_pos[c, j]
        for k in (5, 6):  # normal, first tangent; both reverse with a flip
            if off[k] >= 0:
                for j in range(3):
                    v = d.contact_frame[c, 3 * (k - 5) + j]
                    out[base + off[k] + j] = -v if flip else v


@njit(cache=True)
def _net_wrench(d, ids, sign, n, frc, off, out, a):
    """netforce: the matching contacts' total wrench about their force-weighted centroid."""
    # the centroid, in slot 0's pos (or a local when pos is not read)
    p0 = p1 = p2 = total = 0.0
    for s in range(n):
        c = ids[s]
        w = math.sqrt(frc[c, 0] ** 2 + frc[c, 1] ** 2 + frc[c, 2] ** 2)
        p0 += w * d.contact_pos[c, 0]
        p1 += w * d.contact_pos[c, 1]
        p2 += w * d.contact_pos[c, 2]
        total += w
    w = 1.0 / max(total, MINVAL)
    p0, p1, p2 = p0 * w, p1 * w, p2 * w
    f0 = f1 = f2 = t0 = t1 = t2 = 0.0
    for s in range(n):
        c = ids[s]
        fr = d.contact_frame[c]
        lf = frc[c]
        g = sign[s]
        # the contact's world force and torque (frameᵀ local), flipped with the match
        c0 = g * (fr[0] * lf[0] + fr[3] * lf[1] + fr[6] * lf[2])
        c1 = g * (fr[1] * lf[0] + fr[4] * lf[1] + fr[7] * lf[2])
        c2 = g * (fr[2] * lf[0] + fr[5] * lf[1] + fr[8] * lf[2])
        r0 = d.contact_pos[c, 0] - p0
        r1 = d.contact_pos[c, 1] - p1
        r2 = d.contact_pos[c, 2] - p2
        f0, f1, f2 = f0 + c0, f1 + c1, f2 + c2
        t0 += g * (fr[0] * lf[3] + fr[3] * lf[4] + fr[6] * lf[5]) + r1 * c2 - r2 * c1
        t1 += g * (fr[1] * lf[3] + fr[4] * lf[4] + fr[7] * lf[5]) + r2 * c0 - r0 * c2
        t2 += g * (fr[2] * lf[3] + fr[5] * lf[4] + fr[8] * lf[5]) + r0 * c1 - r1 * c0
    if off[0] >= 0:
        out[a + off[0]] = n
    if off[1] >= 0:
        out[a + off[1]], out[a + off[1] + 1], out[a + off[1] + 2] = f0, f1, f2
    if off[2] >= 0:
        out[a + off[2]], out[a + off[2] + 1], out[a + off[2] + 2] = t0, t1, t2
    if off[4] >= 0:
        out[a + off[4]], out[a + off[4] + 1], out[a + off[4] + 2] = p0, p1, p2
    if off[5] >= 0:
        out[a + off[5]] = 1.0
    if off[6] >= 0:
        out[a + off[6] + 1] = 1.0


# ---------------------------------------------------------------------------------------------
# the sensors


@njit(cache=True)
def _limit_row_value(d, jnt, what, ctype=CNSTR_LIMIT_JOINT):
    """efc_pos − margin (0), efc_vel (1) or efc_force (2) of jnt's first ctype limit row, or 0.

    ctype: CNSTR_LIMIT_JOINT (jnt a joint) or CNSTR_LIMIT_TENDON (jnt a tendon).
    """
    for j in range(d.ne[0] + d.nf[0], d.nefc[0]):
        if d.efc_type[j] == ctype and d.efc_id[j] == jnt:
            if what == 0:
                return d.efc_pos[j] - d.efc_margin[j]
            if what == 1:
                return d.efc_vel[j]
            return d.efc_force[j]
    return 0.0


@njit(cache=True)
def _frame_pos_sensor(m, d, i, out, a):
    """framepos and frame{x,y,z}axis, in the world or the reference frame."""
    t = m.sensor_type[i]
    pos, mat, _ = _object_frame(m, d, m.sensor_objtype[i], m.sensor_objid[i])
    if t == SENS_FRAMEPOS:
        v0, v1, v2 = pos[0], pos[1], pos[2]
    else:
        k = t - SENS_FRAMEXAXIS
        v0, v1, v2 = mat[k], mat[k + 3], mat[k + 6]
    refid = m.sensor_refid[i]
    if refid < 0:
        out[a], out[a + 1], out[a + 2] = v0, v1, v2
        return
    rpos, rmat, _ = _object_frame(m, d, m.sensor_reftype[i], refid)
    if t == SENS_FRAMEPOS:
        v0, v1, v2 = v0 - rpos[0], v1 - rpos[1], v2 - rpos[2]
    _mat_t_vec(out, rmat, v0, v1, v2, a)


@njit(cache=True)
def _frame_quat_sensor(m, d, i, out, a, buf):
    """framequat: the object's quaternion, or q_ref⁻¹ ⊗ q_obj (buf: scratch, 8)."""
    q = buf[0:4]
    _object_quat(m, d, m.sensor_objtype[i], m.sensor_objid[i], q)
    refid = m.sensor_refid[i]
    if refid < 0:
        out[a:a + 4] = q
        return
    r = buf[4:8]
    _object_quat(m, d, m.sensor_reftype[i], refid, r)
    r[1], r[2], r[3] = -r[1], -r[2], -r[3]
    out[a] = r[0] * q[0] - r[1] * q[1] - r[2] * q[2] - r[3] * q[3]
    out[a + 1] = r[0] * q[1] + r[1] * q[0] + r[2] * q[3] - r[3] * q[2]
    out[a + 2] = r[0] * q[2] - r[1] * q[3] + r[2] * q[0] + r[3] * q[1]
    out[a + 3] = r[0] * q[3] + r[1] * q[2] - r[2] * q[1] + r[3] * q[0]


@njit(cache=True)
def _frame_vel_sensor(m, d, i, out, a, buf):
    """framelinvel / frameangvel: world velocity, or relative to a moving reference frame.

    Relative: v − v_ref + (p − p_ref) × ω_ref, both parts rotated into the reference frame.
    buf: scratch (18).
    """
    v = buf[0:6]
    object_velocity(m, d, np.int64(m.sensor_objtype[i]), np.int64(m.sensor_objid[i]),
                    np.bool_(False), v)
    refid = m.sensor_refid[i]
    if refid >= 0:
        reftype = m.sensor_reftype[i]
        pos, _, _ = _object_frame(m, d, m.sensor_objtype[i], m.sensor_objid[i])
        rpos, rmat, _ = _object_frame(m, d, reftype, refid)
        vr = buf[6:12]
        object_velocity(m, d, np.int64(reftype), np.int64(refid), np.bool_(False), vr)
        for k in range(6):
            v[k] -= vr[k]
        r0, r1, r2 = pos[0] - rpos[0], pos[1] - rpos[1], pos[2] - rpos[2]
        v[3] += r1 * vr[2] - r2 * vr[1]
        v[4] += r2 * vr[0] - r0 * vr[2]
        v[5] += r0 * vr[1] - r1 * vr[0]
        w = buf[12:18]
        w[:] = v
        _mat_t_vec(v, rmat, w[0], w[1], w[2], 0)
        _mat_t_vec(v, rmat, w[3], w[4], w[5], 3)
    k = 3 if m.sensor_type[i] == SENS_FRAMELINVEL else 0
    out[a], out[a + 1], out[a + 2] = v[k], v[k + 1], v[k + 2]


@njit(cache=True)
def _geom_distance_sensor(m, d, i, out, a):
    """geomdist / geomnormal / geomfromto of the closest pair of geoms, up to the cutoff.

    Each side is a geom or all of a body's geoms; mj_geomDistance over the pairs.
    """
    cut = m.sensor_cutoff[i]
    lists = np.empty((2, 2), dtype=np.int64)  # (first geom, count) of each side
    for s in range(2):
        ot = m.sensor_objtype[i] if s == 0 else m.sensor_reftype[i]
        oid = m.sensor_objid[i] if s == 0 else m.sensor_refid[i]
        if ot == OBJ_BODY:
            lists[s, 0], lists[s, 1] = m.body_geomadr[oid], m.body_geomnum[oid]
        else:
            lists[s, 0], lists[s, 1] = oid, 1
    ws = make_workspace(m.opt_ccd_iterations[0])
    dist = cut
    fromto = np.zeros(6)
    new = np.empty(6)
    for g1 in range(lists[0, 0], lists[0, 0] + lists[0, 1]):
        for g2 in range(lists[1, 0], lists[1, 0] + lists[1, 1]):
            dn = geom_distance(m, d, g1, g2, cut, new, ws)
            if dn < dist:
                dist = dn
                fromto[:] = new
    t = m.sensor_type[i]
    if t == SENS_GEOMDIST:
        out[a] = dist
    elif t == SENS_GEOMNORMAL:
        n0, n1, n2 = fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]
        nn = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        if nn > 0.0:  # MuJoCo's mju_normalize3: a tiny vector becomes (1, 0, 0)
            if nn < MINVAL:
                n0, n1, n2, nn = 1.0, 0.0, 0.0, 1.0
            n0, n1, n2 = n0 / nn, n1 / nn, n2 / nn
        out[a], out[a + 1], out[a + 2] = n0, n1, n2
    else:
        out[a:a + 6] = fromto


@njit(cache=True)
def _ray_data(out, a, spec, dist, p, v, n, depth):
    """One ray's rangefinder data fields in RAYDATA order (dist dir origin point normal depth).

    A miss (dist < 0) reads dist −1, dir, point and normal 0, depth −1 (mj_sensorPos's
    fill_raydata). Returns the address after them.
    """
    hit = dist >= 0.0
    v0, v1, v2 = v
    if spec & (1 << RAYDATA_DIST):
        out[a] = dist
        a += 1
    if spec & (1 << RAYDATA_DIR):
        out[a], out[a + 1], out[a + 2] = (v0, v1, v2) if hit else (0.0, 0.0, 0.0)
        a += 3
    if spec & (1 << RAYDATA_ORIGIN):
        out[a], out[a + 1], out[a + 2] = p[0], p[1], p[2]
        a += 3
    if spec & (1 << RAYDATA_POINT):
        if hit:  # point = origin + dist · dir
            out[a], out[a + 1], out[a + 2] = p[0] + dist * v0, p[1] + dist * v1, p[2] + dist * v2
        else:
            out[a], out[a + 1], out[a + 2] = 0.0, 0.0, 0.0
        a += 3
    if spec & (1 << RAYDATA_NORMAL):
        out[a], out[a + 1], out[a + 2] = n if hit else (0.0, 0.0, 0.0)
        a += 3
    if spec & (1 << RAYDATA_DEPTH):
        out[a] = depth if hit else -1.0
        a += 1
    return a


@njit(cache=True)
def _camera_rays(m, d, c, spec, out, a):
    """A camera rangefinder: one ray per pixel, rows from the top (MuJoCo's depth image).

    Pixel centers (col + ½ − cx, row + ½ − cy) with mju_camIntrinsics' focal lengths and
    principal point: perspective rays from cam_xpos along R (x/fx, −y/fy, −1) normalized;
    orthographic rays along −z from cam_xpos + R (x/fx, −y/fy, 0) fovy/2. The camera's body
    is excluded; depth is the hit's distance along the viewing axis −z.
    """
    w, h = m.cam_resolution[c, 0], m.cam_resolution[c, 1]
    R, x = d.cam_xmat[c], d.cam_xpos[c]
    ortho = m.cam_projection[c] == PROJ_ORTHOGRAPHIC
    s0, s1 = np.float32(m.cam_sensorsize[c, 0]), np.float32(m.cam_sensorsize[c, 1])
    if ortho:
        fx, fy = 0.5 * w, 0.5 * h
        cx, cy = fx, fy
    elif s0 != 0 and s1 != 0:  # single precision, as MuJoCo's float fields compute it
        fx = float(np.float32(np.float32(m.cam_intrinsic[c, 0]) / s0) * np.float32(w))
        fy = float(np.float32(np.float32(m.cam_intrinsic[c, 1]) / s1) * np.float32(h))
        cx = float(np.float32(np.float32(m.cam_intrinsic[c, 2]) / s0) * np.float32(w))
        cy = float(np.float32(np.float32(m.cam_intrinsic[c, 3]) / s1) * np.float32(h))
    else:
        fx = 0.5 / math.tan(m.cam_fovy[c] * math.pi / 360.0) * h
        fy = fx
        cx, cy = 0.5 * w, 0.5 * h
    half = 0.5 * m.cam_fovy[c]
    body = m.cam_bodyid[c]
    for row in range(h):
        for col in range(w):
            e0 = (col + 0.5 - cx) / fx
            e1 = -(row + 0.5 - cy) / fy
            if ortho:
                v = (-R[2], -R[5], -R[8])
                p = (x[0] + (R[0] * e0 + R[1] * e1) * half, x[1] + (R[3] * e0 + R[4] * e1) * half,
                     x[2] + (R[6] * e0 + R[7] * e1) * half)
            else:
                v = _unit3(R[0] * e0 + R[1] * e1 - R[2], R[3] * e0 + R[4] * e1 - R[5],
                           R[6] * e0 + R[7] * e1 - R[8])
                p = (x[0], x[1], x[2])
            dist, g = ray_kernel(m, d, p, v, _ALL_GROUPS, True, body)
            n = (0.0, 0.0, 0.0)
            if g >= 0 and spec & (1 << RAYDATA_NORMAL):
                n = ray_normal(m, d, g, p, v, dist)
            # depth = −(point − cam_xpos) · z
            depth = -((p[0] + dist * v[0] - x[0]) * R[2] + (p[1] + dist * v[1] - x[1]) * R[5]
                      + (p[2] + dist * v[2] - x[2]) * R[8])
            a = _ray_data(out, a, spec, dist, p, v, n, depth)


# ---------------------------------------------------------------------------------------------
# tactile: the penetration of a mesh's vertices (taxels) into the geoms touching its body


@njit(cache=True, inline="always")
def _touching(m, d, k, weld):
    """The geom on the other side of candidate k (contact k // 2, side k % 2), or −1.

    Side 0 names geom2 when geom1's body is in the weld group, side 1 geom1 when geom2's is.
    """
    c = k >> 1
    if k & 1 == 0:
        if m.body_weldid[m.geom_bodyid[d.contact_geom[c, 0]]] == weld:
            return d.contact_geom[c, 1]
        return -1
    if m.body_weldid[m.geom_bodyid[d.contact_geom[c, 1]]] == weld:
        return d.contact_geom[c, 0]
    return -1


@njit(cache=True)
def geom_sdf(gtype, size, x0, x1, x2):
    """Signed distance of the local point x to a primitive geom (MuJoCo's geomDistance).

    plane x₂; sphere |x| − r; capsule |x − clip(x₂) e₂| − r; ellipsoid k₀(k₀ − 1)/k₁ with
    k₀ = |x/s|, k₁ = |x/s²|; cylinder and box the exact distance outside; inside a box the
    distance along a field that turns from radial to the face normals (radialField3d).
    Engine_collision_sdf.c; https://iquilezles.org/articles/distfunctions/.
    """
    if gtype == GEOM_PLANE:
        return x2
    if gtype == GEOM_SPHERE:
        return math.sqrt(x0 * x0 + x1 * x1 + x2 * x2) - size[0]
    if gtype == GEOM_CAPSULE:
        z = x2 - min(max(x2, -size[1]), size[1])
        return math.sqrt(x0 * x0 + x1 * x1 + z * z) - size[0]
    if gtype == GEOM_ELLIPSOID:
        a0, a1, a2 = x0 / size[0], x1 / size[1], x2 / size[2]
        b0, b1, b2 = a0 / size[0], a1 / size[1], a2 / size[2]
        k0 = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        k1 = math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
        return k0 * (k0 - 1.0) / k1
    if gtype == GEOM_CYLINDER:
        a0 = math.sqrt(x0 * x0 + x1 * x1) - size[0]
        a1 = abs(x2) - size[1]
        b0, b1 = max(a0, 0.0), max(a1, 0.0)
        return min(max(a0, a1), 0.0) + math.sqrt(b0 * b0 + b1 * b1)
    # box
    a0, a1, a2 = abs(x0) - size[0], abs(x1) - size[1], abs(x2) - size[2]
    if a0 >= 0 or a1 >= 0 or a2 >= 0:
        b0, b1, b2 = max(a0, 0.0), max(a1, 0.0), max(a2, 0.0)
        return math.sqrt(b0 * b0 + b1 * b1 + b2 * b2) + min(max(a0, max(a1, a2)), 0.0)
    # inside: b = −s/a normalized, signed as x; distance −min_i(−a_i / |b_i|) |b|
    b0, b1, b2 = _unit3(-size[0] / a0, -size[1] / a1, -size[2] / a2)
    if x0 < 0:
        b0 = -b0
    if x1 < 0:
        b1 = -b1
    if x2 < 0:
        b2 = -b2
    t0, t1, t2 = -a0 / abs(b0), -a1 / abs(b1), -a2 / abs(b2)
    return -min(t0, min(t1, t2)) * math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)


@njit(cache=True)
def _tactile(m, d, mesh, geom, out, a):
    """Tactile sensor: per taxel, the deepest penetration and the tangential slip speeds.

    Taxel j is vertex v_j of the mesh placed in the geom's frame: p_j = R_g v_j + x_g. The
    geoms touching the geom's weld group W are the other sides of d.contact, first
    occurrences in contact order (mesh geoms skipped: MuJoCo 4.0 builds no SDF for them).
    For each, with φ its signed distance at p_j (`geom_sdf`) and depth = min(φ, 0) < 0:
      out[j]        = max(out[j], −depth)
      out[n + j]   += |v_rel · t₁_j|,  out[2n + j] += |v_rel · t₂_j|   (frames only)
    v_rel: the linear velocity of W at p_j less that of the other geom's body at p_j (cvel
    moved from the subtree com, mju_transformSpatial); t₁, t₂ the vertex's tangents turned
    with the taxels, R_g t (MuJoCo 4.0's mjSENS_TACTILE, measured against it).
    """
    n = m.mesh_vertnum[mesh]
    for k in range(a, a + 3 * n):
        out[k] = 0.0
    weld = m.body_weldid[m.geom_bodyid[geom]]
    frame = m.mesh_tangentadr[mesh]
    R = d.geom_xmat[geom]
    xg = d.geom_xpos[geom]
    vw = d.cvel[weld]
    cw = d.subtree_com[m.body_rootid[weld]]
    for k in range(2 * d.ncon[0]):
        g = _touching(m, d, k, weld)
        if g < 0 or m.geom_type[g] == GEOM_MESH:
            continue
        first = True
        for e in range(k):
            if _touching(m, d, e, weld) == g:
                first = False
                break
        if not first:
            continue
        b = m.geom_bodyid[g]
        vb = d.cvel[b]
        cb = d.subtree_com[m.body_rootid[b]]
        Q = d.geom_xmat[g]
        q = d.geom_xpos[g]
        for j in range(n):
            v = m.mesh_vert[m.mesh_vertadr[mesh] + j]
            # p = R_g v + x_g; the point in g's frame: Q_gᵀ (p − x_g')
            p0 = R[0] * v[0] + R[1] * v[1] + R[2] * v[2] + xg[0]
            p1 = R[3] * v[0] + R[4] * v[1] + R[5] * v[2] + xg[1]
            p2 = R[6] * v[0] + R[7] * v[1] + R[8] * v[2] + xg[2]
            e0, e1, e2 = p0 - q[0], p1 - q[1], p2 - q[2]
            depth = min(geom_sdf(m.geom_type[g], m.geom_size[g],
                                 Q[0] * e0 + Q[3] * e1 + Q[6] * e2,
                                 Q[1] * e0 + Q[4] * e1 + Q[7] * e2,
                                 Q[2] * e0 + Q[5] * e1 + Q[8] * e2), 0.0)
            if depth == 0.0:
                continue
            out[a + j] = max(out[a + j], -depth)
            if frame < 0:
                continue
            # v_rel = (W's velocity at p) − (the other body's velocity at p)
            s0, s1, s2 = p0 - cw[0], p1 - cw[1], p2 - cw[2]
            r0, r1, r2 = p0 - cb[0], p1 - cb[1], p2 - cb[2]
            u0 = vw[3] - (s1 * vw[2] - s2 * vw[1]) - (vb[3] - (r1 * vb[2] - r2 * vb[1]))
            u1 = vw[4] - (s2 * vw[0] - s0 * vw[2]) - (vb[4] - (r2 * vb[0] - r0 * vb[2]))
            u2 = vw[5] - (s0 * vw[1] - s1 * vw[0]) - (vb[5] - (r0 * vb[1] - r1 * vb[0]))
            t = m.mesh_tangent[frame + j]
            for c in range(2):
                # the tangent in the world: R_g t
                w0 = R[0] * t[3 * c] + R[1] * t[3 * c + 1] + R[2] * t[3 * c + 2]
                w1 = R[3] * t[3 * c] + R[4] * t[3 * c + 1] + R[5] * t[3 * c + 2]
                w2 = R[6] * t[3 * c] + R[7] * t[3 * c + 1] + R[8] * t[3 * c + 2]
                out[a + (c + 1) * n + j] += abs(u0 * w0 + u1 * w1 + u2 * w2)


@njit(cache=True, inline="always")
def _unit3(a, b, c):
    """(a, b, c) normalized as mju_normalize3 does ((1, 0, 0) below MINVAL)."""
    nrm = math.sqrt(a * a + b * b + c * c)
    if nrm < MINVAL:
        return 1.0, 0.0, 0.0
    inv = 1.0 / nrm
    return a * inv, b * inv, c * inv


@njit(cache=True)
def _cam_project(m, d, target, c, out, a):
    """Pixel coordinates of the point `target` in camera c (MuJoCo's cam_project).

    f = intrinsic / sensorsize · resolution (in single precision, as MuJoCo's float fields
    compute it) with a sensor size, else ½ resolution_y / tan(fovy / 2);
    p = cam_xmatᵀ (target − cam_xpos);  u = −f_x p_x / p_z + ½ width,  v = f_y p_y / p_z + ½ height
    (p_z kept at least MINVAL away from 0).
    """
    w = m.cam_resolution[c, 0]
    h = m.cam_resolution[c, 1]
    s0 = np.float32(m.cam_sensorsize[c, 0])
    s1 = np.float32(m.cam_sensorsize[c, 1])
    if s0 != 0 and s1 != 0:
        fx = float(np.float32(np.float32(m.cam_intrinsic[c, 0]) / s0) * np.float32(w))
        fy = float(np.float32(np.float32(m.cam_intrinsic[c, 1]) / s1) * np.float32(h))
    else:
        fx = 0.5 / math.tan(m.cam_fovy[c] * math.pi / 360.0) * h
        fy = fx
    R = d.cam_xmat[c]
    e0 = target[0] - d.cam_xpos[c, 0]
    e1 = target[1] - d.cam_xpos[c, 1]
    e2 = target[2] - d.cam_xpos[c, 2]
    p0 = R[0] * e0 + R[3] * e1 + R[6] * e2
    p1 = R[1] * e0 + R[4] * e1 + R[7] * e2
    z = R[2] * e0 + R[5] * e1 + R[8] * e2
    if abs(z) < MINVAL:
        z = min(z, -MINVAL) if z < 0 else max(z, MINVAL)
    out[a] = -fx * (p0 / z) + 0.5 * w
    out[a + 1] = fy * (p1 / z) + 0.5 * h


@njit(cache=True)
def _pos_sensor(m, d, i, out, a, buf):
    t = m.sensor_type[i]
    obj = m.sensor_objid[i]
    if t == SENS_MAGNETOMETER:
        g = m.opt_magnetic
        _mat_t_vec(out, d.site_xmat[obj], g[0], g[1], g[2], a)
    elif t == SENS_BALLQUAT:
        q = m.jnt_qposadr[obj]
        w, x, y, z = d.qpos[q], d.qpos[q + 1], d.qpos[q + 2], d.qpos[q + 3]
        n = math.sqrt(w * w + x * x + y * y + z * z)
        if n < 1e-15:
            w, x, y, z, n = 1.0, 0.0, 0.0, 0.0, 1.0
        out[a], out[a + 1], out[a + 2], out[a + 3] = w / n, x / n, y / n, z / n
    elif t == SENS_JOINTLIMITPOS:
        out[a] = _limit_row_value(d, obj, 0)
    elif t == SENS_TENDONLIMITPOS:
        out[a] = _limit_row_value(d, obj, 0, CNSTR_LIMIT_TENDON)
    elif t == SENS_FRAMEPOS or t == SENS_FRAMEXAXIS or t == SENS_FRAMEYAXIS \
            or t == SENS_FRAMEZAXIS:
        _frame_pos_sensor(m, d, i, out, a)
    elif t == SENS_SUBTREECOM:
        out[a:a + 3] = d.subtree_com[obj]
    elif t == SENS_RANGEFINDER:  # along the site's z axis, its own body excluded
        if m.sensor_objtype[i] == OBJ_CAMERA:
            _camera_rays(m, d, obj, m.sensor_intprm[i, 0], out, a)
        else:
            R = d.site_xmat[obj]
            # a tuple, as the camera's rays pass it: one compiled ray_kernel for both
            p = (d.site_xpos[obj, 0], d.site_xpos[obj, 1], d.site_xpos[obj, 2])
            v = (R[2], R[5], R[8])
            dist, g = ray_kernel(m, d, p, v, _ALL_GROUPS, True, m.site_bodyid[obj])
            n = (0.0, 0.0, 0.0)
            if g >= 0 and m.sensor_intprm[i, 0] & (1 << RAYDATA_NORMAL):
                n = ray_normal(m, d, g, p, v, dist)
            _ray_data(out, a, m.sensor_intprm[i, 0], dist, p, v, n, dist)
    elif t == SENS_CAMPROJECTION:
        _cam_project(m, d, d.site_xpos[obj], m.sensor_refid[i], out, a)
    elif t == SENS_INSIDESITE:
        ot = m.sensor_objtype[i]
        pos, _, _ = _object_frame(m, d, ot, obj)
        if ot == OBJ_BODY and obj > 0 and m.body_mass[obj] < MINVAL \
                and m.body_subtreemass[obj] >= MINVAL:
            pos = d.subtree_com[obj]  # a massless body with mass below: its subtree com
        r = m.sensor_refid[i]
        out[a] = 1.0 if inside_geom(d.site_xpos[r], d.site_xmat[r], m.site_size[r],
                                    m.site_type[r], pos) else 0.0
    elif t == SENS_GEOMDIST or t == SENS_GEOMNORMAL or t == SENS_GEOMFROMTO:
        _geom_distance_sensor(m, d, i, out, a)
    elif t == SENS_CONTACT:  # at this stage without forces
        _contact_sensor(m, d, i, out, a, np.bool_(False))
    elif t == SENS_E_POTENTIAL:
        energy_pos(m, d)
        out[a] = d.energy[0]
    elif t == SENS_E_KINETIC:
        energy_vel(m, d)
        out[a] = d.energy[1]


@njit(cache=True)
def _vel_sensor(m, d, i, out, a, buf):
    t = m.sensor_type[i]
    obj = m.sensor_objid[i]
    if t == SENS_BALLANGVEL:
        v = m.jnt_dofadr[obj]
        out[a], out[a + 1], out[a + 2] = d.qvel[v], d.qvel[v + 1], d.qvel[v + 2]
    elif t == SENS_JOINTLIMITVEL:
        out[a] = _limit_row_value(d, obj, 1)
    elif t == SENS_TENDONLIMITVEL:
        out[a] = _limit_row_value(d, obj, 1, CNSTR_LIMIT_TENDON)
    elif t == SENS_FRAMELINVEL or t == SENS_FRAMEANGVEL:
        _frame_vel_sensor(m, d, i, out, a, buf)
    elif t == SENS_SUBTREELINVEL:
        out[a:a + 3] = d.subtree_linvel[obj]
    elif t == SENS_SUBTREEANGMOM:
        out[a:a + 3] = d.subtree_angmom[obj]
    elif t == SENS_TACTILE:
        _tactile(m, d, obj, m.sensor_refid[i], out, a)


@njit(cache=True)
def _acc_sensor(m, d, i, out, a, buf):
    t = m.sensor_type[i]
    obj = m.sensor_objid[i]
    if t == SENS_CONTACT:
        _contact_sensor(m, d, i, out, a, np.bool_(True))
    elif t == SENS_FORCE or t == SENS_TORQUE:
        # cfrc_int of the site's body moved to the site and rotated into its frame
        b = m.site_bodyid[obj]
        f = d.cfrc_int[b]
        c = d.subtree_com[m.body_rootid[b]]
        p = d.site_xpos[obj]
        R = d.site_xmat[obj]
        if t == SENS_FORCE:
            _mat_t_vec(out, R, f[3], f[4], f[5], a)
        else:
            r0, r1, r2 = p[0] - c[0], p[1] - c[1], p[2] - c[2]
            _mat_t_vec(out, R, f[0] - (r1 * f[5] - r2 * f[4]), f[1] - (r2 * f[3] - r0 * f[5]),
                       f[2] - (r0 * f[4] - r1 * f[3]), a)
    elif t == SENS_JOINTLIMITFRC:
        out[a] = _limit_row_value(d, obj, 2)
    elif t == SENS_TENDONLIMITFRC:
        out[a] = _limit_row_value(d, obj, 2, CNSTR_LIMIT_TENDON)
    elif t == SENS_TENDONACTFRC:
        # Σ actuator_force over the actuators transmitting through the tendon
        f = 0.0
        for u in range(m.nactuator):
            if m.actuator_trntype[u] == TRN_TENDON and m.actuator_trnid[u, 0] == obj:
                f += d.actuator_force[m.actuator_outadr[u]]
        out[a] = f
    elif t == SENS_FRAMELINACC or t == SENS_FRAMEANGACC:
        v = buf[0:6]
        object_acceleration(m, d, np.int64(m.sensor_objtype[i]), np.int64(obj), np.bool_(False),
                            v, buf[6:12])
        k = 3 if t == SENS_FRAMELINACC else 0
        out[a], out[a + 1], out[a + 2] = v[k], v[k + 1], v[k + 2]


@njit(cache=True)
def _cutoff(m, i, out, a):
    """Clip to ±cutoff (real data) or to ≤ cutoff (positive data) when cutoff > 0."""
    cut = m.sensor_cutoff[i]
    t = m.sensor_type[i]
    if cut <= 0.0 or t == SENS_CONTACT or t == SENS_GEOMFROMTO:
        return
    dt = m.sensor_datatype[i]
    for k in range(a, a + m.sensor_dim[i]):
        if dt == DATATYPE_REAL:
            out[k] = min(max(out[k], -cut), cut)
        elif dt == DATATYPE_POSITIVE:
            out[k] = min(out[k], cut)


@njit(cache=True, inline="always")
def _needs_post(t):
    """True for the types that read rne_post_constraint's cacc, cfrc_int, cfrc_ext."""
    return (t == SENS_ACCELEROMETER or t == SENS_FORCE or t == SENS_TORQUE
            or t == SENS_FRAMELINACC or t == SENS_FRAMEANGACC)


@njit(cache=True, inline="always")
def _computed_now(m, d, i):
    """True when forward computes sensor i, False when it reads it from its history buffer.

    Read: a delay > 0, or a period > 0 whose next sample is not due (user + period > time);
    MuJoCo's compute_or_read_sensor.
    """
    n = m.sensor_history[i, 0]
    if n <= 0:
        return True
    if m.sensor_delay[i] > 0.0:
        return False
    period = m.sensor_interval[i, 0]
    if period > 0.0:
        return d.history[m.sensor_historyadr[i]] + period <= d.time[0]
    return True


# what a sensor reads beyond forward's outputs (`_needs`)
NEED_NOTHING = 0
NEED_SUBTREE = 1  # subtree_linvel, subtree_angmom (subtree_vel)
NEED_POST = 2  # cacc, cfrc_int, cfrc_ext (rne_post_constraint)


@njit(cache=True, inline="always")
def _needs(m, i):
    """Which of the NEED_* quantities sensor i reads."""
    t = m.sensor_type[i]
    if t == SENS_SUBTREELINVEL or t == SENS_SUBTREEANGMOM:
        return NEED_SUBTREE
    if _needs_post(t):
        return NEED_POST
    return NEED_NOTHING


@njit(cache=True)
def _prerequisites(m, d, subtree, post):
    """Compute what the sensors to come read (touch and contact sensors read efc_force)."""
    if subtree:
        subtree_vel(m, d)
    if post:
        rne_post_constraint(m, d)


@njit(cache=True, inline="always")
def _sensor_scratch(d):
    """The sensors' small vectors (18): scratch_body[0, 12:30], a buffer of Data's.

    A borrowed buffer: compiled code counts no references to it, where a local array
    took an atomic increment and decrement for each sensor (about 20 ns each, measured).
    rne_post_constraint, which runs before the sensors, uses scratch_body[0, 0:12].
    """
    return d.scratch_body[0, 12:30]


@njit(cache=True)
def _site_motion(m, d, t, site, out, a, buf):
    """accelerometer, velocimeter or gyro at a site, in the site's frame."""
    v = buf[0:6]
    if t == SENS_ACCELEROMETER:
        object_acceleration(m, d, np.int64(OBJ_SITE), np.int64(site), np.bool_(True), v,
                            buf[6:12])
    else:
        object_velocity(m, d, np.int64(OBJ_SITE), np.int64(site), np.bool_(True), v)
    k = 0 if t == SENS_GYRO else 3
    out[a], out[a + 1], out[a + 2] = v[k], v[k + 1], v[k + 2]


@njit(cache=True, inline="always")
def _common(m, d, i, t, obj, out, a, buf):
    """The sensors a controller reads most; False for the other types.

    The one-number copies of forward's outputs are written here, the IMU and touch
    sensors by their own small functions: through the stage dispatchers, whose frames
    hold every type's locals, a joint encoder cost about 80 ns a step (measured in a
    compiled loop), against 5 ns here.
    """
    if t == SENS_JOINTPOS:
        out[a] = d.qpos[m.jnt_qposadr[obj]]
    elif t == SENS_JOINTVEL:
        out[a] = d.qvel[m.jnt_dofadr[obj]]
    elif t == SENS_ACTUATORFRC:
        # one value per output of the actuator (3 for orientation)
        o = m.actuator_outadr[obj]
        for k in range(m.actuator_outnum[obj]):
            out[a + k] = d.actuator_force[o + k]
    elif t == SENS_JOINTACTFRC:
        out[a] = d.qfrc_actuator[m.jnt_dofadr[obj]]
    elif t == SENS_ACTUATORPOS:
        o = m.actuator_outadr[obj]
        for k in range(m.actuator_outnum[obj]):
            out[a + k] = d.actuator_length[o + k]
    elif t == SENS_ACTUATORVEL:
        o = m.actuator_outadr[obj]
        for k in range(m.actuator_outnum[obj]):
            out[a + k] = d.actuator_velocity[o + k]
    elif t == SENS_TENDONPOS:
        out[a] = d.ten_length[obj]
    elif t == SENS_TENDONVEL:
        out[a] = d.ten_velocity[obj]
    elif t == SENS_CLOCK:
        out[a] = d.time[0]
    elif t == SENS_ACCELEROMETER or t == SENS_VELOCIMETER or t == SENS_GYRO:
        _site_motion(m, d, t, obj, out, a, buf)
    elif t == SENS_TOUCH:
        out[a] = _touch(m, d, obj)
    elif t == SENS_FRAMEQUAT:
        _frame_quat_sensor(m, d, i, out, a, buf)
    else:
        return False
    return True


@njit(cache=True, inline="always")
def _compute(m, d, i, out, a, buf):
    """Sensor i into out[a : a + sensor_dim[i]], cutoff applied (mj_computeSensor).

    buf: scratch (18) for the sensors' small vectors, a borrowed one (`_sensor_scratch`).
    """
    t = m.sensor_type[i]
    if not _common(m, d, i, t, m.sensor_objid[i], out, a, buf):
        stage = m.sensor_needstage[i]
        if stage == STAGE_POS:
            _pos_sensor(m, d, i, out, a, buf)
        elif stage == STAGE_VEL:
            _vel_sensor(m, d, i, out, a, buf)
        else:
            _acc_sensor(m, d, i, out, a, buf)
    if m.sensor_cutoff[i] > 0.0:
        _cutoff(m, i, out, a)


@njit(cache=True)
def sensor_stage(m, d):
    """Every sensor into d.sensordata, position, velocity and acceleration stages in turn.

    Nothing happens when the model has no sensor or the "sensor" flag is disabled (MuJoCo
    then leaves sensordata as it was). A sensor with a history buffer that is delayed, or
    sampled and not due, is read from the buffer (`jointspace.history`).
    """
    ns = m.nsensor
    if ns == 0 or m.opt_disableflags[0] & DSBL_SENSOR:
        return
    out = d.sensordata
    hist = m.nhistory > 0
    subtree = False
    post = False
    for i in range(ns):
        if hist and not _computed_now(m, d, i):
            continue
        need = _needs(m, i)
        subtree |= need == NEED_SUBTREE
        post |= need == NEED_POST
    _prerequisites(m, d, subtree, post)
    buf = _sensor_scratch(d)
    for i in range(ns):
        a = np.int64(m.sensor_adr[i])  # advance_history's slots are int64: one type for both
        t = m.sensor_type[i]
        if t == SENS_USER:
            for k in range(a, a + m.sensor_dim[i]):
                out[k] = 0.0
            continue
        if not _computed(t):
            for k in range(a, a + m.sensor_dim[i]):
                out[k] = np.nan
            continue
        if hist and not _computed_now(m, d, i):
            read(d.history, m.sensor_historyadr[i], m.sensor_history[i, 0], m.sensor_dim[i],
                 d.time[0] - m.sensor_delay[i], m.sensor_history[i, 1], out, a)
            continue
        _compute(m, d, i, out, a, buf)


@njit(cache=True)
def advance_history(m, d, ctrl, sensors):
    """Write this step's samples into the history buffers (the start of MuJoCo's mj_advance).

    With ctrl, each actuator with a buffer gets its control block at d.time; with sensors,
    each sensor with one, by its mode (`jointspace.history`): d.sensordata, or (delay > 0)
    the sensor computed now from d as forward left it, and a sampled sensor only when due,
    its clock advanced by the period. RK4 writes the sensors before its stages and the
    controls after them (forward's stages read the control buffers, never the sensor ones):
    MuJoCo 4.0's RK4 records the sensors of the state the step starts from, measured.
    """
    t = d.time[0]
    buf = d.history
    if ctrl:
        for i in range(m.nactuator):
            n = m.actuator_history[i, 0]
            if n > 0:
                dim = m.actuator_ctrlnum[i]
                v = insert(buf, m.actuator_historyadr[i], n, dim, t)
                for k in range(dim):
                    buf[v + k] = d.ctrl[m.actuator_ctrladr[i] + k]
    if not sensors:
        return
    ns = m.nsensor
    due = np.zeros(ns, dtype=np.bool_)
    subtree = False
    post = False
    for i in range(ns):
        n = m.sensor_history[i, 0]
        if n <= 0:
            continue
        period = m.sensor_interval[i, 0]
        due[i] = period <= 0.0 or buf[m.sensor_historyadr[i]] + period <= t
        if due[i] and m.sensor_delay[i] > 0.0:
            need = _needs(m, i)
            subtree |= need == NEED_SUBTREE
            post |= need == NEED_POST
    _prerequisites(m, d, subtree, post)
    scratch = _sensor_scratch(d)
    for i in range(ns):
        if not due[i]:
            continue
        n = m.sensor_history[i, 0]
        adr = m.sensor_historyadr[i]
        dim = m.sensor_dim[i]
        period = m.sensor_interval[i, 0]
        if period > 0.0:
            buf[adr] += period
        slot = insert(buf, adr, n, dim, t)
        if m.sensor_delay[i] > 0.0:
            _compute(m, d, i, buf, slot, scratch)
        else:
            a = m.sensor_adr[i]
            for k in range(dim):
                buf[slot + k] = d.sensordata[a + k]


@njit(cache=True, inline="always")
def _computed(t):
    return t != SENS_PLUGIN


# ---------------------------------------------------------------------------------------------
# by name


def sensor(m, d, name):
    """The values of the sensor `name` (or id): a view of d.sensordata, (sensor_dim,).

    Filled by `forward`, `step` and `inverse`; a view, so it follows later calls.
    """
    check_pair(m, d, "sensor")
    i = m.id("sensor", name)
    a = int(m.sensor_adr[i])
    return d.sensordata[a:a + int(m.sensor_dim[i])]
