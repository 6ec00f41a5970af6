"""ReBeL (Brown et al. 2020) in SoG's harness: depth-limited CFR-D subgames at public belief states,
random-iteration play, and its policy over the whole game evaluated exactly.

  rebel = ReBeL(sog.load("liars_dice(faces=4)"), sog.exact_leaf_model(100), ReBeLConfig())
  rebel.compose(seeds=range(10)).summary()
"""

from sog.baselines.rebel.composed import ReBeL, beliefs
from sog.baselines.rebel.config import PLAYS, ReBeLConfig
from sog.baselines.rebel.search import (SubgameSolution, sample_iteration, slab_levels, slab_rows,
                                         solve)
from sog.eval.policy import mixture as mixture_policy

__all__ = ["PLAYS", "ReBeL", "ReBeLConfig", "SubgameSolution", "beliefs", "mixture_policy",
           "sample_iteration", "slab_levels", "slab_rows", "solve"]
