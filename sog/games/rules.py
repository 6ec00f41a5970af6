"""The rules protocol a game implements so that its public tree can be enumerated.

A game here is a factored two-player zero-sum game (DESIGN.md, "The game model"): a world state is
(public state, private state of player 0, private state of player 1), and a player's infostate
within a public state is their private state, an index in ``range(num_infostates[player])``.

Rules are plain Python on small hashable public states; they run once, when the whole public tree is
enumerated into fixed-shape tables (:mod:`sog.games.builder`). Nothing here runs inside a search.
"""

from __future__ import annotations

import abc
from collections.abc import Hashable
from collections.abc import Sequence
import dataclasses

import numpy as np

PLAYER_0 = 0
PLAYER_1 = 1
CHANCE = 2
TERMINAL = 3
KIND_NAMES = ("player_0", "player_1", "chance", "terminal")

PublicState = Hashable
Observation = Hashable


@dataclasses.dataclass(frozen=True)
class ActionOutcome:
  """One public outcome of (actor infostate, action).

  Attributes:
    observation: the public observation that keys the public child (an action id in poker, a
      transport type for Mr X, a destination plus "caught or not" for a detective).
    next_state: the public child's state.
    next_infostate: the actor's infostate in the child.
    opponent_mask: which opponent infostates produce this outcome (None: all of them). Used where
      the public observation depends on the opponent's private state (a detective catching Mr X).
  """

  observation: Observation
  next_state: PublicState
  next_infostate: int
  opponent_mask: frozenset[int] | None = None


@dataclasses.dataclass(frozen=True)
class ChanceOutcome:
  """One public chance outcome with its public probability (they sum to 1 at a chance node)."""

  observation: Observation
  next_state: PublicState
  probability: float


class GameRules(abc.ABC):
  """What a factored public-state game must define; see the module docstring."""

  #: Registry name, OpenSpiel style (``"leduc_poker"``, ``"liars_dice(faces=4)"``).
  name: str
  #: Private states (infostates within a public state) of player 0 and player 1.
  num_infostates: tuple[int, int]
  #: Size of the action space shared by both players.
  num_actions: int

  @abc.abstractmethod
  def initial_state(self) -> PublicState:
    """The public state after the private deal."""

  @abc.abstractmethod
  def deal_probabilities(self) -> np.ndarray:
    """Joint probability [S0, S1] of the players' private states at the initial public state."""

  @abc.abstractmethod
  def kind(self, state: PublicState) -> int:
    """PLAYER_0, PLAYER_1, CHANCE or TERMINAL."""

  @abc.abstractmethod
  def legal_actions(self, state: PublicState, infostate: int) -> Sequence[int]:
    """The acting player's legal actions at one of its infostates (non-empty)."""

  @abc.abstractmethod
  def outcomes(self, state: PublicState, infostate: int, action: int) -> Sequence[ActionOutcome]:
    """The public outcomes of the actor playing ``action``; their opponent masks partition."""

  def chance_outcomes(self, state: PublicState) -> Sequence[ChanceOutcome]:
    """Public chance outcomes (only games with public chance override this)."""
    raise NotImplementedError(f"{self.name} has no public chance nodes")

  def chance_likelihood(
    self, state: PublicState, observation: Observation, infostate_0: int, infostate_1: int
  ) -> float:
    """P(observation | both private states, state): card removal for a dealt public card."""
    raise NotImplementedError(f"{self.name} has no public chance nodes")

  @abc.abstractmethod
  def utility(self, state: PublicState, infostate_0: int, infostate_1: int) -> float:
    """Player 0's terminal utility (player 1 receives its negative)."""

  @abc.abstractmethod
  def encoding_size(self) -> int:
    """Length of :meth:`encode`."""

  @abc.abstractmethod
  def encode(self, state: PublicState) -> np.ndarray:
    """A fixed-length float32 encoding of the public state, for the network."""

  def action_name(self, action: int) -> str:
    return str(action)
