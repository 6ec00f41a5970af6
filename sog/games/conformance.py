"""The conformance checks every game's enumerated public tree passes (an API test in the style of
pgx's).

Each check takes a :class:`~sog.games.registry.Game` (or anything with its ``public_game`` and
``tree``) and a NumPy generator, and raises ``ValueError`` naming the game and the property it
breaks. The test suite runs them on every built-in game; :func:`sog.games.register` runs them on a
new game before it keeps its name, and a user can run them with :func:`check_game`. A game too
large to enumerate (``enumerable = False``) is checked on random paths through its functions
instead (:func:`check_walks`).
"""

from __future__ import annotations

from collections.abc import Callable
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from sog.games import propagation
from sog.games import public_game
from sog.games import tree as tree_lib
from sog.games import walk as walk_lib

_TOLERANCE = 1e-9


def _require(condition, game, message: str) -> None:
  if not np.all(condition):
    raise ValueError(f"{game.tree.name}: {message}")


def terminal_values_are_zero_sum(game, rng: np.random.Generator) -> None:
  """At every terminal, r0 . v0 + r1 . v1 = 0 for random ranges: the game is zero-sum. Both players'
  values come from one payoff matrix, so this holds up to rounding wherever the utility is finite;
  it fails on a non-finite utility."""
  tree = game.tree
  for level in tree.levels:
    ranges = rng.random((level.size, 2, tree.max_infostates)) * level.valid
    values = propagation.terminal_values(level, ranges, np)
    total = (ranges * values).sum(axis=(1, 2))
    _require(np.abs(total) <= 1e-12, game, "terminal values are not zero-sum")


def legal_actions_where_players_act(game, rng: np.random.Generator) -> None:
  """Each player acts somewhere, and has a legal action wherever it acts."""
  del rng
  tree = game.tree
  for player in (0, 1):
    rows = tree.decision_infostates(player)
    _require(rows.any(), game, f"player {player} never acts")
    _require(
      tree.legal[rows].any(-1), game, f"player {player} has no legal action somewhere it acts"
    )


def chance_probabilities_sum_to_one(game, rng: np.random.Generator) -> None:
  """A chance node's children's probabilities sum to 1; every other child has probability 1."""
  del rng
  tree = game.tree
  for node in np.flatnonzero(tree.kind == public_game.CHANCE):
    children = np.flatnonzero(tree.parent == node)
    _require(children.size > 0, game, f"chance node {tree.paths[node]} has no outcome")
    _require(
      np.isclose(tree.chance_probability[children].sum(), 1.0, rtol=1e-7, atol=1e-12),
      game,
      f"chance probabilities at {tree.paths[node]} do not sum to 1",
    )
  not_chance = tree.kind[np.maximum(tree.parent, 0)] != public_game.CHANCE
  _require(
    tree.chance_probability[not_chance] == 1.0,
    game,
    "a child of a player node has a chance probability other than 1",
  )


def children_match_legal_actions(game, rng: np.random.Generator) -> None:
  """At a player node, the actor's infostate s has an edge under action a exactly where a is legal
  at s, every edge reaches a child, each child's valid actor infostates are exactly those its edges
  reach, and no opponent infostate appears out of nothing (vectorised over nodes)."""
  del rng
  tree = game.tree
  nodes = np.flatnonzero(tree.kind <= public_game.PLAYER_1)
  actor = tree.kind[nodes].astype(np.int64)
  edges = tree.up_weight[nodes, :, :, actor] > 0  # [n, A, K, S]
  has_child = edges.any(2).transpose(0, 2, 1)  # [n, S, A]
  rows = tree.valid[nodes, actor]  # [n, S]
  _require(
    (has_child & rows[..., None]) == (tree.legal[nodes] & rows[..., None]),
    game,
    "an infostate's edges differ from its legal actions",
  )
  _require(~(has_child & ~rows[..., None]), game, "an impossible infostate has an edge")
  _require(tree.up_child[nodes][edges.any(-1)] >= 0, game, "an edge reaches no child")
  node, a, k, s = np.nonzero(edges)
  child = tree.up_child[nodes[node], a, k]
  reached_infostate = tree.up_infostate[nodes[node], a, k, actor[node], s]
  reached = np.zeros((tree.num_nodes, tree.max_infostates), bool)
  reached[child, reached_infostate] = True
  children = np.flatnonzero(np.isin(tree.parent, nodes))
  child_actor = tree.kind[tree.parent[children]].astype(np.int64)
  _require(
    reached[children] == tree.valid[children, child_actor],
    game,
    "a child's valid actor infostates differ from those its edges reach",
  )
  opponent = 1 - child_actor
  _require(
    ~(tree.valid[children, opponent] & ~tree.valid[tree.parent[children], opponent]),
    game,
    "an opponent infostate appears at a child that is impossible at its parent",
  )
  _require(
    ~(tree.up_child[tree.kind == public_game.TERMINAL] >= 0), game, "a terminal has children"
  )


