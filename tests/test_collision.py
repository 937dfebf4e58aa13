"""Collision: geometric invariants, filters, contact parameters, bad input, the contact view.

Parity with MuJoCo pair type by pair type is in test_collision_parity.py; here the contacts
are checked against geometry (brute-force searches, symmetry), and the driver's filters and
parameter rules against MuJoCo on models built for them.
"""

import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.collision import broadphase_count, collision
from jointspace.collision.convex import FACE_TOL
from jointspace.errors import JointspaceWarning
from jointspace.io.spec import ModelSpec
from tests._collision_cases import pair_xml, poses, random_quat

mujoco = pytest.importorskip("mujoco")

ORTHO_TOL = 1e-12  # frames are built with one normalization and a cross product
SWAP_TOL = 1e-9  # analytic pairs: the same arithmetic with operands exchanged
SWAP_TOL_EPA = (1e-6, 1e-3)  # distance, normal: EPA on B − A stops at a different polytope
CCD_CONVERGED = (1000, 1e-12)  # MuJoCo's defaults (35, 1e-6) stop EPA short in deep poses
BRUTE_TOL = 2e-5  # brute-force search: Nelder-Mead over directions from 8000 samples
EXACT = 1e-12  # parameters are copied or mixed by the same formula as MuJoCo's

PAIRS = [(a, b) for i, a in enumerate(("plane", "sphere", "capsule", "ellipsoid", "cylinder",
                                        "box", "mesh")) for b in ("sphere", "capsule",
                                                                   "ellipsoid", "cylinder",
                                                                   "box", "mesh")[max(0, i - 1):]]
TYPE_ID = {"sphere": 2, "capsule": 3, "ellipsoid": 4, "cylinder": 5, "box": 6, "mesh": 7}


