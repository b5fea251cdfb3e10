"""Every model family the workflow trains, in one table: what it reproduces, where its settings live and
who checks them, which rules train it (with which input functions and trainers), the ``family`` its ``model.pt`` names (through
which :func:`polyvse.models.trained.load_model` reads it back) and the report layouts that show it.

A variant names its family in ``variants.<name>.model``. :func:`polyvse.plan.check` runs every family's
``check`` after the checks all families share (:func:`polyvse.config.check_config`);
``tests/test_families.py`` holds this table, the schema's list of families, the loaders and the rule files to
each other. Kept free of torch (the workflow reads it while building the DAG): a trainer is named here
and imported only by :meth:`Family.trainer_function`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from polyvse.config import (
    JOINT_FAMILY,
    MLMME_FAMILY,
    SPEECH_FAMILY,
    TRANSLATOR_FAMILY,
    WORD_LAYOUTS,
    check_word_config,
    variant_settings,
)
from polyvse.speech.settings import check_speech_config, speech_variant_settings
from polyvse.train.joint_settings import check_joint_config, joint_variant_settings
from polyvse.train.mlmme_runs import check_mlmme_config, mlmme_block
from polyvse.train.translator_runs import check_translator_config, translator_block

Check = Callable[[Mapping, Mapping], None]
"""``check(config, schema)``: raise :class:`polyvse.errors.ConfigError` naming the key of the first bad setting."""


@dataclass(frozen=True)
class Family:
    """One model family as the workflow sees it."""

    name: str
    """What ``variants.<name>.model`` says."""
    reproduces: str
    """The paper, and its section, whose model this is."""
    model: str
    """The module of its architecture (``polyvse.models``)."""
    checkpoint: str
    """The ``family`` its ``model.pt`` names: the key of its loader in :data:`polyvse.models.trained.LOADERS`."""
    settings_keys: tuple[str, ...]
    """The config sections its variants' settings merge (a variant overrides them in ``model_options`` and
    ``training_options``)."""
    check: Check
    """Checks its variants and the rows of its tables, after the checks every family shares."""
    settings: Callable[[Mapping, str], dict[str, Any]]
    """``settings(config, variant)``: everything a variant's training reads, merged."""
    rules: str
    """The rule file that trains it (each family's rules train a seed group in one job)."""
    inputs: tuple[str, ...]
    """The input functions of ``rules/common.smk`` that list what its trainings read, one a trainer."""
    trainers: tuple[str, ...]
    """``module:function`` of the functions its training scripts call, imported on demand."""
    layouts: tuple[str, ...]
    """The report layouts whose rows read its variants."""

    def trainer_function(self, index: int = 0) -> Callable[..., Any]:
        """The ``index``-th of :attr:`trainers`, imported."""
        module, _, function = self.trainers[index].partition(":")
        return getattr(importlib.import_module(module), function)


def _word(name: str, reproduces: str, model: str) -> Family:
    """A word (or character) family of SMALR and MULE: one trainer and one objective module per family
    (``polyvse.train.families``), every one through rule ``train``."""
    return Family(
        name=name,
        reproduces=reproduces,
        model=model,
        checkpoint=name,
        settings_keys=(f"models.{name}", "training", "text"),
        check=check_word_config,
        settings=variant_settings,
        rules="rules/train.smk",
        inputs=("train_inputs",),
        trainers=("polyvse.train.run:train_variant",),
        layouts=WORD_LAYOUTS,
    )


def _no_schema(check: Callable[[Mapping], None]) -> Check:
    """A check that reads the config alone, in :data:`Check`'s signature."""
    return lambda config, schema: check(config)


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        _word(
            "embn", "the Embedding Network (Wang et al. 2019), as MULE and SMALR §4 compare it", "polyvse.models.embn"
        ),
        _word(
            "parallel_embn",
            "PARALLEL-EmbN, EmbN with one word table a language (MULE, after Gella et al. 2017)",
            "polyvse.models.parallel_embn",
        ),
        _word(
            "mule",
            "MULE, words of every language projected into one embedding (Kim et al. 2020)",
            "polyvse.models.mule",
        ),
        _word("la", "the language-agnostic baseline on latent tokens (SMALR §3.1, §4)", "polyvse.models.hem"),
        _word("hem", "the Hybrid Embedding Model, without MCLM (SMALR §3.1)", "polyvse.models.hem"),
        _word("smalr", "SMALR: HEM with masked cross-language modelling (SMALR §3.1–3.3)", "polyvse.models.hem"),
        _word(
            "liwe",
            "LIWE, words embedded from their characters (Wehrmann et al. 2019; SMALR Tables 1–2)",
            "polyvse.models.liwe",
        ),
        Family(
            name=JOINT_FAMILY,
            reproduces="written and spoken captions and images in one space (thesis §2.3–2.4 with MULE §3.1)",
            model="polyvse.models.joint",
            checkpoint="joint",
            settings_keys=("models.joint", "speech.model", "speech.training"),
            check=check_joint_config,
            settings=joint_variant_settings,
            rules="rules/joint.smk",
            inputs=("joint_inputs",),
            trainers=("polyvse.train.joint:train_joint",),
            layouts=("any_to_any",),
        ),
        Family(
            name=SPEECH_FAMILY,
            reproduces="the grounded-speech thesis' audio encoders, objectives and multiview frameworks (§2.4)",
            model="polyvse.models.grounded_speech",
            checkpoint="grounded_speech",
            settings_keys=("speech.model", "speech.training"),
            check=check_speech_config,
            settings=speech_variant_settings,
            rules="rules/speech.smk",
            inputs=("speech_view_inputs",),
            trainers=("polyvse.train.speech:train_speech",),
            layouts=("speech", "any_to_any"),
        ),
        Family(
            name=MLMME_FAMILY,
            reproduces="MLMME's sweep: VSE per language and MLMME per β (Calixto et al. 2017, §2, §4, Table 1)",
            model="polyvse.models.mlmme",
            checkpoint="mlmme",
            settings_keys=("mlmme",),
            check=_no_schema(check_mlmme_config),
            settings=mlmme_block,
            rules="rules/mlmme.smk",
            inputs=("mlmme_train_inputs",),
            trainers=("polyvse.train.mlmme:train_mlmme",),
            layouts=("mlmme",),
        ),
        Family(
            name=TRANSLATOR_FAMILY,
            reproduces="the Translator poster's curve: a source model, then FS, T1 and T2 on n target examples (§2–3)",
            model="polyvse.models.translator",
            checkpoint="translator",
            settings_keys=("translator",),
            check=_no_schema(check_translator_config),
            settings=translator_block,
            rules="rules/translator.smk",
            inputs=("translator_source_inputs", "translator_train_inputs"),
            trainers=("polyvse.train.translator:train_source", "polyvse.train.translator:train_target"),
            layouts=("translator_curve",),
        ),
    )
}
"""Every family by the name a variant gives it, in the schema's order."""


def family_checks() -> list[Check]:
    """Each family's check once, in :data:`FAMILIES` order (the word families share one)."""
    return list(dict.fromkeys(family.check for family in FAMILIES.values()))


def family_of(config: Mapping, variant: str) -> Family:
    """The family of ``variant`` in ``config``."""
    return FAMILIES[config["variants"][variant]["model"]]
