#!/usr/bin/env python
"""The networks' own cost against the floor: each network's training step, its achieved GFLOP/s and its share
of the cores' peak, by TensorFlow kernel library and thread count, each setting in its own process.

    python bench/network_step.py [--threads 1 2] [--repeats 10] [--per_layer] [--compare] [--fma_units 2] [--ghz X]

predictor: make run's reward predictor (1 member, no batch norm, no dropout; the paper's network), one
           training step on B pairs of T-step 84x84x4 clips: T 5 (make run) and 25 (Pong, the paper), B 16
           (the default batch) and 64
a2c:       the Nature CNN policy, one A2C update on 16 envs x 5 steps (80 observations)

Default: this machine's settings (the predictor on the library --reward_onednn auto chooses here, the policy
on TensorFlow's default: drlhp.processes.cpu). --compare: old and new settings in one run, every figure
beside the others: Eigen (the predictor's default before auto) and oneDNN for both networks; oneDNN with
bfloat16 compute (Keras's mixed_bfloat16: float32 weights and loss) where the CPU has AVX512_BF16 or AMX;
and both clips of a pair through the network in two calls (the original reproduction's way) against one
call on both (drlhp's). --per_layer: each convolution and dense layer alone, forward and backward.

The floor: one core's peak is FMA units x fp32 lanes x 2 FLOP x clock: 16 lanes with AVX-512 (avx512f),
8 with AVX2 + FMA; 2 FMA units ASSUMED (Intel's server cores since Skylake-SP, AMD Zen 2-4; but Zen 4
(AMD family 25) runs a 512-bit FMA as two 256-bit halves, so there the AVX-512 peak is half the one printed:
--fma_units 1 gives it); the clock: lscpu's max MHz, else /proc/cpuinfo's cpu MHz (a VM's nominal clock,
below the boost: a share above 100% says the core ran faster than that), or --ghz. The peak of N threads
is N x the core's. FLOPs are counted from the layers:
2 per multiply-add of every convolution and dense layer, per pass; a training step is the forward pass,
the weight gradient and the input gradient (none for the first layer, whose input is the data): 15.2 MFLOP
per frame for the predictor (bench/feed_rate.py's rounder 3 x 6.5 = 19.5 counts a first-layer input
gradient), 49.5 for the Nature CNN. Bias, activations, the loss and the optimizer are not counted.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import quiet  # noqa: E402,F401  (bench/quiet.py: TensorFlow's own lines off the terminal; before TensorFlow)
from drlhp.processes.cpu import (  # noqa: E402
    choose_kernels,
    cpu_flags,
    cpu_model,
    cpuinfo_field,
    cpuinfo_text,
    default_kernels,
)

OBS = (84, 84, 4)
PREDICTOR_SHAPES = ((5, 16), (5, 64), (25, 16), (25, 64))  # (clip length T, pairs B)
A2C_BATCH = 80  # 16 envs x 5 steps


# ---- the floor: one core's peak -------------------------------------------------------------------
FMA_UNITS = 2  # assumed: two FMA pipes per core (Intel Skylake-SP and later server cores, AMD Zen 2-4)


@dataclass(frozen=True)
class CorePeak:
    """One core's single-precision peak: fma_units x lanes x 2 FLOP (an FMA) x clock."""

    lanes: int  # fp32 lanes per FMA: 16 with AVX-512, 8 with AVX2 + FMA, 4 with SSE
    fma_units: int
    ghz: float
    clock_from: str
    isa: str

    @property
    def flop_per_cycle(self) -> int:
        return self.fma_units * self.lanes * 2

    @property
    def gflops(self) -> float:
        return self.flop_per_cycle * self.ghz

    def describe(self) -> str:
        return (f"{self.isa}: {self.fma_units} FMA units (assumed) x {self.lanes} fp32 lanes x 2 = "
                f"{self.flop_per_cycle} FLOP/cycle x {self.ghz:.2f} GHz ({self.clock_from}) = "
                f"{self.gflops:.0f} GFLOP/s per core")


