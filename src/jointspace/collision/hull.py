"""Convex-hull tables of meshes for collision: hull vertices and hull polygons.

A mesh geom collides as its convex hull. `jointspace.io.mesh.process_mesh` gives the hull as
triangles; here coplanar neighbouring triangles are merged into polygons (a box mesh has 6
quadrilateral faces, not 12 triangles), because the multi-point contacts between flat faces
clip one face polygon against another.
"""

import numpy as np

# two hull triangles lie in one face when their unit normals differ by less than this and
# each one's vertices are within _PLANE_TOL · (mesh size) of the other's plane
_NORMAL_TOL = 1e-6
_PLANE_TOL = 1e-7


def hull_polygons(vertices, triangles):
    """Merge coplanar, edge-adjacent hull triangles into convex polygons.

    Args:
        vertices: (k, 3) hull vertices.
        triangles: (h, 3) outward-oriented (counter-clockwise seen from outside) triangles.

    Returns:
        (loops, normals): a list of vertex-index arrays, each a polygon boundary in
        counter-clockwise order about its outward normal, and an (npoly, 3) array of those
        unit normals.
    """
    vert, num, normals = _polygon_tables(vertices, triangles)
    return np.split(vert, np.cumsum(num)[:-1]) if len(num) else [], normals


def _polygon_tables(vertices, triangles):
    """The polygons of `hull_polygons` as flat tables: (vertices, vertex counts, normals).

    Adjacency, the coplanarity tests and the single triangles (most faces of a curved mesh)
    are vectorized, so meshes of 100k triangles take well under a second; only triangles
    that actually merge go through the union-find and the boundary walk. Polygons are
    ordered by their smallest triangle; a single triangle's loop starts at its smallest
    vertex index, and every normal is the area-weighted normal, normalized.
    """
    v = np.asarray(vertices, dtype=np.float64)
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    nt = len(t)
    cr = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    area2 = np.linalg.norm(cr, axis=1)
    n = cr / area2[:, None]
    scale = max(float(np.max(np.abs(v))), 1e-300) if len(v) else 1.0
    # directed edges (a -> b) of each triangle; the neighbour across an edge owns (b -> a)
    a = t.reshape(-1)
    b = t[:, [1, 2, 0]].reshape(-1)
    face = np.repeat(np.arange(nt), 3)
    nv = int(v.shape[0])
    key = a * nv + b
    rkey = b * nv + a
    order = np.argsort(key)
    pos = np.searchsorted(key[order], rkey)
    pos = np.minimum(pos, max(len(key) - 1, 0))
    found = key[order[pos]] == rkey if nt else np.zeros(0, dtype=bool)
    f = face[found]
    g = face[order[pos[found]]]
    keep = (f < g)  # each adjacent pair once
    f, g = f[keep], g[keep]
    same = np.einsum("ij,ij->i", n[f], n[g]) > 1.0 - _NORMAL_TOL
    f, g = f[same], g[same]
    # each vertex of g within the plane of f
    off = np.abs(np.einsum("ikj,ij->ik", v[t[g]] - v[t[f, 0]][:, None, :], n[f]))
    ok = np.all(off < _PLANE_TOL * scale, axis=1)
    # and each vertex of f within the plane of g (the test is applied from both sides)
    off2 = np.abs(np.einsum("ikj,ij->ik", v[t[f]] - v[t[g, 0]][:, None, :], n[g]))
    ok2 = np.all(off2 < _PLANE_TOL * scale, axis=1)
    merge = ok | ok2  # the plane test from either side suffices
    parent = {}

    def root(i):
        while parent.get(i, i) != i:
            parent[i] = parent.get(parent[i], parent[i])
            i = parent[i]
        return i

    members = set()
    for x, y in zip(f[merge].tolist(), g[merge].tolist()):
        members.update((x, y))
        rx, ry = root(x), root(y)
        if rx != ry:
            parent[rx] = ry
    # the merged groups, each as its sorted faces, keyed by its smallest face
    groups = {}
    for fc in sorted(members):
        groups.setdefault(root(fc), []).append(fc)
    multi = {faces[0]: faces for faces in groups.values()}
    in_group = np.zeros(nt, dtype=bool)
    in_group[list(members)] = True
    first = np.flatnonzero(~in_group)
    first = np.sort(np.concatenate([first, np.fromiter(multi, dtype=np.int64,
                                                        count=len(multi))]))
    w = n * (0.5 * area2)[:, None]
    normals = w[first]
    num = np.full(len(first), 3, dtype=np.int64)
    k = np.argmin(t[first], axis=1)
    single = t[first[:, None], (k[:, None] + np.arange(3)) % 3]
    loops = {}
    for p, fc in enumerate(first.tolist()):
        faces = multi.get(fc)
        if faces is None:
            continue
        inner = set()
        for tri in t[faces].tolist():
            inner.update(((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])))
        edges = {p0: p1 for p0, p1 in inner if (p1, p0) not in inner}
        start = min(edges)
        loop = [start]
        nxt = edges[start]
        while nxt != start and len(loop) <= len(edges):
            loop.append(nxt)
            nxt = edges[nxt]
        normal = np.sum(w[faces], axis=0)
        normals[p] = normal
        loops[p] = _drop_collinear(v, loop, normal / np.linalg.norm(normal))
        num[p] = len(loops[p])
    normals = normals / np.linalg.norm(normals, axis=1, keepdims=True) if len(first) else \
        np.zeros((0, 3))
    adr = np.concatenate([[0], np.cumsum(num)[:-1]]).astype(np.int64)
    vert = np.empty(int(num.sum()), dtype=np.int32)
    is_multi = np.zeros(len(first), dtype=bool)
    is_multi[list(loops)] = True
    singles = np.flatnonzero(~is_multi)
    vert[(adr[singles, None] + np.arange(3)).ravel()] = single[singles].ravel()
    for p, loop in loops.items():
        vert[adr[p]:adr[p] + num[p]] = loop
    return vert, num.astype(np.int32), normals


