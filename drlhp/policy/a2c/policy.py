"""A2C's policy: the network (drlhp.policy.nets, both discrete algorithms') with its act step and train step, compiled
once each with fixed input signatures; its state for checkpoints; ``build_policy``, the one way a run makes it. The
train step's math (the loss, RMSprop) is drlhp.policy.a2c.update's.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import tensorflow as tf

from drlhp.config import RunConfig
from drlhp.config.a2c import A2CConfig
from drlhp.policy.a2c.update import a2c_loss, rmsprop_step
from drlhp.policy.nets import policy_network


class A2CPolicy:
    """The policy network plus its compiled act and train steps.

    act(obs (n_envs, *obs_shape)) -> actions (n_envs,) int32, values (n_envs,) float32
    value(obs (n_envs, *obs_shape)) -> values (n_envs,)
    train(obs (B, ...), actions (B,), returns (B,), lr) -> dict of scalars, B = n_envs * n_steps
    """

    def __init__(self, obs_shape: tuple, n_actions: int, cfg: A2CConfig, seed: int, obs_dtype=np.uint8,
                 bfloat16: bool = False):
        self.cfg = cfg
        self.obs_shape = tuple(obs_shape)
        self.n_actions = n_actions
        self.model = policy_network(self.obs_shape, n_actions, seed, obs_dtype=np.dtype(obs_dtype).name,
                                    bfloat16=bfloat16)
        self.variables = self.model.trainable_variables
        if cfg.rmsprop_style not in ("tf1", "torch"):
            raise ValueError(f"unknown rmsprop_style {cfg.rmsprop_style!r}")
        # RMSprop mean-square slots: initialized to 1 as TF1's RMSPropOptimizer did, or 0 (torch).
        init = tf.ones if cfg.rmsprop_style == "tf1" else tf.zeros
        self.mean_square = [tf.Variable(init(v.shape, v.dtype), trainable=False) for v in self.variables]
        self.rng = tf.random.Generator.from_seed(seed)
        obs_dtype = tf.as_dtype(np.dtype(obs_dtype))
        batch = cfg.n_envs * cfg.n_steps
        act_spec = tf.TensorSpec((cfg.n_envs, *self.obs_shape), obs_dtype)
        scalar = tf.TensorSpec((), tf.float32)  # the learning rate, the entropy bonus's weight
        train_specs = [tf.TensorSpec((batch, *self.obs_shape), obs_dtype), tf.TensorSpec((batch,), tf.int32),
                       tf.TensorSpec((batch,), tf.float32), scalar, scalar]
        self._act = tf.function(self._act_graph, autograph=False, input_signature=[act_spec])
        self._value = tf.function(self._value_graph, autograph=False, input_signature=[act_spec])
        self._train = tf.function(self._train_graph, autograph=False, input_signature=train_specs)

    # --- graphs --------------------------------------------------------------------------------
    def _act_graph(self, obs):
        logits, values = self.model(obs, training=False)
        # Gumbel-max sampling from our own seeded generator: reproducible for a given --seed.
        u = self.rng.uniform(tf.shape(logits), minval=1e-9, maxval=1.0)
        actions = tf.argmax(logits - tf.math.log(-tf.math.log(u)), axis=-1, output_type=tf.int32)
        return actions, values

    def _value_graph(self, obs):
        return self.model(obs, training=False)[1]

    def _train_graph(self, obs, actions, returns, lr, ent_coef):
        cfg = self.cfg
        with tf.GradientTape() as tape:
            logits, values = self.model(obs, training=True)
            loss, policy_loss, value_loss, entropy = a2c_loss(logits, values, actions, returns, ent_coef, cfg.vf_coef)
        grads = tape.gradient(loss, self.variables)
        grads, grad_norm = tf.clip_by_global_norm(grads, cfg.max_grad_norm)
        for var, grad, ms in zip(self.variables, grads, self.mean_square):
            new_ms, step = rmsprop_step(grad, ms, lr, cfg.rms_decay, cfg.rms_eps, cfg.rmsprop_style)
            ms.assign(new_ms)
            var.assign_sub(step)
        var_returns = tf.math.reduce_variance(returns)
        explained_variance = 1.0 - tf.math.reduce_variance(returns - values) / (var_returns + 1e-8)
        return {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy,
                "grad_norm": grad_norm, "explained_variance": explained_variance,
                "value_mean": tf.reduce_mean(values)}

    # --- numpy-facing API ----------------------------------------------------------------------
    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        actions, values = self._act(obs)
        return actions.numpy(), values.numpy()

    def value(self, obs: np.ndarray) -> np.ndarray:
        return self._value(obs).numpy()

    def train(self, obs, actions, returns, lr: float, ent_coef: float | None = None) -> dict[str, float]:
        """One update; ``ent_coef``: the entropy bonus's weight for it (default: the config's)."""
        ent_coef = self.cfg.ent_coef if ent_coef is None else ent_coef
        out = self._train(obs, actions.astype(np.int32), returns.astype(np.float32), np.float32(lr),
                          np.float32(ent_coef))
        return {k: float(v) for k, v in out.items()}

    # --- state for checkpoints -----------------------------------------------------------------
    def get_state(self) -> dict[str, np.ndarray]:
        state = {f"weight_{i}": np.asarray(w) for i, w in enumerate(self.model.get_weights())}
        state.update({f"rms_{i}": ms.numpy() for i, ms in enumerate(self.mean_square)})
        state["rng_state"] = self.rng.state.numpy()
        return state

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """A checkpoint's state (``get_state``'s arrays); CheckpointError, and nothing changed, if it
        does not fit this network (another env's, say)."""
        from drlhp.policy.checkpoint import CheckpointError

        here = {k: tuple(np.shape(v)) for k, v in self.get_state().items()}
        if "rms_0" not in state:  # weights only (a milestone or models/: float16, no optimizer state)
            here = {k: v for k, v in here.items() if k.startswith("weight_")}
        extra = [k for k in state if k.startswith(("weight_", "rms_")) and k not in here]
        for key in [*here, *extra]:  # weights first, in the network's order
            there = tuple(np.shape(state[key])) if key in state else None
            if there != here.get(key):
                raise CheckpointError(
                    "the policy checkpoint does not fit this policy network: "
                    + (f"no {key} in it" if there is None else f"{key} is {there} in it, "
                       + ("absent here" if key not in here else f"{here[key]} here")))
        n_weights = len(self.model.get_weights())
        weights = [np.asarray(state[f"weight_{i}"], np.float32) for i in range(n_weights)]
        self.model.set_weights(weights)
        if "rms_0" not in state:
            return
        for i, ms in enumerate(self.mean_square):
            ms.assign(state[f"rms_{i}"])
        self.rng.reset(state["rng_state"])

    def weights_only(self) -> dict[str, np.ndarray]:
        """The network's weights in float16, nothing else: a milestone copy or a model for models/
        (about half the size of a float32 checkpoint's weights, a quarter of a whole checkpoint)."""
        return {f"weight_{i}": np.asarray(w, np.float16) for i, w in enumerate(self.model.get_weights())}


def build_policy(cfg: RunConfig, env, a2c: A2CConfig | None = None) -> A2CPolicy:
    """The policy for ``env`` (a VecEnv) under ``cfg``, after setting this process's TensorFlow threads
    and seeds: the one way the training modes, watch and the policy process make it."""
    from drlhp.processes.cpu import choose_policy_precision
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(cfg.tf_intra_threads, cfg.tf_inter_threads, seed=cfg.seed)
    return A2CPolicy(env.obs_shape, env.n_actions, a2c or cfg.a2c, seed=cfg.seed, obs_dtype=env.obs_dtype,
                     bfloat16=choose_policy_precision(cfg.policy_bfloat16).bfloat16)


def build_player(cfg: RunConfig, env) -> A2CPolicy:
    """What watch plays a discrete-action checkpoint with, in one env (``env``): A2C's policy, sampling its actions.
    Discrete PPO's checkpoints hold the same network (drlhp.policy.nets.policy_network): it plays either."""
    return build_policy(cfg, env, replace(cfg.a2c, n_envs=1))
