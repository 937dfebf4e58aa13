"""iLQR pushes a box through contact with a two-link arm, on finite-differenced step Jacobians.

Run: python examples/ilqr_push.py [--horizon 1.5] [--iterations 40] [--plot push.png]

A planar arm (two hinges about the vertical, a motor on each) sweeps over a table; its
fingertip, a sphere, starts 2 cm behind a box that rests on the table on two slide joints
(x along the table, z up: its weight is carried by the four corner contacts, so the table's
Coulomb friction, μ = 0.3, holds it). Iterative LQR (Li & Todorov 2004; structure as
examples/ilqr_cartpole.py) finds the torques that bring the fingertip to the box's back face
and push the box 15 cm along the table to rest at its target. The state has no free or ball
joint, so x = (qpos, qvel) directly. The fingertip and box contacts are softened
(solref 0.05 s) so that the step is smoother to linearize.

Each iteration linearizes every step with `js.transition_derivatives(m, d)`: MuJoCo's
mjd_transitionFD, forward differences of `step` with its contacts (fingertip–box, box–table)
and friction. Until the fingertip touches the box, the step carries no information about how
the arm moves it, so a small Gauss–Newton "reach" cost pulls the fingertip to the box's back
face. A box held by static friction barely responds to a small force in the linearization
(only the soft contacts' creep), so the first guess is a push that slides it: Jᵀ (2 N, 0) for
the first 30% of the horizon. The derivatives are computed and timed both ways,
`reuse_hessian=True` (the default: control and velocity columns solve once with the
unperturbed step's Newton Hessian; these drive the optimization) and False (the solver in
every column, as MuJoCo).

After the optimization, `js.inverse` at every knot (qacc = (v_{k+1} − v_k)/h, the Euler step's
own acceleration) gives the generalized forces the trajectory implies: the arm's must be the
motor torques, the box's zero (only the contacts and gravity act on it). At the knots where
the fingertip touches the box, `js.inverse_derivatives` rebuilds the velocity rows of the step
Jacobians by the implicit function theorem (f(q, v, a(q, v, u)) = τ(u) gives
∂a/∂(q, v, u) = −Fa⁻¹ (Fq, Fv, −gear)), and the script compares them with
transition_derivatives'. inverse_derivatives' position columns are closed-form for the
box–table (plane–box) contacts, but the fingertip–box contact is sphere–box, so at those knots
they are finite-differenced (as with analytic=False); its time against analytic=False is
reported over all knots and over the contact knots.

With the defaults (1.5 s, 150 steps of 10 ms, 2 cores, one busy, 2026-11-28): the cost falls
from 343 (the first guess leaves the box at 9.7 cm and the arm swinging) to 2.0 in 17
iterations; the box ends 0.8 mm short of its target at rest (0.01 mm/s), the fingertip on it
at 119 of the 150 knots. transition_derivatives takes 20 ms per iteration with
reuse_hessian=True against 27 ms with False (1.3x); the two differ by up to 0.05 of the
largest entry over all iterations (the solver's tolerance, 1e-8, over eps = 1e-6 is of that
order), and by 1e-13 or less at the 9 contact knots named below. The implied forces equal
the applied ones to 8e-13 N·m. The rebuilt velocity rows agree with transition_derivatives'
to a median of 7e-4 of the largest entry (forward differences, O(eps) off on stiff
contacts), within 1e-2 at 110 of the 119 contact knots. At 8 of the other 9 a row changes
zone within eps, so that forward and centered differences of the inverse (6 knots) or of the
step (2) differ there by 0.05 to 5 times the largest entry: box corners at the table's
surface (2e-8 m deep) or friction edges whose force is near zero, where any derivative is
one-sided; at the last (0.055) both are smooth and the gap stays with centered differences.
inverse_derivatives over the 150 knots: 8.2 ms against 7.3 ms with analytic=False (0.9x, the
closed form does not pay here: at the 119 knots with the sphere–box contact both difference
the position columns, 7.1 vs 6.0 ms). The whole run takes about 10 s after compilation.
"""

import argparse
import time
import warnings

import numpy as np

import jointspace as js
from jointspace.errors import JointspaceWarning
from jointspace.viz.plot import pyplot

