"""The reward predictor: an ensemble of networks r(o) -> one reward per step, trained on preferences.

Christiano et al. (2017), section 2.2.3 and appendix A:
  * P[s1 > s2] = exp(sum r(s1)) / (exp(sum r(s1)) + exp(sum r(s2)))  (Bradley-Terry on summed rewards),
    mixed with "a 10% chance that the human responds uniformly at random":
        P' = 0.9 * P + 0.05;   loss = -(mu1 log P'[s1 > s2] + mu2 log P'[s2 > s1])
  * an ensemble, each member trained on its own bootstrap sample of the preferences (here: an online
    bootstrap, each preference weighted Poisson(1) per member, set when it arrives);
  * L2 regularization adapted so the validation loss stays 1.1 to 1.5 times the training loss;
  * each member's output normalized (mean 0, standard deviation 0.05 over recent segments), then
    the members averaged: that is the reward the policy gets.
  * images: "4 convolutional layers of size 7x7, 5x5, 3x3, 3x3 with strides 3, 2, 1, 1, each having
    16 filters, with leaky ReLU (alpha = 0.01), followed by a fully connected layer of size 64 and
    then a scalar output. All convolutional layers use batch norm and dropout with alpha = 0.5".

The networks (a CNN for images, MLPs for vectors, uint8 or float32): drlhp.reward.networks.

Both segments of a pair go through the network in ONE call, concatenated on the batch axis, so they
share the batch-norm statistics, and ``PairedDropout`` applies the same dropout mask to frame t of
segment 1 and frame t of segment 2 (the original reproduction ran them as two calls with different
masks: a difference between the two segments' rewards then partly measures dropout noise).
"""
from __future__ import annotations

import numpy as np
import tensorflow as tf

from drlhp.config.reward import RewardConfig
from drlhp.processes.cpu import choose_precision
from drlhp.processes.messages import RewardWeights
from drlhp.reward.networks import reward_network
from drlhp.reward.norm import RewardNorm


def preference_loss(sum_r1, sum_r2, mu, random_answer_prob: float = 0.1):
    """Bradley-Terry cross-entropy with a ``random_answer_prob`` chance of a uniform answer.
    sum_r1, sum_r2: (B,) summed per-step rewards; mu: (B, 2). Returns the per-pair loss (B,)."""
    p1 = tf.sigmoid(sum_r1 - sum_r2)  # = exp(R1) / (exp(R1) + exp(R2))
    p1 = (1.0 - random_answer_prob) * p1 + random_answer_prob / 2.0
    return -(mu[:, 0] * tf.math.log(p1) + mu[:, 1] * tf.math.log(1.0 - p1))


def _accuracy_counts(sum_r1, sum_r2, mu):
    """(correct, counted): pairs with a strict label whose larger predicted sum is the preferred one."""
    strict = tf.not_equal(mu[:, 0], mu[:, 1])
    correct = tf.logical_and(strict, tf.equal(sum_r1 > sum_r2, mu[:, 0] > mu[:, 1]))
    return tf.reduce_sum(tf.cast(correct, tf.float32)), tf.reduce_sum(tf.cast(strict, tf.float32))


