# Missing/Extra Labels tests and their ablations (paper 000 Sec. 4, App. C-F): Table 3, Tables C.1-C.4, D.2,
# E.1-E.9, F.1-F.7, Figure 3 and the tie-mode comparison. Knobs: `sanity:` in params.yaml.
rule sanity_hyperparameters:
    input:
        activations=setting_activations,
        concepts=setting_concepts,
        truth=setting_truth,
        meta=sanity_meta_file,
    output:
        "results/sanity/hyperparameters/{setting}.csv",
    log:
        "logs/sanity/hyperparameters_{setting}.log",
    benchmark:
        "logs/benchmarks/sanity_hyperparameters_{setting}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("sanity_hyperparameters"),
        setting=setting_config,
        meta=META_KNOBS,
        metrics=sanity_search_metrics,
        min_alpha_inputs=SANITY["min_alpha_inputs"],
    script:
        "../scripts/step.py"


rule sanity_experimental:
    input:
        activations=setting_activations,
        concepts=setting_concepts,
        truth=setting_truth,
        hyperparameters="results/sanity/hyperparameters/{setting}.csv",
    output:
        "results/sanity/experimental/{setting}.csv",
    log:
        "logs/sanity/experimental_{setting}.log",
    benchmark:
        "logs/benchmarks/sanity_experimental_{setting}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("sanity_experimental"),
        setting=setting_config,
        meta=META_KNOBS,
        sanity=SANITY,
        metrics=sanity_experimental_metrics,
    script:
        "../scripts/step.py"


rule sanity_theoretical:
    output:
        "results/sanity/theoretical/{ties}.csv",
    log:
        "logs/sanity/theoretical_{ties}.log",
    benchmark:
        "logs/benchmarks/sanity_theoretical_{ties}.tsv"
    wildcard_constraints:
        ties="|".join(TIE_MODES),
    conda:
        "../../environment.yml"
    threads: 8
    params:
        step=step_version("sanity_theoretical"),
        metrics=sanity_theoretical_metrics,
        theoretical=SANITY["theoretical"],
        epsilon=SANITY["epsilon"],
        seed=SANITY["seed"],
    script:
        "../scripts/step.py"


rule sanity_ablation:
    input:
        **SANITY_ABLATION_INPUTS,
        hyperparameters=f"results/sanity/hyperparameters/{SANITY_ABLATION_SETTING}.csv",
    output:
        "results/sanity/ablations/{ablation}.csv",
    log:
        "logs/sanity/ablation_{ablation}.log",
    benchmark:
        "logs/benchmarks/sanity_ablation_{ablation}.tsv"
    wildcard_constraints:
        ablation="|".join(SANITY_ABLATIONS),
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("sanity_ablation"),
        setting=SETTING_KNOBS[SANITY_ABLATION_SETTING],
        setting_name=SANITY_ABLATION_SETTING,
        meta=META_KNOBS,
        sanity=SANITY,
        metrics=SANITY["metrics"],
    script:
        "../scripts/step.py"


rule sanity_shift:
    input:
        **SANITY_SHIFT_INPUTS,
    output:
        report(
            "results/tableE2.csv",
            caption="../report/sanity_ablations.rst",
            category="Sanity tests",
            subcategory="Ablations (App. E)",
        ),
    log:
        "logs/sanity/shift.log",
    benchmark:
        "logs/benchmarks/sanity_shift.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("sanity_shift"),
        setting=SETTING_KNOBS[SANITY_SHIFT_SETTING],
        setting_name=SANITY_SHIFT_SETTING,
        meta=META_KNOBS,
        constant=SANITY["shift"]["constant"],
        metrics=SANITY["metrics"],
    script:
        "../scripts/step.py"


rule sanity_table3:
    input:
        experimental=expand(
            "results/sanity/experimental/{setting}.csv", setting=SANITY_SETTINGS
        ),
        theoretical=f"results/sanity/theoretical/{SANITY['ties']}.csv",
        hyperparameters=expand(
            "results/sanity/hyperparameters/{setting}.csv", setting=SANITY_SETTINGS
        ),
    output:
        table3=report(
            "results/table3.csv",
            caption="../report/sanity_table3.rst",
            category="Sanity tests",
            subcategory="Table 3 and App. F",
        ),
        detail=[
            report(
                "results/tableF1.csv",
                caption="../report/sanity_table3.rst",
                category="Sanity tests",
                subcategory="Table 3 and App. F",
            ),
            report(
                "results/tableF2.csv",
                caption="../report/sanity_table3.rst",
                category="Sanity tests",
                subcategory="Table 3 and App. F",
            ),
            report(
                "results/tableF3.csv",
                caption="../report/sanity_table3.rst",
                category="Sanity tests",
                subcategory="Table 3 and App. F",
            ),
            report(
                "results/tableF4.csv",
                caption="../report/sanity_table3.rst",
                category="Sanity tests",
                subcategory="Table 3 and App. F",
            ),
        ],
        tidy=report(
            "results/sanity_experimental.csv",
            caption="../report/sanity_table3.rst",
            category="Sanity tests",
            subcategory="Table 3 and App. F",
        ),
        alpha_inputs=report(
            "results/table3_alpha_inputs.png",
            caption="../report/sanity_table3.rst",
            category="Sanity tests",
            subcategory="Table 3 and App. F",
        ),
    log:
        "logs/sanity/table3.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("sanity_table3"),
        sanity=SANITY,
    script:
        "../scripts/step.py"


