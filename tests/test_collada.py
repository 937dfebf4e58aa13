"""COLLADA reader: vertices as Pinocchio's loader (coal's MeshLoader, assimp) reads them; errors.

coal is the reference: `coal.MeshLoader().load(path, scale)` is what `pin.buildGeomFromUrdf`
calls for a `.dae` mesh. Its vertices are compared as sets (assimp merges and reorders them);
its triangles are not a reference: for a geometry with several `<triangles>` blocks, coal's
triangles of the later blocks do not match the file (ur5's base.dae).
"""

import warnings

import numpy as np
import pytest

from jointspace.errors import JointspaceWarning, ModelError
from jointspace.io.collada import load_collada
from jointspace.io.mesh import process_mesh
from tests._util import erd_robots_dir

# both sides hold coordinates in single precision, ours rounded after the node transforms in
# double, assimp's after transforms in single: a few float32 ulps of the largest coordinate
F32_TOL = 4 * float(np.finfo(np.float32).eps)
EXACT_TOL = 1e-12  # hand-computed coordinates of small integers and exact rotations



ROBOTS = erd_robots_dir()

# a unit cube: 8 corners, 6 outward quads (counter-clockwise seen from outside)
CUBE_POS = "0 0 0 1 0 0 1 1 0 0 1 0 0 0 1 1 0 1 1 1 1 0 1 1"
CUBE_QUADS = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]


def _dae(primitives, nodes, positions=CUBE_POS, stride=3, offset=0, asset="", extra=""):
    """A COLLADA document with one geometry 'g' whose positions source has the given layout."""
    values = np.array(positions.split(), dtype=float).reshape(-1, 3)
    n = len(values)
    padded = np.zeros((n, stride))
    padded[:, :3] = values
    array = " ".join(["9"] * offset + [f"{x:g}" for x in padded.ravel()])
    return f"""<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset>{asset}</asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="pos"><float_array id="pos-array" count="{n * stride + offset}">{array}</float_array>
      <technique_common><accessor source="#pos-array" count="{n}" stride="{stride}"
        offset="{offset}"><param name="X" type="float"/><param name="Y" type="float"/>
        <param name="Z" type="float"/></accessor></technique_common></source>
    <source id="nrm"><float_array id="nrm-array" count="3">0 0 1</float_array>
      <technique_common><accessor source="#nrm-array" count="1" stride="3"/></technique_common>
    </source>
    <vertices id="verts"><input semantic="POSITION" source="#pos"/></vertices>
    {primitives}
  </mesh></geometry></library_geometries>
  {extra}
  <library_visual_scenes><visual_scene id="scene">{nodes}</visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>"""


INST = '<instance_geometry url="#g"/>'
NODE = f'<node id="n">{INST}</node>'
VN = ('<input semantic="VERTEX" source="#verts" offset="0"/>'
      '<input semantic="NORMAL" source="#nrm" offset="1"/>')


def _with_normals(indices):
    return " ".join(f"{i} 0" for i in indices)


def _triangles():
    tris = [i for q in CUBE_QUADS for i in (q[0], q[1], q[2], q[0], q[2], q[3])]
    return f'<triangles count="12">{VN}<p>{_with_normals(tris)}</p></triangles>'


def _polylist():
    corners = [i for q in CUBE_QUADS for i in q]
    return (f'<polylist count="6">{VN}<vcount>{" ".join(["4"] * 6)}</vcount>'
            f'<p>{_with_normals(corners)}</p></polylist>')


def _polygons():
    ps = "".join(f"<p>{_with_normals(q)}</p>" for q in CUBE_QUADS)
    return f'<polygons count="6">{VN}{ps}</polygons>'


def _strips_and_fans():
    # the bottom and top as fans, the four sides as one strip around the cube
    fans = "".join(f"<p>{_with_normals(q)}</p>" for q in CUBE_QUADS[:2])
    strip = [4, 0, 5, 1, 6, 2, 7, 3, 4, 0]
    return (f'<trifans count="2">{VN}{fans}</trifans>'
            f'<tristrips count="1">{VN}<p>{_with_normals(strip)}</p></tristrips>'
            f'<lines count="1">{VN}<p>0 0 6 0</p></lines>')


