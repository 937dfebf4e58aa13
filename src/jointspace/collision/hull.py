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

    Adjacency and the coplanarity tests are vectorized, so meshes of 100k triangles take
    well under a second; only triangles that actually merge go through the union-find.

    Args:
        vertices: (k, 3) hull vertices.
        triangles: (h, 3) outward-oriented (counter-clockwise seen from outside) triangles.

    Returns:
        (loops, normals): a list of vertex-index arrays, each a polygon boundary in
        counter-clockwise order about its outward normal, and an (npoly, 3) array of those
        unit normals.
    """
    v = np.asarray(vertices, dtype=np.float64)
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    nt = len(t)
    cr = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    area2 = np.linalg.norm(cr, axis=1)
    n = cr / area2[:, None]
    scale = max(float(np.max(np.abs(v))), 1e-300)
    # directed edges (a -> b) of each triangle; the neighbour across an edge owns (b -> a)
    a = t.reshape(-1)
    b = t[:, [1, 2, 0]].reshape(-1)
    face = np.repeat(np.arange(nt), 3)
    nv = int(v.shape[0])
    key = a * nv + b
    rkey = b * nv + a
    order = np.argsort(key)
    pos = np.searchsorted(key[order], rkey)
    pos = np.minimum(pos, len(key) - 1)
    found = key[order[pos]] == rkey
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
    parent = list(range(nt))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for x, y in zip(f[merge].tolist(), g[merge].tolist()):
        parent[root(x)] = root(y)
    roots = np.array([root(i) for i in range(nt)], dtype=np.int64)
    # groups in order of their first face, each listing its faces in increasing order
    order = np.argsort(roots, kind="stable")
    bounds = np.flatnonzero(np.diff(roots[order])) + 1
    groups = np.split(order, bounds) if nt else []
    groups.sort(key=lambda faces: faces[0])
    # single triangles (most faces of a curved mesh), in bulk: loop starts at its smallest
    # vertex index, normal = area-weighted normal normalized (as for merged groups)
    w = n * (0.5 * area2)[:, None]
    single_normal = w / np.linalg.norm(w, axis=1, keepdims=True)
    k = np.argmin(t, axis=1)
    single_loop = t[np.arange(nt)[:, None], (k[:, None] + np.arange(3)) % 3].astype(np.int32)
    loops, normals = [], []
    for faces in groups:
        if len(faces) == 1:
            fc = int(faces[0])
            normals.append(single_normal[fc])
            loops.append(single_loop[fc])
            continue
        inner = set()
        for fc in faces:
            tri = t[fc]
            for p0, p1 in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
                inner.add((int(p0), int(p1)))
        edges = {p0: p1 for p0, p1 in inner if (p1, p0) not in inner}
        start = min(edges)
        loop = [start]
        nxt = edges[start]
        while nxt != start and len(loop) <= len(edges):
            loop.append(nxt)
            nxt = edges[nxt]
        normal = np.sum(n[faces] * (0.5 * area2[faces])[:, None], axis=0)
        normals.append(normal / np.linalg.norm(normal))
        loops.append(np.asarray(_drop_collinear(v, loop, normals[-1]), dtype=np.int32))
    return loops, np.asarray(normals, dtype=np.float64).reshape(-1, 3)


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
    vert_adr, vert_num, poly_adr, poly_num = [], [], [], []
    verts, p_adr, p_num, p_normal, p_vert = [], [], [], [], []
    nvert = npoly = npv = 0
    for pm in meshes:
        hv = np.asarray(pm.hull_vertices, dtype=np.float64).reshape(-1, 3)
        loops, normals = hull_polygons(hv, pm.hull_faces) if len(hv) else ([], [])
        vert_adr.append(nvert)
        vert_num.append(len(hv))
        poly_adr.append(npoly)
        poly_num.append(len(loops))
        verts.append(hv)
        for loop, nrm in zip(loops, normals):
            p_adr.append(npv)
            p_num.append(len(loop))
            p_normal.append(nrm)
            p_vert.append(loop)
            npv += len(loop)
        nvert += len(hv)
        npoly += len(loops)
    return {
        "mesh_hullvertadr": np.asarray(vert_adr, dtype=np.int32),
        "mesh_hullvertnum": np.asarray(vert_num, dtype=np.int32),
        "mesh_hullpolyadr": np.asarray(poly_adr, dtype=np.int32),
        "mesh_hullpolynum": np.asarray(poly_num, dtype=np.int32),
        "hull_vert": np.concatenate(verts) if verts else np.zeros((0, 3)),
        "hullpoly_vertadr": np.asarray(p_adr, dtype=np.int32),
        "hullpoly_vertnum": np.asarray(p_num, dtype=np.int32),
        "hullpoly_normal": np.asarray(p_normal, dtype=np.float64).reshape(-1, 3),
        "hullpoly_vert": (np.concatenate(p_vert).astype(np.int32) if p_vert
                          else np.zeros(0, dtype=np.int32)),
    }


def default_nconmax(ngeom):
    """Default contact capacity: max(100, 8 · ngeom)."""
    return max(100, 8 * int(ngeom))
