"""envs/fixed_length.py: a fall costs reward and ends no episode; tasks that never end early pass through."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from envs.fixed_length import (  # noqa: E402
    FALL_PENALTY,
    FALL_STEP_PENALTY,
    FALLING_ENV_IDS,
    NEVER_ENDING_ENV_IDS,
    describe,
    episode_length,
    fixed_length_env,
    fixed_length_vector_env,
)


def run_episode(env, seed: int, action_fn):
    """One whole episode: (length, rewards, infos, terminated flags)."""
    env.reset(seed=seed)
    rewards, infos, terminated = [], [], []
    while True:
        obs, reward, term, trunc, info = env.step(action_fn())
        rewards.append(reward)
        infos.append(info)
        terminated.append(term)
        if term or trunc:
            return len(rewards), np.array(rewards), infos, terminated


@pytest.mark.parametrize("env_id", ["Hopper-v5", "Walker2d-v5", "InvertedPendulum-v5", "CartPole-v1"])
def test_a_fall_costs_reward_and_ends_no_episode(env_id):
    env = fixed_length_env(env_id)
    env.action_space.seed(0)
    length, rewards, infos, terminated = run_episode(env, seed=0, action_fn=env.action_space.sample)
    assert length == episode_length(env_id)  # the fixed length, though random actions fall many times
    assert not any(terminated)
    fell = np.array([info["fell"] for info in infos])
    assert fell.sum() >= 3, f"random actions should fall several times in {length} steps"
    assert infos[-1]["falls"] == fell.sum()
    # the penalty is on the falling steps and only there: each such reward is at least 100 below any other
    assert rewards[fell].max() <= rewards[~fell].min() - FALL_PENALTY + 20
    assert all(np.isclose(info["reward_env"], r) for info, r in zip(infos, rewards))
    for info in (i for i in infos if i["fell"]):
        assert info["fall_observation"].shape == env.observation_space.shape


def test_hopper_is_put_back_upright_after_a_fall():
    env = fixed_length_env("Hopper-v5")
    env.reset(seed=1)
    for _ in range(200):
        obs, reward, term, trunc, info = env.step(np.zeros(3, np.float32) - 1.0)  # flails: falls quickly
        if info["fell"]:
            break
    assert info["fell"] and not term
    z_after = env.unwrapped.data.qpos[1]
    assert 1.2 < z_after < 1.3  # the fresh start's height (1.25), not the fallen robot's (< 0.7)
    assert not np.allclose(obs, info["fall_observation"])


def test_the_task_reward_has_no_control_cost():
    env = fixed_length_env("Hopper-v5")
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step(np.ones(3, np.float32))
    assert info["reward_ctrl"] < 0
    assert info["reward_task"] == pytest.approx(info["reward_env"] - info["reward_ctrl"])
    assert info["reward_task"] == pytest.approx(info["reward_forward"] + info["reward_survive"])


@pytest.mark.parametrize("env_id", NEVER_ENDING_ENV_IDS)
def test_tasks_that_never_end_early_pass_through(env_id, tmp_path, monkeypatch):
    import gymnasium as gym

    monkeypatch.chdir(tmp_path)  # MuJoCo writes MUJOCO_LOG.TXT (Swimmer's deprecated settotalmass) where it runs

    plain, wrapped = gym.make(env_id), fixed_length_env(env_id)
    plain.reset(seed=3)
    wrapped.reset(seed=3)
    action = plain.action_space.sample()
    a = plain.step(action)
    b = wrapped.step(action)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1] and b[4]["reward_env"] == a[1] and not b[4]["fell"]
    assert b[4]["reward_task"] == pytest.approx(a[1] - a[4]["reward_ctrl"])
    assert "never ends early" in describe(env_id)


def test_every_env_the_issue_names_is_covered():
    for env_id in ("Hopper-v5", "Walker2d-v5", "Ant-v5", "InvertedPendulum-v5", "InvertedDoublePendulum-v5",
                   "CartPole-v1"):
        assert env_id in FALLING_ENV_IDS
        assert "a fall costs 100 reward" in describe(env_id)
    with pytest.raises(ValueError, match="not known"):
        fixed_length_env("Humanoid-v5")


def test_the_vector_env_ends_every_episode_at_the_fixed_length():
    envs = fixed_length_vector_env("InvertedPendulum-v5", n_envs=3)
    envs.reset(seed=0)
    ends = []
    for t in range(1, 2 * 1000 + 1):
        _, _, term, trunc, info = envs.step(envs.action_space.sample())
        assert not term.any()
        if trunc.any():
            assert trunc.all()
            assert info["final_obs"][0].shape == (4,)
            ends.append(t)
    assert ends == [1000, 2000]


def test_env_kwargs_reach_the_env_hopper_flipped_is_no_fall():
    """A goal's env kwargs (pref_interface/goals.py: the backflip's terminate_when_unhealthy=False) reach
    gymnasium through every maker: the torso pitched far past Hopper's healthy +-0.2 rad is no fall."""
    kwargs = {"terminate_when_unhealthy": False}
    env = fixed_length_env("Hopper-v5", **kwargs)
    assert env.unwrapped._terminate_when_unhealthy is False
    length, rewards, infos, terminated = run_episode(env, seed=0, action_fn=lambda: np.ones(3, np.float32))
    assert length == episode_length("Hopper-v5") and not any(terminated)
    assert not any(info["fell"] for info in infos)
    assert not env.unwrapped.is_healthy  # it did leave the healthy range: with the default it would have fallen
    assert "nothing is a fall" in describe("Hopper-v5", make_kwargs=kwargs)
    assert "a fall costs" in describe("Hopper-v5")
    vec = fixed_length_vector_env("Hopper-v5", 2, **kwargs)
    assert all(e.unwrapped._terminate_when_unhealthy is False for e in vec.envs)
    with pytest.raises(TypeError):
        fixed_length_env("HalfCheetah-v5", **kwargs)  # a kwarg the env does not take is gymnasium's error


