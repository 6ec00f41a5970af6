"""The SoG agent: a player that re-solves every decision of a game with GT-CFR (SoG's "sound play").

The agent holds, across one game, the summary of its last search (:mod:`sog.search.resolving`). At
each of its decisions it plans a re-solving start from that summary (the game's root beliefs at its
first decision), runs one GT-CFR search in the compact tables of s_prev's subgame
(:class:`sog.search.Subgames`), keeps the new summary, and plays from the re-solved average policy
at its infostate. It searches only at its own decisions: the public states between two of them (the
opponent's moves, chance) lie on the branch from s_prev down to the current state, where the search
re-solves them too.
"""

from __future__ import annotations

import chex
import jax
import numpy as np

from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import registry
from sog.search import gtcfr
from sog.search import leaf_models
from sog.search import resolver as resolver_lib
from sog.search import resolving
from sog.search import subgames as subgames_lib
from sog.search import tables as tables_lib


class SoGAgent:
  """One player of a game, playing by continual re-solving with GT-CFR.

  Args:
    game: a loaded game (each search runs on the tables of its re-solving root's subgame).
    leaf_model: how the searches value frontier leaves (the exact oracle, a CVPN, zeros).
    config: SoG(s, c) and the search's constants.
    resolving_config: safe (gadget, alpha) or unsafe re-solving.
  """

  def __init__(
    self,
    game: registry.Game,
    leaf_model: leaf_models.LeafModel,
    config: gtcfr.GTCFRConfig = gtcfr.GTCFRConfig(),
    resolving_config: resolving.ResolvingConfig = resolving.ResolvingConfig(),
  ):
    self.game = game
    self.perfect_information = tables_lib.has_perfect_information(game.tree)
    self.searcher = gtcfr.GTCFR(game, leaf_model, config)
    self.resolving_config = resolving_config
    self._resolver = resolver_lib.Resolver(self.searcher, resolving_config)
    self._ancestors = tables_lib.ancestors(game.tree)
    self._initial = self._resolver.initial_summary()
    self.reset()

  def reset(self) -> None:
    """Forgets the game so far: the next decision solves from the game's root beliefs."""
    self.summary: subgames_lib.PlacedSummary = self._initial
    self.last_decision: int | None = None

  def act(
    self, node: int, infostate: int, rng: chex.PRNGKey, sample: bool = True
  ) -> tuple[int, np.ndarray]:
    """Re-solves at public state ``node`` and picks an action for the agent's ``infostate``: drawn
    from the re-solved policy (SoG's sound play), or with ``sample=False`` its most probable action
    (the lowest of tied ones; for matches in perfect-information games).

    Returns the action and the policy [A] (float64, zero off the legal actions) it was picked from.
    Raises ``ValueError`` if ``node`` is not a decision of the game, ``infostate`` is not valid
    there, or ``node`` does not follow the agent's last decision in this game (call :meth:`reset`
    first).
    """
    tree = self.game.tree
    if not 0 <= node < tree.num_nodes or tree.kind[node] not in (
      public_game.PLAYER_0,
      public_game.PLAYER_1,
    ):
      raise ValueError(f"node {node} is not a decision node of {self.game.name}")
    player = int(tree.kind[node])
    if not (0 <= infostate < tree.max_infostates and tree.valid[node, player, infostate]):
      valid = np.flatnonzero(tree.valid[node, player]).tolist()
      raise ValueError(
        f"infostate {infostate} is not valid for player {player} at node {node}; "
        f"valid infostates: {valid}"
      )
    if self.last_decision is not None:
      level = int(tree.depth[self.last_decision])
      if level >= tree.depth[node] or self._ancestors[node, level] != self.last_decision:
        raise ValueError(
          f"node {node} does not follow the agent's last decision (node "
          f"{self.last_decision}): call reset() before a new game"
        )
    search_rng, action_rng = jax.random.split(rng)
    [resolved] = self._resolver.resolve([(self.summary, node)], search_rng[None])
    result = jax.device_get(jax.tree.map(lambda x: x[0], resolved.results))
    [self.summary] = resolved.summaries()
    self.last_decision = node
    policy = policy_lib.normalised(
      np.asarray(result.focus_policy[infostate], np.float64), tree.legal[node, infostate]
    )
    if not sample:
      return int(np.argmax(policy)), policy
    action = int(jax.random.choice(action_rng, policy.shape[0], p=jax.numpy.asarray(policy)))
    return action, policy
