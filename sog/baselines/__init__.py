"""Other algorithms run in SoG's harness: the same games, tables and exact evaluation.

* :mod:`sog.baselines.rebel`: ReBeL (Brown et al. 2020), SoG's closest relative.
* :mod:`sog.baselines.tabular`: full-game CFR, CFR+, Linear CFR and DCFR
  (:mod:`sog.baselines.regret` holds the family's update).
* :mod:`sog.baselines.mccfr`: Monte Carlo CFR, external and outcome sampling (Pluribus' blueprint
  with Linear CFR's discount).
* :mod:`sog.baselines.rnad`: Regularized Nash Dynamics (DeepNash), model-free on self-play episodes
  (:mod:`sog.baselines.trajectories` plays them), tabular or with a network.
* :mod:`sog.baselines.psro`: PSRO and Self-Play PSRO with exact best responses.
* :mod:`sog.baselines.harness`: each for a time budget, exploitability along the way.
"""

from sog.baselines.harness import ALGORITHMS
from sog.baselines.harness import Curve
from sog.baselines.harness import Point
from sog.baselines.harness import make
from sog.baselines.harness import run_for
from sog.baselines.mccfr import MCCFR
from sog.baselines.psro import PSRO
from sog.baselines.regret import ACCUMULATIONS
from sog.baselines.regret import Accumulation
from sog.baselines.rnad import RNaD
from sog.baselines.rnad import RNaDConfig
from sog.baselines.tabular import TabularCFR

__all__ = [
  "ACCUMULATIONS",
  "ALGORITHMS",
  "MCCFR",
  "PSRO",
  "Accumulation",
  "Curve",
  "Point",
  "RNaD",
  "RNaDConfig",
  "TabularCFR",
  "make",
  "run_for",
]
