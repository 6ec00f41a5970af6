"""Sound self-play on one host: the roles of SoG (actors, query solver, trainer) interleaved in one
process, round by round, with their buffers, and a checkpoint of all of it.

A round is: every actor game makes one move (one vmapped batch of re-solving searches), their
finished games' examples go to the replay buffer and their handed-on queries to the query buffer;
the solver answers the ``solver_batch`` oldest queries once that many wait (one vmapped batch of
searches), adding examples and recursive queries; the trainer takes ``train_steps_per_round`` steps.
On 2 CPU cores the roles share the cores through XLA's own threads rather than fight over them as
Python threads.

A checkpoint (:meth:`SelfPlay.save`) is a ``sog.nets`` checkpoint directory (parameters, optimiser
state, step; ``scripts/evaluate.py --leaf=DIR`` reads it) with, beside it, both buffers' contents,
the counters and the random generators' states. Games in progress and queries being solved are not
saved.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shutil
import time
from typing import Any

import jax
import numpy as np

from sog.games import public_game
from sog.games import registry
from sog.nets import checkpoint as checkpoint_lib
from sog.nets import cvpn as cvpn_lib
from sog.nets import dataset
from sog.nets import leaf as leaf_lib
from sog.protocol import composed
from sog.protocol import settings as settings_lib
from sog.search import leaf_models
from sog.search import types as search_types
from sog.search.pool import sized
from sog.selfplay import actor as actor_lib
from sog.selfplay import buffers
from sog.selfplay import config as config_lib
from sog.selfplay import learner as learner_lib
from sog.selfplay import query_solver

_BUFFERS = "selfplay.npz"
_PROGRESS = "selfplay.json"
ROLES = ACTING, SOLVING, DEALING = range(3)  # the roles drawing device randomness in a round
COUNTERS = ("rounds", "games", "moves", "queries_added", "queries_solved", "examples", "seconds")


class SelfPlay:
  """One self-play run of ``experiment``: its roles, buffers and counters."""

  def __init__(self, experiment: config_lib.Experiment):
    self.experiment = experiment
    self.game, self.network, params, self.leaf_model = initial_network(experiment)
    check_enumerable(experiment, self.game)
    selfplay = experiment.selfplay
    self.learner = self._start_learner(params)
    self._pools: dict[search_types.GTCFRConfig, sized.SizedPools] = {}
    self.path_length = self.game.max_moves  # a query's path of child slots
    self.queries = buffers.QueryBuffer(
      selfplay.query_capacity, self.game.public_game.max_infostates, self.path_length
    )
    self.rng = np.random.default_rng(experiment.seed)
    self.counters = dict.fromkeys(COUNTERS, 0)
    self.counters["seconds"] = 0.0
    # the solver's latest queries and answers (diagnostics)
    self.last_solved: tuple[buffers.Queries, buffers.Examples] | None = None
    self._start_roles()
    self._deal_games()

  def _start_learner(self, params) -> learner_lib.Learner:
    """The trainer role with the replay buffer, here in this process."""
    return learner_lib.Learner(
      self.game.public_game,
      self.network,
      self.experiment.optimizer,
      params,
      self.experiment.selfplay,
    )

  def _start_roles(self) -> None:
    """The actor and query-solver roles, here in this process, sharing its compiled searches."""
    experiment, selfplay = self.experiment, self.experiment.selfplay
    self.actors = actor_lib.Actors(
      self.game,
      self._searchers(experiment.actor),
      selfplay,
      selfplay.search_chunk,
      experiment.resolving,
    )
    self.solver = query_solver.QuerySolver(
      self.game, self._searchers(experiment.solver), selfplay, selfplay.search_chunk
    )

  def _deal_games(self) -> None:
    """New actor games, at the start and after a restore (games in progress are not saved)."""
    self.actors.restart(self._round_key(DEALING))

  @property
  def step(self) -> int:
    return self.learner.step

  @property
  def params(self):
    """The trainer's current parameters (evaluation and diagnostics use them)."""
    return self.learner.state.params

  def _round_key(self, role: int):
    """The device randomness of a role in the current round (a function of the seed and the round,
    so a resumed run does not replay the random streams of its first rounds)."""
    key = jax.random.fold_in(jax.random.PRNGKey(self.experiment.seed), self.counters["rounds"])
    return jax.random.fold_in(key, role)

  def round(self) -> list[dict[str, float]]:
    """One round of acting, solving and training; returns the train steps' metrics. The round
    trains ``selfplay.train_steps_per_round`` steps per move of the actors' games it booked, so
    training keeps the same pace against acting however the moves arrive."""
    started = time.perf_counter()
    moves = self._act_and_solve(self.learner.published)
    metrics = self.learner.train(
      min(
        self.experiment.selfplay.train_steps_per_round * moves,
        self.experiment.max_steps - self.step,
      ),
      self.rng,
    )
    self.counters["rounds"] += 1
    self.counters["seconds"] += time.perf_counter() - started
    return metrics

  def _act_and_solve(self, params) -> int:
    """The round's acting and solving with ``params``: one move of every actor game, then one batch
    of the oldest queries if a full one waits (a padded search costs as much as a real one).
    Returns the moves of ``selfplay.games`` games booked (here 1)."""
    examples, queries, finished = self.actors.play(params, self._round_key(ACTING), self.rng)
    self._played(examples, queries, finished)
    self._add_random_queries()
    batch = self.experiment.selfplay.solver_batch
    if len(self.queries) >= batch:
      waiting = self.queries.pop(batch)
      solved, recursive = self.solver.solve(params, waiting, self._round_key(SOLVING), self.rng)
      self._solved(waiting, solved, recursive)
    return 1

  def _add_random_queries(self) -> None:
    """``selfplay.random_queries`` queries at random public belief states, if any."""
    if self.experiment.selfplay.random_queries:
      nodes, ranges = dataset.random_pbs(
        self.game, self.experiment.selfplay.random_queries, self.rng, policies=1
      )
      self._add(
        None,
        buffers.Queries(
          paths=buffers.node_paths(self.game.tree, nodes, self.path_length),
          ranges=ranges.astype(np.float32),
        ),
      )

  def _played(
    self, examples: buffers.Examples | None, queries: buffers.Queries, finished: int
  ) -> None:
    """Books one move of ``selfplay.games`` actor games: ``finished`` ended with ``examples``."""
    self.counters["moves"] += self.experiment.selfplay.games
    self.counters["games"] += finished
    self._add(examples, queries)

  def _solved(
    self, waiting: buffers.Queries, solved: buffers.Examples, recursive: buffers.Queries
  ) -> None:
    """Books the solver's answers to the ``waiting`` queries and its recursive queries."""
    self.counters["queries_solved"] += waiting.size
    self.last_solved = (waiting, solved)
    self._add(solved, recursive)

  def _add(self, examples: buffers.Examples | None, queries: buffers.Queries) -> None:
    if examples is not None:
      self.learner.add(examples)
      self.counters["examples"] += examples.size
    if queries.size:
      self.queries.push(queries)
      self.counters["queries_added"] += queries.size

  def _searchers(self, config: search_types.GTCFRConfig) -> sized.SizedPools:
    """One set of searchers on the belief pool (one compiled search per pool size) per search
    config, shared by the roles and the protocol's evaluation."""
    if config not in self._pools:
      self._pools[config] = actor_lib.pools_for(self.game, self.leaf_model, config)
    return self._pools[config]

  def stats(self) -> dict[str, float]:
    """Counters, buffer fill and the train step."""
    return {
      "step": self.step,
      **{k: self.counters[k] for k in COUNTERS},
      **self.learner.replay_stats(),
      "queries_waiting": len(self.queries),
    }

  # -- evaluation ------------------------------------------------------------------------------

  def evaluate(self, seeds: int | None = None) -> dict[str, dict[str, float]]:
    """SoG's protocol (``sog.protocol.compose``) with the trainer's current network, for every
    setting of the experiment's evaluation: {"SoG(s,c)": {"min", "mean", "max", "seconds"}}."""
    evaluation = self.experiment.evaluation
    seeds = (
      evaluation.seed_range
      if seeds is None
      else range(evaluation.first_seed, evaluation.first_seed + seeds)
    )
    out = {}
    for (sims, c), name in zip(evaluation.settings, evaluation.names, strict=True):
      config = dataclasses.replace(
        self.experiment.actor, simulations=sims, simulations_per_phase=c
      )  # the actors' compiled search if s, c match
      result = composed.compose(
        self._searchers(config),
        seeds,
        self.experiment.resolving,
        evaluation.batch_size,
        params=self.params,
        tree=self.game.tree,
      )
      out[name] = {**result.summary(), "seconds": result.seconds}
    return out

  # -- checkpoints -----------------------------------------------------------------------------

  def checkpoint_config(self) -> checkpoint_lib.CheckpointConfig:
    return checkpoint_lib.CheckpointConfig(
      game=self.game.name, network=self.experiment.network, optimizer=self.experiment.optimizer
    )

  def search_settings(self) -> settings_lib.SearchSettings:
    """The actors' search and re-solving (the protocol evaluation uses them too, each setting with
    its own s and c); the search alone for a perfect-information game that is not enumerated
    (nothing re-solves it: its searches start at their states, and there is no protocol)."""
    if not self.game.enumerable and public_game.is_perfect_information(self.game.public_game):
      return settings_lib.of(self.experiment.actor)
    return settings_lib.of(self.experiment.actor, self.experiment.resolving, "own")

  def save_network(self, directory: str | pathlib.Path) -> None:
    """Writes the trainer's network alone (a ``sog.nets`` checkpoint with its search settings) to
    ``directory``."""
    checkpoint_lib.save(directory, self.learner.state, self.checkpoint_config())
    settings_lib.write(directory, self.search_settings())

  def save(self, directory: str | pathlib.Path) -> None:
    """Writes the checkpoint to ``directory`` (:func:`write_checkpoint`)."""
    state, replay = self.learner.snapshot()
    write_checkpoint(
      directory,
      state,
      self.checkpoint_config(),
      self.search_settings(),
      {**replay, **self.queries.state()},
      {
        "counters": self.counters,
        "rng": self.rng.bit_generator.state,
        "experiment": self.experiment.to_dict(),
      },
    )

  def restore(self, directory: str | pathlib.Path) -> None:
    """Continues from the checkpoint in ``directory`` (``ValueError`` if it was written for another
    game, network or optimiser, or its buffers for other sizes)."""
    state, arrays, progress = read_checkpoint(
      directory, self.learner.state, self.checkpoint_config()
    )
    self.learner.load(state, arrays)
    self.queries.load(arrays)
    self.counters.update(progress["counters"])
    self.rng.bit_generator.state = progress["rng"]
    self._deal_games()


