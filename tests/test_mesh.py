"""Mesh files and MuJoCo's mesh processing: parity with MuJoCo 4.0's compiler.

Each case compiles the same mesh with MuJoCo (inline `<mesh vertex face>` or a file) on a
body whose only geom is the mesh, and compares mass, the full inertia tensor, the compiled
geom frame and the mesh's own data with what `process_mesh` gives.
"""

import struct
import warnings

import mujoco
import numpy as np
import pytest

from jointspace.errors import JointspaceWarning, ModelError
from jointspace.io.frames import quat_mul, quat_to_mat
from jointspace.io.mesh import ProcessedMesh, load_mesh, process_mesh, read_mesh

# Relative tolerance of the MuJoCo comparisons: the brief's bar; the float arithmetic mirrors
# MuJoCo's, so most quantities agree to the last bit.
RTOL = 1e-9

DENSITY = 1000.0  # MuJoCo's default geom density

GEOM_POS = np.array([0.1, -0.2, 0.3])
GEOM_QUAT = np.array([0.8, 0.2, -0.4, 0.4]) / np.linalg.norm([0.8, 0.2, -0.4, 0.4])


# ------------------------------------------------------------------------------------------
# meshes


def box_mesh(half):
    """Box with half sizes `half`, 8 vertices, 12 outward triangles."""
    hx, hy, hz = half
    v = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    f = [(a, b, c) for a, b, c, d in quads] + [(a, c, d) for a, b, c, d in quads]
    return v + np.array([0.3, -0.1, 0.2]), np.array(f)


def tetrahedron_mesh():
    """Corner tetrahedron: its inertia has two equal principal moments."""
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    return v, np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def random_polytope(rng, n=30):
    """Convex hull of points on a rotated, translated ellipsoid; float32-exact vertices."""
    from scipy.spatial import ConvexHull

    p = rng.normal(size=(n, 3))
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    p *= [0.3, 0.2, 0.1]
    q = rng.normal(size=4)
    p = p @ quat_to_mat(q / np.linalg.norm(q)).T + rng.uniform(-1, 1, 3)
    p = p.astype(np.float32).astype(np.float64)
    hull = ConvexHull(p)
    f = hull.simplices.copy()
    a, b, c = p[f[:, 0]], p[f[:, 1]], p[f[:, 2]]
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    f[inward] = f[inward][:, [0, 2, 1]]
    return p, f


def l_shape_mesh():
    """An L-shaped prism (non-convex): [0,2]x[0,1] ∪ [0,1]x[0,3] in xy, z in [0, 0.5]."""
    outline = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 3), (0, 3)]
    v = np.array([(x, y, 0.0) for x, y in outline] + [(x, y, 0.5) for x, y in outline])
    cap = [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 5)]
    f = [(a, c, b) for a, b, c in cap] + [(a + 6, b + 6, c + 6) for a, b, c in cap]
    for i in range(6):
        j = (i + 1) % 6
        f += [(i, j, j + 6), (i, j + 6, i + 6)]
    return v, np.array(f)


# ------------------------------------------------------------------------------------------
# MuJoCo side


def _numbers(a):
    return " ".join(repr(float(x)) for x in np.ravel(a))


