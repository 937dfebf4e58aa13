"""Constraint softness: impedance, regularizer R and reference stiffness and damping.

Softness (mj_makeImpedance; 004 §V eq. 22–28). For each constraint with solref (τ, ζ) and
solimp (d0, dwidth, width, midpoint, power):
  impedance  d(r) rises from d0 at r = margin to dwidth at |r − margin| ≥ width along a
             two-piece power curve joined at the midpoint
  R          = max(mjMINVAL, (1 − d)/d · diagApprox); friction rows of a contact get
             R_1 = R_0 / impratio and, for elliptic cones, R_j μ_j² = R_1 μ_1² (eq. 22);
             pyramidal edges all get 2 μ² R_0 with μ = μ_1 √(R_1/R_0)
  B, K       standard (τ > 0): B = 2/(dwidth τ), K = 1/(dwidth² τ² ζ²), τ ≥ 2·timestep;
             direct (τ ≤ 0): B = −ζ/dwidth, K = −τ/dwidth²; K = 0 on friction rows
  aref       = −B vel − K d (pos − margin), minus J̇ qvel on connect/weld rows
diagApprox approximates diag(J M⁻¹ Jᵀ) from body_invweight0/dof_invweight0 (computed at
compile time by `set_constants`), never forming A (004 §IV). After R is set, diagApprox is
adjusted so that R = (1 − d)/d · diagApprox holds exactly (MuJoCo ≥ 3 calls this efc_diagA).

The paper's (ε, κ) parameterization maps onto solref/solimp exactly: see
`softness_from_epsilon_kappa`.
"""

import math

import numpy as np
from numba import njit

from jointspace.dynamics.factor import solve_lt
from jointspace.types import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    CNSTR_EQUALITY,
    CNSTR_FRICTION_DOF,
    CNSTR_FRICTION_TENDON,
    CNSTR_LIMIT_JOINT,
    CNSTR_LIMIT_TENDON,
    DSBL_REFSAFE,
    EQ_CONNECT,
    EQ_TENDON,
    EQ_WELD,
    MAXIMP,
    MINIMP,
    MINVAL,
    OBJ_SITE,
)

_SOLREF_DEFAULT = (0.02, 1.0)


# ---------------------------------------------------------------------------------------------
# softness


@njit(cache=True)
def equality_bodies(m, i):
    """Bodies (b1, b2) of connect/weld i: its objects, or the bodies of its two sites."""
    if m.eq_objtype[i] == OBJ_SITE:
        return m.site_bodyid[m.eq_obj1id[i]], m.site_bodyid[m.eq_obj2id[i]]
    return m.eq_obj1id[i], m.eq_obj2id[i]


@njit(cache=True, inline="always")
def _impedance(d0, dw, width, mid, power, pos, margin):
    """(d, ∂d/∂pos) of the solimp impedance curve at pos − margin (MuJoCo getimpedance).

    The default power 2 is evaluated by products (no pow calls; equal to pow's result to
    the last bit or so).
    """
    if d0 == dw or width <= MINVAL:
        return 0.5 * (d0 + dw), 0.0
    x = (pos - margin) / width
    sgn = 1.0
    if x < 0:
        x = -x
        sgn = -1.0
    if x >= 1.0 or x <= 0.0:
        return (dw if x >= 1.0 else d0), 0.0
    if power == 1.0:
        y = x
        yp = 1.0
    elif x <= mid:
        # y = a x^p on [0, midpoint]
        if power == 2.0:
            a = 1.0 / mid
            xp = x
        else:
            a = 1.0 / mid ** (power - 1.0)
            xp = x ** (power - 1.0)
        y = a * xp * x
        yp = power * a * xp
    else:
        # y = 1 − b (1 − x)^p on [midpoint, 1]
        if power == 2.0:
            b = 1.0 / (1.0 - mid)
            xp = 1.0 - x
        else:
            b = 1.0 / (1.0 - mid) ** (power - 1.0)
            xp = (1.0 - x) ** (power - 1.0)
        y = 1.0 - b * xp * (1.0 - x)
        yp = power * b * xp
    return d0 + y * (dw - d0), yp * sgn * (dw - d0) / width


