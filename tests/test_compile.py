"""The compiler's validation: every bad model gets an error (or warning) that says where and why."""

import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.io.spec import InertialSpec, ModelSpec


def _spec_with_body(**inertial):
    spec = ModelSpec()
    b = spec.world.add_body(name="link", pos=np.r_[0, 0, 1.0], source="robot.xml:7 <body>")
    b.add_joint(type="hinge", name="j", axis=np.r_[0, 1.0, 0])
    if inertial:
        b.inertial = InertialSpec(source="robot.xml:8 <inertial>", **inertial)
    else:
        b.add_geom(type="sphere", size=np.r_[0.1, 0, 0])
    return spec, b


def test_negative_mass_names_the_body_and_line():
    spec, _ = _spec_with_body(mass=-1.0, diaginertia=np.r_[1.0, 1, 1])
    with pytest.raises(js.ModelError, match=r"body 'link': mass must be non-negative.*robot.xml:8"):
        js.compile_model(spec)


def test_triangle_inequality_names_body_and_offers_balanceinertia():
    spec, _ = _spec_with_body(mass=1.0, diaginertia=np.r_[1.0, 0.1, 0.1])
    with pytest.raises(js.ModelError, match=r"body 'link'.*triangle inequality.*balanceinertia"):
        js.compile_model(spec)
    spec.balanceinertia = True
    m = js.compile_model(spec)
    a, b, c = m.body_inertia[1]
    assert a <= b + c + 1e-12 and b <= a + c + 1e-12 and c <= a + b + 1e-12


def test_massless_dof_warns_and_names_the_joint():
    spec = ModelSpec()
    b = spec.world.add_body(name="ghost")
    b.add_joint(type="slide", name="float", axis=np.r_[1.0, 0, 0])
    with pytest.warns(js.JointspaceWarning, match=r"M is singular.*'float'"):
        m = js.compile_model(spec)
    assert m.singular_dofs == [0]
    d = js.make_data(m)
    js.kinematics(m, d)  # kinematics still works


def test_massless_intermediate_link_with_massive_child_is_fine():
    spec = ModelSpec()
    a = spec.world.add_body(name="a")
    a.add_joint(type="hinge", name="j0", axis=np.r_[0, 0, 1.0])
    b = a.add_body(name="b", pos=np.r_[0.5, 0, 0])
    b.add_joint(type="hinge", name="j1", axis=np.r_[0, 0, 1.0])
    b.add_geom(type="sphere", size=np.r_[0.1, 0, 0], pos=np.r_[0.3, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = js.compile_model(spec)
    assert m.singular_dofs == [] and m.body_mass[1] == 0


def test_duplicate_names_cite_both_places():
    spec = ModelSpec()
    spec.world.add_body(name="x", source="a.xml:3 <body name='x'>").add_geom(size=np.r_[0.1, 0, 0])
    spec.world.add_body(name="x", source="a.xml:9 <body name='x'>").add_geom(size=np.r_[0.1, 0, 0])
    with pytest.raises(js.ModelError, match=r"duplicate body name 'x'.*a.xml:3.*a.xml:9"):
        js.compile_model(spec)


@pytest.mark.parametrize("gtype, size", [("sphere", [0.0]), ("capsule", [0.1, -0.2]),
                                         ("box", [0.1, 0.1, 0.0])])
def test_degenerate_geom_sizes(gtype, size):
    spec = ModelSpec()
    spec.world.add_body(name="b").add_geom(type=gtype, size=np.array(size, float),
                                           source="g.xml:4 <geom>")
    with pytest.raises(js.ModelError, match=rf"geom of type {gtype} needs.*positive.*g.xml:4"):
        js.compile_model(spec)


def test_unknown_types_and_bad_joint_placement():
    spec, b = _spec_with_body()
    b.joints[0].type = "universal"
    with pytest.raises(js.ModelError, match="unknown joint type 'universal'"):
        js.compile_model(spec)
    spec, b = _spec_with_body()
    b.add_joint(type="free")
    with pytest.raises(js.ModelError, match="free joint must be the only joint"):
        js.compile_model(spec)
    spec, b = _spec_with_body()
    b.geoms[0].type = "cone"
    with pytest.raises(js.ModelError, match="unknown geom type 'cone'"):
        js.compile_model(spec)


def test_nonfinite_values_are_rejected():
    spec, b = _spec_with_body()
    b.pos = np.r_[0, np.nan, 0]
    with pytest.raises(js.ModelError, match="body pos must be finite"):
        js.compile_model(spec)


def test_inertia_from_geoms_parallel_axis():
    """Two spheres: mass, com and inertia by hand (the parallel-axis theorem)."""
    spec = ModelSpec()
    b = spec.world.add_body(name="dumbbell")
    b.add_joint(type="free")
    r, rho, L = 0.1, 1000.0, 0.5
    for x in (-L, L):
        b.add_geom(type="sphere", size=np.r_[r, 0, 0], pos=np.r_[x, 0, 0], density=rho)
    m = js.compile_model(spec)
    ms = rho * 4 / 3 * np.pi * r**3
    i0 = 0.4 * ms * r * r
    assert m.body_mass[1] == pytest.approx(2 * ms, rel=1e-14)
    np.testing.assert_allclose(m.body_ipos[1], 0, atol=1e-15)
    np.testing.assert_allclose(sorted(m.body_inertia[1]),
                               sorted([2 * i0, 2 * i0 + 2 * ms * L * L, 2 * i0 + 2 * ms * L * L]),
                               rtol=1e-12)
