"""Height-field elevation data: PNG and MuJoCo's binary files, inline data, normalization.

A height field's elevations are a grid of nrow × ncol values, row 0 at y = −size[1] (the
bottom of an image); MuJoCo's compiler (mjCHField::Compile, user_objects.cc) scales them
to [0, 1] and keeps them in single precision. The readers here return float32 grids in
that row order:

- `decode_png`: a PNG image, converted to one 8-bit gray value per pixel as MuJoCo's PNG
  loader (lodepng, gray output at 8 bits) does: gray images as they are, RGB(A) images
  by their red channel, 16-bit samples by their high byte; the rows are reversed (the
  image's top row is the field's last row). Non-interlaced 8- and 16-bit gray, gray +
  alpha, RGB and RGBA images are read; palette images, bit depths below 8 and interlaced
  images are refused with a message saying so.
- `read_custom`: MuJoCo's binary format: int32 nrow, int32 ncol, then nrow · ncol float32
  values, row 0 first (native byte order, little-endian on every platform MuJoCo ships).
- `normalize`: (data − min) / (max − min) in single precision; a flat field becomes zeros.
"""

import struct
import zlib

import numpy as np

from jointspace.errors import ModelError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type -> samples per pixel
_COLOR_NAMES = {0: "gray", 2: "RGB", 3: "palette", 4: "gray+alpha", 6: "RGBA"}
_EPS = 1e-14  # mjEPS: a smaller elevation range counts as flat


def decode_png(buf, fname):
    """8-bit gray elevations (float32, (nrow, ncol), row 0 at the image's bottom) of a PNG.

    Args:
        buf: the file's bytes.
        fname: the file name error messages use.

    Raises:
        ModelError: the bytes are not a PNG this reader handles (the message says why).
    """
    def bad(why):
        return ModelError(f"hfield file {fname!r}: {why}")

    if not buf.startswith(PNG_SIGNATURE):
        raise bad("not a PNG file (no PNG signature); give a PNG image or MuJoCo's binary "
                  "hfield format")
    pos = len(PNG_SIGNATURE)
    header = None
    idat = []
    ended = False
    while pos < len(buf):
        if pos + 8 > len(buf):
            raise bad("truncated PNG (a chunk header is cut off)")
        length, ctype = struct.unpack(">I4s", buf[pos:pos + 8])
        end = pos + 8 + length + 4
        if end > len(buf):
            raise bad(f"truncated PNG (chunk {ctype!r} needs {length} bytes)")
        body = buf[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", buf[end - 4:end])
        if zlib.crc32(ctype + body) & 0xFFFFFFFF != crc:
            raise bad(f"corrupt PNG (CRC mismatch in chunk {ctype!r})")
        pos = end
        if ctype == b"IHDR":
            if length != 13:
                raise bad("corrupt PNG (IHDR is not 13 bytes)")
            header = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat.append(body)
        elif ctype == b"IEND":
            ended = True
            break
        elif ctype == b"PLTE":
            continue
        elif not ctype[:1].islower():
            raise bad(f"PNG chunk {ctype!r} is critical and unknown to this reader")
    if header is None:
        raise bad("corrupt PNG (no IHDR chunk)")
    if not ended:
        raise bad("truncated PNG (no IEND chunk)")
    width, height, depth, ctype, comp, filt, interlace = header
    if width < 1 or height < 1:
        raise bad(f"PNG size {width}x{height} is empty")
    if ctype not in _CHANNELS or depth not in (8, 16):
        raise bad(f"PNG of {_COLOR_NAMES.get(ctype, f'colour type {ctype}')} at {depth} bits "
                  "per sample is not read by jointspace; save the image as 8- or 16-bit gray, "
                  "RGB or RGBA")
    if comp != 0 or filt != 0:
        raise bad("corrupt PNG (unknown compression or filter method)")
    if interlace != 0:
        raise bad("interlaced PNG is not read by jointspace; save it without interlacing")
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise bad(f"corrupt PNG image data ({e})") from None
    bpp = _CHANNELS[ctype] * depth // 8  # bytes per pixel
    stride = width * bpp
    if len(raw) < height * (stride + 1):
        raise bad(f"truncated PNG image data ({len(raw)} bytes for {height} rows of "
                  f"{stride + 1})")
    rows = np.frombuffer(raw, dtype=np.uint8, count=height * (stride + 1)).reshape(
        height, stride + 1)
    img = _unfilter(rows, bpp, bad)
    px = img.reshape(height, width, bpp)
    gray = px[:, :, 0]  # the first sample (gray or red); its high byte at 16 bits
    return np.ascontiguousarray(gray[::-1]).astype(np.float32)


def _unfilter(rows, bpp, bad):
    """The image bytes of PNG scanlines (filter byte first) after undoing their filters."""
    height, n = rows.shape[0], rows.shape[1] - 1
    out = np.zeros((height, n), dtype=np.uint8)
    prev = np.zeros(n, dtype=np.int64)
    for r in range(height):
        ftype = rows[r, 0]
        line = rows[r, 1:].astype(np.int64)
        if ftype == 0:  # none
            cur = line
        elif ftype == 1:  # sub: x + left, a running sum along each sample of the pixel
            cur = np.cumsum(line.reshape(-1, bpp), axis=0).reshape(-1) & 0xFF
        elif ftype == 2:  # up: x + above
            cur = (line + prev) & 0xFF
        elif ftype in (3, 4):  # average, Paeth: sequential along the row
            cur = np.empty(n, dtype=np.int64)
            for i in range(n):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                if ftype == 3:
                    cur[i] = (line[i] + (a + b) // 2) & 0xFF
                else:
                    c = prev[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                    cur[i] = (line[i] + pred) & 0xFF
        else:
            raise bad(f"corrupt PNG (unknown filter type {ftype} in row {r})")
        out[r] = cur
        prev = cur
    return out


def read_custom(buf, fname):
    """Elevations (float32, (nrow, ncol), row 0 first) of MuJoCo's binary hfield format.

    Raises:
        ModelError: the header or the size of the file is wrong.
    """
    if len(buf) < 8:
        raise ModelError(f"hfield file {fname!r}: missing header (MuJoCo's binary hfield "
                         "format starts with int32 nrow, int32 ncol)")
    nrow, ncol = struct.unpack("<ii", buf[:8])
    if nrow < 1 or ncol < 1:
        raise ModelError(f"hfield file {fname!r}: non-positive dimensions {nrow} x {ncol} "
                         "in its header")
    if len(buf) != 8 + 4 * nrow * ncol:
        raise ModelError(f"hfield file {fname!r}: {len(buf)} bytes, but a {nrow} x {ncol} "
                         f"field needs {8 + 4 * nrow * ncol} (8 header bytes and float32 data)")
    return np.frombuffer(buf, dtype="<f4", offset=8).reshape(nrow, ncol).astype(np.float32)


def normalize(data):
    """Elevations scaled to [0, 1] in single precision, as MuJoCo's compiler does."""
    a = np.asarray(data, dtype=np.float32)
    lo = np.float32(a.min())
    hi = np.float32(a.max())
    out = a - lo
    rng = np.float32(hi - lo)
    if float(rng) > _EPS:
        out = out / rng
    return out.astype(np.float32)