def _lscpu_max_mhz() -> float | None:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    value = cpuinfo_field(out, "CPU max MHz")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def core_peak(text: str | None = None, fma_units: int = FMA_UNITS, ghz: float | None = None) -> CorePeak:
    """The core's fp32 peak from its flags and clock: lscpu's "CPU max MHz" where it gives one (the
    boost clock), else /proc/cpuinfo's "cpu MHz" (a VM's nominal clock), unless ``ghz`` is given."""
    text = cpuinfo_text() if text is None else text
    flags = cpu_flags(text)
    if "avx512f" in flags:
        lanes, isa = 16, "AVX-512"
    elif "avx2" in flags and "fma" in flags:
        lanes, isa = 8, "AVX2+FMA"
    else:
        lanes, isa = 4, "SSE (no FMA: counted as if it had one)"
    if ghz is not None:
        clock_from = "given"
    else:
        mhz = _lscpu_max_mhz() if text == cpuinfo_text() else None
        clock_from = "lscpu max MHz"
        if mhz is None:
            value = cpuinfo_field(text, "cpu MHz")
            mhz, clock_from = (float(value), "/proc/cpuinfo cpu MHz") if value else (0.0, "unknown clock")
        ghz = mhz / 1e3
    return CorePeak(lanes, fma_units, ghz, clock_from, isa)


# ---- FLOPs from the layers ------------------------------------------------------------------------

def layer_macs(model) -> list[tuple[str, str, int]]:
    """(layer name, output shape, multiply-adds per observation) of each Conv2D and Dense layer, in order."""
    out = []
    for layer in model.layers:
        kind = type(layer).__name__
        if kind not in ("Conv2D", "Dense"):
            continue
        kernel = tuple(layer.kernel.shape)
        shape = tuple(layer.output.shape[1:])
        if kind == "Conv2D":  # (kh, kw, cin, cout) per output position
            macs = shape[0] * shape[1] * kernel[0] * kernel[1] * kernel[2] * kernel[3]
        else:
            macs = kernel[0] * kernel[1]
        out.append((layer.name, "x".join(map(str, shape)), int(macs)))
    return out


def train_flops_per_obs(model) -> float:
    """Forward + weight gradient + input gradient (none for the first layer): 2 FLOP per multiply-add each."""
    macs = [m for _, _, m in layer_macs(model)]
    return 2.0 * (3 * sum(macs) - macs[0])


# ---- the measured process ------------------------------------------------------------------------

def _time(fn, repeats: int) -> float:
    for _ in range(2):  # tracing, then one warm call
        fn()
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t0) / repeats


