#!/usr/bin/env python
"""Where a process's time goes, from py-spy's raw samples of a live run.

py-spy samples a running process from outside (no restart, no instrumentation), so it profiles a real
long run as it is; drlhp's own `--profile` (cProfile, drlhp/processes/profiling.py) needs the run started with it.
With the run's pids from <run_dir>/pids.json:

    py-spy record --pid PID --duration 90 --rate 50 --idle --threads --nonblocking --format raw -o ROLE.txt
    python experiments/pyspy_summary.py ROLE.txt [ROLE2.txt ...] [--top 12]

For each file, per thread: its share of the samples (with --idle, waiting counts too), then the
innermost drlhp function on the stack (drlhp/, envs/, pref_interface/) with the call it was making
outside our code (TensorFlow, ale-py, a queue, a sleep), as shares of that thread's samples.
"""
from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

OURS = ("drlhp/", "envs/", "pref_interface/")
FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^:()]*)(?::\d+)?\)$")


def _parse(frame: str) -> tuple[str, str]:
    m = FRAME.match(frame.strip())
    return (m["func"], m["file"]) if m else (frame.strip(), "")


def where(frames: list[str]) -> str:
    """'our_function -> the library call it was in' for one sampled stack (outermost frame first)."""
    parsed = [_parse(f) for f in frames]
    ours = [i for i, (_, file) in enumerate(parsed) if file.startswith(OURS)]
    if not ours:
        return f"(outside drlhp) {parsed[-1][0]}" if parsed else "(empty)"
    i = ours[-1]
    func, file = parsed[i]
    below = parsed[i + 1] if i + 1 < len(parsed) else None
    name = f"{func} ({file})"
    if below is None:
        return name
    lib = below[1].split("/")[0] if "/" in below[1] else below[1]
    return f"{name} -> {below[0]} [{lib}]"


def summarize(path: Path, top: int) -> list[str]:
    per_thread: dict[str, Counter] = defaultdict(Counter)
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        thread = frames[0].split(":", 1)[-1].strip() if frames[0].startswith("thread") else "?"
        per_thread[thread][where(frames[1:])] += int(count)
    total = sum(sum(c.values()) for c in per_thread.values())
    out = [f"== {path.stem}: {total} samples"]
    for thread, counts in sorted(per_thread.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(counts.values())
        out.append(f"-- thread {thread}: {100 * n / total:.0f}% of the samples")
        for what, c in counts.most_common(top):
            out.append(f"   {100 * c / n:5.1f}%  {what}")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", type=Path, nargs="+")
    p.add_argument("--top", type=int, default=12)
    args = p.parse_args()
    for f in args.files:
        print("\n".join(summarize(f, args.top)))


if __name__ == "__main__":
    main()
