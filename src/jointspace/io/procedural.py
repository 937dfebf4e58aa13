"""MuJoCo's procedural meshes: MJCF `<mesh builtin="..." params="..."/>`.

Each builder reproduces the vertices and faces of MuJoCo's own (`mjs_makeMesh`, user_api.cc,
and the `mjCMesh::Make*` methods of user_mesh.cc): the same order, the same arithmetic (the
icosphere's midpoints are computed in single precision, as MuJoCo does; the others in double
precision and then stored in single precision), so the compiled mesh, its hull, volume and
inertia equal MuJoCo's. `cone` and `wedge` have no faces: like any mesh given without faces,
they take those of their convex hull. `plate` is a flat surface and uses the "shell" inertia.

`make_builtin(kind, params, where)` returns (vertices (n, 3) f8, faces (m, 3) i4, inertia,
normals), inertia being the mode the builder imposes ("shell" for a plate) or None, normals
the per-vertex frames MuJoCo gives the taxel meshes `wedge` and `plate` ((3n, 3) f8 of
single-precision values: normal, tangent 1, tangent 2 of each vertex in turn), None for the
others.
"""

import math

import numpy as np

from jointspace.errors import ModelError

__all__ = ["BUILTIN_MESHES", "make_builtin"]

# the types MuJoCo 4.0's <mesh builtin> accepts, with their parameters
BUILTIN_MESHES = {
    "sphere": "subdivision (0 to 4)",
    "hemisphere": "resolution (0 to 10)",
    "cone": "nedge (at least 3) radius (in [0, 1])",
    "supersphere": "resolution (at least 3) e n (e, n >= 0)",
    "supertorus": "resolution (at least 3) radius (in (0, 1]) s t (s, t > 0)",
    "wedge": "resolution_x resolution_y (positive) fov_x (in (0, 180]) fov_y (in (0, 90]) "
             "gamma (in [0, 1])",
    "plate": "resolution_x resolution_y (positive)",
}

_NPARAMS = {"sphere": 1, "hemisphere": 1, "cone": 2, "supersphere": 3, "supertorus": 4,
            "wedge": 5, "plate": 2}

_F = np.float32


def make_builtin(kind, params, where):
    """Vertices, faces and imposed inertia mode of MuJoCo's procedural mesh `kind`."""
    if kind not in BUILTIN_MESHES:
        raise ModelError(f"{where}: builtin={kind!r} is not a procedural mesh type; use one "
                         f"of {', '.join(BUILTIN_MESHES)}")
    params = [float(p) for p in np.atleast_1d(params)]
    if len(params) != _NPARAMS[kind]:
        raise ModelError(f"{where}: params: builtin={kind!r} takes {_NPARAMS[kind]} "
                         f"parameter(s) ({BUILTIN_MESHES[kind]}), got {len(params)}")

    def bad(what):
        return ModelError(f"{where}: params={' '.join(f'{p:g}' for p in params)}: "
                          f"builtin={kind!r}: {what}")

    if any(not math.isfinite(p) for p in params):
        raise bad("the parameters must be finite numbers")
    inertia = None
    normals = None
    if kind == "sphere":
        subdiv = int(params[0])
        if not 0 <= subdiv <= 4:
            raise bad(f"the subdivision {subdiv} must be in 0..4")
        v, f = _sphere(subdiv)
    elif kind == "hemisphere":
        res = int(params[0])
        if not 0 <= res <= 10:
            raise bad(f"the resolution {res} must be in 0..10")
        v, f = _hemisphere(res)
    elif kind == "supersphere":
        res, e, n = int(params[0]), params[1], params[2]
        if res < 3:
            raise bad(f"the resolution {res} must be at least 3")
        if e < 0 or n < 0:
            raise bad("the exponents e and n must not be negative")
        v, f = _supersphere(res, e, n)
    elif kind == "supertorus":
        res, radius, s, t = int(params[0]), params[1], params[2], params[3]
        if res < 3:
            raise bad(f"the resolution {res} must be at least 3")
        if not 0 < radius <= 1:
            raise bad(f"the radius {radius:g} must be in (0, 1]")
        if s <= 0 or t <= 0:
            raise bad("the exponents s and t must be positive")
        v, f = _supertorus(res, radius, s, t)
    elif kind == "wedge":
        res = (int(params[0]), int(params[1]))
        fov, gamma = (params[2], params[3]), params[4]
        if not 0 < fov[0] <= 180:
            raise bad(f"fov_x {fov[0]:g} must be in (0, 180] degrees")
        if not 0 < fov[1] <= 90:
            raise bad(f"fov_y {fov[1]:g} must be in (0, 90] degrees")
        if res[0] <= 0 or res[1] <= 0:
            raise bad(f"the resolutions {res[0]}, {res[1]} must be positive")
        if not 0 <= gamma <= 1:
            raise bad(f"gamma {gamma:g} must be in [0, 1]")
        v, f, normals = _wedge(res, fov, gamma)
    elif kind == "plate":
        res = (int(params[0]), int(params[1]))
        if res[0] <= 0 or res[1] <= 0:
            raise bad(f"the resolutions {res[0]}, {res[1]} must be positive")
        v, f, normals = _plate(res)
        inertia = "shell"
    else:
        nedge = int(params[0])
        if nedge < 3:
            raise bad(f"the number of edges {nedge} must be at least 3")
        if not 0 <= params[1] <= 1:
            raise bad(f"the top radius {params[1]:g} must be in [0, 1] (0: an apex)")
        v, f = _cone(nedge, params[1])
    v = np.asarray(v, dtype=np.float32).astype(np.float64).reshape(-1, 3)
    if normals is not None:
        normals = np.asarray(normals, dtype=np.float32).astype(np.float64).reshape(-1, 3)
    return v, np.asarray(f, dtype=np.int32).reshape(-1, 3), inertia, normals


