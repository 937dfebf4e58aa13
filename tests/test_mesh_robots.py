"""Mesh-footed and mesh-gripper robots (issue 23): MuJoCo's contacts and motion, and the hull graph.

The scenes are tests/_mesh_robots.py's: the quadruped standing on boot-shaped mesh feet
(plane-mesh contacts, four per foot) and the 7-dof arm whose mesh fingers hold a mesh cube
in the air (mesh-mesh contacts, elliptic cones). From MuJoCo's settled state, forward
dynamics and 1000 steps are compared with mj_forward and mj_step.

The hull graph (collision.hull.hull_graph) makes a mesh's support search a hill climb and
its face lookups local; both must give what a search of every vertex and face gives. That
is checked directly (hull_index against a scan over seeded directions, the directions of
the hull's own faces and edges among them, where vertices tie) and through collision: the
same contacts bit for bit with the graphs as without them (models compiled with
GRAPH_MIN_VERT out of reach, which leaves every mesh without a graph).
"""

import importlib
import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.collision import collision
from jointspace.collision import hull as H
from tests._collision_cases import random_quat
from tests._mesh_robots import (
    capsule_hull,
    into_ours,
    mesh_gripper,
    mesh_quadruped,
    rounded_box,
    settle,
)
from tests._real_models import real_model

mujoco = pytest.importorskip("mujoco")
C = importlib.import_module("jointspace.collision.convex")

SETTLE = 300
# forward qacc from MuJoCo's settled state, relative to max(1, |qacc|): both Newton solves
# stop at their tolerance (measured 9.6e-12 on the quadruped, 5.2e-13 on the gripper)
QACC_TOL = 1e-8
# 1000 steps from the same state: |qpos − MuJoCo's| (measured 1.6e-15 and 3.2e-14)
TRAJ_TOL = 1e-10
NSTEP = 1000


def _ours_from(xml, mm, md):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = js.load_string(xml)
    d = js.make_data(m)
    into_ours(m, d, mm, md)
    return m, d


@pytest.mark.parametrize("make", [mesh_quadruped, mesh_gripper], ids=["quadruped", "gripper"])
def test_mesh_robot_moves_as_mujoco(make):
    """Contacts, qacc and 1000 steps equal MuJoCo's from its settled state."""
    xml = make()
    mm, md = settle(xml, SETTLE)
    m, d = _ours_from(xml, mm, md)
    mujoco.mj_forward(mm, md)
    js.forward(m, d)
    assert md.ncon >= 8, "the scene is meant to rest on mesh contacts"
    assert int(d.ncon[0]) == md.ncon
    mine = sorted(tuple(g) for g in d.contact.geom[:md.ncon])
    theirs = sorted(tuple(g) for g in md.contact.geom[:md.ncon])
    assert mine == theirs
    scale = np.maximum(1.0, np.abs(md.qacc))
    assert np.max(np.abs(d.qacc - md.qacc) / scale) < QACC_TOL
    worst = 0.0
    for _ in range(NSTEP):
        mujoco.mj_step(mm, md)
        js.step(m, d)
        worst = max(worst, float(np.max(np.abs(d.qpos - md.qpos))))
    assert worst < TRAJ_TOL
    assert int(d.ncon[0]) == md.ncon


def test_gripper_holds_the_cube_in_the_air():
    """The scene is what it says: the cube is lifted and held by both fingers alone."""
    mm, md = settle(mesh_gripper(), SETTLE)
    names = {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_GEOM, g) for c in md.contact[:md.ncon]
             for g in c.geom}
    assert names == {"finger_left", "finger_right", "box"}
    assert md.qpos[11] > 0.5  # the cube's centre, 0.425 on the table


def _meshes():
    rng = np.random.default_rng(3)
    blob = rng.normal(size=(120, 3))
    blob *= np.array([0.12, 0.09, 0.1]) / np.linalg.norm(blob, axis=1, keepdims=True)
    return {"rounded box 3": rounded_box((0.1, 0.07, 0.05), 0.01, 3),
            "rounded box 6": rounded_box((0.05, 0.03, 0.08), 0.01, 6),
            "capsule hull": capsule_hull(0.05, 0.08, 6), "blob": blob}


def _mesh_xml(verts, other=""):
    pts = " ".join(f"{x:.6f}" for x in np.asarray(verts).ravel())
    return (f'<mujoco><asset><mesh name="m" vertex="{pts}"/></asset><worldbody>{other}'
            '<body><freejoint/><geom name="g2" type="mesh" mesh="m" margin="0.01"/></body>'
            "</worldbody></mujoco>")


