"""SoG's self-play with its roles on Ray (SoG, Algorithm 2, across processes and hosts): actors and
query solvers as Ray actors, the trainer and both buffers in the driver.

Each actor worker plays ``selfplay.games`` games of the SoG agent (:class:`sog.selfplay.actor.Actors`)
and each solver worker runs a query solver (:class:`sog.selfplay.query_solver.QuerySolver`), each
with its own compiled searches. The driver keeps one task in flight per worker. A round gives every
idle worker its next task with the trainer's latest published parameters (a solver worker only when a
full batch of queries waits), waits until at least one task has finished, books what the finished
tasks returned into the buffers and takes the round's train steps. Acting, solving and training so
overlap on as many cores and hosts as the cluster has, while the driver stays SoG's single trainer
with the replay and query buffers and publishes parameters every ``selfplay.publish_every`` steps
(a worker's next task carries them).

Checkpoints and evaluation are the local run's (:class:`sog.selfplay.loop.SelfPlay`): the network,
both buffers, the counters. Tasks in flight and games in progress are not saved, so a resumed run
starts new games, as a local one does, and the queries a solver task held are dropped.

On a cluster, every node needs this package installed (the workers import ``sog``); set
``ray.address`` to the cluster's ("auto" on a node of it).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import ray

from sog.search import gtcfr
from sog.selfplay import actor as actor_lib
from sog.selfplay import buffers
from sog.selfplay import config as config_lib
from sog.selfplay import loop
from sog.selfplay import query_solver

_ACT, _SOLVE = "act", "solve"


class _ActorWorker:
  """A Ray actor playing ``selfplay.games`` games of the SoG agent."""

  def __init__(self, experiment: config_lib.Experiment, index: int):
    game, _, _, leaf_model = loop.initial_network(experiment)
    searcher = gtcfr.GTCFR(game, leaf_model, experiment.actor)
    self.actors = actor_lib.Actors(searcher, experiment.selfplay, experiment.selfplay.search_chunk,
                                   experiment.resolving)
    self.rng = np.random.default_rng([experiment.seed, 1, index])

  def restart(self, key: jax.Array) -> None:
    self.actors.restart(key)

  def play(self, params, key: jax.Array):
    return self.actors.play(params, key, self.rng)


class _SolverWorker:
  """A Ray actor answering batches of queries."""

  def __init__(self, experiment: config_lib.Experiment, index: int):
    game, _, _, leaf_model = loop.initial_network(experiment)
    searcher = gtcfr.GTCFR(game, leaf_model, experiment.solver)
    self.solver = query_solver.QuerySolver(searcher, experiment.selfplay,
                                           experiment.selfplay.search_chunk)
    self.rng = np.random.default_rng([experiment.seed, 2, index])

  def solve(self, params, queries: buffers.Queries, key: jax.Array):
    return self.solver.solve(params, queries, key, self.rng)


def connect(config: config_lib.RayConfig) -> None:
  """Joins ``config.address``'s cluster, or starts a local one on this machine's cores; checks that it
  has the CPUs the workers reserve (Ray would otherwise wait for them forever)."""
  if not ray.is_initialized():
    ray.init(address=config.address or None, include_dashboard=False, logging_level="warning",
             configure_logging=False)
  needed = config.workers * config.cpus_per_worker
  available = ray.cluster_resources().get("CPU", 0.0)
  if needed > available:
    raise ValueError(f"ray: {config.workers} workers x {config.cpus_per_worker:g} CPUs need "
                     f"{needed:g} CPUs, the cluster has {available:g}; lower ray.cpus_per_worker "
                     "or the worker counts")


class RaySelfPlay(loop.SelfPlay):
  """:class:`sog.selfplay.loop.SelfPlay` whose actors and query solvers are Ray actors.

  The driver keeps the trainer, both buffers, the counters, the evaluation and the checkpoints.
  """

  def __init__(self, experiment: config_lib.Experiment):
    if experiment.backend != "ray":
      raise ValueError(f"RaySelfPlay runs an experiment whose backend is 'ray', not "
                       f"{experiment.backend!r}")
    super().__init__(experiment)

  def _start_roles(self) -> None:
    """The workers, on the cluster (started here if ``ray.address`` is empty)."""
    config = self.experiment.ray
    connect(config)
    options = {"num_cpus": config.cpus_per_worker}
    actor_class = ray.remote(**options)(_ActorWorker)
    solver_class = ray.remote(**options)(_SolverWorker)
    self._workers = {
        **{(_ACT, i): actor_class.remote(self.experiment, i) for i in range(config.actor_workers)},
        **{(_SOLVE, i): solver_class.remote(self.experiment, i)
           for i in range(config.solver_workers)}}
    self._in_flight: dict[ray.ObjectRef, tuple[tuple[str, int], Any]] = {}
    self._published: tuple[Any, ray.ObjectRef] | None = None

  def _deal_games(self) -> None:
    start = self._round_key(loop.DEALING)
    ray.get([worker.restart.remote(jax.random.fold_in(start, i))
             for (role, i), worker in self._workers.items() if role == _ACT])

  def _params_ref(self, params) -> ray.ObjectRef:
    """The published parameters in Ray's object store, put once per publication."""
    if self._published is None or self._published[0] is not params:
      self._published = (params, ray.put(jax.device_get(params)))
    return self._published[1]

  def _act_and_solve(self, params) -> None:
    """Gives every idle worker a task, then books the tasks that finished (at least one)."""
    busy = {worker for worker, _ in self._in_flight.values()}
    params_ref = self._params_ref(params)
    for (role, i), worker in self._workers.items():
      if role == _ACT and (role, i) not in busy:
        key = jax.random.fold_in(self._round_key(loop.ACTING), i)
        self._in_flight[worker.play.remote(params_ref, key)] = ((role, i), None)
    batch = self.experiment.selfplay.solver_batch
    for (role, i), worker in self._workers.items():
      if role == _SOLVE and (role, i) not in busy and len(self.queries) >= batch:
        waiting = self.queries.pop(batch)
        key = jax.random.fold_in(self._round_key(loop.SOLVING), i)
        self._in_flight[worker.solve.remote(params_ref, waiting, key)] = ((role, i), waiting)
    ray.wait(list(self._in_flight), num_returns=1)  # blocks until one has finished
    ready, _ = ray.wait(list(self._in_flight), num_returns=len(self._in_flight), timeout=0)
    for ref in ready:
      (role, _), waiting = self._in_flight.pop(ref)
      if role == _ACT:  # random queries per move of the games, as in one process
        self._played(*ray.get(ref))
        self._add_random_queries()
      else:
        self._solved(waiting, *ray.get(ref))

  def close(self) -> None:
    """Stops the workers (the tasks in flight are dropped)."""
    for worker in self._workers.values():
      ray.kill(worker)
    self._workers, self._in_flight = {}, {}
