# Your own setting (docs/your_model.md): tables you computed (kind: tables) and your model (family: custom)
# recorded on your inputs (kind: array, or an image folder: kind: images), at the usual data/activations and
# data/concepts paths.


wildcard_constraints:
    tables_dataset="|".join(own.tables_datasets(EXTERNAL)) or "NO_TABLES_DATASET",
    tables_model="|".join(own.tables_models(EXTERNAL)) or "NO_TABLES_MODEL",
    tables_source="|".join(own.tables_sources(EXTERNAL)) or "NO_TABLES_SOURCE",
    array_dataset="|".join(own.array_datasets(EXTERNAL)) or "NO_ARRAY_DATASET",
    images_dataset="|".join(own.images_datasets(EXTERNAL)) or "NO_IMAGES_DATASET",
    recorded_dataset="|".join(own.recorded_datasets(EXTERNAL)) or "NO_RECORDED_DATASET",
    custom_model="|".join(own.custom_models(EXTERNAL)) or "NO_CUSTOM_MODEL",
    cosy_custom_setting="|".join(COSY_CUSTOM_SETTINGS) or "NO_COSY_CUSTOM_SETTING",


rule external_tables_activations:
    input:
        tables_known_inputs,
        table=tables_activation_file,
    output:
        "data/activations/{tables_dataset}/{tables_model}/{layer}.parquet",
    log:
        "logs/external/{tables_dataset}_{tables_model}_{layer}.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_tables_activations"),
        known_concepts=tables_known_concepts,
    script:
        "../scripts/step.py"


rule external_tables_concepts:
    input:
        table=tables_concept_file,
    output:
        "data/concepts/{tables_dataset}/{tables_source}.parquet",
    log:
        "logs/external/{tables_dataset}_{tables_source}.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_tables_concepts"),
    script:
        "../scripts/step.py"


rule external_array_dataset:
    input:
        array_dataset_files,
    output:
        concepts="data/concepts/{array_dataset}/labels.parquet",
    log:
        "logs/external/{array_dataset}_dataset.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_array_dataset"),
        dataset=array_dataset_spec,
    script:
        "../scripts/step.py"


rule external_images_dataset:
    input:
        images_dataset_files,
    output:
        images="data/external/{images_dataset}/images.npy",
        inputs="data/external/{images_dataset}/inputs.csv",
        concepts="data/concepts/{images_dataset}/labels.parquet",
    log:
        "logs/external/{images_dataset}_dataset.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_images_dataset"),
        dataset=images_dataset_spec,
    script:
        "../scripts/step.py"


rule external_custom_activations:
    input:
        custom_model_files,
        recorded_dataset_files,
        concepts="data/concepts/{recorded_dataset}/labels.parquet",
    output:
        "data/activations/{recorded_dataset}/{custom_model}/{layer}.parquet",
    log:
        "logs/external/{recorded_dataset}_{custom_model}_{layer}.log",
    benchmark:
        "logs/benchmarks/external_{recorded_dataset}_{custom_model}_{layer}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=8000,
        gpu=EXTERNAL_GPUS,
    params:
        step=step_version("external_custom_activations"),
        dataset=recorded_dataset_spec,
        model=custom_model_spec,
        record=custom_record_options,
        runtime=EXTERNAL_RUNTIME,
    script:
        "../scripts/step.py"


rule cosy_custom_units:
    input:
        cosy_custom_model_files,
        manifest="data/cosy/{generator}/manifest.parquet",
    output:
        "data/cosy/{generator}/units/{cosy_custom_setting}.parquet",
    log:
        "logs/cosy/units_{generator}_{cosy_custom_setting}.log",
    benchmark:
        "logs/benchmarks/cosy_units_{generator}_{cosy_custom_setting}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=4000,
        gpu=EXTERNAL_GPUS,
    params:
        step=step_version("cosy_custom_units"),
        model_name=cosy_custom_model_name,
        model=cosy_custom_model_spec,
        layer=cosy_custom_layer,
        preprocess=cosy_custom_preprocess,
        array_images=cosy_custom_array_images,
        pooling=config["activations"]["pooling"],
        runtime=EXTERNAL_RUNTIME,
    script:
        "../scripts/step.py"
