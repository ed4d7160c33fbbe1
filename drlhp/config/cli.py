"""The command line, built from the configs' fields (drlhp.config): one source per flag. A flag is the field's name
(RewardConfig's prefixed ``reward_`` unless ``opt(flag=...)`` says otherwise); its help is the field's entry in its
class docstring, its default the field's default, and ``opt(..., check=...)`` what run.py accepts before it starts
(``config_problem``). ``build_parser`` makes the parser from the fields (grouped by role), ``config_from_args`` the
RunConfig; ``flags_markdown`` writes docs/flags.md (``python -m drlhp.config``).
"""
from __future__ import annotations

import argparse
import dataclasses

from drlhp.config import DEFAULT_MODE, MODES, PrefConfig, RunConfig
from drlhp.config.a2c import A2CConfig
from drlhp.config.fields import Flag, default_text, flags_of
from drlhp.config.ppo import PPOConfig
from drlhp.config.reward import RewardConfig

# The command line's groups: (title, config class, its place in RunConfig, flag prefix).
GROUPS = (("the run", RunConfig, "", ""), ("policy (A2C)", A2CConfig, "a2c", ""),
          ("policy (PPO)", PPOConfig, "ppo", ""),
          ("preferences", PrefConfig, "prefs", ""), ("reward predictor", RewardConfig, "reward", "reward_"))


def flags() -> list[Flag]:
    """Every flag made from a config field, in --help's order."""
    return flags_of(GROUPS)


def build_parser() -> argparse.ArgumentParser:
    """run.py's parser: the mode, the flags of every config field (grouped by role; help from the field's
    docstring, its default shown), and the few flags that are not settings (--list_envs, --preset, ...)."""
    p = argparse.ArgumentParser(
        prog="run.py", usage="%(prog)s [MODE] --env ENV [flags]",
        description="Deep RL from human preferences (Christiano et al., 2017). Flags are the fields of "
                    "drlhp/config/; docs/flags.md lists them with what each accepts.")
    p.add_argument("mode", nargs="?", default=DEFAULT_MODE, choices=MODES, metavar="MODE",
                   help=f"what to run (default: {DEFAULT_MODE}): " + ", ".join(MODES))
    p.add_argument("--list_envs", action="store_true", help="print the valid env ids and exit")
    p.add_argument("--preset", default=None,
                   help="start from a named set of flags (later flags override it); default: the env's own "
                        "(MovingDot: moving-dot, Atari: paper, CartPole-v1: cartpole, MuJoCo: mujoco); --list_presets")
    p.add_argument("--list_presets", action="store_true", help="print the presets and their flags and exit")
    groups = {title: p.add_argument_group(title) for title, *_ in GROUPS}
    for flag in flags():
        f, meta = flag.field, flag.field.metadata
        g, text = groups[flag.group], flag.help.replace("%", "%%")
        if flag.type is bool:
            if f.default or meta["negatable"]:
                g.add_argument(f"--{flag.name}", action=argparse.BooleanOptionalAction, default=f.default,
                               help=f"{text} (default: {'on' if f.default else 'off'})")
            else:
                g.add_argument(f"--{flag.name}", action="store_true", help=text)
            continue
        text += f" (default: {default_text(f.default)})" if f.default is not None else ""
        metavar = meta["metavar"] or (None if meta["choices"] else {int: "N", float: "X"}.get(flag.type, "S"))
        if meta["negatable"]:  # --NAME alone: on; --no-NAME: off
            g.add_argument(f"--{flag.name}", nargs="?", const="on", default=f.default, choices=meta["choices"],
                           metavar=metavar, help=text)
            g.add_argument(f"--no-{flag.name}", dest=flag.name, action="store_const", const="off",
                           help=f"the same as --{flag.name} off")
            continue
        g.add_argument(f"--{flag.name}", type=meta["parse"] or flag.type, default=f.default, choices=meta["choices"],
                       metavar=metavar, help=text)
        for alias, value in meta["aliases"].items():
            g.add_argument(f"--{alias}", dest=flag.name, action="store_const", const=value,
                           help=f"the same as --{flag.name} {value}")
    return p


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The RunConfig of a namespace from build_parser (every field from its flag; the rest default)."""
    parts: dict[str, dict] = {place: {} for _, _, place, _ in GROUPS}
    for flag in flags():
        place, _, name = flag.place.rpartition(".")
        parts[place][name] = getattr(args, flag.name)
    return RunConfig(mode=args.mode, preset=args.preset or "none", **parts[""],
                     a2c=A2CConfig(**parts["a2c"]), ppo=PPOConfig(**parts["ppo"]),
                     reward=RewardConfig(**parts["reward"]), prefs=PrefConfig(**parts["prefs"]))


def config_problem(cfg: RunConfig) -> str | None:
    """The first setting of ``cfg`` out of its range (each field's ``check``), in one line naming its flag,
    or None."""
    by_place = {flag.place: flag.name for flag in flags()}
    for _, cls, place, _ in GROUPS:
        part = getattr(cfg, place) if place else cfg
        for f in dataclasses.fields(cls):
            check = f.metadata.get("check")
            if check is None:
                continue
            wanted, ok = check
            value = getattr(part, f.name)
            try:
                fine = ok(value)
            except TypeError:  # a string where a number belongs (a config built in code)
                fine = False
            if not fine:
                where = f"{place}.{f.name}".lstrip(".")
                name = f"--{by_place[where]}" if where in by_place else where
                shown = f"{value:g}" if isinstance(value, float) else repr(value) if isinstance(value, str) else value
                return f"{name} must be {wanted}, got {shown}"
    return None


def flags_markdown() -> str:
    """docs/flags.md: every flag with its default, what run.py accepts, and its help (tests check it is
    current: ``python -m drlhp.config > docs/flags.md`` rewrites it)."""
    lines = ["# Flags", "",
             "Written by `python -m drlhp.config > docs/flags.md` from the fields of `drlhp/config/` (one source: "
             "the field's docstring is the help, its default the default, its check the \"accepts\" column, which "
             "run.py enforces before it starts anything). `python run.py --help` shows the same. Presets "
             "(`--preset`, [usage.md](usage.md#presets)) change the defaults of some flags per env.", "",
             "| flag | default | accepts | meaning |", "| --- | --- | --- | --- |",
             f"| `MODE` | `{DEFAULT_MODE}` | " + ", ".join(f"`{m}`" for m in MODES) + " | what to run |",
             "| `--list_envs` | | | print the valid env ids and exit |",
             "| `--preset` | the env's own | `--list_presets` | start from a named set of flags |"]
    section = None
    for flag in flags():
        if flag.group != section:
            section = flag.group
            lines += ["", f"## {section[0].upper()}{section[1:]}", "", "| flag | default | accepts | meaning |",
                      "| --- | --- | --- | --- |"]
        f = flag.field
        negatable = f.metadata["negatable"] or (flag.type is bool and f.default)
        name = f"--[no-]{flag.name}" if negatable else f"--{flag.name}"
        default = ("on" if f.default else "off") if flag.type is bool else default_text(f.default)
        accepts = f.metadata["check"][0] if f.metadata.get("check") else ""
        if f.metadata.get("choices"):
            accepts = ", ".join(f"`{c}`" for c in f.metadata["choices"])
        lines.append(f"| `{name}` | {default and f'`{default}`'} | {accepts} | {flag.help.replace('|', '/')} |")
        lines += [f"| `--{alias}` | | | the same as `--{flag.name} {value}` |"
                  for alias, value in f.metadata["aliases"].items()]
    return "\n".join(lines) + "\n"
