"""The policy process: A2C on the predictor's reward, feeding segments to the labeller.

    PolicyTrainer (drlhp.policy_trainer) with
      reward source  PredictedReward: newest weights pulled from the weights channel, one batch per rollout
      observer       SegmentFeed: cuts segments, offers them to segment_queue (full queue: dropped,
                     counted), and measures the predictor on fresh segments (correlation of
                     predicted and true segment returns) and per-episode predicted returns
      observer       EpisodeFeed (--show_agent): worker 0's frames of its newest finished episode to the
                     labelling window (latest wins)
    before the first weights: random play (segments for the initial preferences), paused while the
    predictor pretrains
"""
from __future__ import annotations

import collections

import numpy as np

from drlhp.config import RunConfig
from drlhp.policy_trainer import RolloutObserver, TrainingState
from drlhp.queues import put_or_drop
from drlhp.reward_source import RewardSource
from drlhp.segments import SegmentCutter

RECENT_SEGMENTS = 200
MAX_EPISODE_FRAMES = 1500  # an episode sent to the window keeps its last 1,500 frames (100 s at 15 fps)


class SegmentFeed(RolloutObserver):
    def __init__(self, cfg: RunConfig, env, reward_source: RewardSource, segment_queue):
        p = cfg.prefs
        self.cutter = SegmentCutter(cfg.env, env.n_envs, env.obs_shape, p.segment_length, p.segments_per_cut,
                                    env.frames_to_watch)
        self.queue, self.reward_source = segment_queue, reward_source
        self.sent = self.dropped = 0
        self.recent = collections.deque(maxlen=RECENT_SEGMENTS)  # (predicted, true) segment returns
        self.pred_episode = np.zeros(env.n_envs)
        self.recent_pred_episodes = collections.deque(maxlen=100)

    def on_rollout(self, rollout, state: TrainingState) -> None:
        segments, cut_returns = self.cutter.add(rollout.next_obs, rollout.true_rewards, rollout.rewards,
                                                state.timesteps)
        if self.queue is not None:
            for seg in segments:
                if put_or_drop(self.queue, seg):
                    self.sent += 1
                else:
                    self.dropped += 1
        for pred, true in cut_returns:
            ok = np.isfinite(pred)
            self.recent.extend(zip(pred[ok], true[ok]))
        if rollout.rewards is not None:
            for t in range(len(rollout.rewards)):
                self.pred_episode += rollout.rewards[t]
                for i in np.flatnonzero(rollout.dones[t]):
                    self.recent_pred_episodes.append(self.pred_episode[i])
                    self.pred_episode[i] = 0.0

    def correlation(self) -> float | None:
        """Pearson correlation of predicted and true returns of the last segments (None if undefined)."""
        if len(self.recent) < 10:
            return None
        pred, true = np.array(self.recent).T
        if pred.std() == 0 or true.std() == 0:
            return None
        return float(np.corrcoef(pred, true)[0, 1])

    def metrics(self) -> dict:
        out = {"policy/predictor_version": self.reward_source.version,
               "policy/pred_true_corr": self.correlation(),
               "system/segments_sent": self.sent, "system/segments_dropped": self.dropped}
        if self.recent_pred_episodes:
            out["policy/predicted_return_last100"] = float(np.mean(self.recent_pred_episodes))
        return out

    def summary(self) -> dict:
        corr = self.correlation()
        return {"pred_true_corr": None if corr is None else round(corr, 4), "segments_sent": self.sent,
                "segments_dropped": self.dropped, "predictor_version": self.reward_source.version}


class EpisodeFeed(RolloutObserver):
    """Worker 0's frames (what a person watches) of each finished episode, published latest-wins."""

    def __init__(self, env, channel, max_frames: int = MAX_EPISODE_FRAMES):
        self.env, self.channel = env, channel
        self.frames = collections.deque(maxlen=max_frames)
        self.published = 0

    def on_rollout(self, rollout, state: TrainingState) -> None:
        for t in range(len(rollout.dones)):
            self.frames.append(self.env.frames_to_watch(rollout.next_obs[t, 0]))
            if rollout.dones[t, 0]:
                self.channel.publish(np.ascontiguousarray(np.stack(self.frames)))
                self.published += 1
                self.frames.clear()


def run_policy(cfg: RunConfig, segment_queue, weights_channel, stop_event, gathering_done, run_dir: str,
               log=print, fixed_weights=None, episode_channel=None) -> dict:
    """Train the policy until the budget or the stop event; returns the summary figures."""
    from drlhp.metrics import MetricsLogger
    from drlhp.pipeline import build_policy
    from drlhp.policy_trainer import PolicyTrainer
    from drlhp.reward_source import PredictedReward
    from drlhp.run_record import RunRecord
    from envs import make_vec_env

    env = make_vec_env(cfg.env, cfg.a2c.n_envs, n_threads=cfg.n_env_threads)
    logger = None
    try:
        policy = build_policy(cfg, env)
        reward = PredictedReward(env.obs_shape, cfg.reward, cfg.seed, weights_channel, weights=fixed_weights)
        feed = SegmentFeed(cfg, env, reward, segment_queue)
        logger = MetricsLogger(run_dir)
        stop = stop_event.is_set if stop_event is not None else (lambda: False)
        waiting = gathering_done.is_set if gathering_done is not None else (lambda: False)
        trainer = PolicyTrainer(cfg, env, policy, reward, RunRecord(run_dir), logger, print_fn=log,
                                observers=[feed] + ([EpisodeFeed(env, episode_channel)] if episode_channel else []),
                                should_stop=stop, wait_for_reward=waiting)
        try:
            return trainer.train()
        except KeyboardInterrupt:  # only where this runs in the parent (--no_labelling): save first
            trainer.checkpoint()
            raise
    finally:
        if segment_queue is not None:
            segment_queue.cancel_join_thread()  # unsent segments may be dropped at exit (by design)
        if logger is not None:
            logger.close()
        env.close()
