"""The Lagrangian side: energies, momentum, Coriolis matrix, Christoffel symbols.

Checked against MuJoCo (mj_energyPos/Vel), Pinocchio (computeCoriolisMatrix) and, above
all, the calculus they must satisfy: gravity and spring forces are energy gradients,
Ṁ − 2C is skew-symmetric, C v = c − g, Γ comes from ∂M/∂q, unforced motion without gravity
is a geodesic, the Euler–Lagrange equation reproduces RNEA, power balances dH/dt, and RK4
conserves energy. Derivatives with respect to q move along `integrate_pos` (the local
tangent coordinates for ball and free joints).
"""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

import jointspace as js
from tests._models import (
    BALL,
    FREE,
    HINGE,
    SLIDE,
    PinAdapter,
    pinocchio_tree,
    random_state,
    random_tree,
    random_tree_desc,
)

TOL = 1e-10  # identities computed two ways in float64, relative to max(1, |value|)
EPS = 1e-6  # central-difference step along integrate_pos
FD_TOL = 1e-7  # central differences: O(EPS²) truncation plus O(1e-16 / EPS) round-off
DRIFT_TOL = 1e-6  # RK4 energy drift over 10 s at h = 1 ms, relative to the initial energy
NSTATES = 5

# springs on every joint kind (free, ball, hinge, slide), gravity on, armature
SPRINGS = """<mujoco model="springs">
<option><flag contact="disable" constraint="disable" energy="enable"/></option>
<worldbody>
<body name="a" pos="0 0 1"><joint name="root" type="free" stiffness="4"/>
 <geom type="box" size=".1 .2 .3" pos=".05 0 0"/>
 <body name="b" pos=".3 0 0" quat="0.8 0.2 0.1 0.4">
  <joint name="ball" type="ball" pos="0 .1 0" stiffness="2" armature="0.02"/>
  <geom type="ellipsoid" size=".1 .2 .15" pos=".1 .1 0"/>
  <body name="c" pos="0 .3 0">
   <joint name="hinge" type="hinge" axis="0 1 1" stiffness="3" springref="0.4"/>
   <joint name="slide" type="slide" axis="1 0 0" stiffness="20" springref="-0.1"
          armature="0.1"/>
   <geom type="sphere" size=".1" pos="0 0 -.2"/>
  </body>
 </body>
</body>
</worldbody></mujoco>"""

TREES = {  # name: (random_tree keyword arguments)
    "hinge_slide": dict(seed=11, nbody=7, kinds=(HINGE, SLIDE), free_root=False,
                        branching=0.4),
    "fixed_ball": dict(seed=12, nbody=7, kinds=(HINGE, SLIDE, BALL), free_root=False,
                       branching=0.5, armature=0.02),
    "floating": dict(seed=13, nbody=8, kinds=(HINGE, SLIDE, BALL), free_root=True,
                     branching=0.4),
}
HOLONOMIC = ("hinge_slide",)


def _close(actual, desired, what, tol=TOL):
    """Assert |actual - desired| <= tol · max(1, max |desired|)."""
    desired = np.asarray(desired, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(desired))))
    err = float(np.max(np.abs(np.asarray(actual) - desired)))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


def _tree(name, gravity=(0.0, 0.0, -9.81)):
    m = js.load_string(random_tree(**TREES[name], gravity=gravity))
    return m, js.make_data(m)


def _fd(m, q, direction, f):
    """Central difference of f along q ⊕ t·direction at t = 0."""
    qp = js.integrate_pos(m, q, direction, EPS)
    qm = js.integrate_pos(m, q, direction, -EPS)
    return (f(qp) - f(qm)) / (2.0 * EPS)


def _gradient(m, q, f):
    """(nv,) or (…, nv) gradient of f along each tangent direction e_k."""
    return np.stack([_fd(m, q, np.eye(m.nv)[k], f) for k in range(m.nv)], axis=-1)


def test_energies_match_mujoco():
    """d.energy after forward, and the energy functions, equal mj_energyPos/Vel."""
    m = js.load_string(SPRINGS)
    d = js.make_data(m)
    mm = mujoco.MjModel.from_xml_string(SPRINGS)
    md = mujoco.MjData(mm)
    rng = np.random.default_rng(0)
    for _ in range(NSTATES):
        q, v, _ = random_state(m, rng)
        md.qpos[:], md.qvel[:] = q, v
        mujoco.mj_forward(mm, md)
        d.qpos[:], d.qvel[:] = q, v
        js.forward(m, d)
        _close(d.energy, md.energy, "d.energy")
        assert js.potential_energy(m, d, q) == pytest.approx(md.energy[0], abs=TOL)
        assert js.kinetic_energy(m, d, q, v) == pytest.approx(md.energy[1], abs=TOL)
        M = js.crba(m, d, q)
        assert js.kinetic_energy(m, d, q, v) == pytest.approx(0.5 * v @ M @ v, rel=TOL)
        _close(js.momentum(m, d, q, v), M @ v, "momentum")
        assert js.hamiltonian(m, d, q, v) == pytest.approx(md.energy.sum(), abs=TOL)



