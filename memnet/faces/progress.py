"""A small progress line on stderr for long CLI work (no dependency).

:class:`Progress` is a callable ``(done, total)`` that can be passed as the
``progress=`` of :meth:`Cabinet.open` and friends. It draws one ``\\r``-updated
line with a bar, the percentage, the counts and the elapsed time, throttled to
a few updates a second, and only when:

* the stream is a terminal (``isatty()``): piped or redirected output stays
  byte-for-byte silent, and
* the work has been running for more than ``delay`` seconds (default 0.5,
  ``$MEMNET_PROGRESS_DELAY`` overrides it): quick commands print nothing.

``total`` of 0 or None means the size is unknown: the line shows a spinner
instead of a bar. :meth:`Progress.phase` names the current step (reading,
parsing, ...); :meth:`Progress.spin_while` runs a single blocking call in a
thread and keeps a spinner going until it returns. Use it as a context
manager: on exit a drawn line is finished (or cleared on error) with a newline.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Self, TextIO, TypeVar

T = TypeVar("T")

BAR_WIDTH = 24
SPINNER = "|/-\\"
DEFAULT_DELAY = 0.5
INTERVAL = 0.1  # at most ten redraws a second


def _delay_from_env() -> float:
    raw = os.environ.get("MEMNET_PROGRESS_DELAY")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_DELAY
    except ValueError:
        return DEFAULT_DELAY


def _elapsed(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}:{s:02d}" if m < 60 else f"{m // 60}:{m % 60:02d}:{s:02d}"


class Progress:
    """A throttled progress line; silent unless ``stream`` is a TTY and the work is slow."""

    def __init__(
        self,
        label: str = "",
        *,
        stream: TextIO | None = None,
        delay: float | None = None,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay = _delay_from_env() if delay is None else delay
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self.done = 0
        self.total: int | None = None
        self.step = ""
        self.drawn = False  # something was written to the stream
        self._last = float("-inf")
        self._width = 0
        self._spin = 0
        self._lock = threading.Lock()
        try:
            self.enabled = bool(self.stream.isatty())
        except (AttributeError, ValueError, OSError):
            self.enabled = False

    # -- feeding ------------------------------------------------------------------
    def __call__(self, done: int, total: int | None = None) -> None:
        """Record progress (``done`` of ``total``; total 0/None: unknown)."""
        self.done, self.total = done, total or None
        self._maybe_draw()

    def update(self, done: int, total: int | None = None) -> None:
        self(done, total)

    def phase(self, step: str, done: int = 0, total: int | None = None) -> None:
        """Start a named step (e.g. ``parsing``); its counts start again."""
        self.step = step
        self(done, total)

    def tick(self) -> None:
        """Keep a spinner moving while nothing countable happens."""
        self._maybe_draw()

    def spin_while(self, fn: Callable[..., T], *a: Any, **kw: Any) -> T:
        """Run ``fn`` in a thread, animating the line until it returns (or raises)."""
        if not self.enabled:
            return fn(*a, **kw)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = fn(*a, **kw)
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = e

        t = threading.Thread(target=work, name="memnet-progress", daemon=True)
        t.start()
        while t.is_alive():
            t.join(self.interval)
            self.tick()
        if "error" in box:
            raise box["error"]
        value: T = box["value"]
        return value

    # -- drawing ------------------------------------------------------------------
    def line(self, final: bool = False) -> str:
        """The text of the progress line as it would be drawn now."""
        head = " ".join(x for x in (self.label, self.step) if x)
        t = _elapsed(self.clock() - self.start)
        if self.total:
            frac = min(1.0, max(0.0, self.done / self.total))
            full = int(frac * BAR_WIDTH)
            bar = "#" * full + "-" * (BAR_WIDTH - full)
            body = f"[{bar}] {frac * 100:5.1f}% {self.done:,}/{self.total:,}"
        elif final:
            body = "done" + (f" {self.done:,}" if self.done else "")
        else:
            self._spin = (self._spin + 1) % len(SPINNER)
            body = SPINNER[self._spin] + (f" {self.done:,}" if self.done else "")
        return f"{head}: {body} {t}" if head else f"{body} {t}"

    def _maybe_draw(self, force: bool = False, final: bool = False) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.start < self.delay and not (final and self.drawn):
            return
        if not force and now - self._last < self.interval:
            return
        with self._lock:
            self._last = now
            self._write(self.line(final))

    def _write(self, text: str) -> None:
        pad = " " * max(0, self._width - len(text))
        self._width = len(text)
        try:
            self.stream.write("\r" + text + pad)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False
            return
        self.drawn = True

    def close(self, ok: bool = True) -> None:
        """Finish the line: a final state and a newline if the work was slow enough
        to show (or a cleared line on failure); nothing otherwise."""
        if not self.enabled:
            return
        slow = self.clock() - self.start >= self.delay
        if ok and (slow or self.drawn):
            if self.total:
                self.done = max(self.done, self.total)
            with self._lock:
                self._write(self.line(final=True))
        elif self.drawn:
            with self._lock:
                self._write("")
                try:
                    self.stream.write("\r")
                except (OSError, ValueError):
                    pass
        if self.drawn:
            try:
                self.stream.write("\n" if ok else "")
                self.stream.flush()
            except (OSError, ValueError):
                pass
        self.enabled = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(ok=exc_type is None)


__all__ = ["Progress"]
