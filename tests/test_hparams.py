"""A tiny MovingDot run's TensorBoard events, read back: Stable-Baselines3's metric names beside drlhp's,
and the run's config and final figures in the HParams tab (drlhp/records/metrics.py, drlhp/policy/loop.py)."""
import json


def test_sb3_names_and_hparams_land_in_tensorboard(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.run.pipeline import run

    run_dir = tmp_path / "run"
    args = ["train_policy_with_original_rewards", "--env", "MovingDot-v0", "--seed", "2", "--million_timesteps",
            "0.0016", "--n_envs", "2", "--log_interval", "0", "--run_dir", str(run_dir)]
    assert run(config_from_args(build_parser().parse_args(args)), ["run.py", *args]) == 0  # 160 updates
    summary = json.loads((run_dir / "summary.json").read_text())

    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    scalars = set(acc.Tags()["scalars"])
    assert {"rollout/ep_rew_mean", "rollout/ep_len_mean", "rollout/success_rate", "train/entropy_loss",
            "time/fps", "policy/episode_length_last100", "policy/true_return_last100"} <= scalars
    last = acc.Scalars("rollout/ep_rew_mean")[-1]
    assert last.step == summary["timesteps"] == 1600
    assert abs(last.value - summary["true_return_last100"]) < 1e-4
    assert acc.Scalars("train/entropy_loss")[-1].value == -acc.Scalars("policy/entropy")[-1].value
    assert acc.Scalars("rollout/ep_len_mean")[-1].value == acc.Scalars("policy/episode_length_last100")[-1].value

    content = acc.PluginTagToContent("hparams")
    assert {"_hparams_/experiment", "_hparams_/session_start_info"} <= set(content)
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["env"].string_value == "MovingDot-v0"
    assert start.hparams["a2c.n_envs"].number_value == 2 and start.hparams["seed"].number_value == 2
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    assert {m.name.tag for m in experiment.metric_infos} == {
        "hparams/true_return_last100", "hparams/success_rate_last100", "hparams/timesteps"}
    final = {tag: acc.Tensors(tag)[-1] for tag in ("hparams/true_return_last100", "hparams/timesteps")}
    assert final["hparams/timesteps"].step == 1600
    import tensorflow as tf

    assert float(tf.make_ndarray(final["hparams/timesteps"].tensor_proto)) == 1600.0
    assert abs(float(tf.make_ndarray(final["hparams/true_return_last100"].tensor_proto))
               - summary["true_return_last100"]) < 1e-4
