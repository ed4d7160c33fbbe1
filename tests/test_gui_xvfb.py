"""A person in the loop, under a real X server: run.py with no --synthetic_prefs opens the labelling
window in its preference-interface process, and key presses sent from outside (xdotool, through the X
server's XTEST extension, as a keyboard would) become the run's preferences; closing the window (the
WM_DELETE_WINDOW message a window manager sends for the close button) ends the run cleanly.

The X server is Xvfb, started here. Where Xvfb, xdotool or the system libraries of Qt's xcb plugin are
missing, the set-up installs them with apt-get (as root); the tests are skipped, with the reason, only
where that is impossible.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import REPO
from pref_interface.display import README_PACKAGES, display_problem, missing_xcb_libraries

WINDOW_TITLE = "drlhp: which clip is better?"
APT_PACKAGES = ("xvfb", "xdotool", *README_PACKAGES)


def _apt_install(packages) -> str | None:
    """Install with apt-get; None on success, else why not."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "not root or no apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    try:
        if subprocess.run(cmd, env=env, capture_output=True, timeout=300).returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=300)  # fresh machine
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                return f"apt-get install failed: {proc.stderr.strip().splitlines()[-1:]}"
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"apt-get: {e}"
    return None


@pytest.fixture(scope="module")
def x_display():
    """DISPLAY of a fresh Xvfb, with xdotool and Qt's xcb libraries present (installed if need be)."""
    if not (shutil.which("Xvfb") and shutil.which("xdotool")) or missing_xcb_libraries():
        why = _apt_install(APT_PACKAGES)
        if why:
            pytest.skip(f"no X server can be had: Xvfb/xdotool/xcb libraries missing and not installable ({why})")
    if missing_xcb_libraries():
        pytest.skip(f"Qt's xcb plugin still misses {missing_xcb_libraries()} after installing")
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    try:
        number = b""
        deadline = time.monotonic() + 20
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
        if not number.strip():
            pytest.skip("Xvfb did not start")
        yield f":{int(number)}"
    finally:
        os.close(read_fd)
        xvfb.terminate()
        xvfb.wait(timeout=10)


def _x_env(display: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    return {**env, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "TF_CPP_MIN_LOG_LEVEL": "2"}


def _xdotool(display: str, *args) -> str:
    proc = subprocess.run(["xdotool", *map(str, args)], env={**os.environ, "DISPLAY": display},
                          capture_output=True, text=True, timeout=20)
    return proc.stdout.strip()


def _find_window(display: str, timeout: float, proc) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = _xdotool(display, "search", "--name", WINDOW_TITLE)
        if found:
            return int(found.split()[0])
        assert proc.poll() is None, f"exited {proc.returncode} before its window appeared"
        time.sleep(0.2)
    raise AssertionError(f"no window named {WINDOW_TITLE!r} after {timeout} s")


def _close_window(display: str, window: int) -> None:
    """Send WM_DELETE_WINDOW, as a window manager does when the window's close button is clicked
    (Xvfb runs no window manager)."""
    x11 = ctypes.CDLL("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
    x11.XFlush.argtypes = x11.XCloseDisplay.argtypes = [ctypes.c_void_p]

    class ClientMessage(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                    ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                    ("format", ctypes.c_int), ("data", ctypes.c_long * 5)]

    class XEvent(ctypes.Union):
        _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]

    dpy = x11.XOpenDisplay(display.encode())
    assert dpy, f"cannot open display {display}"
    try:
        event = XEvent()
        event.xclient.type = 33  # ClientMessage
        event.xclient.window = window
        event.xclient.message_type = x11.XInternAtom(dpy, b"WM_PROTOCOLS", 0)
        event.xclient.format = 32
        event.xclient.data[0] = x11.XInternAtom(dpy, b"WM_DELETE_WINDOW", 0)
        x11.XSendEvent(dpy, window, 0, 0, ctypes.byref(event))
        x11.XFlush(dpy)
    finally:
        x11.XCloseDisplay(dpy)


def _wait_for_text(path, text: str, timeout: float, proc) -> None:
    deadline = time.monotonic() + timeout
    while text not in (path.read_text() if path.exists() else ""):
        assert proc.poll() is None, f"exited {proc.returncode} while waiting for {text!r}:\n{path.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"no {text!r} after {timeout} s:\n{path.read_text()[-3000:]}"
        time.sleep(0.2)


def test_display_check_agrees_with_qt(x_display):
    """Where the check finds nothing wrong, Qt's xcb plugin starts (it aborts the process otherwise)."""
    env = _x_env(x_display)
    assert display_problem(env) is None
    proc = subprocess.run([sys.executable, "-c", "from PyQt5.QtWidgets import QApplication; "
                           "print(QApplication([]).platformName())"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "xcb", proc.stderr[-2000:]
    problem = display_problem({**env, "DISPLAY": ":987"})  # no server there
    assert problem and "no X server answers on DISPLAY=:987" in problem


def test_a_person_labels_with_real_key_presses_and_closing_the_window_ends_the_run(x_display, tmp_path):
    from drlhp.pref_db import PrefDB

    run_dir = tmp_path / "run"
    out = tmp_path / "stdout.txt"
    with open(out, "w") as f, open(tmp_path / "stderr.txt", "w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(REPO / "run.py"), "--env", "MovingDot-v0", "--n_envs", "4", "--segment_length", "5",
             "--n_initial_prefs", "3", "--n_initial_epochs", "1", "--n_predictors", "1", "--reward_batch_size", "2",
             "--n_labels", "0", "--million_timesteps", "5", "--log_interval", "1", "--run_dir", str(run_dir)],
            cwd=REPO, env=_x_env(x_display), stdout=f, stderr=err, start_new_session=True)
    try:
        _wait_for_text(out, "[prefs] first pair on screen", 120, proc)
        window = _find_window(x_display, 10, proc)
        _xdotool(x_display, "windowfocus", "--sync", window)
        # left better, right better, can't tell (discarded), equal, undo it, then left better
        for key in ("Left", "d", "s", "w", "u", "a"):
            _xdotool(x_display, "key", key)
            time.sleep(0.3)
        # the last answer is held 5 s for undo, then sent: the predictor has its 3 and pretrains, the
        # policy trains on its reward
        _wait_for_text(out, "[policy]", 120, proc)
        _close_window(x_display, window)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)
    stdout, stderr = out.read_text(), (tmp_path / "stderr.txt").read_text()
    assert code == 0, stderr[-3000:]
    assert "the labelling window was closed" in stdout and "Traceback" not in stderr
    assert "free(): invalid pointer" not in stderr  # Qt + TensorFlow in one process (gui.application)
    assert json.loads((run_dir / "status.json").read_text())["status"] == "interrupted"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["labelling_window_closed"] is True and summary["answers_undone"] == 1
    db = PrefDB.load(run_dir / "prefs" / "prefs.npz")
    entries = sorted(db.entries("train") + db.entries("val"), key=lambda e: e.order)
    assert [e.mu for e in entries] == [(1.0, 0.0), (0.0, 1.0), (1.0, 0.0)]
    assert list((run_dir / "checkpoints").glob("policy-*.npz")), "no policy checkpoint saved"
    assert (run_dir / "reward_predictor" / "reward_predictor.npz").is_file()
