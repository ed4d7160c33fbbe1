"""The one table of the policy's algorithms: for each (--algo, the env's action kind) pair, what trains the policy.

    (algo, actions)      trainer (a PolicyTrainer,          policy builder                    the action kind's side:
                         drlhp.policy.loop)                                                   envs, rewards, feeds
    ("a2c", "discrete")  a2c.trainer:A2CTrainer             a2c.policy:build_policy           discrete_actions
    ("ppo", "discrete")  ppo.discrete_trainer:              ppo.discrete_policy:              discrete_actions
                         DiscretePPOTrainer                 build_discrete_ppo
    ("ppo", "box")       ppo.trainer:PPOTrainer             ppo.policy:build_ppo              ppo.box_actions

--algo auto takes the action kind's algorithm in ``AUTO``: A2C on discrete actions (the paper's Atari), PPO on
Box actions (the documented substitute for the paper's TRPO). Every place that trains or plays a policy reads its
row here: the policy process (drlhp.policy.process.run_policy), the modes of one process (drlhp.run.modes:
train_policy_with_original_rewards, watch), the input checks and the kernels line (drlhp.run.checks,
drlhp.run.pipeline); tests/test_boundaries.py checks that no other module compares --algo to a name, and that none
but this one imports an algorithm's folder from outside it.

The row names its pieces as "module:name" strings, imported on first use: the parent process reads the table and
stays TensorFlow-free. The action kind's side (``actions_side``) is an object with the same methods on either kind:
``env_reward_problem``, ``start_line``, ``env_reward_envs``, ``env_reward``, ``env_reward_options`` (a run on the
env's reward), ``preference_envs``, ``predicted_reward``, ``feeds``, ``preference_options`` (the policy process).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from drlhp.config import RunConfig

KIND_NAMES = {"discrete": "discrete", "box": "continuous (Box)"}  # envs.action_kind's kinds, as a sentence names them


@dataclass(frozen=True)
class Algorithm:
    """One row: an algorithm on one action kind."""

    algo: str  # --algo's value; a checkpoint's meta "algo" and the summary's
    actions: str  # the env's action kind (envs.action_kind): "discrete" or "box"
    title: str  # the start line's name for it
    settings: str  # its section of RunConfig ("a2c", "ppo"): its n_envs, among the rest
    trainer: str  # "module:class", a drlhp.policy.loop.PolicyTrainer
    build_policy: str  # "module:function", (cfg, envs) -> its policy, after setting TensorFlow's threads and seeds
    actions_side: str  # "module:class", (cfg, n_envs, n_steps) -> the action kind's envs, reward sources and feeds
    player: str  # "module:name": what plays one of its checkpoints in watch

    def load(self, field: str):
        """The class or function a field names, imported now."""
        module, name = getattr(self, field).split(":")
        return getattr(importlib.import_module(module), name)

    def n_envs(self, cfg: RunConfig) -> int:
        return getattr(cfg, self.settings).n_envs

    def n_steps(self, cfg: RunConfig) -> int:
        """Agent steps per env in one rollout (its settings' n_steps)."""
        return getattr(cfg, self.settings).n_steps

    def side(self, cfg: RunConfig):
        """The action kind's side of a run of ``cfg`` (drlhp.policy.discrete_actions.DiscreteActions, or
        drlhp.policy.ppo.box_actions.BoxActions)."""
        return self.load("actions_side")(cfg, self.n_envs(cfg), self.n_steps(cfg))


_DISCRETE = "drlhp.policy.discrete_actions:DiscreteActions"
_A2C_PLAYER = "drlhp.policy.a2c.policy:build_player"  # both discrete algorithms' checkpoints hold drlhp.policy.nets'
ALGORITHMS = {(row.algo, row.actions): row for row in (
    Algorithm("a2c", "discrete", "A2C", "a2c", "drlhp.policy.a2c.trainer:A2CTrainer",
              "drlhp.policy.a2c.policy:build_policy", _DISCRETE, _A2C_PLAYER),
    Algorithm("ppo", "discrete", "PPO (discrete actions)", "ppo",
              "drlhp.policy.ppo.discrete_trainer:DiscretePPOTrainer",
              "drlhp.policy.ppo.discrete_policy:build_discrete_ppo", _DISCRETE, _A2C_PLAYER),
    Algorithm("ppo", "box", "PPO", "ppo", "drlhp.policy.ppo.trainer:PPOTrainer", "drlhp.policy.ppo.policy:build_ppo",
              "drlhp.policy.ppo.box_actions:BoxActions", "drlhp.policy.ppo.numpy_policy:BoxMeanPolicy"),
)}
AUTO_NAME = "auto"
AUTO = {"discrete": "a2c", "box": "ppo"}  # --algo auto's pick by the action kind


def algo_for(algo: str, actions: str) -> str:
    """--algo's value, or for "auto" the action kind's algorithm (``AUTO``)."""
    return AUTO[actions] if algo == AUTO_NAME else algo


def resolved_algo(algo: str, env_id: str) -> str:
    """--algo's value, or for "auto" the algorithm of ``env_id``'s action kind (only then is its kind looked up)."""
    if algo != AUTO_NAME:
        return algo
    from envs import action_kind

    return AUTO[action_kind(env_id)]


def algorithm_problem(algo: str, actions: str, env_id: str) -> str | None:
    """Why --algo ``algo`` cannot train on ``env_id``'s action kind (None: the table has its row)."""
    algo = algo_for(algo, actions)
    if (algo, actions) in ALGORITHMS:
        return None
    has = " or ".join(KIND_NAMES[kind] for a, kind in ALGORITHMS if a == algo)
    others = " or ".join(sorted({a for a, kind in ALGORITHMS if kind == actions}))
    return (f"--algo {algo} picks {has} actions; {env_id} has {KIND_NAMES[actions]} actions: use --algo {others} "
            f"or auto")


def algorithm(cfg: RunConfig) -> Algorithm:
    """The row of ``cfg``'s --algo (auto: by the action kind) and its env's action kind; ValueError where there is
    none (drlhp.run.checks refuses that run first)."""
    from envs import action_kind

    actions = action_kind(cfg.env)
    problem = algorithm_problem(cfg.algo, actions, cfg.env)
    if problem:
        raise ValueError(problem)
    return ALGORITHMS[(algo_for(cfg.algo, actions), actions)]
