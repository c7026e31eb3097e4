from snakemake.utils import validate

from neuroneval.settings import (
    activation_path,
    check_setting_references,
    concept_path,
    setting_activation_paths,
    setting_concept_path,
    truth_path,
)

validate(config, schema="../schemas/params.schema.yaml")
check_setting_references(config)

SETTINGS = list(config["settings"])
META_SETTINGS = list(config["meta"]["settings"])
METRIC_NAMES = list(config["meta"]["metrics"])
VISION_CLASSIFIERS = list(config["models"]["vision"])


wildcard_constraints:
    setting="|".join(SETTINGS),
    split="[a-z]+",
    layer="[a-z0-9_.]+",
    model="|".join(VISION_CLASSIFIERS),


def setting_config(wildcards):
    return config["settings"][wildcards.setting]


def setting_activations(wildcards):
    return [
        str(path)
        for path in setting_activation_paths(config["settings"][wildcards.setting])
    ]


def setting_concepts(wildcards):
    return str(setting_concept_path(config["settings"][wildcards.setting]))


def setting_truth(wildcards):
    return str(truth_path(wildcards.setting))


def model_spec(wildcards):
    return config["models"]["vision"][wildcards.model]


def world_split_size(wildcards):
    return config["world"]["vision"]["splits"][wildcards.split]
