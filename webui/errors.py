"""Errors of the dashboard. Request handlers turn :class:`ApiError` into a JSON answer with its status code."""

from __future__ import annotations

from tableref.errors import UsageError

HTTP_BAD_REQUEST = 400
HTTP_FORBIDDEN = 403
HTTP_NOT_FOUND = 404
HTTP_CONFLICT = 409
HTTP_TOO_LARGE = 413
HTTP_TOO_MANY = 429
HTTP_UNSUPPORTED = 415
HTTP_SERVER_ERROR = 500
HTTP_UNAVAILABLE = 503


class WebuiError(Exception):
    """Base of the dashboard's errors."""


class ApiError(WebuiError):
    """A request that cannot be served: ``status`` is the HTTP status, the message says what was wrong and what
    was expected."""

    def __init__(self, message: str, status: int = HTTP_BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = status


class UploadError(ApiError):
    """An upload that is not what it claims (not an image, not a table spec, not a roster) or too large."""


class ServeError(WebuiError, UsageError):
    """``tableref serve`` cannot start (port taken, no sample frames, bad arguments): one line, exit code 2."""
