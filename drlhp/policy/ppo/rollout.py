"""PPO's rollouts on a gymnasium vector env: ``RolloutCollector`` (n_steps x n_envs agent steps with the policy
acting: a ``PPORollout``, drlhp.policy.ppo.batches). The algorithm itself is drlhp.policy.ppo.policy's; the loop that
runs them, on the env's reward or the predictor's, PolicyTrainer's (drlhp.policy.ppo.trainer.PPOTrainer).
"""
from __future__ import annotations

import time

import numpy as np

from drlhp.policy.ppo.batches import Episode, PPORollout
from drlhp.policy.ppo.policy import PPOPolicy
from envs.fixed_length import led_to


class RolloutCollector:
    """Steps a gymnasium vector env (same-step autoreset: ``envs/fixed_length.fixed_length_vector_env``) with a
    PPOPolicy for n_steps and returns a PPORollout. Its observations, actions, log-probabilities and values are
    views of buffers reused by the next ``run()``: learn from a rollout before collecting the next.
    ``predictor_input``: also keep each step's x_t = (raw o_t, clipped a_t) in float32 for the reward predictor
    (issue 29's contract, 1); off (the true reward's runs), nothing more is copied. ``next_obs`` (--reward_next_obs):
    x_t's observation is instead o_{t+1}, the one step t led to: the fallen state at a fall (the reset rule's
    ``info["fall_observation"]``), an ended episode's last observation (``info["final_obs"]``), never the fresh
    start the policy acts on next (envs.fixed_length.led_to). ``record_states``: also keep each
    step's simulator state (before the step: the state action t was taken in) of every sub-env of a ``SyncVectorEnv``
    of MuJoCo envs (its ``envs``), (T, N, S) float64, reused as the other buffers: only where a person labels."""

    def __init__(self, envs, policy: PPOPolicy, seed: int, predictor_input: bool = False, record_states: bool = False,
                 next_obs: bool = False):
        self.envs, self.policy, self.next_obs = envs, policy, next_obs
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
        fell = np.zeros((T, N), np.bool_)
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
                if self.next_obs:
                    x[:, :policy.obs_dim] = led_to(obs, info, terminated | truncated)
            self.log_probs[t], self.values[t] = acting.log_probs, acting.values
            rewards[t] = reward
            ended = terminated | truncated
            task[t] = _info_value(info, "reward_task", reward, ended)
            fell[t] = _info_value(info, "fell", np.zeros(N), ended) > 0.5
            dones[t] = ended
            self.ep_return += reward
            self.ep_task += task[t]
            self.ep_standard += _info_value(info, "reward_standard", reward, ended)
            self.ep_len += 1
            cut = truncated & ~terminated  # the time limit cut these episodes: their last state still had a future
            if cut.any():  # (a fall on the limit's last step is both: it ends the episode, nothing to bootstrap)
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
                          fell)


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