@pytest.mark.parametrize("sensor", ["", "e_potential", "e_kinetic"])
def test_energy_follows_the_energy_flag_as_mujoco(sensor):
    """Without the energy flag, forward and step leave d.energy zero, as mj_forward does.

    An energy sensor fills its own half (MuJoCo 4.0 leaves d.energy to its lazy flags
    there: e_potential keeps a stale kinetic half, e_kinetic's half is zeroed after it is
    computed, so only the sensor values are compared); the energy functions still compute
    the energies.
    """
    xml = SPRINGS.replace(' energy="enable"', "")
    if sensor:
        xml = xml.replace("</worldbody>", f"</worldbody><sensor><{sensor}/></sensor>")
    m = js.load_string(xml)
    d = js.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    q, v, _ = random_state(m, np.random.default_rng(1))
    md.qpos[:], md.qvel[:] = q, v
    d.qpos[:], d.qvel[:] = q, v
    d.energy[:] = 7.0  # stale values, overwritten
    md.energy[:] = 7.0
    half = {"": None, "e_potential": 0, "e_kinetic": 1}[sensor]
    for k in range(4):
        if k == 0:
            mujoco.mj_forward(mm, md)
            js.forward(m, d)
        else:
            mujoco.mj_step(mm, md)
            js.step(m, d)
        if half is None:
            _close(d.energy, md.energy, f"d.energy, call {k}")
            assert not md.energy.any()
        else:
            _close(d.sensordata, md.sensordata, f"sensordata, call {k}")
            assert d.energy[half] == d.sensordata[0] and d.energy[1 - half] == 0.0
    e = js.hamiltonian(m, d, q, v)
    md.qpos[:], md.qvel[:] = q, v
    mm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    mujoco.mj_forward(mm, md)
    assert e == pytest.approx(md.energy.sum(), abs=TOL)

def test_gravity_and_springs_are_energy_gradients():
    """At rest, qfrc_passive − qfrc_bias = −∂V/∂q (gravity and springs, all joint kinds)."""
    m = js.load_string(SPRINGS)
    d = js.make_data(m)
    rng = np.random.default_rng(1)
    for _ in range(NSTATES):
        q, _, _ = random_state(m, rng)
        d.qpos[:] = q
        d.qvel[:] = 0.0
        js.forward(m, d)
        grad = _gradient(m, q, lambda qq: js.potential_energy(m, d, qq))
        _close(d.qfrc_passive - d.qfrc_bias, -grad, "−∂V/∂q", FD_TOL)


@pytest.mark.parametrize("name", sorted(TREES))
def test_gravity_force_is_potential_gradient(name):
    """gravity_forces(q) = ∂V/∂q on random trees (free and ball joints included)."""
    m, d = _tree(name)
    rng = np.random.default_rng(2)
    for _ in range(NSTATES):
        q, _, _ = random_state(m, rng)
        grad = _gradient(m, q, lambda qq: js.potential_energy(m, d, qq))
        _close(js.gravity_forces(m, d, q), grad, "g = ∂V/∂q", FD_TOL)


@pytest.mark.parametrize("name", sorted(TREES))
def test_coriolis_matrix_factorizes_bias(name):
    """C v = c(q, v) − g(q), and Ṁ − 2C is skew-symmetric (Ṁ by differences along v)."""
    m, d = _tree(name)
    rng = np.random.default_rng(3)
    for _ in range(NSTATES):
        q, v, _ = random_state(m, rng)
        C = js.coriolis_matrix(m, d, q, v)
        c = js.bias_forces(m, d, q, v) - js.gravity_forces(m, d, q)
        _close(C @ v, c, "C v")
        mdot = _fd(m, q, v, lambda qq: js.crba(m, d, qq))
        skew = mdot - 2.0 * C
        _close(skew + skew.T, np.zeros_like(skew), "Ṁ − 2C skew", FD_TOL * np.abs(mdot).max())


def _free_b_dot(ad, q, v):
    """Time derivative of PinAdapter.b_matrix: Ṙ = R [ω]ₓ on each free joint's block."""
    b = ad.b_matrix(q)
    out = np.zeros_like(b)
    for kind, _, da, _, iv, _, _ in ad.rows:
        if kind == FREE:
            w = v[da + 3:da + 6]
            wx = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
            out[da:da + 3, iv:iv + 3] = b[da:da + 3, iv:iv + 3] @ wx
    return out


