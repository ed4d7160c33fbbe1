#!/usr/bin/env bash
# The Pong campaign's run (issue 19; docs/results/pong.md, "the Pong campaign"): one long run from synthetic
# preferences across sittings. The first call starts it; every later call with the same RUN_DIR resumes it
# (everything is saved: policy, predictor, database, label count). Each sitting ends itself after HOURS of
# running time (--stop_after_hours: saved, status "stopped", exit 0); then the rules and the curve.
#   bash experiments/pong_campaign.sh HOURS [RUN_DIR] [extra run.py flags...]
# The recipe: the paper's label schedule over a 10M budget (front-loaded: about 1 label per 320 agent steps
# in the first 300k) with at most 10,000 labels, a database bound of 3,000 so it follows the policy, one
# predictor without batch norm trained flat out on its own core at E6's feed (0.05 pair-updates per agent
# step), its normalization replaced at each publication from 100 clips and clipped at 10 std, and the
# policy's learning rate decaying to 0 at 80M agent steps (the paper's horizon), not at the budget; since session
# 11, the policy's reward centred on its running mean (2,000 agent steps) and the entropy bonus halved (0.005):
# runs/pong-campaign-5 got them at 5.33M and 6.31M and reached +18 (docs/results/pong.md); since session 12 the
# bonus is 0.01 until 6.3M agent steps, as in that run (0.005 from the start lost every ball by 0.3M), and the
# reward network is float32 on every CPU (--reward_bfloat16 off: bfloat16 was not checked on Pong's predictor).
set -euo pipefail
cd "$(dirname "$0")/.."  # the checkout
HOURS=${1:?hours for this sitting}
RUN_DIR=${2:-runs/pong-campaign}
shift $(( $# > 2 ? 2 : $# ))
grep -m1 'model name' /proc/cpuinfo
status=0
.venv/bin/python run.py train_policy_with_preferences --env PongNoFrameskip-v4 --synthetic_prefs --seed 0 \
    --run_dir "$RUN_DIR" --million_timesteps 10 --lr_horizon_million_timesteps 80 \
    --label_schedule paper --n_initial_prefs 500 --n_labels 9500 --max_prefs 3000 --n_initial_epochs 30 \
    --n_predictors 1 --no-reward_batchnorm --reward_train_fraction 1 --reward_updates_per_step 0.05 \
    --reward_norm_momentum 1 --reward_norm_segments 100 --reward_clip 10 --reward_center_steps 2000 --ent_coef 0.01 \
    --ent_coef_switch_million_timesteps 6.3 --ent_coef_after_switch 0.005 --reward_bfloat16 off --log_interval 60 --policy_ckpt_interval 500 --stop_after_hours "$HOURS" "$@" || status=$?
if [ -f "$RUN_DIR/progress.csv" ]; then
    .venv/bin/python experiments/campaign_check.py "$RUN_DIR" || true
    .venv/bin/python experiments/campaign_curve.py "$RUN_DIR"
fi
exit $status
