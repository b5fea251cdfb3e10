"""Text features: tokenisation, vocabularies, word vectors, MUSE-format bilingual dictionaries."""
