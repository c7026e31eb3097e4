rule train_vision_cnn:
    input:
        world="data/worlds/vision/train",
    output:
        checkpoint="data/models/vision_cnn.pt",
        card="data/models/vision_cnn.json",
    log:
        "logs/models/vision_cnn.log",
    benchmark:
        "logs/benchmarks/train_vision_cnn.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        training=config["models"]["vision_cnn"],
    script:
        "../scripts/train_vision_cnn.py"


rule models:
    input:
        rules.train_vision_cnn.output,
