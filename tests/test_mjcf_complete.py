"""MJCF completeness: lenient XML, compiler options, replicate, site equalities, meshes.

Each feature is compiled by jointspace and by MuJoCo from the same document and the compiled
models are compared field by field (compile only: nothing is simulated, so these tests are
fast). Bad input is checked to give our own ModelError naming the file, line and element.
"""

import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceWarning, ModelError
from jointspace.io.mjcf import load_mjcf, load_mjcf_string

mujoco = pytest.importorskip("mujoco")

# Compiling is a handful of float64 operations per element: agreement is to rounding.
TOL = 1e-9
# one forward, contacts solved to convergence (Newton): agreement is to rounding as well
FORWARD_TOL = 1e-9


def _load(xml, **kw):
    kw.setdefault("filename", "model.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        return load_mjcf_string(xml, **kw)


def _error(xml, *fragments, **kw):
    """The ModelError message of loading `xml`, checked to contain `fragments`."""
    kw.setdefault("filename", "model.xml")
    with pytest.raises(ModelError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        load_mjcf_string(xml, **kw)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, msg
    return msg


def _tensors(iquat, inertia):
    """R diag(I) Rᵀ per body: principal axes may differ in order and sign, tensors may not."""
    out = []
    for q, d in zip(np.asarray(iquat), np.asarray(inertia)):
        w, x, y, z = q / np.linalg.norm(q)
        R = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ])
        out.append(R @ np.diag(d) @ R.T)
    return np.array(out)


def _quat_close(a, b, what):
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    err = np.minimum(np.abs(a - b).max(axis=1), np.abs(a + b).max(axis=1)) if len(a) else [0]
    assert np.max(err) <= TOL, (what, err)


def _forward_matches(m, ref, seed, ctrl=False, tol=None):
    """forward at a seeded state (and controls) equals mj_forward: qacc and sensordata."""
    tol = SOLVE_TOL if tol is None else tol
    d, md = js.make_data(m), mujoco.MjData(ref)
    rng = np.random.default_rng(seed)
    d.qpos[:] = md.qpos[:] = rng.normal(size=ref.nq)
    d.qvel[:] = md.qvel[:] = rng.normal(size=ref.nv)
    if ctrl:
        d.ctrl[:] = md.ctrl[:] = rng.normal(size=ref.nu)
    js.forward(m, d)
    mujoco.mj_forward(ref, md)
    np.testing.assert_allclose(d.qacc, md.qacc, atol=tol, rtol=tol)
    np.testing.assert_allclose(d.sensordata, md.sensordata, atol=tol)


def _names(ref, kind, n):
    return [mujoco.mj_id2name(ref, kind, i) or "" for i in range(n)]


def _asset_names_equal(m, ref):
    """Mesh, material, actuator, sensor, tendon and key names equal MuJoCo's, in order."""
    O = mujoco.mjtObj
    for kind, n, label in ((O.mjOBJ_MESH, ref.nmesh, "mesh"), (O.mjOBJ_MATERIAL, ref.nmat,
                           "material"), (O.mjOBJ_ACTUATOR, ref.nu, "actuator"),
                           (O.mjOBJ_SENSOR, ref.nsensor, "sensor"),
                           (O.mjOBJ_TENDON, ref.ntendon, "tendon"),
                           (O.mjOBJ_KEY, ref.nkey, "key")):
        assert m.names[label] == _names(ref, kind, n), label


def assert_same_model(xml, m=None, **kw):
    """Compile `xml` with jointspace and MuJoCo and compare what the compiler computes."""
    m = _load(xml, **kw) if m is None else m
    ref = mujoco.MjModel.from_xml_string(xml) if "assets" not in kw else \
        mujoco.MjModel.from_xml_string(xml, kw["assets"])
    for size in ("nq", "nv", "nbody", "njnt", "ngeom", "nsite", "nmesh", "neq", "npair",
                 "nexclude", "nu"):
        assert int(np.asarray(getattr(m, size)).ravel()[0]) == getattr(ref, size), size
    for kind, n in ((mujoco.mjtObj.mjOBJ_BODY, ref.nbody), (mujoco.mjtObj.mjOBJ_JOINT, ref.njnt),
                    (mujoco.mjtObj.mjOBJ_GEOM, ref.ngeom), (mujoco.mjtObj.mjOBJ_SITE, ref.nsite),
                    (mujoco.mjtObj.mjOBJ_EQUALITY, ref.neq)):
        label = mujoco.mjtObj(kind).name.removeprefix("mjOBJ_").lower()
        assert m.names[label] == _names(ref, kind, n), label
    for f in ("body_parentid", "jnt_type", "geom_type", "geom_bodyid", "geom_dataid",
              "eq_type", "eq_obj1id", "eq_obj2id", "eq_objtype", "pair_geom1", "pair_geom2",
              "pair_dim", "exclude_signature", "geom_contype", "geom_conaffinity"):
        np.testing.assert_array_equal(np.asarray(getattr(m, f), dtype=np.int64),
                                      np.asarray(getattr(ref, f), dtype=np.int64), err_msg=f)
    for f in ("body_pos", "body_mass", "body_ipos", "jnt_pos", "jnt_axis", "geom_pos",
              "geom_size", "site_pos", "qpos0", "eq_solref", "eq_solimp",
              "pair_friction", "pair_solref", "pair_solreffriction", "pair_solimp",
              "pair_margin", "pair_gap", "mesh_vert"):
        np.testing.assert_allclose(np.asarray(getattr(m, f)).reshape(np.shape(getattr(ref, f))),
                                   getattr(ref, f), atol=TOL, rtol=TOL, err_msg=f)
    # MuJoCo 4's eq_data has a 12th column, unused by connect, weld, joint and tendon; the
    # 11th is the weld's torquescale (MuJoCo also writes 1 there for joint couplings)
    weld = np.asarray(ref.eq_type) == mujoco.mjtEq.mjEQ_WELD
    np.testing.assert_allclose(m.eq_data[:, :10], ref.eq_data[:, :10], atol=TOL,
                               err_msg="eq_data")
    np.testing.assert_allclose(m.eq_data[weld, 10], ref.eq_data[weld, 10], atol=TOL)
    _quat_close(m.body_quat, ref.body_quat, "body_quat")
    _quat_close(m.geom_quat, ref.geom_quat, "geom_quat")
    _quat_close(m.site_quat, ref.site_quat, "site_quat")
    np.testing.assert_allclose(_tensors(m.body_iquat, m.body_inertia),
                               _tensors(ref.body_iquat, ref.body_inertia), atol=TOL, rtol=TOL)
    return m, ref


# ------------------------------------------------------------------------------------------
# XML that MuJoCo's reader accepts


LENIENT = """<mujoco>
<!-- a comment -- holding double dashes, "quotes" and <tags> ---->
<worldbody><!---->
  <body name="a"pos="0 0 1"><joint name='j'type="hinge" axis="0 1 0"/>
    <geom size="0.1"type="capsule"fromto="0 0 0 0.2 0 0"/></body>
  <body name="R&D"pos="1 0 0"><freejoint/><geom size="0.1"/></body>
</worldbody></mujoco>"""


def test_lenient_xml_loads_as_in_mujoco():
    m, _ = assert_same_model(LENIENT)
    assert m.names["body"][2] == "R&D"


def test_lenient_xml_keeps_line_numbers_in_errors():
    xml = LENIENT.replace('<geom size="0.1"/>', '<geom size="0.1"\ntype="cube"/>')
    _error(xml, "model.xml:6 <geom>", "'cube'")
    xml = LENIENT.replace("</body>\n</worldbody>", "</bod>\n</worldbody>")
    _error(xml, "model.xml:6:", "malformed XML")


# ------------------------------------------------------------------------------------------
# <compiler> options


GROUPS = """<mujoco><compiler {attrs}/>
<worldbody>
  <body name="a" pos="0 0 1"><freejoint align="{align}"/>
    <geom size="0.1" group="0"/><geom type="box" size="0.1 0.2 0.3" pos="0.3 0.1 0" group="3"
      euler="10 20 30"/>
    <geom type="capsule" size="0.05 0.2" pos="0 0.4 0" group="4" density="3000"/>
    <site name="s" pos="0.1 0.2 0.3" euler="0 30 0"/></body>
  <body name="b" pos="1 0 1"><joint axis="0 1 0"/><geom size="0.1" group="5"/>
    <geom type="box" size="0.1 0.1 0.1" pos="0 0 -0.3" group="3"/>
  </body>
  <body name="e" pos="2 0 1"><freejoint align="true"/><geom size="0.1" pos="0.1 0 0" group="3"/>
    <body name="c" pos="0 0 -1"><joint/><geom size="0.1" group="3" pos="0.1 0 0"/></body>
  </body>
  <body name="d" pos="0 1 1" euler="0 0 40"><freejoint align="true"/>
    <geom type="box" size="0.1 0.2 0.3" pos="0.2 0.1 0" euler="0 20 0" group="3"/>
    <geom size="0.1" pos="-0.1 0 0.1" group="2"/><site name="t" pos="0.1 0 0"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("attrs, align", [
    ('inertiagrouprange="2 4"', "auto"),
    ('inertiagrouprange="3 3"', "false"),
    ('inertiagrouprange="0 5" alignfree="true"', "auto"),
    ('alignfree="true" inertiagrouprange="1 3"', "false"),
    ('alignfree="false"', "true"),
])
def test_inertiagrouprange_and_alignfree_match_mujoco(attrs, align):
    xml = GROUPS.format(attrs=attrs, align=align)
    m, ref = assert_same_model(xml)
    np.testing.assert_allclose(m.qpos0, ref.qpos0, atol=TOL)


# ------------------------------------------------------------------------------------------
# <replicate>


REPLICATE = """<mujoco><compiler {compiler}/>
<default><default class="red"><geom rgba="1 0 0 1" size="0.03" type="capsule"/></default>
</default>
<worldbody>
  <replicate count="12" offset="0.5 0 0.1" euler="0 0 30" sep="_">
    <body name="b" pos="0 0 1" euler="10 0 0"><joint name="j" axis="0 1 0"/>
      <geom name="g" size="0.1"/>
      <replicate count="3" offset="0 0.2 0" euler="15 0 5" sep="-" childclass="red">
        <site name="s" pos="0.1 0 0"/><geom name="c" fromto="0 0 0 0.1 0 0"/>
        <frame pos="0 0 0.1" euler="0 90 0"><geom type="box" size="0.01 0.02 0.03"/></frame>
      </replicate>
      <body name="tip" pos="0 0 -0.2"><joint/><geom size="0.05" pos="0.1 0 0"/></body>
    </body>
  </replicate>
  <body name="solo" pos="0 1 0"><freejoint/><geom size="0.1"/>
    <replicate count="2" euler="0 0 90"><geom type="box" size="0.1 0.02 0.02" pos="0.2 0 0"/>
    </replicate></body>
  <frame pos="1 1 1" euler="0 30 0">
    <replicate count="4" offset="0.1 0.1 0"><body><joint/><geom size="0.05"/></body>
    </replicate></frame>
