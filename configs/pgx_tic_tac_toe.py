"""Tic-tac-toe from pgx, never enumerated: SoG(100,1) self-play with GT-CFR (k = 1).

  python scripts/train.py --config=configs/pgx_tic_tac_toe.py --workdir=out/pgx_tic_tac_toe

A perfect-information game: every search starts at the state its game is at, and its queries are
states (``sog.selfplay.Actors``). A small network (3 x 64) that reads a state the same at any reach
(``unreached_range = "uniform"``), and the chess/Go columns of SoG's table S2 for the search's prior
(T_prior 1.5) and the loss weights (w_p / w_v = 1 / 0.25), as configs/connect_four.py; eps = 0.05
keeps the actors' games from repeating. Every searched state is a value example (its search's root
values, ``actor_value_targets``) and every sampled query is solved once; no evaluation (the game is
not enumerated: ``scripts/play.py`` plays the checkpoint). Twenty minutes on 2 cores.
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("pgx/tic_tac_toe", simulations=100)
  for role in (config.actor, config.solver):
    role.prior_temperature = 1.5
  config.network.update(width=64, depth=3, unreached_range="uniform")
  config.optimizer.update(
    learning_rate=1e-3, decay_steps=5_000, decay_rate=0.3, policy_weight=1.0, value_weight=0.25
  )
  config.selfplay.update(
    games=32,
    solver_batch=32,
    search_chunk=32,
    eps=0.05,
    q_search=1.0,
    q_recursive=0.0,
    actor_value_targets=True,
    query_capacity=4096,
    replay_capacity=50_000,
    max_updates=1000,
    batch_size=256,
    min_replay=1024,
    train_steps_per_round=2,
    publish_every=2,
  )
  config.evaluation.update(settings=())
  config.max_steps = 20_000
  config.max_seconds = 1200.0
  return config
