"""Request helpers shared by the blueprints: the live table of the app, JSON bodies, the change token, uploads.

Nothing a request sends reaches the file system: uploads are read into memory and parsed there, and names a
request gives (a profile) are looked up among known ones, never opened as paths.
"""

from __future__ import annotations

import hmac
import struct
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar, cast

import cv2
import numpy as np
from flask import current_app, request
from numpy.typing import NDArray

import calibration
from webui.errors import HTTP_CONFLICT, HTTP_FORBIDDEN, HTTP_UNSUPPORTED, ApiError, UploadError
from webui.hub import Result, Snapshot
from webui.live import LiveTable
from webui.settings import WebuiSettings

TOKEN_HEADER = "X-Tableref-Token"
EXTENSION = "tableref"
UPLOAD_FIELD = "file"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class AppState:
    """What every request handler of one app shares."""

    live: LiveTable
    settings: WebuiSettings
    token: str
    # Pages carry the token (a dashboard bound to this machine only: whoever can open it may change it).
    embed_token: bool
    # Serving only this machine: requests must name it in their Host header (guards against DNS rebinding).
    local_only: bool
    viewers: Any


def app_state() -> AppState:
    return cast(AppState, current_app.extensions[EXTENSION])


def live() -> LiveTable:
    return app_state().live


def snapshot() -> Snapshot:
    return live().hub.snapshot()


def current_result() -> Result:
    """The result on screen (the frozen one while frozen); 409 before anything was measured."""
    result = snapshot().result
    if result is None:
        raise ApiError("no frame has been measured yet; wait for the table to settle", HTTP_CONFLICT)
    return result


def needs_token(view: F) -> F:
    """Changes need the start-up token in the X-Tableref-Token header. A custom header cannot be sent by another
    site's page without the browser asking first, so this also stops cross-site requests."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = request.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(given.encode(), app_state().token.encode()):
            raise ApiError(
                f"this change needs the token printed when the server started, in the {TOKEN_HEADER} header "
                "(open the dashboard with the address printed at start-up, which carries it)",
                HTTP_FORBIDDEN,
            )
        return view(*args, **kwargs)

    return cast(F, wrapper)


def json_body() -> dict[str, Any]:
    """The request's JSON object. 415 without a JSON content type, 400 for bad JSON or not an object."""
    if not request.is_json:
        raise ApiError("expected a JSON body with Content-Type: application/json", HTTP_UNSUPPORTED)
    data = request.get_json(silent=True)
    if data is None:
        raise ApiError("the body is not valid JSON")
    if not isinstance(data, dict):
        raise ApiError(f"expected a JSON object, got {type(data).__name__}")
    return data


def model_id(body: dict[str, Any], key: str) -> str:
    """A model id from a JSON body: a non-empty string (or a whole number, kept as its text)."""
    value = body.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise ApiError(f"missing {key!r}: expected a model id (a string such as 'm3')")
    return value


def upload_bytes(what: str) -> bytes:
    """An upload: the multipart field ``file``, or the raw body. The size limit is Flask's MAX_CONTENT_LENGTH."""
    if request.files:
        upload = request.files.get(UPLOAD_FIELD)
        if upload is None:
            raise UploadError(f"expected the {what} in a form field named {UPLOAD_FIELD!r}")
        data = bytes(upload.read())
    else:
        data = request.get_data(cache=False)
    if not data:
        raise UploadError(f"the upload is empty; expected {what}")
    return data


def parse_spec(data: bytes) -> calibration.TableSpec:
    """A table spec from uploaded TOML. Raises :class:`UploadError` saying what is wrong."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError("the table spec is not UTF-8 text; expected a TOML file") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UploadError(f"the table spec is not valid TOML ({exc})") from None
    try:
        return calibration.table_spec_from_dict(raw)
    except calibration.SpecError as exc:
        raise UploadError(f"not a table spec: {exc}") from None


# Signatures of the image kinds accepted (what cameras and phones write); their headers give the size before
# any decoding, so a small file that would decode to a huge picture is refused.
_JPEG = b"\xff\xd8\xff"
_PNG = b"\x89PNG\r\n\x1a\n"
# JPEG start-of-frame markers (baseline, progressive, ...) carry the picture's size; 0xC4, 0xC8 and 0xCC share the
# range but are tables, not frames.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# JPEG markers with no length field: start/end of image, restarts, and the temporary marker.
_JPEG_BARE = frozenset({0xD8, 0xD9, 0x01, *range(0xD0, 0xD8)})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
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


def _png_size(data: bytes) -> tuple[int, int] | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def parse_image(data: bytes, max_pixels: int) -> NDArray[np.uint8]:
    """An uploaded photo (JPEG or PNG) decoded to (H, W, 3) BGR. Raises :class:`UploadError` for anything else,
    a picture of more than ``max_pixels``, or a file that does not decode."""
    if data.startswith(_JPEG):
        size = _jpeg_size(data)
    elif data.startswith(_PNG):
        size = _png_size(data)
    else:
        raise UploadError("not an image: expected a JPEG or PNG photo of the table")
    if size is None or size[0] <= 0 or size[1] <= 0:
        raise UploadError("the image header gives no picture size; expected a complete JPEG or PNG file")
    if size[0] * size[1] > max_pixels:
        raise UploadError(f"the image is {size[0]} x {size[1]} pixels; at most {max_pixels} pixels are accepted")
    image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise UploadError("the image does not decode; expected a complete JPEG or PNG file")
    return np.asarray(image, dtype=np.uint8)
