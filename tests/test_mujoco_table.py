"""docs/mujoco_runs.csv and its scripts (issue 38): mujoco_record.py reads a run directory into a row (and refuses
an arm that does not fit the run), rows are added or replaced by (task, arm, seed), and mujoco_table.py builds the
table from the file alone: it refuses an unfinished or short run, and its ratio and Reacher's normalized score
match hand-computed values, with every cell's seeds named."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))

import mujoco_record  # noqa: E402
import mujoco_table  # noqa: E402
from mujoco_runs_csv import COLUMNS, read_rows, upsert  # noqa: E402


def _row(task, arm, seed, ret, status="finished", timesteps=1_000_000, standard=""):
    return {"task": task, "arm": arm, "seed": seed, "labels": int(arm) if arm.isdigit() else 0,
            "timesteps": timesteps, "status": status, "return": ret, "return_standard": standard, "wall_s": 360.0,
            "cpu": "AMD EPYC test"}


def _table(csv_path, *args, capsys=None):
    code = mujoco_table.main(["--csv", str(csv_path), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_table_refuses_an_unfinished_run_and_a_short_one(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    upsert([_row("Hopper-v5", "baseline", s, 3000.0) for s in (0, 1, 2)], path)
    upsert([_row("Hopper-v5", "1400", 0, 2500.0, status="crashed")], path)
    code, out, err = _table(path, capsys=capsys)
    assert code == 2 and out == ""
    assert err.strip() == "mujoco_table: refused: Hopper-v5 arm 1400 seed 0: status crashed, not finished"
    upsert([_row("Hopper-v5", "1400", 0, 2500.0, timesteps=614_400)], path)  # recorded again: finished, but short
    code, out, err = _table(path, capsys=capsys)
    assert code == 2 and "Hopper-v5 arm 1400 seed 0: 614,400 agent steps, below the arm's budget of 1,000,000" in err
    assert len(err.strip().splitlines()) == 1
    upsert([_row("Hopper-v5", "1400", 0, 2500.0)], path)  # its full run: the table builds
    assert _table(path, capsys=capsys)[0] == 0
    upsert([_row("Hopper-v5", "1400-2m", 0, 2500.0)], path)  # H53's arm: 1M steps is short of its 2M
    code, out, err = _table(path, capsys=capsys)
    assert code == 2 and "arm 1400-2m seed 0: 1,000,000 agent steps, below the arm's budget of 2,000,000" in err
    upsert([_row("Hopper-v5", "1400-2m", 0, 2500.0, timesteps=2_002_944)], path)
    assert _table(path, capsys=capsys)[0] == 0


def test_the_ratio_the_normalized_reacher_score_and_the_seeds_named(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    rows = [_row("Hopper-v5", "baseline", s, v) for s, v in zip((0, 1, 2), (3000.0, 2800.0, 3200.0))]
    rows += [_row("Hopper-v5", "1400", s, v) for s, v in zip((0, 1, 2), (2400.0, 2700.0, 3000.0))]
    rows += [_row("Hopper-v5", "700", 2, 1500.0)]  # one seed only
    rows += [_row("Hopper-v5", "random", s, -3800.0, timesteps=100_000) for s in (0, 1, 2)]
    rows += [_row("Reacher-v5", "baseline", s, v) for s, v in zip((0, 1, 2), (-4.0, -5.0, -6.0))]
    rows += [_row("Reacher-v5", "1400", s, v) for s, v in zip((0, 1, 2), (-10.0, -12.0, -14.0))]
    rows += [_row("Reacher-v5", "random", s, v, timesteps=5_000) for s, v in zip((0, 1, 2), (-40.0, -42.0, -44.0))]
    upsert(rows, path)
    code, out, err = _table(path, capsys=capsys)
    assert code == 0, err
    hopper = next(line for line in out.splitlines() if line.startswith("| Hopper-v5 "))
    reacher = next(line for line in out.splitlines() if line.startswith("| Reacher-v5 "))
    # Hopper: mean 2,700 from preferences / mean 3,000 of the baseline = 0.90 (the random rows play no part)
    assert "| 0.90 |" in hopper
    assert "3,000 ± 200 (seeds 0, 1, 2)" in hopper and "2,700 ± 300 (seeds 0, 1, 2)" in hopper
    assert "1,500 (seeds 2; 1, fewer than 3)" in hopper and "| 0.50 |" in hopper
    # Reacher: (-12 - (-42)) / (-5 - (-42)) = 30 / 37 = 0.81, and only Reacher is normalized
    assert "| 0.81 (normalized) |" in reacher and "normalized" not in hopper
    assert "-12.0 ± 2.0 (seeds 0, 1, 2)" in reacher
    assert "1400 labels: 1 of 8 tasks at 0.9 or more, 0 at 1.0 or more" in out
    assert mujoco_table.score("Hopper-v5", {0: 2700.0}, {0: 3000.0}, {}) == pytest.approx(0.9)
    assert mujoco_table.score("Reacher-v5", {0: -12.0}, {0: -5.0}, {0: -42.0}) == pytest.approx(30 / 37)
    readme = _table(path, "--readme", capsys=capsys)[1]
    assert "| Hopper-v5 | 3,000 ± 200 (seeds 0, 1, 2) |" in readme and "0.90: 2,700 ± 300 (seeds 0, 1, 2)" in readme
    compared = _table(path, "--compare", "baseline", "1400", capsys=capsys)[1]
    assert compared.count("| Hopper-v5 |") == 1 and compared.count("| Reacher-v5 |") == 1


def test_the_better_baseline_with_three_seeds_stands_and_is_named(tmp_path, capsys):
    """H49 (issue 38): of the baseline's candidates, per task the one with 3 seeds and the higher mean stands; one
    with fewer seeds never does, however high; the ratio is to the one that stands, and the table names it."""
    path = tmp_path / "runs.csv"
    rows = [_row("Ant-v5", "baseline", s, v) for s, v in zip((0, 1, 2), (900.0, 950.0, 1000.0))]
    rows += [_row("Ant-v5", "baseline-ent01", s, v) for s, v in zip((0, 1, 2), (1100.0, 1200.0, 1300.0))]
    rows += [_row("Ant-v5", "1400", s, v) for s, v in zip((0, 1, 2), (1080.0, 1200.0, 1320.0))]
    rows += [_row("Hopper-v5", "baseline", s, v) for s, v in zip((0, 1, 2), (3000.0, 2800.0, 3200.0))]
    rows += [_row("Hopper-v5", "baseline-ent01", s, 9000.0) for s in (0, 1)]  # two seeds: not a candidate
    rows += [_row("Hopper-v5", "1400", s, 2700.0) for s in (0, 1, 2)]
    upsert(rows, path)
    code, out, err = _table(path, "--arms", "1400", capsys=capsys)
    assert code == 0, err
    ant = next(line for line in out.splitlines() if line.startswith("| Ant-v5 "))
    hopper = next(line for line in out.splitlines() if line.startswith("| Hopper-v5 "))
    assert "1,200 ± 100 (seeds 0, 1, 2; `baseline-ent01`)" in ant and "| 1.00 |" in ant  # 1,200 / 1,200
    assert "3,000 ± 200 (seeds 0, 1, 2) |" in hopper and "| 0.90 |" in hopper and "ent01" not in hopper
    assert "the better of `baseline`, `baseline-ent01` per task" in out and "compared on Ant-v5;" in out
    # a later candidate with 3 seeds stands over a first with fewer; on a tie the first stands
    solo = [_row("Swimmer-v5", "baseline", 0, 500.0)]
    solo += [_row("Swimmer-v5", "baseline-ent01", s, 100.0) for s in (0, 1, 2)]
    tied = [_row("Reacher-v5", a, s, -5.0) for a in ("baseline", "baseline-ent01") for s in (0, 1, 2)]
    pick = mujoco_table.pick_arm
    assert pick(solo + tied, "Swimmer-v5", ["baseline", "baseline-ent01"])[0] == "baseline-ent01"
    assert pick(solo + tied, "Reacher-v5", ["baseline", "baseline-ent01"])[0] == "baseline"
    # one candidate named: that arm alone, as before H49 (Ant against `baseline`: 1,200 / 950)
    out = _table(path, "--arms", "1400", "--baseline", "baseline", capsys=capsys)[1]
    assert "| 1.26 |" in next(line for line in out.splitlines() if line.startswith("| Ant-v5 "))
    assert "to the `baseline` arm" in out
    assert mujoco_table.pick_arm(read_rows(path), "Swimmer-v5", ["baseline", "baseline-ent01"]) == ("baseline", {})


def test_cells_take_seeds_0_to_2_unless_more_are_named(tmp_path, capsys):
    """H51 (issue 38) runs HalfCheetah's seeds 3-9: the table keeps seeds 0-2 in every cell (the baseline's pick
    included) unless --seeds names more, so seeds added to one task never change its cell unasked."""
    path = tmp_path / "runs.csv"
    rows = [_row("HalfCheetah-v5", "baseline", s, 4000.0) for s in range(10)]
    rows += [_row("HalfCheetah-v5", "baseline-ent01", s, 3900.0 if s < 3 else 9000.0) for s in range(10)]
    rows += [_row("HalfCheetah-v5", "1400", s, 2000.0 if s < 3 else 4000.0) for s in range(10)]
    upsert(rows, path)
    line = next(x for x in _table(path, "--arms", "1400", capsys=capsys)[1].splitlines()
                if x.startswith("| HalfCheetah-v5 "))
    assert "4,000 ± 0.0 (seeds 0, 1, 2) |" in line and "| 0.50 |" in line and "seeds 3" not in line
    ten = [str(s) for s in range(10)]
    line = next(x for x in _table(path, "--arms", "1400", "--seeds", *ten, capsys=capsys)[1].splitlines()
                if x.startswith("| HalfCheetah-v5 "))
    # seeds 0-9: baseline-ent01 now has the higher mean (7,470) and stands; 1400's mean 3,400 / 7,470 = 0.46
    assert "(seeds 0, 1, 2, 3, 4, 5, 6, 7, 8, 9; `baseline-ent01`)" in line and "| 0.46 |" in line
    # a candidate with seeds 0-2 only is judged against the other on those seeds, not against its seeds 0-9:
    # baseline-ent01's 3,900 on 0-2 loses to baseline's 4,000 on 0-2, so baseline stands with all of its 10 seeds,
    # although baseline-ent01's mean (3,900) is above baseline's over 0-9 once baseline's seeds 3-9 are low
    rows = [_row("HalfCheetah-v5", "baseline", s, 4000.0 if s < 3 else 2000.0) for s in range(10)]
    rows += [_row("HalfCheetah-v5", "baseline-ent01", s, 3900.0) for s in range(3)]
    rows += [_row("HalfCheetah-v5", "1400", s, 2000.0 if s < 3 else 2600.0) for s in range(10)]
    path.unlink()
    upsert(rows, path)
    line = next(x for x in _table(path, "--arms", "1400", "--seeds", *ten, capsys=capsys)[1].splitlines()
                if x.startswith("| HalfCheetah-v5 "))
    # baseline over 0-9: 2,600; 1400 over 0-9: 2,420; 2,420 / 2,600 = 0.93
    assert "2,600 ± 966 (seeds 0, 1, 2, 3, 4, 5, 6, 7, 8, 9) |" in line and "| 0.93 |" in line


def _run_dir(tmp_path, mode="train_policy_with_preferences", control_cost=True, fall_rule="reset", labels=(350, 1050),
             status="finished", standard=2100.0, teacher=(0.0, 0.0), ent_coef=None, query_selection="variance",
             fall_hold_steps=0, random_answer_prob=0.1, million_timesteps=1.0, next_obs=False, init_log_std=0.0,
             gamma=0.995, segment_length=None, train_fraction=None, updates_per_step=None):
    run = tmp_path / "run"
    run.mkdir()
    if ent_coef is None:  # the mujoco preset's: 0 on the true reward, 0.01 from preferences
        ent_coef = 0.01 if mode == "train_policy_with_preferences" else 0.0
    (run / "config.json").write_text(json.dumps({
        "mode": mode, "env": "Hopper-v5", "seed": 2, "million_timesteps": million_timesteps,
        "ppo": {"control_cost": control_cost, "fall_rule": fall_rule, "fall_penalty": 100.0, "ent_coef": ent_coef,
                "fall_hold_steps": fall_hold_steps, "init_log_std": init_log_std, "gamma": gamma},
        "prefs": {"n_initial_prefs": labels[0], "n_labels": labels[1], "oracle_mistake_rate": teacher[0],
                  "oracle_equal_threshold": teacher[1], "query_selection": query_selection},
        "reward": {"random_answer_prob": random_answer_prob, "next_obs": next_obs}}))
    config = json.loads((run / "config.json").read_text())  # the predictor's data and feed, where a test gives them
    for part, key, value in (("prefs", "segment_length", segment_length), ("reward", "train_fraction", train_fraction),
                             ("reward", "updates_per_step", updates_per_step)):
        if value is not None:
            config[part][key] = value
    (run / "config.json").write_text(json.dumps(config))
    summary = {"timesteps": 1_001_472, "wall_s": 401.23, "true_return_last100": 2000.0, "task_return_last100": 2345.678}
    if standard is not None:
        summary["standard_return_last100"] = standard
    (run / "summary.json").write_text(json.dumps(summary))
    (run / "status.json").write_text(json.dumps({"status": status, "time": "2026-11-27T03:00:00"}))
    (run / "run.json").write_text(json.dumps({"sittings": [{"machine": {"cpu": "AMD EPYC 7B13"}}]}))
    return run


def test_a_run_directory_becomes_its_row_and_replaces_the_old_one(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    upsert([_row("Hopper-v5", "1400", 2, 1.0, status="interrupted", timesteps=10)], path)
    run = _run_dir(tmp_path)
    assert mujoco_record.main([str(run), "--arm", "1400", "--csv", str(path)]) == 0
    rows = read_rows(path)
    assert len(rows) == 1 and tuple(rows[0]) == COLUMNS
    assert rows[0] == {"task": "Hopper-v5", "arm": "1400", "seed": "2", "labels": "1400", "timesteps": "1001472",
                       "status": "finished", "return": "2345.68", "return_standard": "2100.0", "wall_s": "401.2",
                       "cpu": "AMD EPYC 7B13"}
    assert mujoco_record.main(["--has", "Hopper-v5", "1400", "2", "--csv", str(path)]) == 0
    assert mujoco_record.main(["--has", "Hopper-v5", "700", "2", "--csv", str(path)]) == 1


@pytest.mark.parametrize("arm, kwargs, words", [
    ("700", {}, "names a preference run of 700 labels"),
    ("baseline", {}, "is PPO paid the oracle's reward"),
    ("baseline", {"mode": "train_policy_with_original_rewards", "control_cost": True, "labels": (0, 0)},
     "control cost True"),
    ("standard", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0)},
     "PPO paid the env's own reward"),
    ("standard", {"mode": "train_policy_with_original_rewards", "labels": (0, 0)}, "name it standard-reset"),
    ("1400", {"fall_rule": "penalty"}, "name the arm by its rule"),
    ("penalty-1400", {}, "name the arm by its rule"),
    ("1400", {"fall_rule": "none"}, "on a run with --fall_rule none: name the arm by its rule"),
    ("none-1400", {}, "name the arm by its rule"),
    ("penalty-1400", {"fall_rule": "none"}, "name the arm by its rule"),
    ("penalty-1400", {"fall_rule": "penalty", "fall_hold_steps": 100},
     "on a run with --fall_rule penalty --fall_hold_steps 100: name the arm by its rule"),
    ("hold-1400", {"fall_rule": "penalty"}, "name the arm by its rule"),
    ("1400", {"teacher": (0.1, 0.0)}, "this run's are 0.1 and 0"),
    ("mistake10", {}, "arm 'mistake10' is a teacher with mistake rate 0.1 and equal threshold 0"),
    ("equal", {"teacher": (0.1, 0.0)}, "arm 'equal' is a teacher with mistake rate 0 and equal threshold 0.1"),
    ("equal", {"teacher": (0.0, 0.1), "labels": (175, 525)}, "arm 'equal' is a preference run of 1400 labels"),
    ("1400", {"ent_coef": 0.0}, "arm '1400' is the entropy bonus 0.01; this run's is 0"),
    ("1400-ent0", {}, "arm '1400-ent0' is the entropy bonus 0; this run's is 0.01"),
    ("1400-random", {}, "arm '1400-random' on a run with --query_selection variance"),
    ("1400", {"query_selection": "random"}, "arm '1400' on a run with --query_selection random"),
    ("baseline-ent05", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0),
                        "ent_coef": 0.01}, "is the entropy bonus 0.05; this run's is 0.01"),
    ("random", {"query_selection": "random"}, "the random policy's rows are mujoco_random.py's"),
    ("random-1400", {"query_selection": "random"}, "the random policy's rows are mujoco_random.py's"),
    ("baseline-random", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0)},
     "'random' names a preference arm's random pairs"),
    ("1400-variance", {}, "'variance' is no part of an arm's name"),
    ("mistake10", {"teacher": (0.1, 0.0), "random_answer_prob": 0.2},
     "arm 'mistake10' is the predictor's assumed random-answer chance 0.1; this run's is 0.2 (name the arm by it"),
    ("mistake10-rap2", {"teacher": (0.1, 0.0)}, "assumed random-answer chance 0.2; this run's is 0.1"),
    ("baseline-rap2", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0)},
     "'rap2' is no part of an arm's name"),
    ("1400", {"init_log_std": -1.0}, "arm '1400' is the policy's starting log std 0; this run's is -1"),
    ("1400", {"gamma": 0.9999}, "arm '1400' is the discount 0.995; this run's is 0.9999"),
    ("baseline-g9999", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0)},
     "arm 'baseline-g9999' is the discount 0.9999; this run's is 0.995"),
    ("baseline-ls2", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0),
                      "init_log_std": -1.0},
     "arm 'baseline-ls2' is the policy's starting log std -2; this run's is -1"),
    ("1400", {"next_obs": True}, "arm '1400' on a run with --reward_next_obs: an arm says 'next'"),
    ("1400-next", {}, "arm '1400-next' on a run without --reward_next_obs"),
    ("baseline-next", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0)},
     "'next' is no part of an arm's name"),
    ("1400", {"million_timesteps": 2.0}, "arm '1400' is a run of 1M agent steps; this run's --million_timesteps is 2"),
    ("baseline-2m", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0)},
     "arm 'baseline-2m' is a run of 2M agent steps; this run's --million_timesteps is 1"),
    # issue 61's screening arms: the clips and the predictor's feed, against the preset's for Hopper (188 steps, 0.5, 0)
    ("1400", {"segment_length": 47}, "arm '1400' is clips of 188 steps; this run's --segment_length is 47"),
    ("1400-clip47", {"segment_length": 188}, "arm '1400-clip47' is clips of 47 steps; this run's --segment_length is"),
    ("1400", {"train_fraction": 0.2}, "arm '1400' is --reward_train_fraction 0.5; this run's is 0.2"),
    ("1400-tf2", {"train_fraction": 0.5}, "arm '1400-tf2' is --reward_train_fraction 0.2; this run's is 0.5"),
    ("1400", {"updates_per_step": 0.14}, "arm '1400' is --reward_updates_per_step 0; this run's is 0.14"),
    ("1400-feed07", {"updates_per_step": 0.14}, "arm '1400-feed07' is --reward_updates_per_step 0.07"),
    ("baseline-clip47", {"mode": "train_policy_with_original_rewards", "control_cost": False, "labels": (0, 0)},
     "'clip47' is no part of an arm's name"),
])
def test_an_arm_that_does_not_fit_its_run_is_one_line_and_exit_2(tmp_path, capsys, arm, kwargs, words):
    run = _run_dir(tmp_path, **kwargs)
    with pytest.raises(SystemExit) as e:
        mujoco_record.main([str(run), "--arm", arm, "--csv", str(tmp_path / "runs.csv")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs.csv").exists()


def test_arms_that_fit_and_a_run_without_the_standard_return(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    standard = _run_dir(tmp_path, mode="train_policy_with_original_rewards", fall_rule="end", labels=(0, 0))
    assert mujoco_record.main([str(standard), "--arm", "standard", "--csv", str(path)]) == 0
    standard.rename(tmp_path / "standard")
    run = _run_dir(tmp_path, mode="train_policy_with_original_rewards", control_cost=False, fall_rule="penalty",
                   labels=(0, 0), standard=None)
    assert mujoco_record.main([str(run), "--arm", "penalty-baseline", "--csv", str(path)]) == 0
    row = next(r for r in read_rows(path) if r["arm"] == "penalty-baseline")
    assert row["arm"] == "penalty-baseline" and row["labels"] == "0" and row["return_standard"] == ""
    run.rename(tmp_path / "penalty-baseline")
    for arm, teacher in (("mistake10", (0.1, 0.0)), ("equal", (0.0, 0.1))):
        run = _run_dir(tmp_path, teacher=teacher)
        assert mujoco_record.main([str(run), "--arm", arm, "--csv", str(path)]) == 0
        run.rename(tmp_path / arm)
    assert {r["arm"]: r["labels"] for r in read_rows(path)}.items() >= {"mistake10": "1400", "equal": "1400"}.items()
    run = _run_dir(tmp_path, fall_rule="penalty", fall_hold_steps=100)  # H48's rule: a fall that lasts, then a reset
    assert mujoco_record.main([str(run), "--arm", "hold-1400", "--csv", str(path)]) == 0
    assert any(r["arm"] == "hold-1400" and r["labels"] == "1400" for r in read_rows(path))
    run.rename(tmp_path / "hold-1400")
    run = _run_dir(tmp_path, fall_rule="none")  # no healthy range: its arm says so, as the penalty rule's
    assert mujoco_record.main([str(run), "--arm", "none-1400", "--csv", str(path)]) == 0
    assert any(r["arm"] == "none-1400" and r["labels"] == "1400" for r in read_rows(path))
    run.rename(tmp_path / "none-1400")
    for arm, kwargs in (("baseline-ent001", {"mode": "train_policy_with_original_rewards", "control_cost": False,
                                             "labels": (0, 0), "ent_coef": 0.001}),
                        ("1400-ent0", {"ent_coef": 0.0}),  # a bonus named in the arm: the run's
                        ("1400-rerun", {}),  # the same recipe and seed again, beside the cell's row
                        ("mistake10-rap2", {"teacher": (0.1, 0.0), "random_answer_prob": 0.2}),  # H52
                        ("1400-2m", {"million_timesteps": 2.0}),  # H53: the budget named
                        ("1400-next", {"next_obs": True}),  # H54: the predictor on the observation led to
                        ("1400-ls1", {"init_log_std": -1.0}),  # H55: the policy's starting spread
                        ("1400-g9999", {"gamma": 0.9999}),  # H56: the discount
                        ("1400-clip47", {"segment_length": 47}),  # issue 61's screening arms
                        ("1400-tf2", {"train_fraction": 0.2}),
                        ("1400-feed14", {"updates_per_step": 0.14, "train_fraction": 0.5}),
                        ("1400", {"segment_length": 188, "train_fraction": 0.5, "updates_per_step": 0.0}),
                        ("baseline-ls2", {"mode": "train_policy_with_original_rewards", "control_cost": False,
                                          "labels": (0, 0), "init_log_std": -2.0}),
                        ("baseline-2m", {"mode": "train_policy_with_original_rewards", "control_cost": False,
                                         "labels": (0, 0), "million_timesteps": 2.0}),
                        ("penalty-1400-random", {"query_selection": "random", "fall_rule": "penalty"})):
        run = _run_dir(tmp_path, **kwargs)
        assert mujoco_record.main([str(run), "--arm", arm, "--csv", str(path)]) == 0
        run.rename(tmp_path / arm)


def test_an_arms_default_settings_are_what_run_py_makes_of_the_preset_for_its_task(tmp_path, capsys, monkeypatch):
    """An arm that names no bonus or choice of pairs is held to the preset's as run.py builds it for the run's task
    (per-task flags included), not to literals: a task given its own bonus takes runs made with it."""
    from drlhp.config import presets

    assert mujoco_record.preset_settings("Hopper-v5", "train_policy_with_preferences") == (0.01, "variance")
    assert mujoco_record.preset_settings("Hopper-v5", "train_policy_with_original_rewards") == (0.0, "random")
    run = _run_dir(tmp_path, ent_coef=0.05)
    with pytest.raises(SystemExit):
        mujoco_record.main([str(run), "--arm", "1400", "--csv", str(tmp_path / "runs.csv")])
    assert "is the entropy bonus 0.01; this run's is 0.05" in capsys.readouterr().err
    monkeypatch.setitem(presets.FOR_PREFERENCES_PER_ENV, "Hopper-v5",
                        presets.FOR_PREFERENCES_PER_ENV["Hopper-v5"] + " --ppo_ent_coef 0.05")
    assert mujoco_record.preset_settings("Hopper-v5", "train_policy_with_preferences") == (0.05, "variance")
    assert mujoco_record.main([str(run), "--arm", "1400", "--csv", str(tmp_path / "runs.csv")]) == 0


def test_a_users_plain_run_is_named_by_what_the_preset_gives_its_task(tmp_path, capsys, monkeypatch):
    """--user_arm: the arm of `python run.py --env TASK --synthetic_prefs` (issue 61's held-out table), the absolute
    parts the preset's per-task flags give; a clip or feed the preset took later would be named the same way, and a
    run made so records under that name."""
    from drlhp.config import presets

    assert [mujoco_record.user_arm(t) for t in ("Hopper-v5", "HalfCheetah-v5", "Swimmer-v5")] == [
        "1400", "1400-ls1", "1400-g9999"]
    assert mujoco_record.main(["--user_arm", "HalfCheetah-v5", "700"]) == 0
    assert capsys.readouterr().out.strip() == "700-ls1"
    monkeypatch.setitem(presets.FOR_PREFERENCES_PER_ENV, "Hopper-v5", presets.FOR_PREFERENCES_PER_ENV["Hopper-v5"]
                        + " --segment_length 47 --reward_updates_per_step 0.14")
    arm = mujoco_record.user_arm("Hopper-v5")
    assert arm == "1400-clip47-feed14"
    run = _run_dir(tmp_path, segment_length=47, updates_per_step=0.14, train_fraction=0.5)
    assert mujoco_record.main([str(run), "--arm", arm, "--csv", str(tmp_path / "runs.csv")]) == 0
    with pytest.raises(SystemExit):  # the plain name now means the paper's 1.5 s clips, as -lsN and -gD are absolute
        mujoco_record.main([str(run), "--arm", "1400", "--csv", str(tmp_path / "runs.csv")])
    assert "is clips of 188 steps; this run's --segment_length is 47" in capsys.readouterr().err


def _queue_stub(tmp_path, recorded: str = ""):
    """(the call log, the env) for mujoco_table_runs.sh with a stand-in for Python that logs each call and answers
    ``mujoco_record.py --has TASK ARM SEED`` yes for ``recorded`` ("TASK ARM SEED") only."""
    import os

    log = tmp_path / "calls.txt"
    stub = tmp_path / "python"
    stub.write_text(f"""#!/usr/bin/env bash
echo "$*" >> {log}
case "$1 $2" in
  *"mujoco_record.py --has"*) [ "$3 $4 $5" = "{recorded}" ] && exit 0; exit 1 ;;
  *"mujoco_record.py --user_arm"*) [ "$3" = HalfCheetah-v5 ] && echo "$4-ls1" || echo "$4"; exit 0 ;;
