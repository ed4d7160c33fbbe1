"""What PPO's rollouts hand its updates: ``PPORollout`` (Box actions, drlhp.policy.ppo.rollout's collector) with its
finished ``Episode`` sums, and ``DiscreteRollout`` (discrete actions, drlhp.policy.ppo.discrete_rollout's). Here,
apart from the collectors and the policies, so that each can import them (the ``learn`` of drlhp.policy.ppo.policy
and of drlhp.policy.ppo.discrete_policy read them; the collectors make them) without importing the other.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from drlhp.policy.discrete_rollout import Rollout


class Episode(NamedTuple):
    """One finished episode's sums, from the per-step rewards a fixed-length env reports (envs/fixed_length.py)."""

    true_return: float  # the env's reward: its control cost in, the fall penalty in
    task_return: float  # info["reward_task"]: no control cost, the fall penalty in (what the oracle pays)
    length: int
    standard_return: float  # info["reward_standard"]: gymnasium's own reward, control cost in, no fall penalty


@dataclass
class PPORollout:
    """n_steps x n_envs agent steps, time first; what ``PPOPolicy.learn`` needs besides the rewards."""

    obs_norm: np.ndarray  # (T, N, D) float32, normalized as acted on
    actions: np.ndarray  # (T, N, A) float32, the unclipped samples
    log_probs: np.ndarray  # (T, N)
    values: np.ndarray  # (T, N)
    rewards: np.ndarray  # (T, N) the env's reward (with a fixed-length env: the fall penalty included)
    task_rewards: np.ndarray  # (T, N) info["reward_task"] where the env reports it (no control cost), else the reward
    dones: np.ndarray  # (T, N) float32: the episode ended at step t (its time limit; a fall where not fixed-length)
    bootstrap_values: np.ndarray  # (T, N) V(last observation) where the time limit cut the episode, else 0
    last_values: np.ndarray  # (N,) V(the observation after the last step)
    finished: list[Episode] = field(default_factory=list)  # per episode that ended in this rollout
    env_s: float = 0.0
    act_s: float = 0.0
    # (T, N, D + A) float32 (only with RolloutCollector(predictor_input=True)): x_t, the RAW observation action t
    # was taken in and that action clipped to the action space (what the env got): the reward predictor's input
    predictor_obs: np.ndarray | None = None
    # (T, N, S) float64 (only with RolloutCollector(record_states=True)): the simulator's state action t was taken
    # in (a MuJoCo env's concat(qpos, qvel), envs/mujoco_state.py), aligned with x_t: to draw a clip from for a person
    states: np.ndarray | None = None
    # (T, N) bool: info["fell"] of step t (envs/fixed_length.py; what FallFigures measures the reward on)
    fell: np.ndarray | None = None

    @property
    def falls(self) -> np.ndarray | None:
        """``fell`` where the states are recorded (a person labels: the drawn clip shows the fall), else None."""
        return self.fell if self.states is not None else None



@dataclass
class DiscreteRollout(Rollout):
    """The discrete algorithms' Rollout (drlhp.policy.discrete_rollout: b_obs, b_actions flattened time-major) and
    PPO's per-step arrays, (T, N) time first."""

    values: np.ndarray | None = None  # V(s_t) as acted
    log_probs: np.ndarray | None = None  # log pi_old(a_t|s_t)
    last_values: np.ndarray | None = None  # (N,) V(s_T), the observation after the last step
    cuts: np.ndarray | None = None  # 1 where an episode's end stops the returns (dones, or 0 everywhere)
