"""What the labelling window (pref_interface.gui) and the review tool (pref_interface.review) show a clip
with, in PyQt5: its frames looping, scaled up by a whole factor (nearest neighbour, so pixels stay sharp),
the frame index under it; the process's QApplication, and a window's screenshot.

    ClipView       one clip: title, the current frame, "frame i / T"
    grow_to_fit()  a window made larger, where the screen allows, for its clips to show at twice their size
    application()  the process's QApplication (without OpenGL: see there)
    screenshot()   a window as a PNG, rendered by Qt itself (offscreen too)

Only a process where a person labels or reviews imports this module: headless runs never load Qt.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from PyQt5.QtCore import QRect, QSize, Qt
from PyQt5.QtGui import QColor, QImage, QPainter
from PyQt5.QtWidgets import QApplication, QLabel, QSizePolicy, QVBoxLayout, QWidget


def frame_to_qimage(frame: np.ndarray) -> QImage:
    """(H, W) grayscale or (H, W, 3) RGB uint8 -> a QImage that owns its pixels."""
    frame = np.ascontiguousarray(frame, np.uint8)
    h, w = frame.shape[:2]
    if frame.ndim == 2:
        image = QImage(frame.data, w, h, w, QImage.Format_Grayscale8)
    elif frame.ndim == 3 and frame.shape[2] == 3:
        image = QImage(frame.data, w, h, 3 * w, QImage.Format_RGB888)
    else:
        raise ValueError(f"a frame must be (H, W) or (H, W, 3) uint8, got {frame.shape}")
    return image.copy()  # detached from the numpy buffer


class _Screen(QWidget):
    """Paints one frame, scaled by the largest whole factor that fits, centred."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.image: QImage | None = None
        self.placeholder = ""
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMinimumSize(168, 168)

    def sizeHint(self) -> QSize:
        return QSize(336, 336)

    def scale(self) -> int:
        if self.image is None:
            return 1
        return max(1, min(self.width() // self.image.width(), self.height() // self.image.height()))

    def image_rect(self) -> QRect:
        k = self.scale()
        w, h = self.image.width() * k, self.image.height() * k
        return QRect((self.width() - w) // 2, (self.height() - h) // 2, w, h)

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(32, 32, 32))
        if self.image is not None:
            painter.setRenderHint(QPainter.SmoothPixmapTransform, False)  # nearest neighbour
            painter.drawImage(self.image_rect(), self.image)
        elif self.placeholder:
            painter.setPen(QColor(200, 200, 200))
            painter.drawText(self.rect(), Qt.AlignCenter | Qt.TextWordWrap, self.placeholder)
        painter.end()


class ClipView(QWidget):
    """A clip: title, the current frame scaled up, "frame i / T" under it."""

    def __init__(self, title: str, parent=None):
        super().__init__(parent)
        self.title = QLabel(title)
        self.title.setAlignment(Qt.AlignCenter)
        font = self.title.font()
        font.setPointSize(font.pointSize() + 2)
        font.setBold(True)
        self.title.setFont(font)
        self.screen = _Screen()
        self.index_label = QLabel("")
        self.index_label.setAlignment(Qt.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.screen, 1)
        layout.addWidget(self.index_label)
        self.frames: np.ndarray | None = None
        self._images: dict[int, QImage] = {}  # made when first shown (an agent episode has ~1,000 frames)
        self.frame_index = 0

    @property
    def n_frames(self) -> int:
        return 0 if self.frames is None else len(self.frames)

    def set_frames(self, frames: np.ndarray | None, placeholder: str = "") -> None:
        self.frames = frames
        self._images = {}
        self.screen.placeholder = placeholder
        self.show_frame(0)

    def show_frame(self, index: int) -> None:
        if not self.n_frames:
            self.frame_index = 0
            self.screen.image = None
            self.index_label.setText("")
        else:
            i = min(max(0, index), self.n_frames - 1)
            if i == self.frame_index and self.screen.image is not None and self.screen.image is self._images.get(i):
                return  # already on screen: no repaint
            self.frame_index = i
            if i not in self._images:
                self._images[i] = frame_to_qimage(self.frames[i])
            self.screen.image = self._images[i]
            self.index_label.setText(f"frame {i + 1} / {self.n_frames}")
        self.screen.update()


def grow_to_fit(window: QWidget, views, frame_shape, scale: int = 2) -> None:
    """Make ``window`` larger, as far as the screen allows, so that each of ``views`` (ClipViews) shows frames of
    ``frame_shape`` (H, W, ...) at ``scale`` times their size at least: an Atari game's colour frame, 210 x 160, is
    at 1x in a window made for 84x84 frames (4x). Never smaller."""
    h, w = frame_shape[:2]
    more_w = max(0, *(scale * w - view.screen.width() for view in views))
    more_h = max(0, *(scale * h - view.screen.height() for view in views))
    if more_w or more_h:
        room = QApplication.primaryScreen().availableGeometry()
        window.resize(max(window.width(), min(room.width(), window.width() + len(views) * more_w)),
                      max(window.height(), min(room.height(), window.height() + more_h)))


def application() -> QApplication:
    """The process's QApplication (made on first use)."""
    app = QApplication.instance()
    if app is None:
        # The window paints with QPainter and needs no OpenGL. Without this, Qt's xcb plugin loads
        # libGL (Mesa), and in a process that has also loaded TensorFlow (the preference interface
        # logs with easy-tf-log) the two abort at exit with "free(): invalid pointer" (measured here).
        os.environ.setdefault("QT_XCB_GL_INTEGRATION", "none")
        app = QApplication([sys.argv[0]])
    return app


def screenshot(window: QWidget, path: str | Path) -> None:
    """The window as a PNG, rendered by Qt itself (works offscreen too); written atomically."""
    from PyQt5.QtCore import QBuffer, QByteArray, QIODevice

    from drlhp.records.atomic import write_bytes

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    if not window.grab().toImage().save(buffer, "PNG"):
        raise RuntimeError("Qt could not encode the screenshot as PNG")
    write_bytes(path, bytes(data))
