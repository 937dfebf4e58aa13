"""Jacobians of the inverse with contacts (`inverse_derivatives`, mjd_inverseFD).

∂/∂qacc and ∂/∂qvel analytical (the 2014 inverse's closed-form forces differentiated zone
by zone), ∂/∂qpos analytical in its smooth part; the rest closed-form where every contact is
a fixed plane against a sphere, capsule, box or mesh (`_contact_position_columns`,
`_joint_columns`), else differenced by subtree (see `_position_columns`).
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
    CNSTR_LIMIT_JOINT,
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
    DSBL_SPRING,
    ENBL_DIAGEXACT,
    ENBL_OVERRIDE,
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
    JNT_BALL,
    JNT_FREE,
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
def _block_h(d, i, n):
    """H = −∂φ/∂jar (n, n) of the constraint whose n rows start at row i (its zone's).

    D_i on a row in its quadratic zone (equality rows always), 0 on a linear or satisfied
    one; on an elliptic contact on the cone's surface (∂x/∂y) diag(D) by `_cone_jacobian`
    (y = −D jar). Needs the inverse's rows, forces, states and jar (scratch_efc).
    """
    D = d.efc_D
    R = d.efc_R
    jar = d.scratch_efc
    state = d.efc_state
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
    return H


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
    i = 0
    while i < nefc:
        n = 1
        if d.efc_type[i] == CNSTR_CONTACT_ELLIPTIC:
            n = d.contact_dim[d.efc_id[i]]
        H = _block_h(d, i, n)
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


@njit(cache=True, inline="always")
def _is_contact(t):
    """Whether efc type t is a contact row (frictionless, pyramidal or elliptic)."""
    return t == CNSTR_CONTACT_FRICTIONLESS or t == CNSTR_CONTACT_PYRAMIDAL or \
        t == CNSTR_CONTACT_ELLIPTIC


@njit(cache=True)
def _forces_by_contact(d, out):
    """out[c] = −J_cᵀ f_c, contact c's part of −qfrc_constraint (its rows' efc_J, efc_force)."""
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    for r in range(d.nefc[0]):
        if not _is_contact(d.efc_type[r]):
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
                if _is_contact(t):
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
def _plane_contacts(m, d):
    """Whether every contact is a fixed plane's with a sphere, capsule, box or mesh, condim ≤ 3.

    Those contacts have closed-form position derivatives (`_contact_position_columns`): a
    point at a fixed offset below a point fixed on the body (a sphere's centre, a capsule's
    end, a box's corner, a mesh's hull vertex: `plane_box`, `plane_convex`). A capsule
    whose axis is within 1e-3 of the plane's normal is left to differences: its frame's
    tangent (the axis projected on the plane) turns without bound there. An ellipsoid's or
    a cylinder's point slides over its surface as it turns: differenced.
    """
    if m.flg_surfacevel[0]:
        return False
    for c in range(d.ncon[0]):
        g1 = d.contact_geom[c, 0]
        g2 = d.contact_geom[c, 1]
        t2 = m.geom_type[g2]
        if m.geom_type[g1] != GEOM_PLANE or not _static(m, m.geom_bodyid[g1]):
            return False
        if t2 != GEOM_SPHERE and t2 != GEOM_CAPSULE and t2 != GEOM_BOX and t2 != GEOM_MESH:
            return False
        if d.contact_dim[c] != 1 and d.contact_dim[c] != 3:
            return False
        if t2 == GEOM_CAPSULE and d.contact_dim[c] == 3:
            xm = d.geom_xmat[g2]
            fr = d.contact_frame[c]
            na = fr[0] * xm[2] + fr[1] * xm[5] + fr[2] * xm[8]
            if 1.0 - na * na < 1e-6:
                return False
    return True


@njit(cache=True)
def _affects(m, k, j):
    """Whether perturbing dof k turns or moves dof j's axis (k, j on one chain of dofs).

    k before j on the chain, or both rotations of one ball or free joint (each perturbs
    the joint's orientation in its own frame, turning the others' body-fixed axes).
    """
    if k < j:
        return True
    if k == j or m.dof_jntid[k] != m.dof_jntid[j]:
        return False
    jt = m.jnt_type[m.dof_jntid[k]]
    if jt == JNT_BALL:
        return True
    base = m.jnt_dofadr[m.dof_jntid[k]]
    return jt == JNT_FREE and k - base >= 3 and j - base >= 3


@njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def _moved_velocity(sk, y, W, op0, op1, op2, dp0, dp1, dp2):
    """∂(Jp(p) w)/∂q_k: (S_k × y) at p + W × ∂p, y = Σ S_j w_j over the dofs k affects.

    sk: S_k (cdof row: rotation, translation at the root's com); W = Σ_j ω_j w_j over the
    chain; p at op from the com.
    """
    xa0, xa1, xa2 = _cross(sk[0], sk[1], sk[2], y[0], y[1], y[2])
    l0, l1, l2 = _cross(sk[0], sk[1], sk[2], y[3], y[4], y[5])
    m0, m1, m2 = _cross(sk[3], sk[4], sk[5], y[0], y[1], y[2])
    o0, o1, o2 = _cross(xa0, xa1, xa2, op0, op1, op2)
    u0, u1, u2 = _cross(W[0], W[1], W[2], dp0, dp1, dp2)
    return l0 + m0 + o0 + u0, l1 + m1 + o1 + u1, l2 + m2 + o2 + u2


@njit(cache=True)
def _contact_position_columns(m, d, out):
    """out −= ∂(Jᵀ φ)/∂qpos (tangent) of the contacts, analytically (`_plane_contacts`).

    Contact c between a fixed plane (normal n) and a sphere of centre s, radius r on body b
    (a capsule: the end sphere below the point; a box's corner or a mesh's vertex: s, r = 0;
    condim 1 or 3): dist = n·(s − x₀) − r, point
    p = s − n (r + dist/2), frame rows n, t₁, t₂ (constant for a sphere; for a capsule t₁
    the axis a projected on the plane, normalized, t₂ = n × t₁). Rows e_r·Jp(p) with Jp the
    point Jacobian of b (e_r = n, t₁, t₂, or the pyramid's n ± μ t). Perturbing dof k on b's
    chain moves s by Jp_k(s), turns a by ω_k × a and changes the chain's motion vectors S_j
    by S_k × S_j where k affects j (`_affects`). Then
        ∂jar_r = ∂(e_r·Jp(p)) (qacc + B_r qvel) + K_r (I′ ∂dist (pos_r − margin_r) + I ∂pos_r),
        ∂φ = −H ∂jar + φ I′ ∂dist / (I (1 − I)),
    the last because every row's R is (1 − I)/I times a constant and the inverse's forces
    are homogeneous of degree one in y = −D jar (Theorems 2–4: the cone's projection
    weights scale together), so φ ∝ I/(1 − I) at fixed jar. out[:, k] −= (∂J/∂q_k)ᵀ φ +
    Jᵀ ∂φ. The derivative of the given contact set: a pair that starts or stops touching
    within the perturbation is not seen (differences see it as a jump).
    """
    nv = m.nv
    nefc = d.nefc[0]
    cdof = d.cdof
    J = d.efc_J
    kb = d.efc_KBIP
    force = d.efc_force
    chain = np.empty(nv, np.int64)
    Sa = np.empty((nv, 6))  # S_j qacc_j, S_j qvel_j along the chain (reference: root com)
    Sv = np.empty((nv, 6))
    aff = np.zeros((nv, nv), np.bool_)  # `_affects` along the chain (positions on it)
    e = np.zeros((4, 3))
    de = np.zeros((4, 3))
    dj = np.zeros(4)
    dphi = np.zeros(4)
    ya = np.zeros(6)
    yv = np.zeros(6)
    Pa = np.zeros(3)
    Pv = np.zeros(3)
    Wa = np.zeros(3)
    Wv = np.zeros(3)
    r = 0
    while r < nefc:
        t = d.efc_type[r]
        if not _is_contact(t):
            r += 1
            continue
        c = d.efc_id[r]
        i = r
        dim = d.contact_dim[c]
        nr = 1 if dim == 1 else (4 if t == CNSTR_CONTACT_PYRAMIDAL else 3)
        r += nr
        g2 = d.contact_geom[c, 1]
        b = m.geom_bodyid[g2]
        w = m.body_weldid[b]
        if m.body_dofnum[w] == 0:
            continue
        com = d.subtree_com[m.body_rootid[b]]
        fr = d.contact_frame[c]
        n0, n1, n2 = fr[0], fr[1], fr[2]
        dist = d.contact_dist[c]
        rad = m.geom_size[g2, 0] if m.geom_type[g2] <= GEOM_CAPSULE else 0.0
        h = rad + 0.5 * dist
        # point and sphere centre, from the root's com
        op0 = d.contact_pos[c, 0] - com[0]
        op1 = d.contact_pos[c, 1] - com[1]
        op2 = d.contact_pos[c, 2] - com[2]
        os0 = op0 + n0 * h
        os1 = op1 + n1 * h
        os2 = op2 + n2 * h
        capsule = m.geom_type[g2] == GEOM_CAPSULE and dim == 3
        xm = d.geom_xmat[g2]
        a0, a1, a2 = xm[2], xm[5], xm[8]
        na = n0 * a0 + n1 * a1 + n2 * a2
        ulen = math.sqrt(max(0.0, 1.0 - na * na))
        # the chain, root first
        L = 0
        k = m.body_dofadr[w] + m.body_dofnum[w] - 1
        while k >= 0:
            L += 1
            k = m.dof_parentid[k]
        k = m.body_dofadr[w] + m.body_dofnum[w] - 1
        for q in range(L - 1, -1, -1):
            chain[q] = k
            k = m.dof_parentid[k]
        for qk in range(L):
            for qj in range(L):
                aff[qk, qj] = _affects(m, chain[qk], chain[qj])
        for q in range(L):
            j = chain[q]
            for x in range(6):
                Sa[q, x] = cdof[j, x] * d.qacc[j]
                Sv[q, x] = cdof[j, x] * d.qvel[j]
        # Jp qacc, Jp qvel at p; Ω qacc, Ω qvel
        Pa[:] = 0.0
        Pv[:] = 0.0
        Wa[:] = 0.0
        Wv[:] = 0.0
        for q in range(L):
            x0, x1, x2 = _cross(Sa[q, 0], Sa[q, 1], Sa[q, 2], op0, op1, op2)
            Pa[0] += Sa[q, 3] + x0
            Pa[1] += Sa[q, 4] + x1
            Pa[2] += Sa[q, 5] + x2
            x0, x1, x2 = _cross(Sv[q, 0], Sv[q, 1], Sv[q, 2], op0, op1, op2)
            Pv[0] += Sv[q, 3] + x0
            Pv[1] += Sv[q, 4] + x1
            Pv[2] += Sv[q, 5] + x2
            for x in range(3):
                Wa[x] += Sa[q, x]
                Wv[x] += Sv[q, x]
        # row directions and the contact's force F = Σ φ_r e_r
        t10, t11, t12 = fr[3], fr[4], fr[5]
        mu1 = d.contact_friction[c, 0]
        mu2 = d.contact_friction[c, 1]
        for x in range(3):
            e[0, x] = fr[x]
            if nr == 3:
                e[1, x] = fr[3 + x]
                e[2, x] = fr[6 + x]
            elif nr == 4:
                e[0, x] = fr[x] + mu1 * fr[3 + x]
                e[1, x] = fr[x] - mu1 * fr[3 + x]
                e[2, x] = fr[x] + mu2 * fr[6 + x]
                e[3, x] = fr[x] - mu2 * fr[6 + x]
        F0 = F1 = F2 = 0.0
        for q in range(nr):
            F0 += force[i + q] * e[q, 0]
            F1 += force[i + q] * e[q, 1]
            F2 += force[i + q] * e[q, 2]
        H = _block_h(d, i, nr if t == CNSTR_CONTACT_ELLIPTIC else 1)
        imp = kb[i, 2]
        impP = kb[i, 3]
        for qk in range(L):
            k = chain[qk]
            w0, w1, w2 = cdof[k, 0], cdof[k, 1], cdof[k, 2]
            v0, v1, v2 = cdof[k, 3], cdof[k, 4], cdof[k, 5]
            # ∂s, ∂dist, ∂p
            x0, x1, x2 = _cross(w0, w1, w2, os0, os1, os2)
            ds0, ds1, ds2 = v0 + x0, v1 + x1, v2 + x2
            dd = n0 * ds0 + n1 * ds1 + n2 * ds2
            dp0 = ds0 - 0.5 * dd * n0
            dp1 = ds1 - 0.5 * dd * n1
            dp2 = ds2 - 0.5 * dd * n2
            # ∂ of the frame's tangents (a capsule's)
            for q in range(nr):
                de[q, 0] = de[q, 1] = de[q, 2] = 0.0
            if capsule:
                da0, da1, da2 = _cross(w0, w1, w2, a0, a1, a2)
                nda = n0 * da0 + n1 * da1 + n2 * da2
                du0 = da0 - nda * n0
                du1 = da1 - nda * n1
                du2 = da2 - nda * n2
                tdu = t10 * du0 + t11 * du1 + t12 * du2
                dt10 = (du0 - tdu * t10) / ulen
                dt11 = (du1 - tdu * t11) / ulen
                dt12 = (du2 - tdu * t12) / ulen
                dt20, dt21, dt22 = _cross(n0, n1, n2, dt10, dt11, dt12)
                if nr == 3:
                    de[1, 0], de[1, 1], de[1, 2] = dt10, dt11, dt12
                    de[2, 0], de[2, 1], de[2, 2] = dt20, dt21, dt22
                else:
                    de[0, 0], de[0, 1], de[0, 2] = mu1 * dt10, mu1 * dt11, mu1 * dt12
                    de[1, 0], de[1, 1], de[1, 2] = -mu1 * dt10, -mu1 * dt11, -mu1 * dt12
                    de[2, 0], de[2, 1], de[2, 2] = mu2 * dt20, mu2 * dt21, mu2 * dt22
                    de[3, 0], de[3, 1], de[3, 2] = -mu2 * dt20, -mu2 * dt21, -mu2 * dt22
            # ∂(Jp w)/∂q_k at p = S_k × (Σ_{k affects j} S_j w_j) at p + (Ω w) × ∂p
            ya[:] = 0.0
            yv[:] = 0.0
            for qj in range(L):
                if aff[qk, qj]:
                    for x in range(6):
                        ya[x] += Sa[qj, x]
                        yv[x] += Sv[qj, x]
            pa0, pa1, pa2 = _moved_velocity(cdof[k], ya, Wa, op0, op1, op2, dp0, dp1, dp2)
            pv0, pv1, pv2 = _moved_velocity(cdof[k], yv, Wv, op0, op1, op2, dp0, dp1, dp2)
            # ∂jar of each row
            for q in range(nr):
                ro = i + q
                bq = kb[ro, 1]
                s = 0.0
                for x in range(3):
                    s += de[q, x] * (Pa[x] + bq * Pv[x])
                s += e[q, 0] * (pa0 + bq * pv0) + e[q, 1] * (pa1 + bq * pv1) + \
                    e[q, 2] * (pa2 + bq * pv2)
                dpos = 0.0 if (t == CNSTR_CONTACT_ELLIPTIC and q > 0) else dd
                s += kb[ro, 0] * (impP * dd * (d.efc_pos[ro] - d.efc_margin[ro]) + imp * dpos)
                dj[q] = s
            # ∂φ
            gain = impP * dd / (imp * (1.0 - imp))
            for q in range(nr):
                s = force[i + q] * gain
                if t == CNSTR_CONTACT_ELLIPTIC:
                    for u in range(nr):
                        s -= H[q, u] * dj[u]
                else:
                    s -= H[0, 0] * dj[q] if nr == 1 else _row_h(d, i + q) * dj[q]
                dphi[q] = s
            # ∂F = Σ φ_r ∂e_r; the point's motion and the axes' turning
            dF0 = dF1 = dF2 = 0.0
            for q in range(nr):
                dF0 += force[i + q] * de[q, 0]
                dF1 += force[i + q] * de[q, 1]
                dF2 += force[i + q] * de[q, 2]
            pf0, pf1, pf2 = _cross(dp0, dp1, dp2, F0, F1, F2)
            of0, of1, of2 = _cross(op0, op1, op2, F0, F1, F2)
            for qj in range(L):
                j = chain[qj]
                c0, c1, c2 = cdof[j, 0], cdof[j, 1], cdof[j, 2]
                c3, c4, c5 = cdof[j, 3], cdof[j, 4], cdof[j, 5]
                x0, x1, x2 = _cross(c0, c1, c2, op0, op1, op2)
                g = dF0 * (c3 + x0) + dF1 * (c4 + x1) + dF2 * (c5 + x2)
                g += c0 * pf0 + c1 * pf1 + c2 * pf2
                if aff[qk, qj]:
                    xa0, xa1, xa2 = _cross(w0, w1, w2, c0, c1, c2)
                    l0, l1, l2 = _cross(w0, w1, w2, c3, c4, c5)
                    m0, m1, m2 = _cross(v0, v1, v2, c0, c1, c2)
                    g += F0 * (l0 + m0) + F1 * (l1 + m1) + F2 * (l2 + m2)
                    g += xa0 * of0 + xa1 * of1 + xa2 * of2
                for q in range(nr):
                    g += J[i + q, j] * dphi[q]
                out[j, k] -= g


@njit(cache=True, inline="always")
def _row_h(d, r):
    """−∂φ/∂jar of a single row r (a pyramid edge): D_r when quadratic, else 0."""
    return d.efc_D[r] if d.efc_state[r] == STATE_QUADRATIC else 0.0


@njit(cache=True, inline="always")
def _hinge_like(m, jn):
    """Whether joint jn has one dof (hinge or slide): its limits and spring are closed-form."""
    return m.jnt_type[jn] != JNT_FREE and m.jnt_type[jn] != JNT_BALL


@njit(cache=True)
def _joint_columns(m, d, out):
    """out += ∂(−qfrc_spring − the limit forces)/∂qpos of hinges and slides, analytically.

    A spring's −k (q − q_spring) gives +k on the diagonal. A limit row has a constant
    J = s (±1) and pos = dist with ∂dist/∂q = s, so ∂jar = s K (I′ (pos − margin) + I) and,
    as a contact's (`_contact_position_columns`), ∂φ = −H ∂jar + φ I′ s / (I (1 − I)).
    """
    kb = d.efc_KBIP
    for r in range(d.nefc[0]):
        if d.efc_type[r] != CNSTR_LIMIT_JOINT or not _hinge_like(m, d.efc_id[r]):
            continue
        k = m.jnt_dofadr[d.efc_id[r]]
        sg = d.efc_J[r, k]
        imp = kb[r, 2]
        impP = kb[r, 3]
        dj = sg * kb[r, 0] * (impP * (d.efc_pos[r] - d.efc_margin[r]) + imp)
        dphi = -_row_h(d, r) * dj + d.efc_force[r] * impP * sg / (imp * (1.0 - imp))
        out[k, k] -= sg * dphi
    if m.opt_disableflags[0] & DSBL_SPRING:
        return
    for jn in range(m.njnt):
        if _hinge_like(m, jn):
            k = m.jnt_dofadr[jn]
            out[k, k] += m.jnt_stiffness[jn]


@njit(cache=True)
def _rest_columns(m, d, eps, centered, q0, rnc0, out):
    """out += the differenced rest of ∂f/∂qpos at ball and free joints with a spring or limit.

    The rest: −qfrc_passive − the non-contact constraint forces (the hinges' and slides' are
    `_joint_columns`). For a rest that is joint-local (`_joint_local`): those joints are
    perturbed together, one dof of each at a time, with no pair collided, and each joint's
    columns take its own dofs' differences. rnc0: the rest at q0. d.qpos ends at q0; d then
    holds the contact-free rest (the caller puts the inverse back). Returns OK, the
    inverse's failure code, or −1 when no joint needed a perturbation (d untouched).
    """
    nv = m.nv
    ndof = np.zeros(m.njnt, np.int64)  # dofs of the joints perturbed, else 0
    nmax = 0
    for jn in range(m.njnt):
        if not _hinge_like(m, jn) and (m.jnt_stiffness[jn] != 0.0 or m.jnt_limited[jn]):
            ndof[jn] = 6 if m.jnt_type[jn] == JNT_FREE else 3
            nmax = max(nmax, ndof[jn])
    if nmax == 0:
        return -1
    bodies = np.zeros(m.nbody, np.int32)
    dpos = np.zeros(nv)
    rnc = np.zeros((2, nv))
    for g in range(nmax):
        for side in range(2 if centered else 1):
            for jn in range(m.njnt):
                if ndof[jn] > g:
                    dpos[m.jnt_dofadr[jn] + g] = 1.0
            integrate_pos_kernel(m, d.qpos, dpos, eps if side == 0 else -eps)
            dpos[:] = 0.0
            code, need = inverse_rest(m, d, bodies)
            d.qpos[:] = q0
            if code != OK:
                return code
            for k in range(nv):
                rnc[side, k] = -d.qfrc_passive[k] - d.qfrc_constraint[k]
        for jn in range(m.njnt):
            if ndof[jn] <= g:
                continue
            adr = m.jnt_dofadr[jn]
            i = adr + g
            for k in range(adr, adr + ndof[jn]):
                if centered:
                    out[k, i] += (rnc[0, k] - rnc[1, k]) / (2.0 * eps)
                else:
                    out[k, i] += (rnc[0, k] - rnc0[k]) / eps
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
def _inverse_fd_entry(d, eps, use_actuation, centered, analytic, DfDq, DfDv, DfDa):
    """∂f/∂qacc and ∂f/∂qvel analytical, ∂f/∂qpos (tangent) analytical in its smooth part.

    mjd_inverseFD: the inverse at (qpos, qvel, qacc); ∂f/∂qacc and ∂f/∂qvel by
    `_inverse_jacobians` where it applies (else by differences: the acceleration stage
    alone, the velocity stage onward); with analytic and plane contacts (`_plane_contacts`)
    the position columns of the contacts and the hinge and slide joints in closed form and
    the ball and free joints' rest by differences (`_rest_columns`); else each tangent
    position perturbed in turn, forward (and backward when centered); out[:, i] = ∂f/∂x_i.
    For the continuous inverse ∂f/∂qpos = ∂(M qacc + c)/∂qpos (analytical,
    `_inverse_jacobians`) plus the differences of the rest, −qfrc_passive − qfrc_constraint
    (− qfrc_actuator); the discrete inverse differences all of f, and so do the velocity
    and position columns with a spatial tendon that has armature (`_spatial_armature`).
    The position columns of the rest run `inverse_rest` (no M, no RNE) on the contacts of
    the pairs in the perturbed dof's subtree; d ends with the inverse at the given state.
    Returns the inverse's code (OK, or the first failure).
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
    grouped = local and _joint_local(m, d, use_actuation)
    # contacts of fixed planes with spheres and capsules: their columns analytical too
    closed = analytic and grouped and with_v and _plane_contacts(m, d)
    if closed:
        _contact_position_columns(m, d, DfDq)
    for stage in range(3):
        # 0: accelerations; 1: velocities; 2: positions, by differences where not analytical
        if (stage == 0 and not disc) or (stage == 1 and with_v):
            continue
        if stage == 2 and closed:
            rnc0 = r0.copy()
            for c in range(ncon0):
                for k in range(nv):
                    rnc0[k] -= Gc[c, k]
            _joint_columns(m, d, DfDq)
            code = _rest_columns(m, d, eps, centered, q0, rnc0, DfDq)
            if code == -1:
                return OK  # d untouched: the inverse at the given state
            if code != OK:
                return code
            continue
        if stage == 2 and local:
            code = _position_columns(m, d, eps, centered, use_actuation, grouped, q0, r0, Gc,
                                     cbody, DfDq)
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


def inverse_derivatives(m, d, eps=1e-6, actuation=False, centered=False, analytic=True):
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
    (analytical, `rnea_derivatives`) plus the rest, −qfrc_passive − qfrc_constraint
    (− qfrc_actuator). With `analytic` the rest is closed-form where every contact is a
    fixed plane (on a body without dofs) against a sphere, capsule, box or mesh, of condim
    1 or 3, and the rest off the contacts is joint by joint (no tendon, active equality,
    gravity compensation, fluid force, adhesion, surface velocity, "diagexact", nor
    `actuation`): the contacts' and the hinge and slide limits' forces differentiated
    through their points, frames, depths and impedances, the joint springs' stiffness;
    only a ball or free joint's spring and limit are differenced. This is the derivative of
    the given contact set: a pair that starts or stops touching within eps is not seen
    (differences see it as a jump). Otherwise, and with `analytic=False`, the rest is
    finite-differenced, forward (MuJoCo's definition) or centered; a column collides only
    the pairs with a geom in its dof's subtree (the others' contacts do not move), unless
    an adhesion actuator reads every contact. MuJoCo's forward differences are O(eps) from
    the closed form (on the humanoid lying, 7e-4 of the largest entry: the contacts'
    stiffness varies fast with their depth). With the "invdiscrete" flag all three are
    differences of all of f; with a spatial tendon that has armature the position columns
    are (its M and bias terms vary with ten_J).
    Afterwards d holds `inverse`'s results at its (unchanged) qpos, qvel and qacc.

    Args:
        m: the Model.
        d: a Data for m (reads qpos, qvel, qacc, ctrl).
        eps: the perturbation, a positive finite float.
        actuation: subtract qfrc_actuator from qfrc_inverse.
        centered: centered differences (twice the evaluations) instead of forward ones.
        analytic: closed-form position columns where the model allows them (above); False
            differences them as mjd_inverseFD does.

    Returns:
        (DfDq, DfDv, DfDa), each (nv, nv).

    Raises:
        ValueError: eps is not a positive finite number.
        TypeError: analytic is not a bool.
        JointspaceError: as `inverse` (a bad state, the discrete inverse with RK4).
    """
    entry.check_pair(m, d, "inverse_derivatives")
    if (isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating))
            or not math.isfinite(eps) or eps <= 0):
        raise ValueError(f"inverse_derivatives: argument eps must be a positive finite number, "
                         f"got {eps!r}")
    if not isinstance(analytic, (bool, np.bool_)):
        raise TypeError(f"inverse_derivatives: argument analytic must be True or False, got "
                        f"{analytic!r}")
    nv = m.nv
    out = [np.empty((nv, nv)) for _ in range(3)]
    ep = _k_inverse_fd.ep
    try:
        code = ep(d._s, float(eps), bool(actuation), bool(centered), bool(analytic), *out)
    except ZeroDivisionError:
        raise division_error("inverse_derivatives") from None
    if code != OK:
        raise_for(m, d, code, "inverse_derivatives")
    return out[0], out[1], out[2]

