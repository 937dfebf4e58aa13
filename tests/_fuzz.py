"""The fuzz worker: seeded hostile cases of one class, run in this process, a line each.

    python tests/_fuzz.py CLASS FIRST COUNT

CLASS is one of CLASSES. Case k is built from `random.Random(f"{CLASS}:{k}")` alone, so a
failing case is rerun by its number. Before a case runs, the worker prints `start k`; after
it, `ok k`, `refused k TYPE` (our own error, raised by our code) or `BAD k …` (a foreign
exception or a NumPy warning). A crash or a hang leaves `start k` as the last line: the
parent (tests/test_fuzz.py) reports that case and goes on in a new worker.
"""

import random
import sys
import traceback
import warnings
import xml.etree.ElementTree as ET

import numpy as np

import jointspace as js

# what a public call may raise, when raised by jointspace's own code: errors whose message
# names the argument, element or field and what to do
OURS = (js.JointspaceError, ValueError, TypeError, KeyError, IndexError, AttributeError,
        RuntimeError)

WEIRD_TEXT = ("", "nan", "inf", "-inf", "-1", "0", "1e300", "-1e300", "1e-300", "abc",
              "1 2", "1 2 3 4 5 6 7 8 9 10 11", "99999999999999999999", "0 0 0", "true",
              "-0", "0x10", " ", "1,2,3", "1e309")
MJCF_ATTRS = ("pos", "quat", "euler", "axisangle", "size", "mass", "density", "type",
              "fromto", "range", "limited", "axis", "damping", "stiffness", "armature",
              "frictionloss", "friction", "condim", "contype", "conaffinity", "timestep",
              "gear", "ctrlrange", "ctrllimited", "forcerange", "joint", "name", "class",
              "solref", "solimp", "margin", "gap", "priority", "iterations", "solver",
              "integrator", "cone", "gravity", "diaginertia", "fullinertia", "kp", "kv",
              "body1", "body2", "geom1", "geom2", "active", "ref", "springref", "user")
MJCF_TAGS = ("body", "geom", "joint", "site", "inertial", "motor", "position", "velocity",
             "freejoint", "default", "option", "equality", "connect", "weld", "exclude",
             "pair", "contact", "actuator", "worldbody", "camera", "light", "include")
URDF_ATTRS = ("xyz", "rpy", "value", "ixx", "iyy", "izz", "ixy", "ixz", "iyz", "type",
              "lower", "upper", "effort", "velocity", "link", "name", "filename", "radius",
              "length", "size", "damping", "friction")
URDF_TAGS = ("link", "joint", "inertial", "origin", "mass", "inertia", "parent", "child",
             "axis", "limit", "visual", "collision", "geometry", "box", "cylinder",
             "sphere", "mesh", "dynamics", "robot")

URDF = """<robot name="arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
    ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="l1"><inertial><origin xyz="0 0 0.2"/><mass value="1"/><inertia ixx="0.02"
    iyy="0.02" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><cylinder radius="0.04" length="0.4"/></geometry></collision></link>
  <link name="l2"><inertial><origin xyz="0 0 0.15"/><mass value="0.5"/><inertia ixx="0.01"
    iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/><dynamics damping="0.1"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/><limit lower="-0.1" upper="0.3" effort="5"
    velocity="1"/></joint>
  <joint name="j3" type="fixed"><parent link="l2"/><child link="tip"/>
    <origin xyz="0 0 0.3"/></joint>
</robot>"""


