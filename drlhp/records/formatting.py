"""How durations and numbers are written for people: progress lines, the run archive's tables, the
benchmarks' reports. Imports nothing heavy (floyd and bench use it without TensorFlow).

    format_duration(3725)       '1h02m'       format_duration(303.4)   '5m03s'     format_duration(None)  '-'
    format_number(1234, ',')    '1,234'       format_number(0.12345)   '0.123'     format_number(True)    'yes'
"""
from __future__ import annotations

import math


def format_duration(seconds: float | None) -> str:
    """``1h02m`` from an hour on, else ``5m03s`` (rounded to the second); ``-`` for None or not finite."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    s = int(round(seconds))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def format_number(value, spec: str | None = None) -> str:
    """``value`` by ``spec`` (``format``'s mini-language; default ``.3g`` for a float, ``d`` for an int);
    ``-`` for None, ``yes``/``no`` for a bool, anything else as ``str``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return format(value, spec or (".3g" if isinstance(value, float) else "d"))
    return str(value)
