"""gpufeed.pack's sources beside a map-style Dataset: where big image datasets come from.

- WebDataset tar shards (a path, glob or list of ``.tar`` files): each sample's ``.jpg`` /
  ``.jpeg`` / ``.png`` / ``.webp`` member and its ``.cls`` label (read with Python's tarfile; a
  sample's members share the name up to the first dot).
- Parquet files of the Hugging Face image layout (a path, glob or list of ``.parquet``): an
  ``image`` struct column with ``bytes`` and an integer ``label`` column (read with pyarrow).
- A Hugging Face ``datasets.Dataset`` with an ``Image`` column (read undecoded) and a
  ``ClassLabel`` or integer label column.

Each becomes a map-style dataset of (encoded bytes, label) items, which the jpeg layout stores as
they are: checked and decoded once for the statistics, never re-encoded."""

from __future__ import annotations

import glob
import os
import tarfile
from typing import Any, List, Optional, Sequence, Tuple

from . import _native

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")


class EncodedImages:
    """(bytes, label) items read from a list of places; `classes` when the source names them."""

    def __init__(self, name: str, classes: Optional[List[str]] = None) -> None:
        self._gpufeed_name = name
        self.classes = classes

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: int) -> Tuple[bytes, int]:
        raise NotImplementedError


def _files(source: Any) -> List[str]:
    """The files a path, a glob or a list of them names, globs sorted."""
    names = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    files: List[str] = []
    for name in map(os.fspath, names):
        if any(c in name for c in "*?["):
            matched = sorted(glob.glob(name))
            if not matched:
                raise _native.UsageError(f"gpufeed.pack: no file matches {name}")
            files.extend(matched)
        else:
            files.append(name)
    for f in files:
        if not os.path.isfile(f):
            raise _native.UsageError(f"gpufeed.pack: {f} is not a file")
    return files


class TarImages(EncodedImages):
    """WebDataset tar shards: every sample's image member and .cls label, indexed once; an
    uncompressed tar's images are read where they lie (one seek and read each)."""

    def __init__(self, files: Sequence[str]) -> None:
        super().__init__(files[0] if len(files) == 1 else f"{files[0]} (and {len(files) - 1} more)")
        self.files = list(files)
        self.index: List[Tuple[int, int, int, bytes]] = []  # file, offset, size, or the bytes
        self.labels: List[int] = []
        for number, path in enumerate(self.files):
            self._index(number, path)
        if not self.index:
            raise _native.FormatError(f"gpufeed.pack: {self._gpufeed_name} holds no image member "
                                      f"({'/'.join(IMAGE_SUFFIXES)}) with a .cls label")

    def _index(self, number: int, path: str) -> None:
        samples: dict = {}
        try:
            try:  # an uncompressed tar (WebDataset's): its images are read where they lie
                tar, seekable = tarfile.open(path, "r:"), True
            except tarfile.ReadError:  # compressed: its images are kept as they are indexed
                tar, seekable = tarfile.open(path, "r:*"), False
            with tar:
                for member in tar:
                    if not member.isfile():
                        continue
                    folder, _, base = member.name.rpartition("/")
                    key, _, suffix = base.partition(".")
                    entry = samples.setdefault((folder, key), {})
                    suffix = "." + suffix.lower()
                    if suffix in IMAGE_SUFFIXES:
                        data = b"" if seekable else tar.extractfile(member).read()
                        entry["image"] = (member.offset_data, member.size, data)
                    elif suffix == ".cls":
                        entry["label"] = tar.extractfile(member).read()
        except (tarfile.TarError, OSError) as e:
            raise _native.FormatError(f"gpufeed.pack: cannot read {path}: {e}") from None
        for (folder, key), entry in samples.items():
            if "image" not in entry:
                continue
            where = f"{path}: sample {folder + '/' if folder else ''}{key}"
            if "label" not in entry:
                raise _native.FormatError(f"gpufeed.pack: {where} has no .cls label")
            try:
                label = int(entry["label"].decode().strip())
            except ValueError:
                raise _native.FormatError(f"gpufeed.pack: {where}: its .cls is not an integer "
                                          f"({entry['label'][:20]!r})") from None
            offset, size, data = entry["image"]
            self.index.append((number, offset, size, data))
            self.labels.append(label)

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, index: int) -> Tuple[bytes, int]:
        number, offset, size, data = self.index[index]
        if not data:
            with open(self.files[number], "rb") as f:
                f.seek(offset)
                data = f.read(size)
        return data, self.labels[index]