def compile_mujoco(asset, scale=None):
    """MuJoCo model with one free body whose only geom is mesh 'm' (asset attributes given)."""
    scale_attr = f' scale="{_numbers(scale)}"' if scale is not None else ""
    xml = f"""
    <mujoco>
      <asset><mesh name="m" {asset}{scale_attr}/></asset>
      <worldbody>
        <body pos="0.5 0 1"><freejoint/>
          <geom type="mesh" mesh="m" pos="{_numbers(GEOM_POS)}" quat="{_numbers(GEOM_QUAT)}"/>
        </body>
      </worldbody>
    </mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)


def inline_asset(v, f=None):
    """MJCF mesh attributes holding vertices (and faces) inline."""
    faces = f' face="{" ".join(str(int(i)) for i in np.ravel(f))}"' if f is not None else ""
    return f'vertex="{_numbers(v)}"{faces}'


def body_inertia_tensor(mjm):
    """Full inertia tensor of body 1 about its com, in body axes."""
    R = quat_to_mat(mjm.body_iquat[1])
    return R @ np.diag(mjm.body_inertia[1]) @ R.T


def assert_matches_mujoco(pm, mjm):
    """Mass, com, inertia tensor, geom frame and mesh data agree with a compiled MuJoCo model."""
    np.testing.assert_allclose(DENSITY * pm.volume, mjm.body_mass[1], rtol=RTOL)

    # the geom frame absorbs the mesh frame: pos_g + R(quat_g) pos, quat_g ⊗ quat
    geom_pos = GEOM_POS + quat_to_mat(GEOM_QUAT) @ pm.pos
    geom_quat = quat_mul(GEOM_QUAT, pm.quat)
    scale = np.max(np.abs(pm.vertices))
    np.testing.assert_allclose(geom_pos, mjm.geom_pos[0], rtol=RTOL, atol=RTOL * scale)
    np.testing.assert_allclose(
        quat_to_mat(geom_quat), quat_to_mat(mjm.geom_quat[0]), rtol=RTOL, atol=RTOL
    )
    np.testing.assert_allclose(pm.pos, mjm.mesh_pos[0], rtol=RTOL, atol=RTOL * scale)
    np.testing.assert_allclose(
        quat_to_mat(pm.quat), quat_to_mat(mjm.mesh_quat[0]), rtol=RTOL, atol=RTOL
    )
    np.testing.assert_allclose(geom_pos, mjm.body_ipos[1], rtol=RTOL, atol=RTOL * scale)

    R = quat_to_mat(geom_quat)
    ours = R @ np.diag(DENSITY * pm.inertia) @ R.T
    theirs = body_inertia_tensor(mjm)
    np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=RTOL * np.max(np.abs(theirs)))

    # the mesh data itself: vertices in the inertial frame, faces, bounds
    np.testing.assert_allclose(pm.vertices, mjm.mesh_vert, rtol=RTOL, atol=RTOL * scale)
    np.testing.assert_allclose(pm.rbound, mjm.geom_rbound[0], rtol=RTOL)
    np.testing.assert_allclose(
        np.max(np.abs(pm.aabb), axis=0), mjm.geom_size[0], rtol=RTOL, atol=RTOL * scale
    )


# ------------------------------------------------------------------------------------------
# parity with MuJoCo


@pytest.mark.parametrize("half", [(0.1, 0.2, 0.3), (0.25, 0.25, 0.25)], ids=["box", "cube"])
def test_box_matches_mujoco(half):
    """A box with distinct sides, and a cube whose principal axes MuJoCo picks by rounding."""
    v, f = box_mesh(half)
    pm = process_mesh(v, f, name="m")
    assert_matches_mujoco(pm, compile_mujoco(inline_asset(v, f)))
    np.testing.assert_allclose(pm.volume, 8 * np.prod(half), rtol=1e-6)  # float32 vertices


def test_tetrahedron_matches_mujoco():
    """Corner tetrahedron: MuJoCo parity, and the exact volume, com and moments."""
    v, f = tetrahedron_mesh()
    pm = process_mesh(v, f)
    assert_matches_mujoco(pm, compile_mujoco(inline_asset(v, f)))
    assert pm.volume == pytest.approx(1 / 6, rel=1e-15)
    np.testing.assert_allclose(pm.pos, [0.25, 0.25, 0.25], rtol=1e-15)
    # exact moments of the corner tetrahedron about its com (unit density)
    np.testing.assert_allclose(np.sort(pm.inertia), [1 / 96, 1 / 96, 1 / 60], rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_polytope_matches_mujoco(seed):
    """Seeded convex polytopes in general position and orientation."""
    v, f = random_polytope(np.random.default_rng(seed))
    pm = process_mesh(v, f)
    assert_matches_mujoco(pm, compile_mujoco(inline_asset(v, f)))


@pytest.mark.parametrize("seed", [3, 4])
def test_vertices_only_uses_convex_hull(seed):
    """A mesh given without faces takes its convex hull's faces, as MuJoCo does."""
    rng = np.random.default_rng(seed)
    v, _ = random_polytope(rng)
    interior = (0.2 * v + 0.8 * v.mean(axis=0)).astype(np.float32).astype(np.float64)
    v = np.concatenate([v, interior[:5]])
    pm = process_mesh(v, np.zeros((0, 3), dtype=int))
    assert_matches_mujoco(pm, compile_mujoco(inline_asset(v)))
    assert len(pm.hull_vertices) == len(v) - 5


