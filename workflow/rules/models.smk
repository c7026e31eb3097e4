rule train_vision_classifier:
    input:
        world="data/worlds/vision/train",
    output:
        checkpoint="data/models/{model}.pt",
        card="data/models/{model}.json",
    params:
        spec=model_spec,
    conda:
        "../../environment.yml"
    log:
        "logs/models/{model}.log",
    benchmark:
        "logs/benchmarks/train_{model}.tsv"
    threads: 2
    resources:
        mem_mb=4000,
    script:
        "../scripts/train_vision_classifier.py"


rule models:
    input:
        expand("data/models/{model}.pt", model=VISION_CLASSIFIERS),
