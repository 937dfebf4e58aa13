"""Mesh-footed and mesh-gripper robot scenes of our own making (issue 23's parity and speed).

Real robot files (CAD exports) collide through convex meshes: feet, links, fingers and the
objects they hold. These generators turn the embedded quadruped and arm into such files,
every collision shape a mesh given by its hull points the way CAD hulls come (a few dozen
vertices sampled on a rounded surface), so that the contacts are plane-mesh, box-mesh and
mesh-mesh:

- `mesh_quadruped()`: the quadruped with boot-shaped mesh feet (a flat sole, so each foot
  rests on a face), mesh shins and a chamfered mesh torso.
- `mesh_gripper()`: the 7-dof arm with mesh links, mesh fingers and a chamfered mesh cube
  on the table, posed by `GRIPPER_KEY` so that the fingers close on the cube.

Both are MJCF strings MuJoCo and jointspace load alike; `settle(xml, nstep)` steps MuJoCo
from the first keyframe with the keyframe's controls and returns its model and data.
"""

import numpy as np

from jointspace.models import xml as _embedded


def _fmt(points):
    return " ".join(f"{x:.6f}" for x in np.asarray(points).ravel())


def rounded_box(half, radius, n=6):
    """Hull points of a box with half-sizes `half` whose edges are rounded by `radius`.

    The eight corner spheres sampled on n × n latitude-longitude points each: the hull is a
    CAD-like shape with flat faces (the box's, shrunk by radius) and curved edges.
    """
    core = np.asarray(half, float) - radius
    th = np.linspace(0.0, np.pi / 2, n)
    ph = np.linspace(0.0, np.pi / 2, n)
    t, p = np.meshgrid(th, ph)
    octant = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1)
    octant = np.unique(np.round(octant.reshape(-1, 3), 12), axis=0)
    pts = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            for sz in (-1, 1):
                s = np.array([sx, sy, sz], float)
                pts.append(core * s + radius * octant * s)
    return np.unique(np.round(np.concatenate(pts), 9), axis=0)


def capsule_hull(radius, half, n=8):
    """Hull points of a capsule along z (radius, half-length) sampled as a CAD export would.

    Two hemispheres of n rings of 2n points (the poles once): a convex mesh whose sides
    are a 2n-gon prism.
    """
    pts = [(0.0, 0.0, half + radius), (0.0, 0.0, -half - radius)]
    for i in range(1, n + 1):
        lat = 0.5 * np.pi * i / n
        r, z = radius * np.sin(lat), radius * np.cos(lat)
        for k in range(2 * n):
            a = np.pi * k / n
            pts.append((r * np.cos(a), r * np.sin(a), half + z))
            pts.append((r * np.cos(a), r * np.sin(a), -half - z))
    return np.unique(np.round(np.array(pts), 9), axis=0)


def boot():
    """A foot: a rounded box sole 8 × 5 cm, 3 cm tall, under a capsule-like ankle."""
    sole = rounded_box((0.04, 0.025, 0.015), 0.008)
    return sole


def mesh_quadruped():
    """The embedded quadruped with mesh feet, mesh shins and a mesh torso (MJCF string).

    The feet are boots (`boot()`) whose soles are 1.5 cm below the old toe spheres' centres;
    the first keyframe crouches the legs a little and drops the torso onto the floor.
    """
    x = _embedded("quadruped")
    assets = (f'<asset><mesh name="torso" vertex="{_fmt(rounded_box((0.25, 0.1, 0.05), 0.02))}"/>'
              f'<mesh name="shin" vertex="{_fmt(capsule_hull(0.025, 0.125, 5))}"/>'
              f'<mesh name="boot" vertex="{_fmt(boot())}"/></asset>')
    x = x.replace("<worldbody>", assets + "<worldbody>", 1)
    x = x.replace('<geom name="torso" type="box" size="0.25 0.1 0.05"',
                  '<geom name="torso" type="mesh" mesh="torso"')
    for leg in ("fl", "fr", "hl", "hr"):
        x = x.replace(f'<geom name="{leg}_shin" size="0.025" fromto="0 0 0 0 0 -0.25"/>',
                      f'<geom name="{leg}_shin" type="mesh" mesh="shin" pos="0 0 -0.125"/>')
        x = x.replace(f'<geom name="{leg}_toe" type="sphere" size="0.035" pos="0 0 -0.25"/>',
                      f'<geom name="{leg}_toe" type="mesh" mesh="boot" pos="0.01 0 -0.255"/>')
    crouch = "0 0.3 -0.6 " * 4
    key = (f'<keyframe><key name="crouch" qpos="0 0 0.52 1 0 0 0 {crouch}" '
           f'ctrl="{crouch}"/></keyframe>')
    return x.replace("</mujoco>", key + "</mujoco>")


# arm joints putting the ee site 3 cm above the cube's centre with the gripper pointing down
# (damped least squares on the embedded arm_box, as tests/test_models.py reaches the cube):
# the fingers span the cube's upper 4 cm and clear the table; GRIPPER_LIFT: 13 cm above
GRIPPER_KEY = (0.0, 0.39852, 0.0, -1.42776, 0.0, 1.31531, 0.0)
GRIPPER_LIFT = (0.0, 0.36533, 0.0, -1.22117, 0.0, 1.55509, 0.0)


