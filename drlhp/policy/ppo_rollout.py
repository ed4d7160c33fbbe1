"""PPO's rollouts on a gymnasium vector env: ``RolloutCollector`` (n_steps x n_envs agent steps with the policy
acting: a ``PPORollout``, drlhp.policy.ppo_batches) and ``train_ppo`` (collect, learn, repeat: the true reward's
loop, used by the tests and bench/ppo_speed.py). The algorithm itself is drlhp.policy.ppo.
"""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass

import numpy as np

from drlhp.policy.ppo import PPOConfig, PPOPolicy
from drlhp.policy.ppo_batches import Episode, PPORollout  # noqa: F401 -- Episode: importers' old home


class RolloutCollector:
    """Steps a gymnasium vector env (same-step autoreset: ``envs/fixed_length.fixed_length_vector_env``) with a
    PPOPolicy for n_steps and returns a PPORollout. Its observations, actions, log-probabilities and values are
    views of buffers reused by the next ``run()``: learn from a rollout before collecting the next.
    ``predictor_input``: also keep each step's x_t = (raw o_t, clipped a_t) in float32 for the reward predictor
    (issue 29's contract, 1); off (the true reward's runs), nothing more is copied. ``record_states``: also keep each
    step's simulator state (before the step: the state action t was taken in) of every sub-env of a ``SyncVectorEnv``
    of MuJoCo envs (its ``envs``), (T, N, S) float64, reused as the other buffers: only where a person labels."""

    def __init__(self, envs, policy: PPOPolicy, seed: int, predictor_input: bool = False, record_states: bool = False):
        self.envs, self.policy = envs, policy
        cfg = policy.cfg
        T, N, D, A = cfg.n_steps, cfg.n_envs, policy.obs_dim, policy.act_dim
        if envs.num_envs != N:
            raise ValueError(f"the vector env has {envs.num_envs} envs, the PPO config {N}")
        self.obs_norm, self.actions = np.zeros((T, N, D), np.float32), np.zeros((T, N, A), np.float32)
        self.predictor_obs = np.zeros((T, N, D + A), np.float32) if predictor_input else None
        self.states = self._state_buffer(envs, T) if record_states else None
        self.log_probs, self.values = np.zeros((T, N), np.float32), np.zeros((T, N), np.float32)
        self.obs, _ = envs.reset(seed=seed)
        self.ep_return, self.ep_task, self.ep_len = np.zeros(N), np.zeros(N), np.zeros(N, np.int64)
        self.ep_standard = np.zeros(N)

    @staticmethod
    def _state_buffer(envs, T: int) -> np.ndarray:
        from envs.mujoco_state import vector_state_size

        size = vector_state_size(envs)
        if not size:
            raise ValueError("record_states needs a SyncVectorEnv of MuJoCo envs (their simulator states)")
        return np.zeros((T, envs.num_envs, size), np.float64)

    def _record_states(self, t: int) -> None:
        from envs.mujoco_state import record_state_into

        for i, env in enumerate(self.envs.envs):
            record_state_into(env, self.states[t, i])

    def run(self) -> PPORollout:
        cfg, policy = self.policy.cfg, self.policy
        T, N = cfg.n_steps, cfg.n_envs
        rewards, task = np.zeros((T, N), np.float32), np.zeros((T, N), np.float32)
        dones, bootstrap = np.zeros((T, N), np.float32), np.zeros((T, N), np.float32)
        finished, env_s, act_s = [], 0.0, 0.0
        falls = np.zeros((T, N), np.bool_) if self.states is not None else None
        for t in range(T):
            if self.states is not None:  # before the step: the state action t is taken in, as x_t's observation
                self._record_states(t)
            t0 = time.perf_counter()
            acting = policy.act(self.obs)
            t1 = time.perf_counter()
            obs, reward, terminated, truncated, info = self.envs.step(acting.env_actions)
            t2 = time.perf_counter()
            act_s, env_s = act_s + t1 - t0, env_s + t2 - t1
            self.obs_norm[t], self.actions[t] = acting.obs_norm, acting.actions
            if self.predictor_obs is not None:
                x = self.predictor_obs[t]
                x[:, :policy.obs_dim], x[:, policy.obs_dim:] = self.obs, acting.env_actions
            self.log_probs[t], self.values[t] = acting.log_probs, acting.values
            rewards[t] = reward
            ended = terminated | truncated
            task[t] = _info_value(info, "reward_task", reward, ended)
            if falls is not None:
                falls[t] = _info_value(info, "fell", np.zeros(N), ended) > 0.5
            dones[t] = ended
            self.ep_return += reward
            self.ep_task += task[t]
            self.ep_standard += _info_value(info, "reward_standard", reward, ended)
            self.ep_len += 1
            if truncated.any():  # the time limit cut these episodes: their last state still had a future
                cut = truncated & ~terminated
                final = obs.copy()
                final[cut] = np.stack([info["final_obs"][i] for i in np.flatnonzero(cut)])
                bootstrap[t, cut] = policy.value(final)[cut]
            for i in np.flatnonzero(ended):
                finished.append(Episode(float(self.ep_return[i]), float(self.ep_task[i]), int(self.ep_len[i]),
                                        float(self.ep_standard[i])))
                self.ep_return[i] = self.ep_task[i] = self.ep_len[i] = self.ep_standard[i] = 0
            self.obs = obs
        return PPORollout(self.obs_norm, self.actions, self.log_probs, self.values, rewards, task, dones,
                          bootstrap, policy.value(self.obs), finished, env_s, act_s, self.predictor_obs, self.states,
                          falls)