# --- the penalty rule (--fall_rule penalty): a penalty for every step out of the healthy range, no reset ---

def _out_of_range(env_id: str, env) -> bool:
    """Whether the state the last step left is outside the task's healthy range, by gymnasium's own rule for it
    (read from the env's state here, not from the wrapper's flag)."""
    u = env.unwrapped
    if env_id in ("Hopper-v5", "Walker2d-v5", "Ant-v5"):
        return not u.is_healthy
    if env_id == "InvertedPendulum-v5":
        return abs(u.data.qpos[1]) > 0.2
    if env_id == "InvertedDoublePendulum-v5":
        return u.data.site_xpos[0][2] <= 1
    x, _, theta, _ = u.state
    return abs(x) > u.x_threshold or abs(theta) > u.theta_threshold_radians


def _fallen_pose(env_id: str, env) -> None:
    """Sets a fallen pose: Hopper and Walker2d lying on their backs, Ant's torso 3 m up (above its range: it falls
    back into range), the pendulums tipped over, CartPole's pole at 0.5 rad."""
    u = env.unwrapped
    if env_id == "CartPole-v1":
        u.state = np.array([0.0, 0.0, 0.5, 0.0])
        return
    qpos, qvel = u.init_qpos.copy(), u.init_qvel.copy()
    if env_id in ("Hopper-v5", "Walker2d-v5"):
        qpos[1], qpos[2] = 0.3, -1.5  # the torso low, pitched back
    elif env_id == "Ant-v5":
        qpos[2] = 3.0
    else:  # the pendulums: the (first) hinge far past the range
        qpos[1] = 1.2
    u.set_state(qpos, qvel)


