"""PPO's update math, both policies' (Box actions: drlhp.policy.ppo.policy.PPOPolicy; discrete actions:
drlhp.policy.ppo.discrete_policy.DiscretePPOPolicy): GAE, the clipped surrogate, the value loss, each action kind's
log-probability and entropy, and the hand-written Adam. PPO is the policy role's second algorithm beside A2C
(drlhp/policy/a2c/).

The paper trained its MuJoCo policies with TRPO (gamma 0.995, lambda 0.97, an entropy bonus of 0.01, 0.001 on
Swimmer, "when learning from the reward predictor"); PPO (Schulman et al. 2017) is the documented substitute:
the same trust-region idea by a clipped objective, the method CleanRL and Stable-Baselines3 run on MuJoCo.
Read against CleanRL's ``ppo_continuous_action.py`` and SB3's ``PPO``; written here in TensorFlow 2.

One update on Box actions (``PPOPolicy.learn``), on a rollout of n_steps x n_envs agent steps (discrete actions:
drlhp.policy.ppo.discrete_policy's docstring):

    r~_t      = r_t / std(R)                 reward scaling (RewardScaler: R the running discounted return)
                + gamma * V(s_final)         where an episode was cut by its time limit (truncation, not a fall:
                                             the state had a future; SB3's bootstrap)
    delta_t   = r~_t + gamma * V(s_{t+1}) (1 - done_t) - V(s_t)
    A_t       = delta_t + gamma * lambda * (1 - done_t) * A_{t+1}        GAE (Schulman et al. 2016)
    R^_t      = A_t + V(s_t)                                            the value's target
    n_epochs times, over shuffled minibatches of the rollout (one compiled step each; by default all of them
    in one compiled call, PPOConfig.fused_update):
        A     <- (A - mean A) / (std A + 1e-8)                         per minibatch
        rho   = exp(log pi(a|s) - log pi_old(a|s))
        L_pi  = -mean(min(rho A, clip(rho, 1 - eps, 1 + eps) A))       the clipped surrogate
        L_V   = 0.5 * mean((V(s) - R^)^2)
        H     = mean(sum over action dims of the Gaussian's entropy)
        L     = L_pi - ent_coef * H + vf_coef * L_V
        gradients clipped to a global norm of max_grad_norm, then Adam (PyTorch's form, eps 1e-5)

The policy: a ~ N(mu(s), diag(exp(2 log_std))), mu a 64-64 tanh MLP, log_std one free parameter per action
dimension; the value a separate 64-64 tanh MLP (drlhp.policy.ppo.network); acting runs on a numpy copy of
them (PPOPolicy's docstring says why). Observations are normalized by
their running mean and std (clipped to +-10) before both networks; the sampled action is clipped to the action
space's bounds for the env only (its log-probability is the unclipped sample's, as CleanRL and SB3 do).

``PPOPolicy`` (drlhp.policy.ppo.policy) has A2CPolicy's shape (act on observations, train on a rollout, its state as
numpy arrays for a checkpoint, its weights alone); ``RolloutCollector`` (drlhp.policy.ppo.rollout) runs it on a
gymnasium vector env; PPOTrainer (drlhp.policy.ppo.trainer) trains it, in PolicyTrainer's loop, on the env's reward
(train_policy_with_original_rewards) or the predictor's (the policy process).
Its settings: PPOConfig (drlhp.config.ppo), the flags --ppo_*.
"""
from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from drlhp.config.ppo import PPOConfig

LOG_2PI = math.log(2.0 * math.pi)


