"""Offscreen software renderer: flat-shaded triangles with a z-buffer, no display, no GPU.

`render(m, d)` draws the model's geoms posed by d (see `scene.Scene`) through an orbit
`Camera` or one of the model's cameras (named: its pose cam_xpos/cam_xmat, looking along
its −z axis with x right and y up, and its fovy; orthographic cameras project in parallel
over fovy meters of height): vertices are moved to the camera frame and projected with a
pinhole model; each triangle gets one color (Lambert shading from a key light and a
headlight, both sides lit); the compiled kernel `_rasterize` fills pixels whose centers the
triangle covers and keeps the nearest (largest 1/z, which is affine in screen space). The
image is drawn at twice the resolution and averaged down (2×2 supersampling against jagged
edges). Contact points with their normal forces, body frames and the center of mass can be
drawn on top.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from jointspace.viz.camera import Camera
from jointspace.viz.scene import Scene, cylinder, grid_sphere

NEAR = 0.02                  # triangles closer than this to the camera plane are dropped (m)
AMBIENT, KEY, HEAD = 0.32, 0.5, 0.28
KEY_DIR = np.array([0.35, -0.45, 0.82]) / np.linalg.norm([0.35, -0.45, 0.82])
SKY_TOP = np.array([0.55, 0.67, 0.80])
SKY_BOTTOM = np.array([0.86, 0.89, 0.93])
CONTACT_RGBA = (0.95, 0.25, 0.15, 1.0)
FORCE_RGBA = (0.95, 0.55, 0.10, 1.0)
COM_RGBA = (0.95, 0.85, 0.10, 1.0)
AXIS_RGBA = ((0.9, 0.15, 0.15, 1.0), (0.15, 0.75, 0.15, 1.0), (0.15, 0.3, 0.95, 1.0))


@njit(cache=True)
def _rasterize(xy, invz, color, img, zbuf):
    """Fill the triangles into img (h, w, 3) keeping per pixel the largest 1/z.

    xy (k, 3, 2) pixel coordinates of the corners, invz (k, 3) their 1/z, color (k, 3).
    A pixel (i, j) is covered when its center (j + ½, i + ½) has barycentric weights ≥ 0.
    """
    h, w = zbuf.shape
    for t in range(xy.shape[0]):
        x0, y0 = xy[t, 0, 0], xy[t, 0, 1]
        x1, y1 = xy[t, 1, 0], xy[t, 1, 1]
        x2, y2 = xy[t, 2, 0], xy[t, 2, 1]
        area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
        if abs(area) < 1e-12:
            continue
        inv_area = 1.0 / area
        jmin = max(int(math.floor(min(x0, x1, x2))), 0)
        jmax = min(int(math.ceil(max(x0, x1, x2))), w - 1)
        imin = max(int(math.floor(min(y0, y1, y2))), 0)
        imax = min(int(math.ceil(max(y0, y1, y2))), h - 1)
        z0, z1, z2 = invz[t, 0], invz[t, 1], invz[t, 2]
        for i in range(imin, imax + 1):
            py = i + 0.5
            for j in range(jmin, jmax + 1):
                px = j + 0.5
                # barycentric weights: signed sub-areas over the whole area
                b0 = ((x1 - px) * (y2 - py) - (x2 - px) * (y1 - py)) * inv_area
                b1 = ((x2 - px) * (y0 - py) - (x0 - px) * (y2 - py)) * inv_area
                b2 = 1.0 - b0 - b1
                if b0 < 0.0 or b1 < 0.0 or b2 < 0.0:
                    continue
                z = b0 * z0 + b1 * z1 + b2 * z2
                if z > zbuf[i, j]:
                    zbuf[i, j] = z
                    img[i, j, 0] = color[t, 0]
                    img[i, j, 1] = color[t, 1]
                    img[i, j, 2] = color[t, 2]


@njit(cache=True)
def _resolve(img, ss, out):
    """out (h, w, 3) uint8 = the mean of each ss × ss block of img (h·ss, w·ss, 3) in [0, 1]."""
    h, w = out.shape[0], out.shape[1]
    scale = 255.0 / (ss * ss)
    for i in range(h):
        for j in range(w):
            for c in range(3):
                s = 0.0
                for a in range(ss):
                    for b in range(ss):
                        s += img[i * ss + a, j * ss + b, c]
                out[i, j, c] = np.uint8(min(max(s * scale + 0.5, 0.0), 255.0))


@njit(cache=True)
def _fill_sky(img, top, bottom):
    """Vertical gradient from top (first row) to bottom (last row)."""
    h = img.shape[0]
    for i in range(h):
        t = i / max(h - 1, 1)
        for c in range(3):
            v = top[c] + t * (bottom[c] - top[c])
            for j in range(img.shape[1]):
                img[i, j, c] = v


def _instances(template, poses, colors):
    """Copies of a template mesh: poses are (R (3, 3), p (3,), scale (3,)) per copy."""
    tv, tf = template
    verts, faces, rgba = [], [], []
    for k, (R, p, s) in enumerate(poses):
        faces.append(tf + k * len(tv))
        verts.append((tv * s) @ R.T + p)
        rgba.append(np.tile(colors[k], (len(tf), 1)))
    if not verts:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), np.zeros((0, 4))
    return np.vstack(verts), np.vstack(faces), np.vstack(rgba)


def _rot_z_to(u):
    """A rotation taking +z to the unit vector u."""
    z = np.asarray(u, dtype=float)
    a = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(a, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


_SPHERE = grid_sphere(12, 8)
_ROD = cylinder(1.0, 0.5, 10)
_ROD = (_ROD[0] + [0.0, 0.0, 0.5], _ROD[1])       # rod from z = 0 to z = 1


def overlays(m, d, extent, *, contacts=False, com=False, frames=False):
    """World-space triangles of the optional decorations (contacts, com, body frames)."""
    from jointspace.trajectory import contact_normal_forces

    parts = []
    r = 0.015 * extent
    if contacts and d.ncon[0] > 0:
        n = int(d.ncon[0])
        pos = d.contact_pos[:n]
        eye3 = np.eye(3)
        parts.append(_instances(_SPHERE, [(eye3, p, np.full(3, r)) for p in pos],
                                [CONTACT_RGBA] * n))
        f = contact_normal_forces(m, d)
        # forces are drawn relative to the model's weight (1 N without gravity)
        weight = float(m.body_mass.sum() * np.linalg.norm(m.opt.gravity)) or 1.0
        rods = []
        for i in range(n):
            if f[i] <= 0:
                continue
            length = 0.5 * extent * f[i] / weight
            normal = d.contact_frame[i, :3]
            # the force on geom 2 pushes along the normal (from geom 1 to geom 2)
            rods.append((_rot_z_to(normal), pos[i], np.array([0.4 * r, 0.4 * r, length])))
        parts.append(_instances(_ROD, rods, [FORCE_RGBA] * len(rods)))
    if com:
        parts.append(_instances(_SPHERE, [(np.eye(3), d.subtree_com[0], np.full(3, 2 * r))],
                                [COM_RGBA]))
    if frames:
        rods, cols = [], []
        for b in range(1, m.nbody):
            R = d.xmat[b].reshape(3, 3)
            for a in range(3):
                rods.append((_rot_z_to(R[:, a]), d.xpos[b],
                             np.array([0.3 * r, 0.3 * r, 0.1 * extent])))
                cols.append(AXIS_RGBA[a])
        parts.append(_instances(_ROD, rods, cols))
    return parts


def shade(world_faces, rgba, forward):
    """Flat Lambert color of each triangle: ambient + key light + headlight, both sides lit."""
    e1 = world_faces[:, 1] - world_faces[:, 0]
    e2 = world_faces[:, 2] - world_faces[:, 0]
    n = np.cross(e1, e2)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    light = AMBIENT + KEY * np.abs(n @ KEY_DIR) + HEAD * np.abs(n @ forward)
    return np.clip(rgba[:, :3] * light[:, None], 0.0, 1.0)


def default_target(m, d, scene):
    """Look-at point: the model's center of mass (xy) at its current height."""
    c = np.array(d.subtree_com[0], dtype=float)
    if not np.all(np.isfinite(c)) or m.body_mass.sum() <= 0:
        c = d.xpos[min(1, m.nbody - 1)].copy()
    return c


