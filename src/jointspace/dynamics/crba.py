"""Joint-space inertia by the composite-rigid-body algorithm.

crb[b] = Σ cinert[k] over subtree(b);  M[i, j] = cdof[j] · (crb[body(i)] cdof[i]) for j an
ancestor dof of i (or i itself), plus armature on the diagonal.
Reference: RBDA §6.2; Featherstone 2005 for the branch-induced sparsity; MuJoCo mj_crb.
qM uses MuJoCo's classic sparse layout: row i starts at dof_Madr[i] with M[i, i], followed by
M[i, parent(i)], M[i, parent(parent(i))], … (a dof's ancestors are the only non-zeros).

Armature: M includes `dof_armature` on its diagonal, as MuJoCo's does. Pinocchio's crba
adds its own `model.armature` (zero unless set), so compare with Pinocchio on models without
armature, or set Pinocchio's armature to ours.
"""

import numpy as np
from numba import njit, uint64

from jointspace._numba import entry
from jointspace._numba.entry import IN1, OUT2, FastPathMiss, check_pair, fresh
from jointspace.kinematics import com_pos, kinematics_bodies
from jointspace.spatial import inert_mul
from jointspace.types import Data, Model


@njit(cache=True)
def crb_stage(m, d):
    """Composite inertias (crb) and sparse M (qM); needs com_pos."""
    nbody = m.nbody
    parentid = m.body_parentid
    dof_bodyid = m.dof_bodyid
    dof_parentid = m.dof_parentid
    madr = m.dof_Madr
    armature = m.dof_armature
    crb = d.crb
    cinert = d.cinert
    cdof = d.cdof
    qM = d.qM
    for i in range(nbody):
        for k in range(10):
            crb[i, k] = cinert[i, k]
    # crb_parent += crb_child (backward pass; trees stop below the world)
    for i in range(nbody - 1, 0, -1):
        p = uint64(parentid[i])
        if p > 0:
            for k in range(10):
                crb[p, k] += crb[i, k]
    for i in range(m.nv):
        # f = crb[body(i)] cdof[i];  M[i, j] = cdof[j] · f along the ancestor chain
        f0, f1, f2, f3, f4, f5 = inert_mul(crb, uint64(dof_bodyid[i]), cdof[i, 0], cdof[i, 1],
                                           cdof[i, 2], cdof[i, 3], cdof[i, 4], cdof[i, 5])
        adr = uint64(madr[i])
        j = i
        while j >= 0:
            ju = uint64(j)
            qM[adr] = (cdof[ju, 0] * f0 + cdof[ju, 1] * f1 + cdof[ju, 2] * f2
                       + cdof[ju, 3] * f3 + cdof[ju, 4] * f4 + cdof[ju, 5] * f5)
            adr += uint64(1)
            j = dof_parentid[j]
        qM[uint64(madr[i])] += armature[i]


@njit(cache=True)
def dense_from_sparse(m, qM, out):
    """Fill out (nv, nv) with the symmetric matrix stored in MuJoCo's sparse layout."""
    nv = m.nv
    madr = m.dof_Madr
    dof_parentid = m.dof_parentid
    for i in range(nv):
        for j in range(nv):
            out[i, j] = 0.0
    for i in range(nv):
        adr = uint64(madr[i])
        j = i
        while j >= 0:
            out[i, uint64(j)] = qM[adr]
            out[uint64(j), i] = qM[adr]
            adr += uint64(1)
            j = dof_parentid[j]


@njit(cache=True)
def _crba_driver(d, q, out):
    """Set qpos = q; run kinematics → com_pos → crb; fill out with the dense M."""
    m = d.model
    qpos = d.qpos
    for k in range(q.shape[0]):
        qpos[k] = q[k]
    kinematics_bodies(m, d)
    com_pos(m, d)
    crb_stage(m, d)
    dense_from_sparse(m, d.qM, out)


@njit(cache=True)
def _crba_checked(d, q, out):
    """_crba_driver once the arguments' shapes match d's model; False if one does not."""
    m = d.model
    if q.shape[0] != m.nq or out.shape[0] != m.nv or out.shape[1] != m.nv:
        return False
    _crba_driver(d, q, out)
    return True


_k_crba = entry.Kernel(_crba_checked, globals(), sig=(None, IN1, OUT2))
_empty = np.empty


def crba(m, d, q):
    """Joint-space inertia matrix M(q) by the composite-rigid-body algorithm.

    One compiled call runs kinematics, com_pos and the CRBA. M includes armature on its
    diagonal (MuJoCo's convention). The sparse lower triangle stays in d.qM (MuJoCo's
    layout, see the module docstring), ready for `factor_m`.

    Args:
        m: the Model.
        d: a Data for m; q is copied into d.qpos, and the kinematic fields, crb and qM are
            filled.
        q: (nq,) positions.

    Returns:
        (nv, nv) dense symmetric M.
    """
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s:
        nv = m.nv
        out = _empty((nv, nv))
        try:
            if _k_crba(d._s, q, out):
                return out
        except FastPathMiss:
            pass
    check_pair(m, d, "crba")
    q = fresh(q, m._shq, "q", "crba")
    out = np.empty((m.nv, m.nv))
    _k_crba(d._s, q, out)
    return out
