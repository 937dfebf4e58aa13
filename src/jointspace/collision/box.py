"""Analytic narrowphase for boxes: sphere-box, capsule-box and box-box.

Same buffer convention as `primitive` (rows [pos, normal, tangent hint, dist]).

- sphere-box: the nearest point of the box to the centre; a centre inside the box leaves
  through the nearest face.
- capsule-box: MuJoCo's rule (engine_collision_box.c): the point of the capsule segment
  nearest to the box (tested at both ends against the faces and against all 12 edges)
  gives one sphere-box contact; when the segment lies along a face or an edge a second
  sphere-box contact is taken further along the segment, where it leaves the box's extent.
- box-box: separating-axis test over the 15 candidate axes (face axes preferred on
  near-ties); a face axis clips the incident face against the reference face (up to 8
  contacts, each midway between the surfaces along the reference normal), an edge-edge
  axis gives one contact at the midpoint of the nearest points of the two edges.
"""

import math

from numba import types

from jointspace.collision._vec import (
    BUF,
    F3,
    F8,
    I8,
    M9,
    V3,
    add,
    add_scl,
    clip,
    dot,
    jit_inline,
    jit_sig,
    mat_t_vec,
    mat_vec,
    normalize,
    scl,
    sub,
)
from jointspace.collision.primitive import put
from jointspace.types import MINVAL


@jit_sig(I8(BUF, I8, F8, V3, F8, V3, M9, V3))
def sphere_box(buf, k, margin, p1, r1, p2, m2, s2):
    """Sphere (geom 1, radius r1) and box."""
    c = mat_t_vec(m2, sub(p1, p2))  # centre in the box frame
    q = (clip(c[0], -s2[0], s2[0]), clip(c[1], -s2[1], s2[1]), clip(c[2], -s2[2], s2[2]))
    d, dist = normalize(sub(q, c))
    if dist - r1 > margin:
        return 0
    if dist <= MINVAL:
        # inside: the nearest face, faces tested in the order -x, +x, -y, +y, -z, +z
        closest = 2.0 * (s2[0] + s2[1] + s2[2])
        face = 0
        for i in range(6):
            a = i // 2
            gap = abs((s2[a] if i % 2 else -s2[a]) - c[a])
            if gap < closest:
                closest = gap
                face = i
        a = face // 2
        sgn = -1.0 if face % 2 else 1.0  # normal from the sphere into the box
        nl = (sgn if a == 0 else 0.0, sgn if a == 1 else 0.0, sgn if a == 2 else 0.0)
        pos = add_scl(c, nl, 0.5 * (r1 - closest))
        put(buf, k, add(mat_vec(m2, pos), p2), mat_vec(m2, nl), -closest - r1)
        return 1
    deep = add_scl(c, d, r1)
    pos = scl(add(q, deep), 0.5)
    put(buf, k, add(mat_vec(m2, pos), p2), mat_vec(m2, d), dist - r1)
    return 1


@jit_inline
def _segment_edge(p, h, corner, j, sj, hl):
    """Nearest points of segment p + x2 h and box edge corner + x1 sj e_j, x1, x2 ∈ [-1, 1].

    Returns (dist², x1, x2, s1, s2, ok) with s = 0, 1, 2 for a parameter clamped at -1,
    interior, clamped at +1; ok = False for (nearly) parallel lines. The clamping order
    (edge parameter first, then the segment's) is MuJoCo's.
    """
    dif = sub(corner, p)
    ma = sj * sj
    mb = -sj * h[j]
    mc = hl * hl
    u = -sj * dif[j]
    v = dot(h, dif)
    det = ma * mc - mb * mb
    if abs(det) < MINVAL:
        return 0.0, 0.0, 0.0, 0, 0, False
    x1 = (mc * u - mb * v) / det
    x2 = (ma * v - mb * u) / det
    s1 = 1
    s2 = 1
    if x1 > 1:
        x1, s1 = 1.0, 2
        x2 = (v - mb) / mc
    elif x1 < -1:
        x1, s1 = -1.0, 0
        x2 = (v + mb) / mc
    if x2 > 1 or x2 < -1:
        if x2 > 1:
            x2, s2 = 1.0, 2
            x1 = (u - mb) / ma
        else:
            x2, s2 = -1.0, 0
            x1 = (u + mb) / ma
        if x1 > 1:
            x1, s1 = 1.0, 2
        elif x1 < -1:
            x1, s1 = -1.0, 0
    e = add_scl(dif, h, -x2)
    if j == 0:
        e = (e[0] + sj * x1, e[1], e[2])
    elif j == 1:
        e = (e[0], e[1] + sj * x1, e[2])
    else:
        e = (e[0], e[1], e[2] + sj * x1)
    return dot(e, e), x1, x2, s1, s2, True