def check_enumerable(experiment: config_lib.Experiment, game: registry.Game) -> None:
  """``ValueError`` where ``experiment`` asks for what only an enumerated game gives and ``game``
  is not enumerable: the protocol's evaluation, random PBS queries, value diagnostics."""
  if game.enumerable:
    return
  asked = [
    ("evaluation.settings", experiment.evaluation.settings, "()", "SoG's protocol, exactly"),
    ("selfplay.random_queries", experiment.selfplay.random_queries, "0", "PBSs of the tree"),
    ("diagnostics_every_steps", experiment.diagnostics_every_steps, "0", "exact solves"),
  ]
  wrong = [f"{field} = {off} (it needs {why})" for field, value, off, why in asked if value]
  if wrong:
    raise ValueError(
      f"{game.name} is not enumerable: set {'; '.join(wrong)}; the searches, the solver and the "
      "trainer need no enumeration"
    )


def initial_network(
  experiment: config_lib.Experiment,
) -> tuple[registry.Game, cvpn_lib.CVPN, Any, leaf_models.LeafModel]:
  """The experiment's game, its CVPN, the initial parameters (from ``experiment.seed``) and the CVPN
  leaf model the roles search with (each call with new parameters)."""
  game = experiment.load_game()
  network = cvpn_lib.make_network(game.public_game, experiment.network)
  params = cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(experiment.seed))
  return game, network, params, leaf_lib.cvpn_leaf_model(network, params, game.name)


