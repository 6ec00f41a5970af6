"""Prints the size of a game's public tree; ends with one JSON line.

python scripts/describe_game.py --game=leduc_poker
"""

import json

from absl import app
from absl import flags

import common

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game name, e.g. liars_dice(faces=4).")


def main(argv):
  del argv
  game = common.load_game(_GAME.value)
  summary = game.tree.size_summary()
  print(
    f"{game.name}: {summary['public_states']} public states "
    f"({', '.join(f'{v} {k}' for k, v in summary['public_states_by_kind'].items())}), "
    f"depth {summary['depth']}"
  )
  print(f"  infostates: player 0 {summary['infostates'][0]}, player 1 {summary['infostates'][1]}")
  print(f"  histories (chance and terminal included, as OpenSpiel counts): {summary['histories']}")
  print(f"  per public state: {game.tree.max_infostates} infostates, {game.num_actions} actions")
  print(json.dumps({"game": game.name, **summary}))


if __name__ == "__main__":
  app.run(main)
