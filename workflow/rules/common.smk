from pathlib import Path

from neuroneval.external.config import model_files
from neuroneval.external.own import custom_models, perturbable_lm_spec
from neuroneval.code_deps.workflow import StepVersions
from neuroneval.params.check import canonical_config, check_params
from neuroneval.explain_catalogue import (
    benchmark_files,
    benchmark_methods,
    method_entry,
    method_files,
    method_options,
)
from neuroneval.pipeline.cosy_steps import (
    EMBEDDED_CHECKPOINT,
    cosy_setting_units,
    cosy_world_dir,
    custom_units_path,
)

from neuroneval.settings import (
    activation_path,
    concept_path,
    ideal_activation_paths,
    setting_activation_paths,
    setting_concept_path,
    setting_knobs,
    truth_method,
    truth_path,
)
from neuroneval.worlds.digits import check_hierarchy as check_digits_hierarchy

# Every problem of the params (duplicate keys in the files Snakemake loaded, schema, NaN/Inf, references that
# name nothing) stops the workflow in one message before any job is planned. The schema has no defaults to fill.
check_params(
    config,
    schema_path=Path(workflow.current_basedir.get_path_or_uri(secret_free=True))
    / "../schemas/params.schema.yaml",
    config_files=workflow.configfiles,
)
# Rules see the config with every mapping's keys sorted: Snakemake's params trigger compares repr(params), so
# reordering keys in params.yaml (values unchanged) reruns nothing.
_canonical_config = canonical_config(config)
config.clear()
config.update(_canonical_config)

# Rules run workflow/scripts/step.py with `step=step_version("<step function>")` among their params, saying which
# function of neuroneval.pipeline's *_steps.py modules runs, and a digest of the library code it can run
# (neuroneval.code_deps). Editing that code changes the param, and Snakemake's params trigger reruns the
# job, and nothing else. The Snakefile checks that no rule forgets it. The entry script is part of every digest.
step_version = StepVersions(
    script=Path(workflow.basedir) / "workflow" / "scripts" / "step.py"
)

SETTINGS = list(config["settings"])
META_SETTINGS = list(config["meta"]["settings"])
METRIC_NAMES = list(config["meta"]["metrics"])
VISION_CLASSIFIERS = list(config["models"]["vision"])
LANGUAGE_MODELS = list(config["models"].get("language", {}))
CONTRASTIVE_MODELS = list(config["models"].get("contrastive", {}))
PROBES = list(config["models"].get("probes", {}))
TEXT_SPLITS = list(config["world"].get("text", {}).get("splits", {}))
PSEUDO_SUMMARIES = sorted(
    {
        str(setting_concept_path(setting)).replace(".parquet", ".summary.json")
        for setting in config["settings"].values()
        if setting["concepts"]["source"].startswith("pseudo:")
    }
)


# Scheduling only (no rule's params): the chains of schedule.train_first's models (training, recording, meta) run first.
TRAIN_FIRST = list(config.get("schedule", {}).get("train_first", []))


# World builds and label tables come before everything (seconds each; every chain needs one).
WORLD_PRIORITY = len(TRAIN_FIRST) + 1


def schedule_priority(wildcards):
    """Snakemake priority of a job on a model's chain (training, recording, a setting's meta-evaluation):
    len(train_first) - index of the highest listed model among its wildcards (a setting stands for its units'
    models), else 0."""
    models = []
    for value in wildcards:
        setting = config["settings"].get(value)
        models += [unit["model"] for unit in setting["units"]] if setting else [value]
    ranks = [
        len(TRAIN_FIRST) - TRAIN_FIRST.index(model)
        for model in models
        if model in TRAIN_FIRST
    ]
    return max(ranks, default=0)