PRIMITIVES = {"triangles": _triangles, "polylist": _polylist, "polygons": _polygons,
              "strips_fans": _strips_and_fans}


def _rot(axis, deg):
    from scipy.spatial.transform import Rotation

    return Rotation.from_rotvec(np.deg2rad(deg) * np.asarray(axis, float) /
                                np.linalg.norm(axis)).as_matrix()


def _cube_vertices():
    return np.array(CUBE_POS.split(), dtype=float).reshape(-1, 3)


def _coal_vertices(path, scale=(1.0, 1.0, 1.0)):
    coal = pytest.importorskip("coal")
    return np.array(coal.MeshLoader().load(str(path), np.asarray(scale, float)).vertices())


def _same_point_sets(ours, theirs, tol):
    """Equal sets of points: as many distinct points, each within tol of one of the other's."""
    from scipy.spatial import cKDTree

    distinct = np.unique(np.asarray(theirs, dtype=np.float32), axis=0)
    assert len(ours) == len(distinct)
    gap = max(cKDTree(ours).query(theirs)[0].max(), cKDTree(theirs).query(ours)[0].max())
    assert gap <= tol, gap


def _signed_volume(v, f):
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6)


@pytest.mark.parametrize("kind", PRIMITIVES)
def test_primitives_make_the_closed_cube(tmp_path, kind):
    """Every surface primitive gives the cube's 8 corners and outward faces of volume 1."""
    path = tmp_path / "cube.dae"
    path.write_text(_dae(PRIMITIVES[kind](), NODE))
    v, f = load_collada(path)
    np.testing.assert_array_equal(np.unique(v, axis=0), np.unique(_cube_vertices(), axis=0))
    assert f.shape == (12, 3)
    assert _signed_volume(v, f) == pytest.approx(1.0, abs=EXACT_TOL)
    _same_point_sets(v, _coal_vertices(path), F32_TOL)


def test_accessor_stride_offset_and_unused_positions(tmp_path):
    """Positions read through an accessor with stride 5 and offset 2; unused ones are dropped."""
    path = tmp_path / "stride.dae"
    positions = CUBE_POS + " 7 7 7"  # a ninth point no triangle uses
    path.write_text(_dae(_triangles(), NODE, positions=positions, stride=5, offset=2))
    v, f = load_collada(path)
    np.testing.assert_array_equal(np.unique(v, axis=0), np.unique(_cube_vertices(), axis=0))
    _same_point_sets(v, _coal_vertices(path), F32_TOL)


NESTED = f"""<node id="outer"><translate>10 20 30</translate><rotate>0 0 1 90</rotate>
  <node id="inner"><scale>2 3 4</scale><matrix>1 0 0 0.5 0 0 -1 0 0 1 0 0 0 0 0 1</matrix>
    {INST}</node>
  <instance_node url="#lib"/></node>"""
LIBRARY = (f'<library_nodes><node id="lib"><translate>0 0 -5</translate>{INST}</node>'
           "</library_nodes>")


def test_node_transforms_and_instance_node(tmp_path):
    """matrix/translate/rotate/scale compose in document order, down the node tree."""
    path = tmp_path / "nested.dae"
    path.write_text(_dae(_triangles(), NESTED, extra=LIBRARY))
    v, f = load_collada(path)
    c = _cube_vertices()
    T, R = np.array([10.0, 20, 30]), _rot([0, 0, 1], 90)
    M = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    inner = (R @ (np.diag([2.0, 3, 4]) @ (M @ c.T + [[0.5], [0], [0]]))).T + T
    library = (R @ (c + [0, 0, -5]).T).T + T
    expected = np.unique(np.vstack([inner, library]).astype(np.float32), axis=0)
    np.testing.assert_allclose(np.unique(v, axis=0), expected, atol=EXACT_TOL * 100)
    assert f.shape == (24, 3)
    # the mirrored inner cube (det < 0) keeps its file winding, as assimp does
    _same_point_sets(v, _coal_vertices(path), F32_TOL * 100)


@pytest.mark.parametrize("asset", ['<unit meter="0.01"/><up_axis>Z_UP</up_axis>',
                                   '<unit meter="1"/><up_axis>Y_UP</up_axis>',
                                   '<up_axis>X_UP</up_axis>'])
