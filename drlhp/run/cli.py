"""The command line: arguments -> config -> pipeline (``python run.py``, or the ``drlhp`` console script).

    python run.py train_policy_with_original_rewards --env PongNoFrameskip-v4
    python run.py watch --env PongNoFrameskip-v4 --load_policy_ckpt_dir runs/<run>
    python run.py --list_envs

Imports nothing heavy at module level: the parent process parses and checks its arguments without
TensorFlow or Qt (tests/test_boundaries.py).
"""
from __future__ import annotations

import sys


def command(python: str = sys.executable) -> list[str]:
    """The start of a command line that runs this code's CLI in a child process, from any working
    directory: the checkout's run.py where there is one (the child then imports this checkout, not another
    copy on the path), else ``python -m drlhp.run.cli`` (an installed copy without the checkout)."""
    from drlhp.records.run_record import REPO_ROOT

    script = REPO_ROOT / "run.py"
    return [python, str(script)] if script.is_file() else [python, "-m", "drlhp.run.cli"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from drlhp.config.cli import build_parser, config_from_args

    parser = build_parser()

    def one_line_error(message: str):  # argparse's own errors too: one line, exit 2
        print(f"run.py: error: {message} (see python run.py --help)", file=sys.stderr)
        sys.exit(2)

    parser.error = one_line_error
    from drlhp.config.presets import describe, with_preset

    try:  # the preset's flags (the env's own unless --preset names one) go first: the user's win
        expanded, _, preset_line = with_preset(argv)
    except ValueError as e:
        one_line_error(str(e))
    args = parser.parse_args(expanded)
    if args.list_presets:
        print(describe())
        return 0
    if args.list_envs:
        import envs

        print("\n".join(envs.list_env_ids()))
        print(envs.ANY_GYM_ENV_NOTE)
        return 0
    from drlhp.run.checks import UsageError
    from drlhp.run.pipeline import run  # run() checks every input before it starts anything

    try:
        return run(config_from_args(args), ["run.py", *argv], tee_output=True, announce=preset_line)
    except UsageError as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2


def console_main() -> int:
    """The ``drlhp`` console script and run.py: main, and a reader that stops early (``| head``) ends the
    output quietly instead of with a BrokenPipeError."""
    try:
        return main()
    except BrokenPipeError:
        from drlhp.processes.interrupts import broken_pipe_exit

        return broken_pipe_exit()


if __name__ == "__main__":
    sys.exit(console_main())
