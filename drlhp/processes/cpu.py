"""What this machine's CPU is, from /proc/cpuinfo (no TensorFlow): its model, its instruction-set flags,
and the kernel library the reward predictor runs fastest with here (the core's peak FLOP rate, which only
bench/network_step.py needs, is computed there).

The kernel library (``choose_kernels``), measured with bench/network_step.py (docs/results/speed.md,
/work/shared/notes/performance.md), the predictor's training step on one thread:

    Intel Xeon, AVX-512 (AVX512_BF16)     oneDNN 28 ms, Eigen 87 ms
    AMD EPYC, AVX-512 (AVX512_BF16)       oneDNN 41 ms, Eigen 98 ms
    AMD EPYC, AVX2 only                   oneDNN 207-228 ms, Eigen 161-202 ms

so "auto" takes oneDNN where the CPU has AVX-512 (avx512f) and Eigen where it has no AVX-512 (x86-64);
elsewhere (no x86 flags: another architecture, or no /proc/cpuinfo) it leaves TensorFlow's default.
The policy's A2C update was faster with oneDNN on all three (39 vs 79, 53 vs 93 ms; on the AVX2-only
EPYC 169-171 vs 196-198 ms), so the policy keeps TensorFlow's default, which is oneDNN on x86-64.
"""
from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass

CPUINFO = "/proc/cpuinfo"
ONEDNN_SETTINGS = ("auto", "on", "off")
BFLOAT16_SETTINGS = ("auto", "on", "off")
BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")  # the x86 flags of CPUs that compute bfloat16 at speed


def cpuinfo_text(path: str = CPUINFO) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def cpuinfo_field(text: str, name: str) -> str | None:
    """The first ``name : value`` line's value in /proc/cpuinfo's text."""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == name:
            return value.strip()
    return None


def cpu_model(text: str | None = None) -> str:
    text = cpuinfo_text() if text is None else text
    return cpuinfo_field(text, "model name") or platform.processor() or platform.machine() or "unknown CPU"


def cpu_flags(text: str | None = None) -> set[str]:
    """The first core's instruction-set flags (x86's ``flags`` line; empty where there is none)."""
    text = cpuinfo_text() if text is None else text
    return set((cpuinfo_field(text, "flags") or "").split())


@dataclass(frozen=True)
class KernelChoice:
    """The CPU kernel library of one process's TensorFlow: ``onednn`` True (oneDNN), False (Eigen) or None
    (TensorFlow's default, left alone); ``library`` names it; ``reason`` says why (setting and CPU flags)."""

    setting: str
    onednn: bool | None
    library: str
    reason: str

    def describe(self) -> str:
        return f"{self.library} ({self.reason})"

    def to_dict(self) -> dict:
        return asdict(self)


def onednn_setting(value, name: str = "onednn") -> str:
    """--reward_onednn's (or --reward_bfloat16's) value as one of "auto", "on", "off": True/False (configs
    written before "auto" existed) read as on/off, None as auto."""
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return "on" if value else "off"
    if value not in ONEDNN_SETTINGS:
        raise ValueError(f"{name} must be one of {', '.join(ONEDNN_SETTINGS)} (or a bool), got {value!r}")
    return value


def choose_kernels(setting, flags: set[str] | None = None) -> KernelChoice:
    """The predictor's kernel library for ``setting`` ("auto", "on", "off"; see the module docstring)."""
    setting = onednn_setting(setting)
    if setting == "on":
        return KernelChoice(setting, True, "oneDNN", "--reward_onednn on")
    if setting == "off":
        return KernelChoice(setting, False, "Eigen", "--reward_onednn off")
    flags = cpu_flags() if flags is None else flags
    if "avx512f" in flags:
        return KernelChoice(setting, True, "oneDNN", "auto: the CPU has AVX-512 (avx512f)")
    if flags:  # x86: AVX2 or older
        return KernelChoice(setting, False, "Eigen", "auto: the CPU has no AVX-512 (no avx512f"
                            + (", avx2 only)" if "avx2" in flags else ", no avx2)"))
    return KernelChoice(setting, None, "TensorFlow's default", "auto: no x86 CPU flags in /proc/cpuinfo")


