"""Why inverse dynamics with sensed (one-step-old) contact forces diverged on the quadruped.

`control.SensedContacts` computes τ_k = S [M q̈ + c − passive − f_{k−1}] with f_{k−1} the
simulator's constraint force of the previous step and q̈ = the desired accelerations on the
actuated dofs and, on the unactuated base, a reference. The first version took the
simulator's *last* base acceleration as that reference. At a frozen state (q, v), one
control step then maps what the controller sensed, x = (S f_{k−1}, q̈_base,k−1), to what it
will sense next, x' = F(x). This script measures G = ∂F/∂x by central differences of
jointspace's forward dynamics on the standing quadruped (stiff and compliant contact as in
the trot experiment) and reports the spectral radius of three blocks:

  base acceleration → base acceleration   the legs push with M_ab q̈_b,k−1; under contact
                                          the base answers with a larger acceleration of
                                          the opposite sign: eigenvalue ≈ −2.5, the loop
                                          doubles its error every step (a sign-alternating
                                          blow-up — the divergence of the first tables)
  sensed force → sensed force             ≈ 1: a torque the ground resists is absorbed by
                                          the contact, sensed, and subtracted next step,
                                          so the loop integrates it (marginal; a low-pass
                                          filter f ← α f_new + (1 − α) f maps an eigenvalue
                                          g to α g + 1 − α and cannot move it below 1)

then runs 1 s of standing with both references: with the base reference zero (or a task's,
the library's default since) the sensed-contact controller stands.

    python examples/rigid_sensed_loop.py
"""

import math

import numpy as np

import jointspace as js
from jointspace import control, rigid
from jointspace.types import DSBL_ACTUATION

H = 0.002


def standing(contact):
    """Quadruped standing on the floor (μ = 0.5), settled for 0.5 s by PD; its pose."""
    m = js.models.quadruped()
    m.opt.timestep = H
    m.opt_disableflags[0] |= DSBL_ACTUATION
    m.geom_friction[:, 0] = 0.5
    if contact == "stiff":
        rigid.stiff_contacts(m, H)
    d = js.make_data(m)
    d.qpos[:] = m.qpos0
    act = rigid.actuated_dofs(m)
    q_ref = np.tile([0.0, 0.4, -0.8], 4)
    d.qpos[act + 1] = q_ref
    d.qpos[2] = 2 * 0.25 * math.cos(0.4) + 0.035
    pd = control.PD(m, 100.0, 2.0)
    for _ in range(250):
        d.qfrc_applied[:] = pd(m, d, q_ref, np.zeros(12)).qfrc
        js.step(m, d)
    js.forward(m, d)
    return m, d, q_ref


def loop_map(m, d, q_ref, eps=1e-4):
    """G = ∂x'/∂x, x = (sensed force on the 12 actuated dofs, base acceleration (6))."""
    act = rigid.actuated_dofs(m)
    ctrl = control.InverseDynamics(m, 400.0, 40.0, control.SensedContacts())
    f0, a0 = d.qfrc_constraint.copy(), d.qacc.copy()

    def step_map(x):
        ds = js.make_data(m)
        ds.qpos[:], ds.qvel[:] = d.qpos, d.qvel
        ds.qfrc_constraint[:] = f0
        ds.qfrc_constraint[act] = x[:12]
        ref = a0.copy()
        ref[:6] = x[12:]
        ctrl.predictor.filtered = None
        out = ctrl(m, ds, q_ref, np.zeros(12), np.zeros(12), qacc_unactuated=ref)
        ds.qfrc_applied[:] = out.qfrc
        js.forward(m, ds)
        return np.r_[ds.qfrc_constraint[act], ds.qacc[:6]]

    x0 = np.r_[f0[act], a0[:6]]
    G = np.empty((18, 18))
    for j in range(18):
        e = np.zeros(18)
        e[j] = eps
        G[:, j] = (step_map(x0 + e) - step_map(x0 - e)) / (2 * eps)
    return G


def stand(m, d0, q_ref, base_last, seconds=1.0):
    """Hold the pose with sensed-contact ID; (steps survived, max |τ|, max joint error)."""
    d = js.make_data(m)
    d.qpos[:], d.qvel[:] = d0.qpos, d0.qvel
    js.forward(m, d)
    ctrl = control.InverseDynamics(m, 400.0, 40.0, control.SensedContacts())
    peak = err = 0.0
    n = int(seconds / H)
    for k in range(n):
        ref = d.qacc.copy() if base_last else np.zeros(m.nv)
        out = ctrl(m, d, q_ref, np.zeros(12), np.zeros(12), qacc_unactuated=ref)
        peak = max(peak, float(np.abs(out.tau).max()))
        d.qfrc_applied[:] = out.qfrc
        js.step(m, d)
        err = max(err, float(np.abs(d.qpos[7:] - q_ref).max()))
        if not np.all(np.isfinite(d.qpos)) or peak > 1e6:
            return k, peak, err
    return n, peak, err


def main():
    """Print the loop's spectral radii and the stand test per contact model."""
    for contact in ("stiff", "compliant"):
        m, d, q_ref = standing(contact)
        G = loop_map(m, d, q_ref)
        for label, sub in (("base acc → base acc", slice(12, 18)),
                           ("force → force", slice(0, 12)),
                           ("whole loop", slice(0, 18))):
            ev = np.linalg.eigvals(G[sub, sub])
            top = ev[np.argmax(np.abs(ev))]
            print(f"{contact:9s} {label:20s} spectral radius {np.abs(ev).max():.3f} "
                  f"(eigenvalue {top.real:+.3f})")
        for base_last in (True, False):
            k, peak, err = stand(m, d, q_ref, base_last)
            how = "simulator's last" if base_last else "zero"
            print(f"{contact:9s} stand, base reference {how:16s}: {k * H:.3f} s, "
                  f"max |τ| {peak:.3g} N m, max joint error {err:.3g} rad")


if __name__ == "__main__":
    main()
