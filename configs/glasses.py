"""Scotland Yard on the glasses map: SoG(100,1) self-play (SoG trained this map with SoG(100,1)).

  python scripts/train.py --config=configs/glasses.py --workdir=out/glasses --config.max_seconds=3600

Values from SoG's table S2 Scotland Yard column where they fit one CPU host: T_prior 1, eps 0, p_td1 0,
q_search 0.3, q_recursive 0.1 (applied to a sample of 4 leaf queries per search, see configs/leduc.py),
w_p / w_v = 0.05 / 1, at most 5 updates per example. Our own: Adam at 1e-3 and batch 128 (S2: SGD 0.1 at
batch 1024), a 4 x 256 network (S1: 6 x 512), fewer games and queries per batch (a glasses search costs
about five Leduc ones), and one evaluation seed (the protocol searches at 2,026 public states).
"""

from sog.selfplay import config as config_lib


def get_config():
  config = config_lib.default_config_dict("scotland_yard(map=glasses)", simulations=100)
  config.selfplay.update(games=4, solver_batch=8, min_replay=512)
  config.evaluation.update(settings=((100, 1.0), (1000, 1.0)), seeds=1, every_steps=0)
  config.max_steps = 50_000
  config.max_seconds = 3600.0
  return config
