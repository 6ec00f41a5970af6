"""The bridge to OpenSpiel: the matching OpenSpiel game, world-state correspondence, and policies.

An OpenSpiel history is replayed through sog's game rules (its public-state functions, one public
state at a time: nothing enumerated) to find its public state (the path of child slots from the
game's root) and both private states: the first two chance outcomes of a poker or dice game are the
private deal (card or die indices, as OpenSpiel numbers them), a later chance outcome is the public
child in its slot, and a move is the child its action reaches (:func:`step`). Policies
(:func:`to_openspiel_policy`, exploitability) are read on the enumerated tree.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from open_spiel.python import policy as openspiel_policy
import pyspiel

from sog.eval import policy as policy_lib
from sog.games import public_game
from sog.games import registry
from sog.games import walk as walk_lib
from sog.openspiel import scotland_yard as openspiel_scotland_yard


def openspiel_name(game: registry.Game) -> str:
  """The OpenSpiel game string with the same rules as ``game``."""
  base, params = registry.parse_name(game.name)
  if base in ("kuhn_poker", "leduc_poker", "tic_tac_toe"):
    return base
  if base == "connect_four":
    return game.name
  if base == "liars_dice":
    return f"liars_dice(numdice=1,dice_sides={params['faces']})"
  if base == "scotland_yard":
    return f"{openspiel_scotland_yard.SHORT_NAME}(map={params['map']})"
  raise ValueError(f"{game.name} has no OpenSpiel counterpart")


@functools.cache
def _load_openspiel_game(name: str) -> pyspiel.Game:
  return pyspiel.load_game(name)


def openspiel_game(game: registry.Game) -> pyspiel.Game:
  return _load_openspiel_game(openspiel_name(game))


@dataclasses.dataclass(frozen=True)
class WorldState:
  """Where an OpenSpiel state sits in sog's model, found by stepping through the game's rules
  (nothing enumerated): its public state, named by ``path``, the child slots from the game's root
  that reach it (what the SoG agent and a tree's ``node_of_path`` take), and held as ``public`` (the
  key of the game's :func:`~sog.games.walk.shared_walk`), and both players' private states."""

  path: tuple[int, ...]
  infostates: tuple[int, int]
  public: walk_lib.PublicStateKey


def _initial_world(game: registry.Game) -> WorldState:
  prior = public_game.prior_ranges(game.public_game)
  root = walk_lib.shared_walk(game.public_game).root()
  return WorldState((), (int(prior[0].argmax()), int(prior[1].argmax())), root)


def _dealt_players(game: registry.Game) -> tuple[int, ...]:
  """The players whose private state OpenSpiel deals by chance, in order: those with more than
  one possible private state at the root (Scotland Yard's Mr X only where his start is private)."""
  prior = public_game.prior_ranges(game.public_game)
  return tuple(player for player in range(2) if (prior[player] > 0).sum() > 1)


def step(
  game: registry.Game, world: WorldState, os_state: pyspiel.State, action: int, dealt: int
) -> tuple[WorldState, int]:
  """The world after ``os_state`` plays ``action``; ``dealt`` counts private deals so far.

  A private deal sets the dealt player's infostate; a public chance outcome (OpenSpiel's action
  is its slot) is the child in its slot; a move by the actor (infostate s) is the child
  its action reaches from s, where the public child depends on the opponent's private state (a
  detective's move catches Mr X or not by where he is) the one the opponent's infostate reaches,
  with the actor's infostate there.
  """
  walk = walk_lib.shared_walk(game.public_game)
  dealt_players = _dealt_players(game)
  if os_state.is_chance_node() and dealt < len(dealt_players):
    infostates = list(world.infostates)
    infostates[dealt_players[dealt]] = int(action)
    return dataclasses.replace(world, infostates=tuple(infostates)), dealt + 1
  if os_state.is_chance_node():
    for outcome in walk.chance_outcomes(world.public):
      if outcome.slot == int(action):
        return WorldState((*world.path, outcome.slot), world.infostates, outcome.next_state), dealt
  else:
    actor = os_state.current_player()
    s, opponent_s = world.infostates[actor], world.infostates[1 - actor]
    if int(action) in walk.legal_actions(world.public, s):
      for outcome in walk.outcomes(world.public, s, int(action)):
        if outcome.opponent_mask is None or opponent_s in outcome.opponent_mask:
          infostates = list(world.infostates)
          infostates[actor] = outcome.next_infostate
          child = WorldState((*world.path, outcome.slot), tuple(infostates), outcome.next_state)
          return child, dealt
  raise ValueError(
    f"{game.name}: OpenSpiel's action {action} at public path {world.path} (infostates "
    f"{world.infostates}) reaches no public state of sog's game"
  )


def locate(game: registry.Game, os_state: pyspiel.State) -> WorldState:
  """sog's public state and private states for an OpenSpiel state of the matching game, found by
  replaying its history through the game's rules (nothing enumerated)."""
  replay = openspiel_game(game).new_initial_state()
  world, dealt = _initial_world(game), 0
  for action in os_state.history():
    world, dealt = step(game, world, replay, action, dealt)
    replay.apply_action(action)
  return world


@dataclasses.dataclass(frozen=True)
class Infostate:
  """One OpenSpiel decision infostate and the sog policy row (node, infostate) it reads."""

  key: str
  player: int
  node: int
  infostate: int
  legal_actions: tuple[int, ...]


@functools.cache
def _infostates(name: str) -> tuple[tuple[Infostate, ...], int]:
  game = registry.load(name)
  # Scotland Yard's OpenSpiel infostates remember Mr X's path; sog's keep his station, so one sog
  # row may serve several OpenSpiel infostates (never the reverse).
  is_scotland_yard = registry.parse_name(name)[0] == "scotland_yard"
  found: dict[tuple[str, int], Infostate] = {}
  histories = 0
  stack = [(openspiel_game(game).new_initial_state(), _initial_world(game), 0)]
  while stack:
    os_state, world, dealt = stack.pop()
    histories += 1
    if os_state.is_terminal():
      continue
    if not os_state.is_chance_node():
      player = os_state.current_player()
      key = os_state.information_state_string(player)
      node = game.tree.node_of_path(world.path)
      row = Infostate(key, player, node, world.infostates[player], tuple(os_state.legal_actions()))
      previous = found.setdefault((key, player), row)
      if (previous.node, previous.infostate) != (row.node, row.infostate) and not is_scotland_yard:
        raise ValueError(f"{name}: OpenSpiel infostate {key!r} maps to several sog rows")
    actions = (
      [a for a, _ in os_state.chance_outcomes()]
      if os_state.is_chance_node()
      else os_state.legal_actions()
    )
    for action in actions:
      child_world, child_dealt = step(game, world, os_state, action, dealt)
      stack.append((os_state.child(action), child_world, child_dealt))
  return tuple(found.values()), histories


def openspiel_infostates(game: registry.Game) -> tuple[Infostate, ...]:
  """Every OpenSpiel decision infostate of the matching game, with its sog policy row."""
  return _infostates(game.name)[0]


def openspiel_history_count(game: registry.Game) -> int:
  """The number of OpenSpiel histories (chance and terminal ones included)."""
  return _infostates(game.name)[1]


def to_openspiel_policy(game: registry.Game, policy: np.ndarray) -> openspiel_policy.TabularPolicy:
  """An OpenSpiel ``TabularPolicy`` playing the sog ``policy`` [N, S, A]."""
  policy = policy_lib.check_policy(game.tree, policy)
  result = openspiel_policy.TabularPolicy(openspiel_game(game))
  for info in openspiel_infostates(game):
    row = result.policy_for_key(info.key)
    row[:] = 0.0
    row[list(info.legal_actions)] = policy[info.node, info.infostate, list(info.legal_actions)]
  return result


def from_openspiel_policy(game: registry.Game, os_policy: openspiel_policy.Policy) -> np.ndarray:
  """The sog policy [N, S, A] of an OpenSpiel policy (uniform at rows OpenSpiel never reaches).

  For Scotland Yard, whose OpenSpiel infostates remember Mr X's path, a policy that depends on the
  path has no sog form; the row of the last path visited is kept.
  """
  result = policy_lib.uniform_policy(game.tree)
  for info in openspiel_infostates(game):
    probabilities = _action_probabilities(os_policy, info)
    result[info.node, info.infostate] = 0.0
    for action, p in probabilities.items():
      result[info.node, info.infostate, action] = p
  return result


def _action_probabilities(os_policy: openspiel_policy.Policy, info: Infostate) -> dict[int, float]:
  if isinstance(os_policy, openspiel_policy.TabularPolicy):
    row = os_policy.policy_for_key(info.key)
    return {a: float(row[a]) for a in info.legal_actions}
  raise ValueError(
    "from_openspiel_policy takes an OpenSpiel TabularPolicy; convert others with "
    "open_spiel.python.policy.tabular_policy_from_callable first"
  )


def exploitability_in_openspiel(game: registry.Game, policy: np.ndarray) -> float:
  """OpenSpiel's own exploitability of the sog ``policy`` (C++ for C++ games, Python otherwise)."""
  os_game = openspiel_game(game)
  if registry.parse_name(game.name)[0] == "scotland_yard":
    from open_spiel.python.algorithms import exploitability as os_exploitability

    return float(os_exploitability.exploitability(os_game, to_openspiel_policy(game, policy)))
  policy = policy_lib.check_policy(game.tree, policy)
  as_dict = {
    info.key: list(
      zip(
        info.legal_actions,
        policy[info.node, info.infostate, list(info.legal_actions)].tolist(),
        strict=True,
      )
    )
    for info in openspiel_infostates(game)
  }
  return float(pyspiel.exploitability(os_game, as_dict))