@pytest.mark.parametrize("name", sorted(TREES))
def test_coriolis_matrix_matches_pinocchio(name):
    """C equals pin.computeCoriolisMatrix mapped to our velocities.

    With v = B v_pin (B constant except on free joints): C = B C_pin Bᵀ + M B Ḃᵀ.
    """
    desc = random_tree_desc(**TREES[name])
    m = js.load_string(desc.mjcf())
    d = js.make_data(m)
    pm = pinocchio_tree(desc)
    pd = pm.createData()
    ad = PinAdapter(m, pm)
    rng = np.random.default_rng(4)
    for _ in range(NSTATES):
        q, v, _ = random_state(m, rng)
        C = js.coriolis_matrix(m, d, q, v)
        c_pin = pin.computeCoriolisMatrix(pm, pd, ad.q(q), ad.v(q, v))
        b = ad.b_matrix(q)
        expected = b @ c_pin @ b.T + js.crba(m, d, q) @ b @ _free_b_dot(ad, q, v).T
        _close(C, expected, "C vs Pinocchio")


@pytest.mark.parametrize("name", sorted(TREES))
def test_inertia_derivative_and_christoffel(name):
    """∂M/∂q equals central differences of M; Γ is built from it and symmetric in (j, k)."""
    m, d = _tree(name)
    rng = np.random.default_rng(5)
    q, _, _ = random_state(m, rng)
    dm = js.inertia_derivative(m, d, q)
    dm_fd = _gradient(m, q, lambda qq: js.crba(m, d, qq))
    _close(dm, dm_fd, "∂M/∂q", FD_TOL)
    G = js.christoffel(m, d, q)
    _close(G, 0.5 * (dm + dm.transpose(0, 2, 1) - dm.transpose(2, 0, 1)), "Γ from ∂M")
    _close(G, G.transpose(0, 2, 1), "Γ symmetric in j, k")
    G2 = js.christoffel_second_kind(m, d, q)
    M = js.crba(m, d, q)
    _close(np.einsum("il,ljk->ijk", M, G2), G, "M Γ² = Γ")


@pytest.mark.parametrize("name", HOLONOMIC)
def test_coriolis_from_christoffel(name):
    """Hinge/slide coordinates: C_ij = Σ_k Γ_ijk v_k and c − g = Γ(v, v)."""
    m, d = _tree(name)
    rng = np.random.default_rng(6)
    for _ in range(NSTATES):
        q, v, _ = random_state(m, rng)
        G = js.christoffel(m, d, q)
        _close(js.coriolis_matrix(m, d, q, v), G @ v, "C = Γ v")
        c = js.bias_forces(m, d, q, v) - js.gravity_forces(m, d, q)
        _close(np.einsum("ijk,j,k->i", G, v, v), c, "Γ(v, v) = c − g")


def test_christoffel_is_not_the_bias_for_a_free_body():
    """Local (non-holonomic) coordinates: a free body has Γ = 0 yet c = ω × I ω ≠ 0."""
    m = js.load_string("""<mujoco><option gravity="0 0 0"/><worldbody><body>
        <freejoint/><inertial pos="0 0 0" mass="2" diaginertia="1 2 3"/></body>
        </worldbody></mujoco>""")
    d = js.make_data(m)
    q = m.qpos0.copy()
    v = np.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0])
    _close(js.christoffel(m, d, q), np.zeros((6, 6, 6)), "Γ of a free body")
    c = js.bias_forces(m, d, q, v)
    _close(c[3:], np.cross(v[3:], np.array([1.0, 2.0, 3.0]) * v[3:]), "ω × I ω")
    _close(js.coriolis_matrix(m, d, q, v) @ v, c, "C v")


