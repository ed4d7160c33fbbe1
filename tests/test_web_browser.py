"""--labeller web in a real browser: headless Chromium (Debian's package, driven by Selenium) on the page of
a real `run.py --env MovingDot-v0 --labeller web` run (and of an `InvertedPendulum-v5` one: MuJoCo clips drawn
from recorded states, issue 30); a scripted person presses keys, and the run's preference database must hold
exactly those answers.

Chromium and its driver are system packages: where missing, the set-up installs them with apt-get (as
root), as the Xvfb tests install Xvfb; the tests are skipped, with the reason, only where that is
impossible (tests/support/browser.py).
"""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, default_sigint
from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT
from tests.support.browser import chromium, install_chromium

pytestmark = [pytest.mark.slow,  # a browser (apt-get installs it on a fresh machine) and real runs
              pytest.mark.xdist_group("display")]  # one worker for these and the Xvfb tests: one apt-get
pytest.importorskip("selenium")
# a tiny run (tests/test_pipeline.py's SMALL): MovingDot's 5-step clips, one small predictor
SMALL = ["--env", "MovingDot-v0", "--labeller", "web", "--preset", "none", "--n_envs", 4, "--segment_length", 5,
         "--n_initial_epochs", 1, "--n_predictors", 1, "--reward_batch_size", 2, "--n_labels", 0,
         "--log_interval", 1]
# the same on a MuJoCo env: tiny PPO (tests/test_ppo_runs.py's TINY), clips of 10 steps (0.4 s of InvertedPendulum)
MUJOCO_SMALL = ["--env", "InvertedPendulum-v5", "--labeller", "web", "--preset", "none", "--ppo_n_envs", 2,
                "--ppo_n_steps", 64, "--ppo_n_minibatches", 4, "--ppo_n_epochs", 1, "--segment_length", 10,
                "--n_initial_epochs", 1, "--n_predictors", 1, "--reward_batch_size", 2, "--n_labels", 0,
                "--log_interval", 1]
ADDRESS = re.compile(r"\[prefs\] label in a browser: (http://127\.0\.0\.1:\d+/\?token=[\w-]+)")


@pytest.fixture(scope="module")
def browser_ok():
    why = install_chromium()
    if why:
        pytest.skip(f"no headless Chromium can be had: {why}")


class Run:
    """run.py in its own session, its output to files; ``address`` once the page is served."""

    def __init__(self, tmp_path, *args):
        self.tmp_path, self.run_dir = tmp_path, tmp_path / "run"
        self.out, self.err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), *map(str, args), "--run_dir",
                                          str(self.run_dir)], cwd=REPO, stdout=out, stderr=err,
                                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}, start_new_session=True,
                                         preexec_fn=default_sigint)
        try:  # a loaded machine (a whole suite on 2 workers beside a training run) takes minutes to start one
            self.address = self.wait_for(ADDRESS, 600).group(1)
        except BaseException:  # the test's own try/finally has not begun: the run must not outlive it
            self.kill()
            raise

    def wait_for(self, pattern, timeout: float):
        deadline = time.monotonic() + timeout
        while not (m := pattern.search(self.out.read_text())):
            assert self.proc.poll() is None, f"run.py exited {self.proc.returncode}:\n{self.err.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no {pattern.pattern} after {timeout} s"
            time.sleep(0.2)
        return m

    def preferences(self) -> list[tuple[str, str, tuple]]:
        """The saved database's (clip, clip, mu), oldest first."""
        from drlhp.reward.pref_db import PrefDB

        db = PrefDB.load(self.run_dir / "prefs" / "prefs.npz")
        entries = sorted(db.entries("train") + db.entries("val"), key=lambda e: e.order)
        return [(e.id1, e.id2, tuple(e.mu)) for e in entries]

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(timeout=10)


class Review:
    """python -m pref_interface.review --web on a saved database, in its own session, its output to a file;
    ``address`` once the page is served."""

    def __init__(self, db_path, out, timeout: float):
        self.out = out
        with open(out, "w") as f:
            self.proc = subprocess.Popen([sys.executable, "-m", "pref_interface.review", "--load_prefs_dir",
                                          str(db_path), "--web"], cwd=REPO, stdout=f, stderr=subprocess.STDOUT,
                                         start_new_session=True, preexec_fn=default_sigint)
        try:
            deadline = time.monotonic() + timeout
            while not (m := re.search(r"review in a browser: (\S+)", out.read_text())):
                assert self.proc.poll() is None and time.monotonic() < deadline, out.read_text()
                time.sleep(0.2)
            self.address = m.group(1)
        except BaseException:  # the test's own try/finally has not begun: the review must not outlive it
            self.kill()
            raise

    def ctrl_c(self, timeout: float) -> None:
        """Ctrl-C, as in its terminal: it must save and exit 0."""
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(timeout=timeout) == 0, self.out.read_text()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