def test_unit_and_up_axis_are_not_applied(tmp_path, asset):
    """Pinocchio's loader keeps the file's units and axes; so do we (the same vertices)."""
    path = tmp_path / "asset.dae"
    path.write_text(_dae(_triangles(), NODE, asset=asset))
    v, _ = load_collada(path)
    np.testing.assert_array_equal(np.unique(v, axis=0), np.unique(_cube_vertices(), axis=0))
    _same_point_sets(v, _coal_vertices(path), F32_TOL)


def test_scale_argument(tmp_path):
    """A URDF <mesh scale> multiplies after the node transforms; a mirror flips the winding."""
    path = tmp_path / "cube.dae"
    path.write_text(_dae(_polylist(), '<node id="n"><translate>1 0 0</translate>' + INST
                         + "</node>"))
    v, f = load_collada(path, scale=[2.0, -1.0, 0.5])
    np.testing.assert_allclose(np.unique(v, axis=0),
                               np.unique((_cube_vertices() + [1, 0, 0]) * [2, -1, 0.5], axis=0),
                               atol=EXACT_TOL)
    assert _signed_volume(v, f) == pytest.approx(1.0, abs=EXACT_TOL)
    _same_point_sets(v, _coal_vertices(path, [2.0, -1.0, 0.5]), F32_TOL * 4)


# the example-robot-data meshes: polylists with mixed polygon sizes in a Y_UP file (icub),
# several <triangles> blocks (ur5 base), rotating node matrices (anymal c hip), node scales
# (romeo wrist), Z_UP Blender exports with polylists and several nodes (hyq, panda hand, kinova)
ROBOT_MESHES = [
    "icub_description/meshes/upmc/visual/icub_r_hip_1.dae",
    "ur_description/meshes/ur5/visual/base.dae",
    "anymal_c_simple_description/meshes/hip_l.dae",
    "romeo_description/meshes/V1/collision/LWristYaw.dae",
    "hyq_description/meshes/leg/lowerleg.dae",
    "panda_description/meshes/visual/hand.dae",
    "kinova_description/meshes/finger_proximal.dae",
]


@pytest.mark.parametrize("rel", ROBOT_MESHES, ids=lambda r: r.split("/")[-1])
def test_example_robot_data_meshes_match_coal(rel):
    """Distinct vertices equal coal's; the convex hulls are the same solid."""
    from scipy.spatial import ConvexHull

    path = ROBOTS / rel
    v, f = load_collada(path)
    theirs = _coal_vertices(path)
    extent = float(np.abs(theirs).max())
    _same_point_sets(v, theirs, F32_TOL * extent)
    # hulls: each one's vertices inside the other (within rounding), equal volumes
    ours_h, coal_h = ConvexHull(v), ConvexHull(theirs)
    for a, b in ((ours_h, coal_h), (coal_h, ours_h)):
        outside = (a.points[a.vertices] @ b.equations[:, :3].T + b.equations[:, 3]).max()
        assert outside <= F32_TOL * extent
    assert ours_h.volume == pytest.approx(coal_h.volume, rel=10 * F32_TOL)
    with warnings.catch_warnings():  # some of these surfaces are open: a warning, no error
        warnings.simplefilter("ignore", JointspaceWarning)
        process_mesh(v, f, name=rel)  # a mesh MuJoCo's compiler steps accept


