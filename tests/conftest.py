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


# --- Two workers (docs/tests.md, "How the suite runs") --------------------------------------------------
# `make test` runs pytest -n 2 (pytest-xdist) with --dist loadgroup --no-loadscope-reorder (pytest.ini): a
# test goes to whichever worker is free, except that the tests of one xdist_group run one after another on
# one worker. Groups are marked in the test files where tests must not run beside each other (Ray, the
# displays); here every test that uses a module-scoped fixture is grouped by its file, so that the fixture
# (a shared run, a policy, a QApplication) is made once and its tests see it in their file's order.
# The two learning tests took 40% of the suite's time with their whole budgets (they now end once learned,
# --stop_at_success_rate; the preference one still pays its predictor's pretraining in full): a worker starts
# each of them first, so that neither is left running alone at the end.
LONGEST_FIRST = ("tests/test_learning.py::test_moving_dot_learns_from_synthetic_preferences",
                 "tests/test_learning.py::test_a2c_moves_the_dot_to_the_centre")


def _uses_a_module_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(d.scope in ("module", "package", "class")
                                    for defs in info.name2fixturedefs.values() for d in defs)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _uses_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
    if hasattr(config, "workerinput"):  # in an xdist worker: the order the scheduler hands tests out in

        def start_order(item) -> tuple[int, int]:
            if item.nodeid in LONGEST_FIRST:
                return 0, LONGEST_FIRST.index(item.nodeid)
            return (1 if item.get_closest_marker("slow") else 2), 0

        items.sort(key=start_order)  # stable: a file's tests keep their order


class _GroupsInNodeIds:
    """pytest-xdist 3.8.0 tells its scheduler a test's group by renaming the test "<node id>@<group>" through
    item._nodeid, which pytest 9.2 no longer reads (node ids are structured now; pytest-xdist issue #1386, fix
    proposed in PR #1388): without this, --dist loadgroup hands grouped tests to both workers, silently. The
    same renaming, through the structured id; it does nothing where pytest-xdist has renamed the test."""

    @pytest.hookimpl(trylast=True)  # after xdist's own hook
    def pytest_collection_modifyitems(self, items):
        for item in items:
            names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                     for m in item.iter_markers("xdist_group")}
            suffix = "@" + "_".join(sorted(names))
            if names and not item.nodeid.endswith(suffix):
                from _pytest.nodeid import NodeId  # pytest 9.2's structured ids (before 9.2 xdist's renaming works)

                item._id = NodeId.parse(item.nodeid + suffix)


def pytest_configure(config):
    if hasattr(config, "workerinput") and getattr(config.option, "loadgroup", False):
        config.pluginmanager.register(_GroupsInNodeIds(), "drlhp-xdist-groups")
