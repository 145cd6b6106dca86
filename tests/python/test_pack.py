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
    path = gpufeed.pack(dataset, tmp_path / "packed.h5", chunk=8, keep_order=True)
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


def encoded(pixels: np.ndarray, form: str) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(pixels.squeeze()).save(out, form, **({"quality": 95} if form == "JPEG" else {}))
    return out.getvalue()


def smooth(index: int, height: int = 24, width: int = 32) -> np.ndarray:
    """A smooth RGB picture (JPEG keeps it close)."""
    y, x = np.mgrid[0:height, 0:width]
    return np.stack([(4 * x + index) % 256, (6 * y + 2 * index) % 256, (x + y + 50) % 256],
                    axis=-1).astype(np.uint8)


class Encoded(Dataset):
    """Items of (image, label) with the image as `form` gives it: JPEG or PNG bytes, a path, or
    pixels; `bad` items are replaced."""

    def __init__(self, samples: int, form: str, folder=None, bad: dict | None = None) -> None:
        self.samples, self.form, self.folder, self.bad = samples, form, folder, bad or {}

    def __len__(self) -> int:
        return self.samples

    def __getitem__(self, index: int):
        if index in self.bad:
            return self.bad[index], 0
        pixels = smooth(index)
        if self.form == "pixels":
            return pixels, index % 3
        data = encoded(pixels, "PNG" if index % 2 else "JPEG")
        if self.form == "bytes":
            return data, index % 3
        path = os.path.join(self.folder, f"{index}.img")
        with open(path, "wb") as f:
            f.write(data)
        return path, index % 3


def stored_images(path: str) -> list:
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "r") as f:
        data, offsets = f["jpeg/bytes"][...], f["jpeg/offsets"][...]
        labels = f["labels"][...]
    return [data[offsets[i]:offsets[i + 1]].tobytes() for i in range(len(labels))], labels


def read_jpeg_back(path: str):
    loader = gpufeed.Loader(path, batch_size=8, order="sequential", workers=1, size=(24, 32),
                            mean=[0, 0, 0], stddev=[1, 1, 1], output="numpy")
    return np.concatenate([x.copy() for x, _ in loader])


@pytest.mark.parametrize("form", ["bytes", "path"])
def test_jpeg_store_keeps_encoded_images_as_they_are(tmp_path, form):
    pytest.importorskip("PIL")
    folder = tmp_path / "files"
    folder.mkdir()
    dataset = Encoded(21, form, folder)
    path = gpufeed.pack(dataset, tmp_path / "out.h5", store="jpeg", chunk=4, keep_order=True)
    stored, labels = stored_images(path)
    assert stored == [encoded(smooth(i), "PNG" if i % 2 else "JPEG") for i in range(21)]
    np.testing.assert_array_equal(labels, np.arange(21) % 3)
    images = read_jpeg_back(path)  # the loader decodes JPEG and PNG alike
    assert images.shape == (21, 3, 24, 32)
    want = np.stack([smooth(i).transpose(2, 0, 1) for i in range(21)]).astype(np.float32)
    assert np.abs(images - want)[1::2].max() == 0  # PNG: lossless
    assert np.abs(images - want).mean() < 3  # JPEG at quality 95


def test_jpeg_store_encodes_pixels_and_worker_processes_change_nothing(tmp_path):
    dataset = Encoded(30, "pixels")
    serial = gpufeed.pack(dataset, tmp_path / "serial.h5", store="jpeg", chunk=8, keep_order=True)
    parallel = gpufeed.pack(dataset, tmp_path / "parallel.h5", store="jpeg", chunk=8, workers=2,
                           keep_order=True)
    assert stored_images(serial)[0] == stored_images(parallel)[0]
    assert all(image[:2] == b"\xff\xd8" for image in stored_images(serial)[0])  # JPEG
    images = read_jpeg_back(serial)
    want = np.stack([smooth(i).transpose(2, 0, 1) for i in range(30)]).astype(np.float32)
    assert np.abs(images - want).mean() < 4  # JPEG at quality 90


