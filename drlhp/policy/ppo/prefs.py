"""The policy process on a Box-action env (--algo ppo, MuJoCo): PPO on the reward predictor's reward, feeding
segments to the labeller (issue 29): drlhp.policy.process.run_policy hands a PPO run to its run_ppo_policy, which
builds it with this module's pieces.

    PPOTrainer (drlhp.policy.ppo.trainer) in PolicyTrainer's loop, with
      envs           fixed-length episodes (envs/fixed_length.py: a fall costs reward and ends no episode)
      reward source  PredictedReward on x_t = concat(raw o_t, clip(a_t, low, high)) as float32 (D + A,): the
                     observation the action was taken in, not PPO's normalized one (the predictor normalizes
                     its input itself); one batch per rollout; PPO's running return scaling scales it
      observer       SegmentFeed: segments of x_t (float32 (T, D + A)), their true_rewards the task's reward
                     (info["reward_task"]: no control cost, the fall penalty included: what the synthetic
                     oracle pays, as in the paper), their frames empty (T, 0, 0): nothing is rendered here; where a
                     person labels (--labeller window or web) each segment also carries the simulator's states
                     (Segment.states, recorded by the rollout), which the preference interface draws (issue 30)
      observer       PredictorPace (--reward_updates_per_step), as A2C's
    no EpisodeFeed: nothing of a Box-action env is rendered in this process (a person's labeller on a MuJoCo env:
    the preference interface draws the clips from the recorded states, in a render worker of its own). Before the
    predictor's first weights the initial Gaussian policy plays, untrained, only while the preference interface
    wants segments (PolicyTrainer's random play).
"""
from __future__ import annotations

import numpy as np


class BoxSegments:
    """What SegmentFeed reads of an env, for a Box-action env's segments: n_envs workers, steps of
    ``obs_shape`` = (D + A,) float32, nothing to watch (empty frames), and ``state_size`` S > 0 where the rollouts
    record each step's simulator state (a person labels: the segments carry them) else 0."""

    predictor_dtype = np.dtype(np.float32)

    def __init__(self, n_envs: int, obs_shape: tuple, state_size: int = 0):
        self.n_envs, self.obs_shape, self.state_size = n_envs, tuple(obs_shape), int(state_size)

    @staticmethod
    def frames_to_watch(obs: np.ndarray) -> np.ndarray:
        """(T, 0, 0) uint8: the segment has no frames (Segment's "nothing rendered")."""
        return np.zeros((len(obs), 0, 0), np.uint8)


def states_to_record(cfg, envs) -> int:
    """S, the length of a simulator state to record per step (envs/mujoco_state.py), where a person labels this
    run's clips (--labeller window or web) on MuJoCo envs; else 0: nothing recorded, the oracle's path costs nothing
    more."""
    from drlhp.config.labeller_names import PERSON_LABELLERS
    from envs.mujoco_state import vector_state_size

    if not cfg.labels or cfg.prefs.labeller not in PERSON_LABELLERS:
        return 0
    return vector_state_size(envs)


def predictor_shape(envs) -> tuple[int]:
    """(D + A,): one step of x_t on a gymnasium vector env of Box actions."""
    return (envs.single_observation_space.shape[0] + envs.single_action_space.shape[0],)
