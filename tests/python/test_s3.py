"""Datasets in S3-compatible object storage, against a real server on loopback (moto's
standalone server, tests/common/s3_server.py): the Loader reads s3:// exactly as it reads the
local file, h5pack uploads, inspects and verifies s3:// files, cache_dir serves later epochs from
disk, and a failing server (a fault-injecting proxy) slows the job without losing a sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gpufeed

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "common", "s3_server.py")
BUCKET = "data"

pytest.importorskip("moto", reason="moto (python/requirements-dev.txt) is not installed")


class Endpoint:
    """One s3_server.py process: its URL, stopped by closing its standard input."""

    def __init__(self, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
        self.process = subprocess.Popen(
            [sys.executable, SERVER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError(f"s3_server.py {' '.join(args)} did not start: {self.url!r}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture(scope="module")
def moto():
    server = Endpoint("moto", "--bucket", BUCKET)
    yield server
    server.stop()


@pytest.fixture
def s3_env(moto, monkeypatch):
    """The standard AWS variables pointing at the moto server (signed requests)."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN", "AWS_NO_SIGN_REQUEST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing-secret-never-shown")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "5")
    return moto


def h5pack(*args: str) -> subprocess.CompletedProcess:
    tool = os.environ.get("GPUFEED_H5PACK")
    if not tool:
        pytest.skip("GPUFEED_H5PACK is not set (h5pack was not built)")
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)


def upload(local: str, key: str) -> str:
    """Copies a local file to s3://data/KEY (the library's uploader, which h5pack uses)."""
    url = f"s3://{BUCKET}/{key}"
    gpufeed._native.upload_file(local, url)
    return url


def batches(loader: gpufeed.Loader, epoch: int):
    out = []
    for images, labels in loader.epoch(epoch):
        out.append((np.array(images), np.array(labels)))
    return out


def same_batches(a, b) -> None:
    assert len(a) == len(b)
    for (ia, la), (ib, lb) in zip(a, b):
        np.testing.assert_array_equal(la, lb)
        np.testing.assert_array_equal(ia, ib)


def test_the_loader_reads_an_s3_file_exactly_as_the_local_file(s3_env, synthetic_file):
    url = upload(synthetic_file, "synthetic.h5")
    settings = dict(batch_size=64, workers=2, seed=3, device="cpu")
    local = batches(gpufeed.Loader(synthetic_file, **settings), 1)
    remote_loader = gpufeed.Loader(url, **settings)
    remote = batches(remote_loader, 1)
    same_batches(local, remote)
    network = remote_loader.stats().network
    assert network is not None and network.requests > 0
    assert network.retries == 0
    assert gpufeed.Loader(synthetic_file, **settings).stats().network is None


def test_a_jpeg_layout_file_reads_the_same_from_s3(s3_env, jpeg_file):
    url = upload(jpeg_file, "photos.h5")
    settings = dict(batch_size=16, workers=2, seed=1, device="cpu", size=(32, 32))
    same_batches(
        batches(gpufeed.Loader(jpeg_file, **settings), 0),
        batches(gpufeed.Loader(url, **settings), 0),
    )


def test_h5pack_converts_to_inspects_and_verifies_s3(s3_env, data_dir):
    url = f"s3://{BUCKET}/packed/raw.h5"
    done = h5pack("convert", "300:12x10x3", url, "--chunk", "16")
    assert done.returncode == 0, done.stderr
    assert f"uploaded {url}" in done.stdout
    info = h5pack("info", url, "--json")
    assert info.returncode == 0, info.stderr
    facts = json.loads(info.stdout)
    assert facts["samples"] == 300 and facts["shape"] == [12, 10, 3]
    verify = h5pack("verify", url)
    assert verify.returncode == 0, verify.stderr + verify.stdout
    assert "ok: 300 samples" in verify.stdout


