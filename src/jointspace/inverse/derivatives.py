"""Jacobians of the inverse with contacts (`inverse_derivatives`, mjd_inverseFD).

∂/∂qacc and ∂/∂qvel analytical (the 2014 inverse's closed-form forces differentiated zone
by zone), ∂/∂qpos analytical in its smooth part and differenced in the rest, by subtree
(see `_position_columns`).
"""

import math

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.actuation import actuation
from jointspace.actuator_passive import tendon_armature
from jointspace.constraint import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    STATE_CONE,
    STATE_QUADRATIC,
    reference,
)
from jointspace.diagnostics import division_error
from jointspace.dynamics.crba import crb_stage, dense_from_sparse
from jointspace.dynamics.derivatives import rnea_derivatives_kernel
from jointspace.forward import fwd_velocity
from jointspace.integrate import damping, fluid_active, integrate_pos_kernel, tendon_damping
from jointspace.inverse.core import (
    OK,
    discrete_flag,
    inv_acceleration,
    inverse_kernel,
    inverse_rest,
    raise_for,
)
from jointspace.types import (
    DSBL_DAMPER,
    ENBL_DIAGEXACT,
    ENBL_OVERRIDE,
    GEOM_PLANE,
    TRN_BODY,
    WRAP_JOINT,
)


@njit(cache=True)
def _cone_jacobian(x, y, mu, n, r0, rF):
    """∂x/∂y (n, n) of `_cone_project` at a point x on the cone's surface (STATE_CONE).

    x minimizes ½ Σ r_k (x_k − y_k)² subject to g(x) = √(Σ_j (x_j/μ_j)²) − x0 = 0 with
    multiplier λ = r0 (x0 − y0) (the first KKT row, ∂g/∂x0 = −1). Differentiating the KKT
    conditions W (x − y) + λ ∇g = 0, g = 0:
        [[W + λ ∇²g, ∇g], [∇gᵀ, 0]] [dx; dλ] = [W dy; 0],
    ∇g_j = x_j / (μ_j² T), ∇²g_jl = δ_jl / (μ_j² T) − x_j x_l / (μ_j² μ_l² T³) (j, l ≥ 1),
    T = √(Σ_j (x_j/μ_j)²), W = diag(r0, r_j) with Algorithm 5's r_j = rF μ_j⁻² / ⟨μ⁻²⟩.
    """
    minv2 = 0.0
    for j in range(1, n):
        minv2 += 1.0 / (mu[j - 1] * mu[j - 1])
    minv2 /= n - 1
    w = np.empty(n)
    w[0] = r0
    t2 = 0.0
    for j in range(1, n):
        w[j] = rF / (mu[j - 1] * mu[j - 1] * minv2)
        t2 += (x[j] / mu[j - 1]) ** 2
    T = math.sqrt(t2)
    lam = r0 * (x[0] - y[0])
    K = np.zeros((n + 1, n + 1))
    rhs = np.zeros((n + 1, n))
    for k in range(n):
        K[k, k] = w[k]
        rhs[k, k] = w[k]
    K[0, n] = K[n, 0] = -1.0
    for j in range(1, n):
        mj2 = mu[j - 1] * mu[j - 1]
        K[j, n] = K[n, j] = x[j] / (mj2 * T)
        K[j, j] += lam / (mj2 * T)
        for k in range(1, n):
            K[j, k] -= lam * x[j] * x[k] / (mj2 * mu[k - 1] * mu[k - 1] * T * T * T)
    return np.linalg.solve(K, rhs)[:n]


