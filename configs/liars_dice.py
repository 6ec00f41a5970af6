"""Liar's Dice 1x4f: SoG(100,1) self-play for 50 minutes, beside ReBeL's run
(configs/rebel_liars_dice.py) with the same network, optimiser and budget, for the SoG-against-ReBeL
comparison (docs/results/rebel.md) (issue 19).

  python scripts/train.py --config=configs/liars_dice.py --workdir=out/sog_ld4

The search and trainer settings are the Leduc run's (configs/leduc.py: 8 games and 16 solver queries
a round, eps 0.1, 8 train steps of batch 256 a round, at most 1,000 draws an example); the network
(2 x 256), the learning rate (3e-4) and the 3,000 s budget are the ReBeL run's.
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("liars_dice(faces=4)", simulations=100)
  config.network.update(depth=2, width=256)
  config.optimizer.update(learning_rate=3e-4)
  config.selfplay.update(
    games=8,
    solver_batch=16,
    eps=0.1,
    q_search=0.4,
    q_recursive=0.1,
    max_updates=1000,
    batch_size=256,
    min_replay=512,
    train_steps_per_round=8,
  )
  config.evaluation.update(settings=((100, 1.0),), seeds=4, every_steps=2000)
  config.snapshot_every_steps = 1000
  config.max_steps = 100_000
  config.max_seconds = 3000.0
  return config
