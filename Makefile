# Two commands: `make run` (default job) and `make test` (the whole suite). Both create .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-requirements

.PHONY: run test bench clean-venv

$(STAMP): requirements.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "drlhp needs Python 3.11, found " + sys.version.split()[0]'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# MovingDot from synthetic preferences: short clips (5 steps), one predictor without batch norm or
# dropout, a larger predictor learning rate and a smaller entropy bonus (docs/results.md, "MovingDot
# from preferences", says why and what it reaches). About 6 minutes on 2 cores. The flags live in one file,
# also read by bench/moving_dot_seeds.py.
DOT_PREFS_ARGS := $(shell cat bench/moving_dot_prefs.args)

# Default job: the preference pipeline on MovingDot with the synthetic oracle.
run: $(STAMP)
	$(PY) run.py --env MovingDot-v0 --synthetic_prefs --seed 0 --log_interval 10 $(DOT_PREFS_ARGS)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q --durations=15 tests

bench: $(STAMP)
	$(PY) bench/throughput.py --env PongNoFrameskip-v4

clean-venv:
	rm -rf $(VENV)
