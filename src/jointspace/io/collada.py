"""COLLADA (`.dae`) triangle geometry, read as Pinocchio's loader (assimp through coal) reads it.

A COLLADA file holds meshes in `<library_geometries>` and places them in a scene graph
(`<library_visual_scenes>`). What `load_collada` reads, with the standard library's expat:

- the scene named by `<scene><instance_visual_scene url>` (else the first `<visual_scene>`);
  its `<node>` tree, depth first, with each node's transforms composed in document order
  (`<matrix>` row-major 4x4, `<translate>`, `<rotate>` axis + angle in degrees, `<scale>`),
  `<instance_node>` references into `<library_nodes>`, and `<instance_geometry>` placing a
  geometry's triangles with the node's transform to the scene root;
- a geometry's `<mesh>`: `<triangles>`, `<polylist>` (`<vcount>`), `<polygons>` (one `<p>`
  per polygon), `<tristrips>` and `<trifans>`; their `<input semantic="VERTEX" offset>`
  leads through `<vertices><input semantic="POSITION">` to a `<source>`, whose `<accessor>`
  (`count`, `stride`, `offset`) reads a `<float_array>`. The index tuple of each corner in
  `<p>` has (largest input offset + 1) entries. Polygons are split into fans from their first
  corner. `<lines>`, `<linestrips>` and points carry no surface and are skipped, as coal does.

Pinocchio's loader (coal's `MeshLoader`, assimp with `JoinIdenticalVertices`) keeps the
transforms of the scene's nodes but not the root transform assimp builds from the file's
`<asset><unit meter>` and `<up_axis>`: coordinates stay in the file's own units and axes.
We do the same, so a URDF robot with `.dae` meshes has the geometry Pinocchio gives it (every
`.dae` of example-robot-data has `meter="1"`). Corners are rounded to single precision
(assimp's storage type) and equal corners merged into one vertex numbered by first
appearance, as the STL reader does; vertices used by no triangle are dropped.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from xml.parsers import expat

import numpy as np

from jointspace.errors import ModelError
from jointspace.io.mesh import apply_scale, equal_rows32

__all__ = ["load_collada"]

_SURFACES = ("triangles", "polylist", "polygons", "tristrips", "trifans")


class _Elem:
    """An XML element without its namespace, with the line it starts on and its text."""

    __slots__ = ("tag", "attrib", "children", "line", "parts")

    def __init__(self, tag, attrib, line):
        self.tag = tag.rsplit("}", 1)[-1].rsplit(" ", 1)[-1]
        self.attrib, self.children, self.line, self.parts = attrib, [], line, []

    @property
    def text(self):
        """The element's own character data."""
        return "".join(self.parts)

    def find(self, tag):
        """First child element named `tag`, or None."""
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag):
        """All child elements named `tag`, in file order."""
        return [c for c in self.children if c.tag == tag]

    def iter(self, tag):
        """All elements named `tag` below this one, depth first."""
        stack = list(reversed(self.children))
        while stack:
            e = stack.pop()
            if e.tag == tag:
                yield e
            stack.extend(reversed(e.children))


def _parse(path, data):
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    stack, top = [], []

    def start(tag, attrib):
        e = _Elem(tag, attrib, parser.CurrentLineNumber)
        (stack[-1].children if stack else top).append(e)
        stack.append(e)

    def end(_tag):
        stack.pop()

    def text(s):
        if stack:
            stack[-1].parts.append(s)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise ModelError(f"{path}:{e.lineno}: malformed COLLADA file ({expat.ErrorString(e.code)}, "
                         f"column {e.offset + 1}); the file may be truncated: export it again "
                         "or convert it to STL or OBJ") from None
    return top[0]


