"""Convex-hull tables of meshes for collision: hull vertices and hull polygons.

A mesh geom collides as its convex hull. `jointspace.io.mesh.process_mesh` gives the hull as
triangles; here coplanar neighbouring triangles are merged into polygons (a box mesh has 6
quadrilateral faces, not 12 triangles), because the multi-point contacts between flat faces
clip one face polygon against another.
"""

import numpy as np

# hull triangles whose unit normals fall in one cell of a grid of azimuth and polar angle of
# this spacing (rad) form one polygon where they share edges, as MuJoCo's compiler groups
# them (mjCMesh::MakePolygons); the angles are those of the mesh's original frame
ANGLE_CELL = 0.01


def hull_polygons(vertices, triangles, rotation=None):
    """Group hull triangles into polygons as MuJoCo's compiler does.

    Args:
        vertices: (k, 3) hull vertices.
        triangles: (h, 3) outward-oriented (counter-clockwise seen from outside) triangles.
        rotation: (3, 3) rotation from the vertices' frame to the mesh's original frame,
            where the normals' angles are binned (None: the identity).

    Returns:
        (loops, normals): a list of vertex-index arrays, each a polygon boundary in
        counter-clockwise order about its outward normal, and an (npoly, 3) array of those
        unit normals.
    """
    vert, num, normals = _polygon_tables(vertices, triangles, rotation)
    return np.split(vert, np.cumsum(num)[:-1]) if len(num) else [], normals


def _angle_cells(v, t, rotation):
    """Each triangle's normal-angle cell (azimuth, polar) as two integers; valid mask.

    The normal is the unit cross product of its edges from the first vertex, in the
    original frame; within 1e-7 of ±z it is the pole's cell (0, 0) or (0, round(π / cell)).
    A degenerate triangle (normal below 1e-15) joins no polygon.
    """
    cr = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    if rotation is not None:
        cr = cr @ np.asarray(rotation, dtype=np.float64).T
    norm = np.sqrt(np.einsum("ij,ij->i", cr, cr))
    ok = norm >= 1e-15
    n = cr / np.where(ok, norm, 1.0)[:, None] + 0.0
    pole = np.abs(n[:, 2]) > 1.0 - 1e-7
    az = np.where(pole, 0.0, _round(np.arctan2(n[:, 1], n[:, 0]) / ANGLE_CELL))
    polar = np.where(pole, np.where(n[:, 2] < 0, _round(np.pi / ANGLE_CELL), 0.0),
                     _round(np.arccos(np.clip(n[:, 2], -1.0, 1.0)) / ANGLE_CELL))
    return az.astype(np.int64), polar.astype(np.int64), ok


def _round(x):
    """C's round: halves away from zero (NumPy's round takes them to even)."""
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _cell_hashes(az, polar):
    """libc++'s hash of each cell (azimuth, polar), as MuJoCo's compiler hashes its keys.

    A double hashes to its bit pattern (±0 to 0); the pair combines as boost's
    hash_combine, h1 ^ (h2 + 0x9e3779b9 + (h1 << 6) + (h1 >> 2)), modulo 2⁶⁴.
    """
    def bits(x):
        x = np.asarray(x, dtype=np.float64)
        return np.where(x == 0.0, np.uint64(0), x.view(np.uint64))

    h1, h2 = bits(az), bits(polar)
    with np.errstate(over="ignore"):
        return h1 ^ (h2 + np.uint64(0x9E3779B9) + (h1 << np.uint64(6)) + (h1 >> np.uint64(2)))


def _is_prime(n):
    if n < 2 or n % 2 == 0:
        return n == 2
    i = 3
    while i * i <= n:
        if n % i == 0:
            return False
        i += 2
    return True


