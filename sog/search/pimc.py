"""Perfect-information Monte Carlo (PIMC): MCTS on determinized worlds, the family of Scotland
Yard's PimBot, the MCTS player SoG beats in the paper's fig. 5 (Schmid et al. 2023; PimBot is
Nijssen and Winands' MCTS with determinization, not public).

At a decision of player i, holding infostate s_i at the public state x that a path of child slots
reaches from the root, PIMC draws n worlds (x, s_i, s_j): the opponent's private state s_j with
probability proportional to W(s_i, s_j), the pair weight the public history leaves
(:func:`sog.search.pool.belief_paths.along`), weighed by the deal alone, not by how either player
plays. Where the deal's marginals are uniform (every game here), that is the deal conditioned on
the public history: card removal in poker, on the glasses maps uniform over Mr X's possible
stations (on london the start draws weigh his station 132, on both decks, apart). It searches
each world as a perfect-information game with mctx's PUCT MCTS (``mctx.muzero_policy``):
the game's own rules as the model (:mod:`sog.games.worlds`; a chance event below the root drawn
when its edge is first expanded, then fixed in that world's tree), uniform priors over the legal
actions, the value of a new node the return of one uniformly
random rollout to the end (OpenSpiel's ``RandomRolloutEvaluator`` with one rollout). It plays the
action with the most root visits summed over the n worlds.

Values follow mctx's two-player convention with turns that need not alternate (a team of detectives
moves several times in a row): a node's value is its mover's, a move's reward is its mover's utility
when it ends the game, and the discount to the child is +1 when the same player moves there, -1 when
the other does, 0 at the end.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np

from sog.games import public_game
from sog.games import registry
from sog.games import worlds as worlds_lib
from sog.search.pool import belief_paths

_MASKED = -1e9  # (not -inf: mctx mixes logits arithmetically)


def _mover(game: public_game.PublicGame, world: worlds_lib.World) -> chex.Array:
  return jnp.clip(game.kind(world.state), 0, 1)


def _legal(game: public_game.PublicGame, world: worlds_lib.World) -> chex.Array:
  """[A] bool: the mover's legal actions at its infostate (none at chance or the end)."""
  return game.legal(world.state)[world.infostates[_mover(game, world)]]


def _through_chance(
  game: public_game.PublicGame, world: worlds_lib.World, rng: chex.PRNGKey
) -> worlds_lib.World:
  """``world`` with the chance events at it drawn until a player moves or the game ends."""
  if not game.max_chance_outcomes:  # (static: no chance below the deal)
    return world

  def draw(carry):
    world, rng = carry
    rng, key = jax.random.split(rng)
    return worlds_lib.step(game, world, jnp.int32(0), key)[1], rng

  at_chance = lambda carry: game.kind(carry[0].state) == public_game.CHANCE  # noqa: E731
  return jax.lax.while_loop(at_chance, draw, (world, rng))[0]


def _advance(
  game: public_game.PublicGame, world: worlds_lib.World, action: chex.Array, rng: chex.PRNGKey
) -> worlds_lib.World:
  """The world after the mover's ``action`` and the chance events that follow it."""
  step_key, chance_key = jax.random.split(rng)
  return _through_chance(game, worlds_lib.step(game, world, action, step_key)[1], chance_key)


def rollout(game: public_game.PublicGame, world: worlds_lib.World, rng: chex.PRNGKey) -> chex.Array:
  """Player 0's utility at the end of one game played on from ``world`` by uniformly random legal
  actions (at ``world`` itself if it is terminal)."""

  def move(carry):
    world, rng = carry
    rng, pick, step = jax.random.split(rng, 3)
    action = jax.random.categorical(pick, jnp.where(_legal(game, world), 0.0, -jnp.inf))
    return _advance(game, world, action, step), rng

  playing = lambda carry: game.kind(carry[0].state) != public_game.TERMINAL  # noqa: E731
  end = jax.lax.while_loop(playing, move, (world, rng))[0]
  return worlds_lib.utility(game, end).astype(jnp.float32)


