"""Height fields: compiled as MuJoCo compiles them, collided as MuJoCo 4.0.0 collides them.

Fields: hfield_size, nrow, ncol, adr and the normalized elevations (exact: both keep the
single-precision values), the hfield geoms' size, rbound, aabb and dataid, for inline,
empty, PNG (every colour type and bit depth, interlaced and not, every filter type) and
MuJoCo's binary files; invalid PNGs refused as MuJoCo refuses them.

Contacts: seeded poses of each collided geom type over a small random field, the lowest
point of the geom pushed 1.5 cm into to 0.5 cm above the local surface, with and without a
margin, against mj_forward (MuJoCo's ccd_tolerance tightened to 1e-12 so that its GJK/EPA
converge as ours do): the same contacts in the same order. Boxes and meshes penetrating a
prism: MuJoCo 4.0's EPA stops short of the minimum penetration depth there (its depths are
below a sampled minimum over directions), so ours are checked against that sampled minimum
instead, and the counts against MuJoCo's.
"""

import struct
import warnings
import zlib

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests._real_models import real_model

# sphere and capsule: GJK distance of a point or segment to a prism, exact in both engines
EXACT_TOL = 1e-9
# a capsule's segment nearly parallel to a prism face: its nearest point is not unique, so
# the two GJKs pick points apart along it (measured 8.2e-8 m)
SEGMENT_POS_TOL = 1e-6
# ellipsoid and cylinder (curved, EPA/GJK iterate on a smooth support): measured 7.4e-10 m
# in distance, 1.1e-4 in the normal and 3.6e-6 m in the point against converged MuJoCo
CURVED_DIST_TOL, CURVED_NORMAL_TOL, CURVED_POS_TOL = 1e-8, 5e-4, 2e-5
# sampled minimum penetration depth (20,000 directions, refined three times around the
# best): it overestimates the true minimum by ~ (last spread)² · size ≈ 1e-6 m (measured)
SAMPLED_DEPTH_TOL = 2e-5
# rays: the same arithmetic as mj_rayHfield (measured 6e-16 in distance, 3e-15 in normal)
RAY_TOL = 1e-12
# quadruped on a bumpy terrain: the solver's tolerance, as in tests/test_real_sweep.py
CONSTRAINED_TOL = 1e-6

XML = """<mujoco><option><flag gravity="disable"/></option>
<asset><hfield name="h" size="0.5 0.4 0.2 0.1" nrow="5" ncol="6" elevation="{elev}"/>
<mesh name="m" vertex="0 0 0  .1 0 0  0 .1 0  0 0 .1  .08 .08 .05  -.02 .05 .07"/></asset>
<worldbody><geom name="hf" type="hfield" hfield="h" pos="0.05 -0.02 0.01" euler="{eul}"
  margin="{margin}"/>
<body name="b" pos="0 0 .2"><freejoint/><geom name="g" type="{type}" {size}/></body>
</worldbody></mujoco>"""
GEOMS = {"sphere": 'size=".07"', "capsule": 'size=".05 .08"',
         "ellipsoid": 'size=".06 .08 .04"', "cylinder": 'size=".06 .05"',
         "box": 'size=".06 .05 .04"', "mesh": 'mesh="m"'}


ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2))  # (first column, first row, column step, row step) of each pass
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _scanlines(img, depth):
    """The rows of img ((h, w, channels) samples) packed at depth bits, MSB first."""
    h = img.shape[0]
    if depth == 16:
        return img.astype(">u2").reshape(h, -1).view(np.uint8)
    if depth == 8:
        return img.astype(np.uint8).reshape(h, -1)
    bits = (img.reshape(h, -1, 1) >> np.arange(depth - 1, -1, -1)) & 1
    return np.packbits(bits.reshape(h, -1).astype(np.uint8), axis=1)


