#!/usr/bin/env python
"""drlhp entry point: parse arguments into a config and hand it to the pipeline (drlhp/run/cli.py; the same
as the ``drlhp`` console script).

    python run.py train_policy_with_original_rewards --env PongNoFrameskip-v4
    python run.py watch --env PongNoFrameskip-v4 --load_policy_ckpt_dir runs/<run>
    python run.py --list_envs
"""
import sys

from drlhp.run.cli import console_main

if __name__ == "__main__":
    sys.exit(console_main())
