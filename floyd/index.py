"""Reading run directories into records the archive can list, show, compare and rerun.

A folder under the runs folder is one of
    a run          run.json (format version, start), config.json, command.txt, code_version.json,
                   status.json, summary.json, ... (drlhp/records/run_record.py)
    an older run   the same without run.json (written before the archive existed): listed, noted
    incomplete     a run whose config.json is missing or unreadable (half-written, or its start was
                   cut short): listed with what could be read, noted
    a group        a folder holding runs (e.g. the seeds of `python -m floyd seeds`): searched
    not a run      none of the above: skipped, with a note
Nothing here raises on a bad folder: every problem becomes a note on the record.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from drlhp.records.curves import read_progress_csv
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import PARENT_GONE, RUN_FORMAT_VERSION, SAVED, config_in_todays_names

RUN_FILES = RunPaths.RECORD_FILES
GROUP_DEPTH = 3  # how deep a group of runs may nest under the runs folder
ENDED = ("finished", "crashed", "interrupted", "stopped")


def ended(status: str) -> bool:
    """Whether a run with this status has ended: ENDED, or the parent died and its children have finished
    ("parent gone: saved" or "...: not all saved", written by the children: drlhp.records.run_record)."""
    return status in ENDED or (status.startswith(PARENT_GONE + ":") and status != f"{PARENT_GONE}: saving")


class FloydError(Exception):
    """A problem with what the user asked for: one line to the user, exit code 2."""


@dataclass
class RunEntry:
    path: Path
    name: str
    kind: str = "run"  # "run" | "incomplete" | "not a run"
    notes: list[str] = field(default_factory=list)
    format_version: int | None = None
    run_json: dict | None = None
    config: dict | None = None
    status_json: dict | None = None
    summary: dict | None = None
    code_version: dict | None = None
    command: str | None = None
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    status: str = "unknown"

    # --- what the table shows ----------------------------------------------------------------
    def _get(self, key):
        for source in (self.summary, self.config):
            if source and source.get(key) is not None:
                return source[key]
        return None

    @property
    def mode(self) -> str | None:
        return self._get("mode")

    @property
    def env(self) -> str | None:
        return self._get("env")

    @property
    def seed(self) -> int | None:
        return self._get("seed")

    @property
    def error(self) -> str | None:
        return (self.status_json or {}).get("error")

    @property
    def duration_s(self) -> float | None:
        """Start to end; to now while running; unknown for a run that died or never said."""
        end = self.end if ended(self.status) else dt.datetime.now() if self.status == "running" else None
        if self.start is None or end is None:
            return None
        return max(0.0, (end - self.start).total_seconds())

    @property
    def true_return(self) -> float | None:
        s = self.summary or {}
        for key in ("true_return_last100", "true_return_mean"):
            if isinstance(s.get(key), (int, float)):
                return float(s[key])
        return last_value(self.path / RunPaths.PROGRESS, "policy/true_return_last100")

    @property
    def success_rate(self) -> float | None:
        value = (self.summary or {}).get("success_rate_last100")
        if isinstance(value, (int, float)):
            return float(value)
        return last_value(self.path / RunPaths.PROGRESS, "policy/success_rate_last100")

    @property
    def labels(self) -> int | None:
        value = (self.summary or {}).get("labels_given")
        return int(value) if isinstance(value, (int, float)) else None

    @property
    def rerun(self) -> dict | None:
        """rerun.json: which run this one reruns, and from what code (floyd.rerun)."""
        info, _ = _read_json(self.path / "rerun.json")
        return info


def _read_json(path: Path) -> tuple[dict | None, str | None]:
    """(the object, None), or (None, why not)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, "missing"
    except OSError as e:
        return None, f"unreadable ({e.strerror})"
    try:
        value = json.loads(text)
    except ValueError:
        return None, "not valid JSON (half-written?)"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, None


def _parse_time(value) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        return None


def last_value(path: Path, column: str) -> float | None:
    values = [v for v in read_progress_csv(path).get(column, []) if v == v]
    return values[-1] if values else None


def _process_gone(run_json: dict) -> bool:
    """True when run.json names a process on this host that no longer exists."""
    pid = run_json.get("pid")
    if not isinstance(pid, int) or run_json.get("host") != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False
    return False


def looks_like_run(path: Path) -> bool:
    return any((path / f).exists() for f in RUN_FILES)


