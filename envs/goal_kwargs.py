"""The ``gym.make`` kwargs that an ``--oracle_goal`` goal function carries (pref_interface/goals.py: a goal may set
``env_kwargs``, e.g. the Hopper backflip's ``terminate_when_unhealthy=False``), for every process that makes the
goal's env. Here, below the roles, so that the policy can read them without importing the labeller's package;
the spec was checked before the run started (pref_interface.goal_oracle.check_goal), so nothing is checked again."""
from __future__ import annotations

import importlib


def kwargs_of(goal) -> dict:
    """The ``gym.make`` kwargs a goal function asks for (its ``env_kwargs``; {} where it has none)."""
    return dict(getattr(goal, "env_kwargs", None) or {})


def goal_env_kwargs(spec: str | None) -> dict:
    """The kwargs of the goal ``spec`` ("MODULE:FUNCTION") names; {} for no goal (None or "")."""
    if not spec:
        return {}
    module, _, name = spec.partition(":")
    return kwargs_of(getattr(importlib.import_module(module), name))
