#!/usr/bin/env bash
# `make run` (or another command) at two commits, old against new in one run of this script (the house's rule for a
# speed-up or a slow-down): each commit cloned into /tmp, both clones sharing this checkout's .venv (their requirements.txt and
# pyproject.toml dated back so make does not reinstall into it), then `make run` alternately, old first, N times
# each. Prints the CPU model and the load, each run's wall seconds, each side's median and the ratio new / old.
#   bash bench/make_run_ab.sh OLD_COMMIT NEW_COMMIT [N=3] [-- COMMAND...]
# COMMAND runs in each clone instead of `make run`, e.g. the MuJoCo bench:
#   bash bench/make_run_ab.sh OLD NEW 1 -- .venv/bin/python bench/mujoco_prefs_time.py --env Hopper-v5 --seed 0
# Run it on an idle machine: nothing else timed or running.
set -eu
cd "$(dirname "$0")/.."
old=$1; new=$2; n=${3:-3}
cmd=(make run)
if [ $# -gt 4 ] && [ "$4" = "--" ]; then cmd=("${@:5}"); fi
echo "command: ${cmd[*]}"
repo=$(pwd)
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for side in old new; do
  commit=${!side}
  dir=/tmp/make-run-ab-$side
  rm -rf "$dir"
  git clone -q "$repo" "$dir"
  git -C "$dir" checkout -q "$commit"
  ln -s "$repo/.venv" "$dir/.venv"
  touch -d "2000-01-01" "$dir/requirements.txt" "$dir/pyproject.toml"
  echo "$side: $(git -C "$dir" log --oneline -1)"
done
declare -A walls
for i in $(seq 1 "$n"); do
  for side in old new; do
    dir=/tmp/make-run-ab-$side
    rm -rf "$dir/runs"
    start=$(date +%s.%N)
    (cd "$dir" && "${cmd[@]}" > "/tmp/make-run-ab-$side-$i.log" 2>&1) || { echo "$side run $i failed: /tmp/make-run-ab-$side-$i.log"; exit 1; }
    wall=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
    walls[$side]="${walls[$side]:-} $wall"
    echo "run $i $side: $wall s (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
python3 - "${walls[old]}" "${walls[new]}" <<'PY'
import statistics, sys
old, new = ([float(x) for x in s.split()] for s in sys.argv[1:3])
mo, mn = statistics.median(old), statistics.median(new)
print(f"median old {mo:.1f} s, new {mn:.1f} s: new / old = {mn / mo:.3f}")
PY
