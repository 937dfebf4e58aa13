"""Compile a `ModelSpec` into a flat, read-only `Model`.

What happens here, in order:
1. bodies are numbered depth-first, parent before child (DESIGN.md §2.3), then joints, dofs,
   geoms and sites in body order, with the address tables (`*_adr`, `*_num`) and the tree
   sparsity tables (`dof_parentid`, `dof_Madr`);
2. each body's mass and inertia comes from its `inertial` or, following MuJoCo's
   `inertiafromgeom` rules, from its geoms (volume × density, per-type inertia, parallel
   axis); full inertia tensors are diagonalized into `body_inertia` and `body_iquat`;
3. names are resolved (actuator targets, equality objects, contact pairs, exclusions);
4. the model is validated: positive masses, the triangle inequality on principal inertias,
   unique names, and dofs that carry no inertia at all (M singular: a warning); values so
   large that a derived mass, inertia, world position or M overflows are refused by name;
5. constants that depend on the reference configuration (`dof_M0`, `dof_invweight0`,
   `body_subtreemass`) are computed with the compiled pipeline.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from jointspace import sensor as SN
from jointspace import types as T
from jointspace.collision.hull import default_nconmax, hull_arrays
from jointspace.errors import JointspaceWarning, ModelError
from jointspace.history import INTERP_NAMES
from jointspace.io import frames
from jointspace.io.setconst import (
    default_njmax,
    inertia_constants,
    mass_constants,
    muscle_lengthrange,
)
from jointspace.io.spec import (
    ACTUATOR_KINDS,
    CONES,
    EQUALITY_TYPES,
    GEOM_TYPES,
    INTEGRATORS,
    JOINT_TYPES,
    SOLVERS,
    ModelSpec,
)
from jointspace.types import MINVAL

_TRIANGLE_TOL = 1e-12  # relative slack on the triangle inequality (round-off in inputs)
_BODY_EIG_RELTOL = 4e-15  # MuJoCo's relative tolerance when diagonalizing body inertias

_JNT = {"free": T.JNT_FREE, "ball": T.JNT_BALL, "slide": T.JNT_SLIDE, "hinge": T.JNT_HINGE}
_GEOM = {name: i for i, name in enumerate(GEOM_TYPES)}
_SITE = {"sphere": T.GEOM_SPHERE, "capsule": T.GEOM_CAPSULE, "ellipsoid": T.GEOM_ELLIPSOID,
         "cylinder": T.GEOM_CYLINDER, "box": T.GEOM_BOX}
_EQ = {"connect": T.EQ_CONNECT, "weld": T.EQ_WELD, "joint": T.EQ_JOINT,
       "tendon": T.EQ_TENDON}


def _check_muscle(what, prm, a):
    """MuJoCo's compiler checks of a muscle's parameters (range, lmin, lmax, scales)."""
    if not prm[0] < prm[1]:
        raise ModelError(f"muscle {what}: range[0] < range[1] required, got ({prm[0]:g}, "
                         f"{prm[1]:g}){_where(a)}")
    if not (prm[4] < 1 < prm[5]):
        raise ModelError(f"muscle {what}: lmin < 1 < lmax required, got lmin={prm[4]:g}, "
                         f"lmax={prm[5]:g}{_where(a)}")
    if min(prm[3], prm[6], prm[7], prm[8]) <= 0:
        raise ModelError(f"muscle {what}: positive scale, vmax, fpmax, fvmax required"
                         f"{_where(a)}")


# MuJoCo's mjtDyn, mjtGain, mjtBias orders (the index is the type code)
_DYNTYPES = ("none", "integrator", "filter", "filterexact", "muscle", "dcmotor", "pid")
_GAINTYPES = ("fixed", "affine", "muscle", "dcmotor", "so3", "pid")
_BIASTYPES = ("none", "affine", "muscle", "dcmotor", "so3")
# the one input of a fixed or affine gain, as actuator_ctrlspec records it (MuJoCo 4.0)
_ONE_INPUT = {"pos": 1, "vel": 2, "pressure": 32}
# a pid's input tokens, in their canonical order, and their actuator_ctrlspec bits
_PID_INPUTS = (("pos", T.INPUT_POS), ("vel", T.INPUT_VEL), ("ff", T.INPUT_FF))


def _pid_inputs(a):
    """A pid actuator's (ctrlspec, actdim) from its types and parameters (MuJoCo 4's checks).

    The input tokens are a subset of pos, vel, ff in this order ("" is the default
    "pos vel"); dyntype pid holds a slew state when slewmax = dynprm[1] > 0 and an integral
    state when ki = gainprm[0] > 0, in this order, and needs the pos input.
    """
    if a.biastype != "affine":
        raise ModelError(f"actuator gaintype 'pid' requires biastype 'affine'{_where(a)}")
    if a.dyntype not in ("none", "pid"):
        raise ModelError(f"actuator gaintype 'pid' requires dyntype 'none' or 'pid'"
                         f"{_where(a)}")
    ki, imax, slew = float(a.gainprm[0]), float(a.dynprm[0]), float(a.dynprm[1])
    if a.dyntype == "none" and ki:
        raise ModelError(f"actuator ki (gainprm[0]) = {ki:g} requires dyntype 'pid'"
                         f"{_where(a)}")
    if a.body:
        raise ModelError(f"a pid actuator cannot use a body transmission{_where(a)}")
    tokens = a.input.split() if a.input else ["pos", "vel"]
    names = [t for t, _ in _PID_INPUTS]
    if any(t not in names for t in tokens):
        raise ModelError(f"actuator input={a.input!r}: pid inputs are a subset of "
                         f"[pos, vel, ff]{_where(a)}")
    order = [names.index(t) for t in tokens]
    if order != sorted(set(order)):
        raise ModelError(f"actuator input={a.input!r}: list each input once, in the order "
                         f"pos, vel, ff{_where(a)}")
    spec = sum(_PID_INPUTS[k][1] for k in order)
    actdim = 0
    if a.dyntype == "pid":
        if imax < 0 or slew < 0:
            what = "imax (dynprm[0])" if imax < 0 else "slewmax (dynprm[1])"
            raise ModelError(f"actuator {what} must be non-negative{_where(a)}")
        actdim = int(slew > 0) + int(ki > 0)
        if actdim == 0:
            raise ModelError(f"actuator dyntype 'pid' with ki <= 0 and slewmax = 0 has no "
                             f"state (MuJoCo: invalid actdim 0 in a stateful actuator)"
                             f"{_where(a)}")
        if not spec & T.INPUT_POS:
            raise ModelError(f"actuator: pid controller states (ki, slewmax) require the pos "
                             f"input{_where(a)}")
    return spec, actdim


# a dcmotor's input tokens, in their canonical order, and their actuator_ctrlspec bits
_DCMOTOR_INPUTS = _PID_INPUTS + (("voltage", T.INPUT_VOLTAGE),)


def _dcmotor_inputs(a):
    """A dcmotor's (ctrlspec, actdim) from its input and parameters (MuJoCo 4.0's checks).

    The input is "none" (no controls) or a subset of pos, vel, ff, voltage in this order
    ("" is "voltage"). pos, vel and ff feed the on-board controller, which needs a
    positive motor constant gainprm[1]; its gains kp, ki, kd (gainprm[4:7]) and slewmax
    (dynprm[7]) need a controller input, ki the pos input. The states: `dcmotor_slots`.
    """
    if a.dyntype != "dcmotor" or a.gaintype != "dcmotor" or a.biastype != "dcmotor":
        raise ModelError(f"actuator dyntype={a.dyntype!r}, gaintype={a.gaintype!r}, "
                         f"biastype={a.biastype!r}: jointspace computes a dcmotor only with "
                         f"all three 'dcmotor'{_where(a)}")
    if a.body:
        raise ModelError(f"a dcmotor cannot use a body transmission{_where(a)}")
    gain = np.resize(np.asarray(a.gainprm, dtype=np.float64), 10)
    dyn = np.resize(np.asarray(a.dynprm, dtype=np.float64), 10)
    text = a.input.strip() if a.input else "voltage"
    if text == "none":
        spec = T.INPUT_NONE
    else:
        names = [t for t, _ in _DCMOTOR_INPUTS]
        tokens = text.split()
        if any(t not in names for t in tokens):
            raise ModelError(f"actuator input={a.input!r}: dcmotor inputs are 'none' or a "
                             f"subset of [pos, vel, ff, voltage]{_where(a)}")
        order = [names.index(t) for t in tokens]
        if order != sorted(set(order)):
            raise ModelError(f"actuator input={a.input!r}: list each input once, in the "
                             f"order pos, vel, ff, voltage{_where(a)}")
        spec = sum(_DCMOTOR_INPUTS[k][1] for k in order)
    controller = spec & (T.INPUT_POS | T.INPUT_VEL | T.INPUT_FF)
    if controller and gain[1] <= 0:
        raise ModelError(f"actuator input={a.input!r}: dcmotor controller inputs require a "
                         f"positive motor constant (gainprm[1] = {gain[1]:g}){_where(a)}")
    if not controller and (gain[4] or gain[5] or gain[6]):
        raise ModelError(f"actuator controller gains (kp, ki, kd = {gain[4]:g}, {gain[5]:g}, "
                         f"{gain[6]:g}) require a controller input [pos, vel, ff] in input"
                         f"{_where(a)}")
    if gain[5] > 0 and not spec & T.INPUT_POS:
        raise ModelError(f"actuator controller ki = {gain[5]:g}: the dcmotor integral gain "
                         f"requires the pos input{_where(a)}")
    if not controller and dyn[7] > 0:
        raise ModelError(f"actuator controller slewmax = {dyn[7]:g}: dcmotor slew rate "
                         f"limiting requires a controller input [pos, vel, ff]{_where(a)}")
    if not a.actearly:
        raise ModelError(f"actuator actearly=False: a dcmotor needs actearly (MuJoCo refuses "
                         f"it too){_where(a)}")
    return spec, T.dcmotor_slots(dyn, gain)[5]


def _where(elem):
    return f" ({elem.source})" if getattr(elem, "source", "") else ""


def _check_dampingpoly(what, poly, where):
    """ModelError unless poly is MuJoCo's mjNPOLY = 2 finite, non-negative coefficients."""
    a = np.asarray(poly, dtype=np.float64).ravel()
    if a.size != 2 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ModelError(f"{what} dampingpoly must be 2 finite non-negative coefficients "
                         f"(p0, p1), got {a.tolist()}{where}")


def _check_finite(values, what, elem):
    a = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be finite, got {a.tolist()}{_where(elem)}")
    return a


def geom_surfacevel(g, pos, quat):
    """MuJoCo's geom_surfacevel row of geom g compiled to frame (pos, quat) in its body.

    The spec's 6 numbers (1 to 6 given, the rest 0) are in the geom frame as written. A geom
    on a mesh (type mesh, or a primitive fitted to one) is moved to the mesh's frame: the
    angular part's origin moves there too (the linear part gains ω × the offset), and both
    parts are re-expressed in the moved frame, as mjCGeom::Compile does.
    """
    sv = np.zeros(6)
    given = _check_finite(g.surfacevel, "geom surfacevel", g).reshape(-1)
    if given.size > 6:
        raise ModelError(f"geom surfacevel takes 1 to 6 numbers (linear, angular), got "
                         f"{given.size}{_where(g)}")
    sv[:given.size] = given
    if g.mesh and np.any(sv):
        q0 = frames.quat_normalize(np.asarray(g.quat, dtype=np.float64))
        inv0 = q0 * np.array([1.0, -1.0, -1.0, -1.0])
        offset = frames.rotate(inv0, np.asarray(pos, dtype=np.float64)
                               - np.asarray(g.pos, dtype=np.float64).reshape(3))
        rel = frames.quat_mul(inv0, quat) * np.array([1.0, -1.0, -1.0, -1.0])
        sv[:3] = frames.rotate(rel, sv[:3] + np.cross(sv[3:], offset))
        sv[3:] = frames.rotate(rel, sv[3:])
    return sv


def _check_inertia_finite(b, geoms, mass, ipos, inertia):
    """ModelError naming the geom or attribute when body b's mass, com or inertia overflowed."""
    if np.isfinite(mass) and np.all(np.isfinite(ipos)) and np.all(np.isfinite(inertia)):
        return
    got = (f"mass {mass}, center of mass {np.asarray(ipos).tolist()}, inertia "
           f"{np.asarray(inertia).tolist()}")
    for g, size, _, _, mesh, m in geoms:
        if not np.isfinite(m):
            raise ModelError(f"body {b.name!r}: the mass of a geom overflows ({got}): its "
                             f"size {size.tolist()} times density {g.density} is not finite"
                             f"{_where(g)}; use smaller sizes or densities")
        if m > 1e-14 and not np.all(np.isfinite(geom_inertia(g.type, size, m, mesh,
                                                             g.shellinertia))):
            raise ModelError(f"body {b.name!r}: the inertia of a geom overflows ({got}): its "
                             f"size {size.tolist()} with mass {m} is too large{_where(g)}; "
                             "use smaller sizes or masses")
    if b.inertial is None and geoms:
        raise ModelError(f"body {b.name!r}: the inertia computed from its geoms overflows "
                         f"({got}): the geoms' positions (pos) are too far apart for their "
                         f"masses{_where(b)}; move them closer or give an <inertial>")
    raise ModelError(f"body {b.name!r}: its inertial values overflow ({got}){_where(b)}; use "
                     "smaller values")


# ---------------------------------------------------------------------------------------------
# geometry: volume and inertia per unit mass (MuJoCo user_objects.cc, mjCGeom)


def geom_volume(gtype, size, mesh=None, shell=False):
    """Volume of a primitive geom (0 for planes), or of a processed mesh.

    With `shell` (geom shellinertia, primitives only), the surface area instead: the mass of
    a thin shell is density times area, as mjCGeom::GetVolume (an ellipsoid's area by
    Thomsen's approximation, p = 1.6075).
    """
    r = size[0]
    if shell:
        if gtype == "sphere":
            return 4.0 * np.pi * r * r
        if gtype == "capsule":
            return 4.0 * np.pi * r * r + 2.0 * np.pi * r * 2.0 * size[1]
        if gtype == "cylinder":
            return 2.0 * np.pi * r * r + 2.0 * np.pi * r * 2.0 * size[1]
        if gtype == "ellipsoid":
            p = 1.6075
            t = ((size[0] * size[1]) ** p + (size[1] * size[2]) ** p
                 + (size[2] * size[0]) ** p)
            return 4.0 * np.pi * (t / 3.0) ** (1.0 / p)
        if gtype in ("box", "hfield"):
            return 8.0 * (size[0] * size[1] + size[1] * size[2] + size[2] * size[0])
    if gtype == "sphere":
        return 4.0 * np.pi * r**3 / 3.0
    if gtype == "capsule":
        return np.pi * (r * r * 2.0 * size[1] + 4.0 * r**3 / 3.0)
    if gtype == "cylinder":
        return np.pi * r * r * 2.0 * size[1]
    if gtype == "ellipsoid":
        return 4.0 * np.pi * size[0] * size[1] * size[2] / 3.0
    if gtype == "box":
        return 8.0 * size[0] * size[1] * size[2]
    if gtype == "hfield":  # MuJoCo weighs a height field as a box of its geom_size
        return 8.0 * size[0] * size[1] * size[2]
    if gtype == "mesh":
        return mesh.volume
    return 0.0


