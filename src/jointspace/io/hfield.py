"""Height-field elevation data: PNG and MuJoCo's binary files, inline data, normalization.

A height field's elevations are a grid of nrow × ncol values, row 0 at y = −size[1] (the
bottom of an image); MuJoCo's compiler (mjCHField::Compile, user_objects.cc) scales them
to [0, 1] and keeps them in single precision. The readers here return float32 grids in
that row order:

- `decode_png`: a PNG image of any colour type and bit depth the PNG standard allows,
  interlaced (Adam7) or not, converted to one 8-bit gray value per pixel as MuJoCo's PNG
  loader (lodepng, asked for 8-bit gray) does: the pixel's red value, so gray images as
  they are, RGB(A) images by their red channel, palette images by their palette entry's
  red (0 for an index past the palette's end); 16-bit samples by their high byte, 1-, 2-
  and 4-bit samples scaled to 0..255 (v · 255 / (2^depth − 1)); alpha and tRNS are
  dropped. The rows are reversed (the image's top row is the field's last row).
- `read_custom`: MuJoCo's binary format: int32 nrow, int32 ncol, then nrow · ncol float32
  values, row 0 first (native byte order, little-endian on every platform MuJoCo ships).
- `normalize`: (data − min) / (max − min) in single precision; a flat field becomes zeros.
"""

import struct
import zlib

import numpy as np

from jointspace.errors import ModelError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # PNG colour type -> samples per pixel
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
_COLOR_NAMES = {0: "gray", 2: "RGB", 3: "palette", 4: "gray+alpha", 6: "RGBA"}
# Adam7 passes: (first column, first row, column step, row step)
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))
_EPS = 1e-14  # mjEPS: a smaller elevation range counts as flat