def test_unforced_motion_is_geodesic():
    """Without gravity, springs, damping or inputs: qacc = −Γ²(v, v) (hinge/slide tree)."""
    m, d = _tree("hinge_slide", gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(7)
    for _ in range(NSTATES):
        q, v, _ = random_state(m, rng)
        d.qpos[:], d.qvel[:] = q, v
        js.forward(m, d)
        G2 = js.christoffel_second_kind(m, d, q)
        _close(d.qacc, -np.einsum("ijk,j,k->i", G2, v, v), "geodesic")


def test_euler_lagrange_equals_rnea():
    """τ = d/dt ∂L/∂v − ∂L/∂q by finite differences of L = T − V equals rnea(q, v, a).

    d/dt (M v) = M a + Ṁ v; Ṁ v and ∂L/∂q come from central differences (hinge/slide).
    """
    m, d = _tree("hinge_slide")
    rng = np.random.default_rng(8)
    for _ in range(NSTATES):
        q, v, a = random_state(m, rng)

        def lagrangian(qq, vv=v):
            return js.kinetic_energy(m, d, qq, vv) - js.potential_energy(m, d, qq)

        pdot = js.crba(m, d, q) @ a + _fd(m, q, v, lambda qq: js.momentum(m, d, qq, v))
        tau = pdot - _gradient(m, q, lambda qq: lagrangian(qq))
        _close(tau, js.rnea(m, d, q, v, a), "Euler–Lagrange τ", FD_TOL)


def test_power_balance():
    """dH/dt = vᵀ qfrc_applied along the forward dynamics (springs, gravity, no damping)."""
    m = js.load_string(SPRINGS)
    d = js.make_data(m)
    rng = np.random.default_rng(9)
    for _ in range(NSTATES):
        q, v, _ = random_state(m, rng)
        tau = rng.normal(size=m.nv)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, v, tau
        js.forward(m, d)
        a = d.qacc.copy()
        hp = js.hamiltonian(m, d, js.integrate_pos(m, q, v, EPS), v + EPS * a)
        hm = js.hamiltonian(m, d, js.integrate_pos(m, q, v, -EPS), v - EPS * a)
        assert (hp - hm) / (2 * EPS) == pytest.approx(v @ tau, abs=FD_TOL * (1 + abs(v @ tau)))


def test_work_along_driven_trajectory():
    """RK4 on the 2-link arm under piecewise-constant torques: ΔH = Σ τ_k · Δq_k."""
    m = js.models.arm2()
    m.opt.integrator = "RK4"
    d = js.make_data(m)
    d.qpos[:] = [0.3, -0.5]
    h0 = js.hamiltonian(m, d, d.qpos, d.qvel)
    work = 0.0
    for k in range(1000):
        tau = np.array([np.sin(0.01 * k), 0.5 * np.cos(0.013 * k)])
        d.qfrc_applied[:] = tau
        q_before = d.qpos.copy()
        js.step(m, d)
        work += tau @ (d.qpos - q_before)
    h1 = js.hamiltonian(m, d, d.qpos, d.qvel)
    assert h1 - h0 == pytest.approx(work, abs=1e-8)
    assert abs(work) > 0.1


def test_rk4_conserves_energy_of_passive_humanoid():
    """27-dof humanoid, no damping, inputs, gravity, limits or contacts: RK4 for 10 s at 1 ms.

    The model's contact and limit switches are turned off so that only the smooth dynamics
    (springs, armature, Coriolis) act.
    """
    m = js.models.humanoid()
    m.dof_damping[:] = 0.0
    m.jnt_limited[:] = 0
    m.geom_contype[:] = 0
    m.geom_conaffinity[:] = 0
    m.opt.gravity = (0.0, 0.0, 0.0)
    m.opt.integrator = "RK4"
    m.opt.timestep = 0.001
    d = js.make_data(m)
    rng = np.random.default_rng(10)
    d.qpos[:], d.qvel[:], _ = random_state(m, rng, scale=0.5)
    h0 = js.hamiltonian(m, d, d.qpos, d.qvel)
    js.step(m, d, 10_000)
    assert d.time == pytest.approx(10.0)
    h1 = js.hamiltonian(m, d, d.qpos, d.qvel)
    assert abs(h1 - h0) <= DRIFT_TOL * abs(h0)


def test_arm2_closed_form():
    """The slides' 2-link arm: M = JᵀDJ and c = JᵀDJ̇q̇ from h(q) equal CRBA and RNEA."""
    l1, l2, m1, m2 = 0.7, 0.5, 1.3, 0.8
    m = js.models.arm2(l1=l1, l2=l2, m1=m1, m2=m2, gravity=False)
    d = js.make_data(m)
    D = np.diag([m1, m1, m2, m2])
    inertia = js.models.POINT_INERTIA * np.array([[2.0, 1.0], [1.0, 1.0]])
    rng = np.random.default_rng(11)
    for _ in range(NSTATES):
        q = rng.uniform(-np.pi, np.pi, 2)
        v = rng.normal(size=2)
        s1, c1 = np.sin(q[0]), np.cos(q[0])
        s12, c12 = np.sin(q.sum()), np.cos(q.sum())
        # h(q) = (l1 c1, l1 s1, l1 c1 + l2 c12, l1 s1 + l2 s12);  J = ∂h/∂q
        J = np.array([[-l1 * s1, 0.0], [l1 * c1, 0.0],
                      [-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
        w1, w12 = v[0], v.sum()
        hdd = np.array([-l1 * c1 * w1**2, -l1 * s1 * w1**2,
                        -l1 * c1 * w1**2 - l2 * c12 * w12**2,
                        -l1 * s1 * w1**2 - l2 * s12 * w12**2])  # J̇ q̇
        _close(js.crba(m, d, q), J.T @ D @ J + inertia, "M = JᵀDJ")
        _close(js.bias_forces(m, d, q, v), J.T @ D @ hdd, "c = JᵀDJ̇q̇")
