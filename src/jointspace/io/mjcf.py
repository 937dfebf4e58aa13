"""MJCF loader: an MJCF document (MuJoCo's XML format) to a `ModelSpec`.

The loader follows MuJoCo's compiler for the subset of MJCF that real models use: compiler
options (angle units, Euler sequence, autolimits, inertia from geoms, fusestatic), default
classes with inheritance and `childclass`, `<include>`, `<frame>`, `<replicate>`, `<attach>`
of a body, a named frame or the worldbody of other files' `<model>` assets (or of this
file's own bodies and frames), bodies, joints, geoms (primitives fitted to meshes too), sites,
meshes (with maxhullvert),
actuators (motor, position, velocity, general), equality constraints, contact pairs and
exclusions, sensors, keyframes and `<size nuserdata nkey>`, cameras, materials (their
color), lights and `<visual>` (read; only `<map znear>` is kept). Frames are resolved here
(euler, axisangle, xyaxes, zaxis, fromto) so the compiler sees plain `pos`/`quat` relative
to the parent body, in radians. The XML may deviate from XML 1.0 where MuJoCo's reader
(tinyxml2) lets it (see `_tinyxml_tolerant`).

Elements that only render or hold user data (textures, skins, `<statistic>`, `<custom>`,
lights, `<visual>`) are read in silence, as MuJoCo reads them; other elements that jointspace
does not model and whose absence leaves the physics unchanged (`<extension>`) are listed in
one `JointspaceWarning` per document; elements and attributes whose absence would change
the physics silently (actuated tendons, composites, plugins, gravity compensation, ...) raise
`ModelError`. Every message names the file, the line and the element
("robot.xml:42 <joint name='knee'>") and says what to do.
"""

from __future__ import annotations

import copy
import math
import os
import re
import tempfile
import warnings
import xml.parsers.expat

import numpy as np

from jointspace.errors import JointspaceWarning, ModelError
from jointspace.io import frames
from jointspace.io.procedural import BUILTIN_MESHES, make_builtin
from jointspace.io.spec import (
    DEFAULT_SOLIMP,
    DEFAULT_SOLREF,
    ActuatorSpec,
    BodySpec,
    CameraSpec,
    EqualitySpec,
    ExcludeSpec,
    GeomSpec,
    HFieldSpec,
    InertialSpec,
    JointSpec,
    KeySpec,
    MaterialSpec,
    MeshSpec,
    ModelSpec,
    PairSpec,
    SensorSpec,
    SiteSpec,
    TendonSpec,
)
from jointspace.types import DISABLE_FLAGS, ENABLE_FLAGS, ENABLE_REFUSED, dcmotor_slots

__all__ = ["parse_mjcf", "load_mjcf", "load_mjcf_string"]

_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_INTEGER = re.compile(r"[+-]?\d+\Z")

# --------------------------------------------------------------------------------------------
# XML reading with line numbers


class _Node:
    """An XML element with the file and line it came from."""

    __slots__ = ("tag", "attrib", "children", "file", "line")

    def __init__(self, tag, attrib, file, line):
        self.tag = tag
        self.attrib = attrib
        self.children = []
        self.file = file
        self.line = line

    def where(self):
        """`file:line <tag name='x'>` for error messages and `source` fields."""
        name = self.attrib.get("name")
        if name is None and self.tag in ("default", "include"):
            name = self.attrib.get("class") or self.attrib.get("file")
            key = "class" if self.tag == "default" else "file"
            return f"{self.file}:{self.line} <{self.tag}" + (
                f" {key}='{name}'>" if name else ">")
        label = f" name='{name}'" if name else ""
        return f"{self.file}:{self.line} <{self.tag}{label}>"


# What MuJoCo's XML reader (tinyxml2) accepts beyond XML 1.0, rewritten before expat sees it:
# a comment may hold "--" (its text is blanked, newlines kept), attributes need no whitespace
# between them (name="a"type="b" gets a space), and a "&" that starts no entity reference is a
# plain character in an attribute value (it becomes &amp;). Markup is matched in one pass, so
# a quote inside a comment or a "<!--" inside an attribute value is left alone.
_MARKUP = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^<>]*>"
                     r"|<[^<>\"'!?]*(?:(?:\"[^\"]*\"|'[^']*')[^<>\"']*)*>", re.S)
_ATTR_VALUE = re.compile(r"\"[^\"]*\"|'[^']*'")
_BARE_AMP = re.compile(r"&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)")
_NAME_START = re.compile(r"[A-Za-z_:]")


def _tolerant_markup(match):
    text = match.group(0)
    if text.startswith("<!--"):
        return "<!--" + re.sub(r"[^\n]", " ", text[4:-3]) + "-->"
    if text.startswith(("<!", "<?")):
        return text

    def value(m):
        v = _BARE_AMP.sub("&amp;", m.group(0))
        end = m.end()
        if end < len(text) and _NAME_START.match(text, end):
            v += " "
        return v

    return _ATTR_VALUE.sub(value, text)


def _tinyxml_tolerant(data):
    """`data` with MuJoCo's accepted deviations from XML rewritten; lines are kept."""
    if isinstance(data, bytes):
        # latin-1 maps bytes one to one, so multi-byte UTF-8 passes through unchanged
        return _MARKUP.sub(_tolerant_markup, data.decode("latin-1")).encode("latin-1")
    return _MARKUP.sub(_tolerant_markup, data)


def _parse_xml(data, file):
    """Parse XML text or bytes into a `_Node` tree; malformed XML is a ModelError.

    The text is first made to follow XML where MuJoCo's reader is lenient (see
    `_tinyxml_tolerant`), without moving any element to another line.
    """
    data = _tinyxml_tolerant(data)
    parser = xml.parsers.expat.ParserCreate()
    stack = []
    root = []

    def start(tag, attrib):
        node = _Node(tag, attrib, file, parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(tag):
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        raise ModelError(
            f"{file}:{e.lineno}:{e.offset + 1}: malformed XML "
            f"({xml.parsers.expat.ErrorString(e.code)}); fix the XML syntax there"
        ) from None
    return root[0]


# --------------------------------------------------------------------------------------------
# attribute tables: name -> (kind, nmin, nmax); kind "f" float, "i" int, "s" string,
# "b" bool (true/false), "l" limited keyword (true/false/auto), or a tuple of keywords.
# nmin < nmax means MuJoCo accepts fewer values and keeps the rest from the default.


def _f(n=1, nmin=None):
    return ("f", n if nmin is None else nmin, n)


def _k(*choices):
    return ("k", choices, 1)


_S = ("s", 1, 1)
_I = ("i", 1, 1)
_B = ("b", 1, 1)
_L = ("l", 1, 1)
_ORIENT = {"quat": _f(4), "axisangle": _f(4), "euler": _f(3), "xyaxes": _f(6), "zaxis": _f(3)}
_ORIENT_KEYS = tuple(_ORIENT)
_SOLREF = _f(2, 1)
_SOLIMP = _f(5, 1)

_CAM_MODES = ("fixed", "track", "trackcom", "targetbody", "targetbodycom")
_GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh",
               "sdf")
_JOINT_TYPES = ("free", "ball", "slide", "hinge")
_ALIGN = ("k", ("false", "true", "auto"), 1)

_TABLES = {
    "joint": {
        "name": _S, "class": _S, "type": _k(*_JOINT_TYPES), "group": _I, "pos": _f(3),
        "axis": _f(3), "limited": _L, "range": _f(2), "ref": _f(), "springref": _f(),
        "stiffness": _f(), "damping": _f(3, 1), "armature": _f(), "frictionloss": _f(),
        "margin": _f(), "solreflimit": _SOLREF, "solimplimit": _SOLIMP,
        "solreffriction": _SOLREF, "solimpfriction": _SOLIMP, "springdamper": _f(2),
        "actuatorfrclimited": _L, "actuatorfrcrange": _f(2), "actuatorgravcomp": _B,
        "user": ("s", 1, 1),
    },
    "geom": {
        "name": _S, "class": _S, "type": _k(*_GEOM_TYPES), "size": _f(3, 1),
        "fromto": _f(6), "pos": _f(3), **_ORIENT, "mass": _f(), "density": _f(),
        "shellinertia": _B, "friction": _f(3, 1), "contype": _I, "conaffinity": _I,
        "condim": _I, "priority": _I, "solmix": _f(), "solref": _SOLREF, "solimp": _SOLIMP,
        "margin": _f(), "gap": _f(), "group": _I, "rgba": _f(4), "mesh": _S, "hfield": _S,
        "material": _S, "fitscale": _f(), "fluidshape": _k("none", "ellipsoid"),
        "fluidcoef": _f(5, 1), "user": _S, "adhesion": _f(), "surfacevel": _f(6, 1),
    },
    "site": {
        "name": _S, "class": _S, "type": _k(*_GEOM_TYPES), "size": _f(3, 1),
        "fromto": _f(6), "pos": _f(3), **_ORIENT, "group": _I, "rgba": _f(4),
        "material": _S, "user": _S,
    },
    "mesh": {
        "name": _S, "class": _S, "file": _S, "vertex": ("f", 0, None), "face": ("i", 0, None),
        "scale": _f(3), "refpos": _f(3), "refquat": _f(4), "normal": ("f", 0, None),
        "texcoord": _S,
        "smoothnormal": _B, "maxhullvert": _I, "content_type": _S,
        "inertia": _k("legacy", "convex", "exact", "shell"), "material": _S, "builtin": _S,
        "params": ("f", 0, None),
    },
    "equality": {
        "name": _S, "class": _S, "active": _B, "solref": _SOLREF, "solimp": _SOLIMP,
        "body1": _S, "body2": _S, "anchor": _f(3), "site1": _S, "site2": _S,
        "relpose": _f(7), "torquescale": _f(), "joint1": _S, "joint2": _S,
        "tendon1": _S, "tendon2": _S, "polycoef": _f(5, 1),
    },
    "pair": {
        "name": _S, "class": _S, "geom1": _S, "geom2": _S, "condim": _I,
        "friction": _f(5, 1), "solref": _SOLREF, "solreffriction": _SOLREF,
        "solimp": _SOLIMP, "margin": _f(), "gap": _f(), "adhesion": _f(),
    },
    "camera": {
        "name": _S, "class": _S, "mode": _k(*_CAM_MODES), "target": _S,
        "projection": _k("perspective", "orthographic"), "fovy": _f(), "ipd": _f(),
        "resolution": ("i", 2, 2), "output": _S, "sensorsize": _f(2), "focal": _f(2),
        "focalpixel": _f(2), "principal": _f(2), "principalpixel": _f(2), "pos": _f(3),
        **_ORIENT, "user": _S,
    },
    "material": {
        "name": _S, "class": _S, "texture": _S, "texrepeat": _f(2), "texuniform": _B,
        "emission": _f(), "specular": _f(), "shininess": _f(), "reflectance": _f(),
        "metallic": _f(), "roughness": _f(), "rgba": _f(4),
    },
    "tendon": {
        "name": _S, "class": _S, "group": _I, "limited": _L, "range": _f(2), "margin": _f(),
        "stiffness": _f(), "damping": _f(3, 1), "armature": _f(), "frictionloss": _f(),
        "springlength": _f(2, 1), "solreflimit": _SOLREF, "solimplimit": _SOLIMP,
        "solreffriction": _SOLREF, "solimpfriction": _SOLIMP, "width": _f(), "rgba": _f(4),
        "material": _S, "user": _S, "actuatorfrclimited": _L, "actuatorfrcrange": _f(2),
    },
    "actuator": {
        "name": _S, "class": _S, "group": _I, "ctrllimited": _L, "forcelimited": _L,
        "actlimited": _L, "ctrlrange": _f(2), "forcerange": _f(2), "actrange": _f(2),
        "lengthrange": _f(2), "gear": _f(6, 1), "cranklength": _f(), "user": _S,
        "joint": _S, "jointinparent": _S, "site": _S, "refsite": _S, "body": _S,
        "tendon": _S, "cranksite": _S, "slidersite": _S, "actdim": _I, "actearly": _B,
        "nsample": _I, "interp": _k("zoh", "linear", "cubic"), "delay": _f(), "armature": _f(),
        "damping": _f(3, 1),
        # general
        "dyntype": _k("none", "integrator", "filter", "filterexact", "pid", "dcmotor", "muscle",
                      "user"),
        "gaintype": _k("fixed", "affine", "muscle", "dcmotor", "pid", "so3", "user"),
        "biastype": _k("none", "affine", "muscle", "dcmotor", "so3", "user"),
        "input": _S, "velrange": _f(2), "ffrange": _f(2),
        "dynprm": _f(10, 1), "gainprm": _f(10, 1), "biasprm": _f(10, 1),
        # shortcuts (muscle's timeconst has two values: read by _muscle)
        "kp": _f(), "kv": _f(), "dampratio": _f(), "timeconst": _f(), "inheritrange": _f(),
        "bias": _f(3), "area": _f(), "diameter": _f(), "gain": _f(), "tausmooth": _f(),
        "range": _f(2), "force": _f(), "scale": _f(), "lmin": _f(), "lmax": _f(),
        "vmax": _f(), "fpmax": _f(), "fvmax": _f(),
        # pid
        "ki": _f(), "imax": _f(), "slewmax": _f(), "posrange": _f(2),
        # dcmotor (vectors MuJoCo accepts partially)
        "motorconst": _f(2, 1), "resistance": _f(), "nominal": _f(3, 1),
        "saturation": _f(3, 1), "inductance": _f(2, 1), "cogging": _f(3, 1),
        "controller": _f(6, 1), "thermal": _f(6, 1), "lugre": _f(5, 1),
    },
}

# Attributes each actuator element accepts (MuJoCo's schema), beyond the common ones.
_ACT_COMMON = {
    "name", "class", "group", "ctrllimited", "forcelimited", "ctrlrange", "forcerange",
    "lengthrange", "gear", "cranklength", "user", "joint", "jointinparent", "site", "refsite",
    "tendon", "cranksite", "slidersite", "nsample", "interp", "delay", "armature", "damping",
}
_ACT_ATTRS = {
    "general": _ACT_COMMON | {"body", "actlimited", "actrange", "actdim", "actearly", "dyntype",
                              "gaintype", "biastype", "dynprm", "gainprm", "biasprm", "input",
                              "velrange", "ffrange"},
    "motor": _ACT_COMMON,
    "position": _ACT_COMMON | {"kp", "kv", "dampratio", "timeconst", "inheritrange"},
    "velocity": _ACT_COMMON | {"kv"},
    "intvelocity": _ACT_COMMON | {"kp", "kv", "dampratio", "timeconst", "inheritrange",
                                  "actlimited", "actrange"},
    "damper": _ACT_COMMON | {"kv"},
    "cylinder": _ACT_COMMON | {"timeconst", "bias", "area", "diameter"},
    "muscle": _ACT_COMMON | {"timeconst", "tausmooth", "range", "force", "scale", "lmin", "lmax",
                             "vmax", "fpmax", "fvmax"},
    "pid": _ACT_COMMON | {"kp", "kv", "dampratio", "ki", "imax", "slewmax", "input", "posrange",
                          "velrange", "ffrange", "inheritrange"},
    # MuJoCo 4's orientation servo: no gear, ctrllimited or lengthrange (schema)
    "orientation": {"name", "class", "group", "nsample", "interp", "delay", "ctrlrange", "user",
                    "forcelimited", "forcerange", "joint", "site", "refsite", "kp", "kv",
                    "dampratio", "input"},
    "adhesion": (_ACT_COMMON - {"joint", "jointinparent", "site", "refsite", "tendon",
                                "cranksite", "slidersite", "cranklength"}) | {"body", "gain"},
    "dcmotor": (_ACT_COMMON - {"forcelimited", "forcerange"}) | {
        "motorconst", "resistance", "nominal", "saturation", "inductance", "cogging",
        "controller", "thermal", "lugre", "input"},
}
# a dcmotor's own attributes: read from the element, not kept in the class state
_DCMOTOR_ATTRS = ("motorconst", "resistance", "nominal", "saturation", "inductance", "cogging",
                  "controller", "thermal", "lugre")
_ACT_UNSUPPORTED = ("plugin",)
_MUSCLE_DEFAULTS = (0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2)  # range … fvmax

