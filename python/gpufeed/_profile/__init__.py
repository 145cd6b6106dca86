"""gpufeed.profile: the diagnosis pipebench makes of its runs, made of a Python training loop.

session    the profile object: the run, its steps and waits, the diagnosis when it ends
dataloader the inputs it times: torch DataLoaders (patched while it runs) and prof.input()
fetches    what the DataLoaders' fetches cost, in this process and in each worker process
habits     the loop's habits inside its steps (host reads, moves, empty_cache, forwards)
advice     the DataLoader pool's facts for the advice, with packing its dataset measured
outputs    the files it writes, the summary's input line and results()

The running profile is gpufeed._profile_state's (the Loader reports to it without importing
this package, which imports the Loader through gpufeed._pack).
"""

from .session import profile

__all__ = ["profile"]
