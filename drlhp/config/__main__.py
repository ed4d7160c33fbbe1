"""``python -m drlhp.config > docs/flags.md``: every flag, from the configs' fields (drlhp.config.cli)."""
from drlhp.config.cli import flags_markdown

print(flags_markdown(), end="")
