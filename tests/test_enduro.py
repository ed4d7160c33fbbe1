"""Enduro among the cars (issue 62, part 2): what its RAM means (envs/enduro.py), checked against the frames of a
day's drive by day, in snow, at night and in fog; the goal the paper's labellers were given
(pref_interface.goals:enduro_with_cars); the goal oracle on Enduro's clips; and a real run labelled by it, whose
database holds the goal's answers, then watched with the goal's measure per episode."""
from __future__ import annotations

import json

import numpy as np
import pytest

from envs import enduro
from envs.atari import AtariVecEnv

GOAL = "pref_interface.goals:enduro_with_cars"
ENDURO = "EnduroNoFrameskip-v4"
GREY = (192, 192, 192)  # the player's car and the road's edges
ROAD = slice(8, 160)  # columns right of the black bar on the left


def drive(steps: int = 3500, seed: int = 0):
    """A day's drive of a fixed seed (mostly accelerating, steering now and then): per step the watched worker's
    colour frame's player rows, the road's background colour at the bottom, the RAM and the reward."""
    env = AtariVecEnv(ENDURO, 1, n_threads=1, score_visible=True, watch_steps=1)
    rng = np.random.default_rng(seed)
    bands, backgrounds, rams, rewards = [], [], [], []
    try:
        env.reset(seed)
        for _ in range(steps):
            action = 1 if rng.random() < 0.8 else int(rng.integers(0, env.n_actions))  # 1: FIRE, accelerate
            step = env.step(np.array([action]))
            frame = env.watch.frames(0, 0, 1)[0]
            bands.append(frame[enduro.PLAYER_ROWS[0]:enduro.PLAYER_ROWS[1], ROAD].copy())
            backgrounds.append(tuple(int(c) for c in frame[152, 100]))
            rams.append(env.watch.states(0, 0, 1)[0])
            rewards.append(float(step.true_reward[0]))
            if step.done[0]:
                break
    finally:
        env.close()
    return np.stack(bands), backgrounds, np.stack(rams), np.asarray(rewards)


def others_in(band: np.ndarray) -> bool:
    """Whether anything but the road (each row's commonest colour) and the grey of the player's car and the road's
    edges is drawn in the player's rows: another car, or at night and in fog its tail lights."""
    for row in band:
        packed = (row[:, 0].astype(np.int32) << 16) | (row[:, 1].astype(np.int32) << 8) | row[:, 2]
        values, counts = np.unique(packed, return_counts=True)
        road, grey = values[np.argmax(counts)], (GREY[0] << 16) | (GREY[1] << 8) | GREY[2]
        if ((packed != road) & (packed != grey)).any():
            return True
    return False


@pytest.fixture(scope="module")
def day():
    return drive()


PHASES = {(0, 68, 0): "day", (236, 236, 236): "snow", (0, 0, 0): "night", (74, 74, 74): "fog"}


def test_enduros_ram_means_what_envs_enduro_says_by_day_in_snow_at_night_and_in_fog(day):
    bands, backgrounds, ram, rewards = day
    seen = np.array([others_in(b) for b in bands])
    level = enduro.level(ram)
    nobody = (ram[:, 27] == 0) & (ram[:, 28] == 0)  # the two nearest depth rows empty
    phase = np.array([PHASES.get(bg, "dusk") for bg in backgrounds])
    for name in ("day", "snow", "night", "fog"):
        here = phase == name
        assert (level & here).sum() >= 30, f"{name}: {(level & here).sum()} steps with a car alongside"
        # a car alongside per the RAM is drawn in the player's rows (at night and in fog, its tail lights) ...
        assert seen[level & here].mean() >= 0.85, (name, seen[level & here].mean())
        # ... and with the two nearest rows empty nothing but the player is
        assert (~seen[nobody & here]).mean() >= 0.98, (name, (~seen[nobody & here]).mean())
    # a crash begins where the speed falls to 6 (bit 7 of ram[35] rises), and there are some in a day's drive
    began = np.flatnonzero(enduro.crashes(ram))
    assert len(began) >= 3
    speed = ram[:, enduro.SPEED]
    assert (speed[began] == 6).all() and (speed[began - 1] > 6).all()
    # a pass either way is the game's reward, +1 or -1
    assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0} and (rewards == 1).any() and (rewards == -1).any()


