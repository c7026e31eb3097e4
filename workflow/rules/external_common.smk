"""Helpers of external.smk (the paper profile): names and resolved specs from the external: params block."""

import neuroneval.external.config as externals
from neuroneval.external.checks import check_external

EXTERNAL = externals.external_block(config)
check_external(config)
IMAGE_DATASETS = externals.image_datasets(EXTERNAL)
TEXT_DATASETS = externals.text_datasets(EXTERNAL)
EXTERNAL_RUNTIME = {
    "device": EXTERNAL.get("device", "auto"),
    "batch_size": EXTERNAL.get("batch_size", 64),
    "num_workers": EXTERNAL.get("num_workers", 0),
}
EXTERNAL_GPUS = 0 if EXTERNAL_RUNTIME["device"] == "cpu" else 1


wildcard_constraints:
    image_dataset="|".join(IMAGE_DATASETS) or "NO_IMAGE_DATASET",
    text_dataset="|".join(TEXT_DATASETS) or "NO_TEXT_DATASET",
    vision_model="|".join(externals.vision_models(EXTERNAL)) or "NO_VISION_MODEL",
    embedder="|".join(externals.embedders(EXTERNAL)) or "NO_EMBEDDER",
    external_lm="|".join(externals.language_models(EXTERNAL)) or "NO_LANGUAGE_MODEL",
    external_probe="|".join(externals.probes(EXTERNAL)) or "NO_PROBE",


def image_dataset_spec(wildcards):
    return externals.dataset_spec(EXTERNAL, wildcards.image_dataset)


def image_dataset_files(wildcards):
    return externals.dataset_files(EXTERNAL, wildcards.image_dataset)


def text_dataset_spec(wildcards):
    return externals.dataset_spec(EXTERNAL, wildcards.text_dataset)


def text_dataset_files(wildcards):
    tokenizer_model = EXTERNAL["datasets"][wildcards.text_dataset]["tokenizer_model"]
    return externals.dataset_files(
        EXTERNAL, wildcards.text_dataset
    ) + externals.model_files(EXTERNAL, tokenizer_model)


def text_tokenizer_spec(wildcards):
    tokenizer_model = EXTERNAL["datasets"][wildcards.text_dataset]["tokenizer_model"]
    return externals.model_spec(EXTERNAL, tokenizer_model)


def vision_model_spec(wildcards):
    return externals.model_spec(EXTERNAL, wildcards.vision_model)


def vision_model_files(wildcards):
    return externals.model_files(EXTERNAL, wildcards.vision_model)


def embedder_spec(wildcards):
    return externals.model_spec(EXTERNAL, wildcards.embedder)


def embedder_files(wildcards):
    return externals.model_files(EXTERNAL, wildcards.embedder)


def external_lm_spec(wildcards):
    return externals.model_spec(EXTERNAL, wildcards.external_lm)


def external_lm_files(wildcards):
    return externals.model_files(EXTERNAL, wildcards.external_lm)


def pseudo_label_spec(wildcards):
    return (EXTERNAL.get("pseudo_labels") or {}).get(wildcards.embedder, {})


def pseudo_calibration_inputs(wildcards):
    """A ``fit`` calibration reads another dataset's embeddings and labels."""
    calibration = pseudo_label_spec(wildcards).get("calibration") or {}
    if calibration.get("method") != "fit":
        return {}
    dataset = calibration["dataset"]
    return {
        "calibration_embeddings": f"data/external/{dataset}/embeddings/{wildcards.embedder}.npz",
        "calibration_concepts": f"data/concepts/{dataset}/labels.parquet",
    }


def external_probe_spec(wildcards):
    return EXTERNAL["probes"][wildcards.external_probe]


def external_probe_train_inputs(wildcards):
    probe = external_probe_spec(wildcards)
    return {
        "embeddings": f"data/external/{probe['train_dataset']}/embeddings/{probe['features']}.npz",
        "concepts": f"data/concepts/{probe['train_dataset']}/labels.parquet",
    }


def external_probe_embeddings(wildcards):
    features = external_probe_spec(wildcards)["features"]
    return f"data/external/{wildcards.image_dataset}/embeddings/{features}.npz"


# Input functions of own.smk (your own setting: kind tables/array datasets, family custom models).
import neuroneval.external.own as own
import neuroneval.external.own_images as own_images


def tables_activation_file(wildcards):
    return str(
        own.table_file(
            EXTERNAL,
            wildcards.tables_dataset,
            "activations",
            wildcards.tables_model,
            wildcards.layer,
        )
    )


def tables_known_concepts(wildcards):
    spec = EXTERNAL["datasets"][wildcards.tables_dataset]
    if not spec.get("known_concepts"):
        return None
    return str(own.table_file(EXTERNAL, wildcards.tables_dataset, "known_concepts"))


