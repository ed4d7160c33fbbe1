#!/usr/bin/env bash
# Pong from synthetic preferences, from scratch, default hyper-parameters (the paper's: 25-step clips,
# 3 predictors with batch norm and dropout, 500 initial preferences, 200 pretraining epochs), then
# the curve of true return against steps (floyd compare, PNG), the running time and the labels used.
# Issue 4's goal: mean true return of the last 100 episodes >= +19 within 3 hours of running time
# and at most 6,000 labels. The predictor runs 2 TensorFlow threads (both cores while the policy waits for
# pretraining) and trains at most a quarter of the wall time beside the policy (2 threads x 1/4: the same
# share of the cores as the defaults' 1 thread x 1/2). Later flags override these. Resumable: run it again with the same RUN_DIR after Ctrl-C (everything
# is saved: policy, predictor, database, label count); only running time counts in the curve.
#   bash experiments/pong_prefs.sh [SEED] [RUN_DIR] [extra run.py flags...]
set -euo pipefail
cd "$(dirname "$0")/.."  # the checkout
SEED=${1:-0}
RUN_DIR=${2:-runs/pong-prefs-seed$SEED}
shift $(( $# > 2 ? 2 : $# ))
status=0
.venv/bin/python run.py train_policy_with_preferences --env PongNoFrameskip-v4 --synthetic_prefs --seed "$SEED" \
    --million_timesteps 4 --run_dir "$RUN_DIR" --log_interval 30 --policy_ckpt_interval 500 \
    --reward_tf_threads 2 --reward_train_fraction 0.25 "$@" || status=$?
if [ ! -f "$RUN_DIR/progress.csv" ]; then
    echo "no policy progress yet in $RUN_DIR (stopped while gathering or pretraining): no curve" >&2
    exit $status
fi
.venv/bin/python -m floyd compare "$RUN_DIR" --out "$RUN_DIR/curve.png" --title "Pong from synthetic preferences, seed $SEED"
.venv/bin/python experiments/running_time.py "$RUN_DIR"
.venv/bin/python - "$RUN_DIR" <<'PY'
import csv, sys
from pathlib import Path
run = Path(sys.argv[1])
with open(run / "progress_prefs.csv") as f:
    rows = [r for r in csv.DictReader(f) if r.get("prefs/labels_given")]
with open(run / "progress.csv") as f:
    pol = [r for r in csv.DictReader(f) if r.get("policy/true_return_last100")]
if rows and pol:
    last = pol[-1]
    print(f"labels given: {int(float(rows[-1]['prefs/labels_given']))}; agent steps: {int(float(last['step'])):,}; "
          f"policy training time: {float(last['system/wall_s']) / 3600:.2f} h; "
          f"true return (last 100): {float(last['policy/true_return_last100']):.2f}")
PY
exit $status
