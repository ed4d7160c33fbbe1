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

    parser = build_parser()

    def one_line_error(message: str):  # argparse's own errors too: one line, exit 2
        print(f"run.py: error: {message} (see python run.py --help)", file=sys.stderr)
        sys.exit(2)

    parser.error = one_line_error
    args = parser.parse_args(argv)
    if args.list_envs:
        import envs

        print("\n".join(envs.list_env_ids()))
        return 0
    from drlhp.pipeline import UsageError, run  # run() checks every input before it starts anything

    try:
        return run(config_from_args(args), ["run.py", *argv], tee_output=True)
    except UsageError as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
