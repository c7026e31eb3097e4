from neuroneval.pipeline.crowd_steps import crowd_inputs

CROWD_INPUTS = crowd_inputs(config["crowd"])


rule crowd_sampling:
    input:
        activations=CROWD_INPUTS["activations"],
        concepts=CROWD_INPUTS["concepts"],
        pseudo=CROWD_INPUTS["pseudo"],
    output:
        table=report(
            "results/crowd_sampling.csv",
            caption="../report/crowd.rst",
            category="Crowd (paper 001)",
            subcategory="Sampling and aggregation",
        ),
        units="results/crowd/sampling_units.csv",
        figure=report(
            "results/crowd_sampling.png",
            caption="../report/crowd.rst",
            category="Crowd (paper 001)",
            subcategory="Sampling and aggregation",
        ),
    log:
        "logs/crowd/sampling.log",
    benchmark:
        "logs/benchmarks/crowd_sampling.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("crowd_sampling"),
        concepts=config["crowd"]["concepts"],
        simulation=config["crowd"]["simulation"],
        sampling=config["crowd"]["sampling"],
    script:
        "../scripts/step.py"


rule crowd_aggregation:
    input:
        activations=CROWD_INPUTS["activations"],
        concepts=CROWD_INPUTS["concepts"],
        pseudo=CROWD_INPUTS["pseudo"],
    output:
        table=report(
            "results/crowd_aggregation.csv",
            caption="../report/crowd.rst",
            category="Crowd (paper 001)",
            subcategory="Sampling and aggregation",
        ),
        units="results/crowd/aggregation_units.csv",
        figure=report(
            "results/crowd_aggregation.png",
            caption="../report/crowd.rst",
            category="Crowd (paper 001)",
            subcategory="Sampling and aggregation",
        ),
    log:
        "logs/crowd/aggregation.log",
    benchmark:
        "logs/benchmarks/crowd_aggregation.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("crowd_aggregation"),
        concepts=config["crowd"]["concepts"],
        simulation=config["crowd"]["simulation"],
        aggregation=config["crowd"]["aggregation"],
    script:
        "../scripts/step.py"


rule crowd_summary:
    input:
        sampling="results/crowd/sampling_units.csv",
        aggregation="results/crowd/aggregation_units.csv",
    output:
        report(
            "results/crowd_summary.csv",
            caption="../report/crowd_summary.rst",
            category="Crowd (paper 001)",
            subcategory="Cost reduction",
        ),
    log:
        "logs/crowd/summary.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("crowd_summary"),
        summary=config["crowd"]["summary"],
    script:
        "../scripts/step.py"


rule crowd_rarity:
    output:
        table=report(
            "results/crowd_rarity.csv",
            caption="../report/crowd_summary.rst",
            category="Crowd (paper 001)",
            subcategory="Cost reduction",
        ),
        figure=report(
            "results/crowd_rarity.png",
            caption="../report/crowd_summary.rst",
            category="Crowd (paper 001)",
            subcategory="Cost reduction",
        ),
    log:
        "logs/crowd/rarity.log",
    benchmark:
        "logs/benchmarks/crowd_rarity.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("crowd_rarity"),
        rarity=config["crowd"]["rarity"],
    script:
        "../scripts/step.py"
