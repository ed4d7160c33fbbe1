"""Teachers that are not perfect (issue 39, B-Pref): --oracle_mistake_rate flips about that share of the answers,
seeded by --seed; --oracle_equal_threshold ties exactly the close pairs; both off by default (the perfect oracle);
the oracle's loop answers through the teacher and counts what it changed; bad values are one line and exit 2."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest

from drlhp.config import PrefConfig, RunConfig
from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment
from pref_interface.oracle import SyntheticOracle, label_with_oracle
from pref_interface.teacher import Teacher, teacher_rng


def seg(value: int, rewards) -> Segment:
    obs = np.full((len(rewards), 6, 6, 4), value % 256, np.uint8)
    return Segment(obs, obs[..., -1].copy(), np.asarray(rewards, np.float32), "Test-v0", 0, 0).check()


def test_the_flip_rate_on_many_pairs_is_the_mistake_rate_and_the_seed_repeats_it():
    n, p = 20_000, 0.1
    rng = np.random.default_rng(0)
    s1, s2 = rng.normal(size=n), rng.normal(size=n)  # continuous: no pair is equal
    teacher = Teacher(SyntheticOracle(), mistake_rate=p, rng=teacher_rng(7))
    answers = [teacher.answer(a, b) for a, b in zip(s1, s2)]
    right = [MU_LEFT if a > b else MU_RIGHT for a, b in zip(s1, s2)]
    wrong = sum(x != y for x, y in zip(answers, right))
    # binomial(20000, 0.1): standard deviation 0.0021; 0.01 is almost 5 of them, and far from 0 or 0.2
    assert abs(wrong / n - p) < 0.01, wrong / n
    assert teacher.figures() == {"oracle_answers": n, "oracle_flipped": wrong, "oracle_made_equal": 0}
    assert MU_EQUAL not in answers
    again = Teacher(SyntheticOracle(), mistake_rate=p, rng=teacher_rng(7))
    assert [again.answer(a, b) for a, b in zip(s1, s2)] == answers  # the same seed: the same mistakes
    other = Teacher(SyntheticOracle(), mistake_rate=p, rng=teacher_rng(8))
    assert [other.answer(a, b) for a, b in zip(s1, s2)] != answers


def test_a_mistake_never_turns_a_tie_into_a_preference():
    teacher = Teacher(SyntheticOracle(), mistake_rate=0.5, rng=teacher_rng(0))
    assert {teacher.answer(1.0, 1.0) for _ in range(200)} == {MU_EQUAL}
    assert teacher.figures()["oracle_flipped"] == 0


@pytest.mark.parametrize("mistake_rate", [0.0, 0.5])
def test_the_threshold_makes_exactly_the_close_pairs_ties(mistake_rate):
    """Pairs (100 + d, 100 - d) keep the mean of every clip shown at 100, so the scale is 100 and a threshold of 0.1
    ties exactly the pairs 10 or less apart: d < 5; B-Pref's order: a close pair is a tie whatever the draw."""
    teacher = Teacher(SyntheticOracle(), mistake_rate=mistake_rate, equal_threshold=0.1, rng=teacher_rng(3))
    ds = [0.5, 2.0, 4.9, 5.0, 5.1, 20.0, 60.0]
    for d in ds:
        for left_first in (True, False):
            a, b = (100 + d, 100 - d) if left_first else (100 - d, 100 + d)
            answer = teacher.answer(a, b)
            assert teacher.scale == pytest.approx(100.0)
            if d < 5:
                assert answer == MU_EQUAL, d
            elif mistake_rate == 0:
                assert answer == (MU_LEFT if left_first else MU_RIGHT), d
            else:
                assert answer in (MU_LEFT, MU_RIGHT), d
    assert teacher.figures()["oracle_made_equal"] == 2 * 3


def test_the_scale_follows_the_last_clips_shown_in_absolute_value():
    teacher = Teacher(SyntheticOracle(), equal_threshold=0.5, rng=teacher_rng(0))
    for _ in range(60):  # 120 clips of -10 and -30, 20 apart: not under 0.5 x 20
        assert teacher.answer(-10.0, -30.0) == MU_LEFT
    assert teacher.scale == pytest.approx(20.0)  # the last 100 clips' mean, -20, as a size
    assert teacher.answer(-10.0, -19.0) == MU_EQUAL  # 9 apart, under 0.5 x 19.89
    assert teacher.answer(-10.0, -25.0) == MU_LEFT  # 15 apart
    assert teacher.figures()["oracle_made_equal"] == 1


