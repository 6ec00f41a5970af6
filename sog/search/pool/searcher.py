"""The host side of the pool search: :class:`PoolGTCFR`, compiled once per game, leaf model, config
and capacity, for one search or a vmapped batch."""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

from sog.games import public_game
from sog.search import types as search_types
from sog.search.pool import core
from sog.search.pool import types


class PoolGTCFR:
  """GT-CFR searches of a :class:`~sog.games.public_game.PublicGame` on a node pool, compiled once.

  ``search(rng, root)`` runs one search from a game state (default: the game's initial state);
  ``search_batch(rngs, roots)`` a batch of independent ones under ``vmap``. ``k`` (the config's
  ``expansion_k``) defaults to 1, as for every perfect-information game. ``capacity`` (node slots)
  defaults to the most a search can grow, :func:`~sog.search.pool.core.node_capacity`; a smaller
  one is refused.
  """

  def __init__(
    self,
    game: public_game.PublicGame,
    leaf_model: types.PoolLeafModel,
    config: search_types.GTCFRConfig = search_types.GTCFRConfig(),
    capacity: int | None = None,
  ):
    if not (isinstance(game, public_game.PublicGame) and public_game.is_perfect_information(game)):
      raise ValueError(
        "PoolGTCFR searches a perfect-information sog.games.PublicGame (one infostate per "
        "player: a pgx game, or the public_game of connect_four or tic_tac_toe), got "
        f"{getattr(game, 'name', type(game).__name__)}; an imperfect-information game is "
        "searched by sog.search.pool.BeliefGTCFR"
      )
    if not isinstance(leaf_model, types.PoolLeafModel):
      raise ValueError(
        f"PoolGTCFR: the leaf model must be a sog.search.pool.PoolLeafModel, got "
        f"{type(leaf_model).__name__}"
      )
    if leaf_model.game is not None and leaf_model.game != game.name:
      raise ValueError(
        f"PoolGTCFR: the leaf model values {leaf_model.game}, but the game searched is {game.name}"
      )
    if int(game.kind(game.root())) == public_game.TERMINAL:
      raise ValueError("the search root is terminal: there is nothing to search")
    self.game, self.leaf_model, self.config = game, leaf_model, config
    self.k = 1 if config.expansion_k is None else config.expansion_k
    if capacity is not None:
      core.check_capacity(game, config, self.k, capacity)
    self.capacity = (
      core.node_capacity(game.num_actions, config, self.k) if capacity is None else capacity
    )
    self.max_depth = min(self.capacity, game.max_moves or self.capacity) + 1
    one = functools.partial(
      core.search,
      game,
      leaf_model.apply,
      config=config,
      capacity=self.capacity,
      k=self.k,
      max_depth=self.max_depth,
    )
    self._search = jax.jit(lambda params, rng, root: one(params, rng, root))
    self._batch = jax.jit(
      jax.vmap(lambda params, rng, root: one(params, rng, root), in_axes=(None, 0, 0))
    )

  def search(
    self, rng: chex.PRNGKey, root: chex.ArrayTree | None = None, params=None
  ) -> types.PoolResult:
    """One search from ``root`` (default: the game's initial state)."""
    root = self.game.root() if root is None else root
    self._check_roots(jax.tree.map(lambda x: jnp.asarray(x)[None], root))
    params = self.leaf_model.params if params is None else params
    return self._search(params, rng, root)

  def search_batch(
    self, rngs: chex.PRNGKey, roots: chex.ArrayTree | None = None, params=None
  ) -> types.PoolResult:
    """Searches for a batch of rngs [B] from ``roots`` (states stacked on a leading axis [B];
    default: the initial state for each)."""
    if roots is None:
      roots = jax.tree.map(
        lambda x: jnp.broadcast_to(x, (rngs.shape[0], *jnp.shape(x))), self.game.root()
      )
    self._check_roots(roots)
    params = self.leaf_model.params if params is None else params
    return self._batch(params, rngs, roots)

  def _check_roots(self, roots: chex.ArrayTree) -> None:
    if (jax.vmap(self.game.kind)(roots) == public_game.TERMINAL).any():
      raise ValueError("a search root is terminal: there is nothing to search")