rule sanity_theoretical_tables:
    input:
        f"results/sanity/theoretical/{SANITY['ties']}.csv",
    output:
        c1=report(
            "results/tableC1.csv",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
        c2=report(
            "results/tableC2.csv",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
        c3=report(
            "results/tableC3.csv",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
        c4=report(
            "results/tableC4.csv",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
        d2=report(
            "results/tableD2.csv",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
        e6=report(
            "results/tableE6.csv",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
        e7=report(
            "results/tableE7.csv",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
        figure=report(
            "results/figure3.png",
            caption="../report/sanity_theoretical.rst",
            category="Sanity tests",
            subcategory="Theoretical (App. C, D)",
        ),
    log:
        "logs/sanity/theoretical_tables.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("sanity_theoretical_tables"),
        sanity=SANITY,
    script:
        "../scripts/step.py"


rule sanity_meta_tables:
    input:
        meta="results/meta.csv",
        combinations=expand(
            "results/sanity/hyperparameters/{setting}.csv",
            setting=SANITY["combinations"]["meta_settings"],
        ),
    output:
        detail=[
            report(
                "results/tableF5.csv",
                caption="../report/sanity_meta_tables.rst",
                category="Sanity tests",
                subcategory="Table 3 and App. F",
            ),
            report(
                "results/tableF6.csv",
                caption="../report/sanity_meta_tables.rst",
                category="Sanity tests",
                subcategory="Table 3 and App. F",
            ),
            report(
                "results/tableF7.csv",
                caption="../report/sanity_meta_tables.rst",
                category="Sanity tests",
                subcategory="Table 3 and App. F",
            ),
        ],
        e9=report(
            "results/tableE9.csv",
            caption="../report/sanity_meta_tables.rst",
            category="Sanity tests",
            subcategory="Ablations (App. E)",
        ),
    log:
        "logs/sanity/meta_tables.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("sanity_meta_tables"),
        meta_settings=META_SETTINGS,
        meta_metrics=METRIC_NAMES,
        sanity=SANITY,
    script:
        "../scripts/step.py"


rule sanity_ablation_tables:
    input:
        ablations=expand(
            "results/sanity/ablations/{ablation}.csv", ablation=SANITY_ABLATIONS
        ),
        experimental=expand(
            "results/sanity/experimental/{setting}.csv",
            setting=SANITY["combinations"]["settings"],
        ),
    output:
        e1=report(
            "results/tableE1.csv",
            caption="../report/sanity_ablations.rst",
            category="Sanity tests",
            subcategory="Ablations (App. E)",
        ),
        e3=report(
            "results/tableE3.csv",
            caption="../report/sanity_ablations.rst",
            category="Sanity tests",
            subcategory="Ablations (App. E)",
        ),
        e4=report(
            "results/tableE4.csv",
            caption="../report/sanity_ablations.rst",
            category="Sanity tests",
            subcategory="Ablations (App. E)",
        ),
        e5=report(
            "results/tableE5.csv",
            caption="../report/sanity_ablations.rst",
            category="Sanity tests",
            subcategory="Ablations (App. E)",
        ),
        e8=report(
            "results/tableE8.csv",
            caption="../report/sanity_ablations.rst",
            category="Sanity tests",
            subcategory="Ablations (App. E)",
        ),
    log:
        "logs/sanity/ablation_tables.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("sanity_ablation_tables"),
        sanity=SANITY,
    script:
        "../scripts/step.py"


rule sanity_ties:
    input:
        experimental=expand(
            "results/sanity/experimental/{setting}.csv", setting=SANITY_SETTINGS
        ),
        theoretical=expand("results/sanity/theoretical/{ties}.csv", ties=TIE_MODES),
    output:
        table=report(
            "results/ties.csv",
            caption="../report/sanity_ties.rst",
            category="Sanity tests",
            subcategory="Tie modes",
        ),
        figure=report(
            "results/ties.png",
            caption="../report/sanity_ties.rst",
            category="Sanity tests",
            subcategory="Tie modes",
        ),
    log:
        "logs/sanity/ties.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("sanity_ties"),
        sanity=SANITY,
    script:
        "../scripts/step.py"


rule sanity_results:
    input:
        rules.sanity_table3.output,
        rules.sanity_theoretical_tables.output,
        rules.sanity_meta_tables.output,
        rules.sanity_ablation_tables.output,
        rules.sanity_ties.output,
        rules.sanity_shift.output,
