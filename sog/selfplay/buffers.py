"""The two buffers of self-play: queries waiting for the solver, and training examples.

Both live on the host as fixed-size NumPy rings (a self-play round moves a few hundred rows; the
searches and the train step are where the time goes), and both save to and restore from a dict of
arrays, so a checkpoint holds their exact contents.
"""

from __future__ import annotations

import chex
import jax
import numpy as np

from sog.nets import cvpn as cvpn_lib
from sog.search.pool import belief_paths


@chex.dataclass(frozen=True)
class Queries:
  """Public belief states a search asked its leaf model about: paths [B, L] int32 (the child slots
  from the game's root to each public state, -1 past the end) and ranges [B, 2, S]."""

  paths: np.ndarray
  ranges: np.ndarray

  @property
  def size(self) -> int:
    return int(self.paths.shape[0])


@chex.dataclass(frozen=True)
class Examples:
  """Training examples for the CVPN: the PBS (its public state's network input encoding [B, E],
  who acts there kind [B], the infostates each player can hold valid [B, 2, S], the actor's legal
  actions legal [B, S, A], and the ranges [B, 2, S]) and its targets, values [B, 2, S] (library cfv
  units) where has_value [B, 2, S], policies [B, 2, S, A] where has_policy [B, 2, S]."""

  encoding: np.ndarray
  kind: np.ndarray
  valid: np.ndarray
  legal: np.ndarray
  ranges: np.ndarray
  values: np.ndarray
  has_value: np.ndarray
  policy: np.ndarray
  has_policy: np.ndarray

  @property
  def size(self) -> int:
    return int(self.ranges.shape[0])

  def pbs(self) -> cvpn_lib.PBS:
    """The network's input for these examples."""
    return cvpn_lib.pbs_of(self.encoding, self.kind, self.valid, self.legal, self.ranges)


@chex.dataclass(frozen=True)
class PublicFacts:
  """What an example keeps of its public states [B]: ``encoding`` [B, E], ``kind`` [B], ``valid``
  [B, 2, S] and the actor's ``legal`` [B, S, A]."""

  encoding: np.ndarray
  kind: np.ndarray
  valid: np.ndarray
  legal: np.ndarray

  @classmethod
  def at(cls, source, rows: np.ndarray) -> PublicFacts:
    """The facts of ``rows`` of ``source``: nodes of an enumerated tree or slots of a belief pool's
    tree (host arrays, one search's), which name them alike."""
    rows = np.asarray(rows, np.int64)
    return cls(
      encoding=np.asarray(source.encoding[rows], np.float32),
      kind=np.asarray(source.kind[rows], np.int32),
      valid=np.asarray(source.valid[rows], bool),
      legal=np.asarray(source.legal[rows], bool),
    )

  @classmethod
  def stack(cls, rows: list[PublicFacts]) -> PublicFacts:
    fields = cls.__dataclass_fields__
    return cls(**{name: np.concatenate([getattr(r, name) for r in rows]) for name in fields})


def _empty(cls, capacity: int, shapes: dict[str, tuple[tuple[int, ...], type]]):
  fields = {
    name: np.zeros((capacity, *shapes[name][0]), shapes[name][1])
    for name in cls.__dataclass_fields__
  }
  return cls(**fields)


class _Ring:
  """Rows in a fixed array, written round-robin; ``added`` counts every row ever written."""

  def __init__(self, rows, capacity: int):
    self.rows, self.capacity, self.added = rows, capacity, 0

  def __len__(self) -> int:
    return min(self.added, self.capacity)

  def _write(self, new) -> np.ndarray:
    """Writes ``new``'s rows (its last ``capacity``) over the oldest; returns their slots."""
    count = new.size
    skip = max(0, count - self.capacity)
    slots = (self.added + skip + np.arange(count - skip)) % self.capacity
    for name in self.rows.__dataclass_fields__:
      getattr(self.rows, name)[slots] = getattr(new, name)[skip:]
    self.added += count
    return slots

  def _check_rows(self, new) -> None:
    for name in self.rows.__dataclass_fields__:
      have, want = np.shape(getattr(new, name))[1:], getattr(self.rows, name).shape[1:]
      if have != want:
        raise ValueError(f"{name} rows must have shape {want}, got {have}")

  def _state(self, prefix: str) -> dict[str, np.ndarray]:
    state = {f"{prefix}{name}": getattr(self.rows, name) for name in self.rows.__dataclass_fields__}
    state[f"{prefix}added"] = np.asarray(self.added)
    return state

  def _load(self, state: dict[str, np.ndarray], prefix: str) -> None:
    for name in self.rows.__dataclass_fields__:
      key = f"{prefix}{name}"
      want = getattr(self.rows, name)
      if key not in state or state[key].shape != want.shape:
        raise ValueError(
          f"saved buffer field {key} is missing or has another shape than "
          f"{want.shape} (another game or capacity, or buffers written before 2026-11-27, "
          "when examples and queries were named by tree nodes)"
        )
      want[...] = state[key]
    self.added = int(state[f"{prefix}added"])


