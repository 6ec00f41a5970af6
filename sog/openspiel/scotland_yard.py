"""Scotland Yard as an OpenSpiel Python game (``sog_scotland_yard(map=NAME_OR_PATH)``), with sog's
rules.

Registering it lets OpenSpiel's own algorithms (best response, exploitability, IS-MCTS) run on the
same game as :mod:`sog.games.scotland_yard`. Infostates here have perfect recall: Mr X's infostate
is the public observation history plus his whole path, the detectives' the public history alone.
(sog's factored model keeps only Mr X's current station; the tests show both give the same
exploitability.) A map with a private start opens with a chance node whose outcomes are Mr X's
possible starts (0-based stations, uniform); only he observes it.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from sog.games import scotland_yard

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


class ScotlandYardGame(pyspiel.Game):
  """OpenSpiel game over a :class:`~sog.games.scotland_yard.ScotlandYard` rule set."""

  def __init__(self, params=None):
    params = dict(params or {})
    self.rules = scotland_yard.ScotlandYard(map=params.get("map", _DEFAULT_MAP))
    m = self.rules.map
    info = pyspiel.GameInfo(
      num_distinct_actions=self.rules.num_actions,
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
    return ScotlandYardObserver(self.rules, perfect_recall)


class ScotlandYardState(pyspiel.State):
  """A world state: the public state, Mr X's station and path, and the public observations."""

  def __init__(self, game: ScotlandYardGame):
    super().__init__(game)
    self.rules = game.rules
    self.public = self.rules.initial_state()
    m = self.rules.map
    self.mr_x_path = [] if m.private_start else [m.mr_x_starts[0]]  # empty until chance draws it
    self.observations: list = []

  def current_player(self):
    if not self.mr_x_path:
      return pyspiel.PlayerId.CHANCE
    if self.rules.kind(self.public) == scotland_yard.rules_lib.TERMINAL:
      return pyspiel.PlayerId.TERMINAL
    return 0 if self.public.mover == 0 else 1

  def chance_outcomes(self):
    starts = self.rules.map.mr_x_starts
    return [(station, 1.0 / len(starts)) for station in starts]

  def _actor_infostate(self) -> int:
    return self.mr_x_path[-1] if self.public.mover == 0 else 0

  def _legal_actions(self, player):
    if player == pyspiel.PlayerId.CHANCE:
      return list(self.rules.map.mr_x_starts)
    return sorted(self.rules.legal_actions(self.public, self._actor_infostate()))

  def _apply_action(self, action):
    if not self.mr_x_path:
      self.mr_x_path.append(int(action))
      return
    station = self.mr_x_path[-1]
    for outcome in self.rules.outcomes(self.public, self._actor_infostate(), action):
      if outcome.opponent_mask is None or station in outcome.opponent_mask:
        break
    if self.public.mover == 0:
      self.mr_x_path.append(outcome.next_infostate)
    self.public = outcome.next_state
    self.observations.append(outcome.observation)

  def resample_from_infostate(self, player_id: int, probability_sampler) -> ScotlandYardState:
    """A world state the player cannot tell from this one, uniformly over Mr X's possible paths."""
    if player_id == 0:
      return self.clone()
    candidates = [self.get_game().new_initial_state()]
    if candidates[0].is_chance_node():
      candidates = [candidates[0].child(start) for start in self.rules.map.mr_x_starts]
    for observation in self.observations:
      successors = []
      for candidate in candidates:
        actions = (
          candidate.legal_actions()
          if candidate.public.mover == 0
          else [self._detective_action(observation)]
        )
        for action in actions:
          child = candidate.child(action)
          if child.observations[-1] == observation:
            successors.append(child)
      candidates = successors
    return candidates[min(int(probability_sampler() * len(candidates)), len(candidates) - 1)]

  def _detective_action(self, observation) -> int:
    if observation[2] == "pass":
      return self.rules.map.pass_action
    return self.rules.map.action(observation[2], observation[3])

  def _action_to_string(self, player, action):
    return self.rules.action_name(action)

  def is_terminal(self):
    return bool(self.mr_x_path) and self.rules.kind(self.public) == scotland_yard.rules_lib.TERMINAL

  def returns(self):
    if not self.is_terminal():
      return [0.0, 0.0]
    u = self.rules.utility(self.public, self.mr_x_path[-1], 0)
    return [u, -u]

  def __str__(self):
    return f"public={self.observations} mr_x={[s + 1 for s in self.mr_x_path]}"


class ScotlandYardObserver:
  """Strings and tensors for :class:`ScotlandYardState` (PyObserver interface)."""

  def __init__(self, rules: scotland_yard.ScotlandYard, perfect_recall: bool):
    self.rules = rules
    self.perfect_recall = perfect_recall
    self.tensor = np.zeros(rules.encoding_size() + rules.map.num_stations, np.float32)
    self.dict = {"observation": self.tensor}

  def set_from(self, state: ScotlandYardState, player: int):
    self.tensor.fill(0.0)
    code = self.rules.encode(state.public)
    self.tensor[: code.size] = code
    if player == 0 and state.mr_x_path:
      self.tensor[code.size + state.mr_x_path[-1]] = 1.0

  def string_from(self, state: ScotlandYardState, player: int) -> str:
    if self.perfect_recall:
      private = f" path={state.mr_x_path}" if player == 0 else ""
      return f"p{player} public={state.observations}{private}"
    private = f" at={state.mr_x_path[-1] if state.mr_x_path else None}" if player == 0 else ""
    return f"p{player} {state.public}{private}"


pyspiel.register_game(_GAME_TYPE, ScotlandYardGame)
