#!/usr/bin/env bash
# Issue 29: InvertedPendulum-v5 from synthetic preferences, a few seeds per arm, 0.3M agent steps each
# (about a minute a run on 2 cores): the cheapest check of the preference path on continuous control.
#   bash experiments/ip_prefs_arms.sh <arm-name> "<extra flags>" [seeds...]
set -u
arm=$1; flags=$2; shift 2
seeds=${*:-0 1 2}
for s in $seeds; do
  dir=runs/ip-e/$arm/seed-$s
  [ -f "$dir/summary.json" ] && continue
  mkdir -p "$(dirname "$dir")"
  .venv/bin/python run.py --env InvertedPendulum-v5 --synthetic_prefs --million_timesteps 0.3 --seed "$s" \
    --run_dir "$dir" --log_interval 5 $flags > "$dir.log" 2>&1 || echo "failed: $dir.log"
  python3 experiments/ip_prefs_summary.py "$dir"
done
