"""Leduc hold'em: SoG(100,1) self-play on one CPU host (the README's benchmark).

  python scripts/train.py --config=configs/leduc.py --workdir=out/leduc --config.max_seconds=3600

SoG's table S2 has no Leduc column; where it gives a value for Scotland Yard and HUNL alike we take it
(T_prior 1, p_td1 0, w_p / w_v = 0.05 / 1 as Scotland Yard) and eps = 0.1 from its poker (HUNL) column.
Our own choices, for a 2-core budget (the library defaults): a 4 x 256 network, Adam at 1e-3 (S2: SGD
0.1 for Scotland Yard, Adam 1e-4 for HUNL, at batch 1024 over 150k steps), batch 128 with up to 10
updates per example (data are costly here), and a leaf-query sample of 4 per search: q_search and
q_recursive apply to that sample, not to all of a search's queries as in the paper (our actors hand on
about 0.4 x 4 queries per search, the solver about 0.1 x 4).
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("leduc_poker", simulations=100)
  config.selfplay.update(games=8, solver_batch=16, eps=0.1, q_search=0.4, q_recursive=0.1,
                         max_updates=10, min_replay=512, train_steps_per_round=2)
  config.evaluation.update(settings=((100, 1.0), (1000, 1.0)), seeds=3, every_steps=1000)
  config.max_steps = 150_000
  config.max_seconds = 3600.0
  return config