def render(m, d, *, width=640, height=480, camera=None, scene=None, contacts=False,
           com=False, frames=False, supersample=2):
    """Render the model posed by d to an RGB image, offscreen and on the CPU.

    Args:
        m: the Model.
        d: a Data for m after `kinematics` (or `forward`/`step`), whose geom poses are drawn;
            contacts need `forward` or `step` (they read d.contact_* and d.efc_force).
        width: image width in pixels.
        height: image height in pixels.
        camera: a `Camera` (default: orbit camera tracking the center of mass), or the name
            or id of one of the model's cameras (MJCF <camera>), posed by d's state.
        scene: a `Scene` of m, to reuse its tessellation across frames.
        contacts: draw contact points and their normal forces (length ∝ force, the model's
            weight drawn as half its size).
        com: draw the center of mass.
        frames: draw each body's frame (x red, y green, z blue).
        supersample: render at this multiple of the size and average down.

    Returns:
        (height, width, 3) uint8 image.
    """
    _check_size(width, height, supersample)
    scene = scene if scene is not None else Scene(m)
    camera = camera if camera is not None else Camera()
    if isinstance(camera, Camera):
        target = camera.lookat if camera.lookat is not None else default_target(m, d, scene)
        eye, rot = camera.frame(target, scene.extent)
        fovy, ortho = camera.fovy, False
    else:
        eye, rot, fovy, ortho = model_camera(m, d, camera)

    verts = [scene.world_vertices(d)]
    faces = [scene.face]
    rgba = [scene.face_rgba]
    nv = len(verts[0])
    for v, f, c in overlays(m, d, scene.extent, contacts=contacts, com=com, frames=frames):
        verts.append(v)
        faces.append(f + nv)
        rgba.append(c)
        nv += len(v)
    world = np.vstack(verts)
    face = np.vstack(faces)
    rgba = np.vstack(rgba)

    cam = (world - eye) @ rot.T                       # x right, y up, z forward
    tri = cam[face]                                   # (k, 3, 3)
    keep = np.all(tri[:, :, 2] > NEAR, axis=1) & (rgba[:, 3] > 0)
    tri, face, rgba = tri[keep], face[keep], rgba[keep]
    color = shade(world[face], rgba, rot[2])

    w, h = width * supersample, height * supersample
    xy = np.empty(tri.shape[:2] + (2,))
    if ortho:  # parallel projection of fovy meters onto the image height; depth key max − z
        f = h / fovy
        xy[..., 0] = 0.5 * w + f * tri[..., 0]
        xy[..., 1] = 0.5 * h - f * tri[..., 1]
        invz = (tri[..., 2].max() + 1.0 if tri.size else 1.0) - tri[..., 2]
    else:
        f = 0.5 * h / math.tan(math.radians(fovy) / 2)
        xy[..., 0] = 0.5 * w + f * tri[..., 0] / tri[..., 2]
        xy[..., 1] = 0.5 * h - f * tri[..., 1] / tri[..., 2]
        invz = 1.0 / tri[..., 2]

    img = np.empty((h, w, 3))
    _fill_sky(img, SKY_TOP, SKY_BOTTOM)
    zbuf = np.zeros((h, w))
    _rasterize(np.ascontiguousarray(xy), np.ascontiguousarray(invz),
               np.ascontiguousarray(color), img, zbuf)
    out = np.empty((height, width, 3), dtype=np.uint8)
    _resolve(img, supersample, out)
    return out


def model_camera(m, d, camera):
    """(eye, rows right/up/forward, fovy, orthographic) of the model's camera `camera`.

    The pose is d's: the position stage's camera poses (kinematics, com_pos, camlight) are
    recomputed from d.qpos first, so a Data after `kinematics` alone renders right too.
    """
    from jointspace._numba.entry import check_pair
    from jointspace.kinematics import camlight, kinematics_com_pos

    check_pair(m, d, "render")
    c = m.camera(camera)
    kinematics_com_pos(m._s, d._s)
    camlight(m._s, d._s, False)
    R = np.asarray(d.cam_xmat[c], dtype=float).reshape(3, 3)
    rot = np.stack([R[:, 0], R[:, 1], -R[:, 2]])
    return (np.array(d.cam_xpos[c], dtype=float), rot, float(m.cam_fovy[c]),
            int(m.cam_projection[c]) == 1)


def _check_size(width, height, supersample):
    for name, v in (("width", width), ("height", height), ("supersample", supersample)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"render: argument {name} must be a positive integer, got {v!r}")
    if width * height * supersample * supersample > 64_000_000:
        raise ValueError(f"render: {width}x{height} at supersample {supersample} is too "
                         f"large (more than 64 million pixels)")
