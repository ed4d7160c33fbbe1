"""Adds (or replaces) one run's row of docs/mujoco_runs.csv (issue 38), read from its run directory: config.json
(task, seed, labels, mode and settings), summary.json (timesteps, the returns, running time), status.json (how it
ended) and run.json (the CPU of its last sitting). Key: (task, arm, seed); the file is rewritten atomically.

    python experiments/mujoco_record.py RUN_DIR --arm ARM [--csv FILE]
    python experiments/mujoco_record.py --has TASK ARM SEED [--csv FILE]   (exit 0: a finished row is there)

``return``: the paper's measure, the mean over the last 100 fixed-length episodes of the reward the oracle pays
(the task's reward without the control cost, with the fall penalty): summary.json's task_return_last100.
``return_standard``: gymnasium's own reward (control cost in, no fall penalty) over the same episodes:
standard_return_last100 (empty for runs made before drlhp logged it). ``status``: status.json's word
(``finished`` for a run that did its steps). ``labels``: n_initial_prefs + n_labels of a preference run, else 0.

An arm must fit its run, else one line and exit 2: a number (``700``, ``1400``, ``175``) is a preference run of
that many labels; ``baseline`` (and ``baseline-*``) PPO paid exactly the oracle's reward
(train_policy_with_original_rewards --no-ppo_control_cost); ``standard-*`` PPO paid the env's own reward (control
cost in), and ``standard`` itself that in gymnasium's own episodes (--fall_rule end: the side column, beside
published PPO); an arm whose name says ``penalty`` a run with --fall_rule penalty, and no other, and likewise
``none`` (--fall_rule none: no healthy range, e.g. ``none-1400``). The teachers
(issue 39): ``mistake10`` is 1,400 labels from a teacher wrong 10% of the time (--oracle_mistake_rate 0.1), ``equal``
1,400 from B-Pref's equal teacher (--oracle_equal_threshold 0.1); every other preference arm's teacher is the
perfect oracle (both 0). The entropy bonus: an arm named ``-entD`` (``baseline-ent01``, ``1400-ent0``) was run at
the bonus D read as decimals (ent01 0.01, ent0 0, ent05 0.05, ent001 0.001); every other arm at its arm's own, the
``mujoco`` preset's for the run's task and mode, as run.py builds it (``preset_settings``; H27: 0 for ``baseline``
and ``standard``, 0.01 for a preference arm). A preference arm asks its pairs as the preset does (H34: by the
ensemble's disagreement, --query_selection variance); one whose name has
``random`` (``1400-random``, ``penalty-1400-random``: the runs made before H34, and the comparisons that go on with
them) asked random pairs, and no other did. A preference arm named ``-rapD`` (``mistake10-rap2``: H52) ran its
predictor with --reward_random_answer_prob D read as decimals (rap2 0.2, rap15 0.15); every other one at the default 0.1
(the paper's). An arm named ``-Nm`` (``baseline-2m``, ``1400-2m``: H53) ran N million agent steps (--million_timesteps
N), every other table arm the preset's 1. An arm named ``-lsN`` (``baseline-ls1``, ``1400-ls2``: H55) ran with the
policy's log std starting at -N (--ppo_init_log_std -N), every other at the default 0; one named ``-gD``
(``baseline-g9999``: H56) with the discount D read as decimals (--ppo_gamma 0.9999), every other at PPOConfig's
0.995. These two are absolute, unlike the bonus: since session 31 the preset from preferences starts HalfCheetah at
-1 and gives Swimmer 0.9999, so a user's plain run there is the arm ``1400-ls1`` or ``1400-g9999``
(mujoco_table_runs.sh passes 0 and 0.995 to its plain arms). A preference arm named ``-next`` (``1400-next``: H54)
ran with --reward_next_obs (its predictor saw the observation each step led to, the fallen state at a fall), and no
other did. Issue 61's screening arms name what they change in the predictor's data and feed, absolute as -lsN and -gD
are: ``-clipN`` clips of N steps (``1400-clip47``: --segment_length 47; every other arm the paper's 1.5 s),
``-tfD`` the predictor's train fraction D read as decimals (``1400-tf2``: --reward_train_fraction 0.2; every other
0.5), ``-feedD`` its floor of pair-updates per agent step (``1400-feed14``: --reward_updates_per_step 0.14; every
other none). ``--user_arm TASK [LABELS]`` prints the arm of a user's plain run (``python run.py --env TASK
--synthetic_prefs``, issue 61's held-out table): HalfCheetah's is ``1400-ls1``. The table's arms (a label
count, a teacher, ``baseline``, ``standard``) take no other part in their names than these and ``rerun``: the same
recipe and seed run again (``1400-rerun``: H44's runs under other conditions), recorded beside the cell's own row
and never in it. ``random`` is the random policy's (mujoco_random.py's rows), never a run's. An arm of another name
(e.g. a LearnedReward run's) is checked for its rule and its bonus, and, on a preference run, its teacher, its pairs
and the predictor's random-answer chance.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from drlhp.config.cli import build_parser, config_from_args
from drlhp.config.ppo import PPOConfig
from drlhp.config.presets import MUJOCO_CLIP_STEPS, with_preset
from drlhp.config.reward import RewardConfig
from mujoco_runs_csv import CSV_PATH, finished, million_steps, upsert

PREFS_MODE, TRUE_MODE = "train_policy_with_preferences", "train_policy_with_original_rewards"
DEFAULT_GAMMA = PPOConfig().gamma  # --ppo_gamma's default (the paper's 0.995); -gD names another
DEFAULT_RANDOM_ANSWER_PROB = 0.1  # --reward_random_answer_prob's default (the paper's 10%); -rapD names another
TEACHERS = {"mistake10": (0.1, 0.0), "equal": (0.0, 0.1)}  # arm: (--oracle_mistake_rate, --oracle_equal_threshold)
# fall rules an arm's name must say (the table's arms are of reset's; standard end's; hold: penalty with a hold)
NAMED_RULES = ("penalty", "none", "hold")


def preset_config(task: str, mode: str):
    """The RunConfig of ``run.py MODE --env TASK`` (``--synthetic_prefs`` in the preference mode) with no other flag:
    what run.py itself makes of the preset (drlhp.config.presets.with_preset, then run.py's parser), so the task's own
    flags count as they do in a run. An arm's settings unless its name says otherwise."""
    argv = [mode, "--env", task] + (["--synthetic_prefs"] if mode == PREFS_MODE else [])
    argv, _, _ = with_preset(argv)
    return config_from_args(build_parser().parse_args(argv))


def preset_settings(task: str, mode: str) -> tuple[float, str]:
    """(entropy bonus, choice of pairs) of the preset's run (preset_config)."""
    cfg = preset_config(task, mode)
    return cfg.ppo.ent_coef, cfg.prefs.query_selection


# the predictor's feed as an arm names it: (name part, RewardConfig field, run.py flag, an example of the name)
FEED_PARTS = (("tf", "train_fraction", "--reward_train_fraction", "-tf2 is 0.2"),
              ("feed", "updates_per_step", "--reward_updates_per_step", "-feed14 is 0.14"))


def _decimal_part(prefix: str, value: float) -> str:
    """The name part _named_decimal reads back as ``value`` (0.2 -> tf2, 0.9999 -> g9999)."""
    return prefix + f"{value:.10f}".rstrip("0").split(".")[1]


def predictor_problem(arm: str, base: list[str], config: dict) -> str | None:
    """A preference arm's clips and predictor feed against its name (issue 61's screening), absolute as -lsN and -gD
    are: ``-clipN`` clips of N steps (--segment_length), every other arm the paper's 1.5 s of the task's simulated
    time (presets.MUJOCO_CLIP_STEPS: Hopper 188); ``-tfD`` the predictor's train fraction D read as decimals (tf2
    0.2), every other arm RewardConfig's 0.5; ``-feedD`` its floor of pair-updates per agent step (feed14 0.14),
    every other arm none (0). A user's plain run is named by what the preset gives (user_arm). Keys a run's config
    lacks are not checked."""
    prefs, reward = config.get("prefs", {}), config.get("reward", {})
    clip = _named_digits(base, "clip")
    want = int(clip) if clip else MUJOCO_CLIP_STEPS.get(config.get("env", ""))
    if want is not None and prefs.get("segment_length") is not None and int(prefs["segment_length"]) != want:
        return (f"arm {arm!r} is clips of {want} steps; this run's --segment_length is {prefs['segment_length']} "
                f"(name the arm by it: -clip47 is 47)")
    for prefix, key, flag, example in FEED_PARTS:
        want = _named_decimal(base, prefix, getattr(RewardConfig(), key))
        if reward.get(key) is not None and abs(float(reward[key]) - want) > 1e-9:
            return (f"arm {arm!r} is {flag} {want:g}; this run's is {float(reward[key]):g} (name the arm by it: "
                    f"{example})")
    return None


def user_arm(task: str, labels: int = 1400) -> str:
    """The arm of a user's plain run, ``python run.py --env TASK --synthetic_prefs`` (with the label flags of
    ``labels``): the label count, then each absolute setting the preset gives the task apart from its arm's default
    (HalfCheetah ``1400-ls1``, Swimmer ``1400-g9999``; a clip, train fraction or feed the preset changes likewise)."""
    cfg = preset_config(task, PREFS_MODE)
    parts = [str(labels)]
    if cfg.ppo.init_log_std:
        parts.append(f"ls{-cfg.ppo.init_log_std:g}")
    if abs(cfg.ppo.gamma - DEFAULT_GAMMA) > 1e-12:
        parts.append(_decimal_part("g", cfg.ppo.gamma))
    if MUJOCO_CLIP_STEPS.get(task) not in (None, cfg.prefs.segment_length):
        parts.append(f"clip{cfg.prefs.segment_length}")
    for prefix, key, _, _ in FEED_PARTS:
        value = getattr(cfg.reward, key)
        if abs(value - getattr(RewardConfig(), key)) > 1e-12:
            parts.append(_decimal_part(prefix, value))
    return "-".join(parts)


def _read(run_dir: Path, name: str) -> dict:
    path = run_dir / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise SystemExit(_fail(f"{path}: no such file (not a finished drlhp run directory?)")) from None
    except ValueError as e:
        raise SystemExit(_fail(f"{path}: not JSON ({e})")) from None


def _fail(line: str) -> int:
    print(f"mujoco_record: {line}", file=sys.stderr)
    return 2


def _cpu(run: dict) -> str:
    for sitting in reversed(run.get("sittings") or []):
        cpu = (sitting.get("machine") or {}).get("cpu")
        if cpu:
            return cpu
    return ""


def _named_digits(parts: list[str], prefix: str) -> str | None:
    """The digits of the first part ``PREFIXdigits`` of an arm's name (``ent01``: "01"), else None."""
    return next((part[len(prefix):] for part in parts if re.fullmatch(rf"{prefix}\d+", part)), None)


def _named_decimal(parts: list[str], prefix: str, default: float) -> float:
    """A setting an arm names as ``PREFIXD``, D read as decimals (ent01 0.01, g9999 0.9999, rap2 0.2), else
    ``default``."""
    digits = _named_digits(parts, prefix)
    return int(digits) / 10 ** len(digits) if digits else default


def arm_problem(arm: str, config: dict, labels: int) -> str | None:
    """What about ``arm`` does not fit the run's config, in one line, or None."""
    mode, ppo = config.get("mode"), config.get("ppo", {})
    rule = ppo.get("fall_rule", "reset")
    flags = f"--fall_rule {rule}"
    if rule == "penalty" and ppo.get("fall_hold_steps", 0):  # H48's rule: a fall that lasts, then a reset
        rule, flags = "hold", f"--fall_rule penalty --fall_hold_steps {ppo['fall_hold_steps']}"
    for named in NAMED_RULES:  # an arm of the penalty, hold or none rule says so, and no other arm does
        if (named in arm.split("-")) != (rule == named):
            return f"arm {arm!r} on a run with {flags}: name the arm by its rule"
    base = [part for part in arm.split("-") if part not in NAMED_RULES]
    head = base[0] if base else ""
    if head.startswith("random"):
        return f"arm {arm!r}: the random policy's rows are mujoco_random.py's, not a run directory's"
    preference_arm = head.isdigit() or head in TEACHERS
    if "random" in base[1:] and not preference_arm:
        return f"arm {arm!r}: 'random' names a preference arm's random pairs (e.g. 1400-random), not {head!r}'s"
    table_arm = preference_arm or head in ("baseline", "standard")
    if table_arm:  # the table's arms: known parts only
        unknown = [part for part in base[1:] if part not in ("random", "rerun")
                   and not re.fullmatch(r"(ent|g)\d+", part) and not re.fullmatch(r"ls\d+", part)
                   and not (preference_arm and (re.fullmatch(r"(rap|clip|tf|feed)\d+", part) or part == "next"))
                   and not re.fullmatch(r"\d+m", part)
                   and not (head == "standard" and part in ("reset", "end"))]
        if unknown:
            return (f"arm {arm!r}: {'-'.join(unknown)!r} is no part of an arm's name (a rule: penalty, hold, none; a "
                    f"bonus: entD; the discount: gD; the policy's starting log std: lsN; random pairs: random; "
                    f"a preference arm's assumed random answers: rapD, its predictor on the next observation: next, "
                    f"its clips: clipN, its predictor's train fraction: tfD, its feed: feedD; a budget: Nm; the same "
                    f"recipe run again: rerun)")
    prefs = config.get("prefs", {})
    teacher = (float(prefs.get("oracle_mistake_rate", 0.0)), float(prefs.get("oracle_equal_threshold", 0.0)))
    wanted = TEACHERS.get(head, (0.0, 0.0))
    if mode == PREFS_MODE and teacher != wanted:
        return (f"arm {arm!r} is a teacher with mistake rate {wanted[0]:g} and equal threshold {wanted[1]:g}; this "
                f"run's are {teacher[0]:g} and {teacher[1]:g}")
    if head in TEACHERS:
        if mode != PREFS_MODE or labels != 1400:
            return f"arm {arm!r} is a preference run of 1400 labels; this is {mode} with {labels} labels"
    elif head.isdigit():
        if mode != PREFS_MODE or int(head) != labels:
            return f"arm {arm!r} names a preference run of {head} labels; this is {mode} with {labels} labels"
    elif head == "baseline":
        if mode != TRUE_MODE or ppo.get("control_cost", True):
            return (f"arm {arm!r} is PPO paid the oracle's reward (train_policy_with_original_rewards "
                    f"--no-ppo_control_cost); this run is {mode}, control cost {ppo.get('control_cost', True)}")
    elif head == "standard":
        if mode != TRUE_MODE or not ppo.get("control_cost", True):
            return f"arm {arm!r} is PPO paid the env's own reward (control cost in); this run is not"
        if arm == "standard" and rule != "end":
            return (f"arm 'standard' is PPO in gymnasium's own episodes (--fall_rule end), as published PPO; this run "
                    f"has --fall_rule {rule} (name it standard-{rule})")
    preset_bonus, preset_selection = preset_settings(config.get("env", ""), mode if mode == PREFS_MODE else TRUE_MODE)
    selection = prefs.get("query_selection", "random")
    if mode == PREFS_MODE and selection != ("random" if "random" in base else preset_selection):
        return (f"arm {arm!r} on a run with --query_selection {selection}: an arm says 'random' where, and only "
                f"where, the run asked random pairs (the preset's are --query_selection {preset_selection})")
    bonus = _named_decimal(base, "ent", preset_bonus)
    if "ent_coef" in ppo and abs(float(ppo["ent_coef"]) - bonus) > 1e-9:
        return (f"arm {arm!r} is the entropy bonus {bonus:g}; this run's is {float(ppo['ent_coef']):g} (name the arm "
                f"by it: -ent01 is 0.01, -ent0 0)")
    gamma = _named_decimal(base, "g", DEFAULT_GAMMA)
    if abs(float(ppo.get("gamma", DEFAULT_GAMMA)) - gamma) > 1e-12:
        return (f"arm {arm!r} is the discount {gamma:g}; this run's is {float(ppo['gamma']):g} (name the arm by it: "
                f"-g9999 is 0.9999)")
    named_ls = _named_digits(base, "ls")
    log_std = -float(named_ls) if named_ls else 0.0
    run_log_std = float(ppo.get("init_log_std", 0.0))
    if abs(run_log_std - log_std) > 1e-9:
        return (f"arm {arm!r} is the policy's starting log std {log_std:g}; this run's is {run_log_std:g} (name the "
                f"arm by it: -ls1 is -1)")
    steps_m = million_steps("-".join(base)) or 1
    run_m = config.get("million_timesteps")
    if table_arm and run_m is not None and abs(float(run_m) - steps_m) > 1e-9:
        return (f"arm {arm!r} is a run of {steps_m:g}M agent steps; this run's --million_timesteps is {float(run_m):g} "
                f"(name the arm by it: -2m is 2)")
    rap = _named_decimal(base, "rap", DEFAULT_RANDOM_ANSWER_PROB)
    run_rap = config.get("reward", {}).get("random_answer_prob")
    if mode == PREFS_MODE and run_rap is not None and abs(float(run_rap) - rap) > 1e-9:
        return (f"arm {arm!r} is the predictor's assumed random-answer chance {rap:g}; this run's is "
                f"{float(run_rap):g} (name the arm by it: -rap2 is 0.2)")
    run_next = bool(config.get("reward", {}).get("next_obs", False))
    if mode == PREFS_MODE and run_next != ("next" in base):
        return (f"arm {arm!r} on a run {'with' if run_next else 'without'} --reward_next_obs: an arm says 'next' "
                f"where, and only where, the predictor saw the observation each step led to (H54)")
    if mode == PREFS_MODE:
        return predictor_problem(arm, base, config)
    return None


def row_of(run_dir: Path, arm: str) -> dict:
    config, summary = _read(run_dir, "config.json"), _read(run_dir, "summary.json")
    status, run = _read(run_dir, "status.json"), _read(run_dir, "run.json")
    prefs = config.get("prefs", {})
    labels = int(prefs.get("n_initial_prefs", 0)) + int(prefs.get("n_labels", 0)) if config.get("mode") == PREFS_MODE \
        else 0
    problem = arm_problem(arm, config, labels)
    if problem:
        raise SystemExit(_fail(f"{run_dir}: {problem}"))
    if summary.get("task_return_last100") is None:
        raise SystemExit(_fail(f"{run_dir}: summary.json has no task_return_last100 (not a PPO run on a MuJoCo task?)"))
    standard = summary.get("standard_return_last100")
    return {"task": config["env"], "arm": arm, "seed": int(config["seed"]), "labels": labels,
            "timesteps": int(summary["timesteps"]), "status": status.get("status", ""),
            "return": round(float(summary["task_return_last100"]), 2),
            "return_standard": "" if standard is None else round(float(standard), 2),
            "wall_s": round(float(summary.get("wall_s", 0.0)), 1), "cpu": _cpu(run)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", nargs="?")
    p.add_argument("--arm")
    p.add_argument("--has", nargs=3, metavar=("TASK", "ARM", "SEED"))
    p.add_argument("--csv", type=Path, default=CSV_PATH)
    p.add_argument("--user_arm", nargs="+", metavar=("TASK", "LABELS"),
                   help="print the arm of a user's plain run of TASK (LABELS: 1400 unless given)")
    args = p.parse_args(argv)
    if args.user_arm:
        print(user_arm(args.user_arm[0], int(args.user_arm[1]) if len(args.user_arm) > 1 else 1400))
        return 0
    if args.has:
        task, arm, seed = args.has
        return 0 if finished(task, arm, int(seed), args.csv) else 1
    if not args.run_dir or not args.arm:
        return _fail("give RUN_DIR and --arm ARM (or --has TASK ARM SEED)")
    row = row_of(Path(args.run_dir), args.arm)
    upsert([row], args.csv)
    print(f"mujoco_record: {row['task']} {row['arm']} seed {row['seed']}: {row['status']}, {row['timesteps']:,} steps, "
          f"return {row['return']} -> {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
