"""Evaluation: tabular policies, exact best responses and exploitability."""

from sog.eval.best_response import Evaluation
from sog.eval.best_response import best_response_policy
from sog.eval.best_response import check_ranges
from sog.eval.best_response import evaluate
from sog.eval.best_response import exploitability
from sog.eval.policy import check_policy
from sog.eval.policy import mixture
from sog.eval.policy import random_policy
from sog.eval.policy import uniform_policy

__all__ = ["Evaluation", "best_response_policy", "check_policy", "check_ranges", "evaluate",
           "exploitability", "mixture", "random_policy", "uniform_policy"]