@jit_sig(I8(BUF, I8, F8, V3, M9, V3, V3, M9, V3))
def capsule_box(buf, k, margin, p1, m1, s1, p2, m2, s2):
    """Capsule (geom 1) and box: one or two sphere-box contacts along the capsule segment."""
    hl = s1[1]
    p = mat_t_vec(m2, sub(p1, p2))  # capsule centre in the box frame
    a = mat_t_vec(m2, (m1[2], m1[5], m1[8]))  # capsule axis in the box frame
    h = scl(a, hl)
    adir = (1 if h[0] > 0 else 0) + (2 if h[1] > 0 else 0) + (4 if h[2] > 0 else 0)
    best = margin + 2.0 * (s1[0] + hl + s2[0] + s2[1] + s2[2])
    kind = -4  # -3/-1: end (x2 = -1/+1) nearest a face; 0..8: edge, 3 s1 + s2
    seg = 0.0  # parameter of the nearest point on the segment
    boxpos = 0.0
    face = -1
    corner_id = 0
    edge = 0
    # 1. the segment ends against the faces (ends outside an edge or corner region skip)
    for i in (-1, 1):
        e = add_scl(p, h, float(i))
        nclamp = 0
        cf = -1
        q0, q1, q2 = e
        if q0 < -s2[0] or q0 > s2[0]:
            nclamp += 1
            cf = 0
            q0 = clip(q0, -s2[0], s2[0])
        if q1 < -s2[1] or q1 > s2[1]:
            nclamp += 1
            cf = 1
            q1 = clip(q1, -s2[1], s2[1])
        if q2 < -s2[2] or q2 > s2[2]:
            nclamp += 1
            cf = 2
            q2 = clip(q2, -s2[2], s2[2])
        if nclamp > 1:
            continue
        g = sub((q0, q1, q2), e)
        dd = dot(g, g)
        if dd < best:
            best = dd
            seg = float(i)
            kind = -2 + i
            face = cf
    # 2. the segment against the 12 edges (edge along axis j through corner i, bit j clear)
    for j in range(3):
        for i in range(8):
            if i & (1 << j):
                continue
            corner = (s2[0] if i & 1 else -s2[0], s2[1] if i & 2 else -s2[1],
                      s2[2] if i & 4 else -s2[2])
            if j == 0:
                corner = (0.0, corner[1], corner[2])
            elif j == 1:
                corner = (corner[0], 0.0, corner[2])
            else:
                corner = (corner[0], corner[1], 0.0)
            dd, x1, x2, c1, c2, ok = _segment_edge(p, h, corner, j, s2[j], hl)
            if ok and dd < best - MINVAL:
                best = dd
                seg = x2
                boxpos = x1
                code = 3 * c1 + c2
                corner_id = i + (1 << j) * (code // 6)
                edge = j
                kind = code
    if kind == -4:
        return 0
    # 3. a second point when the segment rests along a face or an edge
    second = -4.0
    if kind >= 0 and kind // 3 != 1:
        # nearest to a box corner: the axis points away from, or along, the corner's faces
        c = adir ^ corner_id
        if c != 0 and c != 7:
            if c == 1 or c == 2 or c == 4:
                mul = 1.0
                de = 1.0 - seg
                dp = 1.0 + seg
            else:
                mul = -1.0
                c = 7 - c
                dp = 1.0 - seg
                de = 1.0 + seg
            ax = 0 if c == 1 else (1 if c == 2 else 2)
            ax1 = (ax + 1) % 3
            ax2 = (ax + 2) % 3
            if a[ax] * a[ax] > 0.5:  # along the edge
                second = min(de, 2.0 * s2[ax] / abs(h[ax])) * mul
            else:  # along a face
                second = min(dp, 2.0 * s2[ax1] / abs(h[ax1]), 2.0 * s2[ax2] / abs(h[ax2]))
                second *= -mul
    elif kind >= 0:
        # nearest to the middle of an edge: only the "cross" configurations get a second point
        c = (adir ^ corner_id) & (7 - (1 << edge))
        if c == 1 or c == 2 or c == 4:
            ax = edge
            ax1 = (ax + 1) % 3
            ax2 = (ax + 2) % 3
            if abs(a[ax1]) > abs(a[ax2]):
                ax1 = ax2
            ax2 = 3 - ax - ax1
            if c & (1 << ax2):
                mul = 1.0
                second = 1.0 - seg
            else:
                mul = -1.0
                second = 1.0 + seg
            second = min(second, 2.0 * s2[ax2] / abs(h[ax2]))
            same = ((adir >> ax) & 1) == ((c >> ax2) & 1)
            e2 = 1.0 - boxpos if same else 1.0 + boxpos
            second = min(second, s2[ax] * e2 / abs(h[ax]))
            second *= mul
    elif face != -1:
        # an end nearest to a face: go along the segment until it leaves the face's extent
        mul = 1.0 if kind == -3 else -1.0
        second = 2.0
        q = add_scl(p, h, -mul)
        for i in range(3):
            if i == face:
                continue
            e1 = (s2[i] - q[i]) / h[i] * mul
            if e1 > 0 and e1 < second:
                second = e1
            e1 = (-s2[i] - q[i]) / h[i] * mul
            if e1 > 0 and e1 < second:
                second = e1
        second *= mul
    n = sphere_box(buf, k, margin, add(mat_vec(m2, add_scl(p, h, seg)), p2), s1[0], p2, m2, s2)
    if second > -3:
        q = add_scl(p, h, second + seg)
        n += sphere_box(buf, k + n, margin, add(mat_vec(m2, q), p2), s1[0], p2, m2, s2)
    return n


# box-box rounding scales (double precision), in units of the quantities they multiply
_SEPEPS = 1e-13  # slack on the separation tests, times the summed half-sizes
_PAREPS = 1e-16  # sin² below which two edges count as parallel
_SGNEPS = 1e-9  # axis component below which a supporting edge is ambiguous
_DUPEPS = 1e-14  # squared relative radius of duplicate clipped vertices
_EDGEBIAS = 1e-6  # an edge axis must beat the best face axis by this relative amount
_MAXVERT = 12


@jit_sig(V3(V3, I8, F8))
def _with(t, i, x):
    """The 3-tuple t with entry i replaced by x."""
    if i == 0:
        return (x, t[1], t[2])
    if i == 1:
        return (t[0], x, t[2])
    return (t[0], t[1], x)


@jit_sig(V3(M9, I8))
def _edge_axis(r, code):
    i = (code - 6) // 3
    j = (code - 6) % 3
    i1 = (i + 1) % 3
    i2 = (i + 2) % 3
    a = _with(_with((0.0, 0.0, 0.0), i1, -r[3 * i2 + j]), i2, r[3 * i1 + j])
    axis, _ = normalize(a)
    return axis


@jit_inline
def _box_edge_contact(buf, k, p1, m1, s1, s2, r, c21, code, tol):
    """Edge-edge contact at the midpoint of the nearest points of the supporting edges."""
    i = (code - 6) // 3
    j = (code - 6) % 3
    i1 = (i + 1) % 3
    i2 = (i + 2) % 3
    j1 = (j + 1) % 3
    j2 = (j + 2) % 3
    axis = _edge_axis(r, code)
    if dot(axis, c21) < 0:  # from box 1 toward box 2
        axis = scl(axis, -1.0)
    a2 = (axis[0] * r[0] + axis[1] * r[3] + axis[2] * r[6],
          axis[0] * r[1] + axis[1] * r[4] + axis[2] * r[7],
          axis[0] * r[2] + axis[1] * r[5] + axis[2] * r[8])
    # a near-zero axis component leaves the supporting edge ambiguous: try both
    amb1 = -1
    if abs(axis[i1]) < _SGNEPS:
        amb1 = i1
    elif abs(axis[i2]) < _SGNEPS:
        amb1 = i2
    amb2 = -1
    if abs(a2[j1]) < _SGNEPS:
        amb2 = j1
    elif abs(a2[j2]) < _SGNEPS:
        amb2 = j2
    d2 = (r[j], r[3 + j], r[6 + j])  # edge direction of box 2, frame of box 1
    b = d2[i]
    den = 1.0 - b * b
    bestd = 1e300
    w1 = (0.0, 0.0, 0.0)
    w2 = (0.0, 0.0, 0.0)
    for v1 in range(2 if amb1 >= 0 else 1):
        for v2 in range(2 if amb2 >= 0 else 1):
            # supporting corner of the box-1 edge (along +axis) and box-2 edge (along -axis)
            q1 = _with((0.0, 0.0, 0.0), i1, s1[i1] if axis[i1] >= 0 else -s1[i1])
            q1 = _with(q1, i2, s1[i2] if axis[i2] >= 0 else -s1[i2])
            if v1:
                q1 = _with(q1, amb1, -q1[amb1])
            e2 = _with((0.0, 0.0, 0.0), j1, -s2[j1] if a2[j1] >= 0 else s2[j1])
            e2 = _with(e2, j2, -s2[j2] if a2[j2] >= 0 else s2[j2])
            if v2:
                e2 = _with(e2, amb2, -e2[amb2])
            q2 = add(mat_vec(r, e2), c21)
            e = sub(q2, q1)
            d1e = e[i]
            d2e = dot(d2, e)
            s = 0.0 if den < MINVAL else (d1e - b * d2e) / den
            s = clip(s, -s1[i], s1[i])
            t = clip(b * s - d2e, -s2[j], s2[j])
            s = clip(d1e + b * t, -s1[i], s1[i])
            y1 = _with(q1, i, q1[i] + s)
            y2 = add_scl(q2, d2, t)
            g = sub(y2, y1)
            gg = dot(g, g)
            if gg < bestd:
                bestd = gg
                w1 = y1
                w2 = y2
    dist = dot(sub(w2, w1), axis)
    if dist > tol:
        return 0
    mid = scl(add(w1, w2), 0.5)
    put(buf, k, add(mat_vec(m1, mid), p1), mat_vec(m1, axis), dist)
    return 1


@jit_sig(types.UniTuple(I8, 2)(F3, I8, I8, I8, F8, F8))
def _clip(poly, src, n, coord, sgn, lim):
    """Clip polygon poly[src] (n vertices) to sgn·v[coord] <= lim; returns (buffer, count)."""
    inside = True
    for q in range(n):
        if sgn * poly[src, q, coord] - lim > 0:
            inside = False
            break
    if inside:
        return src, n
    dst = 1 - src
    m = 0
    for q in range(n):
        q1 = q + 1 if q + 1 < n else 0
        dp = sgn * poly[src, q, coord] - lim
        dq = sgn * poly[src, q1, coord] - lim
        if dp <= 0 and m < _MAXVERT:
            for c in range(3):
                poly[dst, m, c] = poly[src, q, c]
            m += 1
        if ((dp < 0 and dq > 0) or (dp > 0 and dq < 0)) and m < _MAXVERT:
            t = dp / (dp - dq)
            for c in range(3):
                poly[dst, m, c] = poly[src, q, c] + t * (poly[src, q1, c] - poly[src, q, c])
            m += 1
    return dst, m


@jit_inline
def _box_face_contact(buf, k, margin, p1, m1, s1, p2, m2, s2, r, c21, c12, code, poly):
    """Face contact: the incident face clipped by the side planes of the reference face."""
    ref1 = code < 3
    a = code if ref1 else code - 3
    if ref1:
        sref, sinc, pref, mref, coi = s1, s2, p1, m1, c21
        ri = r  # ri[3 row + col]: component `row` of incident axis `col`, reference frame
    else:
        sref, sinc, pref, mref, coi = s2, s1, p2, m2, c12
        ri = (r[0], r[3], r[6], r[1], r[4], r[7], r[2], r[5], r[8])
    sgn = 1.0 if coi[a] >= 0 else -1.0
    binc = 0
    for c in range(1, 3):
        if abs(ri[3 * a + c]) > abs(ri[3 * a + binc]):
            binc = c
    tinc = -1.0 if sgn * ri[3 * a + binc] > 0 else 1.0
    ax = (a + 1) % 3
    ay = (a + 2) % 3
    bu = (binc + 1) % 3
    bv = (binc + 2) % 3
    # incident face corners as (x, y, z): in-plane reference coordinates and the height above
    # the reference face (negative inside the reference box)
    cx = (coi[ax] + tinc * sinc[binc] * ri[3 * ax + binc],
          coi[ay] + tinc * sinc[binc] * ri[3 * ay + binc],
          sgn * (coi[a] + tinc * sinc[binc] * ri[3 * a + binc]) - sref[a])
    du = (sinc[bu] * ri[3 * ax + bu], sinc[bu] * ri[3 * ay + bu], sgn * sinc[bu] * ri[3 * a + bu])
    dv = (sinc[bv] * ri[3 * ax + bv], sinc[bv] * ri[3 * ay + bv], sgn * sinc[bv] * ri[3 * a + bv])
    for q in range(4):
        su = 1.0 if q == 0 or q == 3 else -1.0
        sv = 1.0 if q < 2 else -1.0
        for c in range(3):
            poly[0, q, c] = cx[c] + su * du[c] + sv * dv[c]
    src, n = _clip(poly, 0, 4, 0, 1.0, sref[ax])
    src, n = _clip(poly, src, n, 0, -1.0, sref[ax])
    src, n = _clip(poly, src, n, 1, 1.0, sref[ay])
    src, n = _clip(poly, src, n, 1, -1.0, sref[ay])
    nsgn = sgn if ref1 else -sgn
    normal = (nsgn * mref[a], nsgn * mref[3 + a], nsgn * mref[6 + a])
    dup = _DUPEPS * (sref[ax] * sref[ax] + sref[ay] * sref[ay])
    cnt = 0
    for q in range(n):
        z = poly[src, q, 2]
        if z > margin:
            continue
        x = poly[src, q, 0]
        y = poly[src, q, 1]
        dupe = False
        for w in range(cnt):
            # accepted contacts are stored in buf; compare in-plane coordinates
            if (buf[k + w, 6] - x) ** 2 + (buf[k + w, 7] - y) ** 2 < dup:
                dupe = True
                break
        if dupe:
            continue
        buf[k + cnt, 6] = x
        buf[k + cnt, 7] = y
        buf[k + cnt, 8] = z
        cnt += 1
    for w in range(cnt):
        x = buf[k + w, 6]
        y = buf[k + w, 7]
        z = buf[k + w, 8]
        loc = _with(_with(_with((0.0, 0.0, 0.0), ax, x), ay, y), a, sgn * (sref[a] + 0.5 * z))
        put(buf, k + w, add(mat_vec(mref, loc), pref), normal, z)
    return cnt

@jit_sig(I8(BUF, I8, F8, V3, M9, V3, V3, M9, V3, F3))
def box_box(buf, k, margin, p1, m1, s1, p2, m2, s2, poly):
    """Two boxes; `poly` is (2, _MAXVERT, 3) scratch for the face clipping."""
    # r[3 i + j] = x1_i · x2_j: axes of box 2 in the frame of box 1 (columns)
    r = (m1[0] * m2[0] + m1[3] * m2[3] + m1[6] * m2[6],
         m1[0] * m2[1] + m1[3] * m2[4] + m1[6] * m2[7],
         m1[0] * m2[2] + m1[3] * m2[5] + m1[6] * m2[8],
         m1[1] * m2[0] + m1[4] * m2[3] + m1[7] * m2[6],
         m1[1] * m2[1] + m1[4] * m2[4] + m1[7] * m2[7],
         m1[1] * m2[2] + m1[4] * m2[5] + m1[7] * m2[8],
         m1[2] * m2[0] + m1[5] * m2[3] + m1[8] * m2[6],
         m1[2] * m2[1] + m1[5] * m2[4] + m1[8] * m2[7],
         m1[2] * m2[2] + m1[5] * m2[5] + m1[8] * m2[8])
    c21 = mat_t_vec(m1, sub(p2, p1))  # centre of box 2 in the frame of box 1
    c12 = mat_t_vec(m2, sub(p1, p2))  # centre of box 1 in the frame of box 2
    tol = margin + _SEPEPS * (s1[0] + s1[1] + s1[2] + s2[0] + s2[1] + s2[2])

    # stage 1: separating axes; sep > 0 separates, the largest sep is the contact axis
    best = -1e300
    code = -1
    for i in range(3):
        rad2 = abs(r[3 * i]) * s2[0] + abs(r[3 * i + 1]) * s2[1] + abs(r[3 * i + 2]) * s2[2]
        sep = abs(c21[i]) - s1[i] - rad2
        if sep > tol:
            return 0
        if sep > best:
            best = sep
            code = i
    for j in range(3):
        rad1 = abs(r[j]) * s1[0] + abs(r[3 + j]) * s1[1] + abs(r[6 + j]) * s1[2]
        sep = abs(c12[j]) - s2[j] - rad1
        if sep > tol:
            return 0
        if sep > best:
            best = sep
            code = 3 + j
    best_face = best
    code_face = code
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            # e_i × (column j of r), in the frame of box 1 (component i is zero)
            u1 = -r[3 * i2 + j]
            u2 = r[3 * i1 + j]
            nn = u1 * u1 + u2 * u2
            if nn < _PAREPS:
                continue
            inv = 1.0 / math.sqrt(nn)
            u1 *= inv
            u2 *= inv
            rad1 = s1[i1] * abs(u1) + s1[i2] * abs(u2)
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            w1 = u1 * r[3 * i1 + j1] + u2 * r[3 * i2 + j1]
            w2 = u1 * r[3 * i1 + j2] + u2 * r[3 * i2 + j2]
            rad2 = s2[j1] * abs(w1) + s2[j2] * abs(w2)
            sep = abs(u1 * c21[i1] + u2 * c21[i2]) - rad1 - rad2
            if sep > tol:
                return 0
            if sep - _EDGEBIAS * abs(sep) > best and sep > best_face:
                best = sep
                code = 6 + 3 * i + j
    if code < 0:
        return 0
    if code >= 6:
        # an edge axis within ~5° of the best face axis gives way to the face unless it is
        # 5% deeper
        axis = _edge_axis(r, code)
        if code_face < 3:
            fdot = abs(axis[code_face])
        else:
            f = code_face - 3
            fdot = abs(axis[0] * r[f] + axis[1] * r[3 + f] + axis[2] * r[6 + f])
        if fdot > 0.99 and best < best_face + 0.05 * abs(best_face) + MINVAL:
            code = code_face
    if code >= 6:
        return _box_edge_contact(buf, k, p1, m1, s1, s2, r, c21, code, tol)
    return _box_face_contact(buf, k, margin, p1, m1, s1, p2, m2, s2, r, c21, c12, code, poly)