def _map_order(hashes):
    """The order MuJoCo's compiler visits its polygons' cells: indices into `hashes`.

    hashes: the distinct cells' hashes (`_cell_hashes`) in the order the cells are first
    inserted (the order of their first hull triangles).

    MuJoCo's compiler collects hull triangles by cell in a C++ unordered_map keyed by the
    pair (azimuth, polar) of doubles and emits the polygons by walking the map. Its Linux
    build links libc++, whose map is a singly linked list threaded through prime-counted
    buckets; the walk order follows from the keys' hashes (each double's bit pattern,
    combined as boost's hash_combine) and the insertion order. This replays libc++'s
    insertion (a new key goes after its bucket's predecessor node, or to the front when
    its bucket is empty) and its rehash (growth to the next prime of 2n + 1 when the load
    would pass 1, keeping each bucket's nodes together). Checked against MuJoCo 4.0's
    mesh_polyvert on random hulls (tests/test_mesh.py).
    """
    code = [int(h) for h in hashes]
    after = {None: None}  # the list: node -> next node, None the before-begin node
    bucket = []  # bucket -> the node before its first node
    nb = 0

    def place(h):
        return h & (nb - 1) if not nb & (nb - 1) else h % nb

    for cell, h in enumerate(code):
        if cell + 1 > nb:
            grow = max(2 * nb + (not (nb > 2 and not nb & (nb - 1))), cell + 1)
            if grow == 1:
                grow = 2
            elif grow & (grow - 1):
                while not _is_prime(grow):
                    grow += 1
            nb = grow
            bucket = [-1] * nb  # -1: empty (None is the before-begin node)
            prev, node = None, after[None]
            if node is not None:
                last = place(code[node])
                bucket[last] = None
                prev, node = node, after[node]
                while node is not None:
                    b = place(code[node])
                    if b == last:
                        prev = node
                    elif bucket[b] == -1:
                        bucket[b] = prev
                        prev, last = node, b
                    else:
                        after[prev] = after[node]
                        after[node] = after[bucket[b]]
                        after[bucket[b]] = node
                    node = after[prev]
        b = place(h)
        if bucket[b] == -1:
            after[cell] = after[None]
            after[None] = cell
            bucket[b] = None
            if after[cell] is not None:
                bucket[place(code[after[cell]])] = cell
        else:
            after[cell] = after[bucket[b]]
            after[bucket[b]] = cell
    out = []
    node = after[None]
    while node is not None:
        out.append(node)
        node = after[node]
    return out


def _group_loops(faces):
    """Boundary loops of one cell's triangles, joined where they share an edge.

    Triangles are inserted in order; each one that meets the group across an edge (the
    edge's reverse is a boundary edge) removes that boundary edge and adds its other
    edges; one that meets none starts an island, and one that meets two islands merges
    them. Each island's loop starts at its first remaining boundary edge and follows the
    boundary (MuJoCo's MeshPolygon). The boundary is a dict {(first, second): island} in
    insertion order, so each lookup is one probe.
    """
    edges = {}
    nisland = 0
    for v1, v2, v3 in faces:
        island = -1
        add = []
        for x, y in ((v1, v2), (v2, v3), (v3, v1)):
            other = edges.pop((y, x), None)
            if other is None:
                add.append((x, y))
                continue
            if island == -1:
                island = other
            elif other != island:
                lo, hi = min(island, other), max(island, other)
                for e, k in edges.items():
                    edges[e] = lo if k == hi else (k - 1 if k > hi else k)
                nisland -= 1
                island = lo
        if island == -1:
            island = nisland
            nisland += 1
        for e in add:
            edges[e] = island
    starts = {}
    after = {}
    for (x, y), k in edges.items():
        starts.setdefault(k, (x, y))
        after[(k, x)] = y
    loops = []
    for i in range(nisland):
        if i not in starts:
            continue
        x, y = starts[i]
        loop = [x, y]
        nxt = y
        for _ in range(len(edges)):
            nxt = after.get((i, nxt))
            if nxt is None:
                break
            if nxt == loop[0]:
                loops.append(loop)
                break
            loop.append(nxt)
    return [lp for lp in loops if len(lp) >= 3]


