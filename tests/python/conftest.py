"""Fixtures of the Python package's tests: small datasets written without gpufeed (h5py), with
gpufeed's own writer, and as jpeg-layout files (h5pack)."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import gpufeed

SHAPE = (8, 6, 3)  # height, width, channels
SAMPLES = 600  # not a multiple of the chunk (48) or of the batches the tests use

# torchrun on one node, two processes, its rendezvous store on a port of its own. Before torch 2,
# --standalone put every job's store on localhost:29400, and a second job at once joined the
# first's store as a client ("Broken pipe" when the first one ended). --redirects 1: Debian's
# torch 1.13 under Python 3.11 cannot parse torchrun's default "0" (IntFlag iteration changed).
TORCHRUN = ["-m", "torch.distributed.run", "--nnodes=1", "--rdzv_backend=c10d",
            "--rdzv_endpoint=localhost:0", "--nproc_per_node=2", "--redirects", "1", "--tee", "1"]


def pixels(n: int, shape=SHAPE) -> np.ndarray:
    """Sample i's bytes: distinct per sample and position, none zero."""
    i = np.arange(n, dtype=np.uint64)[:, None]
    b = np.arange(int(np.prod(shape)), dtype=np.uint64)[None, :]
    z = (i * np.uint64(2654435761) + b * np.uint64(40503) + np.uint64(7)) % np.uint64(251)
    return (z + 1).astype(np.uint8).reshape((n,) + tuple(shape))


def labels_of(n: int) -> np.ndarray:
    return (np.arange(n, dtype=np.int64) * 7) % 10


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def h5py_file(data_dir) -> str:
    """A user's own file: chunked /images (NHWC uint8) and /labels, no gpufeed index."""
    import h5py

    path = os.path.join(data_dir, "user.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=pixels(SAMPLES), chunks=(48,) + SHAPE)
        f.create_dataset("labels", data=labels_of(SAMPLES))
    return path


@pytest.fixture(scope="session")
def synthetic_file(data_dir) -> str:
    """A schema v1 file with its chunk index, written by gpufeed."""
    return gpufeed.write_synthetic(
        os.path.join(data_dir, "synthetic.h5"), 1000, (16, 16, 3), chunk=32, seed=5
    )


@pytest.fixture(scope="session")
def jpeg_file(data_dir) -> str:
    """A jpeg-layout file made by h5pack from a folder of JPEGs (skipped without h5pack)."""
    h5pack = os.environ.get("GPUFEED_H5PACK")
    if not h5pack:
        pytest.skip("GPUFEED_H5PACK is not set (h5pack was not built)")
    Image = pytest.importorskip("PIL.Image")

    folder = os.path.join(data_dir, "photos")
    rng = np.random.default_rng(0)
    for cls in ("cat", "dog"):
        os.makedirs(os.path.join(folder, cls), exist_ok=True)
        for i in range(40):
            h, w = rng.integers(40, 90, size=2)
            y, x = np.mgrid[0:h, 0:w]
            image = np.stack([(x * 3 + i) % 256, (y * 5) % 256, (x + y + 40 * i) % 256], axis=-1)
            Image.fromarray(image.astype(np.uint8)).save(
                os.path.join(folder, cls, f"{i:03d}.jpg"), quality=90
            )
    path = os.path.join(data_dir, "photos.h5")
    subprocess.run(
        [h5pack, "convert", folder, path, "--from", "imagefolder", "--store", "jpeg"],
        check=True,
        capture_output=True,
    )
    return path


@pytest.fixture
def tmp_copy(tmp_path):
    """Copies a file into this test's directory (to damage it)."""

    def copy(path: str) -> str:
        out = str(tmp_path / os.path.basename(path))
        shutil.copyfile(path, out)
        return out

    return copy


def epoch_samples(loader: gpufeed.Loader, epoch: int) -> list[int]:
    out: list[int] = []
    for batch in loader.epoch(epoch):
        out.extend(batch.indices)
    return out
