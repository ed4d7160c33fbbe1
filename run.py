#!/usr/bin/env python
"""drlhp entry point: parse arguments into a config and hand it to the pipeline.

    python run.py train_policy_with_original_rewards --env PongNoFrameskip-v4
    python run.py watch --env PongNoFrameskip-v4 --load_policy_ckpt_dir runs/<run>
    python run.py --list_envs
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from drlhp.config import build_parser, config_from_args
    import envs

    args = build_parser().parse_args(argv)
    if args.list_envs:
        print("\n".join(envs.list_env_ids()))
        return 0
    if not args.env:
        print("run.py: error: --env is required (list valid ids with: python run.py --list_envs)", file=sys.stderr)
        return 2
    if not envs.is_valid_env_id(args.env):
        print(f"run.py: error: unknown env {args.env!r}; list valid ids with: python run.py --list_envs",
              file=sys.stderr)
        return 2
    from drlhp.pipeline import UsageError, run

    try:
        return run(config_from_args(args), ["run.py", *argv], tee_output=True)
    except UsageError as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
