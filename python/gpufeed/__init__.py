"""gpufeed: a GPU data pipeline for training, and the profiler that says why the GPU waits.

    import gpufeed
    loader = gpufeed.Loader("train.h5", batch_size=256, workers=8, device="cuda",
                            dtype="bfloat16", echo="auto", augment="crop-flip", size=(224, 224))
    for epoch in range(epochs):
        for images, labels in loader.epoch(epoch):   # torch tensors, zero-copy (DLPack)
            train_step(images, labels)

Loader.stats() is a LoaderStats and profile.results() a ProfileResults: frozen dataclasses
whose .to_dict() is the JSON pipebench writes.

Errors are gpufeed.Error and its subclasses FormatError (a file), UsageError (a keyword value,
also a ValueError) and PipelineError (a failure while an epoch runs).
"""

from ._native import Error, FormatError, PipelineError, UsageError
from ._loader import Batch, DecodeWarning, Epoch, Loader, OrderWarning
from ._pack import pack
from ._profile import profile
from ._profile.results import (CuptiCounts, EchoCounts, HostSites, IdleByCause, PracticeCheck,
                               ProfileResults, ProfileStage, RecorderCounts)
from ._stats import (CacheStats, DecodeStats, H2DRates, LoaderStats, MemoryStats, NetworkStats,
                     QueueStats, StageStats, TuningChange)
from ._synthetic import write_synthetic

from ._version import __version__  # written by the build from the project's VERSION

__all__ = [
    "Batch",
    "CacheStats",
    "CuptiCounts",
    "DecodeStats",
    "DecodeWarning",
    "EchoCounts",
    "Epoch",
    "Error",
    "FormatError",
    "H2DRates",
    "HostSites",
    "IdleByCause",
    "Loader",
    "LoaderStats",
    "MemoryStats",
    "NetworkStats",
    "OrderWarning",
    "PipelineError",
    "PracticeCheck",
    "ProfileResults",
    "ProfileStage",
    "QueueStats",
    "RecorderCounts",
    "StageStats",
    "TuningChange",
    "UsageError",
    "pack",
    "profile",
    "write_synthetic",
]