@njit(cache=True, inline="always")
def _solparams(m, d, i):
    """Row i's solref (2), solreffriction (2), solimp (5): nine scalars, sanitized (getsolparam).

    Scalars are read straight from the Model/Data fields in each branch: an array variable
    chosen by branch would cost Numba a reference-count pair per constraint.
    """
    cid = d.efc_id[i]
    t = d.efc_type[i]
    fref0 = 0.0
    fref1 = 0.0
    if t == CNSTR_EQUALITY:
        ref0 = m.eq_solref[cid, 0]
        ref1 = m.eq_solref[cid, 1]
        i0 = m.eq_solimp[cid, 0]
        i1 = m.eq_solimp[cid, 1]
        i2 = m.eq_solimp[cid, 2]
        i3 = m.eq_solimp[cid, 3]
        i4 = m.eq_solimp[cid, 4]
    elif t == CNSTR_LIMIT_JOINT:
        ref0 = m.jnt_solref[cid, 0]
        ref1 = m.jnt_solref[cid, 1]
        i0 = m.jnt_solimp[cid, 0]
        i1 = m.jnt_solimp[cid, 1]
        i2 = m.jnt_solimp[cid, 2]
        i3 = m.jnt_solimp[cid, 3]
        i4 = m.jnt_solimp[cid, 4]
    elif t == CNSTR_FRICTION_DOF:
        ref0 = m.dof_solref[cid, 0]
        ref1 = m.dof_solref[cid, 1]
        i0 = m.dof_solimp[cid, 0]
        i1 = m.dof_solimp[cid, 1]
        i2 = m.dof_solimp[cid, 2]
        i3 = m.dof_solimp[cid, 3]
        i4 = m.dof_solimp[cid, 4]
    elif t == CNSTR_LIMIT_TENDON:
        ref0 = m.tendon_solref_lim[cid, 0]
        ref1 = m.tendon_solref_lim[cid, 1]
        i0 = m.tendon_solimp_lim[cid, 0]
        i1 = m.tendon_solimp_lim[cid, 1]
        i2 = m.tendon_solimp_lim[cid, 2]
        i3 = m.tendon_solimp_lim[cid, 3]
        i4 = m.tendon_solimp_lim[cid, 4]
    elif t == CNSTR_FRICTION_TENDON:
        ref0 = m.tendon_solref_fri[cid, 0]
        ref1 = m.tendon_solref_fri[cid, 1]
        i0 = m.tendon_solimp_fri[cid, 0]
        i1 = m.tendon_solimp_fri[cid, 1]
        i2 = m.tendon_solimp_fri[cid, 2]
        i3 = m.tendon_solimp_fri[cid, 3]
        i4 = m.tendon_solimp_fri[cid, 4]
    else:
        ref0 = d.contact_solref[cid, 0]
        ref1 = d.contact_solref[cid, 1]
        i0 = d.contact_solimp[cid, 0]
        i1 = d.contact_solimp[cid, 1]
        i2 = d.contact_solimp[cid, 2]
        i3 = d.contact_solimp[cid, 3]
        i4 = d.contact_solimp[cid, 4]
        fref0 = d.contact_solreffriction[cid, 0]
        fref1 = d.contact_solreffriction[cid, 1]
    # standard (both > 0) or direct (both ≤ 0), not mixed
    if (ref0 > 0) != (ref1 > 0):
        ref0 = _SOLREF_DEFAULT[0]
        ref1 = _SOLREF_DEFAULT[1]
    refsafe = (m.opt_disableflags[0] & DSBL_REFSAFE) == 0
    h2 = 2.0 * m.opt_timestep[0]
    if refsafe and ref0 > 0:
        ref0 = max(ref0, h2)
    if (fref0 > 0) != (fref1 > 0):
        fref0 = 0.0
        fref1 = 0.0
    if refsafe and fref0 > 0:
        fref0 = max(fref0, h2)
    return (ref0, ref1, fref0, fref1,
            min(MAXIMP, max(MINIMP, i0)), min(MAXIMP, max(MINIMP, i1)),
            max(0.0, i2), min(MAXIMP, max(MINIMP, i3)), max(1.0, i4))


