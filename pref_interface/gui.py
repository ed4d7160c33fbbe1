"""The labelling window (PyQt5): two clips side by side, answers by key or button, a status bar.

    LabelWindow    "drlhp: which clip is better?": shows the pair on screen of a PairQueue
                   (pref_interface.answers), turns keys and buttons into answers, shows the status bar;
                   calls ``on_close`` when the person closes it
    main()         python -m pref_interface.gui --load_prefs_dir D --screenshot out.png
                   python -m pref_interface.gui --load_prefs_dir D --label_to OUT.npz   (label D's pairs again)

Keys (also buttons):  Left / a  left is better      Right / d  right is better
                      Up / w    equally good        Down / s   can't tell (discarded)
                      Space     replay both clips   u          undo the last answer
Held keys do not repeat: one press, one answer.

Each clip is a ClipView (pref_interface.clip_view). Only the process where a person labels imports this
module: headless runs never load Qt.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from PyQt5.QtCore import Qt, QTimer
from PyQt5.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pref_interface.answers import ANSWER_TEXT, FPS, LOOP_PAUSE_FRAMES, REPEAT_GUARD_S, PairQueue
from pref_interface.clip_view import ClipView, application, grow_to_fit, screenshot
from pref_interface.shown_pairs import shown_clips

WINDOW_TITLE = "drlhp: which clip is better?"
STATUS_INTERVAL_S = 0.5  # the status bar is rewritten at most this often (and at once when the pair changes)
KEY_ANSWERS = {Qt.Key_Left: "left", Qt.Key_A: "left", Qt.Key_Right: "right", Qt.Key_D: "right",
               Qt.Key_Up: "equal", Qt.Key_W: "equal", Qt.Key_Down: "cant_tell", Qt.Key_S: "cant_tell"}


class LabelWindow(QMainWindow):
    """The labelling window over a PairQueue.

    status() -> {"db_size": int | None, "predictor_version": int | None} feeds the status bar;
    on_answer(answer) is called after each answer and undo; on_close() when the person closes the window.
    """

    def __init__(self, pairs: PairQueue, status=lambda: {}, on_answer=lambda answer: None,
                 on_close=lambda: None, show_agent: bool = False, fps: float = FPS):
        super().__init__()
        self.pairs, self.status, self.on_answer, self.on_close = pairs, status, on_answer, on_close
        self.setWindowTitle(WINDOW_TITLE)
        self.left = ClipView("Left   [A / \u2190]")
        self.right = ClipView("Right   [D / \u2192]")
        self.agent = ClipView("The agent's latest episode") if show_agent else None
        self._shown = ()  # the pair on screen (by identity); () before the first refresh
        self.waiting_text = "waiting for clips from the agent\u2026"  # shown while no pair is on screen
        self.tick = 0  # frames since the clips (re)started
        self.agent_tick = 0
        self.n_frame_ticks = 0  # frame timer ticks so far (the clips' real frame rate, for the metrics)
        self._status_at = 0.0  # when the status bar was last written
        self._last_key, self._last_key_time = None, 0.0

        question = QLabel("Which clip shows the better behaviour?")
        question.setAlignment(Qt.AlignCenter)
        font = question.font()
        font.setPointSize(font.pointSize() + 4)
        question.setFont(font)
        clips = QHBoxLayout()
        clips.addWidget(self.left, 1)
        divider = QFrame()
        divider.setFrameShape(QFrame.VLine)
        clips.addWidget(divider)
        clips.addWidget(self.right, 1)
        if self.agent is not None:
            clips.addSpacing(16)
            clips.addWidget(self.agent, 1)

        grid = self._buttons()
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(question)
        layout.addLayout(clips, 1)
        layout.addLayout(grid)
        self.setCentralWidget(central)
        self.set_agent_episode(None)
        self.counts = QLabel("")
        self.statusBar().addPermanentWidget(self.counts)
        for w in (central, self.left, self.right, question, self.statusBar()):
            w.setFocusPolicy(Qt.NoFocus)
        self.setFocusPolicy(Qt.StrongFocus)

        self.timer = QTimer(self)
        self.timer.timeout.connect(self.next_frame)
        self.frame_ms = self.default_frame_ms = int(round(1000 / fps))  # a MuJoCo pair shows each frame its own time
        self.timer.start(self.frame_ms)
        self.refresh()

    def _buttons(self) -> QGridLayout:
        """The answer, replay and undo buttons in their grid, connected."""
        self.buttons: dict[str, QPushButton] = {}
        grid = QGridLayout()
        specs = [("left", "\u25c0  Left is better   [A / \u2190]", 0, 0),
                 ("equal", "Equally good   [W / \u2191]", 0, 1),
                 ("cant_tell", "Can't tell   [S / \u2193]", 0, 2),
                 ("right", "Right is better   [D / \u2192]  \u25b6", 0, 3),
                 ("replay", "Replay   [Space]", 1, 1), ("undo", "Undo last answer   [U]", 1, 2)]
        for name, text, row, col in specs:
            button = QPushButton(text)
            button.setFocusPolicy(Qt.NoFocus)  # keys always go to the window, never "press" a button
            button.setMinimumHeight(34)
            self.buttons[name] = button
            grid.addWidget(button, row, col)
        for name in ("left", "right", "equal", "cant_tell"):
            self.buttons[name].clicked.connect(lambda _=False, n=name: self.give(n))
        self.buttons["replay"].clicked.connect(self.replay)
        self.buttons["undo"].clicked.connect(self.undo)
        return grid

    # ---- keys and buttons ----------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        if event.isAutoRepeat() or event.modifiers() & (Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier):
            return super().keyPressEvent(event)
        key = event.key()
        if key in KEY_ANSWERS:
            # Nobody means two answers on two pairs 0.2 s apart with the same key; an X server under load
            # can deliver a key repeat that Qt does not mark as one (a benchmark run under load counted
            # one answer more than its 94 key presses).
            now = time.monotonic()
            if key == self._last_key and now - self._last_key_time < REPEAT_GUARD_S:
                return
            self._last_key, self._last_key_time = key, now
            self.give(KEY_ANSWERS[key])
        elif key == Qt.Key_Space:
            self.replay()
        elif key == Qt.Key_U:
            self.undo()
        else:
            super().keyPressEvent(event)

    def give(self, kind: str) -> None:
        answer = self.pairs.answer(kind)
        if answer is None:
            self.statusBar().showMessage("no pair on screen yet", 2000)
            return
        self.statusBar().showMessage(f"answer {self.pairs.n_answers}: {ANSWER_TEXT[kind]}   (u: undo)", 3000)
        self.on_answer(answer)
        self.refresh()

    def undo(self) -> None:
        undone = self.pairs.undo()
        if undone is None:
            self.statusBar().showMessage("nothing to undo (an answer is final after the next one, or after "
                                         f"{self.pairs.hold_s:g} s)", 3000)
            return
        self.statusBar().showMessage(f"undone: {ANSWER_TEXT[undone.kind]}; the pair is back", 3000)
        self.on_answer(None)
        self.refresh()

    def replay(self) -> None:
        self.tick = 0
        self._show_tick()

    # ---- display --------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Show the queue's current pair (clips restart when it changes) and update the status bar."""
        pair = self.pairs.current
        if pair is not self._shown:
            self._shown = pair
            left, right = (None, None) if pair is None else shown_clips(pair)
            self.left.set_frames(left, self.waiting_text)
            self.right.set_frames(right, self.waiting_text)
            self._set_frame_ms(getattr(pair, "frame_s", None))
            self.tick = 0
            for name in ("left", "right", "equal", "cant_tell", "replay"):
                self.buttons[name].setEnabled(pair is not None)
            self._status_at = 0.0  # the counts change with the pair: show them now
        self._show_tick()
        if time.monotonic() - self._status_at >= STATUS_INTERVAL_S:
            self.update_status()

    def _set_frame_ms(self, frame_s: float | None) -> None:
        """The clips' clock: a drawn MuJoCo pair's own seconds per frame (real speed), else the window's fps."""
        ms = self.default_frame_ms if frame_s is None else max(1, int(round(1000 * frame_s)))
        if ms != self.frame_ms:
            self.frame_ms = ms
            self.timer.setInterval(ms)

    def fit_clips(self, frame_shape) -> None:
        """Grow the window, where the screen allows, for both clips to show frames of ``frame_shape`` at 2x at least
        (pref_interface.clip_view.grow_to_fit)."""
        grow_to_fit(self, (self.left, self.right), frame_shape)

    def set_waiting_text(self, text: str) -> None:
        """Why no pair is on screen (shown in place of the clips)."""
        if text != self.waiting_text:
            self.waiting_text = text
            for view in (self.left, self.right):
                view.screen.placeholder = text
                view.screen.update()

    def set_agent_episode(self, frames: np.ndarray | None) -> None:
        if self.agent is not None:
            self.agent.set_frames(frames, "no episode finished yet")
            self.agent_tick = 0

    def next_frame(self) -> None:
        self.n_frame_ticks += 1
        self.tick += 1
        if self.tick >= max(self.left.n_frames, self.right.n_frames) + LOOP_PAUSE_FRAMES:
            self.tick = 0
        self._show_tick()
        if self.agent is not None and self.agent.n_frames:
            self.agent_tick = (self.agent_tick + 1) % (self.agent.n_frames + LOOP_PAUSE_FRAMES)
            self.agent.show_frame(self.agent_tick)

    def _show_tick(self) -> None:
        self.left.show_frame(self.tick)
        self.right.show_frame(self.tick)

    def status_text(self) -> str:
        s = self.status() or {}
        p = self.pairs
        parts = [f"{p.n_answers} answers" + (f" ({p.n_cant_tell} can't tell)" if p.n_cant_tell else ""),
                 f"{p.answers_per_minute():.1f} per minute", f"{p.n_waiting} pairs waiting"]
        if s.get("db_size") is not None:
            parts.append(f"database {s['db_size']}")
        version = s.get("predictor_version")
        if version is not None:
            parts.append(f"predictor v{version}" if version > 0 else "predictor not trained yet")
        return "   |   ".join(parts)

    def update_status(self) -> None:
        self._status_at = time.monotonic()
        text = self.status_text()
        if text != self.counts.text():
            self.counts.setText(text)

    def closeEvent(self, event) -> None:
        self.timer.stop()
        self.on_close()
        super().closeEvent(event)


