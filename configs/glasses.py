"""Scotland Yard on the glasses map: SoG(100,1) self-play (SoG trained this map with SoG(100,1)).

  python scripts/train.py --config=configs/glasses.py --workdir=out/glasses

Values from SoG's table S2 Scotland Yard column where they fit one CPU host: T_prior 1, eps 0, p_td1
0, q_recursive 0.1, w_p / w_v = 0.05 / 1, at most 5 updates per example. Our own: Adam at 1e-3 and
batch 128 (S2: SGD 0.1 at batch 1024), a 4 x 256 network (S1: 6 x 512), 4 games and 4 queries a
round, and every sampled leaf query handed on (q_search 1 instead of 0.3: few of a glasses search's
leaf queries are reached by both players, so 0.3 starves the solver on 2 cores; the q's apply to a
sample of 4 leaf queries per search, see configs/leduc.py). 45 minutes of self-play.

No evaluation runs during training (the protocol searches at 2,026 public states): the run keeps a
network snapshot every 100 steps in ``snapshots/``, for
``scripts/evaluate.py --leaf=DIR/snapshots/...``.
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("scotland_yard(map=glasses)", simulations=100)
  config.selfplay.update(games=4, solver_batch=4, q_search=1.0, min_replay=256)
  config.evaluation.update(settings=(), seeds=1, every_steps=0)
  config.snapshot_every_steps = 100
  config.max_steps = 50_000
  config.max_seconds = 2700.0
  return config