@njit(cache=True)
def _inverse_jacobians(m, d, out, outv, outq, with_v):
    """∂f/∂qacc = M + Jᵀ H J into out, ∂f/∂qvel into outv, ∂(M qacc + c)/∂qpos into outq.

    All analytical; outv with with_v only, outq the smooth part of ∂f/∂qpos (tangent,
    `rnea_derivatives_kernel`). f = qfrc_inverse = M qacc + c(q, qvel) − qfrc_passive − Jᵀ
    φ(jar), jar = J qacc − aref, so ∂f/∂qacc = M − Jᵀ (∂φ/∂jar) J, and −∂φ/∂jar = H is block
    diagonal by constraint (Theorems 2–4 differentiated at the states of the last
    `_constraint_forces`): D_i on a row in its quadratic zone (equality rows always), 0 on a
    linear or satisfied one; on an elliptic contact on the cone's surface, H = (∂x/∂y) diag(D)
    by `_cone_jacobian` (y = −D jar). At a zone boundary this is the derivative of the zone the
    row is in. Without equality rows aref = −B J qvel − K I (pos − margin) (B = efc_KBIP[:, 1]),
    so ∂f/∂qvel = ∂c/∂qvel (`rnea_derivatives_kernel`) + diag(∂(c(v) v)/∂v of the dof
    dampers, `damping`) + Σ_t b_t ten_J_tᵀ ten_J_t (the tendon dampers' derivative,
    `tendon_damping`) + Jᵀ H B J. Needs the inverse's stages at d (rne at qacc included);
    without with_v, outv holds ∂c/∂qvel alone (the caller's differences overwrite it).
    """
    nv = m.nv
    mass = np.empty((nv, nv))
    rnea_derivatives_kernel(m, d, np.bool_(False), entry.input_view(d.cfrc_ext), outq, outv,
                            mass)
    if with_v:
        if (m.opt_disableflags[0] & DSBL_DAMPER) == 0:
            for k in range(nv):
                outv[k, k] += damping(m, d, k)
            # + b_t ten_J_tᵀ ten_J_t, b_t the tendon damper's derivative at ten_velocity
            for t in range(m.ntendon):
                bt = tendon_damping(m, d, t)
                if bt != 0.0:
                    Jt = d.ten_J[t]
                    for r in range(nv):
                        if Jt[r] != 0.0:
                            for c in range(nv):
                                outv[r, c] += bt * Jt[r] * Jt[c]
    crb_stage(m, d)
    dense_from_sparse(m, d.qM, out)
    kb = d.efc_KBIP
    nefc = d.nefc[0]
    J = d.efc_J
    D = d.efc_D
    R = d.efc_R
    state = d.efc_state
    jar = d.scratch_efc
    i = 0
    while i < nefc:
        n = 1
        if d.efc_type[i] == CNSTR_CONTACT_ELLIPTIC:
            n = d.contact_dim[d.efc_id[i]]
        H = np.zeros((n, n))
        if n > 1 and state[i] == STATE_CONE:
            c = d.efc_id[i]
            y = np.empty(n)
            x = np.empty(n)
            mu = np.empty(n - 1)
            rF = 0.0
            for k in range(n):
                y[k] = -D[i + k] * jar[i + k]
                x[k] = d.efc_force[i + k]
                if k > 0:
                    mu[k - 1] = d.contact_friction[c, k - 1]
                    rF += R[i + k]
            P = _cone_jacobian(x, y, mu, n, R[i], rF / (n - 1))
            for k in range(n):
                for t in range(n):
                    H[k, t] = P[k, t] * D[i + t]
        elif state[i] == STATE_QUADRATIC:
            for k in range(n):
                H[k, k] = D[i + k]
        # out += Σ_k,t J_kᵀ H_kt J_t
        for k in range(n):
            for t in range(n):
                h = H[k, t]
                if h == 0.0:
                    continue
                bt = kb[i + t, 1]
                for a in range(nv):
                    ja = h * J[i + k, a]
                    if ja != 0.0:
                        for b in range(nv):
                            out[a, b] += ja * J[i + t, b]
                            if with_v:
                                outv[a, b] += ja * bt * J[i + t, b]
        i += n


@njit(cache=True, inline="always")
def _inv_force(m, d, use_actuation, smooth, out):
    """out = qfrc_inverse, less qfrc_actuator with use_actuation (mjd_inverseFD's force).

    Without smooth, less M qacc + c too: out = −qfrc_passive − qfrc_constraint (− ...), the
    part of the force whose position derivative is differenced.
    """
    if use_actuation:
        actuation(m, d)
    for k in range(m.nv):
        f = d.qfrc_inverse[k] if smooth else -(d.qfrc_passive[k] + d.qfrc_constraint[k])
        out[k] = f - (d.qfrc_actuator[k] if use_actuation else 0.0)