def write_checkpoint(
  directory: str | pathlib.Path,
  state,
  config: checkpoint_lib.CheckpointConfig,
  settings: settings_lib.SearchSettings,
  arrays: dict[str, np.ndarray],
  progress: dict,
) -> None:
  """Writes a self-play checkpoint: the network's train state (a ``sog.nets`` checkpoint) with the
  search ``settings`` it was trained with (``search.json``), the buffers' ``arrays`` and the JSON
  ``progress`` (counters, generator states, experiment), atomically: a new one is written beside the
  old and then takes its place, so a run killed while saving keeps the previous checkpoint."""
  directory = pathlib.Path(directory).absolute()
  partial = directory.with_name(directory.name + ".partial")
  shutil.rmtree(partial, ignore_errors=True)
  checkpoint_lib.save(partial, state, config)
  settings_lib.write(partial, settings)
  np.savez(partial / _BUFFERS, **arrays)
  (partial / _PROGRESS).write_text(json.dumps(progress, indent=1, default=list))
  previous = directory.with_name(directory.name + ".previous")
  shutil.rmtree(previous, ignore_errors=True)
  if directory.exists():
    directory.rename(previous)
  partial.rename(directory)
  shutil.rmtree(previous, ignore_errors=True)


def read_checkpoint(
  directory: str | pathlib.Path, template, config: checkpoint_lib.CheckpointConfig
) -> tuple[Any, dict, dict]:
  """What :func:`write_checkpoint` wrote: (train state, buffer arrays, progress); ``ValueError`` if
  the network was written for another game, network or optimiser."""
  directory = pathlib.Path(directory)
  state, _ = checkpoint_lib.restore(directory, template, config)
  with np.load(directory / _BUFFERS) as saved:
    arrays = dict(saved)
  return state, arrays, json.loads((directory / _PROGRESS).read_text())


