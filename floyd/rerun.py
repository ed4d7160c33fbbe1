"""Run a recorded run again, from the same code version and command, into a new run directory.

    code    where the current checkout is the recorded commit with no changes (and no untracked files
            either side), run.py runs in place; otherwise a fresh checkout of the recorded commit in a
            temporary folder (`git clone --shared`: nothing is written into this repository), with the
            recorded diff applied and the recorded untracked files restored; where the run recorded no
            git commit, its source archive unpacked. The temporary folder is removed afterwards.
    command the recorded run.py arguments, with --run_dir replaced by the new run directory; run
            from the recorded working directory, so relative paths mean what they meant.
    record  <new run_dir>/rerun.json names the original run and how its code was restored; the new
            run's own command.txt and code_version.json show what actually ran.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from drlhp.records.atomic import write_json
from drlhp.records.run_record import (
    REPO_ROOT,
    SOURCE_ARCHIVE,
    UNTRACKED_ARCHIVE,
    archivable_untracked,
    code_version,
    now_iso,
)
from floyd.index import FloydError, RunEntry, read_run


def run_args(command: str) -> list[str]:
    """The run.py arguments of a recorded command line (``python run.py ARGS``)."""
    try:
        tokens = shlex.split(command)
    except ValueError as e:
        raise FloydError(f"command.txt cannot be parsed: {e}") from None
    for i, token in enumerate(tokens):
        if Path(token).name == "run.py":
            return tokens[i + 1:]
    raise FloydError(f"command.txt does not run run.py: {command[:80]}")


def without_run_dir(args: list[str]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--run_dir":
            skip = True
        elif not a.startswith("--run_dir="):
            out.append(a)
    return out


def _git(cwd: Path, *args, input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, input=input_bytes, capture_output=True, timeout=300)


def _extract(archive: Path, dest: Path) -> None:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(dest, filter="data")  # no absolute paths, no escaping links
            else:  # pragma: no cover - Python < 3.11.4
                tar.extractall(dest)
    except (OSError, tarfile.TarError) as e:
        raise FloydError(f"cannot unpack {archive}: {e}") from None


def _runs_in_place(recorded: dict, repo: Path) -> bool:
    """The checkout is exactly the recorded code: same commit, no changes, no untracked files either side."""
    current = code_version(repo)
    return (current.get("git_commit") == recorded.get("git_commit") and not recorded.get("dirty")
            and not recorded.get("untracked_archived") and not current.get("dirty")
            and not _archivable(current, repo))


def _archivable(version: dict, repo: Path) -> list[str]:
    return archivable_untracked(repo, version.get("untracked") or [])[0]


def prepare_code(entry: RunEntry, workdir: Path, fresh_checkout: bool, repo: Path = REPO_ROOT) -> tuple[Path, str]:
    """The folder to run run.py from, and how it was made."""
    recorded = entry.code_version
    if recorded is None:
        raise FloydError(f"cannot rerun {entry.name}: no readable code_version.json (incomplete or older run)")
    commit = recorded.get("git_commit")
    if commit is None:
        archive = entry.path / (recorded.get("source_archive") or SOURCE_ARCHIVE)
        if not archive.is_file():
            raise FloydError(f"cannot rerun {entry.name}: it recorded no git commit and no source archive")
        src = workdir / "src"
        src.mkdir()
        _extract(archive, src)
        return src, f"source archive {archive.name}"
    if not fresh_checkout and _runs_in_place(recorded, repo):
        return repo, f"in place (this checkout is commit {commit[:12]}, unchanged)"
    src = workdir / "src"
    proc = _git(repo, "clone", "--quiet", "--shared", "--no-checkout", str(repo), str(src))
    if proc.returncode != 0:
        raise FloydError(f"cannot make a checkout of {repo}: {proc.stderr.decode(errors='replace').strip()[:200]}")
    proc = _git(src, "checkout", "--quiet", "--detach", commit)
    if proc.returncode != 0:
        raise FloydError(f"cannot rerun {entry.name}: commit {commit[:12]} is not in the repository {repo}")
    how = f"fresh checkout of {commit[:12]}"
    diff = recorded.get("diff") or ""
    if diff:
        proc = _git(src, "apply", "--binary", "--whitespace=nowarn", "-",
                    input_bytes=diff.encode("utf-8", "surrogateescape"))
        if proc.returncode != 0:
            raise FloydError(f"cannot rerun {entry.name}: its recorded diff does not apply to {commit[:12]}: "
                             f"{proc.stderr.decode(errors='replace').strip().splitlines()[0]}")
        how += " + the recorded diff"
    if recorded.get("untracked_archived"):
        archive = entry.path / (recorded.get("untracked_archive") or UNTRACKED_ARCHIVE)
        if not archive.is_file():
            raise FloydError(f"cannot rerun {entry.name}: its untracked files' archive {archive} is missing")
        _extract(archive, src)
        how += f" + {len(recorded['untracked_archived'])} untracked file(s)"
    skipped = recorded.get("untracked_skipped") or {}
    if skipped:
        print(f"[floyd] note: {len(skipped)} untracked path(s) were not archived with the run: "
              f"{', '.join(list(skipped)[:5])}", file=sys.stderr, flush=True)
    return src, how


def default_new_run_dir(entry: RunEntry) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return entry.path.parent / f"{entry.path.name}-rerun-{stamp}"


def rerun(entry: RunEntry, new_run_dir: str | Path | None = None, fresh_checkout: bool = False,
          python: str = sys.executable) -> int:
    """Run ``entry`` again; returns run.py's exit code."""
    if entry.command is None:
        raise FloydError(f"cannot rerun {entry.name}: no command.txt (incomplete run)")
    args = without_run_dir(run_args(entry.command))
    new_dir = Path(new_run_dir or default_new_run_dir(entry)).absolute()
    if new_dir.exists() and any(new_dir.iterdir()):
        raise FloydError(f"{new_dir} already exists and is not empty; pass another --run_dir")
    cwd = Path((entry.run_json or {}).get("cwd") or REPO_ROOT)
    if not cwd.is_dir():
        cwd = REPO_ROOT
    workdir = Path(tempfile.mkdtemp(prefix="floyd-rerun-"))
    try:
        code_dir, how = prepare_code(entry, workdir, fresh_checkout)
        new_dir.mkdir(parents=True, exist_ok=True)
        write_json(new_dir / "rerun.json", {"rerun_of": str(entry.path.absolute()), "rerun_of_name": entry.name,
                                            "git_commit": (entry.code_version or {}).get("git_commit"),
                                            "code": how, "started": now_iso()})
        cmd = [python, str(code_dir / "run.py"), *args, "--run_dir", str(new_dir)]
        print(f"[floyd] rerun of {entry.name}: code {how}; run.py {shlex.join(args)} -> {new_dir}", flush=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the restored code, not this checkout
        code = subprocess.run(cmd, cwd=cwd, env=env).returncode
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(check_same(entry, read_run(new_dir)), flush=True)
    return code


def check_same(original: RunEntry, new: RunEntry) -> str:
    """One line: whether the new run recorded the original's command (less --run_dir) and code version."""
    same_cmd = (original.command and new.command
                and without_run_dir(run_args(original.command)) == without_run_dir(run_args(new.command)))
    a, b = original.code_version or {}, new.code_version or {}
    keys = ("git_commit", "diff", "untracked_archived")  # absent and empty alike mean none
    same_code = bool(a) and bool(b) and all((a.get(k) or None) == (b.get(k) or None) for k in keys)
    if a.get("git_commit") is None and a.get("source_archive"):
        contents = _archive_contents(original.path / a["source_archive"])
        same_code = contents is not None and contents == _archive_contents(
            new.path / (b.get("source_archive") or SOURCE_ARCHIVE))
    return (f"[floyd] {new.name} ({new.status}): command {'the same' if same_cmd else 'DIFFERENT'} (but --run_dir), "
            f"code version {'the same' if same_code else 'DIFFERENT'} "
            f"(commit {str(b.get('git_commit'))[:12]}{', with a diff' if b.get('diff') else ''})")


def _archive_contents(path: Path) -> dict[str, str] | None:
    """{member name: sha256 of its bytes} of a .tar.gz, or None where it cannot be read."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            return {m.name: hashlib.sha256(tar.extractfile(m).read()).hexdigest()
                    for m in tar.getmembers() if m.isfile()}
    except (OSError, tarfile.TarError):
        return None