PUSH = """<mujoco model="push">
  <option timestep="0.01" integrator="Euler"/>
  <worldbody>
    <geom name="table" type="plane" size="1 1 0.1" contype="1" conaffinity="1" friction="0.3"/>
    <body name="upper" pos="0 0 0.05">
      <joint name="shoulder" type="hinge" axis="0 0 1" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.015" mass="0.3"
            contype="0" conaffinity="0"/>
      <body name="fore" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 0 1" armature="0.01"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.012" mass="0.2"
              contype="0" conaffinity="0"/>
        <geom name="tip" type="sphere" pos="0.3 0 0" size="0.02" mass="0.05" friction="0.3"
              solref="0.05 1" contype="2" conaffinity="2"/>
      </body>
    </body>
    <body name="box" pos="0.45 0 0.05">
      <joint name="box_x" type="slide" axis="1 0 0"/>
      <joint name="box_z" type="slide" axis="0 0 1"/>
      <geom name="box" type="box" size="0.05 0.05 0.05" mass="0.5" friction="0.3"
            solref="0.05 1" contype="3" conaffinity="3"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="shoulder" gear="1"/>
    <motor joint="elbow" gear="1"/>
  </actuator>
</mujoco>"""

LINK = 0.3  # m: both links
BOX_X0, BOX_HALF, TIP_R = 0.45, 0.05, 0.02  # m: the box's start, half size; fingertip radius
TARGET = 0.15  # m: how far along x the box is to be pushed
TIP_START = 0.36  # m: fingertip centre at the start, 2 cm behind the box's back face
PUSH_FORCE = 2.0  # N: the first guess's push, above the box's friction μ m g = 1.5 N
# line search: contacts starting and stopping, and the box sticking and slipping, make the
# cost rough along the Newton direction, so the search goes down to short steps
ALPHAS = (1.0, 0.5, 0.25, 0.1, 0.03, 0.01, 0.003, 0.001)
# relative agreement counted for the Jacobians rebuilt from inverse_derivatives: forward
# differences (eps 1e-6) of the stiff contacts are O(eps) off the derivative, measured 1e-3
JACOBIAN_AGREE = 1e-2
W_BOX = 3.0  # running weight on the box's x error (m)
W_REACH = 10.0  # running weight on the fingertip's offset from the box's back face (m)
W_VEL = 0.01  # running weight on all velocities
W_CTRL = 0.1  # running weight on the torques (N·m)
W_BOX_FINAL = 3000.0  # terminal weight on the box's x error
W_VEL_FINAL = 30.0  # terminal weight on the velocities (the box ends at rest)


def tip(q):
    """Fingertip (x, y) in the table plane and its Jacobian with respect to (q1, q2)."""
    s1, c1 = np.sin(q[0]), np.cos(q[0])
    s12, c12 = np.sin(q[0] + q[1]), np.cos(q[0] + q[1])
    p = LINK * np.array([c1 + c12, s1 + s12])
    J = LINK * np.array([[-s1 - s12, -s12], [c1 + c12, c12]])
    return p, J


def reach(x):
    """Residual r(x) = fingertip − (centre of the box's back face, 0) and ∂r/∂x."""
    p, J = tip(x[:2])
    r = p - np.array([BOX_X0 + x[2] - BOX_HALF - TIP_R, 0.0])
    Jx = np.zeros((2, len(x)))
    Jx[:, :2] = J
    Jx[0, 2] = -1.0
    return r, Jx


def stage(x, u, nv, final=False):
    """Cost of one knot and its Gauss–Newton derivatives (l, lx, lxx, lu, luu)."""
    n = len(x)
    wv = W_VEL_FINAL if final else W_VEL
    wb = W_BOX_FINAL if final else W_BOX
    e_box = x[2] - TARGET
    r, Jr = reach(x)
    l = 0.5 * (wb * e_box ** 2 + W_REACH * r @ r + wv * x[nv:] @ x[nv:])
    lx = W_REACH * Jr.T @ r
    lx[2] += wb * e_box
    lx[nv:] += wv * x[nv:]
    lxx = W_REACH * Jr.T @ Jr
    lxx[2, 2] += wb
    lxx[nv:, nv:] += wv * np.eye(n - nv)
    if final:
        return l, lx, lxx
    return l + 0.5 * W_CTRL * u @ u, lx, lxx, W_CTRL * u, W_CTRL * np.eye(len(u))


def total_cost(xs, us, nv):
    """Σ of the knots' running costs plus the terminal cost."""
    return (sum(stage(x, u, nv)[0] for x, u in zip(xs[:-1], us))
            + stage(xs[-1], None, nv, final=True)[0])