class RewardEnsemble:
    """n_members reward networks, their compiled train / evaluate / predict steps and Adam states.

    Observations are uint8 (images, quantized vectors) or, with ``obs_dtype=np.float32``, float32 vectors (D,)
    (a Box-action env's observation and action): then each member normalizes its input itself, with the
    statistics ``set_input_norm`` gives it (drlhp.reward.networks).

    predict(obs (B, *obs_shape)) -> (n_members, B) raw per-step rewards (inference mode)
    reward(obs) -> (B,) the policy's reward: members normalized with the published stats, averaged
    train_step(s1, s2 (M, B, T, ...), mu (M, B, 2), l2 (M,)) -> per-member loss, accuracy
    evaluate(s1, s2 (B, T, ...), mu (B, 2)) -> per-member loss (without L2), accuracy (inference mode)
    evaluate_pairs(s1, s2, mu, member=None) -> per pair: loss and correct, of every member (or one member:
        its own bootstrap pairs go through it alone), in chunks of at most EVAL_FRAMES frames
    """

    EVAL_FRAMES = 3200  # frames per evaluation call: 256 pairs of 5-step clips in one, 64 of 25-step clips

    def __init__(self, obs_shape: tuple, cfg: RewardConfig, seed: int, obs_dtype=np.uint8):
        self.cfg = cfg
        self.obs_shape = tuple(obs_shape)
        self.obs_dtype = np.dtype(obs_dtype)
        if self.obs_dtype not in (np.uint8, np.float32) or (self.obs_dtype == np.float32 and len(self.obs_shape) != 1):
            raise ValueError(f"RewardEnsemble takes uint8 observations or float32 vectors (D,), not "
                             f"{self.obs_dtype} {self.obs_shape}")
        self.n_members = cfg.n_members
        self.precision = choose_precision(cfg.bfloat16, cfg.onednn)
        if self.obs_dtype == np.float32:
            self.precision = self.precision.for_mlp()  # the float MLP computes in float32 whatever the setting
        self.members = [reward_network(self.obs_shape, seed * 1000 + 37 * m, cfg.dropout, cfg.batchnorm,
                                       cfg.dropout_layers, self.precision.bfloat16, self.obs_dtype)
                        for m in range(self.n_members)]
        self.norm = RewardNorm(self.n_members, cfg.norm_std, cfg.clip)
        self.version = 0
        self._adam = [[(tf.Variable(tf.zeros_like(v), trainable=False), tf.Variable(tf.zeros_like(v), trainable=False))
                       for v in model.trainable_variables] for model in self.members]
        self._adam_t = tf.Variable(0.0, trainable=False)
        dtype = tf.as_dtype(self.obs_dtype)
        obs_spec = tf.TensorSpec((None, *self.obs_shape), dtype)
        pairs_spec = tf.TensorSpec((self.n_members, None, None, *self.obs_shape), dtype)
        self._predict = tf.function(self._predict_graph, autograph=False, input_signature=[obs_spec])
        self._train = tf.function(self._train_graph, autograph=False, input_signature=[
            pairs_spec, pairs_spec, tf.TensorSpec((self.n_members, None, 2), tf.float32),
            tf.TensorSpec((self.n_members,), tf.float32)])
        seg_spec = tf.TensorSpec((None, None, *self.obs_shape), dtype)
        eval_spec = [seg_spec, seg_spec, tf.TensorSpec((None, 2), tf.float32)]
        self._evaluate = tf.function(lambda s1, s2, mu: self._evaluate_graph(s1, s2, mu, self.members),
                                     autograph=False, input_signature=eval_spec)
        self._evaluate_member = [tf.function(lambda s1, s2, mu, model=model: self._evaluate_graph(s1, s2, mu, [model]),
                                             autograph=False, input_signature=eval_spec) for model in self.members]

    # --- graphs --------------------------------------------------------------------------------
    def _predict_graph(self, obs):
        return tf.stack([m(obs, training=False) for m in self.members])

    def _pair_sums(self, model, s1, s2, training: bool):
        """Summed rewards of both segments from ONE call on [s1 frames; s2 frames]."""
        b, t = tf.shape(s1)[0], tf.shape(s1)[1]
        frames = tf.concat([tf.reshape(s1, (-1, *self.obs_shape)), tf.reshape(s2, (-1, *self.obs_shape))], 0)
        r = tf.reshape(model(frames, training=training), (2, b, t))
        sums = tf.reduce_sum(r, axis=2)
        return sums[0], sums[1]

    def _train_graph(self, s1, s2, mu, l2):
        cfg = self.cfg
        self._adam_t.assign_add(1.0)
        lr_t = cfg.lr * tf.sqrt(1.0 - 0.999 ** self._adam_t) / (1.0 - 0.9 ** self._adam_t)
        losses, accs = [], []
        for m, model in enumerate(self.members):
            variables = model.trainable_variables
            with tf.GradientTape() as tape:
                r1, r2 = self._pair_sums(model, s1[m], s2[m], training=True)
                loss = tf.reduce_mean(preference_loss(r1, r2, mu[m], cfg.random_answer_prob))
                reg = tf.add_n([tf.reduce_sum(tf.square(v)) for v in variables if "kernel" in v.path])
                total = loss + l2[m] * reg
            grads = tape.gradient(total, variables)
            for v, g, (m1, m2) in zip(variables, grads, self._adam[m]):  # Adam (Kingma & Ba, 2015)
                m1.assign(0.9 * m1 + 0.1 * g)
                m2.assign(0.999 * m2 + 0.001 * tf.square(g))
                v.assign_sub(lr_t * m1 / (tf.sqrt(m2) + 1e-8))
            correct, counted = _accuracy_counts(r1, r2, mu[m])
            losses.append(loss)
            accs.append(correct / tf.maximum(counted, 1.0))
        return tf.stack(losses), tf.stack(accs)

    def _evaluate_graph(self, s1, s2, mu, members):
        """Per member of ``members`` and pair: loss (M, B) and whether the strict label was predicted (M, B)."""
        losses, corrects = [], []
        strict = tf.not_equal(mu[:, 0], mu[:, 1])
        for model in members:
            r1, r2 = self._pair_sums(model, s1, s2, training=False)
            losses.append(preference_loss(r1, r2, mu, self.cfg.random_answer_prob))
            corrects.append(tf.logical_and(strict, tf.equal(r1 > r2, mu[:, 0] > mu[:, 1])))
        return tf.stack(losses), tf.stack(corrects)

    # --- numpy-facing API ----------------------------------------------------------------------
    def predict(self, obs: np.ndarray) -> np.ndarray:
        return self._predict(obs).numpy()

    def reward(self, obs: np.ndarray) -> np.ndarray:
        return self.norm.apply(self.predict(obs))

    @property
    def norm_mean(self) -> np.ndarray:
        return self.norm.mean

    @property
    def norm_std(self) -> np.ndarray:
        """Each member's measured standard deviation (not the target, RewardConfig.norm_std)."""
        return self.norm.std

    def preference_probs(self, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        """(n_members, B) each member's P[s1 > s2] for segments (B, T, *obs_shape) (inference mode)."""
        b, t = s1.shape[:2]
        r = self.predict(np.concatenate([s1.reshape(-1, *self.obs_shape), s2.reshape(-1, *self.obs_shape)]))
        sums = r.reshape(self.n_members, 2, b, t).sum(axis=3).astype(np.float64)
        # sigmoid(sum1 - sum2) as 0.5 (1 + tanh(d / 2)): no overflow where long clips' sums differ by hundreds
        return 0.5 * (1.0 + np.tanh((sums[:, 0] - sums[:, 1]) / 2.0))

    def train_step(self, s1, s2, mu, l2) -> tuple[np.ndarray, np.ndarray]:
        losses, accs = self._train(s1, s2, np.asarray(mu, np.float32), np.asarray(l2, np.float32))
        return losses.numpy(), accs.numpy()

    def evaluate_pairs(self, s1, s2, mu, batch_size: int | None = None,
                       member: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per member and pair (inference mode): loss (M, B) without L2, and correct (M, B) bool
        (False for ties), in chunks of ``batch_size`` pairs (default: EVAL_FRAMES frames). ``member``: that
        member alone (M = 1), e.g. on the pairs of its own bootstrap sample."""
        n = 1 if member is not None else self.n_members
        evaluate = self._evaluate if member is None else self._evaluate_member[member]
        if batch_size is None:  # s1: (B, T, ...)
            batch_size = max(1, self.EVAL_FRAMES // (2 * (np.shape(s1)[1] if np.ndim(s1) > 1 else 1)))
        losses, corrects = [], []
        for i in range(0, len(mu), batch_size):
            l_, c_ = evaluate(s1[i:i + batch_size], s2[i:i + batch_size], np.asarray(mu[i:i + batch_size], np.float32))
            losses.append(l_.numpy())
            corrects.append(c_.numpy())
        if not losses:
            return np.zeros((n, 0)), np.zeros((n, 0), bool)
        return np.concatenate(losses, axis=1), np.concatenate(corrects, axis=1)

    def evaluate(self, s1, s2, mu, batch_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Mean loss and accuracy (over strict labels) per member over all the given pairs."""
        loss, correct = self.evaluate_pairs(s1, s2, mu, batch_size)
        strict = np.asarray(mu)[:, 0] != np.asarray(mu)[:, 1]
        acc = correct[:, strict].mean(axis=1) if strict.any() else np.full(self.n_members, np.nan)
        return loss.mean(axis=1) if loss.shape[1] else np.zeros(self.n_members), acc

    def update_normalization(self, obs: np.ndarray, momentum: float = 1.0) -> None:
        """Move each member's mean and standard deviation of its raw output towards their values over
        ``obs`` (recent frames): new = (1 - momentum) * old + momentum * measured (variance mixed, not
        std). momentum 1 replaces them; a small one keeps the policy's reward on one scale while the
        weights change, instead of jumping at every publication. The first call always replaces
        (drlhp.reward.norm.RewardNorm.update)."""
        self.norm.update(self.predict(obs), momentum)

    @property
    def norm_set(self) -> bool:
        """Whether the normalization statistics were ever set (else the next update replaces them)."""
        return self.norm.is_set

    @property
    def has_input_norm(self) -> bool:
        """Whether the members normalize their input themselves (float32 vectors; uint8 is scaled by 1/255)."""
        return self.obs_dtype == np.float32

    def set_input_norm(self, mean: np.ndarray, std: np.ndarray, keep_function: bool = False) -> None:
        """Every member's per-feature input normalization: (x - mean) / max(std, INPUT_STD_FLOOR), clipped to
        +-INPUT_CLIP (drlhp.reward.networks). Weights of the members: published and checkpointed with them.
        ``keep_function``: each member's first dense layer is rescaled to compute the same rewards as before
        (InputNorm.set), for a trained member; False for the first set, before any training."""
        if not self.has_input_norm:
            raise ValueError(f"a {self.obs_dtype} reward network has no input normalization (it scales by 1/255)")
        mean, std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if mean.shape != self.obs_shape or std.shape != self.obs_shape:
            raise ValueError(f"input normalization of shape {mean.shape}/{std.shape}, want {self.obs_shape}")
        for model in self.members:
            norm = model.get_layer("input_norm")
            follow = model.layers[model.layers.index(norm) + 1] if keep_function else None
            norm.set(mean, std, follow)

    def input_norm(self) -> tuple[np.ndarray, np.ndarray]:
        """Member 0's input normalization (mean, std), as set (all members hold the same)."""
        layer = self.members[0].get_layer("input_norm")
        return np.asarray(layer.mean.numpy()), np.asarray(layer.std.numpy())

    # --- weights across processes, and checkpoints ---------------------------------------------
    def publish(self) -> RewardWeights:
        self.version += 1
        return RewardWeights(self.version, tuple(tuple(np.asarray(w) for w in m.get_weights()) for m in self.members),
                             self.norm_mean.copy(), self.norm_std.copy()).check()

    def load_weights(self, weights: RewardWeights) -> None:
        if len(weights.weights) != self.n_members:
            raise ValueError(f"reward weights have {len(weights.weights)} members, this ensemble {self.n_members}")
        for model, w in zip(self.members, weights.weights):
            model.set_weights(list(w))
        self.norm.load(weights.norm_mean, weights.norm_std)
        self.version = weights.version

    def get_state(self) -> dict[str, np.ndarray]:
        """Weights, normalization and Adam state, as plain arrays (a checkpoint)."""
        state = {"norm_mean": self.norm_mean, "norm_std": self.norm_std, "adam_t": self._adam_t.numpy()}
        for m, model in enumerate(self.members):
            for i, w in enumerate(model.get_weights()):
                state[f"m{m}_w{i}"] = np.asarray(w)
            for i, (m1, m2) in enumerate(self._adam[m]):
                state[f"m{m}_adam1_{i}"], state[f"m{m}_adam2_{i}"] = m1.numpy(), m2.numpy()
        return state

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        for m, model in enumerate(self.members):
            model.set_weights([state[f"m{m}_w{i}"] for i in range(len(model.get_weights()))])
            for i, (m1, m2) in enumerate(self._adam[m]):
                m1.assign(state[f"m{m}_adam1_{i}"])
                m2.assign(state[f"m{m}_adam2_{i}"])
        self._adam_t.assign(float(state["adam_t"]))
        self.norm.load(state["norm_mean"], state["norm_std"])


def adapt_l2(l2: np.ndarray, train_loss: np.ndarray, val_loss: np.ndarray, low: float = 1.1, high: float = 1.5,
             factor: float = 1.1, bounds: tuple[float, float] = (1e-8, 1.0)) -> np.ndarray:
    """Per member: raise L2 when validation loss > high x training loss, lower it below low x."""
    ratio = val_loss / np.maximum(train_loss, 1e-8)
    out = np.where(ratio > high, l2 * factor, np.where(ratio < low, l2 / factor, l2))
    return np.clip(out, *bounds).astype(np.float32)