def test_l_shape_matches_mujoco_legacy_volume():
    """Non-convex mesh: MuJoCo's legacy rule counts every pyramid positive, and so do we."""
    v, f = l_shape_mesh()
    pm = process_mesh(v, f)
    assert_matches_mujoco(pm, compile_mujoco(inline_asset(v, f)))
    # the L's com sees one inner face from outside, so the legacy volume exceeds the solid's
    assert pm.volume > 2.0 * 1.0001


def test_scale_matches_mujoco():
    """Scale applies after single-precision rounding; a mirroring scale flips the winding."""
    v, f = random_polytope(np.random.default_rng(5))
    for scale in ([1.5, 0.7, 2.0], [-1.0, 0.5, 1.2]):
        pm = process_mesh(v, f, scale=scale)
        assert_matches_mujoco(pm, compile_mujoco(inline_asset(v, f), scale=scale))


def test_open_mesh_warns_and_matches_mujoco():
    """MuJoCo accepts a surface with a hole under legacy inertia; we warn and agree with it."""
    v, f = box_mesh((0.1, 0.2, 0.3))
    with pytest.warns(JointspaceWarning, match="not closed"):
        pm = process_mesh(v, f[1:], name="holey", source="robot.xml:7")
    assert_matches_mujoco(pm, compile_mujoco(inline_asset(v, f[1:])))


def test_inconsistent_winding_warns():
    """A face wound the wrong way is reported (MuJoCo's legacy rule ignores winding)."""
    v, f = box_mesh((0.1, 0.2, 0.3))
    f = f.copy()
    f[0] = f[0, [0, 2, 1]]
    with pytest.warns(JointspaceWarning, match="consistently oriented"):
        process_mesh(v, f)


@pytest.mark.parametrize("case", ["box", "cube", "tetrahedron", "polytope", "l_shape"])
def test_bitwise_agreement(case):
    """Volume, mesh frame and vertices equal MuJoCo's to the last bit.

    The sums run in MuJoCo's order and the Jacobi iteration is MuJoCo's, so a change in the
    arithmetic (a numpy sum, a library eigen-solver) shows up here first; for meshes with
    equal principal moments (cube, tetrahedron) it would change the axes MuJoCo picks.
    """
    v, f = {
        "box": lambda: box_mesh((0.1, 0.2, 0.3)),
        "cube": lambda: box_mesh((0.25, 0.25, 0.25)),
        "tetrahedron": tetrahedron_mesh,
        "polytope": lambda: random_polytope(np.random.default_rng(8)),
        "l_shape": l_shape_mesh,
    }[case]()
    pm = process_mesh(v, f)
    mjm = compile_mujoco(inline_asset(v, f))
    assert DENSITY * pm.volume == mjm.body_mass[1]
    np.testing.assert_array_equal(pm.pos, mjm.mesh_pos[0])
    np.testing.assert_array_equal(pm.quat, mjm.mesh_quat[0])
    np.testing.assert_array_equal(pm.vertices, mjm.mesh_vert)
    assert pm.rbound == mjm.geom_rbound[0]


