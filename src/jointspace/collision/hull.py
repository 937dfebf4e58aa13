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
    v = np.asarray(vertices, dtype=np.float64)
    t = np.asarray(triangles, dtype=np.int64)
    n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    scale = max(float(np.max(np.abs(v))), 1e-300)
    owner = {}
    for f, tri in enumerate(t):
        for a, b in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
            owner[(int(a), int(b))] = f
    # union of coplanar neighbours
    parent = list(range(len(t)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for f, tri in enumerate(t):
        for a, b in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
            g = owner.get((int(b), int(a)))
            if g is None or g == f:
                continue
            if (np.dot(n[f], n[g]) > 1.0 - _NORMAL_TOL
                    and np.all(np.abs((v[t[g]] - v[t[f, 0]]) @ n[f]) < _PLANE_TOL * scale)):
                parent[root(f)] = root(g)
    groups = {}
    for f in range(len(t)):
        groups.setdefault(root(f), []).append(f)
    loops, normals = [], []
    for faces in groups.values():
        # boundary edges: directed edges of the group whose reverse is not in the group
        edges = {}
        inner = set()
        for f in faces:
            tri = t[f]
            for a, b in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
                inner.add((int(a), int(b)))
        for a, b in inner:
            if (b, a) not in inner:
                edges[a] = b
        start = min(edges)
        loop = [start]
        nxt = edges[start]
        while nxt != start and len(loop) <= len(edges):
            loop.append(nxt)
            nxt = edges[nxt]
        normal = np.sum(n[faces] * _areas(v, t[faces])[:, None], axis=0)
        normals.append(normal / np.linalg.norm(normal))
        loops.append(np.asarray(_drop_collinear(v, loop, normals[-1]), dtype=np.int32))
    return loops, np.asarray(normals, dtype=np.float64).reshape(-1, 3)


def _areas(v, t):
    return 0.5 * np.linalg.norm(np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]]),
                                axis=1)


def _drop_collinear(v, loop, normal):
    """Remove loop vertices that lie on the straight edge between their neighbours."""
    if len(loop) <= 3:
        return loop
    out = []
    m = len(loop)
    for i in range(m):
        a, b, c = v[loop[i - 1]], v[loop[i]], v[loop[(i + 1) % m]]
        e1, e2 = b - a, c - b
        turn = np.dot(np.cross(e1, e2), normal)
        if turn > 1e-12 * max(np.dot(e1, e1), np.dot(e2, e2)):
            out.append(loop[i])
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
        loops, normals = hull_polygons(hv, pm.hull_faces)
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
