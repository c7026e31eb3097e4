"""The protocol of the paper-004 benchmark that the workflow's rules read at parse time: the runs, the concept
families, the planted concepts and the validity criteria. Standard library only, so reading them imports no model
library (docs/concepteval.md §Workflow)."""

from __future__ import annotations

from typing import Literal, get_args

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


#: How the retest run gets its data (``concepteval.windows.retest``): ``same_data`` recomputes every measure on the
#: test run's windows, as paper 004 defines test-retest reliability (Sec. 4.1: "we compute the same measure twice
#: for each concept"; Sec. 5.2.1: it "verifies the deterministic nature" of the measures), while data-subset
#: variance is what Cronbach's α measures; ``new_data`` draws the retest's own windows with its own seed.
RetestMode = Literal["same_data", "new_data"]
RETEST_MODES: tuple[RetestMode, ...] = get_args(RetestMode)
#: Which families are built (``concepteval.family_set``): ``paper`` = the language baselines paper 004 evaluates
#: (Sec. 5.1: 100 neurons and 100 SAE features), ``all`` = every family configured under ``concepteval.families``.
FAMILY_SETS = {"paper": ("neuron", "sae"), "all": FAMILIES}
#: ``concepteval.layer: middle`` reads block n_blocks // 2 (paper 004 Sec. 5.1: the middle layer of Pythia-70M,
#: block 3 of 6); an integer names the block (negative from the end).
MIDDLE_LAYER = "middle"


def studied_families(families: dict, family_set: str) -> dict:
    """The entries of ``concepteval.families`` that ``family_set`` (:data:`FAMILY_SETS`) builds; the others are
    ``None`` (left out)."""
    if family_set not in FAMILY_SETS:
        raise ValueError(f"concepteval.family_set must be one of {list(FAMILY_SETS)}, got {family_set!r}")
    return {name: (spec if name in FAMILY_SETS[family_set] else None) for name, spec in families.items()}