# MuJoCo's values when an attribute is absent (mjs_defaultJoint, mjs_defaultGeom, ...).
_BASE = {
    "joint": {
        "type": "hinge", "group": 0, "pos": (0.0, 0.0, 0.0), "axis": (0.0, 0.0, 1.0),
        "limited": "auto", "range": (0.0, 0.0), "ref": 0.0, "springref": 0.0,
        "stiffness": 0.0, "damping": (0.0, 0.0, 0.0), "armature": 0.0, "frictionloss": 0.0,
        "margin": 0.0,
        "solreflimit": DEFAULT_SOLREF, "solimplimit": DEFAULT_SOLIMP,
        "solreffriction": DEFAULT_SOLREF, "solimpfriction": DEFAULT_SOLIMP,
        "springdamper": (0.0, 0.0), "actuatorfrclimited": "auto",
        "actuatorfrcrange": (0.0, 0.0), "actuatorgravcomp": False,
    },
    "geom": {
        "type": "sphere", "size": (0.0, 0.0, 0.0), "fromto": None, "pos": (0.0, 0.0, 0.0),
        "mass": None, "density": 1000.0, "shellinertia": False,
        "friction": (1.0, 0.005, 0.0001), "contype": 1, "conaffinity": 1, "condim": 3,
        "priority": 0, "solmix": 1.0, "solref": DEFAULT_SOLREF, "solimp": DEFAULT_SOLIMP,
        "margin": 0.0, "gap": 0.0, "group": 0, "rgba": (0.5, 0.5, 0.5, 1.0), "mesh": "",
        "hfield": "", "fluidshape": "none", "fluidcoef": (0.5, 0.25, 1.5, 1.0, 1.0),
        "adhesion": 0.0, "surfacevel": (0.0,) * 6, "fitscale": 1.0,
    },
    "site": {
        "type": "sphere", "size": (0.005, 0.005, 0.005), "fromto": None,
        "pos": (0.0, 0.0, 0.0), "group": 0, "rgba": (0.5, 0.5, 0.5, 1.0),
    },
    "mesh": {
        "scale": (1.0, 1.0, 1.0), "refpos": (0.0, 0.0, 0.0), "refquat": (1.0, 0.0, 0.0, 0.0),
        "inertia": "legacy",
    },
    "equality": {
        "active": True, "solref": DEFAULT_SOLREF, "solimp": DEFAULT_SOLIMP,
        "anchor": (0.0, 0.0, 0.0), "relpose": None, "torquescale": 1.0,
        "polycoef": (0.0, 1.0, 0.0, 0.0, 0.0), "body2": "", "joint2": "", "tendon2": "",
    },
    "pair": {
        "condim": 3, "friction": (1.0, 1.0, 0.005, 0.0001, 0.0001), "solref": DEFAULT_SOLREF,
        "solreffriction": (0.0, 0.0), "solimp": DEFAULT_SOLIMP, "margin": 0.0, "gap": 0.0,
        "adhesion": 0.0,
    },
    "actuator": {
        "group": 0, "ctrllimited": "auto", "forcelimited": "auto", "actlimited": "auto",
        "ctrlrange": (0.0, 0.0), "forcerange": (0.0, 0.0), "actrange": (0.0, 0.0),
        "gear": (1.0, 0.0, 0.0, 0.0, 0.0, 0.0), "inheritrange": 0.0, "delay": 0.0,
        "nsample": 0, "interp": "zoh",
        "armature": 0.0, "damping": (0.0, 0.0, 0.0), "actearly": False, "actdim": -1,
        "lengthrange": (0.0, 0.0), "cranklength": 0.0,
        "gainprm": (1.0,) + (0.0,) * 9, "biasprm": (0.0,) * 10, "dynprm": (1.0,) + (0.0,) * 9,
        "gaintype": "fixed", "biastype": "none", "dyntype": "none", "_kind": "general",
        "input": "", "velrange": (0.0, 0.0), "ffrange": (0.0, 0.0),
    },
    "tendon": {
        "group": 0, "limited": "auto", "range": (0.0, 0.0), "margin": 0.0, "stiffness": 0.0,
        "damping": (0.0, 0.0, 0.0), "armature": 0.0, "frictionloss": 0.0,
        "springlength": (-1.0, -1.0),
        "solreflimit": DEFAULT_SOLREF, "solimplimit": DEFAULT_SOLIMP,
        "solreffriction": DEFAULT_SOLREF, "solimpfriction": DEFAULT_SOLIMP,
        "actuatorfrclimited": "auto", "actuatorfrcrange": (0.0, 0.0),
    },
    "camera": {"mode": "fixed", "target": "", "projection": "perspective", "fovy": 45.0,
               "ipd": 0.068, "resolution": (1, 1), "sensorsize": (0.0, 0.0),
               "focal": (0.0, 0.0), "focalpixel": (0.0, 0.0), "principal": (0.0, 0.0),
               "principalpixel": (0.0, 0.0), "pos": (0.0, 0.0, 0.0)},
    "material": {"rgba": (1.0, 1.0, 1.0, 1.0)},
}

# Elements that jointspace skips with a warning: they do not change the dynamics.
_SKIP_TOP = {"extension"}
# Elements read in silence, as MuJoCo's compiler reads them: they change no result jointspace
# computes (<statistic> sets the viewer's scale; MuJoCo 4 scales its solvers by trace(M), not
# by stat.meaninertia; <custom> holds user data for the application)
_SILENT_TOP = {"statistic": {"meaninertia", "meanmass", "meansize", "extent", "center"},
               "custom": set()}
_CUSTOM_CHILDREN = {"numeric": {"name", "size", "data"}, "text": {"name", "data"},
                    "tuple": {"name"}}
_TUPLE_ELEMENT = {"objtype", "objname", "prm"}
# <visual> children: rendering settings, read without a warning (map znear sets the focal
# length of cameras without intrinsics, as MuJoCo's compiler takes it)
_VISUAL_CHILDREN = {"global", "quality", "headlight", "map", "scale", "rgba"}
_LIGHT_ATTRS = {"name", "class", "mode", "target", "type", "directional", "castshadow",
                "active", "pos", "dir", "attenuation", "cutoff", "exponent", "ambient",
                "diffuse", "specular", "bulbradius", "intensity", "range", "texture"}
# sensor elements: the attribute naming the sensed object and that object's kind; frame,
# user and energy sensors name theirs with objtype/objname or not at all
_SENSOR_OBJECT = {
    **{k: ("site", "site") for k in ("touch", "accelerometer", "velocimeter", "gyro", "force",
                                     "torque", "magnetometer", "rangefinder",
                                     "camprojection")},
    **{k: ("joint", "joint") for k in ("jointpos", "jointvel", "jointactuatorfrc", "ballquat",
                                       "ballangvel", "jointlimitpos", "jointlimitvel",
                                       "jointlimitfrc")},
    **{k: ("tendon", "tendon") for k in ("tendonpos", "tendonvel", "tendonactuatorfrc",
                                         "tendonlimitpos", "tendonlimitvel",
                                         "tendonlimitfrc")},
    **{k: ("actuator", "actuator") for k in ("actuatorpos", "actuatorvel", "actuatorfrc")},
    **{k: ("body", "body") for k in ("subtreecom", "subtreelinvel", "subtreeangmom")},
    **{k: None for k in ("framepos", "framequat", "framexaxis", "frameyaxis", "framezaxis",
                         "framelinvel", "frameangvel", "framelinacc", "frameangacc",
                         "e_potential", "e_kinetic", "clock", "user", "insidesite",
                         "distance", "normal", "fromto", "contact", "tactile")},
}
# contact sensor: MuJoCo's data fields (bit order, sizes) and reduce keywords
_CONDATA = {"found": 1, "force": 3, "torque": 3, "dist": 1, "pos": 3, "normal": 3,
            "tangent": 3}
_RAYDATA = ("dist", "dir", "origin", "point", "normal", "depth")  # mjtRayDataField order
_CONREDUCE = ("none", "mindist", "maxforce", "netforce")
_SENSOR_REFUSED = {
    "plugin": "sensor plugins run MuJoCo engine plugins",
}
_SENSOR_ATTRS = {"name", "cutoff", "noise", "user", "nsample", "interp", "delay", "interval",
                 "site", "joint", "tendon", "actuator", "body", "objtype", "objname",
                 "reftype", "refname", "camera", "data", "geom1", "geom2", "body1", "body2",
                 "subtree1", "subtree2", "num", "reduce",
                 "dim", "datatype", "needstage", "geom", "mesh"}
# MuJoCo 4.0's <tactile> attributes (its schema has no noise, cutoff is read)
_TACTILE_ATTRS = {"name", "geom", "mesh", "cutoff", "user", "nsample", "interp", "delay",
                  "interval"}
_SENSOR_HISTORY_ATTRS = ("nsample", "interp", "delay", "interval")
_NSAMPLE_MAX = 1 << 24  # MuJoCo's bound: the cursor is stored as a (possibly float) mjtNum
_KEY_ATTRS = {"name": _S, "time": _f(), "qpos": _f(None, 0), "qvel": _f(None, 0),
              "act": _f(None, 0), "ctrl": _f(None, 0), "mpos": _f(None, 0),
              "mquat": _f(None, 0)}
# <size> attributes that set memory or capacity only (MuJoCo's arena, the stack, user
# arrays of elements): read and ignored, as they change no result jointspace computes
_SIZE_CAPACITY = {"memory", "njmax", "nconmax", "nstack", "nuser_body", "nuser_jnt",
                  "nuser_geom", "nuser_site", "nuser_cam", "nuser_tendon", "nuser_actuator",
                  "nuser_sensor"}
# textures and skins: pictures and skinned meshes for rendering, read in silence
_SILENT_ASSET = {"texture": {"name", "type", "colorspace", "content_type", "file", "gridsize",
                             "gridlayout", "fileright", "fileleft", "fileup", "filedown",
                             "filefront", "fileback", "builtin", "rgb1", "rgb2", "mark",
                             "markrgb", "random", "width", "height", "hflip", "vflip",
                             "nchannel"},
                 "skin": {"name", "file", "material", "rgba", "inflate", "vertex",
                          "texcoord", "face", "group"}}
_HFIELD_ATTRS = {"name", "file", "content_type", "size", "nrow", "ncol", "elevation"}
_ERROR_BODY = {
    "composite": "a composite object generates bodies, joints and tendons",
    "flexcomp": "a flexcomp generates deformable flex bodies",
    "plugin": "an engine plugin adds forces or geometry",
}
_DEFAULT_CHILDREN = {"mesh", "material", "joint", "geom", "site", "camera", "light", "pair",
                     "equality", "tendon", "general", "motor", "position", "velocity",
                     "intvelocity", "damper", "cylinder", "muscle", "adhesion", "dcmotor",
                     "pid", "orientation", "default", "flex"}

_COMPILER_ATTRS = {
    "angle", "eulerseq", "inertiafromgeom", "autolimits", "meshdir", "assetdir", "texturedir",
    "balanceinertia", "boundmass", "boundinertia", "settotalmass", "strippath", "coordinate",
    "fitaabb", "discardvisual", "usethread", "fusestatic", "inertiagrouprange",
    "saveinertial", "alignfree", "exactmeshinertia", "maxhullvert",
}
_OPTION_ATTRS = {
    "timestep", "apirate", "impratio", "tolerance", "ls_tolerance", "noslip_tolerance",
    "ccd_tolerance", "sleep_tolerance", "gravity", "wind", "magnetic", "density",
    "viscosity", "o_margin", "o_solref", "o_solimp", "o_friction", "integrator", "cone",
    "jacobian", "solver", "iterations", "ls_iterations", "noslip_iterations",
    "ccd_iterations", "sdf_iterations", "sdf_initpoints", "actuatorgroupdisable",
}
# <compiler><lengthrange>: the options of MuJoCo's actuator length-range simulation
_LENGTHRANGE = {"mode": _k("none", "muscle", "muscleuser", "all"), "useexisting": _B,
                "uselimit": _B, "accel": _f(), "maxforce": _f(), "timeconst": _f(),
                "timestep": _f(), "inttotal": _f(), "interval": _f(), "tolrange": _f()}
# compiler options MuJoCo applies body by body (an attached body keeps its file's)
_BODY_COMPILER = ("inertiafromgeom", "boundmass", "boundinertia", "balanceinertia",
                  "inertiagrouprange", "alignfree")
# the element lists of a BodySpec that a named <frame> fills (attach frame=)
_FRAME_LISTS = ("children", "joints", "geoms", "sites", "cameras")
_BODY_ATTRS = {"name", "childclass", "pos", "mocap", "gravcomp", "user", "sleep",
               *_ORIENT_KEYS}
_FRAME_ATTRS = {"name", "childclass", "pos", *_ORIENT_KEYS}
_INERTIAL_ATTRS = {"pos", "mass", "diaginertia", "fullinertia", *_ORIENT_KEYS}


# --------------------------------------------------------------------------------------------
# public API


def parse_mjcf(text_or_path, *, filename=None, assets=None) -> ModelSpec:
    """Parse an MJCF document into a `ModelSpec`.

    Args:
        text_or_path: the XML text (str or bytes) or the path of an MJCF file. A string that
            contains "<" is read as XML text, any other string as a path.
        filename: the name error messages use for XML text; included and mesh files are
            then found relative to its directory (default "<string>": relative to the
            working directory).
        assets: optional mapping from file name to contents (bytes or str), consulted for
            `<include>` and mesh files before the file system, as MuJoCo's `assets` argument.

    Returns:
        The model description, with frames resolved to pos/quat in radians.

    Raises:
        ModelError: malformed XML, unknown elements, bad attribute values, missing files, or
            features whose absence would silently change the physics. The message names the
            file, the line and the element.
    """
    if isinstance(text_or_path, os.PathLike) or (
            isinstance(text_or_path, str) and "<" not in text_or_path):
        path = os.fspath(text_or_path)
        if not os.path.isfile(path):
            raise ModelError(f"MJCF file {path!r} not found; check the path")
        with open(path, "rb") as fh:
            data = fh.read()
        name = filename or path
    else:
        data = text_or_path
        name = filename or "<string>"
    return _Loader(assets or {}).load(data, name)


def load_mjcf(path, *, assets=None):
    """Load and compile an MJCF file.

    Args:
        path: path of the MJCF file.
        assets: optional mapping from file name to contents, as in `parse_mjcf`.

    Returns:
        The compiled `Model`.
    """
    from jointspace.io.compile import compile_model

    return compile_model(parse_mjcf(path, assets=assets))


def load_mjcf_string(text, *, filename=None, assets=None):
    """Load and compile an MJCF document given as a string.

    Args:
        text: the XML text.
        filename: name used in messages and as the base of relative paths.
        assets: optional mapping from file name to contents, as in `parse_mjcf`.

    Returns:
        The compiled `Model`.
    """
    from jointspace.io.compile import compile_model

    return compile_model(parse_mjcf(text, filename=filename or "<string>", assets=assets))


# --------------------------------------------------------------------------------------------
# the loader


class _Class:
    """A default class: resolved attribute values per element kind."""

    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        if parent is None:
            self.attrs = {k: dict(v) for k, v in _BASE.items()}
            for k in self.attrs:
                self.attrs[k]["_orient"] = None
        else:
            self.attrs = {k: dict(v) for k, v in parent.attrs.items()}


