"""Inverse dynamics with rigid contact and Coulomb friction (Zapolsky & Drumwright, paper 002).

Given the state (qpos, qvel) and desired accelerations of the actuated dofs, predict the
actuator forces τ *and* the contact forces together, over one control period h at the
velocity level (§3: v⁺ = v + h q̈, contact impulses z = h f):

  M (v⁺ − v) = h f + Jᵀ z + h Sᵀ τ      f = qfrc_passive − qfrc_bias + qfrc_applied + Σ Jᵀ xfrc
  S v⁺ = S (v + h q̈_des)                S selects the dofs driven by the model's actuators

Eliminating τ and the actuated velocities leaves the unactuated velocities (the floating
base, a free object) affine in the impulses: v⁺_u = v⁰_u + Q J_uᵀ z with Q = M_uu⁻¹, so every
contact row r has the velocity r v⁺ = r v⁰ + r_u Q J_uᵀ z. Contacts come from our collision
stage (d.contact_*: normal from geom 1 to geom 2, two tangents), rows from `jac_point` as in the
simulator, and the gap φ = dist − margin enters as N v⁺ + gain φ/h ≥ 0 (§3.2; gain = 1 is the
paper's choice, closing the gap in one period). Formulations:

  "noslip"       §4: c_n ⊥ N v⁺ + gain φ/h ≥ 0 and T v⁺ = 0 (both tangents, impulses free).
                 Algorithm 1 (Find-Indices) keeps the tangent rows with a nonsingular Gram
                 matrix, the MLCP becomes a symmetric PSD LCP in c_n, solved by the
                 warm-started principal pivoting method (Algorithm 2, §4.6) without forming
                 its matrix (§4.7). Its impulses are indeterminate (internal forces between
                 feet); with second_stage the §6 selection below picks among them (our
                 extension; the paper relies on warm starting alone).
  "coulomb"      §5: the Stewart–Trinkle/Anitescu–Potra LCP with a k-edge linearized cone,
                 variables (c_n, β, λ), copositive, solved by Lemke's algorithm.
  "coulomb_enum" §5.3, Algorithm 3: every solution of that LCP (2ⁿ principal systems, n =
                 nc(k + 2) ≤ enum_max), keeping the one whose τ is nearest the previous τ.
  "cfree"        §6: the complementarity-free (Anitescu 2006; Todorov 2014) model, the rigid
                 limit of jointspace's own contact solver: edge impulses f ≥ 0 on the k edges
                 n + μ d_e of the cone, min ½ fᵀ(E_u Q E_uᵀ)f + (E v⁰ + gain φ/h)ᵀ f, a convex
                 QP solved as a symmetric PSD LCP by the same warm-started pivoting; then
                 the second stage (§6, torque chatter): among the optimal impulses (a face of
                 the QP, where v⁺ is fixed) the ones whose τ is nearest the previous τ.

The paper writes §6's objective as the post-impact kinetic energy; with the actuated
velocities prescribed that differs from the forward model's, and we use the forward model's
(its KKT conditions are exactly the simulator's rigid-limit contact conditions), so that
predicted and simulated forces agree — the paper's stated goal that forward and inverse
models match. For k = 4 the edges are MuJoCo's pyramidal cone.

Inconsistent desired accelerations (§4.5): when the LCP has no solution, or the no-slip
constraints cannot hold, the accelerations are projected onto those the contacts admit,
min ½ ‖q̈ − q̈_des‖²_M s.t. N v⁺ + gain max(φ, 0)/h ≥ 0 [, T v⁺ = 0], always feasible (v⁺ = 0),
whose dual is a no-slip contact problem of the whole system; then the formulation is solved
again (reported in diagnostics["projected"]).
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.dense import chol_factor_pd, chol_inverse, chol_solve_into
from jointspace.collision.driver import collision_stage
from jointspace.constraint import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
)
from jointspace.dynamics.crba import dense_from_sparse
from jointspace.forward import fwd_position, fwd_velocity, xfrc_accumulate
from jointspace.kinematics import jac_point
from jointspace.rigid.lcp import (
    LCP_MAXITER,
    LCP_SINGULAR,
    LCP_SOLVED,
    enumerate_solutions,
    find_indices_kernel,
    lemke,
    ppm,
    qp_eq_nonneg,
)

NOSLIP = 0
COULOMB = 1
COULOMB_ENUM = 2
CFREE = 3

# fprm entries
FP_H, FP_GAIN, FP_MU, FP_EPS, FP_TOL = 0, 1, 2, 3, 4
# iprm entries
IP_FORM, IP_K, IP_MAXITER, IP_PROJECT, IP_ENUMCAP, IP_STAGE2 = 0, 1, 2, 3, 4, 5
# diag entries
(DG_STATUS, DG_PIVOTS, DG_NACTIVE, DG_NLCP, DG_PROJECTED, DG_DACC, DG_SLIP, DG_PENETRATION,
 DG_COMPL, DG_CONE, DG_NSOL, DG_STAGE2, DG_FALLBACK, DG_KEPT, DG_STATUS0, DG_STAGE2OK) = range(16)
NDIAG = 16



@njit(cache=True)
def _contact_rows(m, d, mu_override, rows, phi, mu, cid, occ):
    """Normal and tangent rows of the active contacts: rows[3c + r] = frame_r (J₂ − J₁).

    Writes phi (signed distance minus the contact's margin, the gap the simulator closes),
    mu (friction; 0 for condim 1), cid (index in d.contact_*)
    and occ (how many earlier active contacts share the geom pair). Returns the count.
    """
    nv = m.nv
    j1p = np.empty((3, nv))
    j1r = np.empty((3, nv))
    j2p = np.empty((3, nv))
    j2r = np.empty((3, nv))
    nc = 0
    for c in range(d.ncon[0]):
        if d.contact_exclude[c]:
            continue
        b1 = m.geom_bodyid[d.contact_geom[c, 0]]
        b2 = m.geom_bodyid[d.contact_geom[c, 1]]
        p = d.contact_pos[c]
        jac_point(m, d, b1, p, j1p, j1r)
        jac_point(m, d, b2, p, j2p, j2r)
        fr = d.contact_frame[c]
        for r in range(3):
            for k in range(nv):
                rows[3 * nc + r, k] = (fr[3 * r] * (j2p[0, k] - j1p[0, k])
                                       + fr[3 * r + 1] * (j2p[1, k] - j1p[1, k])
                                       + fr[3 * r + 2] * (j2p[2, k] - j1p[2, k]))
        phi[nc] = d.contact_dist[c] - d.contact_includemargin[c]
        if d.contact_dim[c] == 1:
            mu[nc] = 0.0
        elif math.isnan(mu_override):
            mu[nc] = d.contact_friction[c, 0]
        else:
            mu[nc] = mu_override
        cid[nc] = c
        o = 0
        for e in range(nc):
            ce = cid[e]
            if (d.contact_geom[ce, 0] == d.contact_geom[c, 0]
                    and d.contact_geom[ce, 1] == d.contact_geom[c, 1]):
                o += 1
        occ[nc] = o
        nc += 1
    return nc


@njit(cache=True)
def _noslip_core(Nu, qn, Tu, qt, Q, warm, nwarm, max_iter, tol, cn, ct, active, info):
    """No-slip contact impulses: c_n ⊥ N v⁺ + gap ≥ 0 with T v⁺ = 0 on independent rows.

    Velocities are affine in the impulses: N v⁺ = qn + Nu Q (Nuᵀ c_n + Tuᵀ c_t), likewise
    for T. Algorithm 1 keeps the tangent rows K whose Gram matrix A_K = Tu_K Q Tu_Kᵀ is PD;
    eliminating c_K = −A_K⁻¹ (qt_K + Tu_K Q Nuᵀ c_n) leaves the symmetric PSD LCP
        w = Nu Q' Nuᵀ c_n + qn',  Q' = Q − Q Tu_Kᵀ A_K⁻¹ Tu_K Q,  qn' = qn − Nu Q Tu_Kᵀ A_K⁻¹ qt_K
    solved by `ppm` from the warm active set (never forming the nc × nc matrix).
    info: [status, pivots, nactive, kept rows]. ct gets 0 on the dropped rows.
    """
    nc = Nu.shape[0]
    nt = Tu.shape[0]
    p = Q.shape[0]
    order = np.arange(nt)
    kept = np.empty(max(nt, 1), dtype=np.int64)
    nk = find_indices_kernel(Tu, Q, order, nt, kept, 1e-8) if p > 0 else 0
    TK = np.empty((nk, p))
    for a in range(nk):
        TK[a, :] = Tu[kept[a]]
    QT = Q @ TK.T                       # p × nk
    AK = TK @ QT
    LK = np.zeros((nk, nk))
    while nk > 0 and not chol_factor_pd(AK[:nk, :nk], LK[:nk, :nk]):
        nk -= 1                         # round-off at Algorithm 1's threshold: drop the last
    TK = np.ascontiguousarray(TK[:nk])
    QT = np.ascontiguousarray(QT[:, :nk])
    LK = np.ascontiguousarray(LK[:nk, :nk])
    # X = A_K⁻¹ (QT)ᵀ  (nk × p), y = A_K⁻¹ qt_K
    X = np.empty((nk, p))
    colb = np.empty(nk)
    colx = np.empty(nk)
    for j in range(p):
        for a in range(nk):
            colb[a] = QT[j, a]
        chol_solve_into(LK, nk, colb, colx)
        for a in range(nk):
            X[a, j] = colx[a]
    qtK = np.empty(nk)
    for a in range(nk):
        qtK[a] = qt[kept[a]]
    y = np.empty(nk)
    chol_solve_into(LK, nk, qtK, y)
    Qp = Q - QT @ X
    for i in range(p):
        for j in range(i):
            s = 0.5 * (Qp[i, j] + Qp[j, i])
            Qp[i, j] = s
            Qp[j, i] = s
    qtv = QT @ y                        # p
    qnp = qn - Nu @ qtv
    status, piv, na = ppm(Nu, Qp, qnp, warm, nwarm, cn, active, max_iter, tol)
    if status == LCP_MAXITER:
        # fall back on Lemke with the dense matrix
        Md = Nu @ Qp @ Nu.T
        st2, piv2 = lemke(Md, qnp, cn, 50 * (nc + 1), tol)
        piv += piv2
        status = st2
        na = 0
        for i in range(nc):
            if cn[i] > 0.0:
                active[na] = i
                na += 1
        info[4] = 1.0
    # c_K = −(y + X Nuᵀ c_n)
    u = Nu.T @ cn
    cK = -(y + X @ u)
    ct[:] = 0.0
    for a in range(nk):
        ct[kept[a]] = cK[a]
    info[0] = status
    info[1] = piv
    info[2] = na
    info[3] = nk
    return na


@njit(cache=True)
def _edges(k):
    """Unit directions of the k edges of the linearized cone in the tangent plane."""
    c = np.empty(k)
    s = np.empty(k)
    for e in range(k):
        th = 2.0 * math.pi * e / k
        c[e] = math.cos(th)
        s[e] = math.sin(th)
    if k % 4 == 0:
        # exact zeros and ones for the axis-aligned edges
        for e in range(k):
            c[e] = round(c[e] * 1e15) / 1e15
            s[e] = round(s[e] * 1e15) / 1e15
    return c, s


@njit(cache=True)
def _solve_once(M, f, v, qacc_des, act, rows, phi, mu, nc, fprm, iprm, warm, nwarm, tau_prev,
                out_tau, out_qacc, out_force, out_active, diag):
    """The inverse dynamics of one control period for the chosen formulation.

    Returns the number of entries written to out_active (LCP indices).
    """
    nv = M.shape[0]
    h = fprm[FP_H]
    gain = fprm[FP_GAIN]
    tol = fprm[FP_TOL]
    form = iprm[IP_FORM]
    k = iprm[IP_K]
    max_iter = iprm[IP_MAXITER]
    na_ = act.shape[0]
    isact = np.zeros(nv, dtype=np.bool_)
    for i in range(na_):
        isact[act[i]] = True
    un = np.empty(nv - na_, dtype=np.int64)
    nu_ = 0
    for i in range(nv):
        if not isact[i]:
            un[nu_] = i
            nu_ += 1
    # Q = M_uu⁻¹ and the velocities at zero contact impulse
    Muu = np.empty((nu_, nu_))
    for a in range(nu_):
        for b in range(nu_):
            Muu[a, b] = M[un[a], un[b]]
    Lu = np.zeros((nu_, nu_))
    if not chol_factor_pd(Muu, Lu):
        # M restricted to the unactuated dofs is singular (a dof moving no mass)
        diag[DG_STATUS] = LCP_SINGULAR
        out_tau[:] = np.nan
        out_qacc[:] = np.nan
        out_force[:nc, :] = np.nan
        return 0
    Q = np.empty((nu_, nu_))
    chol_inverse(Lu, nu_, Q)
    v0 = np.empty(nv)
    for i in range(nv):
        v0[i] = v[i] + h * qacc_des[i]
    Mvf = M @ v + h * f
    rhs = np.empty(nu_)
    for a in range(nu_):
        s = Mvf[un[a]]
        for i in range(na_):
            s -= M[un[a], act[i]] * v0[act[i]]
        rhs[a] = s
    v0u = Q @ rhs
    for a in range(nu_):
        v0[un[a]] = v0u[a]
    # rows restricted to the unactuated dofs, and their velocities at zero impulse
    nrow = 3 * nc
    Ru = np.empty((nrow, nu_))
    rv = np.empty(nrow)
    for r in range(nrow):
        for a in range(nu_):
            Ru[r, a] = rows[r, un[a]]
        s = 0.0
        for i in range(nv):
            s += rows[r, i] * v0[i]
        rv[r] = s
    pimp = np.zeros(nv)               # generalized contact impulse Jᵀ z
    out_force[:nc, :] = 0.0
    nact = 0
    status = LCP_SOLVED
    if form == NOSLIP:
        Nu = np.empty((nc, nu_))
        Tu = np.empty((2 * nc, nu_))
        qn = np.empty(nc)
        qt = np.empty(2 * nc)
        for c in range(nc):
            Nu[c, :] = Ru[3 * c]
            qn[c] = rv[3 * c] + gain * phi[c] / h
            for t in range(2):
                Tu[2 * c + t, :] = Ru[3 * c + 1 + t]
                qt[2 * c + t] = rv[3 * c + 1 + t]
        cn = np.zeros(nc)
        ct = np.zeros(2 * nc)
        info = np.zeros(5)
        nact = _noslip_core(Nu, qn, Tu, qt, Q, warm, nwarm, max_iter, tol, cn, ct, out_active,
                            info)
        status = int(info[0])
        diag[DG_PIVOTS] = info[1]
        diag[DG_KEPT] = info[3]
        diag[DG_FALLBACK] = info[4]
        diag[DG_NLCP] = nc
        if status == LCP_SOLVED and nc > 0 and iprm[IP_STAGE2]:
            diag[DG_STAGE2] = _noslip_stage2(rows, phi, nc, cn, ct, M, f, v, v0, Q, un, act, h,
                                             gain, tau_prev, fprm[FP_EPS], max_iter, tol, diag)
        for c in range(nc):
            out_force[c, 0] = cn[c] / h
            out_force[c, 1] = ct[2 * c] / h
            out_force[c, 2] = ct[2 * c + 1] / h
            for i in range(nv):
                pimp[i] += (rows[3 * c, i] * cn[c] + rows[3 * c + 1, i] * ct[2 * c]
                            + rows[3 * c + 2, i] * ct[2 * c + 1])
    elif form == COULOMB or form == COULOMB_ENUM:
        cs, sn = _edges(k)
        nd = nc * k
        n = nc + nd + nc
        # rows of N and D on the unactuated dofs, and their free velocities
        JU = np.empty((nc + nd, nu_))
        jv = np.empty(nc + nd)
        for c in range(nc):
            JU[c, :] = Ru[3 * c]
            jv[c] = rv[3 * c] + gain * phi[c] / h
            for e in range(k):
                r = nc + c * k + e
                for a in range(nu_):
                    JU[r, a] = cs[e] * Ru[3 * c + 1, a] + sn[e] * Ru[3 * c + 2, a]
                jv[r] = cs[e] * rv[3 * c + 1] + sn[e] * rv[3 * c + 2]
        A = JU @ Q @ JU.T
        Ml = np.zeros((n, n))
        ql = np.zeros(n)
        for i in range(nc + nd):
            ql[i] = jv[i]
            for j in range(nc + nd):
                Ml[i, j] = A[i, j]
        for c in range(nc):
            for e in range(k):
                r = nc + c * k + e
                Ml[r, nc + nd + c] = 1.0          # E
                Ml[nc + nd + c, r] = -1.0         # −Eᵀ
            Ml[nc + nd + c, c] = mu[c]            # U
        diag[DG_NLCP] = n
        x = np.zeros(n)
        st, piv = lemke(Ml, ql, x, 50 * (n + 1), tol)
        status = st
        diag[DG_PIVOTS] = piv
        if form == COULOMB_ENUM and n <= iprm[IP_ENUMCAP]:
            sols = np.empty((512, n))
            ns = enumerate_solutions(Ml, ql, sols, tol)
            diag[DG_NSOL] = ns
            ns = min(ns, 512)
            best = np.inf
            if status == LCP_SOLVED:
                best = _coulomb_tau_dist(x, M, f, v, v0, Q, un, act, rows, nc, k, cs, sn, h,
                                         tau_prev)
            for s_ in range(ns):
                dist = _coulomb_tau_dist(sols[s_], M, f, v, v0, Q, un, act, rows, nc, k, cs, sn,
                                         h, tau_prev)
                if dist < best:
                    best = dist
                    x[:] = sols[s_]
                    status = LCP_SOLVED
        for c in range(nc):
            cn = x[c]
            f1 = 0.0
            f2 = 0.0
            for e in range(k):
                b = x[nc + c * k + e]
                f1 += cs[e] * b
                f2 += sn[e] * b
            out_force[c, 0] = cn / h
            out_force[c, 1] = f1 / h
            out_force[c, 2] = f2 / h
            for i in range(nv):
                pimp[i] += rows[3 * c, i] * cn + rows[3 * c + 1, i] * f1 + rows[3 * c + 2, i] * f2
    else:
        cs, sn = _edges(k)
        ne = nc * k
        EU = np.empty((ne, nu_))
        ev = np.empty(ne)
        EF = np.empty((ne, nv))
        for c in range(nc):
            for e in range(k):
                r = c * k + e
                a1 = mu[c] * cs[e]
                a2 = mu[c] * sn[e]
                for a in range(nu_):
                    EU[r, a] = Ru[3 * c, a] + a1 * Ru[3 * c + 1, a] + a2 * Ru[3 * c + 2, a]
                for i in range(nv):
                    EF[r, i] = rows[3 * c, i] + a1 * rows[3 * c + 1, i] + a2 * rows[3 * c + 2, i]
                ev[r] = rv[3 * c] + a1 * rv[3 * c + 1] + a2 * rv[3 * c + 2] + gain * phi[c] / h
        fe = np.zeros(ne)
        st, piv, nact = ppm(EU, Q, ev, warm, nwarm, fe, out_active, max_iter, tol)
        if st == LCP_MAXITER:
            st, piv2 = lemke(EU @ Q @ EU.T, ev, fe, 50 * (ne + 1), tol)
            piv += piv2
            nact = 0
            for i in range(ne):
                if fe[i] > 0.0:
                    out_active[nact] = i
                    nact += 1
            diag[DG_FALLBACK] = 1.0
        status = st
        diag[DG_PIVOTS] = piv
        diag[DG_NLCP] = ne
        if status == LCP_SOLVED and ne > 0 and iprm[IP_STAGE2]:
            diag[DG_STAGE2] = _stage2(EF, fe, ev, np.bool_(True), M, f, v, v0, Q, un, act, h,
                                      tau_prev, fprm[FP_EPS], max_iter, tol, diag)
        for c in range(nc):
            fn = 0.0
            f1 = 0.0
            f2 = 0.0
            for e in range(k):
                b = fe[c * k + e]
                fn += b
                f1 += mu[c] * cs[e] * b
                f2 += mu[c] * sn[e] * b
            out_force[c, 0] = fn / h
            out_force[c, 1] = f1 / h
            out_force[c, 2] = f2 / h
        for r in range(ne):
            if fe[r] != 0.0:
                for i in range(nv):
                    pimp[i] += EF[r, i] * fe[r]
    diag[DG_STATUS] = status
    diag[DG_NACTIVE] = nact
    if status != LCP_SOLVED:
        # no prediction: report the contact-free inverse dynamics, flagged by the status
        pimp[:] = 0.0
        out_force[:nc, :] = 0.0
        nact = 0
    _finish(M, f, v, v0, Q, un, act, pimp, h, out_tau, out_qacc)
    return nact


@njit(cache=True)
def _finish(M, f, v, v0, Q, un, act, pimp, h, out_tau, out_qacc):
    """v⁺_u = v0_u + Q p_u, v⁺_a = ν; qacc = (v⁺ − v)/h; τ = (M qacc − f − p/h)_a."""
    nv = M.shape[0]
    nu_ = un.shape[0]
    vp = v0.copy()
    for a in range(nu_):
        s = 0.0
        for b in range(nu_):
            s += Q[a, b] * pimp[un[b]]
        vp[un[a]] += s
    for i in range(nv):
        out_qacc[i] = (vp[i] - v[i]) / h
    for j in range(act.shape[0]):
        i = act[j]
        s = -f[i] - pimp[i] / h
        for c in range(nv):
            s += M[i, c] * out_qacc[c]
        out_tau[j] = s


@njit(cache=True)
def _coulomb_tau_dist(x, M, f, v, v0, Q, un, act, rows, nc, k, cs, sn, h, tau_prev):
    """‖τ(x) − τ_prev‖² for a solution x = (c_n, β, λ) of the Coulomb LCP."""
    nv = M.shape[0]
    pimp = np.zeros(nv)
    for c in range(nc):
        cn = x[c]
        f1 = 0.0
        f2 = 0.0
        for e in range(k):
            b = x[nc + c * k + e]
            f1 += cs[e] * b
            f2 += sn[e] * b
        for i in range(nv):
            pimp[i] += rows[3 * c, i] * cn + rows[3 * c + 1, i] * f1 + rows[3 * c + 2, i] * f2
    tau = np.empty(act.shape[0])
    qacc = np.empty(nv)
    _finish(M, f, v, v0, Q, un, act, pimp, h, tau, qacc)
    s = 0.0
    for j in range(act.shape[0]):
        s += (tau[j] - tau_prev[j]) ** 2
    return s


@njit(cache=True)
def _stage2(V, x0, extra, use_extra, M, f, v, v0, Q, un, act, h, tau_prev, eps, max_iter, tol,
            diag):
    """Second stage: among impulses with the same effect on the motion, τ nearest τ_prev.

    x (nvar,) ≥ 0 are impulse magnitudes along generalized directions V (nvar, nv). Every x
    with the same unactuated impulse Σ x_r V[r, u] gives the same v⁺, so the same
    accelerations; τ(x) = τ* − (1/h) V_aᵀ (x − x*) varies with the internal forces. Solve
        min ½‖τ(x) − τ_prev‖² + ½ ε s ‖x‖²   s.t.  V_uᵀ x = V_uᵀ x* [, extraᵀ x = extraᵀ x*], x ≥ 0
    (s = the largest diagonal of the first term; ε > 0 makes the solution unique and spreads
    the force evenly) by `qp_eq_nonneg` from x*. For §6 the extra row keeps the QP's linear
    term constant, so the set is exactly the first stage's optimal face. x0 is overwritten
    when the solve converges and keeps the constraints. Returns the iterations.
    """
    nx = x0.shape[0]
    nu_ = un.shape[0]
    na_ = act.shape[0]
    ne = nu_ + (1 if use_extra else 0)
    E = np.empty((ne, nx))
    for a in range(nu_):
        for r in range(nx):
            E[a, r] = V[r, un[a]]
    if use_extra:
        for r in range(nx):
            E[nu_, r] = extra[r]
    # τ(x) = c0 − Ja x,  Ja[j, r] = V[r, act[j]] / h
    Ja = np.empty((na_, nx))
    for j in range(na_):
        for r in range(nx):
            Ja[j, r] = V[r, act[j]] / h
    tau_star = np.empty(na_)
    qacc = np.empty(M.shape[0])
    _finish(M, f, v, v0, Q, un, act, V.T @ x0, h, tau_star, qacc)
    c0 = tau_star + Ja @ x0
    H = Ja.T @ Ja
    sc = 1.0
    for r in range(nx):
        sc = max(sc, H[r, r])
    for r in range(nx):
        H[r, r] += eps * sc
    g = -(Ja.T @ (c0 - tau_prev))
    x = x0.copy()
    it, ok = qp_eq_nonneg(H, g, E, x, max_iter, tol)
    # accept only if the motion (and, for §6, the first-stage objective) is unchanged
    r0 = E @ x0
    r1 = E @ x
    err = 0.0
    for a in range(ne):
        err = max(err, abs(r1[a] - r0[a]))
    if ok and err <= 1e-7 * (1.0 + np.max(np.abs(r0))):
        x0[:] = x
        diag[DG_STAGE2OK] = 1.0
    else:
        diag[DG_STAGE2OK] = 0.0
    return it


@njit(cache=True)
def _noslip_stage2(rows, phi, nc, cn, ct, M, f, v, v0, Q, un, act, h, gain, tau_prev, eps,
                   max_iter, tol, diag):
    """`_stage2` for no-slip: normals of the contacts that stay closed, tangents free.

    The no-slip model's impulses are indeterminate (4 feet, 6 base dofs): keeping the
    generalized impulse on the unactuated dofs keeps v⁺, and with c_n only where
    N v⁺ + gain φ/h = 0 the complementarity holds too. Tangent impulses, free in sign, are
    split as c⁺ − c⁻.
    """
    nv = M.shape[0]
    qacc = np.empty(nv)
    tau = np.empty(act.shape[0])
    pimp = np.zeros(nv)
    for c in range(nc):
        pimp += rows[3 * c] * cn[c] + rows[3 * c + 1] * ct[2 * c] + rows[3 * c + 2] * ct[2 * c + 1]
    _finish(M, f, v, v0, Q, un, act, pimp, h, tau, qacc)
    vp = v + h * qacc
    closed = np.empty(nc, dtype=np.int64)
    ncl = 0
    for c in range(nc):
        if rows[3 * c] @ vp + gain * phi[c] / h <= 1e3 * tol:
            closed[ncl] = c
            ncl += 1
    nx = ncl + 4 * nc
    V = np.empty((nx, nv))
    x = np.empty(nx)
    for a in range(ncl):
        V[a, :] = rows[3 * closed[a]]
        x[a] = cn[closed[a]]
    for r in range(2 * nc):
        c = r // 2
        V[ncl + r, :] = rows[3 * c + 1 + r % 2]
        V[ncl + 2 * nc + r, :] = -rows[3 * c + 1 + r % 2]
        x[ncl + r] = max(ct[r], 0.0)
        x[ncl + 2 * nc + r] = max(-ct[r], 0.0)
    it = _stage2(V, x, x, np.bool_(False), M, f, v, v0, Q, un, act, h, tau_prev, eps, max_iter,
                 tol, diag)
    for a in range(ncl):
        cn[closed[a]] = x[a]
    for r in range(2 * nc):
        ct[r] = x[ncl + r] - x[ncl + 2 * nc + r]
    return it


@njit(cache=True)
def _project(M, v, a_ref, rows, phi, mu, nc, gain, h, form, k, max_iter, tol, a_out):
    """§4.5: the accelerations nearest a_ref (in M's metric) that the contacts admit.

        min ½ (a − a_ref)ᵀ M (a − a_ref)  s.t.  G v⁺ + gain max(φ, 0)/h ≥ 0  [, T v⁺ = 0]
    with v⁺ = v + h a and the formulation's kinematic constraints: G = N (Coulomb, whose
    contacts may slide), N with T v⁺ = 0 (no-slip), the cone's edges N + μ D_e (cfree, whose
    contacts separate when they slide). a = −v/h (v⁺ = 0) is feasible, so the QP always has a
    solution; its dual is a no-slip-type contact problem of the whole system (G = M⁻¹),
    solved by `_noslip_core`: a = a_ref + M⁻¹ (Gᵀ c + Tᵀ c_t)/h.
    """
    nv = M.shape[0]
    L = np.zeros((nv, nv))
    chol_factor_pd(M, L)
    Minv = np.empty((nv, nv))
    chol_inverse(L, nv, Minv)
    per = k if form == CFREE else 1
    nt = 2 * nc if form == NOSLIP else 0
    Gf = np.empty((nc * per, nv))
    Tf = np.empty((nt, nv))
    qn = np.empty(nc * per)
    qt = np.empty(nt)
    v0 = v + h * a_ref
    cs, sn = _edges(k)
    for c in range(nc):
        for e in range(per):
            r = c * per + e
            if form == CFREE:
                Gf[r, :] = rows[3 * c] + mu[c] * (cs[e] * rows[3 * c + 1] + sn[e] * rows[3 * c + 2])
            else:
                Gf[r, :] = rows[3 * c]
            qn[r] = Gf[r] @ v0 + gain * max(phi[c], 0.0) / h
        if form == NOSLIP:
            for t in range(2):
                Tf[2 * c + t, :] = rows[3 * c + 1 + t]
                qt[2 * c + t] = rows[3 * c + 1 + t] @ v0
    cn = np.zeros(nc * per)
    ct = np.zeros(nt)
    act = np.empty(max(nc * per, 1), dtype=np.int64)
    info = np.zeros(5)
    _noslip_core(Gf, qn, Tf, qt, Minv, act, np.int64(0), max_iter, tol, cn, ct, act, info)
    p = Gf.T @ cn + Tf.T @ ct
    a_out[:] = a_ref + (Minv @ p) / h
    return int(info[0])


@njit(cache=True)
def _residuals(rows, phi, mu, nc, v, qacc, force, gain, h, diag):
    """Residuals of the prediction: slip, penetration, complementarity, cone violation.

    slip = max |T v⁺|, penetration = max(0, −(N v⁺ + gain φ/h)) (m/s), complementarity =
    max |c_n (N v⁺ + gain φ/h)|, cone = max(−f_n, ‖f_t‖ − μ f_n) (N).
    """
    vp = v + h * qacc
    slip = 0.0
    pen = 0.0
    comp = 0.0
    cone = 0.0
    for c in range(nc):
        vn = rows[3 * c] @ vp + gain * phi[c] / h
        pen = max(pen, -vn)
        comp = max(comp, abs(force[c, 0] * h * vn))
        for t in range(2):
            slip = max(slip, abs(rows[3 * c + 1 + t] @ vp))
        ft = math.sqrt(force[c, 1] ** 2 + force[c, 2] ** 2)
        cone = max(cone, -force[c, 0], ft - mu[c] * force[c, 0])
    diag[DG_SLIP] = slip
    diag[DG_PENETRATION] = pen
    diag[DG_COMPL] = comp
    diag[DG_CONE] = cone


@njit(cache=True)
def _rigid_solve(M, f, v, qacc_des, act, rows, phi, mu, nc, fprm, iprm, warm, nwarm, tau_prev,
                 out_tau, out_qacc, out_force, out_active, diag):
    """`_solve_once`, then the §4.5 projection and a second solve when needed.

    Needed when the LCP has no solution or, for no-slip, the contacts cannot follow the
    desired motion (slip or penetration above 1000 tol).
    """
    h = fprm[FP_H]
    gain = fprm[FP_GAIN]
    tol = fprm[FP_TOL]
    form = iprm[IP_FORM]
    diag[:] = 0.0
    nact = _solve_once(M, f, v, qacc_des, act, rows, phi, mu, nc, fprm, iprm, warm, nwarm,
                       tau_prev, out_tau, out_qacc, out_force, out_active, diag)
    _residuals(rows, phi, mu, nc, v, out_qacc, out_force, gain, h, diag)
    diag[DG_STATUS0] = diag[DG_STATUS]
    if diag[DG_STATUS] == LCP_SINGULAR:
        return nact
    bad = diag[DG_STATUS] != LCP_SOLVED or diag[DG_PENETRATION] > 1e3 * tol
    if form == NOSLIP and diag[DG_SLIP] > 1e3 * tol:
        bad = True
    if iprm[IP_PROJECT] and bad and nc > 0:
        a_c = np.empty(M.shape[0])
        _project(M, v, qacc_des, rows, phi, mu, nc, gain, h, form, iprm[IP_K],
                 iprm[IP_MAXITER], tol, a_c)
        dacc = 0.0
        for j in range(act.shape[0]):
            dacc = max(dacc, abs(a_c[act[j]] - qacc_des[act[j]]))
        nact = _solve_once(M, f, v, a_c, act, rows, phi, mu, nc, fprm, iprm, warm, nwarm,
                           tau_prev, out_tau, out_qacc, out_force, out_active, diag)
        _residuals(rows, phi, mu, nc, v, out_qacc, out_force, gain, h, diag)
        diag[DG_PROJECTED] = 1.0
        diag[DG_DACC] = dacc
    return nact


@njit(cache=True, nogil=True)
def rigid_kernel(m, d, qacc_des, fprm, iprm, act, warm_keys, nwarm, tau_prev, out_tau,
                  out_qacc, out_force, out_cid, out_keys, diag):
    """One compiled call: the state's dynamics and contacts, then `_rigid_solve`.

    Returns (contacts, entries of out_keys).
    """
    fwd_position(m, d, np.bool_(True))
    fwd_velocity(m, d)
    collision_stage(m, d)
    nv = m.nv
    M = np.empty((nv, nv))
    dense_from_sparse(m, d.qM, M)
    f = np.empty(nv)
    for i in range(nv):
        f[i] = d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i]
    xfrc_accumulate(m, d, f)
    ncmax = d.ncon[0]
    rows = np.empty((3 * max(ncmax, 1), nv))
    phi = np.empty(max(ncmax, 1))
    mu = np.empty(max(ncmax, 1))
    cid = np.empty(max(ncmax, 1), dtype=np.int64)
    occ = np.empty(max(ncmax, 1), dtype=np.int64)
    nc = _contact_rows(m, d, fprm[FP_MU], rows, phi, mu, cid, occ)
    # previous active set → LCP indices of the current contacts (same geom pair, occurrence)
    form = iprm[IP_FORM]
    per = 1 if form == NOSLIP else iprm[IP_K]
    warm = np.empty(max(nwarm, 1), dtype=np.int64)
    nw = np.int64(0)  # not the literal 0: one compiled _rigid_solve, not two
    for a in range(nwarm):
        for c in range(nc):
            ci = cid[c]
            if (d.contact_geom[ci, 0] == warm_keys[a, 0]
                    and d.contact_geom[ci, 1] == warm_keys[a, 1]
                    and occ[c] == warm_keys[a, 2] and warm_keys[a, 3] < per):
                warm[nw] = c * per + warm_keys[a, 3]
                nw += 1
                break
    active = np.empty(max(nc * per, 1), dtype=np.int64)
    nact = _rigid_solve(M, f, d.qvel, qacc_des, act, rows, phi, mu, nc, fprm, iprm, warm, nw,
                        tau_prev, out_tau, out_qacc, out_force, active, diag)
    for c in range(nc):
        out_cid[c] = cid[c]
    for a in range(nact):
        c = active[a] // per
        ci = cid[c]
        out_keys[a, 0] = d.contact_geom[ci, 0]
        out_keys[a, 1] = d.contact_geom[ci, 1]
        out_keys[a, 2] = occ[c]
        out_keys[a, 3] = active[a] - c * per
    return nc, nact


@njit(cache=True, nogil=True)
def contact_forces_kernel(m, d, out):
    """Contact forces of the last constraint solve in each contact's frame (mj_contactForce).

    out[c] = (normal, tangent 1, tangent 2) in newtons for c < ncon (zero for excluded
    contacts). Pyramidal edges f_e on J_n ± μ_k J_k give normal Σ f_e and tangent k
    μ_k (f_{k+} − f_{k−}); elliptic rows are the frame components themselves. An adhesive
    contact's normal is less its adhesion (the net interface force, as MuJoCo 4.0's).
    """
    for c in range(d.ncon[0]):
        out[c, 0] = 0.0
        out[c, 1] = 0.0
        out[c, 2] = 0.0
    i = 0
    nefc = d.nefc[0]
    while i < nefc:
        t = d.efc_type[i]
        if t == CNSTR_CONTACT_FRICTIONLESS:
            c = d.efc_id[i]
            out[c, 0] = d.efc_force[i]
            i += 1
        elif t == CNSTR_CONTACT_PYRAMIDAL:
            c = d.efc_id[i]
            dim = d.contact_dim[c]
            for k in range(dim - 1):
                fp = d.efc_force[i + 2 * k]
                fm = d.efc_force[i + 2 * k + 1]
                out[c, 0] += fp + fm
                if k < 2:
                    out[c, 1 + k] = d.contact_friction[c, k] * (fp - fm)
            i += 2 * (dim - 1)
        elif t == CNSTR_CONTACT_ELLIPTIC:
            c = d.efc_id[i]
            dim = d.contact_dim[c]
            for k in range(3):
                out[c, k] = d.efc_force[i + k]
            i += dim
        else:
            i += 1
            continue
        out[c, 0] -= d.contact_adhesion[c]
