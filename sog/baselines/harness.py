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

import dataclasses
import time
from collections.abc import Callable
from typing import Any, Protocol

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
    "rnad_network": lambda game, dtype: rnad.RNaD(game, rnad.RNaDConfig(hidden=(64, 64),
                                                                       learning_rate=1e-3)),
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
    return {"exploitability": self.final.exploitability, "seconds": self.final.seconds,
            "iterations": self.final.iterations}


def run_for(algorithm: Algorithm, game: registry.Game, seconds: float,
            max_iterations: int | None = None, seed: int = 0,
            log: Callable[[Point], None] | None = None) -> Curve:
  """Runs ``algorithm`` until its own time reaches ``seconds`` (or ``max_iterations``), in chunks of
  1, 2, 4, ... iterations (the last ones cut to the time left at the last chunk's rate), evaluating
  after each chunk: points evenly spaced on a log scale of iterations. An iteration is not split, so
  a run ends within one chunk of ``seconds``. Compilation is done first and reported apart."""
  if seconds <= 0 and max_iterations is None:
    raise ValueError("give a positive time budget (seconds) or max_iterations")
  start = time.perf_counter()
  jax.block_until_ready(algorithm.run(algorithm.init(seed), 1))
  compile_seconds = time.perf_counter() - start
  state, clock, chunk, points, rate = algorithm.init(seed), 0.0, 1, [], None
  while True:
    done = algorithm.iterations(state)
    remaining = None if max_iterations is None else max_iterations - done
    if (remaining is not None and remaining <= 0) or (seconds > 0 and clock >= seconds):
      break
    n = chunk if remaining is None else min(chunk, remaining)
    if rate is not None and seconds > 0:  # the time left at the last chunk's rate, at least one
      n = max(1, min(n, int((seconds - clock) * rate)))  # (iterations that grow costlier: PSRO's)
    start = time.perf_counter()
    state = jax.block_until_ready(algorithm.run(state, n))
    elapsed = time.perf_counter() - start
    clock, rate = clock + elapsed, n / max(elapsed, 1e-9)
    points.append(Point(clock, done + n,
                        best_response.exploitability(game, algorithm.average_policy(state))))
    if log is not None:
      log(points[-1])
    chunk *= 2
  return Curve(algorithm.name, tuple(points), compile_seconds)
