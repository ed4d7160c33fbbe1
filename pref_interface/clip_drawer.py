"""MuJoCo clips drawn for a person, from the states their segments recorded (issue 30), in a render worker.

The preference interface's process loads TensorFlow and so may not draw with EGL (it would segfault:
envs/mujoco_render.py). ``RenderWorker`` starts ``python -m envs.render_worker`` (a child interpreter that loads
no TensorFlow: its protocol is there, JSON and .npy over pipes, no pickle) and talks to it from a thread of its
own, so the labeller's loop never waits on a clip. (This process imports the worker's module only for its framing,
which loads numpy alone; the worker imports mujoco.) ``ClipDrawer`` draws pairs: ``add(pair)`` asks for both clips,
``take()`` gives back a ``ShownPair`` (pref_interface.shown_pairs) once both are drawn, in the order added.

What is drawn: every k-th state of a clip, k the smallest step with at most MAX_FPS frames per second of the task's
time, each frame shown k * dt seconds (real speed), the frames after a fall marked (pref_interface.fall_mark),
SIZE x SIZE pixels at QUALITY (envs/mujoco_render.py's
"fast": about 3x cheaper than the task's look; bench/mujoco_render.py). A clip that cannot be drawn, or a worker
that died, raises ``RenderError`` with its one line: the run stops and says why.

Priority by need (issue 40): the worker draws at SCHED_IDLE, so on a machine whose cores another run keeps busy it
drew a pair in ~25 s while a person waited. The labeller's loop tells the drawer, each tick, whether a person waits
for a pair and how many pairs are ready ahead of them (``need``); ``DrawPriority`` decides: the normal policy while
a person waits and none is ready, idle again once READY_AHEAD pairs are (or nothing is left to draw). Where the
system refuses the switch (no CAP_SYS_NICE and RLIMIT_NICE 0, an ordinary user's default), the worker stays idle
and ``figures()`` says so (``clip_priority_refused``).
"""
from __future__ import annotations

import collections
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from envs.render_worker import read_array, set_priority, write_array  # the protocol's framing (imports numpy only)
from pref_interface.fall_mark import mark_falls
from pref_interface.shown_pairs import ShownPair

SIZE = 256  # pixels, square: a robot a person can see; the page and the window scale it up by whole factors
QUALITY = "fast"
MAX_FPS = 30.0  # frames a second of the task's time, at most: the eye needs no more
ROOT = Path(__file__).resolve().parents[1]  # where ``envs`` is imported from


READY_AHEAD = 2  # pairs ready ahead of a person at which the worker goes back to idle


class DrawPriority:
    """Whether the render worker draws at the normal policy (``urgent``) or at idle: urgent from the moment a
    person waits for a pair with none ready, until ``ready_ahead`` pairs are ready ahead of them or nothing is
    left to draw. ``update`` says whether it changed."""

    def __init__(self, ready_ahead: int = READY_AHEAD):
        self.ready_ahead, self.urgent = ready_ahead, False

    def update(self, person_waits: bool, n_ready: int, n_drawing: int) -> bool:
        before = self.urgent
        if not self.urgent and person_waits and n_ready == 0 and n_drawing > 0:
            self.urgent = True
        elif self.urgent and (n_ready >= self.ready_ahead or n_drawing == 0):
            self.urgent = False
        return self.urgent != before


class RenderError(RuntimeError):
    """A clip could not be drawn (the worker's one line), or the worker died."""


