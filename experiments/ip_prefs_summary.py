"""One line per run of experiments/ip_prefs_arms.sh: the true return (last 100 episodes) at the end, its
best over the run's progress lines, and the agent step it first reached 900."""
import csv
import json
import sys
from pathlib import Path

for run in sys.argv[1:]:
    rows = list(csv.DictReader(open(Path(run) / "progress.csv")))
    ret = [(int(r["step"]), float(r["policy/true_return_last100"])) for r in rows if r["policy/true_return_last100"]]
    s = json.loads((Path(run) / "summary.json").read_text())
    first = next((step for step, v in ret if v >= 900), None)
    print(f"{run}: end {s['true_return_last100']:.0f}, best {max(v for _, v in ret):.0f}, first >= 900 at "
          f"{first}, labels {s.get('labels_given')}, corr {s.get('pred_true_corr')}, wall {s['wall_s']:.0f} s")