def _filtered(raw, bpp, first_filter):
    """PNG-filtered scanlines (filter byte first), cycling the five filter types by row."""
    out = bytearray()
    prev = np.zeros(raw.shape[1], dtype=np.int64)
    for r in range(raw.shape[0]):
        cur = raw[r].astype(np.int64)
        ftype = (first_filter + r) % 5
        left = np.r_[np.zeros(bpp, dtype=np.int64), cur][:cur.size]
        upleft = np.r_[np.zeros(bpp, dtype=np.int64), prev][:cur.size]
        if ftype == 0:
            f = cur
        elif ftype == 1:
            f = cur - left
        elif ftype == 2:
            f = cur - prev
        elif ftype == 3:
            f = cur - (left + prev) // 2
        else:
            p = left + prev - upleft
            pa, pb, pc = np.abs(p - left), np.abs(p - prev), np.abs(p - upleft)
            f = cur - np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
        out += bytes([ftype]) + (f & 0xFF).astype(np.uint8).tobytes()
        prev = cur
    return bytes(out)


def _chunk(ctype, body):
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(
        ">I", zlib.crc32(ctype + body))


def _png(img, color, depth, fname, *, interlace=False, palette=None, trns=None,
         first_filter=0):
    """Write img ((h, w, channels) samples below 2^depth) as a PNG and return its bytes.

    Rows cycle the five filter types from first_filter on (in each Adam7 pass when
    interlaced); palette ((n, 3) RGB) and trns (bytes) become PLTE and tRNS chunks.
    """
    h, w, channels = img.shape
    bpp = max(1, channels * depth // 8)
    if interlace:
        stream = b"".join(_filtered(_scanlines(img[y0::dy, x0::dx], depth), bpp, first_filter)
                          for x0, y0, dx, dy in ADAM7 if x0 < w and y0 < h)
    else:
        stream = _filtered(_scanlines(img, depth), bpp, first_filter)
    data = PNG_SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color, 0, 0,
                                                       int(interlace)))
    if palette is not None:
        data += _chunk(b"PLTE", np.asarray(palette, dtype=np.uint8).tobytes())
    if trns is not None:
        data += _chunk(b"tRNS", trns)
    data += _chunk(b"IDAT", zlib.compress(stream)) + _chunk(b"IEND", b"")
    fname.write_bytes(data)
    return data


def _both(xml, path):
    f = path / "hf.xml"
    f.write_text(xml)
    return mujoco.MjModel.from_xml_path(str(f)), js.load(f)


def test_compiled_fields_match_mujoco(tmp_path):
    rng = np.random.default_rng(0)
    files = {
        "g8.png": (rng.integers(0, 256, (7, 9, 1)), 0, 8),
        "g16.png": (rng.integers(0, 65536, (6, 5, 1)), 0, 16),
        "rgb.png": (rng.integers(0, 256, (5, 8, 3)), 2, 8),
        "rgba16.png": (rng.integers(0, 65536, (4, 6, 4)), 6, 16),
        "ga.png": (rng.integers(0, 256, (5, 5, 2)), 4, 8),
    }
    for name, (img, color, depth) in files.items():
        _png(img, color, depth, tmp_path / name)
    custom = rng.normal(size=(4, 3)).astype("<f4")
    (tmp_path / "c.bin").write_bytes(struct.pack("<ii", 4, 3) + custom.tobytes())
    elev = " ".join(f"{x:.4f}" for x in rng.uniform(-2, 3, 12))
    assets = "\n".join(f'<hfield name="{n[:-4]}" file="{n}" size="1 2 .3 .4"/>' for n in files)
    xml = f"""<mujoco><asset>{assets}
      <hfield name="inline" nrow="3" ncol="4" size=".5 .6 .7 .8" elevation="{elev}"/>
      <hfield name="empty" nrow="20" ncol="11" size="3 3 1 .1"/>
      <hfield file="c.bin" size="2 1 1 1"/></asset>
      <worldbody>{"".join(f'<geom type="hfield" hfield="{n[:-4]}"/>' for n in files)}
      <geom type="hfield" hfield="inline" pos="1 2 3" euler="10 20 30"/>
      <geom type="hfield" hfield="c"/>
      <body><freejoint/><geom type="hfield" hfield="empty"/></body></worldbody></mujoco>"""
    mj, m = _both(xml, tmp_path)
    assert m.nhfield == mj.nhfield == 8 and m.nhfielddata == mj.nhfielddata
    assert m.names["hfield"] == [mj.hfield(i).name for i in range(mj.nhfield)]
    for k in ("hfield_nrow", "hfield_ncol", "hfield_adr", "geom_dataid", "geom_type"):
        np.testing.assert_array_equal(getattr(m, k), getattr(mj, k), err_msg=k)
    for k in ("hfield_size", "hfield_data", "geom_size", "geom_rbound", "geom_aabb",
              "body_mass", "body_inertia"):
        np.testing.assert_array_equal(getattr(m, k), getattr(mj, k).reshape(
            getattr(m, k).shape), err_msg=k)


