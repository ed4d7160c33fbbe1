"""One seed's row of ``python -m floyd seeds`` and the line that reports it, for both ways of running the
seeds: floyd/seeds.py (local processes) and floyd/ray_seeds.py (Ray tasks; seeds.py imports it only for
--backend ray, so it must not import seeds.py back)."""
from __future__ import annotations

from pathlib import Path

from drlhp.runtime.formatting import format_duration, format_number
from floyd.index import read_run


def seed_row(seed: int, exit_code: int, wall_s: float, run_dir: Path) -> dict:
    """The seed's exit code and wall time, with its run's status and figures (summary.json)."""
    entry = read_run(run_dir)
    summary = entry.summary or {}
    return {"seed": seed, "exit_code": exit_code, "status": entry.status, "wall_s": round(wall_s, 1),
            "run_dir": str(run_dir), "timesteps": summary.get("timesteps"),
            "true_return_last100": entry.true_return, "success_rate_last100": summary.get("success_rate_last100"),
            "summary": summary}


def done_line(row: dict) -> str:
    """``[seed 3] exit 0 after 5m03s: finished, 5,000 steps, true return 1.00, success 0.90``."""
    success = row["success_rate_last100"]
    return (f"[seed {row['seed']}] exit {row['exit_code']} after {format_duration(row['wall_s'])}: {row['status']}, "
            f"{format_number(row['timesteps'], ',')} steps, "
            f"true return {format_number(row['true_return_last100'], '.2f')}"
            + (f", success {format_number(success, '.2f')}" if success is not None else ""))
