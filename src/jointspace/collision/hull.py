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
    # merged groups: connected components of the merge graph; each group's faces in
    # increasing order, the groups keyed by their smallest face
    # scipy.sparse is imported here, not with the module: it is 0.2 s of every
    # `import jointspace`, and only models with meshes come here
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(int(merge.sum())), (f[merge], g[merge])), shape=(nt, nt))
    labels = connected_components(graph, directed=False)[1]
    size = np.bincount(labels, minlength=nt)[labels] if nt else np.zeros(0, dtype=np.int64)
    grouped = np.flatnonzero(size > 1)
    grouped = grouped[np.lexsort((grouped, labels[grouped]))]
    starts = np.flatnonzero(np.r_[True, labels[grouped[1:]] != labels[grouped[:-1]]]) \
        if len(grouped) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(grouped)].astype(np.int64)
    group_first = grouped[starts]
    first = np.sort(np.concatenate([np.flatnonzero(size <= 1), group_first]))
    w = n * (0.5 * area2)[:, None]
    normals = w[first]
    num = np.full(len(first), 3, dtype=np.int64)
    k = np.argmin(t[first], axis=1)
    single = t[first[:, None], (k[:, None] + np.arange(3)) % 3]
    group_pos = np.searchsorted(first, group_first)
    two = ends - starts == 2
    loops = _quads(v, t, w, group_pos[two], grouped[starts[two]], grouped[starts[two] + 1],
                   normals)
    for p, a, b in zip(group_pos.tolist(), starts.tolist(), ends.tolist()):
        if p in loops:
            continue
        faces = grouped[a:b]
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
    normals = normals / np.linalg.norm(normals, axis=1, keepdims=True) if len(first) else \
        np.zeros((0, 3))
    for p, loop in loops.items():
        num[p] = len(loop)
    adr = np.concatenate([[0], np.cumsum(num)[:-1]]).astype(np.int64)
    vert = np.empty(int(num.sum()), dtype=np.int32)
    is_multi = np.zeros(len(first), dtype=bool)
    is_multi[list(loops)] = True
    singles = np.flatnonzero(~is_multi)
    vert[(adr[singles, None] + np.arange(3)).ravel()] = single[singles].ravel()
    for p, loop in loops.items():
        vert[adr[p]:adr[p] + num[p]] = loop
    return vert, num.astype(np.int32), normals