def rollout(m, d, x0, us):
    """States x_0..x_N from x0 under us, with each knot's warm start and fingertip contacts.

    Returns xs (N + 1, 2nv), the solver's warm start d.qacc_warmstart before each step
    (N, nv) and the number of fingertip–box contacts at each knot (N,).
    """
    nv = m.nv
    xs = np.empty((len(us) + 1, 2 * nv))
    warm = np.zeros((len(us), nv))
    touch = np.zeros(len(us), dtype=int)
    tip_id, box_id = m.id("geom", "tip"), m.id("geom", "box")
    xs[0] = x0
    d.qpos[:], d.qvel[:] = x0[:nv], x0[nv:]
    d.qacc_warmstart[:] = 0.0
    for k, u in enumerate(us):
        warm[k] = d.qacc_warmstart
        d.ctrl[:] = u
        js.step(m, d)
        g = d.contact_geom[:int(d.ncon[0])]
        touch[k] = np.sum(((g[:, 0] == tip_id) & (g[:, 1] == box_id))
                          | ((g[:, 0] == box_id) & (g[:, 1] == tip_id)))
        xs[k + 1, :nv] = d.qpos
        xs[k + 1, nv:] = d.qvel
    return xs, warm, touch


def linearize(m, d, xs, us, warm, reuse):
    """A_k, B_k of every step along the trajectory from transition_derivatives."""
    nv = m.nv
    As = np.empty((len(us), 2 * nv, 2 * nv))
    Bs = np.empty((len(us), 2 * nv, m.nu))
    for k in range(len(us)):
        d.qpos[:], d.qvel[:], d.ctrl[:] = xs[k, :nv], xs[k, nv:], us[k]
        d.qacc_warmstart[:] = warm[k]
        As[k], Bs[k] = js.transition_derivatives(m, d, reuse_hessian=reuse)
    return As, Bs


def backward(As, Bs, xs, us, nv, mu):
    """Feedback gains K and feedforward k of the regularized LQR problem, or None."""
    N, n = len(us), xs.shape[1]
    _, Vx, Vxx = stage(xs[-1], None, nv, final=True)
    K = np.empty((N, us.shape[1], n))
    kff = np.empty_like(us)
    for t in range(N - 1, -1, -1):
        A, B = As[t], Bs[t]
        _, lx, lxx, lu, luu = stage(xs[t], us[t], nv)
        Qx = lx + A.T @ Vx
        Qu = lu + B.T @ Vx
        Qxx = lxx + A.T @ Vxx @ A
        Quu = luu + B.T @ (Vxx + mu * np.eye(n)) @ B
        Qux = B.T @ (Vxx + mu * np.eye(n)) @ A
        try:
            L = np.linalg.cholesky(Quu)
        except np.linalg.LinAlgError:
            return None
        K[t] = -np.linalg.solve(L.T, np.linalg.solve(L, Qux))
        kff[t] = -np.linalg.solve(L.T, np.linalg.solve(L, Qu))
        Vx = Qx + K[t].T @ Quu @ kff[t] + K[t].T @ Qu + Qux.T @ kff[t]
        Vxx = Qxx + K[t].T @ Quu @ K[t] + K[t].T @ Qux + Qux.T @ K[t]
        Vxx = 0.5 * (Vxx + Vxx.T)
    return K, kff


def forward_pass(m, d, xs, us, K, kff, alpha):
    """Roll out u = ū + α k + K (x − x̄) from x_0 (closed loop, as the gains were computed)."""
    nv = m.nv
    new_x = np.empty_like(xs)
    new_u = np.empty_like(us)
    new_x[0] = xs[0]
    d.qpos[:], d.qvel[:] = xs[0, :nv], xs[0, nv:]
    d.qacc_warmstart[:] = 0.0
    resets = int(d.warning[:, 0].sum())  # bad qpos, qvel or qacc: the step resets
    with warnings.catch_warnings():
        # a too long step can blow the state up: the line search then tries a shorter one
        warnings.simplefilter("ignore", JointspaceWarning)
        for t in range(len(us)):
            new_u[t] = us[t] + alpha * kff[t] + K[t] @ (new_x[t] - xs[t])
            d.ctrl[:] = new_u[t]
            js.step(m, d)
            if int(d.warning[:, 0].sum()) != resets:
                return None
            new_x[t + 1, :nv] = d.qpos
            new_x[t + 1, nv:] = d.qvel
    return new_x, new_u


