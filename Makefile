# Two commands: `make run` (default job) and `make test` (lint, then the whole suite). Both create .venv
# first: requirements.txt (every package pinned), then this project in editable mode (pyproject.toml; the
# `drlhp` and `drlhp-runs` commands in .venv/bin). Also: `make lint` (ruff), `make test-fast` (no slow tests).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-requirements

.PHONY: run test test-fast lint bench clean-venv

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "drlhp needs Python 3.11, found " + sys.version.split()[0]'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Default job: the preference pipeline on MovingDot with the synthetic oracle, on MovingDot's own preset
# (drlhp/config/presets.py, "moving-dot", printed at start: short clips, one predictor without batch norm or
# dropout, many cheap labels; docs/results/moving-dot.md, "MovingDot from preferences", says why and what it reaches).
# About 2 minutes on a 2-core Intel Xeon with the venv made (it ends once the last 100 episodes all succeed), more by machine.
run: $(STAMP)
	$(PY) run.py --env MovingDot-v0 --synthetic_prefs --seed 0 --log_interval 10

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# System packages are not make's: the Xvfb tests (Xvfb, xdotool) and the browser tests (Debian's chromium and
# chromium-driver) install theirs with apt-get where they run as root, and skip with the reason elsewhere.
# Two workers (pytest-xdist; pytest.ini gives --dist loadgroup): docs/tests.md, "How the suite runs".
# TEST_WORKERS=0 runs the suite in this one process, in file order.
TEST_WORKERS ?= 2
test: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n $(TEST_WORKERS) --durations=15 tests

# The suite without the tests marked slow (pytest.ini): learning, real runs of the three processes, Xvfb.
test-fast: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n $(TEST_WORKERS) --durations=15 -m "not slow" tests

# Agent steps per second on Pong, each part of the policy loop and the pipeline; every benchmark in bench/, with
# what it measures: docs/design.md, "Benchmarks".
bench: $(STAMP)
	$(PY) bench/throughput.py --env PongNoFrameskip-v4

clean-venv:
	rm -rf $(VENV)
