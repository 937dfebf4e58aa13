"""Collision detection: broadphase, narrowphase per geom-type pair, contact records."""
