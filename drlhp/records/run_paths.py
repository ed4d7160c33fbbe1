"""Where things are in a run directory: the one place their names are spelled.

``RunPaths(run_dir).summary`` and so on; the class attributes in capitals are the same names relative
to a run directory (``RunPaths.PREFS`` is ``prefs/prefs.npz``), for code that looks for a file under a
directory that may or may not be a run directory (``drlhp.reward.checkpoint.find_file``).
What each file holds: drlhp/records/run_record.py. Imports nothing heavy: floyd (no TensorFlow) uses it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunPaths:
    root: Path

    RUN = Path("run.json")
    CONFIG = Path("config.json")
    COMMAND = Path("command.txt")
    CODE_VERSION = Path("code_version.json")
    STATUS = Path("status.json")
    SUMMARY = Path("summary.json")
    STDOUT = Path("stdout.log")
    STDERR = Path("stderr.log")
    PROGRESS = Path("progress.csv")  # the policy's metrics
    PROGRESS_REWARD = Path("progress_reward.csv")  # the reward predictor's
    PROGRESS_PREFS = Path("progress_prefs.csv")  # the preference interface's (labels given)
    TB = Path("tb")
    CHECKPOINTS = Path("checkpoints")
    MILESTONES = Path("milestones")
    PREFS = Path("prefs") / "prefs.npz"
    LABELLER_STATE = Path("prefs") / "labeller_state.json"
    PREDICTOR = Path("reward_predictor") / "reward_predictor.npz"
    PROFILE = Path("profile")
    CURVES = Path("curves.png")
    # the files that make a folder a run directory, in the order a reader wants them
    RECORD_FILES = (RUN, CONFIG, STATUS, COMMAND, CODE_VERSION, SUMMARY)

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root))

    def __truediv__(self, name: str | Path) -> Path:
        return self.root / name

    @property
    def run_json(self) -> Path:
        return self.root / self.RUN

    @property
    def config(self) -> Path:
        return self.root / self.CONFIG

    @property
    def command(self) -> Path:
        return self.root / self.COMMAND

    @property
    def code_version(self) -> Path:
        return self.root / self.CODE_VERSION

    @property
    def status(self) -> Path:
        return self.root / self.STATUS

    @property
    def summary(self) -> Path:
        return self.root / self.SUMMARY

    @property
    def stdout_log(self) -> Path:
        return self.root / self.STDOUT

    @property
    def stderr_log(self) -> Path:
        return self.root / self.STDERR

    @property
    def tb(self) -> Path:
        return self.root / self.TB

    @property
    def checkpoints(self) -> Path:
        return self.root / self.CHECKPOINTS

    @property
    def milestones(self) -> Path:
        return self.root / self.MILESTONES

    @property
    def prefs(self) -> Path:
        return self.root / self.PREFS

    @property
    def labeller_state(self) -> Path:
        return self.root / self.LABELLER_STATE

    @property
    def predictor(self) -> Path:
        return self.root / self.PREDICTOR

    @property
    def profile(self) -> Path:
        return self.root / self.PROFILE

    @property
    def curves(self) -> Path:
        return self.root / self.CURVES