wildcard_constraints:
    setting="|".join(SETTINGS),
    split="[a-z]+",
    layer="[a-z0-9_.]+",
    model="|".join(VISION_CLASSIFIERS),
    # embedded LMs, and the external LMs that concepteval reads on a corpus (paper profile)
    lm="|".join(
        [*LANGUAGE_MODELS, *(config.get("concepteval", {}).get("corpus") or {})]
    )
    or "NO_LANGUAGE_MODEL",
    clip="|".join(CONTRASTIVE_MODELS) or "NO_CONTRASTIVE_MODEL",
    probe="|".join(PROBES) or "NO_PROBE",


# Rules take settings without their display-only fields (description): relabelling one reruns only the report.
SETTING_KNOBS = {
    name: setting_knobs(setting) for name, setting in config["settings"].items()
}
SETTING_DESCRIPTIONS = {
    name: setting.get("description", "") for name, setting in config["settings"].items()
}
# The paper 000 setting each one stands in for (display-only; read by the fidelity report).
PAPER_SETTINGS = {
    name: setting["paper_setting"]
    for name, setting in config["settings"].items()
    if "paper_setting" in setting
}
# meta without the keys that shape Table 4 itself (its columns, the discrimination criterion: params of table4
# alone), so adding a column reruns no setting; neuroneval.meta.discrimination.TABLE4_KEYS, restated
META_TABLE4_KEYS = ["settings", "discrimination"]
META_KNOBS = {
    key: value for key, value in config["meta"].items() if key not in META_TABLE4_KEYS
}
META_DISCRIMINATION = config["meta"].get("discrimination") or {}


def setting_config(wildcards):
    return SETTING_KNOBS[wildcards.setting]


def setting_activations(wildcards):
    return [
        str(path)
        for path in setting_activation_paths(config["settings"][wildcards.setting])
    ]


def setting_concepts(wildcards):
    return str(setting_concept_path(config["settings"][wildcards.setting]))


#: Generative-probability ideal-unit tables of every setting that has them (the ceiling's inputs).
IDEAL_TABLES = sorted(
    {
        str(path)
        for setting in config["settings"].values()
        for path in ideal_activation_paths(setting)
    }
)


def setting_labels(wildcards):
    """The ground-truth label table of the setting's dataset (ideal units of label-based ceilings)."""
    return str(concept_path(config["settings"][wildcards.setting]["dataset"], "labels"))


def setting_ideal_activations(wildcards):
    """Generative-probability ideal units of the setting, where its world has them (else [])."""
    return [
        str(path)
        for path in ideal_activation_paths(config["settings"][wildcards.setting])
    ]


def setting_truth(wildcards):
    return str(truth_path(wildcards.setting))


def model_spec(wildcards):
    return config["models"]["vision"][wildcards.model]


def world_split_size(wildcards):
    return config["world"]["vision"]["splits"][wildcards.split]


def text_split_size(wildcards):
    return config["world"]["text"]["splits"][wildcards.split]


def text_world_inputs(wildcards):
    """A split other than ``train`` takes the train split's tokenizer vocabulary."""
    return {} if wildcards.split == "train" else {"train": "data/worlds/text/train"}


def language_model_spec(wildcards):
    return config["models"]["language"][wildcards.lm]


def contrastive_model_spec(wildcards):
    return config["models"]["contrastive"][wildcards.clip]


def probe_spec(wildcards):
    return config["models"]["probes"][wildcards.probe]


def probe_features(wildcards):
    return f"data/models/{probe_spec(wildcards)['features']}.pt"


def calibration_world(wildcards):
    return f"data/worlds/vision/{config['pseudo_labels']['calibration_split']}"


# Sanity tests (workflow/rules/sanity.smk)
SANITY = config["sanity"]
SANITY_SETTINGS = list(SANITY["settings"])
SANITY_COMBINATIONS = list(SANITY["combinations"]["metrics"])
SANITY_ABLATIONS = ["strength", "draws", "semantic"]
# neuroneval.metrics.validation.TIES, restated: importing the metric engine here would make every DVC stage
# depend on it (tests/workflow/test_schema_enums.py keeps the two equal)
TIE_MODES = ["average", "reference"]
SANITY_ABLATION_SETTING = SANITY["ablations"]["setting"]
SANITY_SHIFT_SETTING = SANITY["shift"]["setting"]


