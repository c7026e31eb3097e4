# CoSy (paper 002): explanations -> synthetic images per generator -> AUC/MAD against the probing set, and the
# sanity checks of its Sec. 4 (Tables 2, 6, 8, Figs. 2-3) plus 000's generative concept source (App. B.1).
# Knobs: `cosy:` in params.yaml.
rule cosy_explanations:
    input:
        truth=[files["truth"] for files in COSY_FILES.values()],
        concepts=[files["concepts"] for files in COSY_FILES.values()],
    output:
        "data/cosy/explanations.csv",
    log:
        "logs/cosy/explanations.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("cosy_explanations"),
        cosy=COSY,
    script:
        "../scripts/step.py"


rule cosy_train_embedded:
    input:
        world="data/worlds/vision/train",
        clip=COSY_CLIP,
    output:
        directory(EMBEDDED_CHECKPOINT),
    log:
        "logs/cosy/train_embedded.log",
    benchmark:
        "logs/benchmarks/cosy_train_embedded.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        step=step_version("cosy_train_embedded"),
        training=COSY["embedded"]["training"],
    script:
        "../scripts/step.py"


rule cosy_generate:
    input:
        unpack(cosy_generator_inputs),
    output:
        manifest="data/cosy/{generator}/manifest.parquet",
        report="data/cosy/{generator}/generation.json",
    log:
        "logs/cosy/generate_{generator}.log",
    benchmark:
        "logs/benchmarks/cosy_generate_{generator}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        step=step_version("cosy_generate"),
        cosy=COSY,
        data_root=config["external"]["data_root"],
    script:
        "../scripts/step.py"


rule cosy_evaluate:
    input:
        unpack(cosy_evaluate_inputs),
    output:
        scores="results/cosy/generators/{generator}/scores.csv",
        natural="results/cosy/generators/{generator}/natural.csv",
        templates="results/cosy/generators/{generator}/templates.csv",
        seeds="results/cosy/generators/{generator}/seeds.csv",
        generative="results/cosy/generators/{generator}/generative.csv",
        samples="results/cosy/generators/{generator}/samples.csv",
    log:
        "logs/cosy/evaluate_{generator}.log",
    benchmark:
        "logs/benchmarks/cosy_evaluate_{generator}.tsv"
    conda:
        "../../environment.yml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        step=step_version("cosy_evaluate"),
        cosy=COSY,
        settings={name: SETTING_KNOBS[name] for name in COSY["settings"]},
        activations=config["activations"],
        external=COSY_EXTERNAL,
    script:
        "../scripts/step.py"


rule cosy_tables:
    input:
        scores=cosy_generator_tables("scores"),
        natural=cosy_generator_tables("natural"),
        templates=cosy_generator_tables("templates"),
        seeds=cosy_generator_tables("seeds"),
        generative=cosy_generator_tables("generative"),
        samples=cosy_generator_tables("samples"),
        reports=expand(
            "data/cosy/{generator}/generation.json", generator=COSY_GENERATORS
        ),
    output:
        scores=report(
            "results/cosy/scores.csv",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        table2=report(
            "results/cosy/table2.csv",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        table8=report(
            "results/cosy/table8.csv",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        templates=report(
            "results/cosy/templates.csv",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        templates_figure=report(
            "results/cosy/templates.png",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        natural=report(
            "results/cosy/natural.csv",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        natural_figure=report(
            "results/cosy/natural.png",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        distributions=report(
            "results/cosy/distributions.png",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        generative=report(
            "results/cosy/generative.csv",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
        throughput=report(
            "results/cosy/throughput.json",
            caption="../report/cosy.rst",
            category="CoSy (paper 002)",
        ),
    log:
        "logs/cosy/tables.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("cosy_tables"),
        cosy=COSY,
    script:
        "../scripts/step.py"


rule cosy_user:
    input:
        unpack(cosy_user_files),
    output:
        scores="results/cosy/user/{name}.csv",
        images=directory("data/cosy_user/{name}"),
    log:
        "logs/cosy/user_{name}.log",
    benchmark:
        "logs/benchmarks/cosy_user_{name}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=4000,
    params:
        step=step_version("cosy_user"),
        entry=cosy_user_entry,
        layer=cosy_user_layer,
        generator=cosy_user_generator,
        activations=config["activations"],
        data_root=config["external"]["data_root"],
    script:
        "../scripts/step.py"


rule cosy_results:
    input:
        rules.cosy_tables.output,
