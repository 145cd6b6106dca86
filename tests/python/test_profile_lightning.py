"""gpufeed.profile around a framework's loop (PyTorch Lightning's Trainer.fit): the framework's
own calls (its torch.cuda.empty_cache() at fit start, its host reads of logged values) are not
the user's practices, the training and validation DataLoaders are told apart, and the diagnosis
is of the loader that fed the training steps. A plain script's own .item() and empty_cache()
inside its steps are still found."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gpufeed

torch = pytest.importorskip("torch")
try:
    import pytorch_lightning as pl
except ImportError as error:  # not a skip: CI's venv has it, and a skipped test proves nothing
    raise ImportError(f"{error}; .ci/python-env installs PyTorch Lightning into build/venv "
                      "(tests/python/lightning-requirements.txt)") from error
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

BATCH, VALIDATION_BATCH, EPOCHS = 8, 4, 2


@pytest.fixture(autouse=True)
def lightning_on_debian_torch(monkeypatch):
    """Debian's torch 1.13 cannot import torch.distributed._shard under Python 3.11 (a dataclass
    with a mutable default), which every LightningModule's constructor imports only to save
    ShardedTensors; these modules have none."""
    try:
        import torch.distributed._shard.sharded_tensor  # noqa: F401
    except ValueError:
        monkeypatch.setattr(pl.LightningModule,
                            "_register_sharded_tensor_state_dict_hooks_if_available",
                            lambda self: None)


class TinyClassifier(pl.LightningModule):
    """A small conv net on 3x8x8 images; `read_loss` makes its training step read the loss on
    the host, as a user's own logging would."""

    def __init__(self, read_loss: bool = False) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),
                                       torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 2))
        self.read_loss = read_loss
        self.training_steps = 0
        self.losses: list = []

    def training_step(self, batch, index):
        images, labels = batch
        loss = torch.nn.functional.cross_entropy(self.net(images), labels)
        self.log("loss", loss, prog_bar=True)  # Lightning reads it on the host, not the user
        if self.read_loss:
            self.losses.append(loss.item())  # the user's own host read
        self.training_steps += 1
        return loss

    def validation_step(self, batch, index):
        images, labels = batch
        self.log("val_loss", torch.nn.functional.cross_entropy(self.net(images), labels))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def images(samples: int, seed: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(samples, 3, 8, 8, generator=generator),
                         torch.randint(0, 2, (samples,), generator=generator))


def fit(module: TinyClassifier, root) -> tuple:
    """Trainer.fit as its documentation shows it, on the CPU, inside a profile: training and
    validation DataLoaders (one worker each, started again every epoch), the progress bar,
    the logger and checkpoints left on. Returns the profile and the trainer."""
    training = DataLoader(images(48, 0), batch_size=BATCH, shuffle=True, num_workers=1)
    validation = DataLoader(images(20, 1), batch_size=VALIDATION_BATCH, num_workers=1)
    trainer = pl.Trainer(max_epochs=EPOCHS, accelerator="cpu", devices=1, default_root_dir=root)
    with gpufeed.profile(measure_pack=False) as prof:
        trainer.fit(module, training, validation)
    return prof, trainer


def test_lightnings_own_calls_are_not_the_users_practices(tmp_path):
    module = TinyClassifier()
    prof, trainer = fit(module, tmp_path)
    results = prof.results()
    assert module.training_steps == trainer.global_step == EPOCHS * 48 // BATCH
    practices = {p.name: p for p in results.practices}
    loop = practices["training_loop"]
    # Lightning's empty_cache() when fit starts, before any batch, is not the loop's.
    assert "empty_cache() called" not in loop.finding and loop.status == "ok", loop
    # Lightning reads the logged values, its checkpoint's monitor and its batch sizes on the
    # host, and moves its modules (.cpu()), itself: none of it is the user's step, and no read
    # is pinned on a file of Lightning's.
    reads = results.host_reads
    assert reads.count == 0 and reads.sites == [], reads
    assert "host reads" not in practices["host_sync"].finding, practices["host_sync"]


