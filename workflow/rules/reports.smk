# Reports on the build itself (results/worlds_report.csv): each setting's world, models and concept sources
# beside their baselines (chance, unigram, pseudo-label AUC). Built by the DVC results stage.


rule worlds_report:
    input:
        cards=expand(
            "data/models/{model}.json",
            model=REPORTED_MODELS,
        ),
        language_models=expand("data/models/{lm}", lm=LANGUAGE_MODELS),
        summaries=expand("data/truth/{setting}.summary.json", setting=SETTINGS),
        pseudo=PSEUDO_SUMMARIES,
    output:
        report(
            "results/worlds_report.csv",
            caption="../report/worlds_report.rst",
            category="Worlds",
        ),
    log:
        "logs/worlds_report.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("worlds_report"),
        settings=SETTING_KNOBS,
        descriptions=SETTING_DESCRIPTIONS,
    script:
        "../scripts/step.py"