GOOD = _dae(_triangles(), NODE)
TRUNCATED = GOOD[:len(GOOD) // 2]
ERRORS = [
    ("truncated", TRUNCATED, r"bad\.dae:\d+: malformed COLLADA file \(.*\).*truncated"),
    ("not_collada", "<mujoco/>", r"bad\.dae:1 <mujoco>: the root element .* <COLLADA>"),
    ("index_out_of_range", GOOD.replace("<p>0 0 3 0", "<p>0 0 99 0"),
     r"<p>: vertex index 99 is outside the 8 positions"),
    ("count_mismatch", GOOD.replace('triangles count="12"', 'triangles count="13"'),
     r"<triangles>: count=13 but <p> holds 12 triangles"),
    ("short_p", GOOD.replace("<p>0 0 3 0", "<p>0 3 0"),
     r"<p>: holds 71 indices, not a multiple of the 2 inputs per corner"),
    ("bad_number", GOOD.replace('count="24">0 0 0 1', 'count="24">0 0 0 x'),
     r"<float_array id='pos-array'>: cannot read 'x' as a number"),
    ("short_array", GOOD.replace('count="24">0 0 0 1 0 0', 'count="24">'),
     r"<accessor>: reads 8 points of stride 3 from offset 0, but <float_array> holds 18"),
    ("missing_geometry", GOOD.replace('url="#g"', 'url="#nothing"'),
     r"<instance_geometry>: url='#nothing' does not name a <geometry>"),
    ("external_ref", GOOD.replace('url="#g"', 'url="other.dae#g"'),
     r"url='other.dae#g' must name an element of this file"),
    ("no_vertex_input", GOOD.replace('semantic="VERTEX"', 'semantic="TEXCOORD"'),
     r"<triangles>: needs an <input semantic='VERTEX'>"),
    ("no_scene", GOOD.replace("<visual_scene", "<other_scene").replace(
        "</visual_scene", "</other_scene").replace("<instance_visual_scene", "<x").replace(
        "<scene>", "<scene2>").replace("</scene>", "</scene2>"),
     r"<COLLADA>: has no <visual_scene>"),
    ("lines_only", GOOD.replace("<triangles", "<lines").replace("</triangles", "</lines"),
     r"<visual_scene id='scene'>: places no triangles"),
    ("bad_matrix", GOOD.replace('<node id="n">', '<node id="n"><matrix>1 0 0</matrix>'),
     r"<matrix>: needs 16 numbers, got 3"),
    ("lookat", GOOD.replace('<node id="n">', '<node id="n"><lookat>0 0 0 1 0 0 0 0 1</lookat>'),
     r"<lookat> transforms are not supported"),
    ("controller", GOOD.replace(INST, '<instance_controller url="#c"/>'),
     r"<instance_controller>: skinned or morphed geometry"),
    ("holes", GOOD.replace("</triangles>", "</triangles><polygons count='1'>"
                           "<input semantic='VERTEX' source='#verts' offset='0'/>"
                           "<ph><p>0 1 2 3</p><h>4 5 6</h></ph></polygons>"),
     r"bad\.dae:\d+ <ph>: polygons with holes are not supported"),
    ("node_cycle", GOOD.replace(INST, '<instance_node url="#n"/>'),
     r"<node id='n'>: the node hierarchy is deeper than 256 levels"),
    ("nan", GOOD.replace('count="24">0 0 0 1', 'count="24">0 0 0 nan'),
     r"<float_array id='pos-array'>: holds a number that is not finite"),
]


@pytest.mark.parametrize("text,pattern", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_files_name_the_file_line_and_element(tmp_path, text, pattern):
    """Malformed COLLADA raises ModelError naming the file, line and element, with a remedy."""
    path = tmp_path / "bad.dae"
    path.write_text(text)
    with pytest.raises(ModelError, match=pattern):
        load_collada(path)


def test_missing_file(tmp_path):
    """A path that does not exist is a ModelError, not an OSError."""
    with pytest.raises(ModelError, match="gone.dae: mesh file not found"):
        load_collada(tmp_path / "gone.dae")


def test_triangles_of_several_blocks_match_the_file():
    """Two <triangles> blocks over one source (ur5's base.dae): every triangle is the file's.

    The file is read back here with ElementTree; coal's triangles are not a reference.
    """
    import xml.etree.ElementTree as ET

    path = ROBOTS / "ur_description/meshes/ur5/visual/base.dae"
    ns = {"c": "http://www.collada.org/2005/11/COLLADASchema"}
    root = ET.parse(path).getroot()
    pos = np.array(root.find(".//c:float_array", ns).text.split(), dtype=float).reshape(-1, 3)
    blocks = root.findall(".//c:triangles", ns)
    assert len(blocks) == 2
    # each corner is (VERTEX, NORMAL): the vertex index is every other entry
    idx = np.concatenate([np.array(b.find("c:p", ns).text.split(), dtype=int)[0::2]
                          for b in blocks]).reshape(-1, 3)
    v, f = load_collada(path)
    assert len(f) == len(idx)
    expected = pos[idx].astype(np.float32)
    np.testing.assert_array_equal(v[f], expected)  # same triangles, same order and winding
