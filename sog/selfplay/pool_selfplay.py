"""Sound self-play on a perfect-information :class:`~sog.games.public_game.PublicGame` (pgx's
games), with GT-CFR on the belief pool (:class:`~sog.search.pool.BeliefGTCFR`, each search from the
state it is at) for the actors and the query solver.

A round: the ``games`` actor games each make one move (one vmapped batch of pool searches from their
states); each search's root gives an example (its state, the search's root values as the value
target, its root average policy as the policy target) and hands on its sampled frontier leaves as
queries; the action is drawn from the root policy (with probability ``eps`` uniformly instead). Once
``solver_batch`` queries wait, the solver searches from the oldest of them, each answer an example.
The trainer then takes ``train_steps_per_round`` steps on uniform minibatches of the replay buffer,
and the searches use its new parameters from the next round. With one infostate per player a public
belief state is its state: the CVPN reads any reach, 0 included, as the range 1
(``NetworkConfig.unreached_range = "uniform"``, this config's default) and its values per unit of
the opponent's reach are the players' expected utilities. A search's query sample draws among
(frontier node, pass) pairs, as every game's does, so a state can be drawn more than once; it is
handed on once (the search then hands on fewer than ``query_samples``; the node pool before issue
48's part 11 drew distinct states).

A work directory holds the checkpoint (``checkpoint/``: network, optimiser, step; ``scripts/play.py
--leaf=DIR`` reads it), the replay and query buffers and counters (``selfplay.npz``,
``selfplay.json``), ``metrics.csv`` and TensorBoard events; a run on a directory with a checkpoint
resumes from it. Games in progress are not saved.
"""

from __future__ import annotations

import csv
import json
import pathlib
import time

import jax
import jax.numpy as jnp
import numpy as np

from sog import monitoring
from sog import plotting
from sog.games import public_game
from sog.games import registry
from sog.nets import checkpoint as checkpoint_lib
from sog.nets import cvpn as cvpn_lib
from sog.nets import leaf as leaf_lib
from sog.nets import losses
from sog.nets import train as train_lib
from sog.protocol import settings as settings_lib
from sog.search import pool
from sog.selfplay import pool_config

_BUFFERS = "selfplay.npz"
_COUNTERS = "selfplay.json"
COUNTERS = ("rounds", "games", "moves", "queries_solved", "examples", "seconds")
METRICS = (
  "step",
  "seconds",
  "games",
  "moves",
  "queries_solved",
  "replay",
  "queries_waiting",
  "loss",
  "value_loss",
  "policy_loss",
)


