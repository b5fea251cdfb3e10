"""Training: encoded caption sets, batch sampling, the epoch loop with
checkpoints that resume."""