def _sphere(subdiv):
    """Icosahedron, each face split in four `subdiv` times; midpoints in single precision."""
    phi = _F((1.0 + math.sqrt(5.0)) / 2.0)
    norm = math.sqrt(1.0 + float(phi * phi))
    base = [(-1, phi, 0), (1, phi, 0), (-1, -phi, 0), (1, -phi, 0),
            (0, -1, phi), (0, 1, phi), (0, -1, -phi), (0, 1, -phi),
            (phi, 0, -1), (phi, 0, 1), (-phi, 0, -1), (-phi, 0, 1)]
    vert = [tuple(_F(float(_F(c)) / norm) for c in p) for p in base]
    face = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
            (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
            (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    half = _F(2.0)
    for _ in range(subdiv):
        cache = {}

        def mid(a, b, cache=cache):
            key = (min(a, b), max(a, b))
            if key not in cache:
                p, q = vert[a], vert[b]
                m = [(p[k] + q[k]) / half for k in range(3)]
                r = np.sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2])
                vert.append(tuple(c / r for c in m))
                cache[key] = len(vert) - 1
            return cache[key]

        new = []
        for a, b, c in face:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        face = new
    return [[float(c) for c in p] for p in vert], face


def _hemisphere(res):
    """Upper unit hemisphere from a quad-projected grid, closed by a fan about the origin."""
    pole = (0.0, 0.0, 1.0)
    equator = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))
    vert = [pole]
    for row in range(res + 1):
        for side in range(4):
            factor = (row + 1) / (res + 1)
            start = [pole[i] + factor * (equator[side][i] - pole[i]) for i in range(3)]
            end = [pole[i] + factor * (equator[(side + 1) % 4][i] - pole[i]) for i in range(3)]
            delta = [(end[i] - start[i]) / (row + 1) for i in range(3)]
            for i in range(row + 1):
                p = [start[j] + i * delta[j] for j in range(3)]
                nrm = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
                vert.append(tuple(c / nrm for c in p))
    vert.append((0.0, 0.0, 0.0))
    nvert = len(vert)
    face = [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 1)]
    for row in range(res):
        start_curr = 2 * row * (row + 1) + 1
        count_curr = 4 * (row + 1)
        start_next = start_curr + count_curr
        count_next = 4 * (row + 2)
        for side in range(4):
            for i in range(row + 2):
                vc = i + (row + 1) * side
                vn = i + (row + 2) * side
                face.append((start_curr + vc % count_curr, start_next + vn % count_next,
                             start_next + (vn + 1) % count_next))
                if i < row + 1:
                    face.append((start_curr + vc % count_curr,
                                 start_next + (vn + 1) % count_next,
                                 start_curr + (vc + 1) % count_curr))
    start, count = 2 * res * (res + 1) + 1, 4 * (res + 1)
    face += [(start + i, nvert - 1, start + (i + 1) % count) for i in range(count)]
    return vert, face


def _aux_c(w, m):
    c = math.cos(w)
    return math.copysign(math.pow(abs(c), m), c)


def _aux_s(w, m):
    s = math.sin(w)
    return math.copysign(math.pow(abs(s), m), s)


def _supersphere(res, e, n):
    """Superellipsoid (exponents e, n): `res` - 1 rings of `res` points and the two poles."""
    vert = [(0.0, 0.0, -1.0)]
    for i in range(1, res):
        v = -math.pi / 2 + i * math.pi / res
        for j in range(res):
            u = -math.pi + j * 2 * math.pi / res
            vert.append((_aux_c(v, n) * _aux_c(u, e), _aux_c(v, n) * _aux_s(u, e),
                         _aux_s(v, n)))
    vert.append((0.0, 0.0, 1.0))
    top = len(vert) - 1
    face = [(0, 1 + (j + 1) % res, 1 + j) for j in range(res)]
    for i in range(res - 2):
        for j in range(res):
            v1, v2 = 1 + i * res + j, 1 + i * res + (j + 1) % res
            v4, v3 = 1 + (i + 1) * res + j, 1 + (i + 1) * res + (j + 1) % res
            face += [(v1, v2, v4), (v2, v3, v4)]
    last = 1 + (res - 2) * res
    face += [(last + j, last + (j + 1) % res, top) for j in range(res)]
    return vert, face


