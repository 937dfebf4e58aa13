"""Collision parity with MuJoCo's mj_collision, pair type by pair type, 1000 seeded poses each.

Every model has two geoms of the tested types, each on a body with a free joint (a plane sits
in the world body); the poses put them near contact, so about half the poses touch. Contacts
are matched by geom pair and nearest position.

- Analytic pairs (and plane-ellipsoid): the same contacts in every pose, to round-off.
- Convex pairs of a sphere or ellipsoid (one contact): the same contact in every pose. MuJoCo
  runs here with converged CCD (ccd_iterations 1000, ccd_tolerance 1e-10): with its defaults
  (35, 1e-6) its EPA stops up to 4e-3 m short of the true depth in deep penetrations, where
  jointspace's agrees with a brute-force search (tests/test_collision.py).
- Multi-contact convex pairs (boxes, meshes, cylinders, capsules) and plane-mesh: the
  contacts agree wherever MuJoCo's multi-contact keeps the contact normal of its own
  single-contact (EPA) result, up to the documented differences in feature choice
  (`jointspace.collision.driver`); the fraction of such poses that agree exactly is
  asserted, and jointspace's single contacts always equal MuJoCo's EPA contact.
"""

import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.collision import collision
from tests._collision_cases import pair_xml, poses, random_quat

mujoco = pytest.importorskip("mujoco")

NPOSE = 1000
ANALYTIC_TOL = 1e-9  # analytic pairs: same formulas in double precision, round-off only
CONVEX_DIST_TOL = 1e-9  # both engines run MuJoCo 4.0's GJK and EPA to 1000 iterations,
# 1e-10 (equal bit for bit to 10 iterations; beyond, the last digits of long runs: measured
# 9.4e-11 m, ellipsoid-mesh); the bound
CONVEX_NORMAL_TOL = 3e-3  # a smooth surface's depth is flat in the normal: equal depths to
# 1e-10 leave the normal free by about its square root (measured 1.6e-3, ellipsoid-cylinder)
CONVEX_POS_TOL = 1e-4  # contact points follow the normal error over the geom size (9.6e-5)
AGREE_FRACTION = 0.95  # multi-contact poses that must agree exactly where definitions coincide
MULTI_DIST_TOL = 5e-5  # a multi-contact set's depths: points clipped on flat features after
# EPA on discrete shapes, whose long runs differ in the last digits (measured, mesh-mesh: 90%
# of the poses within 8e-10, 95% within 1.5e-9, 3% beyond 5e-5 where EPA ends on another face)
FEATURE_DEPTH_TOL = 0.01  # clipped points' depth is taken along a face normal up to 5° off

ANALYTIC = [("plane", "sphere"), ("plane", "capsule"), ("plane", "cylinder"), ("plane", "box"),
            ("plane", "ellipsoid"), ("sphere", "sphere"), ("sphere", "capsule"),
            ("sphere", "cylinder"), ("sphere", "box"), ("capsule", "capsule"),
            ("capsule", "box"), ("box", "box")]
SINGLE = [("sphere", "ellipsoid"), ("sphere", "mesh"), ("capsule", "ellipsoid"),
          ("ellipsoid", "ellipsoid"), ("ellipsoid", "cylinder"), ("ellipsoid", "box"),
          ("ellipsoid", "mesh")]
MULTI = [("capsule", "cylinder"), ("capsule", "mesh"), ("cylinder", "cylinder"),
         ("cylinder", "box"), ("cylinder", "mesh"), ("box", "mesh"), ("mesh", "mesh"),
         ("plane", "mesh")]


def models(t1, t2, seed, converged=False, single=False, extra1="", extra2=""):
    """(MuJoCo model, data, jointspace model, data, poses) for a pair type."""
    rng = np.random.default_rng(seed)
    xml = pair_xml(t1, t2, rng, extra1, extra2)
    mm = mujoco.MjModel.from_xml_string(xml)
    if converged:
        mm.opt.ccd_iterations, mm.opt.ccd_tolerance = 1000, 1e-10
    if single:
        mm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_MULTICCD
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # vertex-only meshes are not closed surfaces
        jm = js.load_string(xml)
    if converged:  # both engines stop their GJK and EPA where the model says
        jm.opt.ccd_iterations, jm.opt.ccd_tolerance = 1000, 1e-10
    return mm, mujoco.MjData(mm), jm, js.make_data(jm), poses(mm.qpos0, rng, NPOSE, t1 == "plane")


