"""Actors: self-play games of the SoG agent (SoG, Algorithm 2, "actor").

A batch of G games is played in lockstep. At every move each game's acting player re-solves from the
summary of its own last search (continual re-solving, :mod:`sog.search.resolving`; the game's root
beliefs at its first decision), exactly as :class:`sog.search.SoGAgent` does, and samples its action
from (1 - eps) * search policy + eps * uniform; chance then acts by its distribution given the world
state. Planning, the G searches, the action, the world's step and the reset of finished games are one
jitted function of fixed-shape arrays (the searches under ``vmap``); the host only turns the results
into examples and queries.

What the actors hand on, per search of the played line:
  * a policy example: the PBS at the searched public state (both ranges under the search's average
    policy) with the search's policy for every infostate of the actor as the policy target; with
    probability p_td1 it also carries a TD(1) value target, the game's outcome at the infostate each
    player held (a sample of that infostate's value, in the network's per-opponent-mass units);
  * each of its sampled leaf queries (``GTCFRConfig.query_samples`` of them, a uniform sample of every
    PBS its leaf model was asked for), with probability q_search, to the query buffer.
Games in progress are not checkpointed: a resumed run starts new games.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import registry
from sog.games import rules as rules_lib
from sog.search import gtcfr
from sog.search import leaf_models
from sog.search import resolving
from sog.search import tables as tables_lib
from sog.selfplay import buffers
from sog.selfplay import config as config_lib


@chex.dataclass(frozen=True)
class Games:
  """G games in progress: the public state to move at [G] (a decision), both players' infostates
  [G, 2], and each player's summary of its last search (arrays [G, 2, ...])."""

  node: chex.Array
  world: chex.Array
  summaries: resolving.Summary


@chex.dataclass(frozen=True)
class Moves:
  """One move of every game: the public state searched [G], the infostates [G, 2],
  the beliefs there under the search's average policy [G, 2, S], the search's policy [G, S, A], its
  query sample, and where the move led: end_node [G] (terminal when ``finished``), end_world [G, 2]."""

  node: chex.Array
  world: chex.Array
  ranges: chex.Array
  policy: chex.Array
  queries: gtcfr.QuerySample
  end_node: chex.Array
  end_world: chex.Array
  finished: chex.Array


def _through_chance(tables: tables_lib.SearchTables, node, s0, s1, rng):
  """Lets chance act (by its distribution given the world state) until a player acts or the game
  ends."""

  def step(carry):
    node, s0, s1, rng = carry
    rng, now = jax.random.split(rng)
    return (*tables_lib.step_world(tables, node, s0, s1, 0, now), rng)

  node, s0, s1, _ = jax.lax.while_loop(lambda c: tables.kind[c[0]] == rules_lib.CHANCE, step,
                                       (node, s0, s1, rng))
  return node, s0, s1


def deal(tables: tables_lib.SearchTables, root_ranges: chex.Array, rng: chex.PRNGKey):
  """A new game: a world state drawn from the root's beliefs (the deal), then chance to the first
  decision. Returns (node, s0, s1)."""
  world_rng, chance_rng = jax.random.split(rng)
  s0, s1 = tables_lib.sample_world(tables, 0, root_ranges, world_rng)
  return _through_chance(tables, jnp.int32(0), s0, s1, chance_rng)


def _new_game(tables, initial: resolving.Summary, root_ranges, rng):
  node, s0, s1 = deal(tables, root_ranges, rng)
  both = jax.tree.map(lambda x: jnp.stack([x, x]), initial)
  return Games(node=node, world=jnp.stack([s0, s1]), summaries=both)


def _move_one(tables, search_one, params, initial, root_ranges, game: Games, rng, eps: float,
              resolving_config: resolving.ResolvingConfig) -> tuple[Games, Moves]:
  """One move of one game (the function the actors vmap)."""
  search_rng, action_rng, step_rng, chance_rng, deal_rng = jax.random.split(rng, 5)
  node = game.node
  player = jnp.clip(tables.kind[node], 0, 1)
  mine = jax.tree.map(lambda x: x[player], game.summaries)
  start = resolving.plan(tables, mine, node, resolving_config)
  result = search_one(params, search_rng, start)
  infostate = game.world[player]
  legal = tables.legal[node, infostate]
  uniform = legal / legal.sum()
  played = jnp.where(legal, result.root_policy[infostate], 0.0)
  played = jnp.where(played.sum() > 0, played / played.sum(), uniform)
  action = jax.random.choice(action_rng, legal.shape[0], p=(1.0 - eps) * played + eps * uniform)
  child, s0, s1 = tables_lib.step_world(tables, node, game.world[0], game.world[1], action, step_rng)
  end_node, s0, s1 = _through_chance(tables, child, s0, s1, chance_rng)
  finished = tables.kind[end_node] == rules_lib.TERMINAL
  summaries = jax.tree.map(lambda all_, new: all_.at[player].set(new), game.summaries,
                           resolving.summarise(result))
  continued = Games(node=end_node, world=jnp.stack([s0, s1]), summaries=summaries)
  fresh = _new_game(tables, initial, root_ranges, deal_rng)
  moves = Moves(node=node, world=game.world, ranges=result.ranges[node],
                policy=result.root_policy, queries=result.queries, end_node=end_node,
                end_world=continued.world, finished=finished)
  return jax.tree.map(lambda f, c: jnp.where(finished, f, c), fresh, continued), moves