class _Reader:
    """Geometry and scene lookups of one COLLADA document, with located error messages."""

    def __init__(self, path, root):
        self.path, self.root = path, root
        if root.tag != "COLLADA":
            self.fail(root, "the root element of a COLLADA file must be <COLLADA>")
        self.ids = {}
        stack = [root]
        while stack:
            e = stack.pop()
            if "id" in e.attrib:
                self.ids.setdefault(e.attrib["id"], e)
            stack.extend(e.children)
        # placed positions (scene coordinates) and triangles indexing their concatenation
        self.points, self.tris, self.npoints = [], [], 0
        self.read_sources = {}  # id(<source>) -> its positions

    def fail(self, elem, msg):
        """Raise a ModelError naming the file, line and element."""
        ident = elem.attrib.get("id") or elem.attrib.get("name")
        label = f"<{elem.tag} id='{ident}'>" if ident else f"<{elem.tag}>"
        raise ModelError(f"{self.path}:{elem.line} {label}: {msg}")

    def ref(self, elem, attr, tag):
        """The element that `elem`'s `attr="#id"` names; it must be a <tag>."""
        url = elem.attrib.get(attr, "")
        if not url.startswith("#"):
            self.fail(elem, f"attribute {attr}={url!r} must name an element of this file as "
                            "'#id' (references to other files are not supported)")
        target = self.ids.get(url[1:])
        if target is None or target.tag != tag:
            self.fail(elem, f"{attr}={url!r} does not name a <{tag}> of this file; fix the "
                            "reference or export the file again")
        return target

    def numbers(self, elem, dtype, what):
        """The element's text as a 1-D array of `dtype`."""
        text = elem.text
        try:
            with warnings.catch_warnings():  # numpy warns, then raises, on a bad word
                warnings.simplefilter("error", DeprecationWarning)
                values = np.fromstring(text, dtype=dtype, sep=" ")
        except (ValueError, DeprecationWarning):
            bad = next((w for w in text.split() if not _parses(w, dtype)), text.strip()[-20:])
            self.fail(elem, f"cannot read {bad!r} as {what}; the file may be damaged")
        if dtype is np.float64 and not np.all(np.isfinite(values)):
            self.fail(elem, "holds a number that is not finite")
        return values

    def int_attr(self, elem, attr, default=None):
        text = elem.attrib.get(attr)
        if text is None:
            if default is None:
                self.fail(elem, f"attribute {attr!r} is required")
            return default
        try:
            value = int(text)
        except ValueError:
            self.fail(elem, f"attribute {attr}={text!r} must be an integer")
        if value < 0:
            self.fail(elem, f"attribute {attr}={text!r} must not be negative")
        return value

    # -- geometry -----------------------------------------------------------------------------
    def positions(self, source):
        """(n, 3) float64 positions of a <source> through its <accessor> (read once)."""
        if id(source) not in self.read_sources:
            self.read_sources[id(source)] = self.read_positions(source)
        return self.read_sources[id(source)]

    def read_positions(self, source):
        accessor = next(source.iter("accessor"), None)
        if accessor is None:
            self.fail(source, "needs a <technique_common><accessor>")
        array = self.ref(accessor, "source", "float_array")
        values = self.numbers(array, np.float64, "a number")
        count = self.int_attr(accessor, "count")
        stride = self.int_attr(accessor, "stride", 1)
        offset = self.int_attr(accessor, "offset", 0)
        if stride < 3:
            self.fail(accessor, f"stride {stride} is below 3: positions need x, y, z")
        if count and offset + (count - 1) * stride + 3 > len(values):
            self.fail(accessor, f"reads {count} points of stride {stride} from offset {offset}, "
                                f"but <float_array> holds {len(values)} numbers; the file may "
                                "be truncated")
        rows = offset + stride * np.arange(count)
        return values[rows[:, None] + np.arange(3)]

    def vertex_positions(self, prim, vertex_input):
        """Positions the VERTEX input of a primitive leads to."""
        target_url = vertex_input.attrib.get("source", "")
        target = self.ids.get(target_url[1:]) if target_url.startswith("#") else None
        if target is not None and target.tag == "source":
            return self.positions(target)
        vertices = self.ref(vertex_input, "source", "vertices")
        pos = next((i for i in vertices.findall("input")
                    if i.attrib.get("semantic") == "POSITION"), None)
        if pos is None:
            self.fail(vertices, "needs an <input semantic='POSITION'>")
        return self.positions(self.ref(pos, "source", "source"))

    def primitive(self, prim):
        """(k, 3) int64 triangles (indices into the positions) and the positions."""
        inputs = prim.findall("input")
        vertex = next((i for i in inputs if i.attrib.get("semantic") == "VERTEX"), None)
        if vertex is None:
            self.fail(prim, "needs an <input semantic='VERTEX'>")
        width = max(self.int_attr(i, "offset", 0) for i in inputs) + 1
        voff = self.int_attr(vertex, "offset", 0)
        positions = self.vertex_positions(prim, vertex)

        def corners(p):
            idx = self.numbers(p, np.int64, "an index")
            if len(idx) % width:
                self.fail(p, f"holds {len(idx)} indices, not a multiple of the {width} inputs "
                             "per corner; the file may be truncated")
            idx = idx[voff::width]
            bad = (idx < 0) | (idx >= len(positions))
            if np.any(bad):
                self.fail(p, f"vertex index {int(idx[np.argmax(bad)])} is outside the "
                             f"{len(positions)} positions of its source")
            return idx

        kind = prim.tag
        ps = prim.findall("p")
        if prim.find("ph") is not None:
            self.fail(prim.find("ph"), "polygons with holes are not supported; export the mesh "
                                       "triangulated")
        tris = []
        if kind == "triangles":
            idx = np.concatenate([corners(p) for p in ps]) if ps else np.zeros(0, np.int64)
            if len(idx) % 3:
                self.fail(prim, f"has {len(idx)} corners, not a multiple of 3")
            count = self.int_attr(prim, "count", len(idx) // 3)
            if count != len(idx) // 3:
                self.fail(prim, f"count={count} but <p> holds {len(idx) // 3} triangles; the file "
                                "may be truncated")
            tris.append(idx.reshape(-1, 3))
        elif kind == "polylist":
            vc = prim.find("vcount")
            sizes = (self.numbers(vc, np.int64, "a polygon size") if vc is not None
                     else np.zeros(0, np.int64))
            idx = corners(ps[0]) if ps else np.zeros(0, np.int64)
            if np.any(sizes < 0) or sizes.sum() != len(idx):
                self.fail(prim, f"<vcount> adds up to {int(sizes.sum())} corners but <p> holds "
                                f"{len(idx)}; the file may be truncated")
            start = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            for n in np.unique(sizes[sizes >= 3]):
                s = start[sizes == n]
                for k in range(1, n - 1):  # fan from each polygon's first corner
                    tris.append(np.stack([idx[s], idx[s + k], idx[s + k + 1]], axis=1))
        else:
            for p in ps:
                idx = corners(p)
                n = len(idx)
                if n < 3:
                    continue
                k = np.arange(1, n - 1)
                if kind == "tristrips":
                    a, b, c = idx[k - 1], idx[k], idx[k + 1]
                    odd = (k - 1) % 2 == 1  # every other triangle of a strip is flipped
                    a, b = np.where(odd, b, a), np.where(odd, a, b)
                    tris.append(np.stack([a, b, c], axis=1))
                else:  # polygons and trifans: fans from the first corner
                    tris.append(np.stack([np.full(n - 2, idx[0]), idx[k], idx[k + 1]], axis=1))
        tris = np.concatenate(tris) if tris else np.zeros((0, 3), np.int64)
        return tris, positions

    def add_geometry(self, inst, transform):
        """Triangle corners of an <instance_geometry>, in scene coordinates."""
        geometry = self.ref(inst, "url", "geometry")
        mesh = geometry.find("mesh")
        if mesh is None:
            kinds = ", ".join(f"<{c.tag}>" for c in geometry.children) or "nothing"
            self.fail(geometry, f"holds {kinds} instead of a <mesh>; only polygon meshes are "
                                "supported: export the geometry as a mesh")
        for prim in mesh.children:
            if prim.tag in _SURFACES:
                tris, positions = self.primitive(prim)
                if len(tris):
                    self.points.append(positions @ transform[:3, :3].T + transform[:3, 3])
                    self.tris.append(tris + self.npoints)
                    self.npoints += len(positions)

    # -- scene --------------------------------------------------------------------------------
    def local_transform(self, node):
        """4x4 transform of a <node>: its transform elements multiplied in document order."""
        T = np.eye(4)
        for e in node.children:
            if e.tag not in ("matrix", "translate", "rotate", "scale", "lookat", "skew"):
                continue
            if e.tag in ("lookat", "skew"):
                self.fail(e, f"<{e.tag}> transforms are not supported; bake the node's "
                             "transform into a <matrix>")
            v = self.numbers(e, np.float64, "a number")
            n = {"matrix": 16, "translate": 3, "rotate": 4, "scale": 3}[e.tag]
            if len(v) != n:
                self.fail(e, f"needs {n} numbers, got {len(v)}")
            M = np.eye(4)
            if e.tag == "matrix":
                M = v.reshape(4, 4)
            elif e.tag == "translate":
                M[:3, 3] = v
            elif e.tag == "scale":
                M[:3, :3] = np.diag(v)
            else:
                M[:3, :3] = _axis_angle(v[:3], np.deg2rad(v[3]))
            T = T @ M
        return T

    def walk(self, node, parent, depth=0):
        if depth > 256:
            self.fail(node, "the node hierarchy is deeper than 256 levels (an <instance_node> "
                            "cycle?)")
        T = parent @ self.local_transform(node)
        for e in node.children:
            if e.tag == "instance_geometry":
                self.add_geometry(e, T)
            elif e.tag == "node":
                self.walk(e, T, depth + 1)
            elif e.tag == "instance_node":
                self.walk(self.ref(e, "url", "node"), T, depth + 1)
            elif e.tag == "instance_controller":
                self.fail(e, "skinned or morphed geometry (<instance_controller>) is not "
                             "supported; export the mesh without its controller")

    def read(self):
        scene = None
        inst = next(self.root.iter("instance_visual_scene"), None)
        if inst is not None:
            scene = self.ref(inst, "url", "visual_scene")
        else:
            scene = next(self.root.iter("visual_scene"), None)
        if scene is None:
            self.fail(self.root, "has no <visual_scene>, so no geometry is placed; export the "
                                 "file with its scene")
        for node in scene.findall("node"):
            self.walk(node, np.eye(4))
        if not self.tris:
            self.fail(scene, "places no triangles (only <triangles>, <polylist>, <polygons>, "
                             "<tristrips> and <trifans> have a surface)")
        points = np.concatenate(self.points)
        if not np.all(np.isfinite(points)):
            self.fail(scene, "a node transform makes a vertex coordinate not finite")
        return _weld(points, np.concatenate(self.tris))


def _weld(points, tris):
    """Vertices and faces with equal single-precision points merged and unused points dropped.

    Vertices are numbered by their first appearance among the triangles' corners (as the STL
    reader numbers them); -0.0 and 0.0 are equal.
    """
    points = np.ascontiguousarray(points, dtype=np.float32).reshape(-1, 3) + np.float32(0.0)
    first_point, key = equal_rows32(points)
    corners = key[tris.ravel()]
    used, first_corner = np.unique(corners, return_index=True)
    order = used[np.argsort(first_corner, kind="stable")]
    rank = np.empty(len(first_point), dtype=np.int64)
    rank[order] = np.arange(len(order))
    vertices = points[first_point[order]].astype(np.float64)
    return vertices, rank[corners].reshape(-1, 3).astype(np.int32)


def _parses(word, dtype):
    try:
        dtype(word)
    except ValueError:
        return False
    return True


def _axis_angle(axis, angle):
    """Rotation matrix about `axis` (normalized here) by `angle` radians (Rodrigues)."""
    n = np.linalg.norm(axis)
    if n == 0.0:
        return np.eye(3)
    x, y, z = axis / n
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def load_collada(path, scale=None):
    """Read the triangles of a COLLADA `.dae` file's scene (see the module docstring).

    Args:
        path: file name (str or Path).
        scale: None, a number, or three numbers multiplying x, y, z after the scene's node
            transforms (a URDF `<mesh scale>`); a negative product flips the winding.

    Returns:
        vertices: (n, 3) float64 array (single-precision values).
        faces: (m, 3) int32 array of vertex indices, m >= 1.

    Raises:
        ModelError: the file cannot be read, is not well-formed XML (a truncated file), is not
            COLLADA, has references that lead nowhere, indices outside their arrays, counts
            that disagree with the data, or places no triangles; the message names the file,
            line and element.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelError(f"{path}: mesh file not found; check the path") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read mesh file ({exc.strerror})") from None
    vertices, faces = _Reader(path, _parse(path, data)).read()
    if scale is not None:
        vertices, faces = apply_scale(vertices, faces, scale, str(path))
    return vertices, faces