</worldbody>
<sensor><jointpos joint="j_07"/></sensor>
</mujoco>"""


@pytest.mark.parametrize("compiler", ['angle="degree"', 'eulerseq="zyx"',
                                      'angle="radian" eulerseq="XYZ"'])
def test_replicate_matches_mujoco(compiler):
    m, ref = assert_same_model(REPLICATE.format(compiler=compiler))
    assert m.nbody == 1 + 12 * 2 + 1 + 4


@pytest.mark.parametrize("attrs, what", [
    ('count="0"', "count=0"),
    ('count="-2"', "count=-2"),
    ('offset="1 0 0"', "needs a count"),
    ('count="2" childclass="nope"', "'nope'"),
    ('count="two"', "integer"),
])
def test_bad_replicate_is_an_error(attrs, what):
    xml = f'<mujoco><worldbody>\n<replicate {attrs}><geom size="1"/></replicate>' \
          f'</worldbody></mujoco>'
    _error(xml, "model.xml:2 <replicate>", what)


def test_replicated_names_must_stay_unique():
    xml = ('<mujoco><worldbody><body name="a1"/>\n<replicate count="2" sep="">'
           '<body name="a"/></replicate></worldbody></mujoco>')
    _error(xml, "duplicate body name 'a1'")


# ------------------------------------------------------------------------------------------
# meshes: inertia modes, reference frames, scale, the binary MSH format


def _u_prism(h=0.5):
    """A closed, outward-wound U-shaped prism, scaled to 0.1.

    It is not convex and its centre of mass lies outside the solid, so MuJoCo's legacy,
    exact, convex and shell inertias all differ.
    """
    outline = [(0, 0), (3, 0), (3, 1), (3, 3), (2, 3), (2, 1), (1, 1), (1, 3), (0, 3), (0, 1)]
    cap = [(0, 1, 2), (0, 2, 5), (0, 5, 6), (0, 6, 9), (5, 2, 3), (5, 3, 4), (9, 6, 7),
           (9, 7, 8)]
    n = len(outline)
    verts = [(x * 0.1, y * 0.1, 0.0) for x, y in outline] + \
            [(x * 0.1, y * 0.1, h * 0.1) for x, y in outline]
    faces = [(c, b, a) for a, b, c in cap] + [(a + n, b + n, c + n) for a, b, c in cap]
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, j + n), (i, j + n, i + n)]
    return np.array(verts, dtype=np.float64), np.array(faces, dtype=np.int32)


def _mesh_attrs(verts, faces):
    return (f'vertex="{" ".join(map(repr, verts.ravel().tolist()))}" '
            f'face="{" ".join(map(str, faces.ravel().tolist()))}"')


MESHES = """<mujoco><compiler angle="radian"/>
<asset>
  <mesh name="u" {mesh} {attrs}/>
  <mesh name="box" vertex="0 0 0 1 0 0 0 1 0 1 1 0 0 0 1 1 0 1 0 1 1 1 1 1" {attrs}/>
</asset>
<worldbody>
  <body name="a" pos="0 0 1" euler="0.1 0.2 0.3"><freejoint/>
    <geom type="mesh" mesh="u" pos="0.1 0 0" euler="0 0.4 0" density="700"/>
    <geom type="mesh" mesh="box" pos="0 0.3 0"/></body>
  <body name="b" pos="1 0 1"><joint axis="0 1 0"/><geom type="mesh" mesh="u"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("attrs", [
    'inertia="legacy"', 'inertia="exact"', 'inertia="convex"', 'inertia="shell"',
    'refpos="0.1 0.05 0.02"', 'refquat="0.9 0.1 -0.3 0.2"',
    'refpos="0.1 0.05 0.02" refquat="0.9 0.1 -0.3 0.2" scale="1.5 0.5 2" inertia="exact"',
    'scale="-1 1 1" inertia="exact"', 'scale="0.5 -2 -1" inertia="convex" refpos="0 0 1"',
])
def test_mesh_inertia_modes_and_frames_match_mujoco(attrs):
    verts, faces = _u_prism()
    xml = MESHES.format(mesh=_mesh_attrs(verts, faces), attrs=attrs)
    m, ref = assert_same_model(xml)
    np.testing.assert_allclose(m.mesh_vert, ref.mesh_vert, atol=TOL)


def test_mesh_inertia_modes_differ_on_the_u_prism():
    """The U prism tells the four rules apart (so each parity case above checks its rule)."""
    verts, faces = _u_prism()
    masses = {mode: _load(MESHES.format(mesh=_mesh_attrs(verts, faces),
                                        attrs=f'inertia="{mode}"')).body_mass[2]
              for mode in ("legacy", "exact", "convex", "shell")}
    assert len({round(v, 9) for v in masses.values()}) == 4, masses


def test_mesh_defaults_set_the_inertia_mode():
    verts, faces = _u_prism()
    xml = MESHES.format(mesh=_mesh_attrs(verts, faces), attrs="").replace(
        "<asset>", '<default><mesh inertia="shell" scale="2 2 2"/></default><asset>')
    assert_same_model(xml)


def test_exact_inertia_refuses_inconsistent_faces():
    verts, faces = _u_prism()
    faces[3] = faces[3][::-1]
    xml = MESHES.format(mesh=_mesh_attrs(verts, faces), attrs='inertia="exact"')
    with pytest.raises(ValueError, match="inconsistent orientation"):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:3 <mesh name='u'>", "inconsistent orientation", "inertia='legacy'")


def test_open_mesh_is_a_model_finding_not_a_warning():
    """MuJoCo loads an open surface silently: no Python warning, one line in m.warnings."""
    verts, faces = _u_prism()
    xml = MESHES.format(mesh=_mesh_attrs(verts, faces[:-1]), attrs="")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf_string(xml, filename="model.xml")
    (line,) = [w for w in m.warnings if "not closed" in w]
    assert "model.xml:3 <mesh name='u'>" in line and line.startswith("1 mesh ")
    assert_same_model(xml, m)


def _write_msh(path, verts, faces, normals=False, texcoord=False):
    nv = len(verts)
    parts = [np.array([nv, nv if normals else 0, nv if texcoord else 0, len(faces)],
                      dtype="<i4").tobytes(), np.asarray(verts, dtype="<f4").tobytes()]
    if normals:
        parts.append(np.tile(np.array([0, 0, 1], dtype="<f4"), nv).tobytes())
    if texcoord:
        parts.append(np.zeros(2 * nv, dtype="<f4").tobytes())
    parts.append(np.asarray(faces, dtype="<i4").tobytes())
    path.write_bytes(b"".join(parts))


MSH_DOC = """<mujoco><compiler meshdir="assets"/>
<asset><mesh name="u" file="u.msh" {attrs}/><mesh file="hull.msh"/></asset>
<worldbody><body name="a"><freejoint/><geom type="mesh" mesh="u" pos="0.1 0 0"/>
  <geom type="mesh" mesh="hull" pos="0 0.5 0"/></body></worldbody></mujoco>"""


