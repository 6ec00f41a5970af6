"""Sound self-play (actors, query solver, trainer, buffers): a later issue builds it here."""
