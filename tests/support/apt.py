"""Debian packages the slow tests and benches need, installed where missing (as root, by apt-get).

    apt_install(packages, timeout=600) -> None when apt-get installed them, else one line saying why not

Used by tests/support/x11.py (Xvfb, xdotool, Qt's xcb libraries) and tests/support/browser.py (chromium, chromedriver),
so the suite sets up what it needs on a fresh machine, and skips with the reason where it cannot.
"""
from __future__ import annotations

import os
import shutil
import subprocess


def apt_install(packages, timeout: float = 600) -> str | None:
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return f"{', '.join(packages)}: missing, and not root or no apt-get to install them"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    try:
        if subprocess.run(cmd, env=env, capture_output=True, timeout=timeout).returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=300)  # a fresh machine
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
            if proc.returncode != 0:
                return f"apt-get install failed: {' '.join(proc.stderr.strip().splitlines()[-1:])}"
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"apt-get: {e}"
    return None