def tree_is_breadth_first(game, rng: np.random.Generator) -> None:
  """The root comes first, depths grow by one from parent to child and never decrease along the node
  order, every public state has a possible infostate for each player, and paths are unique."""
  del rng
  tree = game.tree
  _require(tree.parent[0] == -1 and tree.depth[0] == 0, game, "the root is not node 0")
  _require(tree.depth[1:] == tree.depth[tree.parent[1:]] + 1, game, "a child is not one level down")
  _require(np.diff(tree.depth) >= 0, game, "nodes are not in breadth-first order")
  _require(tree.valid.any(-1), game, "a public state has no possible infostate for a player")
  _require(len(set(tree.paths)) == tree.num_nodes, game, "two public states share a path")


def encoding_has_fixed_shape(game, rng: np.random.Generator) -> None:
  """Each public state's encoding is ``public_game.encoding_size`` finite floats; they differ."""
  del rng
  encoding = game.tree.encoding
  _require(
    encoding.shape == (game.tree.num_nodes, game.public_game.encoding_size),
    game,
    f"encodings have shape {encoding.shape}, not (public states, encoding_size) = "
    f"{(game.tree.num_nodes, game.public_game.encoding_size)}",
  )
  _require(np.isfinite(encoding), game, "an encoding is not finite")
  _require(
    game.tree.num_nodes == 1 or len({row.tobytes() for row in encoding}) > 1,
    game,
    "every public state has the same encoding",
  )


def prior_weights_bound_every_range(game, rng: np.random.Generator) -> None:
  """p_i(s) is the chance part of a range: every policy's range is at most p, playing every action
  (weight 1 each) reaches at least p, and p > 0 exactly where the infostate is possible."""
  tree = game.tree
  weights = rng.gamma(1.0, size=tree.legal.shape) * tree.legal
  weights = np.where(weights.sum(-1, keepdims=True) > 0, weights, tree.legal)
  total = weights.sum(-1, keepdims=True)
  random = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)

  def reach(policy):
    levels = propagation.split_levels(tree, policy)
    return np.concatenate(propagation.reach_down(tree.levels, levels, tree.root_ranges, np))

  _require(
    reach(random) <= tree.prior_weight * (1 + _TOLERANCE),
    game,
    "a policy's range exceeds the prior weight",
  )
  _require(
    reach(np.ones_like(random)) >= tree.prior_weight * (1 - _TOLERANCE),
    game,
    "playing every action reaches less than the prior weight",
  )
  _require(
    (tree.prior_weight > 0) == tree.valid,
    game,
    "the prior weight is positive exactly where an infostate is possible: it is not",
  )
  if all(level.same_infostates for level in tree.levels):  # poker, dice: the deal's marginals
    _require(
      np.isclose(tree.prior_weight, tree.root_ranges[None] * tree.valid, rtol=1e-7, atol=0),
      game,
      "the prior weights are not the deal's marginals",
    )


def root_ranges_are_prior_marginals(game, rng: np.random.Generator) -> None:
  """The root's ranges are distributions over possible infostates."""
  del rng
  tree = game.tree
  _require(
    np.isclose(tree.root_ranges.sum(-1), 1.0, rtol=0, atol=1e-7),
    game,
    "the root ranges do not sum to 1",
  )
  _require(~(tree.root_ranges > 0)[~tree.valid[0]], game, "an impossible infostate has root range")