def test_pipebench_runs_and_sweeps_an_s3_file_and_reports_the_network(s3_env, synthetic_file,
                                                                      tmp_path):
    tool = os.environ.get("GPUFEED_PIPEBENCH")
    if not tool:
        pytest.skip("GPUFEED_PIPEBENCH is not set (pipebench was not built)")
    url = upload(synthetic_file, "bench.h5")
    report = tmp_path / "run.json"
    run = subprocess.run([tool, "run", "--data", url, "--epochs", "1", "--batch", "100",
                          "--workers", "2", "--device", "cpu", "--read-requests", "4",
                          "--json", str(report)], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "network" in run.stdout and "GETs" in run.stdout
    network = json.loads(report.read_text())["network"]
    assert network["requests"] > 0 and network["read_requests"] == 4
    sweep = subprocess.run([tool, "sweep", "--data", url, "--epochs", "1", "--batch", "100",
                            "--workers", "1,2", "--device", "cpu",
                            "--csv", str(tmp_path / "sweep.csv"),
                            "--json", str(tmp_path / "sweep.json")],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    assert len((tmp_path / "sweep.csv").read_text().splitlines()) == 3


def test_automatic_read_requests_are_what_the_workers_can_take(s3_env, synthetic_file):
    # 32 chunks of 24 KiB: the read-ahead budget alone would keep 256 GETs in flight; each
    # worker thread takes what 32 bring, so more would only queue.
    url = upload(synthetic_file, "requests.h5")
    for workers, expected in ((1, 32), (3, 96)):
        loader = gpufeed.Loader(url, batch_size=100, workers=workers, device="cpu")
        try:
            assert loader.stats().network.read_requests == expected
        finally:
            loader.close()
    loader = gpufeed.Loader(url, batch_size=100, workers=1, device="cpu", read_requests=200)
    try:
        assert loader.stats().network.read_requests == 200  # as told
    finally:
        loader.close()


def test_a_missing_key_is_one_line_that_names_it_and_never_the_secret(s3_env):
    with pytest.raises(gpufeed.FormatError) as error:
        gpufeed.Loader(f"s3://{BUCKET}/no/such.h5", device="cpu")
    message = str(error.value)
    assert "s3://data/no/such.h5" in message
    assert "404" in message and s3_env.url in message
    assert "AWS_ACCESS_KEY_ID" in message
    assert "testing-secret-never-shown" not in message
    assert "\n" not in message


def test_cache_dir_serves_the_next_epoch_from_disk(s3_env, synthetic_file, tmp_path):
    url = upload(synthetic_file, "cached.h5")
    settings = dict(batch_size=50, workers=2, seed=9, device="cpu")
    cache = tmp_path / "cache"
    loader = gpufeed.Loader(url, cache_dir=cache, **settings)
    first = batches(loader, 0)
    fetched = loader.stats().network.requests
    loader.close()  # returns once what was read is written: the cache writes in the background
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files and not any(p.name.startswith(".tmp-") for p in files)
    loader = gpufeed.Loader(url, cache_dir=cache, **settings)
    loader.reset_stats()
    second = batches(loader, 1)
    assert loader.stats().network.requests == 0, "the second epoch read the disk"
    same_batches(second, batches(gpufeed.Loader(synthetic_file, **settings), 1))
    assert len(first) == len(second) and fetched > 0


@pytest.mark.parametrize("fault", ["503", "500", "reset", "short"])
def test_a_failing_server_slows_the_job_and_loses_nothing(s3_env, synthetic_file, monkeypatch,
                                                          fault):
    url = upload(synthetic_file, f"faulty-{fault}.h5")
    proxy = Endpoint("proxy", "--target", s3_env.url, "--fault", fault, "--every", "3")
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
        settings = dict(batch_size=64, workers=2, seed=4, device="cpu")
        loader = gpufeed.Loader(url, **settings)
        remote = batches(loader, 0)
        same_batches(batches(gpufeed.Loader(synthetic_file, **settings), 0), remote)
        seen = np.concatenate([labels for _, labels in remote])
        assert len(seen) == 1000
        network = loader.stats().network
        assert network.retries > 0
        if fault == "503":
            assert network.throttled > 0
    finally:
        proxy.stop()


def test_a_server_that_always_fails_is_one_clear_error_and_no_hang(
    s3_env, synthetic_file, monkeypatch
):
    url = upload(synthetic_file, "broken.h5")
    proxy = Endpoint("proxy", "--target", s3_env.url, "--fault", "503", "--match", "GET")
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
        with pytest.raises(gpufeed.FormatError) as error:
            gpufeed.Loader(url, batch_size=64, workers=2, device="cpu")
        message = str(error.value)
        assert "503" in message and "s3://data/broken.h5" in message
        assert "\n" not in message
    finally:
        proxy.stop()


def test_a_resume_state_refuses_a_loader_that_would_deliver_other_samples(s3_env, synthetic_file):
    url = upload(synthetic_file, "resume.h5")
    settings = dict(batch_size=100, workers=2, seed=2, device="cpu")
    loader = gpufeed.Loader(url, **settings)
    it = iter(loader.epoch(0))
    next(it)
    state = loader.state_dict()
    assert len(state["next_samples"]) == 16
    gpufeed.Loader(url, **settings).load_state_dict(state)  # the same file and settings
    tampered = dict(state, next_samples="0" * 16)
    with pytest.raises(gpufeed.UsageError, match="would resume with other samples"):
        gpufeed.Loader(url, **settings).load_state_dict(tampered)


def test_a_jpeg_layout_file_in_chunk_order_is_read_in_blocks(s3_env, jpeg_file):
    # Chunk order reads a jpeg file's images in blocks of consecutive images (a few MiB), one
    # GET each; random order asks for each image's own range.
    url = upload(jpeg_file, "photos-blocks.h5")
    settings = dict(batch_size=8, workers=2, seed=1, device="cpu", size=(32, 32))

    def requests_of(order: str) -> int:
        loader = gpufeed.Loader(url, order=order, **settings)
        loader.reset_stats()
        batches(loader, 0)
        return loader.stats().network.requests

    chunk, random = requests_of("chunk"), requests_of("random")
    assert chunk <= 2, f"{chunk} GETs for a file of one block"
    assert random >= 4 * chunk, (chunk, random)


def test_a_process_that_ends_with_read_ahead_in_flight_exits_cleanly(s3_env, synthetic_file):
    # The loader left mid-epoch (its GETs in flight), and one Python never frees: the S3
    # client's request thread is stopped before OpenSSL's exit handler, never signs after it.
    url = upload(synthetic_file, "exit.h5")
    script = (
        "import gpufeed\n"
        f"kept = gpufeed.Loader({url!r}, batch_size=50, workers=2, device='cpu')\n"
        "next(iter(kept.epoch(0)))\n"
        f"dropped = gpufeed.Loader({url!r}, batch_size=50, workers=2, device='cpu')\n"
        "next(iter(dropped.epoch(1)))\n"
        "del dropped\n"
        "print('ending', flush=True)\n"
    )
    for _ in range(3):  # a race at exit: one run may pass by luck
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 0, run.stderr
        assert "ending" in run.stdout


def test_a_get_rate_cap_is_kept_under_and_the_advice_removes_requests(s3_env, jpeg_file,
                                                                       monkeypatch, tmp_path):
    # S3 refuses GETs beyond ~5,500 a second on a prefix (503 SlowDown); scaled down, 25 a
    # second. A jpeg file in random order asks for one GET an image: the loader paces itself
    # under the cap instead of dying after its retries, delivers exactly what the local file
    # gives, and the profile names the refusals and advises chunk order (one GET a block).
    url = upload(jpeg_file, "photos-capped.h5")
    proxy = Endpoint("proxy", "--target", s3_env.url, "--get-rate", "25")
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")
        settings = dict(batch_size=8, workers=2, seed=3, device="cpu", size=(32, 32),
                        order="random")
        loader = gpufeed.Loader(url, **settings)
        remote = batches(loader, 0)
        same_batches(batches(gpufeed.Loader(jpeg_file, **settings), 0), remote)
        network = loader.stats().network
        assert network.throttled > 0 and network.rate_limit > 0, network
        assert network.rate_wait_s > 0, network
        tool = os.environ.get("GPUFEED_PIPEBENCH")
        if not tool:
            return
        report = tmp_path / "capped.json"
        run = subprocess.run([tool, "run", "--data", url, "--epochs", "1", "--batch", "8",
                              "--workers", "2", "--device", "cpu", "--size", "32x32",
                              "--order", "random", "--json", str(report)],
                             capture_output=True, text=True, timeout=180, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert "paced to" in run.stdout, run.stdout
        advice = [r for r in json.loads(report.read_text())["profile"]["recommendations"]
                  if r["kind"] == "object_store"]
        assert advice, run.stdout
        assert "refused (SlowDown)" in advice[0]["reason"], advice[0]
        assert advice[0]["action"] == "--order chunk", advice[0]
    finally:
        proxy.stop()


def test_a_range_failing_after_every_retry_mid_epoch_is_one_error_and_the_next_epoch_runs(
    s3_env, data_dir, monkeypatch
):
    # One GET mid-epoch fails on both its attempts (the 60th distinct GET: past the file's
    # metadata and the first batches), then succeeds when asked again. A fixed prefetch bounds
    # how far reads run ahead of the consumer (about 3.4 GETs a batch, a few batches ahead), so
    # the failing GET cannot be sent before the first batch is delivered; prefetch=auto grows
    # that window when the consumer is slow to start (a busy machine).
    local = gpufeed.write_synthetic(os.path.join(data_dir, "midway.h5"), 4000, (32, 32, 3),
                                    chunk=16, seed=8)
    url = upload(local, "midway.h5")
    proxy = Endpoint("proxy", "--target", s3_env.url, "--fault", "500", "--match", "GET",
                     "--only-nth", "60", "--fail-first", "2")
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
        settings = dict(batch_size=50, workers=2, seed=5, device="cpu", prefetch=2)
        expected = [batches(gpufeed.Loader(local, **settings), epoch) for epoch in (0, 1)]
        loader = gpufeed.Loader(url, **settings)
        delivered = []
        with pytest.raises(gpufeed.PipelineError) as error:
            for images, labels in loader.epoch(0):
                delivered.append((np.array(images), np.array(labels)))
        message = str(error.value)
        assert "s3://data/midway.h5" in message and "bytes " in message, message
        assert "HTTP 500" in message and "after 2 attempts" in message, message
        assert "\n" not in message
        # What came before the failure is the epoch's start, each batch once and in order.
        assert 0 < len(delivered) < len(expected[0])
        same_batches(delivered, expected[0][: len(delivered)])
        # The next epoch runs whole, the failed range fetched again.
        same_batches(batches(loader, 1), expected[1])
    finally:
        proxy.stop()


def test_a_stalled_get_is_named_in_the_profiles_stall_report(s3_env, synthetic_file,
                                                              monkeypatch):
    # A GET that stalls mid-body (half of it, then nothing): the loop waits for a batch, and the
    # profile names the read in flight (stage, batch, sample) and the request on the wire with
    # its age. Ctrl-C then ends the wait with the report in the results.
    import signal
    import threading

    url = upload(synthetic_file, "stalled.h5")
    # The third GET: the first two open the file (its edges), before the loop waits.
    proxy = Endpoint("proxy", "--target", s3_env.url, "--fault", "stall", "--match", "GET",
                     "--only-nth", "3")
    timer = threading.Timer(4.0, os.kill, args=(os.getpid(), signal.SIGINT))
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
        loader = gpufeed.Loader(url, batch_size=50, workers=1, order="sequential", device="cpu")
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            with gpufeed.profile(stall=1.0, measure_pack=False) as prof:
                for _ in loader:
                    pass
    finally:
        timer.cancel()
        proxy.stop()
    (stall,) = prof.results().stalls
    assert stall["source"] == "a gpufeed.Loader's next batch", stall
    (read,) = [w for w in stall["loader_work"] if w["stage"] == "read"][:1]
    assert read["path"] == url and read["for_s"] >= 1.0, stall
    (request,) = [r for r in stall["requests"] if r["what"].startswith("GET s3://data/stalled.h5")]
    assert request["for_s"] >= 1.0, stall
    assert "on the wire for" in stall["text"] and "GET s3://data/stalled.h5" in stall["text"]