def mesh_gripper():
    """The embedded 7-dof arm with mesh links, fingers and a mesh cube held between them.

    Link capsules become capsule hulls, the fingers rounded-box meshes, the pedestal a
    24-gon prism, the cube a chamfered 5 cm mesh cube; elliptic friction cones with
    impratio 10, as MuJoCo advises for grasping (pyramidal cones let the cube creep down and
    drop within 7 s). The first keyframe poses the arm at
    `GRIPPER_KEY` and commands the fingers fully closed (0.04 m: the pads would meet; on the
    5 cm cube they squeeze it with 5 N each); the second keyframe's controls lift it 10 cm.
    """
    x = _embedded("arm_box")
    meshes = {"finger": rounded_box((0.008, 0.01, 0.03), 0.003),
              "cube": rounded_box((0.025, 0.025, 0.025), 0.004),
              "palm": rounded_box((0.02, 0.06, 0.01), 0.004)}
    ped = [(0.1 * np.cos(a), 0.1 * np.sin(a), z) for a in np.linspace(0, 2 * np.pi, 24,
                                                                     endpoint=False)
           for z in (-0.05, 0.05)]
    meshes["pedestal"] = np.array(ped)
    links = {"link1": (0.07, 0.085, 0.115), "link2": (0.07, 0.1, 0.1),
             "link3": (0.06, 0.105, 0.105), "link4": (0.06, 0.09, 0.09),
             "link5": (0.05, 0.105, 0.105), "link6": (0.05, 0.035, 0.035)}
    for name, (r, h, _) in links.items():
        meshes[name] = capsule_hull(r, h, 6)
    assets = "<asset>" + "".join(f'<mesh name="{k}" vertex="{_fmt(v)}"/>'
                                 for k, v in meshes.items()) + "</asset>"
    x = x.replace("<worldbody>", assets + "<worldbody>", 1)
    x = x.replace('<option timestep="0.002"/>',
                  '<option timestep="0.002" cone="elliptic" impratio="10"/>')
    x = x.replace('<geom name="pedestal" type="cylinder" size="0.1 0.05"',
                  '<geom name="pedestal" type="mesh" mesh="pedestal"')
    frm = {"link1": "0 0 0.03 0 0 0.2", "link2": "0 0 0 0 0 0.2", "link3": "0 0 0 0 0 0.21",
           "link4": "0 0 0 0 0 0.18", "link5": "0 0 0 0 0 0.21", "link6": "0 0 0 0 0 0.07"}
    for name, (r, h, _) in links.items():
        a, b = frm[name].split()[2], frm[name].split()[5]
        mid = 0.5 * (float(a) + float(b))
        old = f'<geom name="{name}" size="{r:g}" fromto="{frm[name]}"'
        assert old in x, old
        x = x.replace(old, f'<geom name="{name}" type="mesh" mesh="{name}" pos="0 0 {mid:g}"')
    x = x.replace('<geom name="palm" type="box" size="0.02 0.06 0.01"',
                  '<geom name="palm" type="mesh" mesh="palm"')
    for side in ("left", "right"):
        x = x.replace(f'<geom name="finger_{side}" pos="0 0 0"',
                      f'<geom name="finger_{side}" type="mesh" mesh="finger" pos="0 0 0"')
    x = x.replace('<geom name="box" type="box" size="0.025 0.025 0.025"',
                  '<geom name="box" type="mesh" mesh="cube"')
    arm = " ".join(f"{q:g}" for q in GRIPPER_KEY)
    key = (f'<keyframe><key name="grasp" qpos="{arm} 0 0 0.55 0 0.425 1 0 0 0" '
           f'ctrl="{arm} 0.04 0.04"/>'
           f'<key name="lift" qpos="{arm} 0 0 0.55 0 0.425 1 0 0 0" '
           f'ctrl="{" ".join(f"{q:g}" for q in GRIPPER_LIFT)} 0.04 0.04"/></keyframe>')
    return x.replace("</mujoco>", key + "</mujoco>")


def settle(xml, nstep):
    """MuJoCo's model and data after stepping from the first keyframe, as the scene means.

    nstep steps with the first keyframe's controls; where there is a second keyframe (the
    gripper's lift), nstep more steps with the controls ramped to its controls linearly.
    """
    import mujoco

    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    mujoco.mj_step(mm, md, nstep)
    if mm.nkey > 1:
        a, b = mm.key_ctrl[0], mm.key_ctrl[1]
        for k in range(nstep):
            md.ctrl[:] = a + (b - a) * (k + 1) / nstep
            mujoco.mj_step(mm, md)
    return mm, md


def into_ours(m, d, mm, md):
    """d ← MuJoCo's full physics state of md, its controls and warm start (m loaded alike)."""
    import mujoco

    import jointspace as js

    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(mm, spec))
    mujoco.mj_getState(mm, md, state, spec)
    js.set_state(m, d, state)
    d.ctrl[:] = md.ctrl
    d.qacc_warmstart[:] = md.qacc_warmstart
