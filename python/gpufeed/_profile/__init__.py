"""gpufeed.profile: the diagnosis pipebench makes of its runs, made of a Python training loop."""

from .session import profile

__all__ = ["profile"]