# (rows, columns): Adam7 passes one pixel wide or tall, and empty ones (width or height < 5)
PNG_SIZES = ((5, 7), (7, 5), (2, 2), (2, 9), (9, 3), (13, 11))


def test_every_png_kind_matches_mujoco(tmp_path):
    """Every PNG colour type and bit depth decodes to MuJoCo's hfield_data, exactly.

    Interlaced and not, odd sizes, every filter type in every pass; palette indices past the
    palette's end, tRNS chunks, a suggested palette in an RGB image (lodepng's 8-bit gray).
    """
    rng = np.random.default_rng(1)
    files = []
    for color, depths in PNG_DEPTHS.items():
        for depth in depths:
            for interlace in (False, True):
                for h, w in PNG_SIZES:
                    img = rng.integers(0, 1 << depth, (h, w, PNG_CHANNELS[color]))
                    palette = None
                    if color == 3:  # up to 2^depth entries: some indices may be past the end
                        palette = rng.integers(0, 256, (rng.integers(2, (1 << depth) + 1), 3))
                        palette[1, 0] = palette[0, 0] ^ 0x80
                        img[0, 0, 0], img[-1, -1, 0] = 0, 1
                    else:  # the extremes, so that no field normalizes to zeros
                        img[0, 0, 0], img[-1, -1, 0] = 0, (1 << depth) - 1
                    files.append((img, color, depth, dict(interlace=interlace, palette=palette,
                                                          first_filter=len(files) % 5)))
    img = rng.integers(0, 4, (6, 5, 1))
    files += [(img, 3, 2, dict(palette=rng.integers(0, 256, (4, 3)), trns=b"\x00\x80")),
              (img, 0, 2, dict(trns=b"\x00\x02", interlace=True)),
              (rng.integers(0, 256, (4, 6, 3)), 2, 8, dict(palette=rng.integers(0, 256, (9, 3))))]
    for k, (img, color, depth, opts) in enumerate(files):
        _png(img, color, depth, tmp_path / f"p{k}.png", **opts)
    xml = ("<mujoco><asset>" + "".join(f'<hfield file="p{k}.png" size="1 1 1 1"/>'
                                       for k in range(len(files)))
           + "</asset><worldbody/></mujoco>")
    mj, m = _both(xml, tmp_path)
    assert m.nhfield == mj.nhfield == len(files)
    for k in ("hfield_nrow", "hfield_ncol", "hfield_adr"):
        np.testing.assert_array_equal(getattr(m, k), getattr(mj, k), err_msg=k)
    np.testing.assert_array_equal(m.hfield_data, mj.hfield_data)
    for adr, nrow, ncol in zip(mj.hfield_adr, mj.hfield_nrow, mj.hfield_ncol, strict=True):
        assert np.ptp(mj.hfield_data[adr:adr + nrow * ncol]) == 1.0


