rule meta_setting:
    input:
        activations=setting_activations,
        concepts=setting_concepts,
        truth=setting_truth,
    output:
        "results/meta/{setting}.csv",
    log:
        "logs/meta/{setting}.log",
    benchmark:
        "logs/benchmarks/meta_{setting}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        code=code_version("meta_setting.py"),
        setting=setting_config,
        meta=META_KNOBS,
    script:
        "../scripts/meta_setting.py"


rule ceiling_setting:
    input:
        activations=setting_activations,
        concepts=setting_concepts,
        labels=setting_labels,
        truth=setting_truth,
        ideal=setting_ideal_activations,
    output:
        "results/ceiling/{setting}.csv",
    log:
        "logs/ceiling/{setting}.log",
    benchmark:
        "logs/benchmarks/ceiling_{setting}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        code=code_version("ceiling_setting.py"),
        setting=setting_config,
        meta=META_KNOBS,
    script:
        "../scripts/ceiling_setting.py"


rule ceiling:
    input:
        settings=expand("results/ceiling/{setting}.csv", setting=META_SETTINGS),
        meta="results/meta.csv",
    output:
        table="results/ceiling.csv",
        figure="results/ceiling.png",
    log:
        "logs/ceiling.log",
    conda:
        "../../environment.yml"
    params:
        code=code_version("ceiling.py"),
    script:
        "../scripts/ceiling.py"


rule table4:
    input:
        expand("results/meta/{setting}.csv", setting=META_SETTINGS),
    output:
        table="results/table4.csv",
        tidy="results/meta.csv",
        summary="results/table4_summary.json",
        figure="results/table4.png",
    log:
        "logs/table4.log",
    conda:
        "../../environment.yml"
    params:
        code=code_version("table4.py"),
        settings=META_SETTINGS,
        metrics=METRIC_NAMES,
    script:
        "../scripts/table4.py"
