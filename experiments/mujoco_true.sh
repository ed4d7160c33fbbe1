#!/usr/bin/env bash
# Issue 29's baseline: PPO on each MuJoCo task's true reward (train_policy_with_original_rewards, the mujoco
# preset: 1M agent steps, fixed-length episodes), one run at a time, in the order the table needs them:
# seed 0 of every task, then seeds 1 and 2 of Hopper, HalfCheetah and Walker2d. A run already finished
# (summary.json there) is skipped, so the script can be started again after a stop. Each run that ends records its
# row in docs/mujoco_runs.csv (mujoco_record.py) as arm "standard-reset": PPO paid the env's own reward, its control
# cost in, in fixed-length episodes (the table's side column, "standard", is the same in gymnasium's own episodes,
# and its baseline the oracle's reward: both mujoco_table_runs.sh's).
#   bash experiments/mujoco_true.sh [runs/mujoco/true]
set -u
root=${1:-runs/mujoco/true}
jobs=()
for env in Hopper-v5 HalfCheetah-v5 Walker2d-v5 Swimmer-v5 Ant-v5 Reacher-v5 InvertedPendulum-v5 \
           InvertedDoublePendulum-v5; do jobs+=("$env 0"); done
for seed in 1 2; do for env in Hopper-v5 HalfCheetah-v5 Walker2d-v5; do jobs+=("$env $seed"); done; done
for job in "${jobs[@]}"; do
  set -- $job
  dir=$root/$1/seed-$2
  if [ -f "$dir/summary.json" ]; then
    .venv/bin/python experiments/mujoco_record.py --has "$1" standard-reset "$2" \
      || .venv/bin/python experiments/mujoco_record.py "$dir" --arm standard-reset
    continue
  fi
  mkdir -p "$dir"
  echo "$(date +%H:%M:%S) $1 seed $2"
  .venv/bin/python run.py train_policy_with_original_rewards --env "$1" --seed "$2" --run_dir "$dir" \
    --log_interval 60 > "$dir.log" 2>&1 || echo "  failed: see $dir.log"
  .venv/bin/python experiments/mujoco_record.py "$dir" --arm standard-reset || echo "  not recorded: $dir"
done
