"""Analytic narrowphase for plane, sphere, capsule and cylinder pairs.

Every function writes its contacts into rows k, k+1, … of a buffer `buf` (n, 10) laid out
as [pos (3), normal (3), tangent hint (3), dist] and returns how many it wrote. The normal
points from geom 1 to geom 2, `dist` is the signed surface distance (negative in
penetration) and the point lies midway between the two surfaces, as in MuJoCo
(engine_collision_primitive.c); a pair is reported when dist <= margin. A zero tangent hint
lets the driver complete the frame by its default rule.

Arguments are tuples: positions (3), rotation matrices (9, row-major; a geom's local z axis
is its normal, capsule or cylinder axis) and sizes (3, MuJoCo's geom_size).
"""

import math

from jointspace.collision._vec import (
    BUF,
    F8,
    I8,
    M9,
    V3,
    VOID,
    add,
    add_scl,
    clip,
    col,
    cross,
    dot,
    jit_sig,
    mat_vec,
    normalize,
    scl,
    sub,
)
from jointspace.types import MINVAL


@jit_sig(VOID(BUF, I8, V3, V3, F8))
def put(buf, k, pos, normal, dist):
    """Write one contact (no tangent hint) into row k."""
    r = buf[k]
    r[0], r[1], r[2] = pos
    r[3], r[4], r[5] = normal
    r[6] = r[7] = r[8] = 0.0
    r[9] = dist


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, F8))
def plane_sphere(buf, k, margin, p1, m1, p2, radius):
    """Plane (geom 1) and sphere: one contact below the sphere centre."""
    n = col(m1, 2)
    h = dot(sub(p2, p1), n)  # height of the centre above the plane
    if h > margin + radius:
        return 0
    dist = h - radius
    put(buf, k, add_scl(p2, n, -(radius + 0.5 * dist)), n, dist)
    return 1


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, M9, V3))
def plane_capsule(buf, k, margin, p1, m1, p2, m2, s2):
    """Plane and capsule: the two end spheres, each frame's tangent along the capsule axis."""
    axis = col(m2, 2)
    n = plane_sphere(buf, k, margin, p1, m1, add_scl(p2, axis, s2[1]), s2[0])
    n += plane_sphere(buf, k + n, margin, p1, m1, add_scl(p2, axis, -s2[1]), s2[0])
    for i in range(k, k + n):
        buf[i, 6], buf[i, 7], buf[i, 8] = axis
    return n


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, M9, V3))
def plane_cylinder(buf, k, margin, p1, m1, p2, m2, s2):
    """Plane and cylinder: up to 4 points on the rims (MuJoCo's mjc_PlaneCylinder rule).

    The deepest rim point of the cap nearer the plane comes first; then the matching point
    of the other cap; then, when the near cap's rim dips below the margin, two points of the
    near rim at ±120° from the deepest one.
    """
    n = col(m1, 2)
    axis = col(m2, 2)
    c = dot(n, axis)
    if c > 0:  # make the axis point toward the plane
        axis = scl(axis, -1.0)
        c = -c
    h = dot(sub(p2, p1), n)  # height of the centre above the plane
    # radial direction of the deepest rim point: -n with its axial part removed
    rad = sub(scl(axis, c), n)
    len2 = dot(rad, rad)
    if len2 >= MINVAL * MINVAL:
        rad = scl(rad, s2[0] / math.sqrt(len2))
    else:  # disk parallel to the plane: any radius, MuJoCo takes the local x axis
        rad = scl(col(m2, 0), s2[0])
    hrad = dot(rad, n)
    hax = c * s2[1]
    ax = scl(axis, s2[1])
    d1 = h + hax + hrad
    if d1 > margin:
        return 0
    put(buf, k, add_scl(add(add(p2, rad), ax), n, -0.5 * d1), n, d1)
    cnt = 1
    d2 = h - hax + hrad
    if d2 <= margin:
        put(buf, k + cnt, add_scl(sub(add(p2, rad), ax), n, -0.5 * d2), n, d2)
        cnt += 1
    d3 = h + hax - 0.5 * hrad
    if d3 <= margin:
        side, _ = normalize(cross(rad, ax))
        side = scl(side, s2[0] * math.sqrt(3.0) / 2.0)
        base = add_scl(ax, rad, -0.5)
        put(buf, k + cnt, add_scl(add(add(p2, side), base), n, -0.5 * d3), n, d3)
        put(buf, k + cnt + 1, add_scl(add(sub(p2, side), base), n, -0.5 * d3), n, d3)
        cnt += 2
    return cnt


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, M9, V3))
def plane_box(buf, k, margin, p1, m1, p2, m2, s2):
    """Plane and box: the (up to 4) corners below the margin that face the plane."""
    n = col(m1, 2)
    h = dot(sub(p2, p1), n)
    cnt = 0
    for i in range(8):
        loc = (s2[0] if i & 1 else -s2[0], s2[1] if i & 2 else -s2[1],
               s2[2] if i & 4 else -s2[2])
        corner = mat_vec(m2, loc)
        hc = dot(n, corner)
        if h + hc > margin or hc > 0:
            continue
        dist = h + hc
        put(buf, k + cnt, add_scl(add(p2, corner), n, -0.5 * dist), n, dist)
        cnt += 1
        if cnt == 4:
            break
    return cnt


