"""ReBeL on Liar's Dice 1x4f, trained on one 2-core CPU host (issue 19; ReBeL's table 2).

  python scripts/train.py --config=configs/rebel_liars_dice.py --workdir=out/rebel_ld4

ReBeL's settings (Brown et al. 2020, table 2 and the public code's Liar's Dice config): depth-2
subgames, 1,024 alternating CFR-D half-steps, i.e. T = 512 iterations updating both players (ours:
CFR+ with linear averaging; theirs: linear CFR), random-iteration play, exploration eps = 0.25 by
one seat per subgame, a value network of 2 x 256 with layer norm trained with Adam at 3e-4 on a
Huber loss. Ours beside them: the CVPN (its value head; no policy targets), 16 games a round, 2
train steps of batch 128 a round, and the run's budget in seconds instead of ReBeL's 1,000+ epochs
on 8 GPUs.
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("liars_dice(faces=4)")
  config.rebel = {
    "depth": 2,
    "iterations": 512,
    "updates": "alternating",
    "play": "random_iteration",
  }
  config.network.update(depth=2, width=256)
  config.optimizer.update(learning_rate=3e-4)
  config.selfplay.update(
    games=16, eps=0.25, max_updates=1000, batch_size=128, min_replay=256, train_steps_per_round=2
  )
  config.evaluation.update(settings=(), seeds=4, every_steps=500, batch_size=64)
  config.snapshot_every_steps = 250
  config.max_steps = 100_000
  config.max_seconds = 3000.0
  return config