@njit(cache=True)
def _forces_by_contact(d, out):
    """out[c] = −J_cᵀ f_c, contact c's part of −qfrc_constraint (its rows' efc_J, efc_force)."""
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    for r in range(d.nefc[0]):
        t = d.efc_type[r]
        if t != CNSTR_CONTACT_FRICTIONLESS and t != CNSTR_CONTACT_PYRAMIDAL and \
                t != CNSTR_CONTACT_ELLIPTIC:
            continue
        c = d.efc_id[r]
        f = d.efc_force[r]
        for j in range(nnz[r]):
            k = np.uint32(ind[r, j])
            out[c, k] -= J[r, k] * f


@njit(cache=True)
def _joint_local(m, d, use_actuation):
    """Whether the rest's part off the contacts moves, at dof k, with k's joint alone.

    Joint springs and limits, dof friction and dampers: then columns of dofs in different
    subtrees can share a perturbation (`_position_columns`). Not with tendons, active
    equalities, gravity compensation, fluid forces, the exact constraint diagonal (M⁻¹)
    or actuation.
    """
    if use_actuation or m.ntendon > 0 or fluid_active(m):
        return False
    if m.opt_enableflags[0] & ENBL_DIAGEXACT:
        return False
    for b in range(m.nbody):
        if m.body_gravcomp[b] != 0.0:
            return False
    for e in range(m.neq):
        if d.eq_active[e] != 0:
            return False
    return True


@njit(cache=True)
def _near_subtrees(m, d, eps):
    """near[i, j]: a geom in dof i's subtree and one in dof j's could touch when perturbed.

    A perturbation by eps moves a point by at most eps · max(1, R), R bounding the distance
    from any joint to any geom; two geoms on moving bodies are near when their world boxes
    (as the broadphase's, within the bounding sphere), grown by the model's largest margin
    and gap and by that motion, overlap (a plane on a moving body is near everything).
    Symmetric; a dof is near its ancestors' and descendants' dofs as well, harmlessly
    (they never share a group).
    """
    nv = m.nv
    ngeom = m.ngeom
    near = np.zeros((nv, nv), np.bool_)
    reach = 0.0
    for g in range(ngeom):
        reach = max(reach, m.geom_margin[g] + m.geom_gap[g])
    for p in range(m.npair):
        reach = max(reach, 0.5 * (m.pair_margin[p] + m.pair_gap[p]))
    if m.opt_enableflags[0] & ENBL_OVERRIDE:
        reach = max(reach, 0.5 * m.opt_o_margin[0])
    far = 0.0
    for b in range(m.nbody):
        far = max(far, math.sqrt(d.xpos[b, 0] ** 2 + d.xpos[b, 1] ** 2 + d.xpos[b, 2] ** 2))
    ext = 0.0
    for g in range(ngeom):
        x = d.geom_xpos[g]
        ext = max(ext, math.sqrt(x[0] ** 2 + x[1] ** 2 + x[2] ** 2) + m.geom_rbound[g])
    grow = reach + eps * max(1.0, far + ext)
    box = np.empty((ngeom, 6))
    for g in range(ngeom):
        xp = d.geom_xpos[g]
        xm = d.geom_xmat[g]
        a = m.geom_aabb[g]
        rb = m.geom_rbound[g]
        for k in range(3):
            c = xp[k] + xm[3 * k] * a[0] + xm[3 * k + 1] * a[1] + xm[3 * k + 2] * a[2]
            h = abs(xm[3 * k]) * a[3] + abs(xm[3 * k + 1]) * a[4] + abs(xm[3 * k + 2]) * a[5]
            box[g, k] = max(c - h, xp[k] - rb) - grow
            box[g, 3 + k] = min(c + h, xp[k] + rb) + grow
    for g in range(ngeom):
        bg = m.geom_bodyid[g]
        if _static(m, bg):
            continue
        for h in range(ngeom):
            bh = m.geom_bodyid[h]
            if bh == bg or _static(m, bh):
                continue
            if m.geom_type[g] != GEOM_PLANE and m.geom_type[h] != GEOM_PLANE:
                apart = False
                for k in range(3):
                    if box[g, k] > box[h, 3 + k] or box[h, k] > box[g, 3 + k]:
                        apart = True
                if apart:
                    continue
            _mark_near(m, bg, bh, near)
    return near


