"""The committed Pong policies learned from synthetic preferences: models/pong-prefs (issue 19: one lineage, two
changes made part-way), models/pong-preset/seed-N (issue 37: the `pong` preset from scratch, unchanged) and
models/pong-5500-labels/seed-0 (issue 37's step 3: the preset with the paper's 5,500 labels). Each
record says what it reached, and each policy loads and plays Pong as `python run.py watch` replays it."""
import json
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parent.parent / "models"
# model folder -> (the return its record must show, the most labels it may have used): issue 19's +15 with at most
# 10,000 labels; issue 37's +19 (--stop_at_true_return 19) with at most 9,500; seed 2 ran to 10M agent steps without
# +19, so its end shows +15 with the preset's 10,000 (it passed +15 with 7,497: the test below)
POLICIES = {"pong-prefs": (15, 10_000), "pong-preset/seed-0": (19, 9_500), "pong-preset/seed-1": (19, 9_500),
            "pong-preset/seed-2": (15, 10_000), "pong-5500-labels/seed-0": (19, 5_500)}  # step 3: the paper's budget


@pytest.mark.parametrize("name", POLICIES)
def test_the_record_says_what_the_run_reached(name):
    model = MODELS / name
    least_return, most_labels = POLICIES[name]
    summary = json.loads((model / "summary.json").read_text())
    assert summary["env"] == "PongNoFrameskip-v4" and summary["mode"] == "train_policy_with_preferences"
    assert summary["true_return_last100"] >= least_return and summary["labels_given"] <= most_labels, summary
    config = json.loads((model / "config.json").read_text())
    assert not config["score_visible"]  # learned with the score blanked (the paper)
    assert len(list(model.glob("policy-*.npz"))) == 1
    assert sum(f.stat().st_size for f in model.rglob("*")) < 8e6  # small: float16 weights


def test_the_preset_seeds_are_the_preset_unchanged():
    """A seed of issue 37 is the `pong` preset as a user runs it: no --algo, no setting changed between sittings."""
    for model in sorted((MODELS / "pong-preset").glob("seed-*")):
        config = json.loads((model / "config.json").read_text())
        assert config["preset"] == "pong" and config["algo"] == "ppo", model
        assert f"seed-{config['seed']}" == model.name
        sittings = json.loads((model / "run.json").read_text())["sittings"]
        assert sittings and all("--resume_with_changes" not in s["command"] for s in sittings), model


def test_a_seed_that_ran_to_its_end_passed_15_within_9500_labels():
    """Issue 37's bar, read from the record: the first progress row at +15 or better (last 100 games) came while
    the labeller had given at most 9,500 labels (the labels' own log, progress_prefs.csv, at its first row at that
    step or after: an upper bound, the log being written once a minute). Seed 2's record is the one with that log."""
    import csv

    records = [m for m in sorted((MODELS / "pong-preset").glob("seed-*")) if (m / "progress_prefs.csv").exists()]
    assert records, "no seed's record has its labels' log"
    for model in records:
        with open(model / "progress.csv") as f:
            step = next(int(r["step"]) for r in csv.DictReader(f)
                        if r["policy/true_return_last100"] and float(r["policy/true_return_last100"]) >= 15)
        with open(model / "progress_prefs.csv") as f:
            given = next(int(float(r["prefs/labels_given"])) for r in csv.DictReader(f) if int(r["step"]) >= step)
        assert given <= 9_500, (model.name, step, given)


@pytest.mark.slow
@pytest.mark.parametrize("name", POLICIES)
def test_the_committed_pong_policy_wins_a_game(cli, tmp_path, name):
    watch_dir = tmp_path / "watch"
    cli("watch", "--env", "PongNoFrameskip-v4", "--load_policy_ckpt_dir", MODELS / name, "--episodes", 1,
        "--seed", 0, "--run_dir", watch_dir, check=True, timeout=900)
    watched = json.loads((watch_dir / "summary.json").read_text())
    assert watched["mode"] == "watch" and len(watched["true_returns"]) == 1
    assert watched["true_returns"][0] > 0, watched  # it wins the game (a random policy loses 21-0 or so)
