"""Actors: self-play games of the SoG agent (SoG, Algorithm 2, "actor").

G games are played side by side. At every move each game's acting player re-solves from the summary
of its own last search (continual re-solving on the belief pool,
:mod:`sog.search.pool.belief_resolver`; the game's root beliefs at its first decision), exactly as
:class:`sog.search.SoGAgent` does, and samples its action from (1 - eps) * search policy + eps *
uniform; chance then acts by its distribution given the world state. In a perfect-information game
(one infostate per player) nothing is re-solved: each search is the plain search from the state the
game is at, as the SoG bot on a pgx game plays (:class:`sog.openspiel.pgx_bots.SoGBot`). The G
searches of a move run as vmapped chunks of ``chunk`` searches, each in a pool sized to its subgame
(:mod:`sog.search.pool.sized`; one compilation per pool size for every decision of the game); the
worlds step from the game's functions (:mod:`sog.games.worlds`), vmapped over the games.

What the actors hand on, per search of the played line:
  * a policy example: the PBS at the searched public state (both ranges under the search's average
    policy) with the search's policy for every infostate of the actor as the policy target; with
    ``actor_value_targets`` the search's values there as value targets; with probability p_td1 a
    TD(1) value target, the game's outcome at the infostate each player held (a sample of that
    infostate's value, in the network's per-opponent-mass units), in their place there;
  * each of its sampled leaf queries (``GTCFRConfig.query_samples`` of them, a uniform sample of
    every PBS its leaf model was asked for), with probability q_search, to the query buffer.
An example keeps its public state's network input and masks
(:class:`~sog.selfplay.buffers.PublicFacts`), a query its path of child slots from the game's root.
Games in progress are not checkpointed: a resumed run starts new games.
"""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import registry
from sog.games import worlds
from sog.search import predecessors
from sog.search import resolving
from sog.search.pool import belief_paths
from sog.search.pool import belief_resolving
from sog.search.pool import sized
from sog.search.pool.belief_searcher import GTCFR
from sog.selfplay import buffers
from sog.selfplay import config as config_lib


@dataclasses.dataclass
class Game:
  """A game in progress: the path of child slots from the game's root to the public state to move
  at, each player's summary of its last search (None after a plain search of a
  perfect-information game), and the moves so far (its world state is row g of
  :attr:`Actors.worlds`)."""

  path: list[int]
  summaries: list[belief_resolving.BeliefSummary | None]
  line: list[dict] = dataclasses.field(default_factory=list)


def pools_for(game: registry.Game, leaf_model, config, dtype=jnp.float32) -> sized.SizedPools:
  """The belief pool's searchers for self-play on ``game``; the actors and the solver share them
  (one compilation per config and pool size). Where the game is enumerated, each search runs in a
  pool sized to its subgame (:mod:`sog.search.pool.sized`) and the branch holds every re-solve
  continuing the player's own last search (:func:`sog.search.predecessors.branch_depth`), as the
  protocol's; where it is not, every search runs in the searcher's pool, its branch as long as the
  moves from one of a player's decisions to its next (:func:`~sog.games.public_game.decision_gap`),
  or none in a perfect-information game (its searches start at their states)."""
  tree = game.tree if game.enumerable else None
  if tree is not None:
    depth = predecessors.branch_depth(tree, "own")
  else:
    perfect = public_game.is_perfect_information(game.public_game)
    depth = 0 if perfect else public_game.decision_gap(game.public_game)
  searcher = GTCFR(game, leaf_model, config, dtype=dtype, branch_depth=depth)
  return sized.SizedPools(searcher, game.max_moves, tree)