@pytest.mark.parametrize("name", list(_meshes()))
def test_hull_climb_finds_the_scanned_vertex(name):
    """hull_index with the graph equals the scan (the first of equals) in every direction.

    Directions: seeded random ones, the hull's face normals and edge normals (where two or
    more vertices tie exactly), and the axes perturbed by 1e-17 to 1e-3.
    """
    m = js.load_string(_mesh_xml(_meshes()[name]))
    hv, hg = np.array(m.hull_vert), np.array(m.hull_graph)
    ga, nv = int(m.mesh_hullgraphadr[0]), int(m.mesh_hullvertnum[0])
    assert ga >= 0 and nv >= H.GRAPH_MIN_VERT
    rng = np.random.default_rng(0)
    dirs = list(rng.normal(size=(3000, 3)))
    loops = np.split(np.array(m.hullpoly_vert), np.cumsum(m.hullpoly_vertnum)[:-1])
    # faces' normals from the stored (float32-valued) vertices, along which a face's first
    # corners tie (the compiled normals come from the unrounded vertices)
    tri = np.array([lp[:3] for lp in loops])
    normals = np.cross(hv[tri[:, 1]] - hv[tri[:, 0]], hv[tri[:, 2]] - hv[tri[:, 0]])
    dirs += list(normals)
    for f, loop in enumerate(loops):  # the bisector of two faces at an edge
        for g in range(f + 1, len(loops)):
            if len(np.intersect1d(loop, loops[g])) == 2:
                dirs.append(normals[f] + normals[g])
    for axis in np.vstack([np.eye(3), -np.eye(3)]):
        dirs.append(axis)
        dirs += list(axis + rng.normal(size=(100, 3)) * 10.0 ** rng.uniform(-17, -3, (100, 1)))
    ties = 0
    for u in dirs:
        u = u / np.linalg.norm(u)
        p = u[0] * hv[:nv, 0] + u[1] * hv[:nv, 1] + u[2] * hv[:nv, 2]  # the kernels' order
        ties += int(np.sum(p == p.max()) > 1)
        climbed = C.hull_index(hv, 0, nv, hg, ga, *u)
        assert climbed == C.hull_index(hv, 0, nv, hg, -1, *u) == int(np.argmax(p))
    assert ties > 50, "the directions meant to tie did not"


GRAPH_MESHES = [*_meshes(), "lattice 0", "lattice 1", "lattice 2", "cloud 0", "cloud 1",
                "cloud 2", "dog skull"]


def _graph_mesh_xml(name):
    """A model of one mesh of GRAPH_MESHES: the meshes above, seeded random ones, a real one.

    The random ones: points of the integer lattice in a ball (polygons of 4 to 8 corners,
    vertices tied along the grid's directions) and Gaussian clouds (triangles); the real
    one dm_control's dog skull.
    """
    if name in _meshes():
        return _mesh_xml(_meshes()[name])
    if name == "dog skull":
        skull = real_model("dm-control", "dm_control/suite/dog_assets/BONEMergedSkull.stl")
        return (f'<mujoco><asset><mesh name="m" file="{skull}"/></asset><worldbody>'
                '<geom type="mesh" mesh="m"/></worldbody></mujoco>')
    kind, seed = name.split()
    rng = np.random.default_rng(int(seed))
    if kind == "cloud":
        return _mesh_xml(0.05 * rng.normal(size=(300, 3)))
    ball = np.array([[x, y, z] for x in range(-5, 6) for y in range(-5, 6) for z in range(-5, 6)
                     if x * x + y * y + z * z <= 25], dtype=float)
    return _mesh_xml(0.02 * ball[rng.choice(len(ball), 150, replace=False)])


