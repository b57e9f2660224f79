"""The Flask dashboard: live table view, findings, unit assignment and judge measurements in a browser.

:func:`create_app` builds the application around a running :class:`webui.live.LiveTable`; ``tableref serve``
(:mod:`webui.cli`, plugged into the command line through the ``tableref.commands`` entry point) starts both.
Nothing outside this package imports it.
"""

from __future__ import annotations

import logging
import secrets

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from tableref.errors import StoreError
from webui.blueprints import api, judge, melee, review, setup, table, units
from webui.errors import HTTP_FORBIDDEN, HTTP_SERVER_ERROR, ApiError
from webui.http import EXTENSION, AppState
from webui.live import LiveTable
from webui.settings import WebuiSettings
from webui.viewers import ViewerSlots

log = logging.getLogger(__name__)

# Host names that mean this machine: a dashboard serving only this machine answers requests for them alone, so a
# page of another site cannot reach it through a DNS name it points at 127.0.0.1.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
# Content Security Policy of every answer: scripts, styles and images from the dashboard itself only (frames in
# the judge report are data: URLs, downloads are blob: URLs).
_CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'"
)

__all__ = ["create_app"]


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def create_app(
    live: LiveTable,
    settings: WebuiSettings,
    *,
    token: str | None = None,
    embed_token: bool = True,
    local_only: bool = True,
) -> Flask:
    """The dashboard application around ``live`` (started by the caller).

    ``token`` (random when None) must come with every change; ``embed_token`` writes it into the pages (for a
    dashboard bound to 127.0.0.1, whose users are on this machine), and ``local_only`` refuses requests that do
    not name this machine in their Host header.
    """
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_upload_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions[EXTENSION] = AppState(
        live=live,
        settings=settings,
        token=token or secrets.token_urlsafe(18),
        embed_token=embed_token,
        local_only=local_only,
        viewers=ViewerSlots(settings.max_viewers, settings.max_viewers_per_client),
    )
    for bp in (table.bp, units.bp, judge.bp, setup.bp, review.bp, api.bp, melee.bp):
        app.register_blueprint(bp)

    @app.before_request
    def _check_host() -> None:
        if local_only and _host_name(request.host) not in LOCAL_HOSTS:
            raise ApiError(
                f"host {request.host!r} refused: this dashboard serves 127.0.0.1 only "
                "(start it with --host to serve other machines)",
                HTTP_FORBIDDEN,
            )

    @app.after_request
    def _headers(response: Response) -> Response:
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    def _error(message: str, status: int) -> tuple[Response, int]:
        return jsonify({"error": message, "status": status}), status

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> tuple[Response, int]:
        return _error(str(exc), exc.status)

    @app.errorhandler(StoreError)
    def _store_error(exc: StoreError) -> tuple[Response, int]:
        # The review database on the server is damaged, gone or on a full disk: the message says which (it names
        # the server's file, which the person who started the dashboard gave), and the log notes it once.
        log.error("request %s %s: %s", request.method, request.path, exc)
        return _error(str(exc), HTTP_SERVER_ERROR)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> tuple[Response, int]:
        status = exc.code or 500
        message = exc.description or exc.name
        if status == 413:
            message = f"the upload is too large; at most {settings.max_upload_bytes} bytes are accepted"
        return _error(message, status)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> tuple[Response, int]:
        # The details go to the server's log, never to the answer.
        log.exception("request %s %s failed", request.method, request.path)
        return _error("internal error; the server's log has the details", 500)

    return app
