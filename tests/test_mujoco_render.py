"""envs/mujoco_render.py: frames re-rendered offscreen (Mesa's software EGL, no display, no GPU) from the states
the policy records are the env's own frames."""
from __future__ import annotations

import os

import numpy as np
import pytest

# Offscreen OpenGL (EGL) and TensorFlow in one process crash it (a segmentation fault: envs/mujoco_render.py), and a
# suite worker has TensorFlow loaded by other tests: these tests run in an interpreter of their own, started by
# tests/test_mujoco_render_process.py with DRLHP_RENDER_TESTS=1; collected anywhere else they are skipped.
if os.environ.get("DRLHP_RENDER_TESTS") != "1":
    pytest.skip("run in their own interpreter by tests/test_mujoco_render_process.py", allow_module_level=True)

from envs.mujoco_render import StateRenderer, record_state, state_size  # noqa: E402  (sets MUJOCO_GL first)

try:  # with MUJOCO_GL naming a backend whose library is absent, importing mujoco can fail (osmesa: AttributeError)
    import mujoco  # noqa: F401
except Exception as e:
    pytest.skip(f"mujoco does not import here ({type(e).__name__}: {e})", allow_module_level=True)


@pytest.fixture(autouse=True, scope="module")
def offscreen_opengl():
    """Skip, saying what is missing, where no offscreen OpenGL context can be made (no libEGL / Mesa)."""
    try:
        StateRenderer("Hopper-v5", 8, 8).close()
    except Exception as e:  # ImportError, RuntimeError, OpenGL's errors: each means no context here
        pytest.skip(f"no offscreen OpenGL ({type(e).__name__}: {str(e).strip()[:200]}): install libegl1 "
                    f"libegl-mesa0 libgl1-mesa-dri (EGL) or libosmesa6 with MUJOCO_GL=osmesa")


def robot_centroid_x(frame: np.ndarray) -> float:
    """Mean column of the robot's pixels (its orange-brown: red well above green; floor and sky are not)."""
    rgb = frame.astype(int)
    cols = np.nonzero((rgb[..., 0] - rgb[..., 1]) > 60)[1]
    return float(cols.mean()) if len(cols) else float("nan")


def stepped_states(env_id: str, steps: int, seed: int = 0, render: bool = False, forward: bool = False):
    """States recorded while stepping random actions, and (``render``) env.render()'s frame at each step;
    ``forward``: mj_forward before env.render() (its geoms then come from the recorded state exactly)."""
    import gymnasium as gym
    import mujoco

    env = gym.make(env_id, render_mode="rgb_array" if render else None, width=96, height=80)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    states, frames = [], []
    for _ in range(steps):
        env.step(env.action_space.sample())
        states.append(record_state(env))
        if forward:
            mujoco.mj_forward(env.unwrapped.model, env.unwrapped.data)
        if render:
            frames.append(env.render())
    assert states[0].shape == (state_size(env),) and states[0].dtype == np.float64
    env.close()
    return np.array(states), np.array(frames)


def test_recorded_hopper_states_rerender_to_the_envs_own_frames():
    states, frames = stepped_states("Hopper-v5", 25, render=True)
    renderer = StateRenderer("Hopper-v5", width=96, height=80, follow=False)
    again = renderer.render(states)
    assert again.shape == (25, 80, 96, 3) and again.dtype == np.uint8
    assert len({f.tobytes() for f in again}) > 10  # the clip moves: not one frame 25 times
    # env.render() right after env.step() draws the geoms as mj_step left them (computed before its last
    # integration, ~1e-5 m away): nearly equal, a few levels on a few edge pixels at most
    diff = np.abs(again.astype(int) - frames.astype(int))
    assert diff.max() <= 16 and (diff.max(axis=-1) > 0).sum(axis=(1, 2)).max() <= 30
    # with mj_forward first (the recorded state's own kinematics), pixel-equal
    states_f, frames_f = stepped_states("Hopper-v5", 25, render=True, forward=True)
    assert np.array_equal(states_f, states)
    assert np.array_equal(renderer.render(states_f), frames_f)
    renderer.close()


