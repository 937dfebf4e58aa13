"""URDF loader: a ROS robot description parsed into a `ModelSpec` (Pinocchio is the oracle).

What a URDF element becomes:

- `<link>` → a body named after the link, with the link's `<inertial>` as its inertia
  (mass, center of mass and the full inertia tensor in the inertial frame). A link without
  `<inertial>` is massless. Every link also gets a site named after it at its frame origin, so
  that link poses and Jacobians can be asked for by link name whether or not the link stayed
  a body.
- `<joint>` → the child link's body sits at the joint origin (URDF's child frame is the joint
  frame) and carries the joint at its origin with the given axis (default x, normalized):
  `revolute` → hinge limited to [lower, upper]; `continuous` → unlimited hinge; `prismatic`
  → slide; `floating` → free joint (only directly under a root link named `world`, since a
  free joint moves its body in world coordinates); `planar` → three joints in one body: slides
  `<name>_tx` and `<name>_ty` along two in-plane axes u, v and a hinge `<name>_rz` about the
  normal (the URDF axis), where (u, v, axis) is right-handed and u = x, v = y when the axis
  is z. A `<limit>` whose lower bound is not below its upper bound (urdfdom's 0, 0 defaults
  when only effort/velocity are given) leaves the joint unlimited. `<dynamics damping friction>`
  → damping and frictionloss.
- `<mimic joint multiplier offset>` → a joint equality constraint (MuJoCo's `<equality><joint>`,
  as MuJoCo's own URDF import makes it) named after the mimicking joint: joint1 = the mimicking
  joint, joint2 = the joint it names, polycoef = (offset, multiplier, 0, 0, 0), so that
  q_mimic = offset + multiplier · q_joint (both measured from qpos0 = 0), with MuJoCo's default
  solref and solimp. It is a soft constraint solved with the others, not a removed coordinate
  (Pinocchio's `mimic=True` model): the mimicking joint keeps its dof, so the constraint holds
  to the softness of the solver, and the initial qpos0 = 0 violates a mimic with an offset
  until the state is set. A `<mimic>` on a fixed joint is moot and ignored (as Pinocchio and
  MuJoCo do); one naming a joint that does not exist, the joint itself, or a joint that is not
  revolute, continuous or prismatic is an error. `mimic=False` ignores every `<mimic>`.
- `fixed` joints are merged, as Pinocchio and MuJoCo's `fusestatic` do: the child's inertia is
  added to the parent body's (parallel-axis theorem, in the parent frame), its geoms move to the
  parent with composed poses, and its non-fixed children hang from the parent body. The merged
  link survives as a site.
- `<collision>` → a geom that collides (contype = conaffinity = 1, group 0); `<visual>` → a
  geom that does not (contype = conaffinity = 0, group 1, rgba from its material). Boxes take
  half sizes, cylinders (along z) half lengths; STL and OBJ meshes are read by
  `jointspace.io.mesh`, COLLADA (`.dae`) meshes by `jointspace.io.collada` as Pinocchio's
  loader reads them (node transforms applied; `<unit>` and `<up_axis>` not). `visual=False`
  leaves `<visual>` out.
  Geoms never add mass (`mass=0` and `inertiafromgeom="false"`): URDF inertia is explicit.
- The root link is welded to the world, or moves with a free joint named `root_joint` (as in
  Pinocchio) when `floating_base=True`. A root link named `world` is the world body itself.

Mesh files named `package://pkg/path` are looked up in `package_dirs` (a dict package → folder,
or a list of folders that contain package folders, like ROS_PACKAGE_PATH), then in the folders
of the ROS_PACKAGE_PATH environment variable, then in the folders above the URDF file; other
relative names are relative to the URDF file. A mesh that cannot be found or read is left out,
and one `JointspaceWarning` lists all such files: kinematics and dynamics do not need meshes.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from pathlib import Path
from xml.parsers import expat

import numpy as np

from jointspace.errors import JointspaceWarning, ModelError
from jointspace.io import frames
from jointspace.io.spec import EqualitySpec, GeomSpec, InertialSpec, JointSpec, MeshSpec, ModelSpec

JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_MIMIC_KINDS = ("revolute", "continuous", "prismatic")

_IDENTITY_QUAT = np.array([1.0, 0.0, 0.0, 0.0])
_VISUAL_GROUP = 1
_SITE_SIZE = 0.005


# --------------------------------------------------------------------------------------------
# XML with line numbers


class _Node:
    """An XML element with the line it starts on (ElementTree's C parser drops lines)."""

    __slots__ = ("tag", "attrib", "children", "line")

    def __init__(self, tag, attrib, line):
        self.tag, self.attrib, self.children, self.line = tag, attrib, [], line

    def find(self, tag):
        """First child element named `tag`, or None."""
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag):
        """All child elements named `tag`, in file order."""
        return [c for c in self.children if c.tag == tag]