def _shell_inertia(gtype, size, mass):
    """Principal moments of a thin shell of `mass` shaped as a primitive (mjCGeom::SetInertia).

    Sphere 2/3 m r²; capsule and cylinder: the side (m_c (6r² + h²)/12, m_c r²) plus the
    hemispheres (2/3 m_s r², moved by the parallel-axis term) or the two disks; ellipsoid:
    the solid ellipsoid grown by 1e-6 less the solid one, at the shell's density; box: its
    six faces as plates.
    """
    r = size[0]
    if gtype == "sphere":
        return np.full(3, 2.0 * mass * r * r / 3.0)
    if gtype == "capsule":
        hh, h = size[1], 2.0 * size[1]
        a_sphere, a_side = 4.0 * np.pi * r * r, 2.0 * np.pi * r * h
        ms = mass * a_sphere / (a_sphere + a_side)
        mc = mass - ms
        com = r / 2.0  # a hemisphere's center of mass, at hh + com from the center
        ixx = (mc * (6 * r * r + h * h) / 12.0 + 2.0 * ms * r * r / 3.0
               + ms * ((hh + com) ** 2 - com * com))
        return np.array([ixx, ixx, mc * r * r + 2.0 * ms * r * r / 3.0])
    if gtype == "cylinder":
        hh, h = size[1], 2.0 * size[1]
        a_disk, a_side = np.pi * r * r, 2.0 * np.pi * r * h
        md = mass * a_disk / (2.0 * a_disk + a_side)
        mc = mass - 2.0 * md
        ixx = mc * (6 * r * r + h * h) / 12.0 + 2.0 * (md * r * r / 4.0 + md * hh * hh)
        return np.array([ixx, ixx, mc * r * r + 2.0 * md * r * r / 2.0])
    if gtype == "ellipsoid":
        eps = 1e-6
        a, b, c = size
        ae, be, ce = a + eps, b + eps, c + eps
        va = 4.0 * np.pi * a * b * c / 3.0
        vb = 4.0 * np.pi * ae * be * ce / 3.0
        rho = mass / (vb - va)
        inner = va * rho / 5.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
        outer = vb * rho / 5.0 * np.array([be * be + ce * ce, ae * ae + ce * ce,
                                            ae * ae + be * be])
        return outer - inner
    if gtype in ("box", "hfield"):
        lx, ly, lz = 2.0 * np.asarray(size[:3], dtype=np.float64)
        s00, s11, s22 = size[0] ** 2, size[1] ** 2, size[2] ** 2
        a0, a1, a2 = lx * ly, ly * lz, lz * lx
        total = 2.0 * (a0 + a1 + a2)
        m0, m1, m2 = mass * a0 / total, mass * a1 / total, mass * a2 / total
        ix = m0 * ly * ly / 12 + m1 * (ly * ly + lz * lz) / 12 + m2 * lz * lz / 12
        iy = m0 * lx * lx / 12 + m1 * lz * lz / 12 + m2 * (lx * lx + lz * lz) / 12
        iz = m0 * (lx * lx + ly * ly) / 12 + m1 * ly * ly / 12 + m2 * lx * lx / 12
        return 2.0 * np.array([m0 * s22 + m2 * s11 + ix, m0 * s22 + m1 * s00 + iy,
                               m1 * s00 + m2 * s11 + iz])
    return np.zeros(3)


def geom_inertia(gtype, size, mass, mesh=None, shell=False):
    """Principal moments of inertia of a geom of `mass` about its center, geom frame.

    Solid, or with `shell` (geom shellinertia on a primitive) a thin shell.
    """
    if shell and gtype != "mesh":
        return _shell_inertia(gtype, size, mass)
    if gtype == "sphere":
        return np.full(3, 0.4 * mass * size[0] ** 2)
    if gtype == "capsule":
        r, h = size[0], 2.0 * size[1]
        ms = mass * 4.0 * r / (4.0 * r + 3.0 * h)  # mass of the two hemispheres
        mc = mass - ms
        ixx = mc * (3 * r * r + h * h) / 12.0 + 0.4 * ms * r * r + ms * h * (3 * r + 2 * h) / 8.0
        return np.array([ixx, ixx, 0.5 * mc * r * r + 0.4 * ms * r * r])
    if gtype == "cylinder":
        r, h = size[0], 2.0 * size[1]
        ixx = mass * (3 * r * r + h * h) / 12.0
        return np.array([ixx, ixx, 0.5 * mass * r * r])
    if gtype == "ellipsoid":
        a, b, c = size
        return mass / 5.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    if gtype in ("box", "hfield"):
        a, b, c = size
        return mass / 3.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    if gtype == "mesh":
        return mass / mesh.volume * np.asarray(mesh.inertia, dtype=np.float64)
    return np.zeros(3)


def _same(a, b):
    return all(abs(float(x) - float(y)) < T.SAMEFRAME_EPS for x, y in zip(a, b))


def _same_quat(a, b):
    """Quaternions equal within SAMEFRAME_EPS per component, either sign (either cover)."""
    return _same(a, b) or _same(a, [-float(y) for y in b])


def _sameframe(pos, quat, ipos=None, iquat=None):
    """MuJoCo's frame relation of a local frame: T.SAMEFRAME_*.

    In this order: the body frame (position within SAMEFRAME_EPS of zero, quaternion of the
    identity), its rotation only, the inertial frame (ipos, iquat), its rotation only, none.
    Bodies pass no inertial frame and are compared with their own body frame only.
    """
    if _same(pos, (0.0, 0.0, 0.0)) and _same_quat(quat, (1.0, 0.0, 0.0, 0.0)):
        return T.SAMEFRAME_BODY
    if _same_quat(quat, (1.0, 0.0, 0.0, 0.0)):
        return T.SAMEFRAME_BODYROT
    if ipos is not None and _same(pos, ipos) and _same_quat(quat, iquat):
        return T.SAMEFRAME_INERTIA
    if iquat is not None and _same_quat(quat, iquat):
        return T.SAMEFRAME_INERTIAROT
    return T.SAMEFRAME_NONE


def geom_rbound_aabb(gtype, size, mesh=None):
    """Bounding-sphere radius and axis-aligned box (center, half-sizes) in the geom frame."""
    s = size
    if gtype == "sphere":
        return s[0], np.r_[0, 0, 0, s[0], s[0], s[0]]
    if gtype == "capsule":
        return s[0] + s[1], np.r_[0, 0, 0, s[0], s[0], s[0] + s[1]]
    if gtype == "cylinder":
        return np.hypot(s[0], s[1]), np.r_[0, 0, 0, s[0], s[0], s[1]]
    if gtype == "ellipsoid":
        return max(s), np.r_[0, 0, 0, s[0], s[1], s[2]]
    if gtype == "box":
        return np.linalg.norm(s), np.r_[0, 0, 0, s[0], s[1], s[2]]
    if gtype == "mesh":
        lo, hi = mesh.aabb
        return mesh.rbound, np.r_[0.5 * (lo + hi), 0.5 * (hi - lo)]
    return 0.0, np.r_[0, 0, 0, np.inf, np.inf, 0]  # plane


def hfield_rbound_aabb(hsize):
    """geom_rbound and geom_aabb of a height-field geom from its hfield_size (MuJoCo's)."""
    r0, r1, top, base = hsize
    rbound = np.sqrt(r0 * r0 + r1 * r1 + max(top * top, base * base))
    return rbound, np.r_[0.0, 0.0, 0.5 * (top - base), r0, r1, 0.5 * (top + base)]


# 15-point Gauss–Kronrod weights, and the nodes and dl/dx of the change of variables
# l = x³ / (1 − x)² that maps [0, 1) onto [0, ∞) (MuJoCo's compiler, GetAddedMassKappa)
_KRONROD_W = (0.01146766, 0.03154605, 0.05239501, 0.07032663, 0.08450236, 0.09517529,
              0.10221647, 0.10474107, 0.10221647, 0.09517529, 0.08450236, 0.07032663,
              0.05239501, 0.03154605, 0.01146766)
_KRONROD_L = (7.865151709349917e-08, 1.7347976913907274e-05, 0.0003548008144506193,
              0.002846636252924549, 0.014094260903596077, 0.053063261727396636,
              0.17041978741317773, 0.5, 1.4036301548686991, 3.9353484827022642,
              11.644841677041734, 39.53187807410903, 177.5711362220801, 1429.4772912937397,
              54087.416549217705)
_KRONROD_D = (5.538677720489877e-05, 0.002080868285293228, 0.016514126520723166,
              0.07261900344370877, 0.23985243401862602, 0.6868318249020725,
              1.8551129519182894, 5.0, 14.060031152313941, 43.28941239611009,
              156.58546376397112, 747.9826085305024, 5827.4042950027115, 116754.0197944512,
              25482945.327264845)
_EPS = 1e-14  # MuJoCo's compiler's mjEPS


def _added_mass_kappa(dx, dy, dz):
    """κ_x = dx dy dz ∫₀^∞ dl / ((dx² + l)^{3/2} (dy² + l)^{1/2} (dz² + l)^{1/2}).

    The ellipsoid's added-mass coefficient along x (Lamb, Hydrodynamics §114), by MuJoCo's
    15-point quadrature, with l scaled by (dx³ dy dz)^{2/5}.
    """
    scale = (dx * dx * dx * dy * dz) ** 0.4
    kappa = 0.0
    for w, lam0, dl in zip(_KRONROD_W, _KRONROD_L, _KRONROD_D):
        lam = scale * lam0
        ax, ay, az = 1 + lam / (dx * dx), 1 + lam / (dy * dy), 1 + lam / (dz * dz)
        kappa += scale * dl / (ax * math.sqrt(ax * ay * az)) * w
    return kappa / (dx * dx)


def fluid_semiaxes(gtype, size):
    """Semi-axes of the ellipsoid that stands for a geom in the fluid model (mju_geomSemiAxes)."""
    if gtype == "sphere":
        return size[0], size[0], size[0]
    if gtype == "capsule":
        return size[0], size[0], size[1] + size[0]
    if gtype == "cylinder":
        return size[0], size[0], size[1]
    return size[0], size[1], size[2]


def geom_fluid(g, size):
    """MuJoCo's geom_fluid row: [1, fluidcoef (5), virtual mass (3), virtual inertia (3)].

    Zero unless fluidshape="ellipsoid". The virtual (added) mass along axis i is
    V κ_i / (2 − κ_i), the virtual inertia about x is V/5 (dy² − dz²)² |κ_z − κ_y| /
    |2 (dy² − dz²) + (dy² + dz²)(κ_y − κ_z)| (and cyclically), V the ellipsoid's volume.
    """
    out = np.zeros(12)
    if g.fluidshape != "ellipsoid":
        return out
    dx, dy, dz = (float(s) for s in fluid_semiaxes(g.type, size))
    volume = 4.0 / 3.0 * math.pi * dx * dy * dz
    kx = _added_mass_kappa(dx, dy, dz)
    ky = _added_mass_kappa(dy, dz, dx)
    kz = _added_mass_kappa(dz, dx, dy)

    def inertia_factor(a, b, ka, kb):
        # (a² − b²)² |kb − ka| / |2 (a² − b²) + (a² + b²)(ka − kb)|
        return (a * a - b * b) ** 2 * abs(kb - ka) / max(
            _EPS, abs(2 * (a * a - b * b) + (a * a + b * b) * (ka - kb)))

    out[0] = 1.0
    out[1:6] = np.resize(np.asarray(g.fluidcoef, dtype=np.float64), 5)
    out[6:9] = [volume * k / max(_EPS, 2 - k) for k in (kx, ky, kz)]
    out[9:12] = [volume * inertia_factor(dy, dz, ky, kz) / 5,
                 volume * inertia_factor(dz, dx, kz, kx) / 5,
                 volume * inertia_factor(dx, dy, kx, ky) / 5]
    return out


def _required_sizes(gtype):
    return {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}.get(gtype, 0)


def principal_inertia(full):
    """Principal moments (descending) and frame quaternion of a symmetric 3x3 inertia.

    The principal frame is unique only up to the order and signs of its axes; this uses the
    same Jacobi procedure as MuJoCo's compiler (`jointspace.io.mesh.principal_axes`, with
    the body tolerance), so that body_iquat and ximat compare with MuJoCo's by name.
    """
    from jointspace.io.mesh import principal_axes

    w, q = principal_axes(full, reltol=_BODY_EIG_RELTOL)
    return np.asarray(w, dtype=np.float64), frames.quat_normalize(q)


def full_inertia_matrix(fullinertia):
    """3x3 matrix from (Ixx, Iyy, Izz, Ixy, Ixz, Iyz)."""
    xx, yy, zz, xy, xz, yz = fullinertia
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _triangle_violation(I):
    a, b, c = I
    # relative slack for round-off in the inputs, absolute slack for moments that are zero up
    # to round-off (e.g. -5e-20 in published URDFs)
    slack = max(_TRIANGLE_TOL * (abs(a) + abs(b) + abs(c)), MINVAL)
    return a + b < c - slack or a + c < b - slack or b + c < a - slack


def _balance(I):
    """Replace all three moments by their mean (MuJoCo's balanceinertia rule)."""
    return np.full(3, float(np.sum(I)) / 3.0)


# ---------------------------------------------------------------------------------------------


