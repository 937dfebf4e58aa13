"""Offscreen rendering and the image/video encoders, checked by independent decoders.

Pillow decodes our PNG and GIF files (it shares no code with our encoders), and ffmpeg's
own probe counts the frames of our MP4. The renderer is checked by what must hold of any
correct picture: the humanoid covers pixels the empty scene does not, a change of pose moves
them, and a geom lands where the pinhole projection of its center says.
"""

import math

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

import jointspace as js
from jointspace.viz import Camera, GifWriter, Mp4Writer, write_png
from jointspace.viz.encode import gif_indices, gif_palette

MIN_CHANGED = 0.02   # a new pose changes at least 2% of the pixels of a 160x120 picture
PROJ_TOL = 2.0       # pixels: a sphere's drawn centroid vs its projected center


@pytest.fixture(scope="module")
def humanoid():
    m = js.models.humanoid()
    d = js.make_data(m)
    js.kinematics(m, d)
    return m, d


def test_humanoid_renders_and_changes_with_pose(humanoid, tmp_path):
    m, d = humanoid
    cam = Camera(azimuth=90, elevation=-10, distance=3.0, lookat=(0, 0, 0.8))
    img = js.render(m, d, width=160, height=120, camera=cam)
    assert img.shape == (120, 160, 3) and img.dtype == np.uint8
    # the floor and the body: many distinct colors, not a blank or single-color image
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50
    assert img.std() > 10
    pose = m.qpos0.copy()
    pose[m.jnt_qposadr[m.joint("shoulder1_right")]] = 1.2
    pose[m.jnt_qposadr[m.joint("hip_y_left")]] = -1.0
    d2 = js.make_data(m)
    d2.qpos[:] = pose
    js.kinematics(m, d2)
    img2 = js.render(m, d2, width=160, height=120, camera=cam)
    changed = np.any(img != img2, axis=2).mean()
    assert changed > MIN_CHANGED
    # the same pose renders the same picture
    np.testing.assert_array_equal(js.render(m, d, width=160, height=120, camera=cam), img)
    write_png(tmp_path / "h.png", img2)
    back = np.asarray(Image.open(tmp_path / "h.png").convert("RGB"))
    np.testing.assert_array_equal(back, img2)


def test_a_sphere_lands_where_the_pinhole_projection_says():
    xml = """<mujoco><worldbody>
      <body pos="0.3 -0.2 0.5"><freejoint/><geom type="sphere" size="0.1" rgba="1 0 0 1"/>
      </body></worldbody></mujoco>"""
    m = js.load_string(xml)
    d = js.make_data(m)
    js.kinematics(m, d)
    cam = Camera(azimuth=60, elevation=-30, distance=2.0, lookat=(0, 0, 0.3), fovy=40)
    w, h = 200, 160
    img = js.render(m, d, width=w, height=h, camera=cam).astype(int)
    red = (img[..., 0] > 100) & (img[..., 1] < 60) & (img[..., 2] < 60)
    rows, cols = np.nonzero(red)
    eye, rot = cam.frame(np.array(cam.lookat), 1.0)
    p = rot @ (d.xpos[1] - eye)
    f = 0.5 * h / math.tan(math.radians(cam.fovy) / 2)
    assert abs((cols + 0.5).mean() - (0.5 * w + f * p[0] / p[2])) < PROJ_TOL
    assert abs((rows + 0.5).mean() - (0.5 * h - f * p[1] / p[2])) < PROJ_TOL
    # its apparent radius is that of a sphere of radius 0.1 at that depth (±1.5 px)
    radius = math.sqrt(red.sum() / math.pi)
    assert abs(radius - f * 0.1 / math.sqrt(p[2] ** 2 - 0.1 ** 2)) < 1.5


def test_gif_decodes_to_our_palette_colors(tmp_path):
    rng = np.random.default_rng(3)
    # first frame: 200 distinct colors at palette bin centers, so the palette holds them all
    bins = rng.choice(32768, size=200, replace=False)
    colors = np.stack([bins >> 10, (bins >> 5) & 31, bins & 31], -1) * 8 + 4
    first = colors[rng.integers(0, 200, size=(100, 120))].astype(np.uint8)
    # then noise, whose LZW table fills and is cleared many times
    frames = [first] + [rng.integers(0, 256, size=(100, 120, 3), dtype=np.uint8)
                        for _ in range(2)]
    w = GifWriter(tmp_path / "a.gif", fps=20)
    for f in frames:
        w.add(f)
    w.close()
    palette, lut = gif_palette(frames[:1])
    gif = Image.open(tmp_path / "a.gif")
    assert gif.n_frames == 3
    assert gif.info["duration"] == 50
    for k, f in enumerate(frames):
        gif.seek(k)
        np.testing.assert_array_equal(np.asarray(gif.convert("RGB")),
                                      palette[gif_indices(f, lut)])
    gif.seek(0)
    np.testing.assert_array_equal(np.asarray(gif.convert("RGB")), first)


def test_mp4_has_the_frames_written(tmp_path, humanoid):
    m, d = humanoid
    res = js.viz.render_trajectory(m, tmp_path / "fall.mp4", seconds=0.2, fps=20, width=96,
                                   height=72)
    assert res.frames == 5 and not res.interrupted
    nframes, secs = imageio_ffmpeg.count_frames_and_secs(str(tmp_path / "fall.mp4"))
    assert nframes == 5
    assert secs == pytest.approx(5 / 20, abs=0.06)
    w = Mp4Writer(tmp_path / "odd.mp4", fps=10)
    for k in range(3):
        w.add(np.full((33, 45, 3), 40 * k, dtype=np.uint8))   # odd sizes are padded
    w.close()
    assert imageio_ffmpeg.count_frames_and_secs(str(tmp_path / "odd.mp4"))[0] == 3


def test_replay_and_png_sequence(tmp_path):
    m = js.models.load("pendulum", n=2)
    d = js.make_data(m)
    d.qpos[:] = [1.0, -0.5]
    traj = js.simulate(m, d, 0.3)
    pattern = str(tmp_path / "f_%03d.png")
    res = js.viz.render_trajectory(m, pattern, traj=traj, fps=10, width=48, height=40)
    assert res.frames == 4 and res.t_end == pytest.approx(0.3)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [f"f_{k:03d}.png" for k in range(4)]
    # each replayed frame is the picture of the recorded state nearest its time
    for k in (0, 3):
        i = int(np.argmin(np.abs(traj.time - k / 10)))
        dk = js.make_data(m)
        dk.qpos[:] = traj.qpos[i]
        js.kinematics(m, dk)
        want = js.render(m, dk, width=48, height=40)
        got = np.asarray(Image.open(tmp_path / f"f_{k:03d}.png").convert("RGB"))
        np.testing.assert_array_equal(got, want)


def test_bad_arguments_are_named(humanoid):
    m, d = humanoid
    with pytest.raises(ValueError, match="width"):
        js.render(m, d, width=0)
    with pytest.raises(ValueError, match="uint8"):
        write_png("x.png", np.zeros((4, 4, 3)))
