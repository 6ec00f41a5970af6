"""Scotland Yard as an OpenSpiel Python game (``sog_scotland_yard(map=NAME_OR_PATH)``), stepping
through sog's definition of its rules (:mod:`sog.games.scotland_yard`, walked by
:class:`~sog.games.walk.PublicGameWalk`, which evaluates each public state once and keeps it).

Registering it lets OpenSpiel's own algorithms (best response, exploitability, IS-MCTS) run on the
same game as :mod:`sog.games.scotland_yard`. Infostates here have perfect recall: Mr X's infostate
is the public observation history plus his whole path, the detectives' the public history alone.
(sog's factored model keeps only Mr X's current station; the tests show both give the same
exploitability.) A map with a private start opens with a chance node whose outcomes are Mr X's
possible starts (0-based stations, uniform); only he observes it.
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
      max_game_length=m.rounds * (1 + m.num_detectives),
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
    return pyspiel.PlayerId.TERMINAL if kind == public_game.TERMINAL else kind

  def chance_outcomes(self):
    starts = self.public_game.map.mr_x_starts
    return [(station, 1.0 / len(starts)) for station in starts]

  def _actor_infostate(self) -> int:
    return self.mr_x_path[-1] if self._kind() == public_game.PLAYER_0 else 0

  def _legal_actions(self, player):
    if player == pyspiel.PlayerId.CHANCE:
      return list(self.public_game.map.mr_x_starts)
    return self.walk.legal_actions(self.public, self._actor_infostate())

  def _apply_action(self, action):
    if not self.mr_x_path:
      self.mr_x_path.append(int(action))
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
    """A world state the player cannot tell from this one, uniformly over Mr X's possible paths."""
    if player_id == 0:
      return self.clone()
    candidates = [self.get_game().new_initial_state()]
    if candidates[0].is_chance_node():
      candidates = [candidates[0].child(start) for start in self.public_game.map.mr_x_starts]
    for slot in self.slots:
      successors = []
      for candidate in candidates:
        actions = (
          candidate.legal_actions()
          if candidate.current_player() == 0
          # A detective's slot is its action a (a catch) or A + a (ScotlandYard's layout).
          else [slot % self.public_game.num_actions]
        )
        for action in actions:
          child = candidate.child(action)
          if child.slots[-1] == slot:
            successors.append(child)
      candidates = successors
    return candidates[min(int(probability_sampler() * len(candidates)), len(candidates) - 1)]

  def _action_to_string(self, player, action):
    return self.public_game.action_name(action)

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
