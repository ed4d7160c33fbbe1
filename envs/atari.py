"""Atari ``*NoFrameskip-v4`` games through ale-py's threaded C++ vector env.

Preprocessing (DeepMind, Mnih et al. 2015), inside ``ale_py.vector_env.AtariVectorEnv``:
up to 30 no-op actions at reset, frame skip 4 with a max-pool over the last two frames, 84x84
grayscale, a stack of the last 4 frames, FIRE at reset for games that need it; a game's first stacks are
filled with its first frame, as OpenAI baselines' FrameStack does, not with black (``fill_stack``). ``NoFrameskip-v4``
semantics: no sticky actions (repeat_action_probability 0), the minimal action set.

Episode ends and lives: an episode is one whole game (``episodic_life`` off, no signal on a lost
life); the policy gets no life counter (only the lives some games draw on screen). Nor do the
predictor and the labeller. Episodes are truncated at 108,000 frames (30 minutes of play), as is
standard, or earlier where a game's cartridge stops playing before that (``max_frames_per_episode``). Whether a
game's end stops the policy's n-step returns is the policy's choice, not the env's (``--episode_ends``): with the
env's reward it does; with the predictor's reward (the default ``auto``) it does not, as in the paper, and returns
bootstrap through the reset.

What the predictor and the labeller see: the score area blanked (``envs/score_blanking.py``, one
table of rectangles per game), through ``predictor_view``, as in the paper; ``score_visible=True``
(``--score_visible``) leaves it, as the original reproduction did. The policy's own input keeps it.

Game figures: for Pong each finished episode also counts its points (won + lost) and the agent's
returns (the ball turned back on the agent's side: ``envs/pong_events.py``), so a run can show
rallies long before the score moves.

What a person watches: with ``watch_steps`` (where a person labels) the emulator's colour frames, 210 x 160, of
``WATCHED_WORKERS`` workers, from emulators that follow them (``envs/atari_watch.py``: ``self.watch``); otherwise
the newest grey frame of the predictor's stack.

Rewards: the TRUE game reward (``reward_clipping`` off here). Clipping to [-1, 1] for training
happens in the policy's reward source (``drlhp.policy.reward_source``), so logs and the synthetic oracle
use the real score.

Why AtariVectorEnv and not gymnasium's ``AsyncVectorEnv`` of ``AtariPreprocessing`` envs: on 2
cores it steps about 2x faster (``bench/throughput.py --compare_vec_envs`` measures both), with no
worker processes to fork or pickle frames through.
"""
from __future__ import annotations

import numpy as np

from envs.atari_ids import atari_game
from envs.atari_watch import WATCHED_WORKERS, ColourWatch
from envs.pong_events import ReturnCounter
from envs.score_blanking import blank_score
from envs.vec_env import EpisodeTracker, StepResult, VecEnv

NOOP_MAX = 30
FRAME_SKIP = 4
N_STACK = 4
MAX_FRAMES_PER_EPISODE = 108_000
# Games whose cartridge falls into its attract mode once a game has run about 65,300 frames: the colours cycle,
# the ball and the opponent are gone, no point can be won or lost and the game never ends, so ale-py plays a dead
# screen until 108,000 frames. A Pong policy that learned long rallies reached it, and its predictor paid the
# never-seen screens 500 standard deviations above any game frame (docs/results/pong.md, session 36). Measured in
# tests/test_atari_env.py; these games' episodes are truncated before it.
ATTRACT_MODE_TRUNCATION = {"pong": 64_000, "breakout": 64_000}


def max_frames_per_episode(game: str) -> int:
    """The frames after which an episode of ``game`` is truncated: 108,000, or fewer where the cartridge goes
    into its attract mode before that (ATTRACT_MODE_TRUNCATION)."""
    return min(MAX_FRAMES_PER_EPISODE, ATTRACT_MODE_TRUNCATION.get(game, MAX_FRAMES_PER_EPISODE))


