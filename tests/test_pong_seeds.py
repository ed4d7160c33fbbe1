"""experiments/pong_seeds.py (issue 37): a seed's figure at a checkpoint is the last one logged at or before it,
and session 18's plateau rule (from 4M agent steps: below +15 and less than 1 point above the value 2M before) is
judged from the run's progress.csv alone: where it fires, where it does not, and not before 4M."""
from __future__ import annotations

import sys
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))

import pong_seeds  # noqa: E402


def _cols(points):
    """Progress columns from (agent steps, true return) points."""
    return {"step": [float(s) for s, _ in points], pong_seeds.RETURN: [float(r) for _, r in points],
            pong_seeds.WALL: [s / 300.0 for s, _ in points]}


def test_at_takes_the_last_value_at_or_before_the_step_and_blank_past_the_end():
    cols = _cols([(900_000, -10.0), (1_100_000, -8.0), (2_000_000, -5.0)])
    assert pong_seeds.at(cols, pong_seeds.RETURN, 1_000_000) == -10.0
    assert pong_seeds.at(cols, pong_seeds.RETURN, 2_000_000) == -5.0
    assert pong_seeds.fmt(pong_seeds.at(cols, pong_seeds.RETURN, 4_000_000)) == ""


def test_the_plateau_rule_fires_only_from_4m_on_a_flat_return_below_15():
    climbing = _cols([(s, -20.0 + 4.0 * s / 1e6) for s in range(500_000, 6_000_001, 500_000)])
    assert pong_seeds.plateau(climbing) == "not fired"  # +2 points every 0.5M: never flat
    flat_late = _cols([(2_000_000, -8.0), (4_000_000, -3.0), (5_000_000, -2.5), (6_000_000, -2.2)])
    assert pong_seeds.plateau(flat_late) == "fires at 6.00M (-3.00 to -2.20)"  # 0.8 over 4M-6M
    flat_early = _cols([(1_000_000, -8.0), (2_000_000, -8.0), (3_000_000, -8.0)])
    assert pong_seeds.plateau(flat_early) == "before 4M"  # no rule before 4M, however flat
    flat_high = _cols([(2_000_000, 15.5), (4_000_000, 15.8), (6_000_000, 16.0)])
    assert pong_seeds.plateau(flat_high) == "not fired"  # at +15 or more the rule does not apply


def test_the_seeds_table_reports_the_rule_beside_each_seed(tmp_path):
    run = tmp_path / "seed-2"
    run.mkdir()
    rows = ["step,policy/true_return_last100,system/wall_s"]
    rows += [f"{s},{r},{s / 300.0}" for s, r in [(1_000_000, -12.0), (2_000_000, -8.0), (4_000_000, -7.5)]]
    (run / "progress.csv").write_text("\n".join(rows) + "\n")
    (run / "summary.json").write_text('{"labels_given": 6514}')  # a running seed's: its last sitting's end
    (run / "progress_prefs.csv").write_text("step,prefs/labels_given\n3900000,6600\n4000000,7295\n")
    line = pong_seeds.seed_rows([run])[2]
    assert "| fires at 4.00M (-8.00 to -7.50) |" in line
    assert "| -7.50 | 7,295 | 4,000,000 |" in line  # the end, the labels logged by then, the agent steps
    assert line.count("|") == len(pong_seeds.seed_rows([run])[0].split("|")) - 1


def test_a_model_folder_without_status_json_reports_what_its_summary_says(tmp_path):
    rows = "step,policy/true_return_last100,system/wall_s\n1000000,-3.9,3000\n2822144,19.04,10260\n"
    for name, reached in (("seed-1", "true"), ("seed-x", "false")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "progress.csv").write_text(rows)
        (tmp_path / name / "summary.json").write_text('{"labels_given": 5605, "reached_target": %s}' % reached)
    lines = pong_seeds.seed_rows([tmp_path / "seed-1", tmp_path / "seed-x"])[2:]
    assert "| finished (target) |" in lines[0] and "| 5,605 |" in lines[0]
    assert "| exported |" in lines[1]
