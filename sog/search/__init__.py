"""Search: public-tree CFR+ (full games, subgames, depth-limited) and, later, GT-CFR."""

from sog.search.cfr import CFRState
from sog.search.cfr import regret_matching
from sog.search.solver import SolveResult
from sog.search.solver import Solver
from sog.search.solver import exact_leaf_oracle
from sog.search.solver import solve
from sog.search.solver import solve_subgame
from sog.search.solver import stack_levels
from sog.search.solver import subgame_tree

__all__ = ["CFRState", "SolveResult", "Solver", "exact_leaf_oracle", "regret_matching", "solve",
           "solve_subgame", "stack_levels", "subgame_tree"]