def _for_mover(mover: chex.Array, utility: chex.Array) -> chex.Array:
  """Player 0's ``utility`` as the value of player ``mover`` (player 1 gets its negation)."""
  return jnp.where(mover == 1, -utility, utility)


def recurrent_fn(game: public_game.PublicGame):
  """mctx's recurrent function over a batch of worlds (``embedding``: a batched
  :class:`~sog.games.worlds.World`): the move, the chance events after it, the mover's reward where
  it ends the game, the discount to the child (+1: the same player moves there, -1: the other, 0:
  the end), the child's value by one random rollout and uniform priors over its legal actions. A
  terminal world stays as it is, with no reward and no value."""

  def one(rng, action, world):
    over = game.kind(world.state) == public_game.TERMINAL
    move_key, rollout_key = jax.random.split(rng)
    child = _advance(game, world, action, move_key)
    child = jax.tree.map(lambda new, old: jnp.where(over, old, new), child, world)
    ends = (game.kind(child.state) == public_game.TERMINAL) & ~over
    mover, next_mover = _mover(game, world), _mover(game, child)
    reward = jnp.where(ends, _for_mover(mover, worlds_lib.utility(game, child)), 0.0)
    discount = jnp.where(ends | over, 0.0, jnp.where(next_mover == mover, 1.0, -1.0))
    value = jnp.where(ends | over, 0.0, _for_mover(next_mover, rollout(game, child, rollout_key)))
    logits = jnp.where(_legal(game, child), 0.0, _MASKED)
    return mctx.RecurrentFnOutput(
      reward=reward.astype(jnp.float32),
      discount=discount,
      prior_logits=logits,
      value=value,
    ), child

  def batched(params, rng, action, worlds):
    del params
    keys = jax.random.split(rng, action.shape[0])
    return jax.vmap(one)(keys, action, worlds)

  return batched


def _opponent_weights(weight: chex.Array, actor: chex.Array, infostate: chex.Array) -> chex.Array:
  """[S] W(s_i, s_j) over the opponent's s_j, for the actor i at ``infostate`` s_i (pair weights
  ``weight`` [S, S], indexed [s0, s1])."""
  return jnp.where(actor == 0, weight[infostate], weight[:, infostate])


def draw_opponents(
  weight: chex.Array, actor: chex.Array, infostate: chex.Array, rng: chex.PRNGKey, count: int
) -> chex.Array:
  """[count] int32: the opponent's private states of ``count`` worlds, each drawn with probability
  proportional to W(s_i, s_j) for the actor i at ``infostate`` s_i (pair weights ``weight`` [S, S],
  indexed [s0, s1])."""
  odds = _opponent_weights(weight, actor, infostate)
  return jax.random.categorical(rng, jnp.log(odds), shape=(count,)).astype(jnp.int32)


