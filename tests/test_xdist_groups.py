"""The suite's own arrangement on two workers (docs/tests.md, "How the suite runs"), checked on a made-up suite
run with this conftest.py and pytest.ini's options: an xdist_group's tests, and the tests that share a
module-scoped fixture, each run on one worker; each worker starts with one of the two learning tests. These
fail silently otherwise: with pytest 9.2, pytest-xdist 3.8.0's groups fell apart without a word (conftest.py
says why)."""
import json
import os
import shutil
import subprocess
import sys

from conftest import REPO

RECORD = '''
import json, os, pathlib, time, pytest

def record(name):
    out = pathlib.Path(os.environ["RECORD_DIR"]) / (name + ".json")
    out.write_text(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER"), "start": time.time()}))
'''

GROUPED = RECORD + '''
pytestmark = pytest.mark.xdist_group("together")

@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    record(f"grouped{i}")
'''

SHARED_FIXTURE = RECORD + '''
@pytest.fixture(scope="module")
def made_once():
    return os.getpid()

@pytest.mark.parametrize("i", range(4))
def test_shares(made_once, i):
    assert made_once == os.getpid()
    record(f"shares{i}")

def test_alone():
    record("alone")
'''

FREE = RECORD + '''
@pytest.mark.parametrize("i", range(8))
def test_free(i):
    record(f"free{i}")
    time.sleep(0.2)
'''

LEARNING = RECORD + '''
def test_a2c_moves_the_dot_to_the_centre():
    record("a2c")
    time.sleep(1)

def test_moving_dot_learns_from_synthetic_preferences():
    record("prefs")
    time.sleep(1)
'''


def test_two_workers_keep_groups_together_and_start_with_the_learning_tests(tmp_path):
    suite = tmp_path / "suite"
    (suite / "tests").mkdir(parents=True)
    shutil.copyfile(REPO / "tests" / "conftest.py", suite / "tests" / "conftest.py")
    shutil.copyfile(REPO / "pytest.ini", suite / "pytest.ini")
    for name, text in (("test_free", FREE), ("test_grouped", GROUPED), ("test_learning", LEARNING),
                       ("test_shared_fixture", SHARED_FIXTURE)):
        (suite / "tests" / f"{name}.py").write_text(text)
    records = tmp_path / "records"
    records.mkdir()
    env = {**os.environ, "RECORD_DIR": str(records)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "tests"],
                          cwd=suite, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ran = {p.stem: json.loads(p.read_text()) for p in records.glob("*.json")}
    assert len(ran) == 8 + 4 + 2 + 4 + 1, sorted(ran)
    first = {w: min((r["start"], name) for name, r in ran.items() if r["worker"] == w)[1] for w in ("gw0", "gw1")}
    assert sorted(first.values()) == ["a2c", "prefs"], first  # each worker began with a learning test
    assert len({ran[f"grouped{i}"]["worker"] for i in range(4)}) == 1  # the xdist_group on one worker
    assert len({ran[f"shares{i}"]["worker"] for i in range(4)}) == 1  # the module-scoped fixture's users too
