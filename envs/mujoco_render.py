"""MuJoCo clips a person can watch, rendered offscreen from recorded simulator states, headless, with no GPU.

The policy's process renders nothing: each step it records the simulator's state (envs/mujoco_state.py's
``record_state_into``: ``data.qpos`` and ``data.qvel`` into a (nq + nv,) float64 buffer, a few microseconds), and
the process that shows a clip re-renders only the clips it is about to show (``StateRenderer.render``).
Rendering every step of every env would cost more than the physics (bench/mujoco_render.py measures it: ms per frame).

**What a frame costs** (bench/mujoco_render.py, 256x256): docs/results/speed.md, 2026-11-26, "what a MuJoCo frame
costs to show" (Hopper-v5 185 ms wall, 84 ms CPU per frame at the task's look on a contended 2-core AMD
EPYC). The cost is almost all the shadow map (4096x4096 in these models) and the 4x multisampling, drawn by
Mesa's llvmpipe on the CPU; ``quality="fast"`` draws a 1024 map without multisampling. A person's eye needs
no more than ~30 frames a second: a caller may render every k-th state of a clip recorded at a higher rate
(Hopper steps at 125 per second) and show each frame k steps long.

**How it renders.** ``StateRenderer(env_id, width, height)`` makes the task's own gymnasium env with
``render_mode="rgb_array"`` (so the model, its colours and gymnasium's camera defaults for that task:
distance, elevation, azimuth, lookat) and, per state, sets qpos/qvel (``MujocoEnv.set_state``, which runs
``mj_forward``) and calls the env's own ``render()``. Two things are made deterministic that gymnasium leaves
to chance:

* the camera's starting lookat, where the task's camera config gives none (HalfCheetah): gymnasium takes the
  median of the geoms' positions in whatever state the FIRST frame is drawn in; here that is always the
  model's own start state (``init_qpos``, ``init_qvel``), so a clip looks the same whichever was drawn first;
* following the robot (``follow=True``, the default, for the tasks in ``FOLLOWED_ENV_IDS``): gymnasium 1.4 on
  MuJoCo >= 3.11 draws these tasks with a FREE camera that stays where it started (its ``trackbodyid`` is
  ignored by a free camera), so a Hopper that hops 2 m forward leaves the picture. With ``follow`` the
  camera's lookat x moves with the torso's x (height and angle stay gymnasium's, so a jump or a flip shows
  against the floor). ``follow=False`` gives exactly ``env.render()``'s frames (tests/test_mujoco_render.py:
  pixel-equal on Hopper-v5, where the config fixes the lookat).

**The OpenGL backend.** ``MUJOCO_GL=egl`` (and ``PYOPENGL_PLATFORM=egl``) are set when this module is imported,
before mujoco or PyOpenGL are, and only where the user has set neither: Mesa's software EGL (llvmpipe) renders
on a machine with no display and no GPU. Its system libraries: libEGL.so.1 and Mesa's EGL driver
(libEGL_mesa.so.0; Debian/Ubuntu: ``libegl1 libegl-mesa0 libgl1-mesa-dri``). The fallback is OSMesa:
``MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa`` set before starting the process (``libosmesa6``); PyOpenGL fixes
its platform when first imported, so no process can switch from one to the other once it has drawn.

**Keep rendering out of any process that imports TensorFlow.** Past work on this project found that importing
TensorFlow and rendering with EGL in one process segfaulted, and so it does here (2026-11-26, tensorflow-cpu
2.21, mujoco 4.0, Mesa's EGL on the 2-core AMD EPYC VM; each tried once, in a fresh process): drawing a frame
and then ``import tensorflow`` dies in the import (exit 139, SIGSEGV); ``import tensorflow`` and then making a
``StateRenderer`` dies too. Render in the labelling process (which loads no TensorFlow) or a process of its
own. This module imports no TensorFlow and nothing of drlhp.
"""
from __future__ import annotations

import os

if "MUJOCO_GL" not in os.environ and "PYOPENGL_PLATFORM" not in os.environ:
    os.environ["MUJOCO_GL"] = "egl"
    os.environ["PYOPENGL_PLATFORM"] = "egl"

import numpy as np  # noqa: E402

from envs.mujoco_state import record_state, state_size  # noqa: E402,F401 -- recorded there, drawn here

