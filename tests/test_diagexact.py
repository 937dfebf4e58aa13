"""The "diagexact" enable flag (MuJoCo 4.0): impedance from the exact diagonal of J M⁻¹ Jᵀ.

With the flag, MuJoCo replaces efc_diagApprox (the approximation from the qpos0 inverse
weights) by diag(J M⁻¹ Jᵀ) at the current state and recomputes R, D and the reference from
it, in mj_forward and in mj_inverse (which then needs M). The rows, the Newton solution and
the inverse are compared with MuJoCo 4.0 on the scenes of test_constraint: joint limits and
friction loss, loops closed by connect and weld (bodies and sites), and contacts.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.types import ENBL_DIAGEXACT
from tests.test_constraint import (
    LIMITS,
    LOOPS,
    SITES,
    _check_rows,
    _check_solution,
    _contact_scene,
    _forward_both,
    _pair,
    _random_state,
    _row_map,
)
from tests.test_dynamics import SINGULAR_XML

# the inverse's qfrc_inverse against mj_inverse, relative to its largest entry: the same
# closed-form forces from the same rows (measured 3e-13)
INVERSE_TOL = 1e-9
# rows of the contact scenes (relative to max(1, |x|)): the exact diagonal adds one
# back-substitution per row to ROW_TOL's sums (measured 4e-14)
EXACT_ROW_TOL = 1e-9


def _enable(m, mjm):
    m.opt.enableflags |= ENBL_DIAGEXACT
    mjm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_DIAGEXACT


@pytest.mark.parametrize("xml", [LIMITS, LOOPS, SITES], ids=["limits", "loops", "sites"])
def test_rows_solution_and_inverse_match_mujoco(xml):
    """efc_diagApprox, R, D, KBIP, aref, the Newton solution and qfrc_inverse vs MuJoCo."""
    m, mjm, mjd = _pair(xml)
    _enable(m, mjm)
    d = js.make_data(m)
    rng = np.random.default_rng(4)
    moved = 0.0
    for _ in range(3):
        qpos, qvel = _random_state(mjm, rng)
        _forward_both(m, d, mjm, mjd, qpos, qvel)
        assert mjd.nefc > 0
        _check_rows(d, mjd)
        _check_solution(m, d, mjd)
        # the exact diagonal is not the approximation
        dexact = d.efc_diagApprox[:mjd.nefc].copy()
        m.opt.enableflags &= ~ENBL_DIAGEXACT
        js.forward(m, d)
        moved = max(moved, np.max(np.abs(d.efc_diagApprox[:mjd.nefc] - dexact) / dexact))
        m.opt.enableflags |= ENBL_DIAGEXACT
        # the inverse at MuJoCo's qacc builds the same rows (with M, as mj_invPosition)
        d.qacc[:] = mjd.qacc
        mujoco.mj_inverse(mjm, mjd)
        js.inverse(m, d)
        _check_rows(d, mjd)
        scale = max(1.0, np.abs(mjd.qfrc_inverse).max())
        assert np.max(np.abs(d.qfrc_inverse - mjd.qfrc_inverse)) < INVERSE_TOL * scale
    assert moved > 1e-3


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_contact_rows_and_solution_match_mujoco(cone):
    """The humanoid lying on the floor: contact, limit rows and the solution vs MuJoCo."""
    m, d, mjm, mjd = _contact_scene("humanoid_lying", cone)
    _enable(m, mjm)
    mujoco.mj_forward(mjm, mjd)
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    js.forward(m, d)
    n = mjd.nefc
    assert d.nefc[0] == n and mjd.ncon > 0
    rows = _row_map(d, mjd)
    for ours, theirs in (("efc_diagApprox", "efc_diagA"), ("efc_R", "efc_R"),
                         ("efc_D", "efc_D"), ("efc_KBIP", "efc_KBIP"),
                         ("efc_aref", "efc_aref")):
        a = getattr(d, ours)[rows]
        b = getattr(mjd, theirs)
        err = np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))
        assert err < EXACT_ROW_TOL, (ours, err)
    scale = max(1.0, np.max(np.abs(mjd.qacc)))
    assert np.max(np.abs(d.qacc - mjd.qacc)) < 1e-6 * scale


def test_continuous_inverse_with_singular_mass_names_the_flag():
    """With diagexact the continuous inverse needs M⁻¹ for its rows.

    A massless dof with a violated limit is a clear error; without rows, or without the
    flag, it inverts.
    """
    xml = SINGULAR_XML.replace("<mujoco>", '<mujoco><option><flag diagexact="enable"/></option>')
    xml = xml.replace('name="massless" type="hinge"',
                      'name="massless" type="hinge" limited="true" range="-0.1 0.1"')
    with pytest.warns(js.JointspaceWarning, match="singular"):
        m = js.load_string(xml)
    d = js.make_data(m)
    js.inverse(m, d)
    assert d.nefc[0] == 0
    d.qpos[1] = 0.3
    with pytest.raises(js.SingularMassError, match="'massless'.*diagexact|diagexact.*'massless'"):
        js.inverse(m, d)
    m.opt.enableflags &= ~ENBL_DIAGEXACT
    js.inverse(m, d)
    assert d.nefc[0] == 1