class _Loader:
    """State of one parse: compiler settings, classes, warnings, the spec being built."""

    def __init__(self, assets):
        self.assets = assets
        self.degree = True
        self.eulerseq = "xyz"
        self.autolimits = True
        self.meshdir = None
        self.classes = {}
        self.skipped = {}
        self.size_nkey = 0  # <size nkey>: at least this many keyframes
        self.unknown_attrs = {}
        self.ignored = {}
        self.base_dir = "."
        self.spec = ModelSpec()
        self.models = {}  # <asset><model>: name -> (ModelSpec of the file, its node)
        self.model_frames = {}  # <asset><model>: name -> that file's named frames
        # <attach> without model: (names in the copy, prefix, where, replicate suffix)
        self.self_attached = []
        self._attach_seen = set()  # ids of the <attach> nodes read (a <replicate> rereads)
        # named <frame>s: name -> the body holding their elements, the pose of their parent
        # context relative to it, and the slices of its element lists they filled
        self.frames = {}
        self._open_frames = {}  # id(frame node) -> its record, until its children are read
        # non-tree elements of attached models: they follow this model's own, as in MuJoCo
        self.attached = {k: [] for k in ("tendons", "actuators", "sensors", "equalities",
                                          "pairs", "excludes", "keys")}
        self._inherit = []

    # ---- entry -------------------------------------------------------------------------

    def load(self, data, file):
        """Parse the document `data` named `file` and return the ModelSpec."""
        self.base_dir = os.path.dirname(os.path.abspath(file)) if file != "<string>" else (
            os.getcwd())
        root = _parse_xml(data, file)
        if root.tag != "mujoco":
            raise ModelError(f"{root.where()}: the root element of an MJCF document must be "
                             f"<mujoco>; is this a URDF file? (use load_urdf)")
        self._expand_includes(root, [os.path.abspath(file)])
        self._check_attrs(root, {"model"})
        spec = self.spec
        spec.source = root.where()
        if "model" in root.attrib:
            spec.name = root.attrib["model"]
        sections = {}
        for child in root.children:
            sections.setdefault(child.tag, []).append(child)
        known = {"compiler", "option", "default", "asset", "worldbody", "contact",
                 "equality", "actuator", "tendon", "deformable", "keyframe",
                 "size", "sensor", "visual"} | _SKIP_TOP | set(_SILENT_TOP)
        for child in root.children:
            if child.tag not in known:
                raise ModelError(f"{child.where()}: unknown MJCF element <{child.tag}> in "
                                 f"<mujoco>; check the spelling or remove it")
        for node in sections.get("compiler", []):
            self._compiler(node)
        for node in sections.get("option", []):
            self._option(node)
        self.classes["main"] = _Class("main")
        for node in sections.get("visual", []):
            self._visual(node)
        for node in sections.get("default", []):
            self._default(node, None)
        for node in sections.get("asset", []):
            self._asset(node)
        for node in sections.get("worldbody", []):
            self._check_attrs(node, set())
            if not spec.world.source:
                spec.world.source = node.where()
            self._body_children(node, spec.world, "main", None, is_world=True)
        for node in sections.get("contact", []):
            self._contact(node)
        for node in sections.get("equality", []):
            self._equality(node)
        for node in sections.get("actuator", []):
            self._actuator_section(node)
        for node in sections.get("tendon", []):
            self._tendon(node)
        for node in sections.get("deformable", []):
            self._deformable(node)
        for node in sections.get("size", []):
            self._size(node)
        for node in sections.get("sensor", []):
            self._sensor_section(node)
        for node in sections.get("keyframe", []):
            self._keyframe(node)
        for inside, prefix, where, suffix in self.self_attached:
            # this model's elements and the copies made so far (a copy of a copy: MuJoCo's)
            view = copy.copy(spec)
            for kind in ("tendons", "actuators", "sensors", "equalities", "pairs", "excludes"):
                setattr(view, kind, getattr(spec, kind) + self.attached[kind])
            self._attach_elements(view, inside, prefix, where, keys=False, suffix=suffix)
        for kind, items in self.attached.items():
            getattr(spec, kind).extend(items)
        spec.keys += [KeySpec(source=spec.source)
                      for _ in range(self.size_nkey - len(spec.keys))]
        for node in root.children:
            if node.tag in _SKIP_TOP:
                self._skip(node)
            elif node.tag in _SILENT_TOP:
                self._silent(node)
        self._check_references()
        self._emit_warnings()
        return spec

    # ---- include ----------------------------------------------------------------------

    def _expand_includes(self, node, chain):
        """Replace every <include file=...> below `node` by the included document's children.

        Depth first, in document order, with an explicit stack (no recursion, so that a
        deeply nested document loads): each entry is an element whose children are being
        expanded, the include chain above it, an iterator over its children and the
        expanded list; an included document's expanded children join its parent's list.
        """
        stack = [(node, chain, iter(node.children), [], False)]
        while stack:
            parent, chain, children, out, included = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                parent.children = out
                if included:
                    stack[-1][3].extend(out)
                continue
            if child.tag != "include":
                out.append(child)
                stack.append((child, chain, iter(child.children), [], False))
                continue
            self._check_attrs(child, {"file"})
            rel = child.attrib.get("file")
            if not rel:
                raise ModelError(f"{child.where()}: <include> needs a file attribute")
            data, path = self._read_include(child, rel)
            key = os.path.abspath(path)
            if key in chain:
                raise ModelError(f"{child.where()}: file {rel!r} includes itself (directly or "
                                 f"through other includes); remove the cycle")
            sub = _parse_xml(data, path)
            stack.append((sub, chain + [key], iter(sub.children), [], True))

    def _read_include(self, node, rel):
        """Contents and path of an included file, relative to the including file."""
        if rel in self.assets:
            return self.assets[rel], rel
        here = node.file
        base = os.path.dirname(here) if here != "<string>" else self.base_dir
        candidates = [rel] if os.path.isabs(rel) else [
            os.path.join(base, rel), os.path.join(self.base_dir, rel)]
        for path in candidates:
            if os.path.isfile(path):
                with open(path, "rb") as fh:
                    return fh.read(), os.path.normpath(path)
        raise ModelError(f"{node.where()}: included file {rel!r} not found (looked for "
                         f"{os.path.normpath(candidates[0])!r}); fix the path, which is "
                         f"relative to the including file")

    # ---- attribute helpers ------------------------------------------------------------

    def _check_attrs(self, node, allowed):
        """Record attributes of `node` that are not in `allowed` (warned about once)."""
        for key in node.attrib:
            if key not in allowed:
                self.unknown_attrs.setdefault(f"<{node.tag}> {key}", node.where())

    def _parse_value(self, node, key, fmt):
        """Parse attribute `key` of `node` with table format `fmt`."""
        text = node.attrib[key]
        kind, nmin, nmax = fmt
        if kind == "s":
            return text
        if kind in ("k", "b", "l"):
            choices = {"b": ("true", "false"), "l": ("true", "false", "auto")}.get(kind, nmin)
            value = text.strip()
            if value not in choices:
                raise ModelError(f"{node.where()}: invalid value {text!r} for attribute "
                                 f"{key!r}; use one of {', '.join(choices)}")
            if kind == "b":
                return value == "true"
            return value
        parts = text.split()
        n = len(parts)
        if n < nmin or (nmax is not None and n > nmax):
            if nmin == nmax:
                want = f"{nmin} number" + ("s" if nmin > 1 else "")
            elif nmax is None:
                want = f"at least {nmin} numbers"
            else:
                want = f"{nmin} to {nmax} numbers"
            raise ModelError(f"{node.where()}: attribute {key}={text!r} has {n} value"
                             f"{'s' if n != 1 else ''}; give {want}")
        pattern = _INTEGER if kind == "i" else _NUMBER
        for p in parts:
            if not pattern.match(p):
                what = "an integer" if kind == "i" else "a finite number"
                raise ModelError(f"{node.where()}: attribute {key}={text!r}: {p!r} is not "
                                 f"{what}; write plain decimal numbers separated by spaces")
        vals = tuple(int(p) for p in parts) if kind == "i" else tuple(float(p) for p in parts)
        if nmax == 1:
            return vals[0]
        return vals

    def _get(self, node, key, fmt, default=None):
        """Attribute `key` of `node` parsed with `fmt`, or `default` when absent."""
        if key not in node.attrib:
            return default
        return self._parse_value(node, key, fmt)

    def _apply(self, node, kind, vals, allowed=None):
        """Overlay the attributes of `node` on the resolved values `vals` (in place).

        Vectors that MuJoCo accepts partially keep their remaining entries from `vals`.
        Returns the set of attributes given on `node`.
        """
        table = _TABLES[kind]
        allowed = table if allowed is None else allowed
        given = set()
        orient = [k for k in _ORIENT_KEYS if k in node.attrib and k in table]
        if len(orient) > 1:
            raise ModelError(f"{node.where()}: multiple orientation specifiers "
                             f"({', '.join(orient)}); give only one")
        for key in node.attrib:
            if key not in allowed or key not in table:
                self.unknown_attrs.setdefault(f"<{node.tag}> {key}", node.where())
                continue
            if key == "class":
                continue
            fmt = table[key]
            value = self._parse_value(node, key, fmt)
            if key in _ORIENT:
                vals["_orient"] = (key, value)
            elif fmt[0] in ("f", "i") and fmt[1] < (fmt[2] or 0) and vals.get(key) is not None:
                old = list(vals[key])
                old[:len(value)] = value
                vals[key] = tuple(old)
            else:
                vals[key] = value
            given.add(key)
        return given

    def _class_of(self, node, inherited):
        """The default class named by `class` on `node`, else the inherited childclass."""
        name = node.attrib.get("class", inherited)
        if name not in self.classes:
            raise ModelError(f"{node.where()}: class {name!r} is not defined; add "
                             f"<default class='{name}'> or fix the name")
        return self.classes[name]

    def _orientation(self, node, orient, angle_units=True):
        """Quaternion of an orientation spec ("quat"/"euler"/..., values), MuJoCo's rules."""
        if orient is None:
            return _IDENTITY.copy()
        key, v = orient
        v = np.asarray(v, dtype=np.float64)
        to_rad = frames.deg2rad if (self.degree and angle_units) else float
        if key == "quat":
            if np.linalg.norm(v) < 1e-14:
                raise ModelError(f"{node.where()}: quat has zero length; give a unit "
                                 f"quaternion (w x y z)")
            return frames.quat_normalize(v)
        if key == "axisangle":
            if np.linalg.norm(v[:3]) < 1e-14:
                raise ModelError(f"{node.where()}: axisangle axis has zero length")
            return frames.axisangle_to_quat(v[:3], to_rad(v[3]))
        if key == "euler":
            return frames.euler_to_quat([to_rad(a) for a in v], self.eulerseq)
        if key == "xyaxes":
            x, y = v[:3], v[3:]
            if np.linalg.norm(x) < 1e-14:
                raise ModelError(f"{node.where()}: xyaxes x axis has zero length")
            xn = x / np.linalg.norm(x)
            if np.linalg.norm(y - xn * np.dot(xn, y)) < 1e-14:
                raise ModelError(f"{node.where()}: xyaxes y axis is parallel to the x axis")
            return frames.xyaxes_to_quat(v)
        if np.linalg.norm(v) < 1e-14:
            raise ModelError(f"{node.where()}: zaxis has zero length")
        return frames.zaxis_to_quat(v)

    def _pose(self, node):
        """Pos and quat of an element with no defaults (body, frame, inertial)."""
        orient = [k for k in _ORIENT_KEYS if k in node.attrib]
        if len(orient) > 1:
            raise ModelError(f"{node.where()}: multiple orientation specifiers "
                             f"({', '.join(orient)}); give only one")
        pos = np.array(self._get(node, "pos", _f(3), (0.0, 0.0, 0.0)), dtype=np.float64)
        o = (orient[0], self._parse_value(node, orient[0], _ORIENT[orient[0]])) if orient \
            else None
        return pos, self._orientation(node, o)

    def _skip(self, node):
        self.skipped.setdefault(node.tag, node.where())

    def _silent_asset(self, node):
        """Read a <texture> or <skin> in silence; a skin's bones name bodies (fusestatic)."""
        self._check_attrs(node, _SILENT_ASSET[node.tag])
        for bone in node.children:
            if node.tag == "skin" and bone.tag == "bone" and bone.attrib.get("body"):
                self.spec.body_refs.add(bone.attrib["body"])

    def _silent(self, node):
        """Read <statistic> or <custom> in silence: their attributes and children checked."""
        self._check_attrs(node, _SILENT_TOP[node.tag])
        if node.tag == "statistic":
            for child in node.children:
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in "
                                 f"<statistic>; remove it")
            return
        for child in node.children:
            if child.tag not in _CUSTOM_CHILDREN:
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in <custom>;"
                                 f" use <numeric>, <text> or <tuple>")
            self._check_attrs(child, _CUSTOM_CHILDREN[child.tag])
            for element in child.children:
                if child.tag != "tuple" or element.tag != "element":
                    raise ModelError(f"{element.where()}: unknown element <{element.tag}> in "
                                     f"<{child.tag}>; remove it")
                self._check_attrs(element, _TUPLE_ELEMENT)
                if element.attrib.get("objtype") in ("body", "xbody"):
                    self.spec.body_refs.add(element.attrib.get("objname", ""))

    @staticmethod
    def _damping(where, values):
        """damping = (b, p₀, p₁), MuJoCo 4's damping and its polynomial, each non-negative.

        The damper's force is −v (b + p₀ |v| + p₁ v²); a value given as one number is b.
        """
        for x in values:
            if x < 0:
                raise ModelError(f"{where}: damping={' '.join(repr(y) for y in values)} has a "
                                 f"negative value; the damping and its polynomial coefficients "
                                 f"must be >= 0")
        return tuple(float(x) for x in values)

    def _ignore_if(self, node, key, condition, why):
        """ModelError when an attribute that jointspace cannot honor is set."""
        if condition:
            raise ModelError(f"{node.where()}: attribute {key}={node.attrib.get(key, '')!r} "
                             f"is not supported by jointspace ({why}); remove it or use "
                             f"MuJoCo for this model")

    # ---- compiler and option ----------------------------------------------------------

    def _compiler(self, node):
        self._check_attrs(node, _COMPILER_ATTRS)
        spec = self.spec
        angle = self._get(node, "angle", _k("degree", "radian"))
        if angle is not None:
            self.degree = angle == "degree"
        seq = node.attrib.get("eulerseq")
        if seq is not None:
            if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
                raise ModelError(f"{node.where()}: eulerseq={seq!r} must be three letters "
                                 f"from x, y, z (intrinsic) or X, Y, Z (extrinsic)")
            self.eulerseq = seq
        ifg = self._get(node, "inertiafromgeom", _k("true", "false", "auto"))
        if ifg is not None:
            spec.inertiafromgeom = ifg
        al = self._get(node, "autolimits", _B)
        if al is not None:
            self.autolimits = al
        assetdir = node.attrib.get("assetdir")
        if assetdir is not None and self.meshdir is None:
            self.meshdir = assetdir
        if "meshdir" in node.attrib:
            self.meshdir = node.attrib["meshdir"]
        bi = self._get(node, "balanceinertia", _B)
        if bi is not None:
            spec.balanceinertia = bi
        spec.boundmass = self._get(node, "boundmass", _f(), spec.boundmass)
        spec.boundinertia = self._get(node, "boundinertia", _f(), spec.boundinertia)
        spec.settotalmass = self._get(node, "settotalmass", _f(), spec.settotalmass)
        coord = self._get(node, "coordinate", _k("local", "global"))
        self._ignore_if(node, "coordinate", coord == "global",
                        "global coordinates were removed from MuJoCo 2.3.3")
        spec.alignfree = self._get(node, "alignfree", _B, spec.alignfree)
        spec.fitaabb = self._get(node, "fitaabb", _B, spec.fitaabb)
        for key, use in (("exactmeshinertia", "inertia='exact' on the meshes (or in "
                          "<default><mesh>)"), ("maxhullvert", "maxhullvert on the meshes")):
            if key in node.attrib:
                raise ModelError(f"{node.where()}: attribute {key} was removed from MuJoCo's "
                                 f"<compiler> (MuJoCo 4.0 refuses it); use {use}")
        igr = self._get(node, "inertiagrouprange", ("i", 2, 2))
        if igr is not None:
            spec.inertiagrouprange = tuple(igr)
        spec.discardvisual = self._get(node, "discardvisual", _B, spec.discardvisual)
        spec.fusestatic = self._get(node, "fusestatic", _B, spec.fusestatic)
        for child in node.children:
            if child.tag != "lengthrange":
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in "
                                 f"<compiler>; remove it")
            self._check_attrs(child, set(_LENGTHRANGE))
            for key, fmt in _LENGTHRANGE.items():
                v = self._get(child, key, fmt)
                if v is not None:
                    spec.lengthrange[key] = v

    def _option(self, node):
        self._check_attrs(node, _OPTION_ATTRS)
        opt = self.spec.option
        for key, fmt in (("timestep", _f()), ("impratio", _f()), ("tolerance", _f()),
                         ("ls_tolerance", _f()), ("noslip_tolerance", _f()),
                         ("ccd_tolerance", _f()),
                         ("density", _f()), ("viscosity", _f()),
                         ("o_margin", _f())):
            v = self._get(node, key, fmt)
            if v is not None:
                setattr(opt, key, v)
        for key, n in (("gravity", 3), ("wind", 3), ("magnetic", 3), ("o_solref", 2),
                       ("o_solimp", 5), ("o_friction", 5)):
            v = self._get(node, key, _f(n))
            if v is not None:
                setattr(opt, key, tuple(v))
        for key in ("iterations", "ls_iterations", "noslip_iterations", "ccd_iterations"):
            v = self._get(node, key, _I)
            if v is not None:
                setattr(opt, key, v)
        for key, choices in (("integrator", ("Euler", "RK4", "implicit", "implicitfast")),
                             ("cone", ("pyramidal", "elliptic")),
                             ("solver", ("PGS", "CG", "Newton"))):
            v = self._get(node, key, _k(*choices))
            if v is not None:
                setattr(opt, key, v)
        if opt.timestep <= 0:
            raise ModelError(f"{node.where()}: timestep must be positive")
        for key in ("density", "viscosity", "ccd_tolerance", "ccd_iterations"):
            if getattr(opt, key) < 0:
                raise ModelError(f"{node.where()}: {key}={getattr(opt, key)} is negative; it "
                                 f"must be >= 0")
        groups = self._get(node, "actuatorgroupdisable", ("i", 0, None))
        if groups:
            if len(groups) > 31:
                raise ModelError(f"{node.where()}: actuatorgroupdisable has {len(groups)} "
                                 f"values; at most 31 (groups 0..30)")
            for g in groups:
                if not 0 <= g <= 30:
                    raise ModelError(f"{node.where()}: actuatorgroupdisable={g}: a disabled "
                                     f"actuator group must be in 0..30")
            opt.disable_actuator_groups = tuple(int(g) for g in groups)
        disable, enable = list(opt.disable_flags), list(opt.enable_flags)
        for child in node.children:
            if child.tag != "flag":
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in <option>;"
                                 f" only <flag> is allowed")
            for key in child.attrib:
                v = self._parse_value(child, key, _k("enable", "disable")) \
                    if key in DISABLE_FLAGS + ENABLE_FLAGS else None
                if v is None:
                    self.unknown_attrs.setdefault(f"<flag> {key}", child.where())
                elif v == "enable" and key in ENABLE_REFUSED:
                    raise ModelError(f"{child.where()}: <flag {key}={v!r}> is not supported by "
                                     f"jointspace ({ENABLE_REFUSED[key]}); remove it or use "
                                     f"MuJoCo for this model")
                elif key in DISABLE_FLAGS:
                    disable = [f for f in disable if f != key] + ([key] if v == "disable" else [])
                else:
                    enable = [f for f in enable if f != key] + ([key] if v == "enable" else [])
        opt.disable_flags, opt.enable_flags = tuple(disable), tuple(enable)

    # ---- defaults ---------------------------------------------------------------------

    def _default(self, node, parent):
        """Read a <default> and the ones nested in it, depth first (an explicit stack)."""
        stack = [(node, parent)]
        while stack:
            node, parent = stack.pop()
            cls, nested = self._default_class(node, parent)
            stack.extend((child, cls) for child in reversed(nested))

    def _default_class(self, node, parent):
        """Read one <default> into its class; return the class and the nested <default>s."""
        self._check_attrs(node, {"class"})
        name = node.attrib.get("class", "")
        if parent is None:
            if name not in ("", "main"):
                raise ModelError(f"{node.where()}: the top-level default class is 'main' and "
                                 f"cannot be renamed; nest <default class='{name}'> inside it")
            cls = self.classes["main"]
        else:
            if not name:
                raise ModelError(f"{node.where()}: nested <default> needs a class name")
            if name in self.classes:
                raise ModelError(f"{node.where()}: default class {name!r} is defined twice; "
                                 f"rename one")
            cls = _Class(name, parent)
            self.classes[name] = cls
        nested = []
        for child in node.children:
            tag = child.tag
            if tag not in _DEFAULT_CHILDREN:
                raise ModelError(f"{child.where()}: unknown element <{tag}> in <default>; "
                                 f"check the spelling")
            if "class" in child.attrib and tag != "default":
                raise ModelError(f"{child.where()}: elements inside <default> cannot name a "
                                 f"class; the enclosing <default> is their class")
            if tag == "mesh" and {"builtin", "params"} & set(child.attrib):
                raise ModelError(f"{child.where()}: builtin and params cannot be defaults, as "
                                 f"in MuJoCo; set them on the <mesh> in <asset>")
            if tag == "default":
                nested.append(child)
            elif tag in ("joint", "geom", "site", "mesh", "equality", "pair", "tendon", "camera",
                         "material"):
                self._apply(child, tag, cls.attrs[tag])
                cls.attrs[tag].pop("name", None)
            elif tag in _ACT_UNSUPPORTED:
                raise ModelError(f"{child.where()}: actuator type <{tag}> is not supported by "
                                 f"jointspace; remove this default or use MuJoCo")
            elif tag in _ACT_ATTRS:
                self._actuator_params(child, cls.attrs["actuator"], tag, cls)
                cls.attrs["actuator"].pop("name", None)
            elif tag == "light":
                self._check_attrs(child, _LIGHT_ATTRS)
            else:
                self._skip(child)
        return cls, nested

    # ---- assets -----------------------------------------------------------------------

    def _asset(self, node):
        self._check_attrs(node, set())
        for child in node.children:
            if child.tag == "mesh":
                self._mesh(child)
            elif child.tag == "material":
                self._material(child)
            elif child.tag == "model":
                self._model_asset(child)
            elif child.tag == "hfield":
                self._hfield(child)
            elif child.tag in _SILENT_ASSET:
                self._silent_asset(child)
            else:
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in <asset>;"
                                 f" check the spelling")

    def _material(self, node):
        """<material>: its name and color (MaterialSpec); a texture is not loaded."""
        vals = dict(self._class_of(node, "main").attrs["material"])
        self._apply(node, "material", vals)
        for child in node.children:
            if child.tag != "layer":
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in "
                                 f"<material>; only <layer> is allowed")
            self._check_attrs(child, {"role", "texture"})  # texture layers: read in silence
        name = vals.get("name", "")
        if not name:
            raise ModelError(f"{node.where()}: a material needs a name")
        if any(m.name == name for m in self.spec.materials):
            raise ModelError(f"{node.where()}: material {name!r} is defined twice; rename one")
        self.spec.materials.append(MaterialSpec(name=name, rgba=tuple(vals["rgba"]),
                                                source=node.where()))

    def _visual(self, node):
        """<visual>: rendering settings; <map znear> is kept (cameras' default focal length)."""
        self._check_attrs(node, set())
        for child in node.children:
            if child.tag not in _VISUAL_CHILDREN:
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in "
                                 f"<visual>; use one of {', '.join(sorted(_VISUAL_CHILDREN))}")
            if child.tag == "map" and "znear" in child.attrib:
                self.spec.znear = self._parse_value(child, "znear", _f())

    def _camera(self, node, childclass, xf):
        """<camera>: a CameraSpec; intrinsics are checked and completed by the compiler."""
        v = dict(self._class_of(node, childclass).attrs["camera"])
        self._apply(node, "camera", v)
        where = node.where()
        pos, quat = _compose(xf, np.array(v["pos"], dtype=np.float64),
                             self._orientation(node, v["_orient"]))
        return CameraSpec(
            name=v.get("name", ""), pos=pos, quat=quat, mode=v["mode"], target=v["target"],
            projection=v["projection"], fovy=v["fovy"], ipd=v["ipd"],
            resolution=tuple(v["resolution"]), sensorsize=tuple(v["sensorsize"]),
            focal=tuple(v["focal"]), focalpixel=tuple(v["focalpixel"]),
            principal=tuple(v["principal"]), principalpixel=tuple(v["principalpixel"]),
            source=where)

    def _mesh(self, node):
        cls = self._class_of(node, "main")
        vals = dict(cls.attrs["mesh"])
        self._apply(node, "mesh", vals)
        file = vals.get("file")
        name = vals.get("name") or (os.path.splitext(os.path.basename(file))[0] if file else "")
        if not name:
            raise ModelError(f"{node.where()}: a mesh needs a name or a file")
        builtin = vals.get("builtin")
        if builtin is not None:
            if "params" not in vals:
                raise ModelError(f"{node.where()}: builtin={builtin!r} needs params "
                                 f"({BUILTIN_MESHES.get(builtin, 'see MuJoCo')})")
            given = [k for k in ("file", "vertex", "face") if k in vals]
            if given:
                raise ModelError(f"{node.where()}: builtin={builtin!r} makes the mesh's "
                                 f"vertices and faces; drop {', '.join(given)}")
        maxhullvert = vals.get("maxhullvert", -1)
        if maxhullvert != -1 and not 4 <= maxhullvert < 2**31:
            raise ModelError(f"{node.where()}: maxhullvert={maxhullvert} must be -1 (no limit) "
                             f"or at least 4 (and a 32-bit integer), as in MuJoCo")
        if np.linalg.norm(vals["refquat"]) < 1e-14:
            raise ModelError(f"{node.where()}: refquat has zero length; give a unit "
                             f"quaternion (w x y z)")
        scale = np.asarray(vals["scale"], dtype=np.float64)
        mesh = MeshSpec(name=name, scale=tuple(float(x) for x in scale),
                        refpos=tuple(vals["refpos"]), refquat=tuple(vals["refquat"]),
                        inertia=vals["inertia"], maxhullvert=maxhullvert,
                        material=vals.get("material", ""), source=node.where())
        if builtin is not None:
            mesh.vertices, mesh.faces, forced, normal = make_builtin(
                builtin, vals["params"], node.where())
            if normal is not None:
                mesh.normal = normal
            mesh.inertia = forced or mesh.inertia
        elif "vertex" in vals:
            v = np.asarray(vals["vertex"], dtype=np.float64)
            if v.size == 0 or v.size % 3:
                raise ModelError(f"{node.where()}: vertex has {v.size} numbers; give x y z for "
                                 f"each vertex (a multiple of 3, at least 4 vertices)")
            mesh.vertices = v.reshape(-1, 3)
            if "face" in vals:
                f = np.asarray(vals["face"], dtype=np.int32)
                if f.size % 3 or (f.size and (f.min() < 0 or f.max() >= len(mesh.vertices))):
                    raise ModelError(f"{node.where()}: face must list 3 vertex indices per "
                                     f"triangle, each in [0, {len(mesh.vertices) - 1}]")
                mesh.faces = f.reshape(-1, 3)
            if len(mesh.vertices) < 4:
                raise ModelError(f"{node.where()}: a mesh needs at least 4 vertices")
        elif file:
            (mesh.file, mesh.vertices, mesh.faces,
             mesh.nfilenormal) = self._load_mesh_file(node, file)
        else:
            raise ModelError(f"{node.where()}: a mesh needs a file or vertex data")
        if np.any(scale == 0):
            raise ModelError(f"{node.where()}: scale={tuple(scale)} has a zero factor; "
                             f"scale factors must be nonzero")
        if "normal" in vals and builtin is None:
            n = np.asarray(vals["normal"], dtype=np.float64)
            if n.size % 3:
                raise ModelError(f"{node.where()}: normal has {n.size} numbers; give x y z "
                                 f"for each normal (a multiple of 3)")
            mesh.normal = n.reshape(-1, 3)
        self.spec.meshes.append(mesh)

    def _hfield(self, node):
        """<hfield>: size, and nrow/ncol with inline elevation (or none: zeros) or a file.

        Inline elevation rows are written top to bottom (the first row is y = +radius_y),
        so they are reversed here, as MuJoCo's reader does.
        """
        self._check_attrs(node, _HFIELD_ATTRS)
        where = node.where()
        file = self._get(node, "file", _S, "")
        name = self._get(node, "name", _S, "") or (
            os.path.splitext(os.path.basename(file))[0] if file else "")
        size = self._get(node, "size", _f(4))
        if size is None:
            raise ModelError(f"{where}: an hfield needs size='radius_x radius_y elevation_z "
                             f"base_z'")
        if any(s <= 0 for s in size):
            raise ModelError(f"{where}: hfield size={size} must be positive in all four "
                             f"values (radius_x radius_y elevation_z base_z)")
        nrow = self._get(node, "nrow", _I, 0)
        ncol = self._get(node, "ncol", _I, 0)
        if nrow < 0 or ncol < 0:
            raise ModelError(f"{where}: hfield nrow={nrow}, ncol={ncol} must not be negative")
        elevation = node.attrib.get("elevation")
        hf = HFieldSpec(name=name, size=tuple(size), nrow=nrow, ncol=ncol, source=where)
        if file:
            if nrow or ncol or elevation is not None:
                raise ModelError(f"{where}: the hfield is given both by file={file!r} and by "
                                 f"nrow/ncol/elevation; give one")
            hf.file, hf.data = self._load_hfield_file(node, file)
            hf.nrow, hf.ncol = hf.data.shape
        elif nrow > 0 and ncol > 0:
            if elevation is not None:
                vals = self._parse_value(node, "elevation", ("f", 0, None))
                vals = (vals,) if isinstance(vals, float) else vals
                if len(vals) != nrow * ncol:
                    raise ModelError(f"{where}: elevation has {len(vals)} values, but "
                                     f"nrow * ncol = {nrow} * {ncol} = {nrow * ncol}; give one "
                                     f"value per grid point, rows top to bottom")
                hf.data = np.asarray(vals, dtype=np.float32).reshape(nrow, ncol)[::-1].copy()
            else:
                hf.data = np.zeros((nrow, ncol), dtype=np.float32)
        else:
            raise ModelError(f"{where}: an hfield needs a file, or nrow and ncol (both "
                             f"positive) with optional elevation data")
        if not name:
            raise ModelError(f"{where}: an hfield needs a name or a file")
        if any(h.name == name for h in self.spec.hfields):
            raise ModelError(f"{where}: hfield {name!r} is defined twice; rename one")
        self.spec.hfields.append(hf)

    def _asset_file(self, file):
        """(path under meshdir, the bytes given in `assets` for it or None) of an asset file."""
        meshdir = self.meshdir or ""
        if os.path.isabs(file):
            path = file
        else:
            mdir = meshdir if os.path.isabs(meshdir) else os.path.join(self.base_dir, meshdir)
            path = os.path.normpath(os.path.join(mdir, file))
        for key in (file, os.path.join(meshdir, file), os.path.basename(file)):
            if key in self.assets:
                return path, self.assets[key]
        return path, None

    def _load_hfield_file(self, node, file):
        """(path, float32 elevations) of an hfield file, found as mesh files are (meshdir)."""
        from jointspace.io import hfield as H

        where = node.where()
        path, data = self._asset_file(file)
        if data is None:
            if not os.path.isfile(path):
                raise ModelError(f"{where}: hfield file {file!r} not found (looked for "
                                 f"{path!r}); fix the file name or the compiler meshdir")
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError as e:
                raise ModelError(f"{where}: cannot read hfield file {path!r}: {e}") from None
        data = data.encode() if isinstance(data, str) else bytes(data)
        ctype = self._get(node, "content_type", _S, "")
        if ctype and ctype not in ("image/png", "image/vnd.mujoco.hfield"):
            raise ModelError(f"{where}: hfield content_type={ctype!r} is not supported; use "
                             f"'image/png' or 'image/vnd.mujoco.hfield'")
        png = ctype == "image/png" or (not ctype and file.lower().endswith(".png"))
        if not data:
            raise ModelError(f"{where}: hfield file {path!r} is empty")
        try:
            return path, (H.decode_png(data, path) if png else H.read_custom(data, path))
        except ModelError as e:
            raise ModelError(f"{where}: {e}") from None

    def _load_mesh_file(self, node, file):
        """(path, vertices, faces, nfilenormal) of a mesh file resolved with meshdir.

        Read with `jointspace.io.mesh.read_mesh`; nfilenormal counts an OBJ file's normals.
        """
        path, data = self._asset_file(file)
        if data is None and not os.path.isfile(path):
            raise ModelError(f"{node.where()}: mesh file {file!r} not found (looked for "
                             f"{path!r}); fix the file name or the compiler meshdir")
        try:
            from jointspace.io.mesh import read_mesh
        except ImportError as e:
            raise ModelError(f"{node.where()}: loading mesh files needs jointspace.io.mesh "
                             f"({e}); give the mesh inline with vertex=") from None
        try:
            if data is None:
                verts, faces, nfilenormal = read_mesh(path)
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    tmp_path = os.path.join(tmp, os.path.basename(file))
                    with open(tmp_path, "wb") as fh:
                        fh.write(data.encode() if isinstance(data, str) else data)
                    verts, faces, nfilenormal = read_mesh(tmp_path)
        except ModelError as e:
            raise ModelError(f"{node.where()}: {e}") from None
        except (OSError, ValueError) as e:
            raise ModelError(f"{node.where()}: cannot read mesh file {path!r}: {e}") from None
        return (path, np.asarray(verts, dtype=np.float64), np.asarray(faces, dtype=np.int32),
                nfilenormal)

    # ---- bodies -----------------------------------------------------------------------

    def _body_children(self, node, body, childclass, xf, is_world=False):
        """Parse the children of <worldbody>, <body> or <frame> into `body`, and below.

        `xf` is the (pos, quat) of an enclosing <frame> relative to `body`, or None. Nested
        bodies and frames are read depth first in document order with an explicit stack (no
        recursion, so that a chain thousands of bodies deep loads): each entry is an
        element being read, with the body its children go to and an iterator over them.
        """
        stack = [(node, iter(node.children), body, childclass, xf, is_world, [False], "")]
        while stack:
            node, children, body, childclass, xf, is_world, seen_inertial, suffix = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                record = self._open_frames.pop(id(node), None)
                if record is not None:
                    record["end"] = {k: len(getattr(record["body"], k)) for k in _FRAME_LISTS}
                continue
            tag = child.tag
            if tag == "body":
                sub, cc = self._body(child, childclass, xf)
                _add_suffix(sub, suffix)
                body.children.append(sub)
                stack.append((child, iter(child.children), sub, cc, None, False, [False],
                              suffix))
            elif tag == "frame":
                cc, fxf = self._frame(child, childclass, xf)
                name = child.attrib.get("name", "")
                if name and name + suffix not in self.frames:
                    record = {"body": body, "parent_xf": xf, "where": child.where(),
                              "start": {k: len(getattr(body, k)) for k in _FRAME_LISTS}}
                    self.frames[name + suffix] = self._open_frames[id(child)] = record
                stack.append((child, iter(child.children), body, cc, fxf, is_world, [False],
                              suffix))
            elif tag == "attach":
                self._attach(child, body, xf, suffix)
            elif tag == "replicate":
                # copies pushed last first: the stack reads copy 0 first, as MuJoCo attaches
                for cc, rxf, rsuffix in reversed(self._replicate(child, childclass, xf)):
                    stack.append((child, iter(child.children), body, cc, rxf, is_world,
                                  [True], rsuffix + suffix))
            elif tag == "geom":
                body.geoms.append(_add_suffix(self._geom(child, childclass, xf), suffix))
            elif tag == "site":
                body.sites.append(_add_suffix(self._site(child, childclass, xf), suffix))
            elif tag in ("joint", "freejoint"):
                if is_world:
                    raise ModelError(f"{child.where()}: the world body cannot have joints; put "
                                     f"the joint inside a <body>")
                body.joints.append(_add_suffix(self._joint(child, childclass, xf), suffix))
            elif tag == "inertial" and node.tag == "body":
                if seen_inertial[0]:
                    raise ModelError(f"{child.where()}: a body has at most one <inertial>")
                seen_inertial[0] = True
                inertial = self._inertial(child)
                if self.spec.inertiafromgeom != "true":
                    body.inertial = inertial
            elif tag == "camera":
                body.cameras.append(_add_suffix(self._camera(child, childclass, xf), suffix))
            elif tag == "light":
                self._check_attrs(child, _LIGHT_ATTRS)  # lighting: read, nothing to keep
                if child.attrib.get("target"):  # a named body stays (fusestatic)
                    self.spec.body_refs.add(child.attrib["target"])
            elif tag in _ERROR_BODY:
                raise ModelError(f"{child.where()}: <{tag}> is not supported by jointspace "
                                 f"({_ERROR_BODY[tag]}); expand it into plain bodies or use "
                                 f"MuJoCo for this model")
            else:
                raise ModelError(f"{child.where()}: unknown element <{tag}> in "
                                 f"<{node.tag}>; check the spelling")

    def _body(self, node, childclass, xf):
        """The BodySpec of a <body> (without its contents) and its children's class."""
        self._check_attrs(node, _BODY_ATTRS)
        cc = node.attrib.get("childclass", childclass)
        if cc not in self.classes:
            raise ModelError(f"{node.where()}: childclass {cc!r} is not defined; add "
                             f"<default class='{cc}'> or fix the name")
        pos, quat = self._pose(node)
        pos, quat = _compose(xf, pos, quat)
        gravcomp = self._get(node, "gravcomp", _f(), 0.0)
        body = BodySpec(name=node.attrib.get("name", ""), pos=pos, quat=quat,
                        mocap=bool(self._get(node, "mocap", _B, False)), gravcomp=gravcomp,
                        source=node.where())
        return body, cc

    def _frame(self, node, childclass, xf):
        """The class and the (pos, quat) relative to the body of a <frame>'s children."""
        self._check_attrs(node, _FRAME_ATTRS)
        cc = node.attrib.get("childclass", childclass)
        if cc not in self.classes:
            raise ModelError(f"{node.where()}: childclass {cc!r} is not defined; add "
                             f"<default class='{cc}'> or fix the name")
        pos, quat = self._pose(node)
        return cc, _compose(xf, pos, quat)

    # ---- model composition: <asset><model> and <attach> ----------------------------------

    def _model_asset(self, node):
        """<model name file>: parse another MJCF file whose bodies <attach> can insert."""
        self._check_attrs(node, {"name", "file", "content_type"})
        rel = node.attrib.get("file")
        if not rel:
            raise ModelError(f"{node.where()}: <model> needs a file attribute naming an MJCF "
                             f"file")
        data, path = self._read_include(node, rel)
        loader = _Loader(self.assets)
        child = loader.load(data, path)
        name = node.attrib.get("name") or child.name
        if name in self.models:
            raise ModelError(f"{node.where()}: model {name!r} is defined twice; rename one")
        self.models[name] = (child, node)
        self.model_frames[name] = loader.frames

    def _attach(self, node, body, xf, suffix=""):
        """<attach model body prefix>: a copy of a body subtree of another model, inserted here.

        As MuJoCo's attach (mjs_attach, MuJoCo >= 3.2): every name in the copy gets `prefix`
        (bodies, joints, geoms, sites, cameras, the model's meshes and materials, which are
        all copied); the model's tendons, actuators, sensors, equality constraints, contact
        pairs and exclusions that refer only to elements of the copy come with it, renamed;
        its keyframes become keyframes of this model that set the copy's joints and
        actuators (the rest at qpos0), named prefix + name (an unnamed one gets the prefix).
        Without `body` the contents of the model's worldbody are inserted; with `frame` the
        contents of one of its named frames, posed by the frame's own pos and orientation
        (the frames around it do not count, as in MuJoCo); the frame's joints join the body
        holding the <attach>, after its joints read so far. The attached elements follow
        this model's own in their lists, as in MuJoCo. Inside a <replicate>, each copy's names
        end with the copy's `suffix` (prefix + name + suffix); the meshes, materials and
        keyframes come once, with the first copy, and the keyframes set that copy (MuJoCo
        4.0's).
        """
        self._check_attrs(node, {"model", "body", "frame", "prefix"})
        where = node.where()
        if "frame" in node.attrib and "body" in node.attrib:
            raise ModelError(f"{where}: <attach> takes body= or frame=, not both")
        if "prefix" not in node.attrib:
            raise ModelError(f"{where}: <attach> needs a prefix attribute (it may be empty)")
        prefix = node.attrib["prefix"]
        itself = "model" not in node.attrib
        if itself:  # self-attach: a copy of a body or frame of this model as read so far
            if "body" not in node.attrib and "frame" not in node.attrib:
                raise ModelError(f"{where}: <attach> without model= copies a body or frame of "
                                 f"this model: give body= or frame=")
            name, child, own_options = None, self.spec, None
        else:
            name = node.attrib["model"]
            if name not in self.models:
                known = ", ".join(sorted(self.models)) or "none"
                raise ModelError(f"{where}: model {name!r} is not declared (models: {known}); "
                                 f"add <model name='{name}' file='...'/> to <asset>")
            child = self.models[name][0]
            own_options = self._check_attach_compiler(node, child)
        what = "this model" if itself else f"model {name!r}"
        copies = {}  # deepcopy memo: id of an element of `child` -> its copy here
        bname = node.attrib.get("body")
        if bname is not None:
            found = next((b for b in _walk(child.world) if b is not child.world
                          and b.name == bname), None)
            if found is None:
                raise ModelError(f"{where}: {what} has no body {bname!r}" + (
                    " above this <attach>" if itself else "") + "; name one of its bodies")
            top = copy.deepcopy(found, copies)
            roots, extras = [top], None
        elif "frame" in node.attrib:
            roots, extras = self._frame_contents(node, name, copies)
        else:
            world = copy.deepcopy(child.world, copies)
            roots, extras = world.children, world
        inside = {k: set() for k in ("body", "joint", "geom", "site", "camera")}
        for root in roots:
            for b in _walk(root):
                inside["body"].add(b.name)
                for kind, items in (("joint", b.joints), ("geom", b.geoms),
                                    ("site", b.sites), ("camera", b.cameras)):
                    inside[kind].update(e.name for e in items)
        if extras is not None:
            for kind, items in (("joint", extras.joints), ("geom", extras.geoms),
                                ("site", extras.sites), ("camera", extras.cameras)):
                inside[kind].update(e.name for e in items)
        for v in inside.values():
            v.discard("")

        first = id(node) not in self._attach_seen
        self._attach_seen.add(id(node))

        def rename(e, suffix=suffix):
            if e.name:
                e.name = prefix + e.name + suffix
            return e

        def reelement(e):
            rename(e)
            for g in getattr(e, "geoms", ()) if not itself else ():  # copied assets renamed
                for key in ("mesh", "material"):
                    if getattr(g, key):
                        setattr(g, key, prefix + getattr(g, key))
            for items in (getattr(e, "joints", ()), getattr(e, "geoms", ()),
                          getattr(e, "sites", ()), getattr(e, "cameras", ())):
                for x in items:
                    rename(x)
                    if getattr(x, "target", ""):
                        x.target = prefix + x.target + suffix

        for root in roots:
            for b in _walk(root):
                reelement(b)
                if own_options and b.compiler is None:
                    b.compiler = dict(own_options)
            root.pos, root.quat = _compose(xf, np.asarray(root.pos, dtype=np.float64),
                                           np.asarray(root.quat, dtype=np.float64))
            body.children.append(root)
        if extras is not None:
            if "frame" not in node.attrib:  # the worldbody's contents: it has no joints
                extras.joints = []
            elif extras.joints and body is self.spec.world:
                raise ModelError(f"{where}: frame {node.attrib['frame']!r} holds joint "
                                 f"{extras.joints[0].name or '(unnamed)'!r}, and the world "
                                 f"body cannot have joints; attach it inside a <body>")
            extras.children, extras.name = [], ""
            reelement(extras)
            for j in extras.joints:
                _compose_joint(xf, j)
                body.joints.append(j)
            for items, dest in ((extras.geoms, body.geoms), (extras.sites, body.sites),
                                (extras.cameras, body.cameras)):
                for x in items:
                    x.pos, x.quat = _compose(xf, np.asarray(x.pos, dtype=np.float64),
                                             np.asarray(x.quat, dtype=np.float64))
                    dest.append(x)
        if itself:  # the elements naming the copy are read below: copied at the end
            self.self_attached.append((inside, prefix, where, suffix))
            return
        spec = self.spec
        spec.body_refs |= {prefix + b + suffix for b in child.body_refs}
        if first:
            for m in child.meshes:
                m = rename(copy.deepcopy(m), "")
                if m.material:
                    m.material = prefix + m.material
                spec.meshes.append(m)
            for m in child.materials:
                spec.materials.append(rename(copy.deepcopy(m), ""))
        self._attach_elements(child, inside, prefix, where, keys=first, suffix=suffix,
                              copies=copies)

    def _frame_contents(self, node, model, copies):
        """Copies of the bodies and of the joints, geoms, sites, cameras (in a BodySpec) of a frame.

        Their poses become relative to the frame's parent context (pose ← xf⁻¹ pose, xf that
        context relative to the holding body), so that the frame's own pose stays on them.
        """
        fname = node.attrib["frame"]
        record = (self.frames if model is None else self.model_frames[model]).get(fname)
        if record is None or "end" not in record:
            what = "this model" if model is None else f"model {model!r}"
            raise ModelError(f"{node.where()}: {what} has no frame {fname!r}" + (
                " above this <attach>" if model is None else "") + "; name one of its "
                "<frame name=...> elements")
        body, (start, end) = record["body"], (record["start"], record["end"])
        xf = record["parent_xf"]
        inv = None
        if xf is not None:
            q = np.asarray(xf[1], dtype=np.float64) * [1.0, -1.0, -1.0, -1.0]
            inv = (-frames.rotate(q, np.asarray(xf[0], dtype=np.float64)), q)
        out = {k: copy.deepcopy(getattr(body, k)[start[k]:end[k]], copies)
               for k in _FRAME_LISTS}
        for k in ("children", "geoms", "sites", "cameras"):
            for e in out[k]:
                e.pos, e.quat = _compose(inv, np.asarray(e.pos, dtype=np.float64),
                                         np.asarray(e.quat, dtype=np.float64))
        for j in out["joints"]:
            _compose_joint(inv, j)
        extras = BodySpec(name="")
        extras.geoms, extras.sites, extras.cameras = out["geoms"], out["sites"], out["cameras"]
        extras.joints = out["joints"]
        return out["children"], extras

    def _check_attach_compiler(self, node, child):
        """The attached model's per-body mass options where they differ from this model's.

        MuJoCo compiles each body with the options of the model it came from (inertia from
        geoms, bounds, balancing, the inertia group range, free-body alignment); the options
        of the whole model (settotalmass, discardvisual, fitaabb) are this model's, the
        attached model's are ignored. Returns None when every per-body option is this
        model's.
        """
        own = {key: getattr(child, key) for key in _BODY_COMPILER
               if getattr(child, key) != getattr(self.spec, key)}
        return own or None

    def _attach_elements(self, child, inside, prefix, where, keys=True, suffix="",
                         copies=None):
        """Copy the attached model's non-tree elements that refer only to the copy.

        A self-attach (`keys` False) copies no keyframe, as MuJoCo's. Names are prefix + name
        + suffix, the suffix of the <replicate> copy holding the <attach> (empty outside one).
        `copies` is the deepcopy memo of the copy (id of an original element: its copy).
        """
        spec = self.attached
        tendons = set()
        for t in child.tendons:
            refs = [("joint", j[0]) for j in t.joints] + [
                ("site" if p[0] == "site" else "geom", p[1]) for p in t.path
                if p[0] in ("site", "geom")]
            if all(n in inside[k] for k, n in refs):
                t = copy.deepcopy(t)
                t.joints = [(prefix + j[0] + suffix, *j[1:]) for j in t.joints]
                t.path = [(p[0], prefix + p[1] + suffix if p[1] else p[1], *p[2:]) for p in t.path]
                tendons.add(t.name)
                spec["tendons"].append(_prefixed(t, prefix, suffix))
        inside = dict(inside, tendon=tendons)
        actuators = set()
        for a in child.actuators:
            refs = {"joint": a.joint, "jointinparent": a.jointinparent, "site": a.site,
                    "refsite": a.refsite, "cranksite": a.cranksite,
                    "slidersite": a.slidersite, "body": a.body, "tendon": a.tendon}
            kinds = {"jointinparent": "joint", "refsite": "site", "cranksite": "site",
                     "slidersite": "site"}
            if all(n in inside[kinds.get(k, k)] for k, n in refs.items() if n):
                a = copy.deepcopy(a, copies)
                for k, n in refs.items():
                    if n:
                        setattr(a, k, prefix + n + suffix)
                actuators.add(a.name)
                spec["actuators"].append(_prefixed(a, prefix, suffix))
        inside = dict(inside, actuator=actuators)
        kinds = {"xbody": "body", "body": "body", "subtree": "body", "joint": "joint",
                 "geom": "geom",
                 "site": "site", "camera": "camera", "tendon": "tendon",
                 "actuator": "actuator"}
        for sen in child.sensors:
            refs = [(sen.objtype, sen.objname), (sen.reftype, sen.refname)]
            if all(not n or n in inside.get(kinds.get(t, ""), ()) for t, n in refs):
                sen = copy.deepcopy(sen)
                sen.objname = prefix + sen.objname + suffix if sen.objname else ""
                sen.refname = prefix + sen.refname + suffix if sen.refname else ""
                spec["sensors"].append(_prefixed(sen, prefix, suffix))
        for e in child.equalities:
            kind = {"joint": "joint", "tendon": "tendon"}.get(e.type, e.objtype)
            if all(not n or n in inside[kind] for n in (e.obj1, e.obj2)):
                e = copy.deepcopy(e)
                e.obj1 = prefix + e.obj1 + suffix
                e.obj2 = prefix + e.obj2 + suffix if e.obj2 else ""
                spec["equalities"].append(_prefixed(e, prefix, suffix))
        for p in child.pairs:
            if p.geom1 in inside["geom"] and p.geom2 in inside["geom"]:
                p = copy.deepcopy(p)
                p.geom1, p.geom2 = prefix + p.geom1 + suffix, prefix + p.geom2 + suffix
                spec["pairs"].append(_prefixed(p, prefix, suffix))
        for x in child.excludes:
            if x.body1 in inside["body"] and x.body2 in inside["body"]:
                x = copy.deepcopy(x)
                x.body1, x.body2 = prefix + x.body1 + suffix, prefix + x.body2 + suffix
                spec["excludes"].append(x)
        if keys:
            self._attach_keys(child, prefix, copies)

    def _attach_keys(self, child, prefix, copies):
        """Keyframes of the attached model, as values of the copy's elements.

        qpos and qvel by joint, ctrl and act by actuator (act over the file's actuators with
        activations), mpos and mquat by mocap body, each set on the element's copy (found in
        `copies`, the copy's deepcopy memo, named or not); a short vector sets what it covers.
        """
        if not child.keys:
            return
        joints = []  # (joint, nq, nv) in the attached model's qpos order
        mocap = []  # the attached model's mocap bodies, in its order
        for b in _walk(child.world):
            for j in b.joints:
                joints.append((j, *{"free": (7, 6), "ball": (4, 3)}.get(j.type, (1, 1))))
            if b.mocap:
                mocap.append(b)
        active = [a for a in child.actuators if a.dyntype != "none"]  # in act's order
        for key in child.keys:
            by_element = {k: [] for k in ("qpos", "qvel", "ctrl", "act", "mpos", "mquat")}
            for field, col in (("qpos", 1), ("qvel", 2)):
                v = getattr(key, field)
                adr = 0
                for row in joints:
                    n = row[col]
                    if v is not None and adr + n <= len(v) and id(row[0]) in copies:
                        by_element[field].append((copies[id(row[0])], v[adr:adr + n]))
                    adr += n
            for field, elements, n in (("ctrl", child.actuators, 1), ("act", active, 1),
                                       ("mpos", mocap, 3), ("mquat", mocap, 4)):
                v = getattr(key, field)
                for i, e in enumerate(elements if v is not None else ()):
                    if n * i + n <= len(v) and id(e) in copies:
                        by_element[field].append((copies[id(e)], v[n * i:n * i + n]))
            self.attached["keys"].append(KeySpec(name=prefix + key.name, time=key.time,
                                                 by_element=by_element, source=key.source))

    def _replicate(self, node, childclass, xf):
        """The copies of a <replicate>: (childclass, frame, name suffix) of each, in order.

        Copy i sits at the frame (p_i, euler i·euler) relative to the enclosing frame, with
        p_0 = 0 and p_(i+1) = p_i + R(q_i) offset, q_i the rotation accumulated over i steps
        (MuJoCo's xml reader); its elements' names get sep followed by i, zero-padded to the
        digits of count.
        """
        self._check_attrs(node, {"count", "offset", "euler", "sep", "childclass"})
        if "count" not in node.attrib:
            raise ModelError(f"{node.where()}: <replicate> needs a count attribute")
        count = self._get(node, "count", _I)
        if count < 1:
            raise ModelError(f"{node.where()}: count={count}: a <replicate> needs at least "
                             f"one copy (MuJoCo silently drops its contents); give count >= 1 "
                             f"or remove the element")
        cc = node.attrib.get("childclass", childclass)
        if cc not in self.classes:
            raise ModelError(f"{node.where()}: childclass {cc!r} is not defined; add "
                             f"<default class='{cc}'> or fix the name")
        offset = np.array(self._get(node, "offset", _f(3), (0.0, 0.0, 0.0)), dtype=np.float64)
        euler = np.array(self._get(node, "euler", _f(3), (0.0, 0.0, 0.0)), dtype=np.float64)
        sep = node.attrib.get("sep", "")
        step = self._orientation(node, ("euler", euler))
        digits = len(str(count))
        pos, acc = np.zeros(3), _IDENTITY.copy()
        copies = []
        for i in range(count):
            quat = self._orientation(node, ("euler", i * euler))
            copies.append((cc, _compose(xf, pos.copy(), quat), f"{sep}{i:0{digits}d}"))
            pos = pos + frames.rotate(acc, offset)
            acc = frames.quat_mul(acc, step)
        return copies

    def _inertial(self, node):
        self._check_attrs(node, _INERTIAL_ATTRS)
        for key in ("pos", "mass"):
            if key not in node.attrib:
                raise ModelError(f"{node.where()}: <inertial> needs a {key} attribute")
        pos, quat = self._pose(node)
        mass = self._get(node, "mass", _f())
        if mass < 0:
            raise ModelError(f"{node.where()}: mass={mass} is negative; masses must be >= 0")
        diag = self._get(node, "diaginertia", _f(3))
        full = self._get(node, "fullinertia", _f(6))
        if diag is not None and full is not None:
            raise ModelError(f"{node.where()}: give diaginertia or fullinertia, not both")
        if full is not None and any(k in node.attrib for k in _ORIENT_KEYS):
            raise ModelError(f"{node.where()}: fullinertia is given in the body frame and "
                             f"cannot be combined with an orientation (quat, euler, ...); "
                             f"remove the orientation or use diaginertia")
        if diag is not None and min(diag) < 0:
            raise ModelError(f"{node.where()}: diaginertia={diag} has a negative moment; "
                             f"principal moments must be >= 0")
        if full is not None and min(full[:3]) < 0:
            raise ModelError(f"{node.where()}: fullinertia={full} has a negative diagonal "
                             f"entry; Ixx, Iyy, Izz must be >= 0")
        if diag is None and full is None:
            diag = (0.0, 0.0, 0.0)
        return InertialSpec(
            mass=mass, pos=pos, quat=quat,
            diaginertia=None if diag is None else np.array(diag, dtype=np.float64),
            fullinertia=None if full is None else np.array(full, dtype=np.float64),
            source=node.where())

    def _joint(self, node, childclass, xf):
        if node.tag == "freejoint":
            self._check_attrs(node, {"name", "group", "align"})
            return JointSpec(type="free", name=node.attrib.get("name", ""),
                             group=self._get(node, "group", _I, 0),
                             align=self._get(node, "align", _ALIGN, "auto"),
                             source=node.where())
        cls = self._class_of(node, childclass)
        v = dict(cls.attrs["joint"])
        self._apply(node, "joint", v)
        jtype = v["type"]
        where = node.where()
        sd = tuple(v["springdamper"])
        if any(sd) and not (sd[0] > 0 and sd[1] > 0):
            raise ModelError(f"{where}: springdamper={sd}: when given, both values "
                             f"(timeconst, dampratio) must be positive")
        if jtype == "free":
            if v["limited"] == "true":
                raise ModelError(f"{where}: a free joint cannot be limited; remove limited")
            limited = False
        else:
            limited = self._limited(node, v["limited"], v["range"], "", "joint")
        if limited and jtype != "ball" and v["range"][0] >= v["range"][1]:
            raise ModelError(f"{where}: range={v['range']}: range[0] must be smaller than "
                             f"range[1]")
        if limited and jtype == "ball" and v["range"][0] != 0:
            raise ModelError(f"{where}: a ball joint's range is '0 max-angle'; range[0] must "
                             f"be 0")
        frc_limited = self._limited(node, v["actuatorfrclimited"], v["actuatorfrcrange"],
                                    "actuatorfrc", "joint")
        frc_range = tuple(v["actuatorfrcrange"])
        if frc_limited and frc_range[0] > frc_range[1]:
            raise ModelError(f"{where}: actuatorfrcrange={frc_range}: the lower bound exceeds "
                             f"the upper")
        for key in ("armature", "stiffness", "frictionloss"):
            if v[key] < 0:
                raise ModelError(f"{where}: {key}={v[key]} is negative; it must be >= 0")
        damping = self._damping(where, v["damping"])
        angular = self.degree and jtype == "hinge"
        rng = tuple(v["range"])
        if limited and self.degree and jtype in ("hinge", "ball"):
            rng = tuple(math.radians(r) for r in rng)
        ref = math.radians(v["ref"]) if angular else v["ref"]
        springref = math.radians(v["springref"]) if angular else v["springref"]
        pos = np.array(v["pos"], dtype=np.float64)
        axis = np.array(v["axis"], dtype=np.float64)
        if jtype in ("free", "ball"):
            axis = np.array([0.0, 0.0, 1.0])
        axis, norm = frames.normvec(axis)
        if norm < 1e-14:
            raise ModelError(f"{where}: axis has zero length; give a nonzero direction")
        if xf is not None and jtype != "free":
            pos = xf[0] + frames.rotate(xf[1], pos)
            if jtype != "ball":
                axis = frames.rotate(xf[1], axis)
        if jtype == "free":
            pos = np.zeros(3)
        return JointSpec(
            type=jtype, name=v.get("name", ""), pos=pos, axis=axis, limited=limited,
            range=rng, ref=ref, springref=springref, stiffness=v["stiffness"],
            damping=damping[0], dampingpoly=damping[1:], armature=v["armature"],
            frictionloss=v["frictionloss"], margin=v["margin"],
            solref_limit=tuple(v["solreflimit"]),
            solimp_limit=tuple(v["solimplimit"]), solref_friction=tuple(v["solreffriction"]),
            solimp_friction=tuple(v["solimpfriction"]), springdamper=sd,
            actfrclimited=frc_limited, actfrcrange=frc_range,
            actgravcomp=bool(v["actuatorgravcomp"]), group=v["group"], source=where)

    def _limited(self, node, flag, rng, prefix, what):
        """Resolve a true/false/auto limit flag with MuJoCo's autolimits rule."""
        if flag == "true":
            return True
        if flag == "false":
            return False
        has_range = not (rng[0] == 0 and rng[1] == 0)
        if has_range and not self.autolimits:
            raise ModelError(f"{node.where()}: {what} has {prefix}range but not "
                             f"{prefix}limited; set <compiler autolimits='true'>, give "
                             f"{prefix}limited='true' or 'false', or remove {prefix}range")
        return has_range

    def _geom(self, node, childclass, xf):
        cls = self._class_of(node, childclass)
        v = dict(cls.attrs["geom"])
        self._apply(node, "geom", v)
        where = node.where()
        gtype = v["type"]
        if gtype == "sdf":
            raise ModelError(f"{where}: geom type 'sdf' is not supported by jointspace; use "
                             f"a primitive or a mesh")
        hfield = v.get("hfield") or ""
        if gtype == "hfield" and not hfield:
            raise ModelError(f"{where}: an hfield geom needs an hfield attribute naming an "
                             f"<hfield> asset")
        if hfield and gtype != "hfield":
            raise ModelError(f"{where}: hfield={hfield!r} needs type='hfield' (type is "
                             f"{gtype!r})")
        mesh = v.get("mesh") or ""
        if mesh and gtype not in ("mesh", "sphere", "capsule", "cylinder", "ellipsoid", "box"):
            raise ModelError(f"{where}: a {gtype} cannot be fitted to mesh {mesh!r}; use type "
                             f"mesh, or sphere, capsule, cylinder, ellipsoid or box to fit one")
        if mesh and v["fromto"] is not None:
            raise ModelError(f"{where}: fromto cannot be used with a mesh; remove one")
        if mesh and gtype == "mesh" and v["shellinertia"]:
            raise ModelError(f"{where}: for a mesh geom, shell inertia is set on the mesh "
                             f"asset: write inertia='shell' on <mesh name='{mesh}'>")
        if gtype == "mesh" and not mesh:
            raise ModelError(f"{where}: a mesh geom needs a mesh attribute naming an asset")
        size = [float(s) for s in v["size"]]
        pos = np.array(v["pos"], dtype=np.float64)
        if v["fromto"] is not None:
            if gtype not in ("capsule", "cylinder", "box", "ellipsoid"):
                raise ModelError(f"{where}: fromto needs type capsule, cylinder, box or "
                                 f"ellipsoid (type is {gtype!r})")
            if np.any(pos != 0):
                raise ModelError(f"{where}: both pos and fromto are given; give only one")
            pos, quat, half = frames.fromto_frame(v["fromto"])
            if half < 1e-14:
                raise ModelError(f"{where}: fromto points coincide; give two distinct points")
            if gtype in ("box", "ellipsoid"):
                size[1], size[2] = size[0], half
            else:
                size[1] = half
        else:
            quat = self._orientation(node, v["_orient"])
        if not mesh:
            self._check_size(node, gtype, size)
        mass = v["mass"]
        if mass is not None and mass < 0:
            raise ModelError(f"{where}: mass={mass} is negative; masses must be >= 0")
        if v["density"] < 0:
            raise ModelError(f"{where}: density={v['density']} is negative; it must be >= 0")
        if v["condim"] not in (1, 3, 4, 6):
            raise ModelError(f"{where}: condim={v['condim']} is invalid; use 1, 3, 4 or 6")
        pos, quat = _compose(xf, pos, quat)
        return GeomSpec(
            type=gtype, name=v.get("name", ""), size=np.array(size), pos=pos, quat=quat,
            mesh=mesh, fitscale=v["fitscale"], hfield=hfield, mass=mass,
            density=v["density"],
            shellinertia=v["shellinertia"],
            friction=tuple(v["friction"]), contype=v["contype"], conaffinity=v["conaffinity"],
            condim=v["condim"], priority=v["priority"], solmix=v["solmix"],
            solref=tuple(v["solref"]), solimp=tuple(v["solimp"]), margin=v["margin"],
            gap=v["gap"], group=v["group"], rgba=tuple(v["rgba"]),
            material=v.get("material") or "", fluidshape=v["fluidshape"],
            fluidcoef=tuple(v["fluidcoef"]), surfacevel=tuple(v["surfacevel"]),
            adhesion=v["adhesion"], source=where)

    def _check_size(self, node, gtype, size):
        """MuJoCo's size checks: the sizes a type uses must be positive."""
        need = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}.get(gtype, 0)
        for i in range(need):
            if not size[i] > 0:
                raise ModelError(f"{node.where()}: size[{i}]={size[i]} must be positive for a "
                                 f"{gtype} (size is {tuple(size)}); give "
                                 f"{_SIZE_HELP[gtype]}")
        if gtype == "plane" and not size[2] > 0:
            raise ModelError(f"{node.where()}: a plane's size[2] (grid spacing) must be "
                             f"positive; write e.g. size='0 0 1'")

    def _site(self, node, childclass, xf):
        cls = self._class_of(node, childclass)
        v = dict(cls.attrs["site"])
        self._apply(node, "site", v)
        where = node.where()
        stype = v["type"]
        if stype not in ("sphere", "capsule", "ellipsoid", "cylinder", "box"):
            raise ModelError(f"{where}: site type {stype!r} is invalid; use sphere, capsule, "
                             f"ellipsoid, cylinder or box")
        size = [float(s) for s in v["size"]]
        pos = np.array(v["pos"], dtype=np.float64)
        if v["fromto"] is not None:
            if stype == "sphere":
                raise ModelError(f"{where}: fromto needs type capsule, cylinder, box or "
                                 f"ellipsoid")
            pos, quat, half = frames.fromto_frame(v["fromto"])
            if half < 1e-14:
                raise ModelError(f"{where}: fromto points coincide; give two distinct points")
            if stype in ("box", "ellipsoid"):
                size[1], size[2] = size[0], half
            else:
                size[1] = half
        else:
            quat = self._orientation(node, v["_orient"])
        pos, quat = _compose(xf, pos, quat)
        if v.get("material") and all(m.name != v["material"] for m in self.spec.materials):
            raise ModelError(f"{where}: unknown material {v['material']!r}; check the name")
        return SiteSpec(name=v.get("name", ""), type=stype, size=np.array(size), pos=pos,
                        quat=quat, group=v["group"], rgba=tuple(v["rgba"]), source=where)

    # ---- actuators --------------------------------------------------------------------

    def _actuator_params(self, node, state, kind, cls):
        """Apply an actuator element (in <default> or <actuator>) to the state `state`.

        MuJoCo keeps one actuator default per class. A shortcut element (motor, position,
        velocity, intvelocity, damper, cylinder, muscle, adhesion) writes only its own
        entries of gainprm, biasprm and dynprm (the others are MuJoCo's defaults) and its
        types. An attribute it does not give (kp, kv, timeconst, ...) comes from the nearest
        of the class and its ancestors whose actuator parameters were last set by <general>
        or by the same shortcut, and from MuJoCo's defaults when there is none; the common
        attributes (gear, ctrlrange, ...) come from the class itself (measured on MuJoCo 4.0,
        tests/test_actuator_defaults.py).
        """
        if kind == "muscle":  # its timeconst has two values (read below)
            self._apply(node, "actuator", state, _ACT_ATTRS[kind] - {"timeconst"})
            self.unknown_attrs.pop("<muscle> timeconst", None)
        elif kind == "dcmotor":  # its own attributes are read by _dcmotor
            self._apply(node, "actuator", state, _ACT_ATTRS[kind] - set(_DCMOTOR_ATTRS))
            for key in _DCMOTOR_ATTRS:
                self.unknown_attrs.pop(f"<dcmotor> {key}", None)
        else:
            self._apply(node, "actuator", state, _ACT_ATTRS[kind])
        if kind == "general":
            state["_kind"] = "general"
            return
        prev = state
        # a pid or orientation takes what it does not give from the nearest default of its
        # own kind only (MuJoCo 4.0)
        stops = (kind,) if kind in ("pid", "orientation") else ("general", kind)
        while prev["_kind"] not in stops and cls is not None:
            cls = cls.parent
            prev = cls.attrs["actuator"] if cls is not None else _BASE["actuator"]
        same = prev["_kind"] == kind
        state["_kind"] = kind
        gain, bias, dyn = [0.0] * 10, [0.0] * 10, [1.0] + [0.0] * 9
        dyntype, gaintype, biastype = "none", "fixed", "affine"
        where = node.where()

        def get(key, default):
            value = self._get(node, key, _TABLES["actuator"][key], default)
            if key in ("kp", "kv", "dampratio", "timeconst", "area", "gain", "slewmax") and (
                    value is not None and value < 0
                    and not (kind in ("pid", "orientation") and key == "kp")):
                raise ModelError(f"{where}: {key}={value} is negative; it must be >= 0")
            return value

        if kind == "dcmotor":
            self._dcmotor(node, state, prev)
            return
        if state["gaintype"] == "dcmotor":
            # a dcmotor default's actearly does not reach another shortcut (MuJoCo 4.0)
            state["actearly"] = False
        # the input signature MuJoCo 4.0 records in actuator_ctrlspec (metadata)
        if kind in ("pid", "orientation"):
            if "input" not in node.attrib:
                state["input"] = prev["input"] if same else ""
        else:
            state["input"] = {"position": "pos", "velocity": "vel", "intvelocity": "vel",
                              "cylinder": "pressure"}.get(kind, "")
        if kind == "motor":
            gain[0] = 1.0
            biastype = "none"
        elif kind in ("position", "intvelocity"):
            kp = get("kp", prev["gainprm"][0])
            kv, ratio = get("kv", None), get("dampratio", None)
            if kv is not None and ratio is not None:
                raise ModelError(f"{where}: give kv or dampratio, not both")
            gain[0], bias[1] = kp, -kp
            bias[2] = -kv if kv is not None else ratio if ratio is not None else (
                prev["biasprm"][2])
            tc = get("timeconst", None)
            if tc is not None:
                dyn[0], dyntype = tc, "filterexact" if tc > 0 else "none"
            elif same:
                dyn[0], dyntype = prev["dynprm"][0], prev["dyntype"]
            if kind == "intvelocity":
                dyntype = "integrator"
        elif kind == "pid":
            # MuJoCo 4's mjs_setToPID: kp, kv in biasprm, ki in gainprm[0], imax and slewmax
            # in dynprm[0:2]; a dampratio waits in biasprm[2] (> 0) for set_const
            kp = get("kp", -prev["biasprm"][1] if same else 1.0)
            kv, ratio = get("kv", None), get("dampratio", None)
            if kv is not None and ratio is not None:
                raise ModelError(f"{where}: give kv or dampratio, not both")
            bias[1] = -kp
            bias[2] = (-kv if kv is not None else ratio if ratio is not None
                       else prev["biasprm"][2] if same else 0.0)
            gain[0] = get("ki", prev["gainprm"][0] if same else 0.0)
            dyn[0] = get("imax", prev["dynprm"][0] if same else 0.0)
            dyn[1] = get("slewmax", prev["dynprm"][1] if same else 0.0)
            dyntype = "pid" if gain[0] != 0 or dyn[1] != 0 else "none"
            gaintype = "pid"
            posrange = get("posrange", None)
            if posrange is not None:
                if "inheritrange" in node.attrib:
                    raise ModelError(f"{where}: give posrange or inheritrange, not both")
                state["ctrlrange"] = tuple(posrange)
        elif kind == "orientation":
            # MuJoCo 4's mjs_setToOrientation: kp in gainprm[0] and −biasprm[1], kv in
            # −biasprm[2]; a dampratio waits in biasprm[2] (> 0) for set_const
            kp = get("kp", prev["gainprm"][0] if same else 1.0)
            kv, ratio = get("kv", None), get("dampratio", None)
            if kv is not None and ratio is not None:
                raise ModelError(f"{where}: give kv or dampratio, not both")
            gain[0], bias[1] = kp, -kp
            bias[2] = (-kv if kv is not None else ratio if ratio is not None
                       else prev["biasprm"][2] if same else 0.0)
            gaintype, biastype = "so3", "so3"
        elif kind == "velocity":
            kv = get("kv", prev["gainprm"][0])
            gain[0], bias[2] = kv, -kv
        elif kind == "damper":
            kv = get("kv", -prev["gainprm"][2] if prev["gaintype"] == "affine" else 0.0)
            gain[2] = -kv
            gaintype, biastype = "affine", "none"
            state["ctrllimited"] = "true"
            if min(state["ctrlrange"]) < 0:
                raise ModelError(f"{where}: a damper's ctrlrange={state['ctrlrange']} must not "
                                 f"be negative")
        elif kind == "cylinder":
            dyn[0] = get("timeconst", prev["dynprm"][0])
            bias[:3] = get("bias", prev["biasprm"][:3])
            gain[0] = get("area", prev["gainprm"][0])
            diameter = get("diameter", None)
            if diameter is not None:
                gain[0] = math.pi / 4 * diameter * diameter
            dyntype = "filter"
        elif kind == "muscle":
            # MuJoCo's mjs_setToMuscle: entries still at the general defaults (gainprm₀ = 1,
            # the others 0; dynprm₀ = 1, dynprm₁ = 0) become the muscle defaults, then the
            # attributes given (>= 0) replace them
            gain[:9] = prev["gainprm"][:9]
            for k in range(9):
                if gain[k] == (1.0 if k == 0 else 0.0):
                    gain[k] = _MUSCLE_DEFAULTS[k]
            dyn[:3] = prev["dynprm"][:3]
            dyn[0] = 0.01 if dyn[0] == 1.0 else dyn[0]
            dyn[1] = 0.04 if dyn[1] == 0.0 else dyn[1]
            dyn[2] = get("tausmooth", dyn[2])
            if dyn[2] < 0:
                raise ModelError(f"{where}: tausmooth={dyn[2]} is negative; it must be >= 0")
            for k, key in enumerate(("range", "force", "scale", "lmin", "lmax", "vmax", "fpmax",
                                     "fvmax")):
                v = self._get(node, key, _TABLES["actuator"][key])
                if v is None:
                    continue
                if key == "range":
                    gain[0:2] = [x if x >= 0 else g for x, g in zip(v, gain[0:2])]
                elif v >= 0:
                    gain[k + 1] = v
            bias[:9] = gain[:9]
            tc = self._get(node, "timeconst", _f(2))
            if tc is not None:
                dyn[:2] = [x if x >= 0 else t for x, t in zip(tc, dyn[:2])]
            dyntype, gaintype, biastype = "muscle", "muscle", "muscle"
        else:  # adhesion
            gain[0] = get("gain", prev["gainprm"][0])
            biastype = "none"
            state["ctrllimited"] = "true"
            if min(state["ctrlrange"]) < 0:
                raise ModelError(f"{where}: an adhesion actuator's ctrlrange="
                                 f"{state['ctrlrange']} must not be negative")
        state["gainprm"], state["biasprm"], state["dynprm"] = tuple(gain), tuple(bias), tuple(dyn)
        state["dyntype"], state["gaintype"], state["biastype"] = dyntype, gaintype, biastype

    def _dcmotor(self, node, state, prev):
        """A <dcmotor>'s parameters into `state` as MuJoCo 4.0's mjs_setToDCMotor sets them.

        gainprm = [R, K, α, T₀, kp, ki, kd, Vmax], dynprm = [τₑ, (di/dt)max, R_T, C, Tₐ, σ₀,
        σ₁, slewmax, Imax], biasprm = [cogging amplitude, poles, phase, F_C, F_S, v_S], the
        other entries 0. Values not given come from the nearest dcmotor default (`prev`,
        when its gaintype is dcmotor). K = sqrt(Kt Ke) (or the one positive constant), or
        from nominal = [V, τ₀, ω₀]: Ke = V/ω₀ (corrected for the damping B), R = K V / τ₀.
        τₑ = L / R, or inductance[1]; the thermal C = τ_th / R_T (or R_T = τ_th / C); saturation
        [τmax, imax, (di/dt)max] sets forcerange ±τmax (τmax = K imax). The states
        (actuator_actnum) are counted by the compiler (`jointspace.io.compile`).
        """
        where = node.where()
        inh = prev["gaintype"] == "dcmotor"
        pg = prev["gainprm"] if inh else (0.0,) * 10
        pb = prev["biasprm"] if inh else (0.0,) * 10
        pd = prev["dynprm"] if inh else (0.0,) * 10

        def vec(key, init):
            val = list(init)
            given = self._get(node, key, _TABLES["actuator"][key])
            if given is not None:
                given = np.atleast_1d(given).tolist()
                val[:len(given)] = given
            return val

        kt, ke = vec("motorconst", (pg[1], 0.0))
        R = vec("resistance", (pg[0],))[0]
        vn, tau0, omega0 = vec("nominal", (0.0, 0.0, 0.0))
        saturation = vec("saturation", (0.0, 0.0, pd[1]))
        inductance = vec("inductance", (0.0, pd[0]))
        cogging = vec("cogging", pb[0:3])
        controller = vec("controller", (pg[4], pg[5], pg[6], pd[7], pd[8], pg[7]))
        thermal = vec("thermal", (pd[2], pd[3], 0.0, pg[2], pg[3], pd[4]))
        lugre = vec("lugre", (pd[5], pd[6], pb[3], pb[4], pb[5]))
        if kt < 0 or ke < 0:
            raise ModelError(f"{where}: motorconst=({kt:g}, {ke:g}): the motor constants must "
                             f"be non-negative (MuJoCo refuses it too)")
        if vn > 0 and ke <= 0 and omega0 > 0:
            # Ke from the no-load speed ω₀ = V Ke / (Ke² + R B)
            B = state["damping"][0]
            if B > 0 and R > 0:
                disc = vn * vn - 4.0 * R * B * omega0 * omega0
                ke = (vn + math.sqrt(disc)) / (2.0 * omega0) if disc > 0 else vn / omega0
            elif B > 0 and tau0 > 0:
                exact = vn / omega0 - vn * B / tau0
                ke = exact if exact > 0 else vn / omega0
            else:
                ke = vn / omega0
        K = math.sqrt(kt * ke) if kt > 0 and ke > 0 else kt if kt > 0 else ke
        if R == 0 and vn > 0 and tau0 > 0 and K > 0:
            R = K * vn / tau0
        if K <= 0:
            raise ModelError(f"{where}: motorconst: the motor constant K must be positive; "
                             f"give motorconst, or nominal with its no-load speed (MuJoCo: DC "
                             f"motor: motor constant K must be positive)")
        if R <= 0:
            raise ModelError(f"{where}: resistance={R:g}: the resistance R must be positive; "
                             f"give resistance, or nominal with its stall torque (MuJoCo: DC "
                             f"motor: resistance R must be positive)")
        gain, bias, dyn = [0.0] * 10, [0.0] * 10, [0.0] * 10
        gain[0], gain[1] = R, K
        gain[4], gain[5], gain[6] = controller[0:3]
        dyn[7], dyn[8] = controller[3:5]
        if controller[5] > 0:
            gain[7] = controller[5]
        if saturation[0] > 0 or saturation[1] > 0:
            tmax = saturation[0] if saturation[0] != 0 else K * saturation[1]
            state["forcerange"] = (-tmax, tmax)
            state["forcelimited"] = "true"
        if saturation[2] > 0:
            dyn[1] = saturation[2]
        bias[0:3] = cogging
        if inductance[0] < 0:
            raise ModelError(f"{where}: inductance={inductance[0]:g}: the inductance L must "
                             f"be non-negative")
        if inductance[1] < 0:
            raise ModelError(f"{where}: inductance=(.., {inductance[1]:g}): the electrical "
                             f"time constant must be non-negative")
        dyn[0] = inductance[0] / R if inductance[0] > 0 else inductance[1]
        if thermal[0] > 0 or thermal[1] > 0 or thermal[2] > 0:
            rt, c, tth = thermal[0:3]
            # the time constant takes precedence over a given capacitance (MuJoCo 4.0.0)
            if tth > 0 and rt > 0:
                c = tth / rt
            elif tth > 0 and c > 0:
                rt = tth / c
            for name, value in (("resistance", rt), ("capacitance", c)):
                if value <= 0:
                    raise ModelError(f"{where}: thermal={tuple(thermal[0:3])}: the thermal "
                                     f"{name} must be positive (give two of resistance, "
                                     f"capacitance and timeconst)")
            dyn[2], dyn[3], dyn[4] = rt, c, thermal[5]
            gain[2], gain[3] = thermal[3], thermal[4]
        if lugre[0] > 0:
            dyn[5], dyn[6] = lugre[0:2]
            bias[3:6] = lugre[2:5]
        if "input" not in node.attrib:
            state["input"] = prev["input"] if inh else ""
        state["gainprm"], state["biasprm"], state["dynprm"] = tuple(gain), tuple(bias), tuple(dyn)
        state["dyntype"] = state["gaintype"] = state["biastype"] = "dcmotor"
        state["actearly"], state["actlimited"] = True, "false"
        state["actdim"] = dcmotor_slots(dyn, gain)[5]

    def _actuator_section(self, node):
        self._check_attrs(node, set())
        for child in node.children:
            tag = child.tag
            if tag in _ACT_UNSUPPORTED:
                raise ModelError(f"{child.where()}: actuator type <{tag}> is not supported by "
                                 f"jointspace; use motor, position, velocity, damper or "
                                 f"general")
            if tag not in _ACT_ATTRS:
                raise ModelError(f"{child.where()}: unknown element <{tag}> in <actuator>; "
                                 f"check the spelling")
            self.spec.actuators.append(self._actuator(child, tag))

    def _actuator(self, node, kind):
        if kind == "orientation":
            extra = sorted(set(node.attrib) - _ACT_ATTRS[kind])
            if extra and extra[0] in _TABLES["actuator"]:
                raise ModelError(f"{node.where()}: {extra[0]} is not an attribute of "
                                 f"<orientation> (MuJoCo's schema refuses it too)")
        cls = self._class_of(node, "main")
        v = dict(cls.attrs["actuator"])
        self._actuator_params(node, v, kind, cls)
        where = node.where()
        targets = [k for k in ("joint", "jointinparent", "tendon", "site", "cranksite", "body")
                   if k in node.attrib]
        if len(targets) != 1:
            raise ModelError(f"{where}: an actuator needs exactly one transmission target "
                             f"(joint, jointinparent, tendon, site, cranksite or body); found "
                             f"{targets or 'none'}")
        if "refsite" in node.attrib and targets[0] != "site":
            raise ModelError(f"{where}: refsite={node.attrib['refsite']!r} can only be used "
                             f"with a site transmission (site=...)")
        crank = targets[0] == "cranksite"
        for key in ("slidersite", "cranklength"):
            if (key in node.attrib) != crank and (key in node.attrib or key == "slidersite"):
                raise ModelError(f"{where}: " + (
                    f"{key} can only be used in a slider-crank transmission (cranksite=...)"
                    if not crank else "a slider-crank transmission (cranksite=...) needs "
                    "slidersite"))
        if crank and not v["cranklength"] > 0:
            raise ModelError(f"{where}: cranklength={v['cranklength']} must be positive")
        origin = f"{where} (class {cls.name!r})" if cls.name != "main" else where
        self._check_history(where, v["nsample"], v["delay"])
        if v["armature"] < 0:
            raise ModelError(f"{where}: armature={v['armature']} is negative; it must be >= 0")
        damping = self._damping(where, v["damping"])
        if (any(damping) or v["armature"]) and targets[0] not in ("joint", "jointinparent",
                                                                   "tendon"):
            what = "damping" if any(damping) else "armature"
            raise ModelError(f"{where}: {what} needs a joint, jointinparent or tendon "
                             f"transmission (it is added to that joint's or tendon's), not "
                             f"{targets[0]}={node.attrib[targets[0]]!r}")
        ctrllimited = self._limited(node, v["ctrllimited"], v["ctrlrange"], "ctrl", "actuator")
        forcelimited = self._limited(node, v["forcelimited"], v["forcerange"], "force",
                                     "actuator")
        actlimited = self._limited(node, v["actlimited"], v["actrange"], "act", "actuator")
        if v["dyntype"] == "user":
            raise ModelError(f"{origin}: dyntype='user' is not supported by jointspace (user "
                             f"dynamics run MuJoCo callbacks)")
        for what in ("gaintype", "biastype"):
            if v[what] == "user":
                raise ModelError(f"{origin}: {what}='user' is not supported by jointspace "
                                 f"(user gains run MuJoCo callbacks)")
        dc = [k for k in ("dyntype", "gaintype", "biastype") if v[k] == "dcmotor"]
        if dc and len(dc) != 3:
            raise ModelError(f"{origin}: {', '.join(f'{k}={v[k]!r}' for k in dc)}: jointspace "
                             f"computes a dcmotor only with dyntype, gaintype and biastype "
                             f"all 'dcmotor'")
        actdim = v["actdim"]  # negative: as the dyntype gives (MuJoCo's default, -1)
        so3 = "so3" in (v["gaintype"], v["biastype"]) and v["dyntype"] == "integrator"
        if so3:
            # the integrator's setpoint: 3 activations (actdim 0 or 3 given, MuJoCo 4.0)
            if actdim > 0 and actdim != 3:
                raise ModelError(f"{where}: actdim={actdim}: an so3 integrator has 3 "
                                 f"activation states (its orientation setpoint); MuJoCo "
                                 f"refuses it too: remove actdim")
        elif dc:
            nslot = dcmotor_slots(v["dynprm"], v["gainprm"])[5]
            if max(actdim, 0) != nslot:
                raise ModelError(f"{where}: actdim={actdim}: this dcmotor's parameters give "
                                 f"{nslot} states (slewmax dynprm[7], ki gainprm[5], thermal "
                                 f"dynprm[2], LuGre dynprm[5], time constant dynprm[0] > 0); "
                                 f"set actdim={nslot} (MuJoCo: inconsistent state array "
                                 f"dimension in DC motor)")
            if not v["actearly"]:
                raise ModelError(f"{where}: actearly='false': a dcmotor needs "
                                 f"actearly='true' (MuJoCo refuses it too)")
        elif v["dyntype"] == "pid":
            # the pid's states: [slew (slewmax > 0), integral (ki > 0)]
            nslot = int(v["dynprm"][1] > 0) + int(v["gainprm"][0] > 0)
            if actdim >= 0 and actdim != nslot:
                raise ModelError(f"{where}: actdim={actdim}: a pid has {nslot} activation "
                                 f"states (slewmax > 0, ki > 0); MuJoCo refuses it too: "
                                 f"remove actdim")
        elif actdim > 1:
            raise ModelError(f"{where}: actdim={actdim}: more than one activation is only "
                             f"for dyntype user, dcmotor and pid (MuJoCo refuses it for "
                             f"dyntype={v['dyntype']!r} too); remove actdim")
        if (not so3 and v["dyntype"] not in ("pid", "dcmotor") and actdim >= 0
                and actdim != int(v["dyntype"] != "none")):
            what = ("an actuator without activation dynamics (dyntype none)" if actdim
                    else f"an actuator with dyntype={v['dyntype']!r}, which has one activation")
            raise ModelError(f"{where}: actdim={actdim} on {what}; MuJoCo refuses it too: "
                             f"remove actdim")
        if ctrllimited and v["ctrlrange"][0] == v["ctrlrange"][1]:
            raise ModelError(f"{where}: ctrlrange={v['ctrlrange']} with ctrllimited: the lower "
                             f"bound must be below the upper (MuJoCo: invalid control range)")
        for flag, key in ((ctrllimited, "ctrlrange"), (forcelimited, "forcerange"),
                          (actlimited, "actrange")):
            if flag and v[key][0] > v[key][1]:
                raise ModelError(f"{where}: {key}={v[key]}: the lower bound exceeds the upper")
        act = ActuatorSpec(
            name=v.get("name", ""), kind=kind, gear=np.array(v["gear"], dtype=np.float64),
            ctrllimited=ctrllimited, ctrlrange=tuple(v["ctrlrange"]), forcelimited=forcelimited,
            forcerange=tuple(v["forcerange"]), gainprm=np.array(v["gainprm"]),
            biasprm=np.array(v["biasprm"]), dynprm=np.array(v["dynprm"]),
            gaintype=v["gaintype"], biastype=v["biastype"],
            dyntype=v["dyntype"], group=v["group"], source=where,
            actlimited=actlimited, actrange=tuple(v["actrange"]), actearly=bool(v["actearly"]),
            lengthrange=tuple(v["lengthrange"]), nsample=v["nsample"], interp=v["interp"],
            delay=float(v["delay"]), damping=damping[0], dampingpoly=damping[1:],
            armature=float(v["armature"]), input=v["input"] or "",
            velrange=tuple(v["velrange"]), ffrange=tuple(v["ffrange"]))
        setattr(act, targets[0], node.attrib[targets[0]])
        act.refsite = node.attrib.get("refsite", "")
        act.slidersite = node.attrib.get("slidersite", "")
        act.cranklength = float(v["cranklength"]) if crank else 0.0
        if kind in ("position", "intvelocity", "pid") and v["inheritrange"] > 0:
            # position: ctrlrange; intvelocity: actrange (its act is the setpoint)
            key = "ctrlrange" if kind == "position" else "actrange"
            if key in node.attrib:
                raise ModelError(f"{where}: give {key} or inheritrange, not both")
            self._inherit.append((act, v["inheritrange"], node))
        return act

    # ---- equality, contact, tendon, deformable ----------------------------------------

    def _equality(self, node):
        self._check_attrs(node, set())
        for child in node.children:
            tag = child.tag
            if tag in ("flex", "flexvert", "flexstrain", "distance"):
                raise ModelError(f"{child.where()}: <{tag}> equality constraints are not "
                                 f"supported by jointspace; remove it or use MuJoCo")
            if tag not in ("connect", "weld", "joint", "tendon"):
                raise ModelError(f"{child.where()}: unknown element <{tag}> in <equality>; "
                                 f"use connect, weld, joint or tendon")
            cls = self._class_of(child, "main")
            v = dict(cls.attrs["equality"])
            allowed = {"name", "class", "active", "solref", "solimp"} | {
                "connect": {"body1", "body2", "anchor", "site1", "site2"},
                "weld": {"body1", "body2", "anchor", "site1", "site2", "relpose",
                         "torquescale"},
                "joint": {"joint1", "joint2", "polycoef"},
                "tendon": {"tendon1", "tendon2", "polycoef"}}[tag]
            given = self._apply(child, "equality", v, allowed)
            where = child.where()
            sites = {"site1", "site2"} & given
            bodies = {"body1", "body2", "anchor", "relpose"} & given
            if sites and bodies:
                raise ModelError(f"{where}: give either site1 and site2, or body1 (body2, "
                                 f"anchor, relpose), not {', '.join(sorted(sites | bodies))}")
            if sites and sites != {"site1", "site2"}:
                raise ModelError(f"{where}: a site-based {tag} needs both site1 and site2")
            eq = EqualitySpec(type=tag, name=v.get("name", ""), solref=tuple(v["solref"]),
                              solimp=tuple(v["solimp"]), active=v["active"], source=where)
            if sites:
                eq.objtype = "site"
                eq.obj1, eq.obj2 = v["site1"], v["site2"]
                eq.torquescale = v["torquescale"]
            elif tag in ("joint", "tendon"):
                if tag + "1" not in given:
                    raise ModelError(f"{where}: a {tag} equality needs {tag}1")
                eq.obj1, eq.obj2 = v[tag + "1"], v.get(tag + "2", "")
                eq.polycoef = np.array(v["polycoef"], dtype=np.float64)
            else:
                if "body1" not in given:
                    raise ModelError(f"{where}: a {tag} constraint needs body1")
                if tag == "connect" and "anchor" not in given:
                    raise ModelError(f"{where}: a connect constraint needs an anchor")
                eq.obj1, eq.obj2 = v["body1"], v.get("body2", "")
                eq.anchor = np.array(v["anchor"], dtype=np.float64)
                if tag == "weld":
                    eq.torquescale = v["torquescale"]
                    rp = v["relpose"]
                    if rp is not None and any(rp[3:]):
                        q = np.array(rp[3:], dtype=np.float64)
                        eq.relpose = np.r_[rp[:3], q / np.linalg.norm(q)]
            self.spec.equalities.append(eq)

    def _contact(self, node):
        self._check_attrs(node, set())
        for child in node.children:
            where = child.where()
            if child.tag == "exclude":
                self._check_attrs(child, {"name", "body1", "body2"})
                for key in ("body1", "body2"):
                    if key not in child.attrib:
                        raise ModelError(f"{where}: <exclude> needs {key}")
                self.spec.excludes.append(ExcludeSpec(
                    body1=child.attrib["body1"], body2=child.attrib["body2"], source=where))
            elif child.tag == "pair":
                cls = self._class_of(child, "main")
                v = dict(cls.attrs["pair"])
                given = self._apply(child, "pair", v)
                for key in ("geom1", "geom2"):
                    if key not in given:
                        raise ModelError(f"{where}: <pair> needs {key}")
                if v["condim"] not in (1, 3, 4, 6):
                    raise ModelError(f"{where}: condim={v['condim']} is invalid; use 1, 3, 4 "
                                     f"or 6")
                self.spec.pairs.append(PairSpec(
                    geom1=v["geom1"], geom2=v["geom2"], name=v.get("name", ""),
                    condim=v["condim"], friction=tuple(v["friction"]),
                    solref=tuple(v["solref"]), solreffriction=tuple(v["solreffriction"]),
                    solimp=tuple(v["solimp"]), margin=v["margin"], gap=v["gap"],
                    adhesion=v["adhesion"], source=where))
            else:
                raise ModelError(f"{where}: unknown element <{child.tag}> in <contact>; use "
                                 f"pair or exclude")

    def _tendon(self, node):
        """<tendon>: fixed tendons (joints, coefficients) and spatial ones (sites, pulleys)."""
        self._check_attrs(node, set())
        for child in node.children:
            where = child.where()
            if child.tag not in ("fixed", "spatial"):
                raise ModelError(f"{where}: unknown element <{child.tag}> in <tendon>; use "
                                 f"fixed or spatial")
            cls = self._class_of(child, "main")
            v = dict(cls.attrs["tendon"])
            self._apply(child, "tendon", v)
            limited = self._limited(child, v["limited"], v["range"], "", "tendon")
            if limited and v["range"][0] >= v["range"][1]:
                raise ModelError(f"{where}: range={v['range']}: range[0] must be smaller than "
                                 f"range[1]")
            for key in ("stiffness", "armature", "frictionloss"):
                if v[key] < 0:
                    raise ModelError(f"{where}: {key}={v[key]} is negative; it must be >= 0")
            damping = self._damping(where, v["damping"])
            frc = self._limited(child, v["actuatorfrclimited"], v["actuatorfrcrange"],
                                "actuatorfrc", "tendon")
            if frc and v["actuatorfrcrange"][0] >= v["actuatorfrcrange"][1]:
                raise ModelError(f"{where}: actuatorfrcrange={v['actuatorfrcrange']}: "
                                 f"actuatorfrcrange[0] must be smaller than "
                                 f"actuatorfrcrange[1]")
            sl = tuple(v["springlength"])
            if "springlength" in child.attrib and len(child.attrib["springlength"].split()) == 1:
                sl = (sl[0], sl[0])
            if sl[0] > sl[1]:
                raise ModelError(f"{where}: springlength={sl}: the lower end of the dead band "
                                 f"exceeds the upper")
            joints, path = [], []
            for j in child.children if child.tag == "spatial" else ():
                jw = j.where()
                if j.tag == "site":
                    self._check_attrs(j, {"site"})
                    if "site" not in j.attrib:
                        raise ModelError(f"{jw}: <site> in a spatial tendon needs site")
                    path.append(("site", j.attrib["site"], 0.0, jw))
                elif j.tag == "pulley":
                    self._check_attrs(j, {"divisor"})
                    div = self._get(j, "divisor", _f(), 0.0)
                    if not div > 0:
                        raise ModelError(f"{jw}: a pulley needs divisor > 0")
                    path.append(("pulley", "", div, jw))
                elif j.tag == "geom":
                    self._check_attrs(j, {"geom", "sidesite"})
                    if "geom" not in j.attrib:
                        raise ModelError(f"{jw}: <geom> in a spatial tendon needs geom")
                    path.append(("geom", j.attrib["geom"], j.attrib.get("sidesite", ""), jw))
                else:
                    raise ModelError(f"{jw}: unknown element <{j.tag}> in a spatial tendon; "
                                     f"use site, geom or pulley")
            if child.tag == "spatial":
                self._spatial_path(child, path)
            for j in child.children if child.tag == "fixed" else ():
                if j.tag != "joint":
                    raise ModelError(f"{j.where()}: unknown element <{j.tag}> in a fixed "
                                     f"tendon; use <joint joint='...' coef='...'>")
                self._check_attrs(j, {"joint", "coef"})
                if "joint" not in j.attrib:
                    raise ModelError(f"{j.where()}: <joint> in a fixed tendon needs joint")
                joints.append((j.attrib["joint"], self._get(j, "coef", _f(), 1.0), j.where()))
            if child.tag == "fixed" and not joints:
                raise ModelError(f"{where}: a fixed tendon needs at least one <joint>")
            self.spec.tendons.append(TendonSpec(
                name=v.get("name", ""), kind=child.tag, joints=joints, path=path,
                limited=limited,
                range=tuple(v["range"]), margin=v["margin"], stiffness=v["stiffness"],
                damping=damping[0], dampingpoly=damping[1:], armature=v["armature"],
                frictionloss=v["frictionloss"],
                springlength=sl, actfrclimited=frc,
                actfrcrange=tuple(v["actuatorfrcrange"]), solref_limit=tuple(v["solreflimit"]),
                solimp_limit=tuple(v["solimplimit"]),
                solref_friction=tuple(v["solreffriction"]),
                solimp_friction=tuple(v["solimpfriction"]), source=where))

    @staticmethod
    def _spatial_path(node, path):
        """A spatial path starts and ends at a site, with two sites between pulleys."""
        where = node.where()
        if sum(1 for p in path if p[0] == "site") < 2:
            raise ModelError(f"{where}: a spatial tendon needs at least two sites")
        if path[0][0] != "site" or path[-1][0] != "site":
            raise ModelError(f"{where}: a spatial tendon's path must start and end at a site")
        for k, p in enumerate(path):
            if p[0] == "geom" and (path[k - 1][0] != "site" or path[k + 1][0] != "site"):
                raise ModelError(f"{p[3]}: a wrap geom needs a site before and after it")
            if p[0] == "pulley" and (path[k - 1][0] != "site" or path[k + 1][0] != "site"
                                     or (k >= 2 and path[k - 2][0] == "pulley")):
                raise ModelError(f"{p[3]}: a pulley needs two sites before it and one after")

    def _deformable(self, node):
        for child in node.children:
            if child.tag != "skin":
                raise ModelError(f"{child.where()}: deformable <{child.tag}> is not supported "
                                 f"by jointspace; remove it or use MuJoCo for this model")
            self._silent_asset(child)  # a skinned mesh to render

    # ---- cross references and warnings ------------------------------------------------

    def _size(self, node):
        """<size>: nuserdata and nkey; the capacity attributes are read and ignored."""
        self._check_attrs(node, {"nuserdata", "nkey"} | _SIZE_CAPACITY)
        for key in ("nuserdata", "nkey"):
            v = self._get(node, key, _I)
            if v is not None and not 0 <= v < 2**31:
                raise ModelError(f"{node.where()}: {key}={v} must be a non-negative integer")
        nuser = self._get(node, "nuserdata", _I)
        if nuser is not None:
            self.spec.nuserdata = nuser
        self.size_nkey = max(self.size_nkey, self._get(node, "nkey", _I, 0))

    def _sensor_section(self, node):
        """<sensor>: one SensorSpec per child, the sensed object named as MuJoCo names it."""
        self._check_attrs(node, set())
        for child in node.children:
            tag = child.tag
            if tag in _SENSOR_REFUSED:
                raise ModelError(f"{child.where()}: <{tag}> sensors are not supported by "
                                 f"jointspace ({_SENSOR_REFUSED[tag]}); remove the sensor "
                                 f"or use MuJoCo for this model")
            if tag not in _SENSOR_OBJECT:
                raise ModelError(f"{child.where()}: unknown sensor <{tag}>; MuJoCo's sensor "
                                 f"elements are {', '.join(sorted(_SENSOR_OBJECT))}")
            self._check_attrs(child, _TACTILE_ATTRS if tag == "tactile" else
                              _SENSOR_ATTRS - {"geom", "mesh"})
            if tag == "user":
                for key in _SENSOR_HISTORY_ATTRS:
                    if key in child.attrib:
                        raise ModelError(f"{child.where()}: attribute {key}=: user sensors "
                                         f"have no history buffer (as in MuJoCo's schema); "
                                         f"remove it")
            sens = SensorSpec(kind=tag, name=self._get(child, "name", _S, ""),
                              cutoff=self._get(child, "cutoff", _f(), 0.0),
                              noise=self._get(child, "noise", _f(), 0.0),
                              nsample=self._get(child, "nsample", _I, 0),
                              interp=self._get(child, "interp", _k("zoh", "linear", "cubic"),
                                               "zoh"),
                              delay=self._get(child, "delay", _f(), 0.0),
                              interval=(tuple(self._get(child, "interval", _f(2, 1), ()))
                                        + (0.0, 0.0))[:2],
                              source=child.where())
            period, phase = sens.interval
            if period < 0:
                raise ModelError(f"{child.where()}: interval={child.attrib['interval']!r}: "
                                 f"the period must be non-negative")
            if phase > 0:
                raise ModelError(f"{child.where()}: interval={child.attrib['interval']!r}: "
                                 f"the phase must be zero or negative")
            if period > 0 and phase <= -period:
                raise ModelError(f"{child.where()}: interval={child.attrib['interval']!r}: "
                                 f"the phase must be greater than -period")
            self._check_history(child.where(), sens.nsample, sens.delay)
            for key in ("cutoff", "noise"):
                if getattr(sens, key) < 0:
                    raise ModelError(f"{child.where()}: {key} must be non-negative, got "
                                     f"{getattr(sens, key)}")
            obj = _SENSOR_OBJECT[tag]
            if obj is not None:
                sens.objtype, attr = obj[1], obj[0]
                sens.objname = self._get(child, attr, _S, "")
                if not sens.objname and tag == "rangefinder" and child.attrib.get("camera"):
                    sens.objtype, sens.objname = "camera", child.attrib["camera"]  # an image
                if not sens.objname:
                    raise ModelError(f"{child.where()}: <{tag}> needs the attribute {attr}= "
                                     f"naming its {obj[1]}")
            elif tag == "contact":
                self._contact_sensor(child, sens)
            elif tag == "tactile":  # the taxels are the mesh's vertices, in the geom's frame
                for attr in ("geom", "mesh"):
                    if not child.attrib.get(attr):
                        raise ModelError(f"{child.where()}: <tactile> needs the attribute "
                                         f"{attr}= naming its {attr}")
                sens.objtype, sens.objname = "mesh", child.attrib["mesh"]
                sens.reftype, sens.refname = "geom", child.attrib["geom"]
            elif tag in ("distance", "normal", "fromto"):
                one = child.attrib.get("geom1") or child.attrib.get("body1", "")
                two = child.attrib.get("geom2") or child.attrib.get("body2", "")
                sens.objtype = "geom" if "geom1" in child.attrib else "body"
                sens.reftype = "geom" if "geom2" in child.attrib else "body"
                sens.objname, sens.refname = one, two
                if not one or not two:
                    raise ModelError(f"{child.where()}: <{tag}> needs geom1= or body1= and "
                                     f"geom2= or body2=")
            else:
                sens.objtype = self._get(child, "objtype", _S, "")
                sens.objname = self._get(child, "objname", _S, "")
                sens.reftype = self._get(child, "reftype", _S, "")
                sens.refname = self._get(child, "refname", _S, "")
                if tag == "insidesite":
                    sens.reftype, sens.refname = "site", self._get(child, "site", _S, "")
            if tag == "camprojection":
                if not child.attrib.get("camera"):
                    raise ModelError(f"{child.where()}: <camprojection> needs the attribute "
                                     f"camera= naming the camera it projects into")
                sens.reftype, sens.refname = "camera", child.attrib["camera"]
            if tag == "rangefinder":
                sens.intprm = (self._ray_data(child), 0, 0)
            if tag == "user":
                sens.dim = self._get(child, "dim", _I, 0)
                sens.datatype = self._get(child, "datatype",
                                          _k("real", "positive", "axis", "quaternion"), "real")
                sens.needstage = self._get(child, "needstage", _k("pos", "vel", "acc"), "acc")
                if sens.dim <= 0:
                    raise ModelError(f"{child.where()}: a user sensor needs dim= (a positive "
                                     f"number of values)")
            self.spec.sensors.append(sens)

    @staticmethod
    def _check_history(where, nsample, delay):
        """MuJoCo's compiler checks of a history buffer: delay > 0 needs nsample > 0."""
        if delay > 0 and nsample <= 0:
            raise ModelError(f"{where}: delay={delay} needs a history buffer: set nsample to a "
                             f"positive number of samples (usually delay / timestep)")
        if nsample > _NSAMPLE_MAX:
            raise ModelError(f"{where}: nsample={nsample}: at most 2^24 samples in a history "
                             f"buffer (as in MuJoCo)")

    def _ray_data(self, child):
        """A rangefinder's data fields as a bitmask in _RAYDATA order (default: dist)."""
        fields = child.attrib.get("data", "dist").split()
        for f in fields:
            if f not in _RAYDATA:
                raise ModelError(f"{child.where()}: attribute data={child.attrib['data']!r}: "
                                 f"unknown rangefinder data field {f!r}; use "
                                 f"{', '.join(_RAYDATA)}")
        idx = [_RAYDATA.index(f) for f in fields]
        if not idx or any(j <= i for i, j in zip(idx, idx[1:])):
            raise ModelError(f"{child.where()}: attribute data={child.attrib.get('data')!r}: "
                             f"rangefinder data fields must be distinct and in the order "
                             f"{', '.join(_RAYDATA)}")
        return sum(1 << i for i in idx)

    def _contact_sensor(self, child, sens):
        """<contact> sensor: match criteria, data fields, reduce and num (MuJoCo 3.3+)."""
        a = child.attrib
        for key, kind in (("site", "site"), ("body1", "body"), ("subtree1", "xbody"),
                          ("geom1", "geom")):
            if key in a:
                sens.objtype, sens.objname = kind, a[key]
                break
        for key, kind in (("body2", "body"), ("subtree2", "xbody"), ("geom2", "geom")):
            if key in a:
                sens.reftype, sens.refname = kind, a[key]
                break
        fields = a.get("data", "found").split()
        names = list(_CONDATA)
        for f in fields:
            if f not in _CONDATA:
                raise ModelError(f"{child.where()}: attribute data={a['data']!r}: unknown "
                                 f"contact data field {f!r}; use {', '.join(names)}")
        idx = [names.index(f) for f in fields]
        if not idx or any(j <= i for i, j in zip(idx, idx[1:])):
            raise ModelError(f"{child.where()}: attribute data={a.get('data')!r}: contact "
                             f"data fields must be distinct and in the order "
                             f"{', '.join(names)}")
        reduce = self._get(child, "reduce", _S, "none")
        if reduce not in _CONREDUCE:
            raise ModelError(f"{child.where()}: attribute reduce={reduce!r}: use one of "
                             f"{', '.join(_CONREDUCE)}")
        num = self._get(child, "num", _I, 1)
        if num <= 0:
            raise ModelError(f"{child.where()}: attribute num={num}: the number of contacts "
                             f"reported must be positive")
        sens.intprm = (sum(1 << i for i in idx), _CONREDUCE.index(reduce), num)
        sens.dim = num * sum(_CONDATA[f] for f in fields)

    def _keyframe(self, node):
        """<keyframe>: one KeySpec per <key>, values as written (compile_keys completes them)."""
        self._check_attrs(node, set())
        for child in node.children:
            if child.tag != "key":
                raise ModelError(f"{child.where()}: unknown element <{child.tag}> in "
                                 f"<keyframe>; a keyframe holds <key> elements")
            self._check_attrs(child, set(_KEY_ATTRS))
            vals = {k: self._get(child, k, fmt) for k, fmt in _KEY_ATTRS.items()}
            key = KeySpec(name=vals["name"] or "", time=vals["time"] or 0.0,
                          source=child.where())
            for k in ("qpos", "qvel", "act", "ctrl", "mpos", "mquat"):
                if vals[k] is not None:
                    setattr(key, k, np.array(vals[k], dtype=np.float64))
            self.spec.keys.append(key)

    def _check_references(self):
        """Name checks with file:line messages, and inheritrange of position actuators."""
        bodies, joints, geoms, sites = {"world": self.spec.world}, {}, {}, {}
        stack = [self.spec.world]
        while stack:
            b = stack.pop()
            for child in b.children:
                if child.name:
                    bodies[child.name] = child
                stack.append(child)
            joints.update((j.name, j) for j in b.joints if j.name)
            geoms.update((g.name, g) for g in b.geoms if g.name)
            sites.update((s.name, s) for s in b.sites if s.name)
        meshes = {m.name for m in self.spec.meshes}
        hfields = {h.name for h in self.spec.hfields}

        def need(name, table, what, src):
            if name not in table:
                raise ModelError(f"{src}: unknown {what} {name!r}; check the name")

        materials = {m.name for m in self.spec.materials}
        cameras = set()
        stack = [self.spec.world]
        while stack:
            b = stack.pop()
            stack.extend(b.children)
            for g in b.geoms:
                if g.type == "mesh" or g.mesh:
                    need(g.mesh, meshes, "mesh", g.source)
                if g.type == "hfield":
                    need(g.hfield, hfields, "hfield", g.source)
                if g.material:
                    need(g.material, materials, "material", g.source)
            for c in b.cameras:
                cameras.add(c.name)
                if c.target:
                    need(c.target, bodies, "camera target body", c.source)
        for sens in self.spec.sensors:
            if sens.reftype == "camera":
                need(sens.refname, cameras, "camera", sens.source)
        tendons = {t.name for t in self.spec.tendons if t.name}
        for t in self.spec.tendons:
            for jname, _, jsrc in t.joints:
                need(jname, joints, "joint", f"{jsrc} joint='{jname}' in tendon {t.name!r}")
            for kind, sname, side, ssrc in t.path:
                if kind == "site":
                    need(sname, sites, "site", f"{ssrc} site='{sname}' in tendon {t.name!r}")
                elif kind == "geom":
                    need(sname, geoms, "geom", f"{ssrc} geom='{sname}' in tendon {t.name!r}")
                    if side:
                        need(side, sites, "site", f"{ssrc} sidesite='{side}' in tendon "
                             f"{t.name!r}")
        for eq in self.spec.equalities:
            table, what = {"joint": (joints, "joint"), "tendon": (tendons, "tendon")}.get(
                eq.type, (sites, "site") if eq.objtype == "site" else (bodies, "body"))
            need(eq.obj1, table, what, eq.source)
            if eq.obj2:
                need(eq.obj2, table, what, eq.source)
        for act in self.spec.actuators:
            if act.joint or act.jointinparent:
                need(act.joint or act.jointinparent, joints, "joint", act.source)
            elif act.site or act.cranksite:
                need(act.site or act.cranksite, sites, "site", act.source)
            elif act.tendon:
                need(act.tendon, tendons, "tendon", f"{act.source} tendon='{act.tendon}'")
            else:
                need(act.body, bodies, "body", act.source)
            for other in (act.refsite, act.slidersite):
                if other:
                    need(other, sites, "site", act.source)
        for p in self.spec.pairs:
            need(p.geom1, geoms, "geom", p.source)
            need(p.geom2, geoms, "geom", p.source)
        for ex in self.spec.excludes:
            need(ex.body1, bodies, "body", ex.source)
            need(ex.body2, bodies, "body", ex.source)
        for act, frac, node in self._inherit:
            if not act.joint:
                raise ModelError(f"{node.where()}: inheritrange needs a joint target")
            j = joints[act.joint]
            if not j.limited or j.type not in ("hinge", "slide"):
                raise ModelError(f"{node.where()}: inheritrange needs a limited hinge or "
                                 f"slide joint; joint {act.joint!r} has no range")
            mid = 0.5 * (j.range[0] + j.range[1])
            half = 0.5 * (j.range[1] - j.range[0]) * frac
            if act.kind == "intvelocity":
                act.actrange = (mid - half, mid + half)
                act.actlimited = True
            else:
                act.ctrlrange = (mid - half, mid + half)
                act.ctrllimited = True

    def _emit_warnings(self):
        spec = self.spec
        if self.skipped:
            items = ", ".join(f"<{t}> (first at {w})" for t, w in self.skipped.items())
            spec.warnings.append(f"{spec.source}: skipped elements jointspace does not model "
                                 f"(they do not change the dynamics): {items}")
        if self.unknown_attrs or self.ignored:
            items = [f"{k} (at {w})" for k, w in {**self.unknown_attrs, **self.ignored}.items()]
            spec.warnings.append(f"{spec.source}: ignored attributes jointspace does not know "
                                 f"or use: {'; '.join(items)}")
        for msg in spec.warnings:
            warnings.warn(JointspaceWarning(msg), stacklevel=4)


