"""The SoG agent: a player that re-solves every decision of a game with GT-CFR (SoG's "sound play").

The agent holds, across one game, the summary of its last search. At each of its decisions it plans
a re-solving start from that summary (the game's root beliefs at its first decision), runs one
GT-CFR search from s_prev, keeps the new summary, and plays from the re-solved average policy at its
infostate. It searches only at its own decisions: the public states between two of them (the
opponent's moves, chance) lie on the branch from s_prev down to the current state, where the search
re-solves them too.

A decision is named by its public state's path of child slots from the game's root (what
:func:`sog.openspiel.locate` finds for an OpenSpiel state) and checked against the game's rules
one public state at a time (:func:`sog.games.walk.shared_walk`). The searches run on the belief pool
(:class:`sog.search.pool.GTCFR`): each grows its own tree from s_prev, so the game is never
enumerated. Where the game may be enumerated, any decision can be the agent's first (a bot
restarted mid-game); where it is too large, a re-solve's branch spans at most the game's
``max_moves_between_decisions`` (:func:`sog.games.public_game.decision_gap`), so the agent plays
every decision of its player from the game's start.
"""

from __future__ import annotations

from collections.abc import Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import registry
from sog.games import walk as walk_lib
from sog.search import leaf_models
from sog.search import resolving
from sog.search import types
from sog.search.pool import belief_resolver
from sog.search.pool.belief_searcher import GTCFR


class SoGAgent:
  """One player of a game, playing by continual re-solving with GT-CFR.

  Args:
    game: a loaded game.
    leaf_model: how the searches value frontier leaves (the exact oracle
      :func:`sog.search.pool.belief_oracle.exact_leaf_model`, a CVPN, zeros).
    config: SoG(s, c) and the search's constants.
    resolving_config: safe (gadget, alpha) or unsafe re-solving.
    dtype: the searches' float type (``jnp.float64`` needs JAX's x64 mode).
  """

  def __init__(
    self,
    game: registry.Game,
    leaf_model: leaf_models.LeafModel,
    config: types.GTCFRConfig = types.GTCFRConfig(),
    resolving_config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
    dtype: jax.typing.DTypeLike = jnp.float32,
  ):
    self.game = game
    self.perfect_information = public_game.is_perfect_information(game.public_game)
    self.resolving_config = resolving_config
    self._walk = walk_lib.shared_walk(game.public_game)
    self.searcher = GTCFR(
      game,
      leaf_model,
      config,
      dtype=dtype,
      # (see the module's docstring)
      branch_depth=(
        game.max_moves if game.enumerable else public_game.decision_gap(game.public_game)
      ),
    )
    self._resolver = belief_resolver.BeliefResolver(self.searcher, game.max_moves, resolving_config)
    self._initial = self._resolver.initial_summary()
    self.reset()

  def reset(self) -> None:
    """Forgets the game so far: the next decision solves from the game's root beliefs."""
    self.summary = self._initial
    self.last_decision: tuple[int, ...] | None = None

  def _decision(self, path: tuple[int, ...], infostate: int) -> tuple[int, np.ndarray]:
    """The actor at the public state ``path`` reaches and the legal actions [A] of ``infostate``
    there; ``ValueError`` for a path off the game, a state that is not a decision, an infostate
    without legal actions, or a decision that does not follow the agent's last one."""
    walk, name = self._walk, self.game.name
    public = walk.root()
    for depth, slot in enumerate(path):
      children = walk.facts(public).children
      if not 0 <= slot < len(children) or children[slot] is None:
        raise ValueError(
          f"{name}: path {list(path)} leaves the game at move {depth} (slot {slot} holds no "
          "public child)"
        )
      public = children[slot]
    player = walk.kind(public)
    if player not in (public_game.PLAYER_0, public_game.PLAYER_1):
      raise ValueError(
        f"{name}: the public state at path {list(path)} is not a decision "
        f"({public_game.KIND_NAMES[player]})"
      )
    acting = [s for s in range(self.game.num_infostates[player]) if walk.legal_actions(public, s)]
    if infostate not in acting:
      raise ValueError(
        f"{name}: infostate {infostate} is not valid for player {player} at path {list(path)}; "
        f"infostates with legal actions there: {acting}"
      )
    last = self.last_decision
    if last is not None and (len(path) <= len(last) or path[: len(last)] != last):
      raise ValueError(
        f"{name}: path {list(path)} does not follow the agent's last decision (path "
        f"{list(last)}): call reset() before a new game"
      )
    since, gap = len(path) - len(last or ()), self.searcher.branch_depth
    if not self.game.enumerable and since > gap:
      raise ValueError(
        f"{name}: path {list(path)} lies {since} public moves below the agent's last decision "
        f"(or the game's root), more than the game's max_moves_between_decisions = {gap}: a game "
        "too large to enumerate is re-solved over that many moves, so the agent plays every "
        "decision of its player from the game's start"
      )
    legal = np.zeros(self.game.num_actions, bool)
    legal[walk.legal_actions(public, infostate)] = True
    return player, legal

  def act(
    self, path: Sequence[int], infostate: int, rng: chex.PRNGKey, sample: bool = True
  ) -> tuple[int, np.ndarray]:
    """Re-solves at the public state ``path`` (child slots from the game's root) reaches and picks
    an action for the agent's ``infostate``: drawn from the re-solved policy (SoG's sound play), or
    with ``sample=False`` its most probable action (the lowest of tied ones; for matches in
    perfect-information games).

    Returns the action and the policy [A] (float64, zero off the legal actions) it was picked from.
    Raises ``ValueError`` if ``path`` is not a decision of the game, ``infostate`` is not possible
    there, or the decision does not follow the agent's last one in this game (call :meth:`reset`
    first), or, in a game too large to enumerate, lies further below it (or the root) than the
    game's ``max_moves_between_decisions``.
    """
    path = tuple(int(k) for k in path)
    player, legal = self._decision(path, int(infostate))
    search_rng, action_rng = jax.random.split(rng)
    [resolved] = self._resolver.resolve([(self.summary, path, player)], search_rng[None])
    results = resolved.results
    if not bool(results.tree.valid[0, int(results.focus[0]), player, infostate]):
      raise ValueError(self._impossible(path, player, infostate))
    [self.summary] = resolved.summaries()
    self.last_decision = path
    focus_policy = np.asarray(resolved.results.focus_policy[0, infostate], np.float64)
    policy = policy_lib.normalised(focus_policy, legal)
    if not sample:
      return int(np.argmax(policy)), policy
    action = int(jax.random.choice(action_rng, policy.shape[0], p=jnp.asarray(policy)))
    return action, policy

  def _impossible(self, path: tuple[int, ...], player: int, infostate: int) -> str:
    return (
      f"{self.game.name}: infostate {infostate} of player {player} cannot occur at path "
      f"{list(path)} (no deal reaches it there)"
    )
