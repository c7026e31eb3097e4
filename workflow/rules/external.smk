include: "external_common.smk"


rule external_image_dataset:
    input:
        image_dataset_files,
    output:
        inputs="data/external/{image_dataset}/inputs.csv",
        concepts="data/concepts/{image_dataset}/labels.parquet",
    log:
        "logs/external/{image_dataset}_dataset.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_image_dataset"),
        dataset=image_dataset_spec,
    script:
        "../scripts/step.py"


rule external_vision_activations:
    input:
        vision_model_files,
        inputs="data/external/{image_dataset}/inputs.csv",
        concepts="data/concepts/{image_dataset}/labels.parquet",
    output:
        "data/activations/{image_dataset}/{vision_model}/{layer}.parquet",
    log:
        "logs/external/{image_dataset}_{vision_model}_{layer}.log",
    benchmark:
        "logs/benchmarks/external_{image_dataset}_{vision_model}_{layer}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=8000,
        gpu=EXTERNAL_GPUS,
    params:
        step=step_version("external_vision_activations"),
        dataset=image_dataset_spec,
        model=vision_model_spec,
        runtime=EXTERNAL_RUNTIME,
        pooling=config["activations"]["pooling"],
    script:
        "../scripts/step.py"


rule external_image_embeddings:
    input:
        embedder_files,
        inputs="data/external/{image_dataset}/inputs.csv",
    output:
        "data/external/{image_dataset}/embeddings/{embedder}.npz",
    log:
        "logs/external/{image_dataset}_{embedder}_embeddings.log",
    benchmark:
        "logs/benchmarks/external_{image_dataset}_{embedder}_embeddings.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=8000,
        gpu=EXTERNAL_GPUS,
    params:
        step=step_version("external_image_embeddings"),
        dataset=image_dataset_spec,
        model=embedder_spec,
        runtime=EXTERNAL_RUNTIME,
    script:
        "../scripts/step.py"


rule external_pseudo_concepts:
    input:
        unpack(pseudo_calibration_inputs),
        embedder_files,
        embeddings="data/external/{image_dataset}/embeddings/{embedder}.npz",
        concepts="data/concepts/{image_dataset}/labels.parquet",
    output:
        concepts="data/concepts/{image_dataset}/pseudo-{embedder}.parquet",
        summary="data/concepts/{image_dataset}/pseudo-{embedder}.summary.json",
    log:
        "logs/external/{image_dataset}_pseudo-{embedder}.log",
    benchmark:
        "logs/benchmarks/external_{image_dataset}_pseudo-{embedder}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=8000,
        gpu=EXTERNAL_GPUS,
    params:
        step=step_version("external_pseudo_concepts"),
        model=embedder_spec,
        pseudo=pseudo_label_spec,
        grids=config["pseudo_labels"],
        runtime=EXTERNAL_RUNTIME,
    script:
        "../scripts/step.py"


rule external_train_probe:
    input:
        unpack(external_probe_train_inputs),
    output:
        checkpoint="data/external/models/{external_probe}.pt",
        card="data/external/models/{external_probe}.json",
    log:
        "logs/external/train_{external_probe}.log",
    conda:
        "../../environment.yml"
    threads: 2
    params:
        step=step_version("external_train_probe"),
        probe=external_probe_spec,
    script:
        "../scripts/step.py"


rule external_probe_activations:
    input:
        embeddings=external_probe_embeddings,
        checkpoint="data/external/models/{external_probe}.pt",
    output:
        "data/activations/{image_dataset}/{external_probe}/concepts.parquet",
    log:
        "logs/external/{image_dataset}_{external_probe}_concepts.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_probe_activations"),
    script:
        "../scripts/step.py"


rule external_text_dataset:
    input:
        text_dataset_files,
    output:
        tokens="data/external/{text_dataset}/tokens.npy",
        vocabulary="data/external/{text_dataset}/vocabulary.json",
        concepts="data/concepts/{text_dataset}/labels.parquet",
    log:
        "logs/external/{text_dataset}_dataset.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_text_dataset"),
        dataset=text_dataset_spec,
        tokenizer_model=text_tokenizer_spec,
        extraction=config["activations"].get("next_token", {}),
    script:
        "../scripts/step.py"


rule external_lm_activations:
    input:
        external_lm_files,
        tokens="data/external/{text_dataset}/tokens.npy",
        vocabulary="data/external/{text_dataset}/vocabulary.json",
    output:
        "data/activations/{text_dataset}/{external_lm}/next_token.parquet",
    log:
        "logs/external/{text_dataset}_{external_lm}_next_token.log",
    benchmark:
        "logs/benchmarks/external_{text_dataset}_{external_lm}_next_token.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=16000,
        gpu=EXTERNAL_GPUS,
    params:
        step=step_version("external_lm_activations"),
        model=external_lm_spec,
        extraction=config["activations"].get("next_token", {}),
        runtime=EXTERNAL_RUNTIME,
    script:
        "../scripts/step.py"
