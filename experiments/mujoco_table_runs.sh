#!/usr/bin/env bash
# Issue 38's queue: every missing run of the MuJoCo table, one at a time, each recorded in docs/mujoco_runs.csv as it
# ends (experiments/mujoco_record.py). A (task, arm, seed) already recorded "finished" there is skipped; a run
# directory left by a stop or a crash is resumed (run.py resumes an existing --run_dir); one whose status.json says
# finished is only recorded. Start it and walk away; start it again after a stop, it goes on where it was.
#
#   bash experiments/mujoco_table_runs.sh heldout [SEED...]  issue 61's held-out table (seeds 10-14 unless named): per
#                                                         seed and task the kept baseline, then 1,400 and 700 labels
#                                                         by the very command a user types (run.py --env TASK
#                                                         --synthetic_prefs --seed N; 700: its label flags), each
#                                                         named by mujoco_record.py --user_arm (HalfCheetah 1400-ls1)
#   bash experiments/mujoco_table_runs.sh table      the random rows (3 seeds a task, mujoco_random.py), then
#                                                         8 tasks x {baseline, 1400, 700} x seeds 0, 1, 2, seed 0 of
#                                                         every cell first
#   bash experiments/mujoco_table_runs.sh standard   the side column: PPO paid gymnasium's standard reward in
#                                                         gymnasium's own episodes (arm standard, --fall_rule end, as
#                                                         published PPO), 8 tasks x seeds 0, 1, 2
#   bash experiments/mujoco_table_runs.sh falls      the fall comparison (--fall_rule penalty against the table's
#                                                         reset): Hopper and Walker2d, seeds 0-2, arms baseline (the
#                                                         table's cells, reset), 1400-random, penalty-baseline and
#                                                         penalty-1400-random (the preference arms ask random pairs,
#                                                         as its seeds 0-1 did before H34), and their random-penalty
#                                                         rows
#   bash experiments/mujoco_table_runs.sh penalty TASK [SEED...]  the fall rule on one more task (H45): arms
#                                                         penalty-baseline and penalty-1400 (the preset's pairs,
#                                                         --fall_rule penalty) beside the table's baseline and 1400
#                                                         (reset); seeds 0 1
#   bash experiments/mujoco_table_runs.sh hold TASK [SEED...]  H48, a fall that lasts, then a reset: arms
#                                                         hold-baseline and hold-1400 (--fall_rule penalty
#                                                         --fall_hold_steps 100) beside the table's baseline and
#                                                         1400 (reset); seeds 0 1
#   bash experiments/mujoco_table_runs.sh entropy [SEED...]  H27 (tuning both arms alike): the grid {0, 0.01}
#                                                         of --ppo_ent_coef on both arms, Hopper and Walker2d:
#                                                         arms baseline-ent01 and 1400-ent0-random beside the
#                                                         table's baseline (0) and 1400-random (the preset's 0.01;
#                                                         random pairs, as before H34); seeds 0 1
#   bash experiments/mujoco_table_runs.sh queries [SEED...]  H34 (closing the gap): the preference arm with the
#                                                         paper's choice of pairs (the preset's since H34:
#                                                         --query_selection variance, arm 1400) beside random pairs
#                                                         (arm 1400-random), Hopper and Walker2d; seeds 0 1
#   bash experiments/mujoco_table_runs.sh efficiency label efficiency (issue 39): Hopper and HalfCheetah,
#                                                         arms 175 and 350, seeds 0-2 (700 and 1400 are the
#                                                         table's own cells)
#   bash experiments/mujoco_table_runs.sh arm TASK ARM [SEED...]  one arm of any recipe below on one task
#                                                         (seeds 0 1 2 unless named), e.g. H47's arm equal on
#                                                         InvertedDoublePendulum-v5
#   bash experiments/mujoco_table_runs.sh budget [SEED...]  H53: both arms at 2M agent steps, Hopper,
#                                                         HalfCheetah, Swimmer, InvertedDoublePendulum (seeds 0 1 2
#                                                         unless named): the baseline that stands at 1M by H49
#                                                         (baseline-ent01-2m on Hopper and InvertedDoublePendulum,
#                                                         baseline-2m elsewhere) and 1400-2m
#   bash experiments/mujoco_table_runs.sh nextobs [SEED...]  H54: 1,400 labels with --reward_next_obs (arm
#                                                         1400-next), Hopper, InvertedDoublePendulum and Walker2d
#                                                         (seeds 0 1 2 unless named)
#   bash experiments/mujoco_table_runs.sh flip [SEED...]     H55: HalfCheetah, baseline and 1400 with the policy's
#                                                         log std starting at -1 and -2 (arms -ls1, -ls2; seeds 0 1 2)
#   bash experiments/mujoco_table_runs.sh swimgamma [SEED...]  H56: Swimmer, baseline and 1400 at --ppo_gamma
#                                                         0.9999 (arms -g9999; seeds 0 1 2)
#   bash experiments/mujoco_table_runs.sh teachers   imperfect teachers (issue 39): Hopper and Walker2d, 1,400
#                                                         labels, arms mistake10 (--oracle_mistake_rate 0.1) and
#                                                         equal (--oracle_equal_threshold 0.1), seeds 0-2 (the
#                                                         perfect oracle is the table's 1400)
#
# Arms: baseline = PPO paid exactly the oracle's reward (train_policy_with_original_rewards --no-ppo_control_cost,
# the mujoco preset, the same fixed-length episodes); 700 and 1400 = PPO from that many synthetic labels on the
# mujoco preset (25% from the random policy first: --n_initial_prefs L/4 --n_labels 3L/4); standard = PPO paid the
# env's own reward in gymnasium's episodes (--fall_rule end). Extra flags for every run of an arm (e.g. the tuning issue 38 asks of both arms alike):
# BASELINE_FLAGS="--ppo_ent_coef 0.01" PREFS_FLAGS="..." (then name the arms apart: ARM_SUFFIX=-ent01 records
# baseline-ent01, 1400-ent01). ROOT (runs/mujoco/table) holds the run directories, PYTHON (.venv/bin/python) runs them.
set -u
cd "$(dirname "$0")/.." || exit 1
py=${PYTHON:-.venv/bin/python}
root=${ROOT:-runs/mujoco/table}
suffix=${ARM_SUFFIX:-}
exp=experiments
tasks=(Hopper-v5 HalfCheetah-v5 Walker2d-v5 Swimmer-v5 Ant-v5 Reacher-v5 InvertedPendulum-v5 InvertedDoublePendulum-v5)

