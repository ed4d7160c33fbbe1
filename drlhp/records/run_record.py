"""The run directory: what every run leaves behind.

    <run_dir>/run.json           format version, start time, working directory, host, pid (per sitting)
    <run_dir>/config.json        all arguments, resolved
    <run_dir>/command.txt        the exact command line
    <run_dir>/code_version.json  git commit, dirty flag, the diff of uncommitted changes (binary-safe),
                                 the untracked files (copied into untracked_files.tar.gz); with no git:
                                 a note, and the source itself in source.tar.gz
    <run_dir>/status.json        running / finished / crashed (with the error) / interrupted / stopped, or,
                                 once the parent has died, "parent gone: saving" / "... saved" / "... not all
                                 saved", written by the children themselves (record_parent_gone)
    <run_dir>/stdout.log, stderr.log  the output of the run and of its child processes (drlhp.processes.output_tee)
    <run_dir>/progress*.csv, tb/ metrics (drlhp.records.metrics)
    <run_dir>/checkpoints/       policy checkpoints (drlhp.policy.checkpoint)
    <run_dir>/summary.json       final figures, written at the end
    <run_dir>/curves.png         the main curves, drawn at the end (drlhp.records.curves)

A resumed run (same --run_dir) keeps run.json's first start time and adds a sitting; config.json,
command.txt and code_version.json then describe the latest sitting, and each sitting in run.json keeps
its own command line, git commit and the arguments that changed from the sitting before
("config_changes": {name: [before, after]}).

Every path above is spelled once, in drlhp.records.run_paths.RunPaths (``RunRecord(...).paths``).
This module must not import TensorFlow: the run archive (floyd/) reads run directories with it.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import io
import json
import os
import shlex
import socket
import subprocess
import sys
import tarfile
from pathlib import Path

from drlhp.records.atomic import write_bytes, write_json, write_text
from drlhp.records.run_paths import RunPaths

REPO_ROOT = Path(__file__).resolve().parents[2]  # drlhp/records/run_record.py -> the checkout
# run.json's format. 1: run.json, stdout/stderr logs, untracked files and source archives. Run
# directories without run.json were written by older versions (config, command, code version, status).
RUN_FORMAT_VERSION = 1
UNTRACKED_ARCHIVE = "untracked_files.tar.gz"
SOURCE_ARCHIVE = "source.tar.gz"
MAX_UNTRACKED_FILE_BYTES = 1 << 20  # larger untracked files are listed as skipped, not archived
MAX_UNTRACKED_TOTAL_BYTES = 20 << 20
SOURCE_SUFFIXES = (".py", ".txt", ".args", ".ini", ".cfg", ".toml", ".md", ".sh")
SOURCE_NAMES = ("Makefile",)
NOT_SOURCE_DIRS = {".git", ".venv", "venv", "runs", "__pycache__", ".pytest_cache", "out", "docs", "build", "dist"}


def now_iso() -> str:
    return dt.datetime.now().isoformat(timespec="seconds")


def default_run_dir(env: str, mode: str, runs_root: str | Path = "runs") -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(runs_root) / f"{env}-{mode}-{stamp}"


def _git(repo: Path, *args):
    # surrogateescape: a diff of a file that is not UTF-8 survives the round trip through JSON
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, encoding="utf-8",
                          errors="surrogateescape", timeout=60)


def code_version(repo: Path = REPO_ROOT) -> dict:
    """The git commit of the code, whether the tree had uncommitted changes (with their diff, binary-safe)
    and the untracked (not ignored) files."""
    try:
        head = _git(repo, "rev-parse", "HEAD")
        if head.returncode != 0:
            return {"git_commit": None, "dirty": None, "note": "not a git checkout, or no commit yet"}
        status = _git(repo, "status", "--porcelain", "--untracked-files=no")
        diff = _git(repo, "diff", "HEAD", "--binary")
        untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z")
        return {"git_commit": head.stdout.strip(), "dirty": bool(status.stdout.strip()), "diff": diff.stdout,
                "untracked": sorted(n for n in untracked.stdout.split("\0") if n)}
    except (OSError, subprocess.SubprocessError) as e:
        return {"git_commit": None, "dirty": None, "note": f"git unavailable: {e}"}


def _tar_gz(root: Path, names: list[str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in names:
            tar.add(root / name, arcname=name, recursive=False)
    return buf.getvalue()


def archivable_untracked(repo: Path, names: list[str]) -> tuple[list[str], dict[str, str]]:
    """Untracked names worth copying (regular files, not too large), and the others with the reason."""
    keep, skipped, total = [], {}, 0
    for name in names:
        path = repo / name
        if path.is_symlink() or not path.is_file():
            skipped[name] = "not a regular file"
            continue
        size = path.stat().st_size
        if size > MAX_UNTRACKED_FILE_BYTES or total + size > MAX_UNTRACKED_TOTAL_BYTES:
            skipped[name] = f"too large to copy ({size:,} bytes)"
            continue
        keep.append(name)
        total += size
    return keep, skipped


def source_files(repo: Path = REPO_ROOT) -> list[str]:
    """The project's source files (relative names), for a source archive where there is no git."""
    out = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in NOT_SOURCE_DIRS and not d.startswith(".") and not d.endswith(".egg-info"))
        for f in sorted(filenames):
            if f.endswith(SOURCE_SUFFIXES) or f in SOURCE_NAMES:
                out.append(str((Path(dirpath) / f).relative_to(repo)))
    return out


