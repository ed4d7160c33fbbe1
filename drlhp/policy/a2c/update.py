"""A2C's update math: the loss, the n-step returns it is trained on, and RMSprop in two flavours. A2CPolicy
(drlhp.policy.a2c.policy) runs them in its compiled train step.

Loss (Mnih et al., 2016; OpenAI baselines' a2c):
    L = mean(A * -log pi(a|s)) - ent_coef * mean(H[pi(.|s)]) + vf_coef * mean((V(s) - R)^2)
with A = R - V(s) (no gradient through A) and R the n-step discounted return. Gradients are
clipped to a global norm of max_grad_norm and applied with RMSprop, written out here in two
flavours (``rmsprop_step``): PyTorch's (the default) and TF1's (OpenAI baselines'); see
A2CConfig.rmsprop_style for why the default is PyTorch's.
"""
from __future__ import annotations

import numpy as np
import tensorflow as tf


def discounted_returns(rewards: np.ndarray, dones: np.ndarray, last_values: np.ndarray,
                       gamma: float) -> np.ndarray:
    """n-step returns of a rollout, (T, N) arrays, time first.

    R_t = r_t + gamma * R_{t+1} * (1 - done_t), bootstrapped from V(s_T) where the episode goes on.
    ``done_t`` means the episode ended at step t, so nothing after it flows back.
    """
    returns = np.zeros_like(rewards, dtype=np.float32)
    running = last_values.astype(np.float32)
    for t in reversed(range(rewards.shape[0])):
        running = rewards[t] + gamma * running * (1.0 - dones[t])
        returns[t] = running
    return returns


def rmsprop_step(grad, mean_square, lr, decay: float, eps: float, style: str):
    """One RMSprop step without momentum: (new mean square, amount to subtract from the variable).

    tf1:   ms' = decay*ms + (1-decay)*g^2;  step = lr * g / sqrt(ms' + eps)
    torch: ms' = decay*ms + (1-decay)*g^2;  step = lr * g / (sqrt(ms') + eps)
    """
    new_ms = decay * mean_square + (1.0 - decay) * tf.square(grad)
    if style == "tf1":
        return new_ms, lr * grad / tf.sqrt(new_ms + eps)
    return new_ms, lr * grad / (tf.sqrt(new_ms) + eps)


def a2c_loss(logits, values, actions, returns, ent_coef, vf_coef: float):
    """A2C's loss on a batch (logits (B, n_actions), values (B,), actions (B,) int32, returns (B,)) and its parts:
    (loss, policy loss, value loss, mean entropy)."""
    advantages = tf.stop_gradient(returns - values)
    neg_log_prob = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
    policy_loss = tf.reduce_mean(advantages * neg_log_prob)
    probs = tf.nn.softmax(logits)
    entropy = tf.reduce_mean(-tf.reduce_sum(probs * tf.nn.log_softmax(logits), axis=-1))
    value_loss = tf.reduce_mean(tf.square(values - returns))
    loss = policy_loss - ent_coef * entropy + vf_coef * value_loss
    return loss, policy_loss, value_loss, entropy