# The settings an arm's name gives absolutely (mujoco_record.py): no -lsN part is the policy's log std starting at 0,
# no -gD part the discount 0.995, whatever the preset adds from preferences (since session 31 the preset starts
# HalfCheetah at -1 and gives Swimmer 0.9999: those runs are the arms -ls1 and -g9999). A preference arm passes them
# before PREFS_FLAGS, which win.
NAMED_DEFAULTS=(--ppo_init_log_std 0 --ppo_gamma 0.995)

run_one() {  # TASK ARM SEED: run (or resume) it unless it is recorded finished, then record its row
  local task=$1 arm=$2 seed=$3
  local name=$arm$suffix
  "$py" $exp/mujoco_record.py --has "$task" "$name" "$seed" && return 0
  local args=()
  case $arm in
    baseline) args=(train_policy_with_original_rewards --no-ppo_control_cost ${BASELINE_FLAGS:-}) ;;
    penalty-baseline) args=(train_policy_with_original_rewards --no-ppo_control_cost --fall_rule penalty
                            ${BASELINE_FLAGS:-}) ;;
    hold-baseline) args=(train_policy_with_original_rewards --no-ppo_control_cost --fall_rule penalty
                         --fall_hold_steps 100 ${BASELINE_FLAGS:-}) ;;
    standard) args=(train_policy_with_original_rewards --fall_rule end ${BASELINE_FLAGS:-}) ;;
    175|350|700|1400|penalty-1400|hold-1400|mistake10|equal)
      local labels=${arm#*-}
      case $arm in mistake10|equal) labels=1400 ;; esac
      args=(train_policy_with_preferences --synthetic_prefs --n_initial_prefs $((labels / 4))
            --n_labels $((labels - labels / 4)) "${NAMED_DEFAULTS[@]}" ${PREFS_FLAGS:-})
      case $arm in
        penalty-1400) args+=(--fall_rule penalty) ;;
        hold-1400) args+=(--fall_rule penalty --fall_hold_steps 100) ;;
        mistake10) args+=(--oracle_mistake_rate 0.1) ;;
        equal) args+=(--oracle_equal_threshold 0.1) ;;
      esac ;;
    *) echo "mujoco_table_runs.sh: no recipe for arm $arm" >&2; return 2 ;;
  esac
  run_and_record "$task" "$name" "$seed" "" "${args[@]}" --env "$task" --seed "$seed"
}

