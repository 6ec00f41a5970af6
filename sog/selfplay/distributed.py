"""SoG's self-play with its roles on Ray (SoG, Algorithm 2, across processes and hosts): actors,
query solvers and the trainer as Ray actors, the query buffer in the driver.

Each actor worker plays ``selfplay.games`` games of the SoG agent
(:class:`sog.selfplay.actor.Actors`) and each solver worker runs a query solver
(:class:`sog.selfplay.query_solver.QuerySolver`), each with its own compiled searches. The trainer
worker holds :class:`sog.selfplay.learner.Learner`, the CVPN's train state with the replay buffer;
the driver reaches it through :class:`RemoteLearner`, which has the Learner's interface, so the
run's loop, checkpoints and evaluation are the local run's (:class:`sog.selfplay.loop.SelfPlay`).
The driver keeps one task in flight per actor and solver worker. A round gives every idle worker its
next task with the trainer's latest published parameters (a solver worker only when a full batch of
queries waits), waits until at least one task has finished, sends the examples the finished tasks
returned to the trainer and books their queries, and asks the trainer for
``selfplay.train_steps_per_round`` steps per finished actor task (one move of its games, as a local
round), so training keeps a local run's pace against acting. Acting and solving so go on while the
trainer trains, on as many cores and hosts as the cluster has; the trainer publishes parameters
every ``selfplay.publish_every`` steps (one copy in Ray's object store per publication, which a
worker's next task carries), and can sit on a GPU node (``ray.trainer_gpus``).

Checkpoints hold the network, both buffers and the counters, as a local run's. Tasks in flight and
games in progress are not saved, so a resumed run starts new games, as a local one does, and the
queries a solver task held are dropped.

On a cluster, every node needs this package installed (the workers import ``sog``); set
``ray.address`` to the cluster's ("auto" on a node of it).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import ray

from sog.selfplay import actor as actor_lib
from sog.selfplay import buffers
from sog.selfplay import config as config_lib
from sog.selfplay import learner as learner_lib
from sog.selfplay import loop
from sog.selfplay import query_solver

_ACT, _SOLVE = "act", "solve"
_TRAINING = len(loop.ROLES)  # the trainer's minibatch stream, after the rounds' device streams


class _ActorWorker:
  """A Ray actor playing ``selfplay.games`` games of the SoG agent."""

  def __init__(self, experiment: config_lib.Experiment, index: int):
    game, _, _, leaf_model = loop.initial_network(experiment)
    pools = actor_lib.pools_for(game, leaf_model, experiment.actor)
    self.actors = actor_lib.Actors(
      game, pools, experiment.selfplay, experiment.selfplay.search_chunk, experiment.resolving
    )
    self.rng = np.random.default_rng([experiment.seed, 1, index])

  def restart(self, key: jax.Array) -> None:
    self.actors.restart(key)

  def play(self, params, key: jax.Array):
    return self.actors.play(params, key, self.rng)


class _SolverWorker:
  """A Ray actor answering batches of queries."""

  def __init__(self, experiment: config_lib.Experiment, index: int):
    game, _, _, leaf_model = loop.initial_network(experiment)
    pools = actor_lib.pools_for(game, leaf_model, experiment.solver)
    self.solver = query_solver.QuerySolver(
      game, pools, experiment.selfplay, experiment.selfplay.search_chunk
    )
    self.rng = np.random.default_rng([experiment.seed, 2, index])

  def solve(self, params, queries: buffers.Queries, key: jax.Array):
    return self.solver.solve(params, queries, key, self.rng)


class _LearnerWorker:
  """A Ray actor holding the trainer and the replay buffer (:class:`sog.selfplay.learner.Learner`);
  its minibatches are drawn by its own generator (seeded by the run's seed and the step it starts
  or resumes at)."""

  def __init__(self, experiment: config_lib.Experiment):
    game, network, params, _ = loop.initial_network(experiment)
    self.learner = learner_lib.Learner(
      game.public_game, network, experiment.optimizer, params, experiment.selfplay
    )
    self.seed = experiment.seed
    self.rng = np.random.default_rng([self.seed, _TRAINING, 0])

  def add(self, examples: buffers.Examples) -> None:
    self.learner.add(examples)

  def train(self, steps: int, published_step: int):
    """Up to ``steps`` train steps: (their metrics, the step, the published parameters and their
    step if they changed since ``published_step``, else None)."""
    metrics = self.learner.train(steps, self.rng)
    published = None
    if self.learner.published_step != published_step:
      published = (self.learner.published_step, jax.device_get(self.learner.published))
    return metrics, self.learner.step, published

  def replay_stats(self) -> dict[str, int]:
    return self.learner.replay_stats()

  def state(self):
    return jax.device_get(self.learner.state)

  def snapshot(self):
    state, replay = self.learner.snapshot()
    return jax.device_get(state), replay

  def load(self, state, arrays: dict[str, np.ndarray]) -> None:
    self.learner.load(state, arrays)
    self.rng = np.random.default_rng([self.seed, _TRAINING, self.learner.step])


class RemoteLearner:
  """The driver's handle on the trainer worker, with :class:`sog.selfplay.learner.Learner`'s
  interface (``step``, ``state``, ``published``, ``add``, ``train``, ``replay_stats``, ``snapshot``,
  ``load``). Examples go to the worker without waiting (Ray runs one caller's calls to an actor in
  order, so a train call sees every example sent before it); ``train`` waits for its steps, while
  the actor and solver workers go on with their tasks. ``rng`` arguments are ignored: the worker
  draws its minibatches with its own generator."""

  def __init__(self, experiment: config_lib.Experiment, params):
    config = experiment.ray
    worker = ray.remote(num_cpus=config.trainer_cpus, num_gpus=config.trainer_gpus)(_LearnerWorker)
    self._worker = worker.remote(experiment)
    self.published, self._published_step, self.step = params, 0, 0
    self._sent: list[ray.ObjectRef] = []

  @property
  def state(self):
    return ray.get(self._worker.state.remote())

  def add(self, examples: buffers.Examples) -> None:
    self._sent.append(self._worker.add.remote(examples))

  def train(self, steps: int, rng: np.random.Generator | None = None) -> list[dict[str, float]]:
    del rng
    if steps <= 0:  # a round that booked no move: no round trip to the trainer
      return []
    metrics, self.step, published = ray.get(self._worker.train.remote(steps, self._published_step))
    ray.get(self._sent)  # raises here if an example batch was refused
    self._sent = []
    if published is not None:
      self._published_step, self.published = published
    return metrics

  def replay_stats(self) -> dict[str, int]:
    return ray.get(self._worker.replay_stats.remote())

  def snapshot(self):
    return ray.get(self._worker.snapshot.remote())

  def load(self, state, arrays: dict[str, np.ndarray]) -> None:
    ray.get(self._worker.load.remote(state, arrays))
    self.step, self.published = int(state.step), state.params
    self._published_step = self.step

  def close(self) -> None:
    ray.kill(self._worker)


def connect(config: config_lib.RayConfig) -> None:
  """Joins ``config.address``'s cluster, or starts a local one on this machine's cores; checks that
  it has the CPUs and GPUs the workers and the trainer reserve (Ray would otherwise wait for them
  forever)."""
  if not ray.is_initialized():
    ray.init(
      address=config.address or None,
      include_dashboard=False,
      logging_level="warning",
      configure_logging=False,
    )
  resources = ray.cluster_resources()
  needed = config.workers * config.cpus_per_worker + config.trainer_cpus
  if needed > resources.get("CPU", 0.0):
    raise ValueError(
      f"ray: {config.workers} workers x {config.cpus_per_worker:g} CPUs and the "
      f"trainer's {config.trainer_cpus:g} need {needed:g} CPUs, the cluster has "
      f"{resources.get('CPU', 0.0):g}; lower ray.cpus_per_worker, ray.trainer_cpus "
      "or the worker counts"
    )
  if config.trainer_gpus > resources.get("GPU", 0.0):
    raise ValueError(
      f"ray: the trainer reserves {config.trainer_gpus:g} GPUs, the cluster has "
      f"{resources.get('GPU', 0.0):g}; lower ray.trainer_gpus"
    )


class RaySelfPlay(loop.SelfPlay):
  """:class:`sog.selfplay.loop.SelfPlay` whose actors, query solvers and trainer are Ray actors.

  The driver keeps the query buffer, the counters, the evaluation and the checkpoints.
  """

  def __init__(self, experiment: config_lib.Experiment):
    if experiment.backend != "ray":
      raise ValueError(
        f"RaySelfPlay runs an experiment whose backend is 'ray', not {experiment.backend!r}"
      )
    super().__init__(experiment)

  def _start_learner(self, params) -> RemoteLearner:
    """The trainer worker, on the cluster (started here if ``ray.address`` is empty)."""
    connect(self.experiment.ray)
    return RemoteLearner(self.experiment, params)

  def _start_roles(self) -> None:
    """The actor and solver workers."""
    config = self.experiment.ray
    options = {"num_cpus": config.cpus_per_worker}
    actor_class = ray.remote(**options)(_ActorWorker)
    solver_class = ray.remote(**options)(_SolverWorker)
    self._workers = {
      **{(_ACT, i): actor_class.remote(self.experiment, i) for i in range(config.actor_workers)},
      **{
        (_SOLVE, i): solver_class.remote(self.experiment, i) for i in range(config.solver_workers)
      },
    }
    self._in_flight: dict[ray.ObjectRef, tuple[tuple[str, int], Any]] = {}
    self._published: tuple[Any, ray.ObjectRef] | None = None

  def _deal_games(self) -> None:
    start = self._round_key(loop.DEALING)
    ray.get(
      [
        worker.restart.remote(jax.random.fold_in(start, i))
        for (role, i), worker in self._workers.items()
        if role == _ACT
      ]
    )

  def _params_ref(self, params) -> ray.ObjectRef:
    """The published parameters in Ray's object store, put once per publication."""
    if self._published is None or self._published[0] is not params:
      self._published = (params, ray.put(jax.device_get(params)))
    return self._published[1]

  def _act_and_solve(self, params) -> int:
    """Gives every idle worker a task, then books the tasks that finished (at least one); returns
    the actor tasks booked (each one move of ``selfplay.games`` games)."""
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
    moves = 0
    for ref in ready:
      (role, _), waiting = self._in_flight.pop(ref)
      if role == _ACT:  # random queries per move of the games, as in one process
        self._played(*ray.get(ref))
        self._add_random_queries()
        moves += 1
      else:
        self._solved(waiting, *ray.get(ref))
    return moves

  def close(self) -> None:
    """Stops the workers and the trainer (the tasks in flight are dropped)."""
    for worker in self._workers.values():
      ray.kill(worker)
    self.learner.close()
    self._workers, self._in_flight = {}, {}