def sanity_meta_file(wildcards):
    """Table 4's own α/λ choice where the setting has known units; IoU-truth settings fix α and search alone."""
    if truth_method(config["settings"][wildcards.setting])["method"] == "iou":
        return []
    return [f"results/meta/{wildcards.setting}.csv"]


def sanity_search_metrics(wildcards):
    """Metrics whose α/λ a setting's sanity tests need: Table 3's, plus the combinations where they are used."""
    combined = set(SANITY["combinations"]["settings"]) | set(
        SANITY["combinations"]["meta_settings"]
    )
    extra = SANITY_COMBINATIONS if wildcards.setting in combined else []
    return list(SANITY["metrics"]) + extra


def sanity_experimental_metrics(wildcards):
    """Table 3's metrics, plus the combinations on the settings of Table E.8."""
    extra = (
        SANITY_COMBINATIONS
        if wildcards.setting in SANITY["combinations"]["settings"]
        else []
    )
    return list(SANITY["metrics"]) + extra


def sanity_theoretical_metrics(wildcards):
    """Every metric and combination in the tables' tie mode; the tie metrics alone in the other mode."""
    if wildcards.ties == SANITY["ties"]:
        return list(SANITY["metrics"]) + SANITY_COMBINATIONS
    return list(SANITY["tie_metrics"])


def fixed_setting_inputs(name):
    """Input files of one named setting (for rules without a {setting} wildcard)."""
    setting = config["settings"][name]
    return {
        "activations": [str(path) for path in setting_activation_paths(setting)],
        "concepts": str(setting_concept_path(setting)),
        "truth": str(truth_path(name)),
    }


SANITY_ABLATION_INPUTS = fixed_setting_inputs(SANITY_ABLATION_SETTING)
SANITY_SHIFT_INPUTS = fixed_setting_inputs(SANITY_SHIFT_SETTING)


# CoSy (workflow/rules/cosy.smk); the user files of cosy.user_explanations reach only rule cosy_user
COSY = {
    key: value for key, value in config["cosy"].items() if key != "user_explanations"
}
COSY_USER = config["cosy"].get("user_explanations") or {}
COSY_USER_FILES = {
    name: cosy_setting_units(config["settings"], [entry["setting"]])[entry["setting"]]
    for name, entry in COSY_USER.items()
}
COSY_GENERATORS = list(COSY["generators"])
COSY_EXTERNAL = config.get("external") or {}
COSY_FILES = cosy_setting_units(
    config["settings"],
    COSY["settings"],
    list(COSY_EXTERNAL.get("models") or {}),
    custom_models(COSY_EXTERNAL),
)
COSY_WORLD = cosy_world_dir(COSY_FILES)
COSY_CLIP = f"data/models/{COSY['clip']}.pt"
if "oracle" in COSY_GENERATORS and COSY_WORLD is None:
    raise ValueError(
        "cosy.generators: the oracle renders the vision world, but no cosy.settings probes it"
    )


wildcard_constraints:
    generator="oracle|embedded|diffusers",


def cosy_generator_inputs(wildcards):
    """The oracle reads the world's parameters, the embedded generator its trained checkpoint."""
    inputs = {"explanations": "data/cosy/explanations.csv"}
    if wildcards.generator == "oracle":
        inputs["world"] = COSY_WORLD
    if wildcards.generator == "embedded":
        inputs["checkpoint"] = EMBEDDED_CHECKPOINT
    return inputs