def _quads(v, t, w, p_idx, fa, fb, normals):
    """The polygons of the two-triangle groups, in bulk: {polygon index: loop}.

    Polygon p_idx[k] is the group of triangles fa[k] < fb[k]. Triangle A = (a0, a1, a2) and
    its neighbour B across A's edge a_i → a_(i+1), with o the
    vertex of B off that edge, bound the quad a_i → o → a_(i+1) → a_(i+2), started at its
    smallest vertex as the boundary walk does. A quad with a vertex on the straight edge
    between its neighbours is left out (the general path drops that vertex). Sets the
    quads' normals (unnormalized: A's and B's area-weighted normals summed).
    """
    if not len(p_idx):
        return {}
    A, B = t[fa], t[fb]
    # i: A's edge a_i -> a_(i+1) whose reverse is an edge of B
    i = np.full(len(A), -1)
    for k in range(3):
        x, y = A[:, k], A[:, (k + 1) % 3]
        shared = np.zeros(len(A), dtype=bool)
        for m in range(3):
            shared |= (B[:, m] == y) & (B[:, (m + 1) % 3] == x)
        i = np.where((i < 0) & shared, k, i)
    rows = np.arange(len(A))
    ai, ai1, ai2 = A[rows, i % 3], A[rows, (i + 1) % 3], A[rows, (i + 2) % 3]
    o = B.sum(axis=1) - ai - ai1
    quad = np.stack([ai, o, ai1, ai2], axis=1)
    start = np.argmin(quad, axis=1)
    quad = quad[rows[:, None], (start[:, None] + np.arange(4)) % 4]
    normal = w[fa] + w[fb]
    unit = normal / np.linalg.norm(normal, axis=1, keepdims=True)
    # the collinearity test of _drop_collinear on every corner
    pts = v[quad]
    e1 = pts - np.roll(pts, 1, axis=1)
    e2 = np.roll(pts, -1, axis=1) - pts
    turn = np.einsum("gkj,gj->gk", np.cross(e1, e2), unit)
    big = np.maximum(np.einsum("gkj,gkj->gk", e1, e1), np.einsum("gkj,gkj->gk", e2, e2))
    ok = (i >= 0) & np.all(turn > 1e-12 * big, axis=1)
    normals[p_idx[ok]] = normal[ok]
    return dict(zip(p_idx[ok].tolist(), quad[ok].astype(np.int32)))


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
        dict with mesh_hullvertadr/num, mesh_hullpolyadr/num, mesh_hullgraphadr, hull_vert,
        hullpoly_vertadr, hullpoly_vertnum, hullpoly_normal, hullpoly_vert and hull_graph.
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

    graphs = [hull_graph(hv, pv, pn) for hv, pv, pn in zip(verts, p_vert, p_num)]
    g_num = [len(g) for g in graphs]
    g_adr = np.where(np.asarray(g_num, dtype=np.int32) > 0, adr(g_num), -1).astype(np.int32)
    p_num = np.concatenate(p_num).astype(np.int32) if p_num else np.zeros(0, dtype=np.int32)
    return {
        "mesh_hullgraphadr": g_adr,
        "hull_graph": (np.concatenate(graphs).astype(np.int32) if graphs
                       else np.zeros(0, dtype=np.int32)),
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


# hull graphs are built for meshes of at least this many hull vertices; smaller hulls are
# searched vertex by vertex (as fast, and MuJoCo's own threshold is 10)
GRAPH_MIN_VERT = 16
# the seed grid: a direction component beyond ±GRID_CUT picks the ±1 cell on that axis
GRID_CUT = 0.4
# cell 9 cx + 3 cy + cz's direction (cx − 1, cy − 1, cz − 1)
_GRID_DIRECTIONS = np.array([[cx - 1, cy - 1, cz - 1] for cx in range(3) for cy in range(3)
                             for cz in range(3)], dtype=np.float64)


def hull_graph(vert, loops, counts):
    """The hull's graph for hill-climbing support searches and face lookups (int32 block).

    Layout, all offsets relative to the block's start, vertex and polygon indices relative
    to the mesh's first hull vertex and polygon:

    - [0, 27): the seed vertex of each cell of the direction grid: cell 9 cx + 3 cy + cz,
      c = 1 + (u > GRID_CUT) − (u < −GRID_CUT) for the direction's components u; the seed is
      the vertex farthest along the cell's direction (the first of equals);
    - [27, 27 + n): where vertex i's neighbour list starts (the vertices it shares a polygon
      edge with), each list ending with −1;
    - [27 + n, 27 + 2n): where vertex i's polygon list starts (the polygons it is a corner
      of, in polygon order), each list ending with −1;
    - the neighbour lists, then the polygon lists.

    Empty for hulls of fewer than GRAPH_MIN_VERT vertices.
    """
    n = len(vert)
    if n < GRAPH_MIN_VERT:
        return np.zeros(0, dtype=np.int32)
    counts = np.asarray(counts, dtype=np.int64)
    a = np.asarray(loops, dtype=np.int64)[:int(counts.sum())]
    # each loop corner's polygon and its successor around the loop
    poly = np.repeat(np.arange(len(counts)), counts)
    ends = np.cumsum(counts)[counts > 0]
    succ = np.arange(len(a)) + 1
    succ[ends - 1] = ends - counts[counts > 0]  # the last corner's successor: the first
    b = a[succ]
    # neighbours: both directions of every edge, once each, sorted by (vertex, neighbour)
    pairs = np.sort(np.concatenate([a * n + b, b * n + a]))
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs
    nbr_of, nbr = pairs // n, pairs % n
    # polygons: (vertex, polygon) per corner, polygons in increasing order per vertex
    npoly = max(len(counts), 1)
    corners = np.sort(a * npoly + poly)
    poly_of, polys = corners // npoly, corners % npoly
    # seeds: the first vertex of largest u0 x + u1 y + u2 z (the kernels' order) per cell
    v = np.asarray(vert, dtype=np.float64)
    along = (v[:, :1] * _GRID_DIRECTIONS[:, 0] + v[:, 1:2] * _GRID_DIRECTIONS[:, 1]
             + v[:, 2:3] * _GRID_DIRECTIONS[:, 2])
    seeds = np.argmax(along, axis=0)
    nbr_adr, nbr_body = _lists(nbr_of, nbr, n)
    poly_adr, poly_body = _lists(poly_of, polys, n)
    head = 27 + 2 * n
    return np.concatenate([seeds, head + nbr_adr, head + len(nbr_body) + poly_adr, nbr_body,
                           poly_body]).astype(np.int32)


def _lists(owner, items, n):
    """Per-owner lists of items, each ended by −1: (start of owner i's list, the lists).

    owner: (m,) in 0..n−1, nondecreasing; items: (m,) the entries in list order.
    """
    num = np.bincount(owner, minlength=n)
    adr = np.cumsum(num + 1) - (num + 1)  # each list and its −1
    body = np.full(len(items) + n, -1, dtype=np.int64)
    rank = np.arange(len(items)) - (np.cumsum(num) - num)[owner]
    body[adr[owner] + rank] = items
    return adr, body


def default_nconmax(ngeom):
    """Default contact capacity: max(100, 8 · ngeom)."""
    return max(100, 8 * int(ngeom))
