"""Shared test settings: the games each suite runs on, and a seeded random generator."""

import numpy as np
import pytest

import sog.games

ALL_GAMES = ("kuhn_poker", "leduc_poker", "liars_dice(faces=4)", "liars_dice(faces=5)",
             "liars_dice(faces=6)", "scotland_yard(map=glasses)", "scotland_yard(map=glasses_short)",
             "scotland_yard(map=glasses_hidden)", "scotland_yard(map=glasses_hidden_short)")
# Games whose OpenSpiel counterpart is small enough to enumerate in the suite.
BRIDGED_GAMES = ("kuhn_poker", "leduc_poker", "liars_dice(faces=4)", "scotland_yard(map=glasses_short)",
                 "scotland_yard(map=glasses_hidden_short)")


@pytest.fixture
def rng() -> np.random.Generator:
  return np.random.default_rng(20231115)


def load(name: str) -> sog.games.Game:
  return sog.games.load(name)
