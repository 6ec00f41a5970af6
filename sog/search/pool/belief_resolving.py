"""Continual re-solving on the belief pool (SoG, "Modified continual re-solving"), its summaries
keyed by public state: the summary is the last search's own tree, and a public state is named by
its path of child slots from the game's root.

After a search, a player keeps a :class:`BeliefSummary`: the search's final pool (its root the
search's s_prev, at ``depth`` public moves below the game's root) with both players' ranges and
counterfactual values at each public state. At the player's next decision, at the public state
s_pub that ``path`` names, :func:`plan` makes the next search's
:class:`~sog.search.pool.belief_state.BeliefStart` (the re-solving of
:mod:`sog.search.resolving`, configured by its :class:`~sog.search.resolving.ResolvingConfig`):

  * s_prev is the public state of the summary's tree closest to s_pub (its deepest ancestor there,
    s_pub itself if the tree holds it): the path followed down the tree's children while they are
    in it;
  * the start's root is s_prev (its public state and pair weights, read from the tree), its branch
    the rest of the path, its ranges the summary's at s_prev;
  * safe re-solving puts the gadget (:mod:`sog.search.gadget`) on the opponent's range: Terminate
    pays the summary's counterfactual value, and the gadget's range is f(I) p_o(I), p_o the prior
    mass of the deals the opponent's infostate I at s_prev can descend from.

p_o needs, per infostate, the set of root infostates (private deals) it can descend from
(:func:`sog.games.tree.prior_weights` computes it over a whole enumerated tree). A summary carries
these origins at its own root, and :func:`plan` carries them down the path to s_prev
(:func:`descend_origins`), so nothing is enumerated and nothing per node is kept beyond the tree.

Every function here is pure and traceable, so a batch of plans runs under ``vmap``.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.search import gadget as gadget_lib
from sog.search import resolving
from sog.search.pool import belief_state
from sog.search.pool import beliefs


def path_depth(path: chex.Array) -> chex.Array:
  """The public moves a path of child slots [..., L] (-1 past its end) makes."""
  return (path >= 0).sum(-1, dtype=jnp.int32)


@chex.dataclass(frozen=True)
class BeliefSummary:
  """What a player keeps from its last search on the belief pool.

  Attributes:
    tree: the search's final pool (slot 0 its root).
    root_path: [L] int32 the child slots from the game's root to the tree's root, -1 past the end
      (L, static, is the longest path a player's plans name).
    ranges: [P, 2, S] both players' ranges at the tree's public states under the search's average
      policy.
    values: [P, 2, S] both players' counterfactual values there (what Terminate pays).
    origins: [2, S, S] bool, at the tree's root: whether player i's infostate s can descend from
      the root infostate (private deal) r, [i, s, r].
    marginals: [2, S] each player's prior marginal of the private deal, p_i(r).
    resolvable: bool scalar; False for the game's start (no earlier search: no gadget).
  """

  tree: beliefs.BeliefTree
  root_path: chex.Array
  ranges: chex.Array
  values: chex.Array
  origins: chex.Array
  marginals: chex.Array
  resolvable: chex.Array

  @property
  def depth(self) -> chex.Array:
    """The public moves from the game's root to the tree's root."""
    return path_depth(self.root_path)


def root_origins(valid: chex.Array) -> chex.Array:
  """[2, S, S] the origins at the game's root: each valid infostate descends from itself (``valid``
  [2, S], the root's)."""
  S = valid.shape[-1]
  return jnp.eye(S, dtype=bool)[None] & valid[..., None]


def descend_origins(tree: beliefs.BeliefTree, origins: chex.Array, child: chex.Array) -> chex.Array:
  """[2, S, S] the origins at slot ``child`` from ``origins`` at its parent: the parent actor's
  infostate s' descends from what any (s, a) leading to it there descends from; the other
  infostates pass down unchanged where the child admits them (both players' below chance)."""
  parent = jnp.maximum(tree.parent[child], 0)
  kind = tree.kind[parent]
  actor = jnp.clip(kind, 0, 1)
  S = origins.shape[-1]
  lands = tree.next_infostate[parent][..., None] == jnp.arange(S)  # [S, A, S']
  leads = (tree.edges[child][..., None] & lands).any(1)  # [S, S']: s reaches s' here
  own = jnp.einsum("st,sr->tr", leads.astype(jnp.float32), origins[actor].astype(jnp.float32)) > 0
  passed = tree.passes[child][..., None] & origins
  is_actor = (kind < public_game.CHANCE) & (jnp.arange(2) == actor)
  return jnp.where(is_actor[:, None, None], own[None], passed) & tree.valid[child][..., None]


def prior_mass(origins: chex.Array, marginals: chex.Array) -> chex.Array:
  """[2, S] p_i(s): the prior mass of the deals each infostate can descend from."""
  return (origins * marginals[:, None, :]).sum(-1)


def initial_summary(
  tree: beliefs.BeliefTree, marginals: chex.Array, path_length: int
) -> BeliefSummary:
  """The summary before any search: ``tree`` a pool holding the game's root
  (:func:`~sog.search.pool.beliefs.empty`), its ranges the deal's ``marginals`` [2, S], for plans
  of paths of ``path_length`` slots."""
  P, S = tree.capacity, marginals.shape[-1]
  dtype = tree.weight.dtype
  ranges = jnp.zeros((P, 2, S), dtype).at[0].set(jnp.asarray(marginals, dtype) * tree.valid[0])
  return BeliefSummary(
    tree=tree,
    root_path=jnp.full(path_length, -1, jnp.int32),
    ranges=ranges,
    values=jnp.zeros((P, 2, S), dtype),
    origins=root_origins(tree.valid[0]),
    marginals=jnp.asarray(marginals, dtype),
    resolvable=jnp.bool_(False),
  )


@chex.dataclass(frozen=True)
class Planned:
  """A re-solving search's start, and where its root lies.

  Attributes:
    start: the search's start.
    root_path: [L] int32 the child slots from the game's root to the start's root (s_prev), -1
      past the end.
    origins: [2, S, S] bool the origins of the infostates at s_prev (what the search's summary
      carries).
    branch_moves: int32 scalar, the moves from s_prev down to s_pub.
    valid: bool scalar, whether the plan is sound: the path passes through the summary's root and
      the start's branch holds all of its ``branch_moves`` (:func:`check` says which is not).
  """

  start: belief_state.BeliefStart
  root_path: chex.Array
  origins: chex.Array
  branch_moves: chex.Array
  valid: chex.Array

  @property
  def depth(self) -> chex.Array:
    """The public moves from the game's root to the start's root."""
    return path_depth(self.root_path)


def summarise(
  result: belief_state.BeliefSearchResult,
  start_summary: BeliefSummary,
  planned: Planned,
  config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
) -> BeliefSummary:
  """The summary a player keeps from a search planned by :func:`plan` (``planned``) from
  ``start_summary`` (its values by ``config.terminate_values``)."""
  values = (
    result.best_response_values if config.terminate_values == "best_response" else result.values
  )
  return BeliefSummary(
    tree=result.tree,
    root_path=planned.root_path,
    ranges=result.ranges,
    values=values,
    origins=planned.origins,
    marginals=start_summary.marginals,
    resolvable=jnp.bool_(True),
  )


def plan(
  summary: BeliefSummary,
  path: chex.Array,
  player: chex.Array,
  branch_depth: int,
  config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
) -> Planned:
  """The start of the re-solving search for ``player`` acting at the public state s_pub that
  ``path`` [L] names (child slots from the game's root, -1 past the end; it must pass through the
  summary's root), with a branch of ``branch_depth`` slots (static: at least the moves from s_prev
  to s_pub). A plan that breaks either is not ``valid``; :func:`check` refuses it on the host.

  The ranges at s_prev are the summary's; with ``config.safe`` and a resolvable summary the gadget
  is on the opponent's: Terminate pays the summary's values there, alpha mixes in the summary's
  range, and f(I) is scaled by the prior mass p_o(I) of I's origins."""
  tree, L = summary.tree, path.shape[0]

  def down(i, carry):
    node, origins, known, moves = carry
    slot = path[i]
    below_root = i >= summary.depth
    child = tree.children[node, jnp.maximum(slot, 0)]
    goes = below_root & known & (slot >= 0) & (child >= 0)
    safe_child = jnp.maximum(child, 0)
    origins = jnp.where(goes, descend_origins(tree, origins, safe_child), origins)
    known = known & (goes | ~below_root)
    return jnp.where(goes, safe_child, node), origins, known, moves + goes

  node, origins, _, moves = jax.lax.fori_loop(
    0, L, down, (jnp.int32(0), summary.origins, jnp.bool_(True), jnp.int32(0))
  )
  depth = summary.depth + moves
  follows = ((jnp.arange(L) >= summary.depth) | (path == summary.root_path)).all()
  rest = jnp.arange(branch_depth) + depth
  branch = jnp.where(rest < L, path[jnp.minimum(rest, L - 1)], -1)
  ranges = summary.ranges[node]
  opponent = 1 - jnp.asarray(player, jnp.int32)
  gadget = gadget_lib.Gadget(
    enabled=summary.resolvable & config.safe,
    player=opponent,
    terminate_values=summary.values[node, opponent],
    previous_range=ranges[opponent],
    prior=prior_mass(origins, summary.marginals)[opponent].astype(ranges.dtype),
    alpha=jnp.asarray(config.alpha, ranges.dtype),
  )
  start = belief_state.BeliefStart(
    state=jax.tree.map(lambda x: x[node], tree.states),
    weight=tree.pair_weight(node),
    branch=branch.astype(jnp.int32),
    ranges=ranges,
    gadget=gadget,
  )
  branch_moves = (path >= 0).sum(dtype=jnp.int32) - depth
  return Planned(
    start=start,
    root_path=jnp.where(jnp.arange(L) < depth, path, -1).astype(jnp.int32),
    origins=origins,
    branch_moves=branch_moves,
    valid=follows & (branch_moves >= 0) & (branch_moves <= branch_depth),
  )


def check(planned: Planned, branch_depth: int) -> None:
  """``ValueError`` (host side) naming what is wrong with plans (one, or a batch) that are not
  ``valid``: a branch longer than ``branch_depth``, or a path that does not pass through its
  summary's root."""
  planned = jax.device_get(planned)
  bad = ~np.asarray(planned.valid)
  if not bad.any():
    return
  moves = np.asarray(planned.branch_moves)[bad]
  if (moves > branch_depth).any():
    raise ValueError(
      f"re-solving plan: s_pub is {int(moves.max())} public moves below s_prev, more than "
      f"branch_depth={branch_depth}; plan and search with a larger branch_depth"
    )
  raise ValueError(
    "re-solving plan: the path to s_pub does not pass through the summary's root (the root of the "
    "player's last search): give the path from the game's root of a state that follows the "
    "player's last decision, or plan from initial_summary in a new game"
  )
