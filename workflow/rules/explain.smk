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
        external=explain_external,
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
    log:
        "logs/explain/tables.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("explain_results"),
    script:
        "../scripts/step.py"


rule explain_cosy_generate:
    input:
        unpack(explain_cosy_generate_inputs),
    output:
        manifest="data/explain_cosy/{generator}/manifest.parquet",
        prompts="data/explain_cosy/{generator}/prompts.csv",
    log:
        "logs/explain/cosy_generate_{generator}.log",
    benchmark:
        "logs/benchmarks/explain_cosy_generate_{generator}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        step=step_version("explain_cosy_generate"),
        cosy=EXPLAIN_COSY,
        pairs=EXPLAIN_COSY_PAIRS,
        generator=explain_cosy_generator,
        data_root=config["external"]["data_root"],
    script:
        "../scripts/step.py"


rule explain_cosy_score:
    input:
        manifest="data/explain_cosy/{generator}/manifest.parquet",
        prompts="data/explain_cosy/{generator}/prompts.csv",
        world=EXPLAIN_COSY_WORLD or [],
        activations=[files["activations"] for files in EXPLAIN_COSY_FILES.values()],
        checkpoints=[
            files["checkpoint"]
            for files in EXPLAIN_COSY_FILES.values()
            if files["checkpoint"]
        ],
        models=explain_cosy_custom_models,
        labels=[files["concepts"] for files in EXPLAIN_COSY_FILES.values()],
        truth=[files["truth"] for files in EXPLAIN_COSY_FILES.values()],
    output:
        scores="results/explain/cosy/{generator}.csv",
    log:
        "logs/explain/cosy_score_{generator}.log",
    benchmark:
        "logs/benchmarks/explain_cosy_score_{generator}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("explain_cosy_score"),
        cosy=EXPLAIN_COSY,
        files=EXPLAIN_COSY_FILES,
        holdout_fraction=EXPLAIN.get("holdout_fraction"),
        seed=EXPLAIN.get("random_seed"),
        activations=config["activations"],
        custom=explain_cosy_custom_runs,
        runtime=EXTERNAL_RUNTIME,
    script:
        "../scripts/step.py"


rule explain_crowd:
    input:
        unpack(explain_crowd_inputs),
    output:
        scores="results/explain/crowd/{setting}.csv",
    log:
        "logs/explain/crowd_{setting}.log",
    benchmark:
        "logs/benchmarks/explain_crowd_{setting}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("explain_crowd"),
        setting=setting_config,
        crowd=EXPLAIN_CROWD,
        methods=explain_crowd_methods,
        holdout_fraction=EXPLAIN.get("holdout_fraction"),
        seed=EXPLAIN.get("random_seed"),
    script:
        "../scripts/step.py"


rule explain_crowd_pages:
    input:
        unpack(explain_crowd_pages_inputs),
    output:
        directory("results/explain/crowd_pages/{setting}"),
    log:
        "logs/explain/crowd_pages_{setting}.log",
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("explain_crowd_pages"),
        crowd=EXPLAIN_CROWD,
        methods=explain_crowd_methods,
        media=viewer_own_media,
    script:
        "../scripts/step.py"


rule explain_benchmark:
    input:
        scores=expand("results/explain/scores/{setting}.csv", setting=EXPLAIN_SETTINGS),
        cosy=expand(
            "results/explain/cosy/{generator}.csv", generator=EXPLAIN_COSY_GENERATORS
        ),
        crowd=expand(
            "results/explain/crowd/{setting}.csv", setting=EXPLAIN_CROWD_SETTINGS
        ),
    output:
        cosy_table=report(
            "results/explain/cosy_table3.csv",
            caption="../report/explain_benchmark.rst",
            category="Explanations (paper 001)",
        ),
        cosy_figure=report(
            "results/explain/cosy_table3.png",
            caption="../report/explain_benchmark.rst",
            category="Explanations (paper 001)",
        ),
        crowd_table=report(
            "results/explain/crowd_table3.csv",
            caption="../report/explain_benchmark.rst",
            category="Explanations (paper 001)",
        ),
        agreement=report(
            "results/explain/agreement.csv",
            caption="../report/explain_benchmark.rst",
            category="Explanations (paper 001)",
        ),
        agreement_figure=report(
            "results/explain/agreement.png",
            caption="../report/explain_benchmark.rst",
            category="Explanations (paper 001)",
        ),
    log:
        "logs/explain/benchmark.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("explain_benchmark"),
        n_boot=EXPLAIN.get("n_boot"),
        ci_level=EXPLAIN.get("ci_level"),
        seed=EXPLAIN.get("random_seed"),
    script:
        "../scripts/step.py"


rule explain_results:
    input:
        rules.explain_tables.output,
        rules.explain_benchmark.output,
        expand(
            "results/explain/crowd_pages/{setting}",
            setting=explain_crowd_page_settings(),
        ),
