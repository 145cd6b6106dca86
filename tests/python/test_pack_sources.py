"""gpufeed.pack of where big image datasets come from: WebDataset tar shards (made by tar),
Parquet files of the Hugging Face image layout (pyarrow, and the datasets library's own
to_parquet) and a datasets.Dataset with its Image column undecoded. The stored bytes are the
source's own, so the pixels are the source's decoded images; bad members and columns are named."""

from __future__ import annotations

import io
import os
import subprocess

import numpy as np
import pytest

import gpufeed
from test_s3 import moto, s3_env  # noqa: F401 (fixtures)

h5py = pytest.importorskip("h5py")
Image = pytest.importorskip("PIL.Image")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

FORMATS = ("JPEG", "PNG", "WEBP")
SUFFIX = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp"}


def encoded(i: int) -> tuple:
    """Image i: a smooth picture of its own size in JPEG, PNG or WebP, and its label."""
    h, w = 20 + i % 7, 24 + i % 5
    y, x = np.mgrid[0:h, 0:w]
    pixels = np.stack([(x * 9 + i) % 256, (y * 7) % 256, (x + y + 11 * i) % 256], -1)
    out = io.BytesIO()
    fmt = FORMATS[i % 3]
    Image.fromarray(pixels.astype(np.uint8)).save(out, fmt, quality=90)
    return fmt, out.getvalue(), i % 4


N = 30


def stored(path: str) -> dict:
    """{source index: (stored bytes, label)} of a packed jpeg-layout file."""
    with h5py.File(path, "r") as f:
        data, offsets = f["/jpeg/bytes"][()], f["/jpeg/offsets"][()]
        labels, sources = f["/labels"][()], f["/meta/source_index"][()]
    return {int(s): (data[offsets[k]:offsets[k + 1]].tobytes(), int(labels[k]))
            for k, s in enumerate(sources)}


def assert_same_images(path: str) -> None:
    got = stored(path)
    assert sorted(got) == list(range(N))
    for i, (data, label) in got.items():
        _, source, source_label = encoded(i)
        assert data == source, f"image {i} was not stored as it is"  # never re-encoded
        assert label == source_label
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")),
                                      np.asarray(Image.open(io.BytesIO(source)).convert("RGB")))


@pytest.fixture
def tars(tmp_path) -> list:
    """Two WebDataset shards written by tar: samples 0-14 and 15-29."""
    shards = []
    for shard, samples in enumerate((range(0, 15), range(15, N))):
        folder = tmp_path / f"members-{shard}"
        folder.mkdir()
        names = []
        for i in samples:
            fmt, data, label = encoded(i)
            (folder / f"{i:06d}.{SUFFIX[fmt]}").write_bytes(data)
            (folder / f"{i:06d}.cls").write_text(f"{label}\n")
            names += [f"{i:06d}.{SUFFIX[fmt]}", f"{i:06d}.cls"]
        tar = str(tmp_path / f"shard-{shard:04d}.tar")
        subprocess.run(["tar", "-cf", tar, "-C", str(folder), *names], check=True)
        shards.append(tar)
    return shards


