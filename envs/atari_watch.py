"""What a person watches of an Atari game: the emulator's colour frames, 210 x 160, of the workers whose clips a
person may see (issue 62, docs/atari.md "What a person watches").

ale-py's C++ ``AtariVectorEnv`` (``envs/atari.py``) gives the policy its 84x84 grey stacks and nothing else of a game:
no colour screen, no RAM, no emulator state per env (its Python side has ``reset``, ``send`` and ``recv`` alone).
So the frames a person watches come from emulators that follow the watched workers step by step
(``ColourWatch``): one ``ale_py.ALEInterface`` per watched
worker, loaded with the same ROM and seed as the vector env's, given the same actions, reset where it resets,
with the same preprocessing up to the resize: 4 frames per step (the action repeated), the colour screens of the
last two max-pooled (as the predictor's grey frames are), up to 30 no-op actions after a reset (how many: the
vector env's ``episode_frame_number`` right after it), FIRE first where the game needs it. It runs beside the
vector env's own threads: its actions go in before the vector env is asked for its step
(``AtariVecEnv.step``).

Checked every step: the watched emulator's reward and frame number within its episode must be the vector env's, or
``OutOfStep`` is raised (a person would be shown another game than the one the predictor is given;
tests/test_atari_colour.py checks the frames themselves against ale-py's own colour vector env, pixel for pixel).

Why not re-draw only the clips a person is shown, as MuJoCo's are drawn from their recorded states: there is no
state to record, only the actions, and a clip re-played from its episode's start (which does give the same frames:
bench/atari_colour.py checks it) costs the emulation of everything before it in its episode, which grows with how
long a trained policy's episodes are (Enduro's run 27,000 steps: 11 s a clip); following costs the same every step
(docs/atari.md has the figures: +0.26 ms a watched worker-step on Pong, +0.64 ms on Enduro). Only
``WATCHED_WORKERS`` workers are watched and only where a person (or a goal that reads the game) labels; the segment
cutter cuts those clips from them alone (drlhp.policy.segments).

Memory: each watched worker keeps its last ``keep_steps`` frames (the policy's rollout and one clip more: what the
segment cutter may still cut after a rollout), 100,800 bytes each (210 x 160 x 3), and the console's RAM after each
step (128 bytes: the game's state, which a goal may read, e.g. Enduro's cars: envs/enduro.py).
"""
from __future__ import annotations

import numpy as np

from envs.score_blanking import SCREEN, blank_score

WATCHED_WORKERS = 2  # workers a person's clips are cut from (each costs an emulator more)
FRAME_BYTES = SCREEN[0] * SCREEN[1] * 3  # one colour frame: 100,800 bytes
RAM_BYTES = 128  # the Atari 2600's RAM


class OutOfStep(RuntimeError):
    """A watched emulator's game differs from the vector env's (its reward or frame number)."""


