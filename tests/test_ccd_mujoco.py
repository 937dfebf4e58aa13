"""MuJoCo's GJK and EPA (collision/ccd.py) stop where MuJoCo 4.0's do, with its bits.

jointspace runs MuJoCo's algorithm at the model's ccd_iterations and ccd_tolerance
(docs/conventions.md, "Convex collision"), as MuJoCo 4.0's binary computes it: GJK goes on
from its subalgorithm's projection point, and a triangle's weights are its projected areas
over their sum (the published source differs in both, and then drifted from 4.0 by 1 ulp
after two iterations and 8e-13 m after ten). Its distance and witness points between
separated shapes (GJK) and penetrating ones (EPA) equal MuJoCo 4.0's `mj_geomDistance` (the
distance and fromto sensors) bit for bit after 1 to 10 iterations. Contacts of deep and
shallow pairs are compared over many poses by tests/test_collision_parity.py.
"""

import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError

mujoco = pytest.importorskip("mujoco")

XML = """<mujoco><option ccd_iterations="{n}" ccd_tolerance="{tol}"/><worldbody>
<geom name="a" type="ellipsoid" size=".1 .15 .07" euler="10 20 30"/>
<body pos="{x} .1 .05" euler="-40 15 5"><joint type="free"/>
<geom name="b" type="{t}" size="{s}"/></body></worldbody>
<sensor><distance geom1="a" geom2="b" cutoff="1"/><fromto geom1="a" geom2="b" cutoff="1"/>
</sensor></mujoco>"""
SHAPES = {"ellipsoid": ".12 .05 .09", "cylinder": ".05 .08", "box": ".05 .06 .07"}


def _both(n, x, t, q):
    """Our and MuJoCo's sensordata (distance, fromto) with body b at x turned by quaternion q."""
    xml = XML.format(n=n, tol=1e-12, x=x, t=t, s=SHAPES[t])
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    m = js.load_string(xml)
    d = js.make_data(m)
    qpos = mm.qpos0.copy()
    qpos[3:7] = q
    md.qpos[:] = qpos
    d.qpos[:] = qpos
    mujoco.mj_forward(mm, md)
    js.forward(m, d)
    return d.sensordata.copy(), md.sensordata.copy()


@pytest.mark.parametrize("t", list(SHAPES))
@pytest.mark.parametrize("n", [1, 2, 3, 5, 10])
def test_gjk_distance_equals_mujoco_bit_for_bit(t, n):
    """ccd_iterations = n: the distance and witness points MuJoCo's GJK has after n steps."""
    rng = np.random.default_rng(n)
    for x in (0.25, 0.3, 0.4):
        q = rng.normal(size=4)
        ours, theirs = _both(n, x, t, q / np.linalg.norm(q))
        assert theirs[0] > 0.05  # separated: GJK alone
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("t", list(SHAPES))
@pytest.mark.parametrize("n", [5, 8, 10])
def test_epa_depth_equals_mujoco_bit_for_bit(t, n):
    """Penetrating shapes: EPA's depth and witness points after n steps, MuJoCo's bits.

    (ccd_iterations bounds GJK and EPA each; GJK needs four to enclose the origin.)
    """
    rng = np.random.default_rng(10 + n)
    for x in (0.0, 0.03, 0.06):
        q = rng.normal(size=4)
        ours, theirs = _both(n, x, t, q / np.linalg.norm(q))
        assert theirs[0] < 0  # penetrating: GJK's tetrahedron, then EPA
        np.testing.assert_array_equal(ours, theirs)


def test_more_iterations_move_the_result_as_mujoco():
    """Raising ccd_iterations changes both engines' distance alike (the option is honored)."""
    out = []
    for n in (2, 35):
        xml = XML.format(n=n, tol=1e-12, x=0.25, t="ellipsoid", s=SHAPES["ellipsoid"])
        m = js.load_string(xml)
        d = js.make_data(m)
        js.forward(m, d)
        out.append(d.sensordata[0])
    assert out[0] - out[1] > 1e-3  # two GJK steps are far from the distance


def test_ccd_options_compile_as_mujoco():
    """<option ccd_iterations ccd_tolerance> land in m.opt as MuJoCo compiles them."""
    xml = XML.format(n=50, tol=1e-9, x=0.3, t="box", s=SHAPES["box"])
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    assert m.opt.ccd_iterations == mm.opt.ccd_iterations == 50
    assert m.opt.ccd_tolerance == mm.opt.ccd_tolerance == 1e-9
    default = js.load_string("<mujoco><worldbody/></mujoco>")
    assert (default.opt.ccd_iterations, default.opt.ccd_tolerance) == (35, 1e-6)


@pytest.mark.parametrize("attr", ['ccd_iterations="-1"', 'ccd_tolerance="-1e-6"'])
def test_negative_ccd_options_are_refused(attr):
    with pytest.raises(ModelError, match="ccd_"):
        js.load_string(f"<mujoco><option {attr}/><worldbody/></mujoco>")


def test_ccd_options_written_from_python_are_checked():
    m = js.load_string("<mujoco><worldbody/></mujoco>")
    m.opt.ccd_iterations = 100
    assert m.opt.ccd_iterations == 100
    with pytest.raises(ValueError, match="ccd_iterations"):
        m.opt.ccd_iterations = -3
    with pytest.raises(ValueError, match="ccd_tolerance"):
        m.opt.ccd_tolerance = float("nan")