def _load(xml):
    """The model of xml with GJK and EPA run to convergence (physical checks, not parity)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # vertex-only meshes are not closed surfaces
        m = js.load_string(xml)
    m.opt.ccd_iterations, m.opt.ccd_tolerance = CCD_CONVERGED
    return m


def _pair(t1, t2, seed, extra1="", extra2=""):
    rng = np.random.default_rng(seed)
    xml = pair_xml(t1, t2, rng, extra1, extra2)
    m = _load(xml)
    return m, js.make_data(m), poses(m.qpos0, rng, 200, t1 == "plane")


# ---------------------------------------------------------------------------------------------
# geometry


@pytest.mark.parametrize("t1, t2", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_contact_frames_are_orthonormal_and_right_handed(t1, t2):
    """Every contact frame is a rotation: orthonormal rows, third = first × second."""
    m, d, qs = _pair(t1, t2, seed=10)
    n = 0
    for q in qs:
        d.qpos[:] = q
        collision(m, d)
        for f in d.contact.frame:
            r = f.reshape(3, 3)
            np.testing.assert_allclose(r @ r.T, np.eye(3), atol=ORTHO_TOL)
            np.testing.assert_allclose(np.cross(r[0], r[1]), r[2], atol=ORTHO_TOL)
            n += 1
    assert n > 50


SAME = ["sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"]


@pytest.mark.parametrize("t", SAME)
def test_swapping_the_geoms_flips_the_normal(t):
    """Defining geom 2 before geom 1 swaps the contact's geoms and flips its normal.

    Analytic pairs flip exactly; EPA contacts to its tolerance. Clipped face contacts take
    the normal of geom 2's face, so swapping picks the other face: within 5° (FACE_TOL); a
    cylinder's contacts may come from the other cap (a cap normal either way).
    """
    xml = pair_xml(t, t, np.random.default_rng(11))
    swapped = pair_xml(t, t, np.random.default_rng(11), swap=True)
    rng = np.random.default_rng(11)
    m, m2 = _load(xml), _load(swapped)
    d, d2 = js.make_data(m), js.make_data(m2)
    clipped = t in ("cylinder", "mesh")
    tol_d, tol_n = (SWAP_TOL, SWAP_TOL) if t in ("sphere", "capsule", "box") else SWAP_TOL_EPA
    n = 0
    for q in poses(m.qpos0, rng, 200, False):
        d.qpos[:] = q
        d2.qpos[:] = np.r_[q[7:14], q[0:7]]
        collision(m, d)
        collision(m2, d2)
        assert len(d.contact) == len(d2.contact)
        for i in range(len(d.contact)):
            j = int(np.argmin(np.linalg.norm(d2.contact.pos - d.contact.pos[i], axis=1)))
            # geom ids swap between the models: id k there is geom 1 - k here
            np.testing.assert_array_equal(1 - d2.contact.geom[j], d.contact.geom[i][::-1])
            n += 1
            if clipped and len(d.contact) > 1:
                if t == "cylinder":
                    # geom 1's side line is tried on geom 2's cap before the reverse (MuJoCo
                    # 4.0), so the swapped pair may clip the other side line on the other cap
                    axes = d.geom_xmat.reshape(-1, 3, 3)[:, :, 2]
                    assert np.abs(axes @ d2.contact.normal[j]).max() > FACE_TOL
                    continue
                assert np.dot(d2.contact.normal[j], -d.contact.normal[i]) > FACE_TOL
                continue
            np.testing.assert_allclose(d2.contact.normal[j], -d.contact.normal[i], atol=tol_n)
            np.testing.assert_allclose(d2.contact.dist[j], d.contact.dist[i], atol=tol_d)
    assert n > 50


@pytest.mark.parametrize("t1, t2", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_separated_beyond_margin_gives_no_contact(t1, t2):
    """Geoms whose bounding spheres are margin + gap + 1 mm apart never touch."""
    m, d, qs = _pair(t1, t2, seed=12, extra2='margin="0.02" gap="0.01"')
    rb = m.geom_rbound
    rng = np.random.default_rng(12)
    for q in qs[:50]:
        q = q.copy()
        if t1 == "plane":
            q[2] = rb[1] + 0.031
        else:
            u = rng.normal(size=3)
            q[7:10] = q[0:3] + u / np.linalg.norm(u) * (rb[0] + rb[1] + 0.031)
        d.qpos[:] = q
        assert collision(m, d) == 0


def _support(t, pos, mat, size, verts, u):
    """Support points of a geom along the unit rows of u."""
    r = mat.reshape(3, 3)
    loc = u @ r
    if t == 2:
        s = loc * size[0]
    elif t == 3:
        s = loc * size[0]
        s[:, 2] += np.where(loc[:, 2] >= 0, size[1], -size[1])
    elif t == 4:
        e = loc * size
        s = e / np.linalg.norm(e, axis=1, keepdims=True) * size
    elif t == 5:
        rad = np.linalg.norm(loc[:, :2], axis=1, keepdims=True)
        s = np.c_[loc[:, :2] / rad * size[0], np.where(loc[:, 2] >= 0, size[1], -size[1])]
    elif t == 6:
        s = np.where(loc >= 0, size, -size)
    else:
        s = verts[np.argmax(loc @ verts.T, axis=1)]
    return s @ r.T + pos


def _brute_signed_distance(a, b, rng):
    """Max over directions u of (min over B of u·x − max over A of u·x): the signed distance.

    For convex A, B this is the distance when they are apart and minus the penetration depth
    when they overlap; sampled densely, then refined by Nelder-Mead.
    """
    from scipy.optimize import minimize

    def sep(u):
        u = np.atleast_2d(u) / np.linalg.norm(np.atleast_2d(u), axis=1, keepdims=True)
        return (np.einsum("ij,ij->i", _support(*b, -u), u)
                - np.einsum("ij,ij->i", _support(*a, u), u))

    u = rng.normal(size=(8000, 3))
    s = sep(u)
    best = -np.inf
    for u0 in u[np.argsort(s)[-3:]]:
        r = minimize(lambda x: -sep(x)[0], u0, method="Nelder-Mead",
                     options=dict(xatol=1e-9, fatol=1e-12, maxiter=2000))
        best = max(best, -r.fun)
    return best


CONVEX = [("sphere", "ellipsoid"), ("ellipsoid", "box"), ("cylinder", "cylinder"),
          ("box", "mesh"), ("mesh", "mesh")]


@pytest.mark.parametrize("t1, t2", CONVEX, ids=[f"{a}-{b}" for a, b in CONVEX])
def test_convex_distance_matches_brute_force(t1, t2):
    """The deepest contact's distance equals a brute-force search over separating directions.

    Geoms have a 5 cm margin, so separated pairs (positive distance) are reported too.
    Multi-contact pairs are compared only where one contact came back (the deepest
    point is then the reported one).
    """
    m, d, qs = _pair(t1, t2, seed=13, extra1='margin="0.05"')
    rng = np.random.default_rng(13)
    verts = m.hull_vert
    ntest = npos = 0
    for q in qs[:60]:
        d.qpos[:] = q
        if collision(m, d) != 1:
            continue
        a = (TYPE_ID[t1], d.geom_xpos[0], d.geom_xmat[0], m.geom_size[0], verts)
        b = (TYPE_ID[t2], d.geom_xpos[1], d.geom_xmat[1], m.geom_size[1], verts)
        truth = _brute_signed_distance(a, b, rng)
        assert abs(d.contact.dist[0] - truth) < BRUTE_TOL, (d.contact.dist[0], truth)
        ntest += 1
        npos += d.contact.dist[0] > 0
        if ntest == 12:
            break
    assert ntest == 12 and npos > 0


def test_separated_mesh_distance_matches_sampled_hulls():
    """For separated hulls within the margin, dist is the distance between sampled surfaces."""
    m, d, qs = _pair("mesh", "mesh", seed=14, extra1='margin="0.1"')
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(14)
    n = 0
    for q in qs:
        d.qpos[:] = q
        collision(m, d)
        if len(d.contact) == 0 or d.contact.dist.min() <= 0.005:
            continue
        pts = []
        for g in (0, 1):
            w = m.hull_vert @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
            tri = np.concatenate([np.c_[m.hullpoly_vert[a:a + 1].repeat(k - 2),
                                        m.hullpoly_vert[a + 1:a + k - 1],
                                        m.hullpoly_vert[a + 2:a + k]]
                                  for a, k in zip(m.hullpoly_vertadr, m.hullpoly_vertnum)])
            u = rng.random((20000, 2))
            u[u.sum(1) > 1] = 1 - u[u.sum(1) > 1]
            f = tri[rng.integers(len(tri), size=20000)]
            pts.append(w[f[:, 0]] + u[:, :1] * (w[f[:, 1]] - w[f[:, 0]])
                       + u[:, 1:] * (w[f[:, 2]] - w[f[:, 0]]))
        sampled = cKDTree(pts[0]).query(pts[1])[0].min()
        # the sampled distance is an upper bound that converges to the true one
        assert d.contact.dist.min() <= sampled + 1e-9
        assert sampled - d.contact.dist.min() < 3e-3
        n += 1
        if n == 10:
            break
    assert n == 10


def test_margin_and_gap_follow_mujoco():
    """Margins and gaps add over the pair; contacts in the gap are kept but marked excluded."""
    rng = np.random.default_rng(15)
    xml = pair_xml("box", "box", rng, 'margin="0.01" gap="0.005"', 'margin="0.02" gap="0.01"')
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    m = _load(xml)
    d = js.make_data(m)
    nex = 0
    for q in poses(m.qpos0, rng, 300, False):
        md.qpos[:] = q
        mujoco.mj_forward(mm, md)
        d.qpos[:] = q
        n = collision(m, d)
        assert n == md.ncon
        np.testing.assert_allclose(d.contact.includemargin, md.contact.includemargin[:n])
        np.testing.assert_array_equal(d.contact.exclude, md.contact.exclude[:n])
        np.testing.assert_allclose(d.contact.gap, 0.015)
        assert np.all(d.contact.dist <= 0.045 + 1e-12)
        nex += d.contact.exclude.sum()
    assert nex > 0


# ---------------------------------------------------------------------------------------------
# filters and parameters

FILTER_XML = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="a" pos="0 0 0.05">
      <freejoint/>
      <geom name="a" type="box" size=".1 .1 .1" priority="1" friction="0.5 0.01 0.001"
            solref="0.01 0.5" condim="4"/>
      <body name="a_child" pos="0 0 0.1">
        <joint type="hinge"/>
        <geom name="a_child" type="sphere" size=".08"/>
        <body name="a_grandchild" pos="0 0 0.1">
          <joint type="hinge"/>
          <geom name="a_grandchild" type="sphere" size=".08"/>
        </body>
      </body>
      <body name="a_welded" pos="0.1 0 0">
        <geom name="a_welded" type="sphere" size=".08"/>
      </body>
    </body>
    <body name="b" pos="0.15 0 0.05">
      <freejoint/>
      <geom name="b" type="box" size=".1 .1 .1" solmix="3" solref="0.03 2"
            solimp="0.8 0.9 0.01 0.4 3" friction="2 0.02 0.0001" condim="6"/>
    </body>
    <body name="c" pos="-0.15 0 0.05">
      <freejoint/>
      <geom name="c" type="box" size=".1 .1 .1" contype="2" conaffinity="2"/>
    </body>
    <body name="e" pos="0 0.15 0.05">
      <freejoint/>
      <geom name="e" type="box" size=".1 .1 .1"/>
    </body>
  </worldbody>
  <contact>
    <exclude body1="a" body2="e"/>
    <pair geom1="c" geom2="a" condim="1" friction="0.3 0.3 0.01 0.002 0.002" margin="0.01"
          solref="0.05 1.5"/>
  </contact>
</mujoco>
"""


