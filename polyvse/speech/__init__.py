"""speech."""