def utility_scale_is_the_largest_payoff(game, rng: np.random.Generator) -> None:
  """The game's ``utility_scale`` is max |u_0| over the terminal world states that occur (the unit
  a search scales values by; 1 where every payoff is 0)."""
  del rng
  largest = game.tree.largest_utility()
  scale = game.public_game.utility_scale
  _require(
    np.isclose(scale, largest, rtol=1e-6, atol=0.0),
    game,
    f"utility_scale is {scale!r} but the largest |utility| at a terminal is {largest}; set "
    f"utility_scale = {largest} in the game",
  )


def max_moves_bounds_the_tree(game, rng: np.random.Generator) -> None:
  """The game's ``max_moves``, where it gives one, is at least the depth of its deepest public
  state (self-play's paths and a re-solve's branch are sized by it)."""
  del rng
  moves, depth = game.public_game.max_moves, game.tree.num_levels - 1
  _require(
    moves is None or depth <= moves,
    game,
    f"max_moves is {moves} but a public state lies {depth} moves below the root",
  )


def decisions_follow_within_the_declared_gap(game, rng: np.random.Generator) -> None:
  """The game's ``max_moves_between_decisions``, where it gives one, is at least the moves from the
  root to each player's first decision and between each decision and the same player's next (a
  bound on a re-solve's branch on a pool)."""
  del rng
  gap, tree = game.public_game.max_moves_between_decisions, game.tree
  if gap is None:
    return
  decisions = np.flatnonzero(tree.kind < public_game.CHANCE)
  previous = tree_lib.previous_decisions(tree, "own")[decisions]
  since = tree.depth[decisions] - np.where(previous >= 0, tree.depth[np.maximum(previous, 0)], 0)
  longest = int(since.max(initial=0))
  _require(
    longest <= gap,
    game,
    f"max_moves_between_decisions is {gap} but a decision lies {longest} public moves after the "
    "same player's last one (or the root)",
  )


@functools.lru_cache(maxsize=8)
def _rows_and_transitions(game: public_game.PublicGame):
  """A compiled function of a public state: its transitions, and the game's ``world_row`` for
  every pair (s0, s1) [S0, S1, ...]."""
  S0, S1 = game.num_infostates

  def rows(state):
    pairs = jnp.stack(jnp.meshgrid(jnp.arange(S0), jnp.arange(S1), indexing="ij"), -1)
    row = jax.vmap(jax.vmap(lambda pair: game.world_row(state, pair)))(pairs)
    return game.kind(state), game.legal(state), game.transitions(state), row

  return jax.jit(rows)


def check_world_rows(game: public_game.PublicGame, state) -> None:
  """``world_row`` at ``state`` is the row of ``transitions`` for every world (s0, s1): the slot
  and next infostate of each legal action of the actor, the chance outcomes and likelihoods."""
  kind, legal, t, row = jax.tree.map(np.asarray, _rows_and_transitions(game)(state))
  S0, S1 = game.num_infostates
  problem = None
  if kind == public_game.CHANCE:
    C = game.max_chance_outcomes
    if not (row.outcomes == t.present[:C]).all():
      problem = "its chance outcomes"
    elif not np.allclose(row.likelihood, t.likelihood[:, :S0, :S1].transpose(1, 2, 0)):
      problem = "its chance likelihoods"
  elif kind < public_game.CHANCE:
    rows = row if kind == 0 else jax.tree.map(lambda x: x.swapaxes(0, 1), row)  # [actor, opp]
    own, opponents = (S0, S1) if kind == 0 else (S1, S0)
    columns = np.arange(opponents) if game.child_depends_on_opponent else np.zeros(opponents, int)
    expected_child = t.child[:own][:, :, columns].transpose(0, 2, 1)  # [s, o, A]
    mask = np.broadcast_to(legal[:own, None, :], expected_child.shape)
    next_infostate = np.broadcast_to(t.next_infostate[:own, None, :], mask.shape)
    if not (rows.child == expected_child)[mask].all():
      problem = "the child slot of an action"
    elif not (rows.next_infostate == next_infostate)[mask].all():
      problem = "the next infostate of an action"
  if problem is not None:
    raise ValueError(
      f"{game.name}: world_row disagrees with transitions on {problem} at a "
      f"{public_game.KIND_NAMES[int(kind)]} state"
    )


