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
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        spec=model_spec,
    script:
        "../scripts/train_vision_classifier.py"


rule models:
    input:
        expand("data/models/{model}.pt", model=VISION_CLASSIFIERS),