def _shallow_pose(mj, md, typ, rng):
    """A random orientation and xy; z puts the geom's lowest point near the surface below."""
    q = np.r_[rng.uniform(-.45, .45), rng.uniform(-.35, .35), 1.0, rng.normal(size=4)]
    q[3:] /= np.linalg.norm(q[3:])
    md.qpos[:] = q
    mujoco.mj_kinematics(mj, md)
    rz = md.geom_xmat[1].reshape(3, 3)[2]
    s = mj.geom_size[1]
    low = {"sphere": s[0], "capsule": s[0] + s[1] * abs(rz[2]),
           "ellipsoid": np.sqrt(np.sum((s * rz) ** 2)),
           "cylinder": s[0] * np.sqrt(max(0.0, 1 - rz[2] ** 2)) + s[1] * abs(rz[2]),
           "box": np.sum(s * np.abs(rz))}.get(typ)
    if low is None:  # mesh: its lowest vertex
        low = q[2] - md.geom_xpos[1, 2] - np.min(mj.mesh_vert @ rz)
    hs, H = mj.hfield_size[0], mj.hfield_data.reshape(5, 6)
    c = int(np.clip((q[0] - .05 + hs[0]) / (2 * hs[0]) * 5, 0, 4))
    r = int(np.clip((q[1] + .02 + hs[1]) / (2 * hs[1]) * 4, 0, 3))
    q[2] = H[r:r + 2, c:c + 2].max() * hs[2] + 0.01 + low + rng.uniform(-0.015, 0.005)
    return q


def _sampled_depths(mj, md, dirs, rng):
    """Sampled minimum penetration depth of geom 1's hull with each prism it penetrates."""
    hs, nr, nc = mj.hfield_size[0], mj.hfield_nrow[0], mj.hfield_ncol[0]
    H = mj.hfield_data.reshape(nr, nc)
    R1 = md.geom_xmat[0].reshape(3, 3)
    R2 = R1.T @ md.geom_xmat[1].reshape(3, 3)
    p2 = R1.T @ (md.geom_xpos[1] - md.geom_xpos[0])
    if mj.geom_type[1] == mujoco.mjtGeom.mjGEOM_BOX:
        v = np.array([[a, b, c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)])
        v = v * mj.geom_size[1]
    else:
        v = mj.mesh_vert
    B = v @ R2.T + p2
    hb = (-(B @ dirs.T)).max(0)
    dx, dy = 2 * hs[0] / (nc - 1), 2 * hs[1] / (nr - 1)
    out = []
    for r in range(nr - 1):
        pts = [(dx * c - hs[0], dy * (r + 1 - i) - hs[1], H[r + 1 - i, c] * hs[2])
               for c in range(nc) for i in range(2)]
        for j in range(2, len(pts)):
            tri = np.array(pts[j - 2:j + 1])
            P = np.vstack([np.c_[tri[:, :2], np.full(3, -hs[3])], tri])
            vals = (P @ dirs.T).max(0) + hb
            best = dirs[np.argmin(vals)]
            depth = vals.min()
            for spread in (0.05, 0.01, 0.002):  # refine around the best direction
                u = best + spread * rng.normal(size=(4000, 3))
                u /= np.linalg.norm(u, axis=1)[:, None]
                vals = (P @ u.T).max(0) + (-(B @ u.T)).max(0)
                if vals.min() < depth:
                    depth, best = vals.min(), u[np.argmin(vals)]
            if depth > 0:
                out.append(depth)
    return np.array(out)