# Tasks whose robot travels: the camera follows the torso's x (``follow=True``). Others keep gymnasium's camera.
FOLLOWED_ENV_IDS = ("Hopper-v5", "Walker2d-v5", "HalfCheetah-v5", "Ant-v5", "Swimmer-v5")
FOLLOWED_BODY = "torso"
# What each quality draws with: (shadow map size, multisamples) set in the model before its context is made.
# "task": the model's own (gymnasium's look: 4096, 4); "fast": 1024, 0, the same scene with a softer shadow
# and unsmoothed edges, about 3x cheaper with software EGL (bench/mujoco_render.py).
QUALITIES = {"task": None, "fast": (1024, 0)}


class StateRenderer:
    """Re-renders a task's frames from recorded states (``record_state``), offscreen.

    ``StateRenderer(env_id, width, height, follow=True, quality="task", env_kwargs=None)``; ``.render(states)``
    with states (T, nq + nv) float64 gives (T, height, width, 3) uint8. ``quality``: ``QUALITIES``.
    ``env_kwargs`` are passed to ``gym.make`` (a goal's kwargs, e.g. ``terminate_when_unhealthy=False``; they
    do not change the picture). Not thread-safe: one OpenGL context, made current at each ``render``
    (several renderers may take turns in one thread). ``close()`` frees it.
    """

    def __init__(self, env_id: str, width: int = 256, height: int = 256, follow: bool = True,
                 quality: str = "task", env_kwargs: dict | None = None):
        import gymnasium as gym

        if quality not in QUALITIES:
            raise ValueError(f"quality must be one of {', '.join(QUALITIES)}, got {quality!r}")
        self.env_id, self.width, self.height = env_id, int(width), int(height)
        self._env = gym.make(env_id, render_mode="rgb_array", width=self.width, height=self.height,
                             **(env_kwargs or {}))
        u = self._env.unwrapped
        self.nq, self.nv = int(u.model.nq), int(u.model.nv)
        self.dt = float(u.dt)  # seconds of the task's time per step (per recorded state)
        if QUALITIES[quality]:
            u.model.vis.quality.shadowsize, u.model.vis.quality.offsamples = QUALITIES[quality]
        u.set_state(u.init_qpos, u.init_qvel)  # the first frame fixes gymnasium's lookat: the model's start
        u.render()
        self._camera = u.mujoco_renderer.viewer.cam
        self._lookat_x = float(self._camera.lookat[0])
        self._body = None
        if follow and env_id in FOLLOWED_ENV_IDS:
            import mujoco

            self._body = mujoco.mj_name2id(u.model, mujoco.mjtObj.mjOBJ_BODY, FOLLOWED_BODY)
            self._body_x0 = float(u.data.xpos[self._body, 0])

    def render(self, states: np.ndarray) -> np.ndarray:
        """(T, nq + nv) recorded states -> (T, height, width, 3) uint8 frames."""
        states = np.asarray(states, dtype=np.float64)
        if states.ndim != 2 or states.shape[1] != self.nq + self.nv:
            raise ValueError(f"{self.env_id}: states must be (T, {self.nq + self.nv}) (nq + nv), got {states.shape}")
        if self._env is None:
            raise ValueError(f"{self.env_id}: this StateRenderer was closed")
        u = self._env.unwrapped
        u.mujoco_renderer.viewer.make_context_current()  # another renderer in this thread may have made its own
        frames = np.empty((len(states), self.height, self.width, 3), np.uint8)
        for t, state in enumerate(states):
            u.set_state(state[: self.nq], state[self.nq:])
            if self._body is not None:
                self._camera.lookat[0] = self._lookat_x + float(u.data.xpos[self._body, 0]) - self._body_x0
            frames[t] = u.render()
        return frames

    def close(self) -> None:
        """Frees the OpenGL objects in this renderer's own context, then the context. (Left to the garbage
        collector, MuJoCo frees a context's textures and framebuffers by number in whatever context is current
        then: another renderer's, whose frames then come out black.)"""
        env, self._env = getattr(self, "_env", None), None
        if env is None:
            return
        viewer = env.unwrapped.mujoco_renderer.viewer
        if viewer is not None and getattr(viewer.opengl_context, "_context", True):
            viewer.make_context_current()
            viewer.con.free()
            viewer.free()
        env.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # at interpreter exit mujoco.egl's atexit has ended the EGL display first: nothing to free
            pass