def cosy_evaluate_inputs(wildcards):
    """Images, explanations, each setting's tables and model; the world and CLIP where world settings exist."""
    inputs = {
        "manifest": f"data/cosy/{wildcards.generator}/manifest.parquet",
        "explanations": "data/cosy/explanations.csv",
        "activations": [files["activations"] for files in COSY_FILES.values()],
        "concepts": [files["concepts"] for files in COSY_FILES.values()],
        "checkpoints": [
            files["checkpoint"] for files in COSY_FILES.values() if files["checkpoint"]
        ],
        "models": [
            path
            for files in COSY_FILES.values()
            if files["kind"] == "external"
            for path in model_files(COSY_EXTERNAL, files["model"])
        ],
        "custom_units": [
            custom_units_path(wildcards.generator, name)
            for name, files in COSY_FILES.items()
            if files["kind"] == "custom"
        ],
    }
    if COSY_WORLD is not None:
        inputs["world"] = COSY_WORLD
        inputs["clip"] = COSY_CLIP
    return inputs


def cosy_user_files(wildcards):
    """The user's explanation file, the setting's classifier and probing world, the embedded checkpoint."""
    entry, files = COSY_USER[wildcards.name], COSY_USER_FILES[wildcards.name]
    inputs = {
        "explanations": entry["explanations"],
        "checkpoint": files["checkpoint"],
        "world": cosy_world_dir({wildcards.name: files}),
    }
    if entry.get("generator", "oracle") == "embedded":
        inputs["embedded"] = EMBEDDED_CHECKPOINT
    return inputs


def cosy_user_entry(wildcards):
    return COSY_USER[wildcards.name]


def cosy_user_layer(wildcards):
    return COSY_USER_FILES[wildcards.name]["layer"]


def cosy_user_generator(wildcards):
    """The generator's block of ``cosy:`` (the embedded model's sampling, the diffusers pipeline)."""
    return COSY.get(COSY_USER[wildcards.name].get("generator", "oracle")) or {}


def cosy_generator_tables(table):
    return expand(
        "results/cosy/generators/{generator}/{table}.csv",
        generator=COSY_GENERATORS,
        table=table,
    )


# Digits: scikit-learn's bundled handwritten digits (workflow/rules/digits.smk)
DIGITS = config.get("digits") or {}
DIGITS_WORLD = {key: value for key, value in DIGITS.items() if key != "models"}
DIGITS_SPLITS = ["train", "probe"] if DIGITS else []
DIGITS_CLASSIFIERS = list(DIGITS.get("models") or {})
DIGITS_SETTINGS = [
    name
    for name, setting in config["settings"].items()
    if setting["dataset"].startswith("digits_")
]
if DIGITS:
    # every digit in exactly one group, checked before any job
    check_digits_hierarchy(DIGITS["hierarchy"])
if set(DIGITS_CLASSIFIERS) & set(VISION_CLASSIFIERS):
    raise ValueError(
        "digits.models and models.vision share names "
        f"{sorted(set(DIGITS_CLASSIFIERS) & set(VISION_CLASSIFIERS))}: both write data/models/<name>.pt"
    )

# models whose JSON card (held-out accuracy vs chance) results/worlds_report.csv reads
REPORTED_MODELS = VISION_CLASSIFIERS + CONTRASTIVE_MODELS + PROBES + DIGITS_CLASSIFIERS


def digits_model_spec(wildcards):
    return DIGITS["models"][wildcards.model]


def digits_dataset(wildcards):
    """Dataset name of a digits split's tables (``digits_probe``), recorded in their metadata."""
    return f"digits_{wildcards.split}"


# Explanation methods benchmark (workflow/rules/explain.smk)
EXPLAIN = config.get("explain") or {}
# explain.run_settings (a profile's choice among explain.settings; null = all of them) are the ones run
EXPLAIN_SETTINGS = list(
    EXPLAIN.get("settings") or {}
    if EXPLAIN.get("run_settings") is None
    else EXPLAIN["run_settings"]
)
if set(EXPLAIN_SETTINGS) - set(EXPLAIN.get("settings") or {}):
    raise ValueError(
        "params.yaml: explain.run_settings names settings without an explain.settings entry: "
        f"{sorted(set(EXPLAIN_SETTINGS) - set(EXPLAIN.get('settings') or {}))}"
    )
