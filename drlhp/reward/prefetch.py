"""The next training batch, assembled in a background thread while TensorFlow computes the current step (issue 58).

    start()   begin assembling the next batch (``assemble()``, one daemon thread); at most one at a time
    wait()    join that thread; its batch (or error) stays held for ``take``
    take()    join, then hand over the held batch and forget it (None: nothing was started, or ``assemble``
              found nothing to draw); an exception raised in the thread is raised here, in the caller
    close()   ``take``, the batch dropped: the thread joined, its error raised

TensorFlow releases the GIL while it computes, so on the Atari preset the gathering and decoding of a batch's
frame stacks (the database under the trainer's lock) runs on the otherwise idle share of a second core. What
``assemble`` draws, and in what order against the caller's own draws, is the caller's to say
(drlhp.reward.trainer.RewardTrainer.train_step). Not thread-safe itself: one caller thread drives it.
"""
from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class BatchPrefetcher(Generic[T]):
    """One ``assemble()`` at a time in a daemon thread (named ``batch-prefetch``), its result held until taken."""

    def __init__(self, assemble: Callable[[], T | None]):
        self._assemble = assemble
        self._thread: threading.Thread | None = None
        self._batch: T | None = None
        self._error: BaseException | None = None

    @property
    def pending(self) -> bool:
        """A batch (or an error) is being assembled or is held, not yet taken."""
        return self._thread is not None or self._batch is not None or self._error is not None

    def start(self) -> None:
        if self.pending:
            raise RuntimeError("BatchPrefetcher.start: the previous batch was not taken")
        self._thread = threading.Thread(target=self._run, name="batch-prefetch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._batch = self._assemble()
        except BaseException as e:  # raised in the caller by take()
            self._error = e

    def wait(self) -> None:
        """Join the thread (if one runs). The caller must not hold a lock that ``assemble`` takes."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def take(self) -> T | None:
        self.wait()
        batch, error = self._batch, self._error
        self._batch = self._error = None
        if error is not None:
            raise error
        return batch

    def close(self) -> None:
        self.take()