class _Ring:
  """Named numpy columns of fixed capacity; a push past it overwrites the oldest rows."""

  def __init__(self, columns: dict[str, np.ndarray]):
    self.columns, self.size, self.next = columns, 0, 0
    self.capacity = next(iter(columns.values())).shape[0]

  def push(self, rows: dict[str, np.ndarray]) -> None:
    count = next(iter(rows.values())).shape[0]
    at = (self.next + np.arange(count)) % self.capacity
    for name, column in self.columns.items():
      column[at] = rows[name]
    self.next, self.size = (
      int((self.next + count) % self.capacity),
      min(self.size + count, self.capacity),
    )

  def pop_oldest(self, count: int) -> dict[str, np.ndarray]:
    at = (self.next - self.size + np.arange(count)) % self.capacity
    self.size -= count
    return {name: column[at] for name, column in self.columns.items()}

  def sample(self, count: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    at = rng.integers(0, self.size, count)
    return {name: column[at] for name, column in self.columns.items()}

  def state(self, prefix: str) -> dict[str, np.ndarray]:
    return {
      **{prefix + name: column for name, column in self.columns.items()},
      prefix + "_position": np.array([self.size, self.next]),
    }

  def load(self, state: dict[str, np.ndarray], prefix: str) -> None:
    for name in self.columns:
      self.columns[name][...] = state[prefix + name]
    self.size, self.next = (int(x) for x in state[prefix + "_position"])


def _examples(
  features: tuple[np.ndarray, ...], result: pool.BeliefSearchResult
) -> dict[str, np.ndarray]:
  """Replay rows of searched states (their encodings, movers and legal actions, ``features``): the
  search's root values and root average policy (each player's one infostate) as targets."""
  encoding, mover, legal = features
  return {
    "encoding": encoding,
    "mover": mover,
    "legal": legal,
    "values": np.asarray(result.focus_values[:, :, 0]),
    "policy": np.asarray(result.focus_policy[:, 0]),
  }


def _query_states(result: pool.BeliefSearchResult) -> tuple[list[np.ndarray], np.ndarray]:
  """The states of a batch of searches' sampled leaf queries (the leaves of a pytree of states,
  [B * Q, ...]) and which rows to keep: valid, and each state once per search (with one infostate
  per player a query is its state, whatever the ranges it was sampled at)."""
  nodes = np.asarray(result.queries.nodes)  # [B, Q]
  valid = np.isfinite(np.asarray(result.queries.keys))
  first = np.zeros_like(valid)
  for b in range(nodes.shape[0]):
    _, at = np.unique(np.where(valid[b], nodes[b], -1), return_index=True)
    first[b, at] = True
  states = jax.vmap(lambda states, at: jax.tree.map(lambda x: x[at], states))(
    result.tree.states, jnp.asarray(nodes)
  )
  leaves = [np.asarray(leaf).reshape(-1, *leaf.shape[2:]) for leaf in jax.tree.leaves(states)]
  return leaves, (valid & first).ravel()


def _batch(rows: dict[str, np.ndarray]) -> train_lib.Batch:
  """A training batch: the root values as value targets, the root policy as the mover's target."""
  pbs = leaf_lib.pool_pbs(
    jnp.asarray(rows["encoding"]), jnp.asarray(rows["mover"]), jnp.asarray(rows["legal"])
  )
  acts = pbs.policy_mask.any(-1)
  policy = jnp.where(acts[..., None], jnp.asarray(rows["policy"])[:, None, None, :], 0.0)
  return train_lib.Batch(
    pbs=pbs,
    targets=losses.Targets(
      values=jnp.asarray(rows["values"])[..., None], policy=policy, has_policy=acts
    ),
  )


class PoolSelfPlay:
  """One pool self-play run of ``experiment`` in ``workdir`` (resumed from its checkpoint)."""

  def __init__(self, experiment: pool_config.PoolExperiment, workdir: str | pathlib.Path):
    self.experiment, self.workdir = experiment, pathlib.Path(workdir)
    game = registry.load(experiment.game)
    self.game = game = game.public_game
    self.network = cvpn_lib.make_network(game, experiment.network)
    self.trainer = train_lib.Trainer(self.network, experiment.optimizer)
    params = cvpn_lib.init_params(self.network, game, jax.random.PRNGKey(experiment.seed))
    self.state = self.trainer.init(params)
    model = leaf_lib.cvpn_leaf_model(self.network, params, game.name)
    self.searcher = pool.BeliefGTCFR(game, model, experiment.search)
    self.checkpoint_config = checkpoint_lib.CheckpointConfig(
      game.name, experiment.network, experiment.optimizer
    )
    encoding, actions = game.encoding_size, game.num_actions
    self.replay = _Ring(
      {
        "encoding": np.zeros((experiment.replay_capacity, encoding), np.float32),
        "mover": np.zeros(experiment.replay_capacity, np.int32),
        "legal": np.zeros((experiment.replay_capacity, actions), bool),
        "values": np.zeros((experiment.replay_capacity, 2), np.float32),
        "policy": np.zeros((experiment.replay_capacity, actions), np.float32),
      }
    )
    leaves, self._treedef = jax.tree.flatten(game.root())
    self.queries = _Ring(
      {
        str(i): np.zeros((experiment.query_capacity, *np.shape(leaf)), np.asarray(leaf).dtype)
        for i, leaf in enumerate(leaves)
      }
    )
    self.counters = dict.fromkeys(COUNTERS, 0)
    self.rng = np.random.default_rng(experiment.seed)
    self.key = jax.random.PRNGKey(experiment.seed + 1)
    self.states = self._roots(experiment.games)
    self._step = jax.jit(jax.vmap(game.child))
    self._kind = jax.jit(jax.vmap(game.kind))
    self._features = jax.jit(
      lambda states: (
        jax.vmap(game.encode)(states),
        jax.vmap(game.kind)(states),
        jax.vmap(lambda s: game.legal(s)[0])(states),
      )
    )
    if (self.workdir / "checkpoint" / "config.json").is_file():
      self._resume()

  def _roots(self, count: int):
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (count, *jnp.shape(x))), self.game.root())

  def _keys(self, count: int) -> jax.Array:
    self.key, key = jax.random.split(self.key)
    return jax.random.split(key, count)

  def _search(self, states) -> pool.BeliefSearchResult:
    return self.searcher.search_state_batch(
      self._keys(jax.tree.leaves(states)[0].shape[0]), states, self.state.params
    )

  def act(self) -> None:
    """One move of every actor game: examples, handed-on queries, actions, finished games."""
    result = self._search(self.states)
    features = tuple(np.asarray(x) for x in self._features(self.states))
    self.replay.push(_examples(features, result))
    leaves, keep = _query_states(result)
    self.queries.push({str(i): leaf[keep] for i, leaf in enumerate(leaves)})
    policy = np.asarray(result.focus_policy[:, 0], np.float64)
    legal = features[2]
    uniform = legal / legal.sum(-1, keepdims=True)
    explore = self.rng.random(policy.shape[0]) < self.experiment.eps
    policy = np.where(explore[:, None], uniform, policy)
    actions = [self.rng.choice(p.size, p=p / p.sum()) for p in policy]
    self.states = self._step(self.states, jnp.asarray(actions, jnp.int32))
    over = np.asarray(self._kind(self.states)) == public_game.TERMINAL
    if over.any():
      roots = self._roots(over.size)
      self.states = jax.tree.map(
        lambda new, old: jnp.where(over.reshape(-1, *[1] * (old.ndim - 1)), new, old),
        roots,
        self.states,
      )
    self.counters["games"] += int(over.sum())
    self.counters["moves"] += policy.shape[0]
    self.counters["examples"] += policy.shape[0]

  def solve(self) -> None:
    """Answers the oldest ``solver_batch`` queries once that many wait."""
    count = self.experiment.solver_batch
    if self.queries.size < count:
      return
    rows = self.queries.pop_oldest(count)
    states = jax.tree.unflatten(
      self._treedef, [jnp.asarray(rows[str(i)]) for i in range(len(rows))]
    )
    self.replay.push(
      _examples(tuple(np.asarray(x) for x in self._features(states)), self._search(states))
    )
    self.counters["queries_solved"] += count
    self.counters["examples"] += count

  def learn(self) -> dict:
    if self.replay.size < self.experiment.min_replay:
      return {}
    metrics = {}
    for _ in range(self.experiment.train_steps_per_round):
      batch = _batch(self.replay.sample(self.experiment.batch_size, self.rng))
      self.state, metrics = self.trainer.step(self.state, batch)
    return {name: float(value) for name, value in metrics.items()}

  @property
  def steps(self) -> int:
    return int(self.state.step)

  def save(self) -> None:
    """The buffers and counters (written aside, then renamed into place), then the checkpoint. A
    kill before the checkpoint is written leaves the previous checkpoint with buffers a little
    newer than it, which a resume takes as they are."""
    buffers, counters = self.workdir / (_BUFFERS + ".tmp"), self.workdir / (_COUNTERS + ".tmp")
    with open(buffers, "wb") as file:
      np.savez(file, **self.replay.state("replay/"), **self.queries.state("queries/"))
    counters.write_text(
      json.dumps(
        {
          "counters": self.counters,
          "rng": self.rng.bit_generator.state,
          "key": np.asarray(self.key).tolist(),
        }
      )
    )
    buffers.replace(self.workdir / _BUFFERS)
    counters.replace(self.workdir / _COUNTERS)
    checkpoint_lib.save(self.workdir / "checkpoint", self.state, self.checkpoint_config)
    settings_lib.write(self.workdir / "checkpoint", settings_lib.of(self.experiment.search))

  def _resume(self) -> None:
    missing = [name for name in (_BUFFERS, _COUNTERS) if not (self.workdir / name).is_file()]
    if missing:
      raise ValueError(
        f"{self.workdir} holds a checkpoint but not {', '.join(missing)}: it is not "
        "a pool self-play work directory (or was copied in part)"
      )
    self.state, _ = checkpoint_lib.restore(
      self.workdir / "checkpoint", self.state, self.checkpoint_config
    )
    buffers = np.load(self.workdir / _BUFFERS)
    self.replay.load(buffers, "replay/")
    self.queries.load(buffers, "queries/")
    saved = json.loads((self.workdir / _COUNTERS).read_text())
    self.counters.update(saved["counters"])
    self.rng.bit_generator.state = saved["rng"]
    self.key = jnp.asarray(saved["key"], jnp.uint32)


