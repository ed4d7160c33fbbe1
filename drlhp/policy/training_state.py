"""What a policy's training keeps across checkpoints (TrainingState) and the envs' seed on resume (env_seed);
the policy loop (drlhp.policy.loop, every algorithm's) counts into it."""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

import numpy as np

RECENT_EPISODES = 100


@dataclass
class TrainingState:
    """Counters that survive a checkpoint."""

    updates: int = 0
    timesteps: int = 0
    episodes: int = 0
    wall_s: float = 0.0  # running time only, summed over sittings
    random_steps: int = 0  # agent steps of random play before the first reward (not in the budget)
    sitting: int = 0  # sittings that trained this policy (1 in the first; a resume adds one)
    recent_returns: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RECENT_EPISODES))
    # PPO's: the same episodes' returns without the control cost (info["reward_task"]; the paper's MuJoCo measure)
    recent_task_returns: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RECENT_EPISODES))
    # PPO's: gymnasium's own reward over the same episodes (control cost in, no fall penalty: info["reward_standard"])
    recent_standard_returns: collections.deque = field(
        default_factory=lambda: collections.deque(maxlen=RECENT_EPISODES))
    recent_successes: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RECENT_EPISODES))
    recent_lengths: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RECENT_EPISODES))
    recent_points: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RECENT_EPISODES))
    recent_hits: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RECENT_EPISODES))
    reward_source: dict = field(default_factory=dict)  # the reward source's own state (RewardSource.state)

    def to_meta(self) -> dict:
        return {"updates": self.updates, "timesteps": self.timesteps, "episodes": self.episodes,
                "random_steps": self.random_steps, "sitting": self.sitting,
                "wall_s": self.wall_s, "recent_returns": list(self.recent_returns),
                "recent_task_returns": list(self.recent_task_returns),
                "recent_standard_returns": list(self.recent_standard_returns),
                "recent_successes": list(self.recent_successes),
                "recent_lengths": list(self.recent_lengths), "recent_points": list(self.recent_points),
                "recent_hits": list(self.recent_hits), "reward_source": dict(self.reward_source)}

    @classmethod
    def from_meta(cls, meta: dict) -> "TrainingState":
        s = cls(updates=int(meta["updates"]), timesteps=int(meta["timesteps"]),
                episodes=int(meta["episodes"]), wall_s=float(meta["wall_s"]),
                random_steps=int(meta.get("random_steps", 0)), sitting=int(meta.get("sitting", 1)))
        s.recent_returns.extend(meta.get("recent_returns", []))
        s.recent_task_returns.extend(meta.get("recent_task_returns", []))  # absent before session 16
        s.recent_standard_returns.extend(meta.get("recent_standard_returns", []))  # absent before issue 38
        s.recent_successes.extend(meta.get("recent_successes", []))
        s.recent_lengths.extend(meta.get("recent_lengths", []))  # absent in checkpoints before 2026-11-24
        s.recent_points.extend(meta.get("recent_points", []))  # these two: before 2026-11-24's issue 19
        s.recent_hits.extend(meta.get("recent_hits", []))
        s.reward_source = dict(meta.get("reward_source", {}))  # absent before session 11
        return s

    def game_figures(self) -> dict:
        """Over the last episodes: steps per point (length / points won and lost, where points were
        scored), where the env counts them (Pong) the agent's returns of the ball per game, and on PPO's
        envs the return without the control cost and gymnasium's own (standard) return."""
        out = {}
        if self.recent_points and sum(self.recent_points):
            out["steps_per_point_last100"] = sum(self.recent_lengths) / sum(self.recent_points)
        if self.recent_hits:
            out["returns_per_game_last100"] = _mean(self.recent_hits)
        if self.recent_task_returns:
            out["task_return_last100"] = _mean(self.recent_task_returns)
        if self.recent_standard_returns:
            out["standard_return_last100"] = _mean(self.recent_standard_returns)
        return out


def env_seed(seed: int, updates: int, n_envs: int) -> int:
    """The envs' reset seed: ``seed`` for a new run; on resume, a new one derived from (seed, updates),
    so the restarted envs play new episodes. Kept below 2**31 - n_envs: ale-py seeds are C ints."""
    if updates == 0:
        return seed
    return int(np.random.SeedSequence([seed, updates]).generate_state(1)[0] >> 1) % (2**31 - n_envs)


def _mean(xs) -> float | None:
    return float(np.mean(xs)) if len(xs) else None