@njit(cache=True)
def _static(m, b):
    """Whether body b moves with no dof (it and its ancestors have none)."""
    while b > 0:
        if m.body_dofnum[b] > 0:
            return False
        b = m.body_parentid[b]
    return True


@njit(cache=True)
def _mark_near(m, bg, bh, near):
    """near[i, j] = near[j, i] = True for i moving body bg and j moving body bh."""
    a = bg
    while a > 0:
        for i in range(m.body_dofadr[a], m.body_dofadr[a] + m.body_dofnum[a]):
            c = bh
            while c > 0:
                for j in range(m.body_dofadr[c], m.body_dofadr[c] + m.body_dofnum[c]):
                    near[i, j] = True
                    near[j, i] = True
                c = m.body_parentid[c]
        a = m.body_parentid[a]


@njit(cache=True)
def _dof_ancestor(m, j, i):
    """Whether dof j is dof i's ancestor (or i itself)."""
    while i >= 0:
        if i == j:
            return True
        i = m.dof_parentid[i]
    return False


@njit(cache=True)
def _position_columns(m, d, eps, centered, use_actuation, grouped, q0, r0, Gc, cbody, out):
    """The differenced rest of ∂f/∂qpos, column by column or in groups of columns.

    A dof's perturbation moves its subtree's bodies alone, so a contact between two geoms
    outside it keeps its rows and its forces (the 2014 inverse's forces are contact by
    contact): a column collides only the pairs with a geom in its subtree (`collision_of`)
    and differences their contacts' forces against the given state's contacts on the same
    bodies (Gc, by contact, on bodies cbody). With `grouped` (`_joint_local`), dofs that are
    not each other's ancestors, share no contact of the given state and have no geoms that
    could meet within the perturbation (`_near_subtrees`) are perturbed together; each
    contact's forces go to the dof whose subtree holds it, the rest's other part at dof k to
    the dof of k's joint, and a group in which a perturbed contact touches two of its
    subtrees is redone column by column. The rest is −qfrc_passive − qfrc_constraint
    (− qfrc_actuator with use_actuation), as r0. Adds to out (which holds the smooth part);
    d.qpos ends at q0. Returns OK or the inverse's failure code.
    """
    nv = m.nv
    nbody = m.nbody
    ncon0 = Gc.shape[0]
    # touch[c, i]: the given state's contact c has a geom in dof i's subtree (i moves a
    # body at or above one of its geoms)
    touch = np.zeros((ncon0, nv), np.bool_)
    for c in range(ncon0):
        for s in range(2):
            b = cbody[c, s]
            while b > 0:
                for i in range(m.body_dofadr[b], m.body_dofadr[b] + m.body_dofnum[b]):
                    touch[c, i] = True
                b = m.body_parentid[b]
    near = _near_subtrees(m, d, eps) if grouped else np.zeros((0, 0), np.bool_)
    # greedy groups (each dof alone without `grouped`)
    color = np.empty(nv, np.int64)
    ngroup = 0
    for i in range(nv):
        g = 0 if grouped else ngroup
        while g < ngroup:
            fits = True
            for j in range(i):
                if color[j] != g:
                    continue
                if _dof_ancestor(m, j, i) or near[i, j]:
                    fits = False
                    break
                for c in range(ncon0):
                    if touch[c, i] and touch[c, j]:
                        fits = False
                        break
                if not fits:
                    break
            if fits:
                break
            g += 1
        color[i] = g
        if g == ngroup:
            ngroup += 1
    # the given state's rest off the contacts
    rnc0 = r0.copy()
    for c in range(ncon0):
        for k in range(nv):
            rnc0[k] -= Gc[c, k]
    members = np.empty(nv, np.int64)
    owner = np.empty(nbody, np.int64)
    bodies = np.zeros(nbody, np.int32)
    dpos = np.zeros(nv)
    res = np.zeros((2, nv, nv))
    rnc = np.zeros((2, nv))
    pending = np.zeros(nv, np.bool_)
    g = 0
    single = -1
    while g < ngroup or single >= 0:
        # the next group, or the next dof of a group being redone alone
        nmem = 0
        if single >= 0:
            members[0] = single
            nmem = 1
            pending[single] = False
        else:
            for i in range(nv):
                if color[i] == g:
                    members[nmem] = i
                    nmem += 1
            g += 1
        for b in range(nbody):
            owner[b] = -1
        for a in range(nmem):
            root = m.dof_bodyid[members[a]]
            for b in range(root, nbody):
                if b == root or owner[m.body_parentid[b]] == a:
                    owner[b] = a
        for b in range(nbody):
            bodies[b] = 1 if owner[b] >= 0 else 0
        conflict = False
        for side in range(2 if centered else 1):
            for a in range(nmem):
                dpos[members[a]] = 1.0
            integrate_pos_kernel(m, d.qpos, dpos, eps if side == 0 else -eps)
            for a in range(nmem):
                dpos[members[a]] = 0.0
            code, need = inverse_rest(m, d, bodies)
            d.qpos[:] = q0
            if code != OK:
                return code
            # the rest split: each contact's to its subtree's member, the others' apart
            for a in range(nmem):
                for k in range(nv):
                    res[side, a, k] = 0.0
            if use_actuation:
                actuation(m, d)
            for k in range(nv):
                rnc[side, k] = -d.qfrc_passive[k] - (d.qfrc_actuator[k] if use_actuation else 0.0)
            for c in range(d.ncon[0]):
                o1 = owner[m.geom_bodyid[d.contact_geom[c, 0]]]
                o2 = owner[m.geom_bodyid[d.contact_geom[c, 1]]]
                if o1 >= 0 and o2 >= 0 and o1 != o2:
                    conflict = True
            if conflict:
                break
            J = d.efc_J
            for r in range(d.nefc[0]):
                t = d.efc_type[r]
                f = d.efc_force[r]
                if t == CNSTR_CONTACT_FRICTIONLESS or t == CNSTR_CONTACT_PYRAMIDAL or \
                        t == CNSTR_CONTACT_ELLIPTIC:
                    c = d.efc_id[r]
                    a = owner[m.geom_bodyid[d.contact_geom[c, 0]]]
                    if a < 0:
                        a = owner[m.geom_bodyid[d.contact_geom[c, 1]]]
                    for j in range(d.efc_J_rownnz[r]):
                        k = np.uint32(d.efc_J_colind[r, j])
                        res[side, a, k] -= J[r, k] * f
                else:
                    for j in range(d.efc_J_rownnz[r]):
                        k = np.uint32(d.efc_J_colind[r, j])
                        rnc[side, k] -= J[r, k] * f
        if conflict:
            # a contact between two of the group's subtrees: its columns one by one
            for a in range(nmem):
                pending[members[a]] = True
        else:
            for a in range(nmem):
                i = members[a]
                for k in range(nv):
                    mine = not grouped or m.dof_jntid[k] == m.dof_jntid[i]
                    if centered:
                        v = res[0, a, k] - res[1, a, k]
                        if mine:
                            v += rnc[0, k] - rnc[1, k]
                        out[k, i] += v / (2.0 * eps)
                    else:
                        v = res[0, a, k]
                        if mine:
                            v += rnc[0, k] - rnc0[k]
                        for c in range(ncon0):
                            if touch[c, i]:
                                v -= Gc[c, k]
                        out[k, i] += v / eps
        single = -1
        for i in range(nv):
            if pending[i]:
                single = i
                break
    return OK


