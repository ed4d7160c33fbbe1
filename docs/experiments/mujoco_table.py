"""Issue 29's table from the run directories: per task and label count, the true return (the task's own reward, its
control cost included, less the fall penalty; mean of the last 100 episodes) at the end of each 1M-step run from
preferences, against PPO on the true reward (docs/experiments/mujoco_true.sh) at the same agent steps; "1,400 / true"
is the ratio of the means (where PPO's is positive), "normalized" (mean from preferences - random) / (PPO's - random).
    python docs/experiments/mujoco_table.py [runs/mujoco]"""
import json
import statistics
import sys
from pathlib import Path

TASKS = ("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Swimmer-v5", "Ant-v5", "Reacher-v5", "InvertedPendulum-v5",
         "InvertedDoublePendulum-v5")
root = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/mujoco")
# docs/experiments/mujoco_random.py's output: the random policy's return per task (uniform actions, 5 episodes)
RANDOM = {r["task"]: r["random_return"] for r in map(json.loads, (root / "random.jsonl").read_text().splitlines())}


def runs(pattern: str, task: str) -> list[dict]:
    out = []
    for f in sorted((root / pattern.split("/")[0] / task).glob(pattern.split("/")[1] + "/summary.json")):
        s = json.loads(f.read_text())
        s["dir"] = f.parent.name
        out.append(s)
    return out


def cell(ss: list[dict]) -> str:
    if not ss:
        return "-"
    v = [s["true_return_last100"] for s in ss]
    spread = f" ± {statistics.stdev(v):.0f}" if len(v) > 1 else ""
    return f"{statistics.mean(v):.0f}{spread} ({len(v)})"


print("| task | random | PPO, true reward | 1,400 labels | 700 labels | 1,400 / true | 1,400 normalized | "
      "wall (min, each run) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for task in TASKS:
    true, l1400, l700 = runs("true/seed-*", task), runs("prefs/l1400-seed-*", task), runs("prefs/l700-seed-*", task)
    ratio = score = "-"
    if true and l1400:
        t = statistics.mean(s["true_return_last100"] for s in true)
        p = statistics.mean(s["true_return_last100"] for s in l1400)
        ratio = f"{p / t:.2f}" if t > 0 else "-"  # a ratio of negative returns means nothing
        score = f"{(p - RANDOM[task]) / (t - RANDOM[task]):.2f}"
    walls = ", ".join(f"{s['wall_s'] / 60:.1f}" for s in l1400 + l700)
    print(f"| {task} | {RANDOM[task]:.0f} | {cell(true)} | {cell(l1400)} | {cell(l700)} | {ratio} | {score} "
          f"| {walls} |")