def outcome(tree, node: int, world: np.ndarray) -> np.ndarray:
  """[2] the players' utilities at terminal ``node`` for the world state (s0, s1)."""
  s0, s1 = int(world[0]), int(world[1])
  u0 = tree.payoff[node, s0, s1] / tree.pair_weight[node, s0, s1]
  return np.array([u0, -u0])


class Actors:
  """G self-play games of the SoG agent with a CVPN (or any leaf model taking the same params).

  ``play(params, key, rng)`` makes one move in every game and returns the examples of the games that
  ended and the queries handed to the solver.
  """

  def __init__(self, game: registry.Game, leaf_model: leaf_models.LeafModel,
               search_config: gtcfr.GTCFRConfig, config: config_lib.SelfPlayConfig):
    self.tree, self.config = game.tree, config
    searcher = gtcfr.GTCFR(game, leaf_model, search_config)
    self.tables = searcher.tables  # a jit argument, not a constant: big tables compile slowly
    root_ranges = searcher.root_ranges(None)
    resolving_config = resolving.ResolvingConfig(safe=config.safe, alpha=config.alpha)

    def move_all(tables, params, games, key):
      initial = resolving.initial_summary(tables, root_ranges)
      search_one = functools.partial(gtcfr.search, tables, leaf_model.apply, config=search_config,
                                     capacity=searcher.capacity, k=searcher.k)
      search = lambda params, rng, start: search_one(params=params, rng=rng, start=start)  # noqa: E731
      keys = jax.random.split(key, config.games)
      return jax.vmap(lambda g, k: _move_one(tables, search, params, initial, root_ranges, g, k,
                                             config.eps, resolving_config))(games, keys)

    def deal_all(tables, keys):
      initial = resolving.initial_summary(tables, root_ranges)
      return jax.vmap(lambda k: _new_game(tables, initial, root_ranges, k))(keys)

    self._move = jax.jit(move_all)
    self._deal = jax.jit(deal_all)
    self.restart(jax.random.PRNGKey(0))

  def restart(self, key: chex.PRNGKey) -> None:
    """Abandons the games in progress and deals G new ones."""
    self.games = self._deal(self.tables, jax.random.split(key, self.config.games))
    self.lines: list[list[dict]] = [[] for _ in range(self.config.games)]

  def play(self, params, key: chex.PRNGKey,
           rng: np.random.Generator) -> tuple[buffers.Examples | None, buffers.Queries, int]:
    """One move of every game (one vmapped batch of searches); the examples of the games it ended
    (None if none did), the queries handed on, and the number of games it ended."""
    self.games, moves = self._move(self.tables, params, self.games, key)
    moves = jax.device_get(moves)
    finished = []
    for g in range(self.config.games):
      self.lines[g].append({k: moves[k][g] for k in ("node", "world", "ranges", "policy")})
      if moves.finished[g]:
        finished.append(self._line_examples(self.lines[g], outcome(self.tree, moves.end_node[g],
                                                                    moves.end_world[g]), rng))
        self.lines[g] = []
    examples = buffers.concatenate(finished) if finished else None
    sample = moves.queries
    queries = buffers.hand_on(sample.nodes, sample.ranges, sample.keys, self.config.q_search, rng)
    return examples, queries, len(finished)

  def _line_examples(self, line: list[dict], utility: np.ndarray,
                     rng: np.random.Generator) -> buffers.Examples:
    """The examples of one finished game: a policy example per search of its line, with the TD(1)
    value target with probability p_td1."""
    nodes = np.array([m["node"] for m in line])
    ranges = np.stack([m["ranges"] for m in line])
    world = np.stack([m["world"] for m in line])
    examples = buffers.search_examples(self.tree, nodes, ranges, np.stack([m["policy"] for m in line]))
    td1 = rng.random(len(line)) < self.config.p_td1
    rows = np.arange(len(line))
    values, has_value = examples.values.copy(), examples.has_value.copy()
    opponent_mass = ranges.sum(-1)[:, ::-1]
    for p in range(2):
      values[rows, p, world[:, p]] = np.where(td1, utility[p] * opponent_mass[:, p], 0.0)
      has_value[rows, p, world[:, p]] = td1
    return examples.replace(values=values, has_value=has_value)
