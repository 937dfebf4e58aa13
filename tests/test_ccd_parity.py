"""Convex collision equal to MuJoCo 4.0's mj_collision: count, order, dist, pos and frame.

Seeded random poses of two geoms with margins (deep, shallow and separated-within-margin
poses; tests/_collision_cases.compare_with_mujoco), at MuJoCo's default CCD settings and at
tightened ones. tools/ccd_parity.py runs the same comparison over every convex pair type
with more poses and prints the table.
"""

import pytest

from tests._collision_cases import compare_with_mujoco

pytest.importorskip("mujoco")

NPOSE = 2000
EXACT_FRACTION = 1.0  # the same contacts, in the same order, to PARITY_EXACT in every pose


@pytest.mark.parametrize("setting", ["default", "tight"])
def test_plane_mesh_contacts_equal_mujoco(setting):
    """Plane-mesh: the deepest vertex, then its most downward face's vertices, as MuJoCo 4.0.

    Regression: jointspace clipped the whole face within the margin, MuJoCo 4.0 keeps only
    the face's vertices below the mesh centre (98% of the poses agreed).
    """
    r = compare_with_mujoco("plane", "mesh", NPOSE, seed=11, setting=setting)
    assert r["touch"] > NPOSE // 3, "too few poses in contact to test anything"
    assert r["same"] == 1.0, f"counts differ in poses {r['mism']}"
    assert r["exact"] >= EXACT_FRACTION, f"worst dist, pos, frame: {r['worst']}"
