"""A griffe extension for the API pages: Sphinx roles in sog's docstrings as Markdown code spans.

The docstrings cross-reference with reStructuredText roles
(``:class:`~sog.search.GTCFR```), which Markdown renders verbatim. This rewrites each role to
a code span of its target (the last component when the target starts with ``~``, the text before
``<target>`` when there is one) while griffe reads the sources; nothing is imported and the sources
are not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|attr|data|obj|exc|const):`([^`]+)`")


def _plain(match: re.Match[str]) -> str:
  target = match.group(1).strip()
  titled = re.fullmatch(r"(.+?)\s*<([^>]+)>", target)
  if titled:
    return f"`{titled.group(1)}`"
  if target.startswith("~"):
    target = target[1:].rsplit(".", 1)[-1]
  return f"`{target}`"


class SphinxRoles(griffe.Extension):
  """Rewrites ``:role:`target``` in every docstring to a code span."""

  def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
    if obj.docstring is not None and ":" in obj.docstring.value:
      obj.docstring.value = _ROLE.sub(_plain, obj.docstring.value)
