"""ReBeL on Leduc hold'em for one hour on a 2-core CPU host, beside SoG's hour (configs/leduc.py
until 2026-11-26).

  python scripts/train.py --config=configs/rebel_leduc.py --workdir=out/rebel_leduc

ReBeL's search and self-play are those of configs/rebel_liars_dice.py (depth-2 subgames, T = 512
iterations, i.e. ReBeL's 1,024 alternating half-steps, random-iteration play, eps = 0.25 by one seat
per walk, 16 games a round, 2 train steps of batch 128 a round). The network (4 x 256, residual,
layer norm), the optimiser (Adam 1e-3, decayed 0.3x every 10k steps) and the 3,600 s budget are
the hour-long SoG run's whose network was shipped in checkpoints/leduc_poker until 2026-11-26, so
the two differ in the algorithm only. ReBeL's paper has no Leduc run.
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("leduc_poker")
  config.rebel = {
    "depth": 2,
    "iterations": 512,
    "updates": "alternating",
    "play": "random_iteration",
  }
  config.optimizer.update(learning_rate=1e-3, decay_steps=10_000, decay_rate=0.3)
  config.selfplay.update(
    games=16, eps=0.25, max_updates=1000, batch_size=128, min_replay=256, train_steps_per_round=2
  )
  config.evaluation.update(settings=(), seeds=4, every_steps=500, batch_size=64)
  config.snapshot_every_steps = 250
  config.max_steps = 150_000
  config.max_seconds = 3600.0
  return config
