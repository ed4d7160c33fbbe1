#!/usr/bin/env bash
# Pong with true rewards: A2C, default hyper-parameters, 4M agent steps (16M frames), then the curve.
# Resumable: run it again with the same RUN_DIR after an interruption (Ctrl-C saves a checkpoint).
#   bash experiments/pong_true_rewards.sh [SEED] [RUN_DIR] [extra run.py flags...]
set -euo pipefail
cd "$(dirname "$0")/.."  # the checkout
SEED=${1:-0}
RUN_DIR=${2:-runs/pong-a2c-seed$SEED}
shift $(( $# > 2 ? 2 : $# ))
.venv/bin/python run.py train_policy_with_original_rewards --env PongNoFrameskip-v4 --seed "$SEED" \
    --million_timesteps 4 --run_dir "$RUN_DIR" --log_interval 30 --policy_ckpt_interval 500 "$@"
.venv/bin/python -m floyd compare "$RUN_DIR" --out "$RUN_DIR/curve.png" --title "A2C on Pong, true rewards, seed $SEED"