@pytest.mark.parametrize("env_id", FALLING_ENV_IDS)
def test_the_penalty_rule_costs_every_step_out_of_range_and_puts_nothing_back(env_id):
    env = fixed_length_env(env_id, fall_rule="penalty")
    env.reset(seed=0)
    _fallen_pose(env_id, env)
    zero = np.zeros(env.action_space.shape, np.float32) if env_id != "CartPole-v1" else 0
    fell, outside, steps, terminated = [], [], 0, False
    while True:
        _, reward, terminated, truncated, info = env.step(zero)
        steps += 1
        fell.append(info["fell"])
        outside.append(_out_of_range(env_id, env))
        assert not terminated
        assert info["reward_env"] == pytest.approx(info["reward_standard"] - FALL_STEP_PENALTY * info["fell"])
        assert reward == pytest.approx(info["reward_env"])
        ctrl = -info.get("reward_ctrl", 0.0)
        assert info["reward_task"] == pytest.approx(info["reward_standard"] + ctrl - FALL_STEP_PENALTY * info["fell"])
        assert "fall_observation" not in info
        if steps == 1:
            assert info["fell"], "the fallen pose is out of range: the first step is a fall"
        if truncated:
            break
    assert steps == episode_length(env_id)  # the fixed length, no end on a fall
    assert fell == outside  # the penalty on exactly the steps out of range: nothing was put back in range
    assert info["falls"] == sum(fell)
    if env_id == "Ant-v5":  # dropped from 3 m, it falls back into its range: the robot got up, the penalty stopped
        assert 0 < sum(fell) < steps
    elif env_id in ("Hopper-v5", "Walker2d-v5", "InvertedPendulum-v5"):
        assert sum(fell) > steps // 2  # lying there, step after step, costs every step


def test_under_the_penalty_rule_a_fallen_hopper_stays_fallen():
    """No teleport: the step after a fall starts where the robot lies, not at a start pose (the reset rule's)."""
    env = fixed_length_env("Hopper-v5", fall_rule="penalty")
    env.reset(seed=1)
    for _ in range(200):
        obs, reward, term, trunc, info = env.step(np.zeros(3, np.float32) - 1.0)
        if info["fell"]:
            break
    assert info["fell"] and not term
    assert not env.unwrapped.is_healthy  # still out of range: not put back (the reset rule's z would be 1.25)
    assert env.unwrapped.data.qpos[1] < 1.2 or abs(env.unwrapped.data.qpos[2]) > 0.2


def test_the_rules_are_described_and_checked():
    assert "every step out of the healthy range costs 1 reward" in describe("Hopper-v5", fall_rule="penalty")
    assert "a fall costs 100 reward and puts the robot back" in describe("Hopper-v5")
    assert "never ends early" in describe("Swimmer-v5", fall_rule="penalty")
    with pytest.raises(ValueError, match="fall rule"):
        fixed_length_env("Hopper-v5", fall_rule="lie")


def test_the_standard_reward_is_gymnasiums_under_both_rules():
    """info["reward_standard"] is gymnasium's own reward (control cost in, no fall penalty) under either rule."""
    import gymnasium as gym

    for rule in ("reset", "penalty"):
        plain, wrapped = gym.make("Hopper-v5"), fixed_length_env("Hopper-v5", fall_rule=rule)
        plain.reset(seed=4)
        wrapped.reset(seed=4)
        for _ in range(100):
            action = np.ones(3, np.float32)
            a, b = plain.step(action), wrapped.step(action)
            assert b[4]["reward_standard"] == pytest.approx(a[1])
            if a[2]:  # gymnasium's episode ends on the fall: compared up to it
                assert b[4]["fell"] and b[4]["reward_env"] == pytest.approx(
                    a[1] - (FALL_PENALTY if rule == "reset" else FALL_STEP_PENALTY))
                break
        else:
            raise AssertionError("full torque should topple Hopper within 100 steps")


def test_the_config_names_the_same_rules_and_hands_them_to_the_makers():
    from drlhp.config.ppo import FALL_RULES as CONFIG_RULES
    from drlhp.config.ppo import PPOConfig
    from envs.fixed_length import FALL_RULES

    assert CONFIG_RULES == FALL_RULES
    cfg = PPOConfig(fall_rule="penalty", fall_step_penalty=2.5)
    env = fixed_length_env("Hopper-v5", **cfg.falls)
    assert (env.rule, env.step_penalty, env.fall_penalty) == ("penalty", 2.5, 100.0)
    assert fixed_length_env("Hopper-v5", **PPOConfig(fall_rule="none").falls).rule == "none"
    assert PPOConfig().fall_rule == "reset"  # the default is unchanged


