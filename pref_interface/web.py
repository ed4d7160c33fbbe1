"""--labeller web: people label in a browser, on this machine or another (ssh -L), several at once.

The preference interface's process serves one page (pref_interface/web_page.html) with aiohttp, in an
asyncio loop that owns the process's main thread (as Qt's event loop does for the window): request
handlers and the loop's tick share one thread, so nothing here needs a lock. The run prints the page's
address, with a random token, at start (as Jupyter does).

    tick, every TICK_S:  stop event set (run over, Ctrl-C)  -> leave the loop
                         segments <- segment_queue (into the pool)
                         pages not heard from for abandon_s -> their unanswered pairs back to the pool
                         (to the next page that asks), their held answers final
                         final answers (held past hold_s) -> preference_queue; metrics
    a page (its own id, made by the page): keeps up to PAIRS_AHEAD pairs of its own (the one on screen
        and the next, whose clips the browser loads ahead); asks /api/state every few seconds (that is
        also how the server knows it is still open); answers and undoes by key or button
    an answer: taken only for the pair on the page's screen, once (a second copy of the same answer,
        or an answer to a pair already answered, changes nothing and says so); the answer before it
        becomes final and goes to preference_queue before the reply, so the page shows its next pair
        only once the previous answer is on the queue (the newest one is held for undo, as in the
        window: pref_interface.answers; at exit every held answer is sent)

Routes (each needs the token: ?token=T, or the header X-Token: T; without it: 403 and nothing else):
    GET  /                      the page
    GET  /api/state?page=P      the page's pairs and the counts (JSON), the labels the schedule plans that are
                                still to give and about how long they take at the pace so far
    GET  /clip/N/left|right     pair N's clip: one PNG, its frames stacked top to bottom (Pillow); a MuJoCo
                                pair's are the frames drawn from its states (pref_interface.clip_drawer), each
                                shown the pair's frame_ms (the page's clock follows the pair on screen)
    GET  /states/N/left|right   pair N's clip as the simulator states it was drawn from (JSON: "states", (T, S)
                                concat(qpos, qvel) per step, floats exact; "falls", (T,) or null; "clip", "env_id"):
                                for a scripted person that judges what the page shows (bench/page_person.py);
                                an Atari clip's states are the console's RAM after each step (T, 128)
                                (envs/atari_watch.py), with "rewards", the game's reward each step (the events the
                                page shows, as Enduro's passes, where the score itself is blanked); 404 for a pair
                                whose clips carry no states (MovingDot, the oracle's)
    POST /api/answer            {"page": P, "pair": N, "answer": "left|right|equal|cant_tell"} -> state
    POST /api/undo              {"page": P} -> state
    POST /api/bye               {"page": P}: the page is closing; its pairs go back to the pool now

Bounded (pref_interface.web_server, shared with the review page): request bodies up to MAX_BODY bytes
(413 above), headers by aiohttp's parser (400); a bad request gets a 4xx with one line of JSON saying why;
an error in a handler is logged here and answered 500 without a traceback; the run goes on.
"""
from __future__ import annotations

import asyncio
import collections
import re
import secrets
import socket
import threading
import time
from pathlib import Path

from envs.atari_ids import ATARI_SUFFIX
from pref_interface.answers import ANSWER_TEXT, ANSWERS, FPS, LOOP_PAUSE_FRAMES, REPEAT_GUARD_S, PairQueue, why_no_pair
from pref_interface.shown_pairs import frame_seconds, shown_clips
from pref_interface.web_server import (
    BadRequest,
    clip_png,
    guarded_app,
    json_body,
    listen,
    serve,
)

TICK_S = 0.1
PAIRS_AHEAD = 2  # per page: the pair on screen and the next (its clips load while the person watches)
ABANDON_S = 30.0  # a page not heard from this long is gone (tab closed): its pairs go back to the pool
POLL_S = 2.0  # a page asks for its state this often (while it waits for a pair: 4x as often)
PAGE_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
PAGE_FILE = Path(__file__).with_name("web_page.html")


class Pair(tuple):
    """Two segments, and the number the page shows ("pair 17"); also its id in the routes. What the page shows of
    them (``clips``: the segments' frames, or a MuJoCo pair's drawn ones) and each frame's seconds (``frame_s``):
    pref_interface.shown_pairs."""

    number: int

    def __new__(cls, segments, number: int):
        pair = super().__new__(cls, segments)
        pair.number = number
        pair.clips, pair.frame_s = shown_clips(segments), frame_seconds(segments)
        return pair


