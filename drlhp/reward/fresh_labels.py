"""The predictor's agreement with each new label before it trains on it (issue 61): the one measure of a predictor
on the policy's newest clips that needs no oracle beside the labeller, and the first to fall when the policy has
moved where the predictor was never taught (Christiano et al. and Ibarz et al. warn of a predictor exploited
off its data).

    FreshLabels.score(ensemble, preference)   the ensemble's P[segment 1 better] (its members' mean) against the
                                              label, for a label that prefers one clip (ties are not scored);
                                              called as the preference arrives, before the database holds it
    metrics()   reward/fresh_label_accuracy (the last ``window`` scored labels), reward/fresh_labels_scored
    summary()   fresh_label_accuracy (all scored this sitting) and fresh_label_accuracy_last100
"""
from __future__ import annotations

import collections

import numpy as np

WINDOW = 100


class FreshLabels:
    def __init__(self, window: int = WINDOW):
        self.recent: collections.deque[bool] = collections.deque(maxlen=window)
        self.scored = self.agreed = 0

    def score(self, ensemble, preference) -> bool | None:
        """Whether the ensemble agreed with ``preference`` (None: a tie, not scored)."""
        mu = preference.mu
        if mu[0] == mu[1]:
            return None
        p = float(np.mean(ensemble.preference_probs(preference.segment_1.obs[None], preference.segment_2.obs[None])))
        agreed = (p > 0.5) == (mu[0] > mu[1])  # p exactly 0.5 agrees with neither answer
        if p == 0.5:
            agreed = False
        self.recent.append(agreed)
        self.scored += 1
        self.agreed += int(agreed)
        return agreed

    def metrics(self) -> dict:
        recent = float(np.mean(self.recent)) if self.recent else None
        return {"reward/fresh_label_accuracy": recent, "reward/fresh_labels_scored": self.scored}

    def summary(self) -> dict:
        return {"fresh_label_accuracy": round(self.agreed / self.scored, 4) if self.scored else None,
                "fresh_label_accuracy_last100": round(float(np.mean(self.recent)), 4) if self.recent else None,
                "fresh_labels_scored": self.scored}
