"""Triangle meshes: reading STL / OBJ files and the processing MuJoCo's compiler applies to them.

`load_mesh` reads a file into (vertices, faces). `process_mesh` then does what MuJoCo's
compiler does to a mesh asset (`mjCMesh::Process`, user_mesh.cc) so that the geoms using it
get MuJoCo's pose, mass and inertia:

1. vertices are stored in single precision (MuJoCo keeps mesh vertices as float32), then
   scaled in double precision; a negative scale determinant flips the face winding;
2. a mesh given without faces uses the faces of its convex hull;
3. volume, centre of mass and inertia follow MuJoCo's default mesh inertia mode, "legacy":
   the mesh is cut into pyramids over its triangles, and every pyramid counts with its
   *absolute* volume. The centre of mass uses pyramids whose apex is the area-weighted
   centroid of the faces; volume and inertia use pyramids whose apex is that centre of mass.
   For a closed mesh that is star-shaped about these points this is the exact solid; for
   other meshes it is MuJoCo's approximation, reproduced as is;
4. the vertices are moved to the centre of mass and rotated onto the principal axes found
   by MuJoCo's Jacobi iteration (eigenvalues in decreasing order), so `pos` and `quat`
   agree with MuJoCo's `mesh_pos` / `mesh_quat`, signs of the axes included.

A geom of type mesh with frame (pos_g, quat_g) in its body is compiled by MuJoCo to
pos = pos_g + R(quat_g) · mesh.pos and quat = quat_g ⊗ mesh.quat (`mjCGeom::Compile`,
user_objects.cc); its mass is density · volume and its principal inertia density · inertia,
about the axes of that compiled frame.
"""

import math
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jointspace.errors import JointspaceWarning, ModelError
from jointspace.types import MINVAL

__all__ = ["ProcessedMesh", "load_mesh", "process_mesh", "taxel_tangents"]

SUPPORTED_EXTENSIONS = (".stl", ".obj", ".msh")

# MuJoCo's smallest meaningful value (mjMINVAL): faces, areas and volumes below it count as zero
# MuJoCo's compiler leaves a quaternion as is when its norm is within this of 1 (mjEPS)
_NORM_EPS = 1e-14
# relative tolerances of MuJoCo's Jacobi eigen-solver for 3x3 inertia matrices: the one it
# passes for meshes, and the floors on the off-diagonal stop and on the eigenvalue sort
_MESH_EIG_RELTOL = 1e-7
_EIG_OFF_RELTOL = 4e-15
_EIG_SORT_RELTOL = 1e-12
# tolerances of MuJoCo's triangle-inequality test on principal moments
_INEQ_ATOL = 1e-9
_INEQ_RTOL = 1e-6


@dataclass(frozen=True)
class ProcessedMesh:
    """A mesh in its principal inertial frame, with the transform that put it there.

    Fields (n vertices, m faces, k hull vertices, h hull faces):
        name           str          mesh name used in error messages
        source         str          where the mesh was declared, e.g. "robot.xml:12 <mesh>"
        vertices       (n, 3) f8    vertices in the inertial frame (float32 values, as
                                    MuJoCo's `mesh_vert`)
        faces          (m, 3) i4    triangles, indices into `vertices`
        volume         float        volume in the mesh's inertia mode (the area for "shell")
        inertia        (3,) f8      principal moments of inertia per unit density, decreasing
        pos            (3,) f8      origin of the inertial frame in the original mesh frame
        quat           (4,) f8      rotation (w, x, y, z) of the inertial frame in the
                                    original mesh frame
        hull_vertices  (k, 3) f8    convex-hull vertices, inertial frame (none, k = 0, for a
                                    flat surface)
        hull_faces     (h, 3) i4    outward-oriented hull triangles, indices into hull_vertices
        aabb           (2, 3) f8    axis-aligned box of the vertices, rows (min, max),
                                    inertial frame
        rbound         float        radius of the sphere about the origin that holds the
                                    box, as MuJoCo's `geom_rbound`
        hull_read      (k, 3) f8    the hull vertices as the file gives them (float32
                                    values, before refpos, refquat and scale), where MuJoCo
                                    groups hull faces into polygons by normal direction
        hull_exact     (k, 3) f8    the hull vertices in the inertial frame before rounding
                                    to float32, from which MuJoCo computes polygon normals
        hull_mirror    bool         the scale mirrors the mesh (MuJoCo groups the faces as
                                    the file's points give them, then reverses the loops)
    """

    name: str
    source: str
    vertices: np.ndarray
    faces: np.ndarray
    volume: float
    inertia: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    hull_vertices: np.ndarray
    hull_faces: np.ndarray
    aabb: np.ndarray
    rbound: float
    hull_read: np.ndarray | None = None
    hull_exact: np.ndarray | None = None
    hull_mirror: bool = False


# ------------------------------------------------------------------------------------------
# file reading


def load_mesh(path, scale=None):
    """Read a triangle mesh from an STL (binary or ASCII) or Wavefront OBJ file.

    STL files store each triangle's corners separately; equal corners (equal in single
    precision, the STL storage type) are merged into one vertex, numbered by first
    appearance. OBJ polygons are triangulated: quads along their shorter diagonal (as
    MuJoCo's OBJ reader does), larger polygons as a fan from their first corner.

    Args:
        path: file name (str or Path); the extension selects the format.
        scale: None, a number, or three numbers multiplying the x, y, z coordinates. A
            negative product flips the winding so that faces stay outward. For MuJoCo
            parity, pass a MJCF mesh's scale to `process_mesh` instead, which scales after
            rounding to single precision as MuJoCo does.

    Returns:
        vertices: (n, 3) float64 array.
        faces: (m, 3) int32 array of vertex indices, m >= 1.

    Raises:
        ModelError: the file is missing or unreadable, its extension is not supported, its
            content cannot be parsed (the message names the line), or it holds no faces.
    """
    vertices, faces, _ = read_mesh(path)
    if scale is not None:
        vertices, faces = apply_scale(vertices, faces, scale, str(path))
    return vertices, faces


