"""Image and video files without dependencies: PNG (zlib), animated GIF (own LZW), MP4 (ffmpeg).

PNG and GIF are written here from the format specifications (PNG: RFC 2083; GIF: the GIF89a
specification), so `jointspace render` works on a bare installation. MP4 needs an ffmpeg
executable: the one shipped by the `imageio-ffmpeg` package (the `viewer` extra) or one on
PATH.

A GIF has one 256-color palette: `gif_palette` picks the most frequent colors of the first
frames (5 bits per channel), and every pixel takes its nearest palette color through a
32×32×32 lookup table.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib

import numpy as np
from numba import njit

from jointspace.errors import JointspaceError


def _check_rgb(img, fname):
    img = np.asarray(img)
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise ValueError(f"{fname}: the image must be a (height, width, 3) uint8 array, got "
                         f"{img.dtype} {img.shape}")
    return np.ascontiguousarray(img)


def png_bytes(img):
    """PNG file content of an RGB image ((h, w, 3) uint8), 8-bit truecolor, no filter."""
    img = _check_rgb(img, "png_bytes")
    h, w, _ = img.shape

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = np.zeros((h, 1 + 3 * w), dtype=np.uint8)   # filter byte 0 (none) starts each row
    raw[:, 1:] = img.reshape(h, 3 * w)
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def _atomic_write(path, data):
    """Write to a temporary file beside path, then rename it (path is whole or absent)."""
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               suffix=os.path.splitext(path)[1])
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_png(path, img):
    """Write an RGB image ((h, w, 3) uint8) to a PNG file."""
    _atomic_write(path, png_bytes(img))


# ----------------------------------------------------------------------------- GIF


def gif_palette(frames):
    """A 256-color palette for the frames and the lookup table of nearest palette colors.

    Returns:
        palette (256, 3) uint8, lut (32768,) uint8 indexed by r>>3 << 10 | g>>3 << 5 | b>>3.
    """
    counts = np.zeros(32768, dtype=np.int64)
    for f in frames:
        q = (f >> 3).astype(np.int64)
        counts += np.bincount((q[..., 0] << 10 | q[..., 1] << 5 | q[..., 2]).ravel(),
                              minlength=32768)
    used = np.flatnonzero(counts)
    top = used[np.argsort(counts[used])[::-1][:256]]
    bins = np.stack([top >> 10, (top >> 5) & 31, top & 31], -1)
    palette = np.zeros((256, 3), dtype=np.uint8)
    palette[:len(top)] = (bins * 8 + 4).astype(np.uint8)
    # nearest palette entry for each of the 32768 bin centers
    allbins = np.arange(32768)
    centers = np.stack([allbins >> 10, (allbins >> 5) & 31, allbins & 31], -1) * 8 + 4
    cand = palette[:max(len(top), 1)].astype(np.int64)
    lut = np.empty(32768, dtype=np.uint8)
    for s in range(0, 32768, 4096):
        dist = ((centers[s:s + 4096, None, :] - cand[None]) ** 2).sum(-1)
        lut[s:s + 4096] = np.argmin(dist, axis=1)
    return palette, lut


def gif_indices(img, lut):
    """Palette indices (h, w) uint8 of an RGB image through a `gif_palette` lookup table."""
    q = (img >> 3).astype(np.int64)
    return lut[q[..., 0] << 10 | q[..., 1] << 5 | q[..., 2]]


@njit(cache=True)
def _lzw(indices, out):
    """GIF LZW of 8-bit indices (minimum code size 8) into out; returns the bytes written.

    Codes 0…255 are the pixels, 256 clears the table, 257 ends; new strings get codes from
    258 up, the code width grows from 9 bits to 12 and the table is cleared when full.
    Packed least significant bit first, as GIF requires.
    """
    clear, end = 256, 257
    child = np.full((4096, 256), -1, dtype=np.int16)   # child[code, byte] = code of string+byte
    nbytes = 0
    acc = 0
    nbits = 0
    width = 9
    nxt = 258
    # emit(clear)
    acc |= clear << nbits
    nbits += width
    while nbits >= 8:
        out[nbytes] = acc & 255
        nbytes += 1
        acc >>= 8
        nbits -= 8
    prefix = np.int64(indices[0])
    for k in range(1, indices.shape[0]):
        c = indices[k]
        code = child[prefix, c]
        if code >= 0:
            prefix = code
            continue
        acc |= prefix << nbits
        nbits += width
        while nbits >= 8:
            out[nbytes] = acc & 255
            nbytes += 1
            acc >>= 8
            nbits -= 8
        if nxt < 4096:
            child[prefix, c] = nxt
            if nxt == (1 << width) and width < 12:
                width += 1
            nxt += 1
        else:
            acc |= clear << nbits
            nbits += width
            while nbits >= 8:
                out[nbytes] = acc & 255
                nbytes += 1
                acc >>= 8
                nbits -= 8
            child[:, :] = -1
            width = 9
            nxt = 258
        prefix = np.int64(c)
    acc |= prefix << nbits
    nbits += width
    while nbits >= 8:
        out[nbytes] = acc & 255
        nbytes += 1
        acc >>= 8
        nbits -= 8
    if nxt == (1 << width) and width < 12:
        width += 1
    acc |= end << nbits
    nbits += width
    while nbits > 0:
        out[nbytes] = acc & 255
        nbytes += 1
        acc >>= 8
        nbits -= 8
    return nbytes


def _gif_frame_data(indices):
    """Image data sub-blocks of one frame: minimum code size, 255-byte blocks, terminator."""
    flat = np.ascontiguousarray(indices.ravel())
    out = np.empty(2 * flat.size + 64, dtype=np.uint8)
    n = _lzw(flat, out)
    data = out[:n].tobytes()
    blocks = [bytes([8])]
    for s in range(0, n, 255):
        part = data[s:s + 255]
        blocks.append(bytes([len(part)]) + part)
    blocks.append(b"\x00")
    return b"".join(blocks)


class GifWriter:
    """Animated GIF written frame by frame; the file is complete after every frame.

    The palette comes from the first frame. Each added frame is appended and the trailer
    rewritten, so an interrupted render leaves a valid GIF of the frames so far.
    """

    def __init__(self, path, fps=30.0, loop=True):
        self.path = os.fspath(path)
        self.delay = max(2, int(round(100.0 / fps)))   # hundredths of a second
        self.loop = loop
        self.frames = 0
        self._lut = None
        self._f = None

    def add(self, img):
        """Append one (h, w, 3) uint8 frame."""
        img = _check_rgb(img, "GifWriter.add")
        h, w, _ = img.shape
        if self._f is None:
            palette, self._lut = gif_palette([img])
            self.shape = (h, w)
            self._f = open(self.path, "wb")
            head = b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF7, 0, 0) + palette.tobytes()
            if self.loop:
                head += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
            self._f.write(head)
        elif (h, w) != self.shape:
            raise ValueError(f"GifWriter.add: frame size {w}x{h} differs from the first "
                             f"frame's {self.shape[1]}x{self.shape[0]}")
        else:
            self._f.seek(-1, os.SEEK_END)               # drop the previous trailer
        control = b"\x21\xf9\x04\x00" + struct.pack("<H", self.delay) + b"\x00\x00"
        descriptor = b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0)
        self._f.write(control + descriptor + _gif_frame_data(gif_indices(img, self._lut))
                      + b"\x3b")
        self._f.flush()
        self.frames += 1

    def close(self):
        """Close the file."""
        if self._f is not None:
            self._f.close()
            self._f = None


# ----------------------------------------------------------------------------- MP4


def ffmpeg_executable():
    """Path of an ffmpeg executable (imageio-ffmpeg's, else PATH's), or None."""
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return shutil.which("ffmpeg")


class Mp4Writer:
    """H.264 MP4 through an ffmpeg process fed raw RGB frames on its standard input.

    Frames are padded to even sizes (yuv420p needs them). `close` finishes the file; on
    Ctrl-C the frames already sent still make a playable file.
    """

    def __init__(self, path, fps=30.0):
        exe = ffmpeg_executable()
        if exe is None:
            raise JointspaceError(
                "writing .mp4 needs ffmpeg: pip install 'jointspace[viewer]' (it brings "
                "imageio-ffmpeg's ffmpeg) or install ffmpeg; or write a .gif instead")
        self.exe = exe
        self.path = os.fspath(path)
        self.fps = fps
        self.frames = 0
        self._p = None

    def add(self, img):
        """Append one (h, w, 3) uint8 frame."""
        img = _check_rgb(img, "Mp4Writer.add")
        h, w, _ = img.shape
        if self._p is None:
            self.shape = (h, w)
            cmd = [self.exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
                   "-s", f"{w}x{h}", "-r", f"{self.fps:g}", "-i", "-",
                   "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264",
                   "-pix_fmt", "yuv420p", "-movflags", "+faststart", self.path]
            # its own process group: Ctrl-C reaches us, and we finish the file cleanly
            self._p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)
        elif (h, w) != self.shape:
            raise ValueError(f"Mp4Writer.add: frame size {w}x{h} differs from the first "
                             f"frame's {self.shape[1]}x{self.shape[0]}")
        self._p.stdin.write(img.tobytes())
        self.frames += 1

    def close(self):
        """Finish the file (waits for ffmpeg)."""
        if self._p is None:
            return
        self._p.stdin.close()
        err = self._p.stderr.read().decode(errors="replace")
        rc = self._p.wait()
        self._p = None
        if rc != 0:
            raise JointspaceError(f"ffmpeg failed writing {self.path}: {err.strip()[:500]}")
