"""The install is the locked one: requirements.lock pins every package the suite and the docs'
numbers were measured with, `make test` and `make demo` install with it as constraints, and it is
current with pyproject.toml's ranges."""

import importlib.metadata
import pathlib
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _locked() -> dict[str, Requirement]:
  """{package: its pinned requirement} of requirements.lock, for every line whose markers hold."""
  pins = {}
  for line in (ROOT / "requirements.lock").read_text().splitlines():
    if line.strip() and not line.lstrip().startswith("#"):
      requirement = Requirement(line)
      if requirement.marker is None or requirement.marker.evaluate():
        pins[canonicalize_name(requirement.name)] = requirement
  return pins


def test_every_locked_package_is_installed_at_its_locked_version():
  pins = _locked()
  assert len(pins) > 100  # the whole environment, not only the direct dependencies
  wrong = {}
  for name, requirement in pins.items():
    (pinned,) = [spec.version for spec in requirement.specifier if spec.operator == "=="]
    try:
      installed = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      installed = None
    if installed is None or Version(installed) != Version(pinned):
      wrong[name] = (installed, pinned)
  assert not wrong, (
    f"installed / locked versions differ (run `make install` or `make lock`): {wrong}"
  )


def test_the_lock_holds_every_dependency_within_its_range():
  """A dependency added to pyproject.toml (or a range changed) without `make lock` fails here."""
  project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
  pins = _locked()
  for line in [*project["dependencies"], *project["optional-dependencies"]["dev"]]:
    requirement = Requirement(line)
    name = canonicalize_name(requirement.name)
    assert name in pins, f"{name} is not in requirements.lock: run `make lock`"
    (pinned,) = [spec.version for spec in pins[name].specifier]
    assert requirement.specifier.contains(pinned, prereleases=True), (
      name,
      str(requirement.specifier),
      pinned,
    )
