"""ReBeL (Brown et al. 2020) in SoG's harness: depth-limited CFR-D subgames at public belief states,
random-iteration play, and its policy over the whole game evaluated exactly.

  rebel = ReBeL(sog.load("liars_dice(faces=4)"), sog.exact_leaf_model(100), ReBeLConfig())
  rebel.compose(seeds=range(10)).summary()
"""

from sog.baselines.rebel.composed import ReBeL
from sog.baselines.rebel.composed import beliefs
from sog.baselines.rebel.config import PLAYS
from sog.baselines.rebel.config import ReBeLConfig
from sog.baselines.rebel.search import SubgameSolution
from sog.baselines.rebel.search import sample_iteration
from sog.baselines.rebel.search import slab_levels
from sog.baselines.rebel.search import slab_rows
from sog.baselines.rebel.search import solve
from sog.eval.policy import mixture as mixture_policy

__all__ = [
  "PLAYS",
  "ReBeL",
  "ReBeLConfig",
  "SubgameSolution",
  "beliefs",
  "mixture_policy",
  "sample_iteration",
  "slab_levels",
  "slab_rows",
  "solve",
]
