#!/usr/bin/env bash
# Issue 39: CartPole-v1 from synthetic preferences on the `cartpole` preset (fixed-length episodes of 500 steps, a
# fall costing 100 and putting the pole back: envs/fixed_length.py), seeds 0, 1, 2 (or those given), one at a time;
# a run directory already finished is only read. Prints each seed's last-100 true return at its end (the must-show:
# 450 on 3 of 3 seeds).
#   bash experiments/cartpole_prefs.sh [SEED...]
# FLAGS adds flags to every run (a hypothesis's change, e.g. FLAGS="--ent_coef 0.01"); ROOT (runs/cartpole) holds
# the run directories, so give each hypothesis its own.
set -u
cd "$(dirname "$0")/.." || exit 1
py=${PYTHON:-.venv/bin/python}
root=${ROOT:-runs/cartpole}
seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
for seed in "${seeds[@]}"; do
  dir=$root/prefs-seed-$seed
  mkdir -p "$root"
  if ! grep -qs '"status": "finished"' "$dir/status.json"; then
    echo "$(date +%H:%M:%S) CartPole-v1 from preferences, seed $seed -> $dir"
    "$py" run.py --env CartPole-v1 --synthetic_prefs --seed "$seed" --run_dir "$dir" --log_interval 30 \
      ${FLAGS:-} >> "$dir.log" 2>&1 || echo "  failed: see $dir.log"
  fi
  "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); print(f\"seed {sys.argv[2]}: last-100 true return \
{s.get('true_return_last100')}, {s.get('timesteps'):,} agent steps, {s.get('wall_s', 0):.0f} s\")" \
    "$dir/summary.json" "$seed" || echo "  no summary: $dir"
done