def test_both_default_to_the_perfect_oracle():
    assert (PrefConfig().oracle_mistake_rate, PrefConfig().oracle_equal_threshold) == (0.0, 0.0)
    oracle, teacher = SyntheticOracle(), Teacher(SyntheticOracle(), rng=teacher_rng(0))
    rng = np.random.default_rng(1)
    for i in range(300):
        a, b = seg(i, rng.integers(-2, 3, 4)), seg(i + 1, rng.integers(-2, 3, 4))  # small integers: many ties
        assert teacher.label(a, b) == oracle.label(a, b)
    assert teacher.figures()["oracle_flipped"] == teacher.figures()["oracle_made_equal"] == 0


class FakeInterface:
    """What label_with_oracle uses of a PrefInterface: pairs from a list, answers kept, the metrics rows kept."""

    def __init__(self, cfg, pairs):
        self.cfg, self.pairs, self.sent, self.logged = cfg, list(pairs), [], []
        self.ports = SimpleNamespace(stop_event=threading.Event())

    def receive_segments(self):
        return 0

    def next_pair(self):
        if not self.pairs:
            self.ports.stop_event.set()
            return None
        return self.pairs.pop(0)

    def send(self, pair, mu):
        self.sent.append(mu)

    def maybe_log(self, extra=None):
        self.logged.append(dict(extra or {}))
        return True


def test_the_oracles_loop_answers_through_the_teacher_seeded_by_the_run_and_logs_its_counts():
    rng = np.random.default_rng(2)
    pairs = [(seg(i, rng.normal(size=4)), seg(i + 1, rng.normal(size=4))) for i in range(400)]
    cfg = RunConfig(env="Test-v0", seed=5, prefs=PrefConfig(oracle_mistake_rate=0.2))
    iface = FakeInterface(cfg, pairs)
    figures = label_with_oracle(iface, log=lambda *a, **k: None)
    expected = Teacher(SyntheticOracle(), 0.2, 0.0, teacher_rng(5))
    assert iface.sent == [expected.label(*pair) for pair in pairs]
    assert figures == expected.figures() and 40 < figures["oracle_flipped"] < 130
    assert iface.logged[-1]["prefs/oracle_flipped"] == figures["oracle_flipped"]
    perfect = FakeInterface(RunConfig(env="Test-v0", seed=5), pairs)
    label_with_oracle(perfect, log=lambda *a, **k: None)
    assert perfect.sent == [SyntheticOracle().label(*pair) for pair in pairs]


def _refused(proc, *fragments) -> str:
    """run.py refused its input: exit 2, exactly one line on stderr, nothing on stdout."""
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("run.py: error: "), proc.stderr
    assert proc.stdout == ""
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args, fragments", [
    (["--synthetic_prefs", "--oracle_mistake_rate", "0.6"], ["--oracle_mistake_rate must be in [0, 0.5], got 0.6"]),
    (["--synthetic_prefs", "--oracle_mistake_rate", "-0.1"], ["--oracle_mistake_rate must be in [0, 0.5], got -0.1"]),
    (["--synthetic_prefs", "--oracle_equal_threshold", "1.5"], ["--oracle_equal_threshold must be in [0, 1], got 1.5"]),
    (["--labeller", "web", "--oracle_mistake_rate", "0.1"], ["--oracle_mistake_rate makes the scripted labeller err",
                                                             "--labeller web is a person"]),
    (["train_policy_with_original_rewards", "--oracle_equal_threshold", "0.1"],
     ["--oracle_equal_threshold makes the scripted labeller err; train_policy_with_original_rewards has no labeller"]),
])
def test_a_teacher_out_of_range_or_without_the_oracle_is_one_line_exit_2(cli, tmp_path, args, fragments):
    run_dir = tmp_path / "run"
    _refused(cli(*args, "--env", "MovingDot-v0", "--run_dir", run_dir, timeout=120), *fragments)
    assert not run_dir.exists()
