"""Whether this process's parent is gone: nobody will wait for this child any more.

A backend that watches the parent marks it (the local backend's parent-watch thread,
drlhp.processes.launcher); a role asks, to shorten its waits for the other roles (the predictor's wait
for the last preferences) so that it saves and exits in the time the backend gives it. Backend-neutral:
a role imports this, never a backend (tests/test_boundaries.py). A backend that never marks it (Ray,
whose actors end with their driver) leaves every wait at its full length.
"""
from __future__ import annotations

import threading

_parent_gone = threading.Event()


def parent_gone() -> bool:
    """Whether the backend has marked this process's parent gone."""
    return _parent_gone.is_set()


def mark_parent_gone() -> None:
    """The backend: this process's parent has died."""
    _parent_gone.set()
