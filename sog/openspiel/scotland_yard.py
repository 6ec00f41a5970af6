"""Scotland Yard as an OpenSpiel Python game (``sog_scotland_yard(map=NAME_OR_PATH)``), stepping
through sog's definition of its rules (:mod:`sog.games.scotland_yard`, walked by
:class:`~sog.games.walk.PublicGameWalk`, which evaluates each public state once and keeps it).

Registering it lets OpenSpiel's own algorithms (best response, exploitability, IS-MCTS) run on the
same game as :mod:`sog.games.scotland_yard`. Infostates here have perfect recall: Mr X's infostate
is the public observation history plus his whole path, the detectives' the public history alone.
(sog's factored model keeps only Mr X's current station; the tests show both give the same
exploitability.) A map with a private start opens with a chance node whose outcomes are Mr X's
possible starts (0-based stations, uniform); only he observes it. A map whose detectives draw their
starts continues with one public chance node a detective, whose outcomes are the start cards (their
index in the map's ``detective_starts``, the public child's slot), with their probabilities given
Mr X's station.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pyspiel

from sog.games import public_game
from sog.games import scotland_yard
from sog.games import walk as walk_lib

SHORT_NAME = "sog_scotland_yard"
_DEFAULT_MAP = "glasses"

_GAME_TYPE = pyspiel.GameType(
  short_name=SHORT_NAME,
  long_name="Scotland Yard (sog rules)",
  dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
  chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
  information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
  utility=pyspiel.GameType.Utility.ZERO_SUM,
  reward_model=pyspiel.GameType.RewardModel.TERMINAL,
  max_num_players=2,
  min_num_players=2,
  provides_information_state_string=True,
  provides_information_state_tensor=False,
  provides_observation_string=True,
  provides_observation_tensor=True,
  parameter_specification={"map": _DEFAULT_MAP},
)


@functools.cache
def _walk(map_name: str) -> walk_lib.PublicGameWalk:
  """One walk per map for every OpenSpiel game, state and clone (a cloned state copies its
  attributes, so it names the map and looks the walk up here). It keeps every public state it
  evaluated for the life of the process, and a map file is read once: a map file edited on disk
  needs a new process."""
  return walk_lib.PublicGameWalk(scotland_yard.ScotlandYard(map=map_name))


class ScotlandYardGame(pyspiel.Game):
  """OpenSpiel game over a :class:`~sog.games.scotland_yard.ScotlandYard` definition."""

  def __init__(self, params=None):
    params = dict(params or {})
    self.map_name = params.get("map", _DEFAULT_MAP)
    self.public_game = _walk(self.map_name).game
    m = self.public_game.map
    info = pyspiel.GameInfo(
      num_distinct_actions=self.public_game.num_actions,
      max_chance_outcomes=m.num_stations,
      num_players=2,
      min_utility=-1.0,
      max_utility=1.0,
      utility_sum=0.0,
      max_game_length=self.public_game.max_moves,
    )
    super().__init__(_GAME_TYPE, info, params)

  def new_initial_state(self):
    return ScotlandYardState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
    return ScotlandYardObserver(self, perfect_recall)


class ScotlandYardState(pyspiel.State):
  """A world state: the public state, Mr X's station and path, and the public child slots taken
  (the public observations): the slots of the public children it went through."""

  def __init__(self, game: ScotlandYardGame):
    super().__init__(game)
    self.map_name = game.map_name
    self.public = self.walk.root()
    m = self.public_game.map
    self.mr_x_path = [] if m.private_start else [m.mr_x_starts[0]]  # empty until chance draws it
    self.slots: list[int] = []

  @property
  def walk(self) -> walk_lib.PublicGameWalk:
    return _walk(self.map_name)

  @property
  def public_game(self) -> scotland_yard.ScotlandYard:
    return self.walk.game

  def _kind(self) -> int:
    return self.walk.kind(self.public)

  def current_player(self):
    if not self.mr_x_path:
      return pyspiel.PlayerId.CHANCE
    kind = self._kind()
    if kind == public_game.CHANCE:
      return pyspiel.PlayerId.CHANCE
    return pyspiel.PlayerId.TERMINAL if kind == public_game.TERMINAL else kind

  def chance_outcomes(self):
    if self.mr_x_path:  # a detective's start card, given Mr X's station
      outcomes = self.walk.chance_outcomes(self.public)
      likelihoods = [
        self.walk.chance_likelihood(self.public, o.slot, self.mr_x_path[-1], 0) for o in outcomes
      ]
      return [(o.slot, p) for o, p in zip(outcomes, likelihoods, strict=True) if p > 0]
    starts = self.public_game.map.mr_x_starts
    return [(station, 1.0 / len(starts)) for station in starts]

  def _actor_infostate(self) -> int:
    return self.mr_x_path[-1] if self._kind() == public_game.PLAYER_0 else 0

  def _legal_actions(self, player):
    if player == pyspiel.PlayerId.CHANCE:
      return [station for station, _ in self.chance_outcomes()]
    return self.walk.legal_actions(self.public, self._actor_infostate())

  def _apply_action(self, action):
    if not self.mr_x_path:
      self.mr_x_path.append(int(action))
      return
    if self._kind() == public_game.CHANCE:
      outcomes = self.walk.chance_outcomes(self.public)
      self.public = next(o.next_state for o in outcomes if o.slot == int(action))
      self.slots.append(int(action))
      return
    station = self.mr_x_path[-1]
    mr_x_moves = self._kind() == public_game.PLAYER_0
    for outcome in self.walk.outcomes(self.public, self._actor_infostate(), int(action)):
      if outcome.opponent_mask is None or station in outcome.opponent_mask:
        break
    if mr_x_moves:
      self.mr_x_path.append(outcome.next_infostate)
    self.public = outcome.next_state
    self.slots.append(outcome.slot)

  def resample_from_infostate(self, player_id: int, probability_sampler) -> ScotlandYardState:
    """A world state the player cannot tell from this one: one of Mr X's possible paths, drawn
    in proportion to the probability of the chance events along it (uniformly over his paths
    where those are equal)."""
    if player_id == 0:
      return self.clone()
    candidates = [(self.get_game().new_initial_state(), 1.0)]
    for slot in [None, *self.slots] if self.public_game.map.private_start else self.slots:
      successors = []
      for candidate, weight in candidates:
        if candidate.is_chance_node():
          actions = candidate.chance_outcomes()
        elif candidate.current_player() == 0:
          actions = [(action, 1.0) for action in candidate.legal_actions()]
        else:  # a detective's slot is its action a (a catch) or A + a (ScotlandYard's layout)
          actions = [(slot % self.public_game.num_actions, 1.0)]
        for action, p in actions:
          child = candidate.child(action)
          if slot is None or child.slots[-1] == slot:
            successors.append((child, weight * p))
      candidates = successors
    weights = np.array([weight for _, weight in candidates])
    cumulative = np.cumsum(weights / weights.sum())
    index = int(np.searchsorted(cumulative, probability_sampler(), side="right"))
    return candidates[min(index, len(candidates) - 1)][0]

  def _action_to_string(self, player, action):
    if player == pyspiel.PlayerId.CHANCE and not self.mr_x_path:
      return f"Mr X starts at {action + 1}"
    if player == pyspiel.PlayerId.CHANCE:
      return f"a detective starts at {self.public_game.map.detective_starts[action] + 1}"
    state = self.walk.state(self.public)
    station = self.mr_x_path[-1] if player == 0 else int(state.detectives[state.mover - 1])
    return self.public_game.describe(action, station)

  def is_terminal(self):
    return bool(self.mr_x_path) and self._kind() == public_game.TERMINAL

  def returns(self):
    if not self.is_terminal():
      return [0.0, 0.0]
    u = self.walk.utility(self.public, self.mr_x_path[-1], 0)
    return [u, -u]

  def __str__(self):
    return f"public={self.slots} mr_x={[s + 1 for s in self.mr_x_path]}"


class ScotlandYardObserver:
  """Strings and tensors for :class:`ScotlandYardState` (PyObserver interface)."""

  def __init__(self, game: ScotlandYardGame, perfect_recall: bool):
    self.walk = _walk(game.map_name)
    self.perfect_recall = perfect_recall
    stations = game.public_game.map.num_stations
    self.tensor = np.zeros(game.public_game.encoding_size + stations, np.float32)
    self.dict = {"observation": self.tensor}

  def set_from(self, state: ScotlandYardState, player: int):
    self.tensor.fill(0.0)
    code = self.walk.encode(state.public)
    self.tensor[: code.size] = code
    if player == 0 and state.mr_x_path:
      self.tensor[code.size + state.mr_x_path[-1]] = 1.0

  def string_from(self, state: ScotlandYardState, player: int) -> str:
    if self.perfect_recall:
      private = f" path={state.mr_x_path}" if player == 0 else ""
      return f"p{player} public={state.slots}{private}"
    private = f" at={state.mr_x_path[-1] if state.mr_x_path else None}" if player == 0 else ""
    public = [
      np.asarray(leaf).tolist() for leaf in jax.tree_util.tree_leaves(self.walk.state(state.public))
    ]
    return f"p{player} {public}{private}"


pyspiel.register_game(_GAME_TYPE, ScotlandYardGame)