class RenderWorker:
    """The render worker's process and the thread that feeds it (see the module docstring): ``submit(key, env_id,
    states)``, later ``results()`` -> [(key, frames, reply head)] in the order submitted; ``close()``."""

    def __init__(self, size: int = SIZE, quality: str = QUALITY, max_fps: float = MAX_FPS, stderr=None):
        """``stderr``: where the worker's own messages go (None: this process's stderr, the run's log)."""
        self.request = {"width": int(size), "height": int(size), "quality": quality, "max_fps": float(max_fps)}
        env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **os.environ,  # numpy needs no threads there
               "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
        self.proc = subprocess.Popen([sys.executable, "-m", "envs.render_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=stderr, cwd=str(ROOT), env=env)
        self.jobs: queue.Queue = queue.Queue()
        self.done: queue.Queue = queue.Queue()
        self.normal = False  # the priority asked for (set_priority); the worker starts itself at idle
        self.priority_refused = False
        self.thread = threading.Thread(target=self._serve, name="render-worker", daemon=True)
        self.thread.start()

    def submit(self, key, env_id: str, states: np.ndarray, env_kwargs: dict | None = None) -> None:
        self.jobs.put((key, {**self.request, "env_id": env_id, "env_kwargs": env_kwargs or {}},
                       np.ascontiguousarray(states, np.float64)))

    def results(self) -> list:
        """Drawn clips so far: (key, frames, head); RenderError for one that could not be drawn."""
        out = []
        while True:
            try:
                item = self.done.get_nowait()
            except queue.Empty:
                return out
            if isinstance(item, RenderError):
                raise item
            out.append(item)

    def set_priority(self, normal: bool) -> bool:
        """The worker at the normal policy (``normal``) or at idle (envs.render_worker.set_priority); False where
        the system refuses (then it stays as it is, and ``priority_refused`` is set)."""
        self.normal = normal
        try:
            set_priority(self.proc.pid, normal)
            return True
        except (PermissionError, FileNotFoundError, AttributeError):  # not allowed; the worker gone; not Linux
            self.priority_refused = True
            return False

    def _serve(self) -> None:
        first = True
        while True:
            job = self.jobs.get()
            if job is None:
                return
            key, request, states = job
            try:
                drawn = self._draw(request, states)
                if first and self.normal:  # the worker put itself at idle as it started: the asked one again
                    self.set_priority(True)
                first = False
                self.done.put((key, *drawn))
            except RenderError as e:
                self.done.put(e)
            except (OSError, ValueError, EOFError) as e:  # the pipe broke: the worker is gone
                self.done.put(RenderError(f"the render worker stopped ({e}; exit code {self.proc.poll()}): see "
                                          f"its error above"))
                return

    def _draw(self, request: dict, states: np.ndarray) -> tuple[np.ndarray, dict]:
        write_array(self.proc.stdin, request, states)
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("no reply")
        head = json.loads(line)
        if head.get("error"):
            raise RenderError(f"cannot draw {request['env_id']} clips: {head['error']}")
        return read_array(self.proc.stdout, head), head

    def close(self, timeout_s: float = 5.0) -> None:
        """Ends the thread and the worker (its input closed: it exits; killed if it has not within timeout_s)."""
        self.jobs.put(None)
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.thread.join(timeout=1.0)  # it ends once its pipe is closed or broken
        self.proc.stdout.close()


def render_problem(env_id: str, timeout_s: float = 120.0) -> str | None:
    """None if a render worker draws ``env_id`` here (one small frame of its model's zero state, tried in a fresh
    worker: a few seconds), else one line saying why and what to install. The parent asks before a person's run."""
    import tempfile
    import time

    import gymnasium as gym

    from envs.mujoco_state import state_size

    try:  # with an OpenGL backend that does not load (MUJOCO_GL=osmesa without libosmesa6), importing mujoco fails
        env = gym.make(env_id)
    except Exception as e:  # noqa: BLE001 -- whatever the import raises, the machine cannot draw
        return _cannot_draw(f"{type(e).__name__}: {e}".splitlines()[0])
    try:
        size = state_size(env)
    finally:
        env.close()
    log = tempfile.TemporaryFile()  # the worker's own words stay out of the one line
    worker = RenderWorker(size=8, stderr=log)
    try:
        worker.submit("probe", env_id, np.zeros((1, size)))
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            if worker.results():
                return None
            time.sleep(0.02)
        return f"drawing a {env_id} frame took over {timeout_s:g} s"
    except RenderError as e:
        log.seek(0)
        said = [line.strip() for line in log.read().decode(errors="replace").splitlines() if line.strip()]
        return _cannot_draw(f"{e}" + (f"; it said: {said[-1]}" if said else ""))
    finally:
        worker.close()
        log.close()


def _cannot_draw(why: str) -> str:
    return (f"this machine cannot draw MuJoCo clips offscreen ({why}): install libegl1 libegl-mesa0 "
            f"libgl1-mesa-dri (Mesa's EGL), or libosmesa6 and set MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa")


class ClipDrawer:
    """Pairs of MuJoCo segments in, ShownPairs out, in the order added (see the module docstring); what drawing
    cost so far: ``frames_drawn``, ``draw_s`` (the worker's own time), ``pairs_drawn``."""

    def __init__(self, worker: RenderWorker | None = None):
        self.worker = worker or RenderWorker()
        self.drawing: collections.OrderedDict = collections.OrderedDict()  # number -> [pair, left, right, frame_s]
        self.n_added = self.pairs_drawn = self.frames_drawn = 0
        self.draw_s = 0.0
        self.failure: RenderError | None = None  # the first clip that could not be drawn: no pair is drawn after it
        self.priority = DrawPriority()
        self.urgent_s, self.urgent_since, self.priority_switches = 0.0, None, 0

    @property
    def n_ready(self) -> int:
        """Pairs drawn and not yet taken."""
        return sum(entry[1] is not None and entry[2] is not None for entry in self.drawing.values())

    def need(self, person_waits: bool, ready_ahead: int) -> None:
        """The labeller's word, each tick: whether a person waits for a pair, and how many pairs it has ready
        ahead of them besides the drawer's; the worker's priority follows (DrawPriority)."""
        if self.priority.update(person_waits, ready_ahead + self.n_ready, self.n_drawing - self.n_ready):
            self.priority_switches += 1
            self.worker.set_priority(self.priority.urgent)
            now = time.monotonic()
            if self.priority.urgent:
                self.urgent_since = now
            elif self.urgent_since is not None:
                self.urgent_s, self.urgent_since = self.urgent_s + now - self.urgent_since, None

    @property
    def n_drawing(self) -> int:
        """Pairs added and not yet taken (drawing, or drawn and waiting)."""
        return len(self.drawing)

    def add(self, pair) -> None:
        number, self.n_added = self.n_added, self.n_added + 1
        self.drawing[number] = [pair, None, None, None]
        for side, seg in enumerate(pair):
            if seg.states is None:
                raise ValueError(f"a {seg.env_id} segment without recorded states cannot be drawn")
            self.worker.submit((number, side), seg.env_id, seg.states)

    def take(self):
        """The oldest pair added, as a ShownPair, once both its clips are drawn; else None. RenderError (kept in
        ``failure``, raised again at every call) where a clip could not be drawn or the worker died."""
        if self.failure is not None:
            raise self.failure
        try:
            results = self.worker.results()
        except RenderError as e:
            self.failure = e
            raise
        for (number, side), frames, head in results:
            entry = self.drawing[number]
            frames = mark_falls(frames, entry[0][side].falls, head["every"], head["frame_s"])  # a fall a person sees
            entry[1 + side], entry[3] = frames, head["frame_s"]
            self.frames_drawn += len(frames)
            self.draw_s += head["ms_per_frame"] * len(frames) / 1e3
        if not self.drawing:
            return None
        number, (pair, left, right, frame_s) = next(iter(self.drawing.items()))
        if left is None or right is None:
            return None
        del self.drawing[number]
        self.pairs_drawn += 1
        return ShownPair(pair, (left, right), frame_s)

    def figures(self) -> dict:
        """What drawing cost: frames drawn, ms per frame (the worker's time), frames per pair drawn (one label)."""
        urgent_s = self.urgent_s + (0.0 if self.urgent_since is None else time.monotonic() - self.urgent_since)
        return {"clip_frames_drawn": self.frames_drawn,
                "clip_ms_per_frame": round(1e3 * self.draw_s / max(1, self.frames_drawn), 1),
                "clip_frames_per_label": round(self.frames_drawn / max(1, self.pairs_drawn), 1),
                "clip_normal_priority_s": round(urgent_s, 1), "clip_priority_switches": self.priority_switches,
                "clip_priority_refused": int(self.worker.priority_refused)}

    def close(self) -> None:
        self.worker.close()