# ---- python -m pref_interface.gui ------------------------------------------------------------------
def _pairs_of(db) -> list:
    """A saved database's pairs in the order they were labelled."""
    entries = sorted(db.entries("train") + db.entries("val"), key=lambda e: e.order)
    return [(e, (db.segment(e.id1), db.segment(e.id2))) for e in entries]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pref_interface.gui",
                                description="The labelling window on a saved preference database: take a "
                                            "screenshot of it, or label its pairs again into a new database.")
    p.add_argument("--load_prefs_dir", required=True, help="a prefs.npz, or a run directory holding prefs/prefs.npz")
    p.add_argument("--screenshot", help="write a PNG of the window showing the first pair, then exit")
    p.add_argument("--frame", type=int, default=None, help="--screenshot: the frame shown (default: mid-clip)")
    p.add_argument("--label_to", help="label the database's pairs again, answers saved to this .npz")
    p.add_argument("--size", default="900x560", help="window size WxH (default 900x560)")
    args = p.parse_args(argv)
    if not args.screenshot and not args.label_to:
        p.error("give --screenshot PNG or --label_to OUT.npz")
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        p.error(f"--size must be WxH, got {args.size!r}")

    from drlhp.reward.checkpoint import PREFS_FILE, find_file
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.pref_db_files import PrefDBError
    from pref_interface.display import DisplayError, display_problem, require_display

    try:
        db = PrefDB.load(find_file(args.load_prefs_dir, PREFS_FILE))
        if args.screenshot and display_problem():
            os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
        require_display()
    except (PrefDBError, DisplayError) as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    pairs_in_db = _pairs_of(db)
    if not pairs_in_db:
        print(f"{p.prog}: error: the database {args.load_prefs_dir} holds no preferences", file=sys.stderr)
        return 2
    app = application()
    if args.screenshot:
        return _screenshot_main(app, db, pairs_in_db, args, (width, height))
    return _label_main(app, db, pairs_in_db, args, (width, height))