def test_a_frame_does_not_depend_on_what_was_rendered_before_it():
    states, _ = stepped_states("HalfCheetah-v5", 30)
    first = StateRenderer("HalfCheetah-v5", 64, 64)
    both = first.render(states[[0, 29]])
    alone = StateRenderer("HalfCheetah-v5", 64, 64).render(states[[29]])
    assert np.array_equal(both[1], alone[0])


@pytest.mark.parametrize("env_id", ["Hopper-v5", "HalfCheetah-v5"])
def test_the_camera_follows_a_robot_that_travels(env_id):
    states, _ = stepped_states(env_id, 2)
    moved = states[:1].copy()
    moved[0, 0] += 2.0  # qpos[0] is rootx: the same pose 2 m further on
    pair = np.concatenate([states[:1], moved])
    following = StateRenderer(env_id, 128, 128).render(pair)
    assert abs(robot_centroid_x(following[0]) - robot_centroid_x(following[1])) < 2
    fixed = StateRenderer(env_id, 128, 128, follow=False).render(pair)
    x0, x1 = robot_centroid_x(fixed[0]), robot_centroid_x(fixed[1])
    assert np.isnan(x1) or x1 - x0 > 20  # gymnasium's own camera stays: the robot walks off to the right


def test_states_of_the_wrong_size_are_refused():
    renderer = StateRenderer("Hopper-v5", 32, 32)
    with pytest.raises(ValueError, match=r"states must be \(T, 12\)"):
        renderer.render(np.zeros((3, 11)))


def test_a_renderer_replaced_by_another_leaves_the_new_one_drawing():
    states, _ = stepped_states("Hopper-v5", 3)
    renderer = StateRenderer("Hopper-v5", 48, 48)
    expected = renderer.render(states)
    renderer = StateRenderer("Hopper-v5", 48, 48)  # the first is collected after the second made its context
    assert np.array_equal(renderer.render(states), expected) and expected.mean() > 20
    renderer.close()
    with pytest.raises(ValueError, match="closed"):
        renderer.render(states)


class _Drifting:
    """A gymnasium wrapper moving Hopper 2 cm forward after every step, whatever it does (a conveyor belt): a policy
    that travels, scripted (an untrained one falls where it starts)."""

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name):
        return getattr(self.env, name)

    def reset(self, **kwargs):
        return self.env.reset(**kwargs)

    def step(self, action):
        out = self.env.step(action)
        self.env.unwrapped.data.qpos[0] += 0.02
        return out


class _Still:
    def act_deterministic(self, obs):
        return np.zeros((len(obs), 3))


def _robot_pixels(frame: np.ndarray) -> int:
    rgb = frame.astype(int)
    return int(((rgb[..., 0] - rgb[..., 1]) > 60).sum())


def test_watchs_mujoco_video_keeps_a_robot_that_travels_in_every_frame():
    """watch's video of a MuJoCo policy (drlhp.policy.watch: the states play_box_episodes recorded, drawn by
    followed_frames) shows the robot in every sampled frame of a 300-step episode in which it travels 6 m; gymnasium's
    fixed camera (follow=False), on the same states, loses it: the test can fail."""
    import gymnasium as gym

    from drlhp.policy.watch import followed_frames, play_box_episodes

    env = _Drifting(gym.make("Hopper-v5", max_episode_steps=300, terminate_when_unhealthy=False))
    try:
        states, returns, _ = play_box_episodes(env, _Still(), 1, seed=0, see=record_state)
    finally:
        env.env.close()
    assert len(returns) == 1 and len(states) == 301 and states[-1][0] > 5.5  # 6 m forward
    sampled = np.array(states[::20])
    followed = list(followed_frames("Hopper-v5", sampled, size=160))
    fixed = list(followed_frames("Hopper-v5", sampled, size=160, follow=False))
    assert len(followed) == len(fixed) == 16 and followed[0].shape == (160, 160, 3)
    seen, seen_fixed = [_robot_pixels(f) for f in followed], [_robot_pixels(f) for f in fixed]
    assert min(seen) > 30, seen  # the robot in every sampled frame (lying, about 60 of 25,600 pixels)
    assert seen_fixed[0] > 100 and min(seen_fixed) == 0, seen_fixed  # gymnasium's camera loses it