def _parse_xml(data, fname):
    parser = expat.ParserCreate()
    stack, top = [], []

    def start(tag, attrib):
        node = _Node(tag, attrib, parser.CurrentLineNumber)
        (stack[-1].children if stack else top).append(node)
        stack.append(node)

    def end(_tag):
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise ModelError(f"{fname}:{e.lineno}: malformed XML ({expat.ErrorString(e.code)}, "
                         f"column {e.offset + 1}); fix the file so that it is well-formed XML"
                         ) from None
    return top[0]


# --------------------------------------------------------------------------------------------
# reading attributes


class _Reader:
    """Attribute parsing with error messages that point at the file and line."""

    def __init__(self, fname):
        self.fname = fname

    def where(self, node, name=None):
        """`file:line <tag name='…'>` for error messages and `source` strings."""
        name = node.attrib.get("name") if name is None else name
        label = f"<{node.tag} name='{name}'>" if name else f"<{node.tag}>"
        return f"{self.fname}:{node.line} {label}"

    def fail(self, node, msg):
        """Raise a ModelError about `node`."""
        raise ModelError(f"{self.where(node)}: {msg}")

    def floats(self, node, attr, n, default=None):
        """The attribute as n floats; `default` when absent (an error when no default)."""
        text = node.attrib.get(attr)
        if text is None:
            if default is None:
                self.fail(node, f"attribute {attr!r} is required")
            return np.array(default, dtype=np.float64)
        try:
            vals = np.array([float(t) for t in text.split()], dtype=np.float64)
        except ValueError:
            self.fail(node, f"attribute {attr}={text!r} must be {n} number(s)")
        if vals.size != n:
            self.fail(node, f"attribute {attr}={text!r} must be {n} number(s), got {vals.size}")
        if not np.all(np.isfinite(vals)):
            self.fail(node, f"attribute {attr}={text!r} must be finite")
        return vals

    def float(self, node, attr, default=None):
        """The attribute as one float."""
        return float(self.floats(node, attr, 1, None if default is None else [default])[0])

    def name(self, node):
        """The required, non-empty `name` attribute."""
        name = node.attrib.get("name", "")
        if not name:
            self.fail(node, "needs a non-empty 'name' attribute")
        return name

    def origin(self, node):
        """(pos, quat) of the `<origin xyz rpy>` child of `node` (identity when absent)."""
        o = node.find("origin")
        if o is None:
            return np.zeros(3), _IDENTITY_QUAT.copy()
        xyz = self.floats(o, "xyz", 3, [0.0, 0.0, 0.0])
        rpy = self.floats(o, "rpy", 3, [0.0, 0.0, 0.0])
        return xyz, frames.rpy_to_quat(rpy)


def _compose(a, b):
    """Pose a ∘ b of two (pos, quat) transforms: b expressed in a's parent frame."""
    return a[0] + frames.rotate(a[1], b[0]), frames.quat_normalize(frames.quat_mul(a[1], b[1]))


# --------------------------------------------------------------------------------------------
# mesh files


def _package_search_dirs(package_dirs):
    if package_dirs is None:
        return {}, []
    if isinstance(package_dirs, dict):
        return {str(k): Path(v) for k, v in package_dirs.items()}, []
    if isinstance(package_dirs, (str, os.PathLike)):
        return {}, [Path(package_dirs)]
    try:
        return {}, [Path(d) for d in package_dirs]
    except TypeError:
        raise TypeError("package_dirs must be a dict {package: folder}, a folder or a list of "
                        f"folders, got {type(package_dirs).__name__}") from None