def saved_replay(directory: str | pathlib.Path) -> buffers.Examples:
  """The replay window saved in the self-play checkpoint at ``directory`` (a run's work directory or
  its ``checkpoint/``): every example the run held when it saved, in slot order. For refitting a
  network offline on a run's own targets (``scripts/fit_cvpn.py --replay``)."""
  directory = checkpoint_lib.locate(directory, _BUFFERS)
  if not (directory / _BUFFERS).is_file():
    raise ValueError(f"no self-play buffers ({_BUFFERS}) in {directory} or its checkpoint/")
  with np.load(directory / _BUFFERS) as saved:
    if "replay_kind" not in saved:
      raise ValueError(
        f"{directory / _BUFFERS} holds replay examples named by tree nodes (written before "
        "2026-11-27); this version keeps each example's public-state facts and cannot read them"
      )
    count = min(int(saved["replay_added"]), saved["replay_kind"].shape[0])
    return buffers.Examples(
      **{name: saved[f"replay_{name}"][:count] for name in buffers.Examples.__dataclass_fields__}
    )


def has_checkpoint(directory: str | pathlib.Path) -> bool:
  """Whether ``directory`` holds a checkpoint, after putting back the previous one if a run was
  killed between the two renames of :meth:`SelfPlay.save`."""
  directory = pathlib.Path(directory).absolute()
  previous = directory.with_name(directory.name + ".previous")
  if not directory.exists() and (previous / _PROGRESS).is_file():
    previous.rename(directory)
  return (directory / _PROGRESS).is_file()
