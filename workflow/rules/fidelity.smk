rule fidelity:
    input:
        table4="results/table4.csv",
        table4_settings="results/table4_settings.csv",
        meta="results/meta.csv",
        ceiling="results/ceiling.csv",
        worlds="results/worlds_report.csv",
        table3="results/table3.csv",
        experimental="results/sanity_experimental.csv",
        ties="results/ties.csv",
        theoretical_average="results/sanity/theoretical/average.csv",
        reference_check="results/fidelity/reference_check.csv",
        analytical="results/tableD2.csv",
        shift="results/tableE2.csv",
        crowd_rarity="results/crowd_rarity.csv",
        crowd_summary="results/crowd_summary.csv",
        crowd_units="results/crowd/sampling_units.csv",
        crowd_concepts=CROWD_INPUTS["concepts"],
        cosy_table2="results/cosy/table2.csv",
        cosy_natural="results/cosy/natural.csv",
        concepteval_reliability="results/concepteval/reliability.csv",
        concepteval_validity="results/concepteval/validity.csv",
        concepteval_mtmm="results/concepteval/mtmm.csv",
        concepteval_methods="results/concepteval/methods.csv",
        explain_agreement="results/explain/agreement.csv",
        explain_cosy="results/explain/cosy_table3.csv",
        explain_scores=expand(
            "results/explain/scores/{setting}.csv", setting=EXPLAIN_SETTINGS
        ),
        explain_crowd=expand(
            "results/explain/crowd/{setting}.csv", setting=EXPLAIN_CROWD_SETTINGS
        ),
    output:
        table=report(
            "results/fidelity.csv",
            caption="../report/fidelity.rst",
            category="Fidelity",
        ),
        markdown=report(
            "results/fidelity.md",
            caption="../report/fidelity.rst",
            category="Fidelity",
        ),
    log:
        "logs/fidelity.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("fidelity"),
        paper_settings={
            name: PAPER_SETTINGS[name]
            for name in META_SETTINGS
            if name in PAPER_SETTINGS
        },
        explain_protocols=EXPLAIN_PROTOCOLS,
        explain_bootstrap=EXPLAIN_BOOTSTRAP,
    script:
        "../scripts/step.py"


rule fidelity_reference_check:
    output:
        "results/fidelity/reference_check.csv",
    log:
        "logs/fidelity/reference_check.log",
    benchmark:
        "logs/benchmarks/fidelity_reference_check.tsv"
    conda:
        "../../environment.yml"
    threads: 8
    params:
        step=step_version("fidelity_reference_check"),
        theoretical=SANITY["theoretical"],
        check=SANITY["reference_check"],
        epsilon=SANITY["epsilon"],
    script:
        "../scripts/step.py"
