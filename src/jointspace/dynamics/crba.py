"""Joint-space inertia by the composite-rigid-body algorithm.

crb[b] = Σ cinert[k] over subtree(b);  M[i, j] = cdof[j] · (crb[body(i)] cdof[i]) for j an
ancestor dof of i (or i itself), plus armature on the diagonal.
Reference: RBDA §6.2; Featherstone 2005 for the branch-induced sparsity; MuJoCo mj_crb.
qM uses MuJoCo's classic sparse layout: row i starts at dof_Madr[i] with M[i, i], followed by
M[i, parent(i)], M[i, parent(parent(i))], … (a dof's ancestors are the only non-zeros).
"""

import numpy as np
from numba import njit

from jointspace.rotation import dot6, mul_inert_vec


@njit(cache=True)
def _crb(m, d):
    """Composite inertias (crb) and sparse M (qM); needs _com_pos."""
    d.crb[:, :] = d.cinert
    # crb_parent += crb_child (backward pass)
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        if p > 0:
            for k in range(10):
                d.crb[p, k] += d.crb[i, k]
    buf = np.empty(6)
    for i in range(m.nv):
        # buf = crb[body(i)] cdof[i];  M[i, j] = cdof[j] · buf along the ancestor chain
        mul_inert_vec(buf, d.crb[m.dof_bodyid[i]], d.cdof[i])
        adr = m.dof_Madr[i]
        j = i
        while j >= 0:
            d.qM[adr] = dot6(d.cdof[j], buf)
            adr += 1
            j = m.dof_parentid[j]
        d.qM[m.dof_Madr[i]] += m.dof_armature[i]


@njit(cache=True)
def _dense_from_sparse(m, qM, out):
    """out (nv, nv) = the symmetric matrix stored in MuJoCo's sparse layout."""
    out[:, :] = 0.0
    for i in range(m.nv):
        adr = m.dof_Madr[i]
        j = i
        while j >= 0:
            out[i, j] = qM[adr]
            out[j, i] = qM[adr]
            adr += 1
            j = m.dof_parentid[j]