def child(spec: dict) -> dict:
    """Run in its own process: spec = threads, library ("onednn"/"eigen"), dtype, pairing ("one"/"two"),
    workloads ("predictor", "a2c"), repeats, per_layer. Returns seconds and FLOPs per workload."""
    from drlhp.processes.tf_setup import configure_tensorflow, kernels_in_use

    tf = configure_tensorflow(spec["threads"], 1, seed=0, onednn=spec["library"] == "onednn")
    import keras
    import numpy as np

    from drlhp.config.a2c import A2CConfig
    from drlhp.config.reward import RewardConfig
    from drlhp.reward.model import RewardEnsemble

    rng = np.random.default_rng(0)
    out = {"kernels": kernels_in_use(), "rows": [], "layers": []}
    if "predictor" in spec["workloads"]:
        if spec["dtype"] == "bfloat16":
            keras.mixed_precision.set_global_policy("mixed_bfloat16")
        cls = RewardEnsemble
        if spec["pairing"] == "two":
            class TwoCalls(RewardEnsemble):  # the original reproduction: each clip of a pair in its own call
                def _pair_sums(self, model, s1, s2, training):
                    b, t = tf.shape(s1)[0], tf.shape(s1)[1]
                    r1 = model(tf.reshape(s1, (-1, *self.obs_shape)), training=training)
                    r2 = model(tf.reshape(s2, (-1, *self.obs_shape)), training=training)
                    return (tf.reduce_sum(tf.reshape(r1, (b, t)), axis=1),
                            tf.reduce_sum(tf.reshape(r2, (b, t)), axis=1))
            cls = TwoCalls
        ens = cls(OBS, RewardConfig(n_members=1, lr=1e-3, dropout=0.0, batchnorm=False), seed=0)
        if spec["dtype"] == "bfloat16":  # bfloat16 inside the network, its output (and the loss) float32
            net = ens.members[0]
            ens.members = [keras.Model(net.input, layers_cast_float32(keras, net.output))]
            keras.mixed_precision.set_global_policy("float32")
        per_obs = train_flops_per_obs(ens.members[0])
        for t, b in PREDICTOR_SHAPES:
            s1 = rng.integers(0, 255, (1, b, t, *OBS), dtype=np.uint8)
            s2 = rng.integers(0, 255, (1, b, t, *OBS), dtype=np.uint8)
            mu, l2 = np.tile(np.array([1, 0], np.float32), (1, b, 1)), np.full(1, 1e-4, np.float32)
            sec = _time(lambda: ens.train_step(s1, s2, mu, l2), spec["repeats"])
            out["rows"].append({"workload": f"predictor T={t} B={b}", "s": sec, "flop": per_obs * 2 * b * t})
        if spec["per_layer"]:
            out["layers"] += per_layer(tf, "predictor (T=5 B=16: 160 frames)", ens.members[0], 160, spec["repeats"])
    if "a2c" in spec["workloads"]:
        from drlhp.policy.a2c.policy import A2CPolicy

        pol = A2CPolicy(OBS, 6, A2CConfig(n_envs=16), seed=0)
        b_obs = rng.integers(0, 255, (A2C_BATCH, *OBS), dtype=np.uint8)
        b_act, b_ret = np.zeros(A2C_BATCH, np.int32), np.zeros(A2C_BATCH, np.float32)
        sec = _time(lambda: pol.train(b_obs, b_act, b_ret, 1e-9), spec["repeats"])
        out["rows"].append({"workload": f"A2C update B={A2C_BATCH}", "s": sec,
                            "flop": train_flops_per_obs(pol.model) * A2C_BATCH})
        if spec["per_layer"]:
            out["layers"] += per_layer(tf, f"A2C ({A2C_BATCH} frames)", pol.model, A2C_BATCH, spec["repeats"])
    return out


def layers_cast_float32(keras, x):
    return keras.layers.Activation("linear", dtype="float32")(x)


def per_layer(tf, what: str, model, n: int, repeats: int) -> list[dict]:
    """Each Conv2D / Dense layer of ``model`` alone on n inputs of its own shape: forward, weight gradient and
    input gradient (not for the first), as in a training step."""
    import numpy as np

    rows, macs = [], dict((name, m) for name, _, m in layer_macs(model))
    first = True
    for layer in model.layers:
        if layer.name not in macs:
            continue
        x = tf.constant(np.random.default_rng(0).random((n, *layer.input.shape[1:]), np.float32))
        wants_input = not first

        @tf.function(autograph=False)
        def step(x, layer=layer, wants_input=wants_input):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = layer(x)
                loss = tf.reduce_sum(tf.cast(y, tf.float32))
            return tape.gradient(loss, [layer.kernel, x] if wants_input else [layer.kernel])

        sec = _time(lambda: step(x), repeats)
        rows.append({"network": what, "layer": layer.name, "shape": "x".join(map(str, layer.output.shape[1:])),
                     "s": sec, "flop": 2.0 * macs[layer.name] * n * (3 if wants_input else 2)})
        first = False
    return rows


# ---- the parent: settings, processes, tables ------------------------------------------------------

def settings(compare: bool, flags: set[str]) -> list[dict]:
    """What to measure: name, library, dtype, pairing, workloads. The first of each workload is "old"."""
    auto = "onednn" if choose_kernels("auto", flags).onednn else "eigen"
    policy = "eigen" if default_kernels().onednn is False else "onednn"
    base = {"dtype": "float32", "pairing": "one"}
    if not compare:
        if auto == policy:
            return [{"name": f"this machine: {auto}", "library": auto, **base, "workloads": ["predictor", "a2c"]}]
        return [{"name": f"this machine: {auto}", "library": auto, **base, "workloads": ["predictor"]},
                {"name": f"this machine: {policy}", "library": policy, **base, "workloads": ["a2c"]}]
    out = [{"name": "eigen" + (" (auto)" if auto == "eigen" else ""), "library": "eigen", **base,
            "workloads": ["predictor", "a2c"]},
           {"name": "onednn" + (" (auto)" if auto == "onednn" else ""), "library": "onednn", **base,
            "workloads": ["predictor", "a2c"]}]
    if flags & {"avx512_bf16", "amx_bf16"}:
        out.append({"name": "onednn bfloat16", "library": "onednn", "dtype": "bfloat16", "pairing": "one",
                    "workloads": ["predictor"]})
    out.append({"name": f"{auto}, pair in 2 calls", "library": auto, "dtype": "float32", "pairing": "two",
                "workloads": ["predictor"]})
    return out


