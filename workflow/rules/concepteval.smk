from neuroneval.concepteval.protocol import RUNS


wildcard_constraints:
    run="|".join(RUNS),


rule concepteval_hidden:
    input:
        unpack(concepteval_sources),
    output:
        hidden="data/concepteval/{lm}/hidden.npz",
    log:
        "logs/concepteval/hidden_{lm}.log",
    benchmark:
        "logs/benchmarks/concepteval_hidden_{lm}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("concepteval_hidden"),
        model_spec=concepteval_model_spec,
        window_length=CONCEPTEVAL.get("window_length"),
        layer=CONCEPTEVAL.get("layer"),
        site=CONCEPTEVAL.get("site"),
        windows=CONCEPTEVAL_WINDOWS,
        runs=CONCEPTEVAL.get("runs"),
        planted=concepteval_planted,
    script:
        "../scripts/step.py"


rule concepteval_sae:
    input:
        hidden="data/concepteval/{lm}/hidden.npz",
    output:
        sae="data/concepteval/{lm}/sae.npz",
        card="data/concepteval/{lm}/sae.json",
    log:
        "logs/concepteval/sae_{lm}.log",
    benchmark:
        "logs/benchmarks/concepteval_sae_{lm}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("concepteval_sae"),
        training=CONCEPTEVAL.get("families", {}).get("sae", {}).get("training"),
    script:
        "../scripts/step.py"


rule concepteval_concepts:
    input:
        hidden="data/concepteval/{lm}/hidden.npz",
        sae="data/concepteval/{lm}/sae.npz",
    output:
        concepts="data/concepteval/{lm}/concepts.npz",
        card="data/concepteval/{lm}/concepts.csv",
    log:
        "logs/concepteval/concepts_{lm}.log",
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("concepteval_concepts"),
        families=CONCEPTEVAL.get("families"),
        family_set=CONCEPTEVAL.get("family_set"),
    script:
        "../scripts/step.py"


rule concepteval_measures:
    input:
        unpack(concepteval_sources),
        hidden="data/concepteval/{lm}/hidden.npz",
        concepts="data/concepteval/{lm}/concepts.npz",
    output:
        measures="results/concepteval/runs/{lm}/{run}.csv",
        patterns="results/concepteval/runs/{lm}/{run}_patterns.csv",
        truth="results/concepteval/runs/{lm}/{run}_truth.csv",
    log:
        "logs/concepteval/measures_{lm}_{run}.log",
    benchmark:
        "logs/benchmarks/concepteval_measures_{lm}_{run}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("concepteval_measures"),
        model_spec=concepteval_model_spec,
        layer=CONCEPTEVAL.get("layer"),
        site=CONCEPTEVAL.get("site"),
        subsets=CONCEPTEVAL.get("windows", {}).get("subsets"),
        faithfulness=CONCEPTEVAL.get("faithfulness"),
        patterns=CONCEPTEVAL.get("patterns"),
        readability=CONCEPTEVAL.get("readability"),
        simulation=CONCEPTEVAL.get("simulation"),
    script:
        "../scripts/step.py"


rule concepteval_tables:
    input:
        measures=expand(
            "results/concepteval/runs/{lm}/{run}.csv", lm=CONCEPTEVAL_MODELS, run=RUNS
        ),
        patterns=expand(
            "results/concepteval/runs/{lm}/{run}_patterns.csv",
            lm=CONCEPTEVAL_MODELS,
            run=RUNS,
        ),
        truth=expand(
            "results/concepteval/runs/{lm}/{run}_truth.csv",
            lm=CONCEPTEVAL_MODELS,
            run=RUNS,
        ),
    output:
        measures=report(
            "results/concepteval/measures.csv",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        reliability=report(
            "results/concepteval/reliability.csv",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        reliability_figure=report(
            "results/concepteval/reliability.png",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        inter_rater=report(
            "results/concepteval/inter_rater.csv",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        validity=report(
            "results/concepteval/validity.csv",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        mtmm=report(
            "results/concepteval/mtmm.csv",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        mtmm_figure=report(
            "results/concepteval/mtmm.png",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        methods=report(
            "results/concepteval/methods.csv",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        methods_figure=report(
            "results/concepteval/methods.png",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
        patterns=report(
            "results/concepteval/patterns.md",
            caption="../report/concepteval.rst",
            category="Concept evaluation (paper 004)",
        ),
    log:
        "logs/concepteval/tables.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("concepteval_tables"),
        subsets=CONCEPTEVAL.get("windows", {}).get("subsets"),
        faithfulness_measures=CONCEPTEVAL.get("faithfulness", {}).get("measures"),
        measurement=CONCEPTEVAL.get("measurement"),
        raters=CONCEPTEVAL.get("raters"),
        comparison=CONCEPTEVAL.get("comparison"),
        patterns_shown=CONCEPTEVAL.get("patterns_shown"),
    script:
        "../scripts/step.py"


rule concepteval_results:
    input:
        rules.concepteval_tables.output,