def root_visits(
  game: public_game.PublicGame,
  simulations: int,
  worlds: int,
  rng: chex.PRNGKey,
  path: chex.Array,
  infostate: chex.Array,
) -> tuple[chex.Array, chex.Array]:
  """[A] the root visits of ``worlds`` determinized MCTS searches of ``simulations`` simulations
  each, summed, at the decision the child slots ``path`` [L] (-1 past the end) reach, for the actor
  holding ``infostate``; and whether that is a decision: a player moves there, and the public
  history allows ``infostate`` (a pair weight W > 0 with some opponent infostate; the visits mean
  nothing otherwise). Traceable."""
  state, weight = belief_paths.along(game, path)
  kind = game.kind(state)
  actor = jnp.clip(kind, 0, 1)
  decision = (kind < public_game.CHANCE) & (_opponent_weights(weight, actor, infostate).max() > 0)
  draw_key, rollout_key, search_key = jax.random.split(rng, 3)
  opponents = draw_opponents(weight, actor, infostate, draw_key, worlds)
  own = jnp.full(worlds, infostate, jnp.int32)
  infostates = jnp.where(actor == 0, jnp.stack([own, opponents], 1), jnp.stack([opponents, own], 1))
  roots = worlds_lib.World(
    state=jax.tree.map(lambda x: jnp.broadcast_to(x, (worlds, *jnp.shape(x))), state),
    infostates=infostates,
  )
  legal = jnp.broadcast_to(game.legal(state)[infostate], (worlds, game.num_actions))
  returns = jax.vmap(functools.partial(rollout, game))(roots, jax.random.split(rollout_key, worlds))
  root = mctx.RootFnOutput(
    prior_logits=jnp.where(legal, 0.0, _MASKED),
    value=_for_mover(actor, returns),
    embedding=roots,
  )
  out = mctx.muzero_policy(
    None,
    search_key,
    root,
    recurrent_fn(game),
    simulations,
    invalid_actions=~legal,
    dirichlet_fraction=0.0,
  )
  return out.search_tree.summary().visit_counts.sum(0), decision


class PIMC:
  """Determinized MCTS at any decision of a game, compiled once: ``simulations`` a move in all,
  over ``worlds`` worlds (``simulations / worlds`` each).

  ``visits(rng, paths, infostates)`` searches a batch of decisions (each a path of child slots from
  the root and the actor's infostate) at once; ``act`` plays one, the action with the most visits
  (the lowest index among equals)."""

  def __init__(self, game: registry.Game, simulations: int = 1000, worlds: int = 10):
    if not isinstance(game, registry.Game):
      raise ValueError(f"PIMC plays a registered game (sog.games.load), got {type(game).__name__}")
    if not isinstance(worlds, int) or worlds < 1:
      raise ValueError(f"PIMC: worlds must be an int >= 1, got {worlds!r}")
    if not isinstance(simulations, int) or simulations < 1 or simulations % worlds:
      raise ValueError(
        f"PIMC: simulations (a move, over all worlds) must be a positive multiple of "
        f"worlds={worlds}, got {simulations!r}"
      )
    self.game, self.simulations, self.worlds = game, simulations, worlds
    self.path_length = game.max_moves
    self._visits = jax.jit(
      jax.vmap(functools.partial(root_visits, game.public_game, simulations // worlds, worlds))
    )

  def visits(self, rng: chex.PRNGKey, paths, infostates) -> np.ndarray:
    """[B, A] summed root visits at B decisions: ``paths`` (sequences of child slots from the
    root) and the actors' ``infostates`` [B]."""
    padded = np.stack([belief_paths.padded_path(path, self.path_length) for path in paths])
    infostates = np.asarray(infostates).reshape(-1)
    S = self.game.public_game.max_infostates
    if len(padded) != len(infostates):
      raise ValueError(f"PIMC: {len(padded)} paths but {len(infostates)} infostates")
    if (
      not np.issubdtype(infostates.dtype, np.integer)
      or not ((infostates >= 0) & (infostates < S)).all()
    ):
      raise ValueError(f"PIMC: infostates must be ints in 0..{S - 1}, got {infostates.tolist()}")
    keys = jax.random.split(rng, len(padded))
    visits, ok = self._visits(keys, jnp.asarray(padded), jnp.asarray(infostates, jnp.int32))
    if not np.asarray(ok).all():
      bad = int(np.flatnonzero(~np.asarray(ok))[0])
      raise ValueError(
        f"PIMC: decision {bad} (path {list(paths[bad])}, infostate {int(infostates[bad])}) is no "
        "player's decision at that infostate: the path ends at chance or the end of the game, or "
        "the public history there rules the infostate out"
      )
    return np.asarray(visits)

  def act(self, rng: chex.PRNGKey, path, infostate: int) -> int:
    """The action with the most visits at one decision."""
    return int(np.argmax(self.visits(rng, [path], [infostate])[0]))
