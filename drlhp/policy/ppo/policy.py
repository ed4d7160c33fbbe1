"""PPO's policy for continuous (Box) actions: the Gaussian policy and its value (Keras networks, trained by a compiled
update on PPO's formulas, drlhp.policy.ppo.update, whose docstring writes one update out), the running normalizers,
and a numpy copy of the networks for acting; ``build_ppo``, the one way a run makes it.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from drlhp.config import RunConfig
from drlhp.config.ppo import PPOConfig
from drlhp.policy.ppo.batches import PPORollout
from drlhp.policy.ppo.network import actor_mean, critic
from drlhp.policy.ppo.numpy_policy import tanh_mlp
from drlhp.policy.ppo.update import (
    LOG_2PI,
    adam_state,
    adam_update,
    clipped_surrogate,
    gae,
    gaussian_entropy,
    gaussian_log_prob,
    ppo_value_loss,
    restore_adam,
)
from drlhp.policy.running_norm import RewardScaler, RunningMeanStd, rng_state, set_rng_state


@dataclass
class Acting:
    """What ``act`` returns for n_envs observations."""

    actions: np.ndarray  # (N, A) float32, the Gaussian's samples (trained on)
    env_actions: np.ndarray  # (N, A) the same clipped to the action space (sent to the env)
    values: np.ndarray  # (N,) float32
    log_probs: np.ndarray  # (N,) float32
    obs_norm: np.ndarray  # (N, D) float32, the normalized observations acted on


class PPOPolicy:
    """The Gaussian policy and its value (Keras networks, trained by a compiled update), the running normalizers,
    and a numpy copy of the networks for acting.

    act(obs (n_envs, D) raw) -> Acting                   (updates the observation statistics)
    act_deterministic(obs) -> the mean, clipped          (no update)
    value(obs (n, D) raw) -> (n,)                        (no update)
    learn(rollout, rewards (T, n_envs), lr, ent_coef) -> dict of scalars: reward scaling, GAE, n_epochs of
        n_minibatches compiled steps (in one compiled call with cfg.fused_update)
    get_state() / set_state(): every array a checkpoint needs; weights_only(): the networks in float16

    **Why acting runs in numpy.** Acting is one forward pass of two 64-64 MLPs on n_envs observations per env
    step: a few microseconds of arithmetic, against about 0.9-1.3 ms of CPU per call of a ``tf.function`` on a
    loaded 2-core AMD EPYC (a trivial one: 0.4 ms). In numpy, on the weights copied after each update
    (``_sync_numpy``), it costs tens of microseconds; the same numbers (tests/test_ppo.py checks it against the
    Keras networks). Training stays in TensorFlow. Each compiled function has a fixed input signature and is
    traced once: ``traces`` counts the traces.
    """

    def __init__(self, obs_dim: int, act_dim: int, cfg: PPOConfig, seed: int, action_low=None, action_high=None):
        if cfg.problem():
            raise ValueError(cfg.problem())
        self.cfg, self.obs_dim, self.act_dim = cfg, int(obs_dim), int(act_dim)
        low = -np.inf if action_low is None else action_low
        high = np.inf if action_high is None else action_high
        self.action_low = np.broadcast_to(np.asarray(low, np.float32), (act_dim,)).copy()
        self.action_high = np.broadcast_to(np.asarray(high, np.float32), (act_dim,)).copy()
        self.actor = actor_mean(obs_dim, act_dim, seed, cfg.hidden)
        self.critic = critic(obs_dim, seed, cfg.hidden)
        self.log_std = tf.Variable(tf.fill((act_dim,), np.float32(cfg.init_log_std)), name="log_std")
        self.variables = [*self.actor.trainable_variables, *self.critic.trainable_variables, self.log_std]
        # Adam's slots (PyTorch's form) and its step count
        self.adam_m = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]
        self.adam_v = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]
        self.adam_t = tf.Variable(0.0, trainable=False)
        self.rng = np.random.default_rng(seed)  # the actions' noise and the minibatches' order
        self.obs_rms = RunningMeanStd((obs_dim,))
        self.reward_scaler = RewardScaler(cfg.n_envs, cfg.gamma, cfg.reward_clip)
        self.traces = collections.Counter()  # function name -> times traced (1 each: no retracing)
        self._sync_numpy()

        b, m, k = cfg.batch, cfg.minibatch, cfg.n_epochs * cfg.n_minibatches
        scalar = tf.TensorSpec((), tf.float32)
        batch_specs = [tf.TensorSpec((b, obs_dim), tf.float32), tf.TensorSpec((b, act_dim), tf.float32)]
        batch_specs += [tf.TensorSpec((b,), tf.float32)] * 4  # old log-probs, advantages, returns, old values
        self._step = tf.function(self._step_graph, autograph=False,
                                 input_signature=[*batch_specs, tf.TensorSpec((m,), tf.int32), scalar, scalar])
        self._update = tf.function(self._update_graph, autograph=False,
                                   input_signature=[*batch_specs, tf.TensorSpec((k, m), tf.int32), scalar, scalar])

    # --- graphs (each body runs once, when traced) ----------------------------------------------------------
    def _step_graph(self, b_obs, b_actions, b_log_probs, b_advantages, b_returns, b_values, idx, lr, ent_coef):
        """One minibatch step on the rows ``idx`` of the rollout's batch (the batch stays on the TF side for
        the whole update; only the indices change from step to step)."""
        self.traces["step"] += 1
        cfg = self.cfg
        obs, actions = tf.gather(b_obs, idx), tf.gather(b_actions, idx)
        old_log_prob, advantages = tf.gather(b_log_probs, idx), tf.gather(b_advantages, idx)
        returns, old_values = tf.gather(b_returns, idx), tf.gather(b_values, idx)
        if cfg.norm_adv:
            mean, var = tf.nn.moments(advantages, axes=[0])
            advantages = (advantages - mean) / (tf.sqrt(var) + 1e-8)
        with tf.GradientTape() as tape:
            new_log_prob = gaussian_log_prob(actions, self.actor(obs, training=True), self.log_std)
            policy_loss, clip_frac = clipped_surrogate(new_log_prob, old_log_prob, advantages, cfg.clip_coef)
            values = self.critic(obs, training=True)[:, 0]
            value_loss = ppo_value_loss(values, old_values, returns, cfg.clip_coef, cfg.clip_vloss)
            entropy = gaussian_entropy(self.log_std)
            loss = policy_loss - ent_coef * entropy + cfg.vf_coef * value_loss
        grads = tape.gradient(loss, self.variables)
        grads, grad_norm = tf.clip_by_global_norm(grads, cfg.max_grad_norm)
        self._adam(grads, lr)
        log_ratio = new_log_prob - old_log_prob
        approx_kl = tf.reduce_mean(tf.exp(log_ratio) - 1.0 - log_ratio)  # Schulman's low-variance estimator
        return tf.stack([policy_loss, value_loss, entropy, approx_kl, clip_frac, grad_norm])

    def _update_graph(self, b_obs, b_actions, b_log_probs, b_advantages, b_returns, b_values, all_idx, lr, ent_coef):
        """Every minibatch step of an update (``all_idx``: (n_epochs x n_minibatches, minibatch)) in one graph."""
        self.traces["update"] += 1

        def body(k, _):
            out = self._step_graph(b_obs, b_actions, b_log_probs, b_advantages, b_returns, b_values,
                                   all_idx[k], lr, ent_coef)
            return k + 1, out

        _, out = tf.while_loop(lambda k, _: k < tf.shape(all_idx)[0], body, (tf.constant(0), tf.zeros(6)))
        return out

    def _adam(self, grads, lr):
        adam_update(self.variables, grads, self.adam_m, self.adam_v, self.adam_t, lr, self.cfg.adam_eps)

    # --- acting, in numpy ---------------------------------------------------------------------------------------
    def _sync_numpy(self) -> None:
        """The numpy copy of the networks acting uses: after every change of the weights."""
        self._np_actor = [np.asarray(w, np.float32) for w in self.actor.get_weights()]
        self._np_critic = [np.asarray(w, np.float32) for w in self.critic.get_weights()]
        self._np_log_std = self.log_std.numpy().astype(np.float32)

    def normalize(self, obs: np.ndarray, update: bool) -> np.ndarray:
        if update:
            self.obs_rms.update(obs)
        return self.obs_rms.normalize(obs, self.cfg.obs_clip)

    def act(self, obs: np.ndarray) -> Acting:
        obs_norm = self.normalize(obs, update=True)
        mean = tanh_mlp(self._np_actor, obs_norm)
        std = np.exp(self._np_log_std)
        noise = self.rng.standard_normal(mean.shape, np.float32)
        actions = (mean + std * noise).astype(np.float32)
        # log N(a; mu, std) with (a - mu) / std = noise
        log_probs = np.sum(-0.5 * np.square(noise) - self._np_log_std - 0.5 * LOG_2PI, axis=-1, dtype=np.float32)
        values = tanh_mlp(self._np_critic, obs_norm)[:, 0]
        return Acting(actions, np.clip(actions, self.action_low, self.action_high), values, log_probs, obs_norm)

    def act_deterministic(self, obs: np.ndarray) -> np.ndarray:
        """The Gaussian's mean, clipped to the action space (for watching or evaluating; no statistics update)."""
        mean = tanh_mlp(self._np_actor, self.normalize(obs, update=False))
        return np.clip(mean, self.action_low, self.action_high)

    def value(self, obs: np.ndarray) -> np.ndarray:
        return tanh_mlp(self._np_critic, self.normalize(obs, update=False))[:, 0]

    # --- training -----------------------------------------------------------------------------------------------
    def learn(self, rollout: PPORollout, rewards: np.ndarray, lr: float, ent_coef: float | None = None
              ) -> dict[str, float]:
        """One PPO update on ``rollout`` paid ``rewards`` (T, n_envs): the env's, or the reward predictor's."""
        cfg = self.cfg
        ent_coef = cfg.ent_coef if ent_coef is None else ent_coef
        scaled = self.reward_scaler.scale(rewards, rollout.dones) + cfg.gamma * rollout.bootstrap_values
        advantages, returns = gae(scaled, rollout.values, rollout.dones, rollout.last_values, cfg.gamma,
                                  cfg.gae_lambda)
        b = cfg.batch
        batch = [tf.constant(x.reshape(b, *x.shape[2:]), tf.float32) for x in
                 (rollout.obs_norm, rollout.actions, rollout.log_probs, advantages, returns, rollout.values)]
        lr_t, ent_t = tf.constant(lr, tf.float32), tf.constant(ent_coef, tf.float32)
        # each epoch a new shuffle of the rollout, cut into n_minibatches
        all_idx = np.concatenate([self.rng.permutation(b).astype(np.int32).reshape(cfg.n_minibatches, cfg.minibatch)
                                  for _ in range(cfg.n_epochs)])
        if cfg.fused_update:
            out = self._update(*batch, all_idx, lr_t, ent_t)
        else:
            for idx in all_idx:
                out = self._step(*batch, idx, lr_t, ent_t)
        out = out.numpy()  # the last minibatch's figures, as CleanRL and SB3 log them
        self._sync_numpy()
        var_returns = np.var(returns)
        explained = 1.0 - np.var(returns - rollout.values) / var_returns if var_returns > 0 else float("nan")
        return {"policy_loss": float(out[0]), "value_loss": float(out[1]), "entropy": float(out[2]),
                "approx_kl": float(out[3]), "clip_frac": float(out[4]), "grad_norm": float(out[5]),
                "explained_variance": float(explained), "std_mean": float(np.exp(self._np_log_std).mean()),
                "scaled_reward_std": float(scaled.std())}

    # --- state for checkpoints --------------------------------------------------------------------------------
    def _weights(self) -> list[np.ndarray]:
        return [*self.actor.get_weights(), *self.critic.get_weights(), self.log_std.numpy()]

    def get_state(self) -> dict[str, np.ndarray]:
        state = {f"weight_{i}": np.asarray(w) for i, w in enumerate(self._weights())}
        state.update(adam_state(self.adam_m, self.adam_v, self.adam_t))
        state["rng_state"] = rng_state(self.rng)
        state.update({f"obs_rms_{k}": v for k, v in self.obs_rms.state().items()})
        state.update({f"reward_scaler_{k}": v for k, v in self.reward_scaler.state().items()})
        return state

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """``get_state``'s arrays (or ``weights_only``'s with the observation statistics); ValueError, nothing
        changed, if they do not fit this policy."""
        here = self._weights()
        for i, w in enumerate(here):
            there = np.shape(state.get(f"weight_{i}", ()))
            if f"weight_{i}" not in state or there != w.shape:
                raise ValueError(f"the PPO state does not fit this policy: weight_{i} is {there}, {w.shape} here")
        obs_rms = RunningMeanStd((self.obs_dim,))
        obs_rms.restore({k[8:]: v for k, v in state.items() if k.startswith("obs_rms_")})
        n_actor, n_critic = len(self.actor.get_weights()), len(self.critic.get_weights())
        weights = [np.asarray(state[f"weight_{i}"], np.float32) for i in range(len(here))]
        self.actor.set_weights(weights[:n_actor])
        self.critic.set_weights(weights[n_actor:n_actor + n_critic])
        self.log_std.assign(weights[-1])
        self.obs_rms = obs_rms
        self._sync_numpy()
        if not restore_adam(state, self.adam_m, self.adam_v, self.adam_t):  # weights only
            return
        set_rng_state(self.rng, state["rng_state"])
        self.reward_scaler.restore({k[14:]: v for k, v in state.items() if k.startswith("reward_scaler_")})

    def weights_only(self) -> dict[str, np.ndarray]:
        """The networks in float16 and the observation statistics (without them the weights mean nothing)."""
        out = {f"weight_{i}": np.asarray(w, np.float16) for i, w in enumerate(self._weights())}
        out.update({f"obs_rms_{k}": v for k, v in self.obs_rms.state().items()})
        return out


def build_ppo(cfg: RunConfig, envs) -> PPOPolicy:
    """PPO's policy for ``envs`` (a gymnasium vector env of Box actions), after setting this process's
    TensorFlow threads and seeds (as every algorithm's builder)."""
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(cfg.tf_intra_threads, cfg.tf_inter_threads, seed=cfg.seed)
    space = envs.single_action_space
    return PPOPolicy(envs.single_observation_space.shape[0], space.shape[0], cfg.ppo, cfg.seed, space.low,
                     space.high)