def _info_value(info: dict, key: str, default: np.ndarray, ended: np.ndarray) -> np.ndarray:
    """info[key] per env from a same-step-autoreset vector env: an ended env's step info is in final_info."""
    out = np.asarray(default, np.float32).copy()
    if key in info:
        has = info[f"_{key}"]
        out[has] = info[key][has]
    final = info.get("final_info")
    if final is not None and key in final:
        has = final[f"_{key}"] & ended
        out[has] = final[key][has]
    return out


@dataclass
class PPOResult:
    """What ``train_ppo`` returns."""

    episode_returns: list[float]  # per finished episode, the env's reward summed (fall penalties included)
    episode_task_returns: list[float]  # the same without the control cost (info["reward_task"])
    steps: int  # agent steps trained on
    wall_s: float
    timing: dict[str, float]  # seconds in env steps, acting, learning
    reached: bool  # stop_at_return reached
    policy: PPOPolicy


def train_ppo(envs, total_steps: int, seed: int, cfg: PPOConfig = PPOConfig(), stop_at_return: float | None = None,
              window: int = 10, print_fn=None, log_every: int = 10) -> PPOResult:
    """PPO on ``envs`` (a gymnasium vector env of Box actions, ``cfg.n_envs`` of them) paid the env's own reward,
    for ``total_steps`` agent steps or until the mean return of the last ``window`` episodes reaches
    ``stop_at_return``. TensorFlow's threads and seeds are the caller's (drlhp.runtime.tf_setup)."""
    space = envs.single_action_space
    policy = PPOPolicy(envs.single_observation_space.shape[0], space.shape[0], cfg, seed, space.low, space.high)
    collector = RolloutCollector(envs, policy, seed)
    returns, task_returns = [], []
    timing = collections.defaultdict(float)
    steps, updates, start, reached = 0, 0, time.perf_counter(), False
    while steps < total_steps and not reached:
        rollout = collector.run()
        frac = 1.0 - steps / total_steps if cfg.anneal_lr else 1.0
        t0 = time.perf_counter()
        losses = policy.learn(rollout, rollout.rewards, cfg.lr * frac)
        timing["learn_s"] += time.perf_counter() - t0
        timing["env_s"] += rollout.env_s
        timing["act_s"] += rollout.act_s
        steps += cfg.batch
        updates += 1
        for episode in rollout.finished:
            returns.append(episode.true_return)
            task_returns.append(episode.task_return)
        recent = float(np.mean(returns[-window:])) if returns else None
        reached = stop_at_return is not None and len(returns) >= window and recent >= stop_at_return
        if print_fn is not None and (updates % log_every == 0 or reached or steps >= total_steps):
            wall = time.perf_counter() - start
            print_fn(f"[ppo] {steps:>9,} steps | {steps / wall:6.0f} steps/s | {len(returns)} episodes | return "
                     f"(last {min(window, len(returns))}) {'-' if recent is None else f'{recent:.1f}'} | "
                     f"std {losses['std_mean']:.2f} | kl {losses['approx_kl']:.4f} | "
                     f"clip {losses['clip_frac']:.2f} | ev {losses['explained_variance']:.2f}")
    return PPOResult(returns, task_returns, steps, time.perf_counter() - start, dict(timing), reached, policy)