class ParquetImages(EncodedImages):
    """Parquet files of the Hugging Face layout: `image` (struct of `bytes`, `path`) and `label`.
    A file's two columns are read whole the first time one of its rows is asked for."""

    def __init__(self, files: Sequence[str], image: str = "image", label: str = "label") -> None:
        import pyarrow.parquet as pq

        super().__init__(files[0] if len(files) == 1 else f"{files[0]} (and {len(files) - 1} more)")
        self.files, self.image, self.label = list(files), image, label
        self.starts = [0]
        for path in self.files:
            try:
                schema = pq.read_schema(path)
                rows = pq.ParquetFile(path).metadata.num_rows
            except Exception as e:  # pyarrow's errors have no common base
                raise _native.FormatError(f"gpufeed.pack: cannot read {path}: {e}") from None
            self._check_schema(path, schema)
            self.starts.append(self.starts[-1] + rows)
        self._cached: Tuple[int, Any, Any] = (-1, None, None)

    def _check_schema(self, path: str, schema: Any) -> None:
        import pyarrow as pa

        names = schema.names
        if self.image not in names or self.label not in names:
            raise _native.FormatError(
                f"gpufeed.pack: {path} has the columns {names}; the Hugging Face image layout "
                f"has '{self.image}' (a struct with 'bytes') and '{self.label}' (an integer)")
        image_type = schema.field(self.image).type
        if not (pa.types.is_struct(image_type) and image_type.get_field_index("bytes") >= 0):
            raise _native.FormatError(f"gpufeed.pack: {path}: column '{self.image}' is "
                                      f"{image_type}, not a struct with 'bytes'")
        if not pa.types.is_integer(schema.field(self.label).type):
            raise _native.FormatError(f"gpufeed.pack: {path}: column '{self.label}' is "
                                      f"{schema.field(self.label).type}, not an integer")
        self.classes = _class_names_of(schema, self.label) or self.classes

    def __len__(self) -> int:
        return self.starts[-1]

    def __getitem__(self, index: int) -> Tuple[bytes, int]:
        import bisect

        import pyarrow.parquet as pq

        number = bisect.bisect_right(self.starts, index) - 1
        if self._cached[0] != number:
            table = pq.read_table(self.files[number], columns=[self.image, self.label])
            images = table.column(self.image).combine_chunks().field("bytes")
            self._cached = (number, images, table.column(self.label).to_numpy())
        _, images, labels = self._cached
        row = index - self.starts[number]
        data = images[row].as_py()
        if not data:
            raise _native.FormatError(f"gpufeed.pack: {self.files[number]}: row {row} has no "
                                      f"image bytes")
        return data, int(labels[row])


def _class_names_of(schema: Any, label: str) -> Optional[List[str]]:
    """The ClassLabel names the datasets library keeps in a Parquet file's metadata."""
    import json

    meta = (schema.metadata or {}).get(b"huggingface")
    try:
        feature = json.loads(meta)["info"]["features"][label]
        return [str(n) for n in feature["names"]] if feature.get("_type") == "ClassLabel" else None
    except (TypeError, KeyError, ValueError):
        return None


class HuggingFaceImages(EncodedImages):
    """A datasets.Dataset with an Image column, read undecoded: each row's encoded bytes (or its
    file when the column holds paths) and its label."""

    def __init__(self, dataset: Any) -> None:
        import datasets

        features = dataset.features
        images = [n for n, f in features.items() if isinstance(f, datasets.Image)]
        labels = [n for n, f in features.items() if isinstance(f, datasets.ClassLabel)] or \
            [n for n in ("label", "labels") if n in features]
        if not images or not labels:
            raise _native.UsageError(
                f"gpufeed.pack: the datasets.Dataset has the features {list(features)}; it needs "
                "an Image column and a ClassLabel (or integer 'label') column")
        self.image, self.label = images[0], labels[0]
        label_feature = features[self.label]
        super().__init__(getattr(dataset, "info", None) and dataset.info.dataset_name or
                         "a datasets.Dataset",
                         list(label_feature.names) if hasattr(label_feature, "names") else None)
        self.dataset = dataset.cast_column(self.image, datasets.Image(decode=False))

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Tuple[bytes, int]:
        row = self.dataset[index]
        image = row[self.image]
        data = image.get("bytes") or (image.get("path") and open(image["path"], "rb").read())
        if not data:
            raise _native.FormatError(f"gpufeed.pack: row {index} of {self._gpufeed_name} has "
                                      "no image bytes")
        return data, int(row[self.label])


def encoded_source(source: Any) -> Optional[EncodedImages]:
    """`source` as (bytes, label) items when it is a tar, Parquet or datasets source, else
    None (a map-style Dataset, packed as it is)."""
    if type(source).__module__.startswith("datasets.") and hasattr(source, "features"):
        return HuggingFaceImages(source)
    paths = isinstance(source, (str, os.PathLike)) or (
        isinstance(source, (list, tuple)) and source and
        all(isinstance(s, (str, os.PathLike)) for s in source))
    if not paths:
        return None
    files = _files(source)
    if all(f.endswith(".tar") or ".tar." in f for f in files):
        return TarImages(files)
    if all(f.endswith(".parquet") for f in files):
        return ParquetImages(files)
    raise _native.UsageError(f"gpufeed.pack: {files[0]}: give .tar (WebDataset) or .parquet "
                             "files, one kind at a time, or a map-style Dataset")