def test_filters_match_mujoco():
    """contype/conaffinity, welds, parent-child, exclusions and explicit pairs, as MuJoCo.

    a-c (bitmask off) collide only through the explicit pair, with its parameters; a-e is
    excluded; a and its welded child never collide; a and a_child (parent) never; a and
    a_grandchild do; b mixes with a by priority and with the floor by solmix.
    """
    mm = mujoco.MjModel.from_xml_string(FILTER_XML)
    md = mujoco.MjData(mm)
    m = js.load_string(FILTER_XML)
    d = js.make_data(m)
    rng = np.random.default_rng(16)
    seen = set()
    for _ in range(300):
        q = mm.qpos0.copy()
        q += rng.normal(scale=0.05, size=mm.nq)
        for adr in (0, 9, 16, 23):
            q[adr + 3:adr + 7] /= np.linalg.norm(q[adr + 3:adr + 7])
        md.qpos[:] = q
        mujoco.mj_forward(mm, md)
        d.qpos[:] = q
        n = collision(m, d)
        assert n == md.ncon
        np.testing.assert_array_equal(d.contact.geom, md.contact.geom[:n])
        for f in ("dim", "friction", "solref", "solreffriction", "solimp", "includemargin",
                  "dist", "pos", "frame"):
            np.testing.assert_allclose(getattr(d.contact, f), getattr(md.contact, f)[:n],
                                       atol=EXACT, err_msg=f)
        seen |= {tuple(sorted(m.names["geom"][g] for g in gg)) for gg in d.contact.geom}
    assert ("a", "c") in seen and ("a", "b") in seen and ("a_grandchild", "b") in seen
    assert ("a", "e") not in seen
    assert ("a", "a_welded") not in seen and ("a", "a_child") not in seen


