"""GT-CFR: growing-tree counterfactual regret minimisation (SoG, Algorithm 1), one jitted function.

A search starts from a public belief state beta = (root public state, r0, r1) with the root and all
its children in its tree (a re-solving search, :mod:`sog.search.resolving`, from a branch of the
tree leading from its root down to the public state it decides at, its *focus*, with the gadget
setting the opponent's root range; see :class:`Start`), and then runs ``phases`` times:

  * ceil(1/c) public-tree CFR+ updates on the current tree (regret-matching+, linear averaging;
    alternating updates by default, SoG's simultaneous ones as an option): ranges down, values up,
    frontier leaves valued by the leaf model in one batch, terminals exactly;
  * ceil(c) expansion simulations. A simulation samples a world state (s0, s1) from the beliefs at
    the focus (the root of a plain search) in the latest pass, walks it down
    the tree, choosing the actor's action from pi_select = 1/2 pi_PUCT + 1/2 pi_CFR (the average
    policy) and chance outcomes from their probabilities given the world state, until its next
    public state is not in the tree (at a frontier leaf none is): there it adds that state and the
    other children of up to k actions of the node, ranked by the prior, the selected action first
    (chance nodes add all outcomes). Visit counts along the path are updated at once; with several
    simulations per phase, a virtual loss on the pending (infostate, action) pairs spreads them out.
    With ``redraws`` a walk that added nothing (it ended at a terminal) is walked again from a new
    world state, so each simulation adds to the tree until the focus's subgame is complete, as the
    paper counts its iterations ("k child states are added to the tree at each iteration").

PUCT at the actor's infostate s of public state h is argmax_a Q(s, a) + C P(s, a) sqrt(N(s)) / (1 +
N(s, a)), where Q is the counterfactual action value of the latest CFR pass divided by the
opponent's range mass at h (a value conditional on s) and by the game's utility scale (so Q is in
[-1, 1]), P the leaf model's policy at s when h was last a frontier leaf (softmax with temperature
T_prior), N the visit counts; a tie goes to the lowest action or, with ``tie_break="prior"``, to the
highest prior (at random among equal priors). Statistics are per infostate and kept for the whole
search.

The tree lives inside the fixed tables of the root's whole subgame (:mod:`sog.search.tables`) as
masks: ``in_tree`` (counted by CFR) and ``expanded`` (an interior node, its chosen actions' children
in the tree). A node is a frontier leaf when it is in the tree, not terminal and not expanded. With
k < infinity a player node becomes expanded once every infostate of its actor has an added action;
until then it stays a frontier leaf. The leaf model sees at most ``capacity`` frontier leaves per
pass, a bound derived from (s, c, k) and the game; a pass calls it on the smallest of a few batch
sizes that holds the frontier (in a vmapped batch of searches, the batch's largest frontier), and
not at all while the frontier is empty (:class:`LeafBatches`). Nodes outside the tree are carried
along (their regrets never change and their values are overwritten at the frontier), so a pass
costs a pass over the whole subgame whatever the tree's size: the price of fixed shapes, measured
by ``scripts/bench_search.py``. Searches rooted deep in a game therefore run on the compact tables
of their root's subgame (:mod:`sog.search.subgames`, :meth:`GTCFR.search_in_subgames`), not on
the whole game's.

Soundness (SoG's Theorem 1) is about the average, over iterations, of the strategy each iteration
played on the whole subgame: the search's policy in the tree and the leaf solver's below the
frontier. With the exact oracle the search accumulates the latter too (``leaf_policy_sums``), and
:meth:`GTCFR.completed_policy` offers both that average and the re-solve-at-final-ranges completion.


Layout: :mod:`~sog.search.types` (config, start, state, result), ``frontier`` (leaves and the
leaf-values hook), ``update`` (the CFR phase), ``expand`` (the simulations), ``core`` (the pure
search), ``completion`` (a search completed for exact evaluation), ``searcher`` (the compiled host
side, :class:`GTCFR`).
"""

from sog.search.gtcfr.core import finish
from sog.search.gtcfr.core import init
from sog.search.gtcfr.core import run
from sog.search.gtcfr.core import search
from sog.search.gtcfr.frontier import frontier_mask
from sog.search.gtcfr.searcher import GTCFR
from sog.search.leaf_calls import SEARCH_AXIS
from sog.search.leaf_calls import LeafBatches
from sog.search.leaf_calls import leaf_batches
from sog.search.types import AVERAGING
from sog.search.types import OPEN_CHANCE
from sog.search.types import TIE_BREAKS
from sog.search.types import GTCFRConfig
from sog.search.types import QuerySample
from sog.search.types import SearchResult
from sog.search.types import SearchState
from sog.search.types import Start
from sog.search.types import root_start

__all__ = [
  "AVERAGING",
  "GTCFR",
  "OPEN_CHANCE",
  "SEARCH_AXIS",
  "TIE_BREAKS",
  "GTCFRConfig",
  "LeafBatches",
  "QuerySample",
  "SearchResult",
  "SearchState",
  "Start",
  "finish",
  "frontier_mask",
  "init",
  "leaf_batches",
  "root_start",
  "run",
  "search",
]