class Page:
    """One open page: its pairs (a PairQueue: the one on screen, the next, the held answer) and when it
    was last heard from."""

    def __init__(self, page_id: str, hold_s: float, now: float):
        self.id, self.pairs, self.seen = page_id, PairQueue(hold_s=hold_s), now


def label_in_browser(iface, log=print, **options) -> dict:
    """--labeller web: serve the page until the run stops; returns figures for the summary."""
    p = iface.cfg.prefs
    server = WebLabeller(iface, host=p.web_host, port=p.web_port, log=log, **options)
    return asyncio.run(server.run())


class WebLabeller:
    """The page's server and the labelling loop (see the module docstring). ``run()`` serves until the
    stop event; ``address`` (with the token) is known once it listens (``ready`` is set). It reads the
    interface's ports (``iface.ports``): the stop event, and the status (predictor's version, database's size)."""

    def __init__(self, iface, host: str = "127.0.0.1", port: int = 0, log=print, hold_s: float = 5.0,
                 abandon_s: float = ABANDON_S, token: str | None = None):
        ports = iface.ports
        self.iface, self.stop_event, self.log = iface, ports.stop_event, log
        self.predictor_version, self.db_size = ports.predictor_version, ports.db_size
        self.hold_s, self.abandon_s = hold_s, abandon_s
        self.token = token or secrets.token_urlsafe(24)
        self.sock = listen(host, port)
        self.host, self.port = host, self.sock.getsockname()[1]
        self.pages: dict[str, Page] = {}
        self.returned: collections.deque[Pair] = collections.deque()  # pairs of closed pages, given out first
        self.out: dict[int, Pair] = {}  # pairs on some page (or returned) and not answered: by number
        self.answered: set[int] = set()  # numbers of pairs answered (a second answer changes nothing)
        self.n_pairs = 0  # pairs numbered so far
        self.n_answers = self.n_cant_tell = self.n_undone = self.n_duplicates = self.n_returned = 0
        self.n_bad_requests = 0
        self.first_pair_logged = False
        self.clock = time.monotonic  # the pace's clock
        self.first_pair_at: float | None = None  # when the first pair went to a page: the pace's start
        self.t0 = time.perf_counter()
        self.ready = threading.Event()  # set once the page is served

    @property
    def address(self) -> str:
        shown = socket.gethostname() if self.host in ("0.0.0.0", "::", "") else self.host
        shown = f"[{shown}]" if ":" in shown else shown
        return f"http://{shown}:{self.port}/?token={self.token}"

    # ---- the loop ----------------------------------------------------------------------------------
    async def run(self) -> dict:
        app = guarded_app(self.token, self.log, on_refused=self._count_bad_request)
        app.router.add_get("/", self._page)
        app.router.add_get("/api/state", self._state)
        app.router.add_get(r"/clip/{number:\d{1,9}}/{side:left|right}", self._clip)
        app.router.add_get(r"/states/{number:\d{1,9}}/{side:left|right}", self._states)
        app.router.add_post("/api/answer", self._answer)
        app.router.add_post("/api/undo", self._undo)
        app.router.add_post("/api/bye", self._bye)
        runner = await serve(app, self.sock)
        try:
            self.log(f"[prefs] label in a browser: {self.address}", flush=True)
            if self.host in ("0.0.0.0", "::", ""):
                self.log(f"[prefs] the page is served on every network of this machine (--web_host {self.host}): "
                         f"anyone who can reach port {self.port} and has the token can label", flush=True)
            self.ready.set()
            while not self.stop_event.is_set():
                self.tick()
                await asyncio.sleep(TICK_S)
        finally:
            await runner.cleanup()
            self.close()
        minutes = (time.perf_counter() - self.t0) / 60
        self.log(f"[prefs] {self.n_answers} answers in the browser ({self.n_cant_tell} can't tell, {self.n_undone} "
                 f"undone, {self.n_duplicates} sent twice) in {minutes:.1f} min", flush=True)
        return {"answers": self.n_answers, "answers_cant_tell": self.n_cant_tell, "answers_undone": self.n_undone,
                "answers_sent_twice": self.n_duplicates, "pairs_returned": self.n_returned}

    def tick(self) -> None:
        iface = self.iface
        if iface.drawer is not None and iface.drawer.failure is not None:  # a handler's 500 would hide it: the run
            raise iface.drawer.failure                                    # stops, saying why
        iface.receive_segments(max_items=32)
        now = time.monotonic()
        for page in [p for p in self.pages.values() if now - p.seen > self.abandon_s]:
            self._drop_page(page)
        self._send_final()
        if iface.drawer is not None:  # the render worker's priority follows a person's need (clip_drawer)
            waits = any(p.pairs.n_waiting == 0 for p in self.pages.values())
            ahead = len(self.returned) + sum(max(0, p.pairs.n_waiting - 1) for p in self.pages.values())
            iface.drawer.need(waits, ahead)
        iface.maybe_log({"prefs/answers": self.n_answers, "prefs/answers_undone": self.n_undone,
                         "prefs/pages_open": len(self.pages), "prefs/pairs_out": len(self.out),
                         "prefs/pairs_returned": self.n_returned, "prefs/bad_requests": self.n_bad_requests})

    def close(self) -> None:
        """At exit: every answer given is final, the held ones included."""
        for page in self.pages.values():
            for answer in page.pairs.flush():
                self.iface.send(answer.pair, answer.mu, block=False)
        self.pages.clear()
        self.sock.close()

    def _send_final(self) -> None:
        for page in self.pages.values():
            for answer in page.pairs.take_ready():
                self.iface.send(answer.pair, answer.mu, block=False)
        self.iface.flush(block=False)

    def _drop_page(self, page: Page) -> None:
        """The page is gone: its held answer is final, its unanswered pairs go back to the pool."""
        for answer in page.pairs.flush():
            self.iface.send(answer.pair, answer.mu, block=False)
        self.returned.extend(page.pairs.waiting)
        self.n_returned += len(page.pairs.waiting)
        page.pairs.waiting.clear()
        del self.pages[page.id]
        self.log(f"[prefs] a page closed or went quiet: {len(self.returned)} pairs back in the pool", flush=True)

    # ---- pairs -------------------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Pairs out that may still become labels (on pages, held, or returned)."""
        return sum(p.pairs.n_pending for p in self.pages.values()) + len(self.returned)

    def _fill(self, page: Page) -> None:
        """Up to PAIRS_AHEAD pairs on the page: first those of closed pages, then new ones."""
        while page.pairs.n_waiting < PAIRS_AHEAD:
            if self.returned:
                page.pairs.add(self.returned.popleft())
                continue
            segments = self.iface.next_pair(pending=self.pending)
            if segments is None:
                return
            self.n_pairs += 1
            pair = Pair(segments, self.n_pairs)
            self.out[pair.number] = pair
            page.pairs.add(pair)
            if not self.first_pair_logged:
                self.first_pair_logged, self.first_pair_at = True, self.clock()
                self.log("[prefs] first pair on a page", flush=True)

    def _page_of(self, page_id) -> Page:
        if not isinstance(page_id, str) or not PAGE_ID.match(page_id):
            raise BadRequest(400, "page: 8 to 64 letters, digits, - or _")
        page = self.pages.get(page_id)
        if page is None:  # a new page (or one that went quiet and came back: it starts afresh)
            page = self.pages[page_id] = Page(page_id, self.hold_s, time.monotonic())
        page.seen = time.monotonic()
        return page

    def labels_to_go(self) -> tuple[int, float | None]:
        """(labels the schedule plans that no one has given yet, about how many seconds they take at the pace of
        this page's people so far: the labels given here (answers, not "can't tell", held ones included) over the
        time since the first pair went to a page, waits included; None before 3 labels)."""
        held = sum(p.pairs.n_pending - p.pairs.n_waiting for p in self.pages.values())  # answered, not yet final
        to_go = max(0, self.iface.labels_to_go - held)
        labels = self.n_answers - self.n_cant_tell
        if self.first_pair_at is None or labels < 3:
            return to_go, None
        return to_go, to_go * (self.clock() - self.first_pair_at) / labels

    def state(self, page: Page, message: str = "") -> dict:
        iface, pairs = self.iface, page.pairs
        shown = [{"number": pair.number, "frames": max(len(c) for c in pair.clips), "clips": [pair[0].id, pair[1].id],
                  "size": [list(c.shape[1:3]) for c in pair.clips], "frame_ms": round(1e3 * pair.frame_s, 3)}
                 for pair in pairs.waiting]
        status = {"db_size": None if self.db_size is None else int(self.db_size.value),
                  "predictor_version": None if self.predictor_version is None else int(self.predictor_version.value)}
        to_go, eta_s = self.labels_to_go()
        waiting_text = "" if shown else why_no_pair(iface, self.pending, given="given or on a page")
        return {"pairs": shown, "waiting_text": waiting_text, "message": message,
                "labels_to_go": to_go, "eta_s": None if eta_s is None else round(eta_s, 1),
                "can_undo": pairs.held is not None, "held": None if pairs.held is None else pairs.held.pair.number,
                "labels_given": iface.given, "labels_allowed": iface.allowed,
                "answers_here": pairs.n_answers, "answers": self.n_answers, "pages": len(self.pages),
                "fps": FPS, "loop_pause_frames": LOOP_PAUSE_FRAMES, "repeat_guard_s": REPEAT_GUARD_S,
                "poll_s": POLL_S, "hold_s": self.hold_s, **status}

    # ---- requests ----------------------------------------------------------------------------------
    def _count_bad_request(self) -> None:
        self.n_bad_requests += 1

    async def _page(self, request):
        from aiohttp import web

        return web.Response(text=PAGE_FILE.read_text(), content_type="text/html",
                            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})

    async def _state(self, request):
        from aiohttp import web

        page = self._page_of(request.query.get("page"))
        self._send_final()
        self._fill(page)
        return web.json_response(self.state(page))

    async def _clip(self, request):
        from aiohttp import web

        number, side = int(request.match_info["number"]), request.match_info["side"]
        pair = self.out.get(number)
        if pair is None:
            raise BadRequest(404, f"no pair {number} is waiting for an answer")
        frames = pair.clips[0 if side == "left" else 1]
        png = await asyncio.get_running_loop().run_in_executor(None, clip_png, frames)
        return web.Response(body=png, content_type="image/png", headers={"Cache-Control": "private, max-age=600"})

    async def _states(self, request):
        from aiohttp import web

        number, side = int(request.match_info["number"]), request.match_info["side"]
        pair = self.out.get(number)
        if pair is None:
            raise BadRequest(404, f"no pair {number} is waiting for an answer")
        segment = pair[0 if side == "left" else 1]
        if segment.states is None:
            raise BadRequest(404, f"pair {number}'s clips carry no simulator states")
        falls = None if segment.falls is None else [bool(f) for f in segment.falls]
        reply = {"number": number, "side": side, "clip": segment.id, "env_id": segment.env_id,
                 "states": segment.states.tolist(), "falls": falls}
        if segment.env_id.endswith(ATARI_SUFFIX):  # what an Atari goal scores beside the RAM (pref_interface/goals.py)
            reply["rewards"] = segment.true_rewards.tolist()
        return web.json_response(reply)

    async def _answer(self, request):
        from aiohttp import web

        body = await json_body(request)
        page, number, kind = self._page_of(body.get("page")), body.get("pair"), body.get("answer")
        if kind not in ANSWERS:
            raise BadRequest(400, f"answer: one of {', '.join(ANSWERS)}")
        if not isinstance(number, int) or isinstance(number, bool):
            raise BadRequest(400, "pair: the pair's number")
        if number in self.answered:  # sent twice (a retry, a double click): counted once
            self.n_duplicates += 1
            return web.json_response(self.state(page, f"pair {number} was answered already"))
        current = page.pairs.current
        if number not in self.out:
            raise BadRequest(404, f"no pair {number} is waiting for an answer")
        if current is None or current.number != number:
            raise BadRequest(409, f"pair {number} is not the one on this page's screen"
                                  + (f" (pair {current.number} is)" if current is not None else ""))
        answer = page.pairs.answer(kind)
        self.answered.add(number)
        del self.out[number]
        self.n_answers += 1
        self.n_cant_tell += kind == "cant_tell"
        self._send_final()  # the answer before this one is final now: on the queue before the next pair shows
        self._fill(page)
        return web.json_response(self.state(page, f"pair {answer.pair.number}: {ANSWER_TEXT[kind]}   (u: undo)"))

    async def _undo(self, request):
        from aiohttp import web

        page = self._page_of((await json_body(request)).get("page"))
        undone = page.pairs.undo()
        if undone is None:
            return web.json_response(self.state(page, f"nothing to undo (an answer is final after the next one, "
                                                      f"or after {self.hold_s:g} s)"))
        self.answered.discard(undone.pair.number)
        self.out[undone.pair.number] = undone.pair
        self.n_answers -= 1
        self.n_cant_tell -= undone.kind == "cant_tell"
        self.n_undone += 1
        return web.json_response(self.state(page, f"undone: pair {undone.pair.number} is back"))

    async def _bye(self, request):
        from aiohttp import web

        page_id = (await json_body(request)).get("page")
        if isinstance(page_id, str) and page_id in self.pages:
            self._drop_page(self.pages[page_id])
        return web.json_response({"ok": True})
