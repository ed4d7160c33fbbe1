"""A person labels: the preference-interface process runs the labelling window, and Qt's event loop
owns the process's main thread. Every TICK_MS a timer does the loop's work without ever blocking:

    tick:  stop event set (run over, or Ctrl-C in the terminal)  -> leave the event loop
           segments <- segment_queue (into the pool)
           while fewer than PAIRS_AHEAD pairs wait and the schedule allows: a new pair joins the window's queue
           final answers -> preference_queue (put without waiting; a full queue keeps them in the outbox)
           status bar, metrics
    the person closes the window  -> the stop event: the whole run ends as with Ctrl-C (database and
                                     checkpoints saved; pref_interface reports labelling_window_closed)
    at exit: the held answer (kept back for undo, pref_interface.answers) is sent; then the sentinel

So the person never blocks training: while nobody answers, the policy trains on the current predictor
and its segments keep flowing into the pool (which keeps the newest), or are dropped by the full
segment_queue.
"""
from __future__ import annotations

import time

from pref_interface.answers import why_no_pair
from pref_interface.shown_pairs import shown_clips

PAIRS_AHEAD = 3  # pairs chosen ahead of the person: the next pair shows at once, and is never stale by much
TICK_MS = 30


def label_in_window(iface, log=print, hold_s: float = 5.0) -> dict:
    """Run the window until the run stops or the person closes it; returns figures for the summary."""
    return LabellingLoop(iface, log=log, hold_s=hold_s).run()


class LabellingLoop:
    """The labelling window's loop (see the module docstring): ``run`` = ``start`` (window and timer),
    Qt's event loop calling ``step`` every TICK_MS, then ``close``; returns figures for the summary. It
    reads the interface's ports (``iface.ports``): the stop event (which closing the window sets), the
    status (the predictor's version, the database's size) and, with --show_agent, the agent's episode."""

    def __init__(self, iface, log=print, hold_s: float = 5.0):
        ports = iface.ports
        self.iface, self.stop_event, self.log = iface, ports.stop_event, log
        self.predictor_version, self.db_size = ports.predictor_version, ports.db_size
        self.agent_episode = ports.agent_episode
        self.hold_s = hold_s
        self.closed_by_person = False
        self.failure: BaseException | None = None  # from step(): re-raised once the event loop is left
        self.first_pair_logged = False
        # responsiveness since the last metrics row: the clips' frame rate, the longest tick
        self.since = {"t": time.perf_counter(), "frame_ticks": 0, "tick_ms_max": 0.0}
        self.app = self.pairs = self.window = self.timer = None
        self.t0 = 0.0

    def run(self) -> dict:
        self.start()
        self.app.exec_()  # step() every TICK_MS, until the run stops or the person closes the window
        return self.close()

    # ---- start ----------------------------------------------------------------------------------
    def start(self) -> None:
        from pref_interface.display import require_display

        require_display(fix="pass --synthetic_prefs")  # one line instead of Qt's abort
        from PyQt5.QtCore import QTimer

        from pref_interface.answers import PairQueue
        from pref_interface.gui import LabelWindow, application

        self.app = app = application()
        self.pairs = PairQueue(hold_s=self.hold_s)
        self.window = window = LabelWindow(self.pairs, status=self._status, on_close=self._on_close,
                                           show_agent=self.agent_episode is not None)
        screen = app.primaryScreen().availableGeometry()
        window.resize(min(1000 if self.agent_episode is None else 1300, screen.width()), min(620, screen.height()))
        window.show()
        window.raise_()
        window.activateWindow()
        self.timer = QTimer()
        self.timer.timeout.connect(self.step)
        self.timer.start(TICK_MS)
        self.log(f"[prefs] labelling window open: \"{window.windowTitle()}\"", flush=True)
        self.t0 = time.perf_counter()

    # ---- step (the timer's slot) ----------------------------------------------------------------
    def step(self) -> None:
        iface, pairs, window = self.iface, self.pairs, self.window
        t_tick = time.perf_counter()
        try:
            if self.stop_event.is_set():
                self.app.quit()
                return
            for answer in pairs.take_ready():  # first: what is sent counts against the schedule
                iface.send(answer.pair, answer.mu, block=False)
            iface.receive_segments(max_items=32)  # unpickling is the tick's main cost: a few per tick
            while pairs.n_waiting < PAIRS_AHEAD:
                pair = iface.next_pair(pending=pairs.n_pending)
                if pair is None:
                    break
                pairs.add(pair)
            if pairs.current is not None and not self.first_pair_logged:
                self.first_pair_logged = True
                window.fit_clips(shown_clips(pairs.current)[0].shape[1:])  # Atari's colour frames at 2x, at least
                self.log("[prefs] first pair on screen", flush=True)
            if pairs.current is None:
                window.set_waiting_text(why_no_pair(iface, pairs.n_pending))
            if iface.drawer is not None:  # the render worker's priority follows the person's need (clip_drawer)
                iface.drawer.need(pairs.current is None, max(0, pairs.n_waiting - 1))
            iface.flush(block=False)
            if self.agent_episode is not None:
                frames = self.agent_episode.poll()
                if frames is not None:
                    window.set_agent_episode(frames)
            window.refresh()
            self._log_metrics(t_tick)
        except BaseException as e:  # PyQt aborts on an exception escaping a slot: end the loop, re-raise below
            self.failure = e
            self.app.quit()

    def _log_metrics(self, t_tick: float) -> None:
        pairs, since, window = self.pairs, self.since, self.window
        now = time.perf_counter()
        since["tick_ms_max"] = max(since["tick_ms_max"], 1e3 * (now - t_tick))
        if self.iface.maybe_log({"prefs/answers": pairs.n_answers, "prefs/answers_undone": pairs.n_undone,
                                 "prefs/pairs_waiting": pairs.n_waiting,
                                 "prefs/answers_per_minute": pairs.answers_per_minute(),
                                 "system/clip_fps": (window.n_frame_ticks - since["frame_ticks"]) / (now - since["t"]),
                                 "system/gui_tick_ms_max": since["tick_ms_max"]}):
            since.update(t=now, frame_ticks=window.n_frame_ticks, tick_ms_max=0.0)

    def _status(self) -> dict:
        return {"db_size": None if self.db_size is None else int(self.db_size.value),
                "predictor_version": None if self.predictor_version is None else int(self.predictor_version.value)}

    def _on_close(self) -> None:
        if not self.stop_event.is_set():
            self.closed_by_person = True
            self.log("[prefs] labelling window closed: stopping the run", flush=True)
            self.stop_event.set()
        self.app.quit()

    # ---- close ----------------------------------------------------------------------------------
    def close(self) -> dict:
        """Timers stopped, the window hidden, every answer given sent (the held one included)."""
        pairs = self.pairs
        self.timer.stop()
        self.window.timer.stop()
        self.window.hide()
        for answer in pairs.flush():  # every answer given counts, the held one included
            self.iface.send(answer.pair, answer.mu, block=False)
        if self.failure is not None:
            raise self.failure
        minutes = (time.perf_counter() - self.t0) / 60
        self.log(f"[prefs] {pairs.n_answers} answers ({pairs.n_cant_tell} can't tell, {pairs.n_undone} undone) in "
                 f"{minutes:.1f} min", flush=True)
        return {"answers": pairs.n_answers, "answers_cant_tell": pairs.n_cant_tell,
                "answers_undone": pairs.n_undone, "labelling_window_closed": self.closed_by_person}
