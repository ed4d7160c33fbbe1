"""Reward predictor checkpoints: the file format, saving and loading, and which predictor and preference
database a run starts from.

    <run_dir>/reward_predictor/reward_predictor.npz: weights, normalization, Adam state, L2 coefficients,
    counters (RewardTrainer.save); or weights and normalization only (save_predictor_weights: what the
    policy was trained on, kept at milestones). JSON meta, no pickle, written atomically (drlhp.records.npz_json).
    The meta's ``obs_dtype`` says what the predictor takes: "uint8" (absent in files from before float inputs)
    or "float32" (a Box-action env's (D,) vectors; the input normalization is among the weights).

Imports no TensorFlow: the policy reads published weights from here (load_predictor_weights).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from drlhp.config.reward import RewardConfig
from drlhp.processes.messages import RewardWeights
from drlhp.records import npz_json
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import config_in_todays_names, with_values_before

PREFS_FILE = RunPaths.PREFS  # relative to a run directory (find_file)
PREDICTOR_FILE = RunPaths.PREDICTOR


def predictor_to_load(cfg, run_dir) -> str | Path | None:
    """The predictor a run starts from: this run directory's own (a resumed run: it went on from what
    --load_reward_predictor_ckpt_dir gave it), else --load_reward_predictor_ckpt_dir, else None (a new
    predictor, pretrained on the initial preferences). As the preference database: the run's own first."""
    own = RunPaths(run_dir).predictor
    return own if own.exists() else cfg.load_reward_predictor_ckpt_dir


def prefs_to_load(cfg, run_dir) -> Path | None:
    """The preference database a run starts from, as predictor_to_load chooses the predictor: this run
    directory's own (it holds what --load_prefs_dir gave it, and every label since), else the one
    --load_prefs_dir names, else None (a new database)."""
    own = RunPaths(run_dir).prefs
    if own.exists():
        return own
    return find_file(cfg.load_prefs_dir, PREFS_FILE) if cfg.load_prefs_dir else None


PREDICTOR_FORMAT_VERSION = 1


class PredictorCheckpointError(Exception):
    """A reward predictor checkpoint that is missing, corrupt or does not fit."""


def find_file(path: str | Path, relative: Path) -> Path:
    """``path`` itself if a file, else path/<name>, else path/<relative> (a run directory)."""
    path = Path(path)
    for candidate in (path, path / relative.name, path / relative):
        if candidate.is_file():
            return candidate
    return path / relative


def save_predictor(path: Path, state: dict[str, np.ndarray], meta: dict) -> None:
    meta = {**meta, "format": "drlhp-reward-predictor", "format_version": PREDICTOR_FORMAT_VERSION}
    npz_json.write(path, state, meta)


def load_predictor(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    ckpt = find_file(path, PREDICTOR_FILE)
    arrays, meta = npz_json.read_or_raise(ckpt, "reward predictor checkpoint", PredictorCheckpointError)
    if meta.get("format") != "drlhp-reward-predictor" or meta.get("format_version") != PREDICTOR_FORMAT_VERSION:
        raise PredictorCheckpointError(f"{ckpt} is not a drlhp reward predictor checkpoint of format "
                                       f"{PREDICTOR_FORMAT_VERSION}")
    meta["path"] = str(ckpt)
    return arrays, meta


def saved_reward_config(run_dir) -> RewardConfig | None:
    """The RewardConfig a run recorded in its config.json (in today's names; fields it lacks take their
    defaults; fields this version lacks are left out); None where there is no readable one."""
    try:
        saved = with_values_before(config_in_todays_names(json.loads(RunPaths(run_dir).config.read_text())))["reward"]
        return RewardConfig(**{k: v for k, v in saved.items() if k in RewardConfig.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def predictor_batchnorm(meta: dict) -> bool | None:
    """Whether a saved predictor's network has batch normalization: from its checkpoint (newer ones
    say), else from its run's config.json (<run>/reward_predictor/reward_predictor.npz); None: unknown."""
    if "batchnorm" in meta:
        return bool(meta["batchnorm"])
    cfg = saved_reward_config(Path(meta["path"]).parent.parent)
    return None if cfg is None else cfg.batchnorm


def weights_obs_dtype(weights: RewardWeights) -> str:
    """"float32" for an ensemble of float32 (D,) inputs (its members' first weight is the 1-D mean of their
    input normalization, drlhp.reward.networks.InputNorm), else "uint8" (a kernel comes first)."""
    return "float32" if np.ndim(weights.weights[0][0]) == 1 else "uint8"


def load_predictor_weights(path) -> tuple[RewardWeights, dict]:
    """A checkpoint's weights and normalization as the policy uses them (no TensorFlow needed); meta's
    ``obs_dtype`` is filled in from the weights where the file does not say."""
    state, meta = load_predictor(path)
    members = []
    for m in range(int(meta.get("n_members", 0))):
        keys = sorted((k for k in state if k.startswith(f"m{m}_w")), key=lambda k: int(k.split("_w")[1]))
        members.append(tuple(state[k] for k in keys))
    if not members:
        raise PredictorCheckpointError(f"reward predictor checkpoint {meta['path']} holds no members")
    weights = RewardWeights(max(1, int(meta.get("version", 1))), tuple(members), state["norm_mean"],
                            state["norm_std"]).check()
    meta.setdefault("obs_dtype", weights_obs_dtype(weights))
    return weights, meta


def save_predictor_weights(path: Path, weights: RewardWeights, batchnorm: bool) -> None:
    """Published weights (what the policy is trained on) as a predictor checkpoint that
    ``load_predictor_weights`` reads back: weights and normalization, no optimizer state."""
    state = {f"m{m}_w{i}": np.asarray(w) for m, member in enumerate(weights.weights) for i, w in enumerate(member)}
    state.update(norm_mean=np.asarray(weights.norm_mean), norm_std=np.asarray(weights.norm_std))
    save_predictor(path, state, {"n_members": len(weights.weights), "version": weights.version,
                                 "batchnorm": batchnorm, "weights_only": True, "obs_dtype": weights_obs_dtype(weights)})

