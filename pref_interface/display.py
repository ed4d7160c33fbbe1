"""Can a Qt window open here? Checked before Qt is imported, so that a missing display or missing
system library is one line to the user instead of Qt's abort ("could not load the Qt platform plugin
xcb ... Aborted (core dumped)").

    display_problem(env)      None, or why no window can open (no DISPLAY, no X server, missing libraries)
    missing_xcb_libraries()   the shared libraries that Qt's xcb plugin (from the PyQt5 wheel) cannot find
    require_display()         raise DisplayError with that one line

Imports neither Qt nor TensorFlow: the run's parent process calls it. The PyQt5 wheel bundles Qt
itself but not the X11/xcb libraries its ``xcb`` platform plugin links against; on a fresh Debian or
Ubuntu machine some are missing (seen: libxcb-icccm4, libxcb-keysyms1, libxcb-xinerama0).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

# soname -> the Debian/Ubuntu package that ships it (the libraries Qt 5.15's xcb plugin links against)
XCB_PACKAGES = {
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb.so.1": "libxcb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
}
# The packages docs/labelling.md asks for: the three seen missing on fresh machines and their usual companions.
README_PACKAGES = ("libxcb-icccm4", "libxcb-keysyms1", "libxcb-xinerama0", "libxcb-image0",
                   "libxcb-render-util0", "libxkbcommon-x11-0")


class DisplayError(Exception):
    """No window can open here (one-line message naming the fix)."""


def _qt_dir() -> Path | None:
    """PyQt5's bundled Qt (…/PyQt5/Qt5), found without importing PyQt5."""
    spec = importlib.util.find_spec("PyQt5")
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        for name in ("Qt5", "Qt"):
            if (Path(loc) / name / "plugins").is_dir():
                return Path(loc) / name
    return None


def _ldd_missing(paths: list[Path]) -> list[str]:
    """Sonames that ``ldd`` reports as "not found" for these files, in order, without repeats."""
    missing: list[str] = []
    for path in paths:
        if not path.is_file():
            continue
        try:
            out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            return []
        missing += parse_ldd_missing(out)
    return list(dict.fromkeys(missing))


def parse_ldd_missing(ldd_output: str) -> list[str]:
    """``libfoo.so.1 => not found`` lines of ldd's output -> ["libfoo.so.1"]."""
    return [line.split("=>")[0].strip() for line in ldd_output.splitlines() if "=> not found" in line]


def _dlopen_missing() -> list[str]:
    """Without ldd: the known libraries that the dynamic loader cannot open."""
    missing = []
    for soname in XCB_PACKAGES:
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append(soname)
    return missing


def missing_xcb_libraries() -> list[str]:
    """The shared libraries Qt's xcb platform plugin needs and this machine lacks ([] if none, or if
    PyQt5 is not installed: that is reported by its import)."""
    qt = _qt_dir()
    if qt is None:
        return []
    plugin = qt / "plugins" / "platforms" / "libqxcb.so"
    if shutil.which("ldd"):
        return _ldd_missing([plugin, qt / "lib" / "libQt5XcbQpa.so.5"])
    return _dlopen_missing()


def install_hint(missing: list[str]) -> str:
    packages = list(dict.fromkeys(XCB_PACKAGES.get(s, s) for s in missing))
    return f"sudo apt-get install -y {' '.join(packages)}"


def _x_server_answers(display: str) -> bool | None:
    """Whether an X server accepts a connection at ``display`` (None: cannot tell, libxcb missing)."""
    name = ctypes.util.find_library("xcb") or "libxcb.so.1"
    try:
        xcb = ctypes.CDLL(name)
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)
    try:
        return xcb.xcb_connection_has_error(conn) == 0
    finally:
        xcb.xcb_disconnect(conn)


def qt_platform(env=None) -> str:
    """The Qt platform plugin Qt will pick: QT_QPA_PLATFORM if set, else xcb (Qt 5's default on Linux,
    also under Wayland, where it goes through XWayland's DISPLAY)."""
    env = os.environ if env is None else env
    return env.get("QT_QPA_PLATFORM", "").split(":")[0].strip() or "xcb"


def display_problem(env=None, fix: str = "") -> str | None:
    """None when a window can open, else one line saying why and how to fix it. ``fix`` names the
    other way out (run.py: "pass --synthetic_prefs ...")."""
    env = os.environ if env is None else env
    platform = qt_platform(env)
    alt = f"; or {fix}" if fix else ""
    if platform == "wayland":
        return None if env.get("WAYLAND_DISPLAY") else (
            f"no display for the labelling window: QT_QPA_PLATFORM=wayland but WAYLAND_DISPLAY is not set; "
            f"set WAYLAND_DISPLAY{alt}")
    if platform != "xcb":  # chosen on purpose: offscreen, vnc, eglfs, ...
        return None
    display = env.get("DISPLAY", "")
    if not display:
        wayland = (" (only WAYLAND_DISPLAY is; Qt 5 draws through XWayland's DISPLAY, or set "
                   "QT_QPA_PLATFORM=wayland)") if env.get("WAYLAND_DISPLAY") else ""
        return (f"no display for the labelling window: DISPLAY is not set{wayland}; set DISPLAY (DISPLAY=:0 "
                f"on the machine's own screen, or ssh -X){alt}")
    missing = missing_xcb_libraries()
    if missing:
        return (f"Qt's xcb platform plugin cannot load: missing {', '.join(missing)}; install them with: "
                f"{install_hint(missing)}{alt}")
    if _x_server_answers(display) is False:
        return f"no X server answers on DISPLAY={display}: start one, or set DISPLAY to a running one{alt}"
    return None


def require_display(fix: str = "") -> None:
    """Raise DisplayError (one line) unless a Qt window can open; call before importing Qt widgets."""
    problem = display_problem(fix=fix)
    if problem:
        raise DisplayError(problem)
