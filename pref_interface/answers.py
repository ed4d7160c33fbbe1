"""A person's pairs and answers, without Qt: what the labelling window shows and what it has been told.

    add(pair)        a pair joins the waiting line (the window shows the first one)
    answer(mu)       the person answers the pair on screen: mu in VALID_MU, or None ("can't tell")
    undo()           takes back the last answer: its pair is on screen again
    take_ready()     answers that are final: to send (mu) or to discard (None)
    flush()          at exit: the held answer is final too

why_no_pair(iface, pending) is the line the window and the page both show while no pair is on screen.

Undo, and why answers are held: a preference that has reached the reward predictor cannot be taken
back (it may already be in a training batch). So the newest answer is held here, not sent, until the
person gives the next answer or ``hold_s`` seconds pass (5 s: long enough to notice a slip of the
finger, short enough that the last answer of a session reaches the database promptly). ``u`` takes
back the held answer only: one level of undo.
"""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment

DELETED = "deleted"  # the review tools' edit that removes a saved preference (window and page alike)

ANSWERS = {"left": MU_LEFT, "right": MU_RIGHT, "equal": MU_EQUAL, "cant_tell": None}
ANSWER_TEXT = {"left": "left is better", "right": "right is better", "equal": "equally good",
               "cant_tell": "can't tell (discarded)"}
RATE_WINDOW_S = 300.0  # answers per minute are counted over the last 5 minutes
# How clips play and keys behave, the same in the window (pref_interface.gui) and the page (pref_interface.web):
FPS = 15  # the paper's clips play at about 15 frames per second (Atari's 60 Hz with a frame skip of 4)
LOOP_PAUSE_FRAMES = 4  # the last frame stays this many ticks before the clips start again
REPEAT_GUARD_S = 0.2  # a second press of the same answer key this soon is ignored (see gui.keyPressEvent)


def why_no_pair(iface, pending: int, given: str = "given") -> str:
    """What the window or the page says while it has no pair to show: ``iface`` the person's
    pref_interface.process.PrefInterface, ``pending`` the answers held or on screen that the schedule counts,
    ``given`` how the labels already counted are named ("given or on a page" on the page)."""
    if iface.n_drawing:
        return "drawing the robot's clips\u2026"
    if len(iface.pool) < 2:
        return "waiting for clips from the agent\u2026"
    if iface.given + len(iface.outbox) + pending >= iface.allowed:
        return (f"all {iface.allowed} labels that the label schedule allows so far are {given}: "
                f"more pairs come as the agent trains\u2026")
    return "every pair of the clips at hand was asked: waiting for new clips from the agent\u2026"


@dataclass(frozen=True)
class Answer:
    pair: tuple[Segment, Segment]
    mu: tuple[float, float] | None  # None: "can't tell", discarded
    kind: str  # a key of ANSWERS
    time: float


class PairQueue:
    def __init__(self, hold_s: float = 5.0, clock=time.monotonic):
        self.hold_s, self.clock = hold_s, clock
        self.waiting: collections.deque[tuple[Segment, Segment]] = collections.deque()
        self.held: Answer | None = None
        self._ready: list[Answer] = []
        self._answer_times: collections.deque[float] = collections.deque()
        self.n_answers = 0  # answers given and not undone (held included), "can't tell" included
        self.n_cant_tell = 0
        self.n_undone = 0
        self.first_shown: float | None = None  # when a pair was first on screen (for the rate)

    # ---- what the window shows -------------------------------------------------------------------
    @property
    def current(self) -> tuple[Segment, Segment] | None:
        return self.waiting[0] if self.waiting else None

    @property
    def n_waiting(self) -> int:
        """Pairs not answered yet, the one on screen included."""
        return len(self.waiting)

    @property
    def n_pending(self) -> int:
        """Pairs taken from the pool that may still become labels: those not answered yet, and those
        answered but not taken by take_ready() yet. A "can't tell" never becomes a label (it is discarded),
        so it does not count: with the label schedule at its limit, the next pair shows at once."""
        answered = [a for a in (self.held, *self._ready) if a is not None and a.mu is not None]
        return len(self.waiting) + len(answered)

    def add(self, pair: tuple[Segment, Segment]) -> None:
        self.waiting.append(pair)
        if self.first_shown is None:
            self.first_shown = self.clock()

    # ---- what the person does ----------------------------------------------------------------------
    def answer(self, kind: str) -> Answer | None:
        """The person's answer on the pair on screen (None if no pair is on screen)."""
        if kind not in ANSWERS:
            raise ValueError(f"unknown answer {kind!r}; one of {sorted(ANSWERS)}")
        if not self.waiting:
            return None
        now = self.clock()
        if self.held is not None:
            self._ready.append(self.held)
        self.held = Answer(self.waiting.popleft(), ANSWERS[kind], kind, now)
        self.n_answers += 1
        self.n_cant_tell += kind == "cant_tell"
        self._answer_times.append(now)
        return self.held

    def undo(self) -> Answer | None:
        """Take back the held answer: its pair is on screen again. None when there is nothing to undo
        (no answer yet, already undone, or it was sent: the next answer came, or ``hold_s`` passed)."""
        self._release_old()
        if self.held is None:
            return None
        undone, self.held = self.held, None
        self.waiting.appendleft(undone.pair)
        self.n_answers -= 1
        self.n_cant_tell -= undone.kind == "cant_tell"
        self.n_undone += 1
        if self._answer_times and self._answer_times[-1] == undone.time:
            self._answer_times.pop()
        return undone

    # ---- what the process sends --------------------------------------------------------------------
    def _release_old(self) -> None:
        if self.held is not None and self.clock() - self.held.time >= self.hold_s:
            self._ready.append(self.held)
            self.held = None

    def take_ready(self) -> list[Answer]:
        """Final answers, oldest first (each returned once)."""
        self._release_old()
        ready, self._ready = self._ready, []
        return ready

    def flush(self) -> list[Answer]:
        """At exit: every answer given is final."""
        if self.held is not None:
            self._ready.append(self.held)
            self.held = None
        return self.take_ready()

    def answers_per_minute(self) -> float:
        """Answers over the last 5 minutes (or since the first pair was on screen, if more recent)."""
        if self.first_shown is None:
            return 0.0
        now = self.clock()
        while self._answer_times and now - self._answer_times[0] > RATE_WINDOW_S:
            self._answer_times.popleft()
        span = min(RATE_WINDOW_S, now - self.first_shown)
        return 60.0 * len(self._answer_times) / span if span > 1.0 else 0.0