@pytest.mark.parametrize("typ", list(GEOMS))
def test_contacts_match_mujoco(typ):
    rng = np.random.default_rng(1)
    elev = " ".join(f"{x:.3f}" for x in rng.uniform(0, 1, 30))
    dirs = rng.normal(size=(20000, 3))
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    total = 0
    for eul, margin in (("0 0 0", 0), ("10 -5 20", 0), ("0 0 0", 0.01)):
        xml = XML.format(elev=elev, type=typ, size=GEOMS[typ], eul=eul, margin=margin)
        mj = mujoco.MjModel.from_xml_string(xml)
        mj.opt.ccd_tolerance, mj.opt.ccd_iterations = 1e-12, 500
        md = mujoco.MjData(mj)
        m = js.load_string(xml)
        m.opt.ccd_tolerance, m.opt.ccd_iterations = 1e-12, 500
        d = js.Data(m)
        for _ in range(16):
            q = _shallow_pose(mj, md, typ, rng)
            md.qpos[:] = q
            d.qpos[:] = q
            mujoco.mj_forward(mj, md)
            n = js.collision(m, d)
            assert n == md.ncon, (eul, margin, q)
            total += n
            c = d.contact
            mjd = md.contact.dist[:n]
            if typ in ("box", "mesh"):
                pen = mjd < 0
                # where MuJoCo's EPA converges (no penetration: GJK), the same contacts
                np.testing.assert_allclose(c.dist[~pen], mjd[~pen], atol=EXACT_TOL)
                if pen.any():
                    ref = _sampled_depths(mj, md, dirs, rng)
                    assert len(ref) == pen.sum()
                    ours = -c.dist[pen]
                    assert np.all(ours <= ref + 1e-12) and np.all(ours >= ref - SAMPLED_DEPTH_TOL)
                    assert np.all(ours >= -mjd[pen] - 1e-9)  # MuJoCo's depths fall short
                continue
            tol = {"sphere": (EXACT_TOL,) * 3, "capsule": (EXACT_TOL, EXACT_TOL, SEGMENT_POS_TOL)
                   }.get(typ, (CURVED_DIST_TOL, CURVED_NORMAL_TOL, CURVED_POS_TOL))
            np.testing.assert_allclose(c.dist, mjd, atol=tol[0])
            np.testing.assert_allclose(c.frame[:, :3], md.contact.frame[:n, :3], atol=tol[1])
            np.testing.assert_allclose(c.pos, md.contact.pos[:n], atol=tol[2])
    assert total >= 4  # the poses touch the field


