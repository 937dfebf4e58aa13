"""Collision detection: broadphase, narrowphase per geom-type pair, contact records.

`collision(m, d)` is the stage; `ContactView` (as `d.contact`) reads its output. See
`jointspace.collision.driver` for the pair table, filters and parameter rules. The compiled
modules load on first use, so importing jointspace stays quick.
"""

from jointspace.types import ContactView

__all__ = ["ContactView", "broadphase_count", "collision"]


_impl = []


def collision(m, d, kinematics=True):
    """Detect contacts between the geoms of `m` at the poses in `d` (MuJoCo's mj_collision).

    Fills d.ncon and the contact_* arrays (read them through `d.contact`); runs forward
    kinematics first unless kinematics=False. See `jointspace.collision.driver.collision`.

    Returns:
        The number of contacts.
    """
    if not _impl:
        from jointspace.collision.driver import collision as _collision

        _impl.append(_collision)
    return _impl[0](m, d, kinematics, 3)


def broadphase_count(m, d):
    """Number of geom pairs whose bounding boxes overlap (see the driver's docstring)."""
    from jointspace.collision.driver import broadphase_count as _count

    return _count(m, d)
