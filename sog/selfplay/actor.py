"""Actors: self-play games of the SoG agent (SoG, Algorithm 2, "actor").

G games are played side by side. At every move each game's acting player re-solves from the summary
of its own last search (continual re-solving, :mod:`sog.search.resolving`; the game's root beliefs
at its first decision), exactly as :class:`sog.search.SoGAgent` does, and samples its action from
(1 - eps) * search policy + eps * uniform; chance then acts by its distribution given the world
state. Each search runs in the compact tables of its re-solving root's subgame
(:mod:`sog.search.subgames`), so a move deep in a game costs what that subgame costs: the moves of
the G games are grouped by the depth of that root and run as vmapped chunks of ``chunk`` searches
(one compilation per depth). The world's step (chance, given the world state) is a jitted function
of the game's tables.

What the actors hand on, per search of the played line:
  * a policy example: the PBS at the searched public state (both ranges under the search's average
    policy) with the search's policy for every infostate of the actor as the policy target; with
    probability p_td1 it also carries a TD(1) value target, the game's outcome at the infostate each
    player held (a sample of that infostate's value, in the network's per-opponent-mass units);
  * each of its sampled leaf queries (``GTCFRConfig.query_samples`` of them, a uniform sample of
    every PBS its leaf model was asked for), with probability q_search, to the query buffer.
Games in progress are not checkpointed: a resumed run starts new games.
"""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.search import gtcfr
from sog.search import resolver as resolver_lib
from sog.search import resolving
from sog.search import subgames as subgames_lib
from sog.search import tables as tables_lib
from sog.selfplay import buffers
from sog.selfplay import config as config_lib


@dataclasses.dataclass
class Game:
  """A game in progress: the public state to move at (a decision of the game's tree), both players'
  infostates (the world state), each player's summary of its last search, and the moves so far."""

  node: int
  world: np.ndarray
  summaries: list[subgames_lib.PlacedSummary]
  line: list[dict] = dataclasses.field(default_factory=list)


def _through_chance(tables: tables_lib.SearchTables, node, s0, s1, rng):
  """Lets chance act (by its distribution given the world state) until a player acts or the game
  ends."""

  def step(carry):
    node, s0, s1, rng = carry
    rng, now = jax.random.split(rng)
    return (*tables_lib.step_world(tables, node, s0, s1, 0, now), rng)

  node, s0, s1, _ = jax.lax.while_loop(
    lambda c: tables.kind[c[0]] == public_game.CHANCE, step, (node, s0, s1, rng)
  )
  return node, s0, s1


def deal(tables: tables_lib.SearchTables, root_ranges: chex.Array, rng: chex.PRNGKey):
  """A new game: a world state drawn from the root's beliefs (the deal), then chance to the first
  decision. Returns (node, s0, s1)."""
  world_rng, chance_rng = jax.random.split(rng)
  s0, s1 = tables_lib.sample_world(tables, 0, root_ranges, world_rng)
  return _through_chance(tables, jnp.int32(0), s0, s1, chance_rng)


def advance(tables: tables_lib.SearchTables, node, s0, s1, action, rng):
  """The world after ``action`` at decision ``node``, chance acting until the next decision or the
  end. Returns (node, s0, s1)."""
  step_rng, chance_rng = jax.random.split(rng)
  child, s0, s1 = tables_lib.step_world(tables, node, s0, s1, action, step_rng)
  return _through_chance(tables, child, s0, s1, chance_rng)


def outcome(tree, node: int, world: np.ndarray) -> np.ndarray:
  """[2] the players' utilities at terminal ``node`` for the world state (s0, s1)."""
  s0, s1 = int(world[0]), int(world[1])
  u0 = tree.payoff[node, s0, s1] / tree.pair_weight[node, s0, s1]
  return np.array([u0, -u0])


