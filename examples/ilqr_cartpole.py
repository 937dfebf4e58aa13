"""iLQR swings up a cart-pole with the analytical derivatives of the dynamics.

Run: python examples/ilqr_cartpole.py [--horizon 2.5] [--iterations 60] [--plot ilqr.png]

Iterative LQR (Li & Todorov 2004) on a cart-pole: a cart on a rail pushed by a motor, a pole
hanging from it on a free hinge. From rest with the pole hanging down, the optimizer finds
the force sequence that swings it up and balances it above the cart, which stops back at
the origin. Each iteration linearizes one step of the dynamics around the current
trajectory, solves the time-varying LQR problem backwards (with Levenberg–Marquardt
regularization), and rolls the improved controls out with a line search.

The linearization of a step x' = f(x, u) (semi-implicit Euler, x = (q, v)):

    v' = v + h q̈(q, v, u),  q' = q + h v'
    A = [[I + h² q̈_q, h (I + h q̈_v)], [h q̈_q, I + h q̈_v]],  B = [[h² q̈_u], [h q̈_u]]

with q̈_q, q̈_v and q̈_u = M⁻¹ (the actuator's moment) from one call of
`js.aba_derivatives` (Carpentier & Mansard's analytical derivatives). The script checks these
A, B against `js.transition_derivatives` (MuJoCo's finite-differenced step Jacobians, the
same definition) along the first trajectory and times both.

With the defaults (2.5 s, 250 steps, 2 cores, 2026-11-26): the cost falls from 1.1e4 to 716
in 52 iterations (the rest is the price of the swing itself); the pole ends 0.004 rad from
upright with the cart 1 mm from the origin. The analytical Jacobians equal the centered
finite differences to 8e-14. From Python they are not the faster route on a 2-dof model:
104 µs per step (a forward, an aba_derivatives call and NumPy's block assembly) against
39 µs for transition_derivatives' 11 compiled steps; their worth here is exactness.
"""

import argparse
import time
import warnings

import numpy as np

import jointspace as js
from jointspace.errors import JointspaceWarning
from jointspace.viz.plot import pyplot

CARTPOLE = """<mujoco model="cartpole">
  <option timestep="0.01" integrator="Euler"/>
  <worldbody>
    <body name="cart">
      <joint name="slider" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.2 0.1 0.05" mass="1"/>
      <body name="pole">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.6" size="0.03" mass="0.2"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="slider" gear="1"/></actuator>
</mujoco>"""

GOAL = np.array([0.0, np.pi, 0.0, 0.0])  # cart at the origin, pole upright, at rest
W_STATE = np.array([1.0, 5.0, 0.1, 0.1])  # running cost weights on (x, θ, ẋ, θ̇) errors
W_FINAL = np.array([200.0, 1000.0, 50.0, 50.0])  # terminal cost weights
W_CTRL = 0.01  # running cost weight on the force (N)


def rollout(m, d, x0, us):
    """States x_0..x_N from x0 under the controls us (N, nu)."""
    xs = np.empty((len(us) + 1, 2 * m.nv))
    xs[0] = x0
    d.qpos[:], d.qvel[:] = x0[:m.nq], x0[m.nq:]
    for k, u in enumerate(us):
        d.ctrl[:] = u
        js.step(m, d)
        xs[k + 1, :m.nq] = d.qpos
        xs[k + 1, m.nq:] = d.qvel
    return xs


def total_cost(xs, us):
    """Σ ½ eᵀ W e + ½ r u² over the knots, plus the terminal ½ e_Nᵀ W_N e_N (e = x − goal)."""
    e = xs - GOAL
    return (0.5 * np.sum(W_STATE * e[:-1] ** 2) + 0.5 * W_CTRL * np.sum(us ** 2)
            + 0.5 * np.sum(W_FINAL * e[-1] ** 2))


def step_jacobians(m, d, x, u):
    """A = ∂x'/∂x, B = ∂x'/∂u of one Euler step, from the analytical ABA derivatives."""
    nv, h = m.nv, m.opt.timestep
    q, v = x[:m.nq], x[m.nq:]
    d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
    js.forward(m, d)  # actuator moments and forces at (q, v, u)
    moment = d.actuator_moment[:m.nu, :nv].T  # (nv, nu): ∂τ/∂u
    a_q, a_v, minv = js.aba_derivatives(m, d, q, v, d.qfrc_actuator)
    a_u = minv @ moment
    eye = np.eye(nv)
    A = np.block([[eye + h * h * a_q, h * (eye + h * a_v)], [h * a_q, eye + h * a_v]])
    B = np.vstack([h * h * a_u, h * a_u])
    return A, B


