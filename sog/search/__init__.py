"""Search: public-tree CFR+ (full games, subgames, depth-limited), GT-CFR on the belief pool
(:class:`GTCFR`), continual re-solving with the safe gadget, and the SoG agent (its OpenSpiel
bot is :class:`sog.openspiel.SoGBot`)."""

from sog.search.agent import SoGAgent
from sog.search.cfr import CFRState
from sog.search.cfr import regret_matching
from sog.search.leaf_models import LeafModel
from sog.search.leaf_models import LeafOutput
from sog.search.leaf_models import exact_leaf_model
from sog.search.leaf_models import stateless
from sog.search.leaf_models import uniform_logits
from sog.search.leaf_models import zero_leaf_model
from sog.search.pool.belief_searcher import GTCFR
from sog.search.pool.belief_state import BeliefSearchResult
from sog.search.pool.belief_state import BeliefStart
from sog.search.resolving import ResolvingConfig
from sog.search.solver import Solver
from sog.search.solver import SolveResult
from sog.search.solver import solve
from sog.search.solver import solve_subgame
from sog.search.solver import stack_levels
from sog.search.solver import subgame_tree
from sog.search.subgames import Subgame
from sog.search.subgames import Subgames
from sog.search.tables import SearchTables
from sog.search.tables import make_tables
from sog.search.types import GTCFRConfig

__all__ = [
  "GTCFR",
  "BeliefSearchResult",
  "BeliefStart",
  "CFRState",
  "GTCFRConfig",
  "LeafModel",
  "LeafOutput",
  "ResolvingConfig",
  "SearchTables",
  "SoGAgent",
  "SolveResult",
  "Solver",
  "Subgame",
  "Subgames",
  "exact_leaf_model",
  "make_tables",
  "regret_matching",
  "solve",
  "solve_subgame",
  "stack_levels",
  "stateless",
  "subgame_tree",
  "uniform_logits",
  "zero_leaf_model",
]
