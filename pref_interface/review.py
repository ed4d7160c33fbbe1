"""Review a saved preference database pair by pair: see each pair's clips and its recorded answer,
relabel it or delete it.

    python -m pref_interface.review --load_prefs_dir D [--out FILE]
    python -m pref_interface.review --load_prefs_dir D --web [--web_host H --web_port P]   (a page: review_web.py)

Keys (also buttons):  Left / a, Right / d, Up / w   relabel: left better, right better, equally good (then next)
                      Down / s, Delete              delete the pair (then next)
                      Enter / n / Page Down         next pair, unchanged
                      Backspace / p / Page Up       previous pair
                      Space                         replay both clips
                      u                             undo the last change
                      Ctrl+S                        save now
A MuJoCo clip is drawn from the simulator states the database kept, as the labelling drew it
(pref_interface.review_clips); a database whose MuJoCo clips kept no states, or a machine that cannot draw
them (no offscreen OpenGL), gets one line and exit code 2.
Changes are kept as edits over the database and written when the window closes (and on Ctrl+S), with
one atomic write of the whole file: by default over the file read (D's prefs.npz), or to --out. Do not
review a database that a running run is still writing: the run's next save would replace it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PyQt5.QtCore import Qt, QTimer
from PyQt5.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QMainWindow, QPushButton, QVBoxLayout, QWidget

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT
from drlhp.reward.pref_db import PrefDB
from pref_interface.answers import DELETED, FPS, LOOP_PAUSE_FRAMES
from pref_interface.clip_view import ClipView, application, grow_to_fit
from pref_interface.review_clips import ReviewClips

REVIEW_TITLE = "drlhp: review preferences"
MU_NAMES = {MU_LEFT: "left is better", MU_RIGHT: "right is better", MU_EQUAL: "equally good", DELETED: "deleted"}
KEY_EDITS = {Qt.Key_Left: MU_LEFT, Qt.Key_A: MU_LEFT, Qt.Key_Right: MU_RIGHT, Qt.Key_D: MU_RIGHT,
             Qt.Key_Up: MU_EQUAL, Qt.Key_W: MU_EQUAL, Qt.Key_Down: DELETED, Qt.Key_S: DELETED,
             Qt.Key_Delete: DELETED}
KEY_NEXT = (Qt.Key_Return, Qt.Key_Enter, Qt.Key_N, Qt.Key_PageDown)
KEY_PREVIOUS = (Qt.Key_Backspace, Qt.Key_P, Qt.Key_PageUp)


class Review:
    """The entries of a PrefDB in labelling order, and the person's edits over them (no Qt)."""

    def __init__(self, db: PrefDB):
        self.db = db
        self.entries = sorted(db.entries("train") + db.entries("val"), key=lambda e: e.order)
        self.split = {e.order: split for split in ("train", "val") for e in db.entries(split)}
        self.edits: dict[int, tuple | str] = {}  # order -> new mu, or DELETED
        self.history: list[tuple[int, int, tuple | str | None]] = []  # (position, order, previous edit)
        self.position = 0

    @property
    def entry(self):
        return self.entries[self.position] if self.entries else None

    def answer(self, order: int):
        """The entry's answer now: its edit if any, else the recorded mu."""
        return self.edits.get(order, next(e.mu for e in self.entries if e.order == order))

    def edit(self, change) -> None:
        """Relabel (a mu) or delete (DELETED) the pair on screen, then move to the next pair."""
        e = self.entry
        if e is None:
            return
        self.history.append((self.position, e.order, self.edits.get(e.order)))
        if change == e.mu:
            self.edits.pop(e.order, None)
        else:
            self.edits[e.order] = change
        self.move(+1)

    def undo(self) -> bool:
        if not self.history:
            return False
        self.position, order, previous = self.history.pop()
        if previous is None:
            self.edits.pop(order, None)
        else:
            self.edits[order] = previous
        return True

    def move(self, step: int) -> None:
        self.position = min(max(0, self.position + step), max(0, len(self.entries) - 1))

    @property
    def n_relabelled(self) -> int:
        return sum(v != DELETED for v in self.edits.values())

    @property
    def n_deleted(self) -> int:
        return sum(v == DELETED for v in self.edits.values())

    def apply(self) -> list[str]:
        """Write the edits into the database; returns the notes of edits that could not be made."""
        notes = []
        for order, change in sorted(self.edits.items()):
            if change == DELETED:
                self.db.remove(order)
            elif not self.db.relabel(order, change):
                notes.append(f"pair #{order}: the database already holds this pair as {MU_NAMES[change]}; "
                             "kept as it was")
        self.entries = [e for e in sorted(self.db.entries("train") + self.db.entries("val"), key=lambda e: e.order)]
        self.edits.clear()
        self.history.clear()
        self.move(0)
        return notes


