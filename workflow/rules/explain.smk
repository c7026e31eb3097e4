rule explain_setting:
    input:
        unpack(explain_setting_inputs),
    output:
        explanations="explanations/{setting}/{method}.csv",
    log:
        "logs/explain/{setting}/{method}.log",
    benchmark:
        "logs/benchmarks/explain_{setting}_{method}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("explain_setting"),
        setting=setting_config,
        spec=explain_spec,
        options=explain_method_options,
        holdout_fraction=EXPLAIN.get("holdout_fraction"),
        seed=EXPLAIN.get("random_seed"),
        batch_size=config["activations"]["batch_size"],
        pooling=config["activations"]["pooling"],
    script:
        "../scripts/step.py"


rule explain_score:
    input:
        unpack(explain_score_inputs),
    output:
        scores="results/explain/scores/{setting}.csv",
    log:
        "logs/explain/score_{setting}.log",
    benchmark:
        "logs/benchmarks/explain_score_{setting}.tsv"
    conda:
        "../../environment.yml"
    params:
        step=step_version("explain_score"),
        setting=setting_config,
        methods=explain_score_methods,
        holdout_fraction=EXPLAIN.get("holdout_fraction"),
        seed=EXPLAIN.get("random_seed"),
        alpha=EXPLAIN.get("alpha"),
    script:
        "../scripts/step.py"


rule explain_tables:
    input:
        scores=expand("results/explain/scores/{setting}.csv", setting=EXPLAIN_SETTINGS),
    output:
        table1=report(
            "results/explain/table1.csv",
            caption="../report/explain.rst",
            category="Explanations (paper 001)",
        ),
        table2=report(
            "results/explain/table2.csv",
            caption="../report/explain.rst",
            category="Explanations (paper 001)",
        ),
        figure=report(
            "results/explain/table1.png",
            caption="../report/explain.rst",
            category="Explanations (paper 001)",
        ),
        agreement=report(
            "results/explain/agreement.csv",
            caption="../report/explain.rst",
            category="Explanations (paper 001)",
        ),
    log:
        "logs/explain/tables.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("explain_results"),
        n_boot=EXPLAIN.get("n_boot"),
        ci_level=EXPLAIN.get("ci_level"),
        seed=EXPLAIN.get("random_seed"),
    script:
        "../scripts/step.py"


rule explain_results:
    input:
        rules.explain_tables.output,
