"""A run's policy and reward predictor as a small model folder (what the docs replay, under models/): weights
only, with the run's record beside them.

    python -m floyd export RUN --out models/pong-prefs [--checkpoint PATH]

The folder holds ``policy-<N>.npz`` (the newest checkpoint's network weights in float16 and its counters; no optimizer
state, about a quarter of a checkpoint; a PPO policy's, of a MuJoCo run, keeps its observation normalization in
float32), ``reward_predictor.npz`` (the predictor the run trained or loaded: its weights and normalization in float32,
no optimizer state, about a third of a checkpoint; float32 because a predictor's raw output can carry a large offset,
Pong's about 40 against a spread of 0.13, which float16 weights would blur) and the run's ``summary.json``,
``config.json``, ``run.json``, ``progress.csv`` and ``curves.png``, and ``progress_prefs.csv`` where the run learned
from preferences (the labels given against agent steps, so a record can say how many labels a return took). ``python
run.py watch --env ENV --load_policy_ckpt_dir FOLDER`` replays the policy; --load_policy_ckpt_dir also starts a
training run from it (a fresh optimizer); --load_reward_predictor_ckpt_dir FOLDER and ``drlhp.LearnedReward(env,
FOLDER)`` use the predictor. A run with a predictor and no policy (``pretrain_reward_predictor``) exports the
predictor and the record it has (config.json, run.json and summary.json at least).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint, save_weights_only
from drlhp.records.run_paths import RunPaths
from floyd.index import FloydError

RECORD = tuple(str(n) for n in (RunPaths.SUMMARY, RunPaths.CONFIG, RunPaths.RUN, RunPaths.PROGRESS, RunPaths.CURVES))
PREDICTOR_RECORD = tuple(str(n) for n in (RunPaths.SUMMARY, RunPaths.CONFIG, RunPaths.RUN))  # a predictor alone
OPTIONAL_RECORD = (str(RunPaths.PROGRESS_PREFS),)  # copied where the run has it (a run from preferences)
PREDICTOR_NAME = "reward_predictor.npz"


def _predictor(run_dir: Path):
    """(the run's predictor as RewardWeights, whether its network has batch norm), or None where the run has
    none, of its own or loaded."""
    from drlhp.learned_reward import LearnedRewardError, find_predictor
    from drlhp.reward.checkpoint import PredictorCheckpointError, load_predictor_weights, predictor_batchnorm

    try:
        ckpt, _, config = find_predictor(run_dir)
    except LearnedRewardError as e:
        if RunPaths(run_dir).predictor.exists():  # one there, its record unreadable: say so, leave nothing out
            raise FloydError(str(e)) from None
        return None
    try:
        weights, meta = load_predictor_weights(ckpt)
    except PredictorCheckpointError as e:
        raise FloydError(str(e)) from None
    batchnorm = predictor_batchnorm(meta)  # the checkpoint's say, else its run's, else this run's config
    if batchnorm is None:
        batchnorm = (config.get("reward") or {}).get("batchnorm", True)
    return weights, bool(batchnorm)


def export_model(run_dir: str | Path, out: str | Path, checkpoint: str | Path | None = None) -> list[Path]:
    """Writes the model folder ``out`` from ``run_dir`` (its newest policy checkpoint, or ``checkpoint``, and its
    predictor); returns the model files written (policy first). FloydError (one line) if the run has neither a
    policy checkpoint nor a predictor, lacks a record file, or ``out`` is a file or a folder with something in it."""
    from drlhp.reward.checkpoint import save_predictor_weights

    run_dir, out = Path(run_dir), Path(out)
    try:
        policy = load_policy_checkpoint(checkpoint or run_dir)  # the newest, in run_dir/checkpoints
    except CheckpointError as e:
        if checkpoint:
            raise FloydError(str(e)) from None
        policy, no_policy = None, str(e)
    predictor = _predictor(run_dir)
    if policy is None and predictor is None:
        raise FloydError(f"{no_policy}; nor has it a reward predictor")
    record = RECORD if policy is not None else PREDICTOR_RECORD
    missing = [name for name in record if not (run_dir / name).is_file()]
    if missing:
        raise FloydError(f"{run_dir} has no {', '.join(missing)}: export a run that has finished or stopped")
    if policy is not None:
        meta = policy[1]
        summary_steps = json.loads((run_dir / "summary.json").read_text()).get("timesteps")
        if summary_steps != meta.get("timesteps"):
            raise FloydError(f"{run_dir}'s summary.json is at {summary_steps} agent steps but the checkpoint "
                             f"{meta['path']} at {meta.get('timesteps')}: export a run (or sitting) that has stopped, "
                             "or name the checkpoint that its summary describes")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FloydError(f"{out} exists and is not an empty folder; choose another --out or remove it")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if policy is not None:
        state, meta = policy
        keep = {k: v for k, v in meta.items() if k not in ("path", "format_version")}
        try:
            written.append(save_weights_only(out / Path(meta["path"]).name, state,
                                             {**keep, "exported_from": meta["path"]}))
        except CheckpointError as e:
            raise FloydError(str(e)) from None
    if predictor is not None:
        save_predictor_weights(out / PREDICTOR_NAME, *predictor)
        written.append(out / PREDICTOR_NAME)
    for name in RECORD + OPTIONAL_RECORD:
        if (run_dir / name).is_file():
            shutil.copyfile(run_dir / name, out / name)
    return written
