"""The TensorFlow kernel library chosen for the machine (--reward_onednn auto|on|off): the rule on the CPU's
flags, the flag's spellings, what a process really runs, what a run records, and that the choice is no
settings change on resume."""
import dataclasses
import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import REPO
from drlhp.config import RunConfig
from drlhp.config.cli import build_parser, config_from_args
from drlhp.config.reward import RewardConfig
from drlhp.processes.cpu import choose_kernels, choose_precision, cpu_flags, cpu_model, default_kernels

XEON = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz
cpu MHz\t\t: 2700.000
flags\t\t: fpu sse2 avx avx2 fma avx512f avx512dq avx512_bf16 amx_bf16
"""
EPYC_ZEN4 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx avx2 fma avx512f avx512dq avx512_bf16
"""
XEON_NO_BF16 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) CPU @ 2.00GHz
flags\t\t: fpu sse2 avx avx2 fma avx512f avx512dq
"""
EPYC_AVX2 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B12
cpu MHz\t\t: 2249.998
flags\t\t: fpu sse2 avx avx2 fma
"""
ARM = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics
"""


def test_auto_takes_onednn_with_avx512_and_eigen_with_avx2_only():
    assert cpu_model(XEON).startswith("Intel(R) Xeon(R)") and "avx512f" in cpu_flags(XEON)
    xeon, epyc, arm = (choose_kernels("auto", cpu_flags(t)) for t in (XEON, EPYC_AVX2, ARM))
    assert (xeon.onednn, xeon.library) == (True, "oneDNN") and "avx512f" in xeon.reason
    assert (epyc.onednn, epyc.library) == (False, "Eigen") and "avx2 only" in epyc.reason
    assert arm.onednn is None and "no x86" in arm.reason  # another architecture: TensorFlow's default
    for text in (XEON, EPYC_AVX2, ARM):  # on and off override the CPU; bools (older configs) read as on/off
        assert choose_kernels("on", cpu_flags(text)).library == choose_kernels(True).library == "oneDNN"
        assert choose_kernels("off", cpu_flags(text)).library == choose_kernels(False).library == "Eigen"
    with pytest.raises(ValueError):
        choose_kernels("fast")


def test_bfloat16_where_the_cpu_computes_it_and_the_predictor_runs_onednn():
    """--reward_bfloat16 auto: bfloat16 with AVX512_BF16 or AMX under oneDNN's kernels, float32 on CPUs
    without those units, under Eigen's kernels, or on another architecture; on and off (and the bools of
    older configs) override the CPU."""
    chosen = {name: choose_precision("auto", "auto", cpu_flags(text)) for name, text in
              (("xeon", XEON), ("zen4", EPYC_ZEN4), ("xeon_no_bf16", XEON_NO_BF16), ("epyc", EPYC_AVX2), ("arm", ARM))}
    assert {name: c.bfloat16 for name, c in chosen.items()} == {"xeon": True, "zen4": True, "xeon_no_bf16": False,
                                                                 "epyc": False, "arm": False}
    assert "avx512_bf16" in chosen["zen4"].reason and "no AVX512_BF16" in chosen["epyc"].reason
    assert chosen["xeon"].describe().startswith("bfloat16 convolutions (auto: ")
    eigen = choose_precision("auto", "off", cpu_flags(XEON))
    assert not eigen.bfloat16 and "Eigen" in eigen.reason
    for text in (XEON, EPYC_AVX2, ARM):
        assert choose_precision("on", "auto", cpu_flags(text)).bfloat16 and choose_precision(True, "off").bfloat16
        assert not choose_precision("off", "auto", cpu_flags(text)).bfloat16 and not choose_precision(False).bfloat16
    with pytest.raises(ValueError, match="bfloat16"):
        choose_precision("fast")


def test_the_bfloat16_flag_and_its_presets():
    parser = build_parser()

    def bfloat16(*argv, env="MovingDot-v0"):
        from drlhp.config.presets import with_preset

        return config_from_args(parser.parse_args(with_preset(["--env", env, *argv])[0])).reward.bfloat16

    assert bfloat16() == RewardConfig().bfloat16 == "auto" == bfloat16("--preset", "none")
    assert bfloat16("--reward_bfloat16") == "on" and bfloat16("--no-reward_bfloat16") == "off"
    assert bfloat16(env="PongNoFrameskip-v4") == "off"  # not checked on Pong's predictor (docs/results/speed.md)
    with pytest.raises(SystemExit):
        parser.parse_args(["--env", "MovingDot-v0", "--reward_bfloat16", "maybe"])


def test_a_run_recorded_in_float32_resumes_in_float32_unless_told(tmp_path):
    """A config.json written before "auto" holds false, or (before the setting) nothing: either reads as
    "off", what those runs computed in, so resuming with "off" is no change, and "auto" (today's default,
    bfloat16 on some CPUs) or "on" needs --resume_with_changes."""
    from drlhp.run.checks import UsageError, check_resume

    recorded = RunConfig(env="MovingDot-v0", run_dir=str(tmp_path / "run"))
    with_false, without = recorded.to_dict(), recorded.to_dict()
    with_false["reward"]["bfloat16"] = False
    del without["reward"]["bfloat16"]
    for before in (with_false, without):
        record = SimpleNamespace(dir=tmp_path / "run", read_json=lambda name, b=before: b)
        check_resume(dataclasses.replace(recorded, reward=RewardConfig(bfloat16="off")), record, ())
        for setting in ("auto", "on"):
            with pytest.raises(UsageError, match=f"reward.bfloat16 'off' -> '{setting}'"):
                check_resume(dataclasses.replace(recorded, reward=RewardConfig(bfloat16=setting)), record, ())


def test_the_policy_keeps_tensorflows_default_unless_the_environment_says():
    assert default_kernels({}, "x86_64").library == "oneDNN"
    assert default_kernels({"TF_ENABLE_ONEDNN_OPTS": "0"}, "x86_64").library == "Eigen"
    assert default_kernels({}, "aarch64").onednn is None


def test_the_flag_is_auto_by_default_and_keeps_its_old_spellings():
    parser = build_parser()

    def onednn(*argv):
        return config_from_args(parser.parse_args(["--env", "MovingDot-v0", *argv])).reward.onednn

    assert onednn() == RewardConfig().onednn == "auto"
    assert onednn("--reward_onednn") == "on" and onednn("--no-reward_onednn") == "off"
    assert [onednn("--reward_onednn", v) for v in ("auto", "on", "off")] == ["auto", "on", "off"]
    with pytest.raises(SystemExit):
        parser.parse_args(["--env", "MovingDot-v0", "--reward_onednn", "maybe"])


def test_a_process_runs_the_library_it_was_given():
    code = ("import sys; from drlhp.processes.tf_setup import configure_tensorflow, kernels_in_use; "
            "configure_tensorflow(1, 1, onednn=sys.argv[1]); print(kernels_in_use())")
    for setting, library in (("off", "Eigen"), ("on", "oneDNN")):
        out = subprocess.run([sys.executable, "-c", code, setting], cwd=REPO, capture_output=True, text=True,
                             timeout=300, env={"PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "2"})
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip().splitlines()[-1] == f"{library} (--reward_onednn {setting})"


def test_the_kernel_choice_is_no_settings_change_on_resume(tmp_path):
    """auto resolves per machine (a resume elsewhere may choose the other library), and a config.json
    written before auto existed holds a bool: neither needs --resume_with_changes."""
    from drlhp.run.checks import check_resume

    recorded = RunConfig(env="MovingDot-v0", run_dir=str(tmp_path / "run"))
    old = recorded.to_dict()
    old["reward"]["onednn"] = False
    for before in (old, recorded.to_dict()):
        record = SimpleNamespace(dir=tmp_path / "run", read_json=lambda name, b=before: b)
        for setting in ("auto", "on", "off"):
            check_resume(dataclasses.replace(recorded, reward=RewardConfig(onednn=setting)), record, ())


def test_pretraining_records_and_says_the_library_it_ran(cli, tmp_path):
    """pretrain_reward_predictor (the predictor in run.py's own process) follows --reward_onednn, prints the
    choice at start and records it: run.json's sitting (what was chosen, and why) and summary.json (what
    TensorFlow reported)."""
    from drlhp.processes.messages import Preference, Segment
    from drlhp.reward.pref_db import PrefDB

    rng = np.random.default_rng(0)
    db = PrefDB(max_prefs=100, seed=0)
    for i in range(12):
        a, b = (Segment(rng.integers(0, 255, (3, 84, 84, 4), dtype=np.uint8), np.zeros((3, 2, 2), np.uint8),
                        np.full(3, float(j), np.float32), "MovingDot-v0", 0, 2 * i + j) for j in (0, 1))
        db.add(Preference(a, b, (0.0, 1.0)))
    db.save(tmp_path / "prefs" / "prefs.npz")
    run_dir = tmp_path / "pre"
    proc = cli("pretrain_reward_predictor", "--env", "MovingDot-v0", "--load_prefs_dir", tmp_path / "prefs",
               "--n_predictors", 1, "--reward_batch_size", 2, "--n_initial_epochs", 1, "--tf_intra_threads", 1,
               "--no-reward_onednn", "--reward_bfloat16", "auto", "--run_dir", run_dir, timeout=300, check=True)
    assert "[run] TensorFlow kernels on " in proc.stdout and "predictor Eigen (--reward_onednn off)" in proc.stdout
    # auto under Eigen's kernels: float32 on any CPU, said and recorded with why
    assert "the reward network's float32 convolutions (auto: " in proc.stdout
    assert json.loads((run_dir / "summary.json").read_text())["predictor_precision"].startswith("float32 ")
    sitting = json.loads((run_dir / "run.json").read_text())["sittings"][-1]
    assert sitting["machine"]["predictor_kernels"]["library"] == "Eigen"
    assert sitting["machine"]["predictor_precision"]["bfloat16"] is False
    assert sitting["machine"]["cpu"] == cpu_model()
    assert json.loads((run_dir / "summary.json").read_text())["predictor_kernels"].startswith("Eigen ")
    assert json.loads((run_dir / "config.json").read_text())["reward"]["onednn"] == "off"