def fill_stack(obs: np.ndarray) -> np.ndarray:
    """A game's first observations as OpenAI baselines' FrameStack (the paper's code) makes them: the stack
    filled with copies of the first frame, not with black. ale-py pads the stack with all-zero frames
    after a reset ([0, 0, 0, f0], then [0, 0, f0, f1], ...); a reward predictor has seen almost no such
    frames and may pay them anything (docs/results/pong.md, the Pong campaign's sitting 1: +16 std), and in a
    continuing task a game start is a state the policy can reach on purpose. ``obs`` (N, H, W, k), changed
    in place where a leading frame is all zero (a real frame never is: the screen has a background)."""
    empty = obs.max(axis=(1, 2)) == 0  # (N, k): frames that are padding
    for i in np.flatnonzero(empty[:, :-1].any(axis=1)):
        first = int(np.argmin(empty[i]))  # the first real frame (the newest, at k - 1, always is)
        obs[i, ..., :first] = obs[i, ..., first:first + 1]
    return obs


class AtariVecEnv(VecEnv):
    def __init__(self, env_id: str, n_envs: int, n_threads: int = 0, score_visible: bool = False,
                 watch_steps: int = 0):
        """``watch_steps`` > 0: the first WATCHED_WORKERS workers' colour frames are kept, the last ``watch_steps``
        steps of each (``self.watch``, a ColourWatch; None without)."""
        from ale_py.vector_env import AtariVectorEnv

        game = atari_game(env_id)
        if game is None:
            raise ValueError(f"not an Atari id ale-py can run: {env_id!r}")
        max_frames = max_frames_per_episode(game)
        self.env_id = env_id
        self.n_envs = n_envs
        self.score_visible = score_visible
        self._returns = ReturnCounter(n_envs) if game == "pong" else None
        self._env = AtariVectorEnv(
            game, n_envs,
            num_threads=n_threads,  # 0: one per core
            repeat_action_probability=0.0, frameskip=FRAME_SKIP, maxpool=True, noop_max=NOOP_MAX,
            stack_num=N_STACK, img_height=84, img_width=84, grayscale=True,
            episodic_life=False, reward_clipping=False, use_fire_reset=True,
            max_num_frames_per_episode=max_frames,
            autoreset_mode="SameStep",
        )
        self.n_actions = int(self._env.single_action_space.n)
        self.obs_shape = (84, 84, N_STACK)
        self.frames_per_step = FRAME_SKIP
        self._tracker = EpisodeTracker(n_envs)
        self.watch = None
        if watch_steps > 0:
            self.watch = ColourWatch(env_id, game, range(min(WATCHED_WORKERS, n_envs)), watch_steps, FRAME_SKIP,
                                     NOOP_MAX, max_frames, score_visible)

    @staticmethod
    def _nhwc(obs: np.ndarray) -> np.ndarray:
        """(N, 4, 84, 84) -> (N, 84, 84, 4), the stack filled as baselines' FrameStack fills it (fill_stack)."""
        return fill_stack(np.ascontiguousarray(obs.transpose(0, 2, 3, 1)))

    def predictor_view(self, obs: np.ndarray, inplace: bool = False) -> np.ndarray:
        """The score area set to 0 (``envs.score_blanking``), so the predictor cannot read the reward
        off the screen and the labeller judges by play, as in the paper; unchanged with score_visible."""
        if self.score_visible:
            return obs
        return blank_score(self.env_id, obs, inplace=inplace)

    def reset(self, seed: int) -> np.ndarray:
        obs, info = self._env.reset(seed=seed)
        if self.watch is not None:
            self.watch.reset(seed, info["episode_frame_number"])
        self._tracker = EpisodeTracker(self.n_envs)
        if self._returns is not None:
            self._returns = ReturnCounter(self.n_envs)
        return self._nhwc(obs)

    def step(self, actions: np.ndarray) -> StepResult:
        actions = np.asarray(actions, dtype=np.int64)
        self._env.send(actions)
        if self.watch is not None:  # the watched emulators play while the vector env's threads do
            self.watch.act(actions)
        obs, reward, terminated, truncated, info = self._env.recv()
        done = terminated | truncated
        if self.watch is not None:
            self.watch.check(reward, done, info["episode_frame_number"])
        reward = reward.astype(np.float32)
        obs = self._nhwc(obs)
        final_obs = None
        if done.any() and "final_obs" in info:  # (N, C, H, W), the finished envs' last observations
            final_obs = np.where(done[:, None, None, None], self._nhwc(info["final_obs"]), obs)
        hits = None
        if self._returns is not None:  # the newest frame of what each step led to (a finished game's last)
            hits = self._returns.update((final_obs if final_obs is not None else obs)[..., -1], done)
        finished = self._tracker.update(reward, done, None, hits)
        return StepResult(obs, reward, terminated.astype(bool), truncated.astype(bool), finished, final_obs)

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
        self._env.close()
