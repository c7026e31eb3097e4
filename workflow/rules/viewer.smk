# Neuron viewer (issue 20): one static, offline page per setting, results/viewer/<setting>/index.html.
VIEWER = config.get("viewer") or {}
VIEWER_SETTINGS = list(VIEWER.get("settings") or META_SETTINGS)
if set(VIEWER_SETTINGS) - set(SETTINGS):
    raise ValueError(
        "params.yaml: viewer.settings names undefined settings "
        f"{sorted(set(VIEWER_SETTINGS) - set(SETTINGS))}; defined: {sorted(SETTINGS)}"
    )


def viewer_inputs(wildcards):
    """The setting's tables and world, Table 3 (metrics: sanity) and the built explanations (explanations: true)."""
    setting = config["settings"][wildcards.setting]
    world, _, split = setting["dataset"].partition("_")
    inputs = {
        "activations": setting_activations(wildcards),
        "concepts": setting_concepts(wildcards),
        "truth": setting_truth(wildcards),
        "world": f"data/worlds/{world}/{split}",
    }
    if VIEWER.get("metrics", "sanity") == "sanity":
        inputs["table3"] = "results/table3.csv"
    if VIEWER.get("explanations") and wildcards.setting in EXPLAIN_METHOD_FILES:
        inputs["explanations"] = expand(
            "explanations/{setting}/{method}.csv",
            setting=wildcards.setting,
            method=EXPLAIN_METHOD_FILES[wildcards.setting],
        )
    return inputs


rule viewer_setting:
    input:
        unpack(viewer_inputs),
    output:
        "results/viewer/{setting}/index.html",
    log:
        "logs/viewer/{setting}.log",
    conda:
        "../../environment.yml"
    params:
        code=code_version("viewer_setting.py"),
        setting=setting_config,
        description=lambda wildcards: SETTING_DESCRIPTIONS.get(wildcards.setting, ""),
        viewer=VIEWER,
    script:
        "../scripts/viewer_setting.py"


rule viewer:
    input:
        expand("results/viewer/{setting}/index.html", setting=VIEWER_SETTINGS),