def read_mesh(path):
    """`load_mesh` without scale, also counting the file's normals.

    Returns:
        vertices: (n, 3) float64 array.
        faces: (m, 3) int32 array of vertex indices.
        nfilenormal: the number of normals (`vn` records) in an OBJ file, which are not
            read; 0 for other formats.

    Raises:
        ModelError: as `load_mesh`.
    """
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        raise ModelError(
            f"{path}: unsupported mesh format '{path.suffix or '(none)'}'; supported formats "
            f"are {', '.join(SUPPORTED_EXTENSIONS)}. Convert the mesh to STL or OBJ."
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelError(f"{path}: mesh file not found; check the path and meshdir") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read mesh file ({exc.strerror})") from None

    nfilenormal = 0
    if ext == ".stl":
        vertices, faces = _read_stl(path, data)
    elif ext == ".msh":
        vertices, faces = _read_msh(path, data)
    else:
        vertices, faces, nfilenormal = _read_obj(path, data)

    if len(faces) == 0 and ext != ".msh":
        raise ModelError(f"{path}: mesh has no faces; a mesh file needs at least one triangle")
    if not np.all(np.isfinite(vertices)):
        row = int(np.argwhere(~np.isfinite(vertices))[0, 0])
        raise ModelError(f"{path}: vertex {row} has a coordinate that is not finite")
    return vertices, faces, nfilenormal


def _read_msh(path, data):
    """Parse MuJoCo's binary MSH mesh: a header, then the arrays in single precision.

    Header: four little-endian int32 counts nvert, nnormal, ntexcoord, nface; then
    nvert·3 float32 vertex coordinates, nnormal·3 normals, ntexcoord·2 texture
    coordinates and nface·3 int32 vertex indices. nnormal and ntexcoord are 0 or nvert; the
    file size must be exactly what the header announces (MuJoCo's rules). Vertices are kept
    as they are (repeated ones included); a file without faces gets its convex hull's.
    """
    if len(data) < 16:
        raise ModelError(f"{path}: MSH file is {len(data)} bytes, shorter than its 16-byte "
                         f"header; the file is truncated or not an MSH mesh")
    nv, nn, nt, nf = struct.unpack_from("<4i", data, 0)
    if nv < 4 or nf < 0 or nn < 0 or nt < 0 or (nn > 0 and nn != nv) or (nt > 0 and nt != nv):
        raise ModelError(f"{path}: invalid sizes in the MSH header (vertices {nv}, normals "
                         f"{nn}, texture coordinates {nt}, faces {nf}); MuJoCo needs at least "
                         f"4 vertices and as many normals and texture coordinates as "
                         f"vertices, or none")
    expect = 16 + 4 * (3 * nv + 3 * nn + 2 * nt + 3 * nf)
    if len(data) != expect:
        raise ModelError(f"{path}: MSH file is {len(data)} bytes but its header announces "
                         f"{expect} ({nv} vertices, {nn} normals, {nt} texture coordinates, "
                         f"{nf} faces); the file is truncated or corrupt: export it again")
    vertices = np.frombuffer(data, dtype="<f4", count=3 * nv, offset=16).reshape(nv, 3)
    offset = 16 + 4 * (3 * nv + 3 * nn + 2 * nt)
    faces = np.frombuffer(data, dtype="<i4", count=3 * nf, offset=offset).reshape(nf, 3)
    if nf and (faces.min() < 0 or faces.max() >= nv):
        bad = int(np.argmax((faces < 0).any(axis=1) | (faces >= nv).any(axis=1)))
        raise ModelError(f"{path}: face {bad} of the MSH file names vertex "
                         f"{faces[bad].tolist()}, outside 0..{nv - 1}; the file is corrupt")
    return vertices.astype(np.float64), faces.astype(np.int32)


def _read_stl(path, data):
    """Parse STL bytes (binary when the size matches the face count, else ASCII)."""
    if len(data) >= 84:
        (count,) = struct.unpack_from("<I", data, 80)
        if len(data) == 84 + 50 * count:
            return _read_stl_binary(data, count)
    if data.lstrip()[:5].lower() == b"solid":
        return _read_stl_ascii(path, data)
    raise ModelError(
        f"{path}: not a valid STL file: a binary STL must be 84 + 50·(face count) bytes long "
        f"(this one has {len(data)} bytes) and an ASCII STL must start with 'solid'"
    )


def _read_stl_binary(data, count):
    """Corners of a binary STL (50-byte records: normal, 3 corners, attribute word)."""
    record = np.dtype(
        [("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")]
    )
    corners = np.frombuffer(data, dtype=record, count=count, offset=84)["corners"]
    return _merge_corners(corners.reshape(-1, 3))


def _read_stl_ascii(path, data):
    """Corners of an ASCII STL: `vertex x y z` lines, three per `facet ... endfacet`."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ModelError(f"{path}: ASCII STL file contains non-ASCII bytes") from None
    corners = []
    in_facet = False
    facet_corners = 0
    facet_line = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words:
            continue
        key = words[0].lower()
        if key == "facet":
            if in_facet:
                raise ModelError(f"{path}:{lineno}: 'facet' before the previous 'endfacet'")
            in_facet, facet_corners, facet_line = True, 0, lineno
        elif key == "vertex":
            if not in_facet:
                raise ModelError(f"{path}:{lineno}: 'vertex' outside a facet")
            if len(words) != 4:
                raise ModelError(f"{path}:{lineno}: expected 'vertex x y z', got '{line.strip()}'")
            try:
                corners.append([float(w) for w in words[1:]])
            except ValueError:
                raise ModelError(
                    f"{path}:{lineno}: cannot read coordinates in '{line.strip()}'"
                ) from None
            facet_corners += 1
        elif key == "endfacet":
            if not in_facet:
                raise ModelError(f"{path}:{lineno}: 'endfacet' without 'facet'")
            if facet_corners != 3:
                raise ModelError(
                    f"{path}:{facet_line}: facet has {facet_corners} vertices; STL facets "
                    "must be triangles"
                )
            in_facet = False
        elif key not in ("solid", "endsolid", "outer", "endloop"):
            raise ModelError(f"{path}:{lineno}: unexpected '{words[0]}' in ASCII STL")
    if in_facet:
        raise ModelError(f"{path}:{facet_line}: facet is not closed by 'endfacet'")
    corners = np.asarray(corners, dtype=np.float64).reshape(-1, 3).astype(np.float32)
    return _merge_corners(corners)


def _merge_corners(corners):
    """Merge equal float32 corners into vertices numbered by first appearance.

    -0.0 and 0.0 are equal. Returns float64 vertices and (len(corners) / 3, 3) int32 faces.
    """
    corners = np.ascontiguousarray(corners, dtype=np.float32).reshape(-1, 3) + np.float32(0.0)
    n = len(corners)
    if n == 0:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)
    # equal corners have equal bits: sort by (x, y) packed in one word, then z (stable, so
    # each run of equal corners starts with its first appearance)
    first, group = equal_rows32(corners)
    # number the distinct corners by their first appearance
    by_first = np.argsort(first, kind="stable")
    rank = np.empty_like(by_first)
    rank[by_first] = np.arange(len(by_first))
    vertices = corners[first[by_first]].astype(np.float64)
    return vertices, rank[group].reshape(-1, 3).astype(np.int32)


def equal_rows32(points):
    """Groups of bit-equal rows of an (n, 3) float32 array: (first, group).

    first[g] is the index of group g's first row, group[i] the group of row i (the groups
    in no particular order). Rows are compared by their bits, so normalize -0.0 first. One
    sort by (x, y) packed in one 64-bit word, then z; stable, so that each run of equal rows
    starts with the first of them.
    """
    bits = np.ascontiguousarray(points, dtype=np.float32).view(np.uint32).astype(np.uint64)
    xy, z = (bits[:, 0] << np.uint64(32)) | bits[:, 1], bits[:, 2]
    order = np.lexsort((z, xy))
    xy, z = xy[order], z[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (xy[1:] != xy[:-1]) | (z[1:] != z[:-1])
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return order[new], group


def _read_obj(path, data):
    """Vertices, triangulated faces and the number of normals of a Wavefront OBJ.

    `v` and `f` records are read; `vn` records are counted.
    """
    text = data.decode("utf-8", errors="replace")
    vertices = []
    faces = []
    nnormal = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "v":
            if len(words) < 4:
                raise ModelError(f"{path}:{lineno}: expected 'v x y z', got '{line.strip()}'")
            try:
                vertices.append([float(w) for w in words[1:4]])
            except ValueError:
                raise ModelError(
                    f"{path}:{lineno}: cannot read vertex coordinates in '{line.strip()}'"
                ) from None
        elif words[0] == "f":
            if len(words) < 4:
                raise ModelError(
                    f"{path}:{lineno}: a face needs at least 3 vertices, got '{line.strip()}'"
                )
            polygon = [_obj_index(path, lineno, w, len(vertices)) for w in words[1:]]
            faces.append((lineno, polygon))
        elif words[0] == "vn":
            nnormal += 1
    # single precision, as MuJoCo's OBJ reader stores the coordinates
    v32 = np.asarray(vertices, dtype=np.float64).reshape(-1, 3).astype(np.float32)
    triangles = []
    for lineno, polygon in faces:
        triangles.extend(_triangulate(polygon, v32))
    return (v32.astype(np.float64), np.asarray(triangles, dtype=np.int32).reshape(-1, 3),
            nnormal)


def _obj_index(path, lineno, word, nvert):
    """Zero-based vertex index from an OBJ face corner `v`, `v/vt`, `v//vn` or `v/vt/vn`."""
    head = word.split("/", 1)[0]
    try:
        index = int(head)
    except ValueError:
        raise ModelError(f"{path}:{lineno}: cannot read face vertex index '{word}'") from None
    # positive indices count from 1; negative ones count back from the last vertex read
    resolved = index - 1 if index > 0 else nvert + index
    if index == 0 or not 0 <= resolved < nvert:
        raise ModelError(
            f"{path}:{lineno}: face vertex index {index} does not name one of the {nvert} "
            "vertices defined above it"
        )
    return resolved


def _triangulate(polygon, v32):
    """Triangles of one OBJ polygon: a quad along its shorter diagonal, else a fan."""
    if len(polygon) == 4:
        p0, p1, p2, p3 = polygon
        d02 = v32[p2] - v32[p0]
        d13 = v32[p3] - v32[p1]
        if float(np.dot(d02, d02)) < float(np.dot(d13, d13)):
            return [(p0, p1, p2), (p0, p2, p3)]
        return [(p0, p1, p3), (p1, p2, p3)]
    return [(polygon[0], polygon[i], polygon[i + 1]) for i in range(1, len(polygon) - 1)]


def apply_scale(vertices, faces, scale, where):
    """Multiply coordinates by a scalar or 3-vector; flip the winding if it mirrors."""
    factors = np.asarray(scale, dtype=np.float64).ravel()
    if factors.size == 1:
        factors = np.repeat(factors, 3)
    if factors.size != 3 or not np.all(np.isfinite(factors)) or np.any(factors == 0):
        raise ModelError(
            f"{where}: mesh scale must be one number or three non-zero finite numbers, "
            f"got {scale!r}"
        )
    vertices = vertices * factors
    if mirrors(factors):
        faces = faces[:, [0, 2, 1]]
    return vertices, np.ascontiguousarray(faces, dtype=np.int32)


def mirrors(scale):
    """Whether a mesh scale (one number or three; None: none) mirrors the mesh."""
    if scale is None:
        return False
    factors = np.asarray(scale, dtype=np.float64).ravel()
    return factors.size in (1, 3) and bool(np.prod(np.resize(factors, 3)) < 0)


# ------------------------------------------------------------------------------------------
# MuJoCo's mesh processing


INERTIA_MODES = ("legacy", "exact", "convex", "shell")


def process_mesh(vertices, faces, name="", source="", scale=None, *, inertia="legacy",
                 refpos=None, refquat=None, findings=None, maxhullvert=-1):
    """Put a mesh into its principal inertial frame as MuJoCo's compiler does.

    See the module docstring for the steps; they mirror `mjCMesh::Process` (user_mesh.cc).
    The inertia modes are MuJoCo's: "legacy" counts every pyramid with its absolute volume;
    "exact" with its signed volume (the divergence theorem: exact for a closed, consistently
    oriented surface, and faces oriented inconsistently are an error); "convex" is "exact" on
    the convex hull; "shell" puts the mass on the surface (the "volume" is then the area).

    Args:
        vertices: (n, 3) coordinates in the mesh file's frame, n >= 4.
        faces: (m, 3) vertex indices, or an empty array to use the convex hull's faces
            (as MuJoCo does for a mesh given by vertices only).
        name: mesh name for messages.
        source: where the mesh was declared (file:line), for messages.
        scale: None, a number or three numbers (MJCF mesh `scale`), applied after the
            vertices are rounded to single precision.
        inertia: the inertia mode, one of INERTIA_MODES.
        refpos: None or the point (MJCF `refpos`) subtracted from the vertices first.
        refquat: None or the rotation (MJCF `refquat`, w x y z) whose inverse turns them next.
        findings: None, or a list that receives the text of a finding MuJoCo accepts
            silently (an open or inconsistently oriented surface) instead of a warning.
        maxhullvert: -1, or the most vertices (at least 4) of the convex hull (MJCF mesh
            `maxhullvert`): the hull is then that of the points qhull adds first, chosen as
            MuJoCo's compiler chooses them (`_capped_hull`); it serves collision, the faces
            of a mesh given without faces and inertia="convex", as in MuJoCo.

    Returns:
        A ProcessedMesh.

    Raises:
        ModelError: bad array shapes, non-finite vertices, out-of-range face indices, fewer
            than 4 vertices, zero surface area or volume, or an inertia MuJoCo rejects.

    Warns:
        JointspaceWarning: the mesh is not closed or its faces are not consistently
            oriented; MuJoCo's legacy inertia accepts it, but its volume is then only an
            approximation of the solid's.
    """
    where = _describe(name, source)
    if inertia not in INERTIA_MODES:
        raise ModelError(f"{where}: mesh inertia {inertia!r} is not one of "
                         f"{', '.join(INERTIA_MODES)}")
    v = _check_vertices(vertices, where)
    f = _check_faces(faces, len(v), where)
    # MuJoCo stores vertices as float32 and processes them in double precision
    v = v.astype(np.float32).astype(np.float64)
    # the hull's vertices: all of them, or those of the capped hull of the file's points
    keep = _capped_hull(v, maxhullvert, where) if maxhullvert != -1 else None
    # MuJoCo's compiler runs qhull on the file's points too, and its faces come in qhull's
    # order; the collision tables keep that order and each triangle's first vertex
    read = v
    mirror = mirrors(scale)

    hull = []  # the hull of the file's points, computed once where it is needed

    def read_hull():
        # outward in the file's frame; a mirroring scale flips the winding
        if not hull:
            hull.extend(_hull(read, where, keep))
        return hull[0], hull[1]

    given_faces = len(f) > 0
    if not given_faces:
        f = read_hull()[1]  # apply_scale flips it where the scale mirrors
    if refpos is not None and np.any(np.asarray(refpos) != 0):
        v = v - np.asarray(refpos, dtype=np.float64)
    if refquat is not None and tuple(refquat) != (1.0, 0.0, 0.0, 0.0):
        q = [float(x) for x in refquat]
        if math.sqrt(sum(x * x for x in q)) < _NORM_EPS:
            raise ModelError(f"{where}: refquat has zero length; give a unit quaternion")
        # Rᵀ v = v_x R[0] + v_y R[1] + v_z R[2], R[i] the rows of R
        rot = np.asarray(_quat_to_mat(_normalize(q)), dtype=np.float64)
        v = v[:, 0:1] * rot[0] + v[:, 1:2] * rot[1] + v[:, 2:3] * rot[2]
    if scale is not None:
        v, f = apply_scale(v, f, scale, where)

    if inertia == "exact" and given_faces:
        _check_orientation(f, v, where)

    vc, com, volume, inertia_matrix = _mesh_inertia(
        v, f, _outward(read_hull()[1], mirror) if inertia == "convex" else f, inertia, where)
    if given_faces:
        problem = _open_surface(f, v)
        if problem and findings is not None:
            findings.append(f"{where}: {problem}")
        elif problem:
            warnings.warn(
                f"{where}: {problem}; its volume and inertia follow MuJoCo's {inertia} rule, "
                "which may differ from the solid's. Repair the mesh or give the body an "
                "explicit inertial.", JointspaceWarning, stacklevel=2)
    moments, quat = principal_axes(inertia_matrix)
    _check_moments(moments, where)

    # vertices in the principal frame: R(quat)ᵀ (v - com)
    rot = _quat_to_mat(quat)
    local = vc[:, 0:1] * rot[0] + vc[:, 1:2] * rot[1] + vc[:, 2:3] * rot[2]
    aabb = np.stack([local.min(axis=0), local.max(axis=0)])
    half = np.max(np.abs(aabb), axis=0)
    exact = local
    local = local.astype(np.float32).astype(np.float64)
    if given_faces and inertia != "convex" and _flat(local):
        # a flat surface has no convex hull: MuJoCo builds one only for a colliding geom,
        # and the compiler refuses a colliding geom on a mesh without one
        used, hull_faces = np.zeros(0, dtype=np.int64), np.zeros((0, 3), dtype=np.int32)
    else:
        used, hull_faces = read_hull()
        hull_faces = _outward(hull_faces, mirror)
    remap = np.full(len(local), -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    return ProcessedMesh(
        name=name,
        source=source,
        vertices=local,
        faces=np.ascontiguousarray(f, dtype=np.int32),
        volume=float(volume),
        inertia=np.asarray(moments, dtype=np.float64),
        pos=np.asarray(com, dtype=np.float64),
        quat=np.asarray(quat, dtype=np.float64),
        hull_vertices=local[used],
        hull_faces=remap[hull_faces],
        aabb=aabb,
        # summed in MuJoCo's order (numpy's 3-vector dot may fuse or reorder the products)
        rbound=math.sqrt(half[0] * half[0] + half[1] * half[1] + half[2] * half[2]),
        hull_read=read[used],
        hull_mirror=bool(mirror),
        hull_exact=exact[used],
    )


def taxel_tangents(normal, nvert, quat, scale=None, refquat=None):
    """The two tangents of each vertex's frame, as MuJoCo's compiler stores them.

    A mesh given three normals per vertex (normal, tangent 1, tangent 2 of each vertex in
    turn; MuJoCo's mesh_normalnum = 3 mesh_vertnum) holds a taxel frame per vertex. The
    compiler (mjCMesh::ApplyTransformations, Rotate) turns each given vector n, stored in
    single precision, as the vertices: n ← R(refquat)ᵀ n, n ← n / scale (a covector),
    n ← n / |n| in single precision ((0, 0, 1) when |n|² ≤ 1e-15), n ← R(quat)ᵀ n, each step
    rounded to single precision as MuJoCo's: the tangents are then in the frame of the
    vertices (MuJoCo's mesh_normal).

    Args:
        normal: (k, 3) the normals as given.
        nvert: the mesh's vertex count.
        quat: the mesh's inertial-frame rotation (ProcessedMesh.quat).
        scale: None or the three scale factors.
        refquat: None or the MJCF refquat.

    Returns:
        (nvert, 6) tangent 1 and tangent 2 of each vertex, or None when k ≠ 3 nvert.
    """
    n = np.asarray(normal, dtype=np.float32).reshape(-1, 3)
    if len(n) != 3 * nvert or nvert == 0:
        return None
    if refquat is not None and tuple(refquat) != (1.0, 0.0, 0.0, 0.0):
        n = _rows_times(n, _quat_to_mat(_normalize([float(x) for x in refquat])))
    if scale is not None and tuple(scale) != (1.0, 1.0, 1.0):
        n = (n.astype(np.float64) / np.asarray(scale, dtype=np.float64)).astype(np.float32)
    length = n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2]
    keep = length > MINVAL
    unit = np.tile(np.float32([0.0, 0.0, 1.0]), (len(n), 1))
    unit[keep] = n[keep] * (np.float32(1.0) / np.sqrt(length[keep]))[:, None]
    n = _rows_times(unit, _quat_to_mat(quat)).astype(np.float64).reshape(nvert, 9)
    return np.ascontiguousarray(n[:, 3:9])


def _rows_times(n, rot):
    """Rᵀ n for each row n, in double precision, rounded to single (mjuu_mulvecmatT)."""
    n = n.astype(np.float64)
    return (n[:, 0:1] * rot[0] + n[:, 1:2] * rot[1] + n[:, 2:3] * rot[2]).astype(np.float32)


def _describe(name, source):
    """Message prefix naming the mesh and where it was declared: "source: mesh 'name'"."""
    label = f"mesh '{name}'" if name else "mesh"
    return f"{source}: {label}" if source else label


def _check_vertices(vertices, where):
    """Vertices as an (n, 3) float64 array, n >= 4, all finite."""
    v = np.asarray(vertices, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 3:
        raise ModelError(f"{where}: vertices must have shape (n, 3), got {v.shape}")
    if len(v) < 4:
        raise ModelError(f"{where}: at least 4 vertices are required, got {len(v)}")
    bad = np.argwhere(~np.isfinite(v))
    if len(bad):
        raise ModelError(f"{where}: vertex {int(bad[0, 0])} has a coordinate that is not finite")
    return v


def _check_faces(faces, nvert, where):
    """Faces as an (m, 3) int32 array of valid indices ((0, 3) when none are given)."""
    f = np.asarray(faces)
    if f.size == 0:
        return np.zeros((0, 3), dtype=np.int32)
    if f.ndim != 2 or f.shape[1] != 3:
        raise ModelError(f"{where}: faces must have shape (m, 3), got {f.shape}")
    if not np.issubdtype(f.dtype, np.integer):
        if not np.all(f == np.round(f)):
            raise ModelError(f"{where}: face indices must be integers")
    f = f.astype(np.int64)
    bad = np.argwhere((f < 0) | (f >= nvert))
    if len(bad):
        i, j = bad[0]
        raise ModelError(
            f"{where}: face {i} uses vertex index {f[i, j]}, but the mesh has {nvert} vertices"
        )
    return f.astype(np.int32)


def _open_surface(f, v):
    """What keeps the triangles from a closed, consistently wound surface, or None.

    Closed and consistent means every directed edge appears once and its reverse once;
    triangles that repeat a vertex index are left out.
    """
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]
    if len(f) == 0:
        return None
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]).astype(np.int64)
    nvert = len(v)
    directed = edges[:, 0] * nvert + edges[:, 1]
    reverse = edges[:, 1] * nvert + edges[:, 0]
    key = np.sort(directed)
    twice = np.flatnonzero(key[1:] == key[:-1])
    if twice.size:
        a, b = divmod(int(key[twice[0]]), nvert)
        return (f"faces are not consistently oriented (edge from vertex {a} to {b} is used "
                "twice in the same direction)")
    at = np.minimum(np.searchsorted(key, reverse), len(key) - 1)
    lone = key[at] != reverse
    if np.any(lone):
        a, b = edges[np.argmax(lone)]
        return f"the surface is not closed (edge from vertex {a} to {b} has no twin)"
    return None


def _check_orientation(f, v, where):
    """inertia="exact" needs consistently oriented faces: MuJoCo's half-edge test.

    Faces of area above sqrt(MINVAL) contribute their three directed edges; a directed edge
    used twice is an error naming its vertices (1-based, as MuJoCo's message).
    """
    area = _triangles(v, f)[0]
    keep = f[area > math.sqrt(MINVAL)]
    edges = np.concatenate([keep[:, [0, 1]], keep[:, [1, 2]], keep[:, [2, 0]]])
    edges = edges[np.lexsort((edges[:, 1], edges[:, 0]))]
    same = np.flatnonzero(np.all(edges[1:] == edges[:-1], axis=1))
    if same.size:
        a, b = edges[same[0]]
        raise ModelError(
            f"{where}: faces have inconsistent orientation (the faces containing vertices "
            f"{a + 1} and {b + 1}), which inertia='exact' cannot use; fix the winding or use "
            f"inertia='legacy' or 'convex'")


def _running_sum(x):
    """Left-to-right sum over axis 0 (the order of a C loop; numpy's sum is pairwise)."""
    return np.cumsum(x, axis=0)[-1]


def _dot3(a, b):
    """Row-wise dot products of (m, 3) arrays, summed x + y + z."""
    return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]


def _triangles(v, f):
    """Areas (m,), unit normals (m, 3) and centroids (m, 3) of the faces.

    n = (b - a) × (c - a), area = |n| / 2. Faces with |n| < MINVAL get area 0 (and keep an
    unnormalized normal), as MuJoCo ignores them.
    """
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    centers = (a + b + c) / 3
    ab, ac = b - a, c - a
    normals = np.stack([
        ab[:, 1] * ac[:, 2] - ab[:, 2] * ac[:, 1],
        ab[:, 2] * ac[:, 0] - ab[:, 0] * ac[:, 2],
        ab[:, 0] * ac[:, 1] - ab[:, 1] * ac[:, 0],
    ], axis=1)
    length = np.sqrt(_dot3(normals, normals))
    keep = length >= MINVAL
    normals[keep] /= length[keep, None]
    area = np.where(keep, 0.5 * length, 0.0)
    return area, normals, centers


def _mesh_inertia(v, f, fi, mode, where):
    """Volume, centre of mass and inertia (unit density) by MuJoCo's pyramids.

    facecen = Σ area·center / Σ area over the faces f;
    vol_f = (center_f - facecen)·n_f area_f / 3 over the faces fi (the hull's for "convex"),
    its absolute value for "legacy", and area_f for "shell";
    com = Σ vol_f (¾ center_f + ¼ facecen) / Σ vol_f;
    with vertices x relative to com: vol_f = center_f·n_f area_f / 3 (area_f for "shell")
    and, over the corners (d, e, g) of each face, P_jk = Σ vol_f / C (2 (d_j d_k + e_j e_k
    + g_j g_k) + d_j e_k + d_k e_j + d_j g_k + d_k g_j + e_j g_k + e_k g_j), C = 20 (12 for
    "shell"), I = [[P11+P22, -P01, -P02], [-P01, P00+P22, -P12], [-P02, -P12, P00+P11]].
    Sums run face by face and each term is evaluated in the order of mjCMesh (user_mesh.cc),
    so the result is MuJoCo's to the last bit; that matters where the inertia has equal
    principal moments and the axes MuJoCo picks hinge on rounding.

    Returns:
        vertices relative to com (n, 3), com (3,), volume (the area for "shell"), inertia
        matrix (3, 3).
    """
    tri = _triangles(v, f)
    area, normals, centers = tri
    total_area = _running_sum(area)
    if total_area < MINVAL:
        raise ModelError(
            f"{where}: mesh surface area is too small ({total_area:.3g}); check the vertices "
            "and faces"
        )
    facecen = _running_sum(area[:, None] * centers) / total_area

    if mode != "shell":
        area, normals, centers = tri if fi is f else _triangles(v, fi)
        vol = _dot3(centers - facecen, normals) * area / 3
        if mode == "legacy":
            vol = np.abs(vol)
    else:
        vol = area
    total = _running_sum(vol)
    if total < MINVAL and mode != "shell":
        if total < 0:
            raise ModelError(
                f"{where}: mesh volume is negative ({total:.3g}): its triangles are oriented "
                "inward or inconsistently; fix the winding or use inertia='legacy'")
        raise ModelError(
            f"{where}: mesh volume is too small ({total:.3g}); a flat or degenerate mesh has "
            "no volume. Give the body an explicit inertial, use a closed mesh or "
            "inertia='shell'."
        )
    com = _running_sum(vol[:, None] * (centers * 3.0 / 4.0 + facecen / 4.0)) / total

    vc = v - com
    area, normals, centers = _triangles(vc, fi)
    if mode == "shell":
        vol = area
    else:
        vol = _dot3(centers, normals) * area / 3
        if mode == "legacy":
            vol = np.abs(vol)
    # corners as contiguous coordinate rows: d[j] is coordinate j of every face's first corner
    vt = np.ascontiguousarray(vc.T)
    d, e, g = vt[:, fi[:, 0]], vt[:, fi[:, 1]], vt[:, fi[:, 2]]
    weight = vol / (12 if mode == "shell" else 20)
    P = {}
    for j, k in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)):
        term = (2 * (d[j] * d[k] + e[j] * e[k] + g[j] * g[k])
                + d[j] * e[k] + d[k] * e[j]
                + d[j] * g[k] + d[k] * g[j]
                + e[j] * g[k] + e[k] * g[j])
        P[j, k] = _running_sum(weight * term)
    inertia = np.array([
        [P[1, 1] + P[2, 2], -P[0, 1], -P[0, 2]],
        [-P[0, 1], P[0, 0] + P[2, 2], -P[1, 2]],
        [-P[0, 2], -P[1, 2], P[0, 0] + P[1, 1]],
    ])
    return vc, com, _running_sum(vol), inertia


def _check_moments(moments, where):
    """MuJoCo's acceptance test of principal moments: positive, triangle inequality."""
    a, b, c = moments
    if c <= 0:
        raise ModelError(f"{where}: mesh inertia has a non-positive principal moment {c:.3g}")
    for x, y, z in ((a, b, c), (a, c, b), (b, c, a)):
        if x + y < z * (1.0 - _INEQ_RTOL) - _INEQ_ATOL:
            raise ModelError(
                f"{where}: mesh principal moments {moments} violate A + B >= C; the mesh is "
                "probably degenerate or inside-out. Repair it or give an explicit inertial."
            )


# ------------------------------------------------------------------------------------------
# principal axes, as MuJoCo finds them


def principal_axes(inertia, reltol=_MESH_EIG_RELTOL):
    """Eigenvalues (decreasing) and the rotation whose columns are the eigenvectors.

    Jacobi iteration on a quaternion, with the tolerances and update MuJoCo 4.0's compiler
    uses (`mjuu_eig3`; `mju_eig3` is the same with reltol 4e-15). Each step rotates about
    the axis normal to the largest off-diagonal entry of D = R(q)ᵀ A R(q) to zero it: with
    τ = (D_cc - D_rr) / 2D_rc, t = tan θ the smaller root of t² + 2τt - 1 = 0, the half
    angle comes from h = tan(θ/2) = t / (1 + √(1+t²)) without cancellation. Iteration stops
    when the largest off-diagonal entry is at most max(reltol, 4e-15)·max|A|. The
    eigenvalues are then bubble-sorted in decreasing order, a pair swapping (as a quarter
    turn about the third axis) only when they differ by more than max(reltol, 1e-12)·max|A|.
    Reproducing the iteration, rather than calling a library eigen-solver, gives MuJoCo's
    choice of axis order and signs, also where principal moments are equal.

    Args:
        inertia: symmetric (3, 3) matrix.
        reltol: relative tolerance; MuJoCo uses 1e-7 for meshes and 4e-15 for bodies.

    Returns:
        eigenvalues (3,) as a list, quaternion (w, x, y, z) as a list.
    """
    A = [[float(inertia[i][j]) for j in range(3)] for i in range(3)]
    scale = max(abs(x) for row in A for x in row)
    off_tol = max(_EIG_OFF_RELTOL, reltol) * scale
    sort_tol = max(_EIG_SORT_RELTOL, reltol) * scale
    q = [1.0, 0.0, 0.0, 0.0]
    ev = [A[0][0], A[1][1], A[2][2]]
    for _ in range(500):
        R = _quat_to_rows(q)
        D = _mat_mul(_mat_mul(_transpose(R), A), R)
        ev = [D[0][0], D[1][1], D[2][2]]
        d01, d02, d12 = abs(D[0][1]), abs(D[0][2]), abs(D[1][2])
        if d01 > d02 and d01 > d12:
            r, c, axis = 0, 1, 2
        elif d02 > d12:
            r, c, axis = 0, 2, 1
        else:
            r, c, axis = 1, 2, 0
        off = D[r][c]
        if abs(off) <= off_tol:
            break
        tau = (D[c][c] - D[r][r]) / (2 * off)
        root = math.sqrt(1 + tau * tau)
        t = 1.0 / (tau + root) if tau >= 0 else -1.0 / (root - tau)
        h = t / (1 + math.sqrt(1 + t * t))
        cos_half = 1.0 / math.sqrt(1 + h * h)
        # half-angle quaternion of the rotation that zeroes D_rc (MuJoCo's sign convention)
        step = [cos_half, 0.0, 0.0, 0.0]
        step[axis + 1] = (h if axis == 1 else -h) * cos_half
        q = _normalize(_quat_mul(q, step))
    # decreasing order; each swap of entries (j, j+1) is a quarter turn about the other axis
    half_turn = 0.707106781186548
    for j in (0, 1, 0):
        if ev[j] + sort_tol < ev[j + 1]:
            ev[j], ev[j + 1] = ev[j + 1], ev[j]
            step = [half_turn, 0.0, 0.0, 0.0]
            step[(j + 2) % 3 + 1] = half_turn
            q = _normalize(_quat_mul(q, step))
    return ev, q


def _normalize(q):
    """Return q / |q|, or q unchanged when |q|² < 1e-14 or |q| is within 1e-14 of 1 (as MuJoCo)."""
    norm2 = 0.0
    for x in q:
        norm2 += x * x
    if norm2 < _NORM_EPS:
        return q
    norm = math.sqrt(norm2)
    return [x / norm for x in q] if abs(norm - 1) > _NORM_EPS else q


def _quat_mul(a, b):
    """Hamilton product a ⊗ b, normalized."""
    return _normalize([
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ])


def _quat_to_rows(q):
    """Rotation matrix of a unit quaternion, as nested lists."""
    if q == [1.0, 0.0, 0.0, 0.0]:
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    w, x, y, z = q
    ww, wx, wy, wz = w * w, w * x, w * y, w * z
    xx, xy, xz, yy, yz, zz = x * x, x * y, x * z, y * y, y * z, z * z
    return [
        [ww + xx - yy - zz, 2 * (xy - wz), 2 * (xz + wy)],
        [2 * (xy + wz), ww - xx + yy - zz, 2 * (yz - wx)],
        [2 * (xz - wy), 2 * (yz + wx), ww - xx - yy + zz],
    ]


def _quat_to_mat(q):
    return np.array(_quat_to_rows(list(q)), dtype=np.float64)


def _transpose(M):
    return [[M[j][i] for j in range(3)] for i in range(3)]


def _mat_mul(M, N):
    return [[M[i][0] * N[0][j] + M[i][1] * N[1][j] + M[i][2] * N[2][j] for j in range(3)]
            for i in range(3)]


# ------------------------------------------------------------------------------------------
# convex hull


def _flat(v):
    """Whether the points span less than three dimensions (no convex hull exists)."""
    centred = v - v.mean(axis=0)
    sv = np.linalg.svd(centred, compute_uv=False)
    return bool(sv[-1] <= 1e-12 * max(sv[0], MINVAL))


def _qhull(v, where, options=""):
    from scipy.spatial import ConvexHull, QhullError

    try:
        return ConvexHull(v, qhull_options=options or None)
    except QhullError:
        raise ModelError(
            f"{where}: cannot compute the convex hull; the vertices are coincident, collinear "
            "or coplanar. Use a mesh that encloses a volume."
        ) from None


def _capped_hull(v, maxhullvert, where):
    """Indices of the vertices of MuJoCo's hull capped at `maxhullvert` vertices.

    MuJoCo's compiler runs qhull with "Qt Q9 TA<maxhullvert - 4>" on the mesh's points as
    read (before refpos, refquat and scale): qhull builds the hull from an initial simplex,
    adding at each step the point furthest outside any facet (Q9), and stops after
    maxhullvert - 4 more. SciPy's ConvexHull is the same qhull with "Qt", so the same
    points are chosen (compared with MuJoCo's mesh_graph in tests/test_mjcf_complete.py).
    """
    return np.sort(_qhull(v, where, f"Q9 TA{int(maxhullvert) - 4}").vertices)


def _outward(tri, mirror):
    """Triangles outward in the file's frame, outward again after a mirroring scale."""
    return tri[:, [0, 2, 1]] if mirror else tri


def _hull(v, where, keep=None):
    """Convex hull of points: indices (k,) of its vertices and (h, 3) outward triangles.

    With `keep` (indices), the hull of those points only, indexed into `v`.
    """
    if keep is not None:
        used, faces = _hull(v[keep], where)
        return keep[used], keep[faces].astype(np.int32)
    hull = _qhull(v, where)
    simplices = hull.simplices.astype(np.int64)
    a, b, c = v[simplices[:, 0]], v[simplices[:, 1]], v[simplices[:, 2]]
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    simplices[inward] = simplices[inward][:, [1, 0, 2]]
    return np.sort(hull.vertices), simplices.astype(np.int32)
