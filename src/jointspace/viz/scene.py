"""Triangle meshes of a model's geoms, shared by the offscreen renderer and the browser viewer.

Each geom becomes a triangle mesh in its own frame (`geom_mesh`): spheres, capsules,
ellipsoids and cylinders are tessellated, boxes have 12 triangles, meshes are used as they
are, and a plane is a checkered square (an infinite plane, size 0, is drawn 20 m wide). A
`Scene` concatenates them once; each frame only moves the vertices with d.geom_xpos and
d.geom_xmat. A height field is its grid's surface triangles (the elevations of when the Scene
is made).
"""

from __future__ import annotations

import numpy as np

from jointspace.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
)

INFINITE_PLANE_HALF = 10.0
CHECKER = 0.82  # second checker color of a plane, as a fraction of its rgba


def grid_sphere(nu=20, nv=12):
    """Unit sphere as a latitude-longitude grid: vertices (n, 3), faces (k, 3)."""
    th = np.linspace(0.0, np.pi, nv + 1)
    ph = np.linspace(0.0, 2 * np.pi, nu, endpoint=False)
    t, p = np.meshgrid(th, ph, indexing="ij")
    v = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    return v, _grid_faces(nv + 1, nu, wrap=True)


def _grid_faces(rows, cols, wrap):
    """Two triangles per cell of a rows × cols vertex grid (columns wrapping around)."""
    faces = []
    ncell = cols if wrap else cols - 1
    for i in range(rows - 1):
        for j in range(ncell):
            a, b = i * cols + j, i * cols + (j + 1) % cols
            c, e = a + cols, b + cols
            faces += [(a, c, b), (b, c, e)]
    return np.array(faces, dtype=np.int64)


def _capsule(radius, half, nu=20, nh=6):
    """Capsule along z: hemispheres of `radius` at z = ±half joined by a cylinder."""
    rings = []
    for k in range(nh + 1):                      # upper hemisphere, pole to equator
        a = 0.5 * np.pi * k / nh
        rings.append((radius * np.sin(a), half + radius * np.cos(a)))
    for k in range(nh + 1):                      # lower hemisphere, equator to pole
        a = 0.5 * np.pi * (1 - k / nh)
        rings.append((radius * np.sin(a), -half - radius * np.cos(a)))
    ph = np.linspace(0.0, 2 * np.pi, nu, endpoint=False)
    v = np.array([(r * np.cos(p), r * np.sin(p), z) for r, z in rings for p in ph])
    return v, _grid_faces(len(rings), nu, wrap=True)


def cylinder(radius, half, nu=24):
    """Closed cylinder along z with caps at z = ±half."""
    ph = np.linspace(0.0, 2 * np.pi, nu, endpoint=False)
    ring = np.stack([radius * np.cos(ph), radius * np.sin(ph)], -1)
    top = np.column_stack([ring, np.full(nu, half)])
    bot = np.column_stack([ring, np.full(nu, -half)])
    v = np.vstack([top, bot, [[0, 0, half], [0, 0, -half]]])
    faces = []
    for j in range(nu):
        k = (j + 1) % nu
        faces += [(j, nu + j, k), (k, nu + j, nu + k), (2 * nu, j, k),
                  (2 * nu + 1, nu + k, nu + j)]
    return v, np.array(faces, dtype=np.int64)


def _box(half):
    """Box with half-sizes `half`: 24 vertices (flat faces), 12 triangles."""
    v, f = [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u, w = [a for a in range(3) if a != axis]
            base = len(v)
            for su, sw in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis], p[u], p[w] = sign * half[axis], su * half[u], sw * half[w]
                v.append(p)
            f += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    return np.array(v), np.array(f, dtype=np.int64)


def _plane(hx, hy, cell):
    """Checkered plane z = 0: vertices, faces and a per-face flag (1 on dark cells)."""
    nx = max(1, int(round(2 * hx / cell)))
    ny = max(1, int(round(2 * hy / cell)))
    x = np.linspace(-hx, hx, nx + 1)
    y = np.linspace(-hy, hy, ny + 1)
    v, f, dark = [], [], []
    for i in range(nx):
        for j in range(ny):
            base = len(v)
            v += [(x[i], y[j], 0), (x[i + 1], y[j], 0), (x[i + 1], y[j + 1], 0),
                  (x[i], y[j + 1], 0)]
            f += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
            dark += [(i + j) % 2] * 2
    return np.array(v, dtype=float), np.array(f, dtype=np.int64), np.array(dark)


def hfield_mesh(m, h):
    """Surface triangles of height field h in its geom's frame: (vertices, faces).

    Vertex r · ncol + c is grid point (c, r) at its elevation; each cell is split along its
    diagonal from (c, r) to (c + 1, r + 1), as the collision prisms and rays split it.
    """
    nrow, ncol = int(m.hfield_nrow[h]), int(m.hfield_ncol[h])
    size = m.hfield_size[h]
    adr = int(m.hfield_adr[h])
    x = np.linspace(-size[0], size[0], ncol)
    y = np.linspace(-size[1], size[1], nrow)
    z = np.asarray(m.hfield_data[adr:adr + nrow * ncol], dtype=float) * size[2]
    v = np.column_stack([np.tile(x, nrow), np.repeat(y, ncol), z])
    c, r = np.meshgrid(np.arange(ncol - 1), np.arange(nrow - 1))
    a = (r * ncol + c).ravel()
    f = np.concatenate([np.column_stack([a, a + 1, a + ncol + 1]),
                        np.column_stack([a, a + ncol + 1, a + ncol])])
    return v, f.astype(np.int64)


