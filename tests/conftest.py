import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = Path(__file__).resolve().parent.parent


def default_sigint() -> None:
    """preexec_fn for a child that must take Ctrl-C: a shell's background job (nohup, `&` without job
    control) starts with SIGINT ignored, and Python then installs no KeyboardInterrupt handler."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(*args, timeout=600, check=False, env=None):
    """Run ``python run.py ARGS`` as a user would; returns the CompletedProcess."""
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"run.py {' '.join(map(str, args))} exited {proc.returncode}\n"
                             f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture
def cli():
    return run_cli
