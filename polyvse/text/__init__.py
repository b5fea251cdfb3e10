"""Text features: tokenisation, vocabularies, word vectors."""
