"""Before any window: can one open here? The display check's messages (no DISPLAY, missing xcb libraries,
no X server), run.py's one-line exit 2, the parent staying free of Qt and TensorFlow, and the agent's
episode feed for --show_agent."""
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import REPO
from pref_interface import display

FIX = "pass --synthetic_prefs"
# ldd on PyQt5's libqxcb.so on a fresh Debian 12 (captured on this project's machine before installing)
LDD_FRESH_DEBIAN = """\
\tlibQt5XcbQpa.so.5 => /x/PyQt5/Qt5/plugins/platforms/../../lib/libQt5XcbQpa.so.5 (0x00007f3736800000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-image.so.0 => /lib/x86_64-linux-gnu/libxcb-image.so.0 (0x00007f3736b6e000)
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-render-util.so.0 => /lib/x86_64-linux-gnu/libxcb-render-util.so.0 (0x00007f3734c00000)
\tlibxcb-xinerama.so.0 => not found
"""


def test_no_display_names_both_fixes():
    problem = display.display_problem({}, fix=FIX)
    assert problem.count("\n") == 0
    assert "DISPLAY is not set" in problem and "set DISPLAY" in problem and FIX in problem
    assert "QT_QPA_PLATFORM=wayland" in display.display_problem({"WAYLAND_DISPLAY": "wayland-0"}, fix=FIX)
    assert "WAYLAND_DISPLAY is not set" in display.display_problem({"QT_QPA_PLATFORM": "wayland"})
    assert display.display_problem({"QT_QPA_PLATFORM": "wayland", "WAYLAND_DISPLAY": "wayland-0"}) is None
    assert display.display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None  # chosen on purpose


def test_missing_xcb_libraries_are_named_with_the_apt_get_line(monkeypatch):
    missing = display.parse_ldd_missing(LDD_FRESH_DEBIAN)
    assert missing == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-xinerama.so.0"]
    monkeypatch.setattr(display, "missing_xcb_libraries", lambda: missing)
    problem = display.display_problem({"DISPLAY": ":0"}, fix=FIX)
    assert problem.count("\n") == 0
    assert "missing libxcb-icccm.so.4, libxcb-keysyms.so.1, libxcb-xinerama.so.0" in problem
    assert "sudo apt-get install -y libxcb-icccm4 libxcb-keysyms1 libxcb-xinerama0" in problem
    assert FIX in problem
    with pytest.raises(display.DisplayError, match="apt-get install"):
        monkeypatch.setenv("DISPLAY", ":0")
        monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
        display.require_display()


def test_run_py_checks_the_xcb_libraries_before_starting(monkeypatch, tmp_path):
    from drlhp.config import RunConfig
    from drlhp.run.checks import UsageError, check_inputs

    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(display, "missing_xcb_libraries", lambda: ["libxcb-icccm.so.4"])
    with pytest.raises(UsageError, match=r"install them with: sudo apt-get install -y libxcb-icccm4; or pass "
                                         r"--labeller web \(label in a browser\) or --synthetic_prefs"):
        check_inputs(RunConfig(mode="gather_initial_prefs", env="MovingDot-v0", run_dir=str(tmp_path)))


def test_the_check_finds_what_the_installed_wheel_misses():
    """On this machine: whatever ldd says about the wheel's plugin is what the check reports."""
    qt = display._qt_dir()
    if qt is None:
        pytest.skip("PyQt5 is not installed")
    plugin = qt / "plugins" / "platforms" / "libqxcb.so"
    assert plugin.is_file()
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True).stdout
    assert set(display.parse_ldd_missing(out)) <= set(display.missing_xcb_libraries())


def test_no_display_is_one_line_exit_2_before_anything_starts(tmp_path):
    """Refused before TensorFlow or Qt is imported (so within about a second on any machine; measured by
    what was imported, not by a clock) and before the run directory exists."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    command = [str(REPO / "run.py"), "--env", "PongNoFrameskip-v4", "--run_dir", str(tmp_path / "run")]
    proc = subprocess.run([sys.executable, *command], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("run.py: error: no display"), proc.stderr
    assert "set DISPLAY" in lines[0] and "--labeller web" in lines[0] and "--synthetic_prefs" in lines[0]
    traced = subprocess.run([sys.executable, "-X", "importtime", *command], env=env, capture_output=True,
                            text=True, timeout=60)
    imported = {line.split("|")[-1].strip().split(".")[0] for line in traced.stderr.splitlines() if "|" in line}
    assert "numpy" in imported or "envs" in imported  # the trace is real
    assert not imported & {"tensorflow", "keras", "PyQt5"}, sorted(imported & {"tensorflow", "keras", "PyQt5"})
    assert traced.returncode == 2 and not (tmp_path / "run").exists()


def test_the_parent_loads_neither_qt_nor_tensorflow(tmp_path):
    code = ("import sys; from drlhp.config import RunConfig; from drlhp.run.checks import check_inputs; "
            "check_inputs(RunConfig(mode='train_policy_with_preferences', env='MovingDot-v0', "
            f"run_dir={str(tmp_path)!r})); "
            "import drlhp.processes.launcher, pref_interface.display; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PyQt5', 'tensorflow', 'keras')))")
    env = {**os.environ, "DISPLAY": "", "QT_QPA_PLATFORM": "offscreen"}  # a display "exists": the check passes
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_episode_feed_publishes_worker_0s_finished_episodes():
    from drlhp.policy.feeds import EpisodeFeed

    class Channel:
        def __init__(self):
            self.values = []

        def publish(self, value):
            self.values.append(value)

    env = SimpleNamespace(frames_to_watch=lambda obs: obs[..., -1])
    channel = Channel()
    feed = EpisodeFeed(env, channel, max_frames=4)
    t, n = 3, 2
    for r in range(3):  # worker 0's episode ends at the 2nd step of rollout 1, and not again
        next_obs = np.zeros((t, n, 2, 2, 4), np.uint8)
        next_obs[:, 0, ..., -1] = (10 * r + np.arange(t))[:, None, None]
        dones = np.zeros((t, n), np.float32)
        dones[1, 1] = 1.0  # worker 1 is not shown
        if r == 1:
            dones[1, 0] = 1.0
        feed.on_rollout(SimpleNamespace(next_obs=next_obs, dones=dones), None)
    assert len(channel.values) == 1
    episode = channel.values[0]
    assert episode.shape == (4, 2, 2)  # 5 frames, the last 4 kept
    assert episode[:, 0, 0].tolist() == [1, 2, 10, 11]
