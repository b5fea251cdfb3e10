"""The embedded synthetic data: rendered scenes of coloured shapes, captioned in eleven languages.

One module per part, in the order a dataset is made:

* :mod:`~polyvse.data.synthetic.scene`: what an image shows (groups of shapes, their colours, sizes,
  counts, positions; the kinds and shades of the long-tailed lexicon) and how it is drawn;
* :mod:`~polyvse.data.synthetic.lexicon`: the long-tailed lexicon (synonyms, shades, named kinds,
  generated names and evaluative sentences) and its Zipf draws;
* :mod:`~polyvse.data.synthetic.plan`: a caption's plan, the facts of a scene it says;
* :mod:`~polyvse.data.synthetic.languages`: one realiser per language that says a plan, and the glossaries;
* :mod:`~polyvse.data.synthetic.dataset`: the profiles' datasets (Multi30K-, MSCOCO-like, every
  language), their reference realisations and the MUSE-format dictionaries;
* :mod:`~polyvse.data.synthetic.corpus`: the text-only corpus of each language that FastText learns from.

The names below are the package's public interface.
"""

from polyvse.data.synthetic.dataset import (
    PROFILES,
    SyntheticDataset,
    build_dataset,
    image_id,
    image_rng,
    make_scene,
    plan_realisations,
    reference_captions,
    render_image,
    write_dataset,
    write_dictionaries,
)
from polyvse.data.synthetic.languages import caption, glossary, realise
from polyvse.data.synthetic.plan import CaptionPlan, Mention, caption_plan
from polyvse.data.synthetic.scene import ObjectGroup, Scene, render_scene

__all__ = [
    "PROFILES",
    "CaptionPlan",
    "Mention",
    "ObjectGroup",
    "Scene",
    "SyntheticDataset",
    "build_dataset",
    "caption",
    "caption_plan",
    "glossary",
    "image_id",
    "image_rng",
    "make_scene",
    "plan_realisations",
    "realise",
    "reference_captions",
    "render_image",
    "render_scene",
    "write_dataset",
    "write_dictionaries",
]