def world_rows_match_transitions(game, rng: np.random.Generator) -> None:
  """On 8 random paths of public states, ``world_row`` is each world's row of ``transitions``
  (:func:`check_world_rows`)."""
  walk = walk_lib.shared_walk(game.public_game)
  for _ in range(8):
    key = walk.root()
    while walk.kind(key) != public_game.TERMINAL:
      check_world_rows(game.public_game, walk.state(key))
      children = [child for child in walk.facts(key).children if child is not None]
      key = children[rng.integers(len(children))]


CHECKS: tuple[Callable[[Any, np.random.Generator], None], ...] = (
  terminal_values_are_zero_sum,
  utility_scale_is_the_largest_payoff,
  legal_actions_where_players_act,
  chance_probabilities_sum_to_one,
  children_match_legal_actions,
  tree_is_breadth_first,
  encoding_has_fixed_shape,
  prior_weights_bound_every_range,
  root_ranges_are_prior_marginals,
  max_moves_bounds_the_tree,
  decisions_follow_within_the_declared_gap,
  world_rows_match_transitions,
)


def check_walks(game: public_game.PublicGame, walks: int = 32, seed: int = 0) -> None:
  """The checks of a game too large to enumerate: ``walks`` random paths of public states from the
  root (each present child slot equally likely) through the game's functions. Every public state on
  them keeps the interface's contract (shapes, kinds, legal actions only for the actor's
  infostates, chance probabilities that sum to one, children where the legal actions lead:
  :class:`~sog.games.walk.PublicGameWalk` checks each; each world's ``world_row``:
  :func:`check_world_rows`), every path ends within ``max_moves`` moves, and no decision on it lies
  more than ``max_moves_between_decisions`` moves after its player's last one (or the root). The
  functions run in JAX's default precision, as the game's searches run them. ``ValueError``
  naming the game, the public state and the rule at the first that fails."""
  public_game.padded_deal(game)  # the deal's probabilities
  if game.max_moves is None:
    raise ValueError(f"{game.name}: check_walks needs the game's max_moves")
  walk = walk_lib.PublicGameWalk(game, float64=False)
  rng = np.random.default_rng(seed)
  gap = public_game.decision_gap(game)
  for _ in range(walks):
    key, last = walk.root(), [0, 0]  # each player's last decision's depth (0: none, the root)
    for depth in range(game.max_moves + 1):
      facts = walk.facts(key)
      if facts.kind == public_game.TERMINAL:
        break
      if facts.kind < public_game.CHANCE:
        if depth - last[facts.kind] > gap:
          raise ValueError(
            f"{game.name}: max_moves_between_decisions is {gap} but a decision lies "
            f"{depth - last[facts.kind]} public moves after the same player's last one (or the "
            "root)"
          )
        last[facts.kind] = depth
      check_world_rows(game, walk.state(key))
      children = [child for child in facts.children if child is not None]
      if not children:
        raise ValueError(f"{game.name}: a {public_game.KIND_NAMES[facts.kind]} state has no child")
      key = children[rng.integers(len(children))]
    else:
      raise ValueError(
        f"{game.name}: a path of public states runs past max_moves = {game.max_moves} moves "
        "without reaching a terminal"
      )


def check_game(game, seed: int = 0) -> None:
  """Runs every check of :data:`CHECKS` on ``game``, a loaded game (:func:`sog.games.load`), or
  :func:`check_walks` where the game is not enumerable; ``ValueError`` at the first that fails."""
  rules = getattr(game, "public_game", None)
  if not isinstance(rules, public_game.PublicGame):
    raise ValueError(f"check_game takes a loaded game (sog.games.load), got {type(game).__name__}")
  if not rules.enumerable:
    check_walks(rules, seed=seed)
    return
  rng = np.random.default_rng(seed)
  for check in CHECKS:
    check(game, rng)