def _screenshot_main(app, db, pairs_in_db, args, size) -> int:
    pairs = PairQueue()
    for _, pair in pairs_in_db:
        pairs.add(pair)
    window = LabelWindow(pairs, status=lambda: {"db_size": len(db), "predictor_version": None})
    window.timer.stop()
    window.resize(*size)
    window.show()
    app.processEvents()
    window.tick = args.frame if args.frame is not None else window.left.n_frames // 2
    window.refresh()
    app.processEvents()
    screenshot(window, args.screenshot)
    print(f"screenshot {window.width()}x{window.height()} -> {args.screenshot}")
    window.close()
    return 0


def _label_main(app, db, pairs_in_db, args, size) -> int:
    from drlhp.processes.messages import Preference
    from drlhp.reward.pref_db import PrefDB

    out = PrefDB(max_prefs=max(len(db), 1), seed=0)
    pairs = PairQueue()
    for _, pair in pairs_in_db:
        pairs.add(pair)

    def save(answers):
        for a in answers:
            if a.mu is not None:
                out.add(Preference(a.pair[0], a.pair[1], a.mu))
        out.save(args.label_to)

    def poll():
        ready = pairs.take_ready()
        if ready:
            save(ready)
        if pairs.current is None and pairs.held is None:
            window.close()  # every pair answered

    window = LabelWindow(pairs, status=lambda: {"db_size": len(out)})
    window.resize(*size)
    window.show()
    timer = QTimer()
    timer.timeout.connect(poll)
    timer.start(100)
    app.exec_()
    save(pairs.flush())
    print(f"{pairs.n_answers} answers ({pairs.n_cant_tell} can't tell), {len(out)} preferences -> {args.label_to}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
