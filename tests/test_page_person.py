"""bench/page_person.py, the scripted person of issue 40's step 6, on a tiny real Hopper run through the page in
headless Chromium: every answer it logged is in the run's preference database, in order, and nothing else; each is
the goal's judgement of the two clips' states as the database kept them; each key came at least --think_s after its
pair became playable; and the waits to the next pair are logged. On Enduro (issue 62) the same person judges by the
goal on the RAM and game rewards the page serves, and its answers are the goal oracle's on the database's clips."""
import csv
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO
from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT
from tests.support.browser import install_chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("display")]  # a browser and a real run, as test_web_browser
pytest.importorskip("selenium")
# tiny PPO on Hopper (tests/test_web_browser.py's MUJOCO_SMALL), 20-step clips; 3 initial labels and 2 more: the run
# ends by itself once its 1,024 agent steps are done and the 5 planned labels given (the policy waits for them)
TINY_HOPPER = ["train_policy_with_preferences", "--env", "Hopper-v5", "--labeller", "web", "--preset", "none",
               "--ppo_n_envs", "2", "--ppo_n_steps", "64", "--ppo_n_minibatches", "4", "--ppo_n_epochs", "1",
               "--segment_length", "20", "--n_initial_epochs", "1", "--n_predictors", "1", "--reward_batch_size", "2",
               "--n_initial_prefs", "3", "--n_labels", "2", "--million_timesteps", "0.001", "--log_interval", "1"]
MU = {"left": MU_LEFT, "right": MU_RIGHT, "equal": MU_EQUAL}
# Enduro's random play on 2 watched workers, 25-step clips; the run ends once its 4 initial labels are given
TINY_ENDURO = ["gather_initial_prefs", "--env", "EnduroNoFrameskip-v4", "--labeller", "web", "--preset", "none",
               "--n_envs", "2", "--n_initial_epochs", "1", "--n_predictors", "1", "--reward_batch_size", "2",
               "--n_labels", "0", "--n_initial_prefs", "4", "--log_interval", "1"]


def _page_person():
    import importlib.util

    spec = importlib.util.spec_from_file_location("page_person", REPO / "bench" / "page_person.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_person_s_answers_are_exactly_the_database_s_and_follow_the_goal(tmp_path):
    why = install_chromium()
    if why:
        pytest.skip(f"no headless Chromium can be had: {why}")
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "page_person.py"), "--think_s", "0.5",
                           "--run_dir", str(run_dir), "--", *TINY_HOPPER], cwd=REPO, capture_output=True, text=True,
                          timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.startswith("CPU: ") and "load average" in done.stdout.splitlines()[0]
    assert "run.py exited 0; 5 answers" in done.stdout, done.stdout
    with open(tmp_path / "run.page_person.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5

    from drlhp.reward.pref_db import PrefDB
    from pref_interface.goal_oracle import GoalOracle, load_goal

    db = PrefDB.load(run_dir / "prefs" / "prefs.npz")
    entries = sorted(db.entries("train") + db.entries("val"), key=lambda e: e.order)
    assert [(e.id1, e.id2, tuple(e.mu)) for e in entries] == [(r["clip_left"], r["clip_right"], MU[r["answer"]])
                                                               for r in rows]
    # the database kept what the page drew each clip from: its states, and its fall flags (review's marks)
    for e in entries:
        for sid in (e.id1, e.id2):
            assert db.segment(sid).states is not None and db.segment(sid).falls is not None
    # each answer is the goal's judgement of the two clips' states as the database kept them (the person's own
    # states -> observations route: bench/page_person.py's Judge), and its scores are the goal oracle's on the
    # predictor's observations of those clips (float32: to 1e-4)
    spec = "pref_interface.goals:hopper_landed_backflip"
    judge = _page_person().Judge(spec)
    oracle = GoalOracle(load_goal(spec), 11)
    for e, r in zip(entries, rows):
        s1, s2 = db.segment(e.id1), db.segment(e.id2)
        answer, a, b = judge.answer("Hopper-v5", s1.states, s2.states)
        assert answer == r["answer"]
        assert round(a, 6) == float(r["score_left"]) and round(b, 6) == float(r["score_right"])
        assert np.isclose(oracle.score(s1), a, atol=1e-4) and np.isclose(oracle.score(s2), b, atol=1e-4)
    for r in rows:
        assert float(r["answer_t"]) - float(r["playable_t"]) >= 0.5
    waits = [float(r["wait_to_next_s"]) for r in rows[:-1]]  # the last answer has no next pair
    assert all(w >= 0 for w in waits)


def test_the_page_person_teaches_enduro_by_the_goal_on_the_ram_and_rewards_the_page_serves(tmp_path):
    why = install_chromium()
    if why:
        pytest.skip(f"no headless Chromium can be had: {why}")
    run_dir = tmp_path / "run"
    spec = "pref_interface.goals:enduro_with_cars"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "page_person.py"), "--think_s", "0.5", "--goal", spec,
                           "--run_dir", str(run_dir), "--", *TINY_ENDURO], cwd=REPO, capture_output=True, text=True,
                          timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "run.py exited 0; 4 answers" in done.stdout, done.stdout
    with open(tmp_path / "run.page_person.csv") as f:
        rows = list(csv.DictReader(f))

    from drlhp.reward.pref_db import PrefDB
    from pref_interface.goal_oracle import goal_oracle_for

    db = PrefDB.load(run_dir / "prefs" / "prefs.npz")
    entries = sorted(db.entries("train") + db.entries("val"), key=lambda e: e.order)
    assert [(e.id1, e.id2, tuple(e.mu)) for e in entries] == [(r["clip_left"], r["clip_right"], MU[r["answer"]])
                                                               for r in rows]
    oracle = goal_oracle_for(spec, "EnduroNoFrameskip-v4")
    for e, r in zip(entries, rows):
        s1, s2 = db.segment(e.id1), db.segment(e.id2)
        assert s1.states.shape == (25, 128)  # the console's RAM after each step, as the page served it
        assert tuple(oracle.label(s1, s2)) == MU[r["answer"]]
        assert round(oracle.score(s1), 6) == float(r["score_left"]) and round(oracle.score(s2), 6) == float(
            r["score_right"])
