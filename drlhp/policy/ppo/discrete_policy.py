"""PPO's policy for discrete actions (Atari, MovingDot): the categorical policy and its value on one network, and its
compiled update, on PPO's formulas (drlhp.policy.ppo.update: gae, ppo_discrete_loss, adam_update);
``build_discrete_ppo``, the one way a run makes it.

Settings: CleanRL's ``ppo_atari.py`` and the SB3 zoo's Atari PPO (8 envs x 128 steps, 4 epochs of 4 minibatches,
lr 2.5e-4 annealed, clip 0.1 on the surrogate and the value, entropy 0.01, vf_coef 0.5, max_grad_norm 0.5, gamma
0.99, lambda 0.95, Adam eps 1e-5): PPOConfig's fields, which the presets set for --algo ppo on a discrete-action
env (drlhp/config/presets.py, FOR_DISCRETE_PPO).

The network is A2C's (drlhp.policy.nets.policy_network, both discrete algorithms'): the Nature CNN on uint8 84x84x4
frames, /255 inside the graph (an MLP for vector observations), one torso under the policy's logits and the value,
orthogonal init (sqrt 2 torso, 0.01 logits, 1 value) as CleanRL's. No observation normalization and no reward
scaling by a running return: the frames are scaled in the graph, and the rewards come clipped to their sign (the true
reward) or normalized by the predictor (mean 0, std 0.05, centred and clipped as A2C gets them): the same reward A2C
learns on.

One update (``DiscretePPOPolicy.learn``), on a rollout of n_steps x n_envs agent steps paid r_t:
    A_t, R^_t = gae(r, V, cuts, V(s_T))          cuts: episode ends where they stop the returns (A2C's
                                                 --episode_ends: not with the predictor's reward, the paper's)
    n_epochs times, over shuffled minibatches (all of them in ONE compiled call, a loop in the graph):
        A     <- (A - mean A) / (std A + 1e-8)                 per minibatch (norm_adv)
        log pi(a|s) = log_softmax(logits)[a]
        L_pi  = clipped_surrogate(log pi, log pi_old, A, eps)
        L_V   = ppo_value_loss(V, V_old, R^, eps, clip_vloss)
        H     = mean(-sum_a pi(a|s) log pi(a|s))
        L     = L_pi - ent_coef * H + vf_coef * L_V;  gradients clipped to max_grad_norm;  Adam (PyTorch's form)
"""
from __future__ import annotations

import collections

import numpy as np
import tensorflow as tf

from drlhp.config import RunConfig
from drlhp.config.ppo import PPOConfig
from drlhp.policy.nets import policy_network
from drlhp.policy.ppo.batches import DiscreteRollout
from drlhp.policy.ppo.update import (
    adam_state,
    adam_update,
    categorical_log_prob,
    gae,
    ppo_discrete_loss,
    restore_adam,
)
from drlhp.policy.running_norm import rng_state, set_rng_state

N_FIGURES = 7  # what one minibatch step returns: losses, entropy, KL, clip fraction, grad norm, mean value