@njit(cache=True)
def softness(m, d, exact):
    """efc_diagApprox, efc_R, efc_D, efc_KBIP, one constraint at a time (mj_makeImpedance).

    Per constraint: the diagApprox of its rows (diag(J M⁻¹ Jᵀ) approximated from the qpos0
    inverse weights; with exact, the values already in efc_diagApprox, `diag_exact`), one
    impedance (connect/weld at |pos| over their rows), R = (1 − d)/d · diagApprox and the
    reference coefficients of each row, the contacts' friction-dimension R (004 eq. 22),
    then D = 1/R and diagApprox = R d/(1 − d).
    """
    nefc = d.nefc[0]
    R = d.efc_R
    D = d.efc_D
    KBIP = d.efc_KBIP
    efc_type = d.efc_type
    efc_id = d.efc_id
    efc_pos = d.efc_pos
    efc_margin = d.efc_margin
    dA = d.efc_diagApprox
    biw = m.body_invweight0
    diw = m.dof_invweight0
    i = 0
    while i < nefc:
        sref0, sref1, fref0, fref1, d0, dw, width, mid, power = _solparams(m, d, i)
        t = efc_type[i]
        cid = efc_id[i]
        dim = 1
        pos = efc_pos[i]
        if t == CNSTR_EQUALITY:
            et = m.eq_type[cid]
            b1 = m.eq_obj1id[cid]
            b2 = m.eq_obj2id[cid]
            if et == EQ_WELD or et == EQ_CONNECT:
                b1, b2 = equality_bodies(m, cid)
                # rows 0-2 translation, 3-5 (weld) rotation
                dim = 6 if et == EQ_WELD else 3
                tran = biw[b1, 0] + biw[b2, 0]
                rot = biw[b1, 1] + biw[b2, 1]
                s = 0.0
                for j in range(dim):
                    s += efc_pos[i + j] * efc_pos[i + j]
                    if not exact:
                        dA[i + j] = tran if j < 3 else rot
                pos = math.sqrt(s)
            elif exact:
                pass
            elif et == EQ_TENDON:
                dA[i] = m.tendon_invweight0[b1]
                if b2 >= 0:
                    dA[i] += m.tendon_invweight0[b2]
            else:
                dA[i] = diw[m.jnt_dofadr[b1]]
                if b2 >= 0:
                    dA[i] += diw[m.jnt_dofadr[b2]]
        elif t < CNSTR_CONTACT_FRICTIONLESS:
            if exact:
                pass
            elif t == CNSTR_FRICTION_DOF:
                dA[i] = diw[cid]
            elif t == CNSTR_LIMIT_JOINT:
                dA[i] = diw[m.jnt_dofadr[cid]]
            else:
                dA[i] = m.tendon_invweight0[cid]
        else:
            dim = _diag_approx_contact(m, d, i, exact)
        imp, impP = _impedance(d0, dw, width, mid, power, pos, efc_margin[i])
        dwidth2 = dw * dw
        for j in range(dim):
            r = i + j
            # R = (1 − d)/d · diagApprox
            R[r] = max(MINVAL, (1.0 - imp) * dA[r] / imp)
            tr = efc_type[r]
            ell_fric = tr == CNSTR_CONTACT_ELLIPTIC and j > 0
            if ell_fric and (fref0 != 0.0 or fref1 != 0.0):
                ref0 = fref0
                ref1 = fref1
            else:
                ref0 = sref0
                ref1 = sref1
            if tr == CNSTR_FRICTION_DOF or tr == CNSTR_FRICTION_TENDON or ell_fric:
                KBIP[r, 0] = 0.0
            elif ref0 > 0:
                # K = 1 / (dwidth² τ² ζ²)
                KBIP[r, 0] = 1.0 / max(MINVAL, dwidth2 * ref0 * ref0 * ref1 * ref1)
            else:
                KBIP[r, 0] = -ref0 / max(MINVAL, dwidth2)
            if ref1 > 0:
                # B = 2 / (dwidth τ)
                KBIP[r, 1] = 2.0 / max(MINVAL, dw * ref0)
            else:
                KBIP[r, 1] = -ref1 / max(MINVAL, dw)
            KBIP[r, 2] = imp
            KBIP[r, 3] = impP
        # frictional contacts: impratio and the cone's friction-dimension R (004 eq. 22)
        if t == CNSTR_CONTACT_PYRAMIDAL or t == CNSTR_CONTACT_ELLIPTIC:
            _contact_friction_r(m, d, i)
        for r in range(i, i + dim):
            D[r] = 1.0 / R[r]
            dA[r] = R[r] * imp / (1.0 - imp)
        i += dim


@njit(cache=True)
def diag_exact(m, d):
    """efc_diagApprox ← the exact diagonal of J M⁻¹ Jᵀ ("diagexact" flag; mj_projectConstraint).

    Row i gets y_iᵀ D⁻¹ y_i with y_i = L⁻ᵀ J_iᵀ, M = Lᵀ D L the factor in qLD (current M
    needed). `softness` with exact then takes these values instead of the approximation
    from the inverse weights, as MuJoCo recomputes its impedance from them.
    """
    nv = m.nv
    x = d.scratch_v[3]
    J = d.efc_J
    for i in range(d.nefc[0]):
        for k in range(nv):
            x[k] = 0.0
        for t in range(d.efc_J_rownnz[i]):
            k = d.efc_J_colind[i, t]
            x[k] = J[i, k]
        solve_lt(m, d.qLD, x)
        s = 0.0
        for k in range(nv):
            s += x[k] * x[k] * d.qLDiagInv[k]
        d.efc_diagApprox[i] = s


