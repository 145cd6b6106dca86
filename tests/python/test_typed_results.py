"""Loader.stats() and profile.results() as typed records: their fields' types against what the
native side writes, to_dict() as the JSON it wrote, keys this version does not know kept, and
the dict reading of the release before (deprecated) warning once."""

from __future__ import annotations

import dataclasses
import json
import typing
import warnings

import pytest
import torch

import gpufeed
from gpufeed import _record


def assert_typed(value, hint, where="") -> None:
    """`value` is of type `hint`, through records, lists and maps (an int is no float here:
    a field typed float gets what the native side writes as a double)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        if value is None:
            assert type(None) in args, f"{where}: None for {hint}"
            return
        (hint,) = [a for a in args if a is not type(None)]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        assert type(value) is hint, f"{where}: {type(value).__name__}, not {hint.__name__}"
        hints = typing.get_type_hints(hint)
        for f in dataclasses.fields(value):
            assert_typed(getattr(value, f.name), hints[f.name], f"{where}.{f.name}")
    elif origin is list:
        assert isinstance(value, list), f"{where}: {value!r} is no list"
        for i, item in enumerate(value):
            assert_typed(item, args[0] if args else typing.Any, f"{where}[{i}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: {value!r} is no dict"
        for key, item in value.items():
            assert isinstance(key, str), f"{where}: key {key!r}"
            assert_typed(item, args[1] if args else typing.Any, f"{where}[{key!r}]")
    elif hint is float:
        assert type(value) is float, f"{where}: {value!r} is no float"
    elif hint is int:
        assert type(value) is int, f"{where}: {value!r} is no int"
    elif hint in (str, bool):
        assert type(value) is hint, f"{where}: {value!r} is no {hint.__name__}"


def loader_run(path: str) -> gpufeed.Loader:
    loader = gpufeed.Loader(path, batch_size=100, workers=2, output="numpy")
    for _ in loader.epoch(0):
        pass
    return loader


def test_loader_stats_are_typed_attributes_and_their_json(synthetic_file):
    loader = loader_run(synthetic_file)
    stats = loader.stats()
    assert isinstance(stats, gpufeed.LoaderStats)
    assert_typed(stats, gpufeed.LoaderStats, "stats")
    assert stats.batches == 10 and stats.samples == 1000 and stats.fresh_batches == 10
    assert stats.stages["read"].items > 0 and stats.stages["normalize"].busy_s > 0
    assert isinstance(stats.stages["read"], gpufeed.StageStats)
    assert stats.cache.chunk_reads == 32 and stats.network is None  # a local file
    assert stats.decode.mode == "cpu" and stats.memory.slot_bytes > 0 and stats.extra == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.samples = 0
    # to_dict() is what the native side wrote: the same keys, order, values and types.
    written = loader._native.stats_json()
    again = gpufeed.LoaderStats.from_dict(json.loads(written))
    assert json.dumps(again.to_dict()) == json.dumps(json.loads(written))


def test_a_tuning_change_keeps_its_from_key():
    change = {"time_s": 1.5, "knob": "workers", "from": 2, "to": 4, "stage": "read",
              "reason": "the read stage was busy"}
    typed = gpufeed.TuningChange.from_dict(change)
    assert (typed.from_, typed.to, typed.knob) == (2, 4, "workers")
    assert typed.to_dict() == change and list(typed.to_dict()) == list(change)


def test_keys_this_version_does_not_know_are_kept(synthetic_file):
    raw = json.loads(loader_run(synthetic_file)._native.stats_json())
    raw["cache"]["evictions"] = 7  # keys a later native side adds
    raw["stages"]["read"]["waits"] = 2
    raw["gds"] = {"reads": 3}
    stats = gpufeed.LoaderStats.from_dict(raw)
    assert stats.extra == {"gds": {"reads": 3}}
    assert stats.cache.extra == {"evictions": 7} and stats.stages["read"].extra == {"waits": 2}
    assert stats.to_dict() == raw and list(stats.to_dict()) == list(raw)
    assert "extra={'evictions': 7}" in repr(stats.cache) and "extra" not in repr(stats.queue)
    # And a key it lacks (a verdict where nothing was analyzed) is None, and stays out.
    check = {"name": "host_sync", "status": "ok", "finding": "no host syncs"}
    typed = gpufeed.PracticeCheck.from_dict(check)
    assert typed.advice is None and typed.to_dict() == check


def profiled_dataloader_loop(tmp_path):
    dataset = torch.utils.data.TensorDataset(torch.rand(48, 3, 4, 4), torch.arange(48))
    path = tmp_path / "run.json"
    with gpufeed.profile(json=str(path), measure_pack=False) as prof:
        for images, labels in torch.utils.data.DataLoader(dataset, batch_size=8):
            (images * 2).sum()
    return prof, json.loads(path.read_text())


def test_profile_results_are_typed_attributes_and_the_json_written(tmp_path):
    prof, written = profiled_dataloader_loop(tmp_path)
    results = prof.results()
    assert isinstance(results, gpufeed.ProfileResults)
    assert_typed(results, gpufeed.ProfileResults, "results")
    assert results.timed_batches == 6 and results.steps == 6 and results.samples == 48
    assert results.samples_per_s == pytest.approx(48 / results.wall_s)
    assert 0.0 <= results.idle_by_cause.input_wait <= 1.0
    (facts,) = results.inputs
    assert facts["batch_size"] == 8 and facts["diagnosed"]
    practices = {p.name: p for p in results.practices}
    assert isinstance(practices["host_sync"], gpufeed.PracticeCheck)
    assert practices["host_sync"].status == "ok", practices["host_sync"]
    assert results.host_reads.count == 0 and results.host_reads.sites == []
    assert results.device == "cpu" and results.cupti is None and results.extra == {}
    assert isinstance(results.profile["recommendations"], list)
    # to_dict() is the file json= wrote, key for key and in its order.
    assert results.to_dict() == written
    assert list(results.to_dict()) == list(written)


def test_profile_results_of_a_gpufeed_loader_type_its_stages(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2, output="numpy")
    with gpufeed.profile() as prof:
        for _ in loader.epoch(0):
            with prof.step():
                pass
    results = prof.results()
    assert_typed(results, gpufeed.ProfileResults, "results")
    assert results.echo.fresh_batches == 10 and results.steps == 10
    assert isinstance(results.stages["read"], gpufeed.ProfileStage)
    assert results.stages["read"].items > 0


def test_a_profile_with_nothing_to_analyze_has_no_verdict_key():
    with gpufeed.profile() as prof:
        pass  # no batch, no step
    results = prof.results()
    assert_typed(results, gpufeed.ProfileResults, "results")
    assert results.verdict is None and results.steps == 0
    assert "verdict" not in results.to_dict() and "device_util" in results.to_dict()


def test_reading_as_a_dict_warns_once_a_class_with_the_same_values(synthetic_file, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setattr(_record, "warned", set())  # as in a process that has not read one yet
    stats = loader_run(synthetic_file).stats()
    prof, _ = profiled_dataloader_loop(tmp_path)
    results = prof.results()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert stats["samples"] == stats.samples == 1000
        assert stats["stages"]["read"] == stats.stages["read"].to_dict()
        assert stats.get("decode") == stats.decode.to_dict() and stats.get("nothing", 3) == 3
        assert "cache" in stats and "nothing" not in stats
        assert list(stats.keys()) == list(stats.to_dict()) == list(stats)
        assert results["idle_by_cause"] == results.idle_by_cause.to_dict()
        assert results["samples_per_s"] == results.samples_per_s
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert [str(w.message).split(" is deprecated")[0] for w in deprecations] == [
        "gpufeed: reading a LoaderStats as a dict",
        "gpufeed: reading a ProfileResults as a dict"], [str(w.message) for w in deprecations]
    assert "use .samples or .to_dict()" in str(deprecations[0].message)
    assert all(w.filename == __file__ for w in deprecations)  # the reading line's, not ours


def test_the_package_itself_reads_no_record_as_a_dict(synthetic_file, monkeypatch):
    # The profile reads the Loader's stats while it runs and when it ends (the busiest loader,
    # its stage costs, the live figures): a dict reading there would raise here.
    monkeypatch.setattr(_record, "warned", set())
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2, output="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with gpufeed.profile(every=0.01, callback=lambda figures: None) as prof:
            for _ in loader.epoch(0):
                with prof.step():
                    pass
        prof.summary()
        assert prof.results().steps == 10
