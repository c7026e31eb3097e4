rule vision_world:
    output:
        directory("data/worlds/vision/{split}"),
    log:
        "logs/worlds/vision_{split}.log",
    benchmark:
        "logs/benchmarks/vision_world_{split}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    params:
        world=config["world"]["vision"],
        n_images=world_split_size,
    script:
        "../scripts/vision_world.py"


rule worlds:
    input:
        expand("data/worlds/vision/{split}", split=config["world"]["vision"]["splits"]),