def ram_rows(n: int, car: bool = False, scroll: int = 10, crash_at: int | None = None) -> np.ndarray:
    ram = np.zeros((n, 128))
    if car:
        ram[:, 27], ram[:, 59] = 150, scroll << 3
    if crash_at is not None:
        ram[crash_at:, 35] = 143
    return ram


def test_the_goal_pays_a_car_alongside_charges_passes_and_crashes():
    from pref_interface.goals import enduro_with_cars

    def score(ram, rewards):
        return enduro_with_cars(ram, np.zeros((len(ram), 0)), {"reward": np.asarray(rewards, np.float32)})

    quiet = np.zeros(25)
    alongside = score(ram_rows(25, car=True), quiet)
    nobody = score(ram_rows(25), quiet)
    ahead = score(ram_rows(25, car=True, scroll=2), quiet)  # the nearest row's car, not alongside
    passing = score(ram_rows(25), np.r_[1.0, np.zeros(24)])
    passed = score(ram_rows(25), np.r_[np.zeros(24), -1.0])
    crash = score(ram_rows(25, crash_at=5), quiet)
    assert alongside == pytest.approx(1.0) and nobody == ahead == 0.0
    assert passing == passed == -1.0 and crash == -2.0
    assert alongside > nobody > passing > crash
    half = score(ram_rows(25, car=True, crash_at=12), quiet)  # alongside until a crash: the crash's steps not paid
    assert half == pytest.approx(12 / 25 - 2.0)
    f = enduro.figures(ram_rows(4, car=True, crash_at=2), [1, 0, -1, 0])
    assert f == {"passes": 2, "level_steps": 2, "level_share": 0.5, "crashes": 1}


def test_the_goal_oracle_labels_enduro_clips_by_their_ram_and_refuses_other_games():
    from drlhp.processes.messages import MU_LEFT, MU_RIGHT, Segment
    from pref_interface.goal_oracle import check_goal, goal_oracle_for

    def clip(ram, rewards=None):
        return Segment(np.zeros((25, 84, 84, 4), np.uint8), np.zeros((25, 0, 0), np.uint8),
                       np.zeros(25, np.float32) if rewards is None else np.asarray(rewards, np.float32), ENDURO, 0, 0,
                       ram).check()

    oracle = goal_oracle_for(GOAL, ENDURO)
    beside, passing = clip(ram_rows(25, car=True)), clip(ram_rows(25), np.r_[1.0, np.zeros(24)])
    assert oracle.label(beside, passing) == MU_LEFT and oracle.label(passing, beside) == MU_RIGHT
    with pytest.raises(ValueError, match="recorded none"):
        oracle.score(Segment(np.zeros((25, 84, 84, 4), np.uint8), np.zeros((25, 84, 84), np.uint8),
                             np.zeros(25, np.float32), ENDURO, 0, 0).check())
    with pytest.raises(ValueError, match="is for EnduroNoFrameskip-v4, not PongNoFrameskip-v4"):
        check_goal(GOAL, "PongNoFrameskip-v4")