class QueryBuffer(_Ring):
  """A first-in first-out queue of queries for the solver; when full, new queries replace the oldest
  waiting ones (they were asked of an older network)."""

  def __init__(self, capacity: int, num_infostates: int, path_length: int):
    if capacity < 1:
      raise ValueError(f"query buffer capacity must be >= 1, got {capacity}")
    shapes = {"paths": ((path_length,), np.int32), "ranges": ((2, num_infostates), np.float32)}
    super().__init__(_empty(Queries, capacity, shapes), capacity)
    self.taken = 0  # rows popped so far (the oldest waiting row is at ``taken % capacity``)

  def __len__(self) -> int:
    return self.added - self.taken

  def push(self, queries: Queries) -> None:
    self._check_rows(queries)
    self._write(queries)
    self.taken = max(self.taken, self.added - self.capacity)  # overwritten rows are gone

  def pop(self, count: int) -> Queries:
    """Up to ``count`` of the oldest waiting queries (fewer if fewer wait)."""
    count = min(count, len(self))
    slots = (self.taken + np.arange(count)) % self.capacity
    self.taken += count
    return Queries(paths=self.rows.paths[slots].copy(), ranges=self.rows.ranges[slots].copy())

  def state(self) -> dict[str, np.ndarray]:
    return {**self._state("query_"), "query_taken": np.asarray(self.taken)}

  def load(self, state: dict[str, np.ndarray]) -> None:
    self._load(state, "query_")
    self.taken = int(state["query_taken"])


class ReplayBuffer(_Ring):
  """A sliding window over the newest ``capacity`` examples, each drawn for at most ``max_updates``
  train steps (SoG table S2: "max gradient updates per example").

  ``sample`` draws uniformly without replacement among the examples in the window that have been
  used fewer than ``max_updates`` times, and counts the draw.
  """

  def __init__(
    self,
    capacity: int,
    num_infostates: int,
    num_actions: int,
    encoding_size: int,
    max_updates: int,
  ):
    if capacity < 1 or max_updates < 1:
      raise ValueError(
        f"replay capacity and max_updates must be >= 1, got {capacity}, {max_updates}"
      )
    S, A = num_infostates, num_actions
    shapes = {
      "encoding": ((encoding_size,), np.float32),
      "kind": ((), np.int32),
      "valid": ((2, S), bool),
      "legal": ((S, A), bool),
      "ranges": ((2, S), np.float32),
      "values": ((2, S), np.float32),
      "has_value": ((2, S), bool),
      "policy": ((2, S, A), np.float32),
      "has_policy": ((2, S), bool),
    }
    super().__init__(_empty(Examples, capacity, shapes), capacity)
    self.max_updates = max_updates
    self.uses = np.zeros(capacity, np.int32)

  def add(self, examples: Examples) -> None:
    self._check_rows(examples)
    self.uses[self._write(examples)] = 0

  def available(self) -> int:
    """Examples that may still be drawn."""
    return int((self.uses[: len(self)] < self.max_updates).sum())

  def sample(self, batch_size: int, rng: np.random.Generator) -> Examples | None:
    """``batch_size`` examples, or None while fewer than that may still be drawn."""
    eligible = np.flatnonzero(self.uses[: len(self)] < self.max_updates)
    if eligible.size < batch_size:
      return None
    slots = rng.choice(eligible, size=batch_size, replace=False)
    self.uses[slots] += 1
    return Examples(
      **{name: getattr(self.rows, name)[slots].copy() for name in self.rows.__dataclass_fields__}
    )

  def state(self) -> dict[str, np.ndarray]:
    return {**self._state("replay_"), "replay_uses": self.uses}

  def load(self, state: dict[str, np.ndarray]) -> None:
    self._load(state, "replay_")
    if state.get("replay_uses", np.zeros(0)).shape != self.uses.shape:
      raise ValueError("saved replay buffer has no use counts of the right shape")
    self.uses[...] = state["replay_uses"]


