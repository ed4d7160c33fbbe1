"""The run archive's command line.

    python -m floyd list                      a table of the runs under --runs_dir (default runs/)
    python -m floyd show RUN                  its command, code version, config, status, figures
    python -m floyd rerun RUN [--run_dir D]   run it again from the same code version and command
    python -m floyd compare RUN... [--out F]  one PNG of their true-return curves (seeds: mean and spread)
    python -m floyd seeds --n 3 -- ARGS       run.py ARGS with 3 seeds in parallel, then a table
    python -m floyd export RUN --out DIR      its policy and predictor as a small model folder (weights, its record)

RUN is a run directory, a name as `list` prints it, or a unique prefix of one. A bad RUN or folder
gives one line on stderr and exit code 2. Listing loads no TensorFlow.
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from drlhp.processes.interrupts import INTERRUPTED_EXIT, broken_pipe_exit
from drlhp.records.formatting import format_duration, format_number
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import flatten
from floyd.index import FloydError, RunEntry, find_run, looks_like_run, scan

PROG = "python -m floyd"


def _one_line(text: str | None, width: int = 70) -> str:
    if not text:
        return ""
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[:width - 3] + "..."


def cmd_list(opts) -> int:
    runs, skipped = scan(Path(opts.runs_dir))
    header = ["name", "mode", "env", "seed", "start", "duration", "status", "true return", "labels", "note"]
    rows = []
    for e in runs:
        note = _one_line(e.error) if e.status == "crashed" else "; ".join(e.notes)
        if e.rerun and not note:
            note = f"rerun of {e.rerun.get('rerun_of_name', '?')}"
        rows.append([e.name, e.mode or "-", e.env or "-", "-" if e.seed is None else str(e.seed),
                     e.start.strftime("%Y-%m-%d %H:%M") if e.start else "-", format_duration(e.duration_s), e.status,
                     format_number(e.true_return, ".2f"), "-" if e.labels is None else str(e.labels), note])
    if rows:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    else:
        print(f"no runs in {opts.runs_dir}")
    for e in skipped:
        print(f"skipped {e.name}: {'; '.join(e.notes)}")
    return 0


def _config_lines(config: dict) -> list[str]:
    """The settings that differ from run.py's defaults for that mode and env."""
    from drlhp.config import RunConfig  # dataclasses only: no TensorFlow

    try:
        defaults = flatten(RunConfig(mode=config.get("mode"), env=config.get("env")).to_dict())
    except TypeError:
        defaults = {}
    flat = flatten(config)
    return [f"  {k} = {v!r}" for k, v in flat.items()
            if k not in ("mode", "env") and (k not in defaults or defaults[k] != v)]


def cmd_show(opts) -> int:
    e = find_run(opts.run, Path(opts.runs_dir))
    print(f"run       {e.name}   ({e.path})")
    print(f"mode      {e.mode or '-'} on {e.env or '-'}, seed {e.seed if e.seed is not None else '-'}")
    print(f"status    {e.status}" + (f" at {e.end.isoformat(sep=' ')}" if e.end else ""))
    if e.error:
        for line in e.error.rstrip().splitlines()[-12:]:
            print(f"          {line}")
    print(f"started   {e.start.isoformat(sep=' ') if e.start else '-'}; duration {format_duration(e.duration_s)}"
          + (f"; {len(e.run_json.get('sittings', []))} sitting(s)" if e.run_json else ""))
    sittings = e.run_json.get("sittings", []) if e.run_json else []
    for i, sitting in enumerate(sittings if len(sittings) > 1 else [], 1):
        if isinstance(sitting, dict):
            changes = {k: v for k, v in (sitting.get("config_changes") or {}).items()
                       if isinstance(v, list) and len(v) == 2}  # a malformed entry is skipped, not a crash
            print(f"sitting {i} {sitting.get('started', '-')}"
                  + (f", git {str(sitting['git_commit'])[:10]}" if sitting.get("git_commit") else "")
                  + (": " + ", ".join(f"{k} {_short(a)} -> {_short(b)}" for k, (a, b) in changes.items())
                     if changes else ""))
    for note in e.notes:
        print(f"note      {note}")
    if e.rerun:
        print(f"rerun of  {e.rerun.get('rerun_of')} (code: {e.rerun.get('code')})")
    print(f"command   {e.command or '- (no command.txt)'}")
    if e.run_json and e.run_json.get("cwd"):
        print(f"cwd       {e.run_json['cwd']}")
    cv = e.code_version
    if cv is None:
        print("code      - (no code_version.json)")
    elif cv.get("git_commit"):
        diff = cv.get("diff") or ""
        print(f"code      git {cv['git_commit']}" + (f", with uncommitted changes ({len(diff.splitlines())} diff lines)"
                                                    if cv.get("dirty") or diff else ", clean")
              + (f", {len(cv['untracked_archived'])} untracked file(s) archived"
                 if cv.get("untracked_archived") else ""))
    else:
        print(f"code      no git ({cv.get('note', '')}); source archive: {cv.get('source_archive', 'none')}")
    if e.config:
        lines = _config_lines(e.config)
        print(f"config    {RunPaths(e.path).config}" + ("; not the defaults:" if lines else "; all defaults"))
        for line in lines:
            print(line)
    if e.summary:
        print("summary   " + ", ".join(f"{k}={_short(v)}" for k, v in e.summary.items()))
    figures = sorted(p.name for p in e.path.glob("*.png"))
    print(f"figures   {', '.join(str(e.path / f) for f in figures) if figures else '- (no PNG)'}")
    paths = RunPaths(e.path)
    logs = [str(n) for n in (paths.STDOUT, paths.STDERR, paths.PROGRESS, paths.PROGRESS_REWARD, paths.PROGRESS_PREFS)
            if (e.path / n).exists()]
    print(f"files     {', '.join(logs) if logs else '-'}" + (", tb/" if paths.tb.is_dir() else "")
          + (", checkpoints/" if paths.checkpoints.is_dir() else ""))
    return 0


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def cmd_rerun(opts) -> int:
    from floyd.rerun import rerun

    entry = find_run(opts.run, Path(opts.runs_dir))
    return rerun(entry, opts.run_dir, fresh_checkout=opts.fresh_checkout)


