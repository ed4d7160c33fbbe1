#!/usr/bin/env bash
# Issue 29's table: PPO from synthetic preferences on each MuJoCo task, on the task's preset (drlhp/config/presets.py,
# `mujoco` from preferences: 1.5-s clips, 3 predictors, the paper's schedule), 1M agent steps, one run at a time.
# 1,400 labels = --n_initial_prefs 350 --n_labels 1050 (the preset's); 700 = 175 + 525 (25% from the random
# policy first, as the paper). A run already finished (summary.json there) is skipped.
#   bash experiments/mujoco_prefs.sh JOB...     JOB = <env>:<seed>:<labels>[:<tag>:<flags>], e.g. Hopper-v5:0:1400
# or Ant-v5:0:1400:ent0:--ppo_ent_coef 0 (run directory l1400-ent0-seed-0; the flags after the preset's).
# Each run that ends records its row in docs/mujoco_runs.csv (mujoco_record.py), arm <labels>[-<tag>] (1400,
# 1400-ent0); a tag "penalty" needs --fall_rule penalty among the flags. The table's own queue is
# mujoco_table_runs.sh.
set -u
root=runs/mujoco/prefs
for job in "$@"; do
  IFS=: read -r env seed labels tag flags <<< "$job"
  dir=$root/$env/l$labels${tag:+-$tag}-seed-$seed
  arm=$labels${tag:+-$tag}
  if [ -f "$dir/summary.json" ]; then
    .venv/bin/python experiments/mujoco_record.py --has "$env" "$arm" "$seed" \
      || .venv/bin/python experiments/mujoco_record.py "$dir" --arm "$arm"
    continue
  fi
  mkdir -p "$(dirname "$dir")"
  initial=$((labels / 4)); rest=$((labels - labels / 4))
  echo "$(date +%H:%M:%S) $env seed $seed, $labels labels ${flags:-}"
  .venv/bin/python run.py --env "$env" --synthetic_prefs --seed "$seed" --n_initial_prefs "$initial" \
    --n_labels "$rest" --run_dir "$dir" --log_interval 60 ${flags:-} > "$dir.log" 2>&1 \
    || echo "  failed: see $dir.log"
  .venv/bin/python experiments/mujoco_record.py "$dir" --arm "$arm" || echo "  not recorded: $dir"
done
