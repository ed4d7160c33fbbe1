"""The predictor's agreement with each new label before it trains on it (drlhp.reward.fresh_labels): scored against
the ensemble's mean P[segment 1 better], ties not scored, the last 100 in the metrics, all of them in the summary."""
import numpy as np

from drlhp.processes.messages import Preference, Segment
from drlhp.reward.fresh_labels import FreshLabels


class Ensemble:
    """A stand-in predictor whose members' P[s1 > s2] is given per call, from the clips' first pixel."""

    def preference_probs(self, s1, s2):
        d = float(s1[0, 0].ravel()[0]) - float(s2[0, 0].ravel()[0])
        return np.array([[1 / (1 + np.exp(-d))], [1 / (1 + np.exp(-d))]])


def pair(a: int, b: int, mu) -> Preference:
    seg = lambda v, i: Segment(np.full((3, 84, 84, 4), v, np.uint8), np.zeros((3, 2, 2), np.uint8),  # noqa: E731
                               np.zeros(3, np.float32), "MovingDot-v0", 0, i)
    return Preference(seg(a, 0), seg(b, 1), mu)


def test_agreement_is_counted_on_labels_that_prefer_a_clip():
    fresh = FreshLabels(window=2)
    assert fresh.metrics() == {"reward/fresh_label_accuracy": None, "reward/fresh_labels_scored": 0}
    assert fresh.score(Ensemble(), pair(9, 1, (1.0, 0.0))) is True  # the predictor ranks clip 1 higher: agrees
    assert fresh.score(Ensemble(), pair(9, 1, (0.0, 1.0))) is False  # the label says clip 2
    assert fresh.score(Ensemble(), pair(9, 1, (0.5, 0.5))) is None  # a tie is not scored
    assert fresh.score(Ensemble(), pair(4, 4, (1.0, 0.0))) is False  # the predictor undecided: no agreement
    assert fresh.metrics() == {"reward/fresh_label_accuracy": 0.0, "reward/fresh_labels_scored": 3}  # last 2: no, no
    assert fresh.summary() == {"fresh_label_accuracy": round(1 / 3, 4), "fresh_label_accuracy_last100": 0.0,
                               "fresh_labels_scored": 3}
