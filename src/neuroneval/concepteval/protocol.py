"""The protocol of the paper-004 benchmark that the workflow's rules read at parse time: the runs, the concept
families, the planted concepts and the validity criteria. Standard library only, so reading them imports no model
library (docs/concepteval.md §Workflow)."""

from __future__ import annotations

#: The two independent runs of every measure (test-retest reliability correlates them over concepts).
RUNS = ("test", "retest")
#: Concept families (paper 004 Table 1 and the baselines), in table order; a concept's family is its name's prefix.
FAMILIES = ("neuron", "sae", "probe", "pca", "kmeans", "random")
#: Planted concepts of the text world that probes are fitted to: the word class of the token, its sentence's topic.
PLANTED = ("slot", "topic")
#: Criteria of concurrent validity (Table 4): the planted indicator (probe directions vs random directions), the
#: best AUC of a concept's activation for any planted concept, and the mean rating of the simulated raters.
CRITERIA = ("planted", "alignment", "raters")
READABILITY_SIDES = ("IN", "OUT")
SUBSET_ALL = "all"


def family_of(concept: str) -> str:
    """``"probe:slot:NOUN"`` → ``"probe"``."""
    return concept.partition(":")[0]
