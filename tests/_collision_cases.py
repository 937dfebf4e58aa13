"""Shared geometry cases for the collision tests: two-geom MJCF models and near-contact poses."""

import numpy as np

TYPES = ("plane", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh")
SIZE = {"sphere": "0.1", "capsule": "0.08 0.15", "ellipsoid": "0.1 0.15 0.07",
        "cylinder": "0.1 0.12", "box": "0.1 0.15 0.07", "plane": "0 0 1"}

def _mesh_asset(rng):
    """A convex polyhedron: 14 random points on an ellipsoid."""
    p = rng.normal(size=(14, 3))
    p *= np.array([0.12, 0.09, 0.1]) / np.linalg.norm(p, axis=1, keepdims=True)
    return '<asset><mesh name="m" vertex="%s"/></asset>' % " ".join(f"{x:.6f}" for x in p.ravel())


def _geom(t, name, extra=""):
    if t == "mesh":
        return f'<geom name="{name}" type="mesh" mesh="m" {extra}/>'
    return f'<geom name="{name}" type="{t}" size="{SIZE[t]}" {extra}/>'


def pair_xml(t1, t2, rng, extra1="", extra2="", swap=False):
    """MJCF of two geoms on free bodies (a plane in the world body); swap: body 2 first."""
    asset = _mesh_asset(rng) if "mesh" in (t1, t2) else ""
    body1 = (_geom("plane", "g1", extra1) if t1 == "plane"
             else f'<body name="b1"><freejoint/>{_geom(t1, "g1", extra1)}</body>')
    body2 = f'<body name="b2"><freejoint/>{_geom(t2, "g2", extra2)}</body>'
    bodies = body2 + body1 if swap else body1 + body2
    return f"<mujoco>{asset}<worldbody>{bodies}</worldbody></mujoco>"


def random_quat(rng):
    """A uniformly random unit quaternion."""
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def poses(qpos0, rng, n, plane, top=0.25, deep_every=0):
    """Joint positions that put the two geoms near contact.

    plane: the first geom is a plane, the second free body sits at height -0.05 to `top`;
    else the second body's centre is 0.05-0.35 from the first's, or with deep_every > 0,
    every deep_every-th pose deep (0.02-0.1) and the others 0.1-0.35.
    """
    out = []
    for i in range(n):
        q = qpos0.copy()
        if plane:
            q[0:3] = [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-0.05, top)]
            q[3:7] = random_quat(rng)
        else:
            q[0:3] = rng.uniform(-0.05, 0.05, 3)
            q[3:7] = random_quat(rng)
            u = rng.normal(size=3)
            if not deep_every:
                r = rng.uniform(0.05, 0.35)
            else:
                r = rng.uniform(0.02, 0.1) if i % deep_every == 0 else rng.uniform(0.1, 0.35)
            q[7:10] = q[0:3] + u / np.linalg.norm(u) * r
            q[10:14] = random_quat(rng)
        out.append(q)
    return out


# convex parity with MuJoCo (tools/ccd_parity.py, tests/test_ccd_parity.py): MuJoCo's default
# CCD settings and tightened ones; contacts equal to PARITY_EXACT count as the same
PARITY_SETTINGS = {"default": (35, 1e-6), "tight": (1000, 1e-12)}
PARITY_EXACT = 1e-9
PARITY_MARGIN = 0.01  # each geom's margin: separated poses within 0.02 still give contacts


def _contacts_mj(mm, md, q):
    import mujoco

    md.qpos[:] = q
    mujoco.mj_kinematics(mm, md)
    mujoco.mj_collision(mm, md)
    c = md.contact
    n = md.ncon
    return c.dist[:n].copy(), c.pos[:n].copy(), c.frame[:n].copy()


def _contacts_js(jm, jd, q):
    from jointspace.collision import collision

    jd.qpos[:] = q
    n = collision(jm, jd)
    c = jd.contact
    return c.dist[:n].copy(), c.pos[:n].copy(), c.frame[:n].copy()


def compare_with_mujoco(t1, t2, n, seed, setting, keep=-1):
    """Agreement of jointspace's collision with MuJoCo's for one pair type and CCD setting.

    Contacts are compared in MuJoCo's order. Returns a dict: touch (poses with contacts in
    either), same (fraction of poses with equal counts), exact (fraction with equal counts
    and every dist, pos and frame within PARITY_EXACT), worst (largest dist, pos and frame
    differences where counts agree), mism (the first poses whose counts differ), inexact
    (the first poses with equal counts but a contact beyond PARITY_EXACT), and with keep ≥ 0
    kept: MuJoCo's and jointspace's (dist, pos, frame) at pose number keep.
    """
    import warnings

    import mujoco

    import jointspace as js

    rng = np.random.default_rng(seed)
    extra = f'margin="{PARITY_MARGIN}"'
    xml = pair_xml(t1, t2, rng, extra, extra)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.ccd_iterations, mm.opt.ccd_tolerance = PARITY_SETTINGS[setting]
    md = mujoco.MjData(mm)
    xml_js = xml.replace("<mujoco>", '<mujoco><option ccd_iterations="%d" ccd_tolerance="%g"/>'
                         % PARITY_SETTINGS[setting])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jm = js.load_string(xml_js)
    jd = js.make_data(jm)
    touch = same = exact = 0
    kept = None
    worst = np.zeros(3)
    mism = []
    inexact = []
    for i, q in enumerate(poses(mm.qpos0, rng, n, t1 == "plane", top=0.2,
                                      deep_every=4)):
        a = _contacts_mj(mm, md, q)
        b = _contacts_js(jm, jd, q)
        if i == keep:
            kept = (a, b)
        touch += bool(len(a[0]) or len(b[0]))
        if len(a[0]) != len(b[0]):
            mism.append(i)
            continue
        same += 1
        if not len(a[0]):
            exact += 1
            continue
        e = np.array([np.abs(a[0] - b[0]).max(), np.abs(a[1] - b[1]).max(),
                      np.abs(a[2] - b[2]).max()])
        worst = np.maximum(worst, e)
        exact += bool(e.max() <= PARITY_EXACT)
        if e.max() > PARITY_EXACT:
            inexact.append(i)
    return dict(touch=touch, same=same / n, exact=exact / n, worst=worst, mism=mism[:5],
                inexact=inexact[:5], kept=kept)