def _drop_collinear(v, loop, normal):
    """Remove loop vertices that lie on the straight edge between their neighbours."""
    if len(loop) <= 3:
        return loop
    p = v[np.asarray(loop)]
    e1 = p - np.roll(p, 1, axis=0)
    e2 = np.roll(p, -1, axis=0) - p
    turn = np.cross(e1, e2) @ normal
    keep = turn > 1e-12 * np.maximum(np.einsum("ij,ij->i", e1, e1), np.einsum("ij,ij->i", e2, e2))
    out = [loop[i] for i in np.flatnonzero(keep)]
    return out if len(out) >= 3 else loop


def hull_arrays(meshes):
    """Model arrays of the hull tables for a list of `ProcessedMesh` objects.

    Returns:
        dict with mesh_hullvertadr/num, mesh_hullpolyadr/num, hull_vert, hullpoly_vertadr,
        hullpoly_vertnum, hullpoly_normal and hullpoly_vert.
    """
    vert_num, poly_num, verts, p_num, p_normal, p_vert = [], [], [], [], [], []
    for pm in meshes:
        hv = np.asarray(pm.hull_vertices, dtype=np.float64).reshape(-1, 3)
        pv, pn, nrm = _polygon_tables(hv, pm.hull_faces) if len(hv) else (
            np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros((0, 3)))
        vert_num.append(len(hv))
        poly_num.append(len(pn))
        verts.append(hv)
        p_num.append(pn)
        p_normal.append(nrm)
        p_vert.append(pv)

    def adr(num):
        return np.concatenate([[0], np.cumsum(num)[:-1]]).astype(np.int32) if len(num) else \
            np.zeros(0, dtype=np.int32)

    p_num = np.concatenate(p_num).astype(np.int32) if p_num else np.zeros(0, dtype=np.int32)
    return {
        "mesh_hullvertadr": adr(vert_num),
        "mesh_hullvertnum": np.asarray(vert_num, dtype=np.int32),
        "mesh_hullpolyadr": adr(poly_num),
        "mesh_hullpolynum": np.asarray(poly_num, dtype=np.int32),
        "hull_vert": np.concatenate(verts) if verts else np.zeros((0, 3)),
        "hullpoly_vertadr": adr(p_num),
        "hullpoly_vertnum": p_num,
        "hullpoly_normal": (np.concatenate(p_normal) if p_normal else np.zeros((0, 3))),
        "hullpoly_vert": (np.concatenate(p_vert).astype(np.int32) if p_vert
                          else np.zeros(0, dtype=np.int32)),
    }


def default_nconmax(ngeom):
    """Default contact capacity: max(100, 8 · ngeom)."""
    return max(100, 8 * int(ngeom))