def start_state(m, d):
    """Fingertip at (TIP_START, 0), the box settled on the table, everything at rest."""
    c = TIP_START / (2 * LINK)
    elbow = 2.0 * np.arccos(c)
    js.reset(m, d)
    d.qpos[:2] = -0.5 * elbow, elbow
    for _ in range(100):  # 1 s: the box sinks into its soft contacts and comes to rest
        js.step(m, d)
    return np.concatenate([d.qpos, np.zeros(m.nv)])


def initial_controls(m, x0, N, force):
    """The first guess: torques Jᵀ (force, 0) of the start pose, then none.

    Constant over the first 30% of the horizon. Stuck by static friction, the box barely
    answers a small force in the linearization (the soft contacts' creep), so iLQR starts
    from a push that slides it.
    """
    _, J = tip(x0[:2])
    us = np.zeros((N, m.nu))
    us[:int(0.3 * N)] = J.T @ np.array([force, 0.0])
    return us


def inverse_check(m, d, xs, us, warm, touch):
    """Implied forces from js.inverse, and Jacobians rebuilt from js.inverse_derivatives.

    The implied forces at every knot; the step Jacobians' velocity rows rebuilt at the contact
    knots, compared with transition_derivatives' (see the module docstring).
    """
    nv, h = m.nv, m.opt.timestep
    gear = np.zeros((nv, m.nu))
    gear[0, 0] = gear[1, 1] = 1.0
    js.inverse_derivatives(m, d)  # first calls compile or load the kernels: not timed
    js.inverse_derivatives(m, d, analytic=False)
    force_gap = 0.0
    jac_gaps = []
    t_an = t_fd = t_an_touch = t_fd_touch = 0.0
    for k in range(len(us)):
        d.qpos[:], d.qvel[:], d.ctrl[:] = xs[k, :nv], xs[k, nv:], us[k]
        d.qacc[:] = (xs[k + 1, nv:] - xs[k, nv:]) / h
        js.inverse(m, d)
        force_gap = max(force_gap, np.abs(d.qfrc_inverse - gear @ us[k]).max())
        t0 = time.perf_counter()
        Fq, Fv, Fa = js.inverse_derivatives(m, d)
        t1 = time.perf_counter()
        js.inverse_derivatives(m, d, analytic=False)
        t2 = time.perf_counter()
        t_an += t1 - t0
        t_fd += t2 - t1
        if touch[k]:
            t_an_touch += t1 - t0
            t_fd_touch += t2 - t1
            # rows of x' = (q + h v', v'), v' = v + h a: compare the v' rows
            inv_fa = np.linalg.inv(Fa)
            rows = np.hstack([-h * inv_fa @ Fq, np.eye(nv) - h * inv_fa @ Fv, h * inv_fa @ gear])
            d.qacc_warmstart[:] = warm[k]
            A, B = js.transition_derivatives(m, d)
            fd = np.hstack([A[nv:], B[nv:]])
            jac_gaps.append(np.abs(rows - fd).max() / np.abs(fd).max())
    return {"force_gap": force_gap, "jacobian_gaps": np.array(jac_gaps),
            "seconds_inverse_derivatives": t_an, "seconds_inverse_fd": t_fd,
            "seconds_inverse_derivatives_touch": t_an_touch,
            "seconds_inverse_fd_touch": t_fd_touch}