class _Compiler:
    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.warnings = list(spec.warnings)
        self.meshes = {}
        self.tangents = {}  # mesh name -> (nvert, 6) taxel tangents or None
        self.hfields = {}

    def warn(self, msg):
        self.warnings.append(msg)

    # -- 1. numbering ------------------------------------------------------------------------
    def flatten(self):
        # depth-first preorder, parent before child, with an explicit stack (no recursion:
        # a chain 10,000 bodies deep is a valid model)
        bodies, parents, seen = [], [], set()
        stack = [(self.spec.world, 0)]
        while stack:
            b, parent = stack.pop()
            if id(b) in seen:
                raise ModelError(f"body {b.name!r} appears twice in the body tree (a BodySpec "
                                 f"listed in two children lists, or below itself){_where(b)}; "
                                 "add each body once")
            seen.add(id(b))
            bodies.append(b)
            parents.append(parent)
            me = len(bodies) - 1
            stack.extend((c, me) for c in reversed(b.children))
        self.bodies, self.parents = bodies, parents
        if self.spec.world.joints:
            raise ModelError("the world body cannot have joints"
                             f"{_where(self.spec.world.joints[0])}")

    def process_meshes(self):
        """Process every mesh asset; what MuJoCo accepts silently becomes one finding line.

        An open or inconsistently oriented surface loads in MuJoCo without a message, so it
        is not a Python warning here either: the meshes are listed in one line of
        `Model.warnings`, which `jointspace info` prints.
        """
        from jointspace.io import mesh as mesh_mod

        findings = []
        for ms in self.spec.meshes:
            if ms.name in self.meshes:
                raise ModelError(f"duplicate mesh name {ms.name!r}{_where(ms)}")
            scale = tuple(getattr(ms, "scale", (1.0, 1.0, 1.0)))
            pm = mesh_mod.process_mesh(
                np.asarray(ms.vertices, dtype=np.float64), np.asarray(ms.faces), name=ms.name,
                source=ms.source, scale=None if scale == (1.0, 1.0, 1.0) else scale,
                inertia=ms.inertia, refpos=ms.refpos, refquat=ms.refquat, findings=findings,
                maxhullvert=getattr(ms, "maxhullvert", -1))
            self.meshes[ms.name] = (len(self.meshes), pm)
            normal = np.asarray(getattr(ms, "normal", np.zeros((0, 3))), dtype=np.float64)
            self.tangents[ms.name] = mesh_mod.taxel_tangents(
                normal, len(pm.vertices), pm.quat, scale, ms.refquat)
        if findings:
            self.warn(f"{len(findings)} mesh{'es' if len(findings) > 1 else ''} whose "
                      "surface is not closed or not consistently oriented (MuJoCo loads them "
                      "without a message; their volume and inertia follow the mesh's inertia "
                      "rule, which may differ from the solid's): " + "; ".join(findings))

    def process_hfields(self):
        """Height fields by name: (id, HFieldSpec, normalized float32 data (nrow, ncol))."""
        from jointspace.io.hfield import normalize

        for hf in self.spec.hfields:
            if hf.name in self.hfields:
                raise ModelError(f"duplicate hfield name {hf.name!r}{_where(hf)}")
            size = np.asarray(hf.size, dtype=np.float64).reshape(-1)
            if size.shape != (4,) or not np.all(np.isfinite(size)) or np.any(size <= 0):
                raise ModelError(f"hfield {hf.name!r}: size must be 4 positive numbers "
                                 f"(radius_x radius_y elevation_z base_z), got "
                                 f"{size.tolist()}{_where(hf)}")
            data = np.asarray(hf.data, dtype=np.float32)
            if data.size == 0 and hf.nrow > 0 and hf.ncol > 0:
                data = np.zeros((hf.nrow, hf.ncol), dtype=np.float32)
            if data.ndim != 2 or data.size == 0:
                raise ModelError(f"hfield {hf.name!r}: its elevation data must be a non-empty "
                                 f"(nrow, ncol) grid, got shape {data.shape}{_where(hf)}")
            if (hf.nrow or hf.ncol) and data.shape != (hf.nrow, hf.ncol):
                raise ModelError(f"hfield {hf.name!r}: nrow, ncol = {hf.nrow}, {hf.ncol} but "
                                 f"the data has shape {data.shape}{_where(hf)}")
            if data.shape[0] < 2 or data.shape[1] < 2:
                raise ModelError(f"hfield {hf.name!r}: a {data.shape[0]} x {data.shape[1]} "
                                 f"grid has no cell; give at least 2 rows and 2 columns"
                                 f"{_where(hf)}")
            if not np.all(np.isfinite(data)):
                raise ModelError(f"hfield {hf.name!r}: its elevation data must be finite"
                                 f"{_where(hf)}")
            hf.size = tuple(size)
            self.hfields[hf.name] = (len(self.hfields), hf, normalize(data))

    # -- 2. inertia --------------------------------------------------------------------------
    def resolve_geom(self, g):
        """Type id, size, pos, quat, mesh of a geom (mesh geoms moved to the mesh frame)."""
        if g.type not in _GEOM:
            raise ModelError(f"unknown geom type {g.type!r}; use one of {GEOM_TYPES}{_where(g)}")
        if g.type == "hfield":
            if g.hfield not in self.hfields:
                raise ModelError(f"geom refers to unknown hfield {g.hfield!r}{_where(g)}")
            hid, hs = self.hfields[g.hfield][0], self.hfields[g.hfield][1].size
            # MuJoCo's geom_size of a height field: its radii and a box height for the mass
            size = np.array([hs[0], hs[1], 0.25 * hs[2] + 0.5 * hs[3]])
            pos = _check_finite(g.pos, "geom pos", g).reshape(3)
            quat = frames.quat_normalize(_check_finite(g.quat, "geom quat", g))
            return size, pos, quat, None, hid
        size = _check_finite(np.resize(np.asarray(g.size, dtype=np.float64), 3)
                             if np.size(g.size) else np.zeros(3), "geom size", g)
        if g.mesh and g.type != "mesh":
            return self.fit_geom(g)
        nreq = _required_sizes(g.type)
        if np.any(size[:nreq] <= 0):
            raise ModelError(f"geom of type {g.type} needs {nreq} positive size value(s), got "
                             f"{size[:nreq].tolist()}{_where(g)}")
        pos = _check_finite(g.pos, "geom pos", g).reshape(3)
        quat = frames.quat_normalize(_check_finite(g.quat, "geom quat", g))
        mesh, meshid = None, -1
        if g.type == "mesh":
            if g.mesh not in self.meshes:
                raise ModelError(f"geom refers to unknown mesh {g.mesh!r}{_where(g)}")
            meshid, mesh = self.meshes[g.mesh]
            if not len(mesh.hull_vertices) and (g.contype or g.conaffinity):
                raise ModelError(f"mesh {g.mesh!r} is flat (its vertices lie in one plane) and "
                                 f"has no convex hull, which a colliding geom needs{_where(g)}; "
                                 f"set contype='0' conaffinity='0' on the geom or give the mesh "
                                 f"a volume")
            pos = pos + frames.rotate(quat, mesh.pos)
            quat = frames.quat_normalize(frames.quat_mul(quat, mesh.quat))
            size = np.max(np.abs(mesh.aabb), axis=0)  # MuJoCo's geom_size for a mesh
        return size, pos, quat, mesh, meshid

    def fit_geom(self, g):
        """Size, pos, quat of a primitive geom fitted to the mesh it names (mjCMesh::FitGeom).

        Without compiler fitaabb the primitive matches the mesh's equivalent inertia box,
        half-sizes b_i = ½ √(6 (I_j + I_k − I_i) / V) (I the principal moments per unit
        density, V the volume, or the area for inertia="shell"): sphere r = mean(b), capsule
        r = (b_0 + b_1) / 2 and half-length max(0, b_2 − r / 2), cylinder r = (b_0 + b_1) / 2
        and b_2, box and ellipsoid b. With fitaabb it is the smallest primitive whose box
        holds the mesh's bounding box (half-sizes a, centred on the box): sphere max(a),
        capsule and cylinder max(a_0, a_1) and a_2 (the capsule's less its radius), box and
        ellipsoid a. Sizes are then multiplied by fitscale; the frame is the mesh's inertial
        frame (moved to the box centre for fitaabb) composed with the geom's.
        """
        if g.mesh not in self.meshes:
            raise ModelError(f"geom refers to unknown mesh {g.mesh!r}{_where(g)}")
        if g.type not in ("sphere", "capsule", "cylinder", "ellipsoid", "box"):
            raise ModelError(f"a {g.type} geom cannot be fitted to mesh {g.mesh!r}; use type "
                             f"sphere, capsule, cylinder, ellipsoid or box{_where(g)}")
        mesh = self.meshes[g.mesh][1]
        center = np.zeros(3)
        size = np.zeros(3)
        if not self.spec.fitaabb:
            I, vol = mesh.inertia, mesh.volume
            with np.errstate(invalid="ignore"):
                b = 0.5 * np.sqrt(6.0 * np.array([I[1] + I[2] - I[0], I[0] + I[2] - I[1],
                                                  I[0] + I[1] - I[2]]) / vol)
            b = np.nan_to_num(b)
            if g.type == "sphere":
                size[0] = (b[0] + b[1] + b[2]) / 3
            elif g.type == "capsule":
                size[0] = (b[0] + b[1]) / 2
                size[1] = max(0.0, b[2] - size[0] / 2)
            elif g.type == "cylinder":
                size[0], size[1] = (b[0] + b[1]) / 2, b[2]
            else:
                size[:] = b
        else:
            lo, hi = mesh.aabb
            center = (lo + hi) / 2
            half = hi - center
            if g.type == "sphere":
                size[0] = max(half[0], half[1], half[2])
            elif g.type in ("capsule", "cylinder"):
                size[0], size[1] = max(half[0], half[1]), half[2]
                if g.type == "capsule":
                    size[1] -= size[0]
            else:
                size[:] = half
        size *= g.fitscale
        nreq = _required_sizes(g.type)
        if np.any(size[:nreq] <= 0):
            raise ModelError(
                f"a {g.type} fitted to mesh {g.mesh!r} gets size {size[:nreq].tolist()}: the "
                f"mesh has no extent along some axis (a flat or degenerate mesh has no volume "
                f"to fit){_where(g)}; give the geom its own size without mesh=, or fit it to "
                f"a mesh that encloses a volume")
        pos = _check_finite(g.pos, "geom pos", g).reshape(3)
        quat = frames.quat_normalize(_check_finite(g.quat, "geom quat", g))
        meshpos = mesh.pos + frames.rotate(mesh.quat, center)
        pos = pos + frames.rotate(quat, meshpos)
        quat = frames.quat_normalize(frames.quat_mul(quat, mesh.quat))
        return size, pos, quat, None, -1

    def geom_mass(self, g, size, mesh):
        vol = geom_volume(g.type, size, mesh, g.shellinertia and g.type != "mesh")
        if g.mass is not None:
            if not (np.isfinite(g.mass) and g.mass >= 0):
                raise ModelError(f"geom mass must be non-negative and finite, got "
                                 f"{g.mass}{_where(g)}")
            return float(g.mass)
        if not (np.isfinite(g.density) and g.density >= 0):
            raise ModelError(f"geom density must be non-negative and finite, got "
                             f"{g.density}{_where(g)}")
        return g.density * vol

    def option(self, b, key):
        """The mass option `key` for body b: its own (an attached model's) or the model's."""
        own = getattr(b, "compiler", None)
        return own[key] if own and key in own else getattr(self.spec, key)

    def body_inertia(self, b, geoms):
        """Mass, ipos, iquat, principal inertia of body b."""
        ifg = self.option(b, "inertiafromgeom")
        use_geoms = ifg == "true" or (ifg == "auto" and b.inertial is None)
        if not use_geoms:
            if b.inertial is None:
                return 0.0, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3)
            it = b.inertial
            if not np.isfinite(it.mass) or it.mass < 0:
                raise ModelError(f"body {b.name!r}: mass must be non-negative and finite, got "
                                 f"{it.mass}{_where(it) or _where(b)}")
            ipos = _check_finite(it.pos, "inertial pos", it).reshape(3)
            iquat = frames.quat_normalize(it.quat)
            if it.fullinertia is not None:
                full = full_inertia_matrix(_check_finite(it.fullinertia, "fullinertia", it))
                if np.any(np.linalg.eigvalsh(full) < -MINVAL):
                    raise ModelError(f"body {b.name!r}: fullinertia is not positive "
                                     f"semi-definite{_where(it) or _where(b)}")
                I, q = principal_inertia(full)
                return float(it.mass), ipos, frames.quat_normalize(frames.quat_mul(iquat, q)), I
            I = (_check_finite(it.diaginertia, "diaginertia", it).reshape(3)
                 if it.diaginertia is not None else np.zeros(3))
            if np.any(I < 0):
                raise ModelError(f"body {b.name!r}: inertia must be non-negative, got "
                                 f"{I.tolist()}{_where(it) or _where(b)}")
            return float(it.mass), ipos, iquat, I
        lo, hi = self.option(b, "inertiagrouprange")
        sel = [(m, size, pos, quat, mesh, g) for (g, size, pos, quat, mesh, m) in geoms
               if m > 1e-14 and lo <= g.group <= hi]
        if not sel:
            return 0.0, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3)
        if len(sel) == 1:
            m, size, pos, quat, mesh, g = sel[0]
            return m, pos.copy(), quat.copy(), geom_inertia(g.type, size, m, mesh,
                                                            g.shellinertia)
        mass = sum(s[0] for s in sel)
        com = sum(s[0] * s[2] for s in sel) / mass
        full = np.zeros((3, 3))
        for m, size, pos, quat, mesh, g in sel:
            R = frames.quat_to_mat(quat)
            d = pos - com
            full += R @ np.diag(geom_inertia(g.type, size, m, mesh, g.shellinertia)) @ R.T
            full += m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
        I, q = principal_inertia(full)
        return mass, com, q, I

    def visual_geoms(self):
        """ids of the geoms <compiler discardvisual> removes (MuJoCo's mjCGeom::IsVisual).

        A geom is visual when it neither collides (contype = conaffinity = 0) nor is named by
        a contact pair, a spatial tendon's path or a sensor. Empty without discardvisual.
        """
        spec = self.spec
        if not spec.discardvisual:
            return set()
        used = {p.geom1 for p in spec.pairs} | {p.geom2 for p in spec.pairs}
        used |= {p[1] for t in spec.tendons for p in t.path if p[0] == "geom"}
        used |= {s.objname for s in spec.sensors if s.objtype == "geom"}
        used |= {s.refname for s in spec.sensors if s.reftype == "geom"}
        out = set()
        stack = [spec.world]
        while stack:
            b = stack.pop()
            stack.extend(b.children)
            out |= {id(g) for g in b.geoms if not g.contype and not g.conaffinity
                    and not (g.name and g.name in used)}
        return out

    def discard_visual_meshes(self, geom_rows):
        """Drop the meshes no remaining geom uses and renumber the rest (discardvisual).

        A mesh that a tactile sensor reads stays, as in MuJoCo.
        """
        used = {r["dataid"] for r in geom_rows if r["type"] == T.GEOM_MESH}
        used |= {self.meshes[s.objname][0] for s in self.spec.sensors
                 if s.objtype == "mesh" and s.objname in self.meshes}
        used = sorted(used)
        new = {old: k for k, old in enumerate(used)}
        self.meshes = {name: (new[i], pm) for name, (i, pm) in self.meshes.items()
                       if i in new}
        for r in geom_rows:
            if r["type"] == T.GEOM_MESH:
                r["dataid"] = new[r["dataid"]]

    def align_free(self, b):
        """Whether body b's frame moves onto its inertial frame (MuJoCo's free alignment)."""
        if len(b.joints) != 1 or b.joints[0].type != "free" or b.children:
            return False
        align = b.joints[0].align
        return align == "true" or (align == "auto" and self.option(b, "alignfree"))

    @staticmethod
    def align_frame(pos, quat, ipos, iquat, geom_rows, site_rows, cam_rows):
        """Body frame ← body ∘ inertial frame; the body's geoms, sites, cameras re-expressed.

        Returns the new body pos and quat, and the inertial frame (now the identity).
        """
        new_pos = pos + frames.rotate(quat, ipos)
        new_quat = frames.quat_normalize(frames.quat_mul(quat, iquat))
        inv = iquat * np.array([1.0, -1.0, -1.0, -1.0])
        for r in (*geom_rows, *site_rows, *cam_rows):
            r["pos"] = frames.rotate(inv, r["pos"] - ipos)
            r["quat"] = frames.quat_normalize(frames.quat_mul(inv, r["quat"]))
        return new_pos, new_quat, np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])

    def fused_bodies(self, site_rows, names):
        """Whether each body is fused into its parent (MuJoCo's FuseStatic).

        A body other than the world fuses when it has no joint, is not a mocap body, carries
        no site of a force or torque sensor, and its name (if any) is named by no equality,
        exclude, sensor, actuator, camera target or element in `spec.body_refs`.
        """
        spec = self.spec
        refs = set(spec.body_refs)
        for e in spec.equalities:
            if e.objtype == "body":
                refs |= {e.obj1, e.obj2}
        for x in spec.excludes:
            refs |= {x.body1, x.body2}
        for sens in spec.sensors:
            if sens.objtype in ("body", "xbody", "subtree"):
                refs.add(sens.objname)
            if sens.reftype in ("body", "xbody", "subtree"):
                refs.add(sens.refname)
        refs |= {a.body for a in spec.actuators if getattr(a, "body", "")}
        refs |= {c.target for c in self.cam_specs if c.target}
        ft_sites = {sens.objname for sens in spec.sensors if sens.kind in ("force", "torque")}
        ft_bodies = {r["bodyid"] for r, name in zip(site_rows, names["site"]) if name in ft_sites}
        return [i > 0 and not b.joints and not b.mocap and i not in ft_bodies
                and not (b.name and b.name in refs) for i, b in enumerate(self.bodies)]

    def fuse_static(self, body_rows, jnt_rows, dof_rows, geom_rows, site_rows, cam_rows, names):
        """<compiler fusestatic>: bodies without joints merged into their parents, in place.

        Mirrors MuJoCo's FuseStatic (user_model.cc), parents before children: the fused
        body's mass and inertia join its parent's (not the world's), its geoms, sites and
        cameras and its child bodies are re-expressed in the parent's frame (pos ← pos_b +
        R_b pos, quat ← quat_b quat), its elements follow the parent's own in the tables, and
        the bodies are renumbered in the same depth-first order.
        """
        fuse = self.fused_bodies(site_rows, names)
        parent = list(self.parents)
        children = [[] for _ in self.bodies]
        for i in range(1, len(self.bodies)):
            children[parent[i]].append(i)
        rows_of = [[] for _ in self.bodies]
        for rows in (geom_rows, site_rows, cam_rows):
            for r in rows:
                rows_of[r["bodyid"]].append(r)
        for i in range(1, len(self.bodies)):
            if not fuse[i]:
                continue
            p, b = parent[i], body_rows[i]
            if p and b["mass"] >= MINVAL:
                _accumulate_inertia(body_rows[p], b)
            for c in children[i]:
                body_rows[c]["pos"], body_rows[c]["quat"] = _change_frame(
                    b, body_rows[c]["pos"], body_rows[c]["quat"])
                parent[c] = p
            children[p] += children[i]
            for r in rows_of[i]:
                r["pos"], r["quat"] = _change_frame(b, r["pos"], r["quat"])
                r["bodyid"] = p
            rows_of[p] += rows_of[i]
        keep = [i for i in range(len(self.bodies)) if not fuse[i]]
        new = {old: k for k, old in enumerate(keep)}
        for rows in (jnt_rows, dof_rows):
            for r in rows:
                r["bodyid"] = new[r["bodyid"]]
        # elements sorted by their new body, stably: a body's own first, then the fused ones
        for rows, kind, specs in ((geom_rows, "geom", None), (site_rows, "site", None),
                                  (cam_rows, "camera", self.cam_specs)):
            order = sorted(range(len(rows)), key=lambda k: new[rows[k]["bodyid"]])
            rows[:] = [rows[k] for k in order]
            names[kind][:] = [names[kind][k] for k in order]
            if specs is not None:
                specs[:] = [specs[k] for k in order]
            for r in rows:
                r["bodyid"] = new[r["bodyid"]]
        body_rows[:] = [body_rows[i] for i in keep]
        names["body"][:] = [names["body"][i] for i in keep]
        self.bodies = [self.bodies[i] for i in keep]
        self.parents = [new[parent[i]] if i else 0 for i in keep]
        for k, r in enumerate(body_rows):
            r["parentid"] = self.parents[k]
            adr = [g for g, row in enumerate(geom_rows) if row["bodyid"] == k]
            r["geomnum"], r["geomadr"] = len(adr), (adr[0] if adr else -1)

    # -- everything ----------------------------------------------------------------------------
    def run(self):
        spec = self.spec
        self.flatten()
        self.process_meshes()
        self.process_hfields()
        nbody = len(self.bodies)
        names = {k: [] for k in ("body", "joint", "geom", "site", "actuator", "mesh", "equality",
                                 "pair", "sensor", "key", "tendon", "camera", "material")}
        sources = {k: {} for k in names}

        def add_name(kind, name, elem):
            if name and name in sources[kind]:
                raise ModelError(f"duplicate {kind} name {name!r}: first at "
                                 f"{sources[kind][name] or '?'}, again at {elem.source or '?'}")
            if name:
                sources[kind][name] = elem.source
            names[kind].append(name)

        A = {}  # arrays by field name
        body_rows = []
        jnt_rows, geom_rows, site_rows, cam_rows = [], [], [], []
        visual = self.visual_geoms()
        # discardvisual deletes every material (and texture), as MuJoCo's compiler does
        self.materials = [] if spec.discardvisual else spec.materials
        for mat in self.materials:
            add_name("material", mat.name, mat)
        nq = nv = 0
        dof_rows = []
        qpos0, qpos_spring = [], []
        last_dof_of_body = [-1] * nbody
        for i, b in enumerate(self.bodies):
            add_name("body", b.name if i else (b.name or "world"), b)
            pid = self.parents[i]
            pos = _check_finite(b.pos, "body pos", b).reshape(3)
            quat = frames.quat_normalize(_check_finite(b.quat, "body quat", b))
            jntadr = len(jnt_rows) if b.joints else -1
            dofadr = nv if b.joints else -1
            ndof = 0
            parent_dof = last_dof_of_body[pid] if i else -1
            for j in b.joints:
                if j.type not in _JNT:
                    raise ModelError(f"unknown joint type {j.type!r}; use one of "
                                     f"{JOINT_TYPES}{_where(j)}")
                jt = _JNT[j.type]
                if jt == T.JNT_FREE and (len(b.joints) > 1 or pid != 0):
                    raise ModelError("a free joint must be the only joint of a body whose parent "
                                     f"is the world{_where(j)}")
                add_name("joint", j.name, j)
                axis = _check_finite(j.axis, "joint axis", j).reshape(3)
                if jt in (T.JNT_HINGE, T.JNT_SLIDE):
                    unit, n = frames.normvec(axis)
                    if n < 1e-10:
                        raise ModelError(f"joint axis has zero length{_where(j)}")
                    axis = unit
                else:
                    axis = np.array([0.0, 0.0, 1.0])
                rng = np.asarray(j.range, dtype=np.float64)
                if j.limited and jt in (T.JNT_HINGE, T.JNT_SLIDE) and rng[0] >= rng[1]:
                    raise ModelError(f"joint range lower bound must be below the upper bound, "
                                     f"got {rng.tolist()}{_where(j)}")
                if j.limited and jt == T.JNT_FREE:
                    raise ModelError(f"free joints cannot be limited{_where(j)}")
                for name, val in (("damping", j.damping), ("armature", j.armature),
                                  ("frictionloss", j.frictionloss), ("stiffness", j.stiffness)):
                    if not np.isfinite(val) or val < 0:
                        raise ModelError(f"joint {name} must be non-negative, got {val}{_where(j)}")
                _check_dampingpoly("joint", j.dampingpoly, _where(j))
                sd = tuple(j.springdamper)
                if (sd[0] or sd[1]) and not (sd[0] > 0 and sd[1] > 0):
                    raise ModelError(f"joint springdamper={sd}: when given, both values "
                                     f"(timeconst, dampratio) must be positive{_where(j)}")
                if j.actfrclimited and j.actfrcrange[0] > j.actfrcrange[1]:
                    raise ModelError(f"joint actuatorfrcrange={tuple(j.actfrcrange)}: the lower "
                                     f"bound exceeds the upper{_where(j)}")
                jnt_rows.append(dict(type=jt, qposadr=nq, dofadr=nv, bodyid=i, group=j.group,
                                     limited=int(j.limited), solref=j.solref_limit,
                                     solimp=j.solimp_limit,
                                     pos=_check_finite(j.pos, "joint pos", j),
                                     axis=axis, stiffness=j.stiffness, range=rng,
                                     margin=j.margin, actfrclimited=int(j.actfrclimited),
                                     actfrcrange=np.asarray(j.actfrcrange, dtype=np.float64),
                                     actgravcomp=int(j.actgravcomp)))
                jid = len(jnt_rows) - 1
                if jt == T.JNT_FREE:
                    qpos0 += list(pos) + list(quat)
                    qpos_spring += list(pos) + list(quat)
                elif jt == T.JNT_BALL:
                    qpos0 += [1.0, 0, 0, 0]
                    qpos_spring += [1.0, 0, 0, 0]
                else:
                    qpos0.append(j.ref)
                    qpos_spring.append(j.springref)
                for _ in range(T.JOINT_NV[jt]):
                    dof_rows.append(dict(bodyid=i, jntid=jid, parentid=parent_dof,
                                         solref=j.solref_friction, solimp=j.solimp_friction,
                                         frictionloss=j.frictionloss, armature=j.armature,
                                         damping=j.damping, dampingpoly=j.dampingpoly))
                    parent_dof = nv
                    nv += 1
                    ndof += 1
                nq += T.JOINT_NQ[jt]
            last_dof_of_body[i] = parent_dof
            geoms = []
            kept = [g for g in b.geoms if id(g) not in visual]
            geomadr = len(geom_rows) if kept else -1
            for g in b.geoms:
                if id(g) not in visual:
                    add_name("geom", g.name, g)
                size, gpos, gquat, mesh, meshid = self.resolve_geom(g)
                m = self.geom_mass(g, size, mesh)
                geoms.append((g, size, gpos, gquat, mesh, m))
                rbound, aabb = geom_rbound_aabb(g.type, size, mesh)
                if g.type == "hfield":
                    rbound, aabb = hfield_rbound_aabb(self.hfields[g.hfield][1].size)
                if g.type != "plane" and not np.isfinite(rbound):
                    raise ModelError(f"geom size {size.tolist()} is too large: its bounding "
                                     f"radius overflows to {rbound}{_where(g)}; use sizes "
                                     "below about 1e150")
                if g.condim not in (1, 3, 4, 6):
                    raise ModelError(f"geom condim must be 1, 3, 4 or 6, got {g.condim}{_where(g)}")
                fr = np.resize(np.asarray(g.friction, dtype=np.float64), 3)
                if np.any(fr < 0):
                    raise ModelError(f"geom friction must be non-negative{_where(g)}")
                if id(g) in visual:
                    continue  # discardvisual: its mass and inertia count, the geom goes
                geom_rows.append(dict(type=_GEOM[g.type], contype=g.contype,
                                      conaffinity=g.conaffinity, condim=g.condim, bodyid=i,
                                      dataid=meshid, group=g.group, priority=g.priority,
                                      solmix=g.solmix, solref=g.solref, solimp=g.solimp,
                                      size=size, aabb=aabb, rbound=rbound, pos=gpos, quat=gquat,
                                      friction=fr, margin=g.margin, gap=g.gap, rgba=g.rgba,
                                      fluid=geom_fluid(g, size), matid=self.material_id(g),
                                      surfacevel=geom_surfacevel(g, gpos, gquat),
                                      adhesion=float(_check_finite(g.adhesion, "geom adhesion",
                                                                   g))))
            for s in b.sites:
                add_name("site", s.name, s)
                if s.type not in _SITE:
                    raise ModelError(f"unknown site type {s.type!r}{_where(s)}")
                site_rows.append(dict(type=_SITE[s.type], bodyid=i,
                                      size=np.resize(np.asarray(s.size, dtype=np.float64), 3),
                                      pos=_check_finite(s.pos, "site pos", s).reshape(3),
                                      quat=frames.quat_normalize(s.quat)))
            for c in b.cameras:
                add_name("camera", c.name, c)
                cam_rows.append(camera_row(c, i, spec.znear))
            if i == 0:
                mass, ipos, iquat, inertia = 0.0, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3)
            else:
                mass, ipos, iquat, inertia = self.body_inertia(b, geoms)
                _check_inertia_finite(b, geoms, mass, ipos, inertia)
            boundmass, boundinertia = self.option(b, "boundmass"), self.option(b, "boundinertia")
            if boundmass > 0 and i > 0:
                mass = max(mass, boundmass)
            if boundinertia > 0 and i > 0:
                inertia = np.maximum(inertia, boundinertia)
            if i > 0 and _triangle_violation(inertia):
                if self.option(b, "balanceinertia"):
                    inertia = _balance(inertia)
                else:
                    raise ModelError(
                        f"body {b.name!r}: principal inertia {inertia.tolist()} violates the "
                        "triangle inequality (each moment must be at most the sum of the other "
                        f"two){_where(b.inertial) if b.inertial else _where(b)}. Fix the "
                        "inertia, or compile with balanceinertia=True (MJCF: <compiler "
                        "balanceinertia=\"true\"/>) to raise the small moments")
            if self.align_free(b):
                pos, quat, ipos, iquat = self.align_frame(
                    pos, quat, ipos, iquat, geom_rows[len(geom_rows) - len(kept):],
                    site_rows[len(site_rows) - len(b.sites):],
                    cam_rows[len(cam_rows) - len(b.cameras):])
                qpos0[-7:] = qpos_spring[-7:] = list(pos) + list(quat)
            body_rows.append(dict(parentid=pid, jntnum=len(b.joints), jntadr=jntadr,
                                  dofnum=ndof, dofadr=dofadr, geomnum=len(kept),
                                  geomadr=geomadr, pos=pos, quat=quat, ipos=ipos, iquat=iquat,
                                  mass=mass, inertia=inertia, mocap=b.mocap,
                                  gravcomp=float(b.gravcomp)))
        self.cam_specs = [c for b in self.bodies for c in b.cameras]
        if spec.fusestatic:
            self.fuse_static(body_rows, jnt_rows, dof_rows, geom_rows, site_rows, cam_rows, names)
            nbody = len(self.bodies)
        if spec.discardvisual:
            self.discard_visual_meshes(geom_rows)
        if spec.settotalmass > 0:
            total = sum(r["mass"] for r in body_rows)
            if total > 0:
                for r in body_rows:
                    r["mass"] *= spec.settotalmass / total
                    r["inertia"] = r["inertia"] * spec.settotalmass / total

        # body tables
        nb = nbody
        A["body_parentid"] = [r["parentid"] for r in body_rows]
        rootid, weldid, mocapid, nmocap = [0] * nb, [0] * nb, [-1] * nb, 0
        for i in range(1, nb):
            p = body_rows[i]["parentid"]
            rootid[i] = i if p == 0 else rootid[p]
            # a body with joints, or a mocap body, is the root of its weld group (MuJoCo 4.0)
            weldid[i] = i if body_rows[i]["jntnum"] or body_rows[i]["mocap"] else weldid[p]
            if body_rows[i]["mocap"]:
                if p != 0 or body_rows[i]["jntnum"]:
                    raise ModelError(f"mocap body {self.bodies[i].name!r} must be a child of the "
                                     f"world and have no joints{_where(self.bodies[i])}")
                mocapid[i] = nmocap
                nmocap += 1
        A["body_rootid"], A["body_weldid"], A["body_mocapid"] = rootid, weldid, mocapid
        for k in ("jntnum", "jntadr", "dofnum", "dofadr", "geomnum", "geomadr", "pos", "quat",
                  "ipos", "iquat", "mass", "inertia", "gravcomp"):
            A["body_" + k] = [r[k] for r in body_rows]

        def table(prefix, rows, keys, n, shapes):
            for k in keys:
                shape = (n,) + shapes.get(k, ())
                A[prefix + k] = (np.array([r[k] for r in rows], dtype=np.float64).reshape(shape)
                                 if rows else np.zeros(shape))

        njnt, ngeom, nsite = len(jnt_rows), len(geom_rows), len(site_rows)
        table("jnt_", jnt_rows, ("type", "qposadr", "dofadr", "bodyid", "group", "limited",
                                 "solref", "solimp", "pos", "axis", "stiffness", "range",
                                 "margin", "actfrclimited", "actfrcrange", "actgravcomp"), njnt,
              dict(solref=(2,), solimp=(5,), pos=(3,), axis=(3,), range=(2,), actfrcrange=(2,)))
        table("dof_", dof_rows, ("bodyid", "jntid", "parentid", "solref", "solimp",
                                 "frictionloss", "armature", "damping", "dampingpoly"), nv,
              dict(solref=(2,), solimp=(5,), dampingpoly=(2,)))
        table("geom_", geom_rows, ("type", "contype", "conaffinity", "condim", "bodyid",
                                   "dataid", "group", "priority", "solmix", "solref", "solimp",
                                   "size", "aabb", "rbound", "pos", "quat", "friction", "margin",
                                   "gap", "rgba", "fluid", "matid", "surfacevel", "adhesion"),
              ngeom, dict(solref=(2,), solimp=(5,), size=(3,), aabb=(6,), pos=(3,), quat=(4,),
                          friction=(3,), rgba=(4,), fluid=(12,), surfacevel=(6,)))
        table("site_", site_rows, ("type", "bodyid", "size", "pos", "quat"), nsite,
              dict(size=(3,), pos=(3,), quat=(4,)))
        A["body_sameframe"] = [_sameframe(r["ipos"], r["iquat"]) for r in body_rows]
        for prefix, rows in (("geom_", geom_rows), ("site_", site_rows)):
            A[prefix + "sameframe"] = [
                _sameframe(r["pos"], r["quat"], body_rows[r["bodyid"]]["ipos"],
                           body_rows[r["bodyid"]]["iquat"]) for r in rows]
        for r, c in zip(cam_rows, self.cam_specs):
            r["targetbodyid"] = self.body_id(names["body"], c.target, c) if c.target else -1
        table("cam_", cam_rows, ("mode", "bodyid", "targetbodyid", "pos", "quat", "projection",
                                 "fovy", "ipd", "resolution", "sensorsize", "intrinsic"),
              len(cam_rows), dict(pos=(3,), quat=(4,), resolution=(2,), sensorsize=(2,),
                                  intrinsic=(4,)))
        for k, shape in (("poscom0", (3,)), ("pos0", (3,)), ("mat0", (9,))):
            A["cam_" + k] = np.zeros((len(cam_rows),) + shape)  # set by mass_constants
        A["mat_rgba"] = np.array([m.rgba for m in self.materials],
                                 dtype=np.float64).reshape(len(self.materials), 4)

        # sparse M layout (MuJoCo): row i stores M[i, i], M[i, parent(i)], M[i, parent²(i)], …
        madr, mcol = [], []
        for i in range(nv):
            madr.append(len(mcol))
            k = i
            while k >= 0:
                mcol.append(k)
                k = dof_rows[k]["parentid"]
        nM = len(mcol)
        A["dof_Madr"] = madr
        A["M_col"] = mcol
        A["dof_invweight0"] = np.zeros(nv)
        A["dof_M0"] = np.zeros(nv)
        A["qpos0"], A["qpos_spring"] = qpos0, qpos_spring
        A["body_subtreemass"] = np.zeros(nb)
        A["body_invweight0"] = np.zeros((nb, 2))

        # meshes
        mlist = sorted(self.meshes.items(), key=lambda kv: kv[1][0])
        verts = [pm.vertices for _, (_, pm) in mlist]
        faces = [pm.faces for _, (_, pm) in mlist]
        A["mesh_vertnum"] = [len(v) for v in verts]
        A["mesh_facenum"] = [len(f) for f in faces]
        A["mesh_vertadr"] = np.cumsum([0] + A["mesh_vertnum"][:-1]) if verts else []
        A["mesh_faceadr"] = np.cumsum([0] + A["mesh_facenum"][:-1]) if faces else []
        A["mesh_vert"] = np.concatenate(verts) if verts else np.zeros((0, 3))
        A["mesh_face"] = np.concatenate(faces) if faces else np.zeros((0, 3))
        tangents = [self.tangents.get(name) for name, _ in mlist]
        A["mesh_tangentadr"] = np.full(len(mlist), -1)
        rows = 0
        for k, t in enumerate(tangents):
            if t is not None:
                A["mesh_tangentadr"][k] = rows
                rows += len(t)
        A["mesh_tangent"] = np.concatenate([t for t in tangents if t is not None] or
                                           [np.zeros((0, 6))])
        A.update(hull_arrays([pm for _, (_, pm) in mlist]))
        for name, _ in mlist:
            names["mesh"].append(name)
        hlist = sorted(self.hfields.values(), key=lambda t: t[0])
        A["hfield_size"] = np.array([hf.size for _, hf, _ in hlist]).reshape(len(hlist), 4)
        A["hfield_nrow"] = [data.shape[0] for _, _, data in hlist]
        A["hfield_ncol"] = [data.shape[1] for _, _, data in hlist]
        A["hfield_adr"] = np.cumsum([0] + [data.size for _, _, data in hlist][:-1]) if hlist \
            else []
        A["hfield_data"] = (np.concatenate([data.ravel() for _, _, data in hlist]).astype(
            np.float64) if hlist else np.zeros(0))
        names["hfield"] = [hf.name for _, hf, _ in hlist]

        self.names = names
        ntendon, nwrap = self.compile_tendons(A, jnt_rows, dof_rows, geom_rows)
        na = self.compile_actuators(A)
        self.compile_equalities(A)
        self.compile_contacts(A)
        self.compile_option(A)
        self.compile_keys(A, nq, nv, na, A["body_mocapid"], nmocap)
        nsensordata = self.compile_sensors(A)
        nhistory = self.compile_history(A)
        if not 0 <= int(spec.nuserdata) < 2**31:
            raise ModelError(f"nuserdata must be a non-negative integer, got {spec.nuserdata}")

        sizes = dict(nq=nq, nv=nv, nu=len(A["actuator_ctrllimited"]),
                     nactuator=len(spec.actuators), nout=len(A["actuator_acc0"]),
                     nbody=nb, njnt=njnt, ngeom=ngeom,
                     nsite=nsite, nmesh=len(mlist), nmeshvert=len(A["mesh_vert"]),
                     nmeshtangent=len(A["mesh_tangent"]),
                     nhfield=len(hlist), nhfielddata=len(A["hfield_data"]),
                     nmeshface=len(A["mesh_face"]), neq=len(spec.equalities),
                     npair=len(spec.pairs), nexclude=len(spec.excludes), nM=nM,
                     nhullvert=len(A["hull_vert"]), nhullpoly=len(A["hullpoly_vertnum"]),
                     nhullpolyvert=len(A["hullpoly_vert"]), nhullgraph=len(A["hull_graph"]),
                     na=na, nmocap=nmocap,
                     nkey=len(spec.keys), nuserdata=int(spec.nuserdata),
                     nsensor=len(spec.sensors), nsensordata=nsensordata, nhistory=nhistory,
                     ntendon=ntendon, nwrap=nwrap,
                     ncam=len(cam_rows), nmat=len(self.materials),
                     nconmax=int(getattr(spec, "nconmax", 0) or 0) or default_nconmax(ngeom))
        sizes["njmax"] = (int(getattr(spec, "njmax", 0) or 0)
                          or default_njmax(A, sizes["nconmax"]))
        model = T.Model(sizes, A, names, warnings=self.warnings, source=spec.source)
        self.finish(model)
        return model

    def material_id(self, g):
        """geom_matid: the index of the geom's material, -1 when it has none.

        A geom that names no material takes its mesh's, if any (mjCGeom::get_material).
        """
        name = g.material
        if not name and g.mesh:
            name = next((ms.material for ms in self.spec.meshes if ms.name == g.mesh), "")
        if not name or self.spec.discardvisual:
            return -1
        for k, mat in enumerate(self.materials):
            if mat.name == name:
                return k
        raise ModelError(f"geom refers to unknown material {name!r}{_where(g)}; add "
                         f"<material name='{name}'> to <asset> or fix the name")

    @staticmethod
    def body_id(body_names, name, c):
        if name not in body_names:
            raise ModelError(f"camera {c.name!r}: target={name!r} names no body{_where(c)}; "
                             f"fix the name")
        return body_names.index(name)

    def lookup(self, kind, name, elem, what):
        if not name:
            raise ModelError(f"{what} is missing{_where(elem)}")
        try:
            return self.names[kind].index(name)
        except ValueError:
            raise ModelError(f"{what} refers to unknown {kind} {name!r}{_where(elem)}") from None

    def compile_tendons(self, A, jnt_rows, dof_rows, geom_rows):
        """tendon_* and wrap_* of the tendons; returns (ntendon, nwrap).

        Spatial tendons: their sites and pulleys in path order. Fixed tendons: joints must be
        scalar (hinge or slide), each at most once per tendon. Armature is refused on a
        spatial tendon that wraps around geoms (MuJoCo refuses it too). tendon_length0,
        tendon_invweight0 and the default spring length (the length at qpos0) are set by
        set_const.
        """
        rows, wraps = [], []
        for t in self.spec.tendons:
            if t.name and t.name in self.names["tendon"]:
                raise ModelError(f"duplicate tendon name {t.name!r}{_where(t)}")
            self.names["tendon"].append(t.name)
            adr = len(wraps)
            seen = set()
            for kind, sname, prm, ssrc in t.path:
                if kind == "site":
                    wraps.append((T.WRAP_SITE, self.lookup("site", sname, t, "tendon site"), 0.0))
                elif kind == "geom":
                    g = self.lookup("geom", sname, t, "tendon geom")
                    gtype = geom_rows[g]["type"]
                    if gtype not in (T.GEOM_SPHERE, T.GEOM_CYLINDER):
                        raise ModelError(f"{ssrc} geom='{sname}': a tendon wraps around a "
                                         f"sphere or a cylinder only, this geom is a "
                                         f"{GEOM_TYPES[int(gtype)]}")
                    side = self.lookup("site", prm, t, "tendon sidesite") if prm else -1
                    wraps.append((T.WRAP_SPHERE if gtype == T.GEOM_SPHERE else
                                  T.WRAP_CYLINDER, g, float(side)))
                else:
                    wraps.append((T.WRAP_PULLEY, -1, prm))
            for jname, coef, jsrc in t.joints:
                if jname not in self.names["joint"]:
                    raise ModelError(f"{jsrc}: fixed tendon {t.name or '#'+str(len(rows))!r} "
                                     f"refers to unknown joint {jname!r}")
                j = self.names["joint"].index(jname)
                if jnt_rows[j]["type"] not in (T.JNT_HINGE, T.JNT_SLIDE):
                    raise ModelError(f"{jsrc}: joint {jname!r} of a fixed tendon must be a "
                                     f"hinge or a slide")
                if j in seen:
                    raise ModelError(f"{jsrc}: joint {jname!r} appears twice in the tendon")
                seen.add(j)
                if not np.isfinite(coef):
                    raise ModelError(f"{jsrc}: coef must be finite, got {coef}")
                wraps.append((T.WRAP_JOINT, j, coef))
            if t.armature > 0 and any(kind == "geom" for kind, *_ in t.path):
                raise ModelError(f"tendon armature with geom wrapping is not supported (as in "
                                 f"MuJoCo: its bias force needs the wrap's derivative); remove "
                                 f"the armature or the wrap geoms{_where(t)}")
            _check_dampingpoly("tendon", t.dampingpoly, _where(t))
            rows.append(dict(adr=adr, num=len(wraps) - adr, limited=int(t.limited),
                             solref_lim=t.solref_limit, solimp_lim=t.solimp_limit,
                             solref_fri=t.solref_friction, solimp_fri=t.solimp_friction,
                             range=t.range, margin=t.margin, stiffness=t.stiffness,
                             damping=t.damping, dampingpoly=t.dampingpoly,
                             armature=t.armature,
                             frictionloss=t.frictionloss, lengthspring=t.springlength,
                             actfrclimited=int(t.actfrclimited), actfrcrange=t.actfrcrange))
        n = len(rows)
        shapes = dict(solref_lim=(2,), solimp_lim=(5,), solref_fri=(2,), solimp_fri=(5,),
                      range=(2,), lengthspring=(2,), actfrcrange=(2,), dampingpoly=(2,))
        for k in ("adr", "num", "limited", "solref_lim", "solimp_lim", "solref_fri",
                  "solimp_fri", "range", "margin", "stiffness", "damping", "dampingpoly",
                  "armature",
                  "frictionloss", "lengthspring", "actfrclimited", "actfrcrange"):
            A["tendon_" + k] = np.array([r[k] for r in rows], dtype=np.float64).reshape(
                (n,) + shapes.get(k, ()))
        A["tendon_length0"] = np.zeros(n)
        A["tendon_invweight0"] = np.zeros(n)
        A["wrap_type"] = [w[0] for w in wraps]
        A["wrap_objid"] = [w[1] for w in wraps]
        A["wrap_prm"] = [w[2] for w in wraps]
        return n, len(wraps)

    def compile_actuators(self, A):
        """actuator_* from the ActuatorSpecs; returns na (one activation per stateful one)."""
        rows = []
        na = 0
        for a in self.spec.actuators:
            if a.kind not in ACTUATOR_KINDS:
                raise ModelError(f"unknown actuator kind {a.kind!r}{_where(a)}")
            self.names["actuator"].append(a.name)
            tid1 = -1
            if a.joint:
                trn, tid = T.TRN_JOINT, self.lookup("joint", a.joint, a, "actuator joint")
            elif a.jointinparent:
                trn, tid = T.TRN_JOINTINPARENT, self.lookup("joint", a.jointinparent, a,
                                                             "actuator jointinparent")
            elif a.site:
                trn, tid = T.TRN_SITE, self.lookup("site", a.site, a, "actuator site")
                if a.refsite:
                    tid1 = self.lookup("site", a.refsite, a, "actuator refsite")
            elif a.cranksite:
                trn, tid = T.TRN_SLIDERCRANK, self.lookup("site", a.cranksite, a,
                                                          "actuator cranksite")
                tid1 = self.lookup("site", a.slidersite, a, "actuator slidersite")
                if not a.cranklength > 0:
                    raise ModelError(f"actuator cranklength={a.cranklength} must be positive"
                                     f"{_where(a)}")
            elif a.body:
                trn, tid = T.TRN_BODY, self.lookup("body", a.body, a, "actuator body")
            elif a.tendon:
                trn, tid = T.TRN_TENDON, self.lookup("tendon", a.tendon, a, "actuator tendon")
            else:
                raise ModelError(f"actuator has no transmission target (joint, tendon, site or "
                                 f"body)"
                                 f"{_where(a)}")
            for what, table in (("dyntype", _DYNTYPES), ("gaintype", _GAINTYPES),
                                ("biastype", _BIASTYPES)):
                if not getattr(a, what) or getattr(a, what) not in table:
                    raise ModelError(f"actuator {what}={getattr(a, what)!r} is not supported "
                                     f"(one of {', '.join(table)}){_where(a)}")
            for what, lim, rng in (("ctrlrange", a.ctrllimited, a.ctrlrange),
                                   ("forcerange", a.forcelimited, a.forcerange)):
                if lim and rng[0] > rng[1]:
                    raise ModelError(f"actuator {what} lower bound exceeds upper bound{_where(a)}")
            lr = tuple(float(x) for x in a.lengthrange)
            for what, kind, prm in (("gainprm", a.gaintype, a.gainprm),
                                    ("biasprm", a.biastype, a.biasprm)):
                if kind == "muscle":
                    _check_muscle(what, np.resize(np.asarray(prm, dtype=np.float64), 10), a)
            so3_free = ((a.gaintype == "so3" or a.biastype == "so3") and a.dyntype == "integrator"
                        and tuple(a.actrange) == (0.0, 0.0))
            if a.actlimited and not a.actrange[0] < a.actrange[1] and not so3_free:
                raise ModelError(f"actuator actrange={tuple(a.actrange)} with actlimited: the "
                                 f"lower bound must be below the upper{_where(a)}")
            if a.dyntype == "none" and (a.actlimited or any(a.actrange)):
                raise ModelError(f"actuator has actrange or actlimited but no activation "
                                 f"dynamics (dyntype='none'){_where(a)}")
            if not (np.isfinite(a.damping) and a.damping >= 0):
                raise ModelError(f"actuator damping={a.damping} must be finite and "
                                 f"non-negative{_where(a)}")
            _check_dampingpoly("actuator", a.dampingpoly, _where(a))
            if not (np.isfinite(a.armature) and a.armature >= 0):
                raise ModelError(f"actuator armature={a.armature} must be finite and "
                                 f"non-negative{_where(a)}")
            lends = (a.damping != 0 or any(float(p) != 0 for p in a.dampingpoly),
                     a.armature != 0)
            for what, given in zip(("damping", "armature"), lends):
                if given and trn not in (T.TRN_JOINT, T.TRN_JOINTINPARENT, T.TRN_TENDON):
                    raise ModelError(f"actuator {what} needs a joint, jointinparent or "
                                     f"tendon transmission (it is added to that joint's or "
                                     f"tendon's){_where(a)}")
            actnum = int(a.dyntype != "none")
            ctrlspec = 0
            outnum = 1
            actlimited = int(a.actlimited)
            # each control: (limited, lo, hi); a pid reads its inputs' controls in order
            ctrls = [(int(a.ctrllimited), *a.ctrlrange)]
            if a.gaintype == "so3" or a.biastype == "so3":
                ball = trn == T.TRN_JOINT and A["jnt_type"][tid] == T.JNT_BALL
                trn, ctrlspec, actnum = self._so3(a, trn, tid1, ball)
                outnum = 3
                if actnum and actlimited and tuple(a.actrange) == (0.0, 0.0):
                    actlimited = 0  # MuJoCo: the act setpoint is re-anchored instead
                ctrls = ctrls * (4 if ctrlspec == T.CHART_QUAT else 3)
            elif a.gaintype == "pid":
                ctrlspec, actnum = _pid_inputs(a)
                ranges = {"pos": ctrls[0]}
                for key, rng in (("vel", a.velrange), ("ff", a.ffrange)):
                    if rng[0] < rng[1]:
                        ranges[key] = (1, *rng)
                    else:
                        ranges[key] = (0, *rng)
                ctrls = [ranges[t] for t, bit in _PID_INPUTS if ctrlspec & bit]
            elif a.dyntype == "pid":
                raise ModelError(f"actuator dyntype 'pid' requires gaintype 'pid'{_where(a)}")
            elif "dcmotor" in (a.dyntype, a.gaintype, a.biastype):
                ctrlspec, actnum = _dcmotor_inputs(a)
                nctrl = bin(ctrlspec & (T.INPUT_NONE - 1)).count("1")
                ctrls = ctrls * nctrl
            elif a.input:
                # fixed and affine gains: one input, recorded in ctrlspec only
                ctrlspec = _ONE_INPUT.get(a.input.strip(), -1)
                if ctrlspec < 0 or a.gaintype not in ("fixed", "affine"):
                    raise ModelError(f"actuator input={a.input!r}: fixed and affine gains take "
                                     f"one input, 'pos', 'vel' or 'pressure' (other gains: "
                                     f"none but pid's){_where(a)}")
            rows.append(dict(trntype=trn, ctrlspec=ctrlspec, ctrls=ctrls, outnum=outnum,
                             dyntype=_DYNTYPES.index(a.dyntype),
                             gaintype=_GAINTYPES.index(a.gaintype),
                             biastype=_BIASTYPES.index(a.biastype),
                             actadr=na if actnum else -1, actnum=actnum,
                             actlimited=actlimited, actrange=a.actrange,
                             actearly=int(a.actearly), lengthrange=lr,
                             trnid=[tid, tid1], ctrllimited=int(a.ctrllimited),
                             cranklength=float(a.cranklength),
                             forcelimited=int(a.forcelimited),
                             gainprm=np.resize(np.asarray(a.gainprm, dtype=np.float64), 10),
                             biasprm=np.resize(np.asarray(a.biasprm, dtype=np.float64), 10),
                             dynprm=np.resize(np.asarray(a.dynprm, dtype=np.float64), 10),
                             ctrlrange=a.ctrlrange, forcerange=a.forcerange,
                             gear=np.resize(np.asarray(a.gear, dtype=np.float64), 6),
                             group=int(a.group), damping=float(a.damping),
                             dampingpoly=[float(p) for p in a.dampingpoly],
                             armature=float(a.armature)))
            na += actnum
        nact = len(rows)
        shapes = dict(trnid=(2,), gainprm=(10,), biasprm=(10,), dynprm=(10,),
                      forcerange=(2,), actrange=(2,), dampingpoly=(2,))
        for k in ("trntype", "dyntype", "gaintype", "biastype", "trnid", "ctrlspec",
                  "forcelimited", "gainprm", "biasprm", "dynprm", "forcerange",
                  "actadr", "actnum", "actlimited", "actrange", "actearly",
                  "cranklength", "group", "damping", "dampingpoly", "armature"):
            A["actuator_" + k] = (np.array([r[k] for r in rows], dtype=np.float64)
                                  .reshape((nact,) + shapes.get(k, ())))
        # the controls: actuator i reads ctrl[ctrladr : ctrladr + ctrlnum]
        num = np.array([len(r["ctrls"]) for r in rows], dtype=np.int64)
        A["actuator_ctrlnum"] = num
        A["actuator_ctrladr"] = np.cumsum(num) - num
        # the outputs: actuator i writes force/length/velocity/moment[outadr : outadr + outnum]
        # (gear and lengthrange are per output, as MuJoCo 4.0 lays them out)
        outnum = np.array([r["outnum"] for r in rows], dtype=np.int64)
        A["actuator_outnum"] = outnum
        A["actuator_outadr"] = np.cumsum(outnum) - outnum
        nout = int(outnum.sum())
        A["actuator_gear"] = np.array([r["gear"] for r in rows for _ in range(r["outnum"])],
                                      dtype=np.float64).reshape(nout, 6)
        A["actuator_lengthrange"] = np.array(
            [r["lengthrange"] for r in rows for _ in range(r["outnum"])],
            dtype=np.float64).reshape(nout, 2)
        ctrls = [c for r in rows for c in r["ctrls"]]
        A["actuator_ctrllimited"] = np.array([c[0] for c in ctrls], dtype=np.int64)
        A["actuator_ctrlrange"] = np.array([c[1:] for c in ctrls],
                                           dtype=np.float64).reshape(len(ctrls), 2)
        A["actuator_acc0"] = np.zeros(nout)
        # which actuators lend damping or armature: set_const (mass_constants) sets them
        A["jnt_actuatorid"] = np.full(len(A["jnt_type"]), -1)
        A["tendon_actuatorid"] = np.full(len(A["tendon_num"]), -1)
        return na

    @staticmethod
    def _so3(a, trn, tid1, ball):
        """(trntype, ctrlspec, actnum) of an orientation servo; MuJoCo 4.0's checks, in order.

        gaintype and biastype both so3, dyntype none or integrator, kp = gainprm[0] =
        −biasprm[1], a ball joint or a site with a refsite; input expmap (3 controls, the
        default) or quat (4 controls, dyntype none); forcerange (the torque norm's bound)
        with lower bound 0. With the integrator the 3 activations hold the setpoint.
        """
        where = _where(a)
        if a.gaintype != "so3" or a.biastype != "so3":
            raise ModelError(f"actuator gaintype={a.gaintype!r} biastype={a.biastype!r}: "
                             f"gaintype and biastype must both be 'so3'{where}")
        if a.dyntype not in ("none", "integrator"):
            raise ModelError(f"actuator dyntype={a.dyntype!r}: so3 requires dyntype 'none' or "
                             f"'integrator'{where}")
        if float(a.gainprm[0]) != -float(a.biasprm[1]):
            raise ModelError(f"actuator gainprm[0]={float(a.gainprm[0])} biasprm[1]="
                             f"{float(a.biasprm[1])}: so3 requires gainprm[0] == -biasprm[1]"
                             f"{where}")
        if trn == T.TRN_SITE:
            if tid1 < 0:
                raise ModelError(f"actuator site={a.site!r}: an so3 site transmission "
                                 f"requires refsite{where}")
        elif trn == T.TRN_JOINT:
            if not ball:
                raise ModelError(f"actuator joint={a.joint!r}: an so3 joint transmission "
                                 f"requires a ball joint{where}")
        else:
            raise ModelError(f"actuator: so3 requires a site (with refsite) or ball joint "
                             f"transmission{where}")
        chart = {"": T.CHART_EXPMAP, "expmap": T.CHART_EXPMAP,
                 "quat": T.CHART_QUAT}.get((a.input or "").strip(), -1)
        if chart < 0:
            raise ModelError(f"actuator input={a.input!r}: so3 input must be expmap or quat"
                             f"{where}")
        if chart == T.CHART_QUAT and a.dyntype != "none":
            raise ModelError(f"actuator input='quat' dyntype={a.dyntype!r}: so3 quat input "
                             f"requires dyntype 'none'{where}")
        if a.forcelimited and float(a.forcerange[0]) != 0.0:
            raise ModelError(f"actuator forcerange={tuple(a.forcerange)}: so3 forcerange "
                             f"bounds the force norm, the lower bound must be 0{where}")
        return T.TRN_SO3, chart, 3 if a.dyntype == "integrator" else 0

    def compile_history(self, A):
        """actuator_history* and sensor_history*, delay, interval; returns nhistory.

        MuJoCo's layout: a buffer of 2 + n·(1 + dim) values per actuator (dim its number of
        controls, ctrlnum: MuJoCo 4.0 keeps the whole control block) and sensor (dim
        sensor_dim) with nsample n > 0, actuators first, in order (`jointspace.history`).
        """
        adr = 0
        for kind, items in (("actuator", self.spec.actuators), ("sensor", self.spec.sensors)):
            hist, hadr = [], []
            for k, e in enumerate(items):
                n = int(e.nsample)
                if e.interp not in INTERP_NAMES:
                    raise ModelError(f"{kind} interp={e.interp!r}: use one of "
                                     f"{', '.join(INTERP_NAMES)}{_where(e)}")
                if e.delay > 0 and n <= 0:
                    raise ModelError(f"{kind} delay={e.delay} needs a history buffer: set "
                                     f"nsample > 0{_where(e)}")
                if n > 1 << 24:
                    raise ModelError(f"{kind} nsample={n}: at most 2^24 samples in a "
                                     f"history buffer{_where(e)}")
                period, phase = getattr(e, "interval", (0.0, 0.0))
                if period < 0 or phase > 0 or (period > 0 and phase <= -period):
                    raise ModelError(f"sensor interval=({period}, {phase}): the period must "
                                     f"be non-negative and the phase in (-period, 0]"
                                     f"{_where(e)}")
                hist.append((n, INTERP_NAMES.index(e.interp)))
                hadr.append(adr if n > 0 else -1)
                if n > 0:
                    dim = A["sensor_dim" if kind == "sensor" else "actuator_ctrlnum"][k]
                    adr += 2 + n * (1 + int(dim))
            A[kind + "_history"] = np.array(hist, dtype=np.int64).reshape(len(items), 2)
            A[kind + "_historyadr"] = np.array(hadr, dtype=np.int64)
            A[kind + "_delay"] = np.array([float(e.delay) for e in items])
        A["sensor_interval"] = np.array([tuple(e.interval) for e in self.spec.sensors],
                                        dtype=np.float64).reshape(len(self.spec.sensors), 2)
        return adr

    def compile_sensors(self, A):
        """sensor_* from the SensorSpecs (MuJoCo's types, dims, stages); returns nsensordata.

        Sensor types jointspace does not compute keep their MuJoCo layout (their values are
        NaN) and are named in one warning.
        """
        rows, adr, skipped = [], 0, []
        for sens in self.spec.sensors:
            kind = sens.kind
            if kind not in _SENSOR_TABLE:
                raise ModelError(f"unknown sensor type {kind!r}{_where(sens)}")
            stype, dim, datatype, stage = _SENSOR_TABLE[kind]
            if sens.name and sens.name in self.names["sensor"]:
                raise ModelError(f"duplicate sensor name {sens.name!r}{_where(sens)}")
            self.names["sensor"].append(sens.name)
            label = f"sensor <{kind}>" + (f" {sens.name!r}" if sens.name else "")
            objtype, objid = self.sensor_object(sens.objtype, sens.objname, sens, label, "obj")
            reftype, refid = self.sensor_object(sens.reftype, sens.refname, sens, label, "ref")
            if kind == "user":
                dim = sens.dim
                datatype = ("real", "positive", "axis", "quaternion").index(sens.datatype)
                stage = ("pos", "vel", "acc").index(sens.needstage) + 1
            intprm = (0, 0, 0)
            if kind == "rangefinder":  # data fields bitmask (RAYDATA order), their sizes
                intprm = (sens.intprm[0] or 1, 0, 0)
                dim = sum(n for k, n in enumerate(SN.RAYDATA_SIZE) if intprm[0] >> k & 1)
                if objtype == SN.OBJ_CAMERA:  # one ray per pixel, row by row
                    w, h = (int(r) for r in A["cam_resolution"][objid])
                    if w <= 0 or h <= 0:
                        raise ModelError(f"{label}: camera {sens.objname!r} needs a positive "
                                         f"resolution for a depth image{_where(sens)}")
                    dim *= w * h
            if kind == "contact":
                dim, intprm = sens.dim, sens.intprm
                # forces and torques (and reductions by force) need the acceleration stage
                if not (intprm[0] & 0b110 or intprm[1] >= 2):
                    stage = SN.STAGE_POS
            if kind == "camprojection" and min(A["cam_resolution"][refid]) <= 0:
                raise ModelError(f"{label}: camera {sens.refname!r} needs a positive resolution "
                                 f"(width height in pixels) to project into{_where(sens)}")
            if kind == "ballquat" or kind == "ballangvel":
                if A["jnt_type"][objid] != T.JNT_BALL:
                    raise ModelError(f"{label}: joint {sens.objname!r} is not a ball joint"
                                     f"{_where(sens)}")
            elif sens.objtype == "joint" and A["jnt_type"][objid] not in (T.JNT_HINGE,
                                                                         T.JNT_SLIDE):
                raise ModelError(f"{label}: joint {sens.objname!r} must be a hinge or slide "
                                 f"joint{_where(sens)}")
            if kind in ("distance", "normal", "fromto"):
                for ot, oid in ((objtype, objid), (reftype, refid)):
                    gt = (A["geom_type"][oid:oid + 1] if ot == SN.OBJ_GEOM else
                          A["geom_type"][A["geom_bodyid"] == oid] if ot == SN.OBJ_BODY else [])
                    if np.any(np.asarray(gt) == T.GEOM_HFIELD):
                        raise ModelError(f"{label}: height fields are not supported in geom "
                                         f"distance sensors (as in MuJoCo){_where(sens)}")
            if kind == "tactile":
                dim = 3 * int(A["mesh_vertnum"][objid])
                self.check_tactile(A, refid, sens, label)
                ms = next(x for x in self.spec.meshes if x.name == sens.objname)
                if not len(ms.normal) and ms.nfilenormal == dim:
                    raise ModelError(
                        f"{label}: mesh {sens.objname!r} comes from an OBJ file with three "
                        f"normals per vertex, which MuJoCo reads as each taxel's frame (the "
                        f"slip channels); jointspace does not read OBJ normals: give them "
                        f"with the mesh's normal attribute instead{_where(sens)}")
            if kind in ("actuatorpos", "actuatorvel", "actuatorfrc"):
                # one value per output of the actuator (3 for orientation), as MuJoCo 4.0
                dim = int(A["actuator_outnum"][objid])
            if kind.startswith("tendonlimit") and not A["tendon_limited"][objid]:
                raise ModelError(f"{label}: tendon {sens.objname!r} is not limited; "
                                 f"{kind} needs a limited tendon{_where(sens)}")
            if stype not in COMPUTED:
                skipped.append(f"<{kind}>" + (f" {sens.name!r}" if sens.name else "")
                               + _where(sens))
            rows.append(dict(type=stype, datatype=datatype, needstage=stage, objtype=objtype,
                             objid=objid, reftype=reftype, refid=refid, dim=dim, adr=adr,
                             cutoff=sens.cutoff, noise=sens.noise, intprm=intprm))
            adr += dim
        for k in ("type", "datatype", "needstage", "objtype", "objid", "reftype", "refid",
                  "dim", "adr", "cutoff", "noise"):
            A["sensor_" + k] = np.array([r[k] for r in rows], dtype=np.float64)
        A["sensor_intprm"] = np.array([r["intprm"] for r in rows],
                                      dtype=np.float64).reshape(len(rows), 3)
        if skipped:
            msg = ("sensors jointspace does not compute yet (their sensordata values are NaN; "
                   "MuJoCo's layout is kept): " + "; ".join(skipped))
            self.warn(msg)
            warnings.warn(JointspaceWarning(msg), stacklevel=5)
        return adr

    def check_tactile(self, A, geom, sens, label):
        """MuJoCo's checks of a tactile sensor's geom, and the contacts it cannot read.

        The geom's body needs a colliding geom (mj_validateModel). MuJoCo's sensor takes the
        signed distance of every geom touching the body's weld group and stops with an error
        at a height field ("sdf collisions not available"): a height field that the group's
        geoms may collide with (by contype/conaffinity or an explicit pair) is refused here.
        """
        gbody = np.asarray(A["geom_bodyid"], dtype=np.int64)
        weld = np.asarray(A["body_weldid"], dtype=np.int64)
        ctype = np.asarray(A["geom_contype"], dtype=np.int64)
        caff = np.asarray(A["geom_conaffinity"], dtype=np.int64)
        body = gbody[geom]
        if not np.any((ctype[gbody == body] != 0) | (caff[gbody == body] != 0)):
            raise ModelError(f"{label}: the body of geom {sens.refname!r} has no colliding geom "
                             f"(contype or conaffinity nonzero); MuJoCo refuses a tactile "
                             f"sensor there{_where(sens)}")
        group = np.flatnonzero(weld[gbody] == weld[body])
        names = self.names["geom"]
        pairs = {(p.geom1, p.geom2) for p in self.spec.pairs}
        for h in np.flatnonzero(np.asarray(A["geom_type"]) == T.GEOM_HFIELD):
            if weld[gbody[h]] == weld[body]:
                continue
            for g in group:
                if (ctype[g] & caff[h]) or (ctype[h] & caff[g]) \
                        or (names[g], names[h]) in pairs or (names[h], names[g]) in pairs:
                    raise ModelError(
                        f"{label}: geom {sens.refname!r}'s body may touch the height field "
                        f"geom {names[h] or h!r}; MuJoCo's tactile sensor cannot measure "
                        f"height fields (it stops with 'sdf collisions not available'); "
                        f"keep them apart with contype/conaffinity{_where(sens)}")

    def sensor_object(self, kind, name, sens, label, which):
        """(mjtObj type, id) of a sensor's object or reference frame; (0, -1) when unnamed."""
        if not kind and not name:
            return 0, -1
        if kind not in _SENSOR_OBJTYPES:
            raise ModelError(f"{label}: unknown {which}type {kind!r}; use one of "
                             f"{', '.join(_SENSOR_OBJTYPES)}{_where(sens)}")
        table = "body" if kind == "xbody" else kind
        return _SENSOR_OBJTYPES[kind], self.lookup(table, name, sens, label)

    def compile_keys(self, A, nq, nv, na, mocapid, nmocap):
        """key_* from the keyframes: MuJoCo's defaults for what a key leaves unset.

        qpos defaults to qpos0, mpos/mquat to the mocap bodies' poses, the rest to zero; a
        shorter vector is completed from those defaults (mpos and mquat body by body, as
        MuJoCo 4 does), a longer one refused. Quaternions (of free and ball joints in qpos,
        and mquat) are normalized; a zero quaternion is kept, as MuJoCo keeps it.
        """
        keys = self.spec.keys
        nkey, nu = len(keys), len(A["actuator_ctrllimited"])
        mocap_bodies = [b for b in range(len(mocapid)) if mocapid[b] >= 0]
        mpos0 = np.array([A["body_pos"][b] for b in mocap_bodies]).reshape(-1)
        mquat0 = np.array([A["body_quat"][b] for b in mocap_bodies]).reshape(-1)
        qpos0 = np.asarray(A["qpos0"], dtype=np.float64)
        out = {"time": np.zeros(nkey), "qpos": np.tile(qpos0, (nkey, 1)),
               "qvel": np.zeros((nkey, nv)), "act": np.zeros((nkey, na)),
               "ctrl": np.zeros((nkey, nu)), "mpos": np.tile(mpos0, (nkey, 1)),
               "mquat": np.tile(mquat0, (nkey, 1))}
        out["mpos"] = out["mpos"].reshape(nkey, 3 * nmocap)
        out["mquat"] = out["mquat"].reshape(nkey, 4 * nmocap)
        # an attached keyframe's elements (spec objects) -> their ids in the model
        index = {"joint": {id(j): i for i, j in enumerate(
                     j for b in self.bodies for j in b.joints)},
                 "actuator": {id(a): i for i, a in enumerate(self.spec.actuators)},
                 "body": {id(b): i for i, b in enumerate(self.bodies)}}
        quat_adr = [int(a) + (3 if t == T.JNT_FREE else 0)
                    for t, a in zip(A["jnt_type"], A["jnt_qposadr"])
                    if t in (T.JNT_BALL, T.JNT_FREE)]
        for k, key in enumerate(keys):
            if key.name and key.name in self.names["key"]:
                raise ModelError(f"duplicate key name {key.name!r}{_where(key)}")
            self.names["key"].append(key.name)
            label = f"keyframe {key.name!r}" if key.name else f"keyframe {k}"
            out["time"][k] = _check_finite([key.time], f"{label}: time", key)[0]
            for field, n, unit in (("qpos", nq, 1), ("qvel", nv, 1), ("act", na, 1),
                                   ("ctrl", nu, 1), ("mpos", 3 * nmocap, 3),
                                   ("mquat", 4 * nmocap, 4)):
                v = getattr(key, field)
                if v is None:
                    continue
                v = _check_finite(v, f"{label}: {field}", key).reshape(-1)
                if v.size > n:
                    raise ModelError(f"{label}: {field} has {v.size} values, the model has "
                                     f"{n} ({self._key_size_help(field)}){_where(key)}")
                m = v.size - v.size % unit
                out[field][k, :m] = v[:m]
            for field, values in (key.by_element or {}).items():
                kind = {"ctrl": "actuator", "act": "actuator", "mpos": "body",
                        "mquat": "body"}.get(field, "joint")
                for elem, val in values:
                    i = index[kind].get(id(elem))
                    if i is None:
                        raise ModelError(f"{label}: {field} of a {kind} not in the model"
                                         f"{_where(key)}")
                    if field in ("mpos", "mquat"):
                        adr = (3 if field == "mpos" else 4) * int(mocapid[i])
                    else:
                        table = {"ctrl": "actuator_ctrladr", "act": "actuator_actadr",
                                 "qpos": "jnt_qposadr", "qvel": "jnt_dofadr"}[field]
                        adr = int(A[table][i])
                    val = np.atleast_1d(np.asarray(val, dtype=np.float64))
                    out[field][k, adr:adr + val.size] = val
            for a in quat_adr:
                out["qpos"][k, a:a + 4] = _normalized(out["qpos"][k, a:a + 4])
            for i in range(nmocap):
                out["mquat"][k, 4 * i:4 * i + 4] = _normalized(out["mquat"][k, 4 * i:4 * i + 4])
        for field, v in out.items():
            A["key_" + field] = v

    @staticmethod
    def _key_size_help(field):
        return {"qpos": "nq", "qvel": "nv", "act": "na: actuators with activation",
                "ctrl": "nu: one per actuator, ctrlnum for a pid", "mpos": "3 per mocap body",
                "mquat": "4 per mocap body"}[field]

    def compile_equalities(self, A):
        rows = []
        for e in self.spec.equalities:
            if e.type not in EQUALITY_TYPES:
                raise ModelError(f"unknown equality type {e.type!r}{_where(e)}")
            self.names["equality"].append(e.name)
            data = np.zeros(12)
            # MuJoCo leaves the object type of joint and tendon couplings unset (0)
            objtype = 0 if e.type in ("joint", "tendon") else T.OBJ_BODY
            if e.type in ("joint", "tendon"):
                o1 = self.lookup(e.type, e.obj1, e, f"equality {e.type}1")
                o2 = self.lookup(e.type, e.obj2, e, f"equality {e.type}2") if e.obj2 else -1
                data[:5] = np.resize(np.asarray(e.polycoef, dtype=np.float64), 5)
                data[10] = 1.0  # MuJoCo 4.0 keeps its spec's default torquescale here
            elif e.objtype == "site":
                objtype = T.OBJ_SITE
                o1 = self.lookup("site", e.obj1, e, "equality site1")
                o2 = self.lookup("site", e.obj2, e, "equality site2")
                if o1 == o2:
                    raise ModelError(f"equality constraint between site {e.obj1!r} and "
                                     f"itself{_where(e)}; name two different sites")
                if e.type == "weld":
                    # MuJoCo keeps its spec's default data (polycoef 0 1 0 0 0) in the
                    # unused entries of a site weld, and the torquescale
                    data[1] = 1.0
                    data[10] = e.torquescale
            else:
                o1 = self.lookup("body", e.obj1, e, "equality body1")
                o2 = self.lookup("body", e.obj2, e, "equality body2") if e.obj2 else 0
                data[:3] = e.anchor
                data[10] = 1.0
                if e.type == "weld":
                    if e.relpose is not None:
                        data[3:10] = e.relpose
                    else:
                        data[11] = 1.0  # MuJoCo 4.0's flag: relpose from the pose at qpos0
                    data[10] = e.torquescale
            rows.append(dict(type=_EQ[e.type], obj1id=o1, obj2id=o2, objtype=objtype,
                             active0=int(e.active), solref=e.solref, solimp=e.solimp,
                             data=data))
        n = len(rows)
        shapes = dict(solref=(2,), solimp=(5,), data=(12,))
        for k in ("type", "obj1id", "obj2id", "objtype", "active0", "solref", "solimp",
                  "data"):
            A["eq_" + k] = np.array([r[k] for r in rows], dtype=np.float64).reshape(
                (n,) + shapes.get(k, ()))

    def compile_contacts(self, A):
        rows, pair_names = [], []
        gf = A["geom_friction"]
        gb = A["geom_bodyid"]
        for p in self.spec.pairs:
            pair_names.append(p.name)
            g1 = self.lookup("geom", p.geom1, p, "pair geom1")
            g2 = self.lookup("geom", p.geom2, p, "pair geom2")
            fr = (np.resize(np.asarray(p.friction, dtype=np.float64), 5) if p.friction is not None
                  else np.r_[np.maximum(gf[g1], gf[g2])[[0, 0, 1, 2, 2]]])
            rows.append(dict(
                dim=p.condim if p.condim is not None else max(A["geom_condim"][g1],
                                                              A["geom_condim"][g2]),
                geom1=g1, geom2=g2,
                solref=p.solref if p.solref is not None else A["geom_solref"][g1],
                solreffriction=p.solreffriction,
                solimp=p.solimp if p.solimp is not None else A["geom_solimp"][g1],
                margin=p.margin if p.margin is not None else max(A["geom_margin"][g1],
                                                                 A["geom_margin"][g2]),
                gap=p.gap if p.gap is not None else max(A["geom_gap"][g1], A["geom_gap"][g2]),
                friction=fr, adhesion=float(_check_finite(p.adhesion, "pair adhesion", p))))
            # MuJoCo orders a pair's geoms by body id and the pairs by (body1, body2),
            # stably: the signature body1 << 16 + body2
            r = rows[-1]
            if gb[g1] > gb[g2]:
                r["geom1"], r["geom2"] = g2, g1
            r["signature"] = (int(gb[r["geom1"]]) << 16) + int(gb[r["geom2"]])
        order = sorted(range(len(rows)), key=lambda k: rows[k]["signature"])
        rows = [rows[k] for k in order]
        self.names["pair"].extend(pair_names[k] for k in order)
        n = len(rows)
        shapes = dict(solref=(2,), solreffriction=(2,), solimp=(5,), friction=(5,))
        for k in ("dim", "geom1", "geom2", "solref", "solreffriction", "solimp", "margin", "gap",
                  "friction", "adhesion"):
            A["pair_" + k] = np.array([r[k] for r in rows], dtype=np.float64).reshape(
                (n,) + shapes.get(k, ()))
        A["flg_surfacevel"] = [bool(np.any(A["geom_surfacevel"] != 0))]
        A["flg_adhesion"] = [bool(np.any(A["geom_adhesion"] != 0)
                                  or np.any(A["pair_adhesion"] != 0))]
        sig = []
        for e in self.spec.excludes:
            b1 = self.lookup("body", e.body1, e, "exclude body1")
            b2 = self.lookup("body", e.body2, e, "exclude body2")
            b1, b2 = min(b1, b2), max(b1, b2)
            sig.append((b1 << 16) + b2)
        A["exclude_signature"] = sorted(sig)  # MuJoCo sorts exclusions by signature

    def compile_option(self, A):
        o = self.spec.option
        for what, val, choices in (("integrator", o.integrator, INTEGRATORS),
                                   ("cone", o.cone, CONES), ("solver", o.solver, SOLVERS)):
            if val not in choices:
                raise ModelError(f"option {what} must be one of {choices}, got {val!r}"
                                 f"{_where(self.spec)}")
        if not o.timestep > 0:
            raise ModelError(f"option timestep must be positive, got {o.timestep}")
        A["opt_timestep"] = [o.timestep]
        A["opt_gravity"] = o.gravity
        A["opt_magnetic"] = _check_finite(o.magnetic, "option magnetic", self.spec)
        A["opt_wind"] = o.wind
        for what, val in (("density", o.density), ("viscosity", o.viscosity),
                          ("ccd_tolerance", o.ccd_tolerance)):
            if not (np.isfinite(val) and val >= 0):
                raise ModelError(f"option {what} must be non-negative and finite, got {val}"
                                 f"{_where(self.spec)}")
        A["opt_density"] = [o.density]
        A["opt_viscosity"] = [o.viscosity]
        A["opt_o_margin"] = [o.o_margin]
        A["opt_o_solref"] = o.o_solref
        A["opt_o_solimp"] = o.o_solimp
        A["opt_o_friction"] = o.o_friction
        A["opt_integrator"] = [INTEGRATORS.index(o.integrator)]
        A["opt_cone"] = [CONES.index(o.cone)]
        A["opt_solver"] = [SOLVERS.index(o.solver)]
        A["opt_iterations"] = [o.iterations]
        A["opt_tolerance"] = [o.tolerance]
        A["opt_impratio"] = [o.impratio]
        A["opt_ls_iterations"] = [o.ls_iterations]
        A["opt_ls_tolerance"] = [o.ls_tolerance]
        A["opt_noslip_iterations"] = [o.noslip_iterations]
        A["opt_noslip_tolerance"] = [o.noslip_tolerance]
        if not 0 <= o.ccd_iterations < 2**31:
            raise ModelError(f"option ccd_iterations must be an integer in [0, 2**31), got "
                             f"{o.ccd_iterations}{_where(self.spec)}")
        A["opt_ccd_iterations"] = [o.ccd_iterations]
        A["opt_ccd_tolerance"] = [o.ccd_tolerance]
        mask = 0
        for flag in o.disable_flags:
            if flag not in T.DISABLE_FLAGS:
                raise ModelError(f"unknown disable flag {flag!r}; use one of "
                                 f"{T.DISABLE_FLAGS}{_where(self.spec)}")
            mask |= 1 << T.DISABLE_FLAGS.index(flag)
        A["opt_disableflags"] = [mask]
        mask = 0
        for flag in o.enable_flags:
            if flag not in T.ENABLE_FLAGS:
                raise ModelError(f"unknown enable flag {flag!r}; use one of "
                                 f"{T.ENABLE_FLAGS}{_where(self.spec)}")
            if flag in T.ENABLE_REFUSED:
                raise ModelError(f"enable flag {flag!r} (MuJoCo 4.0: "
                                 f"{T.ENABLE_REFUSED[flag]}) is not computed by jointspace; "
                                 f"remove it{_where(self.spec)}")
            mask |= 1 << T.ENABLE_FLAGS.index(flag)
        A["opt_enableflags"] = [mask]
        mask = 0
        for g in o.disable_actuator_groups:
            if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g <= 30:
                raise ModelError(f"option disable_actuator_groups: {g!r} is not an actuator "
                                 f"group in 0..30{_where(self.spec)}")
            mask |= 1 << int(g)
        A["opt_disableactuator"] = [mask]
        A["stat_meaninertia"] = [1.0]

    # -- 5. constants at qpos0 ------------------------------------------------------------------
    def check_overflow(self, m, d):
        """ModelError when a quantity derived at qpos0 is not finite, naming its element.

        Each value was checked finite when read; sums of large ones can still overflow: a
        subtree's mass, a body's world position (pos along a chain), M's diagonal.
        """
        i = _first_bad(m.body_subtreemass, last=True)  # the deepest: where the sum overflowed
        if i >= 0:
            b = self.bodies[i]
            raise ModelError(f"body {b.name!r}: the total mass of its subtree overflows "
                             f"({m.body_subtreemass[i]}){_where(b)}; use smaller masses")
        i = _first_bad(d.xpos, d.xipos)
        if i >= 0:
            b = self.bodies[i]
            raise ModelError(f"body {b.name!r}: its world position at qpos0 is not finite "
                             f"(xpos {d.xpos[i].tolist()}, com {d.xipos[i].tolist()}): the pos "
                             f"values along its chain of parents overflow{_where(b)}; use "
                             "smaller positions")
        i = _first_bad(m.dof_M0)
        if i >= 0:
            b = self.bodies[int(m.dof_bodyid[i])]
            raise ModelError(f"body {b.name!r}: the joint-space inertia M at qpos0 is not "
                             f"finite at dof {i} ({m.dof_M0[i]}): the masses, inertias and "
                             f"positions below this joint are too large together{_where(b)}; "
                             "use smaller values")

    def finish(self, m):
        d = mass_constants(m)  # subtree masses, dof_M0
        self.check_overflow(m, d)
        inertia_constants(m, d, True)  # singular dofs, inverse weights, mean inertia, anchors
        self.spring_damper(m)
        # after the constants, as MuJoCo's compiler
        muscle_lengthrange(m, [a.source for a in self.spec.actuators], self.spec.lengthrange)

    def spring_damper(self, m):
        """Joint stiffness and damping from springdamper = (timeconst, dampratio).

        MuJoCo's compiler (AutoSpringDamper): with the joint's inertia I = n / Σ
        dof_invweight0 over its n dofs, stiffness = I / (timeconst² dampratio²) and
        damping = 2 I / timeconst, replacing the joint's stiffness and its dofs' damping.
        """
        joints = [j for b in self.bodies for j in b.joints]
        for j, spec in enumerate(joints):
            tc, dr = spec.springdamper
            if not (tc > 0 and dr > 0):
                continue
            a = m.jnt_dofadr[j]
            n = T.JOINT_NV[int(m.jnt_type[j])]
            inertia = n / max(T.MINVAL, float(np.sum(m.dof_invweight0[a:a + n])))
            m.jnt_stiffness[j] = inertia / max(T.MINVAL, tc * tc * dr * dr)
            m.dof_damping[a:a + n] = 2.0 * inertia / max(T.MINVAL, tc)


