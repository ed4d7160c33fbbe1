"""Driving the labelling window from outside its process, on a real X server: what the Xvfb test
(tests/test_gui_xvfb.py) and the labelling-rate benchmark (bench/gui_label_rate.py) share.

    install_x_tools()          Xvfb, xdotool and the xcb libraries Qt needs, by apt-get where missing (root)
    xvfb()                     context manager: a fresh Xvfb on a free display number -> ":N"
    xdotool(display, *args)    run xdotool (key presses go through the XTEST extension, like a keyboard)
    find_window(display, title, timeout)
    close_window(display, window)   WM_DELETE_WINDOW, as a window manager's close button sends it
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
import time

from pref_interface.display import README_PACKAGES, missing_xcb_libraries
from tests.support.apt import apt_install

APT_PACKAGES = ("xvfb", "xdotool", *README_PACKAGES)


def install_x_tools() -> str | None:
    """Make Xvfb, xdotool and Qt's xcb libraries present; None when they are, else why not."""
    if shutil.which("Xvfb") and shutil.which("xdotool") and not missing_xcb_libraries():
        return None
    why = apt_install(APT_PACKAGES, timeout=300)
    if why:
        return why
    if missing_xcb_libraries():
        return f"Qt's xcb plugin still misses {missing_xcb_libraries()} after installing"
    return None


@contextlib.contextmanager
def xvfb(screen: str = "1280x1024x24"):
    """A fresh Xvfb (it picks a free display number itself: -displayfd); yields ":N"."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", screen, "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    try:
        number = b""
        while not number.endswith(b"\n"):
            chunk = os.read(read_fd, 16)  # Xvfb writes the number once it accepts connections
            if not chunk:
                raise RuntimeError(f"Xvfb exited ({proc.wait()}) before it was ready")
            number += chunk
        yield f":{int(number)}"
    finally:
        os.close(read_fd)
        proc.terminate()
        proc.wait(timeout=10)


def xdotool(display: str, *args) -> str:
    proc = subprocess.run(["xdotool", *map(str, args)], env={**os.environ, "DISPLAY": display},
                          capture_output=True, text=True, timeout=20)
    return proc.stdout.strip()


def find_window(display: str, title: str, timeout: float, alive=lambda: True) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = xdotool(display, "search", "--name", title)
        if found:
            return int(found.split()[0])
        if not alive():
            raise RuntimeError(f"the process ended before a window named {title!r} appeared")
        time.sleep(0.2)
    raise TimeoutError(f"no window named {title!r} after {timeout} s")


def close_window(display: str, window: int) -> None:
    """Send WM_DELETE_WINDOW, as a window manager does when the close button is clicked (Xvfb runs no
    window manager, and xdotool 3.2016 has no command for it)."""
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
    if not dpy:
        raise RuntimeError(f"cannot open display {display}")
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
