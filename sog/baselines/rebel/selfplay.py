"""ReBeL's self-play (Brown et al. 2020, algorithm 1) on one host, in SoG's training harness.

Each of ``selfplay.games`` games runs from the root PBS (the priors) as a chain of subgames: solve
the subgame at the current PBS with the network at its leaves (:mod:`sog.baselines.rebel.search`),
add the example (PBS, the t-weighted mean of its iterations' root values), walk ``depth`` levels
down by pi^t of the drawn iteration t (one seat, drawn per walk, takes a uniform random legal action
with probability ``selfplay.eps`` at its decisions: ReBeL's exploration) and root the next subgame
where the walk ends, with the beliefs pi^t reaches it with (on-policy, even after an exploring
action, as ReBeL's code); a game that reaches a terminal starts again at the root. The draw is the
same as in play, P(t) proportional to t (ReBeL's code draws uniformly in training, linearly in
evaluation). A round advances every game by one subgame (one vmapped batch per root depth among the
games), then the trainer takes ``selfplay.train_steps_per_round`` steps on the replay buffer (the
CVPN's value head; no policy targets). The experiment is a SoG experiment (network, optimiser,
buffers, budgets, evaluation seeds) with a ``rebel`` section; its GT-CFR sections are unused.
:func:`train` runs it with :func:`sog.selfplay.run.drive`: the same progress lines, metrics,
checkpoints and plots as SoG's runs.
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import functools
import pathlib
import time
from typing import Any

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from sog.baselines.rebel import composed
from sog.baselines.rebel import config as rebel_config
from sog.eval import best_response
from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import registry
from sog.nets import checkpoint as checkpoint_lib
from sog.nets import cvpn as cvpn_lib
from sog.nets import leaf as leaf_lib
from sog.protocol import settings as settings_lib
from sog.search import tables as tables_lib
from sog.selfplay import buffers
from sog.selfplay import config as selfplay_config
from sog.selfplay import learner as learner_lib
from sog.selfplay import loop
from sog.selfplay import run as run_lib


@dataclasses.dataclass(frozen=True)
class ReBeLExperiment:
  """A ReBeL self-play run: ``base``'s game, network, optimiser, self-play buffers and ``eps``,
  budgets and evaluation seeds, and ReBeL's subgame settings."""

  base: selfplay_config.Experiment
  rebel: rebel_config.ReBeLConfig

  @property
  def setting(self) -> str:
    """The evaluation's name for the agent: ReBeL(depth, T)."""
    return f"ReBeL({self.rebel.depth},{self.rebel.iterations})"

  def to_dict(self) -> dict[str, Any]:
    return {**self.base.to_dict(), "rebel": dataclasses.asdict(self.rebel)}


def from_config_dict(config: ml_collections.ConfigDict | dict[str, Any]) -> ReBeLExperiment:
  """A SoG experiment's config with a ``rebel`` section (``ValueError`` for unknown keys in it)."""
  values = config.to_dict() if isinstance(config, ml_collections.ConfigDict) else dict(config)
  section = dict(values.pop("rebel", None) or {})
  fields = {f.name for f in dataclasses.fields(rebel_config.ReBeLConfig)}
  unknown = sorted(set(section) - fields)
  if unknown:
    raise ValueError(f"config.rebel: unknown keys {unknown}; valid keys: {sorted(fields)}")
  return ReBeLExperiment(
    base=selfplay_config.from_config_dict(values), rebel=rebel_config.ReBeLConfig(**section)
  )


def walk(
  tables: tables_lib.SearchTables,
  node: jax.Array,
  ranges: jax.Array,
  policy: jax.Array,
  explorer: jax.Array,
  rng: jax.Array,
  eps: float,
  depth: int,
) -> jax.Array:
  """The node ``depth`` levels below ``node`` (or the terminal on the way) that one game reaches: a
  world state drawn from the PBS (``ranges`` [2, S]), then each actor's action from ``policy``
  [N, S, A] (game nodes) or, for the ``explorer`` seat with probability ``eps``, uniformly."""
  keys = jax.random.split(rng, 3 * depth + 1)
  s0, s1 = tables_lib.sample_world(tables, node, ranges, keys[0])
  for step in range(depth):
    kind = tables.kind[node]
    own = jnp.where(kind == 1, s1, s0)
    legal = tables.legal[node, own]
    explore = (kind == explorer) & (jax.random.uniform(keys[3 * step + 1]) < eps)
    probabilities = jnp.where(explore, legal / legal.sum(), policy[node, own] * legal)
    probabilities = jnp.where(probabilities.sum() > 0, probabilities, 1.0)  # chance, terminal
    action = jax.random.categorical(keys[3 * step + 2], jnp.log(probabilities))
    child, t0, t1 = tables_lib.step_world(tables, node, s0, s1, action, keys[3 * step + 3])
    done = kind == public_game.TERMINAL
    node, s0, s1 = (jnp.where(done, node, child), jnp.where(done, s0, t0), jnp.where(done, s1, t1))
  return node


