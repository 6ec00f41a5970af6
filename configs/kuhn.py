"""Kuhn poker: a small self-play run (the tests' and the demo's scale; SoG(4,1) searches).

python scripts/train.py --config=configs/kuhn.py --workdir=out/kuhn
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("kuhn_poker", simulations=4)
  for role in (config.actor, config.solver):
    role.query_samples = 16  # of each tiny search's leaf queries, 16 go on (the tests' tuned value)
  config.network.update(width=32, depth=2)
  config.selfplay.update(
    games=4,
    solver_batch=8,
    batch_size=32,
    min_replay=64,
    train_steps_per_round=2,
    q_search=0.5,
    q_recursive=0.05,
  )
  config.evaluation.update(settings=((4, 1.0),), seeds=4, every_steps=100)
  config.max_steps = 300
  config.checkpoint_every_seconds = 30.0
  return config
