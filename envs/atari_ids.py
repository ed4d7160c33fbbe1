"""Atari env ids: which ``*NoFrameskip-v4`` ids ale-py can run, and their game names.

Its own module because both ``envs/atari.py`` (the vector env) and ``envs/score_blanking.py`` (the
score rectangles per game) need it, and the vector env uses score blanking. Importing this module
loads no ale-py; the ROM list is read when first asked for.
"""
from __future__ import annotations

import re

ATARI_SUFFIX = "NoFrameskip-v4"


def atari_game(env_id: str) -> str | None:
    """'SpaceInvadersNoFrameskip-v4' -> 'space_invaders' when ale-py ships that ROM, else None."""
    if not env_id.endswith(ATARI_SUFFIX) or len(env_id) == len(ATARI_SUFFIX):
        return None
    name = env_id[: -len(ATARI_SUFFIX)]
    game = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return game if game in atari_games() else None


def atari_games() -> list[str]:
    import ale_py.roms

    return sorted(ale_py.roms.get_all_rom_ids())


def atari_env_id(game: str) -> str:
    """'space_invaders' -> 'SpaceInvadersNoFrameskip-v4' (atari_game's inverse; no check that ale-py has it)."""
    return "".join(part.capitalize() for part in game.split("_")) + ATARI_SUFFIX


def atari_env_ids() -> list[str]:
    return [atari_env_id(g) for g in atari_games()]