def _is_file(path, errors):
    """Path.is_file that records an OSError (a path too long for the file system) in errors."""
    try:
        return path.is_file()
    except OSError as e:
        errors.append(e.strerror or str(e))
        return False


def _resolve_mesh_path(uri, base_dir, package_map, search_dirs):
    """(absolute path, None) of a mesh file named in a URDF, or (None, why) when not found."""
    if uri.startswith("package://"):
        pkg, _, rel = uri[len("package://"):].partition("/")
        candidates = []
        if pkg in package_map:
            candidates.append(package_map[pkg] / rel)
        env = [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        for d in search_dirs + env:
            candidates.append(d / pkg / rel)
            if d.name == pkg:
                candidates.append(d / rel)
        if base_dir is not None:
            for a in (base_dir, *base_dir.parents):
                candidates.append(a / rel if a.name == pkg else a / pkg / rel)
    elif uri.startswith("file://"):
        candidates = [Path(uri[len("file://"):])]
    else:
        p = Path(uri)
        candidates = [p if p.is_absolute() or base_dir is None else base_dir / p]
    errors = []
    path = next((c.resolve() for c in candidates if _is_file(c, errors)), None)
    if path is None:
        return None, f"not found ({errors[0].lower()})" if errors else "not found"
    return path, None


def _mesh_spec(result, name, path, source):
    """A MeshSpec from what `load_mesh` returns (a MeshSpec or a (vertices, faces) pair)."""
    if isinstance(result, MeshSpec):
        result.name, result.file, result.source = name, str(path), source
        return result
    vertices, faces = result[0], result[1]
    return MeshSpec(name=name, vertices=np.asarray(vertices, dtype=np.float64),
                    faces=np.asarray(faces, dtype=np.int32), file=str(path), source=source)


# --------------------------------------------------------------------------------------------
# the loader


class _UrdfParser:
    def __init__(self, root, fname, base_dir, floating_base, package_dirs, visual, mimic):
        self.root, self.fname, self.base_dir = root, fname, base_dir
        self.floating_base, self.visual, self.mimic = floating_base, visual, mimic
        self.package_map, self.search_dirs = _package_search_dirs(package_dirs)
        self.r = _Reader(fname)
        self.spec = ModelSpec(name=root.attrib.get("name", "robot"), source=fname,
                              inertiafromgeom="false")
        self.meshes = {}  # (path, scale) -> mesh name
        self.mesh_names = set()
        self.missing_meshes = []  # (uri, reason)
        self.skipped_geoms = []
        # id(body) -> [(mass, com, 3x3 inertia about com in body axes, iquat, fullinertia, src)]
        self.inertia_parts = {}
        self.bodies = {}

    # -- reading ------------------------------------------------------------------------------
    def read(self):
        r, root = self.r, self.root
        if root.tag != "robot":
            r.fail(root, "the root element of a URDF must be <robot>")
        self.materials = {}
        for m in root.findall("material"):
            c = m.find("color")
            if m.attrib.get("name") and c is not None:
                self.materials[m.attrib["name"]] = tuple(r.floats(c, "rgba", 4))
        self.links = {}
        for node in root.findall("link"):
            name = r.name(node)
            if name in self.links:
                r.fail(node, f"duplicate link name {name!r} (first at line "
                             f"{self.links[name].line}); link names must be unique")
            self.links[name] = node
        if not self.links:
            r.fail(root, "the robot has no <link>")
        self.joints, self.parent_joint, self.child_joints = {}, {}, {n: [] for n in self.links}
        for node in root.findall("joint"):
            name = r.name(node)
            if name in self.joints:
                r.fail(node, f"duplicate joint name {name!r} (first at line "
                             f"{self.joints[name].line}); joint names must be unique")
            kind = node.attrib.get("type", "")
            if kind not in JOINT_KINDS:
                r.fail(node, f"unknown joint type {kind!r}; use one of {', '.join(JOINT_KINDS)}")
            ends = []
            for role in ("parent", "child"):
                e = node.find(role)
                link = e.attrib.get("link", "") if e is not None else ""
                if not link:
                    r.fail(node, f"needs a <{role} link='…'/> element")
                if link not in self.links:
                    r.fail(node, f"{role} link {link!r} is not defined; add <link name='{link}'> "
                                 "or fix the joint's <" + role + ">")
                ends.append(link)
            parent, child = ends
            if child in self.parent_joint:
                other = self.parent_joint[child]
                r.fail(node, f"link {child!r} is already the child of joint {other!r} (line "
                             f"{self.joints[other].line}); a link has at most one parent joint")
            self.joints[name] = node
            self.parent_joint[child] = name
            self.child_joints[parent].append(name)
        self.check_tree()
        self.read_mimics()

    def read_mimics(self):
        """(follower, leader, multiplier, offset, source) of every `<mimic>`, checked."""
        r, self.mimics = self.r, []
        for name, node in self.joints.items() if self.mimic else ():
            mimic = node.find("mimic")
            if mimic is None or node.attrib["type"] == "fixed":
                continue  # a fixed joint has no coordinate to couple
            leader = mimic.attrib.get("joint", "")
            fix = "; fix the file, or load with mimic=False to ignore every <mimic>"
            if leader not in self.joints:
                r.fail(mimic, f"joint {name!r} mimics joint {leader!r}, which is not defined{fix}")
            if leader == name:
                r.fail(mimic, f"joint {name!r} mimics itself{fix}")
            for role, joint in (("a mimicking", name), ("a mimicked", leader)):
                kind = self.joints[joint].attrib["type"]
                if kind not in _MIMIC_KINDS:
                    r.fail(mimic, f"joint {joint!r} is {kind}, but {role} joint must be "
                                  f"{', '.join(_MIMIC_KINDS)} (one coordinate){fix}")
            self.mimics.append((name, leader, r.float(mimic, "multiplier", 1.0),
                                r.float(mimic, "offset", 0.0), r.where(mimic, "")))

    def check_tree(self):
        r = self.r
        roots = [n for n in self.links if n not in self.parent_joint]
        if len(roots) > 1:
            r.fail(self.root, f"the robot has {len(roots)} root links ({', '.join(roots)}); a "
                              "URDF must be one tree: connect them with joints")
        reached, stack = set(), list(roots)
        while stack:
            link = stack.pop()
            reached.add(link)
            stack.extend(self.joints[j].find("child").attrib["link"]
                         for j in self.child_joints[link])
        if len(reached) < len(self.links):
            start = next(n for n in self.links if n not in reached)
            cycle, link = [], start
            while link not in cycle:
                cycle.append(link)
                link = self.joints[self.parent_joint[link]].find("parent").attrib["link"]
            cycle = cycle[cycle.index(link):]
            joint = self.joints[self.parent_joint[cycle[0]]]
            r.fail(joint, "the joints form a cycle through links "
                          f"{' -> '.join(reversed(cycle + [cycle[0]]))}; URDF describes trees "
                          "only: remove one joint of the loop")
        self.root_link = roots[0]

    # -- building -----------------------------------------------------------------------------
    def build(self):
        spec, r = self.spec, self.r
        root = self.root_link
        world = spec.world
        count = Counter(g.attrib.get("name", "") for n in self.links.values()
                        for g in n.findall("visual") + n.findall("collision"))
        self.unique_geom_names = {g for g, k in count.items() if g and k == 1}
        identity = (np.zeros(3), _IDENTITY_QUAT.copy())
        if root == "world":
            if self.floating_base:
                r.fail(self.links[root], "the root link is named 'world', which is the fixed "
                       "world; floating_base=True would make the world move. Remove the 'world' "
                       "link and its joint, or load with floating_base=False")
            body = world
        else:
            node = self.links[root]
            body = world.add_body(name=root, source=r.where(node))
            if self.floating_base:
                taken = set(self.joints)
                jname = "root_joint" if "root_joint" not in taken else f"{root}_root_joint"
                body.add_joint(type="free", name=jname, source=r.where(node))
        stack = [(root, body, identity)]
        while stack:
            link, body, pose = stack.pop()
            self.place_link(link, body, pose)
            below = []
            for jname in self.child_joints[link]:
                jnode = self.joints[jname]
                child = jnode.find("child").attrib["link"]
                origin = _compose(pose, r.origin(jnode))
                if jnode.attrib["type"] == "fixed":
                    below.append((child, body, origin))
                else:
                    below.append((child, self.add_jointed_body(child, jnode, body, origin),
                                  identity))
            stack.extend(reversed(below))
        self.finish_inertia()
        for follower, leader, multiplier, offset, src in self.mimics:
            # q_follower = offset + multiplier · q_leader (qpos0 = 0 for URDF joints)
            spec.equalities.append(EqualitySpec(
                type="joint", name=follower, obj1=follower, obj2=leader,
                polycoef=np.array([offset, multiplier, 0.0, 0.0, 0.0]), source=src))
        self.report()
        return spec

    def add_jointed_body(self, link, jnode, parent, origin):
        r = self.r
        kind, name = jnode.attrib["type"], jnode.attrib["name"]
        body = parent.add_body(name=link, pos=origin[0], quat=origin[1],
                               source=r.where(self.links[link]))
        src = r.where(jnode)
        if kind == "floating":
            if parent is not self.spec.world:
                r.fail(jnode, "a floating joint is supported only directly below a root link "
                              "named 'world' (a free joint moves its body in world coordinates); "
                              "make this the root link and load with floating_base=True")
            body.add_joint(type="free", name=name, source=src)
            return body
        a = jnode.find("axis")
        axis = r.floats(a, "xyz", 3) if a is not None else np.array([1.0, 0.0, 0.0])
        n = np.linalg.norm(axis)
        if n < 1e-12:
            r.fail(a, f"joint axis {axis.tolist()} has zero length")
        axis = axis / n
        common = dict(source=src)
        dyn = jnode.find("dynamics")
        if dyn is not None:
            common["damping"] = r.float(dyn, "damping", 0.0)
            common["frictionloss"] = r.float(dyn, "friction", 0.0)
        if kind == "planar":
            u = frames.rotate(frames.quat_between([0.0, 0.0, 1.0], axis), [1.0, 0.0, 0.0])
            v = np.cross(axis, u)
            body.add_joint(type="slide", name=f"{name}_tx", axis=u, **common)
            body.add_joint(type="slide", name=f"{name}_ty", axis=v, **common)
            body.add_joint(type="hinge", name=f"{name}_rz", axis=axis, **common)
            return body
        joint = JointSpec(type="slide" if kind == "prismatic" else "hinge", name=name,
                          axis=axis, **common)
        lim = jnode.find("limit")
        if kind in ("revolute", "prismatic") and lim is not None:
            lo, hi = r.float(lim, "lower", 0.0), r.float(lim, "upper", 0.0)
            if lo > hi:
                r.fail(lim, f"joint {name!r}: lower limit {lo} is above upper limit {hi}")
            if lo < hi:
                joint.limited, joint.range = True, (lo, hi)
        body.joints.append(joint)
        return body

    def place_link(self, link, body, pose):
        """Attach a link's site, inertia and geoms to `body`, the link frame at `pose` in it."""
        r, node = self.r, self.links[link]
        body.add_site(name=link, pos=pose[0].copy(), quat=pose[1].copy(),
                      size=np.full(3, _SITE_SIZE), source=r.where(node))
        inertial = node.find("inertial")
        if inertial is not None:
            self.add_inertia(body, pose, inertial)
        for g in node.findall("collision"):
            self.add_geom(body, pose, g, visual=False)
        for g in node.findall("visual") if self.visual else ():
            self.add_geom(body, pose, g, visual=True)

    def add_inertia(self, body, pose, node):
        r = self.r
        m_node = node.find("mass")
        if m_node is None:
            r.fail(node, "needs a <mass value='…'/> element")
        mass = r.float(m_node, "value")
        if mass < 0:
            r.fail(m_node, f"mass must be non-negative, got {mass}")
        i_node = node.find("inertia")
        keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
        full = (np.array([r.float(i_node, k, 0.0) for k in keys]) if i_node is not None
                else np.zeros(6))
        ipos, iquat = _compose(pose, r.origin(node))
        xx, yy, zz, xy, xz, yz = full
        R = frames.quat_to_mat(iquat)
        I_body = R @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ R.T
        self.inertia_parts.setdefault(id(body), []).append(
            (mass, ipos, I_body, iquat, full, r.where(node, "")))
        self.bodies[id(body)] = body

    def finish_inertia(self):
        """Each body's inertia: one link's as given, several combined about their joint com."""
        for key, parts in self.inertia_parts.items():
            body = self.bodies[key]
            if body is self.spec.world:
                continue
            if len(parts) == 1:
                mass, ipos, _, iquat, full, src = parts[0]
                body.inertial = InertialSpec(mass=mass, pos=ipos, quat=iquat, fullinertia=full,
                                             source=src)
                continue
            mass = sum(p[0] for p in parts)
            com = sum(p[0] * p[1] for p in parts) / mass if mass > 0 else np.zeros(3)
            inertia = np.zeros((3, 3))
            for m, c, Ic, *_ in parts:
                d = c - com
                inertia += Ic + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))  # parallel axis
            full = inertia[[0, 1, 2, 0, 0, 1], [0, 1, 2, 1, 2, 2]]
            body.inertial = InertialSpec(mass=mass, pos=com, quat=_IDENTITY_QUAT.copy(),
                                         fullinertia=full, source=parts[0][5])

    def add_geom(self, body, pose, node, visual):
        r = self.r
        g_node = node.find("geometry")
        shape = next(iter(g_node.children), None) if g_node is not None else None
        where = r.where(node, node.attrib.get("name", ""))
        if shape is None:
            self.skipped_geoms.append(f"{where}: no <geometry>")
            return
        kind = shape.tag
        if kind == "box":
            gtype, size = "box", 0.5 * r.floats(shape, "size", 3)
        elif kind == "sphere":
            gtype, size = "sphere", np.array([r.float(shape, "radius"), 0.0, 0.0])
        elif kind in ("cylinder", "capsule"):
            gtype = kind
            size = np.array([r.float(shape, "radius"), 0.5 * r.float(shape, "length"), 0.0])
        elif kind == "mesh":
            gtype, size = "mesh", np.zeros(3)
        else:
            self.skipped_geoms.append(f"{where}: unsupported geometry <{kind}>")
            return
        if gtype != "mesh" and np.any(size[:{"box": 3, "sphere": 1}.get(gtype, 2)] <= 0):
            self.skipped_geoms.append(f"{where}: {kind} of zero size")
            return
        mesh = self.mesh(shape) if gtype == "mesh" else ""
        if mesh is None:
            return
        pos, quat = _compose(pose, r.origin(node))
        g = GeomSpec(type=gtype, size=size, pos=pos, quat=quat, mesh=mesh, mass=0.0,
                     name=node.attrib.get("name", "") if node.attrib.get("name", "")
                     in self.unique_geom_names else "", source=where)
        if visual:
            g.contype = g.conaffinity = 0
            g.group = _VISUAL_GROUP
            g.rgba = self.rgba(node)
        body.geoms.append(g)

    def rgba(self, visual):
        mat = visual.find("material")
        if mat is None:
            return GeomSpec.rgba
        c = mat.find("color")
        if c is not None:
            return tuple(self.r.floats(c, "rgba", 4))
        return self.materials.get(mat.attrib.get("name", ""), GeomSpec.rgba)

    def mesh(self, shape):
        """Name of the MeshSpec for a <mesh> element (loaded once), or None if unavailable."""
        r = self.r
        uri = shape.attrib.get("filename", "")
        if not uri:
            r.fail(shape, "a <mesh> needs a 'filename' attribute")
        scale = r.floats(shape, "scale", 3, [1.0, 1.0, 1.0])
        path, why = _resolve_mesh_path(uri, self.base_dir, self.package_map, self.search_dirs)
        if path is None:
            self.missing_meshes.append((uri if len(uri) <= 200 else uri[:197] + "...", why))
            return None
        key = (str(path), tuple(scale))
        if key in self.meshes:
            return self.meshes[key]
        if path.suffix.lower() == ".dae":
            from jointspace.io.collada import load_collada as load_mesh
        else:
            from jointspace.io.mesh import load_mesh

        try:
            result = load_mesh(path, scale)
        except (ModelError, OSError, ValueError) as e:
            why = str(e)
            self.missing_meshes.append((uri, why[len(f"{path}: "):] if why.startswith(f"{path}: ")
                                        else why))
            self.meshes[key] = None
            return None
        stem, name, k = path.stem, path.stem, 1
        while name in self.mesh_names:
            name, k = f"{stem}_{k}", k + 1
        self.mesh_names.add(name)
        self.spec.meshes.append(_mesh_spec(result, name, path, r.where(shape, "")))
        self.meshes[key] = name
        return name

    def report(self):
        """One warning per kind of problem that was tolerated."""
        msgs = []
        if self.missing_meshes:
            by_reason = {}
            for uri, why in self.missing_meshes:
                by_reason.setdefault(why, {})[uri] = None
            n = sum(len(v) for v in by_reason.values())
            msgs.append(f"{self.fname}: {n} mesh file(s) could not be found or read, and their "
                        "geoms were left out (kinematics and dynamics are unaffected); pass "
                        "package_dirs=… for missing files, convert other formats to STL, OBJ "
                        "or COLLADA. "
                        + "; ".join(f"{why}: {', '.join(uris)}" for why, uris in by_reason.items()))
        if self.skipped_geoms:
            msgs.append(f"{self.fname}: geoms left out: " + "; ".join(self.skipped_geoms))
        for msg in msgs:
            self.spec.warnings.append(msg)
            warnings.warn(msg, JointspaceWarning, stacklevel=4)