run_and_record() {  # TASK NAME SEED NOTE RUN_ARGS...: run.py RUN_ARGS into the cell's run directory (resumed where it
                    # stopped) unless it finished, then its row in the CSV as arm NAME
  local task=$1 name=$2 seed=$3 note=$4; shift 4
  local dir=$root/$task/$name-seed-$seed
  mkdir -p "$(dirname "$dir")"
  if ! grep -qs '"status": "finished"' "$dir/status.json"; then
    echo "$(date +%H:%M:%S) $task $name seed $seed$note -> $dir"
    "$py" run.py "$@" --run_dir "$dir" --log_interval 10 >> "$dir.log" 2>&1 || echo "  failed: see $dir.log"
  fi
  "$py" $exp/mujoco_record.py "$dir" --arm "$name" || echo "  not recorded: $dir"
}

run_user() {  # TASK LABELS SEED: the preference arm exactly as a user types it (issue 61 step 3: python run.py --env
              # TASK --synthetic_prefs --seed N, with the label flags of 700), named by what the preset gives the task
  local task=$1 labels=$2 seed=$3 name
  name=$("$py" $exp/mujoco_record.py --user_arm "$task" "$labels") || return 2
  "$py" $exp/mujoco_record.py --has "$task" "$name" "$seed" && return 0
  local args=(--env "$task" --synthetic_prefs --seed "$seed")
  [ "$labels" = 1400 ] || args+=(--n_initial_prefs $((labels / 4)) --n_labels $((labels - labels / 4)))
  run_and_record "$task" "$name" "$seed" " (a user's command)" "${args[@]}"
}