@njit(cache=True)
def _spatial_armature(m):
    """True when a spatial tendon has armature (its own or its actuators', `tendon_armature`).

    Its part of M (armature ten_Jᵀ ten_J) and its bias depend on qpos and qvel through
    ten_J, which `_inverse_jacobians` does not differentiate: `_inverse_fd_entry` then
    differences all of f over qvel and qpos.
    """
    for t in range(m.ntendon):
        if m.wrap_type[m.tendon_adr[t]] != WRAP_JOINT and tendon_armature(m, t) != 0.0:
            return True
    return False


@njit(cache=True, nogil=True)
def _inverse_fd_entry(d, eps, use_actuation, centered, DfDq, DfDv, DfDa):
    """∂f/∂qacc and ∂f/∂qvel analytical, ∂f/∂qpos (tangent) analytical in its smooth part.

    mjd_inverseFD: the inverse at (qpos, qvel, qacc); ∂f/∂qacc and ∂f/∂qvel by
    `_inverse_jacobians` where it applies (else by differences: the acceleration stage
    alone, the velocity stage onward); then each tangent position perturbed in turn,
    forward (and backward when centered); out[:, i] = ∂f/∂x_i. For the continuous inverse
    ∂f/∂qpos = ∂(M qacc + c)/∂qpos (analytical, `_inverse_jacobians`) plus the differences
    of the rest, −qfrc_passive − qfrc_constraint (− qfrc_actuator); the discrete inverse
    differences all of f, and so do the velocity and position columns with a spatial tendon
    that has armature (`_spatial_armature`). The position columns of the rest run
    `inverse_rest` (no M, no RNE) on the contacts of the pairs in the perturbed dof's
    subtree; d ends with the inverse at the given state. Returns the inverse's code (OK, or
    the first failure).
    """
    m = d.model
    nv = m.nv
    code, need = inverse_kernel(m, d, -1)
    if code != OK:
        return code
    disc = discrete_flag(m, -1)
    # the position columns: differences of all of f (else of its non-smooth part only)
    whole = disc or _spatial_armature(m)
    q0 = d.qpos.copy()
    f0 = np.empty(nv)
    fp = np.empty(nv)
    fm = np.empty(nv)
    dpos = np.zeros(nv)
    _inv_force(m, d, use_actuation, True, f0)
    # the position columns of the rest by subtree (`_position_columns`), unless an adhesion
    # actuator's moment or the contacts' adhesion pull reads every contact
    local = not whole and not np.any(m.actuator_trntype == TRN_BODY) and m.flg_adhesion[0] == 0
    ncon0 = d.ncon[0] if local else 0
    Gc = np.zeros((ncon0, nv))
    cbody = np.empty((ncon0, 2), np.int64)
    for c in range(ncon0):
        cbody[c, 0] = m.geom_bodyid[d.contact_geom[c, 0]]
        cbody[c, 1] = m.geom_bodyid[d.contact_geom[c, 1]]
    if local:
        _forces_by_contact(d, Gc)
    # analytical: ∂/∂qacc of the continuous inverse and the smooth part of ∂/∂qpos;
    # ∂/∂qvel too without equality rows (their aref has J̇ qvel) and actuation (its
    # velocity terms), nor a spatial tendon's armature
    with_v = not whole and not use_actuation and d.ne[0] == 0
    if not disc:
        _inverse_jacobians(m, d, DfDa, DfDv, DfDq, with_v)
    r0 = np.empty(nv)
    _inv_force(m, d, use_actuation, whole, r0)
    for stage in range(3):
        # 0: accelerations; 1: velocities; 2: positions, by differences where not analytical
        if (stage == 0 and not disc) or (stage == 1 and with_v):
            continue
        if stage == 2 and local:
            code = _position_columns(m, d, eps, centered, use_actuation,
                                     _joint_local(m, d, use_actuation), q0, r0, Gc, cbody, DfDq)
            if code != OK:
                return code
            continue
        out = DfDa if stage == 0 else (DfDv if stage == 1 else DfDq)
        for i in range(nv):
            for sign in (1.0, -1.0):
                if sign < 0 and not centered:
                    continue
                if stage == 0:
                    x = d.qacc[i]
                    d.qacc[i] = x + sign * eps
                    inv_acceleration(m, d, disc)
                    d.qacc[i] = x
                elif stage == 1:
                    x = d.qvel[i]
                    d.qvel[i] = x + sign * eps
                    fwd_velocity(m, d)
                    reference(m, d)
                    inv_acceleration(m, d, disc)
                    d.qvel[i] = x
                else:
                    dpos[i] = 1.0
                    integrate_pos_kernel(m, d.qpos, dpos, sign * eps)
                    dpos[i] = 0.0
                    if whole:
                        code, need = inverse_kernel(m, d, -1)
                    else:
                        code, need = inverse_rest(m, d, m.body_parentid[:0])
                    d.qpos[:] = q0
                    if code != OK:
                        return code
                _inv_force(m, d, use_actuation, stage < 2 or whole, fp if sign > 0 else fm)
            smooth = 0.0
            for k in range(nv):
                if stage == 2 and not whole:
                    smooth = out[k, i]
                if centered:
                    out[k, i] = smooth + (fp[k] - fm[k]) / (2.0 * eps)
                else:
                    out[k, i] = smooth + (fp[k] - (f0[k] if stage < 2 or whole else r0[k])) / eps
    # d back at the inverse of the given state
    code, need = inverse_kernel(m, d, -1)
    return code