def test_processed_mesh_fields():
    """Shapes, ordering of moments, frame round trip, outward hull, bounding box."""
    v, f = random_polytope(np.random.default_rng(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pm = process_mesh(v, f, name="p", source="a.xml:3")
    assert isinstance(pm, ProcessedMesh)
    assert pm.vertices.shape == v.shape and pm.vertices.dtype == np.float64
    assert pm.faces.dtype == np.int32 and np.array_equal(pm.faces, f)
    assert pm.inertia[0] >= pm.inertia[1] >= pm.inertia[2] > 0
    # the vertices sit in the inertial frame: mapping back recovers the input
    back = pm.vertices @ quat_to_mat(pm.quat).T + pm.pos
    np.testing.assert_allclose(back, v, atol=1e-6 * np.max(np.abs(v)))
    # the hull of a convex polytope is the polytope; its faces point outward
    assert len(pm.hull_vertices) == len(v)
    hv, hf = pm.hull_vertices, pm.hull_faces
    centroid = hv.mean(axis=0)
    a, b, c = hv[hf[:, 0]], hv[hf[:, 1]], hv[hf[:, 2]]
    assert np.all(np.einsum("ij,ij->i", np.cross(b - a, c - a), a - centroid) > 0)
    assert np.all(pm.aabb[0] <= pm.vertices.min(axis=0) + 1e-7)
    assert np.all(pm.aabb[1] >= pm.vertices.max(axis=0) - 1e-7)


# ------------------------------------------------------------------------------------------
# files


def write_binary_stl(path, v, f):
    """Binary STL: 80-byte header, count, 50-byte records."""
    with open(path, "wb") as fh:
        fh.write(b"binary stl written by test_mesh".ljust(80, b"\0"))
        fh.write(struct.pack("<I", len(f)))
        for tri in f:
            a, b, c = v[tri]
            n = np.cross(b - a, c - a)
            fh.write(struct.pack("<3f", *(n / np.linalg.norm(n))))
            for corner in (a, b, c):
                fh.write(struct.pack("<3f", *corner))
            fh.write(b"\0\0")


def write_ascii_stl(path, v, f):
    """ASCII STL with the float32 values of the vertices."""
    lines = ["solid test"]
    for tri in f:
        lines += ["  facet normal 0 0 0", "    outer loop"]
        lines += [f"      vertex {_numbers(np.float32(v[i]))}" for i in tri]
        lines += ["    endloop", "  endfacet"]
    lines.append("endsolid test")
    path.write_text("\n".join(lines) + "\n")


def write_obj(path, v, polygons, corner="{}"):
    """OBJ with `v` lines and `f` lines whose corners are formatted by `corner`."""
    lines = ["# test mesh", "o thing"] + [f"v {_numbers(p)}" for p in v]
    lines += ["f " + " ".join(corner.format(i + 1) for i in poly) for poly in polygons]
    path.write_text("\n".join(lines) + "\n")


def test_stl_binary_and_ascii_agree_and_match_mujoco(tmp_path):
    """Both STL flavours read alike; corners merge as MuJoCo's reader merges them."""
    v, f = random_polytope(np.random.default_rng(7))
    write_binary_stl(tmp_path / "p.stl", v, f)
    write_ascii_stl(tmp_path / "pa.stl", v, f)
    vb, fb = load_mesh(tmp_path / "p.stl")
    va, fa = load_mesh(str(tmp_path / "pa.stl"))
    np.testing.assert_array_equal(vb, va)
    np.testing.assert_array_equal(fb, fa)
    # corners are merged: every vertex once, numbered by first appearance
    assert len(vb) == len(v)
    first_seen = list(dict.fromkeys(f.ravel()))
    np.testing.assert_array_equal(vb, v[first_seen])
    np.testing.assert_array_equal(vb[fb], v[f])

    mjm = compile_mujoco(f'file="{tmp_path / "p.stl"}"')
    assert mjm.nmeshvert == len(vb)
    np.testing.assert_array_equal(mjm.mesh_face, fb)
    assert_matches_mujoco(process_mesh(vb, fb), mjm)


def test_obj_quads_match_mujoco(tmp_path):
    """Quads split along their shorter diagonal, as MuJoCo's OBJ reader does."""
    v, _ = box_mesh((0.1, 0.2, 0.3))
    v = v.copy()
    v[7] += [0.02, 0.05, -0.03]  # makes three quads non-planar: the diagonal matters
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    write_obj(tmp_path / "box.obj", v, quads)
    vo, fo = load_mesh(tmp_path / "box.obj")
    mjm = compile_mujoco(f'file="{tmp_path / "box.obj"}"')
    np.testing.assert_array_equal(fo, mjm.mesh_face)
    assert_matches_mujoco(process_mesh(vo, fo), mjm)


def test_obj_index_forms_and_polygons(tmp_path):
    """v/vt/vn and v//vn corners, negative indices, and a fan-split pentagon."""
    v, _ = box_mesh((0.1, 0.2, 0.3))
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    write_obj(tmp_path / "plain.obj", v, quads)
    write_obj(tmp_path / "slash.obj", v, quads, corner="{0}/{0}/{0}")
    write_obj(tmp_path / "normals.obj", v, quads, corner="{}//1")
    plain = load_mesh(tmp_path / "plain.obj")
    for name in ("slash.obj", "normals.obj"):
        other = load_mesh(tmp_path / name)
        np.testing.assert_array_equal(other[0], plain[0])
        np.testing.assert_array_equal(other[1], plain[1])
    # negative indices count back from the last vertex read
    lines = [f"v {_numbers(p)}" for p in v]
    lines += ["f " + " ".join(str(i - 8) for i in quad) for quad in quads]
    (tmp_path / "neg.obj").write_text("\n".join(lines) + "\n")
    neg = load_mesh(tmp_path / "neg.obj")
    np.testing.assert_array_equal(neg[1], plain[1])
    # a pentagon is a fan of three triangles
    lines = [f"v {x} {y} 0" for x, y in [(0, 0), (1, 0), (1.5, 1), (0.5, 1.5), (-0.5, 1)]]
    (tmp_path / "penta.obj").write_text("\n".join(lines + ["f 1 2 3 4 5"]) + "\n")
    np.testing.assert_array_equal(
        load_mesh(tmp_path / "penta.obj")[1], [[0, 1, 2], [0, 2, 3], [0, 3, 4]]
    )


def test_read_mesh_counts_obj_normals_as_mujoco(tmp_path):
    """read_mesh's nfilenormal: an OBJ's `vn` records (not commented ones), MuJoCo's normalnum.

    The tactile sensor's refusal of OBJ taxel frames rests on this count, taken in the one
    read of the file that gives the vertices and faces.
    """
    v, _ = box_mesh((0.1, 0.2, 0.3))
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    for nvn in (1, 5, 24):
        lines = ["# vn 0 0 1"] + [f"v {_numbers(p)}" for p in v]
        lines += ["vn 0 0 1  # a normal"] * nvn + ["  # vn 1 0 0"]
        lines += ["f " + " ".join(f"{i + 1}//{min(i + 1, nvn)}" for i in q) for q in quads]
        path = tmp_path / f"n{nvn}.obj"  # one name per file: MuJoCo caches assets by name
        path.write_text("\n".join(lines) + "\n")
        vn, fn, nfilenormal = read_mesh(path)
        assert nfilenormal == compile_mujoco(f'file="{path}"').mesh_normalnum[0] == nvn
        lv, lf = load_mesh(path)
        np.testing.assert_array_equal(vn, lv)
        np.testing.assert_array_equal(fn, lf)
    write_obj(tmp_path / "plain.obj", v, quads)
    write_binary_stl(tmp_path / "p.stl", *random_polytope(np.random.default_rng(7)))
    assert read_mesh(tmp_path / "plain.obj")[2] == read_mesh(tmp_path / "p.stl")[2] == 0


def test_load_mesh_scale(tmp_path):
    """load_mesh scales coordinates and keeps faces outward under a mirror."""
    v, f = box_mesh((0.1, 0.2, 0.3))
    write_obj(tmp_path / "b.obj", v, f)
    v1, f1 = load_mesh(tmp_path / "b.obj")
    v2, f2 = load_mesh(tmp_path / "b.obj", scale=2.0)
    np.testing.assert_array_equal(v2, 2 * v1)
    np.testing.assert_array_equal(f2, f1)
    v3, f3 = load_mesh(tmp_path / "b.obj", scale=[1, -1, 1])
    np.testing.assert_array_equal(v3, v1 * [1, -1, 1])
    np.testing.assert_array_equal(f3, f1[:, [0, 2, 1]])  # mirrored: winding flipped


# ------------------------------------------------------------------------------------------
# errors


def test_missing_file(tmp_path):
    """A missing file is named in the error."""
    with pytest.raises(ModelError, match=r"nothere\.stl: mesh file not found"):
        load_mesh(tmp_path / "nothere.stl")


@pytest.mark.parametrize("ext", [".dae", ".ply", ""])
def test_unsupported_extension(tmp_path, ext):
    """Formats other than STL and OBJ are refused with the supported list."""
    path = tmp_path / f"m{ext}"
    path.write_text("whatever")
    with pytest.raises(ModelError, match=r"unsupported mesh format .*\.stl, \.obj") as err:
        load_mesh(path)
    assert str(path) in str(err.value)


def test_empty_meshes(tmp_path):
    """Files without faces are refused."""
    (tmp_path / "v.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\n")
    with pytest.raises(ModelError, match=r"v\.obj: mesh has no faces"):
        load_mesh(tmp_path / "v.obj")
    (tmp_path / "e.stl").write_bytes(b"\0" * 80 + struct.pack("<I", 0))
    with pytest.raises(ModelError, match=r"e\.stl: mesh has no faces"):
        load_mesh(tmp_path / "e.stl")


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("v 0 0 0\nv 1 0 zero\n", 2, "cannot read vertex coordinates"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", 4, "at least 3 vertices"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", 4, "index 4 does not name"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n", 4, "index 0 does not name"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 -2 -4\n", 4, "index -4 does not name"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 b/2 3\n", 4, "cannot read face vertex index"),
    ],
)
def test_obj_parse_errors_name_the_line(tmp_path, text, line, message):
    """Bad OBJ records are reported with file and line."""
    (tmp_path / "bad.obj").write_text(text)
    with pytest.raises(ModelError, match=rf"bad\.obj:{line}: .*{message}"):
        load_mesh(tmp_path / "bad.obj")


@pytest.mark.parametrize(
    "body, line, message",
    [
        ("facet normal 0 0 1\nouter loop\nvertex 0 0\n", 4, "expected 'vertex x y z'"),
        ("facet normal 0 0 1\nouter loop\nvertex 0 0 q\n", 4, "cannot read coordinates"),
        ("facet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\n", 2,
         "facet has 2 vertices"),
        ("vertex 0 0 0\n", 2, "'vertex' outside a facet"),
        ("facet normal 0 0 1\nbanana\n", 3, "unexpected 'banana'"),
    ],
)
def test_ascii_stl_errors_name_the_line(tmp_path, body, line, message):
    """Bad ASCII STL records are reported with file and line."""
    (tmp_path / "bad.stl").write_text("solid x\n" + body + "endsolid x\n")
    with pytest.raises(ModelError, match=rf"bad\.stl:{line}: .*{message}"):
        load_mesh(tmp_path / "bad.stl")


def test_truncated_binary_stl(tmp_path):
    """A binary STL whose size does not match its face count is refused."""
    v, f = tetrahedron_mesh()
    write_binary_stl(tmp_path / "t.stl", v, f)
    data = (tmp_path / "t.stl").read_bytes()
    (tmp_path / "t.stl").write_bytes(data[:-7])
    with pytest.raises(ModelError, match=r"t\.stl: not a valid STL file"):
        load_mesh(tmp_path / "t.stl")


def test_nonfinite_vertex(tmp_path):
    """NaN coordinates are refused, naming the vertex."""
    (tmp_path / "n.obj").write_text("v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n")
    with pytest.raises(ModelError, match=r"n\.obj: vertex 1 .* not finite"):
        load_mesh(tmp_path / "n.obj")


def test_process_errors_name_mesh_and_source():
    """process_mesh errors name the source and the mesh."""
    v, f = tetrahedron_mesh()
    where = r"robot\.xml:12: mesh 'flat'"
    flat = v * [1, 1, 0]
    with pytest.raises(ModelError, match=where + r": mesh volume is too small"):
        process_mesh(flat, f, name="flat", source="robot.xml:12")
    with pytest.raises(ModelError, match=where + r": at least 4 vertices"):
        process_mesh(v[:3], f[:1], name="flat", source="robot.xml:12")
    with pytest.raises(ModelError, match=where + r": face 1 uses vertex index 9"):
        process_mesh(v, np.where(f == 3, 9, f), name="flat", source="robot.xml:12")
    with pytest.raises(ModelError, match=where + r": vertices must have shape"):
        process_mesh(v[:, :2], f, name="flat", source="robot.xml:12")
    with pytest.raises(ModelError, match=where + r": cannot compute the convex hull"):
        process_mesh(flat, np.zeros((0, 3), dtype=int), name="flat", source="robot.xml:12")
    with pytest.raises(ModelError, match=where + r": mesh scale"):
        process_mesh(v, f, name="flat", source="robot.xml:12", scale=[1, 0, 1])


def test_mujoco_rejects_what_we_reject():
    """The flat mesh we refuse is refused by MuJoCo too (same rule, same threshold)."""
    v, f = tetrahedron_mesh()
    xml = f"""
    <mujoco>
      <asset><mesh name="m" {inline_asset(v * [1, 1, 0], f)}/></asset>
      <worldbody><body><freejoint/><geom type="mesh" mesh="m" contype="0" conaffinity="0"/>
      </body></worldbody>
    </mujoco>"""
    with pytest.raises(ValueError, match="volume is too small"):
        mujoco.MjModel.from_xml_string(xml)


# ------------------------------------------------------------------------------------------
# collision polygons: MuJoCo 4.0's mesh_polyvert and mesh_polynormal, bit for bit


def hull_points(seed):
    """Seeded point clouds: on a sphere, inside an ellipsoid, or on a coarse grid.

    The grid's points repeat and its coplanar faces merge into polygons.
    """
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(int(rng.integers(8, 300)), 3)) * np.array([0.12, 0.09, 0.1])
    if seed % 3 == 1:
        p *= 0.1 / np.linalg.norm(p, axis=1, keepdims=True)
    elif seed % 3 == 2:
        p = np.round(p * 20) / 20
    return p


