"""gpufeed.profile for PyTorch Lightning: a Callback that profiles ``Trainer.fit`` from its start to
its end (or its exception), and logs the live figures to the trainer's loggers (TensorBoard's
included) as ``gpufeed/...`` metrics every ``every`` seconds::

    from gpufeed.lightning import ProfileCallback
    trainer = pl.Trainer(callbacks=[ProfileCallback(every=60, report="run.html")])
    trainer.fit(model, train_loader)
    print(trainer.callbacks[0].profile.summary())   # or callback.profile.results()

The class derives from the Callback of the Lightning the process imported (``lightning`` or
``pytorch_lightning``, whichever the trainer comes from), so the Trainer takes it as its own.
"""

from __future__ import annotations

import sys
from typing import Any

from ._profile import profile


def _callback_base() -> type:
    """The Callback class of the Lightning in use: the one already imported, else either."""
    for name in ("lightning.pytorch", "pytorch_lightning"):
        module = sys.modules.get(name)
        if module is not None:
            return module.Callback
    try:
        from lightning.pytorch import Callback
    except ImportError:
        from pytorch_lightning import Callback
    return Callback


def _make_class() -> type:
    base = _callback_base()

    class ProfileCallback(base):
        """Profiles a Trainer's fit: ``gpufeed.profile(**profile_keywords)`` from fit start to
        fit end, the live figures logged as metrics (``every`` seconds, default 60)."""

        def __init__(self, every: float = 60.0, **profile_keywords: Any) -> None:
            super().__init__()
            self._keywords = dict(profile_keywords, every=every)
            self._user_callback = self._keywords.pop("callback", None)
            self._trainer: Any = None
            self.profile: Any = None  # the last fit's gpufeed.profile

        def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
            self._trainer = trainer
            self.profile = profile(callback=self._log, **self._keywords)
            self.profile.__enter__()

        def _log(self, figures: Any) -> None:
            trainer = self._trainer
            metrics = {f"gpufeed/{tag}": value for tag, value in figures.scalars().items()}
            for logger in getattr(trainer, "loggers", None) or []:
                logger.log_metrics(metrics, step=trainer.global_step)
            if self._user_callback is not None:
                self._user_callback(figures)

        def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
            if self.profile is not None and profile.current() is self.profile:
                self.profile.__exit__(None, None, None)

        def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
            if self.profile is not None and profile.current() is self.profile:
                self.profile.__exit__(type(exception), exception, exception.__traceback__)

    return ProfileCallback


def __getattr__(name: str) -> Any:
    if name == "ProfileCallback":
        cls = _make_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module 'gpufeed.lightning' has no attribute {name!r}")