@pytest.mark.parametrize("attrs, extra", [
    ("", {}), ('inertia="exact" scale="2 1 1"', {"normals": True}),
    ('inertia="convex"', {"normals": True, "texcoord": True}),
])
def test_msh_files_match_mujoco(tmp_path, attrs, extra):
    (tmp_path / "assets").mkdir()
    verts, faces = _u_prism()
    _write_msh(tmp_path / "assets" / "u.msh", verts, faces, **extra)
    _write_msh(tmp_path / "assets" / "hull.msh", verts * 0.5, np.zeros((0, 3)))
    path = tmp_path / "model.xml"
    path.write_text(MSH_DOC.format(attrs=attrs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = load_mjcf(str(path))
    ref = mujoco.MjModel.from_xml_path(str(path))
    assert m.nmesh == ref.nmesh == 2
    np.testing.assert_allclose(m.mesh_vert, ref.mesh_vert, atol=TOL)
    np.testing.assert_allclose(m.body_mass, ref.body_mass, atol=TOL, rtol=TOL)
    np.testing.assert_allclose(m.geom_pos, ref.geom_pos, atol=TOL)
    _quat_close(m.geom_quat, ref.geom_quat, "geom_quat")
    np.testing.assert_allclose(_tensors(m.body_iquat, m.body_inertia),
                               _tensors(ref.body_iquat, ref.body_inertia), atol=TOL, rtol=TOL)


@pytest.mark.parametrize("damage, what", [
    (lambda b: b[:-5], "truncated"),
    (lambda b: b[:10], "shorter than its 16-byte header"),
    (lambda b: b + b"\0\0\0\0", "header announces"),
    (lambda b: np.array([3, 0, 0, 1], "<i4").tobytes() + b[16:], "invalid sizes"),
    (lambda b: b[:-4] + np.array([99], "<i4").tobytes(), "outside 0..19"),
])
def test_bad_msh_file_is_an_error(tmp_path, damage, what):
    verts, faces = _u_prism()
    _write_msh(tmp_path / "u.msh", verts, faces)
    data = (tmp_path / "u.msh").read_bytes()
    (tmp_path / "u.msh").write_bytes(damage(data))
    xml = '<mujoco><asset>\n<mesh file="u.msh"/></asset><worldbody/></mujoco>'
    path = tmp_path / "model.xml"
    path.write_text(xml)
    with pytest.raises(ModelError) as info:
        load_mjcf(str(path))
    msg = str(info.value)
    assert "model.xml:2 <mesh>" in msg and "u.msh" in msg and what in msg, msg


@pytest.mark.parametrize("compiler, what", [
    ('exactmeshinertia="true"', "inertia='exact'"), ('maxhullvert="10"', "on the meshes")])
def test_removed_compiler_attributes_are_errors(compiler, what):
    xml = f"<mujoco>\n<compiler {compiler}/><worldbody/></mujoco>"
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <compiler>", what)


@pytest.mark.parametrize("value", ["3", "0", "-2", "2147483648"])
def test_mesh_maxhullvert_below_4_is_an_error(value):
    xml = (f'<mujoco><asset>\n<mesh name="m" maxhullvert="{value}" '
           'vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset><worldbody/></mujoco>')
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <mesh name='m'>", "maxhullvert", "at least 4")


def _cloud(seed, n=300):
    """n float32 points of a stretched Gaussian cloud, as MJCF vertex text."""
    pts = np.random.default_rng(seed).normal(size=(n, 3)) * [1.0, 2.0, 0.5]
    return " ".join(f"{x:.9g}" for x in pts.astype(np.float32).ravel())


def _cloud_faces(seed):
    """The same cloud with faces: its full convex hull, outward (a closed surface)."""
    from scipy.spatial import ConvexHull

    pts = np.random.default_rng(seed).normal(size=(300, 3)) * [1.0, 2.0, 0.5]
    hull = ConvexHull(pts.astype(np.float32).astype(np.float64))
    faces = hull.simplices.copy()
    a, b, c = (hull.points[faces[:, k]] for k in range(3))
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    faces[inward] = faces[inward][:, [0, 2, 1]]
    return " ".join(str(i) for i in faces.ravel())


HULLCAP = """<mujoco><default><mesh maxhullvert="{cap}"/></default>
<asset><mesh name="m" inertia="{inertia}" vertex="{vertex}" {faces} {frame}/></asset>
<worldbody><geom type="plane" size="5 5 .1"/>
  <body pos="0 0 0.3" euler="20 30 10"><freejoint/><geom type="mesh" mesh="m"/></body>
</worldbody></mujoco>"""


def _hull_vertices(m, ref, k):
    """Our hull vertices of mesh k and MuJoCo's (mesh_graph), both sorted by rows."""
    a, n = m.mesh_hullvertadr[k], m.mesh_hullvertnum[k]
    ours = np.asarray(m.hull_vert[a:a + n])
    adr = ref.mesh_graphadr[k]
    nv = ref.mesh_graph[adr]
    theirs = ref.mesh_vert[ref.mesh_vertadr[k] + ref.mesh_graph[adr + 2 + nv:adr + 2 + 2 * nv]]
    return (x[np.lexsort(x.T[::-1])] for x in (ours, np.asarray(theirs, dtype=np.float64)))


def _rest_hull_on_plane(m, ref, hull):
    """Data of both engines after forward, geom 1's lowest hull vertex 1 mm into the plane."""
    d, md = js.make_data(m), mujoco.MjData(ref)
    mujoco.mj_forward(ref, md)
    low = np.min(hull @ md.geom_xmat[1].reshape(3, 3).T + md.geom_xpos[1], axis=0)[2]
    d.qpos[:] = md.qpos[:] = ref.qpos0 - np.array([0, 0, low + 1e-3, 0, 0, 0, 0])
    js.forward(m, d)
    mujoco.mj_forward(ref, md)
    return d, md


@pytest.mark.parametrize("cap", [4, 8, 20, 60, -1])
@pytest.mark.parametrize("inertia, faces", [("legacy", False), ("convex", False),
                                            ("legacy", True), ("exact", True)])
@pytest.mark.parametrize("frame", ["", 'scale="2 1 0.3" refpos="0.1 0 0" refquat="1 .2 0 .1"'])
def test_mesh_maxhullvert_matches_mujoco(cap, inertia, faces, frame):
    """The capped hull's vertices are MuJoCo's; mass, inertia, contacts and qacc follow."""
    xml = HULLCAP.format(cap=cap, inertia=inertia, vertex=_cloud(7), frame=frame,
                         faces=f'face="{_cloud_faces(7)}"' if faces else "")
    m, ref = assert_same_model(xml)
    ours, theirs = _hull_vertices(m, ref, 0)
    assert len(ours) == len(theirs) == (cap if 0 < cap < 29 else 29)  # 29: the whole hull
    np.testing.assert_allclose(ours, theirs, atol=TOL)
    # resting on the plane, the lowest hull vertex 1 mm deep: contacts at the hull's corners
    d, md = _rest_hull_on_plane(m, ref, theirs)
    assert d.ncon[0] == md.ncon
    np.testing.assert_allclose(d.qacc, md.qacc, atol=SOLVE_TOL, rtol=SOLVE_TOL)


# ------------------------------------------------------------------------------------------
# procedural meshes: <mesh builtin params>

BUILTIN = """<mujoco><asset><mesh name="m" builtin="{kind}" params="{params}" {extra}/></asset>
<worldbody><geom type="plane" size="5 5 .1"/>
  <body pos="0 0 2" euler="20 30 10"><freejoint/><geom type="mesh" mesh="m" {geom}/>{more}
  </body>
</worldbody></mujoco>"""

# cone and wedge have no faces of their own (MuJoCo gives them their hull's, in qhull's
# order: compared as sets of triangles); the others' vertices and faces are compared in order
BUILTIN_CASES = [
    ("sphere", "0", ""), ("sphere", "2", ""), ("sphere", "4", ""),
    ("sphere", "2.7", 'inertia="shell" scale="1 2 .5" refpos=".1 .2 .3" refquat="1 .2 0 .3"'),
    ("sphere", "3", 'maxhullvert="10" scale="-1 1 1"'),
    ("hemisphere", "0", ""), ("hemisphere", "3", 'inertia="exact"'), ("hemisphere", "10", ""),
    ("cone", "3 0", ""), ("cone", "8 0.5", 'inertia="convex"'), ("cone", "40 1", ""),
    ("supersphere", "3 1 1", ""), ("supersphere", "12 0.5 2", 'scale="2 1 1"'),
    ("supersphere", "8 0 0", ""),
    ("supertorus", "3 .5 1 1", ""), ("supertorus", "16 .3 .5 2", ""),
    ("supertorus", "12 .4 1 1", 'inertia="exact" maxhullvert="8"'),
    ("wedge", "4 3 60 30 0", ""), ("wedge", "5 5 180 90 .5", 'refpos="0 0 -.5"'),
    ("plate", "3 4", ""), ("plate", "2 2", 'inertia="legacy" scale="2 1 1"'),
]


def _triangles(f):
    """Triangles as a sorted list, each rotated to start at its smallest index."""
    return sorted(tuple(np.roll(t, -int(np.argmin(t)))) for t in np.asarray(f).tolist())


@pytest.mark.parametrize("kind, params, extra", BUILTIN_CASES)
def test_builtin_mesh_matches_mujoco(kind, params, extra):
    """Vertices, faces, hull, mass and inertia of a procedural mesh are MuJoCo's."""
    plate = kind == "plate"  # flat: no hull, so no collision; a sphere keeps its body valid
    xml = BUILTIN.format(kind=kind, params=params, extra=extra,
                         geom='contype="0" conaffinity="0"' if plate else "",
                         more='<geom size=".3" pos="0 0 1"/>' if plate else "")
    m, ref = assert_same_model(xml)
    np.testing.assert_array_equal(m.mesh_vertnum, ref.mesh_vertnum)
    np.testing.assert_array_equal(m.mesh_facenum, ref.mesh_facenum)
    np.testing.assert_allclose(m.mesh_vert, ref.mesh_vert, atol=TOL, rtol=0)
    if kind in ("cone", "wedge"):
        assert _triangles(m.mesh_face) == _triangles(ref.mesh_face)
    else:
        np.testing.assert_array_equal(m.mesh_face, ref.mesh_face)
    # the geom's mass is density times the mesh's volume (its area for a shell)
    np.testing.assert_allclose(m.geom_size, ref.geom_size, atol=TOL, rtol=TOL)
    np.testing.assert_allclose(m.body_mass, ref.body_mass, rtol=TOL)
    np.testing.assert_allclose(m.body_inertia, ref.body_inertia, rtol=TOL,
                               atol=TOL * np.max(ref.body_inertia))
    if plate:
        assert m.mesh_hullvertnum[0] == 0 and ref.mesh_graphadr[0] == -1
        return
    ours, theirs = _hull_vertices(m, ref, 0)
    np.testing.assert_allclose(ours, theirs, atol=TOL)
    d, md = _rest_hull_on_plane(m, ref, theirs)
    assert md.ncon > 0 and d.ncon[0] == md.ncon
    np.testing.assert_allclose(d.qacc, md.qacc, atol=SOLVE_TOL, rtol=SOLVE_TOL)


@pytest.mark.parametrize("kind, params, what", [
    ("sphere", "5", "subdivision 5 must be in 0..4"),
    ("sphere", "-1", "subdivision -1 must be in 0..4"),
    ("sphere", "1 2", "takes 1 parameter(s)"),
    ("sphere", "", "takes 1 parameter(s)"),
    ("hemisphere", "11", "resolution 11 must be in 0..10"),
    ("cone", "2 1", "number of edges 2 must be at least 3"),
    ("cone", "3 1.5", "top radius 1.5 must be in [0, 1]"),
    ("cone", "3 -1", "top radius -1 must be in [0, 1]"),
    ("supersphere", "2 1 1", "resolution 2 must be at least 3"),
    ("supersphere", "3 -1 1", "e and n must not be negative"),
    ("supertorus", "2 .5 1 1", "resolution 2 must be at least 3"),
    ("supertorus", "3 0 1 1", "radius 0 must be in (0, 1]"),
    ("supertorus", "3 .5 0 1", "s and t must be positive"),
    ("wedge", "0 3 60 30 0", "resolutions 0, 3 must be positive"),
    ("wedge", "3 3 181 30 0", "fov_x 181 must be in (0, 180]"),
    ("wedge", "3 3 60 91 0", "fov_y 91 must be in (0, 90]"),
    ("wedge", "3 3 60 30 1.5", "gamma 1.5 must be in [0, 1]"),
    ("wedge", "3 3 60 30", "takes 5 parameter(s)"),
    ("plate", "0 3", "resolutions 0, 3 must be positive"),
    ("none", "1", "not a procedural mesh type"),
    ("torus", "1", "use one of sphere, hemisphere, cone"),
])
def test_builtin_mesh_bad_params(kind, params, what):
    """MuJoCo refuses these too; our message names file, line, element and attribute."""
    xml = ('<mujoco><asset>\n<mesh name="m" builtin="{}" params="{}"/></asset><worldbody>'
           '<geom type="mesh" mesh="m"/></worldbody></mujoco>').format(kind, params)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <mesh", "builtin=" if kind in ("none", "torus") else "params",
           what)


@pytest.mark.parametrize("attrs, what", [
    ('builtin="sphere"', "needs params"),
    ('builtin="sphere" params="1" vertex="0 0 0 1 0 0 0 1 0 0 0 1"', "drop vertex"),
    ('builtin="sphere" params="1" file="m.stl"', "drop file"),
])
def test_builtin_mesh_needs_params_and_no_vertices(attrs, what):
    xml = f'<mujoco><asset>\n<mesh name="m" {attrs}/></asset></mujoco>'
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <mesh", what)


def test_builtin_mesh_with_faces_and_in_defaults_are_refused():
    """MuJoCo loads builtin with face (whose faces win depends on the type); we refuse it.

    MuJoCo refuses builtin in a default class, as we do.
    """
    xml = ('<mujoco><asset>\n<mesh name="m" builtin="cone" params="4 0" '
           'face="0 2 1 0 1 4 1 2 4 2 0 4"/>'
           '</asset></mujoco>')
    mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <mesh", "drop face")
    xml = ('<mujoco><default>\n<mesh builtin="sphere" params="1"/></default><asset>'
           '<mesh name="m"/></asset></mujoco>')
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <mesh", "cannot be defaults")


# ------------------------------------------------------------------------------------------
# primitives fitted to meshes


FIT = """<mujoco><compiler {compiler}/>
<asset><mesh name="u" {mesh} {mattrs}/><mesh name="tall" {mesh} scale="0.5 0.5 4"/>
  <mesh name="tet" vertex="0 0 0 0.3 0 0 0 0.2 0 0 0 0.4" scale="1 2 1"/></asset>
<worldbody>
  <body name="a" pos="0 0 1"><freejoint/>
    <geom type="sphere" mesh="u" pos="0.1 0 0" euler="0 20 0"/>
    <geom type="capsule" mesh="tall" fitscale="1.3" density="500"/>
    <geom type="cylinder" mesh="tet" pos="0 0.2 0"/>
    <geom type="box" mesh="u" euler="10 0 30"/>
    <geom type="ellipsoid" mesh="tet" fitscale="0.7"/>
    <geom type="mesh" mesh="u" pos="0.3 0 0"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("compiler, mattrs", [
    ("", ""), ('fitaabb="true"', ""), ("", 'inertia="shell"'),
    ('fitaabb="true"', 'inertia="convex" refquat="1 0.2 0 0.1"'),
])
def test_primitives_fitted_to_meshes_match_mujoco(compiler, mattrs):
    verts, faces = _u_prism()
    xml = FIT.format(compiler=compiler, mesh=_mesh_attrs(verts, faces), mattrs=mattrs)
    m, ref = assert_same_model(xml)
    np.testing.assert_array_equal(m.geom_dataid, [-1, -1, -1, -1, -1, 0])
    assert m.nmesh == 3


SHELLS = """<mujoco>
<default><default class="thin"><geom shellinertia="true" density="300"/></default></default>
<asset><mesh name="tet" vertex="0 0 0 0.3 0 0 0 0.2 0 0 0 0.4"/></asset>
<worldbody>
  <body name="sphere" pos="0 0 1"><freejoint/><geom size=".1" shellinertia="true"/></body>
  <body name="capsule" pos="1 0 1"><freejoint/><geom type="capsule" size=".05 .2"
    shellinertia="true"/></body>
  <body name="cylinder" pos="2 0 1"><freejoint/><geom type="cylinder" size=".1 .3"
    class="thin" euler="0 40 10"/></body>
  <body name="ellipsoid" pos="3 0 1"><freejoint/><geom type="ellipsoid" size=".1 .2 .3"
    class="thin"/></body>
  <body name="box" pos="4 0 1"><freejoint/><geom type="box" size=".1 .2 .05" class="thin"
    mass="2"/></body>
  <body name="mixed" pos="5 0 1"><freejoint/><geom type="box" size=".1 .2 .05" class="thin"/>
    <geom size=".1" pos=".2 0 0"/><geom type="capsule" fromto="0 0 0 0 .3 .1" size=".02"
    shellinertia="true"/><geom type="ellipsoid" mesh="tet" class="thin"/></body>
</worldbody></mujoco>"""


def test_shell_inertia_of_primitives_matches_mujoco():
    """geom shellinertia on primitives: mass from the surface area, thin-shell moments.

    Every primitive alone, through a default class, with a given mass, mixed with solids in
    one body, and on a primitive fitted to a mesh, as mjCGeom::GetVolume and SetInertia.
    """
    m, ref = assert_same_model(SHELLS)
    np.testing.assert_allclose(m.body_mass, ref.body_mass, rtol=TOL)
    np.testing.assert_allclose(m.body_inertia, ref.body_inertia, rtol=TOL, atol=TOL)
    solid = _load(SHELLS.replace('shellinertia="true"', ""))
    assert np.all(solid.body_mass[1:5] != m.body_mass[1:5])


def test_fitting_to_a_mesh_without_volume_is_an_error():
    """A flat mesh (allowed with shell inertia) leaves a fitted box without thickness."""
    xml = ('<mujoco><asset><mesh name="flat" inertia="shell" '
           'vertex="0 0 0 1 0 0 0 1 0 1 1 0" face="0 1 2 1 3 2"/></asset><worldbody>'
           '<body>\n<geom type="box" mesh="flat"/></body></worldbody></mujoco>')
    _error(xml, "model.xml:2 <geom>", "fitted to mesh 'flat'", "no volume")


@pytest.mark.parametrize("geom, what", [
    ('type="plane" mesh="tet"', "cannot be fitted"),
    ('type="box" mesh="tet" fromto="0 0 0 1 0 0"', "fromto"),
    ('type="mesh" mesh="tet" shellinertia="true"', "inertia='shell'"),
])
def test_bad_fitting_is_an_error(geom, what):
    xml = ('<mujoco><asset><mesh name="tet" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>'
           f'<worldbody><body>\n<geom {geom}/></body></worldbody></mujoco>')
    _error(xml, "model.xml:2 <geom>", what)


MESH_MATERIAL = """<mujoco>
<asset><material name="clear" rgba="1 0 0 0"/><material name="green" rgba="0 1 0 1"/>
  <mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" material="clear"/></asset>
<worldbody><geom type="mesh" mesh="m" pos="0 0 1"/><geom type="sphere" mesh="m" pos="0 0 2"/>
  <geom type="mesh" mesh="m" material="green" pos="0 0 3"/><geom size=".1" pos="0 0 4"/>
</worldbody></mujoco>"""


def test_mesh_material_applies_to_its_geoms_as_in_mujoco():
    """A geom naming no material takes its mesh's (fitted primitives too): rays skip clear ones.

    Regression: <mesh material> was ignored with a warning, so these geoms had no material
    and a ray hit the transparent mesh that MuJoCo's rays pass through.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf_string(MESH_MATERIAL, filename="model.xml")
    ref = mujoco.MjModel.from_xml_string(MESH_MATERIAL)
    np.testing.assert_array_equal(m.geom_matid, ref.geom_matid)
    assert list(ref.geom_matid) == [0, 0, 1, -1]
    d, md = js.make_data(m), mujoco.MjData(ref)
    js.forward(m, d)
    mujoco.mj_forward(ref, md)
    geomid = np.zeros(1, dtype=np.int32)
    x = mujoco.mj_ray(ref, md, np.array([0.1, 0.1, 0.0]), np.array([0.0, 0.0, 1.0]), None, 1,
                      -1, geomid)
    dist, g = js.ray(m, d, [0.1, 0.1, 0.0], [0.0, 0.0, 1.0])
    assert g == geomid[0] == 2
    assert abs(dist - x) <= TOL


FLAT = ('<mujoco><asset><mesh name="flat" inertia="shell" vertex="0 0 0 1 0 0 0 1 0 1 1 0" '
        'face="0 1 2 1 3 2"/></asset><worldbody><body><freejoint/>\n'
        '<geom type="mesh" mesh="flat" {attrs}/></body></worldbody></mujoco>')


def test_flat_shell_mesh_loads_as_a_visual_geom():
    assert_same_model(FLAT.format(attrs='contype="0" conaffinity="0"'))


def test_flat_mesh_cannot_collide():
    xml = FLAT.format(attrs="")
    with pytest.raises(ValueError, match="coplanar"):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <geom>", "mesh 'flat' is flat", "contype='0'")


# ------------------------------------------------------------------------------------------
# model composition: <asset><model> and <attach>


ARM = """<mujoco model="arm">
  <compiler angle="radian" meshdir="parts"/>
  <default><default class="link"><geom type="capsule" size="0.03" rgba="0 1 0 1"/></default>
  </default>
  <asset><mesh name="tet" file="tet.msh" material="red"/><material name="red" rgba="1 0 0 1"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <site name="origin"/>
    <body name="base" pos="0 0 0.1">
      <joint name="j0" axis="0 0 1" range="-1 1"/>
      <geom class="link" fromto="0 0 0 0 0 0.3" material="red"/>
      <body name="l1" pos="0 0 0.3" euler="0 0.5 0">
        <joint name="j1" axis="0 1 0"/><joint name="j2" type="ball"/>
        <geom name="tetg" type="mesh" mesh="tet"/><geom name="pad" size="0.02"/>
        <site name="tip" pos="0 0 0.2"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="j0" coef="1"/><joint joint="j1" coef="-1"/></fixed>
  </tendon>
  <actuator><motor name="m0" joint="j0"/><position name="p1" joint="j1" kp="10"/>
    <motor name="mt" tendon="t"/></actuator>
  <sensor><jointpos name="s0" joint="j0"/><framepos objtype="site" objname="tip"/>
    <actuatorfrc actuator="p1"/></sensor>
  <equality><joint joint1="j0" joint2="j1"/><weld body1="l1"/></equality>
  <contact><exclude body1="base" body2="l1"/><pair geom1="tetg" geom2="pad"/></contact>
  <keyframe><key name="home" qpos="0.1 0.2 1 0 0 0" ctrl="1 2 3"/><key qvel="1 2 3 4 5"/>
  </keyframe>
</mujoco>"""

SCENE = """<mujoco>
  <asset><model name="arm" file="robots/arm.xml"/></asset>
  <worldbody>
    <body name="mount" pos="1 0 0" euler="0 0 30">
      <freejoint/><geom size="0.1"/>
      <attach model="arm" body="base" prefix="a-"/>
      <body name="after"><joint/><geom size="0.05"/></body>
    </body>
    <frame pos="0 1 0" euler="0 0 90"><attach model="arm" body="l1" prefix="b-"/></frame>
    <attach model="arm" prefix="w-"/>
  </worldbody>
  <actuator><motor joint="a-j1"/></actuator>
  <keyframe><key name="mine" qpos="1 2 3 1 0 0 0"/></keyframe>
</mujoco>"""


def _composed(tmp_path, scene=SCENE, arm=ARM):
    (tmp_path / "robots" / "parts").mkdir(parents=True)
    verts, faces = _u_prism()
    _write_msh(tmp_path / "robots" / "parts" / "tet.msh", verts, faces)
    (tmp_path / "robots" / "arm.xml").write_text(arm)
    path = tmp_path / "scene.xml"
    path.write_text(scene)
    return path


def test_attach_matches_mujoco(tmp_path):
    path = _composed(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = load_mjcf(str(path))
    ref = mujoco.MjModel.from_xml_path(str(path))
    _asset_names_equal(m, ref)
    for f in ("actuator_trnid", "sensor_objid", "sensor_type", "tendon_num", "wrap_objid",
              "geom_matid", "actuator_gainprm", "tendon_length0", "jnt_range"):
        np.testing.assert_allclose(np.asarray(getattr(m, f), dtype=np.float64),
                                   getattr(ref, f), atol=TOL, err_msg=f)
    # the keys of the copy of body l1 (rows 3, 4): MuJoCo 4.0.0 also writes the key's values
    # of joint j0 and actuators m0, mt, which are not in the copy, into the next joint and
    # actuators of the model (w-j0, w-m0, w-mt); we leave everything outside the copy at
    # qpos0 and zero
    other = [0, 1, 2, 5, 6]
    for f in ("key_qpos", "key_qvel", "key_ctrl"):
        np.testing.assert_allclose(getattr(m, f)[other], getattr(ref, f)[other], atol=TOL,
                                   err_msg=f)
    b_home = np.array(m.qpos0)
    b_home[m.jnt_qposadr[m.joint("b-j1")]] = 0.2
    np.testing.assert_array_equal(m.key_qpos[3], b_home)
    b_vel = np.zeros(m.nv)
    b_vel[m.jnt_dofadr[m.joint("b-j1")]:][:4] = [2, 3, 4, 5]
    np.testing.assert_array_equal(m.key_qvel[4], b_vel)
    np.testing.assert_array_equal(m.key_ctrl[3], np.eye(m.nu)[m.actuator("b-p1")] * 2)
    assert_same_model(path.read_text(), m=m, assets=_vfs(tmp_path))


def _vfs(tmp_path):
    """The files of a composed model as MuJoCo's assets mapping (paths relative to it)."""
    return {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*")
            if p.is_file() and p.name != "scene.xml"}


@pytest.mark.parametrize("attach, what", [
    ('<attach model="nope" body="base" prefix="x-"/>', "model 'nope' is not declared"),
    ('<attach model="arm" body="nobody" prefix="x-"/>', "no body 'nobody'"),
    ('<attach model="arm" body="base"/>', "needs a prefix"),
    ('<attach model="arm" frame="f" prefix="x-"/>', "model 'arm' has no frame 'f'"),
    ('<attach model="arm" body="base" frame="f" prefix="x-"/>', "not both"),
    ('<attach prefix="x-"/>', "give body= or frame="),
    ('<attach body="nobody" prefix="x-"/>', "this model has no body 'nobody' above this"),
    ('<attach model="arm" body="base" prefix=""/><attach model="arm" body="base" prefix=""/>',
     "duplicate mesh name 'tet'"),
])
def test_bad_attach_is_an_error(tmp_path, attach, what):
    scene = ('<mujoco><asset><model name="arm" file="robots/arm.xml"/></asset>\n'
             f'<worldbody>\n{attach}</worldbody></mujoco>')
    path = _composed(tmp_path, scene)
    with pytest.raises(ModelError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        load_mjcf(str(path))
    msg = str(info.value)
    assert what in msg, msg
    if "duplicate" not in what:
        assert "scene.xml:3 <attach>" in msg, msg


FRAMED_ARM = """<mujoco model="framed">
<worldbody>
  <frame name="outer" pos="0 0 1" euler="0 0 30">
    <frame name="grip" pos="0.1 0.2 0" euler="10 0 0">
      <geom name="g0" size="0.05" pos="0 0 0.1"/><site name="s0" pos="0.1 0 0"/>
      <camera name="c0" pos="0 0 .2"/>
      <body name="b1" pos="0.3 0 0" euler="0 20 0"><joint name="j1"/>
        <geom name="g1" type="capsule" size=".02 .1"/>
        <body name="b2" pos="0 0 .2"><joint name="j2" axis="1 0 0"/><geom name="g2" size=".03"/>
        </body></body>
    </frame>
    <body name="other" pos="1 0 0"><joint name="jo"/><geom size=".1"/></body>
  </frame>
  <body name="base" pos="0 1 0"><joint name="jb"/><geom name="gb" size=".1"/>
    <frame name="tool" pos=".2 0 0" quat="0.9 0 0.3 0"><body name="t1"><joint name="jt"/>
      <geom name="gt" size=".05"/></body><geom name="gt2" size=".02"/></frame>
    <frame name="jointed"><joint name="jf"/></frame>
  </body>
</worldbody>
<actuator><motor name="m1" joint="j1"/><motor name="mo" joint="jo"/></actuator>
<sensor><jointpos joint="j2"/><framepos objtype="site" objname="s0"/></sensor>
</mujoco>"""

FRAMED_SCENE = """<mujoco><asset><model name="arm" file="robots/arm.xml"/></asset>
<worldbody>
  <body name="holder" pos="0 0 0.5" euler="0 10 0"><joint name="h"/><geom size=".1"/>
    <attach model="arm" frame="grip" prefix="a/"/>
    <frame pos="0 0 .3" euler="5 0 0"><attach model="arm" frame="tool" prefix="t/"/></frame>
  </body>
  <attach model="arm" frame="grip" prefix="w/"/>
</worldbody>
</mujoco>"""


def test_attach_of_a_frame_matches_mujoco(tmp_path):
    """A frame's contents attached: posed by that frame alone, in a body, a frame, the world."""
    path = _composed(tmp_path, FRAMED_SCENE, FRAMED_ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf(str(path))
    m, ref = assert_same_model(path.read_text(), m=m, assets=_vfs(tmp_path))
    assert m.names["actuator"] == ["a/m1", "w/m1"] == _names(ref, mujoco.mjtObj.mjOBJ_ACTUATOR,
                                                               ref.nu)
    assert m.nsensor == ref.nsensor == 4
    _quat_close(m.cam_quat, ref.cam_quat, "cam_quat")
    np.testing.assert_allclose(m.cam_pos, ref.cam_pos, atol=TOL)
    _forward_matches(m, ref, 5)


JOINTED = ('<frame name="jointed" pos=".1 0 0" euler="0 0 90"><joint name="jf" axis="1 0 0" '
           'pos="0 .1 0" damping=".3"/><geom name="gj" size=".01"/><frame pos="0 0 1">'
           '<joint name="jf2" type="slide"/></frame></frame>')


def test_attach_of_a_frame_holding_joints_matches_mujoco(tmp_path):
    """A frame's joints join the holding body, posed by the frame and the attach context.

    As MuJoCo 4.0 attaches them: after the body's joints read so far, with the actuators and
    sensors that name them.
    """
    arm = FRAMED_ARM.replace('<frame name="jointed"><joint name="jf"/></frame>', JOINTED)
    arm = arm.replace('<motor name="mo" joint="jo"/>', '<motor name="mo" joint="jo"/>'
                      '<motor name="mf" joint="jf2"/>')
    arm = arm.replace("</sensor>", '<jointvel joint="jf"/></sensor>')
    scene = FRAMED_SCENE.replace('frame="tool" prefix="t/"', 'frame="jointed" prefix="t/"')
    scene = scene.replace('<attach model="arm" frame="grip" prefix="a/"/>',
                          '<attach model="arm" frame="grip" prefix="a/"/>'
                          '<joint name="late" type="slide" axis="1 0 0"/>')
    path = _composed(tmp_path, scene, arm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf(str(path))
    m, ref = assert_same_model(path.read_text(), m=m, assets=_vfs(tmp_path))
    assert m.names["joint"][:5] == ["h", "late", "t/jf", "t/jf2", "a/j1"]
    assert m.names["actuator"] == ["a/m1", "t/mf", "w/m1"] == _names(
        ref, mujoco.mjtObj.mjOBJ_ACTUATOR, ref.nu)
    np.testing.assert_array_equal(m.actuator_trnid, ref.actuator_trnid)
    np.testing.assert_allclose(m.dof_damping, ref.dof_damping, atol=TOL)
    assert m.nsensor == ref.nsensor == 5
    _forward_matches(m, ref, 5, ctrl=True, tol=FORWARD_TOL)


def test_self_attach_of_a_frame_holding_joints_matches_mujoco():
    xml = """<mujoco><worldbody>
  <body name="base" pos="1 0 0" euler="0 0 20"><joint name="jb"/><geom size=".1"/>
    <frame name="jfr" pos=".1 0 0" euler="30 0 0"><joint name="jj" axis="1 0 0"/>
      <geom name="gj" size=".05" pos="0 .1 0"/></frame></body>
  <body name="holder" pos="0 1 0" euler="0 20 0"><joint name="h"/><geom size=".1"/>
    <replicate count="2" offset="0 0 .3" sep="-"><attach frame="jfr" prefix="f-"/></replicate>
  </body>
</worldbody>
<actuator><motor joint="jj"/></actuator><sensor><jointpos joint="jj"/></sensor>
</mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf_string(xml, filename="model.xml")
    m, ref = assert_same_model(xml, m=m)
    assert m.names["joint"] == ["jb", "jj", "h", "f-jj-0", "f-jj-1"]
    assert (m.nu, m.nsensor) == (ref.nu, ref.nsensor) == (3, 3)
    _forward_matches(m, ref, 6, ctrl=True, tol=FORWARD_TOL)


def test_attach_of_a_frame_holding_a_joint_into_the_world_is_an_error(tmp_path):
    scene = ('<mujoco><asset><model name="arm" file="robots/arm.xml"/></asset>\n<worldbody>'
             '<frame><attach model="arm" frame="jointed" prefix="t/"/></frame></worldbody>'
             '</mujoco>')
    path = _composed(tmp_path, scene, FRAMED_ARM)
    with pytest.raises(ValueError, match="joint found in world body"):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError, match=r"scene.xml:2 <attach>: frame 'jointed' holds joint "
                                         r"'jf', and the world body cannot have joints"):
        load_mjcf(str(path))


SELF_ATTACH = """<mujoco>
<worldbody>
  <body name="arm" pos="0 0 1"><joint name="j1"/><geom name="g1" size=".1"/><site name="s1"/>
    <body name="fore" pos="0 0 .3" euler="10 0 0"><joint name="j2"/><geom name="g2" size=".05"/>
    </body></body>
  <frame name="fr" pos="1 0 0" euler="0 0 20"><geom name="gf" size=".1"/>
    <body name="fb"><joint name="jf"/><geom name="gfb" type="box" size=".1 .1 .1"/></body></frame>
  <body name="holder" pos="0 1 0" euler="0 20 0"><joint name="h"/><geom size=".1"/>
    <attach body="arm" prefix="c-"/><attach frame="fr" prefix="f-"/></body>
</worldbody>
<actuator><motor name="m1" joint="j1"/><motor joint="jf"/></actuator>
<sensor><jointpos joint="j2"/><framepos objtype="site" objname="s1"/></sensor>
<keyframe><key name="k" qpos="0.1 0.2"/></keyframe>
</mujoco>"""


def test_self_attach_matches_mujoco():
    """<attach> without model copies a body or frame, its actuators and sensors, no key."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf_string(SELF_ATTACH, filename="model.xml")
    m, ref = assert_same_model(SELF_ATTACH, m=m)
    assert m.names["actuator"] == _names(ref, mujoco.mjtObj.mjOBJ_ACTUATOR, ref.nu)
    assert (m.nsensor, m.nkey) == (ref.nsensor, ref.nkey) == (4, 1)
    _forward_matches(m, ref, 6, ctrl=True)


def test_self_attach_into_the_body_itself_copies_it_as_read_so_far():
    xml = SELF_ATTACH.replace('<site name="s1"/>', '<site name="s1"/><attach body="arm" '
                              'prefix="x-"/>')
    m, ref = assert_same_model(xml)
    assert m.names["body"][:4] == ["world", "arm", "x-arm", "fore"]
    # the later copy of arm holds x-arm: copies of copies, as MuJoCo makes them
    assert m.names["actuator"] == ["m1", "", "x-m1", "c-m1", "c-x-m1", ""] == _names(
        ref, mujoco.mjtObj.mjOBJ_ACTUATOR, ref.nu)
    np.testing.assert_array_equal(m.actuator_trnid, ref.actuator_trnid)
    assert m.nsensor == ref.nsensor


REPLICATED_SCENE = """<mujoco><asset><model name="arm" file="robots/arm.xml"/></asset>
<worldbody>
  <body name="h" pos="0 0 1"><freejoint/><geom size=".1"/>
    <replicate count="3" offset="0.5 0 0" euler="0 0 30" sep="_">
      <body name="sib" pos="0 .2 0"><joint/><geom size=".02"/></body>
      <attach model="arm" body="base" prefix="a-"/>
      <geom name="rg" size=".01"/>
    </replicate>
  </body>
  <replicate count="2" offset="0 1 0"><replicate count="2" offset="0 0 1" sep="x">
    <frame pos=".1 0 0" euler="0 0 10"><attach model="arm" body="base" prefix="b-"/></frame>
  </replicate></replicate>
  <replicate count="2" offset="0 0 2"><attach model="arm" prefix="w-"/></replicate>
</worldbody>
<keyframe><key name="mine" qpos="1 2 3 1 0 0 0"/></keyframe>
</mujoco>"""


def test_attach_inside_replicate_matches_mujoco(tmp_path):
    """Each copy attached, named prefix + name + the copy's suffix; assets and keys once.

    The copies' tendons, actuators, sensors, equalities, pairs and exclusions follow copy by
    copy; the file's meshes and materials come once per <attach> (prefix + name), and its
    keyframes once, setting the first copy's joints and actuators, as MuJoCo 4.0 does.
    """
    path = _composed(tmp_path, REPLICATED_SCENE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf(str(path))
    ref = mujoco.MjModel.from_xml_path(str(path))
    _asset_names_equal(m, ref)
    assert m.names["body"][2:8] == ["sib_0", "a-base_0", "a-l1_0", "sib_1", "a-base_1", "a-l1_1"]
    assert m.names["body"][-4:] == ["w-base0", "w-l10", "w-base1", "w-l11"]
    assert m.names["mesh"] == ["a-tet", "b-tet", "w-tet"]
    assert m.names["key"] == ["mine", "a-home", "a-", "b-home", "b-", "w-home", "w-"]
    for f in ("actuator_trnid", "sensor_objid", "sensor_type", "tendon_num", "wrap_objid",
              "geom_matid", "geom_dataid", "actuator_gainprm", "tendon_length0", "jnt_range",
              "key_qpos", "key_qvel", "key_ctrl", "exclude_signature"):
        np.testing.assert_allclose(np.asarray(getattr(m, f), dtype=np.float64),
                                   getattr(ref, f), atol=TOL, err_msg=f)
    assert_same_model(path.read_text(), m=m, assets=_vfs(tmp_path))


def test_self_attach_inside_replicate_matches_mujoco():
    xml = SELF_ATTACH.replace('<attach body="arm" prefix="c-"/><attach frame="fr" prefix="f-"/>',
                              '<replicate count="2" sep="-" offset="0 0 .5"><attach body="arm" '
                              'prefix="c-"/><attach frame="fr" prefix="f-"/></replicate>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf_string(xml, filename="model.xml")
    m, ref = assert_same_model(xml, m=m)
    assert m.names["body"][-6:] == ["c-arm-0", "c-fore-0", "f-fb-0", "c-arm-1", "c-fore-1",
                                    "f-fb-1"]
    assert m.names["actuator"] == _names(ref, mujoco.mjtObj.mjOBJ_ACTUATOR, ref.nu)
    assert (m.nsensor, m.nkey) == (ref.nsensor, ref.nkey)
    _forward_matches(m, ref, 6, ctrl=True, tol=FORWARD_TOL)


def test_attach_inside_replicate_keeps_names_unique(tmp_path):
    scene = ('<mujoco><asset><model name="arm" file="robots/arm.xml"/></asset>\n<worldbody>'
             '<replicate count="2" sep="x"><attach model="arm" body="l1" prefix="a-"/>'
             '</replicate>\n<attach model="arm" body="l1" prefix="a-"/></worldbody></mujoco>')
    path = _composed(tmp_path, scene)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(ModelError, match="duplicate mesh name 'a-tet'"):
        load_mjcf(str(path))


KEYED_ARM = """<mujoco model="keyed">
  <worldbody>
    <body name="target" mocap="true" pos="1 2 3"><geom size=".05" contype="0" conaffinity="0"/>
    </body>
    <body name="base" pos="0 0 0.1"><joint name="j0" axis="0 0 1" range="-1 1"/>
      <geom name="bg" type="capsule" fromto="0 0 0 0 0 0.3" size=".03"/>
      <body name="l1" pos="0 0 0.3"><joint name="j1" axis="0 1 0"/><geom size="0.02"/></body>
    </body>
    <body name="target2" mocap="true" pos="4 5 6" euler="0 0 30"/>
  </worldbody>
  <actuator><motor name="m0" joint="j0"/><general name="ia" joint="j1" dyntype="integrator"/>
    <general name="fa" joint="j0" dyntype="filter" dynprm=".1"/></actuator>
  <keyframe>
    <key name="home" qpos="0.1 0.2" act="0.5 0.6" ctrl="1 2 3" mpos="1 1 1 2 2 2"
      mquat="0 1 0 0 0 0 2 0"/>
    <key name="short" act="0.7" mpos="3 3 3 9" mquat="0 0 0 1"/>
  </keyframe>
</mujoco>"""

KEYED_SCENE = """<mujoco><asset><model name="arm" file="robots/arm.xml"/></asset>
<worldbody>
  <body name="mine" mocap="true" pos="0 0 9"/>
  <body name="h" pos="0 0 1"><freejoint/><geom size=".1"/>
    <attach model="arm" body="base" prefix="b-"/>
  </body>
  <attach model="arm" prefix="w-"/>
  <replicate count="2" offset="1 0 0"><attach model="arm" prefix="r-"/></replicate>
</worldbody>
<actuator><general name="own" joint="b-j0" dyntype="integrator"/></actuator>
<keyframe><key name="s" qpos="0 0 1 1 0 0 0" act="0.9" mpos="7 7 7"/></keyframe>
</mujoco>"""


def test_attached_keyframes_with_act_and_mocap_poses_match_mujoco(tmp_path):
    """An attached file's key sets the copy's activations and mocap poses too.

    act by the file's actuators with activations, mpos and mquat by its mocap bodies (a
    short vector completed body by body, quaternions normalized), as MuJoCo 4.0 merges them.
    Rows 1, 2 are the keys of a copy of body `base` (no mocap body): MuJoCo 4.0.0 writes
    their mpos and mquat into the model's next mocap bodies (w-target, w-target2), we leave
    those at the bodies' poses, as for joints and actuators outside a copy.
    """
    path = _composed(tmp_path, KEYED_SCENE, KEYED_ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf(str(path))
    ref = mujoco.MjModel.from_xml_path(str(path))
    assert m.names["key"] == _names(ref, mujoco.mjtObj.mjOBJ_KEY, ref.nkey) == [
        "s", "b-home", "b-short", "w-home", "w-short", "r-home", "r-short"]
    assert (m.na, m.nmocap) == (ref.na, ref.nmocap) == (9, 7)
    for f in ("key_qpos", "key_qvel", "key_act", "key_ctrl", "key_time"):
        np.testing.assert_allclose(getattr(m, f), getattr(ref, f), atol=TOL, err_msg=f)
    mocap = np.argsort(ref.body_mocapid)[-ref.nmocap:]
    for f, poses in (("key_mpos", ref.body_pos[mocap]), ("key_mquat", ref.body_quat[mocap])):
        rows = [0, 3, 4, 5, 6]
        np.testing.assert_allclose(getattr(m, f)[rows], getattr(ref, f)[rows], atol=TOL,
                                   err_msg=f)
        np.testing.assert_allclose(getattr(m, f)[1:3], [poses.ravel()] * 2, atol=TOL)
    # the first replicated copy's mocap bodies, set by r-home
    np.testing.assert_allclose(m.key_mquat[5, 4 * 3:4 * 5], [0, 1, 0, 0, 0, 0, 1, 0])


UNNAMED_ARM = """<mujoco model="unnamed">
  <worldbody>
    <body mocap="true" pos="1 2 3"/>
    <body name="base"><joint axis="0 0 1"/><geom size=".1"/>
      <body name="l1" pos="0 0 .3"><joint name="j1"/><geom size=".05"/></body></body>
  </worldbody>
  <actuator><motor joint="j1"/><general joint="j1" dyntype="integrator"/></actuator>
  <keyframe><key name="home" qpos="0.1 0.2" ctrl="3 4" act="5" mpos="7 8 9"/></keyframe>
</mujoco>"""


def test_attached_keyframes_set_unnamed_elements_as_in_mujoco(tmp_path):
    """An attached key sets the copy's unnamed joints, actuators and mocap bodies too.

    Regression: it set only named ones (found by name), so the values of unnamed ones stayed
    at qpos0 and zero where MuJoCo sets them.
    """
    scene = ('<mujoco><asset><model name="arm" file="robots/arm.xml"/></asset><worldbody>'
             '<attach model="arm" prefix="w-"/></worldbody></mujoco>')
    path = _composed(tmp_path, scene, UNNAMED_ARM)
    m = load_mjcf(str(path))
    ref = mujoco.MjModel.from_xml_path(str(path))
    for f in ("key_qpos", "key_ctrl", "key_act", "key_mpos", "key_mquat"):
        np.testing.assert_array_equal(getattr(m, f), getattr(ref, f), err_msg=f)
    np.testing.assert_array_equal(m.key_qpos, [[0.1, 0.2]])


def test_attach_of_a_missing_model_file_is_an_error(tmp_path):
    path = tmp_path / "scene.xml"
    path.write_text('<mujoco><asset>\n<model name="arm" file="gone.xml"/></asset>'
                    '<worldbody/></mujoco>')
    with pytest.raises(ModelError, match=r"scene.xml:2 <model name='arm'>.*'gone.xml' not found"):
        load_mjcf(str(path))


OPTIONED = """<mujoco model="opt"><compiler {options}/>
<asset><mesh name="tet" vertex="0 0 0 0.3 0 0 0 0.2 0 0 0 0.4"/></asset>
<worldbody><body name="b" pos="0 0 1"><freejoint/><geom size=".01" mass="0.001" group="4"/>
  <geom type="box" size=".1 .2 .3" mass="2" pos=".1 0 0"/>
  <geom type="sphere" mesh="tet" contype="0" conaffinity="0" mass="0.5"/>{inertial}</body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("options, inertial", [
    ('inertiafromgeom="true"', '<inertial pos="0 0 0" mass="5" diaginertia="1 .6 .5"/>'),
    ('boundmass="10" boundinertia="2"', ""),
    ('balanceinertia="true"', '<inertial pos="0 0 0" mass="5" diaginertia="1 .1 .1"/>'),
    ('inertiagrouprange="0 3"', ""), ('alignfree="true"', ""),
    ('settotalmass="100" discardvisual="true" fitaabb="true"', ""),
])
def test_attached_bodies_keep_their_files_mass_options(tmp_path, options, inertial):
    """Per-body compiler options come with the attached bodies; whole-model ones do not."""
    arm = OPTIONED.format(options=options, inertial=inertial)
    scene = OPTIONED.format(options="", inertial="").replace(
        "<asset>", '<asset><model name="c" file="robots/arm.xml"/>').replace(
        "</worldbody>", '<attach model="c" body="b" prefix="x-"/></worldbody>')
    path = _composed(tmp_path, scene, arm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_mjcf(str(path))
    m, ref = assert_same_model(scene, m=m, assets=_vfs(tmp_path))
    np.testing.assert_allclose(m.body_inertia, ref.body_inertia, atol=TOL, rtol=TOL)
    np.testing.assert_allclose(m.geom_size, ref.geom_size, atol=TOL, rtol=TOL)


# ------------------------------------------------------------------------------------------
# equality constraints between sites, contact pairs and exclusions


# Forces of the solution are compared to the Newton solver's tolerance (1e-8) with margin.
SOLVE_TOL = 1e-6


def test_site_equalities_compile_and_move_as_in_mujoco():
    """Site connect/weld: MuJoCo's eq_objtype/obj ids, and the forces they exert.

    The rows themselves are compared with mj_forward in test_constraint.py (scene SITES);
    here force and torque sensors on the constrained bodies check the constraint forces'
    wrenches (cfrc_ext, mj_rnePostConstraint) and the whole solution at a moved state. The
    torque of a weld is left out: MuJoCo 4.0.0 applies a weld's rotational force to cfrc_ext
    otherwise than its published source, for body welds as for site welds (a known
    difference of the sensor stage, not of the constraint).
    """
    import jointspace as js
    from tests.test_constraint import SITES

    xml = SITES.replace("</mujoco>", """<sensor><force site="tip3"/><torque site="tip3"/>
        <force site="f"/><torque site="tip2"/><force site="b"/></sensor></mujoco>""")
    m, ref = assert_same_model(xml)
    assert list(m.eq_objtype) == [mujoco.mjtObj.mjOBJ_SITE] * 3
    ref.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    rd, d = mujoco.MjData(ref), js.make_data(m)
    rng = np.random.default_rng(3)
    qpos = ref.qpos0 + rng.uniform(-0.3, 0.3, ref.nq)
    for a in (ref.jnt_qposadr[ref.joint("i4").id], ref.jnt_qposadr[ref.njnt - 1] + 3):
        qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    qvel = rng.normal(size=ref.nv)
    rd.qpos[:], rd.qvel[:] = qpos, qvel
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(ref, rd)
    js.forward(m, d)
    for ours, theirs in ((d.qacc, rd.qacc), (d.sensordata, rd.sensordata)):
        np.testing.assert_allclose(ours, theirs, rtol=0,
                                   atol=SOLVE_TOL * max(1.0, np.abs(theirs).max()))


@pytest.mark.parametrize("eq, what", [
    ('<connect site1="s1"/>', "needs both site1 and site2"),
    ('<weld site1="s1" site2="s2" relpose="0 0 0 1 0 0 0"/>', "either site1 and site2"),
    ('<connect site1="s1" body2="b"/>', "either site1 and site2"),
    ('<connect site1="s1" site2="nope"/>', "'nope'"),
    ('<connect site1="s1" site2="s1"/>', "itself"),
])
def test_bad_site_equality_is_an_error(eq, what):
    xml = ('<mujoco><worldbody><body name="b"><joint/><geom size="0.1"/><site name="s1"/>'
           f'<site name="s2"/></body></worldbody><equality>\n{eq}</equality></mujoco>')
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    _error(xml, "model.xml:2 <", what)


PAIRS = """<mujoco>
<default><pair condim="4" friction="0.7 0.6 0.01 0.002 0.003" solref="0.03 0.9"/>
  <default class="p2"><pair margin="0.01" gap="0.002" solreffriction="-100 -5"
    solimp="0.8 0.9 0.01 0.4 3"/></default></default>
<worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
  <body name="a" pos="0 0 1"><freejoint/><geom name="ga" size="0.1"/></body>
  <body name="b" pos="1 0 1"><freejoint/><geom name="gb" type="box" size="0.1 0.1 0.1"/>
    <body name="c"><joint/><geom name="gc" size="0.05"/></body></body>
</worldbody>
<contact><pair name="p" geom1="floor" geom2="ga"/><pair class="p2" geom1="gb" geom2="floor"/>
  <pair geom1="ga" geom2="gc" condim="1" friction="0.3"/>
  <exclude name="x" body1="b" body2="c"/><exclude body1="a" body2="world"/></contact>
</mujoco>"""


def test_contact_pairs_and_exclusions_match_mujoco():
    assert_same_model(PAIRS)


DISCARD = """<mujoco><compiler discardvisual="{flag}"/>
<default><default class="vis"><geom contype="0" conaffinity="0" group="2"/></default></default>
<asset><mesh name="tet" vertex="0 0 0 0.3 0 0 0 0.2 0 0 0 0.4"/>
  <mesh name="box" vertex="0 0 0 1 0 0 0 1 0 1 1 0 0 0 1 1 0 1 0 1 1 1 1 1" scale=".1 .1 .1"/>
  <mesh name="unused" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/>
  <material name="red" rgba="1 0 0 1"/></asset>
<worldbody><geom name="floor" type="plane" size="1 1 0.1" material="red"/>
  <geom name="deco" class="vis" type="box" size="0.1 0.1 0.1" pos="0 0 2"/>
  <body name="a" pos="0 0 1"><freejoint/><geom name="ga" size="0.1"/>
    <geom class="vis" type="mesh" mesh="tet" material="red"/>
    <geom name="paired" class="vis" size="0.05" pos="0.2 0 0"/>
    <site name="s1" pos="0 0 0.3"/><site name="s2" pos="0.3 0 0.3"/>
    <geom name="wrap" class="vis" type="cylinder" size="0.05 0.1" pos="0.15 0 0.3"/></body>
  <body name="b" pos="1 0 1"><joint/><geom class="vis" type="mesh" mesh="box" mass="2"/>
    <geom type="mesh" mesh="box" pos="0 0.3 0"/><geom name="sensed" class="vis" size="0.03"/>
  </body>
</worldbody>
<contact><pair geom1="paired" geom2="floor"/></contact>
<tendon><spatial><site site="s1"/><geom geom="wrap"/><site site="s2"/></spatial></tendon>
<sensor><distance geom1="sensed" geom2="ga"/></sensor>
</mujoco>"""


@pytest.mark.parametrize("flag", ["true", "false"])
def test_discardvisual_matches_mujoco(flag):
    m, ref = assert_same_model(DISCARD.format(flag=flag))
    np.testing.assert_array_equal(m.geom_matid, ref.geom_matid)
    assert m.nmat == ref.nmat == (0 if flag == "true" else 1)


@pytest.mark.parametrize("attrs", [
    'boundmass="0.5" boundinertia="0.01"', 'settotalmass="7"', 'balanceinertia="true"',
    'boundmass="2" settotalmass="3" balanceinertia="true"',
])
def test_compiler_mass_options_match_mujoco(attrs):
    xml = ('<mujoco><compiler ' + attrs + '/><worldbody><body name="a" pos="0 0 1">'
           '<freejoint/><geom type="box" size="0.3 0.02 0.02" density="10"/>'
           '<body name="b" pos="0.3 0 0"><joint/><geom size="0.01"/></body></body>'
           '<body name="c"><joint/><inertial pos="0 0 0" mass="1" diaginertia="1 0.1 0.1"/>'
           '</body></worldbody></mujoco>')
    if "balanceinertia" not in attrs:
        xml = xml.replace('diaginertia="1 0.1 0.1"', 'diaginertia="1 0.6 0.5"')
    assert_same_model(xml)


# ------------------------------------------------------------------------------------------
# <compiler fusestatic>

FUSE = """<mujoco><compiler fusestatic="true"/>
<custom><tuple name="t"><element objtype="body" objname="tupled"/></tuple></custom>
<worldbody>
 <light target="lit" mode="targetbody"/><camera name="look" target="looked" mode="targetbody"/>
 <body name="s0" pos="1 0 0"><geom size=".1"/><body pos="0 1 0"><geom size=".2"/></body></body>
 <body name="a" pos="0 0 1" euler="10 20 30"><joint/><geom size=".1" mass="1"/>
   <body name="b" pos="0.2 0 0" euler="0 30 0"><geom type="box" size=".1 .2 .3" pos=".1 0 0"/>
     <body name="c" pos="0 0.3 0"><geom type="capsule" size=".05 .2" mass="2"/>
       <body name="d" pos="0 0 .3"><joint axis="1 0 0"/><geom size=".1"/>
         <camera name="cd" pos="0 0 1"/></body></body></body>
   <body name="e" pos="0 0 -0.3" quat="1 1 0 0"><geom size=".05" pos="0 .1 0"/>
     <site name="se" pos=".1 0 0"/><camera name="ce" pos="0 1 0"/>
     <body name="f" pos="0 .2 0"><joint axis="0 1 0"/><geom type="box" size=".1 .1 .1"/>
       <body name="g" pos=".1 0 0"><inertial pos="0 0 .1" mass="0.5" diaginertia=".1 .2 .3"/>
         <body pos="0 .1 0"><geom type="cylinder" size=".05 .1"/></body></body></body></body>
   <body name="welded"><geom size=".1"/></body><body name="excluded"><geom size=".1"/></body>
   <body name="sensed"><geom size=".1"/></body><body name="looked"><geom size=".1"/></body>
   <body name="lit"><geom size=".1"/></body><body name="tupled"><geom size=".1"/></body>
   <body name="forced"><geom size=".1"/><site name="fs"/></body>
   <body><geom size=".1"/><site name="ts"/></body>
   <body name="framed"><geom size=".1"/><site name="fr"/></body>
 </body>
 <body name="mocap" mocap="true"><geom size=".1" contype="0" conaffinity="0"/></body>
 <body name="o" pos="0 2 0"><joint/><geom size=".1"/></body>
</worldbody>
<equality><weld body1="welded"/></equality>
<contact><exclude body1="excluded" body2="o"/></contact>
<sensor><subtreecom body="c"/><framepos objtype="xbody" objname="o" reftype="body"
  refname="sensed"/><force site="fs"/><torque site="ts"/><framepos objtype="site" objname="fr"/>
</sensor>
</mujoco>"""


@pytest.mark.parametrize("attrs", ['inertiafromgeom="auto"', 'inertiafromgeom="true"',
                                   'settotalmass="7"', 'discardvisual="true"',
                                   'boundmass="0.5" boundinertia="0.01" balanceinertia="true"'])
def test_fusestatic_matches_mujoco(attrs):
    """Which bodies fuse, the merged inertias, the moved geoms, sites, cameras; one forward."""
    xml = FUSE.replace('fusestatic="true"', f'fusestatic="true" {attrs}')
    m, ref = assert_same_model(xml)
    names = m.names["body"]
    for kept in ("c", "welded", "excluded", "sensed", "looked", "lit", "tupled", "forced",
                 "mocap", "d", "f"):
        assert kept in names, kept
    for fused in ("s0", "b", "e", "g", "framed"):
        assert fused not in names, fused
    for f in ("body_inertia", "body_ipos", "body_iquat", "site_pos", "cam_pos"):
        np.testing.assert_allclose(getattr(m, f), getattr(ref, f), atol=TOL, err_msg=f)
    for f in ("body_geomadr", "body_geomnum", "site_bodyid", "cam_bodyid",
              "cam_targetbodyid", "jnt_bodyid", "dof_bodyid"):
        np.testing.assert_array_equal(getattr(m, f), getattr(ref, f), err_msg=f)
    np.testing.assert_array_equal(m.body_weldid, ref.body_weldid)
    _quat_close(m.cam_quat, ref.cam_quat, "cam_quat")
    d, md = js.make_data(m), mujoco.MjData(ref)
    rng = np.random.default_rng(3)
    d.qpos[:] = md.qpos[:] = ref.qpos0 + 0.3 * rng.normal(size=ref.nq)
    d.qvel[:] = md.qvel[:] = rng.normal(size=ref.nv)
    js.forward(m, d)
    mujoco.mj_forward(ref, md)
    np.testing.assert_allclose(d.qacc, md.qacc, atol=SOLVE_TOL, rtol=SOLVE_TOL)


def test_fusestatic_false_keeps_every_body():
    m, ref = assert_same_model(FUSE.replace('fusestatic="true"', 'fusestatic="false"'))
    assert m.nbody == ref.nbody == 22


MOCAP = """<mujoco>
<worldbody>
  <geom name="floor" type="plane" size="2 2 .1"/>
  <geom name="post" type="box" pos="0.3 0 0.1" size=".05 .05 .1"/>
  <body name="moc" mocap="true" pos="0.2 0 0.08"><geom name="mg" size=".1"/>
    <site name="ms" pos="0 0 .1"/></body>
  <body name="ball" pos="0.2 0 0.25"><freejoint/><geom name="bg" size=".08"/>
    <site name="bs"/></body>
  <body name="hand" mocap="true" pos="-0.5 0 0.5" euler="0 20 0"><geom name="hg" size=".06"/>
    <body name="palm" pos="0 0 -0.05"><geom name="pg" type="box" size=".05 .05 .02"/>
      <body name="finger" pos="0 0 -0.04"><joint name="fj" axis="1 0 0" damping=".1"/>
        <geom name="fg" type="capsule" size=".02 .05"/></body></body></body>
  <body name="held" pos="-0.5 0.4 0.5"><freejoint/><geom size=".05"/></body>
  <body name="arm" pos="0.8 0 0.5"><joint name="a1" axis="0 1 0"/>
    <geom name="ag" type="capsule" fromto="0 0 0 0 0 -.3" size=".03"/>
    <body name="tip" pos="0 0 -.3"><joint name="a2" axis="0 1 0"/><geom name="tg" size=".04"/>
    </body></body>
</worldbody>
<equality><weld body1="held" body2="hand" relpose="0 0.4 0 1 0 0 0"/>
  <connect body1="tip" body2="moc" anchor="0 0 0"/></equality>
<tendon><spatial stiffness="30" damping=".5" springlength=".05"><site site="ms"/>
  <site site="bs"/></spatial></tendon>
</mujoco>"""


def test_mocap_bodies_are_weld_roots_as_in_mujoco():
    """A mocap body roots its own weld group (MuJoCo 4.0's body_weldid), and physics follows.

    Regression: jointspace welded mocap bodies to the world, so the hinged finger under the
    mocap hand collided with the hand and palm (MuJoCo filters a body against its parent's
    weld group): 4 contacts where MuJoCo has 2, qacc off by 1e2. The mocap sphere touches
    the floor and a post (both dof-less: no contact) and a free ball (a contact); a weld and
    a connect hold bodies to the mocap bodies, a spring tendon ties the ball to a mocap site,
    and forces are applied to every body (those on the mocap bodies and the palm, which have
    no dofs, move nothing).
    """
    m, ref = assert_same_model(MOCAP)
    np.testing.assert_array_equal(m.body_weldid, ref.body_weldid)
    np.testing.assert_allclose(m.body_invweight0, ref.body_invweight0, rtol=FORWARD_TOL,
                               atol=FORWARD_TOL)
    assert [m.body_weldid[ref.body(n).id] for n in ("moc", "hand", "palm", "finger")] == [
        ref.body(n).id for n in ("moc", "hand", "hand", "finger")]
    d, md = js.make_data(m), mujoco.MjData(ref)
    rng = np.random.default_rng(7)
    mocap = np.argsort(ref.body_mocapid)[-ref.nmocap:]
    seen = 0
    for k in range(3):
        d.qpos[:] = md.qpos[:] = ref.qpos0 + 0.05 * k * rng.normal(size=ref.nq)
        d.qvel[:] = md.qvel[:] = 0.3 * k * rng.normal(size=ref.nv)
        d.mocap_pos[:] = md.mocap_pos[:] = ref.body_pos[mocap] + 0.01 * k
        d.xfrc_applied[:] = md.xfrc_applied[:] = rng.normal(size=(ref.nbody, 6))
        js.forward(m, d)
        mujoco.mj_forward(ref, md)
        ours = sorted(tuple(g) for g in d.contact_geom[:d.ncon[0]].tolist())
        assert ours == sorted(tuple(c.geom) for c in md.contact)
        assert (d.nefc[0], d.ncon[0]) == (md.nefc, md.ncon)
        seen += md.ncon
        np.testing.assert_allclose(d.qacc, md.qacc, rtol=0,
                                   atol=FORWARD_TOL * max(1.0, np.abs(md.qacc).max()))
        for f in ("ten_length", "ten_velocity", "qfrc_passive", "qfrc_constraint"):
            want = getattr(md, f)
            np.testing.assert_allclose(getattr(d, f), want, rtol=0, err_msg=f,
                                       atol=FORWARD_TOL * max(1.0, np.abs(want).max()))
        for b in range(1, ref.nbody):
            jacp, jacr = js.jacobian(m, d, b, d.xipos[b])
            mjp, mjr = np.zeros((3, ref.nv)), np.zeros((3, ref.nv))
            mujoco.mj_jac(ref, md, mjp, mjr, md.xipos[b], b)
            np.testing.assert_allclose(np.vstack((jacp, jacr)), np.vstack((mjp, mjr)),
                                       atol=FORWARD_TOL)
        # rays that skip static geoms see the mocap sphere (it is not welded to the world)
        for include_static in (True, False):
            geomid = np.zeros(1, dtype=np.int32)
            x = mujoco.mj_ray(ref, md, np.array([0.2, -1.0, 0.08]), np.array([0.0, 1.0, 0.0]),
                              None, int(include_static), -1, geomid)
            dist, g = js.ray(m, d, [0.2, -1.0, 0.08], [0.0, 1.0, 0.0],
                             include_static=include_static)
            assert g == geomid[0] == ref.geom("mg").id
            assert abs(dist - x) <= FORWARD_TOL
    assert seen >= 2
    # M⁻¹ with a hinged body under a mocap body (its parent's weld root has no dofs)
    M = np.zeros((ref.nv, ref.nv))
    mujoco.mj_fullM(ref, md, M)
    for _ in range(2):
        np.testing.assert_allclose(js.minv(m, d, md.qpos), np.linalg.inv(M), rtol=0,
                                   atol=FORWARD_TOL * np.abs(np.linalg.inv(M)).max())
