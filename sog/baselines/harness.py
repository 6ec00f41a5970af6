"""One harness for the tabular baselines: each runs for a wall-time or iteration budget, and its
average policy is evaluated exactly along the way (evaluation time is not charged to it).

An algorithm is anything with ``name``, ``init(seed) -> state``, ``run(state, iterations) -> state``
(compiled once; the count is traced), ``iterations(state) -> int`` and ``average_policy(state) ->
[N, S, A]`` (float64, the game's public states): :class:`~sog.baselines.tabular.TabularCFR` and
:class:`~sog.baselines.mccfr.MCCFR`, :class:`~sog.baselines.rnad.RNaD` and
:class:`~sog.baselines.psro.PSRO` are. :data:`ALGORITHMS` builds them by the names
``scripts/baselines.py`` takes.
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import time
from typing import Any
from typing import Protocol

import jax
import jax.numpy as jnp

from sog.baselines import mccfr
from sog.baselines import psro
from sog.baselines import rnad
from sog.baselines import tabular
from sog.eval import best_response
from sog.games import registry


class Algorithm(Protocol):
  name: str

  def init(self, seed: int) -> Any: ...

  def run(self, state: Any, iterations: int) -> Any: ...

  def iterations(self, state: Any) -> int: ...

  def average_policy(self, state: Any): ...


ALGORITHMS: dict[str, Callable[..., Algorithm]] = {  # (game, dtype) -> algorithm
  "cfr_plus": lambda game, dtype: tabular.TabularCFR(game, "cfr_plus", dtype=dtype),
  "linear_cfr": lambda game, dtype: tabular.TabularCFR(game, "linear", dtype=dtype),
  "dcfr": lambda game, dtype: tabular.TabularCFR(game, "dcfr", dtype=dtype),
  "mccfr_external": lambda game, dtype: mccfr.MCCFR(game, "external", "linear", dtype=dtype),
  "mccfr_outcome": lambda game, dtype: mccfr.MCCFR(game, "outcome", "linear", dtype=dtype),
  "rnad": lambda game, dtype: rnad.RNaD(game),  # float32 learner, as DeepNash's
  "rnad_network": lambda game, dtype: rnad.RNaD(
    game, rnad.RNaDConfig(hidden=(64, 64), learning_rate=1e-3)
  ),
  "psro": lambda game, dtype: psro.PSRO(game),  # NumPy, float64
  "sp_psro": lambda game, dtype: psro.PSRO(game, self_play=True),
}


def make(name: str, game: registry.Game, dtype=jnp.float32) -> Algorithm:
  """The algorithm ``name`` on ``game`` (``ValueError`` naming the valid ones); float64 needs
  ``jax_enable_x64``."""
  if name not in ALGORITHMS:
    raise ValueError(f"unknown algorithm {name!r}; valid: {sorted(ALGORITHMS)}")
  return ALGORITHMS[name](game, dtype)


@dataclasses.dataclass(frozen=True)
class Point:
  """One evaluation: the algorithm's own seconds and iterations so far, and the exact exploitability
  (NashConv / 2, OpenSpiel's) of its average policy."""

  seconds: float
  iterations: int
  exploitability: float


@dataclasses.dataclass(frozen=True)
class Curve:
  name: str
  points: tuple[Point, ...]
  compile_seconds: float

  @property
  def final(self) -> Point:
    return self.points[-1]

  def summary(self) -> dict[str, float | int]:
    """The JSON-line entry ``scripts/baselines.py`` prints for the algorithm."""
    return {
      "exploitability": self.final.exploitability,
      "seconds": self.final.seconds,
      "iterations": self.final.iterations,
    }


def _affordable(limit: int, done: int, budget: float, chunks: list[tuple[float, float]]) -> int:
  """How many of the next ``limit`` iterations (from iteration ``done``) fit in ``budget`` seconds,
  at least one, predicted from the past chunks' (mean iteration index, seconds per iteration).

  The cost per iteration is the last chunk's, growing linearly in the iteration index where the last
  two chunks show it growing by more than a quarter (PSRO's iterations, each a best response to a
  larger population): at the last chunk's mean rate, a doubled chunk of such iterations would take
  up to twice the time predicted and overrun the budget.
  """
  middle, cost = chunks[-1]
  slope = 0.0
  if len(chunks) > 1 and cost > 1.25 * chunks[-2][1]:
    slope = (cost - chunks[-2][1]) / (middle - chunks[-2][0])
  predicted = lambda n: n * (cost + slope * (done + n / 2 - middle))  # noqa: E731
  low, high = 1, limit  # the largest n in [1, limit] with predicted(n) <= budget (it grows with n)
  while low < high:
    mid = (low + high + 1) // 2
    low, high = (mid, high) if predicted(mid) <= budget else (low, mid - 1)
  return low


def run_for(
  algorithm: Algorithm,
  game: registry.Game,
  seconds: float,
  max_iterations: int | None = None,
  seed: int = 0,
  log: Callable[[Point], None] | None = None,
  clock: Callable[[], float] = time.perf_counter,
) -> Curve:
  """Runs ``algorithm`` until its own time reaches ``seconds`` (or ``max_iterations``), in chunks of
  1, 2, 4, ... iterations (the last ones cut to what the time left affords, :func:`_affordable`),
  evaluating after each chunk: points evenly spaced on a log scale of iterations. An iteration is
  not split, so a run ends within about one iteration of ``seconds``. Compilation is done first and
  reported apart. ``clock`` reads seconds (``time.perf_counter``; the tests pass a simulated
  one)."""
  if seconds <= 0 and max_iterations is None:
    raise ValueError("give a positive time budget (seconds) or max_iterations")
  start = clock()
  jax.block_until_ready(algorithm.run(algorithm.init(seed), 1))
  compile_seconds = clock() - start
  state, spent, chunk, points = algorithm.init(seed), 0.0, 1, []
  chunks: list[tuple[float, float]] = []  # (mean iteration index, seconds per iteration) of each
  while True:
    done = algorithm.iterations(state)
    remaining = None if max_iterations is None else max_iterations - done
    if (remaining is not None and remaining <= 0) or (seconds > 0 and spent >= seconds):
      break
    n = chunk if remaining is None else min(chunk, remaining)
    if chunks and seconds > 0:
      n = _affordable(n, done, seconds - spent, chunks)
    start = clock()
    state = jax.block_until_ready(algorithm.run(state, n))
    elapsed = clock() - start
    spent += elapsed
    chunks.append((done + n / 2, elapsed / n))
    points.append(
      Point(spent, done + n, best_response.exploitability(game, algorithm.average_policy(state)))
    )
    if log is not None:
      log(points[-1])
    chunk *= 2
  return Curve(algorithm.name, tuple(points), compile_seconds)
