"""The documentation's code runs as written: the README's quick start and the docs pages' Python
blocks (each page's blocks in order, in one fresh interpreter from the repository's root)."""

import pathlib
import re
import subprocess
import sys

import nbclient
import nbformat
import pytest

from tests.conftest import ROOT

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(path: pathlib.Path, heading: str | None = None) -> list[str]:
  """The ```python blocks of a Markdown file (under ``heading`` alone if given), without the blocks
  that only include a file for display (``--8<--``)."""
  text = path.read_text()
  if heading is not None:
    start = text.index(f"\n{heading}\n")
    following = text.find("\n## ", start + 1)
    text = text[start : following if following >= 0 else len(text)]
  return [block for block in _BLOCK.findall(text) if "--8<--" not in block]


def _run(code: str, tmp_path: pathlib.Path) -> subprocess.CompletedProcess:
  script = tmp_path / "page.py"
  script.write_text(code)
  return subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True)


def test_the_readme_quick_start_runs(tmp_path):
  blocks = python_blocks(ROOT / "README.md", "## Quick start")
  assert len(blocks) == 1
  out = _run(blocks[0], tmp_path)
  assert out.returncode == 0, out.stderr[-3000:]


def test_the_search_page_leaf_model_example_runs(tmp_path):
  """A leaf model written as a function without state searches as the zero leaf model it copies."""
  blocks = python_blocks(ROOT / "docs" / "guide" / "search.md", "## Leaf models")
  assert len(blocks) == 1
  out = _run(blocks[0], tmp_path)
  assert out.returncode == 0, out.stderr[-3000:]
  assert out.stdout.split() == ["True"], out.stdout


def test_the_adding_a_game_page_runs(tmp_path):
  """The walk-through's blocks, its self-play work directory moved to a temporary one."""
  blocks = python_blocks(ROOT / "docs" / "guide" / "adding_a_game.md")
  assert len(blocks) == 7
  code = "\n".join(blocks).replace('"out/one_card_poker"', repr(str(tmp_path / "run")))
  code = code.replace('"out/deep_deck_poker"', repr(str(tmp_path / "deep")))
  out = _run(code, tmp_path)
  assert out.returncode == 0, out.stderr[-3000:]
  assert "SoG(8,1) with the trained network" in out.stdout
  assert "kinds of the root's children: [3 1 1]" in out.stdout
  assert "public states grown:" in out.stdout and "whole game: True" in out.stdout
  assert "deep_deck_poker is not enumerable" in out.stdout and "queries solved" in out.stdout


@pytest.mark.parametrize("page", ["README.md", "docs/guide/adding_a_game.md"])
def test_pages_name_only_files_that_exist(page):
  """Every repository path a page's code names (examples/..., scripts/..., configs/...) exists."""
  text = (ROOT / page).read_text()
  for path in set(re.findall(r"\b((?:examples|scripts|configs)/[\w./]+\.py)\b", text)):
    assert (ROOT / path).is_file(), path


@pytest.mark.slow(
  reason="three minutes (five CFR+ solves, six searches, a self-play run); "
  "tests/test_docs.py::test_the_readme_quick_start_runs runs the same API from load to the "
  "agent's act"
)
def test_the_tour_notebook_runs_top_to_bottom():
  """examples/tour.ipynb (the docs' tour.ipynb) runs in a fresh kernel without error."""
  notebook = nbformat.read(ROOT / "examples" / "tour.ipynb", as_version=4)
  nbclient.NotebookClient(
    notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
  ).execute()
  outputs = [
    output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
  ]
  assert not [output for output in outputs if output.output_type == "error"]
  assert any("OpenSpiel's:" in output.get("text", "") for output in outputs)
