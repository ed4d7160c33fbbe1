"""Issue 29's table from the run directories, per task and label count, against PPO at the same agent steps.

    python docs/experiments/mujoco_table.py [--root runs/mujoco] [--measure env|task] [--variant TAG]

--measure env (the issue's): the true return (the task's own reward, its control cost included, less the fall
penalty; mean of the last 100 training episodes: each run's summary.json), PPO paid the same reward
(docs/experiments/mujoco_true.sh: runs/mujoco/true).
--measure task (the paper's: A.1 removed the torque penalties from the tasks; rl-teacher paid its RL baseline the
same): the return without the control cost, of 100 episodes replayed from each run's final checkpoint as it played
in training (docs/experiments/mujoco_replay_returns.py: runs/mujoco/replay.jsonl), PPO paid the reward without the
control cost (--no-ppo_control_cost: runs/mujoco/true-nocost) where that run exists, else PPO with it.
The runs from preferences are those of the preset as it is now: l1400-seed-* and l700-seed-*, but on the tasks
whose preset's entropy bonus became 0 in session 16 (PRESET_TAG) l1400-ent0-seed-* and l700-ent0-seed-* (run with
--ppo_ent_coef 0 before the preset said so). --variant TAG takes l1400-TAG-seed-* on every task ("" for the
untagged runs: the preset before session 16).
"1,400 / true" is the ratio of the means (where PPO's is positive), "normalized" (mean from preferences - random) /
(PPO's - random); random: docs/experiments/mujoco_random.py (runs/mujoco/random.jsonl)."""
import argparse
import json
import statistics
from pathlib import Path

PRESET_TAG = {"HalfCheetah-v5": "ent0", "Reacher-v5": "ent0", "Ant-v5": "ent0"}  # drlhp/presets.py, session 16
TASKS = ("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Swimmer-v5", "Ant-v5", "Reacher-v5", "InvertedPendulum-v5",
         "InvertedDoublePendulum-v5")
p = argparse.ArgumentParser()
p.add_argument("--root", default="runs/mujoco")
p.add_argument("--measure", choices=("env", "task"), default="env")
p.add_argument("--variant", default=None)
args = p.parse_args()
root = Path(args.root)
randoms = {r["task"]: r for r in map(json.loads, (root / "random.jsonl").read_text().splitlines())}
replay = {}
if args.measure == "task":
    replay = {Path(r["run"]).resolve(): r for r in map(json.loads, (root / "replay.jsonl").read_text().splitlines())}


def runs(pattern: str, task: str) -> list[dict]:
    """Each finished run's summary, with its directory and its value on the measure (None: not replayed yet)."""
    kind, name = pattern.split("/")
    out = []
    for f in sorted((root / kind / task).glob(name + "/summary.json")):
        s = json.loads(f.read_text())
        if args.measure == "env":
            s["value"] = s["true_return_last100"]
        else:
            s["value"] = replay.get(f.parent.resolve(), {}).get("task_return")
        out.append(s)
    return [s for s in out if s["value"] is not None]


def cell(ss: list[dict]) -> str:
    if not ss:
        return "-"
    v = [s["value"] for s in ss]
    spread = f" ± {statistics.stdev(v):.0f}" if len(v) > 1 else ""
    return f"{statistics.mean(v):.{0 if abs(statistics.mean(v)) >= 100 else 1}f}{spread} ({len(v)})"


print(f"measure: {args.measure}; from preferences: "
      f"{'the preset now' if args.variant is None else f'l1400-{args.variant}-seed-*' if args.variant else 'untagged'}")
print("| task | random | PPO | 1,400 labels | 700 labels | 1,400 / true | 1,400 normalized | wall (min, each run) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for task in TASKS:
    true = runs("true/seed-*", task)
    if args.measure == "task" and runs("true-nocost/seed-*", task):
        true = runs("true-nocost/seed-*", task)
    name = PRESET_TAG.get(task, "") if args.variant is None else args.variant
    tag = f"-{name}" if name else ""
    tag700 = tag if args.variant is None else ""  # --variant: the 700-label column stays the untagged runs
    l1400, l700 = runs(f"prefs/l1400{tag}-seed-*", task), runs(f"prefs/l700{tag700}-seed-*", task)
    rand = randoms[task]["random_return" if args.measure == "env" else "random_task_return"]
    ratio = score = "-"
    if true and l1400:
        t = statistics.mean(s["value"] for s in true)
        v = statistics.mean(s["value"] for s in l1400)
        ratio = f"{v / t:.2f}" if t > 0 else "-"  # a ratio of negative returns means nothing
        score = f"{(v - rand) / (t - rand):.2f}"
    walls = ", ".join(f"{s['wall_s'] / 60:.1f}" for s in l1400 + l700)
    print(f"| {task} | {rand:.0f} | {cell(true)} | {cell(l1400)} | {cell(l700)} | {ratio} | {score} | {walls} |")
