"""Policy checkpoints: one ``policy-<updates>.npz`` per save, written atomically, loaded without pickle.

Each file holds the network weights, the RMSprop slots, the action-sampling RNG state, and a JSON
string ``meta`` with the counters a resumed run needs (updates, timesteps, episodes, recent returns,
running wall time). The newest few are kept.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from drlhp.records import npz_json
from drlhp.records.run_paths import RunPaths

CKPT_PATTERN = re.compile(r"^policy-(\d+)\.npz$")
FORMAT_VERSION = 1
KEEP = 3
# PPO's observation normalization in a policy state (drlhp.policy.ppo.policy.PPOPolicy.get_state)
OBS_NORM_PREFIX = "obs_rms_"


class CheckpointError(Exception):
    """A checkpoint that is missing, corrupt or of another format."""


def save_policy_checkpoint(ckpt_dir: str | Path, updates: int, state: dict[str, np.ndarray], meta: dict) -> Path:
    ckpt_dir = Path(ckpt_dir)
    path = ckpt_dir / f"policy-{updates}.npz"
    meta = {**meta, "format_version": FORMAT_VERSION, "updates": updates}
    npz_json.write(path, state, meta)
    for old in sorted(_checkpoints(ckpt_dir))[:-KEEP]:
        old[1].unlink(missing_ok=True)
    return path


def save_weights_only(path: str | Path, state: dict[str, np.ndarray], meta: dict) -> Path:
    """A policy file of the network's weights alone, in float16 (``state``'s weight_* arrays; no optimizer
    state, no RNG): a milestone's or a model folder's. ``load_policy_checkpoint`` reads it, watch replays it.
    PPO's observation normalization (``obs_rms_*``: the mean, variance and count the network's input is
    normalized by, without which it cannot act) is kept too, in float32 (a count of millions overflows float16).
    CheckpointError if ``state`` holds no weights."""
    weights = {k: np.asarray(v, np.float16) for k, v in state.items() if k.startswith("weight_")}
    if not weights:
        raise CheckpointError("the policy state holds no network weights (weight_0, ...)")
    weights.update({k: np.asarray(v, np.float32) for k, v in state.items() if k.startswith(OBS_NORM_PREFIX)})
    npz_json.write(path, weights, {**meta, "format_version": FORMAT_VERSION, "weights_only": True})
    return Path(path)


def save_milestone(milestone_dir: str | Path, timesteps: int, policy_weights: dict[str, np.ndarray], meta: dict,
                   predictor_weights=None, batchnorm: bool = False) -> Path:
    """Copies kept for good at a milestone: ``policy-<timesteps>.npz`` (float16 weights and the counters;
    ``load_policy_checkpoint`` reads it, ``watch`` replays it) and, where given (a RewardWeights), the
    predictor the policy was trained on then, ``reward_predictor-<timesteps>.npz`` (a predictor checkpoint
    that --load_reward_predictor_ckpt_dir and experiments/pong_reward_ranks.py read)."""
    milestone_dir = Path(milestone_dir)
    path = save_weights_only(milestone_dir / f"policy-{timesteps}.npz", policy_weights, meta)
    if predictor_weights is not None:
        from drlhp.reward.checkpoint import save_predictor_weights

        save_predictor_weights(milestone_dir / f"reward_predictor-{timesteps}.npz", predictor_weights, batchnorm)
    return path


def _checkpoints(ckpt_dir: Path) -> list[tuple[int, Path]]:
    if not ckpt_dir.is_dir():
        return []
    return [(int(m.group(1)), p) for p in ckpt_dir.iterdir() if (m := CKPT_PATTERN.match(p.name))]


def find_latest_checkpoint(path: str | Path) -> Path | None:
    """The newest policy checkpoint in ``path``, in ``path/checkpoints``, or ``path`` itself if a file."""
    path = Path(path)
    if path.is_file():
        return path
    for d in (path, RunPaths(path).checkpoints):
        found = sorted(_checkpoints(d))
        if found:
            return found[-1][1]
    return None


def load_policy_checkpoint(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """(state arrays, meta) of the newest checkpoint at ``path``; CheckpointError if none or unreadable."""
    ckpt = find_latest_checkpoint(path)
    if ckpt is None:
        raise CheckpointError(f"no policy checkpoint (policy-<N>.npz) in {path}")
    arrays, meta = npz_json.read_or_raise(ckpt, "policy checkpoint", CheckpointError)
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"policy checkpoint {ckpt} has format {meta.get('format_version')}, "
                              f"this drlhp reads {FORMAT_VERSION}")
    meta["path"] = str(ckpt)
    return arrays, meta