def theirs(mm, md, q):
    """MuJoCo's contacts at q as (geom pair, pos, frame, dist) tuples."""
    md.qpos[:] = q
    mujoco.mj_forward(mm, md)
    c = md.contact
    return [(tuple(c.geom[i]), c.pos[i].copy(), c.frame[i].copy(), c.dist[i])
            for i in range(md.ncon)]


def ours(jm, jd, q):
    """The contacts jointspace finds at q, same layout as `theirs`."""
    jd.qpos[:] = q
    collision(jm, jd)
    c = jd.contact
    return [(tuple(c.geom[i]), c.pos[i].copy(), c.frame[i].copy(), c.dist[i])
            for i in range(len(c))]


def match(a, b):
    """Pair each contact of a with the nearest contact of b of the same geoms.

    Returns the largest (distance, normal, position, frame) differences.
    """
    err = np.zeros(4)
    for ga, pa, fa, da in a:
        cand = [c for c in b if c[0] == ga]
        if not cand:
            return np.full(4, np.inf)
        gb, pb, fb, db = min(cand, key=lambda c: np.linalg.norm(c[1] - pa))
        err = np.maximum(err, [abs(da - db), np.linalg.norm(fa[:3] - fb[:3]),
                               np.linalg.norm(pa - pb), np.abs(fa - fb).max()])
    return err


@pytest.mark.parametrize("t1, t2", ANALYTIC, ids=[f"{a}-{b}" for a, b in ANALYTIC])
def test_analytic_pairs_match_mujoco(t1, t2):
    """Same number of contacts in every pose; distance, normal, frame and point to round-off."""
    mm, md, jm, jd, qs = models(t1, t2, seed=1)
    worst = np.zeros(4)
    ntouch = 0
    for i, q in enumerate(qs):
        a, b = theirs(mm, md, q), ours(jm, jd, q)
        assert len(a) == len(b), f"pose {i}: MuJoCo {len(a)} contacts, jointspace {len(b)}"
        worst = np.maximum(worst, match(a, b))
        ntouch += bool(a)
    assert ntouch > NPOSE // 4, "too few poses in contact to test anything"
    assert worst[0] < ANALYTIC_TOL, f"distance differs by {worst[0]:.3g}"
    assert worst[1] < ANALYTIC_TOL, f"normal differs by {worst[1]:.3g}"
    assert worst[2] < ANALYTIC_TOL, f"position differs by {worst[2]:.3g}"
    assert worst[3] < ANALYTIC_TOL, f"frame differs by {worst[3]:.3g}"


@pytest.mark.parametrize("t1, t2", SINGLE, ids=[f"{a}-{b}" for a, b in SINGLE])
def test_single_contact_convex_pairs_match_mujoco(t1, t2):
    """One contact or none, as MuJoCo (converged CCD) finds, with its distance and normal."""
    mm, md, jm, jd, qs = models(t1, t2, seed=2, converged=True)
    worst = np.zeros(4)
    ntouch = 0
    for i, q in enumerate(qs):
        a, b = theirs(mm, md, q), ours(jm, jd, q)
        assert len(a) == len(b), f"pose {i}: MuJoCo {len(a)} contacts, jointspace {len(b)}"
        worst = np.maximum(worst, match(a, b))
        ntouch += bool(a)
    assert ntouch > NPOSE // 4
    assert worst[0] < CONVEX_DIST_TOL, f"distance differs by {worst[0]:.3g}"
    assert worst[1] < CONVEX_NORMAL_TOL, f"normal differs by {worst[1]:.3g}"
    assert worst[2] < CONVEX_POS_TOL, f"position differs by {worst[2]:.3g}"


