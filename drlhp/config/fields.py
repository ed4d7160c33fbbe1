"""A config field, what its value must be, and its flag: ``opt(default, check=...)`` makes a dataclass field
that is also a flag; the checks are (the words for the value, the test) pairs; ``flags_of`` lists the flags
of config classes, each with its help from the class's ``Attributes:`` docstring. drlhp.config builds the
command line, its checks and docs/flags.md from these."""
from __future__ import annotations

import argparse
import dataclasses
import math
import re
import typing
from dataclasses import dataclass, field

# --- what a value must be: (the words for it, the test) ---

def whole(least: int):
    return f"a whole number of at least {least}", lambda v: isinstance(v, int) and v >= least


def within(low: float, high: float, low_in: bool = True, high_in: bool = True):
    text = f"in {'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}"
    return text, lambda v: (low <= v if low_in else low < v) and (v <= high if high_in else v < high)


def one_of(options):
    return "one of " + ", ".join(options), lambda v: v in options


POSITIVE = "a finite number above 0", lambda v: 0 < v < math.inf
NOT_NEGATIVE = "a finite number of at least 0", lambda v: 0 <= v < math.inf
FINITE_OR_NONE = "a finite number", lambda v: v is None or math.isfinite(v)
SHARE_OR_NONE = "a number from 0 to 1", lambda v: v is None or 0 <= v <= 1


def json_resources(text: str) -> dict:
    """A --*_resources value: a JSON object of resource name -> amount (argparse type)."""
    import json

    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and v >= 0 for k, v in value.items()):
        raise argparse.ArgumentTypeError(f"not a JSON object of resource amounts: {text!r}")
    return value


def opt(default, *, check=None, choices=None, flag: str | None = None, negatable: bool = False,
        metavar: str | None = None, parse=None, cli: bool = True, aliases: dict | None = None):
    """A config field with what its flag needs: ``check`` (what the value must be: whole(1), POSITIVE, ...;
    ``choices`` imply one_of), ``flag`` (a name other than the default), ``negatable`` (a bool flag that
    also has --no-NAME; a setting of choices "on" and "off": --NAME alone is "on", --no-NAME "off"),
    ``parse`` (the flag's text to the value, where the field's type cannot), ``cli=False`` (no flag),
    ``aliases`` ({other flag: value}: a flag without a value that sets this field to that value, such as
    --synthetic_prefs for --labeller oracle)."""
    if choices is not None:
        check = one_of(choices)
    meta = {"check": check, "choices": choices, "flag": flag, "negatable": negatable, "metavar": metavar,
            "parse": parse, "cli": cli, "aliases": aliases or {}}
    if isinstance(default, (list, dict, set)) or callable(default):
        return field(default_factory=default, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Flag:
    name: str  # without the dashes; argparse's dest
    place: str  # in a RunConfig: "seed", "a2c.lr", ...
    group: str  # its group's title in drlhp.config.cli.GROUPS
    field: dataclasses.Field
    type: type
    help: str


def field_docs(cls) -> dict[str, str]:
    """The ``Attributes:`` entries of a config class's docstring: {field name: its text, on one line}."""
    docs, name = {}, None
    body = (cls.__doc__ or "").split("Attributes:", 1)[-1]
    for line in body.splitlines():
        m = re.match(r"^ {8}(\w+): (.*)$", line)
        if m:
            name = m.group(1)
            docs[name] = m.group(2).strip()
        elif name and line.startswith(" " * 12):
            docs[name] += " " + line.strip()
    return docs


def flags_of(groups) -> list[Flag]:
    """Every flag made from the fields of ``groups`` ((title, config class, its place in the whole config,
    flag prefix), as drlhp.config.cli.GROUPS), in --help's order."""
    out = []
    for title, cls, place, prefix in groups:
        hints, docs = typing.get_type_hints(cls), field_docs(cls)
        for f in dataclasses.fields(cls):
            if not f.metadata.get("cli", True):
                continue
            kind = next(t for t in typing.get_args(hints[f.name]) or (hints[f.name],) if t is not type(None))
            out.append(Flag(f.metadata.get("flag") or prefix + f.name, f"{place}.{f.name}".lstrip("."), title, f,
                            kind, docs.get(f.name, "")))
    return out


def default_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else "" if value is None else str(value)
