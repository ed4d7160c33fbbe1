"""The committed Pong policy learned from synthetic preferences (models/pong-prefs, issue 19): its record says
what it reached, and it loads and plays Pong as `python run.py watch` replays it."""
import json
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parent.parent / "models" / "pong-prefs"


def test_the_record_says_plus_15_with_at_most_10000_labels():
    summary = json.loads((MODEL / "summary.json").read_text())
    assert summary["env"] == "PongNoFrameskip-v4" and summary["mode"] == "train_policy_with_preferences"
    assert summary["true_return_last100"] >= 15 and summary["labels_given"] <= 10_000, summary
    config = json.loads((MODEL / "config.json").read_text())
    assert not config["score_visible"]  # learned with the score blanked (the paper)
    assert sum(f.stat().st_size for f in MODEL.rglob("*")) < 8e6  # small: float16 weights


@pytest.mark.slow
def test_the_committed_pong_policy_wins_a_game(cli, tmp_path):
    watch_dir = tmp_path / "watch"
    cli("watch", "--env", "PongNoFrameskip-v4", "--load_policy_ckpt_dir", MODEL, "--episodes", 1, "--seed", 0,
        "--run_dir", watch_dir, check=True, timeout=900)
    watched = json.loads((watch_dir / "summary.json").read_text())
    assert watched["mode"] == "watch" and len(watched["true_returns"]) == 1
    assert watched["true_returns"][0] > 0, watched  # it wins the game (a random policy loses 21-0 or so)