if set(EXPLAIN_SETTINGS) - set(SETTINGS):
    raise ValueError(
        "params.yaml: explain.settings names undefined settings "
        f"{sorted(set(EXPLAIN_SETTINGS) - set(SETTINGS))}; defined: {sorted(SETTINGS)}"
    )
EXPLAIN_METHOD_FILES = {
    name: method_files(EXPLAIN["settings"][name], EXPLAIN["simple"])
    for name in EXPLAIN_SETTINGS
}


wildcard_constraints:
    method="[a-z0-9_]+",


def explain_setting_inputs(wildcards):
    """The setting's tables, plus what the method reads: labels, pseudo-labels, truth, the world, a checkpoint."""
    setting = config["settings"][wildcards.setting]
    spec = EXPLAIN["settings"][wildcards.setting]
    entry = method_entry(wildcards.method)
    inputs = {
        "activations": setting_activations(wildcards),
        "concepts": setting_concepts(wildcards),
    }
    if "truth" in entry.inputs:
        inputs["truth"] = setting_truth(wildcards)
    if "labels" in entry.inputs:
        inputs["labels"] = str(concept_path(setting["dataset"], "labels"))
    if "pseudo" in entry.inputs:
        inputs["pseudo"] = str(
            concept_path(setting["dataset"], EXPLAIN["pseudo_source"])
        )
    spatial = spec.get("spatial") or {}
    on_maps = entry.spatial and entry.name in spatial.get("methods", [])
    external = on_maps and setting["dataset"] in IMAGE_DATASETS
    if external:
        inputs.update(explain_external_spatial_inputs(wildcards.setting, spatial))
    elif "vision_world" in entry.inputs or on_maps:
        inputs["world"] = world_dir(setting["dataset"])
    if "text_world" in entry.inputs:
        inputs["world"] = world_dir(setting["dataset"], kind="text")
    if on_maps and not external:
        inputs["checkpoint"] = f"data/models/{spatial['model']}.pt"
    if "llm_world" in entry.inputs:
        inputs["world"] = llm_world_dir(wildcards.setting, setting["dataset"])
    return inputs


def world_dir(dataset, kind="vision"):
    """``vision_probe`` -> ``data/worlds/vision/probe`` (the world of that ``kind`` a dataset's tables come
    from: vision for captions and masks, text for the tokens of ``text_probe``)."""
    prefix, _, split = dataset.partition("_")
    if prefix != kind:
        raise ValueError(f"explain: dataset {dataset!r} has no {kind} world")
    return f"data/worlds/{kind}/{split}"


def llm_world_dir(setting, dataset):
    """The world whose captions (vision) or text (LM positions) the LLM explainer shows."""
    kind = dataset.partition("_")[0]
    if kind not in ("vision", "text"):
        raise ValueError(
            f"explain.settings.{setting}: method llm needs an embedded vision or text world "
            f"(captions or token contexts); dataset {dataset!r} has none"
        )
    return world_dir(dataset, kind=kind)


def explain_external_spatial_inputs(setting, spatial):
    """An external setting's spatial method: the dataset's input table, the user's masks and the checkpoint."""
    dataset = config["settings"][setting]["dataset"]
    return {
        "inputs": f"data/external/{dataset}/inputs.csv",
        "masks": externals.dataset_masks(
            EXTERNAL, dataset, needed_by=f"explain.settings.{setting}.spatial"
        ),
        "model_files": externals.model_files(EXTERNAL, spatial["model"]),
    }


def explain_external(wildcards):
    """The dataset and model specs and the runtime of an external setting's spatial method (else empty)."""
    dataset = config["settings"][wildcards.setting]["dataset"]
    spatial = EXPLAIN["settings"][wildcards.setting].get("spatial") or {}
    entry = method_entry(wildcards.method)
    if entry.name not in spatial.get("methods", []) or dataset not in IMAGE_DATASETS:
        return {}
    return {
        "dataset": externals.dataset_spec(EXTERNAL, dataset),
        "model": externals.model_spec(EXTERNAL, spatial["model"]),
        "runtime": EXTERNAL_RUNTIME,
        "masks_key": f"external.datasets.{dataset}.masks",
    }