class Person:
    """A scripted person at one page: waits for a pair, presses a key, sees the next."""

    def __init__(self, driver, address: str):
        self.driver, self.last_key, self.last_time = driver, None, 0.0
        driver.get(address)

    def on_screen(self, timeout: float = 60, other_than: str | None = None) -> str:
        """The number of the pair on screen ("" for none) once it is not ``other_than``. "" only when the page has
        no pair to show (its state lists none), not while it loads the clips of one: after an answer or an undo
        the page shows "loading" until the pair's images are in, which on a busy machine a poll can catch."""
        deadline = time.monotonic() + timeout
        while True:
            shown, n_pairs = self.driver.execute_script(
                "const s = window.drlhp.state(); return [document.body.dataset.pair || '', s ? s.pairs.length : 0]")
            if shown != other_than and (shown or (other_than is not None and n_pairs == 0)):
                return shown
            assert time.monotonic() < deadline, f"the page still shows pair {shown!r} after {timeout} s"
            time.sleep(0.05)

    def clips(self, number: str) -> tuple[str, str]:
        pairs = self.driver.execute_script("return window.drlhp.state().pairs")
        return tuple(next(p["clips"] for p in pairs if str(p["number"]) == number))

    def waiting(self) -> list[str]:
        return [str(p["number"]) for p in self.driver.execute_script("return window.drlhp.state().pairs")]

    def press(self, key: str) -> None:
        """A key press; the same key again waits out the page's repeat guard (0.2 s, as in the window),
        which would take it for a key repeat."""
        from selenium.webdriver.common.by import By

        if key == self.last_key:
            time.sleep(max(0.0, self.last_time + 0.3 - time.monotonic()))
        self.driver.find_element(By.TAG_NAME, "body").send_keys(key)
        self.last_key, self.last_time = key, time.monotonic()


def test_a_person_labels_by_keys_and_the_database_holds_exactly_those_answers(browser_ok, tmp_path):
    """gather_initial_prefs with 5 initial preferences: keys left, right, can't tell, equal, undo, then left,
    right, equal; the run ends by itself once the predictor has 5, and its database holds those answers in
    order: the undone one and the "can't tell" not at all."""
    from selenium.webdriver.common.keys import Keys

    run = Run(tmp_path, "gather_initial_prefs", *SMALL, "--n_initial_prefs", 5)
    try:
        with chromium() as driver:
            person = Person(driver, run.address)
            shown = person.on_screen()
            expected = []
            script = [(Keys.ARROW_LEFT, MU_LEFT), ("d", MU_RIGHT), (Keys.ARROW_DOWN, None), ("w", MU_EQUAL),
                      ("u", "undo"), ("a", MU_LEFT), (Keys.ARROW_RIGHT, MU_RIGHT), (Keys.ARROW_UP, MU_EQUAL)]
            for key, mu in script:
                if mu == "undo":
                    undone = expected.pop()
                    person.press(key)
                    shown = person.on_screen(other_than=shown)
                    assert person.clips(shown) == undone[:2]  # the pair is back on screen
                    continue
                clips = person.clips(shown)
                person.press(key)
                if mu is not None:
                    expected.append((*clips, mu))
                shown = person.on_screen(other_than=shown)
            assert shown == ""  # 5 labels given or held: the schedule allows no more
            assert driver.execute_script("return document.getElementById('labels').textContent").endswith(
                "/ 5 allowed by the schedule")
            code = run.proc.wait(timeout=120)  # the last answer is final after 5 s; then the predictor has 5
        out, err = run.out.read_text(), run.err.read_text()
        assert code == 0, err[-3000:]
        assert "Traceback" not in out + err
        assert run.preferences() == expected
        assert len(expected) == 5
    finally:
        run.kill()


