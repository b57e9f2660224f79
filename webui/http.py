"""Request helpers shared by the blueprints: the live table of the app, JSON bodies, the change token, uploads.

Nothing a request sends reaches the file system: uploads are read into memory and parsed there, and names a
request gives (a profile) are looked up among known ones, never opened as paths.
"""

from __future__ import annotations

import hmac
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar, cast

import numpy as np
from flask import current_app, request
from numpy.typing import NDArray

import calibration
from tableref.image_header import image_kind
from tableref.sources import SourceError, decode_image
from webui.errors import HTTP_CONFLICT, HTTP_FORBIDDEN, HTTP_UNSUPPORTED, ApiError, UploadError
from webui.hub import Result, Snapshot
from webui.live import LiveTable
from webui.settings import WebuiSettings
from webui.viewers import ViewerSlots

TOKEN_HEADER = "X-Tableref-Token"
EXTENSION = "tableref"
UPLOAD_FIELD = "file"

F = TypeVar("F", bound=Callable[..., Any])
# What a body nested deeper than the parser's recursion reaches is told (then what was expected).
NESTED_TOO_DEEP = "the body is nested too deep to read"


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
    viewers: ViewerSlots


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
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        # the parser recurses once per level: a hostile body nests deeper than Python's stack
        raise ApiError(NESTED_TOO_DEEP + "; expected a JSON object") from None
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
    except RecursionError:
        raise UploadError(NESTED_TOO_DEEP + "; expected a table spec TOML file") from None
    try:
        return calibration.table_spec_from_dict(raw)
    except calibration.SpecError as exc:
        raise UploadError(f"not a table spec: {exc}") from None


# The image kinds accepted from an upload: what cameras and phones write.
_UPLOAD_KINDS = ("JPEG", "PNG")


def parse_image(data: bytes, max_pixels: int) -> NDArray[np.uint8]:
    """An uploaded photo (JPEG or PNG) decoded to (H, W, 3) BGR by :func:`tableref.sources.decode_image`, which
    checks the header's size first. Raises :class:`UploadError` for anything else, a picture of more than
    ``max_pixels``, or a file that does not decode."""
    if image_kind(data) not in _UPLOAD_KINDS:
        raise UploadError("not an image: expected a JPEG or PNG photo of the table")
    try:
        return decode_image(data, max_pixels)
    except SourceError as exc:
        raise UploadError(str(exc)) from None