def explain_method_options(wildcards):
    return method_options(EXPLAIN, wildcards.method)


def explain_spec(wildcards):
    return EXPLAIN["settings"][wildcards.setting]


def explain_score_inputs(wildcards):
    """The setting's tables and explanations; ``scorer``: the concept table the simulations read where it is the
    setting's own (``scored_on: setting``; else the labels)."""
    setting = config["settings"][wildcards.setting]
    scorer = {}
    if EXPLAIN["settings"][wildcards.setting].get("scored_on") == "setting":
        scorer["scorer"] = setting_concepts(wildcards)
    return scorer | {
        "activations": setting_activations(wildcards),
        "labels": str(concept_path(setting["dataset"], "labels")),
        "truth": setting_truth(wildcards),
        "ideal": setting_ideal_activations(wildcards),
        "explanations": expand(
            "explanations/{setting}/{method}.csv",
            setting=wildcards.setting,
            method=EXPLAIN_METHOD_FILES[wildcards.setting],
        ),
    }


def explain_score_methods(wildcards):
    return EXPLAIN_METHOD_FILES[wildcards.setting]


# What the fidelity report's paper-001 claims need to know of each explained setting: the concept table its
# simulations read, its concept source, and the concept subset some methods read (neuroneval.explain.concept_sets)
EXPLAIN_PROTOCOLS = {
    name: {
        "scored_on": EXPLAIN["settings"][name].get("scored_on", "labels"),
        "concepts": config["settings"][name]["concepts"]["source"],
        "method_concepts": EXPLAIN["settings"][name].get("method_concepts") or {},
    }
    for name in EXPLAIN_SETTINGS
}
# The paired bootstrap of the method comparisons (neuroneval.fidelity.claims.paired)
EXPLAIN_BOOTSTRAP = {
    "n_boot": EXPLAIN.get("n_boot"),
    "ci_level": EXPLAIN.get("ci_level"),
    "seed": EXPLAIN.get("random_seed"),
}


# CoSy and the simulated crowd on the explanations (explain.cosy, explain.crowd)
EXPLAIN_COSY = EXPLAIN.get("cosy") or {}
EXPLAIN_CROWD = EXPLAIN.get("crowd") or {}
EXPLAIN_COSY_SETTINGS = list(EXPLAIN_COSY.get("settings") or [])
EXPLAIN_CROWD_SETTINGS = list(EXPLAIN_CROWD.get("settings") or [])
for block, names in (
    ("cosy", EXPLAIN_COSY_SETTINGS),
    ("crowd", EXPLAIN_CROWD_SETTINGS),
):
    if set(names) - set(EXPLAIN_SETTINGS):
        raise ValueError(
            f"params.yaml: explain.{block}.settings names settings that are not explained: "
            f"{sorted(set(names) - set(EXPLAIN_SETTINGS))}; explained: {EXPLAIN_SETTINGS}"
        )
EXPLAIN_COSY_GENERATORS = list(EXPLAIN_COSY.get("generators") or [])
EXPLAIN_COSY_FILES = cosy_setting_units(
    config["settings"],
    EXPLAIN_COSY_SETTINGS,
    custom_models(COSY_EXTERNAL),
    custom_models(COSY_EXTERNAL),
)
EXPLAIN_COSY_WORLD = cosy_world_dir(EXPLAIN_COSY_FILES)
# (setting, method file) pairs: the block's methods that the setting has, then random_l1 and truth
EXPLAIN_COSY_PAIRS = [
    [setting, method]
    for setting, method in benchmark_files(
        EXPLAIN_COSY_SETTINGS, EXPLAIN_COSY.get("methods") or []
    )
    if method in EXPLAIN_METHOD_FILES[setting]
]
EXPLAIN_CROWD_METHODS = {
    setting: [
        method
        for method in benchmark_methods(EXPLAIN_CROWD.get("methods") or [])
        if method in EXPLAIN_METHOD_FILES[setting]
    ]
    for setting in EXPLAIN_CROWD_SETTINGS
}


