"""The host side of GT-CFR on the belief pool: :class:`GTCFR`, compiled once per game, leaf
model and config, for one search or a vmapped batch."""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.games import public_game
from sog.games import registry
from sog.search import devices as devices_lib
from sog.search import leaf_calls
from sog.search import leaf_models
from sog.search import types as search_types
from sog.search.pool import belief_search
from sog.search.pool import belief_state
from sog.search.pool import beliefs


class GTCFR:
  """GT-CFR searches of any :class:`~sog.games.public_game.PublicGame` on the belief pool (nothing
  enumerated), compiled once.

  ``search(rng, root_ranges)`` runs one search from the game's root (default ranges: the deal's
  priors); ``search_state(rng, state)`` one from any state of a perfect-information game (where
  the state is all either player knows: a pgx game, Connect Four); ``search_from(rng, start)`` one
  from a
  :class:`~sog.search.pool.belief_state.BeliefStart` (any public state as the root, a branch of up
  to ``branch_depth`` moves down to the focus, the safe re-solving gadget: a re-solving search);
  ``search_batch``, ``search_state_batch`` and ``search_from_batch`` a batch of independent ones
  under ``vmap``, whose
  passes call the leaf model once for the batch, sized by its largest frontier. An expansion adds
  the children of k actions (``config.expansion_k``; by default all of them in an
  imperfect-information game and one in a perfect-information game: ``k``).
  The pool has ``capacity`` slots, by default
  :func:`~sog.search.pool.belief_search.node_capacity`: the most the config's simulations and the
  branch can add (a bound from the game's ``max_children``, loose where nodes have fewer children),
  or the game's whole tree where that is smaller (counted once, by growing it on a pool); a game
  too large to enumerate is never grown whole, and its default pool holds at most the slots whose
  state fits :data:`~sog.search.pool.belief_search.POOL_BYTES` where the root, the branch's
  children and the focus's allow. A smaller pool costs less; once it cannot hold another
  expansion, the search goes on with the tree it has (its frontier leaves valued by the leaf
  model).

  The leaf model is a :class:`~sog.search.leaf_models.LeafModel` that reads the node facts a pool
  has (``kind``, ``legal``, ``valid``, ``encoding``, the pool's structure): the zero model, the
  CVPN and the pool's exact oracle (:func:`~sog.search.pool.belief_oracle.exact_leaf_model`); a
  model starts each search from ``leaf_model.init(empty pool, start)``. The tables' oracle
  (:func:`sog.search.leaf_models.exact_leaf_model`, ReBeL's) reads search tables and is refused
  here. A batch splits over ``devices`` (default: every local device) along its batch axis
  (:mod:`sog.search.devices`).
  """

  def __init__(
    self,
    game: public_game.PublicGame | registry.Game,
    leaf_model: leaf_models.LeafModel,
    config: search_types.GTCFRConfig = search_types.GTCFRConfig(),
    dtype=jnp.float32,
    capacity: int | None = None,
    branch_depth: int = 0,
    devices: Sequence[jax.Device] | None = None,
  ):
    game = game.public_game if isinstance(game, registry.Game) else game
    if not isinstance(game, public_game.PublicGame):
      raise ValueError(
        f"GTCFR searches a sog.games.PublicGame (or a registered game), got {type(game).__name__}"
      )
    leaf_models.check_model_game(leaf_model, game.name, "GTCFR")
    if int(game.kind(game.root())) == public_game.TERMINAL:
      raise ValueError("the search root is terminal: there is nothing to search")
    if not isinstance(branch_depth, int) or branch_depth < 0:
      raise ValueError(
        f"GTCFR: branch_depth (the most moves from a start's root to its focus) must be an "
        f"int >= 0, got {branch_depth!r}"
      )
    # k: the children of k actions per expansion; by default all of them (imperfect information)
    # or one (perfect information); the functions below read the config's k.
    default_k = 1 if public_game.is_perfect_information(game) else None
    self.k = default_k if config.expansion_k is None else config.expansion_k
    config = dataclasses.replace(config, expansion_k=self.k)
    self.game, self.leaf_model, self.config = game, leaf_model, config
    self.branch_depth, self.dtype = branch_depth, jnp.dtype(dtype)
    smallest = belief_search.first_expansion_bound(game, config, branch_depth)
    if capacity is not None and (not isinstance(capacity, int) or capacity < smallest):
      raise ValueError(
        f"GTCFR: capacity must be None (the most s simulations can add, or the whole game "
        f"where that is smaller, or what fits {belief_search.POOL_BYTES >> 30} GiB where the game "
        f"is too large to enumerate) or an int >= {smallest} (the root, the branch's children "
        f"and the focus's on {game.name}), got {capacity!r}"
      )
    if capacity is None:
      capacity = belief_search.node_capacity(game, config, dtype, branch_depth)
    self.capacity = capacity
    self.empty = beliefs.empty(game, self.capacity, dtype)
    self._check_leaf_model()
    self._search = jax.jit(self._search_fn(self.leaf_batches))
    axis = leaf_calls.SEARCH_AXIS
    one_of_batch = self._search_fn(self.leaf_batches._replace(axis_name=axis))

    def search_batch(params, rngs, starts):
      return jax.vmap(one_of_batch, in_axes=(None, 0, 0), axis_name=axis)(params, rngs, starts)

    self._batch = jax.jit(search_batch)
    self.mesh = devices_lib.mesh(devices)

  @property
  def leaf_batches(self) -> leaf_calls.LeafBatches:
    """The leaf-model batch sizes of one search (what ``belief_search.run`` and ``finish``
    take)."""
    return leaf_calls.leaf_batches(belief_search.frontier_capacity(self.capacity))

  def _check_leaf_model(self) -> None:
    """``ValueError`` if the leaf model reads something the pool does not have (the search tables:
    the tables' exact oracle)."""
    S = self.game.max_infostates
    try:
      jax.eval_shape(
        lambda tree: self.leaf_model.apply(
          self.leaf_model.params,
          tree,
          jnp.zeros(1, jnp.int32),
          jnp.zeros((1, 2, S), tree.weight.dtype),
          jnp.ones(1, bool),
          self.leaf_model.init(tree, self.start()),
        ),
        self.empty,
      )
    except AttributeError as error:
      raise ValueError(
        f"GTCFR: the leaf model reads what the belief pool does not have ({error}); the "
        "pool offers kind, legal, valid and encoding at its slots (zero_leaf_model and the CVPN "
        "read only these); the exact oracle on the pool is "
        "sog.search.pool.belief_oracle.exact_leaf_model"
      ) from None

  def _search_fn(self, batches: leaf_calls.LeafBatches):
    """search(params, rng, start) with this searcher's game, leaf model, config and pool size."""
    model = self.leaf_model
    one = functools.partial(
      belief_search.search,
      self.game,
      self.capacity,
      apply=model.apply,
      config=self.config,
      batches=batches,
    )

    def search(params, rng, start):
      return one(params=params, rng=rng, start=start, leaf_state=model.init(self.empty, start))

    return search

  def root_ranges(self, ranges: np.ndarray | None = None) -> jax.Array:
    """``ranges`` [2, S] checked against the game's root (default: the deal's priors), in the
    pool's dtype."""
    if ranges is None:
      return jnp.asarray(public_game.prior_ranges(self.game), self.dtype)
    ranges = np.asarray(ranges, np.float64)
    valid = np.asarray(self.empty.valid[0])
    if ranges.shape != valid.shape:
      raise ValueError(
        f"root ranges must have shape [2, infostates] = {list(valid.shape)}, got "
        f"{list(ranges.shape)}"
      )
    if not np.all(np.isfinite(ranges)) or ranges.min() < 0:
      raise ValueError("root ranges must be finite and non-negative")
    if (ranges * ~valid).max() > 0:
      raise ValueError("root ranges put weight on infostates that cannot occur at the root")
    if not np.all((ranges * valid).sum(-1) > 0):
      raise ValueError("each player's root range must put positive weight on a valid infostate")
    return jnp.asarray(ranges, self.dtype)

  def start(self, root_ranges: np.ndarray | None = None) -> belief_state.BeliefStart:
    """A plain search's start at the game's root, at ``root_ranges`` (default: the deal's
    priors)."""
    return belief_search.root_start(
      self.game, self.root_ranges(root_ranges), self.dtype, self.branch_depth
    )

  def _checked(self, start: belief_state.BeliefStart, batch: int | None = None):
    """``start`` in the pool's dtype with its branch padded to ``branch_depth`` (``ValueError``
    naming the field for a start of the wrong shapes, a longer branch, slots out of range, or
    weights, ranges and gadget values out of their domains); ``batch``: the leading axis of a
    batch of starts."""
    lead = () if batch is None else (batch,)
    S, K = self.game.max_infostates, self.game.max_children
    gadget = start.gadget
    fields = {
      "weight": (start.weight, (*lead, S, S)),
      "ranges": (start.ranges, (*lead, 2, S)),
      "gadget.terminate_values": (gadget.terminate_values, (*lead, S)),
      "gadget.previous_range": (gadget.previous_range, (*lead, S)),
      "gadget.prior": (gadget.prior, (*lead, S)),
      "gadget.alpha": (gadget.alpha, lead),
      "gadget.player": (gadget.player, lead),
      "gadget.enabled": (gadget.enabled, lead),
    }
    for name, (value, shape) in fields.items():
      if tuple(np.shape(value)) != shape:
        raise ValueError(
          f"a start's {name} must have shape {list(shape)}, got {list(np.shape(value))}"
        )
    values = {name: np.asarray(value, np.float64) for name, (value, _) in fields.items()}
    for name in ("weight", "ranges", "gadget.previous_range", "gadget.prior"):
      if not np.all(np.isfinite(values[name])) or values[name].min() < 0:
        raise ValueError(f"a start's {name} must be finite and non-negative")
    if not np.all(np.isfinite(values["gadget.terminate_values"])):
      raise ValueError("a start's gadget.terminate_values must be finite")
    if not np.all((values["gadget.alpha"] >= 0) & (values["gadget.alpha"] <= 1)):
      raise ValueError(f"a start's gadget.alpha must be in [0, 1], got {values['gadget.alpha']}")
    if not np.isin(values["gadget.player"], (0, 1)).all():
      raise ValueError(f"a start's gadget.player must be 0 or 1, got {values['gadget.player']}")
    weight = values["weight"]
    if not (weight.reshape(*lead, -1).max(-1) > 0).all():
      raise ValueError("a start's weight (the pair weights W at its root) must not be all zero")
    S0, S1 = self.game.num_infostates
    outside = weight.copy()
    outside[..., :S0, :S1] = 0
    if outside.max() > 0:
      raise ValueError(
        f"a start's weight puts weight on infostates a player cannot hold: (S0, S1) = {(S0, S1)} "
        f"on {self.game.name}, so W(s0, s1) must be zero for s0 >= {S0} or s1 >= {S1}"
      )
    valid = np.stack([weight.sum(-1) > 0, weight.sum(-2) > 0], axis=-2)  # [..., 2, S]
    if (values["ranges"] * ~valid).max() > 0:
      raise ValueError(
        "a start's ranges put weight on infostates that cannot occur at its root (W is zero for "
        "every pair holding them)"
      )
    self._check_states(start.state, lead, "a start's state must be a public state")
    branch = np.asarray(start.branch)
    if branch.size == 0:
      branch = branch.astype(np.int32).reshape(*lead, 0)
    if (
      not np.issubdtype(branch.dtype, np.integer)
      or branch.shape[:-1] != lead
      or branch.shape[-1:] == ()
      or branch.shape[-1] > self.branch_depth
    ):
      axes = ", ".join([*map(str, lead), "D"])
      raise ValueError(
        f"a start's branch must be integers of shape [{axes}] with D <= branch_depth="
        f"{self.branch_depth} (the searcher's), got {branch.dtype} {list(branch.shape)}"
      )
    padding = branch < 0
    if branch.size and (
      branch.min() < -1 or branch.max() >= K or (padding[..., :-1] & ~padding[..., 1:]).any()
    ):
      raise ValueError(
        f"a start's branch holds child slots in [0, {K}), then -1 past its end; got {branch}"
      )
    pad = [(0, 0)] * len(lead) + [(0, self.branch_depth - branch.shape[-1])]
    return start.replace(
      weight=jnp.asarray(start.weight, self.dtype),
      branch=jnp.asarray(np.pad(branch, pad, constant_values=-1), jnp.int32),
      ranges=jnp.asarray(start.ranges, self.dtype),
      gadget=gadget.replace(
        enabled=jnp.asarray(gadget.enabled, bool),
        player=jnp.asarray(gadget.player, jnp.int32),
        **{
          field: jnp.asarray(getattr(gadget, field), self.dtype)
          for field in ("terminate_values", "previous_range", "prior", "alpha")
        },
      ),
    )

  def _check_states(self, states: chex.ArrayTree, lead: tuple[int, ...], problem: str) -> None:
    """``ValueError`` starting with ``problem`` where ``states`` do not have the structure and
    shapes of the game's root state (with the leading axes ``lead``)."""
    root = self.game.root()
    if jax.tree.structure(states) != jax.tree.structure(root) or any(
      np.shape(given) != (*lead, *np.shape(expected))
      for given, expected in zip(jax.tree.leaves(states), jax.tree.leaves(root), strict=True)
    ):
      raise ValueError(
        f"{problem} of {self.game.name} (the structure and shapes of "
        f"game.root(){', with a leading batch axis' if lead else ''})"
      )

  def _check_focus(self, result: belief_state.BeliefSearchResult) -> None:
    """``ValueError`` where a start's branch did not lead to a public state of the game that is
    not terminal (host side, after the search: the branch is grown inside it)."""
    focus = np.asarray(result.focus)
    kind = np.take_along_axis(np.asarray(result.tree.kind), np.maximum(focus, 0)[..., None], -1)[
      ..., 0
    ]
    if (focus < 0).any() or (kind == public_game.TERMINAL).any():
      raise ValueError(
        "a start's branch must lead to a public state of the game that is not terminal: a slot "
        "names no child there, or the branch ends at a terminal"
      )

  def search(
    self, rng: chex.PRNGKey, root_ranges: np.ndarray | None = None, params=None
  ) -> belief_state.BeliefSearchResult:
    """One search from the game's root at ``root_ranges`` (default: the deal's priors)."""
    return self.search_from(rng, self.start(root_ranges), params)

  def search_from(
    self, rng: chex.PRNGKey, start: belief_state.BeliefStart, params=None
  ) -> belief_state.BeliefSearchResult:
    """One search from ``start`` (slots of the result are in the pool rooted at its root)."""
    params = self.leaf_model.params if params is None else params
    result = self._search(params, rng, self._checked(start))
    self._check_focus(result)
    return result

  def search_state(
    self, rng: chex.PRNGKey, state: chex.ArrayTree, params=None
  ) -> belief_state.BeliefSearchResult:
    """One search from ``state``, a public state of a perfect-information game (a pgx game,
    Connect Four): its root, and its focus, is that state (slot 0)."""
    return self.search_from(rng, self._state_starts(state), params)

  def search_state_batch(
    self, rngs: chex.PRNGKey, states: chex.ArrayTree, params=None
  ) -> belief_state.BeliefSearchResult:
    """Searches for a batch of rngs [B] from ``states`` (public states of a perfect-information
    game stacked on a leading axis B)."""
    return self.search_from_batch(rngs, self._state_starts(states, rngs.shape[0]), params)

  def _state_starts(
    self, states: chex.ArrayTree, batch: int | None = None
  ) -> belief_state.BeliefStart:
    """The starts of plain searches from ``states`` (one, or ``batch`` stacked); ``ValueError`` for
    an imperfect-information game or a terminal state."""
    if not public_game.is_perfect_information(self.game):
      raise ValueError(
        f"GTCFR.search_state starts from a public state of a perfect-information game; "
        f"{self.game.name} has private information: a search from one of its public states needs "
        "the beliefs there (search_from with a BeliefStart, or continual re-solving: "
        "sog.search.pool.belief_resolver)"
      )
    lead = () if batch is None else (batch,)
    self._check_states(states, lead, "states must be public states")
    kind = (jax.vmap(self.game.kind) if lead else self.game.kind)(states)
    if (np.asarray(kind) == public_game.TERMINAL).any():
      raise ValueError("a search root is terminal: there is nothing to search")
    start = belief_search.state_start(self.game, self.game.root(), self.dtype, self.branch_depth)
    stacked = jax.tree.map(lambda x: jnp.broadcast_to(x, (*lead, *jnp.shape(x))), start)
    return stacked.replace(state=states)

  def search_batch(
    self, rngs: chex.PRNGKey, root_ranges: np.ndarray | None = None, params=None
  ) -> belief_state.BeliefSearchResult:
    """Searches from the game's root for a batch of rngs [B] (and root ranges [B, 2, S], default
    the priors)."""
    count = rngs.shape[0]
    if root_ranges is None:
      ranges = [None] * count
    else:
      root_ranges = np.asarray(root_ranges)
      if root_ranges.ndim != 3 or root_ranges.shape[0] != count:
        raise ValueError(f"batched root ranges must be [{count}, 2, S], got {root_ranges.shape}")
      ranges = list(root_ranges)
    starts = jax.tree.map(lambda *xs: jnp.stack(xs), *[self.start(r) for r in ranges])
    return self.search_from_batch(rngs, starts, params)

  def search_from_batch(
    self, rngs: chex.PRNGKey, starts: belief_state.BeliefStart, params=None
  ) -> belief_state.BeliefSearchResult:
    """Searches for a batch of rngs [B] from ``starts`` (each field with a leading axis B)."""
    params = self.leaf_model.params if params is None else params
    starts = self._checked(starts, rngs.shape[0])
    results = devices_lib.over_devices(self.mesh, self._batch, (params,), (rngs, starts))
    self._check_focus(results)
    return results
