"""A Box-action env's side of a policy's run (PPO's only: the table's row ("ppo", "box"), drlhp.policy.algorithms):
the envs (gymnasium vector envs, fixed-length episodes where the task would end on a fall: envs/fixed_length.py), the
reward each mode pays, and what the preference interface is fed of its rollouts (issue 29).

    on the env's reward (train_policy_with_original_rewards)
      envs           --ppo_n_envs of envs.fixed_length.any_vector_env
      reward source  EnvReward: the env's own (PPOPolicy scales it by its running return std)
    on the predictor's reward (the policy process, drlhp.policy.process), PPOTrainer (drlhp.policy.ppo.trainer) with
      envs           the same, made with --oracle_goal's goal's ``gym.make`` kwargs, if the run has a goal
      reward source  PredictedReward on x_t = concat(raw o_t, clip(a_t, low, high)) as float32 (D + A,): the
                     observation the action was taken in, not PPO's normalized one (the predictor normalizes
                     its input itself); one batch per rollout; PPO's running return scaling scales it
      observer       SegmentFeed: segments of x_t (float32 (T, D + A)), their true_rewards the task's reward
                     (info["reward_task"]: no control cost, the fall penalty included: what the synthetic
                     oracle pays, as in the paper), their frames empty (T, 0, 0): nothing is rendered here; where a
                     person labels (--labeller window or web) each segment also carries the simulator's states
                     (Segment.states, recorded by the rollout), which the preference interface draws (issue 30)
      observer       FallFigures: what the policy is paid for a fall (drlhp.policy.fall_figures)
    no EpisodeFeed: nothing of a Box-action env is rendered in this process (a person's labeller on a MuJoCo env:
    the preference interface draws the clips from the recorded states, in a render worker of its own). Before the
    predictor's first weights the initial Gaussian policy plays, untrained, only while the preference interface
    wants segments (PolicyTrainer's random play).
"""
from __future__ import annotations

import numpy as np

from drlhp.config import RunConfig
from drlhp.processes.ports import PolicyPorts


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


class BoxActions:
    """The envs, reward sources and feeds of a run on Box actions with ``n_envs`` envs (PPO's); as
    drlhp.policy.discrete_actions.DiscreteActions, method for method."""

    def __init__(self, cfg: RunConfig, n_envs: int, n_steps: int):
        self.cfg, self.n_envs, self.n_steps = cfg, n_envs, n_steps  # n_steps: the rollout's, per env
        self.episodes = ""  # what the envs do to episodes (envs.fixed_length.describe), once they are made
        self.n_state = 0  # S, the simulator state's length each rollout step records (0: none)

    # --- on the env's reward -------------------------------------------------------------------------------------
    def env_reward_problem(self) -> str | None:
        if self.cfg.stop_at_success_rate is not None:
            return (f"--stop_at_success_rate: {self.cfg.env} reports no success for its episodes here; use "
                    f"--stop_at_true_return")
        return None

    def start_line(self, title: str, run_dir) -> str:
        from envs.fixed_length import describe

        cfg = self.cfg
        episodes = describe(cfg.env, **cfg.ppo.falls)
        paid = ("the env's reward, its control cost included" if cfg.ppo.control_cost else
                "the env's reward without its control cost (--no-ppo_control_cost: the paper's tasks)")
        return (f"[run] {cfg.mode} on {cfg.env} with {title} (--algo {cfg.algo}; Box actions), seed {cfg.seed}, "
                f"{cfg.total_timesteps:,} agent steps -> {run_dir}\n[run] {episodes}\n[run] paid: {paid}")

    def env_reward_envs(self):
        from envs.fixed_length import any_vector_env

        return any_vector_env(self.cfg.env, self.n_envs, **self.cfg.ppo.falls)

    def env_reward(self):
        from drlhp.policy.reward_source import EnvReward

        return EnvReward()

    def env_reward_options(self) -> dict:
        from envs.fixed_length import describe

        return {"episodes": describe(self.cfg.env, **self.cfg.ppo.falls)}

    # --- on the predictor's reward --------------------------------------------------------------------------------
    def preference_envs(self, log):
        from envs.fixed_length import any_vector_env, describe
        from envs.goal_kwargs import goal_env_kwargs

        cfg = self.cfg
        env_kwargs = goal_env_kwargs(cfg.prefs.oracle_goal)
        self.episodes = describe(cfg.env, make_kwargs=env_kwargs, **cfg.ppo.falls)
        log(f"[policy] PPO on the predictor's reward; {self.episodes}", flush=True)
        envs = any_vector_env(cfg.env, self.n_envs, **cfg.ppo.falls, **env_kwargs)
        self.n_state = states_to_record(cfg, envs)  # a person labels MuJoCo clips: each step's state, to draw them
        return envs

    def predicted_reward(self, envs, weights_to_policy, fixed_weights):
        from drlhp.policy.reward_source import PredictedReward

        cfg = self.cfg
        return PredictedReward(predictor_shape(envs), cfg.reward, cfg.seed, weights_to_policy, weights=fixed_weights,
                               obs_dtype=np.float32)

    def feeds(self, envs, reward, ports: PolicyPorts) -> list:
        """SegmentFeed of x_t for the preference interface, and FallFigures (what a fall is paid)."""
        from drlhp.policy.fall_figures import FallFigures
        from drlhp.policy.feeds import SegmentFeed

        segments = BoxSegments(self.n_envs, predictor_shape(envs), self.n_state)
        return [SegmentFeed(self.cfg, segments, reward, ports), FallFigures()]

    def preference_options(self, envs) -> dict:
        return {"episodes": self.episodes, "record_states": self.n_state > 0}
