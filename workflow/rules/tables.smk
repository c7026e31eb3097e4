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
    threads: 2
    params:
        extraction=config["activations"],
    script:
        "../scripts/vision_classifier_activations.py"


rule vision_label_concepts:
    input:
        world="data/worlds/vision/{split}",
    output:
        "data/concepts/vision_{split}/labels.parquet",
    log:
        "logs/concepts/vision_{split}_labels.log",
    conda:
        "../../environment.yml"
    script:
        "../scripts/vision_label_concepts.py"


rule setting_truth:
    input:
        activations=setting_activations,
        concepts=setting_concepts,
    output:
        truth="data/truth/{setting}.csv",
        summary="data/truth/{setting}.summary.json",
    log:
        "logs/truth/{setting}.log",
    conda:
        "../../environment.yml"
    params:
        setting=setting_config,
    script:
        "../scripts/setting_truth.py"


rule tables:
    input:
        expand("data/truth/{setting}.csv", setting=SETTINGS),