# MJCF sensor element -> (mjtSensor, dim, mjtDataType, mjtStage), as MuJoCo compiles them
_R, _P, _A, _Q = SN.DATATYPE_REAL, SN.DATATYPE_POSITIVE, SN.DATATYPE_AXIS, SN.DATATYPE_QUATERNION
_POS, _VEL, _ACC = SN.STAGE_POS, SN.STAGE_VEL, SN.STAGE_ACC
_SENSOR_TABLE = {
    "touch": (SN.SENS_TOUCH, 1, _P, _ACC),
    "accelerometer": (SN.SENS_ACCELEROMETER, 3, _R, _ACC),
    "velocimeter": (SN.SENS_VELOCIMETER, 3, _R, _VEL),
    "gyro": (SN.SENS_GYRO, 3, _R, _VEL),
    "force": (SN.SENS_FORCE, 3, _R, _ACC),
    "torque": (SN.SENS_TORQUE, 3, _R, _ACC),
    "magnetometer": (SN.SENS_MAGNETOMETER, 3, _R, _POS),
    "rangefinder": (SN.SENS_RANGEFINDER, 1, _R, _POS),
    "camprojection": (SN.SENS_CAMPROJECTION, 2, _R, _POS),
    "jointpos": (SN.SENS_JOINTPOS, 1, _R, _POS),
    "jointvel": (SN.SENS_JOINTVEL, 1, _R, _VEL),
    "tendonpos": (SN.SENS_TENDONPOS, 1, _R, _POS),
    "tendonvel": (SN.SENS_TENDONVEL, 1, _R, _VEL),
    "actuatorpos": (SN.SENS_ACTUATORPOS, 1, _R, _POS),
    "actuatorvel": (SN.SENS_ACTUATORVEL, 1, _R, _VEL),
    "actuatorfrc": (SN.SENS_ACTUATORFRC, 1, _R, _ACC),
    "jointactuatorfrc": (SN.SENS_JOINTACTFRC, 1, _R, _ACC),
    "tendonactuatorfrc": (SN.SENS_TENDONACTFRC, 1, _R, _ACC),
    "ballquat": (SN.SENS_BALLQUAT, 4, _Q, _POS),
    "ballangvel": (SN.SENS_BALLANGVEL, 3, _R, _VEL),
    "jointlimitpos": (SN.SENS_JOINTLIMITPOS, 1, _R, _POS),
    "jointlimitvel": (SN.SENS_JOINTLIMITVEL, 1, _R, _VEL),
    "jointlimitfrc": (SN.SENS_JOINTLIMITFRC, 1, _R, _ACC),
    "tendonlimitpos": (SN.SENS_TENDONLIMITPOS, 1, _R, _POS),
    "tendonlimitvel": (SN.SENS_TENDONLIMITVEL, 1, _R, _VEL),
    "tendonlimitfrc": (SN.SENS_TENDONLIMITFRC, 1, _R, _ACC),
    "framepos": (SN.SENS_FRAMEPOS, 3, _R, _POS),
    "framequat": (SN.SENS_FRAMEQUAT, 4, _Q, _POS),
    "framexaxis": (SN.SENS_FRAMEXAXIS, 3, _A, _POS),
    "frameyaxis": (SN.SENS_FRAMEYAXIS, 3, _A, _POS),
    "framezaxis": (SN.SENS_FRAMEZAXIS, 3, _A, _POS),
    "framelinvel": (SN.SENS_FRAMELINVEL, 3, _R, _VEL),
    "frameangvel": (SN.SENS_FRAMEANGVEL, 3, _R, _VEL),
    "framelinacc": (SN.SENS_FRAMELINACC, 3, _R, _ACC),
    "frameangacc": (SN.SENS_FRAMEANGACC, 3, _R, _ACC),
    "subtreecom": (SN.SENS_SUBTREECOM, 3, _R, _POS),
    "subtreelinvel": (SN.SENS_SUBTREELINVEL, 3, _R, _VEL),
    "subtreeangmom": (SN.SENS_SUBTREEANGMOM, 3, _R, _VEL),
    "insidesite": (SN.SENS_INSIDESITE, 1, _P, _POS),
    "distance": (SN.SENS_GEOMDIST, 1, _R, _POS),
    "normal": (SN.SENS_GEOMNORMAL, 3, _A, _POS),
    "fromto": (SN.SENS_GEOMFROMTO, 6, _R, _POS),
    "contact": (SN.SENS_CONTACT, 0, _R, _ACC),
    "e_potential": (SN.SENS_E_POTENTIAL, 1, _R, _POS),
    "e_kinetic": (SN.SENS_E_KINETIC, 1, _R, _POS),
    "clock": (SN.SENS_CLOCK, 1, _R, _POS),
    "tactile": (SN.SENS_TACTILE, 0, _R, _VEL),  # MuJoCo 4.0's stage; dim 3 · vertex count
    "user": (SN.SENS_USER, 0, _R, _ACC),
}
_SENSOR_OBJTYPES = {"body": SN.OBJ_BODY, "xbody": SN.OBJ_XBODY, "joint": SN.OBJ_JOINT,
                    "geom": SN.OBJ_GEOM, "site": SN.OBJ_SITE, "actuator": SN.OBJ_ACTUATOR,
                    "camera": SN.OBJ_CAMERA, "mesh": SN.OBJ_MESH,
                    "tendon": 18}
