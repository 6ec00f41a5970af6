"""sog: Student of Games (Schmid et al., Science Advances 2023) as a JAX research library."""

__version__ = "0.1.0"
