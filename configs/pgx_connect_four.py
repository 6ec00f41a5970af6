"""Connect Four 6 x 7 from pgx, never enumerated: SoG(100,1) self-play with GT-CFR (k = 1),
an hour on 2 cores.

  python scripts/train.py --config=configs/pgx_connect_four.py --workdir=out/pgx_connect_four

configs/pgx_tic_tac_toe.py's recipe (searches from states, root values as value targets, T_prior
1.5 and w_p / w_v = 1 / 0.25 from the chess/Go columns of SoG's table S2) with a 4 x 128 network.
"""

import pathlib
import runpy


def get_config():
  """``configs/pgx_tic_tac_toe.py`` on Connect Four, with a larger network and budget."""
  recipe = runpy.run_path(str(pathlib.Path(__file__).with_name("pgx_tic_tac_toe.py")))
  config = recipe["get_config"]()
  config.game = "pgx/connect_four"
  config.network.update(width=128, depth=4)
  config.optimizer.update(decay_steps=10_000)
  config.selfplay.update(min_replay=2048)
  config.max_steps = 100_000
  config.max_seconds = 3600.0
  return config
