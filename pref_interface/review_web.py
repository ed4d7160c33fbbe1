"""python -m pref_interface.review --load_prefs_dir D --web: the review tool as a page, for a database on a
machine without a display (the labelling page's server, pref_interface.web, with the review's routes).

The same Review (pref_interface.review: the entries in labelling order, the person's edits over them,
one level of undo per edit) as the window; the page lists the saved preferences and plays the chosen
pair's clips (a MuJoCo pair drawn from its recorded states, as the labelling drew it: pref_interface.review_clips;
each frame stays ``frame_ms``). Edits are written with one atomic write when the person presses Save (or Ctrl+S),
and at exit (Ctrl-C in the terminal).

Routes (each needs the token, as the labelling page's):
    GET  /                        the page
    GET  /api/review              every pair (number, split, recorded answer, answer now), the one chosen and
                                  its clips' frames, size and frame_ms
    GET  /clip/ORDER/left|right   a pair's clip, one PNG (pref_interface.web.clip_png)
    POST /api/edit                {"order": N, "change": "left|right|equal|delete|keep"} -> the review
    POST /api/undo, /api/save     -> the review
"""
from __future__ import annotations

import asyncio
import secrets
import threading
from pathlib import Path

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT
from pref_interface.answers import DELETED, FPS, LOOP_PAUSE_FRAMES
from pref_interface.review_clips import ReviewClips
from pref_interface.web_server import BadRequest, clip_png, guarded_app, json_body, listen, serve

PAGE_FILE = Path(__file__).with_name("review_page.html")
MU_WORDS = {MU_LEFT: "left", MU_RIGHT: "right", MU_EQUAL: "equal"}
CHANGES = {"left": MU_LEFT, "right": MU_RIGHT, "equal": MU_EQUAL}


class ReviewServer:
    """``run()`` serves until the stop event; ``save()`` writes the edits (the caller's function)."""

    def __init__(self, review, save, host: str = "127.0.0.1", port: int = 0, log=print, token: str | None = None,
                 clips: ReviewClips | None = None):
        self.review, self.save, self.log, self.deleted = review, save, log, DELETED
        self.clips = clips or ReviewClips(review.db)
        self.token = token or secrets.token_urlsafe(24)
        self.sock = listen(host, port)
        self.host, self.port = host, self.sock.getsockname()[1]
        self.ready, self.stop_event = threading.Event(), threading.Event()

    @property
    def address(self) -> str:
        return f"http://{self.host}:{self.port}/?token={self.token}"

    async def run(self) -> None:
        app = guarded_app(self.token, self.log)
        app.router.add_get("/", self._page)
        app.router.add_get("/api/review", self._state)
        app.router.add_get(r"/clip/{order:\d{1,12}}/{side:left|right}", self._clip)
        app.router.add_post("/api/edit", self._edit)
        app.router.add_post("/api/undo", self._undo)
        app.router.add_post("/api/save", self._save)
        runner = await serve(app, self.sock)
        try:
            self.log(f"review in a browser: {self.address}", flush=True)
            self.ready.set()
            while not self.stop_event.is_set():
                await asyncio.sleep(0.1)
        finally:
            await runner.cleanup()
            self.sock.close()
            self.clips.close()

    def state(self, message: str = "") -> dict:
        r = self.review
        pairs = []
        for e in r.entries:
            now = r.answer(e.order)
            pairs.append({"order": int(e.order), "split": r.split.get(e.order, "?"), "recorded": MU_WORDS[tuple(e.mu)],
                          "now": "delete" if now == self.deleted else MU_WORDS[tuple(now)]})
        chosen = r.entry
        shown = [] if chosen is None else [self.clips.clip(chosen.id1), self.clips.clip(chosen.id2)]
        return {"pairs": pairs, "chosen": None if chosen is None else int(chosen.order),
                "relabelled": r.n_relabelled, "deleted": r.n_deleted, "unsaved": bool(r.edits), "message": message,
                "fps": FPS, "loop_pause_frames": LOOP_PAUSE_FRAMES,
                "frames": max((len(frames) for frames, _ in shown), default=0),
                "frame_ms": round(1e3 * shown[0][1], 3) if shown else round(1e3 / FPS, 3),
                "size": list(shown[0][0].shape[1:3]) if shown else None}

    async def _state_now(self, message: str = "") -> dict:
        """``state(message)``, the chosen pair's clips drawn first in a thread (a MuJoCo clip takes the render
        worker a second or more: the server answers other requests meanwhile)."""
        e = self.review.entry
        if e is not None:
            loop = asyncio.get_running_loop()
            for seg_id in (e.id1, e.id2):
                await loop.run_in_executor(None, self.clips.clip, seg_id)
        return self.state(message)

    def _entry(self, order) -> int:
        """The position of the entry of number ``order`` (BadRequest if none)."""
        if not isinstance(order, int) or isinstance(order, bool):
            raise BadRequest(400, "order: the pair's number")
        for i, e in enumerate(self.review.entries):
            if e.order == order:
                return i
        raise BadRequest(404, f"no pair {order} in the database")

    async def _page(self, request):
        from aiohttp import web

        return web.Response(text=PAGE_FILE.read_text(), content_type="text/html",
                            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})

    async def _state(self, request):
        from aiohttp import web

        if "order" in request.query:
            try:
                order = int(request.query["order"])
            except ValueError:
                raise BadRequest(400, "order: the pair's number") from None
            self.review.position = self._entry(order)
        return web.json_response(await self._state_now())

    async def _clip(self, request):
        from aiohttp import web

        e = self.review.entries[self._entry(int(request.match_info["order"]))]
        seg_id = e.id1 if request.match_info["side"] == "left" else e.id2
        loop = asyncio.get_running_loop()
        frames, _ = await loop.run_in_executor(None, self.clips.clip, seg_id)
        png = await loop.run_in_executor(None, clip_png, frames)
        return web.Response(body=png, content_type="image/png", headers={"Cache-Control": "private, max-age=600"})

    async def _edit(self, request):
        from aiohttp import web

        body = await json_body(request)
        change = body.get("change")
        if change not in (*CHANGES, "delete", "keep"):
            raise BadRequest(400, "change: one of left, right, equal, delete, keep")
        self.review.position = self._entry(body.get("order"))
        e = self.review.entry
        if change == "keep":
            self.review.move(+1)
        else:
            self.review.edit(self.deleted if change == "delete" else CHANGES[change])
        return web.json_response(await self._state_now(f"pair {e.order}: {change}"))

    async def _undo(self, request):
        from aiohttp import web

        undone = self.review.undo()
        return web.json_response(await self._state_now("undone" if undone else "nothing to undo"))

    async def _save(self, request):
        from aiohttp import web

        text = self.save()
        return web.json_response(await self._state_now(text or "nothing to save"))


def review_in_browser(review, save, host: str = "127.0.0.1", port: int = 0) -> int:
    """Serve the review page until Ctrl-C; the edits are saved then too."""
    server = ReviewServer(review, save, host=host, port=port)
    try:
        asyncio.run(server.run())
    except KeyboardInterrupt:
        pass
    finally:
        save()
    return 0