def _supertorus(res, radius, s, t):
    """Supertoroid of tube radius `radius` about the unit circle, a `res` x `res` grid."""
    vert, face = [], []
    for i in range(res):
        u = 2 * math.pi * i / res
        for j in range(res):
            v = 2 * math.pi * j / res
            ring = 1 + radius * _aux_c(v, s)
            vert.append((ring * _aux_c(u, t), ring * _aux_s(u, t), radius * _aux_s(v, s)))
    for i in range(res):
        for j in range(res):
            i1, j1 = (i + 1) % res, (j + 1) % res
            v1, v2, v3, v4 = i * res + j, i1 * res + j, i1 * res + j1, i * res + j1
            face += [(v1, v2, v4), (v2, v3, v4)]
    return vert, face


def _linspace(lower, upper, n):
    step = (upper - lower) / (n - 1) if n > 1 else 0.0
    out = []
    for _ in range(n):
        out.append(lower)
        lower += step
    return out


def _fovea(x, gamma):
    if not gamma:
        return x
    return gamma * math.pow(x, 5) + (1 - gamma) * x


def _wedge(res, fov, gamma):
    """Bin centres of a spherical wedge of angles `fov` (degrees), on the unit sphere.

    With each its frame (MuJoCo's TangentFrame): t_a = (cos e cos a, 0, cos e sin a) and
    t_e = (−sin e sin a, cos e, sin e cos a), each normalized, and the normal t_e × t_a.
    """
    edges = []
    for k in range(2):
        scale = fov[k] * math.pi / 180
        edges.append([_fovea(x, gamma) * scale for x in _linspace(-1.0, 1.0, res[k] + 1)])
    vert, normal = [], []
    for i in range(res[0]):
        for j in range(res[1]):
            a = 0.5 * (edges[0][i + 1] + edges[0][i])
            e = 0.5 * (edges[1][j + 1] + edges[1][j])
            vert.append((math.cos(e) * math.sin(a), math.sin(e), -math.cos(e) * math.cos(a)))
            ta = _normvec((math.cos(e) * math.cos(a), 0.0, math.cos(e) * math.sin(a)))
            te = _normvec((-math.sin(e) * math.sin(a), math.cos(e), math.sin(e) * math.cos(a)))
            normal.append((te[1] * ta[2] - te[2] * ta[1], te[2] * ta[0] - te[0] * ta[2],
                           te[0] * ta[1] - te[1] * ta[0]))
            normal += [ta, te]
    return vert, [], normal


def _normvec(v):
    """v / |v| as MuJoCo's compiler normalizes it (mjuu_normvec).

    v is kept as it is when |v|² < 1e-14 or |v| is within 1e-14 of 1.
    """
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    if n2 < 1e-14:
        return v
    n = math.sqrt(n2)
    return tuple(x / n for x in v) if abs(n - 1) > 1e-14 else v


def _plate(res):
    """Flat grid of bin centres over [-1, 1]^2 at z = -1, two triangles per cell.

    Each vertex's frame is the identity: normal x, tangents y and z (as MuJoCo's MakeRect).
    """
    vert, face = [], []
    dx, dy = 2.0 / res[0], 2.0 / res[1]
    for i in range(res[0]):
        for j in range(res[1]):
            vert.append((-1 + (i + 0.5) * dx, -1 + (j + 0.5) * dy, -1.0))
    for i in range(1, res[0]):
        for j in range(1, res[1]):
            a, b = (i - 1) * res[1] + j - 1, i * res[1] + j - 1
            c, d = (i - 1) * res[1] + j, i * res[1] + j
            face += [(a, b, c), (d, c, b)]
    normal = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)] * len(vert)
    return vert, face, normal


def _cone(nedge, radius):
    """Regular `nedge`-gon at z = -1 under a smaller one (`radius`) at z = 1, or an apex."""
    vert = [(math.cos(2 * i * math.pi / nedge), math.sin(2 * i * math.pi / nedge), -1.0)
            for i in range(nedge)]
    if radius > 0:
        vert += [(radius * math.cos(2 * i * math.pi / nedge),
                  radius * math.sin(2 * i * math.pi / nedge), 1.0)
                 for i in range(nedge, 2 * nedge)]
    else:
        vert.append((0.0, 0.0, 1.0))
    return vert, []
