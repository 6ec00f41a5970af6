"""Scotland Yard on glasses_hidden6: the hour of SoG(100,1) self-play behind the shipped checkpoint.

  python scripts/train.py --config=configs/glasses_hidden6.py --workdir=out/glasses_hidden6

The Scotland Yard benchmark where a trained leaf model separates from none
(``sog/games/maps/glasses_hidden6.json``): the glasses graph (SoG fig. S3), Mr X's start drawn
privately from stations 4-8 and never revealed, 6 rounds and 6 taxi tickets each (glasses_hidden
plays 5 and 5). 17,547 public states, 4,370 of them decisions, so the protocol runs 4,370 searches a
seed; value -0.300 for Mr X. Values as ``configs/glasses_hidden.py`` (SoG table S2's Scotland Yard
column where it fits one CPU host), except that the actors' and the query solver's searches expand
with a uniform PUCT prior (T_prior = inf): on glasses_hidden the learned prior cost about 0.02 by
the protocol (docs/results/scotland_yard.md, "glasses_hidden"), so here the policy head is trained
but not used in self-play. The protocol is run at the start and the end (3 seeds, about 15 and 10
minutes, not counted in the hour's ``max_seconds``) with the actors' search, so with the uniform
prior too; snapshots every 250 steps for ``scripts/eval_snapshots.py``.

Measured (2 cores, 3,600 s of self-play: 1,008 steps, 166 games, 2,224 queries solved): SoG(100,1)
with the uniform prior 0.035 (0.031-0.039) on seeds 0-2 against 0.552 for the untrained network and
0.208 for a zero leaf. Evaluate the shipped network as it was trained, ``scripts/evaluate.py
--prior_temperature=inf`` (docs/results/scotland_yard.md, "glasses_hidden6", for 10 seeds).
"""

import pathlib
import runpy


def get_config():
  """``configs/glasses_hidden.py`` on this map, its searches expanding with the uniform prior."""
  recipe = runpy.run_path(str(pathlib.Path(__file__).with_name("glasses_hidden.py")))
  config = recipe["get_config"]()
  config.game = "scotland_yard(map=glasses_hidden6)"
  config.actor.prior_temperature = float("inf")
  config.solver.prior_temperature = float("inf")
  return config