@dataclass(frozen=True)
class PrecisionChoice:
    """What the predictor's convolutions compute in: ``bfloat16`` True (bfloat16) or False (float32);
    ``reason`` says why (setting and CPU flags)."""

    setting: str
    bfloat16: bool
    reason: str
    convolutions: bool = True  # False: the predictor is the MLP of a Box-action env (float32 throughout)

    def describe(self) -> str:
        if not self.convolutions:
            return "float32 MLP (no convolutions: --reward_bfloat16 does not apply)"
        return f"{'bfloat16' if self.bfloat16 else 'float32'} convolutions ({self.reason})"

    def for_mlp(self) -> "PrecisionChoice":
        """The same setting on the float-input MLP, which computes in float32 whatever the setting."""
        return PrecisionChoice(self.setting, False, "an MLP on float inputs", convolutions=False)

    def to_dict(self) -> dict:
        return asdict(self)


def _bfloat16_rule(setting, flag: str, role: str, flags: set[str] | None, onednn: bool | None) -> PrecisionChoice:
    """One rule for both networks: ``setting`` ("on", "off", "auto") of --``flag``; auto is bfloat16 where the CPU has
    AVX512_BF16 or AMX and ``role``'s TensorFlow runs oneDNN's kernels (``onednn``), float32 elsewhere."""
    setting = onednn_setting(setting, flag)
    if setting != "auto":
        return PrecisionChoice(setting, setting == "on", f"--{flag} {setting}")
    flags = cpu_flags() if flags is None else flags
    units = [f for f in BFLOAT16_FLAGS if f in flags]
    if not units:
        return PrecisionChoice(setting, False, "auto: the CPU has no AVX512_BF16 or AMX")
    if not onednn:
        return PrecisionChoice(setting, False, f"auto: the CPU has {units[0]} but the {role} runs Eigen's kernels")
    return PrecisionChoice(setting, True, f"auto: the CPU has {units[0]} and the {role} runs oneDNN's kernels")


def choose_precision(setting, onednn="auto", flags: set[str] | None = None) -> PrecisionChoice:
    """--reward_bfloat16's choice: "on", "off", or "auto": bfloat16 where the CPU has AVX512_BF16 or AMX
    and the predictor runs oneDNN's kernels (``onednn``: its --reward_onednn), float32 elsewhere (Eigen's
    bfloat16 convolutions, and bfloat16 on CPUs without those units, are slower than float32:
    docs/results/speed.md, session 9). Every process that computes the reward (the predictor's and the
    policy's) chooses the same way on the same machine."""
    flags = cpu_flags() if flags is None else flags
    return _bfloat16_rule(setting, "reward_bfloat16", "predictor", flags, choose_kernels(onednn, flags).onednn)


def choose_policy_precision(setting, flags: set[str] | None = None, kernels: KernelChoice | None = None
                            ) -> PrecisionChoice:
    """--policy_bfloat16's choice for the policy's Nature CNN (its torso: drlhp.policy.nets): "on", "off", or
    "auto": bfloat16 where the CPU has AVX512_BF16 or AMX and the policy's TensorFlow runs oneDNN's kernels (its
    default on x86-64: ``default_kernels``), float32 elsewhere (AVX2 only: no bfloat16 units, and Eigen's bfloat16
    is slower than its float32). Measured on Pong's PPO update (1,024 agent steps, 4 epochs of 4 minibatches, 2
    threads), Intel Xeon with AMX: float32 1,062 ms, bfloat16 572 ms (docs/results/speed.md, session 32)."""
    return _bfloat16_rule(setting, "policy_bfloat16", "policy", flags, (kernels or default_kernels()).onednn)


def default_kernels(environ=os.environ, machine: str | None = None) -> KernelChoice:
    """What a process that leaves TensorFlow's default (the policy) runs: oneDNN on x86-64 unless
    TF_ENABLE_ONEDNN_OPTS=0 says otherwise."""
    opts = environ.get("TF_ENABLE_ONEDNN_OPTS")
    if opts == "0":
        return KernelChoice("default", False, "Eigen", "TensorFlow's default, with TF_ENABLE_ONEDNN_OPTS=0")
    if opts == "1":
        return KernelChoice("default", True, "oneDNN", "TensorFlow's default, with TF_ENABLE_ONEDNN_OPTS=1")
    machine = (machine or platform.machine()).lower()
    if machine in ("x86_64", "amd64"):
        return KernelChoice("default", True, "oneDNN", "TensorFlow's default on x86-64")
    return KernelChoice("default", None, "TensorFlow's default", f"TensorFlow's default on {machine}")