def _mutate_xml(rng, text, attrs, tags):
    """One to three random edits of an XML document; returns the new text."""
    root = ET.fromstring(text)
    for _ in range(rng.randint(1, 3)):
        elems = list(root.iter())
        el = rng.choice(elems)
        parents = {c: p for p in root.iter() for c in p}
        op = rng.randrange(7)
        if op == 0:
            el.set(rng.choice(attrs), rng.choice(WEIRD_TEXT))
        elif op == 1 and el.attrib:
            del el.attrib[rng.choice(sorted(el.attrib))]
        elif op == 2 and el in parents:
            parents[el].remove(el)
        elif op == 3 and el in parents:
            parents[el].append(ET.fromstring(ET.tostring(el)))
        elif op == 4:
            el.tag = rng.choice(tags)
        elif op == 5:
            child = ET.SubElement(el, rng.choice(tags))
            for _ in range(rng.randint(0, 3)):
                child.set(rng.choice(attrs), rng.choice(WEIRD_TEXT))
        elif op == 6 and el.attrib:
            k = rng.choice(sorted(el.attrib))
            el.set(k, el.attrib[k] * rng.randint(2, 4))
    return ET.tostring(root, encoding="unicode")


def _exercise(m, rng):
    """What a user does with a model that loaded: a few calls of the main pipelines."""
    d = js.make_data(m)
    js.forward(m, d)
    if m.nu:
        d.ctrl[:] = np.random.default_rng(rng.randrange(2**32)).uniform(-1, 1, m.nu)
    js.step(m, d, 3)
    js.inverse(m, d)
    js.rnea(m, d, d.qpos, d.qvel, d.qacc)


_BASES = {}


def _base_mjcf(rng):
    if not _BASES:
        _BASES.update({n: js.models.xml(n) for n in ("arm2", "hinge_friction", "painleve",
                                                       "pendulum", "quadruped", "arm_box")})
    return _BASES[rng.choice(sorted(_BASES))]


def case_mjcf(rng):
    """A mutated embedded model, loaded and simulated."""
    m = js.load_string(_mutate_xml(rng, _base_mjcf(rng), MJCF_ATTRS, MJCF_TAGS))
    _exercise(m, rng)


def case_urdf(rng):
    """A mutated three-link URDF, loaded and simulated."""
    m = js.load_string(_mutate_xml(rng, URDF, URDF_ATTRS, URDF_TAGS), format="urdf")
    _exercise(m, rng)


_MODELS = {}


def _model(name):
    if name not in _MODELS:
        _MODELS[name] = js.models.load(name)
    return _MODELS[name]


def _weird_value(rng, m, shape):
    """A hostile stand-in for an argument expected as a float array of `shape`."""
    n = int(np.prod(shape)) if shape else 1
    return rng.choice([
        lambda: None, lambda: "x", lambda: {}, lambda: [], lambda: np.zeros(0),
        lambda: np.zeros(n + 1), lambda: np.full(shape, np.nan), lambda: np.full(shape, np.inf),
        lambda: np.zeros(shape, complex), lambda: np.array(3), lambda: 2**63, lambda: -1,
        lambda: 1e300, lambda: np.zeros(shape + (1,)), lambda: np.zeros(shape, np.float32),
        lambda: np.zeros(shape, int), lambda: np.zeros(2 * n)[::2].reshape(shape),
        lambda: np.zeros(shape, bool), lambda: object(), lambda: np.full(shape, 1e300),
        lambda: js.make_data(_model("arm2")), lambda: _model("arm2")])()


