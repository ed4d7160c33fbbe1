"""The policy's CNN torso in bfloat16 (--policy_bfloat16 auto|on|off): the rule on the CPU's flags (float32 on
AVX2-only CPUs, said at start), what the network computes in, that its weights and checkpoints stay float32 and
move between the two precisions, and that its update stays close to float32's on the same batch."""
import dataclasses
import shlex
from types import SimpleNamespace

import numpy as np
import pytest

from drlhp.config import RunConfig
from drlhp.config.cli import build_parser, config_from_args
from drlhp.processes.cpu import KernelChoice, choose_policy_precision, cpu_flags

AVX2_ONLY = {"fpu", "sse2", "avx", "avx2", "fma"}
ZEN4 = {"avx2", "fma", "avx512f", "avx512_bf16"}
SAPPHIRE = {"avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}
EIGEN = KernelChoice("default", False, "Eigen", "TensorFlow's default, with TF_ENABLE_ONEDNN_OPTS=0")
ONEDNN = KernelChoice("default", True, "oneDNN", "TensorFlow's default on x86-64")


def test_auto_takes_bfloat16_only_where_the_cpu_computes_it():
    assert [choose_policy_precision("auto", f, ONEDNN).bfloat16 for f in (AVX2_ONLY, ZEN4, SAPPHIRE, set())] == [
        False, True, True, False]
    avx2 = choose_policy_precision("auto", AVX2_ONLY, ONEDNN)
    assert avx2.describe() == "float32 convolutions (auto: the CPU has no AVX512_BF16 or AMX)"
    eigen = choose_policy_precision("auto", SAPPHIRE, EIGEN)
    assert not eigen.bfloat16 and "Eigen" in eigen.reason
    for flags in (AVX2_ONLY, SAPPHIRE):  # on and off override the CPU
        assert choose_policy_precision("on", flags, ONEDNN).bfloat16
        assert not choose_policy_precision("off", flags, ONEDNN).bfloat16
    with pytest.raises(ValueError, match="policy_bfloat16"):
        choose_policy_precision("fast", SAPPHIRE, ONEDNN)


def test_the_flag_is_auto_by_default_and_refuses_other_words():
    parser = build_parser()
    assert config_from_args(parser.parse_args(["--env", "MovingDot-v0"])).policy_bfloat16 == "auto"
    assert config_from_args(parser.parse_args(shlex.split("--env MovingDot-v0 --policy_bfloat16 off"))
                            ).policy_bfloat16 == "off"
    with pytest.raises(SystemExit):
        parser.parse_args(["--env", "MovingDot-v0", "--policy_bfloat16", "maybe"])


def test_the_start_line_says_what_the_policy_computes_in(monkeypatch):
    """An AVX2-only CPU: float32, said in the run's kernels line; one with AVX512_BF16: bfloat16; an MLP policy
    (vector observations): nothing said, it computes in float32 always."""
    from drlhp.processes import cpu
    from drlhp.run import pipeline

    cfg = RunConfig(env="PongNoFrameskip-v4", mode="train_policy_with_original_rewards")
    for flags, word in ((AVX2_ONLY, "float32"), (SAPPHIRE, "bfloat16")):
        monkeypatch.setattr(cpu, "cpu_flags", lambda text=None, f=flags: set(f))
        monkeypatch.setattr(cpu, "default_kernels", lambda *a, **k: ONEDNN)
        kernels = pipeline.tf_kernels(cfg)
        assert kernels["policy_precision"]["bfloat16"] is (word == "bfloat16")
        assert f"; the policy's {word} convolutions (auto: " in pipeline.tf_kernels_line(kernels)
    assert "policy_precision" not in pipeline.tf_kernels(dataclasses.replace(cfg, env="CartPole-v1"))


def _policies(algo: str):
    """The same network (same seed: same float32 weights) in float32 and in bfloat16."""
    from drlhp.config.a2c import A2CConfig
    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.a2c.policy import A2CPolicy
    from drlhp.policy.ppo.discrete_policy import DiscretePPOPolicy

    if algo == "a2c":
        return [A2CPolicy((84, 84, 4), 3, A2CConfig(n_envs=4, n_steps=2), seed=1, bfloat16=b) for b in (False, True)]
    cfg = PPOConfig(n_envs=4, n_steps=8, n_epochs=1, n_minibatches=2)
    return [DiscretePPOPolicy((84, 84, 4), 3, cfg, seed=1, bfloat16=b) for b in (False, True)]


@pytest.mark.parametrize("algo", ["a2c", "ppo"])
def test_the_torso_computes_in_bfloat16_and_keeps_float32_weights(algo):
    f32, b16 = _policies(algo)
    kinds = {layer.name: layer.dtype_policy.name for layer in b16.model.layers}
    assert [kinds[n] for n in kinds if n.startswith(("conv2d", "dense"))] == ["mixed_bfloat16"] * 4
    assert kinds["logits"] == kinds["value"] == "float32"
    assert all(v.dtype == "float32" for v in b16.model.weights)
    assert all(layer.dtype_policy.name == "float32" for layer in f32.model.layers)
    for a, b in zip(f32.model.get_weights(), b16.model.get_weights()):
        np.testing.assert_array_equal(a, b)
    obs = np.random.default_rng(0).integers(0, 255, (4, 84, 84, 4), dtype=np.uint8)
    v32, v16 = f32.value(obs), b16.value(obs)
    assert v16.dtype == np.float32
    np.testing.assert_allclose(v16, v32, atol=0.05 * max(1e-3, np.abs(v32).max()) + 1e-3)
    # a checkpoint moves both ways: the same float32 arrays
    state = b16.get_state()
    assert all(state[k].dtype == np.float32 for k in state if k.startswith("weight_"))
    f32.set_state(state)
    for a, b in zip(f32.model.get_weights(), b16.model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_ppo_update_in_bfloat16_moves_the_weights_as_float32_does():
    """One PPO update on the same batch from the same weights: the change of the weights in bfloat16 points the
    way float32's does (cosine over all weights above 0.9; bench/policy_gradients.py measures it on Pong's batches)."""
    from drlhp.policy.ppo.batches import DiscreteRollout

    f32, b16 = _policies("ppo")
    rng = np.random.default_rng(3)
    t, n = 8, 4
    zeros = np.zeros((t, n), np.float32)
    rollout = DiscreteRollout(
        b_obs=rng.integers(0, 255, (t * n, 84, 84, 4), dtype=np.uint8), b_actions=rng.integers(0, 3, t * n, np.int32),
        rewards=rng.normal(size=(t, n)).astype(np.float32), true_rewards=zeros,
        next_obs=np.zeros((t, n, 84, 84, 4), np.uint8), dones=zeros, values=zeros,
        log_probs=np.full((t, n), -np.log(3), np.float32), last_values=np.zeros(n, np.float32), cuts=zeros)
    before = [w.copy() for w in f32.model.get_weights()]
    for p in (f32, b16):
        p.rng = np.random.default_rng(0)  # the same minibatches
        p.learn(rollout, 1e-3)
    d32 = np.concatenate([(w - b).ravel() for w, b in zip(f32.model.get_weights(), before)])
    d16 = np.concatenate([(w - b).ravel() for w, b in zip(b16.model.get_weights(), before)])
    cosine = d32 @ d16 / (np.linalg.norm(d32) * np.linalg.norm(d16))
    assert np.linalg.norm(d32) > 0 and cosine > 0.9, cosine


def test_this_machine_chooses_by_its_own_flags():
    """The rule run on this machine's /proc/cpuinfo (whatever it is): bfloat16 exactly where the flags say."""
    chosen = choose_policy_precision("auto", cpu_flags(), ONEDNN)
    assert chosen.bfloat16 == bool({"avx512_bf16", "amx_bf16"} & cpu_flags())
    assert SimpleNamespace(**chosen.to_dict()).setting == "auto"
