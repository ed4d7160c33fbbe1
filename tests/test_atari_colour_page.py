"""A person labels Atari clips in colour in a real browser (issue 62, part 1): headless Chromium (Debian's package,
driven by Selenium) on the page of a real `run.py gather_initial_prefs --env PongNoFrameskip-v4 --labeller web` run.
The page plays each clip as the emulator's 210 x 160 colour frames at a whole factor; a frame on its canvas is the
frame the run's database recorded for that clip (the colour frame, score blanked); the database holds the answers.

With DRLHP_SCREENSHOTS=DIR the page is also saved as DIR/web_pong_colour.png (docs/labelling.md's picture).
"""
import os
import time

import numpy as np
import pytest

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT
from envs.score_blanking import SCREEN, full_frame_rect, score_regions
from test_web_browser import Person, Run, browser_ok  # noqa: F401 -- browser_ok: the fixture
from tests.support.browser import chromium

pytestmark = [pytest.mark.slow,  # a browser (apt-get installs it on a fresh machine) and a real run
              pytest.mark.xdist_group("display")]
pytest.importorskip("selenium")
# a tiny run on Pong: A2C's random play on 2 workers (both watched), one small predictor
PONG_SMALL = ["--env", "PongNoFrameskip-v4", "--labeller", "web", "--preset", "none", "--n_envs", 2,
              "--n_initial_epochs", 1, "--n_predictors", 1, "--reward_batch_size", 2, "--n_labels", 0,
              "--log_interval", 1]


def shown_frame(driver, side: str = "left") -> tuple[int, np.ndarray]:
    """(index, pixels) of a clip's frame on the page's canvas now, read in one script, the whole-factor scale undone."""
    import base64
    import io

    from PIL import Image

    text, url = driver.execute_script(f"return [document.getElementById('{side}-index').textContent, "
                                      f"document.getElementById('{side}').toDataURL('image/png')]")
    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
    k = image.shape[1] // SCREEN[1]
    assert image.shape[:2] == (SCREEN[0] * k, SCREEN[1] * k)
    return int(text.split()[1]) - 1, image[::k, ::k]


def test_a_person_labels_pong_in_colour_and_the_page_shows_the_recorded_frames(browser_ok, tmp_path):  # noqa: F811
    from selenium.webdriver.common.keys import Keys

    from drlhp.reward.pref_db import PrefDB

    run = Run(tmp_path, "gather_initial_prefs", *PONG_SMALL, "--n_initial_prefs", 3)
    try:
        with chromium(1100, 900) as driver:
            person = Person(driver, run.address)
            shown = person.on_screen(timeout=300)
            pair = next(p for p in driver.execute_script("return window.drlhp.state().pairs")
                        if str(p["number"]) == shown)
            assert pair["size"] == [list(SCREEN)] * 2 and pair["frames"] == 25
            time.sleep(0.5)  # playing: some frame past the first
            index, seen = shown_frame(driver)
            seen_clip = person.clips(shown)[0]
            if os.environ.get("DRLHP_SCREENSHOTS"):
                driver.save_screenshot(os.path.join(os.environ["DRLHP_SCREENSHOTS"], "web_pong_colour.png"))
            expected = []
            for i, (key, mu) in enumerate(((Keys.ARROW_LEFT, MU_LEFT), ("d", MU_RIGHT), ("w", MU_EQUAL))):
                expected.append((*person.clips(shown), mu))
                person.press(key)
                shown = person.on_screen(other_than=shown, timeout=120) if i < 2 else ""
            code = run.proc.wait(timeout=300)
        out, err = run.out.read_text(), run.err.read_text()
        assert code == 0, err[-3000:]
        assert "Traceback" not in out + err
        assert run.preferences() == expected
    finally:
        run.kill()
    frames = PrefDB.load(run.run_dir / "prefs" / "prefs.npz").segment(seen_clip).frames
    assert frames.shape == (25, *SCREEN, 3)
    assert np.array_equal(seen, frames[index])
    (r0, r1, c0, c1), = [full_frame_rect(rect) for rect in score_regions("PongNoFrameskip-v4")]
    assert (frames[:, r0:r1, c0:c1] == 0).all() and (frames[:, r1:] != 0).any()
