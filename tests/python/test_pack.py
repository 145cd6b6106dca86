"""gpufeed.pack: a map-style Dataset into a gpufeed file, read back by gpufeed.Loader as it was."""

from __future__ import annotations

import os

import numpy as np
import pytest

import gpufeed

torch = pytest.importorskip("torch")
from torch.utils.data import Dataset  # noqa: E402


class Pictures(Dataset):
    """Deterministic 6x5 RGB images in the given form; `bad` items break the contract."""

    def __init__(self, samples: int, form: str = "hwc", bad: dict | None = None) -> None:
        self.samples = samples
        self.form = form
        self.bad = bad or {}

    def __len__(self) -> int:
        return self.samples

    def pixels(self, index: int) -> np.ndarray:
        return ((np.arange(6 * 5 * 3).reshape(6, 5, 3) + 7 * index) % 256).astype(np.uint8)

    def __getitem__(self, index: int):
        if index in self.bad:
            return self.bad[index]
        hwc = self.pixels(index)
        if self.form == "chw-tensor":
            return torch.from_numpy(hwc.transpose(2, 0, 1).copy()), index % 4
        if self.form == "pil":
            from PIL import Image

            return Image.fromarray(hwc), np.int64(index % 4)
        return hwc, index % 4


def read_back(path: str):
    loader = gpufeed.Loader(path, batch_size=10, order="sequential", workers=1,
                            mean=[0, 0, 0], stddev=[1, 1, 1], output="numpy")
    images, labels = [], []
    for x, y in loader:
        images.append(x.copy())  # a batch's arrays hold its slot: keep copies
        labels.append(y.copy())
    return np.concatenate(images), np.concatenate(labels)


@pytest.mark.parametrize("form", ["hwc", "chw-tensor", "pil"])
def test_every_image_form_reads_back_as_it_was(tmp_path, form):
    if form == "pil":
        pytest.importorskip("PIL")
    dataset = Pictures(45, form)
    path = gpufeed.pack(dataset, tmp_path / "packed.h5", chunk=8)
    assert path == str(tmp_path / "packed.h5")
    images, labels = read_back(path)
    want = np.stack([dataset.pixels(i).transpose(2, 0, 1) for i in range(45)]).astype(np.float32)
    np.testing.assert_array_equal(images, want)  # NCHW floats of the same bytes
    np.testing.assert_array_equal(labels, np.arange(45) % 4)


def test_worker_processes_write_the_same_file_contents(tmp_path):
    dataset = Pictures(70)
    serial = read_back(gpufeed.pack(dataset, tmp_path / "serial.h5", chunk=16))
    parallel = read_back(gpufeed.pack(dataset, tmp_path / "parallel.h5", chunk=16, workers=2))
    np.testing.assert_array_equal(serial[0], parallel[0])
    np.testing.assert_array_equal(serial[1], parallel[1])


@pytest.mark.parametrize(
    "bad, message",
    [
        ({37: (np.zeros((6, 4, 3), np.uint8), 1)}, "item 37 of Pictures is 6x4x3 (HWC), not 6x5x3"),
        ({12: (np.zeros((6, 5, 3), np.float32), 1)}, "item 12 of Pictures is float32"),
        ({20: (np.zeros((6, 5, 3), np.uint8), "cat")}, "item 20 of Pictures has the label 'cat'"),
        ({3: np.zeros((6, 5, 3), np.uint8)}, "item 3 of Pictures is not an (image, label) pair"),
    ],
)
def test_a_bad_item_is_named_and_nothing_is_left_behind(tmp_path, bad, message):
    target = tmp_path / "out.h5"
    with pytest.raises(gpufeed.FormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gpufeed.pack(Pictures(50, bad=bad), target, chunk=8)
    assert os.listdir(tmp_path) == []  # no file, no temporary


def test_an_empty_dataset_is_a_usage_error(tmp_path):
    with pytest.raises(gpufeed.UsageError, match="no items"):
        gpufeed.pack(Pictures(0), tmp_path / "out.h5")
