#!/usr/bin/env bash
# The Atari table's queue (issue 59, step 3; H60 in docs/results/atari.md, written before its runs): for each game in
# order, the atari preset from synthetic preferences and PPO with the same settings on the game's clipped score, seed
# 0, each to 5M agent steps, one run at a time, in sittings: a sitting gets HOURS in all and gives each run what is
# left (--stop_after_hours), so every run stops itself, saved. Call it again with the same arguments to go on: a run
# whose progress reached 5M is recorded (experiments/atari_runs.py record) and skipped, any other resumed with the
# very command that started it (run.py resumes an existing --run_dir).
#
#   bash experiments/atari_table_runs.sh HOURS [GAME ...]     (default: the six games of H60, then Pong's PPO arm)
#
# Run directories: runs/atari/<Game>/prefs/seed-0 and runs/atari/<Game>/ppo/seed-0 (ATARI_RUNS_ROOT moves runs/atari,
# ATARI_CSV the CSV rows go to: so a frozen worktree's code can run the table into the main checkout's runs/ and docs/,
# and no run changes code part-way). LABEL_FLAGS (default empty: the preset's budget, 5,500 since step 2 decided it:
# docs/results/pong.md, session 36) adds label flags to the preference arm.
set -u
cd "$(dirname "$0")/.."  # the checkout
HOURS=${1:?hours for this sitting}
shift
GAMES=${*:-BeamRider Breakout Enduro Qbert Seaquest SpaceInvaders Pong}
PY=${PY:-.venv/bin/python}
ROOT=${ATARI_RUNS_ROOT:-runs/atari}
CSV=${ATARI_CSV:-docs/atari_runs.csv}
END=$(( $(date +%s) + $(python3 -c "print(int(float('$HOURS') * 3600))") ))
grep -m1 'model name' /proc/cpuinfo

reached() {  # the run's last logged agent step is at 5M (within 1%: the table's rule), or it finished
    grep -q '"status": "finished"' "$1/status.json" 2>/dev/null && return 0
    [ -f "$1/progress.csv" ] || return 1
    tail -1 "$1/progress.csv" | awk -F, '{exit !($1 >= 4950000)}'
}

for GAME in $GAMES; do
    for ARM in prefs ppo; do
        [ "$GAME" = Pong ] && [ "$ARM" = prefs ] && continue  # Pong's preference row: H59's seeds
        DIR=$ROOT/$GAME/$ARM/seed-0
        if ! reached "$DIR"; then
            LEFT=$(( END - $(date +%s) ))
            [ $LEFT -lt 600 ] && { echo "$(date) sitting over"; exit 0; }
            H=$(python3 -c "print(round($LEFT / 3600, 3))")
            echo "$(date) $GAME $ARM for $H h"
            if [ "$ARM" = prefs ]; then
                # shellcheck disable=SC2086
                $PY run.py --env "${GAME}NoFrameskip-v4" --synthetic_prefs --seed 0 --run_dir "$DIR" \
                    --stop_at_million_timesteps 5 --stop_after_hours "$H" --log_interval 60 ${LABEL_FLAGS:-}
            else
                $PY run.py train_policy_with_original_rewards --env "${GAME}NoFrameskip-v4" --algo ppo --seed 0 \
                    --run_dir "$DIR" --stop_at_million_timesteps 5 --stop_after_hours "$H" --log_interval 60
            fi
            echo "$(date) $GAME $ARM exit $?"
            reached "$DIR" || { echo "$(date) $GAME $ARM short of 5M: the sitting ends"; exit 0; }
        fi
        $PY experiments/atari_runs.py record "$DIR" --csv "$CSV"
    done
done
