"""Shared test settings: the games each suite runs on, a seeded random generator, and JAX's
persistent compilation cache.

Many tests build searches that compile to the same XLA program (the same game, settings and leaf
model in a new ``GTCFR``, in another xdist worker, or in a script run as a subprocess). JAX's
persistent cache, keyed by the program, lets all but the first load it instead of compiling it again
(a Leduc search: 8 s compiled, 2.6 s loaded). Only compilation is shared; every test still runs its
computation. The cache lives in ``.jax_cache/`` at the repository root (ignored by git; delete it at
will), so a second ``make test`` starts warm.
"""

import contextlib
import ctypes
import functools
import gc
import os
import pathlib
import re

import jax
import numpy as np
import pytest

import sog.games
from sog.search.pool import GTCFR
from sog.search.pool import belief_expand
from sog.search.pool import belief_search
from sog.search.pool import belief_update

pytest_plugins = ["tests.compile_report"]  # pytest --compile-report=PATH: where the time goes

ROOT = pathlib.Path(__file__).resolve().parents[1]  # the repository: scripts run from here
_CACHE = ROOT / ".jax_cache"
_CACHE_SETTINGS = {
  "JAX_COMPILATION_CACHE_DIR": str(_CACHE),
  "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
}
os.environ.update(_CACHE_SETTINGS)  # for the scripts the tests run as subprocesses
jax.config.update("jax_compilation_cache_dir", str(_CACHE))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)

TIC_TAC_TOE = pytest.param(
  "tic_tac_toe",
  marks=pytest.mark.slow(
    reason="549,946 public states, built in about a minute; the same test's [connect_four] cases "
    "check the same k-in-a-row rules"
  ),
)
ALL_GAMES = (
  "kuhn_poker",
  "leduc_poker",
  "liars_dice(faces=4)",
  "liars_dice(faces=5)",
  "liars_dice(faces=6)",
  "scotland_yard(map=glasses)",
  "scotland_yard(map=glasses_short)",
  "scotland_yard(map=glasses_hidden)",
  "scotland_yard(map=glasses_hidden_short)",
  "connect_four",
  "connect_four(rows=2,columns=4,x_in_row=2)",
  TIC_TAC_TOE,
)
# Games whose OpenSpiel counterpart is small enough to enumerate in the suite.
BRIDGED_GAMES = (
  "kuhn_poker",
  "leduc_poker",
  "liars_dice(faces=4)",
  "scotland_yard(map=glasses_short)",
  "scotland_yard(map=glasses_hidden_short)",
  "connect_four",
  "connect_four(rows=2,columns=4,x_in_row=2)",
  TIC_TAC_TOE,
)


#: A fast cover a slow mark's reason names: a test (``tests/test_x.py::test_y``), its cases whose
#: ids hold ``text`` (``tests/test_x.py::test_y[text]``), or ``[text]`` alone: the same test's.
_COVER = re.compile(r"(tests/[\w/]+\.py::\w+)?(?:\[([^\]]+)\])?")


def _covers(reason: str) -> list[tuple[str, str]]:
  """The (test, case) pairs ``reason`` names (either part may be empty, not both)."""
  return [(test, case) for test, case in _COVER.findall(reason) if test or case]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
  """A test kept out of ``make test`` (marked ``slow``) names, in its mark's ``reason``, the faster
  test in ``make test`` that checks the same property; the suite stops before it starts where one
  names none, or names a test that is not there or is itself slow (checked against the tests
  collected: a cover in a file not collected this run is not checked). Runs before ``-m`` deselects
  the slow tests."""
  fast = [item.nodeid for item in items if item.get_closest_marker("slow") is None]
  files = {item.nodeid.split("::")[0] for item in items}
  problems = []
  for item in items:
    mark = item.get_closest_marker("slow")
    if mark is None:
      continue
    covers = _covers(mark.kwargs.get("reason", ""))
    if not covers:
      problems.append(f"{item.nodeid}: its slow mark's reason names no fast cover")
    base = item.nodeid.split("[")[0]
    for test, case in covers:
      if test and test.split("::")[0] not in files:
        continue
      named = test or base
      if not any(nodeid.split("[")[0] == named and case in nodeid[len(named) :] for nodeid in fast):
        named_case = f"[{case}]" if case else ""
        problems.append(f"{item.nodeid}: its cover {test}{named_case} is no fast test")
  if problems:
    raise pytest.UsageError("slow tests without a fast cover:\n  " + "\n  ".join(problems))


