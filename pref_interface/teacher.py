"""Teachers that are not perfect: the scripted labeller's answer, sometimes wrong, equal when close (issue 39).

After B-Pref (Lee et al., 2021, "B-Pref: Benchmarking Preference-Based Reinforcement Learning", section 3.2),
two of its simulated teachers, on top of the oracle (the synthetic oracle's task return, or --oracle_goal's score):

    --oracle_mistake_rate p       "Mistake": with probability p a preference is answered the wrong way round
                                  (B-Pref's Mistake teacher: p = 0.1). A tie stays a tie.
    --oracle_equal_threshold e    "Equal": the two clips are called equal, (0.5, 0.5), when their scores differ by
                                  less than e x the scale; e is a fraction of a clip's return (B-Pref's Equal
                                  teacher: e = 0.1), so one value serves tasks whose rewards differ in size.

The scale, as B-Pref's: B-Pref multiplies e by the mean true return of the agent's last training episodes scaled to
one segment's length (mean episode return x segment / episode length), the return of an average clip of the
agent's present behaviour. Here it is the same quantity measured directly: the absolute value of the mean score
of the last ``SCALE_CLIPS`` clips this teacher was shown, the pair being labelled included (the pool holds the
agent's newest clips, so these are its recent behaviour; on Hopper's 1.5-s clips of 188 steps, a policy earning 3
a step has a scale near 560, and e = 0.1 ties pairs closer than about 56). B-Pref's order: the equal rule wins over
a mistake (a close pair is a tie whatever the draw).

One uniform draw per answer from a generator seeded by the run's --seed (``teacher_rng``), whether or not the answer
is strict or close: the same pairs in the same order get the same mistakes, and a threshold changes no draw.
``figures()`` counts what the teacher changed: answers flipped, answers made equal (a pair already equal, the
oracle's own tie, is neither).
"""
from __future__ import annotations

import collections

import numpy as np

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment

SCALE_CLIPS = 100  # clips whose mean score is the equal rule's scale: the size of the default segment pool
TEACHER_STREAM = 39  # the teacher's random stream: (--seed, this), apart from the pool's and the policy's


def teacher_rng(seed: int) -> np.random.Generator:
    """The teacher's generator for a run of ``--seed seed``."""
    return np.random.default_rng((int(seed), TEACHER_STREAM))


class Teacher:
    """An oracle's answers, made imperfect. ``oracle``: anything with ``score(segment) -> float`` (the higher
    preferred; pref_interface.oracle.SyntheticOracle, pref_interface.goal_oracle.GoalOracle); ``mistake_rate``
    in [0, 0.5], ``equal_threshold`` in [0, 1] (module docstring); both 0: the oracle's own answers."""

    def __init__(self, oracle, mistake_rate: float = 0.0, equal_threshold: float = 0.0,
                 rng: np.random.Generator | None = None):
        if not 0.0 <= mistake_rate <= 0.5 or not 0.0 <= equal_threshold <= 1.0:
            raise ValueError(f"a teacher's mistake rate must be in [0, 0.5] and its equal threshold in [0, 1], "
                             f"got {mistake_rate} and {equal_threshold}")
        self.oracle, self.mistake_rate, self.equal_threshold = oracle, float(mistake_rate), float(equal_threshold)
        self.rng = rng if rng is not None else teacher_rng(0)
        self.recent: collections.deque[float] = collections.deque(maxlen=SCALE_CLIPS)
        self.answered = self.flipped = self.made_equal = 0

    @property
    def name(self) -> str:
        parts = [self.oracle.name]
        if self.mistake_rate:
            parts.append(f"wrong {self.mistake_rate:g} of the time")
        if self.equal_threshold:
            parts.append(f"equal within {self.equal_threshold:g} of a clip's mean return")
        return ", ".join(parts)

    @property
    def scale(self) -> float:
        """The equal rule's scale: |mean score| of the last SCALE_CLIPS clips shown (0 before any)."""
        return abs(float(np.mean(self.recent))) if self.recent else 0.0

    def label(self, segment_1: Segment, segment_2: Segment) -> tuple[float, float]:
        s1, s2 = float(self.oracle.score(segment_1)), float(self.oracle.score(segment_2))
        return self.answer(s1, s2)

    def answer(self, s1: float, s2: float) -> tuple[float, float]:
        """The answer for two clips of scores ``s1``, ``s2``: the rule of the module docstring."""
        self.recent.extend((s1, s2))
        draw = self.rng.random()  # one per answer, always (module docstring)
        self.answered += 1
        rational = MU_LEFT if s1 > s2 else MU_RIGHT if s2 > s1 else MU_EQUAL
        if rational != MU_EQUAL and abs(s1 - s2) < self.equal_threshold * self.scale:
            self.made_equal += 1
            return MU_EQUAL
        if rational != MU_EQUAL and draw < self.mistake_rate:
            self.flipped += 1
            return MU_RIGHT if rational == MU_LEFT else MU_LEFT
        return rational

    def figures(self) -> dict:
        """This sitting's counts, for the interface's metrics (prefs/...) and the run's summary."""
        return {"oracle_answers": self.answered, "oracle_flipped": self.flipped, "oracle_made_equal": self.made_equal}