class Actors:
  """G self-play games of the SoG agent on ``game``, searching with ``pools`` (:func:`pools_for`:
  the belief pool's searchers of the game, their leaf model a CVPN or any leaf model taking the same
  params). In a perfect-information game each search is the plain search from the state the game
  is at (W = 1, both ranges 1: the state is all either player knows), as the SoG bot's on pgx, and
  its queries are states (:func:`~sog.selfplay.buffers.searched`).

  ``play(params, key, rng)`` makes one move in every game and returns the examples of the games that
  ended and the queries handed to the solver.
  """

  def __init__(
    self,
    game: registry.Game,
    pools: sized.SizedPools,
    config: config_lib.SelfPlayConfig,
    chunk: int = 1,
    resolving_config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
  ):
    self.config, self.chunk, self.path_length = config, chunk, pools.path_length
    self.pools = pools
    self.perfect_information = public_game.is_perfect_information(game.public_game)
    self._resolver = sized.SizedResolver(pools, resolving_config)
    self._initial = self._resolver.initial_summary()
    rules = game.public_game
    self._deal = jax.jit(jax.vmap(lambda key: worlds.deal(rules, key)))
    self._step = jax.jit(jax.vmap(lambda world, a, key: worlds.step(rules, world, a, key)))
    self._kind = jax.jit(jax.vmap(lambda world: rules.kind(world.state)))
    self._utility = jax.jit(jax.vmap(lambda world: worlds.utility(rules, world)))
    self.restart(jax.random.PRNGKey(0))

  def restart(self, key: chex.PRNGKey) -> None:
    """Abandons the games in progress and deals G new ones."""
    count = self.config.games
    self.games: list[Game | None] = [None] * count
    self.worlds = None
    self._new_games(np.arange(count), jax.random.split(key, count))

  def _new_games(self, rows: np.ndarray, keys: chex.PRNGKey) -> None:
    """Deals new games in ``rows`` of the batch (their keys [G], the other rows' unused), chance
    acting up to the first decision."""
    deal_keys, chance_keys = _split(keys)
    dealt = jax.device_get(self._deal(deal_keys))
    if self.worlds is None:
      self.worlds = dealt
    else:
      self.worlds = _where_rows(np.isin(np.arange(len(self.games)), rows), dealt, self.worlds)
    for g in rows:
      self.games[g] = Game(path=[], summaries=[self._initial] * 2)
    self._through_chance(chance_keys)

  def _through_chance(self, keys: chex.PRNGKey) -> None:
    """Lets chance act in every game at a chance node (by its distribution given the world state)
    until a player acts or the game ends; game g draws from ``keys[g]``, one split per step."""
    while True:
      at_chance = np.asarray(self._kind(self.worlds)) == public_game.CHANCE
      if not at_chance.any():
        return
      keys, now = _split(keys)
      self._move(at_chance, np.zeros(len(self.games), np.int32), now)

  def _move(self, rows: np.ndarray, actions: np.ndarray, keys: chex.PRNGKey) -> None:
    """Steps the worlds of the games where ``rows`` [G] by ``actions`` [G] with ``keys`` [G]."""
    slots, stepped = jax.device_get(self._step(self.worlds, jnp.asarray(actions), keys))
    self.worlds = _where_rows(rows, stepped, self.worlds)
    for g in np.flatnonzero(rows):
      self.games[g].path.append(int(slots[g]))

  def play(
    self, params, key: chex.PRNGKey, rng: np.random.Generator
  ) -> tuple[buffers.Examples | None, buffers.Queries, int]:
    """One move of every game; the examples of the games it ended (None if none did), the queries
    handed on, and the number of games it ended."""
    search_key, step_key, deal_key = jax.random.split(key, 3)
    count = len(self.games)
    kinds = np.asarray(self._kind(self.worlds))
    first = [game.summaries[kinds[g]] is self._initial for g, game in enumerate(self.games)]
    moves = self._search(params, search_key, kinds)
    queries, actions = [], np.zeros(count, np.int32)
    for g, (game, (facts, ranges, policy, legal, values, sample, summary)) in enumerate(
      zip(self.games, moves, strict=True)
    ):
      player = int(kinds[g])
      infostates = self.worlds.infostates[g].copy()
      own = legal[infostates[player]]
      uniform = own / own.sum()
      played = np.where(own, policy[infostates[player]], 0.0).astype(np.float64)
      played = played / played.sum() if played.sum() > 0 else uniform
      actions[g] = rng.choice(
        own.size, p=(1.0 - self.config.eps) * played + self.config.eps * uniform
      )
      game.line.append(
        {"facts": facts, "world": infostates, "ranges": ranges, "policy": policy, "values": values}
      )
      game.summaries[player] = summary
      q = self.config.q_first if first[g] and self.config.q_first is not None else None
      queries.append((*sample, np.full(sample[2].shape, self.config.q_search if q is None else q)))
    keys = _per_game(step_key, count)
    step_keys, chance_keys = _split(keys)
    self._move(np.ones(count, bool), actions, step_keys)
    self._through_chance(chance_keys)
    ended = np.flatnonzero(np.asarray(self._kind(self.worlds)) == public_game.TERMINAL)
    finished = []
    if ended.size:
      utility = np.asarray(self._utility(self.worlds), np.float64)
      for g in ended:
        outcome = np.array([utility[g], -utility[g]])
        finished.append(self._line_examples(self.games[g].line, outcome, rng))
      self._new_games(ended, _per_game(deal_key, count))
    examples = buffers.concatenate(finished) if finished else None
    paths, ranges, keys, probability = (np.concatenate([q[i] for q in queries]) for i in range(4))
    return examples, buffers.hand_on(paths, ranges, keys, probability, rng), len(finished)

  def _search(self, params, key: chex.PRNGKey, kinds: np.ndarray) -> list[tuple]:
    """Every game's search: per game, the facts of the public state searched, the beliefs there
    [2, S], the policy [S, A], the legal actions [S, A], the value targets [2, S] (None without
    ``actor_value_targets``), the query sample (paths, ranges, keys) and the player's new
    summary."""
    rngs = _per_game(key, len(self.games))
    if self.perfect_information:
      return self._search_states(params, rngs)
    requests = [
      (game.summaries[int(kinds[g])], game.path, int(kinds[g])) for g, game in enumerate(self.games)
    ]
    out: list[tuple | None] = [None] * len(self.games)
    for resolved in self._resolver.resolve(requests, rngs, self.chunk, params):
      summaries = resolved.summaries()
      results, root_paths = jax.device_get((resolved.results, resolved.planned.root_path))
      for row, g in enumerate(resolved.jobs):
        out[g] = (*self._move_of(results, row, root_paths[row]), summaries[row])
    return out

  def _search_states(self, params, rngs: chex.PRNGKey) -> list[tuple]:
    """:meth:`_search` in a perfect-information game: each game's plain search from its state (no
    summary: nothing is re-solved)."""
    paths = [belief_paths.padded_path(game.path, self.path_length) for game in self.games]
    out: list[tuple | None] = [None] * len(self.games)
    for jobs, rows, searcher in self.pools.chunks(paths, self.chunk):
      states = jax.tree.map(lambda x, rows=rows: x[rows], self.worlds.state)
      results = jax.device_get(searcher.search_state_batch(rngs[rows], states, params))
      for row, g in enumerate(jobs):
        out[g] = (*self._move_of(results, row, paths[g]), None)
    return out

  def _move_of(self, results, row: int, root_path: np.ndarray) -> tuple:
    """What row ``row`` of a chunk's search ``results`` (its root at ``root_path``) gives a move:
    the facts, ranges, policy, legal actions and value targets at its focus, and its query
    sample."""
    facts, sample = buffers.searched(
      results, row, root_path, self.path_length, self.perfect_information
    )
    focus = int(results.focus[row])
    ranges = results.ranges[row, focus]
    values = None
    if self.config.actor_value_targets:
      values = buffers.root_values(results, row, ranges, self.config.unreached_targets)
    return facts, ranges, results.focus_policy[row], results.tree.legal[row, focus], values, sample

  def _line_examples(
    self, line: list[dict], utility: np.ndarray, rng: np.random.Generator
  ) -> buffers.Examples:
    """The examples of one finished game: a policy example per search of its line, with the TD(1)
    value target with probability p_td1."""
    facts = buffers.PublicFacts.stack([m["facts"] for m in line])
    ranges = np.stack([m["ranges"] for m in line])
    world = np.stack([m["world"] for m in line])
    searched = None if line[0]["values"] is None else np.stack([m["values"] for m in line])
    examples = buffers.search_examples(
      facts, ranges, np.stack([m["policy"] for m in line]), searched
    )
    td1 = rng.random(len(line)) < self.config.p_td1
    rows = np.arange(len(line))
    values, has_value = examples.values.copy(), examples.has_value.copy()
    opponent_mass = ranges.sum(-1)[:, ::-1]
    for p in range(2):
      held = rows, p, world[:, p]
      values[held] = np.where(td1, utility[p] * opponent_mass[:, p], values[held])
      has_value[held] = td1 | has_value[held]
    return examples.replace(values=values, has_value=has_value)


def _where_rows(rows: np.ndarray, new, old):
  """``new``'s rows where ``rows`` [G] (bool), ``old``'s elsewhere (pytrees of [G, ...] arrays)."""
  return jax.tree.map(
    lambda n, o: np.where(np.reshape(rows, (-1,) + (1,) * (o.ndim - 1)), n, o), new, old
  )


def _split(keys: chex.PRNGKey) -> tuple[chex.PRNGKey, chex.PRNGKey]:
  """Each of ``keys`` [G] split in two: the first halves [G] and the second [G]."""
  return tuple(jnp.moveaxis(jax.vmap(jax.random.split)(keys), 1, 0))


def _per_game(key: chex.PRNGKey, count: int) -> chex.PRNGKey:
  """[count] keys, game g's ``fold_in(key, g)``."""
  return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, jnp.arange(count))
