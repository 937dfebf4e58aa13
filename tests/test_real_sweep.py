"""Every MJCF file of the dm_control suite and of gymnasium's MuJoCo environments.

Each file that MuJoCo loads either loads in jointspace and matches mj_forward, or is
refused with a ModelError that names the file, the line, the element and the reason
(never a silent load with different physics). The files and their outcomes are the table
in docs/conventions.md ("Real models"); REFUSED below is that table's refused half, checked
here message by message so that the docs and the behavior cannot drift apart.

Contacts on, at the file's first keyframe (or qpos0) and a state near it: the same number
of contacts, and qacc to CONSTRAINED_TOL (CAPPED_PGS_TOL for PGS capped at few iterations).

Matching: at qpos0 and at seeded states near it (qpos0 + 0.05 noise on hinge and slide
coordinates, qvel ~ 0.2 N(0, 1), ctrl ~ N(0, 1)), with contacts disabled in both (the
collision pipelines differ in documented ways: `jointspace.collision.driver`), qacc and its
smooth parts agree with MuJoCo's, and so does `js.bias_forces` (which honors the model's
flags: dm_control's finger disables gravity). Limit and equality rows stay; MuJoCo's solver
runs with its tolerance, so the constrained qacc is compared to CONSTRAINED_TOL.
"""

import pathlib
import re
import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace import types as T
from jointspace.errors import ModelError
from jointspace.io.mjcf import load_mjcf_string
from tests._real_models import WHEELS, real_model

# smooth dynamics (no constraint rows): float64 rounding, relative to max(1, |x|)
SMOOTH_TOL = 1e-9
# qacc with limit/equality rows: both solvers stop at their tolerance (MuJoCo's 1e-8 on the
# relative cost improvement); the iterates agree to this, relative to max(1, |qacc|)
CONSTRAINED_TOL = 1e-6
# with contacts and a PGS solver capped at its iterations (gymnasium's humanoids: 50): the
# same sweeps as MuJoCo's (shuffled order, momentum, islands), so rounding grown by the
# sweeps (measured 1.1e-14)
CAPPED_PGS_TOL = 1e-10

DM = [f"dm_control/suite/{n}.xml" for n in (
    "acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper",
    "humanoid", "humanoid_CMU", "lqr", "manipulator", "pendulum", "point_mass", "quadruped",
    "reacher", "stacker", "swimmer", "walker")]
GYM = [f"gymnasium/envs/mujoco/assets/{n}.xml" for n in (
    "ant", "half_cheetah", "hopper", "humanoid", "humanoidstandup", "inverted_double_pendulum",
    "inverted_pendulum", "point", "pusher", "pusher_v5", "reacher", "swimmer", "walker2d",
    "walker2d_v5")]
FILES = [("dm-control", p) for p in DM] + [("gymnasium", p) for p in GYM]

# file -> (line, element, what the message says): the features jointspace does not compute
REFUSED = {}
# file -> the one line jointspace keeps in m.warnings (MuJoCo loads it without a message): an
# open or inconsistently oriented mesh surface, whose inertia then follows the mesh's rule
MESH_NOTES = {"dm_control/suite/dog.xml": "mesh 'Ribcage': faces are not consistently oriented"}


def _load_both(dist, path):
    f = real_model(dist, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mj = mujoco.MjModel.from_xml_path(str(f))
        try:
            return f, mj, js.load(f), None
        except ModelError as e:
            return f, mj, None, e


@pytest.mark.parametrize("dist, path", FILES, ids=[pathlib.Path(p).stem + "-" + d
                                                    for d, p in FILES])
def test_real_model_loads_and_matches_or_is_refused(dist, path):
    f, mj, m, err = _load_both(dist, path)
    if path in REFUSED:
        line, element, what = REFUSED[path]
        assert err is not None, f"{path} now loads: move it out of REFUSED (and the docs)"
        msg = str(err)
        assert f"{f}:{line} {element}" in msg and what in msg, msg
        return
    assert err is None, f"{path} is refused: {err}"
    md = mujoco.MjData(mj)
    d = js.Data(m)
    d2 = js.Data(m)
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt_disableflags[0] |= T.DSBL_CONTACT
    rng = np.random.default_rng(0)
    worst = {}
    for k in range(4):
        q = mj.qpos0.copy()
        v = np.zeros(mj.nv)
        if k:
            for j in range(mj.njnt):
                if mj.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
                    q[mj.jnt_qposadr[j]] += 0.05 * rng.normal()
            v = 0.2 * rng.normal(size=mj.nv)
        u = rng.normal(size=mj.nu)
        md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        # the public function honors the model's flags as forward does (finger: no gravity)
        bias = js.bias_forces(m, d2, q, v)
        err = np.max(np.abs(bias - md.qfrc_bias), initial=0.0) / max(
            1.0, np.max(np.abs(md.qfrc_bias), initial=0.0))
        worst["bias_forces"] = max(worst.get("bias_forces", 0.0), err)
        for name in ("qfrc_bias", "qfrc_passive", "qfrc_fluid", "qfrc_gravcomp",
                     "qfrc_actuator", "qacc_smooth", "qacc"):
            a, b = getattr(d, name), getattr(md, name)
            err = np.max(np.abs(a - b), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0))
            worst[name] = max(worst.get(name, 0.0), err)
    for name, err in worst.items():
        tol = CONSTRAINED_TOL if name == "qacc" else SMOOTH_TOL
        assert err <= tol, f"{path}: {name} differs from mj_forward by {err:.3g} (relative)"


