"""Seeded random kinematic trees for tests, as MJCF and as the same tree built in Pinocchio.

`random_tree(seed, nbody, ...)` returns an MJCF document that MuJoCo and jointspace both
load; `random_tree_desc` returns the description it is made from, which `pinocchio_tree`
turns into an equivalent `pinocchio.Model` (for oracle tests on trees no URDF describes).
The spirit is Featherstone's `autoTree(nb, bf, skew, taper)` (spatial_v2): random parents,
joint axes, anchors and inertias; here also MuJoCo's joint kinds and several joints per body.

Bodies are created in depth-first preorder (each new body hangs from the world or from a
body on the path to the previous one), so the creation order is the order in which MuJoCo,
jointspace and Pinocchio number bodies and joints.

`PinAdapter` converts states and results between MuJoCo's conventions (jointspace's) and
Pinocchio's: quaternions (w, x, y, z) vs (x, y, z, w); hinge/slide positions measured from
`ref` vs from zero; free-joint velocity (world linear, body angular) vs body-frame
(linear, angular) with its time derivative as acceleration.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3
_KIND = {FREE: "free", BALL: "ball", SLIDE: "slide", HINGE: "hinge"}


@dataclass
class JointDesc:
    """One joint: kind (FREE, BALL, SLIDE, HINGE), anchor pos and axis in the body frame."""

    kind: int
    pos: np.ndarray
    axis: np.ndarray
    ref: float = 0.0
    armature: float = 0.0


@dataclass
class BodyDesc:
    """One body: parent (-1: world), pose in the parent frame, joints, inertial properties."""

    parent: int
    pos: np.ndarray
    quat: np.ndarray
    joints: list = field(default_factory=list)
    mass: float = 1.0
    ipos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    iquat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0, 0, 0]))
    inertia: np.ndarray = field(default_factory=lambda: np.ones(3))


@dataclass
class TreeDesc:
    """A kinematic tree: bodies in depth-first preorder and the gravity vector."""

    bodies: list
    gravity: np.ndarray

    def mjcf(self) -> str:
        """The tree as an MJCF document (explicit inertials, radians, no geoms)."""
        children = {i: [] for i in range(-1, len(self.bodies))}
        for i, b in enumerate(self.bodies):
            children[b.parent].append(i)

        def fmt(x):
            return " ".join(repr(float(v)) for v in np.ravel(x))

        def body_xml(i, indent):
            b = self.bodies[i]
            pad = " " * indent
            out = [f'{pad}<body name="b{i}" pos="{fmt(b.pos)}" quat="{fmt(b.quat)}">',
                   f'{pad}  <inertial pos="{fmt(b.ipos)}" quat="{fmt(b.iquat)}" '
                   f'mass="{b.mass!r}" diaginertia="{fmt(b.inertia)}"/>']
            for k, j in enumerate(b.joints):
                name = f"j{i}_{k}"
                if j.kind == FREE:
                    out.append(f'{pad}  <freejoint name="{name}"/>')
                    continue
                attrs = (f'name="{name}" type="{_KIND[j.kind]}" pos="{fmt(j.pos)}" '
                         f'armature="{j.armature!r}"')
                if j.kind != BALL:
                    attrs += f' axis="{fmt(j.axis)}" ref="{j.ref!r}"'
                out.append(f"{pad}  <joint {attrs}/>")
            for c in children[i]:
                out += body_xml(c, indent + 2)
            out.append(f"{pad}</body>")
            return out

        lines = ['<mujoco model="random_tree">',
                 '  <compiler angle="radian"/>',
                 f'  <option gravity="{fmt(self.gravity)}"/>',
                 "  <worldbody>"]
        for c in children[-1]:
            lines += body_xml(c, 4)
        lines += ["  </worldbody>", "</mujoco>", ""]
        return "\n".join(lines)


def _unit(rng, n=3):
    x = rng.normal(size=n)
    return x / np.linalg.norm(x)


def random_tree_desc(seed, nbody, *, kinds=(HINGE, SLIDE, BALL), free_root=True,
                     branching=0.4, max_joints=2, welded=0.1, armature=0.0,
                     gravity=(0.0, 0.0, -9.81)) -> TreeDesc:
    """A seeded random tree of `nbody` moving bodies (the world not counted).

    Args:
        seed: seed of `np.random.default_rng`.
        nbody: number of bodies.
        kinds: joint kinds drawn for non-root joints (FREE excluded).
        free_root: give the first body a free joint.
        branching: probability that a body hangs from an earlier body on the current path
            (or the world) instead of from the previous body; 0 makes a chain.
        max_joints: most joints per body (1 … max_joints drawn; after a ball, only slides).
        welded: probability that a non-root body has no joint at all.
        armature: armature of every hinge, slide and ball joint.
        gravity: gravity vector.
    """
    rng = np.random.default_rng(seed)
    bodies = []
    path = []  # ancestors-or-self of the previous body
    for i in range(nbody):
        if i == 0:
            parent = -1
        elif rng.uniform() < branching:
            parent = int(rng.choice([-1] + path))
        else:
            parent = i - 1
        path = (path[:path.index(parent) + 1] if parent >= 0 else []) + [i]
        joints = []
        if i == 0 and free_root:
            joints.append(JointDesc(FREE, np.zeros(3), np.array([0.0, 0, 1])))
        elif not (parent >= 0 and rng.uniform() < welded):
            for _ in range(int(rng.integers(1, max_joints + 1))):
                kind = int(rng.choice(kinds))
                if any(j.kind == BALL for j in joints) and kind != SLIDE:
                    kind = SLIDE  # MuJoCo allows no rotation after a ball in a body
                ref = float(rng.uniform(-0.5, 0.5)) if kind in (HINGE, SLIDE) else 0.0
                joints.append(JointDesc(kind, rng.uniform(-0.1, 0.1, 3), _unit(rng), ref,
                                        armature))
        # principal inertias that satisfy the triangle inequality strictly
        inertia = rng.uniform(0.05, 0.095, 3)
        bodies.append(BodyDesc(parent=parent, pos=rng.uniform(-0.4, 0.4, 3), quat=_unit(rng, 4),
                               joints=joints, mass=float(rng.uniform(0.5, 2.0)),
                               ipos=rng.uniform(-0.1, 0.1, 3), iquat=_unit(rng, 4),
                               inertia=inertia))
    return TreeDesc(bodies, np.asarray(gravity, dtype=np.float64))


def random_tree(seed, nbody, **kwargs) -> str:
    """MJCF text of `random_tree_desc(seed, nbody, **kwargs)`."""
    return random_tree_desc(seed, nbody, **kwargs).mjcf()


def random_state(m, rng, scale=1.0):
    """Random (qpos, qvel, qacc) for a jointspace or MuJoCo model (unit quaternions)."""
    qpos = np.array(m.qpos0, dtype=np.float64)
    for j in range(m.njnt):
        a = int(m.jnt_qposadr[j])
        t = int(m.jnt_type[j])
        if t == FREE:
            qpos[a:a + 3] = rng.uniform(-1, 1, 3)
            qpos[a + 3:a + 7] = _unit(rng, 4)
        elif t == BALL:
            qpos[a:a + 4] = _unit(rng, 4)
        else:
            qpos[a] += scale * rng.uniform(-1.5, 1.5)
    return qpos, scale * rng.normal(size=m.nv), scale * rng.normal(size=m.nv)


# ---------------------------------------------------------------------------------------------
# Pinocchio


def _se3(pin, quat=None, pos=None):
    rot = np.eye(3)
    if quat is not None:
        w, x, y, z = quat / np.linalg.norm(quat)
        rot = pin.Quaternion(w, x, y, z).toRotationMatrix()
    return pin.SE3(rot, np.zeros(3) if pos is None else np.asarray(pos, dtype=np.float64))


def pinocchio_tree(desc: TreeDesc):
    """The tree as a `pinocchio.Model`, joints named as in `TreeDesc.mjcf` (use `PinAdapter`).

    Each MuJoCo joint becomes one Pinocchio joint (free → FreeFlyer, ball → Spherical,
    hinge → RevoluteUnaligned, slide → PrismaticUnaligned) placed at its anchor; MuJoCo
    rotates a body about each anchor in turn, so the next joint's placement starts with the
    translation back from the previous anchor. A body's inertia goes to its last joint
    (welded bodies to their parent's). Pinocchio's armature is set to the joints' armature.
    """
    import pinocchio as pin

    model = pin.Model()
    model.gravity.linear = desc.gravity
    jid = {-1: 0}  # body -> Pinocchio joint carrying it
    frame = {-1: pin.SE3.Identity()}  # body frame relative to that joint's frame
    armature = []
    for i, b in enumerate(desc.bodies):
        x = frame[b.parent] * _se3(pin, b.quat, b.pos)
        parent = jid[b.parent]
        for k, j in enumerate(b.joints):
            if j.kind == FREE:
                jm = pin.JointModelFreeFlyer()
                place = pin.SE3.Identity()
            else:
                place = x * _se3(pin, pos=j.pos)
                if j.kind == BALL:
                    jm = pin.JointModelSpherical()
                elif j.kind == HINGE:
                    jm = pin.JointModelRevoluteUnaligned(*j.axis)
                else:
                    jm = pin.JointModelPrismaticUnaligned(*j.axis)
            parent = model.addJoint(parent, jm, place, f"j{i}_{k}")
            armature += [j.armature] * jm.nv
            x = _se3(pin, pos=-j.pos) if j.kind != FREE else pin.SE3.Identity()
        jid[i] = parent
        frame[i] = x
        rot = _se3(pin, b.iquat).rotation
        inertia = pin.Inertia(b.mass, np.asarray(b.ipos), rot @ np.diag(b.inertia) @ rot.T)
        model.appendBodyToJoint(parent, inertia, x)
    model.armature = np.array(armature, dtype=np.float64)
    return model


class PinAdapter:
    """Converts between jointspace (MuJoCo) coordinates and Pinocchio's, joints matched by name.

    With B (nv, nv) taking Pinocchio velocities to ours (a permutation, times the body
    rotation R on a free joint's linear part): v = B v_pin, M = B M_pin Bᵀ, tau = B tau_pin.
    A free joint's Pinocchio acceleration is the derivative of its body-frame velocity:
    a_pin = Bᵀ a - (ω × Rᵀ v_lin, 0) on its dofs. Positions: quaternions (w, x, y, z) →
    (x, y, z, w); hinge and slide measured from qpos0; Pinocchio's unbounded revolute
    joints take (cos q, sin q).
    """

    def __init__(self, m, pm):
        self.m = m
        self.nq_pin = pm.nq
        self.rows = []
        for j in range(m.njnt):
            pj = pm.joints[pm.getJointId(m.names["joint"][j])]
            self.rows.append((int(m.jnt_type[j]), int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j]),
                              pj.idx_q, pj.idx_v, pj.nq, pj.nv))
        assert sum(r[6] for r in self.rows) == m.nv == pm.nv

    def q(self, qpos):
        """Pinocchio configuration of our qpos."""
        out = np.zeros(self.nq_pin)
        for kind, qa, _, iq, _, nq, _ in self.rows:
            if kind == FREE:
                out[iq:iq + 3] = qpos[qa:qa + 3]
                out[iq + 3:iq + 7] = np.roll(qpos[qa + 3:qa + 7], -1)
            elif kind == BALL:
                out[iq:iq + 4] = np.roll(qpos[qa:qa + 4], -1)
            elif nq == 2:
                out[iq:iq + 2] = np.cos(qpos[qa]), np.sin(qpos[qa])
            else:
                out[iq] = qpos[qa] - self.m.qpos0[qa]
        return out

    def b_matrix(self, qpos):
        """B (nv, nv): our velocity = B @ Pinocchio velocity."""
        nv = self.m.nv
        b = np.zeros((nv, nv))
        for kind, qa, da, _, iv, _, n in self.rows:
            b[da:da + n, iv:iv + n] = np.eye(n)
            if kind == FREE:
                w, x, y, z = qpos[qa + 3:qa + 7] / np.linalg.norm(qpos[qa + 3:qa + 7])
                b[da:da + 3, iv:iv + 3] = [
                    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
        return b

    def _free_bias(self, qpos, qvel):
        """(ω × Rᵀ v_lin, 0) on each free joint's dofs, in Pinocchio's order."""
        vpin = self.v(qpos, qvel)
        c = np.zeros(self.m.nv)
        for kind, _, _, _, iv, _, _ in self.rows:
            if kind == FREE:
                c[iv:iv + 3] = np.cross(vpin[iv + 3:iv + 6], vpin[iv:iv + 3])
        return c

    def v(self, qpos, qvel):
        """Pinocchio velocity of our qvel."""
        return self.b_matrix(qpos).T @ qvel

    def a(self, qpos, qvel, qacc):
        """Pinocchio acceleration of our qacc at velocity qvel."""
        return self.b_matrix(qpos).T @ qacc - self._free_bias(qpos, qvel)

    def a_from_pin(self, qpos, qvel, apin):
        """Our acceleration of a Pinocchio acceleration, at our velocity qvel."""
        return self.b_matrix(qpos) @ (apin + self._free_bias(qpos, qvel))

    def tau(self, qpos, tau_pin):
        """Our generalized force of a Pinocchio one."""
        return self.b_matrix(qpos) @ tau_pin

    def tau_to_pin(self, qpos, tau):
        """Pinocchio generalized force of ours."""
        return self.b_matrix(qpos).T @ tau

    def matrix(self, qpos, mat_pin):
        """B X Bᵀ: M or M⁻¹ in our coordinates from Pinocchio's."""
        b = self.b_matrix(qpos)
        return b @ mat_pin @ b.T

    def forces(self, pin, pm, pd, d, f_ext):
        """Pinocchio joint forces (local frames) of our f_ext, after pin.forwardKinematics.

        f_ext[b] = (force, torque) in world axes at body b's com (d.xipos[b]); each body's
        wrench goes to the Pinocchio joint that moves it (that of its last joint, or of the
        body it is welded to; bodies welded to the world are skipped).
        """
        m = self.m
        out = [pin.Force.Zero() for _ in range(pm.njoints)]
        for b in range(1, m.nbody):
            w = int(m.body_weldid[b])
            if m.body_jntnum[w] == 0:  # welded to the world or to a mocap body
                continue
            name = m.names["joint"][m.body_jntadr[w] + m.body_jntnum[w] - 1]
            jid = pm.getJointId(name)
            f = np.asarray(f_ext[b, :3], dtype=np.float64)
            t = f_ext[b, 3:] + np.cross(d.xipos[b], f)
            out[jid] += pd.oMi[jid].actInv(pin.Force(f, t))
        return out