def test_two_pages_closing_one_mid_pair_and_ctrl_c_lose_nothing(browser_ok, tmp_path):
    """Two browsers label at once: different pairs, every answer arrives; the first closes with pairs on its
    page (they go to the other page) and an answer held for undo (it is sent); Ctrl-C then saves the
    database with every answer, the last held one included."""
    run = Run(tmp_path, *SMALL, "--n_initial_prefs", 20, "--million_timesteps", 5)
    try:
        with chromium() as driver_b:
            b = Person(driver_b, run.address)
            shown = {b: b.on_screen()}
            with chromium() as driver_a:
                a = Person(driver_a, run.address)
                shown[a] = a.on_screen()
                assert not set(a.waiting()) & set(b.waiting())  # each page its own pairs
                expected = []
                for person, key, mu in ((a, "a", MU_LEFT), (b, "d", MU_RIGHT), (a, "w", MU_EQUAL),
                                        (b, "a", MU_LEFT)):
                    expected.append((*person.clips(shown[person]), mu))
                    person.press(key)
                    shown[person] = person.on_screen(other_than=shown[person])
                left_on_a = a.waiting()  # unanswered: the pair on a's screen, and the next
                assert len(left_on_a) == 2 and not set(left_on_a) & set(b.waiting())
                driver_a.close()  # the tab closes mid-pair, with a's last answer held for undo
            seen = [shown[b]]
            for _ in range(4):  # b's two pairs, then the two that a left
                expected.append((*b.clips(seen[-1]), MU_RIGHT))
                b.press("d")
                seen.append(b.on_screen(other_than=seen[-1]))
            assert set(left_on_a) <= set(seen[:4])  # a's pairs were given out again
            time.sleep(0.5)
            run.proc.send_signal(signal.SIGINT)  # Ctrl-C: the parent only, as in a terminal
            code = run.proc.wait(timeout=90)
        err = run.err.read_text()
        assert code == 130, err[-3000:]
        assert "Traceback" not in run.out.read_text() + err
        saved = run.preferences()
        assert sorted(saved) == sorted(expected)  # every answer once, the held ones included
        assert len(saved) == len(set((x, y) for x, y, _ in saved)) == 8
    finally:
        run.kill()


def test_the_review_page_in_a_browser_relabels_deletes_and_ctrl_c_saves(browser_ok, tmp_path):
    """python -m pref_interface.review --web on a saved database: keys in the page relabel, delete and keep
    pairs; Ctrl-C in the terminal writes the edits and ends it."""
    from drlhp.reward.pref_db import PrefDB
    from test_web_labeller import _saved_db

    path = tmp_path / "prefs.npz"
    _saved_db(path)
    out = tmp_path / "review.txt"
    review = Review(path, out, timeout=60)
    try:
        with chromium() as driver:
            person = Person(driver, review.address)

            def chosen(other_than=None):
                deadline = time.monotonic() + 30
                while (c := driver.execute_script("return document.body.dataset.chosen || ''")) in ("", other_than):
                    assert time.monotonic() < deadline, f"the review page still shows {c!r}"
                    time.sleep(0.05)
                return c

            now = chosen()
            for key in ("d", "s", "n"):  # pair 1: right; pair 2: deleted; pair 3: unchanged
                person.press(key)
                now = chosen(other_than=now)
            assert "1 relabelled, 1 deleted" in driver.execute_script("return document.getElementById('counts')"
                                                                      ".textContent")
        review.ctrl_c(timeout=30)
    finally:
        review.kill()
    assert "1 relabelled, 1 deleted: 3 preferences" in out.read_text()
    saved = PrefDB.load(path)
    entries = sorted(saved.entries("train") + saved.entries("val"), key=lambda e: e.order)
    assert [tuple(e.mu) for e in entries] == [MU_RIGHT, MU_EQUAL, MU_LEFT]