class ReviewWindow(QMainWindow):
    def __init__(self, review: Review, save=lambda: None, fps: float = FPS, clips: ReviewClips | None = None):
        super().__init__()
        self.review, self.save = review, save
        self.clips = clips or ReviewClips(review.db)
        self.default_frame_ms = int(round(1000 / fps))
        self.setWindowTitle(REVIEW_TITLE)
        self.header = QLabel("")
        self.header.setAlignment(Qt.AlignCenter)
        font = self.header.font()
        font.setPointSize(font.pointSize() + 3)
        self.header.setFont(font)
        self.left, self.right = ClipView("Left"), ClipView("Right")
        clips = QHBoxLayout()
        clips.addWidget(self.left, 1)
        clips.addWidget(self.right, 1)
        grid = QGridLayout()
        specs = [("\u25c0  Left is better   [A / \u2190]", lambda: self._edit(MU_LEFT), 0, 0),
                 ("Equally good   [W / \u2191]", lambda: self._edit(MU_EQUAL), 0, 1),
                 ("Delete pair   [S / \u2193 / Del]", lambda: self._edit(DELETED), 0, 2),
                 ("Right is better   [D / \u2192]  \u25b6", lambda: self._edit(MU_RIGHT), 0, 3),
                 ("Previous   [P / Backspace]", lambda: self._move(-1), 1, 0),
                 ("Replay   [Space]", self.replay, 1, 1), ("Undo   [U]", self._undo, 1, 2),
                 ("Next, unchanged   [N / Enter]", lambda: self._move(+1), 1, 3)]
        for text, slot, row, col in specs:
            button = QPushButton(text)
            button.setFocusPolicy(Qt.NoFocus)
            button.clicked.connect(lambda _=False, s=slot: s())
            grid.addWidget(button, row, col)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(self.header)
        layout.addLayout(clips, 1)
        layout.addLayout(grid)
        self.setCentralWidget(central)
        self.counts = QLabel("")
        self.statusBar().addPermanentWidget(self.counts)
        self.tick = 0
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.next_frame)
        self.timer.start(self.default_frame_ms)
        self._shown = ()
        self.refresh()

    def keyPressEvent(self, event) -> None:
        key, mods = event.key(), event.modifiers()
        if event.isAutoRepeat():
            return super().keyPressEvent(event)
        if key == Qt.Key_S and mods & Qt.ControlModifier:
            self.save()
            self.statusBar().showMessage("saved", 3000)
            self._shown = ()
            self.refresh()
        elif mods & (Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier):
            super().keyPressEvent(event)
        elif key in KEY_EDITS:
            self._edit(KEY_EDITS[key])
        elif key in KEY_NEXT:
            self._move(+1)
        elif key in KEY_PREVIOUS:
            self._move(-1)
        elif key == Qt.Key_Space:
            self.replay()
        elif key == Qt.Key_U:
            self._undo()
        else:
            super().keyPressEvent(event)

    def _edit(self, change) -> None:
        e = self.review.entry
        if e is not None:
            self.review.edit(change)
            self.statusBar().showMessage(f"pair #{e.order}: {MU_NAMES[change]}", 3000)
            self.refresh()

    def _move(self, step: int) -> None:
        self.review.move(step)
        self.refresh()

    def _undo(self) -> None:
        if self.review.undo():
            self.statusBar().showMessage("undone", 3000)
        else:
            self.statusBar().showMessage("nothing to undo", 3000)
        self.refresh()

    def replay(self) -> None:
        self.tick = 0
        self.left.show_frame(0)
        self.right.show_frame(0)

    def next_frame(self) -> None:
        self.tick = (self.tick + 1) % (max(self.left.n_frames, self.right.n_frames, 1) + LOOP_PAUSE_FRAMES)
        self.left.show_frame(self.tick)
        self.right.show_frame(self.tick)

    def refresh(self) -> None:
        r = self.review
        e = r.entry
        if e is not self._shown:
            self._shown = e
            if e is None:
                left = right = frame_s = None
            else:
                (left, frame_s), (right, _) = self.clips.clip(e.id1), self.clips.clip(e.id2)
            self.left.set_frames(left, "the database holds no pairs")
            self.right.set_frames(right, "the database holds no pairs")
            ms = self.default_frame_ms if frame_s is None else max(1, round(1000 * frame_s))
            if ms != self.timer.interval():
                self.timer.setInterval(ms)  # a MuJoCo clip's frames stay k * dt each: its real speed
            self.tick = 0
        if e is None:
            self.header.setText("no pairs")
        else:
            now = r.answer(e.order)
            text = f"pair {r.position + 1} of {len(r.entries)} ({r.split.get(e.order, '?')}): recorded {MU_NAMES[e.mu]}"
            if now != e.mu:
                text += f"  \u2192  now {MU_NAMES[now]}"
            self.header.setText(text)
            better = {MU_LEFT: "left", MU_RIGHT: "right"}.get(now if now != DELETED else None)
            self.left.title.setText("Left" + ("   \u2714 better" if better == "left" else ""))
            self.right.title.setText("Right" + ("   \u2714 better" if better == "right" else ""))
        self.counts.setText(f"{r.n_relabelled} relabelled, {r.n_deleted} deleted"
                            + ("   |   unsaved (saved when the window closes, or Ctrl+S)" if r.edits else ""))

    def closeEvent(self, event) -> None:
        self.timer.stop()
        self.save()
        self.clips.close()
        super().closeEvent(event)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pref_interface.review",
                                description="Review a saved preference database: relabel or delete pairs.")
    p.add_argument("--load_prefs_dir", required=True, help="a prefs.npz, or a run directory holding prefs/prefs.npz")
    p.add_argument("--out", default=None, help="write the reviewed database here (default: over the file read)")
    p.add_argument("--web", action="store_true", help="review in a browser instead of a window (no display needed): "
                                                      "prints the page's address; Ctrl-C saves and ends")
    p.add_argument("--web_host", default="127.0.0.1", help="--web: the address served on (default 127.0.0.1)")
    p.add_argument("--web_port", type=int, default=0, help="--web: the port (default 0: a free one)")
    args = p.parse_args(argv)

    from drlhp.reward.checkpoint import PREFS_FILE, find_file
    from drlhp.reward.pref_db_files import PrefDBError
    from pref_interface.display import DisplayError, require_display
    from pref_interface.review_clips import drawing_problem, states_problem

    path = find_file(args.load_prefs_dir, PREFS_FILE)
    try:
        db = PrefDB.load(path)
        if not args.web:
            require_display()
        problem = states_problem(db) or drawing_problem(db)  # MuJoCo clips: their states, and a machine that draws
    except (PrefDBError, DisplayError) as e:
        problem = str(e)
    if problem:
        print(f"{p.prog}: error: {problem}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else path
    review = Review(db)

    def save() -> str:
        """Write the edits; returns what was done ("" when there was nothing to write)."""
        if not review.edits and out == path:
            return ""
        relabelled, deleted = review.n_relabelled, review.n_deleted
        for note in review.apply():
            print(note, file=sys.stderr)
        db.save(out)
        text = f"{relabelled} relabelled, {deleted} deleted: {len(db)} preferences -> {out}"
        print(text, flush=True)
        return text

    if args.web:
        from pref_interface.review_web import review_in_browser

        try:
            return review_in_browser(review, save, host=args.web_host, port=args.web_port)
        except RuntimeError as e:  # the port is taken
            print(f"{p.prog}: error: {e}", file=sys.stderr)
            return 2

    app = application()
    window = ReviewWindow(review, save=save)
    window.resize(900, 560)
    window.show()
    if window.left.frames is not None:  # Atari's colour frames at 2x at least, where the screen allows
        app.processEvents()
        grow_to_fit(window, (window.left, window.right), window.left.frames.shape[1:])
    app.exec_()
    return 0


if __name__ == "__main__":
    sys.exit(main())