def explain_cosy_generate_inputs(wildcards):
    """The Table 1 explanation files; the oracle reads the world, the embedded generator its checkpoint."""
    inputs = {
        "explanations": [
            f"explanations/{setting}/{method}.csv"
            for setting, method in EXPLAIN_COSY_PAIRS
        ]
    }
    if wildcards.generator == "oracle":
        inputs["world"] = EXPLAIN_COSY_WORLD
    if wildcards.generator == "embedded":
        inputs["checkpoint"] = EMBEDDED_CHECKPOINT
    return inputs


def explain_cosy_generator(wildcards):
    """The generator's block of ``cosy:`` (the embedded model's sampling, the diffusers pipeline)."""
    return COSY.get(wildcards.generator) or {}


def explain_crowd_methods(wildcards):
    return EXPLAIN_CROWD_METHODS[wildcards.setting]


def explain_crowd_inputs(wildcards):
    setting = config["settings"][wildcards.setting]
    inputs = {
        "activations": setting_activations(wildcards),
        "labels": str(concept_path(setting["dataset"], "labels")),
        "truth": setting_truth(wildcards),
        "ideal": setting_ideal_activations(wildcards),
        "explanations": expand(
            "explanations/{setting}/{method}.csv",
            setting=wildcards.setting,
            method=EXPLAIN_CROWD_METHODS[wildcards.setting],
        ),
    }
    if EXPLAIN_CROWD.get("sampling") == "pseudo" or "bayes_pseudo" in (
        EXPLAIN_CROWD.get("aggregation") or []
    ):
        inputs["pseudo"] = str(
            concept_path(setting["dataset"], EXPLAIN["pseudo_source"])
        )
    return inputs


def explain_crowd_page_settings():
    """The crowd's settings of your own whose dataset has media: their task pages (called once EXTERNAL exists)."""
    return [
        setting
        for setting in EXPLAIN_CROWD_SETTINGS
        if corpus.dataset_media_spec(EXTERNAL, config["settings"][setting]["dataset"])
    ]


def explain_crowd_pages_inputs(wildcards):
    spec = viewer_own_media(wildcards)
    return {
        "activations": setting_activations(wildcards),
        "explanations": expand(
            "explanations/{setting}/{method}.csv",
            setting=wildcards.setting,
            method=EXPLAIN_CROWD_METHODS[wildcards.setting],
        ),
        "media": own.media_files(spec),
    }


# Concept evaluation, paper 004 (workflow/rules/concepteval.smk)
CONCEPTEVAL = config.get("concepteval") or {}
CONCEPTEVAL_MODELS = list(CONCEPTEVAL.get("models") or [])
# LM of external.models -> the text or corpus dataset it reads (paper profile, your own LM); the others are embedded
# LMs on the text world
CONCEPTEVAL_CORPUS = dict(CONCEPTEVAL.get("corpus") or {})
if set(CONCEPTEVAL_MODELS) - set(LANGUAGE_MODELS) - set(CONCEPTEVAL_CORPUS):
    raise ValueError(
        "params.yaml: concepteval.models names undefined language models "
        f"{sorted(set(CONCEPTEVAL_MODELS) - set(LANGUAGE_MODELS) - set(CONCEPTEVAL_CORPUS))}; defined: "
        f"{sorted(LANGUAGE_MODELS)} and the external LMs of concepteval.corpus {sorted(CONCEPTEVAL_CORPUS)}"
    )
# how the windows are dealt out (the subsets only cut the runs: changing them reruns no hidden states or SAE)
CONCEPTEVAL_WINDOWS = {
    key: value
    for key, value in (CONCEPTEVAL.get("windows") or {}).items()
    if key != "subsets"
}


