"""Liar's Dice with one die each, as OpenSpiel's ``liars_dice`` with ``numdice=1``.

Faces 1..F (private states 0..F-1); the highest face F is wild. Bids are OpenSpiel's actions
0..2F-1, bid b claiming at least b // F + 1 dice showing face b % F + 1; each bid must exceed the
last; action 2F calls "liar". If the last bid holds, the caller loses (-1) and the bidder wins (+1);
otherwise the reverse. A public state is the sequence of bids; a player's infostate is their die.
"""

from __future__ import annotations

import numpy as np

from sog.games import rules as rules_lib

VALID_FACES = (4, 5, 6)


class LiarsDice(rules_lib.GameRules):
  def __init__(self, faces: int = 6):
    if faces not in VALID_FACES:
      raise ValueError(f"liars_dice: faces must be one of {VALID_FACES}, got {faces!r}")
    self.faces = faces
    self.name = f"liars_dice(faces={faces})"
    self.num_infostates = (faces, faces)
    self.num_bids = 2 * faces
    self.liar = self.num_bids
    self.num_actions = self.num_bids + 1

  def initial_state(self) -> tuple[int, ...]:
    return ()

  def deal_probabilities(self) -> np.ndarray:
    return np.full((self.faces, self.faces), 1.0 / self.faces**2)

  def kind(self, state) -> int:
    if state and state[-1] == self.liar:
      return rules_lib.TERMINAL
    return len(state) % 2

  def legal_actions(self, state, infostate):
    first = state[-1] + 1 if state else 0
    return tuple(range(first, self.num_bids)) + ((self.liar,) if state else ())

  def outcomes(self, state, infostate, action):
    return (rules_lib.ActionOutcome(action, (*state, action), infostate),)

  def utility(self, state, infostate_0, infostate_1) -> float:
    bid = state[-2]
    quantity, face = bid // self.faces + 1, bid % self.faces
    wild = self.faces - 1
    count = sum(die in (face, wild) for die in (infostate_0, infostate_1))
    caller = (len(state) - 1) % 2
    caller_wins = count < quantity
    return 1.0 if (caller == 0) == caller_wins else -1.0

  def encoding_size(self) -> int:
    return 2 * self.num_bids + 1

  def encode(self, state) -> np.ndarray:
    made = np.zeros(self.num_bids, np.float32)
    bids = [b for b in state if b < self.num_bids]
    made[bids] = 1.0
    last = np.zeros(self.num_bids, np.float32)
    if bids:
      last[bids[-1]] = 1.0
    return np.concatenate([made, last, [float(len(state) % 2)]]).astype(np.float32)

  def action_name(self, action: int) -> str:
    if action == self.liar:
      return "liar"
    return f"{action // self.faces + 1}-{action % self.faces + 1}"