def run_child(spec: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    res = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                         cwd=ROOT, env=env)
    if res.returncode != 0:
        raise SystemExit(f"{spec}:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--compare", action="store_true", help="old and new settings side by side, in this one run")
    p.add_argument("--per_layer", action="store_true", help="also each layer alone (this machine's settings)")
    p.add_argument("--fma_units", type=int, default=2, help="FMA units per core (assumed 2)")
    p.add_argument("--ghz", type=float, default=None, help="the core's clock (default: lscpu / /proc/cpuinfo)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    flags = cpu_flags()
    peak = core_peak(fma_units=args.fma_units, ghz=args.ghz)
    cpu = cpu_model()
    have = " ".join(f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16") if f in flags)
    print(f"CPU: {cpu}, {os.cpu_count()} cores, flags: {have or 'no x86 flags'}")
    print(f"peak: {peak.describe()}")
    print(f"--reward_onednn auto here: {choose_kernels('auto', flags).describe()}; "
          f"the policy: {default_kernels().describe()}")
    rows, layer_rows = [], []
    for threads in args.threads:
        for s in settings(args.compare, flags):
            this_machine = not args.compare or (s["name"].endswith("(auto)"))
            spec = {**s, "threads": threads, "repeats": args.repeats, "per_layer": args.per_layer and this_machine}
            r = run_child(spec)
            for row in r["rows"]:
                rows.append({**row, "threads": threads, "setting": s["name"], "kernels": r["kernels"]})
            for row in r["layers"]:
                layer_rows.append({**row, "threads": threads, "setting": s["name"]})
            print(f"  measured: {threads} thread(s), {s['name']}: TensorFlow runs {r['kernels']}", flush=True)
    print(f"\nTraining steps on {cpu} (peak {peak.gflops:.0f} GFLOP/s per core, {peak.isa}, "
          f"{peak.fma_units} FMA units assumed; {args.repeats} repeats)")
    header = (f"{'threads':>7s}  {'setting':24s} {'workload':22s} {'ms':>8s} {'GFLOP':>7s} {'GFLOP/s':>8s} "
              f"{'% peak':>7s}" + (f" {'vs first':>8s}" if args.compare else ""))
    print(header)
    print("-" * len(header))
    first: dict[tuple, float] = {}
    for row in rows:
        key = (row["threads"], row["workload"])
        first.setdefault(key, row["s"])
        gflops = row["flop"] / row["s"] / 1e9
        print(f"{row['threads']:7d}  {row['setting']:24s} {row['workload']:22s} {1e3 * row['s']:8.1f} "
              f"{row['flop'] / 1e9:7.2f} {gflops:8.1f} {100 * gflops / (peak.gflops * row['threads']):6.1f}%"
              + (f" {first[key] / row['s']:7.2f}x" if args.compare else ""))
    if layer_rows:
        print(f"\nEach layer alone (forward + gradients), {layer_rows[0]['setting']}, on {cpu}")
        header = (f"{'threads':>7s}  {'network':32s} {'layer':16s} {'output':10s} {'ms':>8s} {'GFLOP/s':>8s} "
                  f"{'% peak':>7s}")
        print(header)
        print("-" * len(header))
        for row in layer_rows:
            gflops = row["flop"] / row["s"] / 1e9
            print(f"{row['threads']:7d}  {row['network']:32s} {row['layer']:16s} {row['shape']:10s} "
                  f"{1e3 * row['s']:8.2f} {gflops:8.1f} {100 * gflops / (peak.gflops * row['threads']):6.1f}%")
    print(f"\nCPU: {cpu}." + (" 'vs first': the first setting's time over this one's, same threads and workload "
                              "(the first: Eigen, the predictor's library before --reward_onednn auto)."
                              if args.compare else ""))


if __name__ == "__main__":
    main()
