"""GT-CFR on a pool: the search tree is a fixed-capacity pytree of node arrays that holds only the
grown nodes, reached through a game's pure functions, so a CFR pass costs the grown tree and
nothing is ever enumerated. The library's GT-CFR engines are both here.

The node pool, for perfect information (a perfect-information
:class:`~sog.games.public_game.PublicGame`: pgx's games, Connect Four or tic-tac-toe): ``types``
(the pool, :class:`Tree`, the state, the result, leaf models), ``passes`` (CFR+ over the pool),
``expand`` (adding children, the walks), ``core`` (the pure search), ``searcher``
(:class:`PoolGTCFR`).

The belief pool, the engine for every imperfect-information game, enumerable or not: ``beliefs``
(:class:`BeliefTree`, a pool of public states with both players' infostates, grown from any
:class:`~sog.games.public_game.PublicGame`), ``belief_cfr`` (CFR+ passes over it, each node
touched once), ``worlds`` (world states drawn and stepped on it), and GT-CFR on it:
``belief_state`` (its state and result), ``belief_update`` (the CFR phase), ``belief_expand`` (the
walks), ``belief_search`` (the pure search, from a :class:`BeliefStart`: any public state as its
root, a branch down to the focus, the safe re-solving gadget), ``belief_searcher``
(:class:`BeliefGTCFR`), ``belief_resolving`` (continual re-solving: summaries keyed by public
state, and the plan of the next search's start), ``belief_resolver`` (batches of re-solving
searches, what SoG's protocol runs on the pool), ``sized`` (searches in pools sized to their
subgames where the game is enumerated) and ``belief_oracle`` (the exact oracle: each leaf's subgame
solved on a pool of the root's whole subgame).
"""

from sog.search.pool import belief_cfr
from sog.search.pool import belief_oracle
from sog.search.pool import belief_resolver
from sog.search.pool import belief_resolving
from sog.search.pool import beliefs
from sog.search.pool import completion
from sog.search.pool import sized
from sog.search.pool import worlds
from sog.search.pool.belief_searcher import BeliefGTCFR
from sog.search.pool.belief_state import BeliefSearchResult
from sog.search.pool.belief_state import BeliefStart
from sog.search.pool.beliefs import BeliefTree
from sog.search.pool.core import finish
from sog.search.pool.core import init
from sog.search.pool.core import node_capacity
from sog.search.pool.core import run
from sog.search.pool.core import search
from sog.search.pool.searcher import PoolGTCFR
from sog.search.pool.types import PoolLeafModel
from sog.search.pool.types import PoolLeafOutput
from sog.search.pool.types import PoolResult
from sog.search.pool.types import PoolState
from sog.search.pool.types import Tree
from sog.search.pool.types import zero_pool_leaf_model

__all__ = [
  "BeliefGTCFR",
  "BeliefSearchResult",
  "BeliefStart",
  "BeliefTree",
  "PoolGTCFR",
  "PoolLeafModel",
  "PoolLeafOutput",
  "PoolResult",
  "PoolState",
  "Tree",
  "belief_cfr",
  "belief_oracle",
  "belief_resolver",
  "belief_resolving",
  "beliefs",
  "completion",
  "finish",
  "init",
  "node_capacity",
  "run",
  "search",
  "sized",
  "worlds",
  "zero_pool_leaf_model",
]
