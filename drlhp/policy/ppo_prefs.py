"""The policy process on a Box-action env (--algo ppo, MuJoCo): PPO on the reward predictor's reward, feeding
segments to the labeller (issue 29). drlhp.policy.process.run_policy hands a PPO run to ``run_ppo_policy``.

    PPOTrainer (drlhp.policy.ppo_trainer) in PolicyTrainer's loop, with
      envs           fixed-length episodes (envs/fixed_length.py: a fall costs reward and ends no episode)
      reward source  PredictedReward on x_t = concat(raw o_t, clip(a_t, low, high)) as float32 (D + A,): the
                     observation the action was taken in, not PPO's normalized one (the predictor normalizes
                     its input itself); one batch per rollout; PPO's running return scaling scales it
      observer       SegmentFeed: segments of x_t (float32 (T, D + A)), their true_rewards the task's reward
                     (info["reward_task"]: no control cost, the fall penalty included: what the synthetic
                     oracle pays, as in the paper), their frames empty (T, 0, 0): nothing rendered yet (issue 30)
      observer       PredictorPace (--reward_updates_per_step), as A2C's
    no EpisodeFeed: nothing of a Box-action env is rendered for a person (a person's labeller is refused on one:
    drlhp.checks). Before the predictor's first weights the initial Gaussian policy plays, untrained, only while
    the preference interface wants segments (PolicyTrainer's random play).
"""
from __future__ import annotations

import numpy as np

from drlhp.config import RunConfig
from drlhp.runtime.ports import PolicyPorts


class BoxSegments:
    """What SegmentFeed reads of an env, for a Box-action env's segments: n_envs workers, steps of
    ``obs_shape`` = (D + A,) float32, and nothing to watch (empty frames)."""

    obs_dtype = np.dtype(np.float32)

    def __init__(self, n_envs: int, obs_shape: tuple):
        self.n_envs, self.obs_shape = n_envs, tuple(obs_shape)

    @staticmethod
    def frames_to_watch(obs: np.ndarray) -> np.ndarray:
        """(T, 0, 0) uint8: the segment has no frames (Segment's "nothing rendered")."""
        return np.zeros((len(obs), 0, 0), np.uint8)


def predictor_shape(envs) -> tuple[int]:
    """(D + A,): one step of x_t on a gymnasium vector env of Box actions."""
    return (envs.single_observation_space.shape[0] + envs.single_action_space.shape[0],)


def run_ppo_policy(cfg: RunConfig, ports: PolicyPorts, run_dir: str, log=print, fixed_weights=None) -> dict:
    """run_policy on a Box-action env: PPO on the predictor's reward until the budget or the stop event; returns
    the summary figures (``ports`` and ``fixed_weights`` as run_policy's)."""
    from drlhp.policy.ppo_trainer import PPOTrainer, build_ppo
    from drlhp.policy.process import PredictorPace, SegmentFeed
    from drlhp.policy.reward_source import PredictedReward
    from drlhp.policy.trainer import Agent, Outputs
    from drlhp.runtime.metrics import MetricsLogger
    from drlhp.runtime.run_record import RunRecord
    from drlhp.runtime.segment_wire import register_compact_pickling
    from envs.fixed_length import any_vector_env, describe

    episodes = describe(cfg.env, cfg.ppo.fall_penalty)
    log(f"[policy] PPO on the predictor's reward; {episodes}", flush=True)
    envs = any_vector_env(cfg.env, cfg.ppo.n_envs, cfg.ppo.fall_penalty)
    logger = None
    try:
        policy = build_ppo(cfg, envs)
        shape = predictor_shape(envs)
        reward = PredictedReward(shape, cfg.reward, cfg.seed, ports.weights_to_policy, weights=fixed_weights,
                                 obs_dtype=np.float32)
        register_compact_pickling()  # segments leave this process without what the receiver can rebuild
        logger = MetricsLogger(run_dir)
        observers = [SegmentFeed(cfg, BoxSegments(cfg.ppo.n_envs, shape), reward, ports)]
        if ports.pair_updates is not None:
            observers.append(PredictorPace(cfg.reward.updates_per_step, ports))
        trainer = PPOTrainer(cfg, Agent(envs, policy, reward), Outputs(RunRecord(run_dir), logger, log), ports,
                             observers, episodes=episodes)
        try:
            return trainer.train()
        except KeyboardInterrupt:  # only where this runs in the parent (--no_labelling): save first
            trainer.checkpoint()
            raise
    finally:
        if ports.segment_queue is not None:
            ports.segment_queue.cancel_join_thread()  # unsent segments may be dropped at exit (by design)
        if logger is not None:
            logger.close()
        envs.close()