def _shown_frame(driver) -> tuple:
    """(index, pixels) of the left clip's frame on the page's canvas now, read in one script (the clock cannot move
    between the two), the canvas's whole-factor scale undone."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    text, url = driver.execute_script("return [document.getElementById('left-index').textContent, "
                                      "document.getElementById('left').toDataURL('image/png')]")
    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
    k = image.shape[1] // 256
    return int(text.split()[1]) - 1, image[::k, ::k]


def test_a_person_labels_mujoco_clips_drawn_from_recorded_states(browser_ok, tmp_path):
    """gather_initial_prefs on InvertedPendulum-v5 with 3 initial preferences: the page shows each pair drawn by the
    render worker (10 frames of 256 x 256, each 40 ms: the task's dt, real speed); keys left, right, equal; the run
    ends by itself and its database holds those answers. A frame the page showed is the frame a TF-free render worker
    draws of that step's state, rebuilt from the database (InvertedPendulum's observation is its qpos and qvel)."""
    import numpy as np
    from selenium.webdriver.common.keys import Keys

    from drlhp.reward.pref_db import PrefDB
    from pref_interface.clip_drawer import RenderWorker

    run = Run(tmp_path, "gather_initial_prefs", *MUJOCO_SMALL, "--n_initial_prefs", 3)
    try:
        with chromium() as driver:
            person = Person(driver, run.address)
            shown = person.on_screen(timeout=120)
            pair = next(p for p in driver.execute_script("return window.drlhp.state().pairs")
                        if str(p["number"]) == shown)
            assert pair["frame_ms"] == 40 and pair["frames"] == 10 and pair["size"] == [[256, 256]] * 2
            time.sleep(0.3)  # the clip is playing: some frame past the first
            index, seen = _shown_frame(driver)
            seen_clip, other_clip = person.clips(shown)
            expected = []
            for i, (key, mu) in enumerate(((Keys.ARROW_LEFT, MU_LEFT), ("d", MU_RIGHT), ("w", MU_EQUAL))):
                expected.append((*person.clips(shown), mu))
                person.press(key)
                deadline = time.monotonic() + 120
                while i < 2 and (now := person.on_screen(other_than=shown)) in ("", shown):
                    assert time.monotonic() < deadline, "no next pair after 120 s"
                    time.sleep(0.05)  # the next pair may still be drawing: nothing on screen meanwhile
                shown = now if i < 2 else ""
            code = run.proc.wait(timeout=120)
        out, err = run.out.read_text(), run.err.read_text()
        assert code == 0, err[-3000:]
        assert "Traceback" not in out + err
        assert run.preferences() == expected
    finally:
        run.kill()
    db = PrefDB.load(run.run_dir / "prefs" / "prefs.npz")
    worker = RenderWorker()
    try:
        for clip in (seen_clip, other_clip):
            worker.submit(clip, "InvertedPendulum-v5", db.segment(clip).obs[:, :4].astype(np.float64))
        deadline, drawn = time.monotonic() + 60, []
        while len(drawn) < 2:
            assert time.monotonic() < deadline, "the render worker did not answer"
            drawn += worker.results()
            time.sleep(0.05)
    finally:
        worker.close()
    ((_, frames, _),) = [d for d in drawn if d[0] == seen_clip]
    assert seen.shape == frames[index].shape == (256, 256, 3)
    # a frame of a step where the pendulum fell carries the fall's mark (pref_interface/fall_mark.py: a random policy's
    # pendulum falls every few steps); the database keeps no fall flags, so the frame is compared with the re-render
    # as drawn and as marked, and must equal one of them
    from pref_interface.fall_mark import mark

    diff = min((np.abs(seen.astype(int) - candidate.astype(int)).max(axis=-1)
                for candidate in (frames[index], mark(frames[index]))), key=lambda d: d.mean())
    # the state rebuilt from float32 observations: equal but for a rare pixel (measured: equal, 0 of 65,536 off); one
    # step apart, frames of this clip differ by 0.04 to 1.3 levels on average
    assert diff.mean() < 0.02 and (diff <= 2).mean() > 0.999, (diff.mean(), diff.max())


def test_the_review_page_shows_a_persons_mujoco_clips_drawn_from_their_kept_states(browser_ok, tmp_path):
    """python -m pref_interface.review --web on a database of Hopper clips that kept their recorded states (issue 40,
    item 3): the page plays the chosen pair drawn by the render worker; a frame on its canvas is, pixel for pixel, the
    frame a fresh TF-free render worker draws of that clip's kept states (and not the other clip's)."""
    import numpy as np

    from drlhp.reward.pref_db import PrefDB
    from test_mujoco_labelling import rerender
    from test_review_mujoco import hopper_db

    path = tmp_path / "prefs.npz"
    hopper_db(path)
    out = tmp_path / "review.txt"
    review = Review(path, out, timeout=180)
    try:
        with chromium() as driver:
            Person(driver, review.address)
            deadline = time.monotonic() + 180
            while not driver.execute_script("return document.body.dataset.frame || ''"):
                assert time.monotonic() < deadline, "the review page drew no frame"
                time.sleep(0.1)
            state = driver.execute_script("return fetch('/api/review?token=' + new URLSearchParams(location.search)"
                                          ".get('token')).then(r => r.json())")
            assert state["frames"] == 6 and state["frame_ms"] == 40 and state["size"] == [256, 256]
            time.sleep(0.15)  # playing: some frame past the first
            text, url = driver.execute_script("return [document.body.dataset.frame, "
                                              "document.getElementById('left').toDataURL('image/png')]")
            chosen = int(driver.execute_script("return document.body.dataset.chosen"))
        review.ctrl_c(timeout=60)
    finally:
        review.kill()
    assert "Traceback" not in out.read_text()
    import base64
    import io

    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
    seen, index = image[::image.shape[1] // 256, ::image.shape[1] // 256], int(text)
    db = PrefDB.load(path)
    entry = next(e for e in db.entries("train") + db.entries("val") if e.order == chosen)
    left, right = rerender(db.segment(entry.id1).states), rerender(db.segment(entry.id2).states)
    assert seen.shape == left[index].shape == (256, 256, 3)
    assert np.array_equal(seen, left[index])
    assert not np.array_equal(seen, right[index])