COMPUTED = SN.COMPUTED


_CAM_MODES = ("fixed", "track", "trackcom", "targetbody", "targetbodycom")
_LIBM = {}


def _atan2f(y, x):
    """C's single-precision atan2f(y, x), which MuJoCo's compiler calls for a camera's fovy.

    NumPy's float32 arctan2 runs its own SIMD code on some processors (AVX-512) and differs
    from the C library's in the last bit there; the C library's own function is called
    through ctypes, and where it cannot be found the double-precision angle is rounded.
    """
    if "atan2f" not in _LIBM:
        import ctypes
        import ctypes.util

        try:
            fn = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").atan2f
            fn.restype = ctypes.c_float
            fn.argtypes = [ctypes.c_float, ctypes.c_float]
        except (OSError, AttributeError):
            fn = None
        _LIBM["atan2f"] = fn
    fn = _LIBM["atan2f"]
    if fn is None:
        return np.float32(math.atan2(float(y), float(x)))
    return np.float32(fn(float(y), float(x)))


def camera_row(c, bodyid, znear):
    """cam_* values of one CameraSpec, intrinsics as MuJoCo's compiler sets them.

    MuJoCo keeps sensor size and intrinsics in single precision: with a sensor size,
    intrinsic = focal (or focalpixel / pixel density) and principal likewise, and
    fovy = atan2(sensorsize_y / 2, focal_y) in degrees; without one the focal lengths are
    the near clipping distance (<visual><map znear>).
    """
    f32 = np.float32
    where = _where(c)
    if c.mode not in _CAM_MODES:
        raise ModelError(f"camera mode {c.mode!r} is not one of {', '.join(_CAM_MODES)}{where}")
    fovy = float(c.fovy)
    if fovy >= 180:
        raise ModelError(f"camera {c.name!r}: fovy={fovy} is too large (it must be below "
                         f"180 degrees){where}")
    res = [int(r) for r in c.resolution]
    ss = [f32(v) for v in c.sensorsize]
    has_intrinsic = any(v != 0 for v in (*c.focal, *c.focalpixel, *c.principal,
                                         *c.principalpixel))
    has_sensorsize = ss[0] > 0 and ss[1] > 0
    if has_intrinsic and not has_sensorsize:
        raise ModelError(f"camera {c.name!r}: focal/principal need sensorsize{where}; give "
                         f"sensorsize='width height'")
    if has_sensorsize and (res[0] <= 0 or res[1] <= 0):
        raise ModelError(f"camera {c.name!r}: sensorsize needs a positive resolution, got "
                         f"resolution={tuple(res)}{where}")
    if has_sensorsize:
        density = [f32(res[k]) / ss[k] for k in range(2)]
        intr = [f32(c.focalpixel[k]) / density[k] if c.focalpixel[k] else f32(c.focal[k])
                for k in range(2)]
        intr += [f32(c.principalpixel[k]) / density[k] if c.principalpixel[k]
                 else f32(c.principal[k]) for k in range(2)]
        fovy = float(_atan2f(ss[1] / f32(2), intr[1])) * 360.0 / math.pi
    else:
        intr = [f32(znear), f32(znear), f32(0), f32(0)]
    return dict(mode=_CAM_MODES.index(c.mode), bodyid=bodyid,
                pos=_check_finite(c.pos, "camera pos", c).reshape(3),
                quat=frames.quat_normalize(_check_finite(c.quat, "camera quat", c)),
                projection=int(c.projection == "orthographic"), fovy=fovy, ipd=float(c.ipd),
                resolution=res, sensorsize=[float(v) for v in ss],
                intrinsic=[float(v) for v in intr])