@pytest.mark.parametrize("dist, path", FILES, ids=[pathlib.Path(p).stem + "-" + d
                                                    for d, p in FILES])
def test_real_model_loads_in_silence(dist, path):
    """Textures, skins, lights, <statistic>, <custom>, <visual>: read without a warning."""
    f = real_model(dist, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = js.load(f)
    if path in MESH_NOTES:
        (line,) = m.warnings
        assert MESH_NOTES[path] in line, line
    else:
        assert m.warnings == [], m.warnings


# the files in which <compiler fusestatic="true"> merges bodies (MuJoCo 4.0: nbody before, after)
FUSED = {"dm_control/suite/humanoid.xml": (17, 14), "dm_control/suite/humanoid_CMU.xml": (32, 30),
         "dm_control/suite/manipulator.xml": (17, 11), "dm_control/suite/stacker.xml": (15, 13),
         "gymnasium/envs/mujoco/assets/ant.xml": (14, 10),
         "gymnasium/envs/mujoco/assets/pusher.xml": (13, 10)}


@pytest.mark.parametrize("dist, path", [f for f in FILES if f[1] in FUSED],
                         ids=[pathlib.Path(p).stem + "-" + d for d, p in FILES if p in FUSED])
def test_real_model_with_fusestatic_matches(dist, path):
    """The file with fusestatic on: the fused tree, its inertias and one forward, contacts off."""
    f = real_model(dist, path)
    spec = mujoco.MjSpec.from_file(str(f))
    spec.compiler.fusestatic = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mj = spec.compile()
        text = re.sub(r"(<mujoco[^>]*>)", r'\1<compiler fusestatic="true"/>', f.read_text(),
                      count=1)
        m = load_mjcf_string(text, filename=str(f))
    assert (mujoco.MjModel.from_xml_path(str(f)).nbody, mj.nbody) == FUSED[path]
    assert m.nbody == mj.nbody
    for name in ("body_parentid", "geom_bodyid", "site_bodyid", "jnt_bodyid"):
        np.testing.assert_array_equal(getattr(m, name), getattr(mj, name), err_msg=name)
    for name in ("body_mass", "body_pos", "body_ipos", "geom_pos", "site_pos"):
        np.testing.assert_allclose(getattr(m, name), getattr(mj, name), atol=SMOOTH_TOL,
                                   err_msg=name)
    md, d = mujoco.MjData(mj), js.Data(m)
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt_disableflags[0] |= T.DSBL_CONTACT
    v = 0.2 * np.random.default_rng(2).normal(size=mj.nv)
    md.qvel[:], d.qvel[:] = v, v
    mujoco.mj_forward(mj, md)
    js.forward(m, d)
    err = np.max(np.abs(d.qacc - md.qacc)) / max(1.0, np.max(np.abs(md.qacc)))
    assert err <= CONSTRAINED_TOL, f"{path}: qacc differs by {err:.3g} with fusestatic"


def test_the_sweep_covers_the_pinned_wheels():
    assert set(WHEELS) == {"dm-control", "gymnasium"}
    root = real_model("dm-control", DM[0]).parent
    assert sorted(p.name for p in root.glob("*.xml")) == sorted(pathlib.Path(p).name
                                                               for p in DM)
    root = real_model("gymnasium", GYM[0]).parent
    assert sorted(p.name for p in root.glob("*.xml")) == sorted(pathlib.Path(p).name
                                                               for p in GYM)


@pytest.mark.parametrize("dist, path", [f for f in FILES if f[1] not in REFUSED],
                         ids=[pathlib.Path(p).stem + "-" + d for d, p in FILES
                              if p not in REFUSED])
def test_real_model_with_contacts_matches(dist, path):
    """Contacts on: the first keyframe (or qpos0) and a state near it, as the file sets them."""
    f, mj, m, err = _load_both(dist, path)
    md = mujoco.MjData(mj)
    d = js.Data(m)
    rng = np.random.default_rng(1)
    pgs = mj.opt.solver == mujoco.mjtSolver.mjSOL_PGS
    tol = CAPPED_PGS_TOL if pgs else CONSTRAINED_TOL
    for k in range(2):
        q = (mj.key_qpos[0] if mj.nkey else mj.qpos0).copy()
        v = np.zeros(mj.nv)
        if k:
            for j in range(mj.njnt):
                if mj.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
                    q[mj.jnt_qposadr[j]] += 0.05 * rng.normal()
            v = 0.2 * rng.normal(size=mj.nv)
        md.qpos[:], md.qvel[:] = q, v
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        assert d.ncon[0] == md.ncon, path
        err = np.max(np.abs(d.qacc - md.qacc), initial=0.0) / max(
            1.0, np.max(np.abs(md.qacc), initial=0.0))
        assert err <= tol, f"{path}: qacc differs by {err:.3g} with {md.ncon} contacts"


# compiled Model fields compared one to one with MuJoCo's (same names and layouts); frames
# whose sign is free (quaternions) up to sign, inertias as the full tensor in the body frame
# (principal axes may come out in another order or sign), relative to max(1, |x|)
COMPILED_FIELDS = (
    "body_parentid", "body_rootid", "body_weldid", "body_mocapid", "body_jntnum", "body_jntadr",
    "body_dofnum", "body_dofadr", "body_geomnum", "body_geomadr", "body_pos", "body_ipos",
    "body_mass", "body_gravcomp",
    "jnt_type", "jnt_bodyid", "jnt_qposadr", "jnt_dofadr", "jnt_pos", "jnt_axis",
    "jnt_stiffness", "jnt_range", "jnt_limited", "jnt_margin", "jnt_solref", "jnt_solimp",
    "dof_bodyid", "dof_jntid", "dof_parentid", "dof_armature", "dof_damping",
    "dof_frictionloss", "qpos0", "qpos_spring",
    "geom_type", "geom_bodyid", "geom_contype", "geom_conaffinity", "geom_condim",
    "geom_priority", "geom_size", "geom_rbound", "geom_pos", "geom_friction", "geom_solmix",
    "geom_solref", "geom_solimp", "geom_margin", "geom_gap", "geom_group",
    "site_bodyid", "site_type", "site_size", "site_pos",
    "actuator_trntype", "actuator_dyntype", "actuator_gaintype", "actuator_biastype",
    "actuator_trnid", "actuator_gear", "actuator_ctrllimited", "actuator_forcelimited",
    "actuator_ctrlrange", "actuator_forcerange", "actuator_gainprm", "actuator_biasprm",
    "actuator_dynprm", "actuator_lengthrange",
    "tendon_stiffness", "tendon_damping", "tendon_range", "tendon_lengthspring",
    "eq_type", "eq_obj1id", "eq_obj2id", "eq_data",
    "opt_timestep", "opt_gravity",
)
QUAT_FIELDS = ("body_quat", "geom_quat", "site_quat")


def _quat_rot(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _mj_field(mj, name):
    if name.startswith("opt_"):
        return np.asarray(getattr(mj.opt, name[4:]))
    return np.asarray(getattr(mj, name))


@pytest.mark.parametrize("dist, path", [f for f in FILES if f[1] not in REFUSED],
                         ids=[pathlib.Path(p).stem + "-" + d for d, p in FILES
                              if p not in REFUSED])
def test_real_model_compiled_fields_equal_mujocos(dist, path):
    """Masses, inertias, frames, sizes, joint, actuator and tendon parameters, as compiled."""
    f, mj, m, err = _load_both(dist, path)
    assert err is None, err
    bad = []
    for name in COMPILED_FIELDS:
        want = _mj_field(mj, name)
        got = np.asarray(m.opt_timestep[0] if name == "opt_timestep" else getattr(m, name))
        got = got.reshape(want.shape) if got.size == want.size else got
        if got.shape != want.shape:
            bad.append(f"{name}: shape {got.shape} vs {want.shape}")
            continue
        e = float(np.max(np.abs(got - want), initial=0.0)) / max(
            1.0, float(np.max(np.abs(want), initial=0.0)))
        if e > SMOOTH_TOL:
            bad.append(f"{name}: {e:.3g}")
    for name in QUAT_FIELDS:
        got, want = getattr(m, name), np.asarray(getattr(mj, name))
        e = max((min(np.abs(g - w).max(), np.abs(g + w).max()) for g, w in zip(got, want)),
                default=0.0)
        if e > SMOOTH_TOL:
            bad.append(f"{name}: {e:.3g} (up to sign)")
    for b in range(mj.nbody):
        tensors = []
        for inertia, iquat in ((m.body_inertia[b], m.body_iquat[b]),
                               (mj.body_inertia[b], mj.body_iquat[b])):
            R = _quat_rot(iquat)
            tensors.append(R @ np.diag(inertia) @ R.T)
        e = np.abs(tensors[0] - tensors[1]).max() / max(1.0, np.abs(tensors[1]).max())
        if e > SMOOTH_TOL:
            bad.append(f"body {b} inertia tensor: {e:.3g}")
            break
    assert not bad, f"{path}: " + "; ".join(bad)
