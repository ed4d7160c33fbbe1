"""The goal animations for the docs: a goal run's policy (the backflip, HalfCheetah standing) plays one episode by its
mean action in its env, made with the goal's kwargs (both from the run's config.json; numpy, no TensorFlow in this
process: EGL and TensorFlow together crash), every state is recorded, and a stretch of it is re-rendered
offscreen (envs/mujoco_render.StateRenderer, Mesa's software EGL) into a GIF.
A run a person taught with --fall_rule none (no goal in its config) plays as the goals' runs do, with no healthy range.
    python experiments/backflip_gif.py RUN_DIR OUT.gif [--seed 100] [--start 200] [--steps 320] [--every 4]
        [--size 160]
envs.mujoco_render sets MUJOCO_GL=egl when imported; nothing imports mujoco before the first env is made."""
import argparse
import json
from pathlib import Path

import numpy as np

from drlhp.policy.checkpoint import load_policy_checkpoint
from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy
from envs.fixed_length import any_vector_env
from envs.goal_kwargs import goal_env_kwargs
from envs.mujoco_render import StateRenderer, record_state

p = argparse.ArgumentParser()
p.add_argument("run_dir")
p.add_argument("out")
p.add_argument("--seed", type=int, default=100)
p.add_argument("--start", type=int, default=200)
p.add_argument("--steps", type=int, default=320)
p.add_argument("--every", type=int, default=4)
p.add_argument("--size", type=int, default=160)
args = p.parse_args()
config = json.loads((Path(args.run_dir) / "config.json").read_text())
env_id, kwargs = config["env"], goal_env_kwargs(config["prefs"]["oracle_goal"])
if not kwargs and config.get("ppo", {}).get("fall_rule") == "none":  # a person's run with no healthy range (page)
    kwargs = {"terminate_when_unhealthy": False}
arrays, _ = load_policy_checkpoint(args.run_dir)
env = any_vector_env(env_id, 1, **kwargs).envs[0]
policy = BoxMeanPolicy(arrays, env.observation_space.shape[0], env.action_space.low, env.action_space.high, 10.0)
obs, _ = env.reset(seed=args.seed)
states = []
for _ in range(args.start + args.steps):
    states.append(record_state(env))
    obs, *_ = env.step(policy.act_deterministic(obs[None])[0])
env.close()
renderer = StateRenderer(env_id, args.size, args.size, quality="fast", env_kwargs=kwargs)
frames = renderer.render(np.array(states[args.start::args.every]))
renderer.close()
import imageio.v2 as imageio  # noqa: E402

# real time: Hopper steps at 125 a second (dt 0.008), HalfCheetah at 20 (dt 0.05)
imageio.mimsave(args.out, list(frames), duration=1000 * env.unwrapped.dt * args.every, loop=0)
print(args.out, len(frames), "frames")
