"""Connect Four on a 3 x 3 board (three in a row): SoG(100,1) self-play on a perfect-information
game, half an hour on one CPU host (the perfect-information benchmark, docs/results/connect_four.md;
issue 21).

  python scripts/train.py --config=configs/connect_four.py --workdir=out/connect_four

Perfect information puts every public state at one infostate per player, so GT-CFR expands one child
per simulation (k = 1, SoG's setting for chess and Go) and the prior, the CVPN's policy head,
decides which child that is. From SoG's table S2 chess/Go columns: T_prior 1.5, eps 0 for the
searches' play (we keep a small eps = 0.05: the game has no chance, so without it the actors' games
repeat), w_p / w_v = 1 / 0.25 (chess). Our own choices for a 2-core budget: a 3 x 128 network, Adam
1e-3 decaying 0.3x per 5k steps, batch 256, 8 train steps a round, and 4 random-PBS queries a round
so that the network also sees the public states the protocol re-solves at but self-play rarely
reaches. No evaluation during the run: ``scripts/eval_snapshots.py`` and ``scripts/evaluate.py``
measure its snapshots by the protocol afterwards.
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("connect_four", simulations=100)
  for role in (config.actor, config.solver):
    role.prior_temperature = 1.5
  config.network.update(width=128, depth=3)
  config.optimizer.update(
    learning_rate=1e-3, decay_steps=5_000, decay_rate=0.3, policy_weight=1.0, value_weight=0.25
  )
  config.selfplay.update(
    games=8,
    solver_batch=16,
    eps=0.05,
    q_search=0.4,
    q_recursive=0.1,
    random_queries=4,
    max_updates=1000,
    batch_size=256,
    min_replay=512,
    train_steps_per_round=8,
  )
  config.evaluation.update(settings=())  # the protocol runs after the run, on its snapshots
  config.snapshot_every_steps = 1000
  config.diagnostics_every_steps = 1000
  config.max_steps = 100_000
  config.max_seconds = 1500.0
  return config