def _change_frame(body, pos, quat):
    """(pos, quat) in `body`'s frame re-expressed in its parent's (MuJoCo's changeframe)."""
    return (body["pos"] + frames.rotate(body["quat"], pos),
            frames.quat_normalize(frames.quat_mul(body["quat"], quat)))


def _accumulate_inertia(parent, body):
    """Add `body`'s mass and inertia to its parent's row (MuJoCo's AccumulateInertia).

    m = m_p + m_b; c = (m_p c_p + m_b c_b) / m with c_b = pos_b + R_b ipos_b; the inertias
    about c summed by the parallel-axis rule, then diagonalized into (inertia, iquat).
    """
    ipos_b = body["pos"] + frames.rotate(body["quat"], body["ipos"])
    iquat_b = frames.quat_normalize(frames.quat_mul(body["quat"], body["iquat"]))
    parts = ((parent["mass"], parent["ipos"], parent["iquat"], parent["inertia"]),
             (body["mass"], ipos_b, iquat_b, body["inertia"]))
    mass = parts[0][0] + parts[1][0]
    if mass < MINVAL:
        parent.update(mass=0.0, ipos=np.zeros(3), iquat=np.array([1.0, 0, 0, 0]),
                      inertia=np.zeros(3))
        return
    com = (parts[0][0] * parts[0][1] + parts[1][0] * parts[1][1]) / mass
    full = np.zeros((3, 3))
    for m, c, q, inertia in parts:
        R = frames.quat_to_mat(q)
        d = c - com
        full += R @ np.diag(inertia) @ R.T + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    inertia, iquat = principal_inertia(full)
    parent.update(mass=mass, ipos=com, iquat=iquat, inertia=inertia)


def _normalized(q):
    """q / |q|, or q itself when it is zero (MuJoCo leaves a zero quaternion as it is)."""
    n = float(np.sqrt(np.dot(q, q)))
    return q / n if n > 0 else q


def _first_bad(*arrays, last=False):
    """Row index of the first (or last) non-finite row over arrays of one length, or -1."""
    ok = np.ones(len(arrays[0]), dtype=bool)
    for a in arrays:
        ok &= np.isfinite(a).all(axis=tuple(range(1, a.ndim)))
    bad = np.flatnonzero(~ok)
    return int(bad[-1 if last else 0]) if bad.size else -1


def compile_model(spec: ModelSpec) -> T.Model:
    """Compile a `ModelSpec` (from a loader or built by hand) into a `Model`.

    Values so large that a derived quantity overflows (a mass, inertia or position that is
    not finite) are refused with a ModelError naming the element, not NumPy warnings.
    """
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"compile_model expects a ModelSpec, got {type(spec).__name__}")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is checked where it matters
        return _Compiler(spec).run()
