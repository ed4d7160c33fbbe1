"""A quiet start (issue 32, item 4): a run's terminal shows drlhp's lines, not TensorFlow's or absl's own
(`I0000 ... oneDNN custom operations are on`, `E0000 ... remapper failed`, absl's `WARNING: All log messages
before absl::InitializeLog()`); a real error still shows; DRLHP_TF_LOGS=1 brings them back; the run's
stderr.log keeps them all (drlhp.processes.tf_setup, drlhp.processes.output_tee)."""
import re

import pytest

from drlhp.processes.output_tee import TfLogFilter
from drlhp.processes.tf_setup import is_tf_log_line

BANNER = (b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
          b"I0000 00:00:1795681165.272870    8161 port.cc:153] oneDNN custom operations are on. You may see "
          b"slightly different numerical results. To turn them off, set `TF_ENABLE_ONEDNN_OPTS=0`.\n")
REMAPPER = (b"E0000 00:00:1795690000.123456    8162 meta_optimizer.cc:967] remapper failed: INVALID_ARGUMENT: "
            b"Mutation::Apply error: fanout 'gradient_tape/LeakyReluGrad' exist for missing node 'BiasAdd'.\n")
OURS = b"[reward] pretraining on 20 preferences\n"
TRACEBACK = b'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: a real error\n'
# what the issue asks of the terminal: no line that TensorFlow or absl wrote
TF_LINE = re.compile(r"^(\([^)]*\) )?[IWEF]\d{4} |absl::InitializeLog", re.MULTILINE)


@pytest.mark.parametrize("line", [
    BANNER.splitlines()[0], BANNER.splitlines()[1], REMAPPER.strip(),
    b"W1126 08:00:01.123456   99 cpu_feature_guard.cc:210] This TensorFlow binary is optimized",
    b"(RewardPredictorActor pid=4242) I0000 00:00:1795681165.272870    8161 port.cc:153] oneDNN custom",
    b"\x1b[36m(pid=4242)\x1b[0m I0000 00:00:1795681165.272870    8161 port.cc:153] oneDNN custom",
    b"WARNING:absl:Compiled the loaded model, but the compiled metrics have yet to be built."])
def test_tensorflows_own_lines_are_recognised(line):
    assert is_tf_log_line(line)


@pytest.mark.parametrize("line", [
    OURS.strip(), b"F0000 00:00:1795681165.272870    8161 check.cc:1] Check failed: a fatal one shows",
    b"Traceback (most recent call last):", b"ValueError: I0000 in a message", b"ERROR:absl:an error shows",
    b"[run] the policy process failed: E0000", b"I0000 not absl's format", b""])
def test_other_lines_are_not(line):
    assert not is_tf_log_line(line)


def test_the_filter_drops_them_from_a_stream_in_pieces():
    stream = BANNER + OURS + REMAPPER + TRACEBACK + BANNER
    for size in (1, 7, 64, len(stream)):  # however the pipe cuts it
        quiet = TfLogFilter()
        out = b"".join(quiet.feed(stream[i:i + size]) for i in range(0, len(stream), size)) + quiet.flush()
        assert out == OURS + TRACEBACK, (size, out)


def test_a_partial_line_is_not_held_back():
    quiet = TfLogFilter()
    assert quiet.feed(b"[labeller] which clip is better? ") == b"[labeller] which clip is better? "
    assert quiet.feed(b"left\n") == b"left\n"
    assert quiet.feed(b"Input") == b"" and quiet.holding  # might become TensorFlow's: waits (HOLD_S at most)
    assert quiet.flush() == b"Input"
    assert quiet.feed(b": I0000 00:00:1.2 3 a.cc:1] x\n") == b": I0000 00:00:1.2 3 a.cc:1] x\n"  # its rest shows


@pytest.mark.slow
def test_a_run_prints_only_drlhps_lines_and_its_log_keeps_tensorflows(cli, tmp_path):
    """A tiny real run of the three processes (test_pipeline.SMALL): nothing TensorFlow or absl wrote reaches
    the terminal, from the parent or any child; the run's stderr.log has them (where this TensorFlow prints
    its banner: it does on x86-64 with oneDNN on)."""
    from test_pipeline import SMALL

    run_dir = tmp_path / "run"
    proc = cli("--env", "MovingDot-v0", "--synthetic_prefs", *SMALL, "--n_initial_prefs", 20, "--run_dir", run_dir,
               timeout=600, check=True)
    terminal = proc.stdout + proc.stderr
    assert not TF_LINE.search(terminal), TF_LINE.search(terminal).group(0)
    assert "[reward] pretraining on" in proc.stdout and "[run] finished" in proc.stdout
    log = (run_dir / "stderr.log").read_text()
    if "absl::InitializeLog" in log:
        assert re.search(r"^I0000 .*oneDNN custom operations are on", log, re.MULTILINE), log[-2000:]


ERROR_SCRIPT = r"""
import multiprocessing as mp, os, sys
from drlhp.processes.output_tee import OutputTee

def child(banner):
    os.write(2, banner)  # as TensorFlow's C++ side does, into the pipe the child inherits
    raise ValueError("a real error in a child")

if __name__ == "__main__":
    tee = OutputTee(sys.argv[1])
    p = mp.get_context("spawn").Process(target=child, args=(%r,))
    p.start()
    p.join()
    print("[run] the child exited", p.exitcode, file=sys.stderr, flush=True)
    os.write(2, b"partial line at the end: no newline")
    tee.close()
"""


@pytest.mark.parametrize("tf_logs", ["", "1"])
def test_a_real_error_still_shows(tmp_path, tf_logs):
    """Through the output tee, a spawned child's traceback reaches the terminal in full and its TensorFlow
    lines do not (with DRLHP_TF_LOGS=1 they do); stderr.log has both; a last partial line is not lost."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    script = tmp_path / "script.py"
    script.write_text(ERROR_SCRIPT % (BANNER + REMAPPER,))
    env = {**os.environ, "PYTHONPATH": str(REPO), "DRLHP_TF_LOGS": tf_logs}
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=REPO, capture_output=True, timeout=300,
                          env=env)
    err = proc.stderr.decode()
    assert "Traceback (most recent call last)" in err and "ValueError: a real error in a child" in err, err
    assert "[run] the child exited 1" in err and err.endswith("partial line at the end: no newline"), err
    if tf_logs:
        assert (BANNER + REMAPPER).decode() in err, err
    else:
        assert not TF_LINE.search(err), err
    log = (tmp_path / "stderr.log").read_text()
    assert "absl::InitializeLog" in log and "remapper failed" in log and "ValueError: a real error" in log
