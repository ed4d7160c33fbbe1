"""`--profile`: where each process's time goes, with cProfile.

Each process of a run is profiled from start to exit and writes, into <run_dir>/profile/:

    <role>        policy, reward_predictor, pref_interface and parent in the three-process modes; the
                  mode's name (e.g. train_policy_with_original_rewards) in the one-process modes
    <role>.prof   cProfile statistics (open with `python -m pstats`, snakeviz, ...)
    <role>.txt    the process's wall time, then the functions with the most time of their own and the
                  most cumulative time, each as a share of that wall time

cProfile sees the thread that runs the role's loop; the predictor's preference-receiving thread and
TensorFlow's and ale-py's own C++ threads are not in it (their work shows as time inside the Python call
that waits for them). Time inside TensorFlow ops counts towards the Python function that ran them.
A child stopped by force (still running after the stop event and its grace period) writes no profile.
A profile that cannot be saved costs a warning, never the run's outcome. Profiling slows Python-heavy
code by a few percent; `bench/throughput.py` measures speed without it.
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import time
from contextlib import contextmanager
from pathlib import Path

TOP = 25


def _table(stats: pstats.Stats, key: str, wall_s: float) -> list[str]:
    rows = []
    for func, (cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((tt if key == "tottime" else ct, nc, tt, ct, pstats.func_std_string(func)))
    rows.sort(key=lambda r: r[0], reverse=True)
    lines = [f"{'own s':>9} {'own %':>6} {'cum s':>9} {'cum %':>6} {'calls':>10}  function"]
    for _, nc, tt, ct, name in rows[:TOP]:
        lines.append(f"{tt:9.2f} {100 * tt / wall_s:5.1f}% {ct:9.2f} {100 * ct / wall_s:5.1f}% {nc:10d}  {name}")
    return lines


def write_profile(prof: cProfile.Profile, out_dir: Path, role: str, wall_s: float) -> Path:
    """Save <role>.prof and <role>.txt (atomically: temp file, then rename); returns the .txt path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{role}.prof.tmp"
    prof.dump_stats(str(tmp))
    os.replace(tmp, out_dir / f"{role}.prof")
    stats = pstats.Stats(prof, stream=io.StringIO())
    wall_s = max(wall_s, 1e-9)
    text = [f"{role}: {wall_s:.1f} s of wall time profiled (pid {os.getpid()})", "",
            f"most time of their own (share of the {wall_s:.1f} s):", *_table(stats, "tottime", wall_s), "",
            "most cumulative time:", *_table(stats, "cumtime", wall_s), ""]
    txt = out_dir / f"{role}.txt"
    tmp_txt = out_dir / f".{role}.txt.tmp"
    tmp_txt.write_text("\n".join(text))
    os.replace(tmp_txt, txt)
    return txt


@contextmanager
def profiled(out_dir: str | Path | None, role: str):
    """Profile the body into out_dir/<role>.{prof,txt}; does nothing when out_dir is None."""
    if out_dir is None:
        yield
        return
    prof = cProfile.Profile()
    t0 = time.monotonic()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        try:
            write_profile(prof, Path(out_dir), role, time.monotonic() - t0)
        except Exception as e:  # noqa: BLE001 -- a profile that cannot be saved must not change the run's outcome
            print(f"[{role}] warning: profile not saved: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