def test_the_training_and_validation_loaders_are_counted_apart(tmp_path):
    module = TinyClassifier()
    prof, trainer = fit(module, tmp_path)
    results = prof.results()
    by_batch_size = {i["batch_size"]: i for i in results.inputs}
    assert len(results.inputs) == 2 and set(by_batch_size) == {BATCH, VALIDATION_BATCH}
    training, validation = by_batch_size[BATCH], by_batch_size[VALIDATION_BATCH]
    # The training loader's batches are exactly the training steps', its samples theirs.
    assert training["role"] == "training" and training["diagnosed"], training
    assert training["batches"] == trainer.global_step, training
    assert training["samples"] == trainer.global_step * BATCH == EPOCHS * 48, training
    assert training["fetch"]["samples"] == EPOCHS * 48, training  # its workers' own fetches
    # Lightning's sanity check and each epoch's validation: evaluation, never mixed in.
    assert validation["role"] == "evaluation" and not validation["diagnosed"], validation
    assert validation["samples"] == validation["batches"] * VALIDATION_BATCH, validation
    assert validation["batches"] >= EPOCHS * 20 // VALIDATION_BATCH, validation
    # Worker pools started once an epoch by each loader, counted per loader: the training
    # loader's are the epochs', the validation loader's also its sanity check's.
    assert training["starts"] == EPOCHS, training
    assert validation["starts"] == EPOCHS + 1, validation
    # The throughput and the diagnosis are the training loader's.
    assert results.samples == EPOCHS * 48, results.samples
    summary = prof.summary()
    assert f"{training['batches']} from DataLoader(num_workers=1, batch_size={BATCH}) " \
           f"(training, diagnosed)" in summary, summary
    assert f"{validation['batches']} from DataLoader(num_workers=1, batch_size=" \
           f"{VALIDATION_BATCH}) (evaluation)" in summary, summary
    for rec in results.profile["recommendations"]:
        if rec["kind"] == "persistent_workers":
            assert rec["reason"].startswith(f"the workers started {EPOCHS} times"), rec


def test_a_host_read_in_the_users_own_training_step_is_still_found(tmp_path):
    module = TinyClassifier(read_loss=True)
    prof, trainer = fit(module, tmp_path)
    source, first = inspect.getsourcelines(TinyClassifier.training_step)
    line = next(n for n, text in enumerate(source, first) if "loss.item()" in text)
    reads = prof.results().host_reads
    (site,) = reads.sites
    assert site["where"] == f"test_profile_lightning.py:{line}" and site["call"] == ".item()"
    assert reads.count == trainer.global_step == len(module.losses), reads  # one a step
    host_sync = {p.name: p for p in prof.results().practices}["host_sync"]
    assert f"test_profile_lightning.py:{line} .item()" in host_sync.finding, host_sync


def test_the_profile_callback_logs_its_live_figures_to_the_trainers_logger(tmp_path):
    # gpufeed.lightning.ProfileCallback profiles fit from its start to its end and logs the
    # live figures through the trainer's own logger: TensorBoard's, written to event files.
    from gpufeed.lightning import ProfileCallback
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    seen = []
    callback = ProfileCallback(every=0.05, callback=seen.append, measure_pack=False,
                               report=str(tmp_path / "run.html"))
    assert isinstance(callback, pl.Callback)
    logger = pl.loggers.TensorBoardLogger(str(tmp_path), name="logs")
    training = DataLoader(images(96, 0), batch_size=BATCH, num_workers=1)
    trainer = pl.Trainer(max_epochs=EPOCHS, accelerator="cpu", devices=1, logger=logger,
                         callbacks=[callback], default_root_dir=tmp_path, log_every_n_steps=1)
    trainer.fit(TinyClassifier(), training)
    assert gpufeed.profile.current() is None  # ended with fit
    results = callback.profile.results()
    (inputs,) = results.inputs
    assert inputs["batches"] == trainer.global_step == EPOCHS * 96 // BATCH, inputs
    assert seen, "no live figures in the run"
    events = EventAccumulator(logger.log_dir)
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"gpufeed/input_wait", "gpufeed/samples_per_s"} <= tags, tags
    assert (tmp_path / "run.html").exists()


PLAIN_SCRIPT = """
    import json, sys
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    import gpufeed

    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(40, 4), torch.randint(0, 2, (40,))), batch_size=8)
    with gpufeed.profile(measure_pack=False) as prof:
        torch.cuda.empty_cache()  # before the loop: not in a step
        for x, y in loader:
            with prof.step():
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad(); loss.backward(); optimizer.step()
                print(loss.item(), file=sys.stderr)  # READ
                torch.cuda.empty_cache()  # EMPTY
    json.dump(prof.results().to_dict(), sys.stdout)
"""


def test_a_plain_scripts_own_item_and_empty_cache_in_its_steps_are_found(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(PLAIN_SCRIPT))
    lines = script.read_text().splitlines()
    read_line = next(n for n, text in enumerate(lines, 1) if text.endswith("# READ"))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=os.environ, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)
    reads = results["host_reads"]
    assert reads["count"] == 5 and reads["per_step"] == 1.0, reads
    (site,) = reads["sites"]
    assert site["where"] == f"train.py:{read_line}" and site["call"] == ".item()", site
    loop = {p["name"]: p for p in results["practices"]}["training_loop"]
    # The five inside the steps, not the one before the loop.
    assert loop["status"] == "warn" and "called 5 times" in loop["finding"], loop