def test_jpeg_store_packs_an_image_folder_from_its_files(tmp_path):
    datasets = pytest.importorskip("torchvision.datasets")
    root = tmp_path / "folder"
    for index in range(12):
        label = ["cat", "dog", "emu"][index % 3]
        (root / label).mkdir(parents=True, exist_ok=True)
        (root / label / f"{index:02}.jpg").write_bytes(encoded(smooth(index), "JPEG"))
    folder = datasets.ImageFolder(str(root), transform=lambda image: 1 / 0)  # never called
    path = gpufeed.pack(folder, tmp_path / "folder.h5", store="jpeg", keep_order=True)
    stored, labels = stored_images(path)
    assert stored == [open(p, "rb").read() for p, _ in folder.samples]
    np.testing.assert_array_equal(labels, [c for _, c in folder.samples])
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "r") as f:
        assert [n.decode() for n in f["meta/class_names"][...]] == ["cat", "dog", "emu"]


@pytest.mark.parametrize(
    "bad, message",
    [
        ({5: b"\xff\xd8\xff\xe0 not a whole jpeg"}, "item 5 of Encoded cannot be packed"),
        ({7: b"GIF89a......"}, "item 7 of Encoded cannot be packed: it is a GIF image; gpufeed decodes JPEG, PNG and WebP"),
        ({2: b""}, "item 2 of Encoded cannot be packed: .*empty"),
        ({9: "/nonexistent/9.jpg"}, "item 9 of Encoded cannot be packed: cannot read "
                                    "/nonexistent/9.jpg"),
        ({4: np.zeros((8, 8, 4), np.uint8)}, "item 4 of Encoded has 4 channels"),
    ],
)
def test_jpeg_store_names_a_bad_item_and_leaves_nothing(tmp_path, bad, message):
    pytest.importorskip("PIL")
    target = tmp_path / "out" / "x.h5"
    target.parent.mkdir()
    with pytest.raises(gpufeed.FormatError, match=message):
        gpufeed.pack(Encoded(12, "bytes", bad=bad), target, store="jpeg", chunk=4)
    assert os.listdir(target.parent) == []


def test_jpeg_store_settings_are_checked(tmp_path):
    with pytest.raises(gpufeed.UsageError, match="store='png'"):
        gpufeed.pack(Encoded(3, "pixels"), tmp_path / "x.h5", store="png")
    with pytest.raises(gpufeed.UsageError, match="quality=101"):
        gpufeed.pack(Encoded(3, "pixels"), tmp_path / "x.h5", store="jpeg", quality=101)


def test_the_rate_sample_is_read_in_epochs_of_many_batches(tmp_path):
    """The advice's rate is measured on a file of 16 batches (a few items repeated), within 64
    MiB: epochs of 4 batches spent most of their time starting and ending."""
    from gpufeed._profile.remedy import repeated as _repeated

    small = [(np.zeros((8, 8, 3), np.uint8), 0)] * 5
    assert len(_repeated(small, batch_size=16)) == 260  # 5 items 52 times: >= 16 x 16
    photo = tmp_path / "a.jpg"
    photo.write_bytes(b"\xff" * 1000)
    assert len(_repeated([(str(photo), 1)] * 64, batch_size=32)) == 512
    large = [(np.zeros((1024, 1024, 3), np.uint8), 0)] * 4  # 3 MiB each: 21 fit in 64 MiB, 4 x 6 read
    assert len(_repeated(large, batch_size=16)) == 24
    huge = [(np.zeros((4096, 4096, 3), np.uint8), 0)] * 2  # over the budget: each once
    assert len(_repeated(huge, batch_size=16)) == 2
    from PIL import Image  # pixels without nbytes: measured through numpy

    picture = [(Image.new("RGB", (1024, 1024)), 0)] * 4
    assert len(_repeated(picture, batch_size=16)) == 24