def read_run(path: Path, name: str | None = None) -> RunEntry:
    """One folder as a RunEntry; never raises on what it finds inside."""
    entry = RunEntry(path=path, name=name or path.name)
    paths = RunPaths(path)
    if not looks_like_run(path):
        entry.kind = "not a run"
        entry.notes.append("not a run: no run.json, config.json, status.json or command.txt")
        return entry
    entry.config, config_why = _read_json(paths.config)
    entry.config = config_in_todays_names(entry.config)  # floyd compares and shows settings by today's names
    if entry.config is None:
        entry.kind = "incomplete"
        entry.notes.append(f"incomplete: config.json {config_why}")
    entry.run_json, why = _read_json(paths.run_json)
    if entry.run_json is None:
        if why != "missing":
            entry.kind = "incomplete"
            entry.notes.append(f"run.json {why}")
        elif entry.config is not None:  # a whole run, from before run.json
            entry.notes.append("older format: no run.json")
    else:
        version = entry.run_json.get("format_version")
        entry.format_version = version if isinstance(version, int) else None
        if entry.format_version is None:
            entry.notes.append("run.json has no format version")
        elif entry.format_version > RUN_FORMAT_VERSION:
            entry.notes.append(f"newer format (v{entry.format_version}; this archive reads v{RUN_FORMAT_VERSION})")
    entry.status_json, why = _read_json(paths.status)
    if entry.status_json is None:
        entry.notes.append(f"status.json {why}")
    else:
        entry.status = str(entry.status_json.get("status") or "unknown")
        entry.end = _parse_time(entry.status_json.get("time"))
    entry.summary, _ = _read_json(paths.summary)
    entry.code_version, why = _read_json(paths.code_version)
    if entry.code_version is None and entry.kind == "run":
        entry.notes.append(f"code_version.json {why}")
    try:
        entry.command = paths.command.read_text().strip() or None
    except OSError:
        entry.command = None
    if entry.run_json is not None:
        entry.start = _parse_time(entry.run_json.get("started"))
    if entry.start is None:  # older runs: the command was written when they started
        try:
            entry.start = dt.datetime.fromtimestamp(paths.command.stat().st_mtime)
        except OSError:
            pass
    if entry.status == "running" and entry.run_json and _process_gone(entry.run_json):
        entry.status = "died"
        entry.notes.append(f"status says running, but its process (pid {entry.run_json['pid']}) is gone")
    if entry.status.startswith(PARENT_GONE + ":"):
        _note_parent_gone(entry)
    if entry.kind == "incomplete" and entry.status == "unknown":
        entry.status = "incomplete"
    return entry


def _note_parent_gone(entry: RunEntry) -> None:
    """A run whose parent died (the children wrote its status): the roles that did not save, and a run still
    "saving" whose processes (pids.json) are all gone is "not all saved"."""
    roles = (entry.status_json or {}).get("roles")
    roles = roles if isinstance(roles, dict) else {}
    entry.notes.extend(f"{role}: {outcome}" for role, outcome in sorted(roles.items()) if outcome != SAVED)
    if entry.status == f"{PARENT_GONE}: saving":
        pids, _ = _read_json(entry.path / "pids.json")
        children = [pid for role, pid in (pids or {}).items() if role != "parent" and isinstance(pid, int)]
        host = (entry.run_json or {}).get("host")
        if children and all(_process_gone({"pid": pid, "host": host}) for pid in children):
            entry.status = f"{PARENT_GONE}: not all saved"
            entry.notes.append("its processes are gone, not all of them said they saved")


def scan(runs_dir: Path) -> tuple[list[RunEntry], list[RunEntry]]:
    """(runs, skipped folders) under runs_dir, groups searched; runs sorted by start time."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise FloydError(f"no runs folder {runs_dir} (pass --runs_dir)")
    runs: list[RunEntry] = []
    skipped: list[RunEntry] = []

    def visit(folder: Path, depth: int) -> None:
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError as e:
            skipped.append(RunEntry(path=folder, name=_name(folder, runs_dir), kind="not a run",
                                    notes=[f"unreadable: {e.strerror}"]))
            return
        for child in children:
            name = _name(child, runs_dir)
            if looks_like_run(child):
                runs.append(read_run(child, name))
            elif depth < GROUP_DEPTH and _holds_runs(child, GROUP_DEPTH - depth):
                visit(child, depth + 1)
            else:
                skipped.append(read_run(child, name))

    visit(runs_dir, 1)
    runs.sort(key=lambda e: (e.start or dt.datetime.min, e.name))
    return runs, skipped


def _name(path: Path, runs_dir: Path) -> str:
    try:
        return path.relative_to(runs_dir).as_posix()
    except ValueError:
        return str(path)


def _holds_runs(folder: Path, depth: int) -> bool:
    try:
        subdirs = [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return False
    return any(looks_like_run(p) or (depth > 1 and _holds_runs(p, depth - 1)) for p in subdirs)


def find_run(spec: str, runs_dir: Path) -> RunEntry:
    """A run by path, by its name under runs_dir, or by a unique prefix of that name."""
    runs_dir = Path(runs_dir)
    for candidate in (Path(spec), runs_dir / spec):
        if candidate.is_dir():
            entry = read_run(candidate, _name(candidate, runs_dir))
            if entry.kind == "not a run":
                raise FloydError(f"{candidate} is not a run directory (no run.json, config.json, status.json "
                                 f"or command.txt)")
            return entry
    if runs_dir.is_dir():
        runs, _ = scan(runs_dir)
        matches = [e for e in runs if e.name.startswith(spec)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise FloydError(f"{spec!r} matches {len(matches)} runs in {runs_dir} "
                             f"({', '.join(e.name for e in matches[:3])}{', ...' if len(matches) > 3 else ''})")
    raise FloydError(f"no run {spec!r} in {runs_dir} (python -m floyd list shows the runs)")
