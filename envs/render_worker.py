"""A process of its own that draws MuJoCo clips from recorded states, for a person to watch (issue 30).

Offscreen OpenGL (EGL) in a process that has imported TensorFlow segfaults (envs/mujoco_render.py), and the
preference interface's process imports TensorFlow (its metrics logger). So the labeller starts this module as a
child interpreter (``python -m envs.render_worker``: its import chain is this package's, gymnasium, mujoco and
numpy; no TensorFlow and nothing of drlhp) and asks it for frames over its stdin and stdout:

    request  one JSON line {"env_id", "width", "height", "quality", "max_fps", "env_kwargs", "shape", "dtype"},
             then the clip's states, (T, S) float64, as raw bytes of that shape and dtype (``write_array``)
    reply    one JSON line {"every": k, "frame_s": k * dt, "ms_per_frame": ..., "shape", "dtype"}, then the frames'
             raw bytes ((n, height, width, 3) uint8: every k-th state, from the first, n = ceil(T / k)); or one
             JSON line {"error": "..."} and nothing more (the worker goes on with the next request)

k is the smallest whole step such that the frames come at most ``max_fps`` a second of the task's own time
(1 / env.dt steps a second: Hopper 125, InvertedPendulum 25), so each frame is shown k * dt seconds and the clip
plays at its real speed. A renderer per (env_id, width, height, quality, env_kwargs) is kept for the next clip.
End of input (the parent gone or done) ends the worker. No pickle: JSON and raw array bytes only. The worker runs
at the lowest CPU priority (``lowest_priority``): drawing takes only what the policy, the predictor and the labeller
leave, except while a person waits for a pair and none is ready: then the labeller puts it at the normal policy
(``set_priority``, by need: pref_interface.clip_drawer.DrawPriority) until a few pairs are ready ahead.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

import numpy as np


def frame_step(dt: float, max_fps: float) -> int:
    """k: draw every k-th state so that at most ``max_fps`` frames come per second of a task stepping every ``dt``."""
    return max(1, math.ceil(1.0 / (dt * max_fps) - 1e-9))


class _Renderers:
    """StateRenderers kept by what they draw (making one costs a model load and an OpenGL context)."""

    def __init__(self):
        self.made: dict[str, object] = {}

    def get(self, request: dict):
        from envs.mujoco_render import StateRenderer  # sets MUJOCO_GL=egl first, where the user set no backend

        key = json.dumps([request[k] for k in ("env_id", "width", "height", "quality")]
                         + [request.get("env_kwargs") or {}], sort_keys=True)
        if key not in self.made:
            self.made[key] = StateRenderer(request["env_id"], request["width"], request["height"],
                                           quality=request["quality"], env_kwargs=request.get("env_kwargs"))
        return self.made[key]


def draw(renderers: _Renderers, request: dict, states: np.ndarray) -> tuple[dict, np.ndarray]:
    """One request's reply: (its JSON head, the frames)."""
    renderer = renderers.get(request)
    dt = renderer.dt
    every = frame_step(dt, float(request["max_fps"]))
    t0 = time.perf_counter()
    frames = renderer.render(states[::every])
    ms = 1e3 * (time.perf_counter() - t0) / max(1, len(frames))
    return {"every": every, "frame_s": every * dt, "ms_per_frame": ms}, frames


DTYPES = ("float64", "uint8")  # what crosses: states one way, frames the other


def write_array(out, head: dict, array: np.ndarray) -> None:
    """``head`` as one JSON line, with the array's shape and dtype added, then the array's bytes; flushed."""
    array = np.ascontiguousarray(array)
    out.write(json.dumps({**head, "shape": list(array.shape), "dtype": array.dtype.name}).encode() + b"\n")
    out.write(array.data)
    out.flush()


def read_array(inp, head: dict) -> np.ndarray:
    """The array whose shape and dtype ``head`` (a JSON line read from ``inp``) gives, read from ``inp``."""
    dtype, shape = head.get("dtype"), head.get("shape")
    if dtype not in DTYPES or not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"an array needs a shape and a dtype of {DTYPES}, got {shape!r} {dtype!r}")
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    raw = inp.read(nbytes)
    if len(raw) != nbytes:
        raise EOFError(f"the stream ended {nbytes - len(raw)} bytes into an array")
    return np.frombuffer(raw, dtype).reshape(shape)


def serve(inp, out) -> None:
    """Answer requests from the binary stream ``inp`` on ``out`` until ``inp`` ends (see the module docstring)."""
    renderers = _Renderers()
    while True:
        line = inp.readline()
        if not line:
            return
        try:
            request = json.loads(line)
            states = read_array(inp, request)
        except (ValueError, EOFError) as e:  # the stream is out of step: nothing more can be read from it
            _reply(out, {"error": f"bad request: {e}"})
            return
        try:
            head, frames = draw(renderers, request, states)
        except Exception as e:  # noqa: BLE001 -- one clip that cannot be drawn is the parent's to report
            _reply(out, {"error": f"{type(e).__name__}: {e}".splitlines()[0]})
            continue
        _reply(out, head, frames)


def _reply(out, head: dict, frames: np.ndarray | None = None) -> None:
    if frames is None:
        out.write(json.dumps(head).encode() + b"\n")
        out.flush()
    else:
        write_array(out, head, frames)


def lowest_priority() -> str:
    """This process yields the CPU to every other: Linux's SCHED_IDLE (below nice 19; its threads, Mesa's
    llvmpipe's included, inherit it), else nice 19. The policy's speed must not depend on who labels; a clip drawn
    a little later costs a person less than a slower policy costs the run. Returns what was set."""
    try:  # every thread of this process (numpy's, made at import, too); threads made later inherit it
        tasks = [int(t) for t in os.listdir("/proc/self/task")] if os.path.isdir("/proc/self/task") else [0]
        for task in tasks:
            os.sched_setscheduler(task, os.SCHED_IDLE, os.sched_param(0))
        return "SCHED_IDLE"
    except (AttributeError, OSError):
        os.nice(19 - os.nice(0))
        return "nice 19"


def set_priority(pid: int, normal: bool) -> None:
    """Every thread of process ``pid`` (a render worker) at the normal policy (SCHED_OTHER, at its nice value: the
    labeller's, inherited) or back at SCHED_IDLE. Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that
    allows the nice value (an ordinary user's default allows neither): PermissionError then."""
    policy = os.SCHED_OTHER if normal else os.SCHED_IDLE
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setscheduler(int(task), policy, os.sched_param(0))
        except ProcessLookupError:  # a thread that ended meanwhile
            pass


def main() -> None:
    """Serve stdin/stdout at the lowest priority (``lowest_priority``). The replies go on a private copy of
    stdout; fd 1 then points at stderr, so whatever a library prints (a warning) goes to the run's log and never
    into the replies."""
    lowest_priority()
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