def _read_source(text_or_path, filename):
    """(data, file name for messages, folder for relative paths)."""
    if isinstance(text_or_path, bytes):
        text_or_path = text_or_path.decode("utf-8")
    if isinstance(text_or_path, os.PathLike) or (
            isinstance(text_or_path, str) and not text_or_path.lstrip().startswith("<")):
        path = Path(text_or_path)
        if not path.is_file():
            raise ModelError(f"URDF file {str(path)!r} does not exist; check the path")
        fname = filename or str(path)
        return path.read_bytes(), fname, path.resolve().parent
    if not isinstance(text_or_path, str):
        raise TypeError("parse_urdf expects URDF text or a path, got "
                        f"{type(text_or_path).__name__}")
    base = Path(filename).resolve().parent if filename else None
    return text_or_path, filename or "<string>", base


def parse_urdf(text_or_path, *, filename=None, floating_base=False, package_dirs=None,
               visual=True, mimic=True):
    """Parse a URDF robot description into a `ModelSpec` (see the module docstring).

    Args:
        text_or_path: URDF text (starting with '<'), or the path of a URDF file.
        filename: name used in messages, and whose folder relative mesh paths are taken from
            when text is given (default: the path, or "<string>").
        floating_base: add a free joint `root_joint` to the root link instead of welding it to
            the world.
        package_dirs: where `package://` meshes are looked up: a dict package → folder, or a
            folder or list of folders that contain package folders.
        visual: read `<visual>` elements as geoms that do not collide; False leaves them out
            (as MuJoCo's URDF import does by default), which loads robots with large visual
            meshes several times faster. Dynamics and collisions do not depend on them.
        mimic: couple each `<mimic>` joint to the joint it names by a joint equality
            constraint; False ignores every `<mimic>` (the joints move independently, as in
            Pinocchio's default `mimic=False`).

    Returns:
        ModelSpec: bodies, joints, geoms, sites (one per link), meshes and warnings.

    Raises:
        ModelError: malformed XML, undefined parent/child links, cycles, several root links,
            duplicate link or joint names, unknown joint types, negative masses, bad numbers.
    """
    data, fname, base_dir = _read_source(text_or_path, filename)
    root = _parse_xml(data, fname)
    p = _UrdfParser(root, fname, base_dir, floating_base, package_dirs, visual, mimic)
    p.read()
    return p.build()


def _compile(spec):
    """compile_model (imported here: the compiler imports this module's siblings)."""
    from jointspace.io.compile import compile_model

    return compile_model(spec)


def load_urdf(path, floating_base=False, package_dirs=None, visual=True, mimic=True):
    """Load and compile a URDF file into a `Model` (see `parse_urdf`)."""
    return _compile(parse_urdf(path, floating_base=floating_base, package_dirs=package_dirs,
                               visual=visual, mimic=mimic))


def load_urdf_string(text, floating_base=False, package_dirs=None, filename=None, visual=True,
                     mimic=True):
    """Load and compile URDF text into a `Model` (see `parse_urdf`)."""
    return _compile(parse_urdf(text, filename=filename, floating_base=floating_base,
                               package_dirs=package_dirs, visual=visual, mimic=mimic))