def backward(As, Bs, xs, us, mu):
    """Feedback gains K and feedforward k of the regularized LQR problem, or None."""
    N, n = len(us), xs.shape[1]
    Vx = W_FINAL * (xs[-1] - GOAL)
    Vxx = np.diag(W_FINAL)
    K = np.empty((N, us.shape[1], n))
    kff = np.empty_like(us)
    for t in range(N - 1, -1, -1):
        A, B = As[t], Bs[t]
        Qx = W_STATE * (xs[t] - GOAL) + A.T @ Vx
        Qu = W_CTRL * us[t] + B.T @ Vx
        Qxx = np.diag(W_STATE) + A.T @ Vxx @ A
        Quu = W_CTRL * np.eye(us.shape[1]) + B.T @ (Vxx + mu * np.eye(n)) @ B
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
    """Roll out u = ū + α k + K (x − x̄) from x_0; None if the rollout diverged."""
    new_x = np.empty_like(xs)
    new_u = np.empty_like(us)
    new_x[0] = xs[0]
    d.qpos[:], d.qvel[:] = xs[0, :m.nq], xs[0, m.nq:]
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
            new_x[t + 1, :m.nq] = d.qpos
            new_x[t + 1, m.nq:] = d.qvel
    return new_x, new_u


def main(argv=None):
    """Optimize the swing-up; return the figures the docstring describes."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=float, default=2.5, help="seconds")
    p.add_argument("--iterations", type=int, default=60, help="iLQR iterations at most")
    p.add_argument("--plot", help="save the cost per iteration and the trajectory here")
    args = p.parse_args(argv)
    m = js.load_string(CARTPOLE)
    d = js.make_data(m)
    N = int(round(args.horizon / m.opt.timestep))
    x0 = np.zeros(2 * m.nv)
    us = np.zeros((N, m.nu))
    xs = rollout(m, d, x0, us)
    costs = [total_cost(xs, us)]

    # the analytical Jacobians against MuJoCo's finite-differenced definition, and their cost
    check = range(0, N, max(1, N // 10))
    step_jacobians(m, d, xs[0], us[0])  # first calls compile or load the kernels: not timed
    js.transition_derivatives(m, d, eps=1e-6, centered=True)
    worst = 0.0
    t_an = t_fd = 0.0
    for t in check:
        t0 = time.perf_counter()
        A, B = step_jacobians(m, d, xs[t], us[t])
        t_an += time.perf_counter() - t0
        d.qpos[:], d.qvel[:], d.ctrl[:] = xs[t, :m.nq], xs[t, m.nq:], us[t]
        t0 = time.perf_counter()
        A_fd, B_fd = js.transition_derivatives(m, d, eps=1e-6, centered=True)
        t_fd += time.perf_counter() - t0
        worst = max(worst, np.abs(A - A_fd).max(), np.abs(B - B_fd).max())

    mu = 1e-6
    t_deriv = 0.0
    for _ in range(args.iterations):
        t0 = time.perf_counter()
        AB = [step_jacobians(m, d, xs[t], us[t]) for t in range(N)]
        t_deriv += time.perf_counter() - t0
        As = np.array([a for a, _ in AB])
        Bs = np.array([b for _, b in AB])
        gains = backward(As, Bs, xs, us, mu)
        if gains is None:
            mu *= 10.0
            continue
        improved = False
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01):
            trial = forward_pass(m, d, xs, us, *gains, alpha)
            if trial is None:
                continue
            nx, nu_ = trial
            c = total_cost(nx, nu_)
            if c < costs[-1]:
                xs, us = nx, nu_
                costs.append(c)
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

    angle_error = abs(xs[-1, 1] - np.pi)
    print(f"cost {costs[0]:.4g} -> {costs[-1]:.4g} in {len(costs) - 1} iterations; final "
          f"pole angle off upright by {angle_error:.2g} rad, cart at {xs[-1, 0]:+.3f} m")
    print(f"step Jacobians, analytical (aba_derivatives) vs finite differences "
          f"(transition_derivatives, centered): max difference {worst:.2g}; "
          f"{1e6 * t_an / len(check):.0f} µs vs {1e6 * t_fd / len(check):.0f} µs per step "
          f"from Python ({t_fd / t_an:.1f}x)")
    if args.plot:
        plt = pyplot()
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
        ax1.semilogy(costs, "o-")
        ax1.set_xlabel("iteration")
        ax1.set_ylabel("cost")
        ax1.set_title("iLQR cost per iteration")
        tt = np.arange(N + 1) * m.opt.timestep
        ax2.plot(tt, xs[:, 0], label="cart x (m)")
        ax2.plot(tt, xs[:, 1], label="pole θ (rad)")
        ax2.axhline(np.pi, color="gray", lw=0.5)
        ax2.set_xlabel("time (s)")
        ax2.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
    return {"costs": costs, "final_state": xs[-1].copy(), "jacobian_error": worst,
            "seconds_analytical": t_an, "seconds_fd": t_fd, "derivative_seconds": t_deriv}


if __name__ == "__main__":
    main()
