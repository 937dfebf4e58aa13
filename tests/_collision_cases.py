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


def poses(qpos0, rng, n, plane):
    """Joint positions that put the two geoms near contact."""
    out = []
    for _ in range(n):
        q = qpos0.copy()
        if plane:
            q[0:3] = [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-0.05, 0.25)]
            q[3:7] = random_quat(rng)
        else:
            q[0:3] = rng.uniform(-0.05, 0.05, 3)
            q[3:7] = random_quat(rng)
            u = rng.normal(size=3)
            q[7:10] = q[0:3] + u / np.linalg.norm(u) * rng.uniform(0.05, 0.35)
            q[10:14] = random_quat(rng)
        out.append(q)
    return out
