"""experiments/atari_runs.py: a run's row read at the budget from its own records, the CSV written atomically and
keyed by (game, arm, seed), and the table that takes only runs at the budget (or finished sooner) and names the
rest."""
import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "experiments"))
import atari_runs  # noqa: E402


def _run(tmp: Path, name: str, env: str, mode: str, steps: list[int], scores: list[float], status: str,
         labels: list[int] | None = None, algo: str = "ppo") -> Path:
    d = tmp / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"env": env, "mode": mode, "algo": algo, "seed": 3,
                                               "prefs": {"n_initial_prefs": 500, "n_labels": 9500}}))
    (d / "status.json").write_text(json.dumps({"status": status}))
    (d / "summary.json").write_text(json.dumps({"labels_given": (labels or [0])[-1]}))
    (d / "run.json").write_text(json.dumps({"sittings": [{"machine": {"cpu": "AMD EPYC"}}, {"machine": {}}]}))
    with open(d / "progress.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", atari_runs.SCORE, atari_runs.WALL])
        for i, (s, r) in enumerate(zip(steps, scores)):
            w.writerow([s, r, 3600.0 * (i + 1)])
    if labels:
        with open(d / "progress_prefs.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "prefs/labels_given"])
            w.writerows(zip(steps, labels))
    return d


def test_a_row_is_read_at_the_budget_and_the_table_leaves_out_what_has_not_reached_it(tmp_path):
    prefs = _run(tmp_path, "prefs", "BreakoutNoFrameskip-v4", "train_policy_with_preferences",
                 [2_000_000, 4_990_000, 6_000_000], [5.0, 40.0, 80.0], "stopped", labels=[3000, 6000, 7000])
    ppo = _run(tmp_path, "ppo", "BreakoutNoFrameskip-v4", "train_policy_with_original_rewards",
               [1_000_000, 5_000_000], [10.0, 100.0], "stopped")
    short = _run(tmp_path, "short", "EnduroNoFrameskip-v4", "train_policy_with_original_rewards",
                 [1_000_000, 2_000_000], [1.0, 2.0], "stopped")
    row = atari_runs.row_of(prefs, 5.0)  # the last row at or before 5M (within 1%), not the run's end
    assert row == {"game": "Breakout", "arm": "10000", "seed": 3, "labels": 6000, "timesteps": 4_990_000,
                   "status": "stopped later", "score": 40.0, "hours": 2.0, "cpu": "AMD EPYC"}
    out = tmp_path / "runs.csv"
    atari_runs.write([row, atari_runs.row_of(ppo), atari_runs.row_of(short)], out)
    atari_runs.write([atari_runs.row_of(ppo)], out)  # the same key again: replaced, not added
    rows = atari_runs.rows(out)
    assert [(r["game"], r["arm"]) for r in rows] == [("Breakout", "ppo"), ("Breakout", "10000"), ("Enduro", "ppo")]
    text, left_out = atari_runs.table(rows, 5.0)
    breakout = next(line for line in text.splitlines() if line.startswith("| Breakout"))
    assert "| 40.0 (seed 3, 6,000 labels) | 100 | 0.40 |" in breakout and "| 100 |" in breakout  # Ibarz's 100
    assert "Enduro" not in text and left_out == ["Enduro ppo seed 3: 2.00M of 5M agent steps, stopped"]


def test_a_run_the_table_does_not_hold_is_refused(tmp_path):
    a2c = _run(tmp_path, "a2c", "PongNoFrameskip-v4", "train_policy_with_original_rewards", [5_000_000], [3.0],
               "finished", algo="a2c")
    with pytest.raises(SystemExit, match="trained a2c on the score"):
        atari_runs.row_of(a2c)
    with pytest.raises(SystemExit, match="not an Atari run|no such file"):
        atari_runs.row_of(tmp_path / "nothing")


def test_the_table_queue_runs_both_arms_into_the_given_root_and_records_into_the_given_csv(tmp_path):
    """experiments/atari_table_runs.sh with a stand-in for Python that logs each call and writes a run's progress at
    5M agent steps: each game's preference arm (the preset's plain command) then its PPO arm run once into
    ATARI_RUNS_ROOT and are recorded into ATARI_CSV (a frozen worktree's code, the main checkout's runs and CSV);
    Pong's preference arm is left to H59's seeds; a run already at 5M is only recorded."""
    import os
    import re
    import subprocess

    log, root, csv_path = tmp_path / "calls.txt", tmp_path / "runs", tmp_path / "atari_runs.csv"
    stub = tmp_path / "python"
    stub.write_text(f"""#!/usr/bin/env bash
echo "$*" >> {log}
if [ "$1" = run.py ]; then
  while [ $# -gt 0 ]; do [ "$1" = --run_dir ] && {{ mkdir -p "$2"; echo 5000000,1 > "$2/progress.csv"; }}; shift; done
fi
exit 0
""")
    stub.chmod(0o755)
    done = root / "Breakout" / "ppo" / "seed-0"
    done.mkdir(parents=True)
    (done / "progress.csv").write_text("4990000,1\n")
    env = {**os.environ, "PY": str(stub), "ATARI_RUNS_ROOT": str(root), "ATARI_CSV": str(csv_path)}
    script = Path(__file__).resolve().parents[1] / "experiments" / "atari_table_runs.sh"
    subprocess.run(["bash", str(script), "1", "Breakout", "Pong"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [re.sub(r"--stop_after_hours [0-9.]+", "--stop_after_hours H", c) for c in calls if c.startswith("run.py")]
    assert runs == [  # each run gets what is left of the sitting's hours
        f"run.py --env BreakoutNoFrameskip-v4 --synthetic_prefs --seed 0 --run_dir {root}/Breakout/prefs/seed-0 "
        "--stop_at_million_timesteps 5 --stop_after_hours H --log_interval 60",
        f"run.py train_policy_with_original_rewards --env PongNoFrameskip-v4 --algo ppo --seed 0 --run_dir "
        f"{root}/Pong/ppo/seed-0 --stop_at_million_timesteps 5 --stop_after_hours H --log_interval 60"]
    records = [c for c in calls if c.startswith("experiments/atari_runs.py record")]
    assert records == [f"experiments/atari_runs.py record {root}/{game}/{arm}/seed-0 --csv {csv_path}"
                       for game, arm in (("Breakout", "prefs"), ("Breakout", "ppo"), ("Pong", "ppo"))]