def geom_color(m, g):
    """The rgba a geom is drawn with (MuJoCo's setMaterial, in single precision).

    Its material's, unless its own rgba is not the default (0.5, 0.5, 0.5, 1) or it has no
    material.
    """
    rgba = np.asarray(m.geom_rgba[g], dtype=float)
    mat = int(m.geom_matid[g])
    if mat >= 0 and np.all(rgba.astype(np.float32) == np.float32([0.5, 0.5, 0.5, 1.0])):
        return np.asarray(m.mat_rgba[mat], dtype=float)
    return rgba


def geom_mesh(m, g):
    """Triangle mesh of geom g in its own frame.

    Returns:
        (vertices (n, 3), faces (k, 3) int, face colors (k, 4) rgba), or None for a geom
        that is not drawn (fully transparent).
    """
    t, size, rgba = int(m.geom_type[g]), m.geom_size[g], geom_color(m, g)
    if rgba[3] <= 0:
        return None
    shade = None
    if t == GEOM_SPHERE:
        v, f = grid_sphere()
        v = v * size[0]
    elif t == GEOM_ELLIPSOID:
        v, f = grid_sphere()
        v = v * size[:3]
    elif t == GEOM_CAPSULE:
        v, f = _capsule(size[0], size[1])
    elif t == GEOM_CYLINDER:
        v, f = cylinder(size[0], size[1])
    elif t == GEOM_BOX:
        v, f = _box(size[:3])
    elif t == GEOM_PLANE:
        hx = size[0] if size[0] > 0 else INFINITE_PLANE_HALF
        hy = size[1] if size[1] > 0 else INFINITE_PLANE_HALF
        cell = size[2] * 10 if size[2] > 0 else 0.5
        cell = min(max(cell, 2 * max(hx, hy) / 60), 2 * max(hx, hy))
        v, f, dark = _plane(hx, hy, cell)
        shade = np.where(dark == 1, CHECKER, 1.0)
    elif t == GEOM_HFIELD:
        v, f = hfield_mesh(m, int(m.geom_dataid[g]))
    elif t == GEOM_MESH:
        k = int(m.geom_dataid[g])
        va, vn = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
        fa, fn = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
        v = np.array(m.mesh_vert[va:va + vn], dtype=float)
        f = np.array(m.mesh_face[fa:fa + fn], dtype=np.int64)
    else:
        return None
    colors = np.tile(np.asarray(rgba, dtype=float), (len(f), 1))
    if shade is not None:
        colors[:, :3] *= shade[:, None]
    return np.asarray(v, dtype=float), f, colors


class Scene:
    """All drawn geoms of a model as one triangle soup, posed per frame.

    Attributes:
        vert: (n, 3) vertices, each in its geom's frame.
        vert_geom: (n,) geom id of each vertex.
        face: (k, 3) vertex indices.
        face_rgba: (k, 4) colors.
        geoms: ids of the drawn geoms, in order.
        extent: size of the model at qpos0 (m), for the default camera distance.
    """

    def __init__(self, m):
        verts, vg, faces, colors, geoms = [], [], [], [], []
        n = 0
        for g in range(m.ngeom):
            mesh = geom_mesh(m, g)
            if mesh is None:
                continue
            v, f, c = mesh
            verts.append(v)
            vg.append(np.full(len(v), g))
            faces.append(f + n)
            colors.append(c)
            geoms.append(g)
            n += len(v)
        self.vert = np.vstack(verts) if verts else np.zeros((0, 3))
        self.vert_geom = np.concatenate(vg) if vg else np.zeros(0, dtype=np.int64)
        self.face = np.vstack(faces) if faces else np.zeros((0, 3), dtype=np.int64)
        self.face_rgba = np.vstack(colors) if colors else np.zeros((0, 4))
        self.geoms = geoms
        self.extent = model_extent(m)

    def world_vertices(self, d):
        """(n, 3) vertices in world coordinates at d's geom poses (kinematics must have run)."""
        R = d.geom_xmat.reshape(-1, 3, 3)[self.vert_geom]
        return np.einsum("nij,nj->ni", R, self.vert) + d.geom_xpos[self.vert_geom]


def model_extent(m):
    """Size of a model (m): radius of a sphere around its non-plane geoms at qpos0 (≥ 0.2)."""
    from jointspace.kinematics import kinematics
    from jointspace.types import make_data

    d = make_data(m)
    kinematics(m, d)
    keep = [g for g in range(m.ngeom) if m.geom_type[g] != GEOM_PLANE]
    if not keep:
        return 1.0
    p = d.geom_xpos[keep]
    r = m.geom_rbound[keep]
    c = 0.5 * (np.min(p - r[:, None], 0) + np.max(p + r[:, None], 0))
    return max(0.2, float(np.max(np.linalg.norm(p - c, axis=1) + r)))
