"""Tic-tac-toe from pgx, never enumerated: SoG(100,1) self-play with GT-CFR (k = 1).

  python scripts/train.py --config=configs/pgx_tic_tac_toe.py --workdir=out/pgx_tic_tac_toe

A small network (3 x 64) and the chess/Go columns of SoG's table S2 for the search's prior (T_prior
1.5) and the loss weights (w_p / w_v = 1 / 0.25), as configs/connect_four.py; eps = 0.05 keeps the
actors' games from repeating. Twenty minutes on 2 cores; the shipped checkpoints/pgx/tic_tac_toe ran
them as 10 minutes and a resumed 10 (the budget counts the whole run).
"""

from sog.selfplay import pool_config


def get_config():
  config = pool_config.default_config_dict("pgx/tic_tac_toe", simulations=100)
  config.search.prior_temperature = 1.5
  config.network.update(width=64, depth=3)
  config.optimizer.update(
    learning_rate=1e-3, decay_steps=5_000, decay_rate=0.3, policy_weight=1.0, value_weight=0.25
  )
  config.update(
    games=32,
    solver_batch=32,
    batch_size=256,
    min_replay=1024,
    train_steps_per_round=2,
    max_steps=20_000,
    max_seconds=1200.0,
  )
  return config
