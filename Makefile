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

# Default job: A2C on MovingDot with true rewards, about 2-3 minutes on 2 cores.
run: $(STAMP)
	$(PY) run.py train_policy_with_original_rewards --env MovingDot-v0 --million_timesteps 0.15 --seed 0 --log_interval 10

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests

bench: $(STAMP)
	$(PY) bench/throughput.py --env PongNoFrameskip-v4

clean-venv:
	rm -rf $(VENV)