class DiscretePPOPolicy:
    """The categorical policy and its value on one network, acted and trained by compiled functions of fixed input
    signatures (each traced once: ``traces`` counts them). A2CPolicy's shape, so that A2C's rollout, watch and
    checkpoints serve it:

    act(obs (n_envs, *obs_shape)) -> actions (n_envs,) int32, values (n_envs,), log-probs (n_envs,)
    value(obs (n_envs, *obs_shape)) -> (n_envs,)
    learn(rollout, lr, ent_coef) -> dict of scalars (the last minibatch step's, as CleanRL and SB3 log them)
    get_state() / set_state(): weights, Adam's slots, both generators; weights_only(): the network in float16
        (the same arrays as A2C's: watch plays either)
    """

    def __init__(self, obs_shape: tuple, n_actions: int, cfg: PPOConfig, seed: int, obs_dtype=np.uint8,
                 bfloat16: bool = False):
        if cfg.problem():
            raise ValueError(cfg.problem())
        self.cfg, self.obs_shape, self.n_actions = cfg, tuple(obs_shape), int(n_actions)
        self.model = policy_network(self.obs_shape, self.n_actions, seed, obs_dtype=np.dtype(obs_dtype).name,
                                    bfloat16=bfloat16)
        self.variables = self.model.trainable_variables
        self.adam_m = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]
        self.adam_v = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self.variables]
        self.adam_t = tf.Variable(0.0, trainable=False)
        self.act_rng = tf.random.Generator.from_seed(seed)  # the actions' sampling
        self.rng = np.random.default_rng(seed)  # the minibatches' order
        self.traces = collections.Counter()

        dtype = tf.as_dtype(np.dtype(obs_dtype))
        b, m, k = cfg.batch, cfg.minibatch, cfg.n_epochs * cfg.n_minibatches
        act_spec = tf.TensorSpec((cfg.n_envs, *self.obs_shape), dtype)
        scalar = tf.TensorSpec((), tf.float32)
        batch_specs = [tf.TensorSpec((b, *self.obs_shape), dtype), tf.TensorSpec((b,), tf.int32)]
        batch_specs += [tf.TensorSpec((b,), tf.float32)] * 4  # old log-probs, advantages, returns, old values
        self._act = tf.function(self._act_graph, autograph=False, input_signature=[act_spec])
        self._value = tf.function(self._value_graph, autograph=False, input_signature=[act_spec])
        self._update = tf.function(self._update_graph, autograph=False,
                                   input_signature=[*batch_specs, tf.TensorSpec((k, m), tf.int32), scalar, scalar])

    # --- graphs (each body runs once, when traced) ----------------------------------------------------------
    def _act_graph(self, obs):
        self.traces["act"] += 1
        logits, values = self.model(obs, training=False)
        u = self.act_rng.uniform(tf.shape(logits), minval=1e-9, maxval=1.0)  # Gumbel-max: reproducible per seed
        actions = tf.argmax(logits - tf.math.log(-tf.math.log(u)), axis=-1, output_type=tf.int32)
        return actions, values, categorical_log_prob(logits, actions)

    def _value_graph(self, obs):
        self.traces["value"] += 1
        return self.model(obs, training=False)[1]

    def _step_graph(self, b_obs, b_actions, b_log_probs, b_advantages, b_returns, b_values, idx, lr, ent_coef):
        """One minibatch step on the rows ``idx`` of the rollout (which stays on the TF side for the update)."""
        cfg = self.cfg
        advantages = tf.gather(b_advantages, idx)
        if cfg.norm_adv:
            mean, var = tf.nn.moments(advantages, axes=[0])
            advantages = (advantages - mean) / (tf.sqrt(var) + 1e-8)
        with tf.GradientTape() as tape:
            logits, values = self.model(tf.gather(b_obs, idx), training=True)
            loss, *figures = ppo_discrete_loss(logits, values, tf.gather(b_actions, idx), tf.gather(b_log_probs, idx),
                                               advantages, tf.gather(b_returns, idx), tf.gather(b_values, idx), cfg,
                                               ent_coef)
        grads = tape.gradient(loss, self.variables)
        grads, grad_norm = tf.clip_by_global_norm(grads, cfg.max_grad_norm)
        adam_update(self.variables, grads, self.adam_m, self.adam_v, self.adam_t, lr, cfg.adam_eps)
        return tf.stack([*figures, grad_norm, tf.reduce_mean(values)])

    def _update_graph(self, b_obs, b_actions, b_log_probs, b_advantages, b_returns, b_values, all_idx, lr, ent_coef):
        """Every minibatch step of an update (``all_idx``: (n_epochs x n_minibatches, minibatch)) in one graph."""
        self.traces["update"] += 1

        def body(k, _):
            return k + 1, self._step_graph(b_obs, b_actions, b_log_probs, b_advantages, b_returns, b_values,
                                           all_idx[k], lr, ent_coef)

        _, out = tf.while_loop(lambda k, _: k < tf.shape(all_idx)[0], body, (tf.constant(0), tf.zeros(N_FIGURES)))
        return out

    # --- numpy-facing API ----------------------------------------------------------------------------------------
    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        actions, values, log_probs = self._act(obs)
        return actions.numpy(), values.numpy(), log_probs.numpy()

    def value(self, obs: np.ndarray) -> np.ndarray:
        return self._value(obs).numpy()

    def learn(self, rollout: DiscreteRollout, lr: float, ent_coef: float | None = None) -> dict[str, float]:
        """One PPO update on ``rollout`` (its rewards: the env's clipped, or the predictor's)."""
        cfg = self.cfg
        ent_coef = cfg.ent_coef if ent_coef is None else ent_coef
        advantages, returns = gae(rollout.rewards, rollout.values, rollout.cuts, rollout.last_values, cfg.gamma,
                                  cfg.gae_lambda)
        b = cfg.batch
        all_idx = np.concatenate([self.rng.permutation(b).astype(np.int32).reshape(cfg.n_minibatches, cfg.minibatch)
                                  for _ in range(cfg.n_epochs)])
        out = self._update(rollout.b_obs, rollout.b_actions, rollout.log_probs.reshape(b), advantages.reshape(b),
                           returns.reshape(b), rollout.values.reshape(b), all_idx, np.float32(lr),
                           np.float32(ent_coef)).numpy()
        var_returns = np.var(returns)
        explained = 1.0 - np.var(returns - rollout.values) / var_returns if var_returns > 0 else float("nan")
        names = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac", "grad_norm", "value_mean")
        return {**{k: float(v) for k, v in zip(names, out)}, "explained_variance": float(explained),
                "advantage_std": float(advantages.std())}

    # --- state for checkpoints -----------------------------------------------------------------------------------
    def get_state(self) -> dict[str, np.ndarray]:
        state = {f"weight_{i}": np.asarray(w) for i, w in enumerate(self.model.get_weights())}
        state.update(adam_state(self.adam_m, self.adam_v, self.adam_t))
        state["act_rng_state"] = self.act_rng.state.numpy()
        state["rng_state"] = rng_state(self.rng)
        return state

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """``get_state``'s arrays, or weights only (a milestone's, A2C's of the same network); ValueError, nothing
        changed, where they do not fit this network."""
        here = self.model.get_weights()
        for i, w in enumerate(here):
            there = np.shape(state[f"weight_{i}"]) if f"weight_{i}" in state else None
            if there != w.shape:
                raise ValueError(f"the policy checkpoint does not fit this network: weight_{i} is {there}, "
                                 f"{w.shape} here")
        if f"weight_{len(here)}" in state:
            raise ValueError(f"the policy checkpoint does not fit this network: it has more than {len(here)} weights")
        self.model.set_weights([np.asarray(state[f"weight_{i}"], np.float32) for i in range(len(here))])
        if not restore_adam(state, self.adam_m, self.adam_v, self.adam_t):  # weights only
            return
        self.act_rng.reset(state["act_rng_state"])
        set_rng_state(self.rng, state["rng_state"])

    def weights_only(self) -> dict[str, np.ndarray]:
        """The network's weights in float16 (a milestone, a model for models/), as A2CPolicy.weights_only."""
        return {f"weight_{i}": np.asarray(w, np.float16) for i, w in enumerate(self.model.get_weights())}


def build_discrete_ppo(cfg: RunConfig, env) -> DiscretePPOPolicy:
    """Discrete PPO's policy for ``env`` (an envs.VecEnv of --ppo_n_envs workers), after setting this process's
    TensorFlow threads and seeds (as every algorithm's builder)."""
    from drlhp.processes.cpu import choose_policy_precision
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(cfg.tf_intra_threads, cfg.tf_inter_threads, seed=cfg.seed)
    return DiscretePPOPolicy(env.obs_shape, env.n_actions, cfg.ppo, cfg.seed, obs_dtype=env.obs_dtype,
                             bfloat16=choose_policy_precision(cfg.policy_bfloat16).bfloat16)