case ${1:-} in
  heldout)  # issue 61 step 3: seeds nobody chose, every task: its kept baseline (docs/results/mujoco.md's current
            # figures: -ent01 on Hopper, Reacher and InvertedDoublePendulum, -ls1 on HalfCheetah), and the preference
            # arm as a user types it, at 1,400 labels (the preset's) and 700
    shift; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(10 11 12 13 14)
    for seed in "${seeds[@]}"; do for task in "${tasks[@]}"; do
      case $task in
        Hopper-v5|Reacher-v5|InvertedDoublePendulum-v5)
          suffix=-ent01 BASELINE_FLAGS="--ppo_ent_coef 0.01" run_one "$task" baseline "$seed" ;;
        HalfCheetah-v5) suffix=-ls1 BASELINE_FLAGS="--ppo_init_log_std -1" run_one "$task" baseline "$seed" ;;
        *) run_one "$task" baseline "$seed" ;;
      esac
      for labels in 1400 700; do run_user "$task" "$labels" "$seed"; done
    done; done ;;
  table)
    "$py" $exp/mujoco_random.py --skip_recorded
    for seed in 0 1 2; do for task in "${tasks[@]}"; do for arm in baseline 1400 700; do
      run_one "$task" "$arm" "$seed"
    done; done; done ;;
  standard)
    for seed in 0 1 2; do for task in "${tasks[@]}"; do run_one "$task" standard "$seed"; done; done ;;
  falls)
    "$py" $exp/mujoco_random.py --skip_recorded --fall_rule penalty --tasks Hopper-v5 Walker2d-v5
    for seed in 0 1 2; do for task in Hopper-v5 Walker2d-v5; do
      run_one "$task" baseline "$seed"  # the table's own cell
      run_one "$task" penalty-baseline "$seed"
      for arm in 1400 penalty-1400; do  # random pairs, as seeds 0-1 asked them before H34
        suffix=-random PREFS_FLAGS="--query_selection random" run_one "$task" "$arm" "$seed"
      done
    done; done ;;
  penalty|hold)  # a fall rule on one task, its arms named by it, beside the table's reset cells
    rule=$1; task=${2:?usage: mujoco_table_runs.sh $1 TASK [SEED...]}; shift 2; seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0 1)
    for seed in "${seeds[@]}"; do
      for arm in baseline 1400 "$rule-baseline" "$rule-1400"; do run_one "$task" "$arm" "$seed"; done
    done ;;
  entropy)
    shift; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1)
    for seed in "${seeds[@]}"; do for task in Hopper-v5 Walker2d-v5; do
      run_one "$task" baseline "$seed"
      suffix=-random PREFS_FLAGS="--query_selection random" run_one "$task" 1400 "$seed"
      suffix=-ent01 BASELINE_FLAGS="--ppo_ent_coef 0.01" run_one "$task" baseline "$seed"
      suffix=-ent0-random PREFS_FLAGS="--ppo_ent_coef 0 --query_selection random" run_one "$task" 1400 "$seed"
    done; done ;;
  queries)
    shift; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1)
    for seed in "${seeds[@]}"; do for task in Hopper-v5 Walker2d-v5; do
      run_one "$task" 1400 "$seed"
      suffix=-random PREFS_FLAGS="--query_selection random" run_one "$task" 1400 "$seed"
    done; done ;;
  efficiency)
    for seed in 0 1 2; do for task in Hopper-v5 HalfCheetah-v5; do for arm in baseline 1400 700 350 175; do
      run_one "$task" "$arm" "$seed"
    done; done; done ;;
  arm)
    task=${2:?usage: mujoco_table_runs.sh arm TASK ARM [SEED...]}; arm=${3:?usage: mujoco_table_runs.sh arm TASK ARM [SEED...]}
    shift 3; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    for seed in "${seeds[@]}"; do run_one "$task" "$arm" "$seed"; done ;;
  budget)
    shift; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    for task in Hopper-v5 HalfCheetah-v5 Swimmer-v5 InvertedDoublePendulum-v5; do for seed in "${seeds[@]}"; do
      case $task in
        Hopper-v5|InvertedDoublePendulum-v5) suffix=-ent01-2m BASELINE_FLAGS="--ppo_ent_coef 0.01 --million_timesteps 2" \
                                               run_one "$task" baseline "$seed" ;;
        *) suffix=-2m BASELINE_FLAGS="--million_timesteps 2" run_one "$task" baseline "$seed" ;;
      esac
      suffix=-2m PREFS_FLAGS="--million_timesteps 2" run_one "$task" 1400 "$seed"
    done; done ;;
  nextobs)  # H54: the predictor on the observation each step led to, on the falling tasks around the bar
    shift; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    for seed in "${seeds[@]}"; do for task in Hopper-v5 InvertedDoublePendulum-v5 Walker2d-v5; do
      suffix=-next PREFS_FLAGS="--reward_next_obs" run_one "$task" 1400 "$seed"
    done; done ;;
  flip)  # H55: HalfCheetah's flip, both arms with the policy's log std starting at -1 and at -2
    shift; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    for seed in "${seeds[@]}"; do for ls in 1 2; do
      suffix=-ls$ls BASELINE_FLAGS="--ppo_init_log_std -$ls" run_one HalfCheetah-v5 baseline "$seed"
      suffix=-ls$ls PREFS_FLAGS="--ppo_init_log_std -$ls" run_one HalfCheetah-v5 1400 "$seed"
    done; done ;;
  swimgamma)  # H56: Swimmer, both arms at the discount the SB3 zoo tuned for it (0.9999)
    shift; seeds=("$@"); [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    for seed in "${seeds[@]}"; do
      suffix=-g9999 BASELINE_FLAGS="--ppo_gamma 0.9999" run_one Swimmer-v5 baseline "$seed"
      suffix=-g9999 PREFS_FLAGS="--ppo_gamma 0.9999" run_one Swimmer-v5 1400 "$seed"
    done ;;
  teachers)
    for seed in 0 1 2; do for task in Hopper-v5 Walker2d-v5; do for arm in baseline 1400 mistake10 equal; do
      run_one "$task" "$arm" "$seed"
    done; done; done ;;
  *) echo "usage: bash experiments/mujoco_table_runs.sh heldout|table|standard|falls|entropy|queries|efficiency|teachers|budget|nextobs|flip|swimgamma|arm|hold" >&2; exit 2 ;;
esac
