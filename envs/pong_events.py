"""Pong's rallies, read off the 84x84 grayscale frames: how often the agent returns the ball.

A Pong agent that learns first learns to return the ball, and loses about 21-4 while it does (a
scripted tracker's games last about 3,800 agent steps against about 920 for random play): the
true return cannot show that phase, returns per game and steps per point can (docs/results/pong.md,
issue 19). ``ReturnCounter`` counts, per worker, the steps at which the ball turns back towards the
opponent on the agent's side of the field: it came closer for a step, then left for two, each move
small (a serve after a point jumps; detection noise wiggles back and forth). The same rule as
``experiments/pong_reward_by_phase.py``'s ``returns``, vectorized over workers and streamed step by step.
"""
from __future__ import annotations

import numpy as np

PLAY_ROWS = slice(14, 77)  # below the score, above the bottom wall
BRIGHT = 100  # the ball and both paddles are brighter than this in the grayscale frame; the field is not
PADDLE_MIN_ROWS = 4  # a vertical run of bright pixels at least this tall is a paddle, not the ball
AGENT_SIDE = 60  # a ball turning back at column >= 60 was returned by the agent (its paddle: 72-75)
MAX_TURN_MOVE = 5  # columns per step around a return: the ball moves 1-4
MIN_GAP = 5  # steps between two returns


def ball_columns(frames: np.ndarray) -> np.ndarray:
    """(N, 84, 84) uint8 frames -> (N,) the ball's mean column, NaN where no ball is drawn. Bright
    pixels that belong to a vertical run of PADDLE_MIN_ROWS or more (a paddle) are not the ball."""
    bright = frames[:, PLAY_ROWS] >= BRIGHT
    k, rows = PADDLE_MIN_ROWS, bright.shape[1]
    full = np.ones((bright.shape[0], rows - k + 1, bright.shape[2]), bool)
    for i in range(k):  # windows of k rows that are all bright
        full &= bright[:, i:rows - k + 1 + i]
    in_run = np.zeros_like(bright)
    for i in range(k):  # every pixel such a window covers
        in_run[:, i:rows - k + 1 + i] |= full
    ball = (bright & ~in_run).sum(axis=1)  # (N, 84): ball pixels per column
    n = ball.sum(axis=1)
    cols = (ball * np.arange(ball.shape[1])).sum(axis=1) / np.maximum(n, 1)
    return np.where(n > 0, cols, np.nan)


class ReturnCounter:
    """Per worker, the agent's returns in the current game. ``update(frames, done)`` takes the newest
    frame each worker's step led to (a finished game's last frame) and returns the counts so far,
    then starts the finished workers' next game from 0."""

    def __init__(self, n_envs: int):
        self.cols = np.full((n_envs, 4), np.nan)  # the ball's column at the last 4 steps
        self.since = np.full(n_envs, MIN_GAP)  # steps since the last return
        self.counts = np.zeros(n_envs, np.int64)

    def update(self, frames: np.ndarray, done: np.ndarray) -> np.ndarray:
        self.cols = np.concatenate([self.cols[:, 1:], ball_columns(frames)[:, None]], axis=1)
        moves = np.diff(self.cols, axis=1)  # NaN where the ball was missing: every test below is then False
        with np.errstate(invalid="ignore"):
            turned = ((self.cols[:, 1] >= AGENT_SIDE) & (moves[:, 0] > 0) & (moves[:, 1] < 0) & (moves[:, 2] < 0)
                      & (np.abs(moves) <= MAX_TURN_MOVE).all(axis=1) & (self.since >= MIN_GAP))
        self.since = np.where(turned, 0, self.since + 1)
        self.counts += turned
        out = self.counts.copy()
        done = np.asarray(done, bool)
        self.counts[done] = 0
        self.cols[done] = np.nan
        self.since[done] = MIN_GAP
        return out
