# neuroneval workflow: worlds -> models -> activation/concept tables -> metric meta-evaluation -> results.
# Knobs live in params.yaml (validated against workflow/schemas/params.schema.yaml); run profiles in
# profiles/. Logic lives in src/neuroneval; rules only declare files and call it. Design: docs/design.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "params.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/worlds.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/probing_tables.smk"
include: "workflow/rules/digits.smk"
include: "workflow/rules/meta.smk"
include: "workflow/rules/reports.smk"
include: "workflow/rules/crowd.smk"
include: "workflow/rules/sanity.smk"
include: "workflow/rules/cosy.smk"
include: "workflow/rules/external.smk"
include: "workflow/rules/own.smk"
include: "workflow/rules/own_corpus.smk"
include: "workflow/rules/fidelity.smk"
include: "workflow/rules/explain.smk"
include: "workflow/rules/concepteval.smk"
include: "workflow/rules/viewer.smk"


rule all:
    input:
        "results/table4.csv",
        "results/table4.png",
        "results/worlds_report.csv",
        "results/ceiling.csv",


# Every rule runs workflow/scripts/step.py and passes `step=step_version("<step>")` (workflow/rules/common.smk).
step_version.check(workflow.rules)