def test_the_page_person_judges_enduro_clips_as_the_goal_oracle_from_what_the_page_serves(day):
    """bench/page_person.py's Judge scores an Enduro clip from the page's /states reply (the RAM and the game's
    rewards: pref_interface/web.py) as the goal oracle scores the clip itself: windows of the day's drive, each
    answer the oracle's label; without the rewards it refuses."""
    import importlib.util

    from conftest import REPO
    from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment
    from pref_interface.goal_oracle import goal_oracle_for

    spec = importlib.util.spec_from_file_location("page_person", REPO / "bench" / "page_person.py")
    page_person = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page_person)
    judge, oracle = page_person.Judge(GOAL), goal_oracle_for(GOAL, ENDURO)
    _, _, rams, rewards = day
    T = 25

    def clip(start):
        return Segment(np.zeros((T, 84, 84, 4), np.uint8), np.zeros((T, 0, 0), np.uint8),
                       rewards[start:start + T].astype(np.float32), ENDURO, 0, start, rams[start:start + T]).check()

    starts = range(0, len(rams) - T, 60)
    clips = [clip(t) for t in starts]
    scores = [judge.score(ENDURO, c.states.tolist(), c.true_rewards.tolist()) for c in clips]  # as JSON gives them
    assert scores == [oracle.score(c) for c in clips]
    assert len(set(scores)) >= 3  # the drive's windows differ: alongside a car, passing, neither
    mu = {"left": MU_LEFT, "right": MU_RIGHT, "equal": MU_EQUAL}
    for a, b in zip(clips, clips[1:]):
        answer, _, _ = judge.answer(ENDURO, a.states.tolist(), b.states.tolist(),
                                    (a.true_rewards.tolist(), b.true_rewards.tolist()))
        assert mu[answer] == oracle.label(a, b)
    assert judge.env(ENDURO) is None  # no env is made for an Atari goal
    with pytest.raises(RuntimeError, match="served no rewards"):
        judge.score(ENDURO, clips[0].states.tolist())


@pytest.mark.slow
def test_a_short_enduro_run_labels_by_the_goal_and_watch_reports_its_measure(cli, tmp_path):
    """A real three-process run on Enduro labelled by the goal: it says so, every label in its database is the goal's
    answer on the two stored clips (their RAM kept as their states), and watch on its policy reports the goal's
    figures per episode (passes, share of steps level with a car, crashes)."""
    from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.goals import enduro_with_cars

    run_dir = tmp_path / "run"
    proc = cli("--env", ENDURO, "--labeller", "oracle", "--oracle_goal", GOAL, "--run_dir", run_dir, "--preset",
               "none", "--million_timesteps", "0.004", "--n_envs", "4", "--n_initial_prefs", "12", "--n_labels", "4",
               "--n_initial_epochs", "1", "--n_predictors", "1", "--reward_batch_size", "4",
               "--policy_ckpt_interval", "50", timeout=900, check=True)
    assert f"[prefs] the oracle labels by goal {GOAL} (the clips' RAM and rewards)" in proc.stdout
    assert json.loads((run_dir / "config.json").read_text())["prefs"]["oracle_goal"] == GOAL
    db = PrefDB.load(run_dir / "prefs" / "prefs.npz")
    entries = db.entries("train") + db.entries("val")
    assert len(entries) >= 12
    for e in entries:
        s1, s2 = (enduro_with_cars(db.segment(i).states, np.zeros((25, 0)), {"reward": db.segment(i).true_rewards})
                  for i in (e.id1, e.id2))
        assert db.segment(e.id1).states.shape == (25, 128) and db.segment(e.id1).frames.shape == (25, 210, 160, 3)
        assert tuple(e.mu) == (MU_LEFT if s1 > s2 else MU_RIGHT if s2 > s1 else MU_EQUAL), (e.mu, s1, s2)
    watched = cli("watch", "--env", ENDURO, "--load_policy_ckpt_dir", run_dir, "--episodes", "1", "--run_dir",
                  tmp_path / "watch", "--video", tmp_path / "episode.gif", timeout=900, check=True)
    assert "passes per episode [" in watched.stdout and "level_share per episode [" in watched.stdout, watched.stdout
    summary = json.loads((tmp_path / "watch" / "summary.json").read_text())
    assert summary["oracle_goal"] == GOAL and len(summary["goal_measures"]["passes"]) == 1
