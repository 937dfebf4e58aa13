"""Orbit camera: azimuth and elevation around a look-at point, MuJoCo's free-camera angles."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Camera:
    """An orbit camera.

    Attributes:
        azimuth: degrees about the world z axis (MuJoCo's convention: 90 looks along +y).
        elevation: degrees; negative looks down.
        distance: meters from the look-at point; None picks 3 × the model's extent.
        lookat: (3,) world point; None tracks the model's center of mass (its floor height
            kept for models that move on a floor).
        fovy: vertical field of view in degrees.
    """

    azimuth: float = 135.0
    elevation: float = -18.0
    distance: float | None = None
    lookat: tuple | None = None
    fovy: float = 45.0

    def frame(self, target, extent):
        """Eye position and rotation whose rows are the camera's right, up, forward axes."""
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        forward = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az),
                            math.sin(el)])
        dist = self.distance if self.distance is not None else 3.0 * extent
        eye = np.asarray(target, dtype=float) - dist * forward
        right = np.cross(forward, [0.0, 0.0, 1.0])
        n = np.linalg.norm(right)
        right = right / n if n > 1e-9 else np.array([1.0, 0.0, 0.0])
        up = np.cross(right, forward)
        return eye, np.stack([right, up, forward])
