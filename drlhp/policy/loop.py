"""The policy's training loop, one for every algorithm (Stable-Baselines3's OnPolicyAlgorithm): rollout -> observers
-> learn -> after_update, with progress, metrics, checkpoints and random play before the first reward. It knows no
algorithm: each fills the hooks below in its folder (A2C: drlhp.policy.a2c.trainer; PPO: drlhp.policy.ppo.trainer on
Box actions, drlhp.policy.ppo.discrete_trainer on discrete ones), and drlhp.policy.algorithms picks one.

    PolicyTrainer.train: until this sitting's end (the budget, or --stop_at_million_timesteps), the last 100
    episodes reaching --stop_at_true_return and/or --stop_at_success_rate, or the stop event (ports.stop_event):
        while the reward source is not ready (no predictor weights yet):
            random play: rollouts with random actions (PPO on Box actions: its initial Gaussian policy), shown to
            the observers, not trained on and not counted in the budget (paused while wait_for_reward() says
            so: the predictor needs no more random-play segments, or the labeller wants none now)
        rollout = play()                  (n_steps x n_envs agent steps, its rewards from the reward source)
        observers see the rollout         (segments for the labeller, metrics)
        learn(rollout)                    (the algorithm's update, at learning_rate() and entropy_coef())
        after_update: milestones, checkpoints, the progress line + metrics every log_interval s
    then the pacing observers' before_end (a person's last labels), and end_sitting: a final checkpoint and the
    HParams record; it returns the summary (for summary.json)

What an algorithm fills: ``algo`` (its name in a checkpoint's meta and the summary), ``make_runner`` (what plays its
rollouts), ``learn`` (one update), ``learning_rate`` and ``entropy_coef`` (now). The rest has defaults for drlhp's
vector envs (envs.VecEnv: ``random_rollout``, ``play``, ``_count_episodes``, ``targets``, ``milestone``), which PPO
on Box actions replaces for its gymnasium vector envs.

Metrics: drlhp's own names (``policy/``, ``system/``) and the usual Stable-Baselines3 ones beside them
(``rollout/ep_rew_mean``, ``rollout/ep_len_mean``, ``rollout/success_rate``, ``train/entropy_loss``,
``train/policy_loss``, ``train/value_loss``, ``time/fps``); see ``_log``.
"""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass
from typing import Callable

from drlhp.config import RunConfig
from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint, save_milestone, save_policy_checkpoint
from drlhp.policy.reward_figures import RewardFigures
from drlhp.policy.reward_source import RewardSource
from drlhp.policy.sitting_clock import SittingClock
from drlhp.policy.training_state import RECENT_EPISODES, TrainingState, _mean
from drlhp.processes.ports import PolicyPorts
from drlhp.records.formatting import format_duration
from drlhp.records.metrics import MetricsLogger, memory_mb
from drlhp.records.run_record import RunRecord
from envs import VecEnv


class RolloutObserver:
    """Sees every rollout (e.g. cuts segments for the labeller); adds metrics and summary figures. One that
    ``paces`` the loop is asked to wait before each trained rollout (``before_update``); one may hold random
    play back while it has no use for its segments (``holds_random_play``). An observer need not subclass
    this (RewardFigures does not): the trainer takes both of those as absent where they are."""

    paces = False

    def on_rollout(self, rollout, state: TrainingState) -> None:
        pass

    def before_update(self, timesteps: int) -> None:
        """(``paces`` only) wait before the update at ``timesteps``, e.g. for the predictor's pace."""

    def before_end(self, timesteps: int) -> None:
        """(``paces`` only) wait before the sitting ends at ``timesteps``, e.g. for a person's last labels."""

    def holds_random_play(self) -> bool:
        return False

    def metrics(self) -> dict:
        return {}

    def progress_text(self) -> str:
        """What it adds to the progress line (" | ..."), or ""."""
        return ""

    def summary(self) -> dict:
        return {}


