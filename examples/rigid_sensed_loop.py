"""Why inverse dynamics with sensed (one-step-old) contact forces diverges on the quadruped.

`idcontrol.SensedContacts` computes τ_k = ID(q̈_des) − S f_{k−1}: the simulator's
constraint force of the previous step, on the actuated dofs. Under (near-)rigid contact the
contact force of step k absorbs whatever part of τ_k the contacts resist, f_k ≈ f* − P τ_k,
so the sensed term feeds that part back one step later: f_k depends on f_{k−1} through

    G = ∂(S f_k)/∂(S f_{k−1}) = S Jᵀ (∂f/∂τ) ...   (at a frozen state q, v),

which this script measures by finite differences of jointspace's forward dynamics on the
standing quadruped, for the stiff and compliant contact of the trot experiment. An
eigenvalue of G at 1 (the stance legs' joints are held by the ground: the torque a joint
feedback adds is absorbed by the contact, sensed, and subtracted again next step) makes the
loop an integrator of every torque the contacts resist: the PD correction of step k stays
in τ for every later step, and the loop through the base (which the contacts also hold)
pushes eigenvalues past 1. A low-pass filter f ← α f_new + (1 − α) f moves an eigenvalue g
to α g + 1 − α, which stays ≥ 1 when g ≥ 1, so filtering cannot stabilize it; scaling the
sensed force by β < 1 moves it to β g. The script prints the spectral radius of G and runs
the trot's stand phase with SensedContacts (α = 1) and with a gain β.

    python examples/rigid_sensed_loop.py
"""

import math

import numpy as np

import jointspace as js
from jointspace import idcontrol, rigid
from jointspace.types import DSBL_ACTUATION

H = 0.002


def standing(contact):
    """Quadruped standing on the floor, settled for 0.5 s by PD, and its PD hold pose."""
    m = js.models.quadruped()
    m.opt.timestep = H
    m.opt_disableflags[0] |= DSBL_ACTUATION
    m.geom_friction[:, 0] = 0.5
    if contact == "stiff":
        m.geom_solimp[:, 0] = 0.99
        m.geom_solimp[:, 1] = 0.99
        m.geom_solref[:, 0] = 2 * H
        m.geom_solref[:, 1] = 1.0
    d = js.make_data(m)
    d.qpos[:] = m.qpos0
    act = rigid.actuated_dofs(m)
    q_ref = np.tile([0.0, 0.4, -0.8], 4)
    d.qpos[act + 1] = q_ref
    d.qpos[2] = 0.25 * math.cos(0.4) + 0.25 * math.cos(0.4) + 0.035
    pd = idcontrol.PD(m, 100.0, 2.0)
    for _ in range(250):
        d.qfrc_applied[:] = pd(m, d, q_ref, np.zeros(12)).qfrc
        js.step(m, d)
    return m, d, q_ref


def loop_gain(m, d, eps=1e-3):
    """G = ∂(qfrc_constraint on actuated dofs, after) / ∂(the one subtracted), frozen state."""
    act = rigid.actuated_dofs(m)
    js.forward(m, d)
    tau0 = d.qfrc_applied.copy()
    G = np.empty((act.size, act.size))
    for j, dof in enumerate(act):
        cols = []
        for s in (1.0, -1.0):
            d.qfrc_applied[:] = tau0
            d.qfrc_applied[dof] -= s * eps        # τ = ID − f_sensed: f_sensed[dof] += s eps
            js.forward(m, d)
            cols.append(d.qfrc_constraint[act].copy())
        G[:, j] = (cols[0] - cols[1]) / (2 * eps)
    d.qfrc_applied[:] = tau0
    js.forward(m, d)
    return G


def stand(m, d0, q_ref, pred, seconds=1.0):
    """Hold the pose with ID + the given predictor; return the largest |τ| and the height."""
    d = js.make_data(m)
    d.qpos[:] = d0.qpos
    d.qvel[:] = d0.qvel
    js.forward(m, d)
    ctrl = idcontrol.InverseDynamics(m, 400.0, 40.0, pred)
    peak = 0.0
    for _ in range(int(seconds / H)):
        out = ctrl(m, d, q_ref, np.zeros(12), np.zeros(12))
        peak = max(peak, float(np.abs(out.tau).max()))
        d.qfrc_applied[:] = out.qfrc
        js.step(m, d)
        if not np.all(np.isfinite(d.qpos)) or peak > 1e6:
            break
    return peak, float(d.qpos[2])


class ScaledSensed(idcontrol.SensedContacts):
    """Sensed contact forces scaled by β (the loop gain moves from g to β g)."""

    def __init__(self, beta):
        super().__init__()
        self.beta = beta
        self.name = f"ID (sensed × {beta:g})"

    def tau(self, m, dm, qacc_des, d_sim):
        """As SensedContacts, with β f_sensed."""
        full, info = super().tau(m, dm, qacc_des, d_sim)
        return full + (1.0 - self.beta) * self.filtered, info


def main():
    """Print the loop gain's spectrum and the stand test per contact model and predictor."""
    for contact in ("stiff", "compliant"):
        m, d, q_ref = standing(contact)
        G = loop_gain(m, d)
        ev = np.linalg.eigvals(G)
        order = np.argsort(-np.abs(ev))
        print(f"{contact}: spectral radius of G = {np.abs(ev).max():.4f}; largest "
              f"eigenvalues {np.round(ev[order][:6], 4)}")
        for pred in (idcontrol.SensedContacts(), idcontrol.SensedContacts(alpha=0.3),
                     ScaledSensed(0.8), ScaledSensed(0.5), idcontrol.SoftContacts(),
                     idcontrol.RigidContacts("cfree", gap_gain=0.0)):
            peak, z = stand(m, d, q_ref, pred)
            label = pred.name + (f" α={pred.alpha:g}" if getattr(pred, "alpha", 1) < 1 else "")
            print(f"  {label:28s} max |τ| {peak:12.4g} N m   torso height {z:.3f} m")


if __name__ == "__main__":
    main()
