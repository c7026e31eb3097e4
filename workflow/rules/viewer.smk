# Neuron viewer (issue 20): one static, offline page per setting, results/viewer/<setting>/index.html.
rule viewer_setting:
    input:
        unpack(viewer_inputs),
    output:
        report(
            "results/viewer/{setting}/index.html",
            caption="../report/viewer.rst",
            category="Neuron viewer",
        ),
    log:
        "logs/viewer/{setting}.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("viewer_setting"),
        setting=setting_config,
        description=lambda wildcards: SETTING_DESCRIPTIONS.get(wildcards.setting, ""),
        viewer=VIEWER,
        media_root=viewer_media_root,
        own_media=viewer_own_media,
    script:
        "../scripts/step.py"


rule viewer:
    input:
        expand("results/viewer/{setting}/index.html", setting=VIEWER_SETTINGS),
