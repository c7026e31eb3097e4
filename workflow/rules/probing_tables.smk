rule vision_classifier_activations:
    input:
        world="data/worlds/vision/{split}",
        checkpoint="data/models/{model}.pt",
    output:
        "data/activations/vision_{split}/{model}/{layer}.parquet",
    log:
        "logs/activations/vision_{split}_{model}_{layer}.log",
    benchmark:
        "logs/benchmarks/activations_vision_{split}_{model}_{layer}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("vision_classifier_activations"),
        extraction=config["activations"],
    script:
        "../scripts/step.py"


rule vision_label_concepts:
    input:
        world="data/worlds/vision/{split}",
    output:
        "data/concepts/vision_{split}/labels.parquet",
    log:
        "logs/concepts/vision_{split}_labels.log",
    priority: WORLD_PRIORITY
    conda:
        "../../environment.yml"
    params:
        step=step_version("vision_label_concepts"),
    script:
        "../scripts/step.py"


rule setting_truth:
    input:
        activations=setting_activations,
        concepts=setting_concepts,
    output:
        truth="data/truth/{setting}.csv",
        summary="data/truth/{setting}.summary.json",
    log:
        "logs/truth/{setting}.log",
    priority: schedule_priority
    conda:
        "../../environment.yml"
    params:
        step=step_version("setting_truth"),
        setting=setting_config,
    script:
        "../scripts/step.py"


rule tables:
    input:
        expand("data/truth/{setting}.csv", setting=SETTINGS),
        IDEAL_TABLES,


rule text_label_concepts:
    input:
        world="data/worlds/text/{split}",
    output:
        "data/concepts/text_{split}/labels.parquet",
    log:
        "logs/concepts/text_{split}_labels.log",
    priority: WORLD_PRIORITY
    conda:
        "../../environment.yml"
    params:
        step=step_version("text_label_concepts"),
        extraction=config["activations"].get("next_token", {}),
    script:
        "../scripts/step.py"


rule lm_next_token_activations:
    input:
        world="data/worlds/text/{split}",
        model="data/models/{lm}",
    output:
        "data/activations/text_{split}/{lm}/next_token.parquet",
    log:
        "logs/activations/text_{split}_{lm}_next_token.log",
    benchmark:
        "logs/benchmarks/activations_text_{split}_{lm}_next_token.tsv"
    priority: schedule_priority
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("lm_next_token_activations"),
        extraction=config["activations"].get("next_token", {}),
    script:
        "../scripts/step.py"


rule vision_pseudo_concepts:
    input:
        world="data/worlds/vision/{split}",
        calibration=calibration_world,
        checkpoint="data/models/{clip}.pt",
    output:
        concepts="data/concepts/vision_{split}/pseudo-{clip}.parquet",
        summary="data/concepts/vision_{split}/pseudo-{clip}.summary.json",
    log:
        "logs/concepts/vision_{split}_pseudo-{clip}.log",
    benchmark:
        "logs/benchmarks/pseudo_vision_{split}_{clip}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("vision_pseudo_concepts"),
        pseudo=config.get("pseudo_labels", {}),
    script:
        "../scripts/step.py"


rule probe_activations:
    input:
        world="data/worlds/vision/{split}",
        features=probe_features,
        checkpoint="data/models/{probe}.pt",
    output:
        "data/activations/vision_{split}/{probe}/concepts.parquet",
    log:
        "logs/activations/vision_{split}_{probe}_concepts.log",
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("probe_activations"),
    script:
        "../scripts/step.py"


rule lm_ideal_activations:
    input:
        world="data/worlds/text/{split}",
    output:
        "data/activations/text_{split}/ideal/next_token.parquet",
    log:
        "logs/activations/text_{split}_ideal_next_token.log",
    benchmark:
        "logs/benchmarks/activations_text_{split}_ideal_next_token.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("lm_ideal_activations"),
        extraction=config["activations"].get("next_token", {}),
    script:
        "../scripts/step.py"