@pytest.mark.parametrize("name", GRAPH_MESHES)
def test_hull_graph_layout(name):
    """Seeds, neighbour lists and polygon lists say what hull_graph's docstring says.

    Every vertex's neighbours are the vertices it shares a hull triangle edge with (sorted,
    once each): those it shares a polygon edge with, and where a polygon merges triangles,
    some of its other corners (the diagonals), 3 n − 6 edges in all, as a triangulated
    sphere has; its polygons those it is a corner of (in order); the 27 seeds are the
    scan's first vertex of largest u0 x + u1 y + u2 z for their cells' directions; the lists
    fill the block from 27 + 2n on, neighbour lists first, each ended by −1.
    """
    m = js.load_string(_graph_mesh_xml(name))
    hv, hg = np.array(m.hull_vert), np.array(m.hull_graph)
    nv, ga = int(m.mesh_hullvertnum[0]), int(m.mesh_hullgraphadr[0])
    assert ga == 0 and nv >= H.GRAPH_MIN_VERT
    loops = np.split(np.array(m.hullpoly_vert), np.cumsum(m.hullpoly_vertnum)[:-1])

    def lst(at):
        out = []
        while hg[at] >= 0:
            out.append(int(hg[at]))
            at += 1
        return out

    at = 27 + 2 * nv
    edges = 0
    for i in range(nv):  # the neighbour lists, back to back in vertex order
        assert hg[ga + 27 + i] == at
        nbr = lst(ga + at)
        at += len(nbr) + 1
        edges += len(nbr)
        sides, corners = set(), set()
        for loop in loops:
            k = list(loop).index(i) if i in loop else -1
            if k >= 0:
                sides |= {int(loop[k - 1]), int(loop[(k + 1) % len(loop)])}
                corners |= set(int(j) for j in loop) - {i}
        assert nbr == sorted(set(nbr)) and sides <= set(nbr) <= corners
    assert edges == 2 * (3 * nv - 6)
    for i in range(nv):  # then the polygon lists
        assert hg[ga + 27 + nv + i] == at
        polys = lst(ga + at)
        at += len(polys) + 1
        assert polys == [f for f, loop in enumerate(loops) if i in loop]
    assert at == len(hg)
    for c in range(27):
        u = np.array([c // 9 - 1, (c // 3) % 3 - 1, c % 3 - 1], dtype=float)
        p = u[0] * hv[:nv, 0] + u[1] * hv[:nv, 1] + u[2] * hv[:nv, 2]
        assert hg[ga + c] == int(np.argmax(p))


@pytest.mark.parametrize("other", ["plane", "box", "mesh", "capsule", "cylinder", "hfield"])
def test_collision_with_hull_graphs_equals_without(other, monkeypatch):
    """Every pose collides to the same contacts, bit for bit, with and without hull graphs.

    The fine rounded box (248 vertices, 394 faces) against another geom at seeded poses,
    one in five of them axis-aligned (faces resting on faces: the ties).
    """
    verts = _meshes()["rounded box 6"]
    rng = np.random.default_rng(7)
    if other in ("plane", "hfield"):
        geom = ('<geom type="plane" size="0 0 1" margin="0.01"/>' if other == "plane" else
                '<geom type="hfield" hfield="h" margin="0.01"/>')
    elif other == "mesh":
        geom = '<body><freejoint/><geom type="mesh" mesh="m" margin="0.01"/></body>'
    else:
        size = {"box": "0.1 0.15 0.07", "capsule": "0.08 0.15", "cylinder": "0.1 0.12"}[other]
        geom = (f'<body><freejoint/><geom type="{other}" size="{size}" margin="0.01"/>'
                "</body>")
    xml = _mesh_xml(verts, geom)
    if other == "hfield":
        elev = " ".join(f"{x:.3f}" for x in rng.uniform(0, 1, 25))
        xml = xml.replace("</asset>", '<hfield name="h" nrow="5" ncol="5" '
                          f'size="0.5 0.5 0.1 0.05" elevation="{elev}"/></asset>')
    with_graph = js.load_string(xml)
    monkeypatch.setattr(H, "GRAPH_MIN_VERT", 10**9)
    without = js.load_string(xml)
    assert with_graph.mesh_hullgraphadr[0] >= 0 and without.mesh_hullgraphadr[0] == -1
    d1, d2 = js.make_data(with_graph), js.make_data(without)
    plane = other in ("plane", "hfield")
    touching = 0
    for i in range(300):
        q = d1.qpos.copy()
        flat = i % 5 == 0
        quat = np.array([1.0, 0, 0, 0]) if flat else random_quat(rng)
        if plane:
            q[0:3] = [rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3),
                      0.07 + 0.01 * rng.integers(0, 3) if flat else rng.uniform(-0.05, 0.2)]
            q[3:7] = quat
        else:
            q[3:7] = [1.0, 0, 0, 0] if flat else random_quat(rng)
            u = np.eye(3)[rng.integers(0, 3)] if flat else rng.normal(size=3)
            q[7:10] = u / np.linalg.norm(u) * rng.uniform(0.1, 0.2 if flat else 0.3)
            q[10:14] = quat
        d1.qpos[:] = q
        d2.qpos[:] = q
        n1, n2 = collision(with_graph, d1), collision(without, d2)
        assert n1 == n2
        touching += n1 > 0
        for f in ("dist", "pos", "frame"):
            assert np.array_equal(getattr(d1.contact, f)[:n1], getattr(d2.contact, f)[:n1])
    assert touching > 60
