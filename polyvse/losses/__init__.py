"""Losses, one module per idea."""