def test_quadruped_on_bumpy_terrain_matches_mj_forward():
    """dm_control's quadruped with its terrain filled (as its escape task does) and in use."""
    f = real_model("dm-control", "dm_control/suite/quadruped.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mj = mujoco.MjModel.from_xml_path(str(f))
        m = js.load(f)
    rng = np.random.default_rng(2)
    n = mj.hfield_nrow[0]
    x = np.linspace(-1, 1, n)
    bumps = 0.004 * (1 + np.sin(40 * x)[:, None] * np.cos(37 * x + rng.uniform(0, 6))[None, :])
    mj.hfield_data[:] = bumps.ravel()
    m.hfield_data[:] = mj.hfield_data
    md = mujoco.MjData(mj)
    d = js.Data(m)
    for k in range(2):
        q = mj.qpos0.copy()
        q[2] -= 0.05
        q[7:] += 0.1 * k * rng.normal(size=mj.nq - 7)
        v = 0.2 * k * rng.normal(size=mj.nv)
        md.qpos[:], md.qvel[:] = q, v
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        terrain = np.sum(mj.geom_type[md.contact.geom1[:md.ncon]] == mujoco.mjtGeom.mjGEOM_HFIELD)
        assert d.ncon[0] == md.ncon and terrain >= 4
        np.testing.assert_array_equal(d.contact.geom1, md.contact.geom1)
        np.testing.assert_allclose(d.contact.dist, md.contact.dist, atol=EXACT_TOL)
        err = np.max(np.abs(d.qacc - md.qacc)) / max(1.0, np.max(np.abs(md.qacc)))
        assert err <= CONSTRAINED_TOL, err
        # its 20 rangefinders, some of them on the terrain, and the other position and
        # velocity sensors exactly; the acceleration sensors (accelerometer, force, torque)
        # read qacc, which the solver gives to its tolerance
        acc = np.zeros(mj.nsensordata, dtype=bool)
        for i in range(mj.nsensor):
            if mj.sensor_needstage[i] == mujoco.mjtStage.mjSTAGE_ACC:
                acc[mj.sensor_adr[i]:mj.sensor_adr[i] + mj.sensor_dim[i]] = True
        assert acc.any() and not acc.all()
        np.testing.assert_allclose(d.sensordata[~acc], md.sensordata[~acc], rtol=RAY_TOL,
                                   atol=RAY_TOL)
        np.testing.assert_allclose(d.sensordata[acc], md.sensordata[acc],
                                   rtol=CONSTRAINED_TOL, atol=CONSTRAINED_TOL)


def test_rays_match_mj_ray():
    """Seeded rays at a tilted field: its triangles, its base box and its sides (mj_ray)."""
    rng = np.random.default_rng(3)
    elev = " ".join(f"{x:.3f}" for x in rng.uniform(0, 1, 30))
    xml = XML.format(elev=elev, type="sphere", size='size=".01" pos="5 5 5"', eul="10 -5 20",
                     margin=0)
    mj = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mj)
    mujoco.mj_forward(mj, md)
    m = js.load_string(xml)
    d = js.Data(m)
    js.forward(m, d)
    gid = np.zeros(1, np.int32)
    hits = 0
    for k in range(600):
        p = np.r_[rng.uniform(-0.7, 0.7, 2), rng.uniform(-0.3, 0.5)]
        v = rng.normal(size=3)
        if k % 2:
            v[2] = -3 * abs(v[2])
        x = mujoco.mj_ray(mj, md, p, v, None, 1, -1, gid)
        y, g = js.ray(m, d, p, v)
        assert (x >= 0) == (y >= 0) and g == gid[0], (p, v)
        if x >= 0:
            hits += 1
            assert abs(x - y) <= RAY_TOL
    assert hits > 100
    # the rangefinder's hit normal too: a mocap eye looking around the field
    xml = (f'<mujoco><asset><hfield name="h" size="0.5 0.4 0.2 0.1" nrow="5" ncol="6" '
           f'elevation="{elev}"/></asset><worldbody><geom type="hfield" hfield="h" '
           f'pos="0.05 -0.02 0.01" euler="10 -5 20"/><body mocap="true"><site name="s"/>'
           f'</body></worldbody><sensor><rangefinder site="s" data="dist normal"/></sensor>'
           f'</mujoco>')
    mj = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mj)
    m = js.load_string(xml)
    d = js.Data(m)
    hits = 0
    for _ in range(150):
        p = np.r_[rng.uniform(-0.7, 0.7, 2), rng.uniform(-0.3, 0.5)]
        q = rng.normal(size=4)
        md.mocap_pos[0], md.mocap_quat[0] = p, q / np.linalg.norm(q)
        d.mocap_pos[0], d.mocap_quat[0] = p, q / np.linalg.norm(q)
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        hits += md.sensordata[0] >= 0
        np.testing.assert_allclose(d.sensordata, md.sensordata, atol=RAY_TOL)
    assert hits > 20


