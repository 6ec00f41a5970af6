"""OpenSpiel bots playing by :class:`~sog.search.agent.SoGAgent` and by determinized MCTS
(:class:`~sog.search.pimc.PIMC`), for any game sog bridges to OpenSpiel (kuhn_poker, leduc_poker,
liars_dice, the registered Scotland Yard, connect_four, tic_tac_toe)."""

from __future__ import annotations

import jax
import pyspiel

from sog.openspiel import bridge as openspiel_bridge
from sog.search import agent as agent_lib
from sog.search import pimc as pimc_lib


class SoGBot(pyspiel.Bot):
  """``pyspiel.Bot`` over a :class:`SoGAgent`: each OpenSpiel state is replayed through sog's game
  rules to find its public state and the bot's infostate (:func:`sog.openspiel.locate`), and the
  agent re-solves there.

  Args:
    agent: the SoG agent (its game must have an OpenSpiel counterpart).
    player_id: the seat the bot plays.
    seed: the seed of the bot's searches and action draws.
    sample: whether the bot draws its action from the re-solved policy (SoG's sound play) or plays
      its most probable action. Default: it draws in imperfect-information games and plays the most
      probable action in perfect-information ones (as AlphaZero-style players are evaluated).
  """

  def __init__(
    self, agent: agent_lib.SoGAgent, player_id: int, seed: int = 0, sample: bool | None = None
  ):
    pyspiel.Bot.__init__(self)
    openspiel_bridge.openspiel_name(agent.game)  # a clear ValueError for games OpenSpiel lacks
    if player_id not in (0, 1):
      raise ValueError(f"player_id must be 0 or 1, got {player_id}")
    self.agent, self._player_id = agent, player_id
    self.sample = not agent.perfect_information if sample is None else sample
    self._rng = jax.random.PRNGKey(seed)

  def player_id(self) -> int:
    return self._player_id

  def provides_policy(self) -> bool:
    return True

  def restart_at(self, state: pyspiel.State) -> None:
    del state
    self.agent.reset()

  def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
    del state, player_id, action  # the next decision's state carries everything the agent needs

  def step_with_policy(self, state: pyspiel.State) -> tuple[list[tuple[int, float]], int]:
    if state.current_player() != self._player_id:
      raise ValueError(
        f"the bot plays seat {self._player_id}, but player {state.current_player()} is to act"
      )
    world = openspiel_bridge.locate(self.agent.game, state)
    self._rng, rng = jax.random.split(self._rng)
    action, policy = self.agent.act(
      world.path, world.infostates[self._player_id], rng, sample=self.sample
    )
    legal = state.legal_actions()
    return [(a, float(policy[a])) for a in legal], action

  def step(self, state: pyspiel.State) -> int:
    return self.step_with_policy(state)[1]


class PIMCBot(pyspiel.Bot):
  """``pyspiel.Bot`` over :class:`~sog.search.pimc.PIMC`: each OpenSpiel state is replayed through
  sog's game rules to its public state and the bot's infostate (:func:`sog.openspiel.locate`), and
  the bot plays PIMC's most visited action there.

  Args:
    player: the determinized MCTS player (its game must have an OpenSpiel counterpart).
    player_id: the seat the bot plays.
    seed: the seed of the bot's searches.
  """

  def __init__(self, player: pimc_lib.PIMC, player_id: int, seed: int = 0):
    pyspiel.Bot.__init__(self)
    openspiel_bridge.openspiel_name(player.game)  # a clear ValueError for games OpenSpiel lacks
    if player_id not in (0, 1):
      raise ValueError(f"player_id must be 0 or 1, got {player_id}")
    self.player, self._player_id = player, player_id
    self._rng = jax.random.PRNGKey(seed)

  def player_id(self) -> int:
    return self._player_id

  def restart_at(self, state: pyspiel.State) -> None:
    del state  # every move is searched anew

  def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
    del state, player_id, action

  def step(self, state: pyspiel.State) -> int:
    if state.current_player() != self._player_id:
      raise ValueError(
        f"the bot plays seat {self._player_id}, but player {state.current_player()} is to act"
      )
    world = openspiel_bridge.locate(self.player.game, state)
    self._rng, rng = jax.random.split(self._rng)
    return self.player.act(rng, world.path, world.infostates[self._player_id])
