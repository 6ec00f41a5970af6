"""Evaluation: tabular policies, exact best responses and exploitability."""

from sog.eval.best_response import Evaluation
from sog.eval.best_response import best_response_policy
from sog.eval.best_response import check_ranges
from sog.eval.best_response import evaluate
from sog.eval.best_response import exploitability
from sog.eval.paper import baseline_anchors
from sog.eval.paper import exploitability_unit
from sog.eval.paper import fig3
from sog.eval.paper import fig3_references
from sog.eval.paper import rebel_table2
from sog.eval.policy import check_policy
from sog.eval.policy import mixture
from sog.eval.policy import random_policy
from sog.eval.policy import uniform_policy

__all__ = [
  "Evaluation",
  "baseline_anchors",
  "best_response_policy",
  "check_policy",
  "check_ranges",
  "evaluate",
  "exploitability",
  "exploitability_unit",
  "fig3",
  "fig3_references",
  "mixture",
  "random_policy",
  "rebel_table2",
  "uniform_policy",
]
