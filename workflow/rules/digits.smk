# Real data: scikit-learn's bundled handwritten digits (load_digits), a tiny CNN trained on them, and its
# tables. Knobs: `digits:` in params.yaml. Only the world is new; training, activations and labels reuse the
# vision world's scripts on the split written here in the vision world's format (neuroneval.worlds.digits).
rule digits_world:
    output:
        directory("data/worlds/digits/{split}"),
    log:
        "logs/worlds/digits_{split}.log",
    wildcard_constraints:
        split="train|probe",
    priority: WORLD_PRIORITY
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("digits_world"),
        digits=DIGITS_WORLD,
    script:
        "../scripts/step.py"


rule train_digits_classifier:
    input:
        world="data/worlds/digits/train",
    output:
        checkpoint="data/models/{model}.pt",
        card="data/models/{model}.json",
    log:
        "logs/models/{model}.log",
    benchmark:
        "logs/benchmarks/train_{model}.tsv"
    wildcard_constraints:
        model="|".join(DIGITS_CLASSIFIERS) or "NO_DIGITS_MODEL",
    priority: schedule_priority
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("train_vision_classifier"),
        spec=digits_model_spec,
    script:
        "../scripts/step.py"


rule digits_classifier_activations:
    input:
        world="data/worlds/digits/{split}",
        checkpoint="data/models/{model}.pt",
    output:
        "data/activations/digits_{split}/{model}/{layer}.parquet",
    log:
        "logs/activations/digits_{split}_{model}_{layer}.log",
    wildcard_constraints:
        model="|".join(DIGITS_CLASSIFIERS) or "NO_DIGITS_MODEL",
    conda:
        "../../environment.yml"
    threads: 1
    params:
        step=step_version("vision_classifier_activations"),
        extraction=config["activations"],
        dataset=digits_dataset,
    script:
        "../scripts/step.py"


rule digits_label_concepts:
    input:
        world="data/worlds/digits/{split}",
    output:
        "data/concepts/digits_{split}/labels.parquet",
    log:
        "logs/concepts/digits_{split}_labels.log",
    priority: WORLD_PRIORITY
    conda:
        "../../environment.yml"
    params:
        step=step_version("vision_label_concepts"),
        dataset=digits_dataset,
    script:
        "../scripts/step.py"


rule digits:
    input:
        expand("data/models/{model}.json", model=DIGITS_CLASSIFIERS),
        expand("results/meta/{setting}.csv", setting=DIGITS_SETTINGS),