def test_pair_table_beyond_its_scratch_matches_mujoco():
    """A pair table larger than Data.scratch_pairs (48 ngeom + 64) is allocated for the call.

    Three geoms on a 60-body chain with 40 explicit pairs need 9 (pairs) + 2 nbody + 1 >
    208 entries; the contacts, their order and parameters must still be MuJoCo's. Zero
    friction coefficients (explicit and mixed) become MuJoCo's least, 1e-5, as in MuJoCo.
    """
    links = "".join('<body pos="0 0 0.01"><joint type="hinge" axis="0 1 0"/>'
                    '<inertial pos="0 0 0" mass="0.1" diaginertia="1e-3 1e-3 1e-3"/>'
                    for _ in range(60)) + "</body>" * 60
    pairs = "".join(f'<pair geom1="{a}" geom2="{b}" friction="{0.5 + 0.01 * k} 0.01 0.01 0 0"/>'
                    for k in range(20) for a, b in (("s1", "floor"), ("s1", "s2")))
    xml = f"""<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1" friction="0 0 0"/>
      <body pos="0 0 0.09"><freejoint/><geom name="s1" type="sphere" size="0.1"/></body>
      <body pos="0.15 0 0.09"><freejoint/>
        <geom name="s2" type="sphere" size="0.1" friction="0 0 0"/></body>
      <body pos="2 0 1">{links}</body></worldbody><contact>{pairs}</contact></mujoco>"""
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)
    m = js.load_string(xml)
    d = js.make_data(m)
    n = collision(m, d)
    assert 9 * (m.npair + 2) + 2 * m.nbody + 1 > d.scratch_pairs.shape[0]
    assert n == md.ncon > 40
    assert d.contact.friction.min() == 1e-5
    np.testing.assert_array_equal(d.contact.geom, md.contact.geom[:n])
    for f in ("dim", "friction", "solref", "dist", "pos", "frame"):
        np.testing.assert_allclose(getattr(d.contact, f), getattr(md.contact, f)[:n],
                                   atol=EXACT, err_msg=f)


