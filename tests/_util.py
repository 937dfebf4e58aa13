"""Helpers shared by tests: random states, quaternion comparison, oracle locations."""

import importlib.metadata
import pathlib

import numpy as np

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3


def random_unit_quat(rng):
    """A uniformly random unit quaternion (w, x, y, z)."""
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def random_state(mjm, rng, scale=1.0):
    """Random (qpos, qvel) for a MuJoCo model: quaternions uniform, scalars around qpos0."""
    qpos = mjm.qpos0.copy()
    for j in range(mjm.njnt):
        a = mjm.jnt_qposadr[j]
        t = mjm.jnt_type[j]
        if t == FREE:
            qpos[a:a + 3] = rng.uniform(-1, 1, 3)
            qpos[a + 3:a + 7] = random_unit_quat(rng)
        elif t == BALL:
            qpos[a:a + 4] = random_unit_quat(rng)
        else:
            qpos[a] += scale * rng.uniform(-1.5, 1.5)
    return qpos, scale * rng.normal(size=mjm.nv)


def same_rotation_quat(q1, q2):
    """Quaternions as rows, with signs aligned so that q and -q compare equal."""
    q1 = np.atleast_2d(q1).copy()
    q2 = np.atleast_2d(q2).copy()
    flip = np.sum(q1 * q2, axis=1) < 0
    q2[flip] *= -1
    return q1, q2


def erd_robots_dir():
    """The example-robot-data robots folder (the wheel ships files, no Python module)."""
    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files:
        s = str(f)
        if s.endswith("package.xml") and "example-robot-data" in s:
            return pathlib.Path(dist.locate_file(f)).parent / "robots"
    raise FileNotFoundError("example-robot-data is installed but its robots folder is missing")


def rel_err(a, b):
    """max |a − b| relative to max(1, max |b|): the scale of the parity tolerances."""
    b = np.asarray(b)
    return float(np.max(np.abs(np.asarray(a) - b), initial=0.0)
                 / max(1.0, np.max(np.abs(b), initial=0.0)))
