"""A discrete-action env's side of a policy's run, both discrete algorithms' (A2C, discrete PPO; the table's rows,
drlhp.policy.algorithms): the envs (drlhp's vector envs, envs.make_vec_env: Atari, MovingDot, gymnasium's discrete
envs), the reward each mode pays, and what the preference interface is fed of its rollouts.

    on the env's reward (train_policy_with_original_rewards)
      envs           --n_envs (A2C's) or --ppo_n_envs (PPO's) of envs.make_vec_env, as the env plays
      reward source  its sign (ClippedEnvReward), or with --original_reward scaled as the predictor's would come
                     (ScaledEnvReward)
    on the predictor's reward (the policy process, drlhp.policy.process)
      envs           the same, where an episode ends on a fall (CartPole-v1) with fixed-length episodes as PPO's on
                     Box actions (issue 39): the oracle and the predictor then see a fall as reward, not as an end
      reward source  PredictedReward on the observations as the predictor sees them (Atari's score blanked)
      observers      SegmentFeed (segments of frames for the labeller), EpisodeFeed (--show_agent: worker 0's
                     episodes to the labelling window)
"""
from __future__ import annotations

from drlhp.config import RunConfig
from drlhp.processes.ports import PolicyPorts


class DiscreteActions:
    """The envs, reward sources and feeds of a run on discrete actions with ``n_envs`` envs (the algorithm's)."""

    def __init__(self, cfg: RunConfig, n_envs: int, n_steps: int):
        self.cfg, self.n_envs, self.n_steps = cfg, n_envs, n_steps  # n_steps: the rollout's, per env

    # --- on the env's reward -------------------------------------------------------------------------------------
    def env_reward_problem(self) -> str | None:
        """Why this run cannot train on the env's reward (None: it can)."""
        return None

    def start_line(self, title: str, run_dir) -> str:
        cfg = self.cfg
        return (f"[run] {cfg.mode} on {cfg.env} with {title} (--algo {cfg.algo}), seed {cfg.seed}, "
                f"{cfg.total_timesteps:,} agent steps -> {run_dir}")

    def env_reward_envs(self):
        from envs import make_vec_env

        cfg = self.cfg
        return make_vec_env(cfg.env, self.n_envs, n_threads=cfg.n_env_threads, score_visible=cfg.score_visible)

    def env_reward(self):
        from drlhp.policy.reward_source import ClippedEnvReward, ScaledEnvReward

        cfg = self.cfg
        return ScaledEnvReward(cfg.reward.norm_std) if cfg.a2c.original_reward == "scaled" else ClippedEnvReward()

    def env_reward_options(self) -> dict:
        """The trainer's own arguments on the env's reward (none on discrete actions)."""
        return {}

    # --- on the predictor's reward --------------------------------------------------------------------------------
    def preference_envs(self, log):
        from drlhp.config.labeller_names import PERSON_LABELLERS
        from envs import make_vec_env
        from envs.fixed_length import FALLING_ENV_IDS, describe

        cfg = self.cfg
        # where a person labels (or a goal reads the game), Atari keeps a few workers' colour frames and RAM of a
        # rollout and a clip (envs/atari_watch.py)
        watched = cfg.labels and (cfg.prefs.labeller in PERSON_LABELLERS or bool(cfg.prefs.oracle_goal))
        n_steps = self.n_steps
        env = make_vec_env(cfg.env, self.n_envs, n_threads=cfg.n_env_threads, score_visible=cfg.score_visible,
                           falls=cfg.ppo.falls, watch_steps=n_steps + cfg.prefs.segment_length if watched else 0)
        if cfg.env in FALLING_ENV_IDS:
            log(f"[policy] {describe(cfg.env, **cfg.ppo.falls)}", flush=True)
        return env

    def predicted_reward(self, env, weights_to_policy, fixed_weights):
        from drlhp.policy.reward_source import PredictedReward

        cfg = self.cfg
        return PredictedReward(env.obs_shape, cfg.reward, cfg.seed, weights_to_policy, weights=fixed_weights)

    def feeds(self, env, reward, ports: PolicyPorts) -> list:
        """The observers that feed the preference interface (SegmentFeed) and the labelling window (EpisodeFeed)."""
        from drlhp.policy.feeds import EpisodeFeed, SegmentFeed

        observers = [SegmentFeed(self.cfg, env, reward, ports)]
        if ports.agent_episode is not None:
            observers.append(EpisodeFeed(env, ports.agent_episode))
        return observers

    def preference_options(self, env) -> dict:
        """The trainer's own arguments on the predictor's reward (none on discrete actions)."""
        return {}
