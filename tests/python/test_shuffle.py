"""Batches as mixed as a true shuffle by default: writers store samples in a seeded random
permutation (and say where each came from), the Loader measures how its order mixes the labels
and warns once about a class-sorted file read in chunk order."""

from __future__ import annotations

import os
import subprocess
import warnings

import numpy as np
import pytest

import gpufeed

h5py = pytest.importorskip("h5py")
torch = pytest.importorskip("torch")


def sorted_array_file(path: str, classes: int = 20, per_class: int = 64) -> str:
    """A user's own raw file whose labels run in class order (no gpufeed writer involved)."""
    n = classes * per_class
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=np.zeros((n, 4, 4, 3), np.uint8), chunks=(64, 4, 4, 3))
        f.create_dataset("labels", data=np.repeat(np.arange(classes), per_class))
    return path


def test_a_class_sorted_file_in_chunk_order_warns_once_with_the_fix(tmp_path):
    path = sorted_array_file(str(tmp_path / "sorted.h5"))
    with pytest.warns(gpufeed.OrderWarning, match=r"labels run in sorted stretches.*order=random"):
        loader = gpufeed.Loader(path, batch_size=64, order="chunk")
    stats_free = gpufeed.Loader  # no warning for an order that mixes
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpufeed.OrderWarning)
        stats_free(path, batch_size=64, order="random")
    assert len(loader) == 20


class SortedPairs(torch.utils.data.Dataset):
    """Items of 20 classes in class order, as an ImageFolder lists them."""

    def __init__(self, classes: int = 20, per_class: int = 32) -> None:
        self.labels = np.repeat(np.arange(classes), per_class)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        return np.full((4, 4, 3), i % 251, np.uint8), int(self.labels[i])


def test_pack_stores_a_shuffled_order_and_where_each_sample_came_from(tmp_path):
    dataset = SortedPairs()
    path = gpufeed.pack(dataset, str(tmp_path / "packed.h5"), chunk=16)
    with h5py.File(path) as f:
        source = f["/meta/source_index"][:]
        labels = f["/labels"][:]
        pixels = f["/images"][:, 0, 0, 0]
    assert sorted(source) == list(range(len(dataset))) and list(source) != sorted(source)
    assert list(source) == gpufeed._native.stored_order(len(dataset), 0)
    np.testing.assert_array_equal(labels, dataset.labels[source])
    np.testing.assert_array_equal(pixels, source % 251)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpufeed.OrderWarning)
        gpufeed.Loader(path, batch_size=64)  # chunk order, mixed: no warning
    kept = gpufeed.pack(dataset, str(tmp_path / "kept.h5"), chunk=16, keep_order=True)
    with h5py.File(kept) as f:
        np.testing.assert_array_equal(f["/labels"][:], dataset.labels)
    with pytest.warns(gpufeed.OrderWarning):
        gpufeed.Loader(kept, batch_size=64)


def test_h5pack_shuffles_a_class_sorted_folder_unless_told_to_keep_its_order(tmp_path):
    h5pack = os.environ.get("GPUFEED_H5PACK")
    if not h5pack:
        pytest.skip("GPUFEED_H5PACK is not set (h5pack was not built)")
    Image = pytest.importorskip("PIL.Image")
    folder = tmp_path / "classes"
    for c in range(8):
        (folder / f"class{c}").mkdir(parents=True)
        for i in range(12):
            Image.new("RGB", (8, 8), (c * 30, i, 100 + i * 10)).save(folder / f"class{c}" / f"{i}.png")
    shuffled, kept = str(tmp_path / "shuffled.h5"), str(tmp_path / "kept.h5")
    subprocess.run([h5pack, "convert", str(folder), shuffled], check=True, capture_output=True)
    subprocess.run([h5pack, "convert", str(folder), kept, "--keep-order"], check=True,
                   capture_output=True)
    with h5py.File(shuffled) as f:
        source, labels = f["/meta/source_index"][:], f["/labels"][:]
    assert sorted(source) == list(range(96)) and list(source) != list(range(96))
    np.testing.assert_array_equal(labels, source // 12)  # each image keeps its class
    with h5py.File(kept) as f:
        np.testing.assert_array_equal(f["/meta/source_index"][:], np.arange(96))
        np.testing.assert_array_equal(f["/labels"][:], np.arange(96) // 12)
    # The median batch of the shuffled file in chunk order is as mixed as a random order's.
    mixed = gpufeed.Loader(shuffled, batch_size=16, size=(8, 8))
    distinct = [len(set(labels.tolist())) for _, labels in mixed.epoch(0)]
    randomly = gpufeed.Loader(shuffled, batch_size=16, size=(8, 8), order="random")
    reference = [len(set(labels.tolist())) for _, labels in randomly.epoch(0)]
    assert np.median(distinct) >= 0.9 * np.median(reference)
