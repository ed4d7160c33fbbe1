"""Enduro's cars, read from the console's RAM: what a goal about driving among the other cars measures (issue 62,
part 2; pref_interface/goals.py's ``enduro_with_cars``).

The RAM is the 128 bytes ale-py's ``getRAM`` gives after each step; a person's or a goal's Atari clips carry it
(``Segment.states``, (T, 128): envs/atari_watch.py). Addresses, 0-based:

    27..33  the other cars, one byte per depth row of the road, 27 the row nearest the player: non-zero where a car is
            in that row (OCAtari's RAM extraction for Enduro, k4ntz/OC_Atari ocatari/ram/enduro.py, reads its seven
            cars from these bytes; mila-iqia's AtariARI annotates no Enduro RAM)
    59      where the rows are on screen: ``ram[59] >> 3`` moves the nearest row's car down the screen as it falls
            behind and up as it pulls ahead (OCAtari's car y is ``150 - (ram[59] >> 3)`` for that row)
    22      the player's speed (measured here: +2 a step while accelerating from a start, 6 right after a crash)
    35      bit 7 set from a crash until the car may drive on (measured here: set on the step the speed falls to 6 at
            every crash of a 1,500-step drive, then counting down every other step)

What they mean was checked against the frames (tests/test_enduro.py, on a day's drive of a fixed seed through day,
snow, dusk, night and fog): the nearest row's car with ``ram[59] >> 3`` in ``LEVEL`` (8 to 15) is drawn across the
player's car's rows (138 to 148 of the 210 x 160 frame; at night and in fog as its tail lights); where the two nearest
rows are empty nothing but the player is drawn in those rows; at each crash the speed falls to 6.

A pass, either way, is the game's own reward: +1 for a car the player passes, -1 for one that passes the player
(ale-py's reward is the change in Enduro's count of cars still to pass).
"""
from __future__ import annotations

import numpy as np

CARS = slice(27, 34)  # one byte per depth row, nearest first
NEAREST = 27
ROW_SCROLL = 59
SPEED = 22
CRASH = 35
CRASH_BIT = 0x80
LEVEL = (8, 15)  # ram[59] >> 3 for which the nearest row's car is alongside the player (inclusive)
PLAYER_ROWS = (138, 149)  # rows of the player's car in the 210 x 160 frame (half-open)


def _ram(states) -> np.ndarray:
    ram = np.asarray(states)
    if ram.ndim != 2 or ram.shape[1] != 128:
        raise ValueError(f"Enduro's RAM per step must be (T, 128), got {ram.shape}")
    return ram.astype(np.int64)


def level(states) -> np.ndarray:
    """(T,) bool: a car alongside the player (the nearest depth row has one, at the player's rows) after each step."""
    ram = _ram(states)
    scroll = ram[:, ROW_SCROLL] >> 3
    return (ram[:, NEAREST] != 0) & (scroll >= LEVEL[0]) & (scroll <= LEVEL[1])


def crashing(states) -> np.ndarray:
    """(T,) bool: the player's car is in a crash after each step (bit 7 of ram[35])."""
    return (_ram(states)[:, CRASH] & CRASH_BIT) != 0


def crashes(states) -> np.ndarray:
    """(T,) bool: a crash began at this step (bit 7 of ram[35] rose; a clip that starts mid-crash does not count it)."""
    on = crashing(states)
    began = np.zeros_like(on)
    began[1:] = on[1:] & ~on[:-1]
    return began


def figures(states, rewards) -> dict:
    """An Enduro clip's or episode's figures: ``passes`` (cars passed either way: the sum of |reward|), ``level_steps``
    (steps with a car alongside and no crash), ``level_share`` (of all steps), ``crashes``."""
    rewards = np.asarray(rewards, np.float64)
    alongside = level(states) & ~crashing(states)
    n = len(rewards)
    return {"passes": int(np.abs(rewards).sum()), "level_steps": int(alongside.sum()),
            "level_share": float(alongside.sum() / n) if n else 0.0, "crashes": int(crashes(states).sum())}