def decode_png(buf, fname):
    """8-bit gray elevations (float32, (nrow, ncol), row 0 at the image's bottom) of a PNG.

    Args:
        buf: the file's bytes.
        fname: the file name error messages use.

    Raises:
        ModelError: the bytes are not a valid PNG (the message says why).
    """
    def bad(why):
        return ModelError(f"hfield file {fname!r}: {why}")

    if not buf.startswith(PNG_SIGNATURE):
        raise bad("not a PNG file (no PNG signature); give a PNG image or MuJoCo's binary "
                  "hfield format")
    pos = len(PNG_SIGNATURE)
    header = None
    palette = None
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
            if not 1 <= length // 3 <= 256:
                raise bad(f"corrupt PNG (a PLTE chunk of {length} bytes; a palette holds 1 to "
                          "256 RGB entries)")
            palette = body
        elif not ctype[:1].islower():
            raise bad(f"PNG chunk {ctype!r} is critical and unknown to this reader")
    if header is None:
        raise bad("corrupt PNG (no IHDR chunk)")
    if not ended:
        raise bad("truncated PNG (no IEND chunk)")
    width, height, depth, ctype, comp, filt, interlace = header
    if width < 1 or height < 1:
        raise bad(f"PNG size {width}x{height} is empty")
    if ctype not in _DEPTHS:
        raise bad(f"corrupt PNG (unknown colour type {ctype})")
    if depth not in _DEPTHS[ctype]:
        raise bad(f"corrupt PNG ({depth} bits per sample is not a PNG bit depth for "
                  f"{_COLOR_NAMES[ctype]} images)")
    if comp != 0 or filt != 0:
        raise bad("corrupt PNG (unknown compression or filter method)")
    if interlace not in (0, 1):
        raise bad(f"corrupt PNG (unknown interlace method {interlace})")
    if ctype == 3 and palette is None:
        raise bad("corrupt PNG (a palette image without a PLTE chunk)")
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise bad(f"corrupt PNG image data ({e})") from None
    channels = _CHANNELS[ctype]
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    shapes = [((height - y0 + dy - 1) // dy, (width - x0 + dx - 1) // dx)
              for x0, y0, dx, dy in passes]
    strides = [(pw * channels * depth + 7) // 8 for _, pw in shapes]  # bytes per row
    need = sum(ph * (s + 1) for (ph, pw), s in zip(shapes, strides, strict=True) if pw)
    if len(raw) < need:
        raise bad(f"truncated PNG image data ({len(raw)} bytes where {height} rows of "
                  f"{width} pixels need {need})")
    if ctype == 3:  # a palette index -> its entry's red; black past the palette's end
        red = np.zeros(256, dtype=np.uint8)
        entries = np.frombuffer(palette, dtype=np.uint8, count=len(palette) // 3 * 3)
        red[:entries.size // 3] = entries[0::3]
    bpp = max(1, channels * depth // 8)  # the filters' byte distance to the left neighbour
    gray = np.empty((height, width), dtype=np.uint8)
    start = 0
    for (x0, y0, dx, dy), (ph, pw), stride in zip(passes, shapes, strides, strict=True):
        if ph == 0 or pw == 0:
            continue
        rows = np.frombuffer(raw, dtype=np.uint8, count=ph * (stride + 1),
                             offset=start).reshape(ph, stride + 1)
        start += ph * (stride + 1)
        first = _first_samples(_unfilter(rows, bpp, bad), pw, channels, depth)
        if ctype == 3:
            first = red[first]
        elif depth < 8:
            first = (first.astype(np.uint16) * 255 // ((1 << depth) - 1)).astype(np.uint8)
        gray[y0::dy, x0::dx] = first
    return np.ascontiguousarray(gray[::-1]).astype(np.float32)


def _first_samples(img, width, channels, depth):
    """Each pixel's first sample (its high byte at 16 bits) of unfiltered scanlines, uint8."""
    if depth >= 8:
        return img[:, :width * channels * depth // 8:channels * depth // 8]
    bits = np.unpackbits(img, axis=1)[:, :width * depth].reshape(img.shape[0], width, depth)
    weights = (1 << np.arange(depth - 1, -1, -1)).astype(np.uint8)
    return (bits * weights).sum(axis=2, dtype=np.uint8)


def _unfilter(rows, bpp, bad):
    """The image bytes of PNG scanlines (filter byte first) after undoing their filters.

    Each byte x was stored minus a prediction from a (the byte bpp to its left), b (the one
    above) and c (above a), 0 outside the image; sub, up and none are undone with array
    operations, average and Paeth (whose prediction needs the byte just decoded) byte by
    byte.
    """
    height, n = rows.shape[0], rows.shape[1] - 1
    out = np.empty((height, n), dtype=np.uint8)
    prev = np.zeros(n, dtype=np.uint8)
    for r in range(height):
        ftype = rows[r, 0]
        line = rows[r, 1:]
        if ftype == 0:  # none
            cur = line
        elif ftype == 1:  # sub: x + a, a running sum along each sample of the pixel
            cur = np.cumsum(line.reshape(-1, bpp), axis=0, dtype=np.uint8).reshape(-1)
        elif ftype == 2:  # up: x + b
            cur = line + prev
        elif ftype == 3:  # average: x + floor((a + b) / 2)
            cur = _unfilter_average(line.tolist(), prev.tolist(), bpp)
        elif ftype == 4:  # Paeth: x + whichever of a, b, c is nearest a + b − c
            b = prev.astype(np.int64)
            c = np.r_[np.zeros(min(bpp, n), dtype=np.int64), b[:n - bpp]]
            cur = _unfilter_paeth(line.tolist(), b.tolist(), c.tolist(),
                                  np.abs(b - c).tolist(), bpp)
        else:
            raise bad(f"corrupt PNG (unknown filter type {ftype} in row {r})")
        out[r] = cur
        prev = out[r]
    return out


def _unfilter_average(x, b, bpp):
    """An average-filtered row's bytes (x, the row above b: lists of ints)."""
    cur = [(xi + (bi >> 1)) & 0xFF for xi, bi in zip(x[:bpp], b[:bpp], strict=True)]
    for i in range(bpp, len(x)):
        cur.append((x[i] + ((cur[i - bpp] + b[i]) >> 1)) & 0xFF)
    return cur


def _unfilter_paeth(x, b, c, pa, bpp):
    """A Paeth-filtered row's bytes (x, the row above b, c = b shifted by bpp, pa = |b − c|).

    With p = a + b − c: |p − a| = |b − c|, |p − b| = |a − c|, |p − c| = |a + b − 2c|; ties
    prefer a, then b.
    """
    cur = [(xi + bi) & 0xFF for xi, bi in zip(x[:bpp], b[:bpp], strict=True)]  # a = c = 0
    for i in range(bpp, len(x)):
        a, bi, ci = cur[i - bpp], b[i], c[i]
        pb = abs(a - ci)
        pc = abs(a + bi - ci - ci)
        pai = pa[i]
        cur.append((x[i] + (a if pai <= pb and pai <= pc else (bi if pb <= pc else ci))) & 0xFF)
    return cur


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
