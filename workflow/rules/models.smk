rule train_vision_classifier:
    input:
        world="data/worlds/vision/train",
    output:
        checkpoint="data/models/{model}.pt",
        card="data/models/{model}.json",
    log:
        "logs/models/{model}.log",
    benchmark:
        "logs/benchmarks/train_{model}.tsv"
    priority: schedule_priority
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        step=step_version("train_vision_classifier"),
        spec=model_spec,
    script:
        "../scripts/step.py"


rule models:
    input:
        expand("data/models/{model}.pt", model=VISION_CLASSIFIERS),
        expand("data/models/{lm}", lm=LANGUAGE_MODELS),
        expand("data/models/{clip}.pt", clip=CONTRASTIVE_MODELS),
        expand("data/models/{probe}.pt", probe=PROBES),
        expand("data/models/{model}.pt", model=DIGITS_CLASSIFIERS),


rule train_language_model:
    input:
        train="data/worlds/text/train",
        probe="data/worlds/text/probe",
    output:
        directory("data/models/{lm}"),
    log:
        "logs/models/{lm}.log",
    benchmark:
        "logs/benchmarks/train_{lm}.tsv"
    priority: schedule_priority
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        step=step_version("train_language_model"),
        spec=language_model_spec,
    script:
        "../scripts/step.py"


rule train_contrastive_model:
    input:
        world="data/worlds/vision/train",
    output:
        checkpoint="data/models/{clip}.pt",
        card="data/models/{clip}.json",
    log:
        "logs/models/{clip}.log",
    benchmark:
        "logs/benchmarks/train_{clip}.tsv"
    priority: schedule_priority
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        step=step_version("train_contrastive_model"),
        spec=contrastive_model_spec,
    script:
        "../scripts/step.py"


rule train_probe:
    input:
        world="data/worlds/vision/train",
        features=probe_features,
    output:
        checkpoint="data/models/{probe}.pt",
        card="data/models/{probe}.json",
    log:
        "logs/models/{probe}.log",
    benchmark:
        "logs/benchmarks/train_{probe}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("train_probe"),
        spec=probe_spec,
    script:
        "../scripts/step.py"
