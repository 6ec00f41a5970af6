"""Where the suite's time goes: ``pytest --compile-report=PATH`` records, per test, its seconds of
JAX tracing, lowering to StableHLO and XLA backend compilation, the compilations and the persistent
cache's hits among them, and the programs that took a second or more to compile, by name (one JSON
line per test in ``PATH``, ``PATH.gw0``, ... under xdist). At the end it prints the totals by test
file and the programs that took the most compile time. Tests that run scripts in a subprocess show
their wall time only. Run it with an empty ``.jax_cache/`` to see a fresh clone's (CI's)
compilations.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import time

import jax
import pytest

_EVENTS = {
  "/jax/core/compile/jaxpr_trace_duration": "trace",
  "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
  "/jax/core/compile/backend_compile_duration": "backend",
}
FIELDS = ("wall", "trace", "lower", "backend", "compilations", "cache_hits")
#: A compilation this long or longer is named in its test's row (``programs``: name -> [count,
#: seconds]); the shorter ones are only counted.
NAMED_PROGRAM_SECONDS = 1.0
_test: collections.Counter = collections.Counter()
_programs: dict[str, list] = {}


def _duration(event: str, seconds: float, fun_name: str = "", **_) -> None:
  if event in _EVENTS:
    _test[_EVENTS[event]] += seconds
    _test["compilations"] += _EVENTS[event] == "backend"
    if _EVENTS[event] == "backend" and seconds >= NAMED_PROGRAM_SECONDS:
      count, total = _programs.get(fun_name, (0, 0.0))
      _programs[fun_name] = [count + 1, total + seconds]


def _event(event: str, **_) -> None:
  _test["cache_hits"] += event == "/jax/compilation_cache/cache_hits"


def pytest_addoption(parser: pytest.Parser) -> None:
  parser.addoption(
    "--compile-report",
    metavar="PATH",
    help="write each test's JAX trace, lowering and XLA compilation seconds to PATH (JSON lines)",
  )


def _path(config: pytest.Config) -> str | None:
  path = config.getoption("--compile-report")
  worker = os.environ.get("PYTEST_XDIST_WORKER")
  return None if path is None else f"{path}.{worker}" if worker else path


def pytest_configure(config: pytest.Config) -> None:
  path = config.getoption("--compile-report")
  if path is None:
    return
  if not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller, before any worker starts
    for old in glob.glob(path) + glob.glob(f"{path}.gw*"):  # a report is of this run only
      os.remove(old)
  jax.monitoring.register_event_duration_secs_listener(_duration)
  jax.monitoring.register_event_listener(_event)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
  path = _path(item.config)
  _test.clear()
  _programs.clear()
  start = time.perf_counter()
  yield
  if path is not None:
    row = {"test": item.nodeid, "wall": time.perf_counter() - start}
    row.update({field: _test[field] for field in FIELDS[1:]})
    row["programs"] = dict(_programs)
    with open(path, "a") as out:
      out.write(json.dumps(row) + "\n")


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
  path = config.getoption("--compile-report")
  if path is None or os.environ.get("PYTEST_XDIST_WORKER"):
    return
  files: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
  programs: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
  for name in glob.glob(path) + glob.glob(f"{path}.gw*"):
    with open(name) as rows:
      for row in map(json.loads, rows):
        files[row["test"].split("::")[0]].update({field: row[field] for field in FIELDS})
        for program, (count, seconds) in row["programs"].items():
          programs[program].update(compilations=count, seconds=seconds)
  files["all"] = sum(files.values(), collections.Counter())
  write = terminalreporter.write_line
  write(f"{'seconds (worker time)':42s}" + "".join(f"{field:>13s}" for field in FIELDS))
  for name, total in sorted(files.items(), key=lambda item: -item[1]["wall"]):
    write(f"{name:42s}" + "".join(f"{total[field]:13.0f}" for field in FIELDS))
  write(f"programs compiled in {NAMED_PROGRAM_SECONDS:g} s or more, by name (worker seconds):")
  for name, total in sorted(programs.items(), key=lambda item: -item[1]["seconds"])[:15]:
    write(f"  {name:40s}{total['compilations']:13.0f}{total['seconds']:13.0f}")
