"""The policy process: the policy trained on the predictor's reward, feeding segments to the labeller. Its algorithm
is the table's row for --algo and the env's action kind (drlhp.policy.algorithms: A2C or PPO on discrete actions, PPO
on Box actions); what differs by action kind (the envs, the predictor's input, the feeds) is the row's side.

    the row's trainer (a PolicyTrainer, drlhp.policy.loop) with
      reward source  PredictedReward: newest weights pulled from weights_to_policy, one batch per rollout
      observers      the side's feeds (drlhp.policy.feeds.SegmentFeed: segments for the labeller, offered to
                     segment_queue as many as the preference interface wants; on discrete actions EpisodeFeed,
                     --show_agent; on Box actions FallFigures)
      observer       PredictorPace (--reward_updates_per_step): waits for the predictor's pair-updates
      observer       LabelPace: where a person labels, waits for their labels (the run lasts as long as they do)
    before the first weights: random play (segments for the initial preferences), only while the
    preference interface wants segments, and paused while the predictor pretrains
"""
from __future__ import annotations

from drlhp.config import RunConfig
from drlhp.processes.ports import PolicyPorts
from drlhp.processes.segment_wire import register_compact_pickling


def pacers(cfg: RunConfig, ports: PolicyPorts) -> list:
    """The observers that pace the policy: the predictor's pair-updates (PredictorPace), a person's labels
    (LabelPace), each where its channel is given."""
    from drlhp.policy.feeds import LabelPace, PredictorPace

    out = []
    if ports.pair_updates is not None:
        out.append(PredictorPace(cfg.reward.updates_per_step, ports))
    if ports.segment_flow is not None:
        out.append(LabelPace(ports, cfg.total_timesteps))
    return out


def _train(trainer) -> dict:
    """The trainer's run; on Ctrl-C (only where this runs in the parent: --no_labelling) a checkpoint first."""
    try:
        return trainer.train()
    except KeyboardInterrupt:
        trainer.checkpoint()
        raise


def _close(ports: PolicyPorts, logger, env) -> None:
    """What a policy run leaves: the segment queue (unsent segments may be dropped at exit, by design), the
    metrics logger, the envs."""
    if ports.segment_queue is not None:
        ports.segment_queue.cancel_join_thread()
    if logger is not None:
        logger.close()
    env.close()


def run_policy(cfg: RunConfig, ports: PolicyPorts, run_dir: str, log=print, fixed_weights=None) -> dict:
    """Train the policy until the budget or the stop event; returns the summary figures. ``ports``
    (drlhp.processes.ports.PolicyPorts): its channels; every one None (``PolicyPorts()``): the policy alone,
    on ``fixed_weights`` (--no_labelling). With ``segment_flow`` it cuts and sends only the segments the
    preference interface wants, and reports the agent-step count it schedules labels by; without, it
    cuts ``segments_per_cut`` every cut."""
    from drlhp.policy.algorithms import algorithm
    from drlhp.policy.loop import Agent, Outputs
    from drlhp.records.metrics import MetricsLogger
    from drlhp.records.run_record import RunRecord

    row = algorithm(cfg)
    side = row.side(cfg)
    envs = side.preference_envs(log)
    logger = None
    try:
        policy = row.load("build_policy")(cfg, envs)
        reward = side.predicted_reward(envs, ports.weights_to_policy, fixed_weights)
        register_compact_pickling()  # segments leave this process without what the receiver can rebuild
        logger = MetricsLogger(run_dir)
        observers = [*side.feeds(envs, reward, ports), *pacers(cfg, ports)]
        trainer = row.load("trainer")(cfg, Agent(envs, policy, reward), Outputs(RunRecord(run_dir), logger, log), ports,
                                      observers, **side.preference_options(envs))
        return _train(trainer)
    finally:
        _close(ports, logger, envs)
