"""What values a search's frontier: the leaf models GT-CFR queries, in one batch per CFR pass.

A leaf model maps a batch of L public belief states of a search's tree (node indices and ranges,
with a mask for the batch's padding) to counterfactual values [L, 2, S] and policy logits [L, 2, S,
A] (the prior PUCT uses). The tree is the belief pool in GT-CFR's searches
(:class:`~sog.search.pool.GTCFR`), and the search tables in ReBeL's depth-limited solves and
the exact solver's. Four are provided here: zeros, the tables' exact oracle (a full subgame solve
at each leaf's current ranges; the pool's is :mod:`sog.search.pool.belief_oracle`), its
warm-started form (each call continues the previous call's solve), and, in :mod:`sog.nets.leaf`,
the CVPN; ``with_value_error`` adds a fixed error of known size to any of them, on either tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from sog.search import cfr
from sog.search import tables as tables_lib


class LeafOutput(NamedTuple):
  """A leaf model's answer. ``policy_sums`` is only given by models that play below the leaves (the
  exact oracle): the realisation weights [M, S, A] of their strategy at the tables' inner nodes (own
  range at the node times the action probability), for averaging into a strategy for the whole
  subgame (CFR-D's sound composition).
  ``state`` is the model's state after the call (``()`` for a model without state)."""

  values: chex.Array  # [L, 2, S] counterfactual values (the library's units)
  logits: chex.Array  # [L, 2, S, A] policy logits (any value where an action is illegal)
  policy_sums: chex.Array | None = None
  state: Any = ()


class LeafModel(NamedTuple):
  """A leaf model as an init/apply pair (optax's form), with its parameters.

  ``init(tree, start) -> state`` gives the state a search from ``start`` starts the model from, in
  the search's ``tree``: a GT-CFR search's :class:`~sog.search.pool.BeliefStart` in the empty
  belief pool, or None in the search tables for a depth-limited solve (ReBeL's, the exact
  solver's); ``()`` for a model without state.

  ``apply(params, tree, nodes [L], ranges [L, 2, S], mask [L], state) -> LeafOutput`` values the
  nodes at the ranges and returns the next state in :attr:`LeafOutput.state`; a search carries it
  from one call to the next (the warm-started oracle keeps its CFR+ run there,
  :func:`routed_leaf_model` the search's focus). Rows where ``mask`` is False are padding: their
  outputs are ignored. ``params`` (network weights, or None) is an argument of the compiled search,
  never a constant in it.

  ``game`` is the canonical name of the one game a model values (a network's; searchers refuse it on
  another game with :func:`check_model_game`); None for a model that values any game (zeros, the
  tables' exact oracle). :func:`stateless` builds a model from an apply without state.
  """

  init: Callable[[Any, Any], Any]
  apply: Callable[..., LeafOutput]
  params: Any = None
  game: str | None = None


def stateless(
  apply: Callable[..., LeafOutput], params: Any = None, game: str | None = None
) -> LeafModel:
  """The leaf model of ``apply(params, tree, nodes, ranges, mask) -> LeafOutput``, whose state is
  ``()``."""

  def apply_with_state(params, tree, nodes, ranges, mask, state):
    return apply(params, tree, nodes, ranges, mask)._replace(state=state)

  return LeafModel(lambda tree, start: (), apply_with_state, params, game)


def check_model_game(model: LeafModel, game_name: str, searcher: str) -> None:
  """``ValueError`` naming both games where ``model`` is for another game than ``game_name``."""
  if not isinstance(model, LeafModel):
    raise ValueError(
      f"{searcher}: the leaf model must be a sog.search.LeafModel, got {type(model).__name__}"
    )
  if model.game is not None and model.game != game_name:
    raise ValueError(
      f"{searcher}: the leaf model values {model.game}, but the game searched is "
      f"{game_name}; give it a leaf model of {game_name} (a network trained on it, or "
      "the game-independent exact_leaf_model / zero_leaf_model)"
    )


def uniform_logits(tables: tables_lib.SearchTables, nodes: chex.Array) -> chex.Array:
  """[L, 2, S, A] logits of the uniform policy over each node's legal actions (any structure with
  ``legal`` [N, S, A] at ``nodes``: the belief pool, or the search tables of a solve)."""
  legal = tables.legal[nodes]
  return jnp.broadcast_to(
    jnp.where(legal, 0.0, -jnp.inf)[:, None], (nodes.shape[0], 2, *legal.shape[1:])
  )


def zero_leaf_model() -> LeafModel:
  """Every leaf is worth 0 to both players; the prior is uniform (zero logits [L, 2, S, A]: a
  reader takes the softmax over legal actions, so no mask of them is built)."""

  def apply(params, tables, nodes, ranges, mask):
    del params, mask
    shape = (nodes.shape[0], 2, *tables.legal.shape[1:])
    return LeafOutput(jnp.zeros_like(ranges), jnp.zeros(shape, ranges.dtype))

  return stateless(apply)


#: The steps per unit in which :func:`public_state_noise` reads a network input.
ENCODING_STEPS = 4096


def _mix32(x: chex.Array) -> chex.Array:
  """MurmurHash3's 32-bit finaliser (uint32, wrapping): every input bit moves every output bit."""
  x = x ^ (x >> 16)
  x = x * jnp.uint32(0x85EBCA6B)
  x = x ^ (x >> 13)
  x = x * jnp.uint32(0xC2B2AE35)
  return x ^ (x >> 16)


def public_state_noise(view, nodes: chex.Array, seed: int, dtype) -> chex.Array:
  """[L, 2, S] draws z ~ N(0, 1) per (player, infostate) at ``nodes``, fixed by ``seed`` and each
  node's public state (read from its network input, ``view.encoding``, in steps of 1/4096 so that
  the last bits of its arithmetic do not count): the same public state gets the same draws in every
  search, at any node index, on the belief pool and in the search tables alike (public states a
  network cannot tell apart share them)."""
  steps = jnp.round(jnp.asarray(view.encoding[nodes], jnp.float32) * ENCODING_STEPS)
  bits = steps.astype(jnp.int32).astype(jnp.uint32)
  key, mixing = jax.random.split(jax.random.PRNGKey(seed))
  salts = jax.random.bits(mixing, (bits.shape[-1],), jnp.uint32)  # one per input position
  digests = _mix32(_mix32(bits ^ salts).sum(-1, dtype=jnp.uint32))  # a 32-bit hash of each input
  shape = view.valid.shape[1:]
  return jax.vmap(lambda d: jax.random.normal(jax.random.fold_in(key, d), shape, dtype))(digests)


def with_value_error(model: LeafModel, sigma: float, seed: int = 0) -> LeafModel:
  """``model`` with a fixed error in its conditional values, for measuring what leaf error costs.

  At node n, player p and infostate s the value per unit of the opponent's range mass moves by
  sigma * z[n, p, s], z ~ N(0, 1) drawn from ``seed`` and n's public state
  (:func:`public_state_noise`: the same error every time a search asks there, as a network's would
  be, on the pool or the tables), then both players' errors shift by half of sum_p r_p . e_p (r_p
  normalised) so the output stays zero-sum, as the CVPN's does. The mean absolute error is about
  0.8 sigma. With the exact oracle this is a network that is perfect but for an error of known
  size; ``scripts/evaluate.py --leaf_value_error``.
  """
  if sigma < 0:
    raise ValueError(f"leaf value error sigma must be >= 0, got {sigma}")

  def apply(params, view, nodes, ranges, mask, state):
    out = model.apply(params, view, nodes, ranges, mask, state)
    valid = view.valid[nodes]
    own = jnp.where(valid, ranges, 0.0)
    own_mass = own.sum(-1, keepdims=True)
    z = public_state_noise(view, nodes, seed, ranges.dtype)
    error = jnp.where(valid, sigma * z, 0.0)
    residual = (own / jnp.maximum(own_mass, 1e-12) * error).sum((-2, -1), keepdims=True) / 2
    error = jnp.where(valid, error - residual, 0.0)
    return out._replace(values=out.values + error * own_mass[..., ::-1, :])

  return model._replace(apply=apply)


def trembled(ranges: chex.Array, valid: chex.Array, tremble: float) -> chex.Array:
  """ranges + tremble * uniform over each player's valid infostates (ranges are at most 1).

  Solving a subgame at trembled ranges makes every player's strategy there a best response to a
  reach that includes every opponent infostate. Where the opponent's true range is 0 (or nearly), an
  untrembled solve returns an arbitrary strategy (or one exploiting a sliver of a range), against
  which a trunk's regrets for entering the subgame are wrong; see :func:`exact_leaf_model`.
  """
  valid = valid.astype(ranges.dtype)
  return ranges + tremble * valid / jnp.maximum(valid.sum(-1, keepdims=True), 1.0)


def solve_at_nodes(
  tables: tables_lib.SearchTables,
  nodes: chex.Array,
  ranges: chex.Array,
  mask: chex.Array,
  iterations: int,
  tremble: float,
):
  """Solves the disjoint subgames below ``nodes`` at ``ranges`` together, by one CFR+ run over the
  whole tables (alternating updates) in which each node's ranges enter the tree at that node.

  No node may lie below another. Returns the average policy [M, S, A] at the tables' inner nodes,
  and its per-level ranges and values at the true (untrembled) ranges.
  """
  policy, ranges, values, _ = continue_solve(
    tables, nodes, ranges, mask, iterations, tremble, cfr.init_state(tables.levels)
  )
  return policy, ranges, values


def continue_solve(
  tables: tables_lib.SearchTables,
  nodes: chex.Array,
  ranges: chex.Array,
  mask: chex.Array,
  iterations: int,
  tremble: float,
  state: cfr.CFRState,
):
  """:func:`solve_at_nodes` continuing the CFR+ run ``state`` (regrets, average and iteration count
  over the tables' inner nodes) for ``iterations`` more iterations; returns its state too."""
  n = tables.num_nodes
  inside = jnp.zeros(n, bool).at[nodes].max(mask)
  entry_ranges = jnp.where(mask[:, None, None], ranges, 0.0)
  placed = jnp.zeros((n, *ranges.shape[1:]), ranges.dtype).at[nodes].add(entry_ranges)
  shaken = (
    jnp.zeros_like(placed)
    .at[nodes]
    .add(jnp.where(mask[:, None, None], trembled(ranges, tables.valid[nodes], tremble), 0.0))
  )
  levels = tables.levels
  zero_root = jnp.zeros(ranges.shape[1:], ranges.dtype)
  entry = list(zip(tables.split(inside), tables.split(shaken), strict=True))
  state, _ = cfr.run(levels, state, zero_root, iterations, "alternating", entry=entry)
  policy = cfr.average_policy(levels, state)
  ranges, values, _, _ = cfr.evaluate_pass(
    levels,
    policy,
    zero_root,
    entry=list(zip(tables.split(inside), tables.split(placed), strict=True)),
  )
  return policy, ranges, values, state


def realisation_weights(
  tables: tables_lib.SearchTables, policy: chex.Array, ranges: list[chex.Array]
) -> chex.Array:
  """[M, S, A]: the actor's range at each inner node times its policy (zero where none acts)."""
  own = jnp.concatenate([r[: level.inner] for r, level in zip(ranges, tables.levels, strict=True)])
  kind = tables.to_inner(tables.kind)
  actor_range = jnp.where((kind == 1)[:, None], own[:, 1], own[:, 0])
  return jnp.where((kind < 2)[:, None, None], actor_range[..., None] * policy, 0.0)


def exact_leaf_model(
  iterations: int = 200, tremble: float = 1e-3, warm_start: bool = False, policy_prior: bool = False
) -> LeafModel:
  """The exact oracle: each leaf's full subgame solved by ``iterations`` of CFR+ at its current
  ranges (trembled by ``tremble``, valued at the true ranges); a uniform prior, or with
  ``policy_prior`` the solve's average policy at each leaf (what a perfect CVPN's policy head would
  give: with k = 1 the prior decides which child an expansion adds, so a uniform prior leaves that
  choice to the action order).

  All leaves are solved in one CFR+ run over the search tables (their subgames are disjoint), so one
  oracle call costs ``iterations`` double passes over the root's subgame, however many leaves there
  are. Slow: for tests, benchmarks of soundness and ReBeL with a perfect value oracle (GT-CFR's
  searches on the belief pool take :func:`sog.search.pool.belief_oracle.exact_leaf_model`). It
  also returns the realisation weights of its leaf strategies, so a caller can average them into a
  strategy for the whole subgame (CFR-D's sound composition).

  Each leaf is solved at its ranges plus ``tremble`` times a uniform range over its valid
  infostates, then valued at its true ranges. Without the tremble, a leaf one player never reaches
  leaves the other indifferent, its solve returns an arbitrary (uniform) strategy there, and the
  trunk's regrets for entering the leaf are computed against it: CFR-D then settles on a wrong value
  (on a Leduc subgame, 0.313 against the full solve's 0.303). The tremble makes every leaf strategy
  a best response to some reach, and the values stay exactly zero-sum at the true ranges.

  ``warm_start``: a stateful model whose calls continue one CFR+ run over the tables (the state a
  caller carries from one call to the next) instead of starting afresh, so after t calls the solve
  below the frontier has had t * ``iterations`` iterations (at ranges that moved with the caller's).
  Where the frontier moves down, the run's regrets below the new leaves carry over: they are the
  same tables' nodes. A few iterations a call then stand for a full solve at a fraction of its cost;
  on scotland_yard(map=glasses) a cold 50-iteration solve is still 0.0017 exploitable at fixed
  ranges, which is why the oracle protocol there warm-starts its oracle (the pool's). ReBeL's
  solves and the exact solver start every call from ``init``.
  """
  if iterations < 1:
    raise ValueError(f"oracle iterations must be >= 1, got {iterations}")
  if tremble < 0:
    raise ValueError(f"tremble must be >= 0, got {tremble}")

  def solve(tables, nodes, ranges, mask, state):
    def run(state):
      policy, node_ranges, values, state = continue_solve(
        tables, nodes, ranges, mask, iterations, tremble, state
      )
      return (
        jnp.concatenate(values)[nodes],
        realisation_weights(tables, policy, node_ranges),
        policy,
        state,
      )

    def nothing(state):
      policy = jnp.zeros(tables.to_inner(tables.legal).shape, ranges.dtype)
      return jnp.zeros_like(ranges), policy, policy, state

    values, policy_sums, policy, state = jax.lax.cond(mask.any(), run, nothing, state)
    logits = uniform_logits(tables, nodes)
    if policy_prior:  # the actor's row is the one PUCT reads; both rows carry it
      at_leaves = jnp.log(jnp.maximum(policy[tables.inner_position[nodes]], 1e-12))
      logits = jnp.where(logits > -jnp.inf, at_leaves[:, None], logits)
    return LeafOutput(values, logits, policy_sums, state)

  if warm_start:
    return LeafModel(
      lambda tables, start: cfr.init_state(tables.levels),
      lambda params, tables, nodes, ranges, mask, state: solve(tables, nodes, ranges, mask, state),
    )
  return stateless(
    lambda params, tables, nodes, ranges, mask: solve(
      tables, nodes, ranges, mask, cfr.init_state(tables.levels)
    )._replace(state=())
  )


#: The classes of leaf queries :func:`routed_leaf_model` can hand to the oracle.
QUERY_CLASSES = (
  "off_branch",
  "below_focus",
  "first_search",
  "player_0",
  "player_1",
  "low_reach",
  "high_reach",
  "unreached",
  "reached",
)


def _routing(start, root_state) -> tuple[Any, chex.Array]:
  """A search's branch from its root down to s_pub (the slots are found in the pool it grows)
  and whether its root is the game's root (``root_state``; None: unknown, taken as False)."""
  if root_state is None:
    first = jnp.bool_(False)
  else:
    same = jax.tree.map(
      lambda a, b: jnp.all(jnp.asarray(a) == jnp.asarray(b)), start.state, root_state
    )
    first = jnp.all(jnp.stack(jax.tree.leaves(same)))
  return jnp.asarray(start.branch, jnp.int32), first


def _below_focus(tree, nodes: chex.Array, branch: chex.Array) -> chex.Array:
  """Whether each slot is s_pub or below it: the search grows only below s_pub, so a slot is below
  it if deeper (the branch's other children, the off-branch leaves, are never expanded)."""

  def down(node, k):
    return jnp.where(k >= 0, tree.children[node, jnp.maximum(k, 0)], node), None

  focus, _ = jax.lax.scan(down, jnp.int32(0), branch)
  return (tree.depth[nodes] > (branch >= 0).sum()) | (nodes == focus)


def routed_leaf_model(
  model: LeafModel,
  oracle: LeafModel,
  route: str,
  reach_threshold: float = 0.1,
  game=None,
) -> LeafModel:
  """``model`` with ``oracle`` answering one class of its queries: what a network's error in that
  class costs (the oracle stands in for a network that is exact there and only there).

  ``route`` is one of :data:`QUERY_CLASSES`:

  * ``off_branch`` / ``below_focus``: leaves off the re-solving branch s_prev -> s_pub (the children
    of the branch a re-solve keeps as frontier leaves throughout), or below s_pub (the frontier the
    search grows);
  * ``first_search``: every leaf of a search that starts at the game's root (the searches without
    a predecessor, from the game's root beliefs);
  * ``player_0`` / ``player_1``: that player's values at every leaf (the other player's from
    ``model``; the leaf's values are then no longer zero-sum);
  * ``low_reach`` / ``high_reach``: player i's values where the opponent's range mass at the leaf is
    below / at least ``reach_threshold`` (counterfactual values scale with it);
  * ``unreached`` / ``reached``: the values of the infostates the player's own range does not reach
    at the leaf (the values of deviations, which CFR's regrets for the actions into the leaf read),
    or of those it reaches.

  The policy logits (PUCT's prior) are always ``model``'s, and the output carries no policy sums
  (what the oracle plays below its leaves is not averaged into the search's policy: the protocol
  reads the search's own policy). The oracle is asked only for the routed rows (the exact oracle's
  call solves below them with all of its CFR+ passes, however few they are, and is skipped
  where no row is routed outside ``vmap``); each model carries its own state. The routing needs
  the search's start: a search outside GT-CFR (a depth-limited solve) is refused. A search's root
  is told to be the game's root by comparing its public state with ``game``'s root (a
  :class:`~sog.games.PublicGame` or registered game; needed for ``first_search``).
  """
  if route not in QUERY_CLASSES:
    raise ValueError(f"unknown query class {route!r}; valid classes: {', '.join(QUERY_CLASSES)}")
  if None not in (oracle.game, model.game) and oracle.game != model.game:
    raise ValueError(
      f"routed_leaf_model: the oracle values {oracle.game}, the model {model.game}; route to an "
      "oracle of the model's game"
    )
  game = getattr(game, "public_game", game)
  root_state = None if game is None else game.root()

  def init(view, start):
    if start is None:
      raise ValueError(
        "routed_leaf_model routes by the search's start (s_prev, s_pub): it values GT-CFR "
        "searches only, not depth-limited solves"
      )
    if route == "first_search" and root_state is None:
      raise ValueError(
        "routed_leaf_model: routing first_search compares a search's root with the game's: give "
        "game="
      )
    branch, first = _routing(start, root_state)
    return (branch, first, model.init(view, start), oracle.init(view, start))

  def entries(view, nodes, ranges, state):
    """[L, 2, S] bool: the (leaf, player, infostate) values the oracle gives."""
    branch, first, _, _ = state
    shape = ranges.shape
    if route in ("unreached", "reached"):
      reached = ranges > 0
      return view.valid[nodes] & (~reached if route == "unreached" else reached)
    below = _below_focus(view, nodes, branch)
    opponent_mass = jnp.where(view.valid[nodes], ranges, 0.0).sum(-1)[:, ::-1]
    by_leaf = {
      "off_branch": ~below,
      "below_focus": below,
      "first_search": jnp.broadcast_to(first, below.shape),
    }
    if route in by_leaf:
      return jnp.broadcast_to(by_leaf[route][:, None, None], shape)
    if route.startswith("player_"):
      return jnp.broadcast_to((jnp.arange(2) == int(route[-1]))[None, :, None], shape)
    low = opponent_mass < reach_threshold
    return jnp.broadcast_to((low if route == "low_reach" else ~low)[..., None], shape)

  def apply(params, view, nodes, ranges, mask, state):
    (model_params, oracle_params), (*route_state, model_state, oracle_state) = params, state
    out = model.apply(model_params, view, nodes, ranges, mask, model_state)
    routed = entries(view, nodes, ranges, state) & mask[:, None, None]
    exact = oracle.apply(oracle_params, view, nodes, ranges, routed.any((-2, -1)), oracle_state)
    values = jnp.where(routed, exact.values, out.values)
    return LeafOutput(values, out.logits, state=(*route_state, out.state, exact.state))

  return LeafModel(init, apply, (model.params, oracle.params), model.game or oracle.game)
