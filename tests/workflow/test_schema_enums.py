"""Each choice of params.yaml has one home in the library; the JSON schema's enums must list exactly those values.

The schema cannot import Python, so it restates them; this test is what keeps the restatement true.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from neuroneval.activations.extract import POOLINGS
from neuroneval.concepteval.faithfulness import MEASURES, WEIGHTINGS
from neuroneval.concepteval.lm_split import SITES
from neuroneval.concepteval.measurement import RATER_NOISE, TAU_VARIANTS
from neuroneval.concepteval.protocol import FAMILY_SETS, READABILITY_SIDES, RETEST_MODES
from neuroneval.concepteval.simulation import BACKENDS as SIMULATION_BACKENDS
from neuroneval.concepts.pseudo import CALIBRATION_SCOPES
from neuroneval.cosy.options import GENERATOR_NAMES
from neuroneval.crowd.aggregation import AGGREGATION_METHODS
from neuroneval.crowd.sampling import SAMPLING_METHODS
from neuroneval.explain_catalogue import (
    CATALOGUE,
    EXPLAIN_METHODS,
    SIMPLE_CONCEPT_FILES,
    SIMPLE_RUN_METHODS,
    SPATIAL_METHODS,
)
from neuroneval.metrics import METRICS
from neuroneval.metrics.ties import TIES
from neuroneval.sanity.perturb import SUBCLASS_RULES

SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "params.schema.yaml"

#: schema path (keys of the nested schema, "items" for an array's items) → the library's tuple of allowed values
ENUMS = {
    "meta/ties": TIES,
    "sanity/ties": TIES,
    "activations/pooling": POOLINGS,
    "pseudo_labels/scope": CALIBRATION_SCOPES,
    "crowd/sampling/methods/items": SAMPLING_METHODS,
    "crowd/aggregation/sampling": SAMPLING_METHODS,
    "crowd/aggregation/methods/items": AGGREGATION_METHODS,
    "explain/cosy/generators/items": GENERATOR_NAMES,
    "explain/crowd/sampling": SAMPLING_METHODS,
    "explain/crowd/aggregation/items": AGGREGATION_METHODS,
    "sanity/ablations/subclass_rule": SUBCLASS_RULES,
    "concepteval/site": SITES,
    "concepteval/faithfulness/measures/items": MEASURES,
    "concepteval/faithfulness/weighting": WEIGHTINGS,
    "concepteval/raters/noise": RATER_NOISE,
    "concepteval/measurement/tau_variant": TAU_VARIANTS,
    "concepteval/simulation/backend": SIMULATION_BACKENDS,
    "concepteval/family_set": tuple(FAMILY_SETS),
    "concepteval/windows/retest": RETEST_MODES,
    "concepteval/readability/cooccurrence_sides/items": READABILITY_SIDES,
    "explain/simple/items": SIMPLE_RUN_METHODS,
}


def _node(schema: dict, path: str) -> dict:
    node = schema
    for key in path.split("/"):
        node = node[key] if key == "items" else node["properties"][key]
    return node


@pytest.mark.parametrize("path", sorted(ENUMS))
def test_schema_enum_is_the_library_choice(path: str) -> None:
    schema = yaml.safe_load(SCHEMA.read_text())
    assert list(_node(schema, path)["enum"]) == list(ENUMS[path]), path


def test_schema_metric_enum_is_the_registry() -> None:
    """The schema's ``$defs/metric`` lists exactly the registered metrics, in registry order, and every metric list
    of params.yaml refers to it (a registered metric or an ``hmean:`` combination of them)."""
    schema = yaml.safe_load(SCHEMA.read_text())
    assert list(schema["$defs"]["metric"]["enum"]) == list(METRICS)
    choices = schema["$defs"]["metric_or_combination"]["anyOf"]
    assert {"$ref": "#/$defs/metric"} in choices
    item = {"$ref": "#/$defs/metric_or_combination"}
    for path in ("meta/metrics", "sanity/metrics", "sanity/tie_metrics", "cosy/generative/metrics"):
        assert _node(schema, path)["items"] == item, path
    assert _node(schema, "viewer/metrics")["oneOf"][1]["items"] == item


def test_explain_methods_are_the_workflow_methods() -> None:
    schema = yaml.safe_load(SCHEMA.read_text())
    methods = _node(schema, "explain/settings")["additionalProperties"]["properties"]["methods"]["items"]["enum"]
    assert list(methods) == list(EXPLAIN_METHODS)


def test_explain_setting_scorer_and_concept_subsets_are_the_library_choices() -> None:
    from neuroneval.explain.concept_sets import SCORED_ON

    schema = yaml.safe_load(SCHEMA.read_text())
    spec = _node(schema, "explain/settings")["additionalProperties"]["properties"]
    assert list(spec["scored_on"]["enum"]) == list(SCORED_ON)
    assert list(spec["method_concepts"]["properties"]["methods"]["items"]["enum"]) == list(EXPLAIN_METHODS)


def test_explain_method_blocks_are_the_catalogue() -> None:
    """The method catalogue is the one home of the methods: the schema's per-setting and spatial method enums,
    the ``explain.methods`` blocks (formula methods may not set ``max_length``: ``explain.max_length`` does) and
    the Table 1 files of the CoSy and crowd blocks all restate it."""
    schema = yaml.safe_load(SCHEMA.read_text())
    setting = _node(schema, "explain/settings")["additionalProperties"]["properties"]
    assert list(setting["spatial"]["properties"]["methods"]["items"]["enum"]) == list(SPATIAL_METHODS)
    blocks = _node(schema, "explain/methods")["properties"]
    assert list(blocks) == list(EXPLAIN_METHODS)
    formula = [name for name, block in blocks.items() if block.get("not") == {"required": ["max_length"]}]
    assert formula == [name for name in EXPLAIN_METHODS if CATALOGUE[name].formula]
    pattern = schema["$defs"]["explain_simple_files"]["items"]["pattern"]
    accepted = [name for name in [*CATALOGUE, *(f"{name}_l1" for name in CATALOGUE)] if re.fullmatch(pattern, name)]
    assert set(accepted) == set(SIMPLE_CONCEPT_FILES)


@pytest.mark.parametrize("name, library", [("SANITY_ABLATIONS", "ablations"), ("TIE_MODES", "ties")])
def test_workflow_restatements_are_the_library_choices(name: str, library: str) -> None:
    """common.smk restates the ablations and tie modes: importing the sanity package or the metric engine there
    would slow every Snakefile parse and make every DVC stage depend on that code."""
    import ast
    import re

    from neuroneval.sanity.ablations import ABLATIONS

    common = (SCHEMA.parents[1] / "rules" / "common.smk").read_text()
    listed = re.search(rf"^{name} = (\[.*\])", common, re.MULTILINE)
    assert listed is not None and ast.literal_eval(listed.group(1)) == list({"ablations": ABLATIONS,
                                                                           "ties": TIES}[library])