class Actors:
  """G self-play games of the SoG agent, searching with ``searcher`` (its leaf model a CVPN, or any
  leaf model taking the same params).

  ``play(params, key, rng)`` makes one move in every game and returns the examples of the games that
  ended and the queries handed to the solver.
  """

  def __init__(
    self,
    searcher: gtcfr.GTCFR,
    config: config_lib.SelfPlayConfig,
    chunk: int = 1,
    resolving_config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
  ):
    self.tree, self.config, self.chunk = searcher.tree, config, chunk
    self.searcher = searcher
    self.tables = self.searcher.tables  # the game's: the world steps in them
    self.root_ranges = self.searcher.root_ranges(None)
    self._resolver = resolver_lib.Resolver(searcher, resolving_config)
    self._initial = self._resolver.initial_summary()
    self._deal = jax.jit(deal)
    self._advance = jax.jit(advance)
    self.restart(jax.random.PRNGKey(0))

  def restart(self, key: chex.PRNGKey) -> None:
    """Abandons the games in progress and deals G new ones."""
    self.games = [self._new_game(k) for k in jax.random.split(key, self.config.games)]

  def _new_game(self, key: chex.PRNGKey) -> Game:
    node, s0, s1 = jax.device_get(self._deal(self.tables, self.root_ranges, key))
    return Game(node=int(node), world=np.array([s0, s1]), summaries=[self._initial] * 2)

  def play(
    self, params, key: chex.PRNGKey, rng: np.random.Generator
  ) -> tuple[buffers.Examples | None, buffers.Queries, int]:
    """One move of every game; the examples of the games it ended (None if none did), the queries
    handed on, and the number of games it ended."""
    search_key, step_key, deal_key = jax.random.split(key, 3)
    first = [game.summaries[int(self.tree.kind[game.node])] is self._initial for game in self.games]
    moves = self._search(params, search_key)
    finished, queries = [], []
    for g, (game, (ranges, policy, sample, summary)) in enumerate(
      zip(self.games, moves, strict=True)
    ):
      player = int(self.tree.kind[game.node])
      legal = self.tree.legal[game.node, game.world[player]]
      uniform = legal / legal.sum()
      played = np.where(legal, policy[game.world[player]], 0.0).astype(np.float64)
      played = played / played.sum() if played.sum() > 0 else uniform
      action = rng.choice(
        legal.size, p=(1.0 - self.config.eps) * played + self.config.eps * uniform
      )
      game.line.append(
        {"node": game.node, "world": game.world.copy(), "ranges": ranges, "policy": policy}
      )
      game.summaries[player] = summary
      q = self.config.q_first if first[g] and self.config.q_first is not None else None
      queries.append((*sample, np.full(sample[2].shape, self.config.q_search if q is None else q)))
      node, s0, s1 = jax.device_get(
        self._advance(self.tables, game.node, *game.world, action, jax.random.fold_in(step_key, g))
      )
      game.node, game.world = int(node), np.array([s0, s1])
      if self.tree.kind[game.node] == public_game.TERMINAL:
        finished.append(
          self._line_examples(game.line, outcome(self.tree, game.node, game.world), rng)
        )
        self.games[g] = self._new_game(jax.random.fold_in(deal_key, g))
    examples = buffers.concatenate(finished) if finished else None
    nodes, ranges, keys, probability = (np.concatenate([q[i] for q in queries]) for i in range(4))
    return examples, buffers.hand_on(nodes, ranges, keys, probability, rng), len(finished)

  def _search(self, params, key: chex.PRNGKey) -> list[tuple]:
    """Every game's re-solving search, grouped by the depth of its subgame: per game, the beliefs at
    the searched state [2, S], the policy [S, A], the query sample (game nodes, ranges, keys) and
    the new summary."""
    requests = [(game.summaries[int(self.tree.kind[game.node])], game.node) for game in self.games]
    rngs = jnp.stack([jax.random.fold_in(key, g) for g in range(len(self.games))])
    out: list[tuple | None] = [None] * len(self.games)
    for resolved in self._resolver.resolve(requests, rngs, self.chunk, params):
      summaries = resolved.summaries()
      results = jax.device_get(resolved.results)
      sample = results.queries
      for row, (g, subgame) in enumerate(zip(resolved.jobs, resolved.subgames, strict=True)):
        game_nodes = subgame.game_nodes
        out[g] = (
          results.ranges[row, resolved.focus[row]],
          results.focus_policy[row],
          (game_nodes[sample.nodes[row]], sample.ranges[row], sample.keys[row]),
          summaries[row],
        )
    return out

  def _line_examples(
    self, line: list[dict], utility: np.ndarray, rng: np.random.Generator
  ) -> buffers.Examples:
    """The examples of one finished game: a policy example per search of its line, with the TD(1)
    value target with probability p_td1."""
    nodes = np.array([m["node"] for m in line])
    ranges = np.stack([m["ranges"] for m in line])
    world = np.stack([m["world"] for m in line])
    examples = buffers.search_examples(
      self.tree, nodes, ranges, np.stack([m["policy"] for m in line])
    )
    td1 = rng.random(len(line)) < self.config.p_td1
    rows = np.arange(len(line))
    values, has_value = examples.values.copy(), examples.has_value.copy()
    opponent_mass = ranges.sum(-1)[:, ::-1]
    for p in range(2):
      values[rows, p, world[:, p]] = np.where(td1, utility[p] * opponent_mass[:, p], 0.0)
      has_value[rows, p, world[:, p]] = td1
    return examples.replace(values=values, has_value=has_value)