def _polygon_tables(vertices, triangles, rotation=None, read=None, exact=None, mirror=False):
    """The polygons of `hull_polygons` as flat tables: (vertices, vertex counts, normals).

    Triangles alone in their angle cell (most faces of a curved mesh) are polygons as they
    are; only cells of several triangles go through `_group_loops`. Polygons come in the
    order MuJoCo's compiler walks its cells (`_map_order`), each normal is Newell's normal
    of its loop, as MuJoCo 4.0 computes them. With `read` (the vertices as the file
    gives them) the angle cells are those of its normals, as MuJoCo's compiler bins them
    (else `vertices` turned by `rotation`); with `exact` (the vertices before rounding to
    float32) the normals are computed from those, as MuJoCo's are. With `mirror` (a scale
    that mirrors the mesh; `triangles` are outward after it), the triangles are grouped as
    the file's points orient them and each loop is then reversed from its first vertex.
    """
    v = np.asarray(vertices, dtype=np.float64)
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if mirror:
        t = t[:, [0, 2, 1]]
    if not len(t):
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros((0, 3))
    if read is not None:
        az, polar, ok = _angle_cells(np.asarray(read, dtype=np.float64), t, None)
    else:
        az, polar, ok = _angle_cells(v, t, rotation)
    idx = np.flatnonzero(ok)
    # the distinct cells in the order of their first triangles, and each cell's triangles
    _, first, inv = np.unique(az[idx] * 1024 + polar[idx], return_index=True,
                              return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    cell_of = rank[inv]
    # each cell's triangles: members[bounds[c]:bounds[c + 1]] (Python lists: a mesh has
    # thousands of cells, and NumPy's per-item overhead dominated)
    members = idx[np.argsort(cell_of, kind="stable")].tolist()
    bounds = [0] + np.cumsum(np.bincount(cell_of)).tolist()
    tri = t.tolist()
    at = np.sort(first)
    loops = []
    for c in _map_order(_cell_hashes(az[idx[at]], polar[idx[at]])):
        lo, hi = bounds[c], bounds[c + 1]
        if hi - lo == 1:
            loops.append(tri[members[lo]])
        else:
            loops.extend(_group_loops([tri[f] for f in members[lo:hi]]))
    if mirror:
        loops = [lp[:1] + lp[:0:-1] for lp in loops]
    num = np.array([len(lp) for lp in loops], dtype=np.int32)
    vert = np.array([i for lp in loops for i in lp], dtype=np.int32)
    w = v if exact is None else np.asarray(exact, dtype=np.float64)
    # Newell's normal, edge by edge around each loop, normalized by division (MuJoCo 4.0's
    # mesh_polynormal, measured bit for bit; for a triangle it is not the cross product's)
    start = np.concatenate([[0], np.cumsum(num)[:-1]]).astype(np.int64)
    acc = np.zeros((len(loops), 3))
    for j in range(int(num.max()) if len(num) else 0):
        on = num > j
        a = w[vert[start[on] + j]]
        b = w[vert[start[on] + (j + 1) % num[on]]]
        acc[on, 0] += (a[:, 1] - b[:, 1]) * (a[:, 2] + b[:, 2])
        acc[on, 1] += (a[:, 2] - b[:, 2]) * (a[:, 0] + b[:, 0])
        acc[on, 2] += (a[:, 0] - b[:, 0]) * (a[:, 1] + b[:, 1])
    size = np.sqrt(acc[:, 0] * acc[:, 0] + acc[:, 1] * acc[:, 1] + acc[:, 2] * acc[:, 2])
    normals = acc / size[:, None]
    return vert, num, normals


def hull_arrays(meshes):
    """Model arrays of the hull tables for a list of `ProcessedMesh` objects.

    Returns:
        dict with mesh_hullvertadr/num, mesh_hullpolyadr/num, mesh_hullgraphadr, hull_vert,
        hullpoly_vertadr, hullpoly_vertnum, hullpoly_normal, hullpoly_vert and hull_graph.
    """
    # here, not with the module: io imports the collision package
    from jointspace.io.frames import quat_to_mat

    vert_num, poly_num, verts, p_num, p_normal, p_vert = [], [], [], [], [], []
    for pm in meshes:
        hv = np.asarray(pm.hull_vertices, dtype=np.float64).reshape(-1, 3)
        pv, pn, nrm = _polygon_tables(hv, pm.hull_faces, quat_to_mat(pm.quat), pm.hull_read,
                                      pm.hull_exact, pm.hull_mirror) if len(hv) else (
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

    graphs = [hull_graph(hv, pv, pn, pm.hull_faces)
              for hv, pv, pn, pm in zip(verts, p_vert, p_num, meshes)]
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
# cell 9 cx + 3 cy + cz's direction (cx − 1, cy − 1, cz − 1)
_GRID_DIRECTIONS = np.array([[cx - 1, cy - 1, cz - 1] for cx in range(3) for cy in range(3)
                             for cz in range(3)], dtype=np.float64)


def hull_graph(vert, loops, counts, triangles):
    """The hull's graph for hill-climbing support searches and face lookups (int32 block).

    Layout, all offsets relative to the block's start, vertex and polygon indices relative
    to the mesh's first hull vertex and polygon:

    - [0, 27): the seed vertex of each cell of the direction grid: cell 9 cx + 3 cy + cz,
      c = 1 + (u > GRID_CUT) − (u < −GRID_CUT) for the direction's components u
      (collision.convex.GRID_CUT); the seed is the vertex farthest along the cell's
      direction (the first of equals);
    - [27, 27 + n): where vertex i's neighbour list starts (the vertices it shares a hull
      triangle edge with, as MuJoCo's mesh_graph: a polygon merged from triangles that are
      not quite coplanar keeps its diagonals, without which a climb can stop short), each
      list ending with −1;
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
    poly = np.repeat(np.arange(len(counts)), counts)  # each loop corner's polygon
    # the triangles' edges (each edge of a closed hull twice, once each way)
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    ea, eb = tri.ravel(), tri[:, [1, 2, 0]].ravel()
    # neighbours: both directions of every edge, once each, sorted by (vertex, neighbour)
    pairs = np.sort(np.concatenate([ea * n + eb, eb * n + ea]))
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