@pytest.mark.parametrize("seed", range(9))
@pytest.mark.parametrize("frame", ["plain", "refpos-refquat-scale", "mirror"])
def test_hull_polygons_equal_mujocos(seed, frame):
    """The collision hull's polygons come out as MuJoCo 4.0's.

    The same polygons in the same order (its compiler's unordered_map walk), each loop from
    the same vertex, and the same normals to the last bit (Newell's normal of the unrounded
    vertices); a mirroring scale reverses the loops.
    """
    import jointspace as js

    p = hull_points(seed)
    extra = {"plain": "", "mirror": ' scale="-1 1.2 0.9"',
             "refpos-refquat-scale": ' refpos="0.01 -0.02 0.03" refquat="0.9 0.1 -0.3 0.2"'
                                     ' scale="1.5 0.8 1.1"'}[frame]
    xml = (f'<mujoco><asset><mesh name="m" {inline_asset(p)}{extra}/></asset>'
           '<worldbody><geom type="mesh" mesh="m"/></worldbody></mujoco>')
    mjm = mujoco.MjModel.from_xml_string(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = js.load_string(xml)
    mv, hv = mjm.mesh_vert[:mjm.mesh_vertnum[0]], np.asarray(m.hull_vert)
    assert m.nhullpoly == mjm.mesh_polynum[0]
    for q in range(m.nhullpoly):
        a, k = mjm.mesh_polyvertadr[q], mjm.mesh_polyvertnum[q]
        b, n = m.hullpoly_vertadr[q], m.hullpoly_vertnum[q]
        # compared by position: repeated points make vertex indices ambiguous
        np.testing.assert_array_equal(hv[m.hullpoly_vert[b:b + n]],
                                      mv[mjm.mesh_polyvert[a:a + k]], err_msg=f"polygon {q}")
    np.testing.assert_array_equal(np.asarray(m.hullpoly_normal), mjm.mesh_polynormal)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hull_faces_in_mujocos_order(seed):
    """A mesh given as points takes qhull's faces in MuJoCo's order and first vertices.

    MuJoCo swaps the first two vertices of a facet that qhull orients inward.
    """
    p = hull_points(3 * seed + 1)
    pm = process_mesh(p, np.zeros((0, 3), dtype=int))
    mjm = compile_mujoco(inline_asset(p))
    np.testing.assert_array_equal(pm.faces, mjm.mesh_face[:mjm.mesh_facenum[0]])