def record_code_version(run_dir: Path, repo: Path = REPO_ROOT) -> dict:
    """Write code_version.json (and the archive it names) into run_dir; returns what it wrote."""
    version = code_version(repo)
    try:
        if version["git_commit"] is None:
            names = source_files(repo)
            write_bytes(run_dir / SOURCE_ARCHIVE, _tar_gz(repo, names))
            version["source_archive"] = SOURCE_ARCHIVE
            version["source_files"] = len(names)
        else:
            keep, skipped = archivable_untracked(repo, version.get("untracked") or [])
            if keep:
                write_bytes(run_dir / UNTRACKED_ARCHIVE, _tar_gz(repo, keep))
                version["untracked_archive"] = UNTRACKED_ARCHIVE
            version["untracked_archived"] = keep
            if skipped:
                version["untracked_skipped"] = skipped
    except OSError as e:  # an unreadable file must not stop the run; say so in the record
        version["archive_error"] = f"{type(e).__name__}: {e}"
    write_json(RunPaths(run_dir).code_version, version)
    return version


def flatten(d: dict, prefix: str = "") -> dict:
    """{"a2c": {"lr": 1}} -> {"a2c.lr": 1} (also floyd's view of configs)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


# Settings renamed since runs were first recorded: {flattened name in an older config.json: today's name}.
RENAMED_SETTINGS = {"reward.n_predictors": "reward.n_members",  # the flag is still --n_predictors
                    "reward.tf_intra_threads": "reward.tf_threads"}  # its flag: --reward_tf_threads
# Settings that were on/off switches before they took "auto" (a recorded true/false reads as "on"/"off"), and
# the value each had where a config recorded before the setting existed lacks it: that of the code then, not
# today's default ("auto" chooses bfloat16 on some CPUs; the runs recorded before it computed in float32)
ON_OFF_SETTINGS = ("reward.onednn", "reward.bfloat16")
VALUE_BEFORE = {"reward.bfloat16": "off", "policy_bfloat16": "off"}
# Settings removed since runs were recorded, each with the value at which a run behaved as today's code does (the
# setting off): {flattened name: that value}. A config holding one at that value reads as today's; at another it
# keeps it, and a resume sees a setting today's code cannot honour (issue 60: H32's diagnostic arm)
REMOVED_SETTINGS = {"ppo.diag_fall_cost": 0.0}


def _holder(config: dict, name: str) -> tuple[dict | None, str]:
    """Where a flattened setting name lives in a recorded config: (its section's dict, or the config itself for a
    top-level name; None where that section is missing or no dict), and its key."""
    section, _, key = name.rpartition(".")
    part = config.get(section) if section else config
    return (part if isinstance(part, dict) else None), key


def config_in_todays_names(config):
    """A recorded config (config.json, of any version) in today's names, for whatever reads one back:
    each of RENAMED_SETTINGS under its new name, ON_OFF_SETTINGS' true/false as "on"/"off", and
    prefs.synthetic_prefs (before --labeller said who labels) as prefs.labeller (True: "oracle", False:
    "window"), and each of REMOVED_SETTINGS dropped where it holds its off value. Settings it lacks stay
    absent (``with_values_before`` fills those whose value then was not today's default), the rest as they
    were; anything but a dict is returned as it is."""
    if not isinstance(config, dict):
        return config
    config = {k: dict(v) if isinstance(v, dict) else v for k, v in config.items()}
    for old, new in RENAMED_SETTINGS.items():
        (before, old_name), (after, new_name) = _holder(config, old), _holder(config, new)
        if before is not None and after is not None and old_name in before and new_name not in after:
            after[new_name] = before.pop(old_name)
    for name in ON_OFF_SETTINGS:
        part, key = _holder(config, name)
        if part is not None and isinstance(part.get(key), bool):
            part[key] = "on" if part[key] else "off"
    for name, off in REMOVED_SETTINGS.items():
        part, key = _holder(config, name)
        if part is not None and key in part and part[key] == off:
            del part[key]
    prefs = config.get("prefs")
    if isinstance(prefs, dict) and "synthetic_prefs" in prefs:
        prefs.setdefault("labeller", "oracle" if prefs.pop("synthetic_prefs") else "window")
    return config


def with_values_before(config: dict) -> dict:
    """A recorded config (in today's names) with each VALUE_BEFORE setting it lacks at the value the code had
    then: what a resume compares against and a saved predictor is rebuilt with."""
    config = {k: dict(v) if isinstance(v, dict) else v for k, v in config.items()}
    for name, value in VALUE_BEFORE.items():
        part, key = _holder(config, name)
        if part is not None:
            part.setdefault(key, value)
    return config


ABSENT = "(absent)"  # config_changes: the argument did not exist on that side (an older or newer version)


def config_changes(before: dict, after: dict, ignore: tuple[str, ...] = ()) -> dict:
    """{"section.name": [before, after]} for every argument that differs (nested sections flattened);
    an argument on one side only shows ABSENT on the other. ``ignore``: flattened names left out, each with
    the names under it (``"policy_resources"`` also leaves out ``"policy_resources.GPU"``: a dict setting)."""
    a, b = flatten(before), flatten(after)
    ignored = lambda k: any(k == name or k.startswith(name + ".") for name in ignore)  # noqa: E731
    pairs = {k: [a.get(k, ABSENT), b.get(k, ABSENT)] for k in sorted({*a, *b}) if not ignored(k)}
    return {k: pair for k, pair in pairs.items() if pair[0] != pair[1]}


PARENT_GONE = "parent gone"  # the start of each status the children write once the parent has died
SAVED, STOPPING = "saved", "stopping"  # a role's outcome after the parent died (else what went wrong)


def parent_gone_status(roles: dict[str, str], expected: set[str]) -> str:
    """The run's status from what each role did once the parent died (``roles``: role -> outcome, SAVED,
    STOPPING or what went wrong); ``expected``: every role of the run (one that wrote nothing is stopping)."""
    outcomes = [roles.get(role, STOPPING) for role in sorted(expected | set(roles))]
    if STOPPING in outcomes:
        return f"{PARENT_GONE}: saving"
    return f"{PARENT_GONE}: {SAVED}" if all(o == SAVED for o in outcomes) else f"{PARENT_GONE}: not all saved"


def record_parent_gone(run_dir: str | Path, role: str, outcome: str) -> dict:
    """A child's word in status.json once the parent is gone (nobody else will write it): ``outcome`` is
    STOPPING (it noticed), SAVED (its role returned, having saved) or what went wrong. Several children
    write at once: each merges its outcome under a lock on the run directory (flock), and the status says
    "parent gone: saved" once every role in pids.json has saved. A final outcome is never set back to
    STOPPING. Returns the record written."""
    paths = RunPaths(run_dir)
    fd = os.open(paths.root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes
        try:
            current = json.loads(paths.status.read_text())
        except (OSError, ValueError):
            current = {}
        current = current if isinstance(current, dict) else {}
        ours = str(current.get("status", "")).startswith(PARENT_GONE) and isinstance(current.get("roles"), dict)
        roles = dict(current["roles"]) if ours else {}
        if outcome != STOPPING or roles.get(role) in (None, STOPPING):
            roles[role] = outcome
        try:
            pids = json.loads((paths.root / "pids.json").read_text())
            expected = {r for r in pids if r != "parent"} if isinstance(pids, dict) else set()
        except (OSError, ValueError):
            expected = set()
        record = {"status": parent_gone_status(roles, expected), "time": now_iso(), "roles": roles}
        if ours and "parent_gone_at" in current:
            record["parent_gone_at"] = current["parent_gone_at"]
        else:
            record["parent_gone_at"] = record["time"]
        write_json(paths.status, record)
        return record
    finally:
        os.close(fd)


class RunRecord:
    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.paths = RunPaths(self.dir)
        self.ckpt_dir = self.paths.checkpoints

    def start(self, config: dict, argv: list[str] | None = None, derived: tuple[str, ...] = (),
              machine: dict | None = None) -> None:
        """Record a sitting. ``derived``: arguments the run filled in itself (a resumed run's own
        checkpoint directory), left out of the sitting's config_changes. ``machine``: what this sitting
        chose for the machine it runs on (the TensorFlow kernel libraries: a resume elsewhere may differ)."""
        argv = sys.argv if argv is None else argv
        command = shlex.join([sys.executable, *argv])
        sitting = {"started": now_iso(), "pid": os.getpid(), "host": socket.gethostname(), "cwd": os.getcwd(),
                   "python": sys.executable, "command": command}
        if machine:
            sitting["machine"] = machine
        previous = self.read_json(RunPaths.RUN) or {}
        sittings = previous.get("sittings") if isinstance(previous.get("sittings"), list) else []
        before = config_in_todays_names(self.read_json(RunPaths.CONFIG))
        if before is not None:
            sitting["config_changes"] = config_changes(before, config, ignore=derived)
        meta = {"format_version": RUN_FORMAT_VERSION, "started": previous.get("started", sitting["started"]),
                **{k: sitting[k] for k in ("pid", "host", "cwd", "python")}, "sittings": [*sittings, sitting]}
        write_json(self.paths.run_json, meta)
        write_json(self.paths.config, config)
        write_text(self.paths.command, command + "\n")
        sitting["git_commit"] = record_code_version(self.dir).get("git_commit")
        write_json(self.paths.run_json, meta)  # the same record, now with the sitting's commit
        self.set_status("running")

    def set_status(self, status: str, error: str | None = None) -> None:
        record = {"status": status, "time": now_iso()}
        if error:
            record["error"] = error
        write_json(self.paths.status, record)

    def write_summary(self, summary: dict) -> None:
        write_json(self.paths.summary, summary)

    def read_json(self, name: str | Path) -> dict | None:
        try:
            value = json.loads((self.dir / name).read_text())
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None
