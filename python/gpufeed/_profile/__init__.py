"""gpufeed.profile: the diagnosis pipebench makes of its runs, made of a Python training loop.

session       the profile object: its keywords, its start, steps and syncs, summary, results
timing        how it times the loop: waits for input, implicit steps, the run's figures
state         what it keeps, in pieces the other modules take (clock, steps, waits, habits)
torch_patches every patch of torch's internals, each checked against the torch running
dataloader    the DataLoaders it times, with their facts, counters and worker pools
fetches       what the fetches cost, in this process and in each worker (worker_side, boards)
pools         a worker pool watched: samples held, memory, deaths (memory: the limits)
watchdog      the profile's own thread: stalls and dead workers (reports: what it says)
run, live     the whole run's windows, epochs and trends; every= lines, callback, TensorBoard
habits        the loop's habits inside its steps (host reads, moves, empty_cache, forwards)
advice        the DataLoader pool's facts for the advice (remedy: packing measured apart)
finish        the end: patches undone, nothing of the user's after a failure, the diagnosis
outputs       the files it writes (run_plot: the report's run section), summary, results()

The running profile is gpufeed._profile_state's (the Loader reports to it without importing
this package, which imports the Loader through the remedy's measurement).
"""

from .session import profile

__all__ = ["profile"]
