"""What the policy is paid around the events that decide a game: the figures that tell a reward that
teaches from one that does not, per log interval (docs/results/pong.md, issue 19).

    reward/before_point_lost   mean training reward over the BEFORE_STEPS steps up to a true -1
    reward/at_point_won        mean training reward at a true +1
    reward/mean                mean training reward over all steps (the baseline for both above)
    reward/clipped_share       share of (member, step) values --reward_clip cut (the predictor's reward)
    reward/center_offset       the running mean --reward_center_steps removed, at the last rollout
    reward/points_won, reward/points_lost   true +1 and -1 steps seen in the interval

A reward that can teach Pong pays a point won above the mean and the steps before a point lost below
it. Steps before a -1 are taken within one rollout (a -1 in a rollout's first steps has fewer).
"""
from __future__ import annotations

BEFORE_STEPS = 3  # the steps before a conceded point: the ball passing the paddle


class RewardFigures:
    """A rollout observer (drlhp.policy.loop.RolloutObserver's three methods)."""

    def __init__(self, reward_source):
        self.reward_source = reward_source
        self._reset()

    def _reset(self) -> None:
        self.sum_before, self.n_before, self.sum_won, self.n_won = 0.0, 0, 0.0, 0
        self.sum_all, self.n_all, self.clipped, self.n_rollouts = 0.0, 0, 0.0, 0
        self.steps_before = 0

    def on_rollout(self, rollout, state) -> None:
        r, true = rollout.rewards, rollout.true_rewards
        if r is None:
            return
        lost = true < 0
        before = lost.copy()
        for k in range(1, BEFORE_STEPS):  # the k steps before each -1, in the same env and rollout
            before[:-k] |= lost[k:]
        self.sum_before += float(r[before].sum())
        self.n_before += int(lost.sum())  # events, not steps: the mean is per step below
        self.steps_before += int(before.sum())
        won = true > 0
        self.sum_won += float(r[won].sum())
        self.n_won += int(won.sum())
        self.sum_all += float(r.sum())
        self.n_all += r.size
        self.clipped += float(getattr(self.reward_source, "clipped_share", 0.0))
        self.n_rollouts += 1

    def metrics(self) -> dict:
        if not self.n_all:
            return {}
        out = {"reward/mean": self.sum_all / self.n_all, "reward/points_won": self.n_won,
               "reward/points_lost": self.n_before, "reward/clipped_share": self.clipped / max(1, self.n_rollouts)}
        if self.steps_before:
            out["reward/before_point_lost"] = self.sum_before / self.steps_before
        offset = getattr(self.reward_source, "offset", None)
        if offset is not None:
            out["reward/center_offset"] = offset
        if self.n_won:
            out["reward/at_point_won"] = self.sum_won / self.n_won
        self._reset()
        return out

    def summary(self) -> dict:
        return {}