class ColourWatch:
    """Colour frames of ``workers`` of an Atari vector env, from emulators that follow them (module docstring).

    ``reset(seed, frame_numbers)`` after the vector env's reset; ``act(actions)`` with each step's actions before
    the vector env's step ends, then ``check(rewards, done, frame_numbers)`` with its results; ``frames(worker,
    steps_ago, length)``: the colour frames (length, 210, 160, 3) of that worker's steps ending ``steps_ago`` steps
    before the newest, each the frame its step led to (a finished episode's last frame, as the predictor's
    observations), the score blanked unless ``score_visible``; ``states(...)`` likewise the console's RAM after each of
    those steps."""

    def __init__(self, env_id: str, game: str, workers, keep_steps: int, frame_skip: int, noop_max: int,
                 max_frames_per_episode: int, score_visible: bool = False):
        import ale_py
        from ale_py import roms

        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no console banner per emulator
        self.env_id, self.workers, self.score_visible = env_id, tuple(int(w) for w in workers), score_visible
        self.frame_skip, self.noop_max, self.max_frames = frame_skip, noop_max, max_frames_per_episode
        self.keep = int(keep_steps)
        self._rom = roms.get_rom_path(game)
        self._ales = [ale_py.ALEInterface() for _ in self.workers]
        for ale in self._ales:
            ale.setFloat("repeat_action_probability", 0.0)
            ale.loadROM(self._rom)
        self._actions = self._ales[0].getMinimalActionSet()
        self._fire = ale_py.Action.FIRE in self._actions
        self._noop, self._fire_action = ale_py.Action.NOOP, ale_py.Action.FIRE
        n = len(self.workers)
        self._last_two = np.zeros((n, 2, *SCREEN, 3), np.uint8)  # the last two screens of a step, max-pooled into [0]
        self._ring = np.zeros((n, self.keep, *SCREEN, 3), np.uint8)
        self._ram = np.zeros((n, self.keep, RAM_BYTES), np.uint8)
        self._newest = -1  # ring slot of the newest step
        self._filled = 0  # steps in the ring
        self._rewards = np.zeros(n, np.int64)
        self._frames = np.zeros(n, np.int64)  # frames played in the current episode's steps (its time limit)

    @property
    def nbytes(self) -> int:
        """Bytes of the frames kept (the ring), what a watched run holds more than an unwatched one."""
        return int(self._ring.nbytes + self._last_two.nbytes + self._ram.nbytes)

    def reset(self, seed: int, frame_numbers: np.ndarray) -> None:
        """The vector env was reset with ``seed`` (worker w: seed + w): each emulator loads its ROM with its worker's
        seed, as the vector env's does, then starts its game (``frame_numbers``: the vector env's
        ``episode_frame_number`` per worker, how many no-op frames its start took)."""
        for i, (w, ale) in enumerate(zip(self.workers, self._ales)):
            ale.setInt("random_seed", int(seed) + w)
            ale.loadROM(self._rom)
            self._start(i, int(frame_numbers[w]))
        self._newest, self._filled = -1, 0

    def _start(self, i: int, frame_number: int) -> None:
        """A new game on emulator i, as the vector env starts one: reset, FIRE where the game has it, no-ops until the
        episode is ``frame_number`` frames old; its screen as the first frame, nothing to pool it with."""
        ale = self._ales[i]
        ale.reset_game()
        noops = frame_number
        if self._fire:
            ale.act(self._fire_action)
            noops -= 1
        if not 0 <= noops < self.noop_max:
            raise OutOfStep(f"{self.env_id}: a game of worker {self.workers[i]} started {frame_number} frames in, more "
                            f"than the {self.noop_max} no-ops a start takes")
        for _ in range(noops):
            ale.act(self._noop)
        ale.getScreenRGB(self._last_two[i, 0])
        self._last_two[i, 1] = 0
        self._frames[i] = 0

    def act(self, actions: np.ndarray) -> None:
        """Each watched emulator plays its worker's action (an index into the minimal action set) for one agent step:
        ``frame_skip`` frames, stopping at the game's end or its time limit; the last two screens max-pooled into the
        ring's next slot."""
        self._newest = (self._newest + 1) % self.keep
        self._filled = min(self._filled + 1, self.keep)
        for i, (w, ale) in enumerate(zip(self.workers, self._ales)):
            action, reward, last_two = self._actions[int(actions[w])], 0, self._last_two[i]
            for skip in range(self.frame_skip, 0, -1):
                reward += ale.act(action)
                self._frames[i] += 1
                if ale.game_over() or self._frames[i] >= self.max_frames:
                    break
                if skip <= 2:
                    ale.getScreenRGB(last_two[skip - 1])
            np.maximum(last_two[0], last_two[1], out=last_two[0])  # in place, as ale-py's vector env pools
            self._ring[i, self._newest] = last_two[0]
            ale.getRAM(self._ram[i, self._newest])
            self._rewards[i] = reward

    def check(self, rewards: np.ndarray, done: np.ndarray, frame_numbers: np.ndarray) -> None:
        """The vector env's step: each watched worker's reward must be its emulator's; a finished episode starts again
        (``frame_numbers``: the new episode's frame number), an unfinished one must be as many frames old."""
        for i, (w, ale) in enumerate(zip(self.workers, self._ales)):
            if self._rewards[i] != rewards[w]:
                raise OutOfStep(f"{self.env_id}: worker {w}'s reward {rewards[w]:g}, its colour emulator's "
                                f"{self._rewards[i]}")
            if done[w]:
                self._start(i, int(frame_numbers[w]))
            elif ale.getEpisodeFrameNumber() != frame_numbers[w]:
                raise OutOfStep(f"{self.env_id}: worker {w} is {frame_numbers[w]} frames into its game, its colour "
                                f"emulator {ale.getEpisodeFrameNumber()}")

    def _slots(self, worker: int, steps_ago: int, length: int) -> tuple[int, np.ndarray]:
        if worker not in self.workers:
            raise ValueError(f"worker {worker} is not watched (only {self.workers})")
        if steps_ago < 0 or length < 1 or steps_ago + length > self._filled:
            raise ValueError(f"{length} steps ending {steps_ago} ago: the watch keeps the last {self._filled} "
                             f"(at most {self.keep})")
        first = self._newest - steps_ago - length + 1
        return self.workers.index(worker), np.arange(first, first + length) % self.keep

    def frames(self, worker: int, steps_ago: int, length: int) -> np.ndarray:
        """(length, 210, 160, 3) uint8, a new array: ``worker``'s frames of ``length`` steps, the last ``steps_ago``
        steps before the newest (0: ending with it), the score blanked (unless score_visible)."""
        i, slots = self._slots(worker, steps_ago, length)
        out = self._ring[i].take(slots, axis=0)
        return out if self.score_visible else blank_score(self.env_id, out, inplace=True)

    def states(self, worker: int, steps_ago: int, length: int) -> np.ndarray:
        """(length, 128) float64: the console's RAM after each of those steps (as ``frames``), as Segment.states."""
        i, slots = self._slots(worker, steps_ago, length)
        return self._ram[i].take(slots, axis=0).astype(np.float64)

    def close(self) -> None:
        self._ales = []
