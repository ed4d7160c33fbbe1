"""The three roles of train_policy_with_preferences and gather_initial_prefs, in one table.

    role              entry point                                 ports               Ray resources
    reward_predictor  drlhp.reward.process:run_reward_predictor   PredictorPorts      --predictor_resources
    pref_interface    pref_interface.process:run_pref_interface   PrefInterfacePorts  --labeller_resources
    policy            drlhp.policy.process:run_policy             PolicyPorts         --policy_resources

Each runs in a child of its own (drlhp.processes.child.run_child, on either backend) as
``entry(cfg, ports, run_dir, log=..., **extra)``, which returns its figures for the run's summary: its
ports are cut from the run's channels by name (drlhp.processes.ports), and ``extra`` is what the parent
works out for it from the env's id (so the child does not make an env to learn a shape). The entry point
is imported in the child, never here: the parent stays TensorFlow-free. Roles start in the table's order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from drlhp.config import RunConfig
from drlhp.processes.child import Child
from drlhp.processes.ports import Channels, PolicyPorts, PredictorPorts, PrefInterfacePorts, cut
from pref_interface.labellers import LABELLERS


def _nothing(cfg: RunConfig) -> dict:
    return {}


def _goal_env_kwargs(cfg: RunConfig) -> dict:
    """The ``gym.make`` kwargs of --oracle_goal's goal ({} without one): every env of the run is made with them."""
    from pref_interface.goal_oracle import goal_env_kwargs

    return goal_env_kwargs(cfg.prefs.oracle_goal)


def _predictor_extra(cfg: RunConfig) -> dict:
    from envs import predictor_input

    # the observation's shape and uint8, or (D + A,) float32 (Box actions; D of the env made with a goal's kwargs)
    shape, dtype = predictor_input(cfg.env, **_goal_env_kwargs(cfg))
    return {"predictor_input": (shape, dtype.name)}


def _pref_interface_extra(cfg: RunConfig) -> dict:
    from envs import frames_per_agent_step

    return {"frames_per_step": frames_per_agent_step(cfg.env)}


@dataclass(frozen=True)
class Role:
    name: str
    entry: str  # "module:function", imported in the child
    ports: type  # its ports class (drlhp.processes.ports)
    resources: str  # the RunConfig field of its Ray resources (--backend ray)
    extra: Callable[[RunConfig], dict] = _nothing


ROLES = (
    Role("reward_predictor", "drlhp.reward.process:run_reward_predictor", PredictorPorts, "predictor_resources",
         _predictor_extra),
    Role("pref_interface", "pref_interface.process:run_pref_interface", PrefInterfacePorts, "labeller_resources",
         _pref_interface_extra),
    Role("policy", "drlhp.policy.process:run_policy", PolicyPorts, "policy_resources"),
)


def unused_ports(cfg: RunConfig) -> set[str]:
    """The channels this run leaves out of every role's ports."""
    unused = set()
    if not (cfg.prefs.show_agent and LABELLERS[cfg.prefs.labeller].shows_agent):
        unused.add("agent_episode")  # the labeller shows no agent: the policy sends no episodes
    if cfg.prefs.query_selection != "variance":
        unused.add("weights_to_prefs")  # the preference interface scores no pairs with the ensemble
    return unused


def children(cfg: RunConfig, channels: Channels, run_dir: str, profile_dir: str | None) -> list[Child]:
    """Every role of the run, ready for a backend's ``start``, in the order they start."""
    unused = unused_ports(cfg)
    return [Child(role.name, role.entry, cfg, cut(role.ports, channels, unused), run_dir, role.extra(cfg),
                  profile_dir, getattr(cfg, role.resources)) for role in ROLES]


def finishing_role(cfg: RunConfig) -> str:
    """The role whose end ends the run: the predictor once it holds the initial preferences
    (gather_initial_prefs), else the policy at its budget (or at --stop_at_true_return)."""
    return "reward_predictor" if cfg.gathers else "policy"


def summary_roles(cfg: RunConfig) -> tuple[str, ...]:
    """Whose figures make the run's summary, in this order (a later role's figure wins a shared name)."""
    return ("reward_predictor", "pref_interface") if cfg.gathers else ("policy", "reward_predictor",
                                                                          "pref_interface")
