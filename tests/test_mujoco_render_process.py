"""tests/test_mujoco_render.py in an interpreter of its own: offscreen OpenGL (EGL) in a process that has imported
TensorFlow crashes it (a segmentation fault, envs/mujoco_render.py), and the suite's workers import TensorFlow for
other tests. The render tests pass there, or skip naming the system packages a machine without EGL lacks."""
import os
import subprocess
import sys
from pathlib import Path


def test_the_render_tests_pass_in_an_interpreter_without_tensorflow():
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           "tests/test_mujoco_render.py"], cwd=root, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DRLHP_RENDER_TESTS": "1"})
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout or " skipped" in proc.stdout, tail
