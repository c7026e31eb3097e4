from neuroneval.pipeline.crowd_steps import crowd_inputs

CROWD_INPUTS = crowd_inputs(config["crowd"])


rule crowd_sampling:
    input:
        activations=CROWD_INPUTS["activations"],
        concepts=CROWD_INPUTS["concepts"],
        pseudo=CROWD_INPUTS["pseudo"],
    output:
        table="results/crowd_sampling.csv",
        units="results/crowd/sampling_units.csv",
        figure="results/crowd_sampling.png",
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
        table="results/crowd_aggregation.csv",
        units="results/crowd/aggregation_units.csv",
        figure="results/crowd_aggregation.png",
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
        "results/crowd_summary.csv",
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
        table="results/crowd_rarity.csv",
        figure="results/crowd_rarity.png",
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
