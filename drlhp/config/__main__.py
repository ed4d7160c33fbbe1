"""``python -m drlhp.config > docs/flags.md``: every flag, from the config's fields (drlhp.config.flags_markdown)."""
from drlhp.config import flags_markdown

print(flags_markdown(), end="")