def case_api(rng):
    """A public function called with one or two arguments replaced by hostile values."""
    m = _model(rng.choice(["humanoid", "arm7", "quadruped"]))
    d = js.make_data(m)
    nq, nv = (m.nq,), (m.nv,)
    calls = [
        (js.rnea, [m, d, m.qpos0, np.zeros(nv), np.zeros(nv)], [None, None, nq, nv, nv]),
        (js.crba, [m, d, m.qpos0], [None, None, nq]),
        (js.aba, [m, d, m.qpos0, np.zeros(nv), np.zeros(nv)], [None, None, nq, nv, nv]),
        (js.minv, [m, d, m.qpos0], [None, None, nq]),
        (js.solve_m, [m, d, np.ones(nv)], [None, None, nv]),
        (js.mul_m, [m, d, m.qpos0, np.ones(nv)], [None, None, nq, nv]),
        (js.jacobian_body, [m, d, 1], [None, None, ()]),
        (js.jacobian, [m, d, 1, np.zeros(3)], [None, None, (), (3,)]),
        (js.step, [m, d, 2], [None, None, ()]),
        (js.forward, [m, d], [None, None]),
        (js.inverse, [m, d], [None, None]),
        (js.kinematics, [m, d, m.qpos0, np.zeros(nv)], [None, None, nq, nv]),
        (js.integrate_pos, [m, m.qpos0, np.zeros(nv), 0.01], [None, nq, nv, ()]),
        (js.diff_pos, [m, m.qpos0, m.qpos0], [None, nq, nq]),
        (js.kinetic_energy, [m, d, m.qpos0, np.zeros(nv)], [None, None, nq, nv]),
        (js.bias_forces, [m, d, m.qpos0, np.zeros(nv)], [None, None, nq, nv]),
        (js.inverse_step, [m, d, np.zeros(nv)], [None, None, nv]),
    ]
    fn, args, shapes = rng.choice(calls)
    for i in rng.sample(range(len(args)), k=min(len(args), rng.randint(1, 2))):
        args[i] = _weird_value(rng, m, shapes[i] if shapes[i] is not None else ())
    fn(*args)


def case_fields(rng):
    """Writes to Model and Data fields from Python, then the main pipelines."""
    m = js.models.load(rng.choice(["humanoid", "arm_box", "arm2"]))
    d = js.make_data(m)
    js.step(m, d, 5)
    for _ in range(rng.randint(1, 4)):
        obj = rng.choice([m, d])
        names = [k for k, v in vars(obj).items()
                 if isinstance(v, np.ndarray) and not k.startswith("_") and v.size]
        arr = getattr(obj, rng.choice(sorted(names)))
        op = rng.randrange(5)
        try:
            if op == 0:
                arr.reshape(-1)[rng.randrange(arr.size)] = rng.choice(
                    [np.nan, np.inf, -np.inf, 1e300, -1e300, 0, -1, 2**31 - 1, -2**31])
            elif op == 1:
                arr.resize((1,))
            elif op == 2:
                arr[...] = rng.choice([0, -1, 1e300, np.nan])
            elif op == 3:
                setattr(obj, rng.choice(names), rng.choice([0, None, "x", np.zeros(3)]))
            else:
                arr.reshape(-1)[rng.randrange(arr.size)] = rng.randint(-10**6, 10**6)
        except (ValueError, TypeError, AttributeError, OverflowError):
            pass  # refused as it should be (read-only, not resizable, wrong value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.JointspaceWarning)
        for call in rng.sample([lambda: js.forward(m, d), lambda: js.step(m, d, 3),
                                lambda: js.inverse(m, d),
                                lambda: js.rnea(m, d, d.qpos, d.qvel, d.qacc)], k=2):
            call()


CLASSES = {"mjcf": case_mjcf, "urdf": case_urdf, "api": case_api, "fields": case_fields}


def _ours(exc):
    """Raised by jointspace's own code, as one of the error types it documents."""
    if not isinstance(exc, OURS):
        return False
    tb = traceback.extract_tb(exc.__traceback__)
    return bool(tb) and "/jointspace/" in tb[-1].filename.replace("\\", "/")


def main(cls, first, count):
    """Run cases first … first + count − 1 of class cls."""
    fn = CLASSES[cls]
    warnings.simplefilter("error", RuntimeWarning)  # a NumPy overflow is a leak, not noise
    warnings.filterwarnings("ignore", category=js.JointspaceWarning)
    for k in range(first, first + count):
        print(f"start {k}", flush=True)
        rng = random.Random(f"{cls}:{k}")
        try:
            with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                fn(rng)
        except Exception as e:  # noqa: BLE001 (the worker classifies every exception)
            if _ours(e):
                print(f"refused {k} {type(e).__name__}", flush=True)
            else:
                where = traceback.extract_tb(e.__traceback__)[-1]
                msg = " ".join(str(e).split())[:300]
                print(f"BAD {k} {type(e).__name__}: {msg} "
                      f"[{where.filename}:{where.lineno}]", flush=True)
            continue
        print(f"ok {k}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