def parquet_files(tmp_path) -> list:
    files = []
    for part, samples in enumerate((range(0, 12), range(12, N))):
        rows = [encoded(i) for i in samples]
        table = pa.table({
            "image": pa.array([{"bytes": d, "path": f"{i}.{SUFFIX[f]}"} for i, (f, d, _) in
                               zip(samples, rows)],
                              pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
            "label": pa.array([label for _, _, label in rows], pa.int64()),
        })
        path = str(tmp_path / f"train-{part:05d}-of-00002.parquet")
        pq.write_table(table, path)
        files.append(path)
    return files


def test_webdataset_tars_are_stored_as_they_are(tars, tmp_path):
    out = gpufeed.pack(str(tmp_path / "shard-*.tar"), str(tmp_path / "tars.h5"), seed=1)
    assert_same_images(out)
    images, labels = next(iter(gpufeed.Loader(out, batch_size=N, size=(16, 16), device="cpu")))
    assert tuple(images.shape) == (N, 3, 16, 16)


def test_parquet_files_are_stored_as_they_are(tmp_path):
    files = parquet_files(tmp_path)
    assert_same_images(gpufeed.pack(files, str(tmp_path / "parquet.h5"), seed=2, workers=2))


def test_a_datasets_dataset_is_read_undecoded(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = [encoded(i) for i in range(N)]
    features = datasets.Features({"image": datasets.Image(),
                                  "label": datasets.ClassLabel(names=["a", "b", "c", "d"])})
    dataset = datasets.Dataset.from_dict(
        {"image": [{"bytes": d, "path": None} for _, d, _ in rows],
         "label": [label for _, _, label in rows]}, features=features)
    out = gpufeed.pack(dataset, str(tmp_path / "hf.h5"), seed=3)
    assert_same_images(out)
    with h5py.File(out, "r") as f:
        assert [n.decode() for n in f["/meta/class_names"][()]] == ["a", "b", "c", "d"]
    # The same rows as the datasets library writes them to Parquet, its class names kept.
    dataset.to_parquet(str(tmp_path / "hf.parquet"))
    again = gpufeed.pack(str(tmp_path / "hf.parquet"), str(tmp_path / "hf2.h5"), seed=3)
    assert_same_images(again)
    with h5py.File(again, "r") as f:
        assert [n.decode() for n in f["/meta/class_names"][()]] == ["a", "b", "c", "d"]


def test_a_parquet_source_packs_in_shards(tmp_path):
    out = gpufeed.pack(parquet_files(tmp_path), str(tmp_path / "shards"), shard_size=4000, seed=2)
    loader = gpufeed.Loader(out, batch_size=N, size=(16, 16), order="sequential", device="cpu")
    assert loader.path == out and len(loader) == 1
    assert sorted(int(v) for _, ls in loader.epoch(0) for v in np.asarray(ls)) == \
        sorted(encoded(i)[2] for i in range(N))


def test_a_tar_sample_without_a_label_is_named(tars, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "000001.jpg").write_bytes(encoded(0)[1])
    subprocess.run(["tar", "-cf", str(tmp_path / "bad.tar"), "-C", str(folder), "000001.jpg"],
                   check=True)
    with pytest.raises(gpufeed.FormatError, match=r"bad.tar: sample 000001 has no .cls label"):
        gpufeed.pack(str(tmp_path / "bad.tar"), str(tmp_path / "bad.h5"))
    assert not os.path.exists(tmp_path / "bad.h5")


def test_a_damaged_image_in_a_tar_is_named(tars, tmp_path):
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / "000007.jpg").write_bytes(encoded(0)[1][:60])
    (folder / "000007.cls").write_text("1")
    subprocess.run(["tar", "-cf", str(tmp_path / "damaged.tar"), "-C", str(folder),
                    "000007.jpg", "000007.cls"], check=True)
    with pytest.raises(gpufeed.FormatError, match="item 0 of .*damaged.tar"):
        gpufeed.pack(str(tmp_path / "damaged.tar"), str(tmp_path / "damaged.h5"))
    assert not os.path.exists(tmp_path / "damaged.h5")


def test_parquet_without_the_image_layout_is_named(tmp_path):
    path = str(tmp_path / "other.parquet")
    pq.write_table(pa.table({"img": pa.array([b"x"]), "label": pa.array([1])}), path)
    with pytest.raises(gpufeed.FormatError, match="other.parquet has the columns"):
        gpufeed.pack(path, str(tmp_path / "other.h5"))


def h5pack(*args: str) -> subprocess.CompletedProcess:
    tool = os.environ.get("GPUFEED_H5PACK")
    if not tool:
        pytest.skip("GPUFEED_H5PACK is not set (h5pack was not built)")
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)


def test_h5pack_reads_tar_shards_through_libarchive(tars, tmp_path):
    out = str(tmp_path / "wds.h5")
    done = h5pack("convert", str(tmp_path / "shard-*.tar"), out, "--from", "webdataset")
    assert done.returncode == 0, done.stderr
    assert_same_images(out)
    assert h5pack("verify", out).returncode == 0
    # A directory of tars, in shards.
    folder = tmp_path / "tars"
    folder.mkdir()
    for tar in tars:
        os.rename(tar, folder / os.path.basename(tar))
    sharded = str(tmp_path / "wds-shards")
    done = h5pack("convert", str(folder), sharded, "--from", "webdataset", "--shard-size", "8KB")
    assert done.returncode == 0, done.stderr
    loader = gpufeed.Loader(sharded, batch_size=N, size=(16, 16), device="cpu")
    assert loader.stats is not None and len(os.listdir(sharded)) > 2


def test_h5pack_reads_tar_shards_from_object_storage(tars, s3_env, tmp_path):
    for tar in tars:
        gpufeed._native.upload_file(tar, f"s3://data/wds/{os.path.basename(tar)}")
    out = str(tmp_path / "from-s3.h5")
    done = h5pack("convert", "s3://data/wds/shard-*.tar", out, "--from", "webdataset")
    assert done.returncode == 0, done.stderr
    assert_same_images(out)


def test_h5pack_names_a_truncated_tar_and_a_sample_without_label(tars, tmp_path):
    with open(tars[1], "r+b") as f:
        f.truncate(os.path.getsize(tars[1]) // 3)
    done = h5pack("convert", str(tmp_path / "shard-*.tar"), str(tmp_path / "t.h5"), "--from",
                  "webdataset")
    assert done.returncode == 1 and "shard-0001.tar" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not os.path.exists(tmp_path / "t.h5")
    folder = tmp_path / "nolabel"
    folder.mkdir()
    (folder / "000003.png").write_bytes(encoded(1)[1])
    subprocess.run(["tar", "-cf", str(tmp_path / "nolabel.tar"), "-C", str(folder), "000003.png"],
                   check=True)
    done = h5pack("convert", str(tmp_path / "nolabel.tar"), str(tmp_path / "n.h5"))
    assert done.returncode == 1 and "nolabel.tar: sample 000003 has no .cls label" in done.stderr
    done = h5pack("convert", str(tmp_path / "shard-0000.tar"), str(tmp_path / "r.h5"), "--store", "raw")
    assert done.returncode == 2 and "--store jpeg" in done.stderr