def test_explicit_pair_parameters():
    """An explicit pair's own condim, friction, solref and margin reach its contacts."""
    m = js.load_string(FILTER_XML)
    d = js.make_data(m)
    collision(m, d)
    ia, ic = m.geom("a"), m.geom("c")
    rows = [i for i in range(len(d.contact)) if set(d.contact.geom[i]) == {ia, ic}]
    assert rows
    for i in rows:
        assert d.contact.dim[i] == 1
        np.testing.assert_allclose(d.contact.friction[i], [0.3, 0.3, 0.01, 0.002, 0.002])
        np.testing.assert_allclose(d.contact.solref[i], [0.05, 1.5])
        assert d.contact.includemargin[i] == 0.01


# ---------------------------------------------------------------------------------------------
# bad input, capacity, API


def test_nan_pose_warns_and_gives_no_contacts():
    """A NaN in qpos makes the geom poses non-finite: a warning naming the geom, no contacts."""
    m = js.models.humanoid()
    d = js.make_data(m)
    assert collision(m, d) > 0
    d.qpos[0] = np.nan
    with pytest.warns(JointspaceWarning, match="non-finite pose"):
        assert collision(m, d) == 0
    assert len(d.contact) == 0
    d.qpos[:] = m.qpos0
    assert collision(m, d) > 0


def test_contact_buffer_overflow_warns_and_stays_in_bounds():
    """Contacts beyond nconmax are dropped with a warning; the arrays keep their size."""
    spec_m = js.models.humanoid()
    full = collision(spec_m, js.make_data(spec_m))
    xml = pair_xml("plane", "box", np.random.default_rng(0))
    from jointspace.io.mjcf import parse_mjcf

    spec = parse_mjcf(xml)
    assert isinstance(spec, ModelSpec)
    spec.nconmax = 2
    m = js.compile_model(spec)
    assert m.nconmax == 2
    d = js.make_data(m)
    d.qpos[2] = 0.0  # the box straddles the floor: 4 corner contacts
    with pytest.warns(JointspaceWarning, match="did not fit in nconmax = 2"):
        assert collision(m, d) == 2
    assert d.contact_pos.shape == (2, 3)
    assert d.collision_warning[0, 1] == 2
    assert full > 0


def test_default_nconmax():
    """Nconmax defaults to max(100, 8 ngeom)."""
    assert js.models.humanoid().nconmax == 160
    assert js.load_string(pair_xml("sphere", "box", np.random.default_rng(0))).nconmax == 100


