"""drlhp.processes.profiling (--profile) in-process; the end-to-end pipeline test checks the files of a real run."""
import pstats

import pytest

from drlhp.processes.profiling import profiled


def _busy():
    return sum(i * i for i in range(200_000))


def test_profile_names_the_work_and_its_share(tmp_path):
    with profiled(tmp_path, "worker"):
        _busy()
    text = (tmp_path / "worker.txt").read_text()
    assert text.startswith("worker: ") and "most time of their own" in text
    cumulative = text.split("most cumulative time:")[1]
    assert "_busy" in cumulative
    stats = pstats.Stats(str(tmp_path / "worker.prof"))
    assert any(name == "_busy" for (_f, _l, name) in stats.stats)
    assert not list(tmp_path.glob(".*tmp"))  # written through temp files, renamed


def test_the_body_error_is_kept_and_the_profile_still_written(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with profiled(tmp_path, "crashing"):
            1 / 0
    assert (tmp_path / "crashing.txt").exists()


def test_a_profile_that_cannot_be_saved_costs_a_warning_only(tmp_path, capsys):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    with profiled(blocker, "worker"):
        value = _busy()
    assert value > 0
    assert "warning: profile not saved" in capsys.readouterr().err
    with pytest.raises(KeyError):  # and an error of the body is still the one raised
        with profiled(blocker, "worker"):
            raise KeyError("the real error")


def test_no_dir_no_profile(tmp_path):
    with profiled(None, "worker"):
        _busy()
    assert not list(tmp_path.iterdir())