_k_inverse_fd = entry.Kernel(_inverse_fd_entry)


# ---------------------------------------------------------------------------------------------
# public API


def inverse_derivatives(m, d, eps=1e-6, actuation=False, centered=False):
    """Jacobians of the inverse with contacts, ∂f/∂qpos, ∂f/∂qvel, ∂f/∂qacc (mjd_inverseFD).

    f = d.qfrc_inverse of `inverse` at d's (qpos, qvel, qacc), less d.qfrc_actuator with
    `actuation` (MuJoCo's flg_actuation), in one compiled call; column i of each is
    ∂f/∂x_i (MuJoCo's outputs are these matrices transposed). ∂f/∂qacc is analytical:
    M + Jᵀ H J, H the derivative of the 2014 paper's closed-form constraint forces (D on
    rows in their quadratic zone, 0 in the others, and on elliptic contacts on the cone's
    surface the derivative of Algorithm 5's projection). ∂f/∂qvel is analytical too,
    ∂c/∂qvel (`rnea_derivatives`) + the dof and tendon dampers' derivatives + Jᵀ H B J
    (B the rows' reference damping), unless the model has active equality rows (whose aref
    holds J̇ qvel) or `actuation` is set, or a spatial tendon has armature (its own or its
    actuators'): then it is finite-differenced, rerunning the velocity stage onward.
    ∂f/∂qpos (tangent space, `integrate_pos(qpos, ±eps e_i)`) is ∂(M qacc + c)/∂qpos
    (analytical, `rnea_derivatives`) plus finite differences of the rest, −qfrc_passive
    − qfrc_constraint (− qfrc_actuator), forward (MuJoCo's definition) or centered; a
    column collides only the pairs with a geom in its dof's subtree (the others' contacts
    do not move), unless an adhesion actuator reads every contact. With
    the "invdiscrete" flag all three are differences of all of f; with a spatial tendon
    that has armature the position columns are (its M and bias terms vary with ten_J).
    Afterwards d holds `inverse`'s results at its (unchanged) qpos, qvel and qacc.

    Args:
        m: the Model.
        d: a Data for m (reads qpos, qvel, qacc, ctrl).
        eps: the perturbation, a positive finite float.
        actuation: subtract qfrc_actuator from qfrc_inverse.
        centered: centered differences (twice the evaluations) instead of forward ones.

    Returns:
        (DfDq, DfDv, DfDa), each (nv, nv).

    Raises:
        ValueError: eps is not a positive finite number.
        JointspaceError: as `inverse` (a bad state, the discrete inverse with RK4).
    """
    entry.check_pair(m, d, "inverse_derivatives")
    if (isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating))
            or not math.isfinite(eps) or eps <= 0):
        raise ValueError(f"inverse_derivatives: argument eps must be a positive finite number, "
                         f"got {eps!r}")
    nv = m.nv
    out = [np.empty((nv, nv)) for _ in range(3)]
    ep = _k_inverse_fd.ep
    try:
        code = ep(d._s, float(eps), bool(actuation), bool(centered), *out)
    except ZeroDivisionError:
        raise division_error("inverse_derivatives") from None
    if code != OK:
        raise_for(m, d, code, "inverse_derivatives")
    return out[0], out[1], out[2]