def train(
  experiment: pool_config.PoolExperiment,
  workdir: str | pathlib.Path,
  log_every_seconds: float = 10.0,
) -> dict:
  """Runs self-play until ``max_steps`` or ``max_seconds`` (the whole run's, resumed parts
  included); returns the run's summary."""
  run = PoolSelfPlay(experiment, workdir)
  budget_seconds = experiment.max_seconds or float("inf")
  started, last_save, last_log = time.perf_counter(), time.perf_counter(), 0.0
  before = run.counters["seconds"]
  total = experiment.max_seconds if experiment.max_seconds else experiment.max_steps
  progress = monitoring.Progress(
    f"{experiment.game} self-play",
    total,
    unit="%" if experiment.max_seconds else "step",
    every_seconds=log_every_seconds,
    initial=before if experiment.max_seconds else run.steps,
  )
  metrics = {}
  with monitoring.MetricsWriter(run.workdir) as writer:
    while (
      run.steps < experiment.max_steps and before + time.perf_counter() - started < budget_seconds
    ):
      run.act()
      run.solve()
      metrics = run.learn() or metrics
      run.counters["rounds"] += 1
      now = time.perf_counter()
      run.counters["seconds"] = before + now - started
      done = run.counters["seconds"] if experiment.max_seconds else run.steps
      progress.update(
        done,
        f"{run.steps} steps, {run.counters['games']} games, "
        f"{run.counters['queries_solved']} queries solved, replay "
        f"{run.replay.size}" + (f", loss {metrics['loss']:.3f}" if metrics else ""),
      )
      if now - last_log >= log_every_seconds:
        writer.write(
          "metrics",
          METRICS,
          {
            "step": run.steps,
            **run.counters,
            "replay": run.replay.size,
            "queries_waiting": run.queries.size,
            **metrics,
          },
        )
        last_log = now
      if now - last_save >= experiment.checkpoint_every_seconds:
        run.save()
        last_save = now
    run.save()
  progress.close()
  plot_losses(run.workdir, experiment.game)
  return {"game": experiment.game, "steps": run.steps, **run.counters, **metrics}


def plot_losses(workdir: pathlib.Path, game: str) -> None:
  """``losses.png`` in ``workdir``: the value and policy losses of its metrics.csv by train step."""
  with open(workdir / "metrics.csv", newline="") as file:
    rows = [row for row in csv.DictReader(file) if row["loss"]]
  if not rows:
    return
  steps = [int(row["step"]) for row in rows]
  plotting.line_plot(
    workdir / "losses.png",
    {
      name.replace("_", " "): (steps, [float(row[name]) for row in rows])
      for name in ("value_loss", "policy_loss")
    },
    title=f"{game}: pool self-play",
    xlabel="train step",
    ylabel="loss (latest minibatch)",
  )
