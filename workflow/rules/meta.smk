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
    priority: schedule_priority
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("meta_setting"),
        setting=setting_config,
        meta=META_KNOBS,
    script:
        "../scripts/step.py"


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
        step=step_version("ceiling_setting"),
        setting=setting_config,
        meta=META_KNOBS,
    script:
        "../scripts/step.py"


rule ceiling:
    input:
        settings=expand("results/ceiling/{setting}.csv", setting=META_SETTINGS),
        meta="results/meta.csv",
    output:
        table=report(
            "results/ceiling.csv",
            caption="../report/ceiling.rst",
            category="Table 4",
            subcategory="Ceiling",
        ),
        figure=report(
            "results/ceiling.png",
            caption="../report/ceiling.rst",
            category="Table 4",
            subcategory="Ceiling",
        ),
    log:
        "logs/ceiling.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("ceiling"),
    script:
        "../scripts/step.py"


rule table4:
    input:
        expand("results/meta/{setting}.csv", setting=META_SETTINGS),
    output:
        table=report(
            "results/table4.csv",
            caption="../report/table4.rst",
            category="Table 4",
            subcategory="Table 4",
        ),
        tidy=report(
            "results/meta.csv",
            caption="../report/table4.rst",
            category="Table 4",
            subcategory="Table 4",
        ),
        settings=report(
            "results/table4_settings.csv",
            caption="../report/table4.rst",
            category="Table 4",
            subcategory="Table 4",
        ),
        summary=report(
            "results/table4_summary.json",
            caption="../report/table4.rst",
            category="Table 4",
            subcategory="Table 4",
        ),
        figure=report(
            "results/table4.png",
            caption="../report/table4.rst",
            category="Table 4",
            subcategory="Table 4",
        ),
    log:
        "logs/table4.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("table4"),
        settings=META_SETTINGS,
        metrics=METRIC_NAMES,
        discrimination=META_DISCRIMINATION,
    script:
        "../scripts/step.py"
