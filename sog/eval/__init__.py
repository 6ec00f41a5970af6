"""Evaluation: tabular policies, exact best responses and exploitability."""

from sog.eval.best_response import Evaluation
from sog.eval.best_response import check_ranges
from sog.eval.best_response import evaluate
from sog.eval.best_response import exploitability
from sog.eval.policy import check_policy
from sog.eval.policy import random_policy
from sog.eval.policy import uniform_policy

__all__ = ["Evaluation", "check_policy", "check_ranges", "evaluate", "exploitability",
           "random_policy", "uniform_policy"]