class ReBeLSelfPlay:
  """One ReBeL self-play run: the games in progress, replay buffer, trainer and counters."""

  def __init__(self, experiment: ReBeLExperiment):
    self.experiment = experiment
    base = experiment.base
    self.game = base.load_game()
    if not self.game.enumerable:
      raise registry.not_enumerable(self.game.name, "ReBeL's self-play (its CFR-D subgames)")
    tree = self.game.tree
    self.network = cvpn_lib.make_network(self.game.public_game, base.network)
    params = cvpn_lib.init_params(
      self.network, self.game.public_game, jax.random.PRNGKey(base.seed)
    )
    leaf_model = leaf_lib.cvpn_leaf_model(self.network, params, self.game.name)
    self.rebel = composed.ReBeL(self.game, leaf_model, experiment.rebel)
    selfplay = base.selfplay
    self.learner = learner_lib.Learner(
      self.game.public_game, self.network, base.optimizer, params, selfplay
    )
    self.rng = np.random.default_rng(base.seed)
    self.counters = dict.fromkeys(loop.COUNTERS, 0)
    self.counters["seconds"] = 0.0
    # the latest examples and their public belief states (diagnostics)
    self.last_solved: tuple[buffers.Queries, buffers.Examples] | None = None
    self._tables = tables_lib.make_tables(tree)
    self._walk = jax.jit(
      jax.vmap(
        functools.partial(walk, eps=selfplay.eps, depth=experiment.rebel.depth),
        in_axes=(None, 0, 0, 0, 0, 0),
      )
    )
    self._restart()

  @property
  def step(self) -> int:
    return self.learner.step

  @property
  def params(self):
    """The trainer's current parameters."""
    return self.learner.state.params

  def _restart(self) -> None:
    """Every game at the root PBS."""
    root = self.rebel.root_beliefs
    self.roots = np.zeros(self.experiment.base.selfplay.games, np.int64)
    self.ranges = np.broadcast_to(root, (self.roots.size, *root.shape)).copy()

  def _key(self) -> jax.Array:
    return jax.random.fold_in(
      jax.random.PRNGKey(self.experiment.base.seed), self.counters["rounds"]
    )

  def round(self) -> list[dict[str, float]]:
    """Every game one subgame further, then the trainer's steps; returns their metrics."""
    began = time.perf_counter()
    tree, games = self.game.tree, self.roots.size
    params = self.learner.published
    key = self._key()
    examples, solved = [], []  # the examples and their public states, by depth
    depths = tree.depth[self.roots]  # at the round's start: each game advances one subgame
    for depth in np.unique(depths):
      rows = np.flatnonzero(depths == depth)
      size = min(games, 1 << int(rows.size - 1).bit_length())  # a few batch shapes per depth
      padded = np.concatenate([rows, np.full(size - rows.size, rows[0])])
      keys = jax.random.split(jax.random.fold_in(key, int(depth)), 2 * size)
      subgames, solution = self.rebel.solve(
        self.roots[padded], self.ranges[padded], keys[:size], params
      )
      examples.append(
        buffers.search_examples(
          buffers.PublicFacts.at(tree, self.roots[rows]),
          self.ranges[rows],
          np.zeros((rows.size, *tree.legal.shape[1:]), np.float32),
          solution.root_values[: rows.size],
        ).replace(has_policy=np.zeros((rows.size, 2, tree.max_infostates), bool))
      )
      solved.append(self.roots[rows].copy())
      self._advance(rows, subgames, solution, keys[size:])
    added = buffers.concatenate(examples)
    self.learner.add(added)
    self.last_solved = (
      buffers.Queries(
        paths=buffers.node_paths(tree, np.concatenate(solved), tree.max_moves),
        ranges=added.ranges,
      ),
      added,
    )
    self.counters["moves"] += games
    self.counters["examples"] += added.size
    metrics = self.learner.train(
      min(
        self.experiment.base.selfplay.train_steps_per_round,
        self.experiment.base.max_steps - self.step,
      ),
      self.rng,
    )
    self.counters["rounds"] += 1
    self.counters["seconds"] += time.perf_counter() - began
    return metrics

  def _advance(self, rows: np.ndarray, subgames, solution, keys: jax.Array) -> None:
    """Walks the games ``rows`` down their solved slabs (row i of ``solution`` and ``subgames`` is
    game ``rows[i]``); a game reaching a terminal restarts at the root."""
    tree, depth = self.game.tree, self.rebel.config.depth
    policies = np.zeros((rows.size, *tree.legal.shape), np.float32)
    for i, subgame in enumerate(subgames[: rows.size]):
      game_nodes = composed.slab_game_nodes(subgame, depth)
      real = game_nodes >= 0
      policies[i, game_nodes[real]] = solution.policy[i][real]
    explorers = self.rng.integers(0, 2, rows.size)
    reached = np.asarray(
      self._walk(
        self._tables,
        jnp.asarray(self.roots[rows], jnp.int32),
        jnp.asarray(self.ranges[rows], jnp.float32),
        jnp.asarray(policies),
        jnp.asarray(explorers),
        keys[: rows.size],
      )
    )
    for i, (game, node) in enumerate(zip(rows, reached, strict=True)):
      if tree.kind[node] == public_game.TERMINAL:
        self.counters["games"] += 1
        self.roots[game], self.ranges[game] = 0, self.rebel.root_beliefs
        continue
      self.roots[game] = node
      self.ranges[game] = composed.leaf_beliefs(
        tree, subgames[i], solution.leaf_ranges[i], node, depth
      )

  def stats(self) -> dict[str, float]:
    return {
      "step": self.step,
      **{k: self.counters[k] for k in loop.COUNTERS},
      **self.learner.replay_stats(),
      "queries_waiting": 0,
    }

  def evaluate(self, seeds: int | None = None) -> dict[str, dict[str, float]]:
    """ReBeL's play with the trainer's network, composed over the whole tree: the per-seed
    exploitability (SoG's protocol) and that of the seeds' mixture (ReBeL's table 2)."""
    evaluation = self.experiment.base.evaluation
    count = evaluation.seeds if seeds is None else seeds
    first = evaluation.first_seed
    result = self.rebel.compose(
      range(first, first + count), evaluation.batch_size, params=self.params
    )
    mixture = best_response.exploitability(
      self.game, policy_lib.mixture(self.game.tree, result.policies)
    )
    name = self.experiment.setting
    return {
      name: {**result.summary(), "seconds": result.seconds},
      f"{name} mixture": {
        "min": mixture,
        "mean": mixture,
        "max": mixture,
        "seconds": result.seconds,
      },
    }

  def checkpoint_config(self) -> checkpoint_lib.CheckpointConfig:
    return checkpoint_lib.CheckpointConfig(
      game=self.game.name,
      network=self.experiment.base.network,
      optimizer=self.experiment.base.optimizer,
    )

  def search_settings(self) -> settings_lib.SearchSettings:
    """ReBeL's subgame settings (its evaluation uses them too)."""
    return settings_lib.of(rebel=self.experiment.rebel)

  def save_network(self, directory: str | pathlib.Path) -> None:
    checkpoint_lib.save(directory, self.learner.state, self.checkpoint_config())
    settings_lib.write(directory, self.search_settings())

  def save(self, directory: str | pathlib.Path) -> None:
    """The network, the replay buffer, the counters and the generator's state (games in progress
    restart at the root on resuming)."""
    state, replay = self.learner.snapshot()
    loop.write_checkpoint(
      directory,
      state,
      self.checkpoint_config(),
      self.search_settings(),
      replay,
      {
        "counters": self.counters,
        "rng": self.rng.bit_generator.state,
        "experiment": self.experiment.to_dict(),
      },
    )

  def restore(self, directory: str | pathlib.Path) -> None:
    state, arrays, progress = loop.read_checkpoint(
      directory, self.learner.state, self.checkpoint_config()
    )
    self.learner.load(state, arrays)
    self.counters.update(progress["counters"])
    self.rng.bit_generator.state = progress["rng"]
    self._restart()


def train(
  experiment: ReBeLExperiment,
  workdir: str | pathlib.Path,
  log: Callable[[str], None] | None = None,
  log_every_seconds: float = 10.0,
) -> dict:
  """Runs (or resumes) ReBeL's self-play in ``workdir`` (:func:`sog.selfplay.run.drive`)."""
  return run_lib.drive(
    ReBeLSelfPlay(experiment), experiment.base, workdir, "ReBeL self-play", log, log_every_seconds
  )