_SIZE_HELP = {
    "sphere": "size='radius'",
    "capsule": "size='radius half-length' or fromto",
    "cylinder": "size='radius half-length' or fromto",
    "box": "size='x y z' half-sizes",
    "ellipsoid": "size='rx ry rz'",
}


def _is_zero(text):
    try:
        return float(text) == 0.0
    except ValueError:
        return False


def _walk(body):
    """The bodies of a subtree in MuJoCo's order (depth first, parent before child)."""
    stack = [body]
    while stack:
        b = stack.pop()
        yield b
        stack.extend(reversed(b.children))


def _prefixed(element, prefix, suffix=""):
    """An attached element named prefix + its name + suffix; returns the element."""
    if element.name:
        element.name = prefix + element.name + suffix
    return element


def _add_suffix(element, suffix):
    """A named element's name with a <replicate> suffix appended; returns the element."""
    if suffix and element.name:
        element.name += suffix
    return element


def _compose_joint(xf, joint):
    """Apply an enclosing frame transform (pos, quat) to a joint's position and axis."""
    if xf is not None and joint.type != "free":
        joint.pos = xf[0] + frames.rotate(xf[1], np.asarray(joint.pos, dtype=np.float64))
        if joint.type != "ball":
            joint.axis = frames.rotate(xf[1], np.asarray(joint.axis, dtype=np.float64))


def _compose(xf, pos, quat):
    """Apply an enclosing frame transform (pos, quat) to a child pose."""
    if xf is None:
        return pos, quat
    fpos, fquat = xf
    return fpos + frames.rotate(fquat, pos), frames.quat_normalize(frames.quat_mul(fquat, quat))