def test_drawn_surface_is_the_grid_rays_hit():
    """The renderer's triangles of a field: MuJoCo's grid points, split as rays see them."""
    from jointspace.viz.scene import geom_mesh

    rng = np.random.default_rng(4)
    elev = " ".join(f"{x:.3f}" for x in rng.uniform(0, 1, 30))
    xml = XML.format(elev=elev, type="sphere", size='size=".01" pos="5 5 5"', eul="0 0 0",
                     margin=0)
    mj = mujoco.MjModel.from_xml_string(xml)
    m = js.load_string(xml)
    d = js.Data(m)
    js.forward(m, d)
    v, f, colors = geom_mesh(m, 0)
    assert f.shape == (2 * 4 * 5, 3) and colors.shape == (len(f), 4)
    np.testing.assert_array_equal(v[:, 2], mj.hfield_data * mj.hfield_size[0, 2])
    pos = m.geom_pos[0]
    for x, y in rng.uniform([-0.5, -0.4], [0.5, 0.4], size=(40, 2)):
        dist, _ = js.ray(m, d, pos + [x, y, 1.0], [0.0, 0.0, -1.0])
        for tri in v[f]:  # the drawn triangle under (x, y): its plane's height there
            a, b, c = tri
            den = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1])
            w0 = ((b[1] - c[1]) * (x - c[0]) + (c[0] - b[0]) * (y - c[1])) / den
            w1 = ((c[1] - a[1]) * (x - c[0]) + (a[0] - c[0]) * (y - c[1])) / den
            if min(w0, w1, 1 - w0 - w1) >= -1e-12:
                z = w0 * a[2] + w1 * b[2] + (1 - w0 - w1) * c[2]
                assert abs((1.0 - dist) - z) <= RAY_TOL
                break
        else:
            raise AssertionError((x, y))


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("content, match", [
    (b"GIF89a not a png", r"bad\.png.*not a PNG file"),
    (None, r"bad\.png.*truncated PNG"),
    (b"", r"bad\.png.*is empty"),
])
def test_unreadable_png_is_refused(tmp_path, content, match):
    if content is None:  # a real PNG cut in the middle
        content = _png(np.zeros((4, 4, 1), dtype=int), 0, 8, tmp_path / "ok.png")[:40]
    (tmp_path / "bad.png").write_bytes(content)
    xml = ('<mujoco><asset><hfield name="h" file="bad.png" size="1 1 1 1"/></asset>'
           '<worldbody><geom type="hfield" hfield="h"/></worldbody></mujoco>')
    with pytest.raises(ModelError, match=match) as err:
        _both_js(xml, tmp_path)
    assert "hf.xml:1 <hfield name='h'>" in str(err.value)


def _both_js(xml, path):
    f = path / "hf.xml"
    f.write_text(xml)
    return js.load(f)


def _bad_png(case):
    """The bytes of a PNG broken as case names (a 4 x 3 gray or palette image otherwise)."""
    img = np.arange(12).reshape(3, 4, 1) % 4
    stream = _filtered(_scanlines(img, 8), 1, 0)
    ihdr = dict(w=4, h=3, depth=8, color=0, interlace=0)
    chunks = []
    if case == "gray at 3 bits":
        ihdr["depth"] = 3
    elif case == "palette at 16 bits":
        ihdr.update(depth=16, color=3)
        chunks.append(_chunk(b"PLTE", bytes(12)))
    elif case == "colour type 5":
        ihdr["color"] = 5
    elif case == "interlace method 2":
        ihdr["interlace"] = 2
    elif case == "no PLTE":
        ihdr["color"] = 3
    elif case == "empty PLTE":
        ihdr["color"] = 3
        chunks.append(_chunk(b"PLTE", b""))
    elif case == "257 palette entries":
        ihdr["color"] = 3
        chunks.append(_chunk(b"PLTE", bytes(3 * 257)))
    elif case == "no rows":
        ihdr["h"], stream = 0, b""
    elif case == "interlaced, last pass cut":
        ihdr["interlace"] = 1
        stream = b"".join(_filtered(_scanlines(img[y0::dy, x0::dx], 8), 1, 0)
                          for x0, y0, dx, dy in ADAM7 if x0 < 4 and y0 < 3)[:-3]
    elif case == "filter type 5":
        stream = stream[:5] + b"\x05" + stream[6:]
    head = _chunk(b"IHDR", struct.pack(">IIBBBBB", ihdr["w"], ihdr["h"], ihdr["depth"],
                                       ihdr["color"], 0, 0, ihdr["interlace"]))
    if case == "bad CRC":
        head = head[:-1] + bytes([head[-1] ^ 1])
    return (PNG_SIGNATURE + head + b"".join(chunks) + _chunk(b"IDAT", zlib.compress(stream))
            + _chunk(b"IEND", b""))


