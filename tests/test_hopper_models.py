"""The committed Hopper models (issue 39): models/hopper-backflip, the backflip a scripted person taught through the
labelling page (issue 40, step 6: 900 labels, 2M agent steps), and models/hopper-prefs, a run of the `mujoco` preset
from 1,400 synthetic labels as it was before H34 (random pairs: arm 1400-random, seed 1). Each record says how it was
taught, and each policy plays as `python run.py watch` replays it."""
import json
from pathlib import Path

MODELS = Path(__file__).resolve().parent.parent / "models"
BACKFLIP = MODELS / "hopper-backflip"
PREFS = MODELS / "hopper-prefs"


def test_the_backflip_record_says_a_person_taught_it_through_the_page():
    summary = json.loads((BACKFLIP / "summary.json").read_text())
    assert summary["env"] == "Hopper-v5" and summary["mode"] == "train_policy_with_preferences"
    assert summary["labels_given"] <= 1_000 and summary["timesteps"] >= 2_000_000, summary
    config = json.loads((BACKFLIP / "config.json").read_text())
    assert config["prefs"]["labeller"] == "web" and config["ppo"]["fall_rule"] == "none", config
    assert len(list(BACKFLIP.glob("policy-*.npz"))) == 1
    assert sum(f.stat().st_size for f in BACKFLIP.rglob("*")) < 2e6  # small: float16 weights


def test_the_committed_backflip_turns_over():
    """It plays as `watch` plays it (the policy's mean action, numpy only; `watch` also draws the video, minutes of
    software rendering, which this leaves out) and is measured by the goal's own measure, as `watch` reports it."""
    from drlhp.policy.checkpoint import load_policy_checkpoint
    from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy
    from drlhp.policy.watch import play_box_episodes
    from envs.fixed_length import any_vector_env
    from pref_interface.goal_oracle import measure_of
    from pref_interface.goals import hopper_backflip

    arrays, meta = load_policy_checkpoint(BACKFLIP)
    assert meta["timesteps"] >= 2_000_000
    env = any_vector_env("Hopper-v5", 1, **hopper_backflip.env_kwargs).envs[0]
    policy = BoxMeanPolicy(arrays, env.observation_space.shape[0], env.action_space.low, env.action_space.high, 10.0)
    _, _, observations = play_box_episodes(env, policy, 1, seed=100)
    name, measure = measure_of(hopper_backflip)
    # full backward turns in a 1,000-step episode: the page's run turned 9 times on this seed (6-9 on seeds 100-104,
    # `watch --episodes 5 --seed 100`); a policy that stands or hops turns 0 times
    assert name == "backflips" and len(observations[0]) == 1_001
    assert measure(observations[0]) >= 3


def test_the_prefs_record_is_a_table_run_of_1400_synthetic_labels():
    summary = json.loads((PREFS / "summary.json").read_text())
    assert summary["env"] == "Hopper-v5" and summary["mode"] == "train_policy_with_preferences"
    assert 1_350 <= summary["labels_given"] <= 1_400 and summary["timesteps"] >= 1_000_000, summary
    config = json.loads((PREFS / "config.json").read_text())
    assert config["prefs"]["labeller"] == "oracle" and config["prefs"]["oracle_mistake_rate"] == 0, config
    assert config["prefs"]["query_selection"] == "random", config  # before H34
    assert config["ppo"]["fall_rule"] == "reset", config
    assert len(list(PREFS.glob("policy-*.npz"))) == 1 and (PREFS / "reward_predictor.npz").exists()
    assert sum(f.stat().st_size for f in PREFS.rglob("*")) < 1e6  # small: float16 weights


def test_the_committed_prefs_policy_hops():
    """One fixed-length episode (the table's, under the reset rule), the policy's mean action: its return is the
    env's reward summed, as `watch` reports it. The run's last 100 episodes averaged 2,055 (about 7 falls of 100 each);
    this checkpoint played 2,032 on seed 100. A random policy falls about 46 times (near -3,800); a policy that only
    stands still is paid its healthy reward, 1 a step, less its falls: at most 1,000."""
    from drlhp.policy.checkpoint import load_policy_checkpoint
    from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy
    from drlhp.policy.watch import play_box_episodes
    from envs.fixed_length import any_vector_env

    arrays, meta = load_policy_checkpoint(PREFS)
    assert meta["timesteps"] >= 1_000_000
    env = any_vector_env("Hopper-v5", 1).envs[0]
    policy = BoxMeanPolicy(arrays, env.observation_space.shape[0], env.action_space.low, env.action_space.high, 10.0)
    _, returns, observations = play_box_episodes(env, policy, 1, seed=100)
    assert len(observations[0]) == 1_001
    assert returns[0] >= 1_500, returns
