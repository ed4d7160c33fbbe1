"""The run directory: what every run leaves behind.

    <run_dir>/config.json        all arguments, resolved
    <run_dir>/command.txt        the exact command line
    <run_dir>/code_version.json  git commit, dirty flag (and the diff of uncommitted changes)
    <run_dir>/status.json        running / finished / crashed (with the error) / interrupted
    <run_dir>/progress.csv, tb/  metrics (drlhp.metrics)
    <run_dir>/checkpoints/       policy checkpoints (drlhp.checkpoint)
    <run_dir>/summary.json       final figures, written at the end

This module must not import TensorFlow: the run archive (floyd/) reads run directories with it.
"""
from __future__ import annotations

import datetime as dt
import json
import shlex
import subprocess
import sys
from pathlib import Path

from drlhp.atomic import write_json, write_text

REPO_ROOT = Path(__file__).resolve().parent.parent


def default_run_dir(env: str, mode: str, runs_root: str | Path = "runs") -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(runs_root) / f"{env}-{mode}-{stamp}"


def code_version(repo: Path = REPO_ROOT) -> dict:
    """The git commit of the code and whether the tree had uncommitted changes (with their diff)."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"git_commit": None, "dirty": None, "note": "not a git checkout, or no commit yet"}
        status = git("status", "--porcelain", "--untracked-files=no")
        diff = git("diff", "HEAD")
        return {"git_commit": head.stdout.strip(), "dirty": bool(status.stdout.strip()), "diff": diff.stdout}
    except (OSError, subprocess.SubprocessError) as e:
        return {"git_commit": None, "dirty": None, "note": f"git unavailable: {e}"}


class RunRecord:
    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ckpt_dir = self.dir / "checkpoints"

    def start(self, config: dict, argv: list[str] | None = None) -> None:
        argv = sys.argv if argv is None else argv
        write_json(self.dir / "config.json", config)
        write_text(self.dir / "command.txt", shlex.join([sys.executable, *argv]) + "\n")
        write_json(self.dir / "code_version.json", code_version())
        self.set_status("running")

    def set_status(self, status: str, error: str | None = None) -> None:
        record = {"status": status, "time": dt.datetime.now().isoformat(timespec="seconds")}
        if error:
            record["error"] = error
        write_json(self.dir / "status.json", record)

    def write_summary(self, summary: dict) -> None:
        write_json(self.dir / "summary.json", summary)

    def read_json(self, name: str) -> dict | None:
        try:
            return json.loads((self.dir / name).read_text())
        except (OSError, ValueError):
            return None