@pytest.mark.parametrize("t1, t2", MULTI, ids=[f"{a}-{b}" for a, b in MULTI])
def test_multi_contact_convex_pairs_match_mujoco(t1, t2):
    """Contact sets agree where MuJoCo keeps its EPA normal; no contact is much deeper than EPA's.

    MuJoCo also clips features at the witness points that do not face the contact normal
    (then it reports that face's normal; tests/test_ccd_parity.py compares those): here such
    poses are compared through the depth bound only, which is FEATURE_DEPTH_TOL or, where a
    feature of MuJoCo's own reaches deeper, MuJoCo's overshoot.
    """
    mm, md, jm, jd, qs = models(t1, t2, seed=3, converged=True)
    m1, d1, _, _, _ = models(t1, t2, seed=3, converged=True, single=True)
    coincide = agree = presence = 0
    overshoot = overshoot_mj = 0.0
    for q in qs:
        a, b, s = theirs(mm, md, q), ours(jm, jd, q), theirs(m1, d1, q)
        presence += bool(a) == bool(b)
        if b and s:
            overshoot = max(overshoot, s[0][3] - min(c[3] for c in b))
        if a and s:
            overshoot_mj = max(overshoot_mj, s[0][3] - min(c[3] for c in a))
        if s and all(np.linalg.norm(c[2][:3] - s[0][2][:3]) < CONVEX_NORMAL_TOL for c in a):
            coincide += 1
            e = match(a, b)
            agree += (len(a) == len(b) and e[0] < MULTI_DIST_TOL
                      and e[1] < CONVEX_NORMAL_TOL and e[2] < CONVEX_POS_TOL)
    assert presence >= NPOSE - 2, f"contact found in different poses ({NPOSE - presence})"
    assert coincide > NPOSE // 5
    assert agree >= AGREE_FRACTION * coincide, f"{agree} of {coincide} poses agree"
    bound = max(FEATURE_DEPTH_TOL * max(jm.geom_rbound), overshoot_mj + CONVEX_DIST_TOL)
    assert overshoot < bound, f"a contact {overshoot:.3g} deeper than the penetration"


def test_default_ccd_settings_agree_in_shallow_contacts():
    """With MuJoCo's default CCD settings, shallow convex contacts still agree to 1e-4."""
    mm, md, jm, jd, qs = models("ellipsoid", "box", seed=4)
    n = 0
    for q in qs:
        a, b = theirs(mm, md, q), ours(jm, jd, q)
        assert len(a) == len(b)
        if a and a[0][3] > -0.02:
            e = match(a, b)
            assert e[0] < 1e-4 and e[1] < 1e-2
            n += 1
    assert n > 50


def _humanoid_poses(mm, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = mm.qpos0.copy()
        q[2] = rng.uniform(0.3, 1.4)
        q[3:7] = random_quat(rng)
        q[7:] += rng.normal(scale=0.8, size=mm.nq - 7)
        out.append(q)
    return out


def test_humanoid_contacts_match_mujoco_in_order_with_parameters():
    """MuJoCo's humanoid: the same contacts in the same order, with the same parameters.

    Exercises the broadphase and MuJoCo's filters on a real tree (self-collisions, parent-child,
    the floor) and the parameter mixing.
    """
    jm = js.models.humanoid()
    mm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    md = mujoco.MjData(mm)
    jd = js.make_data(jm)
    total = 0
    for q in _humanoid_poses(mm, 300, seed=5):
        md.qpos[:] = q
        mujoco.mj_forward(mm, md)
        jd.qpos[:] = q
        n = collision(jm, jd)
        assert n == md.ncon
        c = md.contact
        np.testing.assert_array_equal(jd.contact.geom, c.geom[:n])
        np.testing.assert_allclose(jd.contact.pos, c.pos[:n], atol=ANALYTIC_TOL)
        np.testing.assert_allclose(jd.contact.frame, c.frame[:n], atol=ANALYTIC_TOL)
        np.testing.assert_allclose(jd.contact.dist, c.dist[:n], atol=ANALYTIC_TOL)
        for f in ("friction", "solref", "solreffriction", "solimp", "includemargin", "dim",
                  "exclude"):
            np.testing.assert_allclose(getattr(jd.contact, f), getattr(c, f)[:n], err_msg=f)
        total += n
    assert total > 500
