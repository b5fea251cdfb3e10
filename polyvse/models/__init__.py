"""Model families. Each embeds images and sentences into one joint space.

Every family exposes ``embed_images(features) -> (B, J)`` and
``embed_sentences(tokens, lengths, langs) -> (S, J)``, both L2-normalised,
plus ``parameter_counts() -> (train, test)``.
"""