@pytest.mark.parametrize("case, reason", [
    ("gray at 3 bits", r"corrupt PNG \(3 bits per sample is not a PNG bit depth for gray"),
    ("palette at 16 bits", r"corrupt PNG \(16 bits per sample is not a PNG bit depth for "
                           r"palette images\)"),
    ("colour type 5", r"corrupt PNG \(unknown colour type 5\)"),
    ("interlace method 2", r"corrupt PNG \(unknown interlace method 2\)"),
    ("no PLTE", r"corrupt PNG \(a palette image without a PLTE chunk\)"),
    ("empty PLTE", r"corrupt PNG \(a PLTE chunk of 0 bytes; a palette holds 1 to 256"),
    ("257 palette entries", r"corrupt PNG \(a PLTE chunk of 771 bytes"),
    ("no rows", r"PNG size 4x0 is empty"),
    ("interlaced, last pass cut", r"truncated PNG image data \(15 bytes where 3 rows of 4 "
                                  r"pixels need 18\)"),
    ("filter type 5", r"corrupt PNG \(unknown filter type 5 in row 1\)"),
    ("bad CRC", r"corrupt PNG \(CRC mismatch in chunk b'IHDR'\)"),
])
def test_invalid_png_is_refused(tmp_path, case, reason):
    """PNGs MuJoCo's loader refuses too, refused with the reason, the file and the element."""
    (tmp_path / "p.png").write_bytes(_bad_png(case))
    xml = ('<mujoco><asset><hfield name="h" file="p.png" size="1 1 1 1"/></asset>'
           '<worldbody/></mujoco>')
    with pytest.raises(ValueError, match="PNG"):
        _both(xml, tmp_path)
    with pytest.raises(ModelError, match=r"p\.png': " + reason) as err:
        _both_js(xml, tmp_path)
    assert "hf.xml:1 <hfield name='h'>" in str(err.value)


@pytest.mark.parametrize("asset, match", [
    ('nrow="2" ncol="3" size="1 1 1 1" elevation="1 2 3 4 5"',
     r"elevation has 5 values, but nrow \* ncol = 2 \* 3 = 6"),
    ('nrow="2" ncol="2" size="1 -1 1 1"', r"size=\(1.0, -1.0, 1.0, 1.0\) must be positive"),
    ('nrow="2" ncol="2"', r"needs size="),
    ('size="1 1 1 1"', r"needs a file, or nrow and ncol"),
    ('nrow="1" ncol="5" size="1 1 1 1"', r"1 x 5 grid has no cell"),
])
def test_bad_hfield_attributes_are_refused(asset, match):
    xml = (f'<mujoco><asset><hfield name="h" {asset}/></asset><worldbody>'
           f'<geom type="hfield" hfield="h"/></worldbody></mujoco>')
    with pytest.raises(ModelError, match=match) as err:
        js.load_string(xml)
    assert "<hfield name='h'>" in str(err.value) or "hfield 'h'" in str(err.value)


def test_bad_custom_file_and_references_are_refused(tmp_path):
    (tmp_path / "c.bin").write_bytes(struct.pack("<ii", 3, 3) + b"\0" * 12)
    xml = ('<mujoco><asset><hfield name="h" file="c.bin" size="1 1 1 1"/></asset>'
           '<worldbody/></mujoco>')
    with pytest.raises(ModelError, match=r"c\.bin.*20 bytes, but a 3 x 3 field needs 44"):
        _both_js(xml, tmp_path)
    with pytest.raises(ModelError, match=r"unknown hfield 'nope'"):
        js.load_string('<mujoco><worldbody><geom type="hfield" hfield="nope"/></worldbody>'
                       '</mujoco>')
    with pytest.raises(ModelError, match=r"an hfield geom needs an hfield attribute"):
        js.load_string('<mujoco><worldbody><geom type="hfield"/></worldbody></mujoco>')
    with pytest.raises(ModelError, match=r"height fields are not supported in geom distance"):
        js.load_string('<mujoco><asset><hfield name="h" nrow="2" ncol="2" size="1 1 1 1"/>'
                       '</asset><worldbody><geom name="a" type="hfield" hfield="h"/><body>'
                       '<geom name="b" size=".1"/></body></worldbody><sensor><distance '
                       'geom1="b" geom2="a"/></sensor></mujoco>')
