"""docs/mujoco_runs.csv, the one file of every MuJoCo table run (issue 38): its columns, reading it, and adding or
replacing rows atomically (a temporary file, then rename, under a lock), keyed by (task, arm, seed).
mujoco_record.py (a run directory), mujoco_random.py (the random policy) and mujoco_table.py (the table) use it."""
from __future__ import annotations

import csv
import fcntl
import io
import os
import re
from pathlib import Path

COLUMNS = ("task", "arm", "seed", "labels", "timesteps", "status", "return", "return_standard", "wall_s", "cpu")
KEY = ("task", "arm", "seed")
CSV_PATH = Path(__file__).resolve().parents[1] / "docs" / "mujoco_runs.csv"
TASKS = ("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Swimmer-v5", "Ant-v5", "Reacher-v5", "InvertedPendulum-v5",
         "InvertedDoublePendulum-v5")


def million_steps(arm: str) -> int | None:
    """The N of an arm named with a budget part ``-Nm`` (``baseline-2m``, ``1400-2m``: N million agent steps, H53;
    the first such part), else None. The one parse of it: mujoco_record.py checks it, mujoco_table.py counts by it."""
    named = [part for part in arm.split("-") if re.fullmatch(r"\d+m", part)]
    return int(named[0][:-1]) if named else None


def key(row: dict, fields: tuple[str, ...] = KEY) -> tuple[str, ...]:
    return tuple(str(row[k]) for k in fields)


def read_rows(path: Path = CSV_PATH, columns: tuple[str, ...] = COLUMNS) -> list[dict]:
    """The file's rows as dicts of strings ([] where there is no file); ValueError where its header is not
    ``columns`` (the MuJoCo file's by default; atari_runs_csv.py passes its own)."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != columns:
            raise ValueError(f"{path}: columns {reader.fieldnames}, expected {', '.join(columns)}")
        return list(reader)


def _order(row: dict) -> tuple:
    task = TASKS.index(row["task"]) if row["task"] in TASKS else len(TASKS)
    seed = int(row["seed"]) if str(row["seed"]).isdigit() else 0
    return task, row["task"], row["arm"], seed


def upsert(rows: list[dict], path: Path = CSV_PATH, columns: tuple[str, ...] = COLUMNS,
           fields: tuple[str, ...] = KEY, order=_order) -> None:
    """Adds ``rows`` to the file, each replacing the row of its key (``fields``: task, arm, seed); the file written
    whole to a temporary file and renamed over the old one, under an exclusive lock (two recorders never lose a row).
    ``columns``, ``fields``, ``order``: the MuJoCo file's by default (atari_runs_csv.py passes its own)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        merged = {key(r, fields): r for r in read_rows(path, columns)}
        for row in rows:
            missing = set(columns) - set(row)
            if missing:
                raise ValueError(f"a row without {', '.join(sorted(missing))}: {row}")
            merged[key(row, fields)] = {k: "" if row[k] is None else str(row[k]) for k in columns}
        text = io.StringIO()
        writer = csv.DictWriter(text, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(merged.values(), key=order))
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", newline="") as f:
            f.write(text.getvalue())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def finished(task: str, arm: str, seed: int, path: Path = CSV_PATH) -> bool:
    """Whether the file holds a finished row of (task, arm, seed)."""
    return any(key(r) == (task, arm, str(seed)) and r["status"] == "finished" for r in read_rows(path))