def tables_concept_file(wildcards):
    return str(
        own.tables_concept_file(
            EXTERNAL, wildcards.tables_dataset, wildcards.tables_source
        )
    )


def array_dataset_spec(wildcards):
    return own.array_spec(EXTERNAL, wildcards.array_dataset)


def array_dataset_files(wildcards):
    return own.dataset_inputs(EXTERNAL, wildcards.array_dataset)


def recorded_dataset_spec(wildcards):
    return own.array_spec(EXTERNAL, wildcards.recorded_dataset)


def recorded_dataset_files(wildcards):
    return own.dataset_inputs(EXTERNAL, wildcards.recorded_dataset)


def images_dataset_spec(wildcards):
    return own_images.resolved_spec(EXTERNAL, wildcards.images_dataset)


def images_dataset_files(wildcards):
    return own_images.dataset_files(EXTERNAL, wildcards.images_dataset)


def custom_model_spec(wildcards):
    return own.record_spec(EXTERNAL, wildcards.custom_model)


def custom_model_files(wildcards):
    return own.model_inputs(EXTERNAL, wildcards.custom_model)


def custom_record_options(wildcards):
    spec = EXTERNAL["models"][wildcards.custom_model]
    options = {"pooling": config["activations"]["pooling"]}
    if spec.get("image_size"):
        options["image_size"] = spec["image_size"]
    return options


def tables_known_inputs(wildcards):
    known = tables_known_concepts(wildcards)
    return [known] if known else []


# Input functions of own_corpus.smk (your own language model: kind corpus datasets, sae: of custom models).
import neuroneval.external.corpus as corpus


def corpus_dataset_spec(wildcards):
    return corpus.corpus_spec(EXTERNAL, wildcards.corpus_dataset)


def corpus_dataset_files(wildcards):
    return corpus.corpus_inputs(EXTERNAL, wildcards.corpus_dataset)


def corpus_stream_spec(wildcards):
    return corpus.corpus_stream_spec(EXTERNAL, wildcards.corpus_dataset)


def corpus_stream_files(wildcards):
    spec = corpus_stream_spec(wildcards)
    return [spec["text"], spec["model_dir"]]


def corpus_sae_folder(wildcards):
    return corpus.sae_folder(EXTERNAL, wildcards.custom_model, wildcards.layer)


def corpus_sae_files(wildcards):
    folder = corpus_sae_folder(wildcards)
    return [folder] if folder else []


# Input functions of cosy_custom_units in own.smk (CoSy on a setting of your own, its family custom model run on
# the generated images).
COSY_CUSTOM_SETTINGS = [
    name for name, files in COSY_FILES.items() if files["kind"] == "custom"
]


def cosy_custom_model_name(wildcards):
    return COSY_FILES[wildcards.cosy_custom_setting]["model"]


def cosy_custom_model_spec(wildcards):
    return custom_cosy_run(COSY_FILES[wildcards.cosy_custom_setting])["model"]


def cosy_custom_model_files(wildcards):
    return own.model_inputs(EXTERNAL, cosy_custom_model_name(wildcards))


def cosy_custom_layer(wildcards):
    return COSY_FILES[wildcards.cosy_custom_setting]["layer"]


def cosy_custom_preprocess(wildcards):
    return custom_cosy_run(COSY_FILES[wildcards.cosy_custom_setting])["preprocess"]


def cosy_custom_array_images(wildcards):
    """The images file of the setting's array dataset (its rows' shape is what the preprocessing must give)."""
    return custom_cosy_run(COSY_FILES[wildcards.cosy_custom_setting])["array_images"]


def custom_cosy_run(files):
    """How a CoSy setting's family custom model runs on generated images (cosy.activations.custom_model_on_images):
    its record spec, its preprocess block and the images file of its array dataset (whose rows' shape the
    preprocessing must give; None for another dataset)."""
    dataset = files["dataset"]
    return {
        "model_name": files["model"],
        "model": own.record_spec(EXTERNAL, files["model"]),
        "preprocess": dict(EXTERNAL["models"][files["model"]].get("preprocess") or {}),
        "array_images": (
            own.array_spec(EXTERNAL, dataset)["images"]
            if dataset in own.array_datasets(EXTERNAL)
            else None
        ),
    }


# explain.cosy on settings of your own: their custom models' files and how they run on generated images
EXPLAIN_COSY_CUSTOM = [
    name for name, files in EXPLAIN_COSY_FILES.items() if files["kind"] == "custom"
]


def explain_cosy_custom_runs(wildcards):
    return {
        name: custom_cosy_run(EXPLAIN_COSY_FILES[name]) for name in EXPLAIN_COSY_CUSTOM
    }


def explain_cosy_custom_models(wildcards):
    return [
        path
        for name in EXPLAIN_COSY_CUSTOM
        for path in own.model_inputs(EXTERNAL, EXPLAIN_COSY_FILES[name]["model"])
    ]