def test_the_end_rule_is_gymnasiums_own_episodes_with_the_reward_keys():
    """--fall_rule end (the standard side column's PPO): the episode ends at the fall, as gymnasium's does, and
    nothing is charged; the three rewards are gymnasium's (the task's without the control cost)."""
    import gymnasium as gym

    plain, wrapped = gym.make("Hopper-v5"), fixed_length_env("Hopper-v5", fall_rule="end")
    plain.reset(seed=4)
    wrapped.reset(seed=4)
    for t in range(1, 200):
        a, b = plain.step(np.ones(3, np.float32)), wrapped.step(np.ones(3, np.float32))
        assert a[1] == b[1] == b[4]["reward_env"] == b[4]["reward_standard"] and a[2] == b[2]
        assert b[4]["reward_task"] == pytest.approx(a[1] - a[4]["reward_ctrl"]) and b[4]["fell"] == a[2]
        if a[2]:
            break
    assert b[2] and b[4]["fell"] and t < 199  # it ended at the fall
    assert "episodes end at a fall as gymnasium ends them" in describe("Hopper-v5", fall_rule="end")


# --- no healthy range (--fall_rule none): nothing is a fall; the episode has the fixed length only ---

def test_under_the_none_rule_a_hopper_turns_over_and_is_never_put_back_or_charged():
    """A Hopper set spinning backwards (the torso's pitch falling at 8 rad/s: pref_interface/goals.py's backward
    turn) leaves gymnasium's healthy range at once (pitch beyond 0.2 rad) and ends up lying on its back; under "none"
    the whole episode runs from there, nothing is put back, no step is a fall, and every reward is the env's own,
    step for step as the same env stepped past its own ends."""
    import gymnasium as gym

    plain, wrapped = gym.make("Hopper-v5"), fixed_length_env("Hopper-v5", fall_rule="none")
    for env in (plain, wrapped):
        env.reset(seed=5)
        u = env.unwrapped
        qvel = u.data.qvel.copy()
        qvel[2] = -8.0
        u.set_state(u.data.qpos.copy(), qvel)
    pitches, ended_by_gymnasium, steps = [], 0, 0
    while True:
        a = plain.step(np.zeros(3, np.float32))
        obs, reward, terminated, truncated, info = wrapped.step(np.zeros(3, np.float32))
        steps += 1
        np.testing.assert_array_equal(obs, a[0])  # nothing put back: the same state as the plain env's
        assert reward == a[1] == info["reward_env"] == info["reward_standard"]  # no penalty
        assert info["reward_task"] == pytest.approx(a[1] - a[4]["reward_ctrl"])
        assert not terminated and not info["fell"] and info["falls"] == 0
        assert "fall_observation" not in info
        ended_by_gymnasium += bool(a[2])
        pitches.append(wrapped.unwrapped.data.qpos[2])
        if truncated:
            break
    assert steps == episode_length("Hopper-v5")  # the fixed length: only the TimeLimit ended it
    pitches = np.array(pitches)
    assert pitches[10] < -0.2 and np.all(pitches[10:] < -0.2)  # out of range within 10 steps and never back
    assert pitches.min() < -np.pi / 2  # turned over onto its back
    assert ended_by_gymnasium > 900  # gymnasium calls nearly every step an end (a fall): the rule ignored them all
    assert not wrapped.unwrapped.is_healthy


@pytest.mark.parametrize("env_id", ["Hopper-v5", "Walker2d-v5", "Ant-v5"])
def test_the_none_rule_keeps_the_fixed_length_with_no_fall_and_the_env_s_reward(env_id):
    env = fixed_length_env(env_id, fall_rule="none")
    env.action_space.seed(0)
    length, rewards, infos, terminated = run_episode(env, seed=0, action_fn=env.action_space.sample)
    assert length == episode_length(env_id) and not any(terminated)
    assert not any(info["fell"] for info in infos) and infos[-1]["falls"] == 0
    for info, r in zip(infos, rewards):
        assert r == info["reward_env"] == info["reward_standard"]
        assert info["reward_task"] == pytest.approx(r - info.get("reward_ctrl", 0.0))
    assert "--fall_rule none: no healthy range, nothing is a fall" in describe(env_id, fall_rule="none")


