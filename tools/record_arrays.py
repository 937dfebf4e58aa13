"""Record (or check) a set of result arrays to prove a refactor changed no result bit.

    python tools/record_arrays.py record out.npz    # before the change
    python tools/record_arrays.py check out.npz     # after: every array bit-identical

The set: for each embedded model with each friction cone and each solver, 30 steps from a
seeded random perturbation of qpos0 with random controls (each integrator the model file
selects), then forward and inverse at the final state; plus the smooth dynamics (rnea,
crba, factor_m, solve_m, aba, minv, bias and gravity forces, energies, Christoffel
symbols), kinematics and Jacobians, collision and constraint rows, the rigid-contact
inverse and the controllers' soft-contact inverse at one state per model.
"""

import sys
import warnings

import numpy as np

import jointspace as js
from jointspace.types import JNT_HINGE, JNT_SLIDE

MODELS = ("humanoid", "quadruped", "arm_box", "arm7", "hinge_friction", "painleve", "arm2", "chain")
SOLVERS = ("PGS", "CG", "Newton", "IPM")
CONES = ("pyramidal", "elliptic")
DATA_FIELDS = ("qpos", "qvel", "qacc", "act", "xpos", "xquat", "cdof", "cinert", "qM",
               "qfrc_bias", "qfrc_passive", "qfrc_actuator", "qfrc_constraint", "qfrc_inverse",
               "efc_force", "efc_J", "efc_aref", "contact_pos", "contact_frame", "contact_dist")


def _state(m, rng):
    d = js.make_data(m)
    d.qpos[:] = m.qpos0
    for j in range(m.njnt):
        t = int(m.jnt_type[j])
        a = int(m.jnt_qposadr[j])
        if t in (JNT_SLIDE, JNT_HINGE):
            d.qpos[a] += 0.05 * rng.standard_normal()
    d.qvel[:] = 0.1 * rng.standard_normal(m.nv)
    return d


def _fields(prefix, d, out):
    for f in DATA_FIELDS:
        if hasattr(d, f):
            out[f"{prefix}/{f}"] = np.array(getattr(d, f), copy=True)


def record():
    """Every array of the set, by name."""
    out = {}
    warnings.simplefilter("ignore")
    for name in MODELS:
        for cone in CONES:
            for solver in SOLVERS:
                m = getattr(js.models, name)()
                m.opt.cone = cone
                m.opt.solver = solver
                rng = np.random.default_rng(7)
                d = _state(m, rng)
                tag = f"{name}/{cone}/{solver}"
                for _ in range(30):
                    if m.nu:
                        d.ctrl[:] = 0.3 * rng.standard_normal(m.nu)
                    js.step(m, d)
                js.forward(m, d)
                _fields(tag + "/forward", d, out)
                js.inverse(m, d)
                _fields(tag + "/inverse", d, out)
        m = getattr(js.models, name)()
        rng = np.random.default_rng(11)
        d = _state(m, rng)
        q, v = d.qpos.copy(), d.qvel.copy()
        a = rng.standard_normal(m.nv)
        tag = f"{name}/smooth"
        out[tag + "/rnea"] = js.rnea(m, d, q, v, a).copy()
        out[tag + "/bias"] = js.bias_forces(m, d, q, v).copy()
        out[tag + "/gravity"] = js.gravity_forces(m, d, q).copy()
        M = js.crba(m, d, q).copy()
        out[tag + "/crba"] = M
        try:
            js.factor_m(m, d, q)
            out[tag + "/solve_m"] = js.solve_m(m, d, a).copy()
            out[tag + "/aba"] = js.aba(m, d, q, v, a).copy()
            out[tag + "/minv"] = js.minv(m, d, q).copy()
        except js.SingularMassError:
            pass
        out[tag + "/ke"] = np.array(js.kinetic_energy(m, d, q, v))
        out[tag + "/pe"] = np.array(js.potential_energy(m, d, q))
        out[tag + "/christoffel"] = np.array(js.christoffel(m, d, q)).copy()
        out[tag + "/coriolis"] = np.array(js.coriolis_matrix(m, d, q, v)).copy()
        d.qpos[:] = q
        js.kinematics(m, d)
        for b in range(1, m.nbody):
            jp, jr = js.jacobian_body(m, d, b)
            out[f"{tag}/jac{b}"] = np.concatenate([jp, jr])
        js.forward(m, d)
        js.collision(m, d)
        js.make_constraint(m, d)
        _fields(tag + "/rows", d, out)
    return out


def main(argv):
    """Record to or check against the file argv[1]."""
    mode, path = argv
    now = record()
    if mode == "record":
        np.savez_compressed(path, **now)
        print(f"recorded {len(now)} arrays to {path}")
        return 0
    ref = dict(np.load(path))
    bad = [k for k in ref if k not in now or ref[k].shape != now[k].shape
           or ref[k].tobytes() != now[k].tobytes()]
    missing = [k for k in now if k not in ref]
    for k in bad[:40]:
        diff = "absent" if k not in now else (
            "shape" if ref[k].shape != now[k].shape else
            f"max |Δ| {np.max(np.abs(ref[k].astype(float) - now[k].astype(float))):.3g}")
        print(f"DIFFERS {k}: {diff}")
    print(f"{len(ref) - len(bad)} of {len(ref)} arrays bit-identical; {len(missing)} new")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