def main(argv=None):
    """Optimize the push; return the figures the docstring describes."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=float, default=1.5, help="seconds")
    p.add_argument("--iterations", type=int, default=40, help="iLQR iterations at most")
    p.add_argument("--push", type=float, default=PUSH_FORCE,
                   help="initial guess: fingertip force (N) over the first 30%% of the horizon")
    p.add_argument("--plot", help="save the cost per iteration and the trajectory here")
    args = p.parse_args(argv)
    m = js.load_string(PUSH)
    d = js.make_data(m)
    nv = m.nv
    N = int(round(args.horizon / m.opt.timestep))
    x0 = start_state(m, d)
    us = initial_controls(m, x0, N, args.push)
    xs, warm, touch = rollout(m, d, x0, us)
    costs = [total_cost(xs, us, nv)]
    linearize(m, d, xs[:2], us[:1], warm, True)  # first calls compile or load: not timed
    linearize(m, d, xs[:2], us[:1], warm, False)

    mu = 1e-6
    t_reuse = t_solve = 0.0
    n_lin = 0
    jac_diff = 0.0
    for _ in range(args.iterations):
        t0 = time.perf_counter()
        As, Bs = linearize(m, d, xs, us, warm, True)
        t1 = time.perf_counter()
        As2, Bs2 = linearize(m, d, xs, us, warm, False)
        t2 = time.perf_counter()
        t_reuse += t1 - t0
        t_solve += t2 - t1
        n_lin += 1
        jac_diff = max(jac_diff, np.abs(As - As2).max() / np.abs(As2).max(),
                       np.abs(Bs - Bs2).max() / np.abs(Bs2).max())
        gains = backward(As, Bs, xs, us, nv, mu)
        if gains is None:
            mu *= 10.0
            continue
        improved = False
        for alpha in ALPHAS:
            trial = forward_pass(m, d, xs, us, *gains, alpha)
            if trial is None:
                continue
            c = total_cost(trial[0], trial[1], nv)
            if c < costs[-1]:
                us = trial[1]
                xs, warm, touch = rollout(m, d, x0, us)
                costs.append(total_cost(xs, us, nv))
                improved = True
                break
        if improved:
            mu = max(1e-8, mu / 3.0)
            if costs[-2] - costs[-1] < 1e-6 * costs[-1]:
                break
        else:
            mu *= 10.0
            if mu > 1e6:
                break

    box_error = abs(xs[-1, 2] - TARGET)
    contact_knots = int(np.count_nonzero(touch))
    print(f"cost {costs[0]:.4g} -> {costs[-1]:.4g} in {len(costs) - 1} iterations; box at "
          f"{xs[-1, 2] * 100:.2f} cm (target {TARGET * 100:.0f} cm, off by "
          f"{box_error * 1000:.2f} mm), moving at {abs(xs[-1, nv + 2]) * 1000:.2f} mm/s; "
          f"fingertip on the box at {contact_knots} of {N} knots")
    per = 1e3 / n_lin
    print(f"transition_derivatives per iteration ({N} steps): {t_reuse * per:.1f} ms with "
          f"reuse_hessian=True, {t_solve * per:.1f} ms with False ({t_solve / t_reuse:.2f}x); "
          f"largest difference {jac_diff:.1g} of the largest entry")
    inv = inverse_check(m, d, xs, us, warm, touch)
    gaps = inv["jacobian_gaps"]
    print(f"js.inverse along the trajectory: implied forces off the applied ones by at most "
          f"{inv['force_gap']:.1g} N·m; velocity rows of A, B from inverse_derivatives vs "
          f"transition_derivatives at the {len(gaps)} contact knots: median "
          f"{np.median(gaps):.1g} of the largest entry, within {JACOBIAN_AGREE:g} at "
          f"{np.count_nonzero(gaps < JACOBIAN_AGREE)}, worst {gaps.max():.1g}")
    print(f"inverse_derivatives over the {N} knots: {inv['seconds_inverse_derivatives'] * 1e3:.1f}"
          f" ms (analytic) vs {inv['seconds_inverse_fd'] * 1e3:.1f} ms (analytic=False, "
          f"{inv['seconds_inverse_fd'] / inv['seconds_inverse_derivatives']:.2f}x); at the "
          f"{contact_knots} fingertip-contact knots "
          f"{inv['seconds_inverse_derivatives_touch'] * 1e3:.1f} vs "
          f"{inv['seconds_inverse_fd_touch'] * 1e3:.1f} ms")
    if args.plot:
        plt = pyplot()
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
        ax1.semilogy(costs, "o-")
        ax1.set_xlabel("iteration")
        ax1.set_ylabel("cost")
        ax1.set_title("iLQR cost per iteration")
        tt = np.arange(N + 1) * m.opt.timestep
        tips = np.array([tip(x[:2])[0][0] for x in xs])
        ax2.plot(tt, BOX_X0 - BOX_HALF + xs[:, 2], label="box back face x (m)")
        ax2.plot(tt, tips + TIP_R, label="fingertip front x (m)")
        ax2.axhline(BOX_X0 - BOX_HALF + TARGET, color="gray", lw=0.5)
        ax2.set_xlabel("time (s)")
        ax2.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
    return {"costs": costs, "final_state": xs[-1].copy(), "box_error": box_error,
            "contact_knots": contact_knots, "seconds_reuse": t_reuse,
            "seconds_solve": t_solve, "jacobian_difference": jac_diff, **inv}


if __name__ == "__main__":
    main()
