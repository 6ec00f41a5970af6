"""GT-CFR on a pool: the search tree is a fixed-capacity pytree of node arrays that holds only the
grown nodes, reached through a game's pure functions, so a CFR pass costs the grown tree and
nothing is ever enumerated. The library's one GT-CFR engine, for perfect and imperfect information.

The belief pool, for every :class:`~sog.games.public_game.PublicGame`, enumerable or not (pgx's
perfect-information games are the case of one infostate per player): ``types`` (what a pool of
slots answers), ``beliefs`` (:class:`BeliefTree`, a pool of public states with both players'
infostates, grown from any game), ``belief_children`` (a node's children, computed from its world
states, never laid out over all K child slots), ``belief_paths`` (the public state and W a path of
child slots reaches, computed along it alone), ``passes`` (its frontier, regret matching),
``belief_rows`` (its rows: one per valid infostate of an expanded node's actor, with the
children each action reaches), ``belief_cfr`` (CFR+ passes over it, each node and each row
touched once), ``depth_order`` (the order a pass visits the nodes and rows in), ``worlds`` (world
states drawn and stepped on it), and GT-CFR on it: ``belief_state`` (its state and result),
``belief_update`` (the CFR phase), ``belief_expand`` (the walks), ``belief_search`` (the pure
search, from a :class:`BeliefStart`: any public state as its root, a branch down to the focus,
the safe re-solving gadget),
``belief_searcher`` (:class:`GTCFR`), ``belief_resolving`` (continual re-solving: summaries
keyed by public state, and the plan of the next search's start), ``belief_resolver`` (batches of
re-solving searches, what SoG's protocol runs on the pool), ``sized`` (searches in pools sized to
their subgames where the game is enumerated), ``belief_oracle`` (the exact oracle: each leaf's
subgame solved on a pool of the root's whole subgame) and ``completion`` (a search's policy
completed below its frontier, for exact evaluation).
"""

from sog.search.pool import belief_cfr
from sog.search.pool import belief_oracle
from sog.search.pool import belief_resolver
from sog.search.pool import belief_resolving
from sog.search.pool import beliefs
from sog.search.pool import completion
from sog.search.pool import sized
from sog.search.pool import worlds
from sog.search.pool.belief_searcher import GTCFR
from sog.search.pool.belief_state import BeliefSearchResult
from sog.search.pool.belief_state import BeliefStart
from sog.search.pool.beliefs import BeliefTree

__all__ = [
  "GTCFR",
  "BeliefSearchResult",
  "BeliefStart",
  "BeliefTree",
  "belief_cfr",
  "belief_oracle",
  "belief_resolver",
  "belief_resolving",
  "beliefs",
  "completion",
  "sized",
  "worlds",
]