#: A worker's resident memory past which its compiled programs are released between test modules.
RELEASE_ABOVE_BYTES = 3 << 30


def _resident_bytes() -> int:
  """This process's resident memory (Linux's /proc; 0 where there is none)."""
  try:
    with open("/proc/self/statm") as statm:
      return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
  except OSError:
    return 0


@pytest.fixture(scope="module", autouse=True)
def _release_compiled_programs():
  """After a test module, where the worker holds more than ``RELEASE_ABOVE_BYTES``, JAX's in-memory
  caches of traced and compiled programs are dropped (the persistent cache keeps them on disk) and
  the freed memory goes back to the system. A worker otherwise holds every program it ever compiled
  (the suite's 2 workers held 15 GB of the machine's 24 by their last tests). Released after every
  module instead, the programs that later modules share are traced and loaded again each time.
  """
  yield
  if _resident_bytes() > RELEASE_ABOVE_BYTES:
    jax.clear_caches()
    gc.collect()
    # glibc keeps freed pages for reuse unless asked to return them; another C library (macOS's)
    # returns them itself.
    with contextlib.suppress(OSError):
      ctypes.CDLL("libc.so.6").malloc_trim(0)


@pytest.fixture
def rng() -> np.random.Generator:
  return np.random.default_rng(20231115)


def load(name: str) -> sog.games.Game:
  return sog.games.load(name)


_TABLE_SEARCHES = ROOT / "tests" / "fixtures" / "table_searches.npz"


@functools.cache
def _table_searches() -> dict[str, np.ndarray]:
  with np.load(_TABLE_SEARCHES) as recorded:
    return dict(recorded)


def table_case(*names: str, settings: dict) -> str:
  """A recorded case's key: its names and settings, as the recording wrote them
  (``"kuhn_poker|zeros|simulations=20"``)."""
  return "|".join((*names, ",".join(f"{k}={v}" for k, v in sorted(settings.items()))))


def table_search(prefix: str) -> dict[str, np.ndarray]:
  """The arrays the table search gave under ``prefix`` in ``tests/fixtures/table_searches.npz``
  (recorded before the table search left the library, at the commit the file names)."""
  arrays = {
    key[len(prefix) + 1 :]: value
    for key, value in _table_searches().items()
    if key.startswith(prefix + "/")
  }
  if not arrays:
    raise KeyError(f"no table search recorded under {prefix!r}")
  return arrays


@pytest.fixture(scope="session")
def kuhn_checkpoint(tmp_path_factory):
  """A small untrained Kuhn CVPN (1 x 16) saved as a checkpoint."""
  from sog.nets import checkpoint
  from sog.nets import config as config_lib
  from sog.nets import cvpn as cvpn_lib
  from sog.nets import train

  game = load("kuhn_poker")
  small = config_lib.NetworkConfig(width=16, depth=1)
  network = cvpn_lib.make_network(game.public_game, small)
  state = train.Trainer(network, config_lib.OptimizerConfig()).init(
    cvpn_lib.init_params(network, game.public_game, jax.random.PRNGKey(0))
  )
  directory = tmp_path_factory.mktemp("kuhn") / "ckpt"
  checkpoint.save(
    directory, state, checkpoint.CheckpointConfig("kuhn_poker", small, config_lib.OptimizerConfig())
  )
  return directory


def search_by_phase(searcher: GTCFR, seed: int = 0):
  """A root search of ``searcher`` to drive phase by phase, as ``belief_search.run``'s loop runs
  it (jitted): its initial state with the focus opened (``run``'s opening expansion), a phase's
  CFR+ updates (each recording the prior), and its expansion phase."""
  public, model, config = searcher.game, searcher.leaf_model, searcher.config
  batches, start = searcher.leaf_batches, searcher.start()
  prior = belief_expand.LeafPrior(model.apply, model.params, config.prior_temperature)

  @jax.jit
  def opened(rng):
    leaf_state = model.init(searcher.empty, start)
    state = belief_search.init(
      public, searcher.capacity, model.apply, model.params, rng, start, config, leaf_state
    )
    return belief_expand.grow(public, state, config, prior, opening=True)

  @jax.jit
  def update(state):
    return jax.lax.fori_loop(
      0,
      config.updates_per_phase,
      lambda _, s: belief_update.cfr_update(
        model.apply, model.params, s, config, batches, public.utility_scale
      ),
      state,
    )

  grow = jax.jit(lambda state: belief_expand.grow(public, state, config, prior))
  return opened(jax.random.PRNGKey(seed)), update, grow
