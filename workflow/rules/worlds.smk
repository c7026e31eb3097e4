rule vision_world:
    output:
        directory("data/worlds/vision/{split}"),
    log:
        "logs/worlds/vision_{split}.log",
    benchmark:
        "logs/benchmarks/vision_world_{split}.tsv"
    priority: WORLD_PRIORITY
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("vision_world"),
        world=config["world"]["vision"],
        n_images=world_split_size,
    script:
        "../scripts/step.py"


rule worlds:
    input:
        expand("data/worlds/vision/{split}", split=config["world"]["vision"]["splits"]),
        expand("data/worlds/text/{split}", split=TEXT_SPLITS),
        expand("data/worlds/digits/{split}", split=DIGITS_SPLITS),


rule text_world:
    input:
        unpack(text_world_inputs),
    output:
        directory("data/worlds/text/{split}"),
    log:
        "logs/worlds/text_{split}.log",
    benchmark:
        "logs/benchmarks/text_world_{split}.tsv"
    priority: WORLD_PRIORITY
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("text_world"),
        world=config["world"]["text"],
        n_documents=text_split_size,
    script:
        "../scripts/step.py"