@njit(cache=True, inline="always")
def _diag_approx_contact(m, d, i, exact):
    """Fill diagApprox of the contact starting at row i; returns its number of rows.

    tran, rot = Σ over both bodies of body_invweight0; pyramidal edges get
    tran + μ_k² (tran or rot). With exact, nothing is written.
    """
    c = d.efc_id[i]
    dim = d.contact_dim[c]
    t = d.efc_type[i]
    if exact:
        if t == CNSTR_CONTACT_FRICTIONLESS:
            return 1
        return dim if t == CNSTR_CONTACT_ELLIPTIC else 2 * (dim - 1)
    b1 = m.geom_bodyid[d.contact_geom[c, 0]]
    b2 = m.geom_bodyid[d.contact_geom[c, 1]]
    tran = m.body_invweight0[b1, 0] + m.body_invweight0[b2, 0]
    rot = m.body_invweight0[b1, 1] + m.body_invweight0[b2, 1]
    dA = d.efc_diagApprox
    if t == CNSTR_CONTACT_FRICTIONLESS:
        dA[i] = tran
        return 1
    if t == CNSTR_CONTACT_ELLIPTIC:
        for j in range(dim):
            dA[i + j] = tran if j < 3 else rot
        return dim
    for j in range(dim - 1):
        fr = d.contact_friction[c, j]
        v = tran + fr * fr * (tran if j < 2 else rot)
        dA[i + 2 * j] = v
        dA[i + 2 * j + 1] = v
    return 2 * (dim - 1)


@njit(cache=True, inline="always")
def _contact_friction_r(m, d, i):
    """Friction-dimension R of the contact starting at row i; returns its number of rows.

    R_1 = R_0 / impratio, μ = μ_1 √(R_1/R_0). Elliptic: R_j μ_j² = R_1 μ_1² (004 eq. 22).
    Pyramidal: every edge gets 2 μ² R_0, which matches the elliptic cone's normal and
    friction impedance.
    """
    c = d.efc_id[i]
    dim = d.contact_dim[c]
    fr = d.contact_friction
    R = d.efc_R
    R[i + 1] = R[i] / max(MINVAL, m.opt_impratio[0])
    mu = fr[c, 0] * math.sqrt(R[i + 1] / R[i])
    if d.efc_type[i] == CNSTR_CONTACT_ELLIPTIC:
        for j in range(1, dim - 1):
            R[i + j + 1] = R[i + 1] * fr[c, 0] * fr[c, 0] / (fr[c, j] * fr[c, j])
        return dim
    rpy = 2.0 * mu * mu * R[i]
    n = 2 * (dim - 1)
    for j in range(n):
        R[i + j] = rpy
    return n


# ---------------------------------------------------------------------------------------------
# softness in the paper's parameters


def softness_from_epsilon_kappa(epsilon, kappa):
    """MuJoCo solref/solimp equivalent to the paper's softness (ε, κ) (004 §V eq. 27–28).

    The paper sets R_ii = max(ε A_ii, r_min), B_ii = 2(1 + ε)/κ, K_ii = (1 + ε)/κ² and
    aref = −B vel − K pos. MuJoCo sets R = (1 − d)/d · A_ii, B = 2/(d τ), and applies
    K' = 1/(d² τ² ζ²) scaled by the impedance d. With a constant impedance d = 1/(1 + ε),
    time constant τ = κ and damping ratio ζ = 1 these coincide: (1 − d)/d = ε,
    2/(d κ) = 2(1 + ε)/κ and d · 1/(d² κ²) = (1 + ε)/κ². r_min is MuJoCo's 1e-15; A_ii is
    diagApprox (the paper's diagonal approximation). MuJoCo's safety clamp τ ≥ 2·timestep
    still applies unless the "refsafe" flag is disabled.

    Args:
        epsilon: impulse-regularization scale ε > 0 (dimensionless).
        kappa: error-reduction time constant κ > 0 (s).

    Returns:
        (solref, solimp): tuples (κ, 1.0) and (d, d, 0.001, 0.5, 2.0), d = 1/(1 + ε).
    """
    epsilon = float(epsilon)
    kappa = float(kappa)
    if not (epsilon > 0 and np.isfinite(epsilon)):
        raise ValueError(f"softness_from_epsilon_kappa: epsilon must be positive and finite, "
                         f"got {epsilon!r}")
    if not (kappa > 0 and np.isfinite(kappa)):
        raise ValueError(f"softness_from_epsilon_kappa: kappa must be positive and finite, "
                         f"got {kappa!r}")
    dimp = 1.0 / (1.0 + epsilon)
    if not MINIMP <= dimp <= MAXIMP:
        raise ValueError(f"softness_from_epsilon_kappa: epsilon = {epsilon} gives impedance "
                         f"{dimp}, outside MuJoCo's [{MINIMP}, {MAXIMP}]; use "
                         f"{1 / MAXIMP - 1:.2e} ≤ epsilon ≤ {1 / MINIMP - 1:.0f}")
    return (kappa, 1.0), (dimp, dimp, 0.001, 0.5, 2.0)
