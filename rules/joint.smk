# Beyond the papers (docs/architecture.md, The DAG): written and spoken captions and images in
# one space. One training per joint variant (variants with model: joint) → retrieval between
# every ordered pair of its views → any_to_any reports beside separately trained models.


# One definition for a variant trained alone (rule joint_train) and a seed group (joint_train_seeds):
# see rules/train.smk.
for grouped in (False, True):

    rule:
        """Each joint training of the group (polyvse.models.joint, trained as thesis §3.1.2 on every
        view): checkpoints every epoch, resumes after a kill, keeps the best epoch by validation recall
        over every ordered view pair; then test retrieval between every ordered pair of its views
        (R@1/5/10, their mean, medr). Requests a GPU on a cluster; CPU otherwise."""
        name:
            training_rule("joint_train", grouped)
        input:
            unpack(joint_inputs),
        output:
            model=trainings(f"{R}/{{dataset}}/joint/{{variant}}{{seed}}/model.pt", grouped),
            epochs=trainings(f"{R}/{{dataset}}/joint/{{variant}}{{seed}}/epochs.tsv", grouped),
            params=trainings(f"{R}/{{dataset}}/joint/{{variant}}{{seed}}/params.json", grouped),
            evaluation=trainings(f"{R}/{{dataset}}/joint/{{variant}}{{seed}}/eval.tsv", grouped),
        log:
            f"logs/{{dataset}}/{training_rule('joint_train', grouped)}_{{variant}}.log",
        benchmark:
            f"benchmarks/{training_rule('joint_train', grouped)}/{{dataset}}/{{variant}}.tsv"
        wildcard_constraints:
            variant=names_regex(trained_as(joint_variants(), grouped)),
        priority: PRIORITY["long_training" if grouped else "training"]
        conda:
            "../envs/polyvse.yaml"
        threads: config["resources"]["speech_train"]["threads"]
        resources:
            **training_resources("speech_train", trainings=group_size(grouped)),
        params:
            settings=lambda wc, grouped=grouped: each_training(
                wc.variant, grouped, lambda v: joint_variant_settings(config, v)
            ),
            checkpoint_dir=lambda wc, grouped=grouped: each_training(
                wc.variant, grouped, lambda v: f"{R}/{wc.dataset}/joint/{v}/checkpoint"
            ),
        script:
            "../workflow_scripts/joint_train.py"


rule any_to_any:
    """An any_to_any report: R@1, R@10 and mR of every ordered view pair for the joint model and
    beside it the separately trained ones, means over findings.seeds seeds, Δ mR and a verdict."""
    input:
        evals=any_to_any_eval_files,
    output:
        tsv=report(f"{R}/{{a2a_report}}.tsv", category="Any-to-any", caption="../report/any_to_any.rst"),
        md=report(f"{R}/{{a2a_report}}.md", category="Any-to-any", caption="../report/any_to_any.rst"),
    log:
        "logs/report_{a2a_report}.log",
    wildcard_constraints:
        a2a_report=names_regex(any_to_any_reports()),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        models=lambda wc: model_evaluations(PLAN, wc.a2a_report, R),
        dataset=lambda wc: config["reports"][wc.a2a_report]["dataset"],
        langs=lambda wc: config["datasets"][config["reports"][wc.a2a_report]["dataset"]]["langs"],
        caption=lambda wc: config["reports"][wc.a2a_report]["caption"] or wc.a2a_report,
        notes=lambda wc: config["reports"][wc.a2a_report]["notes"],
    script:
        "../workflow_scripts/make_any_to_any.py"


# a table is a few lines of pandas: no cluster submission for it
localrules:
    any_to_any,


rule joint_gallery:
    """An any_to_any report's joint model answering gallery.per_lang written and spoken test captions in each
    of its languages: each query beside its top gallery.top_k test images, the described image outlined."""
    input:
        unpack(joint_gallery_inputs),
    output:
        report(f"{R}/gallery/{{a2a_report}}.png", category="Gallery", caption="../report/gallery.rst"),
    log:
        "logs/gallery_{a2a_report}.log",
    benchmark:
        "benchmarks/joint_gallery/{a2a_report}.tsv"
    wildcard_constraints:
        a2a_report=names_regex(any_to_any_reports()),
    conda:
        "../envs/polyvse.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        per_lang=config["gallery"]["per_lang"],
        top_k=config["gallery"]["top_k"],
        seed=config["seed"],
    script:
        "../workflow_scripts/make_joint_gallery.py"
