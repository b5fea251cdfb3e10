"""polyvse: multilingual, visually grounded embeddings of text and speech.

The library holds all logic of the workflow; it knows nothing about Snakemake.
Sub-packages follow the DAG: data, translate, text, features, models, train,
evaluate, report, speech, align.
"""

__version__ = "0.1.0"

LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru", "hi")
"""ISO 639-1 codes the workflow knows. Tables write zh as "Cn" as the papers do."""
