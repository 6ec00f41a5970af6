"""The package's layout as a checked property (static, from the source: no import runs).

Packages import one way, each only from those of a lower layer or its own: games < eval < search <
nets < protocol < selfplay < baselines, with openspiel (the only pyspiel importer) beside selfplay
and nothing importing it; ``sog.plotting`` and ``sog.monitoring`` import no other sog package.
Modules stay small enough to read in one go.
"""

import ast
import importlib
import os
import pathlib
import subprocess
import sys

import pytest

import sog

_ROOT = pathlib.Path(__file__).resolve().parents[1] / "sog"
LAYERS = {
  "plotting": 0,
  "monitoring": 0,
  "games": 1,
  "eval": 2,
  "search": 3,
  "nets": 4,
  "protocol": 5,
  "selfplay": 6,
  "openspiel": 6,
  "baselines": 7,
}
MAX_LINES = 450


def _modules() -> dict[str, pathlib.Path]:
  """{"sog.search.pool.beliefs": path, ...} for every module of the package."""
  out = {}
  for path in sorted(_ROOT.rglob("*.py")):
    parts = path.relative_to(_ROOT.parent).with_suffix("").parts
    out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
  return out


def _imports(path: pathlib.Path, modules: frozenset[str] = frozenset()) -> set[str]:
  """Modules imported anywhere in the file (function-level imports included): ``from X import Y``
  counts as importing X.Y when that is one of ``modules``, else as importing X."""
  found = set()
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.Import):
      found.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
      for alias in node.names:
        name = f"{node.module}.{alias.name}"
        found.add(name if name in modules else node.module)
  return found


def _package(module: str) -> str | None:
  parts = module.split(".")
  return parts[1] if len(parts) > 1 and parts[0] == "sog" else None


MODULES = _modules()
GRAPH = {
  name: {m for m in _imports(path, frozenset(MODULES)) if m in MODULES and m != name}
  for name, path in MODULES.items()
}


def test_every_package_has_a_layer():
  packages = {_package(name) for name in MODULES} - {None}
  assert packages == set(LAYERS), f"add {packages - set(LAYERS)} to LAYERS (or drop stale layers)"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _package(n)))
def test_imports_run_down_the_layers(name):
  own = _package(name)
  upward = sorted(
    m
    for m in GRAPH[name]
    if _package(m) and _package(m) != own and LAYERS[_package(m)] >= LAYERS[own]
  )
  assert not upward, f"{name} ({own}, layer {LAYERS[own]}) imports {upward}"


def test_no_import_cycles():
  """Depth-first search over the module graph (a package's __init__ counts as a module)."""
  state: dict[str, int] = {}  # 1: on the stack, 2: done

  def visit(name: str, stack: list[str]) -> None:
    state[name] = 1
    for child in sorted(GRAPH[name]):
      if state.get(child) == 1:
        pytest.fail(f"import cycle: {' -> '.join([*stack[stack.index(child) :], child])}")
      elif child not in state:
        visit(child, [*stack, child])
    state[name] = 2

  for name in sorted(GRAPH):
    if name not in state:
      visit(name, [name])


def test_only_sog_openspiel_imports_pyspiel():
  offenders = sorted(
    name
    for name, path in MODULES.items()
    if _package(name) != "openspiel"
    and any(m.split(".")[0] in ("pyspiel", "open_spiel") for m in _imports(path))
  )
  assert not offenders


def test_modules_stay_small():
  long = {
    name: n
    for name, path in MODULES.items()
    if (n := len(path.read_text().splitlines())) > MAX_LINES
  }
  assert not long


def test_top_level_api_is_the_subpackages_own_and_lazy():
  """``sog.NAME`` is the object its subpackage exports; importing sog alone loads none of them."""
  for name in sog.__all__:
    assert getattr(sog, name) is getattr(importlib.import_module(sog._HOME[name]), name)
  probe = (
    "import sys, sog; print(sorted(m for m in sys.modules if m.startswith('sog.') "
    "or m in ('jax', 'pyspiel')))"
  )
  loaded = subprocess.run(
    [sys.executable, "-c", probe],
    capture_output=True,
    text=True,
    check=True,
    env={**os.environ, "PYTHONPATH": str(_ROOT.parent)},
  )
  assert loaded.stdout.strip() == "[]"