# --- formulas ------------------------------------------------------------------------------------------------
def gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, last_values: np.ndarray, gamma: float,
        lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalized advantage estimation on (T, N) arrays, time first: (advantages, value targets).

    ``dones[t]``: the episode ended at step t, so nothing after it flows back (the rewards already carry any
    truncation's bootstrap); ``last_values``: V of the observation after the rollout's last step.
    """
    T = rewards.shape[0]
    advantages = np.zeros(rewards.shape, np.float32)
    running = np.zeros(rewards.shape[1:], np.float32)
    for t in reversed(range(T)):
        next_values = last_values if t == T - 1 else values[t + 1]
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_values * not_done - values[t]
        running = delta + gamma * lam * not_done * running
        advantages[t] = running
    return advantages, (advantages + values).astype(np.float32)


def gaussian_log_prob(actions, mean, log_std):
    """log N(actions; mean, diag(exp(log_std)^2)), summed over the action dimensions: (B,)."""
    z = (actions - mean) * tf.exp(-log_std)
    return tf.reduce_sum(-0.5 * tf.square(z) - log_std - 0.5 * LOG_2PI, axis=-1)


def gaussian_entropy(log_std):
    """The diagonal Gaussian's entropy, summed over the action dimensions (a scalar: the std is state-free)."""
    return tf.reduce_sum(log_std + 0.5 * (1.0 + LOG_2PI))


def clipped_surrogate(new_log_prob, old_log_prob, advantages, clip_coef):
    """PPO's policy loss, -mean(min(rho A, clip(rho, 1-eps, 1+eps) A)), and the fraction of steps clipped."""
    ratio = tf.exp(new_log_prob - old_log_prob)
    unclipped = ratio * advantages
    clipped = tf.clip_by_value(ratio, 1.0 - clip_coef, 1.0 + clip_coef) * advantages
    loss = -tf.reduce_mean(tf.minimum(unclipped, clipped))
    clip_frac = tf.reduce_mean(tf.cast(tf.abs(ratio - 1.0) > clip_coef, tf.float32))
    return loss, clip_frac


def ppo_value_loss(values, old_values, returns, clip_coef, clip_vloss: bool):
    """The value's loss, 0.5 * mean((V(s) - R^)^2); with ``clip_vloss`` (CleanRL's and baselines' PPO2 form) the
    larger of that and the same with V(s) kept within clip_coef of the rollout's value, V_old +
    clip(V - V_old, -eps, eps)."""
    if not clip_vloss:
        return 0.5 * tf.reduce_mean(tf.square(values - returns))
    clipped = old_values + tf.clip_by_value(values - old_values, -clip_coef, clip_coef)
    return 0.5 * tf.reduce_mean(tf.maximum(tf.square(values - returns), tf.square(clipped - returns)))


def adam_update(variables, grads, adam_m, adam_v, adam_t, lr, eps: float, beta1: float = 0.9, beta2: float = 0.999):
    """One Adam step in PyTorch's form (eps added to sqrt(v_hat)) on ``variables``, its slots ``adam_m``, ``adam_v``
    and step count ``adam_t`` (tf.Variables the caller keeps: they go into its checkpoints)."""
    t = adam_t.assign_add(1.0)
    step = lr * tf.sqrt(1.0 - tf.pow(beta2, t)) / (1.0 - tf.pow(beta1, t))
    eps = eps * tf.sqrt(1.0 - tf.pow(beta2, t))  # eps added to sqrt(v_hat), as PyTorch's
    for var, grad, m, v in zip(variables, grads, adam_m, adam_v):
        m.assign(beta1 * m + (1.0 - beta1) * grad)
        v.assign(beta2 * v + (1.0 - beta2) * tf.square(grad))
        var.assign_sub(step * m / (tf.sqrt(v) + eps))


def adam_state(adam_m, adam_v, adam_t) -> dict[str, np.ndarray]:
    """Adam's slots and step count as a checkpoint's arrays (both PPOs' get_state)."""
    state = {f"adam_m_{i}": m.numpy() for i, m in enumerate(adam_m)}
    state.update({f"adam_v_{i}": v.numpy() for i, v in enumerate(adam_v)})
    state["adam_t"] = np.asarray(adam_t.numpy())
    return state


def restore_adam(state: dict, adam_m, adam_v, adam_t) -> bool:
    """Adam's slots and step count from a checkpoint's arrays; False (nothing restored) for weights only."""
    if "adam_t" not in state:
        return False
    for i, (m, v) in enumerate(zip(adam_m, adam_v)):
        m.assign(state[f"adam_m_{i}"])
        v.assign(state[f"adam_v_{i}"])
    adam_t.assign(float(state["adam_t"]))
    return True


# --- discrete actions --------------------------------------------------------------------------------------
def categorical_log_prob(logits, actions):
    """log pi(a|s) of the actions (B,) int32 under softmax(logits (B, n_actions)): (B,)."""
    return -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)


def categorical_entropy(logits):
    """Each row's entropy, -sum_a pi(a) log pi(a): (B,)."""
    log_p = tf.nn.log_softmax(logits)
    return -tf.reduce_sum(tf.exp(log_p) * log_p, axis=-1)


def ppo_discrete_loss(logits, values, actions, old_log_prob, advantages, returns, old_values, cfg: PPOConfig,
                      ent_coef):
    """PPO's loss on a minibatch of a categorical policy (advantages as given: normalize them first) and its
    figures: (loss, policy loss, value loss, mean entropy, approx KL, clip fraction)."""
    new_log_prob = categorical_log_prob(logits, actions)
    policy_loss, clip_frac = clipped_surrogate(new_log_prob, old_log_prob, advantages, cfg.clip_coef)
    value_loss = ppo_value_loss(values, old_values, returns, cfg.clip_coef, cfg.clip_vloss)
    entropy = tf.reduce_mean(categorical_entropy(logits))
    loss = policy_loss - ent_coef * entropy + cfg.vf_coef * value_loss
    log_ratio = new_log_prob - old_log_prob
    approx_kl = tf.reduce_mean(tf.exp(log_ratio) - 1.0 - log_ratio)  # Schulman's low-variance estimator
    return loss, policy_loss, value_loss, entropy, approx_kl, clip_frac