def concepteval_sources(wildcards):
    """The embedded LM and text world, or an external LM and its corpus's token stream (the same files for a
    kind: text dataset and a kind: corpus one)."""
    corpus = CONCEPTEVAL_CORPUS.get(wildcards.lm)
    if corpus is None:
        return {
            "model": f"data/models/{wildcards.lm}",
            "world": f"data/worlds/text/{CONCEPTEVAL.get('split', 'probe')}",
        }
    return {
        "model": externals.model_files(EXTERNAL, wildcards.lm),
        "tokens": f"data/external/{corpus}/tokens.npy",
        "vocabulary": f"data/external/{corpus}/vocabulary.json",
    }


def concepteval_model_spec(wildcards):
    """The resolved spec of an LM of external.models as concepteval reads it (None for an embedded one): a
    transformers_lm as declared, a family: custom model_dir LM as a transformers_lm of its folder.
    """
    if wildcards.lm not in CONCEPTEVAL_CORPUS:
        return None
    return perturbable_lm_spec(
        externals.model_spec(EXTERNAL, wildcards.lm),
        key=f"concepteval.corpus.{wildcards.lm}",
    )


def concepteval_planted(wildcards):
    """The planted concepts whose labels the windows carry: none on a user's corpus, which has none."""
    if wildcards.lm in CONCEPTEVAL_CORPUS:
        return None
    return (CONCEPTEVAL.get("families", {}).get("probe") or {}).get("planted")


# Neuron viewer (workflow/rules/viewer.smk)
VIEWER = config.get("viewer") or {}
VIEWER_SETTINGS = list(VIEWER.get("settings") or META_SETTINGS)
if set(VIEWER_SETTINGS) - set(SETTINGS):
    raise ValueError(
        "params.yaml: viewer.settings names undefined settings "
        f"{sorted(set(VIEWER_SETTINGS) - set(SETTINGS))}; defined: {sorted(SETTINGS)}"
    )


def viewer_inputs(wildcards):
    """The setting's tables and what shows its inputs (the embedded world, or an external image dataset's table of
    input_id,path as ``media``), Table 3 (metrics: sanity) and the built explanations (explanations: true).
    """
    setting = config["settings"][wildcards.setting]
    inputs = {
        "activations": setting_activations(wildcards),
        "concepts": setting_concepts(wildcards),
        "truth": setting_truth(wildcards),
    }
    if setting["dataset"] in IMAGE_DATASETS:
        inputs["media"] = f"data/external/{setting['dataset']}/inputs.csv"
    # a user's own dataset (external.datasets of kind tables/array/images) has no embedded world: its cards show
    # its media (an array's rows, an image folder, a tables dataset's media:), else input ids
    elif setting["dataset"] in (config.get("external") or {}).get("datasets", {}):
        files = own.media_files(viewer_own_media(wildcards))
        if files:
            inputs["media"] = files
    else:
        world, _, split = setting["dataset"].partition("_")
        inputs["world"] = f"data/worlds/{world}/{split}"
    if VIEWER.get("metrics", "sanity") == "sanity":
        inputs["table3"] = "results/table3.csv"
    if VIEWER.get("explanations") and wildcards.setting in EXPLAIN_METHOD_FILES:
        inputs["explanations"] = expand(
            "explanations/{setting}/{method}.csv",
            setting=wildcards.setting,
            method=EXPLAIN_METHOD_FILES[wildcards.setting],
        )
    return inputs


def viewer_own_media(wildcards):
    """The resolved media of a setting on an own dataset (neuroneval.external.own_media; a corpus dataset's
    tokens.csv), else None."""
    return corpus.dataset_media_spec(
        EXTERNAL, config["settings"][wildcards.setting]["dataset"]
    )


def viewer_media_root(wildcards):
    """The folder the ``media`` table's paths are relative to (an external image dataset's root; else empty)."""
    dataset = config["settings"][wildcards.setting]["dataset"]
    if dataset not in IMAGE_DATASETS:
        return ""
    return externals.dataset_spec(EXTERNAL, dataset)["root"]