def test_kinematics_false_uses_current_geom_poses():
    """With kinematics=False the stage reads d.geom_xpos / geom_xmat as they are."""
    m = js.models.humanoid()
    d = js.make_data(m)
    js.kinematics(m, d)
    n = collision(m, d, kinematics=False)
    d.qpos[2] += 10.0  # not applied without kinematics
    assert collision(m, d, kinematics=False) == n
    assert collision(m, d) == 0


def test_contact_view():
    """d.contact exposes the first ncon rows by MuJoCo's names."""
    m = js.models.humanoid()
    d = js.make_data(m)
    n = collision(m, d)
    c = d.contact
    assert len(c) == n == int(d.ncon[0])
    assert c.pos.shape == (n, 3) and c.frame.shape == (n, 9) and c.geom.shape == (n, 2)
    np.testing.assert_array_equal(c.normal, d.contact_frame[:n, :3])
    np.testing.assert_array_equal(c.geom1, d.contact_geom[:n, 0])
    first = c[0]
    assert first["dim"] == d.contact_dim[0] and first["dist"] == d.contact_dist[0]
    assert len(list(c)) == n
    assert f"{n} contacts" in repr(c)
    with pytest.raises(AttributeError, match="fields: dist"):
        c.depth
    with pytest.raises(IndexError):
        c[n]


def test_wrong_arguments_are_rejected():
    """The stage checks its arguments before entering compiled code."""
    m = js.models.humanoid()
    other = js.models.arm2()
    with pytest.raises(TypeError, match="collision"):
        collision(m, np.zeros(3))
    with pytest.raises(ValueError, match="different model"):
        collision(m, js.make_data(other))


def _scene(n, seed):
    """N spheres and boxes at random in a cube whose volume grows with n (constant density)."""
    rng = np.random.default_rng(seed)
    side = 0.5 * n ** (1 / 3)
    parts = ['<mujoco><worldbody><geom type="plane" size="10 10 .1"/>']
    for i in range(n):
        p = rng.uniform(0, side, 3)
        q = random_quat(rng)
        g = ('type="sphere" size=".1"' if i % 2 else 'type="box" size=".08 .08 .08"')
        parts.append(f'<body pos="{p[0]} {p[1]} {p[2] + 0.1}" quat="{q[0]} {q[1]} {q[2]} {q[3]}">'
                     f'<freejoint/><geom {g}/></body>')
    parts.append("</worldbody></mujoco>")
    return "".join(parts)


def test_broadphase_grows_near_linearly():
    """Box-overlap candidates per geom stay bounded as a scene grows at constant density.

    The plane adds exactly one candidate per geom; the rest comes from the sweep.
    """
    counts = {}
    for n in (25, 50, 100, 200):
        m = js.load_string(_scene(n, seed=17))
        d = js.make_data(m)
        js.kinematics(m, d)
        counts[n] = broadphase_count(m, d) - n
    per_geom = [counts[n] / n for n in counts]
    assert max(per_geom) < 3 * min(per_geom) + 1, counts
    assert counts[200] < 0.05 * 200 * 199 / 2, counts  # far below all pairs


def test_open_mesh_collides_as_its_hull():
    """A mesh given as an open surface still collides as its convex hull."""
    xml = """<mujoco><asset><mesh name="m" vertex="-1 -1 0 1 -1 0 1 1 0 -1 1 0 0 0 1"
             face="0 1 4 1 2 4 2 3 4 3 0 4" scale=".1 .1 .1"/></asset>
             <worldbody><geom type="plane" size="1 1 .1"/>
             <body pos="0 0 0.01" quat="0 1 0 0"><freejoint/><geom type="mesh" mesh="m"/></body>
             </worldbody></mujoco>"""
    m = js.load_string(xml)
    assert any("not closed" in w for w in m.warnings)
    d = js.make_data(m)
    assert collision(m, d) >= 1
    assert np.all(d.contact.dist < 0.01 + 1e-9)
