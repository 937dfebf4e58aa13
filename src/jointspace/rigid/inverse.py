"""The rigid-contact inverse's Python API: `inverse_dynamics` and its result (paper 002).

The formulations, their compiled kernels and the paper's equations are in
`jointspace.rigid.formulations`; the LCP solvers in `jointspace.rigid.lcp`.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from jointspace._numba import entry
from jointspace.errors import JointspaceError
from jointspace.rigid.formulations import (
    CFREE,
    COULOMB,
    COULOMB_ENUM,
    DG_PIVOTS,
    DG_STATUS,
    NDIAG,
    NOSLIP,
    contact_forces_kernel,
    rigid_kernel,
)
from jointspace.rigid.lcp import STATUS_NAMES
from jointspace.types import JNT_HINGE, JNT_SLIDE, TRN_JOINT

_k_rigid = entry.Kernel(rigid_kernel)
_k_forces = entry.Kernel(contact_forces_kernel)

FORMULATIONS = {"noslip": NOSLIP, "coulomb": COULOMB, "coulomb_enum": COULOMB_ENUM,
                "cfree": CFREE}
_DIAG_NAMES = ("status", "pivots", "nactive", "lcp_size", "projected", "projection_change",
               "slip", "penetration", "complementarity", "cone_violation", "nsolutions",
               "stage2_iterations", "fallback_lemke", "tangent_rows_kept", "status_first",
               "stage2_converged")


@dataclass
class RigidIDResult:
    """Torques and contact forces predicted by `inverse_dynamics` for one control period.

    Attributes:
        formulation: the formulation used.
        tau: (nact,) generalized force on each actuated dof (dofs in `dofs`), N or N m.
        dofs: (nact,) the actuated dofs, ascending.
        qfrc_actuator: (nv,) tau scattered on the dofs (zero elsewhere): apply it as
            qfrc_applied (with actuation disabled) or divide by the gear of motor actuators.
        qacc: (nv,) the accelerations these forces realize under the contact model: the
            desired ones on actuated dofs (or their §4.5 projection), the predicted ones on
            the others (floating base, free objects).
        contact_id: (nc,) index in d.contact_* of each contact used (excluded ones skipped).
        contact_force: (nc, 3) predicted force on geom 2 from geom 1 in the contact frame
            (normal, tangent 1, tangent 2), N (impulse / h).
        active: (k, 4) int keys (geom 1, geom 2, occurrence of the pair, LCP row within the
            contact) of the final active set; passed back through `previous` it warm-starts
            the next call even when the contacts are listed in another order.
        status: "solved", "infeasible", "iteration limit" or "singular" (see jointspace.rigid.lcp);
            when not "solved" (even after the §4.5 projection), tau and qacc are the
            contact-free inverse dynamics and contact_force is zero.
        pivots: LCP pivots of this call.
        diagnostics: dict of floats: status, pivots, nactive, lcp_size, projected (1 if
            §4.5 changed the accelerations), projection_change (max change of an actuated
            acceleration), slip (max |T v⁺|, m/s), penetration (max violation of
            N v⁺ + gain φ/h ≥ 0, m/s), complementarity (max |c_n (N v⁺ + gain φ/h)|),
            cone_violation (max of −f_n and ‖f_t‖ − μ f_n, N; meaningless for "noslip"),
            nsolutions (Algorithm 3), stage2_iterations, fallback_lemke (1 if pivoting
            gave up and Lemke finished), tangent_rows_kept (Algorithm 1), status_first (the
            LCP's status before any projection), stage2_converged.
    """

    formulation: str
    tau: np.ndarray
    dofs: np.ndarray
    qfrc_actuator: np.ndarray
    qacc: np.ndarray
    contact_id: np.ndarray
    contact_force: np.ndarray
    active: np.ndarray
    status: str
    pivots: int
    diagnostics: dict = field(default_factory=dict)


def actuated_dofs(m):
    """The dofs driven by the model's actuators (joint transmissions), ascending.

    Raises:
        JointspaceError: an actuator acts through a site, body or tendon, or on a ball or
            free joint (the selection matrix S of §2.2 needs one dof per actuator).
    """
    dofs = []
    for a in range(m.nactuator):
        name = m.names["actuator"][a] or str(a)
        if m.actuator_trntype[a] != TRN_JOINT:
            raise JointspaceError(f"rigid inverse dynamics: actuator {name!r} does not act on "
                                  "a joint; only joint transmissions can be selected")
        j = m.actuator_trnid[a, 0]
        if m.jnt_type[j] not in (JNT_HINGE, JNT_SLIDE):
            raise JointspaceError(f"rigid inverse dynamics: actuator {name!r} drives a ball or "
                                  "free joint; use hinge or slide joints for actuated dofs")
        dofs.append(int(m.jnt_dofadr[j]))
    return np.array(sorted(set(dofs)), dtype=np.int64)


def stiff_contacts(m, h=None):
    """Put every geom's contact near the rigid limit: solref (2h, 1), solimp 0.99 at both ends.

    The rigid limit of the soft-contact simulator that the paper's experiments compare with
    ("stiff" in examples/rigid_*.py): a time constant of two steps is the stiffest a step of
    h integrates stably (MuJoCo's guideline), critically damped, and an impedance of 0.99
    leaves 1 % of the constraint soft. Edits m in place.

    Args:
        m: the Model.
        h: the time step the constants are chosen for (default m.opt.timestep).
    """
    h = float(m.opt_timestep[0] if h is None else h)
    if not (h > 0.0 and math.isfinite(h)):
        raise JointspaceError(f"rigid.stiff_contacts: h must be a positive time step, got {h!r}")
    m.geom_solimp[:, 0] = 0.99
    m.geom_solimp[:, 1] = 0.99
    m.geom_solref[:, 0] = 2.0 * h
    m.geom_solref[:, 1] = 1.0


def _actuated(m):
    cache = getattr(m, "_rigid_dofs", None)
    if cache is None:
        cache = actuated_dofs(m)
        m._rigid_dofs = cache
    return cache


GAP_GAIN = 0.0  # inverse_dynamics' default gap_gain: keep a soft contact's resting penetration
EDGES_MAX = 64  # the most friction-cone edges (k ≥ 64 is a circle to 0.1 %)
ENUM_MAX = 24  # the largest LCP "coulomb_enum" may enumerate: 2²⁴ linear systems


def _real(x, name, fname):
    """x as a float, or a TypeError naming it (a complex number, a string, an array)."""
    if isinstance(x, (complex, np.complexfloating)) or np.iscomplexobj(x):
        raise TypeError(f"{fname}: {name} is complex; pass a real number")
    try:
        return float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: {name} must be a real number, got {x!r}") from None


def _integer(x, name, fname, lo, hi, what):
    """x as an int in [lo, hi], or a JointspaceError naming it."""
    v = _real(x, name, fname)
    if isinstance(x, bool) or not (v.is_integer() and lo <= v <= hi):
        raise JointspaceError(f"{fname}: {name} must be an integer in [{lo}, {hi}] ({what}), "
                              f"got {x!r}")
    return int(v)


def inverse_dynamics(m, d, qacc_desired, formulation="cfree", mu=None, previous=None, h=None,
                     edges=4, gap_gain=GAP_GAIN, project=True, second_stage=None, enum_max=16,
                     max_iter=200, tol=1e-12, regularization=1e-7, tau_target=None):
    """Actuator forces and contact forces that realize desired accelerations (paper 002).

    One compiled call: the position and velocity stages at (d.qpos, d.qvel) (M, bias and
    passive forces), collision, the formulation's LCP/QP, the torques. Fills the same Data
    fields as `forward`'s first stages (xpos, qM, qfrc_bias, qfrc_passive, contact_*, …).

    Args:
        m: the Model; its actuators (joint transmissions) define the actuated dofs.
        d: a Data for m holding the state; qfrc_applied and xfrc_applied count as known
            external forces.
        qacc_desired: (nv,) desired accelerations; only the actuated dofs' entries are
            imposed (the rest serve as the reference of the §4.5 projection).
        formulation: "cfree" (default), "noslip", "coulomb" or "coulomb_enum".
        mu: friction coefficient for every contact; None uses each contact's own
            (d.contact_friction[:, 0]). Ignored by "noslip".
        previous: the `RigidIDResult` of the last control step: its active set warm-starts
            the pivoting and its τ is the target of the anti-chatter stages.
        h: control period (s); default m.opt.timestep.
        edges: k, the number of edges of the linearized friction cone (3 to 64; 4 =
            MuJoCo's pyramid).
        gap_gain: fraction of the gap φ closed per period, in [0, 1]. The default 0 keeps
            the penetration a contact already has and only forbids it to grow
            (N v⁺ ≥ 0): a soft contact at rest penetrates by δ (≈ 0.7 mm for the
            quadruped standing in jointspace's simulator), and closing a fraction g of it
            in one period costs an extra normal force ≈ m g δ / h², 19.6 times the
            quadruped's weight at g = 1 (h = 2 ms). §3.2 uses 1, for rigid simulators,
            where penetration is numerical drift; pass gap_gain=1 there.
        project: apply §4.5 when the desired accelerations are inconsistent.
        second_stage: the anti-chatter stage (τ nearest the previous τ, forces spread
            evenly). None: on for "cfree" (§6), off for "noslip" (the paper relies on warm
            starting alone there; True applies the same selection to its indeterminate
            impulses, but the no-slip model then trades torque for unbounded friction).
        enum_max: largest LCP that "coulomb_enum" enumerates (2ⁿ systems, n ≤ 24); larger
            ones keep Lemke's solution.
        max_iter: pivot cap of the pivoting method and of the second-stage QP.
        tol: LCP tolerance on velocities (m/s).
        regularization: ε of the second stage (relative), which makes its solution unique.
        tau_target: (nact,) torques the anti-chatter stages aim at instead of previous.tau
            (NaN entries: previous.tau's, or 0 without previous). Among the solutions
            with the same motion it picks, e.g., a requested grip force: internal forces
            such as a squeeze are indeterminate under rigid contact.

    Returns:
        `RigidIDResult`.

    Raises:
        JointspaceError: a model with surfacevel or adhesion (flg_surfacevel,
            flg_adhesion), unknown formulation, bad shapes or non-finite values, mu ≤ 0 or
            not finite, edges not in [3, 64], h ≤ 0, gap_gain not in [0, 1], an actuator
            that is not a hinge/slide joint transmission, or a state with NaN.
        TypeError: a complex number or array, or a number that is not one.
    """
    fname = "rigid.inverse_dynamics"
    entry.check_pair(m, d, fname)
    if m.flg_surfacevel[0] or m.flg_adhesion[0]:
        raise JointspaceError(f"{fname}: the rigid-contact formulations have no moving "
                              f"contact surfaces (geom surfacevel) or contact adhesion; "
                              f"this model has them (m.flg_surfacevel, m.flg_adhesion)")
    if not isinstance(formulation, str) or formulation not in FORMULATIONS:
        raise JointspaceError(f"{fname}: formulation must be one of {tuple(FORMULATIONS)}, "
                              f"got {formulation!r}")
    form = FORMULATIONS[formulation]
    qacc_desired = entry.vec(qacc_desired, m.nv, "qacc_desired", fname)
    if not (np.isfinite(qacc_desired).all() and np.isfinite(d.qpos).all()
            and np.isfinite(d.qvel).all()):
        for name, x in (("qacc_desired", qacc_desired), ("d.qpos", d.qpos),
                        ("d.qvel", d.qvel)):
            if not np.isfinite(x).all():
                i = int(np.flatnonzero(~np.isfinite(x))[0])
                raise JointspaceError(f"{fname}: {name}[{i}] is not finite; pass finite "
                                      f"values")
    if mu is not None and not (math.isfinite(_real(mu, "mu", fname)) and mu > 0.0):
        raise JointspaceError(f"{fname}: mu must be a finite positive number or None, got "
                              f"{mu!r}; for infinite friction use formulation='noslip'")
    edges = _integer(edges, "edges", fname, 3, EDGES_MAX, "the cone's polygon")
    h = float(m.opt_timestep[0]) if h is None else _real(h, "h", fname)  # (opt: a view)
    if not (h > 0.0 and math.isfinite(h)):
        raise JointspaceError(f"{fname}: h must be a positive control period, got {h!r}")
    gap_gain = _real(gap_gain, "gap_gain", fname)
    if not 0.0 <= gap_gain <= 1.0:
        raise JointspaceError(f"{fname}: gap_gain must be in [0, 1] (the fraction of the gap "
                              f"closed per period), got {gap_gain!r}")
    for name, x in (("tol", tol), ("regularization", regularization)):
        if not (math.isfinite(_real(x, name, fname)) and x >= 0.0):
            raise JointspaceError(f"{fname}: {name} must be a finite number ≥ 0, got {x!r}")
    max_iter = _integer(max_iter, "max_iter", fname, 1, 2**31 - 1, "a pivot count")
    enum_max = _integer(enum_max, "enum_max", fname, 0, ENUM_MAX, "2ⁿ systems at most")
    act = _actuated(m)
    if previous is not None and not isinstance(previous, RigidIDResult):
        raise JointspaceError(f"{fname}: previous must be the RigidIDResult of the last call "
                              f"or None, got {type(previous).__name__}")
    if previous is not None and previous.formulation == formulation:
        warm = np.ascontiguousarray(previous.active, dtype=np.int64).reshape(-1, 4)
    else:
        warm = np.zeros((0, 4), dtype=np.int64)
    tau_prev = previous.tau.copy() if previous is not None else np.zeros(act.size)
    if tau_target is not None:
        if np.iscomplexobj(tau_target):
            raise TypeError(f"{fname}: tau_target is complex; pass real torques")
        target = np.asarray(tau_target, dtype=np.float64)
        if target.shape != (act.size,) or np.any(np.isinf(target)):
            raise JointspaceError(f"{fname}: tau_target must be a ({act.size},) array (one "
                                  f"entry per actuated dof, NaN = keep the previous τ) "
                                  f"without inf, got shape {target.shape}")
        keep = np.isnan(target)
        tau_prev = np.where(keep, tau_prev, target)
    fprm = np.array([h, float(gap_gain), np.nan if mu is None else float(mu),
                     float(regularization), float(tol)])
    iprm = np.array([form, int(edges), int(max_iter), int(bool(project)), int(enum_max),
                     int(form == CFREE if second_stage is None else bool(second_stage))],
                    dtype=np.int64)
    ncmax = m.nconmax
    per = 1 if form == NOSLIP else int(edges)
    out_tau = np.empty(act.size)
    out_qacc = np.empty(m.nv)
    out_force = np.empty((ncmax, 3))
    out_cid = np.empty(ncmax, dtype=np.int64)
    out_keys = np.empty((ncmax * per, 4), dtype=np.int64)
    diag = np.zeros(NDIAG)
    ep = _k_rigid.ep
    nc, na = ep(m._s, d._s, qacc_desired, fprm, iprm, act, warm, warm.shape[0], tau_prev,
                      out_tau, out_qacc, out_force, out_cid, out_keys, diag)
    qfrc = np.zeros(m.nv)
    qfrc[act] = out_tau
    return RigidIDResult(formulation, out_tau, act.copy(), qfrc, out_qacc,
                         out_cid[:nc].copy(), out_force[:nc].copy(), out_keys[:na].copy(),
                         STATUS_NAMES[int(diag[DG_STATUS])], int(diag[DG_PIVOTS]),
                         dict(zip(_DIAG_NAMES, diag.tolist())))


def contact_forces(m, d):
    """(ncon, 3) forces of the last `forward`/`step` at each contact, in its frame.

    (normal, tangent 1, tangent 2), N, on geom 2 from geom 1: the "sensed" contact forces of
    the paper's virtual force sensors.
    """
    entry.check_pair(m, d, "rigid.contact_forces")
    out = np.empty((max(d.ncon[0], 1), 3))
    ep = _k_forces.ep
    ep(m._s, d._s, out)
    return out[:d.ncon[0]].copy()
