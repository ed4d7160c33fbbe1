"""What drlhp's pages share (the labelling page, pref_interface.web; the review page,
pref_interface.review_web): an aiohttp Application that needs the run's token on every request, bounds
bodies to MAX_BODY bytes and answers any error with one line of JSON; a JSON body; serving on a socket;
a clip as one PNG; the listening socket, or one line saying why not (``address_problem``: the parent asks
before starting anything).
"""
from __future__ import annotations

import errno
import hmac
import io
import json
import os
import socket
import sys
import traceback

MAX_BODY = 4096  # bytes: an answer is ~80


class BadRequest(Exception):
    """A request that cannot be served: its status and one line for the page."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def guarded_app(token: str, log=print, on_refused=lambda: None):
    """An aiohttp Application for a page of drlhp's: every request needs ``token`` (?token=T or the header
    X-Token: T; else 403 and nothing else), bodies up to MAX_BODY bytes, a BadRequest or aiohttp's own
    4xx answered with one line of JSON, any other error logged and answered 500 without a traceback.
    ``on_refused()`` is called for each request refused."""
    from aiohttp import web

    expected = token.encode()

    @web.middleware
    async def need_token(request, handler):
        given = request.headers.get("X-Token") or request.query.get("token") or ""
        if not hmac.compare_digest(given.encode(), expected):
            on_refused()
            return web.Response(status=403, text="403: forbidden\n")
        return await handler(request)

    @web.middleware
    async def errors(request, handler):
        try:
            return await handler(request)
        except BadRequest as e:
            on_refused()
            return web.json_response({"error": str(e)}, status=e.status)
        except web.HTTPException as e:  # aiohttp's own: 404, 405, 413 (body over MAX_BODY), ...
            if e.status >= 400:
                on_refused()
                return web.json_response({"error": e.reason}, status=e.status)
            raise
        except Exception:  # noqa: BLE001 -- a bug here must cost one request, never the run
            log(f"[prefs] error serving {request.method} {request.path}:\n{traceback.format_exc()}",
                file=sys.stderr, flush=True)
            return web.json_response({"error": "internal error (logged by the run)"}, status=500)

    app = web.Application(client_max_size=MAX_BODY, middlewares=[need_token, errors])
    app.on_response_prepare.append(_plain_headers)
    return app


async def json_body(request) -> dict:
    """The request's body, a JSON object (BadRequest otherwise; 413 beyond the app's MAX_BODY)."""
    raw = await request.read()
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest(400, "the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise BadRequest(400, "the body must be a JSON object")
    return body


async def serve(app, sock):
    """Serve ``app`` on the listening socket; returns the runner (``await runner.cleanup()`` to stop)."""
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner


async def _plain_headers(request, response) -> None:
    """No server name and version in replies; nothing sniffed as another type than the one said."""
    response.headers["Server"] = "drlhp"
    response.headers["X-Content-Type-Options"] = "nosniff"


def clip_png(frames) -> bytes:
    """A clip as one PNG: its (T, H, W[, 3]) uint8 frames stacked top to bottom, lossless (Pillow; the page
    draws frame i from rows i*H to (i+1)*H, so both clips stay in step and replay starts both at once)."""
    import numpy as np
    from PIL import Image

    frames = np.ascontiguousarray(frames, np.uint8)
    sheet = frames.reshape(frames.shape[0] * frames.shape[1], *frames.shape[2:])
    out = io.BytesIO()
    Image.fromarray(sheet).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def address_problem(host: str, port: int) -> str | None:
    """None if the page can be served on host:port now (run.py asks before starting anything), else why not."""
    try:
        listen(host, port).close()
    except RuntimeError as e:
        return str(e)
    return None


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), or one line saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=64)
    except (OSError, OverflowError) as e:  # taken, not an address of this machine, no such host
        fix = ("choose another --web_port, or 0 for a free one" if getattr(e, "errno", None) == errno.EADDRINUSE
               else "--web_host must be an address of this machine: 127.0.0.1, 0.0.0.0 or one of its own")
        code = getattr(e, "errno", None) or 0
        why = os.strerror(code) if code > 0 else "no such host" if code < 0 else str(e)  # < 0: getaddrinfo's
        raise RuntimeError(f"cannot serve the page on {host}:{port}: {why} ({fix})") from None