def test_the_none_rule_is_refused_where_the_range_is_the_task_and_where_there_is_none(tmp_path, monkeypatch):
    from envs.fixed_length import NO_RANGE_ENV_IDS, fall_rule_problem

    monkeypatch.chdir(tmp_path)  # MuJoCo writes MUJOCO_LOG.TXT (HalfCheetah's deprecated settotalmass) where it runs

    for env_id in ("InvertedPendulum-v5", "InvertedDoublePendulum-v5", "CartPole-v1"):
        assert "the range is the task itself" in fall_rule_problem(env_id, "none")
        with pytest.raises(ValueError, match="the range is the task itself"):
            fixed_length_env(env_id, fall_rule="none")
        with pytest.raises(ValueError, match="the range is the task itself"):
            describe(env_id, fall_rule="none")
        assert fall_rule_problem(env_id, "penalty") is None
    for env_id in ("MovingDot-v0", "PongNoFrameskip-v4", "Humanoid-v5"):
        assert "has none here" in fall_rule_problem(env_id, "none")
    for env_id in (*NO_RANGE_ENV_IDS, *NEVER_ENDING_ENV_IDS):
        assert fall_rule_problem(env_id, "none") is None
    assert "never ends early" in describe("HalfCheetah-v5", fall_rule="none")
    cheetah = fixed_length_env("HalfCheetah-v5", fall_rule="none")  # nothing to remove: passed through
    cheetah.reset(seed=0)
    assert not cheetah.step(np.zeros(6, np.float32))[4]["fell"]


def test_a_run_with_the_none_rule_where_the_range_is_the_task_is_one_line_exit_2(cli, tmp_path):
    """run.py refuses --fall_rule none on InvertedPendulum (its range is its task) before anything starts."""
    proc = cli("train_policy_with_original_rewards", "--env", "InvertedPendulum-v5", "--fall_rule", "none",
               "--run_dir", tmp_path / "run")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "run.py: error: --fall_rule none removes a robot's healthy range (Hopper, Walker2d, Ant); on "
        "InvertedPendulum-v5 the range is the task itself (its reward pays for staying in it): use --fall_rule "
        "reset, penalty or end"]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("env_id", ["Hopper-v5", "InvertedDoublePendulum-v5"])
def test_under_the_penalty_rule_with_a_hold_a_robot_lies_its_steps_then_is_put_back(env_id):
    """--fall_hold_steps H (issue 38, H48): a scripted fall, then H steps out of range, each charged the step
    penalty and flagged, the robot where it lies; on the H-th the fallen observation goes to info and a start state
    comes back, in range; the episode keeps its fixed length and the count starts again at the next fall."""
    hold = 7
    env = fixed_length_env(env_id, fall_rule="penalty", fall_hold_steps=hold)
    env.reset(seed=0)
    _fallen_pose(env_id, env)
    zero = np.zeros(env.action_space.shape, np.float32)
    infos = []
    for _ in range(hold):
        obs, reward, terminated, truncated, info = env.step(zero)
        infos.append(info)
        assert not terminated and info["fell"]
        assert info["reward_env"] == pytest.approx(info["reward_standard"] - FALL_STEP_PENALTY)
    assert all("fall_observation" not in i for i in infos[:-1])  # lying there: not put back
    assert "fall_observation" in infos[-1] and not np.allclose(infos[-1]["fall_observation"], obs)
    assert not _out_of_range(env_id, env)  # put back at a start state
    assert infos[-1]["falls"] == hold
    steps = hold
    while True:
        _, _, terminated, truncated, info = env.step(zero)
        steps += 1
        assert not terminated
        if truncated:
            break
    assert steps == episode_length(env_id)


def test_a_hold_is_described_and_refused_outside_the_penalty_rule(cli, tmp_path):
    from drlhp.config.ppo import PPOConfig

    assert "out of range 50 steps in a row is put back" in describe("Hopper-v5", fall_rule="penalty",
                                                                     fall_hold_steps=50)
    assert fixed_length_env("Hopper-v5", **PPOConfig(fall_rule="penalty", fall_hold_steps=50).falls).hold_steps == 50
    with pytest.raises(ValueError, match="hold_steps"):
        fixed_length_env("Hopper-v5", fall_hold_steps=50)  # the reset rule puts back at once
    proc = cli("train_policy_with_original_rewards", "--env", "Hopper-v5", "--fall_hold_steps", "50",
               "--run_dir", tmp_path / "run")
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        "run.py: error: --fall_hold_steps puts a fallen robot back under --fall_rule penalty only (this run's: reset)"]
    assert not (tmp_path / "run").exists()