def search_examples(
  facts: PublicFacts,
  ranges: np.ndarray,
  root_policy: np.ndarray,
  root_values: np.ndarray | None = None,
) -> Examples:
  """Examples from searches at public states with ``facts`` [B] and root ``ranges`` [B, 2, S]: the
  search's policy [B, S, A] as the actor's policy target (none at chance nodes) and, if given, its
  root counterfactual values [B, 2, S] as value targets at every valid infostate."""
  count, (S, A) = facts.kind.shape[0], root_policy.shape[1:]
  acts = facts.kind[:, None] == np.arange(2)[None, :]  # [B, 2]
  valid = facts.valid
  policy = np.zeros((count, 2, S, A), np.float32)
  policy[acts] = root_policy[acts.any(-1)]
  has_value = valid if root_values is not None else np.zeros_like(valid)
  values = np.zeros((count, 2, S), np.float32) if root_values is None else root_values
  return Examples(
    encoding=facts.encoding,
    kind=facts.kind,
    valid=valid,
    legal=facts.legal,
    ranges=np.asarray(ranges, np.float32),
    values=np.where(has_value, values, 0.0).astype(np.float32),
    has_value=has_value,
    policy=policy * (acts[:, :, None] & valid)[..., None],
    has_policy=acts[:, :, None] & valid,
  )


def concatenate(parts: list[Examples]) -> Examples:
  return Examples(
    **{
      name: np.concatenate([getattr(p, name) for p in parts])
      for name in Examples.__dataclass_fields__
    }
  )


def hand_on(
  paths: np.ndarray,
  ranges: np.ndarray,
  keys: np.ndarray,
  probability: float | np.ndarray,
  rng: np.random.Generator,
) -> Queries:
  """The queries of searches' samples (their public states' ``paths`` [..., L], ``ranges`` and
  ``keys`` of a ``QuerySample``, any leading shape) that go to the query buffer: each sampled one
  (finite key) with ``probability`` (a scalar, or one per query), if both players reach it (a PBS
  where a player's range is empty has no values to learn)."""
  reached = (ranges.sum(-1) > 0).all(-1)
  handed = np.isfinite(keys) & reached & (rng.random(keys.shape) < probability)
  return Queries(paths=paths[handed].astype(np.int32), ranges=ranges[handed].astype(np.float32))


def node_paths(tree, nodes: np.ndarray, length: int) -> np.ndarray:
  """[B, length] int32: the paths of child slots from the root to ``nodes`` of an enumerated
  ``tree``, -1 past the end."""
  paths = np.full((len(nodes), length), -1, np.int32)
  for row, node in enumerate(nodes):
    paths[row] = belief_paths.padded_path(tree.paths[int(node)], length)
  return paths


def searched(results, row: int, root_path: np.ndarray, length: int, as_states: bool = False):
  """Row ``row`` of a batch of belief-pool search ``results`` (host arrays), its root at
  ``root_path`` from the game's root: the facts of its focus (:class:`PublicFacts`, one row) and its
  sample of leaf queries as (paths [Q, length], ranges, keys), for :func:`search_examples` and
  :func:`hand_on`.

  With ``as_states`` (a perfect-information game: one infostate per player, so a public state is
  all either player knows and its PBS is the state at any reach) each sampled state is asked once,
  at ranges 1: the sample draws among (frontier node, pass) pairs, so a later draw of a node already
  drawn is dropped (its key made infinite), and a state the search's average policy does not reach
  is still asked."""
  pool = jax.tree.map(lambda x: x[row], results.tree)
  asked = results.queries
  nodes, ranges, keys = (np.asarray(x[row]) for x in (asked.nodes, asked.ranges, asked.keys))
  if as_states:
    drawn = np.isfinite(keys)
    first = np.zeros_like(drawn)
    first[np.unique(np.where(drawn, nodes, -1), return_index=True)[1]] = True
    keys = np.where(first, keys, np.inf)
    ranges = np.asarray(pool.valid)[nodes].astype(ranges.dtype)
  paths = belief_paths.slot_paths(pool, nodes, root_path, length)
  facts = PublicFacts.at(pool, np.array([int(results.focus[row])]))
  return facts, (paths, ranges, keys)


def root_values(results, row: int, ranges: np.ndarray, unreached_targets: str) -> np.ndarray:
  """[2, S] the value targets of row ``row`` of a batch of belief-pool search ``results`` (host
  arrays): its counterfactual values at the focus, whose ``ranges`` [2, S] are the search's there;
  at an infostate they do not reach, with ``unreached_targets="best_response"``, the best response's
  value (see :class:`~sog.selfplay.config.SelfPlayConfig`)."""
  values = np.asarray(results.focus_values[row])
  if unreached_targets == "best_response":
    best = results.best_response_values[row, int(results.focus[row])]
    values = np.where(ranges <= 0, best, values)
  return values
