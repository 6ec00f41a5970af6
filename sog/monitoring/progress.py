"""Progress of a long job (self-play, a protocol's searches, a fit, a match) through tqdm.

On a terminal the bar is tqdm's own, redrawn in place. Anywhere else (CI, ``nohup ... > log``) a
redrawn bar is unreadable, so the same tqdm-formatted line (done, rate, elapsed < remaining, the
caller's postfix) is written once every ``every_seconds`` and at the end, one line each time.
"""

from __future__ import annotations

from collections.abc import Callable
import io
import sys
import time

import tqdm

_LIVE_FORMAT = "{desc}: {percentage:3.0f}%|{bar}|COUNT [{elapsed}<{remaining}]{postfix}"
_LINE_FORMAT = "{desc}: {percentage:3.0f}%COUNT [{elapsed}<{remaining}, {rate_fmt}]{postfix}"
_COUNT = " {n_fmt}/{total_fmt}"  # left out for a job counted in percent


class Progress:
  """A job's progress towards ``total`` (of ``unit``), with a free-text postfix.

  Args:
    description: what runs, shown first.
    total: the amount of work (``update`` takes the amount done so far, not an increment).
    unit: tqdm's unit for the rate ("it", "game", "search", ...); "%" for a job counted in
      percent of its budget (no count shown).
    every_seconds: the interval between written lines when not on a terminal.
    log: where lines go; ``None`` for standard output (a live bar if it is a terminal).
    initial: the amount already done before this process (a resumed run), left out of the rate.
  """

  def __init__(
    self,
    description: str,
    total: float,
    unit: str = "it",
    every_seconds: float = 10.0,
    log: Callable[[str], None] | None = None,
    initial: float = 0,
  ):
    if not total > 0:
      raise ValueError(f"Progress total must be > 0, got {total}")
    self._live = log is None and sys.stdout.isatty()
    self._log = log or (lambda line: print(line, flush=True))
    self._every = every_seconds
    self._last_line = time.perf_counter()
    self._bar = tqdm.tqdm(
      total=total,
      initial=initial,
      desc=description,
      unit=unit,
      smoothing=0,
      file=sys.stdout if self._live else io.StringIO(),
      dynamic_ncols=True,
      bar_format=(_LIVE_FORMAT if self._live else _LINE_FORMAT).replace(
        "COUNT", "" if unit == "%" else _COUNT
      ),
      mininterval=0.5 if self._live else 0.0,
    )
    self._closed = False
    self._ended = False  # the finished job's line is written once

  def update(self, done: float, postfix: str = "") -> None:
    """Records ``done`` (clamped to the total) and the postfix; writes a line when one is due."""
    self._bar.update(min(done, self._bar.total) - self._bar.n)
    self._bar.set_postfix_str(postfix, refresh=self._live)
    now = time.perf_counter()
    finished = self._bar.n >= self._bar.total
    if not self._live and (now - self._last_line >= self._every or finished) and not self._ended:
      self._log(str(self._bar))
      self._last_line, self._ended = now, finished

  def line(self) -> str:
    """The current progress line (what ``update`` writes when not on a terminal)."""
    return str(self._bar)

  def write(self, message: str) -> None:
    """Writes an event line (an evaluation, a resume) without breaking a live bar."""
    if self._live:
      self._bar.write(message)
    else:
      self._log(message)

  def close(self) -> None:
    if not self._closed:
      self._closed = True
      self._bar.close()

  def __enter__(self) -> Progress:
    return self

  def __exit__(self, *exc) -> None:
    self.close()