@jit_sig(I8(BUF, I8, F8, V3, M9, F8, V3, M9, F8))
def sphere_sphere(buf, k, margin, p1, m1, r1, p2, m2, r2):
    """Two spheres (also the kernel of the sphere-capsule and capsule-capsule tests).

    Concentric spheres take the normal z1 × z2 of their frames, or x when those are parallel.
    """
    d = sub(p2, p1)
    lim = margin + r1 + r2
    dd = dot(d, d)
    if dd > lim * lim:
        return 0
    n, length = normalize(d)
    if length < MINVAL:
        n, _ = normalize(cross(col(m1, 2), col(m2, 2)))
    dist = math.sqrt(dd) - r1 - r2
    put(buf, k, add_scl(p1, n, r1 + 0.5 * dist), n, dist)
    return 1


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, V3, M9, V3))
def sphere_capsule(buf, k, margin, p1, m1, s1, p2, m2, s2):
    """Sphere and capsule: the sphere against the nearest point of the capsule segment."""
    axis = col(m2, 2)
    t = clip(dot(axis, sub(p1, p2)), -s2[1], s2[1])
    return sphere_sphere(buf, k, margin, p1, m1, s1[0], add_scl(p2, axis, t), m2, s2[0])


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, V3, M9, V3))
def sphere_cylinder(buf, k, margin, p1, m1, s1, p2, m2, s2):
    """Sphere and cylinder: side (sphere-sphere), cap (plane-sphere) or rim (point) contact."""
    radius, half = s2[0], s2[1]
    axis = col(m2, 2)
    rel = sub(p1, p2)
    x = dot(axis, rel)
    along = scl(axis, x)
    perp = sub(rel, along)
    perp2 = dot(perp, perp)
    side = abs(x) < half
    cap = perp2 < radius * radius
    if side and cap:  # centre inside: leave through the nearer surface
        if half - abs(x) < radius - math.sqrt(perp2):
            side = False
        else:
            cap = False
    if side:
        return sphere_sphere(buf, k, margin, p1, m1, s1[0], add(p2, along), m2, radius)
    if cap:
        # the cap as a plane with outward normal ±axis; then flip the normal to point from
        # the sphere (geom 1) to the cylinder
        if x > 0:
            nc = axis
        else:
            nc = scl(axis, -1.0)
        pc = add_scl(p2, nc, half)
        h = dot(sub(p1, pc), nc)
        if h > margin + s1[0]:
            return 0
        dist = h - s1[0]
        put(buf, k, add_scl(p1, nc, -(s1[0] + 0.5 * dist)), scl(nc, -1.0), dist)
        return 1
    rim = add(scl(perp, radius / math.sqrt(perp2)), scl(axis, half if x > 0 else -half))
    return sphere_sphere(buf, k, margin, p1, m1, s1[0], add(p2, rim), m2, 0.0)


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, V3, M9, V3))
def capsule_capsule(buf, k, margin, p1, m1, s1, p2, m2, s2):
    """Two capsules: nearest points of the segments; up to 2 contacts for parallel axes."""
    a1 = scl(col(m1, 2), s1[1])
    a2 = scl(col(m2, 2), s2[1])
    d = sub(p1, p2)
    # segments p1 + x1 a1, p2 + x2 a2 with x1, x2 in [-1, 1]; normal equations of min |..|²
    ma = dot(a1, a1)
    mb = -dot(a1, a2)
    mc = dot(a2, a2)
    u = -dot(a1, d)
    v = dot(a2, d)
    det = ma * mc - mb * mb
    if abs(det) >= MINVAL:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1:
            x1 = 1.0
            x2 = (v - mb) / mc
        elif x1 < -1:
            x1 = -1.0
            x2 = (v + mb) / mc
        if x2 > 1:
            x2 = 1.0
            x1 = clip((u - mb) / ma, -1.0, 1.0)
        elif x2 < -1:
            x2 = -1.0
            x1 = clip((u + mb) / ma, -1.0, 1.0)
        return sphere_sphere(buf, k, margin, add_scl(p1, a1, x1), m1, s1[0],
                             add_scl(p2, a2, x2), m2, s2[0])
    # parallel axes: each end of segment 1, then each end of segment 2, until two contacts
    n = sphere_sphere(buf, k, margin, add(p1, a1), m1, s1[0],
                      add_scl(p2, a2, clip((v - mb) / mc, -1.0, 1.0)), m2, s2[0])
    n += sphere_sphere(buf, k + n, margin, sub(p1, a1), m1, s1[0],
                       add_scl(p2, a2, clip((v + mb) / mc, -1.0, 1.0)), m2, s2[0])
    if n >= 2:
        return n
    n += sphere_sphere(buf, k + n, margin, add_scl(p1, a1, clip((u - mb) / ma, -1.0, 1.0)),
                       m1, s1[0], add(p2, a2), m2, s2[0])
    if n >= 2:
        return n
    n += sphere_sphere(buf, k + n, margin, add_scl(p1, a1, clip((u + mb) / ma, -1.0, 1.0)),
                       m1, s1[0], sub(p2, a2), m2, s2[0])
    return n
