"""The kind and picture size of an image file, read from its header without decoding it.

A small file may claim any size in its header (a 9 KB PNG can claim 60000 x 60000 pixels, 10.8 GB decoded), so
the size is checked before anything is decoded: :func:`tableref.sources.decode_image` does, for every image read.
"""

from __future__ import annotations

import struct

# Signatures of the kinds read (those OpenCV decodes that cameras and phones write).
_JPEG = b"\xff\xd8\xff"
_PNG = b"\x89PNG\r\n\x1a\n"
_BMP = b"BM"
_TIFF_LE = b"II*\x00"
_TIFF_BE = b"MM\x00*"
_BIGTIFF_LE = b"II+\x00"
_BIGTIFF_BE = b"MM\x00+"
# JPEG start-of-frame markers (baseline, progressive, ...) carry the picture's size; 0xC4, 0xC8 and 0xCC share the
# range but are tables, not frames.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# JPEG markers with no length field: start/end of image, restarts, and the temporary marker.
_JPEG_BARE = frozenset({0xD8, 0xD9, 0x01, *range(0xD0, 0xD8)})
# TIFF tags of the picture's width and height, and the field types they may have (SHORT, LONG, LONG8).
_TIFF_WIDTH = 256
_TIFF_HEIGHT = 257
_TIFF_TYPES = {3: "H", 4: "I", 16: "Q"}
# A BMP whose DIB header is this long is an old OS/2 one, with 16-bit sizes.
_BMP_CORE_HEADER = 12

Size = tuple[int, int]


def image_kind(data: bytes) -> str | None:
    """The kind of image file by its signature (JPEG, PNG, BMP, TIFF or WebP); None for anything else."""
    if data.startswith(_JPEG):
        return "JPEG"
    if data.startswith(_PNG):
        return "PNG"
    if data.startswith(_BMP):
        return "BMP"
    if data[:4] in (_TIFF_LE, _TIFF_BE, _BIGTIFF_LE, _BIGTIFF_BE):
        return "TIFF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    return None


def image_size(data: bytes) -> Size | None:
    """(width, height) in pixels from the header of an image file; None when it gives none (a cut or damaged
    header, or a kind not read)."""
    readers = {"JPEG": _jpeg_size, "PNG": _png_size, "BMP": _bmp_size, "TIFF": _tiff_size, "WebP": _webp_size}
    kind = image_kind(data)
    if kind is None:
        return None
    try:
        return readers[kind](data)
    except struct.error:
        # a field that runs past the end of the file: a cut header
        return None


def _jpeg_size(data: bytes) -> Size | None:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in _JPEG_BARE:
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker in _JPEG_SOF and pos + 9 <= len(data):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return int(width), int(height)
        pos += 2 + length
    return None


def _png_size(data: bytes) -> Size | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def _bmp_size(data: bytes) -> Size:
    (header,) = struct.unpack("<I", data[14:18])
    if header == _BMP_CORE_HEADER:
        width, height = struct.unpack("<HH", data[18:22])
    else:
        # a negative height is a picture stored top row first
        width, height = struct.unpack("<ii", data[18:26])
    return abs(int(width)), abs(int(height))


def _tiff_size(data: bytes) -> Size | None:
    """The size of the first picture of a TIFF (or BigTIFF), from the tags of its first directory."""
    order = "<" if data.startswith(b"II") else ">"
    big = data[2:4] in (b"+\x00", b"\x00+")
    if big:
        (offset,) = struct.unpack(order + "Q", data[8:16])
        (count,) = struct.unpack(order + "Q", data[offset : offset + 8])
        first, entry, value_at = offset + 8, 20, 12
    else:
        (offset,) = struct.unpack(order + "I", data[4:8])
        (count,) = struct.unpack(order + "H", data[offset : offset + 2])
        first, entry, value_at = offset + 2, 12, 8
    sizes: dict[int, int] = {}
    for k in range(min(count, len(data) // entry)):
        at = first + k * entry
        tag, kind = struct.unpack(order + "HH", data[at : at + 4])
        if tag in (_TIFF_WIDTH, _TIFF_HEIGHT) and kind in _TIFF_TYPES:
            fmt = order + _TIFF_TYPES[kind]
            (sizes[tag],) = struct.unpack(fmt, data[at + value_at : at + value_at + struct.calcsize(fmt)])
    if _TIFF_WIDTH not in sizes or _TIFF_HEIGHT not in sizes:
        return None
    return int(sizes[_TIFF_WIDTH]), int(sizes[_TIFF_HEIGHT])


def _webp_size(data: bytes) -> Size | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        # lossy: a 3-byte frame tag and the start code 9d 01 2a, then 14-bit width and height
        if data[23:26] != b"\x9d\x01\x2a":
            return None
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L":
        # lossless: the signature byte 0x2f, then width - 1 and height - 1 in 14 bits each
        if data[20:21] != b"\x2f":
            return None
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        # extended: the canvas's width - 1 and height - 1 in 24 bits each
        if len(data) < 30:
            return None
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None
