"""Connect Four 6 x 7 from pgx, never enumerated: SoG(100,1) self-play with GT-CFR (k = 1),
an hour on 2 cores.

  python scripts/train.py --config=configs/pgx_connect_four.py --workdir=out/pgx_connect_four

T_prior 1.5 and w_p / w_v = 1 / 0.25 from the chess/Go columns of SoG's table S2 (as
configs/connect_four.py); a 4 x 128 network; eps = 0.05.
"""

from sog.selfplay import pool_config


def get_config():
  config = pool_config.default_config_dict("pgx/connect_four", simulations=100)
  config.search.prior_temperature = 1.5
  config.network.update(width=128, depth=4)
  config.optimizer.update(
    learning_rate=1e-3, decay_steps=10_000, decay_rate=0.3, policy_weight=1.0, value_weight=0.25
  )
  config.update(
    games=32,
    solver_batch=32,
    batch_size=256,
    min_replay=2048,
    train_steps_per_round=2,
    max_steps=100_000,
    max_seconds=3600.0,
  )
  return config