esac
exit 0
""")
    stub.chmod(0o755)
    return log, {**os.environ, "PYTHON": str(stub), "ROOT": str(tmp_path / "runs")}


def test_the_held_out_queue_runs_the_kept_baselines_and_a_users_very_command(tmp_path):
    """mujoco_table_runs.sh heldout (issue 61 step 3) with the stand-in for Python: per seed and task the kept
    baseline with its arm's flags, then 1,400 labels as `run.py --env TASK --synthetic_prefs --seed N` and nothing
    more (the run's directory and log interval aside) and 700 with its label flags, each recorded under the arm
    --user_arm names; a recorded cell is skipped."""
    import subprocess

    log, env = _queue_stub(tmp_path, recorded="Ant-v5 1400 11")
    subprocess.run(["bash", str(EXPERIMENTS / "mujoco_table_runs.sh"), "heldout", "10", "11"], check=True, env=env,
                   capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 2 * 8 * 3 - 1
    root = tmp_path / "runs"
    assert (f"run.py --env Hopper-v5 --synthetic_prefs --seed 10 --run_dir {root}/Hopper-v5/1400-seed-10 "
            f"--log_interval 10") in runs
    assert (f"run.py --env HalfCheetah-v5 --synthetic_prefs --seed 11 --n_initial_prefs 175 --n_labels 525 --run_dir "
            f"{root}/HalfCheetah-v5/700-ls1-seed-11 --log_interval 10") in runs
    baselines = [c for c in runs if c.startswith("run.py train_policy_with_original_rewards")]
    assert len(baselines) == 16 and all("--no-ppo_control_cost" in c for c in baselines)
    assert all(("--ppo_ent_coef 0.01" in c) == any(t in c for t in ("Hopper", "Reacher", "InvertedDoublePendulum"))
               for c in baselines)
    assert all(("--ppo_init_log_std -1" in c) == ("HalfCheetah" in c) for c in baselines)
    assert f"experiments/mujoco_record.py {root}/HalfCheetah-v5/1400-ls1-seed-10 --arm 1400-ls1" in calls
    assert f"experiments/mujoco_record.py {root}/Hopper-v5/baseline-ent01-seed-10 --arm baseline-ent01" in calls
    assert not any("Ant-v5 --synthetic_prefs --seed 11 --run_dir" in c for c in runs)


def test_the_queue_runs_each_missing_cell_once_and_skips_what_is_recorded(tmp_path):
    """mujoco_table_runs.sh with a stand-in for Python that logs each call: a (task, arm, seed) recorded finished is
    not run again; every other cell runs with its arm's flags and is recorded; the falls queue runs both rules'
    arms (the reset ones are the table's cells)."""
    import subprocess

    log, env = _queue_stub(tmp_path, recorded="Hopper-v5 baseline 0")
    script = EXPERIMENTS / "mujoco_table_runs.sh"
    subprocess.run(["bash", str(script), "table"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 8 * 3 * 3 - 1  # every cell but the one recorded
    assert not any("--env Hopper-v5 --seed 0" in c and "--no-ppo_control_cost" in c for c in runs)
    hopper1400 = next(c for c in runs if "--env Hopper-v5 --seed 0" in c and "--synthetic_prefs" in c
                      and "--n_initial_prefs 350" in c)
    assert "--n_labels 1050" in hopper1400 and hopper1400.startswith("run.py train_policy_with_preferences")
    assert any("--n_initial_prefs 175 --n_labels 525" in c for c in runs)
    assert sum("mujoco_random.py --skip_recorded" in c for c in calls) == 1
    assert sum(c.startswith("experiments/mujoco_record.py " + str(tmp_path)) for c in calls) == len(runs)
    log.unlink()
    subprocess.run(["bash", str(script), "falls"], check=True, env=env, capture_output=True, text=True)
    runs = [c for c in log.read_text().splitlines() if c.startswith("run.py")]
    penalty = [c for c in runs if "--fall_rule penalty" in c]
    assert len(penalty) == 2 * 3 * 2  # both penalty arms; the reset ones: baseline (the table's cell), 1400-random
    assert len(runs) - len(penalty) == 2 * 3 * 2 - 1 and all("Hopper-v5" in c or "Walker2d-v5" in c for c in runs)
    prefs = [c for c in runs if "--synthetic_prefs" in c]  # before H34 the comparison's seeds 0-1 asked random pairs
    assert len(prefs) == 2 * 3 * 2 and all("--query_selection random" in c and "-random-seed-" in c for c in prefs)
    log.unlink()
    subprocess.run(["bash", str(script), "standard"], check=True, env=env, capture_output=True, text=True)
    runs = [c for c in log.read_text().splitlines() if c.startswith("run.py")]
    assert len(runs) == 8 * 3 and all("--fall_rule end" in c and "--no-ppo_control_cost" not in c for c in runs)
    log.unlink()
    subprocess.run(["bash", str(script), "entropy", "0"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 2 * 4 - 1  # Hopper's baseline seed 0 is recorded
    ent01 = [c for c in runs if "--ppo_ent_coef 0.01" in c]
    ent0 = [c for c in runs if c.rstrip().endswith("--ppo_ent_coef 0") or "--ppo_ent_coef 0 " in c]
    assert len(ent01) == 2 and all("--no-ppo_control_cost" in c and "baseline-ent01-seed-0" in c for c in ent01)
    assert len(ent0) == 2 and all("--synthetic_prefs" in c and "1400-ent0-random-seed-0" in c for c in ent0)
    assert sum("--arm baseline-ent01" in c for c in calls) == 2
    assert sum("--arm 1400-ent0-random" in c for c in calls) == 2
    assert all("--query_selection random" in c for c in runs if "--synthetic_prefs" in c)
    log.unlink()
    subprocess.run(["bash", str(script), "queries", "0"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    random = [c for c in runs if "--query_selection random" in c]
    assert len(runs) == 2 * 2 and len(random) == 2  # the table's 1400 (the preset's pairs) beside 1400-random
    assert all("--synthetic_prefs" in c and "1400-random-seed-0" in c for c in random)
    assert sum("--arm 1400-random" in c for c in calls) == 2
    log.unlink()
    subprocess.run(["bash", str(script), "teachers"], check=True, env=env, capture_output=True, text=True)
    runs = [c for c in log.read_text().splitlines() if c.startswith("run.py")]
    assert sum("--oracle_mistake_rate 0.1" in c and "--n_labels 1050" in c for c in runs) == 2 * 3
    assert sum("--oracle_equal_threshold 0.1" in c and "--n_labels 1050" in c for c in runs) == 2 * 3
    log.unlink()
    subprocess.run(["bash", str(script), "budget", "0"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 4 * 2 and all("--million_timesteps 2" in c for c in runs)  # H53: both arms at 2M, 4 tasks
    ent01 = [c for c in runs if "--ppo_ent_coef 0.01" in c]  # the baseline that stands at 1M (H49)
    assert len(ent01) == 2 and all("baseline-ent01-2m-seed-0" in c and ("Hopper-v5" in c or "InvertedDouble" in c)
                                   for c in ent01)
    assert sum("--arm baseline-2m" in c for c in calls) == 2 and sum("--arm 1400-2m" in c for c in calls) == 4
    log.unlink()
    subprocess.run(["bash", str(script), "nextobs", "1"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 3 and all("--reward_next_obs" in c and "1400-next-seed-1" in c and "--seed 1" in c
                                  for c in runs)  # H54: three falling tasks, the preference arm
    assert sum("--arm 1400-next" in c for c in calls) == 3
    log.unlink()
    subprocess.run(["bash", str(script), "flip", "2"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 4 and all("HalfCheetah-v5" in c and "--seed 2" in c for c in runs)  # H55: 2 arms x 2 spreads
    for ls in (1, 2):
        mine = [c for c in runs if f"--ppo_init_log_std -{ls}" in c]
        assert len(mine) == 2 and any(f"baseline-ls{ls}-seed-2" in c and "--no-ppo_control_cost" in c for c in mine)
        assert any(f"1400-ls{ls}-seed-2" in c and "--synthetic_prefs" in c for c in mine)
    assert {c.split("--arm ")[1] for c in calls if "--arm " in c} == {"baseline-ls1", "1400-ls1", "baseline-ls2",
                                                                      "1400-ls2"}
    log.unlink()
    subprocess.run(["bash", str(script), "swimgamma", "0"], check=True, env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 2 and all("Swimmer-v5" in c and "--ppo_gamma 0.9999" in c for c in runs)  # H56: both arms
    assert {c.split("--arm ")[1] for c in calls if "--arm " in c} == {"baseline-g9999", "1400-g9999"}
    log.unlink()
    subprocess.run(["bash", str(script), "efficiency"], check=True, env=env, capture_output=True, text=True)
    runs = [c for c in log.read_text().splitlines() if c.startswith("run.py")]
    assert sum("--n_initial_prefs 43 --n_labels 132" in c for c in runs) == 2 * 3  # 175 labels
    assert sum("--n_initial_prefs 87 --n_labels 263" in c for c in runs) == 2 * 3  # 350
    log.unlink()
    subprocess.run(["bash", str(script), "arm", "InvertedDoublePendulum-v5", "equal", "0", "1"], check=True, env=env,
                   capture_output=True, text=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py")]
    assert len(runs) == 2 and all("--oracle_equal_threshold 0.1" in c and "InvertedDoublePendulum-v5" in c
                                  for c in runs)
    assert [c.split("--seed ")[1].split()[0] for c in runs] == ["0", "1"]
    assert sum("--arm equal" in c for c in calls) == 2
    assert subprocess.run(["bash", str(script), "arm", "Hopper-v5"], env=env, capture_output=True).returncode != 0
    log.unlink()
    subprocess.run(["bash", str(script), "hold", "InvertedDoublePendulum-v5", "0"], check=True, env=env,
                   capture_output=True, text=True)
    runs = [c for c in log.read_text().splitlines() if c.startswith("run.py")]
    hold = [c for c in runs if "--fall_rule penalty --fall_hold_steps 100" in c]
    assert len(runs) == 4 and len(hold) == 2  # the table's baseline and 1400 beside H48's two arms
    assert any("--no-ppo_control_cost" in c and "hold-baseline-seed-0" in c for c in hold)
    assert any("--n_initial_prefs 350 --n_labels 1050" in c and "hold-1400-seed-0" in c for c in hold)
    log.unlink()
    subprocess.run(["bash", str(script), "penalty", "InvertedDoublePendulum-v5", "0"], check=True, env=env,
                   capture_output=True, text=True)
    runs = [c for c in log.read_text().splitlines() if c.startswith("run.py")]
    penalty = [c for c in runs if "--fall_rule penalty" in c]
    assert len(runs) == 4 and len(penalty) == 2 and not any("--fall_hold_steps" in c for c in runs)
    assert any("penalty-baseline-seed-0" in c for c in penalty) and any("penalty-1400-seed-0" in c for c in penalty)
    assert bad_usage(script, env) == 2


def bad_usage(script, env) -> int:
    import subprocess

    return subprocess.run(["bash", str(script), "everything"], env=env, capture_output=True).returncode


def test_label_efficiency_ratios_by_seed_and_the_fewest_labels_held_on_every_seed(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    rows = [_row("Hopper-v5", "baseline", s, v) for s, v in zip((0, 1, 2), (3000.0, 2800.0, 3200.0))]  # mean 3000
    rows += [_row("Hopper-v5", "175", s, v) for s, v in zip((0, 1, 2), (1500.0, 3000.0, 2970.0))]  # 0.5 fails
    rows += [_row("Hopper-v5", "350", s, v) for s, v in zip((0, 1, 2), (2700.0, 2850.0, 3300.0))]  # all >= 0.9
    rows += [_row("Hopper-v5", "700", s, 2400.0) for s in (0, 1)]  # two seeds: not enough to hold
    upsert(rows, path)
    plot = tmp_path / "efficiency.png"
    code, out, err = _table(path, "--efficiency", "--plot", str(plot), capsys=capsys)
    assert code == 0, err
    hopper = next(line for line in out.splitlines() if line.startswith("| Hopper-v5 "))
    cells = [c.strip() for c in hopper.strip("|").split("|")]
    assert cells[2] == "0.83 (0: 0.50, 1: 1.00, 2: 0.99)"
    assert cells[3] == "0.98 (0: 0.90, 1: 0.95, 2: 1.10)"
    assert cells[4].startswith("0.80 (0: 0.80, 1: 0.80; 2 seeds, fewer than 3")
    assert cells[5] == "-" and cells[6] == "350"
    assert plot.stat().st_size > 1000
    cheetah = next(line for line in out.splitlines() if line.startswith("| HalfCheetah-v5 "))
    assert cheetah.rstrip().endswith("| none measured |")


def test_an_arms_budget_part_is_read_once_for_the_recorder_and_the_table():
    from mujoco_runs_csv import million_steps
    from mujoco_table import budget
    assert [million_steps(a) for a in ("1400-2m", "baseline-ent01-2m", "penalty-1400-3m-rerun", "1400", "2m")] \
        == [2, 2, 3, None, 2]
    assert million_steps("1400-m") is None and million_steps("1400-2mm") is None  # only a whole part Nm
    assert budget("baseline-ent01-2m") == 2_000_000 and budget("1400") == 1_000_000


def test_a_column_of_candidates_keeps_each_tasks_better_arm_and_names_it(tmp_path, capsys):
    """H55/H56 (issue 38): a setting tried on both arms; each keeps its better by the baseline's rule. ``--arms
    1400,1400-ls1`` fills the 1,400 column per task with the candidate of 3 seeds and the higher mean, named where it
    is not the first, and says where it compared."""
    path = tmp_path / "runs.csv"
    rows = [_row(t, "baseline", s, 4000.0) for t in ("HalfCheetah-v5", "Hopper-v5") for s in (0, 1, 2)]
    rows += [_row("HalfCheetah-v5", "baseline-ls1", s, 5000.0) for s in (0, 1, 2)]
    rows += [_row(t, "1400", s, 2000.0) for t in ("HalfCheetah-v5", "Hopper-v5") for s in (0, 1, 2)]
    rows += [_row("HalfCheetah-v5", "1400-ls1", s, 4500.0) for s in (0, 1, 2)]
    rows += [_row("Hopper-v5", "1400-ls1", s, 1000.0) for s in (0, 1, 2)]  # worse on Hopper: 1400 stays
    upsert(rows, path)
    code, out = _table(path, "--arms", "1400,1400-ls1", "--baseline", "baseline", "baseline-ls1",
                       "--tasks", "HalfCheetah-v5", "Hopper-v5", capsys=capsys)[:2]
    assert code == 0
    cheetah = next(x for x in out.splitlines() if x.startswith("| HalfCheetah-v5 "))
    hopper = next(x for x in out.splitlines() if x.startswith("| Hopper-v5 "))
    assert "(seeds 0, 1, 2; `baseline-ls1`)" in cheetah and "4,500 ± 0.0 (seeds 0, 1, 2; `1400-ls1`) | 0.90" in cheetah
    assert "2,000 ± 0.0 (seeds 0, 1, 2) | 0.50" in hopper and "ls1" not in hopper
    assert "Column 1400 labels: the better of `1400`, `1400-ls1` per task" in out
    assert "compared on HalfCheetah-v5, Hopper-v5" in out and "1400 labels: 1 of 2 tasks at 0.9 or more" in out


def test_the_queue_names_its_preference_runs_by_their_settings_under_the_preset(tmp_path):
    """Since the preset starts HalfCheetah's policy at log std -1 and gives Swimmer the discount 0.9999 from
    preferences (H55, H56), the queue's plain arms (``1400``, ``700``) pass the settings their names give (log std 0,
    discount 0.995) and a named arm's flags still win: each logged command, expanded by the preset as run.py expands
    it, makes a config that mujoco_record accepts under the arm's name, and refuses under the other."""
    import shlex
    import subprocess

    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import with_preset

    log, env = _queue_stub(tmp_path)
    script = EXPERIMENTS / "mujoco_table_runs.sh"
    for task in ("HalfCheetah-v5", "Swimmer-v5"):
        subprocess.run(["bash", str(script), "arm", task, "1400", "0"], check=True, env=env, capture_output=True)
    subprocess.run(["bash", str(script), "flip", "0"], check=True, env=env, capture_output=True)
    subprocess.run(["bash", str(script), "swimgamma", "0"], check=True, env=env, capture_output=True)
    calls = log.read_text().splitlines()
    runs = [c for c in calls if c.startswith("run.py") and "--synthetic_prefs" in c]
    names = [c.split("--arm ")[1] for c in calls if "--arm " in c and "1400" in c.split("--arm ")[1]]
    assert names == ["1400", "1400", "1400-ls1", "1400-ls2", "1400-g9999"] and len(runs) == len(names)
    for line, name in zip(runs, names):
        argv, _, _ = with_preset(shlex.split(line)[1:])
        cfg = config_from_args(build_parser().parse_args(argv))
        config = cfg.to_dict()  # as run.py records it in config.json
        labels = cfg.prefs.n_initial_prefs + cfg.prefs.n_labels
        assert mujoco_record.arm_problem(name, config, labels) is None, (name, line)
        other = {"1400": "1400-ls1" if "HalfCheetah" in line else "1400-g9999"}.get(name, "1400")
        assert mujoco_record.arm_problem(other, config, labels) is not None, (other, line)
    plain = with_preset(["train_policy_with_preferences", "--env", "HalfCheetah-v5", "--synthetic_prefs"])[0]
    preset_cfg = config_from_args(build_parser().parse_args(plain))  # what a user's command gets: the -ls1 arm
    assert mujoco_record.arm_problem("1400-ls1", preset_cfg.to_dict(), 1400) is None


def test_a_cells_ratio_its_interquartile_mean_interval_and_worst_seed():
    from ratio_intervals import ratio_summary

    # seeds' ratios 1/3, 2/3, 1, 4/3, 5/3 of the baseline's mean 3: mean 1, the middle three's mean 1, worst 1/3
    r = ratio_summary([1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 3.0, 3.0])
    assert r.mean == pytest.approx(1.0) and r.iqm == pytest.approx(1.0) and r.worst == pytest.approx(1 / 3)
    assert r.seeds == 5 and r.low < 1.0 < r.high
    assert ratio_summary([1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 3.0, 3.0]) == r  # seeded: the same interval each time
    # one bad seed among good ones: the interquartile mean leaves it out, the mean and the interval's low end do not
    r = ratio_summary([1000.0, 1000.0, 980.0, 990.0, 200.0], [1000.0] * 5)
    assert r.mean == pytest.approx(0.834) and r.iqm == pytest.approx((980 + 990 + 1000) / 3000)
    assert r.worst == pytest.approx(0.2) and r.low < 0.7 and r.high == pytest.approx(1.0, abs=0.01)
    # a wider spread of the baseline's seeds widens the interval of the same preference seeds
    narrow = ratio_summary([900.0, 1000.0, 1100.0], [1000.0, 1000.0, 1000.0])
    wide = ratio_summary([900.0, 1000.0, 1100.0], [500.0, 1000.0, 1500.0])
    assert wide.high - wide.low > narrow.high - narrow.low
    # normalized (Reacher): (prefs - random) / (baseline - random)
    assert ratio_summary([-10.0], [-4.0], random_mean=-40.0).mean == pytest.approx(30 / 36)
    with pytest.raises(ValueError, match="not above"):
        ratio_summary([1.0], [-5.0])


def test_the_interval_table_counts_what_issue_61_judges_by(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    rows = [_row("Hopper-v5", "baseline", s, 2000.0 + 100 * s) for s in range(10, 15)]  # mean 3,200
    rows += [_row("Hopper-v5", "1400", s, v) for s, v in zip(range(10, 15), (3200.0, 3100.0, 3300.0, 3000.0, 1400.0))]
    rows += [_row("Walker2d-v5", "baseline", s, 4000.0) for s in range(10, 15)]
    rows += [_row("Walker2d-v5", "1400", s, 3800.0 + 10 * s) for s in range(10, 15)]
    upsert(rows, path)
    code, out, err = _table(path, "--intervals", "--seeds", *map(str, range(10, 15)), "--arms", "1400",
                            "--tasks", "Hopper-v5", "Walker2d-v5", capsys=capsys)
    assert code == 0, err
    hopper = next(line for line in out.splitlines() if line.startswith("| Hopper-v5 "))
    walker = next(line for line in out.splitlines() if line.startswith("| Walker2d-v5 "))
    assert "| 5 | 0.88 |" in hopper and hopper.endswith("| 0.44 |")  # mean 2,800 / 3,200; worst 1,400 / 3,200
    assert "| 5 | 0.98 |" in walker  # mean 3,920 / 4,000
    assert ("1400 labels: 1 of 2 tasks at 0.9 or more, 1 with the interval's lower end above 0.8, seeds below 0.5 of "
            "the baseline: Hopper-v5.") in out