@dataclass(frozen=True)
class Agent:
    """What the trainer trains: the envs it plays, the policy, and the reward the policy learns from."""

    env: VecEnv  # or, for PPO on Box actions, a gymnasium vector env
    policy: object  # the algorithm's: A2CPolicy, DiscretePPOPolicy, PPOPolicy
    reward_source: RewardSource


@dataclass(frozen=True)
class Outputs:
    """Where the trainer writes: the run's record (where checkpoints and milestones go), its metrics, and
    its progress lines (``log``, print's signature)."""

    record: RunRecord
    logger: MetricsLogger
    log: Callable = print


class PolicyTrainer:
    """The loop (``train``) and what every algorithm's training shares: resuming, checkpoints and milestones, the
    episodes' counts and targets, the progress line, metrics and summary. A subclass is one algorithm's trainer."""

    algo = ""  # the algorithm's name, in a checkpoint's meta and the summary (a meta without one: A2C's)
    figures_around_points = True  # RewardFigures (a game's points: Atari's); not for PPO's Box-action tasks

    def __init__(self, cfg: RunConfig, agent: Agent, out: Outputs, ports: PolicyPorts = PolicyPorts(),
                 observers: list[RolloutObserver] = ()):
        """``ports`` (drlhp.processes.ports.PolicyPorts): the loop reads ``stop_event`` (stop) and
        ``random_play_over`` (random play is over: wait for the first weights); the observers hold the
        channels they feed. ``PolicyPorts()`` (every port None): the policy alone."""
        env, policy, reward_source = agent.env, agent.policy, agent.reward_source
        self.cfg, self.env, self.policy, self.record, self.logger = cfg, env, policy, out.record, out.logger
        self.reward_source = reward_source
        self.print = out.log
        self.ports = ports
        self.observers = list(observers)
        if self.figures_around_points and reward_source.name in ("predicted", "env_scaled"):
            self.observers.append(RewardFigures(reward_source))  # what the reward pays around points
        self.state = TrainingState()
        self.has_success = None
        if cfg.load_policy_ckpt_dir:
            self.resume()
        self.has_success = bool(self.state.recent_successes) or None
        self.runner = self.make_runner()

    # --- what an algorithm fills -----------------------------------------------------------------------------------
    def make_runner(self):
        """What plays the rollouts (``run()``, and ``run(random_actions=True)`` unless ``random_rollout`` is
        replaced), its envs seeded for this sitting (``training_state.env_seed``)."""
        raise NotImplementedError

    def learn(self, rollout) -> dict:
        """One update on ``rollout``; the losses and figures for the progress line and metrics (``entropy`` among
        them)."""
        raise NotImplementedError

    def learning_rate(self) -> float:
        """The learning rate now (``self.state.timesteps`` into the run)."""
        raise NotImplementedError

    def entropy_coef(self) -> float:
        """The entropy bonus's weight now."""
        raise NotImplementedError

    # --- the run's checkpoints ---------------------------------------------------------------------------------------
    def resume(self) -> None:
        """The newest checkpoint of --load_policy_ckpt_dir into the policy, the state and the reward source."""
        arrays, meta = self.load_checkpoint(self.cfg.load_policy_ckpt_dir)
        self.restore_policy(arrays, meta)
        self.state = TrainingState.from_meta(meta)
        self.reward_source.restore(self.state.reward_source)
        self.print(f"[policy] resumed from {meta['path']} at {self.state.timesteps:,} steps")

    def load_checkpoint(self, path) -> tuple[dict, dict]:
        """(arrays, meta) of the newest checkpoint at ``path``; CheckpointError where another algorithm wrote it
        (discrete PPO's network is A2C's: its weights would load, and its optimizer state not)."""
        arrays, meta = load_policy_checkpoint(path)
        written_by = meta.get("algo", "a2c")
        if written_by != self.algo:
            raise CheckpointError(f"policy checkpoint {meta['path']} is {written_by}'s; this run is "
                                  f"{self.algo.upper()}'s")
        return arrays, meta

    def restore_policy(self, arrays: dict, meta: dict) -> None:
        """A checkpoint's arrays into the policy; CheckpointError where they do not fit this env's network."""
        try:
            self.policy.set_state(arrays)
        except (KeyError, ValueError) as e:
            raise CheckpointError(f"checkpoint {meta['path']} does not fit {self.cfg.env}: {e}") from None

    def milestone(self, before: int) -> None:
        """A copy kept for good when the last update crossed a multiple of --milestone_million_timesteps."""
        every = int(round(self.cfg.milestone_million_timesteps * 1e6))
        if every <= 0 or self.state.timesteps // every == before // every:
            return
        path = save_milestone(self.record.paths.milestones, self.state.timesteps, self.policy.weights_only(),
                              self._meta(), getattr(self.reward_source, "weights", None),
                              self.cfg.reward.batchnorm)
        self.print(f"[policy] milestone at {self.state.timesteps:,} steps: {path.parent}", flush=True)

    def _meta(self) -> dict:
        """The training state a checkpoint or milestone keeps, the reward source's own state with it."""
        self.state.reward_source = self.reward_source.state()
        return {**self.state.to_meta(), "algo": self.algo}

    def checkpoint(self) -> None:
        save_policy_checkpoint(self.record.ckpt_dir, self.state.updates, self.policy.get_state(), self._meta())

    def targets(self) -> dict[str, tuple[float, collections.deque]]:
        """The targets given (--stop_at_true_return, --stop_at_success_rate): name -> (value, its window)."""
        cfg, s = self.cfg, self.state
        out = {}
        if cfg.stop_at_true_return is not None:
            out["true return"] = (cfg.stop_at_true_return, s.recent_returns)
        if cfg.stop_at_success_rate is not None:
            out["success rate"] = (cfg.stop_at_success_rate, s.recent_successes)
        return out

    def reached_target(self) -> bool:
        """Every target given is reached by the mean of its last RECENT_EPISODES episodes (a full window, this
        sitting's or the checkpoint's); False without a target."""
        targets = self.targets()
        return bool(targets) and all(len(recent) == RECENT_EPISODES and _mean(recent) >= value
                                     for value, recent in targets.values())

    def summary(self) -> dict:
        s = self.state
        out = {"mode": self.cfg.mode, "env": self.cfg.env, "seed": self.cfg.seed, "algo": self.algo,
               "timesteps": s.timesteps,
               "updates": s.updates, "wall_s": round(s.wall_s, 1),
               "agent_steps_per_s": round(s.timesteps / s.wall_s, 1) if s.wall_s > 0 else None,
               "episodes": s.episodes, "true_return_last100": _mean(s.recent_returns),
               "episode_length_last100": _mean(s.recent_lengths), **s.game_figures()}
        if self.has_success:
            out["success_rate_last100"] = _mean(s.recent_successes)
        if s.random_steps:
            out["random_steps"] = s.random_steps
        if self.targets():
            out["reached_target"] = self.reached_target()
        for obs in self.observers:
            out.update(obs.summary())
        return out

    def should_stop(self) -> bool:
        return self.ports.stop_event is not None and self.ports.stop_event.is_set()

    def wait_for_reward(self) -> bool:
        """Random play only makes segments: none once the predictor has what it needs (it pretrains on the
        initial preferences, or loads a predictor: ``random_play_over``) or while no observer wants them."""
        over = self.ports.random_play_over
        return (over is not None and over.is_set()) or any(getattr(obs, "holds_random_play", bool)()
                                                           for obs in self.observers)

    def _random_play(self) -> None:
        """Before the reward source is ready: random actions, for the observers only (none while
        ``wait_for_reward()``: the observers have no use for them now)."""
        if self.wait_for_reward():
            time.sleep(0.05)
            return
        rollout = self.random_rollout()
        self.state.random_steps += rollout.true_rewards.size
        for obs in self.observers:
            obs.on_rollout(rollout, self.state)

    def random_rollout(self):
        """A rollout of random play (on drlhp's vector envs: uniform random actions), not trained on."""
        return self.runner.run(random_actions=True)

    def _count_episodes(self, finished) -> None:
        """The episodes a rollout finished, into the state's counts and last-100 windows."""
        s = self.state
        for ep in finished:
            s.episodes += 1
            s.recent_returns.append(ep.true_return)
            s.recent_lengths.append(ep.length)
            s.recent_points.append(ep.points)
            if ep.returns is not None:
                s.recent_hits.append(ep.returns)
            if ep.success is not None:
                self.has_success = True
                s.recent_successes.append(float(ep.success))
            elif self.cfg.stop_at_success_rate is not None:  # else it would never stop, and say nothing
                raise ValueError(f"--stop_at_success_rate: {self.cfg.env} reports no success for its episodes (no "
                                 f"'success' or 'is_success' in the last step's info); use --stop_at_true_return")

    def train(self) -> dict:
        cfg, s = self.cfg, self.state
        s.sitting += 1
        clock = SittingClock.start(s, fps_now=False)
        timing = collections.defaultdict(float)
        while s.timesteps < cfg.stop_timesteps and not self.should_stop() and not self.reached_target():
            if not self.reward_source.ready():
                self._random_play()
                clock.restart(s)  # waiting is not training time
                continue
            if clock.fps_from is None:
                clock.fps_from = (s.timesteps, s.wall_s)
            pacers = [obs for obs in self.observers if getattr(obs, "paces", False)]
            if pacers:
                t_wait = time.perf_counter()
                for obs in pacers:
                    obs.before_update(s.timesteps)
                timing["wait_predictor_s"] += time.perf_counter() - t_wait
            rollout = self.play(timing)
            for obs in self.observers:
                obs.on_rollout(rollout, s)
            t0 = time.perf_counter()
            losses = self.learn(rollout)
            timing["train_s"] += time.perf_counter() - t0
            timing["env_s"] += rollout.env_s
            timing["act_s"] += rollout.act_s
            self.after_update(rollout, losses, rollout.true_rewards.size, timing, clock)
        for obs in self.observers:
            if getattr(obs, "paces", False) and not self.should_stop():
                obs.before_end(s.timesteps)
        return self.end_sitting()

    def play(self, timing: dict):
        """One rollout to train on, its training rewards from the reward source in one batch (the runner on drlhp's
        vector envs asks the source itself; ``timing["reward_s"]``: the time that took)."""
        rollout = self.runner.run()
        timing["reward_s"] += rollout.reward_s
        return rollout

    def after_update(self, rollout, losses: dict, batch: int, timing: dict, clock: SittingClock) -> None:
        """An update's bookkeeping for every algorithm: counts, a milestone, the
        episodes, running time, a checkpoint per --policy_ckpt_interval updates, progress per --log_interval s."""
        cfg, s = self.cfg, self.state
        s.updates += 1
        s.timesteps += batch
        self.milestone(s.timesteps - batch)
        self._count_episodes(rollout.finished)
        s.wall_s = clock.wall_at_start + time.perf_counter() - clock.started
        if cfg.policy_ckpt_interval > 0 and s.updates % cfg.policy_ckpt_interval == 0:
            self.checkpoint()
        now = time.perf_counter()
        if now - clock.log_time >= cfg.log_interval or s.timesteps >= cfg.stop_timesteps or self.reached_target():
            sps = (s.timesteps - clock.log_steps) / max(now - clock.log_time, 1e-9)
            fps = (s.timesteps - clock.fps_from[0]) / max(s.wall_s - clock.fps_from[1], 1e-9)
            self._log(losses, rollout, sps, timing, now - clock.log_time, s.updates - clock.log_updates, fps)
            timing.clear()
            clock.log_time, clock.log_steps, clock.log_updates = now, s.timesteps, s.updates

    def end_sitting(self) -> dict:
        """The sitting's last checkpoint, its summary and the HParams beside it."""
        self.checkpoint()
        summary = self.summary()
        self.write_hparams(summary)
        return summary

    def write_hparams(self, summary: dict | None = None) -> None:
        """The run's config and final figures to TensorBoard's HParams tab (drlhp.records.metrics.write_hparams),
        in the policy's ``tb/``; a failure costs a warning, never the run."""
        from drlhp.records.metrics import write_hparams

        try:
            write_hparams(self.record.paths.tb, self.cfg.to_dict(), summary or self.summary(),
                          trial_id=self.record.dir.name)
        except Exception as e:  # noqa: BLE001 -- the HParams tab must not turn a finished run into a crash
            self.print(f"[policy] warning: no HParams record: {type(e).__name__}: {e}", flush=True)

    def _log(self, losses: dict, rollout, sps: float, timing: dict, interval_s: float, n_updates: int,
             fps: float | None = None) -> None:
        s, cfg = self.state, self.cfg
        ret = _mean(s.recent_returns)
        length = _mean(s.recent_lengths)
        figures = s.game_figures()
        metrics = {f"policy/{k}": v for k, v in losses.items()}
        metrics.update({
            "policy/true_return_last100": ret,
            "policy/episode_length_last100": length,
            "policy/episodes": s.episodes,
            **{f"policy/{k}": v for k, v in figures.items()},
            "policy/learning_rate": self.learning_rate(),
            "policy/ent_coef": self.entropy_coef(),
            "policy/training_reward_mean": float(rollout.rewards.mean()),
            "system/agent_steps_per_s": sps,
            "system/memory_mb_policy": memory_mb(),
            "system/wall_s": s.wall_s,
            "system/sitting": s.sitting,
        })
        for k, v in timing.items():  # fraction of the interval spent in each part of the loop
            metrics[f"system/time_frac_{k[:-2]}"] = v / max(interval_s, 1e-9)
        metrics["system/train_step_ms"] = 1e3 * timing.get("train_s", 0.0) / max(1, n_updates)
        if self.has_success:
            metrics["policy/success_rate_last100"] = _mean(s.recent_successes)
        # the same figures under Stable-Baselines3's names (true return and length of the last 100 episodes,
        # entropy_loss = -entropy as SB3 signs it, fps = agent steps per second of training this sitting)
        metrics.update({"rollout/ep_rew_mean": ret, "rollout/ep_len_mean": length,
                        "train/entropy_loss": -losses["entropy"], "train/policy_loss": losses.get("policy_loss"),
                        "train/value_loss": losses.get("value_loss"), "time/fps": fps if fps is not None else sps})
        if self.has_success:
            metrics["rollout/success_rate"] = metrics["policy/success_rate_last100"]
        for obs in self.observers:
            metrics.update(obs.metrics())
        self.logger.log(s.timesteps, metrics)
        pct = 100.0 * s.timesteps / max(1, cfg.total_timesteps)
        eta = (cfg.stop_timesteps - s.timesteps) / max(sps, 1e-9)
        line = (f"[policy] {s.timesteps:>11,} steps ({pct:5.1f}%) | {sps:6.0f} steps/s | "
                f"{s.episodes:,} episodes | true return (last {len(s.recent_returns)}) "
                f"{'-' if ret is None else f'{ret:.2f}'}")
        task = figures.get("task_return_last100")
        if task is not None:
            line += f" (without control cost {task:.2f})"
        if self.has_success:
            line += f" | success {_mean(s.recent_successes):.2f}"
        hits = figures.get("returns_per_game_last100")
        if hits is not None:
            line += f" | length {length:.0f} | returns/game {hits:.1f}"
        line += "".join(getattr(obs, "progress_text", lambda: "")() for obs in self.observers)  # RewardFigures has none
        line += f" | entropy {losses['entropy']:.3f} | elapsed {format_duration(s.wall_s)} | eta {format_duration(eta)}"
        self.print(line, flush=True)
