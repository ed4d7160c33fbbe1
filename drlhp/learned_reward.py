"""A trained reward predictor outside drlhp: a gymnasium wrapper that pays an env's steps with it.

    from drlhp import LearnedReward
    env = LearnedReward(gym.make("MovingDot-v0"), "runs/<run>")   # a run directory, or `floyd export`'s folder
    env = LearnedReward(gym.make("Hopper-v5"), "runs/<run>")      # a MuJoCo run's: scores (observation, action)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)   # reward: the predictor's;
                                                                  # info["true_reward"]: the env's own

No pipeline runs: the wrapper loads the predictor's checkpoint and the run's ``config.json`` once and scores
each step in this process, with drlhp's own pieces (no copy of their math):

* what it scores, on a predictor of a Box-action env (MuJoCo: float32 inputs, issue 39): the step's
  x_t = (o_t, clip(a_t, low, high)) as float32, the observation the action was taken in (the last one reset or
  step gave) followed by the action clipped to the action space, exactly as PPO's rollouts fed the predictor
  (drlhp.policy.ppo.rollout; ``predictor_pair``), or, where the run set --reward_next_obs, the observation the step
  led to (the fallen state on a fall, as the rollouts scored it); the predictor's network normalizes that input
  itself (its input normalization is among its weights), so no statistics of PPO's own reach it;
* on any other predictor: the observation the step led to, as the policy's rollouts score ``next_obs``
  (drlhp.policy.a2c.rollout), seen as the predictor saw it in training (``predictor_view``): an image as it comes
  (a 2-D one gets a channel axis; a channels-first frame stack, gymnasium's ``FrameStackObservation``,
  is turned channels-last), Atari's score blanked unless the run kept it visible (envs.score_blanking) and
  its first stacks filled as baselines fills them (envs.atari.fill_stack), a float vector as one byte per
  component from the Box bounds (envs.gym_vec_env.VectorQuantizer);
* the reward, "as the policy saw it": drlhp.policy.reward_source.PredictedReward on the checkpoint's
  weights, i.e. each member's raw output normalized with the statistics published with those weights
  (mean and standard deviation, drlhp.reward.norm.RewardNorm), clipped at the run's ``--reward_clip``
  standard deviations where it set one, averaged over the ensemble and scaled to ``--reward_norm_std``
  (0.05); and where the run centred the reward (``--reward_center_steps``), less a running mean of the
  rewards this wrapper has given over about that many steps, started from the offset the run's newest
  policy checkpoint recorded. ``center=0`` turns centring off (a stationary reward); the network computes
  in float32 whatever the run's ``--reward_bfloat16``.

Which checkpoint: the run directory's own predictor (``reward_predictor/reward_predictor.npz``, the newest the
predictor saved; a run that trained on with ``--load_reward_predictor_ckpt_dir`` and no predictor of its own:
that one), ``floyd export``'s ``reward_predictor.npz``, or a predictor file named directly (a milestone's
``reward_predictor-<steps>.npz``, with its run's ``config.json`` two folders up). Several wrapped envs can share
one ``SavedPredictor`` (one network, one running mean, as the policy's workers shared one);
``LearnedRewardVector`` wraps a gymnasium vector env and scores all its workers' steps in one call.
TensorFlow loads when the first step is scored, not on import.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import numpy as np

from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import config_in_todays_names, with_values_before
from drlhp.reward.checkpoint import (
    PREDICTOR_FILE,
    PredictorCheckpointError,
    find_file,
    load_predictor_weights,
    predictor_batchnorm,
)

TRUE_REWARD_KEY = "true_reward"  # info's key for the env's own reward of the step


class LearnedRewardError(PredictorCheckpointError):
    """A predictor that cannot be found, read, or used on this env (one line, naming the file)."""


def _run_config(ckpt: Path, given: Path) -> tuple[Path, dict]:
    """The config.json recorded with a predictor: in the folder given, beside the file, or two folders up
    (a run's reward_predictor/ or milestones/)."""
    for folder in dict.fromkeys((given if given.is_dir() else given.parent, ckpt.parent, ckpt.parent.parent)):
        path = RunPaths(folder).config
        if path.is_file():
            try:
                return folder, with_values_before(config_in_todays_names(json.loads(path.read_text())))
            except (OSError, ValueError) as e:
                raise LearnedRewardError(f"cannot read {path}: {e}") from None
    raise LearnedRewardError(f"no config.json beside {ckpt} nor in its run directory: the wrapper needs the run's "
                             "env and reward settings (give a run directory or a `python -m floyd export` folder)")


def find_predictor(path: str | Path) -> tuple[Path, Path, dict]:
    """(the predictor file, the folder of the config.json recorded with it, that config in today's names) for a
    run directory, an export folder or a predictor file (module docstring); LearnedRewardError if either is
    missing. Reads no weights."""
    given = Path(path)
    ckpt = find_file(given, PREDICTOR_FILE)
    config_dir, config = _run_config(ckpt, given)
    if not ckpt.is_file() and config.get("load_reward_predictor_ckpt_dir"):  # trained on a loaded predictor
        ckpt = find_file(config["load_reward_predictor_ckpt_dir"], PREDICTOR_FILE)
    if not ckpt.is_file():
        raise LearnedRewardError(f"no reward predictor in {given} (looked for {PREDICTOR_FILE.name} and "
                                 f"{PREDICTOR_FILE})")
    return ckpt, config_dir, config


def _center_state(run_dir: Path) -> dict:
    """The centring offset the run's newest policy checkpoint (or an exported policy) recorded; {} if none."""
    from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint

    try:
        _, meta = load_policy_checkpoint(run_dir)
    except (CheckpointError, OSError, ValueError):
        return {}
    return dict(meta.get("reward_source") or {})


class SavedPredictor:
    """A saved reward predictor with the settings its run recorded; scores batches of predictor inputs.

        p = SavedPredictor(path, center=None)  # path: run directory, export folder or predictor file
        p.rewards(x (B, *obs_shape) uint8, or (B, D + A) float32) -> (B,) float32, the policy's reward
                                         (normalized, mean of members)
        p.raw(x) -> (n_members, B) float32, each member's raw output
        p.env_id, p.score_visible: how the run's observations reached the predictor
        p.takes_actions: a Box-action env's predictor, of float32 x = (observation, clipped action)
        p.next_obs: that observation is the one the step led to (the run's --reward_next_obs), not the one the
                    action was taken in
        p.path: the checkpoint file; p.reward_config: the RewardConfig it is scored with

    ``center``: None as the run (its --reward_center_steps), 0 never, N: over about N steps.
    """

    def __init__(self, path: str | Path, center: int | None = None, seed: int = 0):
        from drlhp.config.reward import RewardConfig

        ckpt, config_dir, config = find_predictor(path)
        self.weights, self.meta = load_predictor_weights(ckpt)
        self.path = Path(self.meta["path"])
        self.obs_dtype = np.dtype(self.meta["obs_dtype"])  # uint8, or float32: (observation, action) vectors
        self.takes_actions = self.obs_dtype == np.float32
        saved = config.get("reward") or {}
        cfg = RewardConfig(**{k: v for k, v in saved.items() if k in RewardConfig.__dataclass_fields__})
        batchnorm = predictor_batchnorm(self.meta)
        self.reward_config = replace(cfg, n_members=len(self.weights.weights), bfloat16="off",
                                     batchnorm=cfg.batchnorm if batchnorm is None else batchnorm,
                                     center_steps=cfg.center_steps if center is None else int(center))
        self.next_obs = self.takes_actions and self.reward_config.next_obs  # --reward_next_obs: x's o is o_{t+1}
        self.env_id: str | None = config.get("env")
        self.score_visible = bool(config.get("score_visible", False))
        first_kernel = np.shape(self.weights.weights[0][0])  # (7, 7, C, 16) for the CNN, (D, 64) for the MLP
        self.is_image = len(first_kernel) == 4
        self.in_channels = int(first_kernel[2]) if self.is_image else int(first_kernel[0])
        self._center_state = _center_state(config_dir) if self.reward_config.center_steps else {}
        self._seed = seed
        self._source = None  # PredictedReward, built on the first batch (its network needs the input's shape)

    def _built(self, shape: tuple):
        from drlhp.policy.reward_source import PredictedReward

        if self._source is None:
            self._source = PredictedReward(shape, self.reward_config, self._seed, weights=self.weights,
                                           obs_dtype=self.obs_dtype)
            self._source.restore(self._center_state)
        elif self._source.ensemble.obs_shape != tuple(shape):
            raise LearnedRewardError(f"{self.path} scores observations of shape {self._source.ensemble.obs_shape}, "
                                     f"given {tuple(shape)}")
        return self._source

    def raw(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, self.obs_dtype)
        return self._built(x.shape[1:]).ensemble.predict(x)

    def rewards(self, x: np.ndarray) -> np.ndarray:
        """The policy's reward for each predictor input of the batch, in order (centring, where on, runs
        over them as over one rollout of one worker)."""
        x = np.asarray(x, self.obs_dtype)
        source = self._built(x.shape[1:])
        return source.rewards(x[:, None], np.zeros((len(x), 1), np.float32))[:, 0]

    @property
    def center_offset(self) -> float | None:
        """The running mean removed now (None: centring off, or nothing scored yet)."""
        return None if self._source is None else self._source.offset


class LearnedReward(gym.Wrapper):
    """``env``'s reward replaced by a saved predictor's (module docstring); the env's own in
    ``info["true_reward"]``. ``predictor``: a run directory, an export folder, a predictor file, or a
    SavedPredictor (shared by several envs). ``center``: as SavedPredictor's."""

    def __init__(self, env: gym.Env, predictor: str | Path | SavedPredictor, center: int | None = None):
        super().__init__(env)
        self.predictor = predictor if isinstance(predictor, SavedPredictor) else SavedPredictor(predictor, center)
        if self.predictor.takes_actions:
            self._pair = predictor_pair(env.observation_space, env.action_space, self.predictor)
        else:
            self._view = predictor_view(env.observation_space, self.predictor)
        self._last_obs = None  # the observation the next action is taken in (Box-action predictors)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._last_obs = obs
        return obs, info

    def step(self, action):
        before = self._last_obs
        obs, true_reward, terminated, truncated, info = self.env.step(action)
        self._last_obs = obs
        if self.predictor.takes_actions:
            if before is None:
                raise gym.error.ResetNeeded("LearnedReward: call reset() before step()")
            x = self._pair(info.get("fall_observation", obs) if self.predictor.next_obs else before, action)
        else:  # the observation the step led to: on a fall (the reset rule) the fallen one, as the rollouts scored it
            x = self._view(info.get("fall_observation", obs))
        reward = float(self.predictor.rewards(x[None])[0])
        return obs, reward, terminated, truncated, {**info, TRUE_REWARD_KEY: true_reward}


class LearnedRewardVector(gym.vector.VectorWrapper):
    """LearnedReward for a gymnasium vector env: every worker's step scored in one batch (one network call
    per step, not one per worker: on MovingDot a batch of 16 cost about 1.4 single calls, 2026-11-26, a busy
    2-core machine), as the policy's rollouts scored them. The envs' own rewards in ``info["true_reward"]``
    (N,). Either autoreset mode: with SAME_STEP a finished episode's step is scored on its last observation
    (``info["final_obs"]``); with NEXT_STEP (gymnasium's default) the reset step that follows it is paid 0 and
    left out of the centring mean."""

    def __init__(self, env: gym.vector.VectorEnv, predictor: str | Path | SavedPredictor, center: int | None = None):
        super().__init__(env)
        self.predictor = predictor if isinstance(predictor, SavedPredictor) else SavedPredictor(predictor, center)
        if self.predictor.takes_actions:
            self._pair = predictor_pair(env.single_observation_space, env.single_action_space, self.predictor)
        else:
            self._view = predictor_view(env.single_observation_space, self.predictor)
        self._last_obs = None  # (N, D): the observations the next actions are taken in (Box-action predictors)
        mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
        self._same_step = mode == gym.vector.AutoresetMode.SAME_STEP
        self._resetting = np.zeros(env.num_envs, bool)  # NEXT_STEP: these workers' next step is a reset

    def reset(self, **kwargs):
        self._resetting[:] = False
        obs, info = self.env.reset(**kwargs)
        self._last_obs = obs
        return obs, info

    def step(self, actions):
        from envs.fixed_length import led_to

        before = self._last_obs
        obs, true_rewards, terminated, truncated, info = self.env.step(actions)
        self._last_obs = obs
        done = np.asarray(terminated) | np.asarray(truncated)
        after = led_to(obs, info, done, self._same_step)  # a finished episode's last one, a fall's fallen state
        if self.predictor.takes_actions:  # x_t: the observation each action was taken in (or led to), the action
            if before is None:
                raise gym.error.ResetNeeded("LearnedRewardVector: call reset() before step()")
            seen = after if self.predictor.next_obs else before
            inputs = [self._pair(o, a) for o, a in zip(seen, actions)]
        else:
            inputs = [self._view(o) for o in after]
        scored = ~self._resetting
        rewards = np.zeros(len(inputs), np.float32)
        if scored.any():
            rewards[scored] = self.predictor.rewards(np.stack([x for x, s in zip(inputs, scored) if s]))
        if not self._same_step:
            self._resetting = done
        return obs, rewards, terminated, truncated, {**info, TRUE_REWARD_KEY: true_rewards}


def predictor_pair(obs_space: gym.Space, action_space: gym.Space, predictor: SavedPredictor):
    """(obs, action) -> the Box-action predictor's input x = (obs, clip(action, low, high)) as float32 (D + A,), as
    PPO's rollouts made it (drlhp.policy.ppo.rollout); LearnedRewardError where the spaces cannot be the run's."""
    where = f"{predictor.path} (trained on {predictor.env_id})"
    if not isinstance(action_space, gym.spaces.Box) or not isinstance(obs_space, gym.spaces.Box):
        raise LearnedRewardError(f"{where} scores (observation, action) vectors of a Box-action env; this env's "
                                 f"spaces are {type(obs_space).__name__} and {type(action_space).__name__}")
    d, a = int(np.prod(obs_space.shape)), int(np.prod(action_space.shape))
    if d + a != predictor.in_channels:
        raise LearnedRewardError(f"{where} scores {predictor.in_channels} values a step (observation, action); this "
                                 f"env has {d} + {a}")
    low, high = action_space.low.reshape(-1), action_space.high.reshape(-1)

    def pair(obs, action):
        x = np.empty(d + a, np.float32)
        x[:d] = np.asarray(obs, np.float32).reshape(-1)
        x[d:] = np.clip(np.asarray(action, np.float32).reshape(-1), low, high)
        return x

    return pair


def predictor_view(space: gym.Space, predictor: SavedPredictor):
    """obs -> the predictor's input for one observation of ``space``, as drlhp's vector envs gave it in training
    (module docstring); LearnedRewardError where the space cannot be what the predictor was trained on."""
    from envs.atari import fill_stack
    from envs.atari_ids import atari_game
    from envs.gym_vec_env import VectorQuantizer, observation_layout, spaces_problem
    from envs.score_blanking import blank_score

    problem = spaces_problem(gym.spaces.Discrete(2), space)  # the observation's half of drlhp's check
    if problem:
        raise LearnedRewardError(problem)
    shape, _ = observation_layout(space)
    where = f"{predictor.path} (trained on {predictor.env_id})"
    if len(shape) == 1:
        if predictor.is_image or shape[0] != predictor.in_channels:
            raise LearnedRewardError(f"{where} does not score vectors of {shape[0]} components")
        quantize = VectorQuantizer(space)
        return lambda obs: quantize(np.asarray(obs).reshape(shape))
    channels_first = shape[-1] != predictor.in_channels and shape[0] == predictor.in_channels
    if not predictor.is_image or (shape[-1] != predictor.in_channels and not channels_first):
        raise LearnedRewardError(f"{where} does not score images of shape {tuple(space.shape)}")
    atari = bool(predictor.env_id) and atari_game(predictor.env_id) is not None
    blank = atari and not predictor.score_visible

    def view(obs):
        x = np.asarray(obs, np.uint8).reshape(space.shape)
        x = np.moveaxis(x, 0, -1) if channels_first else x.reshape(shape)
        if not atari:
            return x
        x = fill_stack(np.array(x[None]))[0]  # a copy: the env's own observation is left as it was
        return blank_score(predictor.env_id, x, inplace=True) if blank else x

    return view
