# A variant trained alone (rule train) and a seed group (rule train_seeds: a variant and its
# findings.seeds replicas, SEED_GROUPS, one after the other in one job, so that the job's start-up and
# the reading of the data are paid once) are one definition: a group of one is the single case.
# Snakemake fixes how many outputs a rule has, so the two group sizes are two rules of it.
for grouped in (False, True):

    rule:
        """Each training of the group: checkpoints every epoch, resumes after a kill, keeps the best
        epoch by validation mR, then evaluates it on the test split (protocol direct). Requests a GPU on
        a cluster; CPU otherwise."""
        name:
            training_rule("train", grouped)
        input:
            unpack(train_inputs),
        output:
            model=trainings(f"{R}/{{dataset}}/models/{{variant}}{{seed}}/model.pt", grouped),
            epochs=trainings(f"{R}/{{dataset}}/models/{{variant}}{{seed}}/epochs.tsv", grouped),
            params=trainings(f"{R}/{{dataset}}/models/{{variant}}{{seed}}/params.json", grouped),
            evaluation=trainings(f"{R}/{{dataset}}/eval/{{variant}}{{seed}}.direct.tsv", grouped),
        log:
            f"logs/{{dataset}}/{training_rule('train', grouped)}_{{variant}}.log",
        benchmark:
            f"benchmarks/{training_rule('train', grouped)}/{{dataset}}/{{variant}}.tsv"
        wildcard_constraints:
            variant=names_regex(trained_as(word_variants(config), grouped)),
        priority: PRIORITY["long_training" if grouped else "training"]
        conda:
            "../envs/polyvse.yaml"
        threads: config["resources"]["train"]["threads"]
        resources:
            **training_resources("train", trainings=group_size(grouped)),
        params:
            settings=lambda wc, grouped=grouped: each_training(
                wc.variant, grouped, lambda v: variant_settings(config, v)
            ),
            checkpoint_dir=lambda wc, grouped=grouped: each_training(
                wc.variant, grouped, lambda v: f"{R}/{wc.dataset}/models/{v}/checkpoint"
            ),
            eval_langs=lambda wc: protocol_langs(config, wc.variant, "direct"),
        script:
            "../workflow_scripts/train.py"