def _expand(specs: list[str], runs_dir: Path) -> list[RunEntry]:
    """Runs named on the command line; a folder of runs (e.g. a seeds group) stands for all its runs."""
    entries = []
    for spec in specs:
        for candidate in (Path(spec), runs_dir / spec):
            if candidate.is_dir() and not looks_like_run(candidate):
                group, _ = scan(candidate)
                if group:
                    entries.extend(group)
                    break
        else:
            entries.append(find_run(spec, runs_dir))
    return entries


def cmd_compare(opts) -> int:
    from floyd.plots import compare

    entries = _expand(opts.runs, Path(opts.runs_dir))
    out = Path(opts.out or f"compare-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.png")
    path, notes = compare(entries, out, title=opts.title)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(path)
    return 0


def cmd_seeds(opts) -> int:
    from floyd import seeds

    return seeds.main(opts, opts.run_args, Path(opts.runs_dir))


def cmd_export(opts) -> int:
    from floyd.export import export_model

    entry = find_run(opts.run, Path(opts.runs_dir))
    files = export_model(entry.path, opts.out, opts.checkpoint)
    print(", ".join(f"{f} ({f.stat().st_size / 1e6:.1f} MB)" for f in files) + f" and the run's record in {opts.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--runs_dir", default=argparse.SUPPRESS, help="the runs folder (default: runs)")
    p = argparse.ArgumentParser(prog=PROG, description="The run archive: list, show, rerun, compare, export "
                                                       "runs; run seeds.", parents=[common])
    sub = p.add_subparsers(dest="command", required=True, metavar="{list,show,rerun,compare,seeds,export}")
    s = sub.add_parser("list", parents=[common], help="a table of the runs")
    s.set_defaults(fn=cmd_list)
    s = sub.add_parser("show", parents=[common], help="one run: command, code, config, status, figures")
    s.add_argument("run")
    s.set_defaults(fn=cmd_show)
    s = sub.add_parser("rerun", parents=[common], help="run a run again from its code version and command")
    s.add_argument("run")
    s.add_argument("--run_dir", default=None, help="the new run directory (default: <run>-rerun-<time>)")
    s.add_argument("--fresh_checkout", action="store_true",
                   help="use a fresh checkout of the recorded code even where this checkout is the same")
    s.set_defaults(fn=cmd_rerun)
    s = sub.add_parser("compare", parents=[common], help="one PNG of several runs' curves")
    s.add_argument("runs", nargs="+", help="runs, or folders of runs (all seeds of a group)")
    s.add_argument("--out", default=None, help="the PNG (default: compare-<time>.png)")
    s.add_argument("--title", default=None)
    s.set_defaults(fn=cmd_compare)
    s = sub.add_parser("seeds", parents=[common], help="one run.py command with N seeds, in parallel",
                       epilog="Everything after -- goes to run.py (without --seed and --run_dir).")
    s.add_argument("--n", type=int, default=3, help="seeds first_seed .. first_seed + n - 1 (default 3)")
    s.add_argument("--first_seed", type=int, default=0)
    s.add_argument("--seeds", type=int, nargs="+", default=None, help="these seeds instead of --n")
    s.add_argument("--threshold", type=float, default=None,
                   help="count the seeds whose metric reaches this (default 0.9 for success_rate_last100)")
    s.add_argument("--metric", default=None, help="a summary.json key (default: success_rate_last100 where "
                                                  "the runs have it, else true_return_last100)")
    s.add_argument("--parallel", type=int, default=None, help="runs at once (default: min(n, cores))")
    s.add_argument("--name", default=None,
                   help="the group folder under --runs_dir (default: seeds-<env>-<mode>-<time>)")
    s.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local: subprocesses here; ray: each seed a Ray task (run directories brought back)")
    s.add_argument("--ray_address", default=None, help="--backend ray: join this cluster (auto or HOST:PORT); "
                                                      "default: start a local Ray")
    s.set_defaults(fn=cmd_seeds)
    s = sub.add_parser("export", parents=[common],
                       help="a run's policy and predictor as a small model folder (for models/)")
    s.add_argument("run")
    s.add_argument("--out", required=True, help="the model folder (new, or empty), e.g. models/pong-prefs")
    s.add_argument("--checkpoint", default=None, help="this policy checkpoint (default: the run's newest)")
    s.set_defaults(fn=cmd_export)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    run_args: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, run_args = argv[:i], argv[i + 1:]
    opts = build_parser().parse_args(argv)
    opts.runs_dir = getattr(opts, "runs_dir", "runs")  # before or after the subcommand; not a shared default
    opts.run_args = run_args
    if run_args and opts.command != "seeds":
        print(f"{PROG}: error: only seeds takes run.py arguments after --", file=sys.stderr)
        return 2
    if opts.command == "seeds" and not run_args:
        print(f"{PROG}: error: seeds needs the run.py arguments after --, e.g. "
              f"{PROG} seeds --n 3 -- train_policy_with_original_rewards --env MovingDot-v0", file=sys.stderr)
        return 2
    try:
        return opts.fn(opts)
    except FloydError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `list | head`: the reader has gone; no message
        return broken_pipe_exit()
    except OSError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT


if __name__ == "__main__":
    sys.exit(main())
