"""gpufeed.Loader(transform=...) against torchvision itself: the fused crops' and flips' parameter
distributions, the pixels of fixed crops, Normalize, the ops run per sample on the batch, and
the one-line refusals."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import gpufeed
from gpufeed import _native
from gpufeed._transform import sample_seed

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
Image = pytest.importorskip("PIL.Image")

DRAWS = 4000


def ks_statistic(a, b) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two CDFs."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    grid = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, grid, side="right") / len(a)
                               - np.searchsorted(b, grid, side="right") / len(b))))


# Critical KS value for two samples of DRAWS at alpha = 0.001, 1.95 * sqrt(2 / n).
KS_LIMIT = 1.95 * (2 / DRAWS) ** 0.5


def gpufeed_boxes(keywords: dict, width: int, height: int) -> np.ndarray:
    draws = _native.geometry_draws(keywords, width, height, 7, 0, DRAWS)
    return np.array([d[:4] for d in draws], float)


def torchvision_boxes(op, width: int, height: int) -> np.ndarray:
    torch.manual_seed(0)
    image = torch.empty(3, height, width)
    boxes = []
    for _ in range(DRAWS):
        top, left, h, w = op.get_params(image, op.scale, op.ratio)
        boxes.append((left, top, w, h))
    return np.array(boxes, float)


@pytest.mark.parametrize("width, height", [(500, 375), (1000, 90)])  # the second falls back
def test_random_resized_crop_draws_as_torchvision_does(width, height):
    op = T.RandomResizedCrop(224, scale=(0.35, 1.0), ratio=(0.6, 1.5))
    ours = gpufeed_boxes(dict(crop="random-resized", size=224, crop_scale=(0.35, 1.0),
                              crop_ratio=(0.6, 1.5)), width, height)
    theirs = torchvision_boxes(op, width, height)
    area = lambda b: b[:, 2] * b[:, 3] / (width * height)  # noqa: E731
    ratio = lambda b: np.log(b[:, 2] / b[:, 3])  # noqa: E731
    x_centre = lambda b: (b[:, 0] + b[:, 2] / 2) / width  # noqa: E731
    for name, of in (("area", area), ("log ratio", ratio), ("x centre", x_centre)):
        assert ks_statistic(of(ours), of(theirs)) < KS_LIMIT, name


def test_a_ks_test_of_this_size_tells_other_distributions_apart():
    # The test above can fail: the default scale (0.08, 1) is told apart from (0.35, 1).
    theirs = torchvision_boxes(T.RandomResizedCrop(224, scale=(0.35, 1.0)), 500, 375)
    ours = gpufeed_boxes(dict(crop="random-resized", size=224), 500, 375)
    area = lambda b: b[:, 2] * b[:, 3]  # noqa: E731
    assert ks_statistic(area(ours), area(theirs)) > KS_LIMIT


def test_random_crop_with_padding_places_as_torchvision_does():
    op = T.RandomCrop(32, padding=4)
    draws = _native.geometry_draws(dict(crop="random", size=32, crop_padding=4), 32, 32, 3, 0,
                                   DRAWS)
    # The crop's top-left in the padded image: inner offset 4 - x where the crop starts at x < 4.
    ours = [4 - d[4] if d[4] else 4 + int(d[0]) for d in draws]
    torch.manual_seed(0)
    padded = torch.empty(3, 40, 40)
    theirs = [op.get_params(padded, (32, 32))[1] for _ in range(DRAWS)]
    assert set(ours) == set(theirs) == set(range(9))
    assert ks_statistic(ours, theirs) < KS_LIMIT


def test_flips_come_at_their_rate():
    draws = _native.geometry_draws(dict(hflip=0.3, vflip=0.5, resize=(8, 8)), 8, 8, 1, 0, DRAWS)
    h = np.mean([d[6] for d in draws])
    v = np.mean([d[7] for d in draws])
    assert abs(h - 0.3) < 5 * (0.3 * 0.7 / DRAWS) ** 0.5
    assert abs(v - 0.5) < 5 * (0.25 / DRAWS) ** 0.5


@pytest.fixture(scope="module")
def photo_file(tmp_path_factory):
    """A raw file of 32 smooth 48x40 pictures, and the pictures."""
    import h5py

    y, x = np.mgrid[0:48, 0:40]
    pictures = np.stack([np.stack([(x * 6 + i) % 256, (y * 5) % 256, (x + y + 8 * i) % 256], -1)
                         for i in range(32)]).astype(np.uint8)
    path = str(tmp_path_factory.mktemp("transform") / "photos.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=pictures, chunks=(8, 48, 40, 3))
        f.create_dataset("labels", data=np.arange(32) % 4)
    return path, pictures


def delivered(loader, epoch=0):
    images, indices = [], []
    for batch in loader.epoch(epoch):
        images.append(batch.images)
        indices.extend(batch.indices)
    return torch.cat(images), indices


def transforms_v2():
    """torchvision.transforms.v2 (torchvision 0.15 and later: the torch 2 CI venv; Debian's 0.14
    has none)."""
    try:
        from torchvision.transforms import v2
    except ImportError:
        pytest.skip("this torchvision has no transforms.v2 (0.15 and later)")
    return v2


def resize_crop_normalize(api: str):
    """Resize, CenterCrop, to float, Normalize: in transforms (v1) or transforms.v2."""
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    if api == "v1":
        return T.Compose([T.Resize(32), T.CenterCrop(24), T.ToTensor(), T.Normalize(mean, std)])
    v2 = transforms_v2()
    return v2.Compose([v2.Resize(32), v2.CenterCrop(24), v2.ToImage(),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])


@pytest.mark.parametrize("api", ["v1", "v2"])
def test_resize_center_crop_normalize_pixels_equal_torchvision(photo_file, api):
    path, pictures = photo_file
    transform = resize_crop_normalize(api)
    loader = gpufeed.Loader(path, batch_size=8, order="sequential", transform=transform)
    images, indices = delivered(loader)
    assert images.shape == (32, 3, 24, 24) and images.dtype == torch.float32
    expected = torch.stack([transform(Image.fromarray(pictures[i])) for i in indices])
    # One resize of the crop's box against Pillow's resize-then-crop: within one level.
    assert (images - expected).abs().max() <= 1.0 / 255 / 0.224 + 1e-4
    assert "Normalize" in loader.transform_plan and "on the delivered batch" not in \
        loader.transform_plan


def test_jpeg_files_take_the_same_transform(jpeg_file):
    import h5py

    transform = T.Compose([T.Resize(40), T.CenterCrop(32), T.PILToTensor()])
    loader = gpufeed.Loader(jpeg_file, batch_size=16, order="sequential", transform=transform)
    images, indices = delivered(loader)
    assert images.dtype == torch.uint8 and images.shape[1:] == (3, 32, 32)
    import io

    with h5py.File(jpeg_file) as f:
        data, offsets = f["/jpeg/bytes"], f["/jpeg/offsets"][:]
        expected = torch.stack([
            transform(Image.open(io.BytesIO(data[offsets[i]:offsets[i + 1]].tobytes()))
                      .convert("RGB")) for i in indices])
    diff = (images.float() - expected.float()).abs()
    # A JPEG decoded at a reduced DCT scale differs a little from a full decode + resize, most
    # at the pictures' hard wrap-around edges.
    assert diff.mean() < 1.0 and torch.quantile(diff.flatten(), 0.99) <= 8, diff.mean()


def test_the_ops_on_the_batch_are_torchvisions_seeded_per_sample(photo_file):
    path, _ = photo_file
    jitter = T.ColorJitter(0.4, 0.4, 0.4)
    transform = T.Compose([T.RandomResizedCrop(24, scale=(0.5, 1.0)), T.RandomHorizontalFlip(),
                           T.ToTensor(), jitter])
    torch.manual_seed(1)
    loader = gpufeed.Loader(path, batch_size=8, seed=3, transform=transform)
    images, indices = delivered(loader)
    after = torch.rand(4)
    torch.manual_seed(1)
    assert torch.equal(after, torch.rand(4)), "the loop's own random stream is untouched"
    assert "ColorJitter" in loader.transform_plan
    # Each sample's jitter is torchvision's, drawn from the sample's own seed.
    plain = gpufeed.Loader(path, batch_size=8, seed=3,
                           transform=T.Compose(transform.transforms[:3]))
    fused, plain_indices = delivered(plain)
    assert plain_indices == indices
    generator = torch.random.default_generator
    for i, sample in enumerate(indices[:6]):
        generator.manual_seed(sample_seed(3, 0, sample, 3))
        assert torch.allclose(images[i], jitter(fused[i]), atol=1e-6)
    # Per sample: the same op gives different factors to different samples, the same to a rerun.
    again, _ = delivered(gpufeed.Loader(path, batch_size=8, seed=3, transform=transform))
    assert torch.equal(images, again)
    other_epoch, _ = delivered(loader, 1)
    assert not torch.equal(images, other_epoch)


def test_per_sample_ops_differ_between_identical_samples(tmp_path):
    import h5py

    path = str(tmp_path / "same.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=np.full((16, 8, 8, 3), 120, np.uint8), chunks=(8, 8, 8, 3))
        f.create_dataset("labels", data=np.zeros(16, np.int64))
    loader = gpufeed.Loader(path, batch_size=16, transform=T.Compose(
        [T.ToTensor(), T.ColorJitter(brightness=0.5)]))
    images, _ = delivered(loader)
    assert len({round(float(x), 5) for x in images[:, 0, 0, 0]}) > 8


def test_uint8_output_is_the_fused_batch_unnormalized(photo_file):
    path, _ = photo_file
    crop = dict(crop="random-resized", size=(20, 16), hflip=0.5, seed=2, batch_size=8)
    raw, _ = delivered(gpufeed.Loader(path, dtype="uint8", **crop))
    scaled, _ = delivered(gpufeed.Loader(path, mean=[0, 0, 0], stddev=[1, 1, 1], **crop))
    assert raw.dtype == torch.uint8 and raw.shape == (32, 3, 20, 16)
    assert torch.equal(raw.float(), scaled)


@pytest.mark.parametrize("op, position, words", [
    (T.Lambda(lambda image: image.convert("L")), 1, "Lambda"),
    (T.ToPILImage(), 1, "ToPILImage"),
    ("not an op", 1, "not callable"),
])
def test_an_op_the_loader_cannot_run_is_refused_in_one_line(photo_file, op, position, words):
    path, _ = photo_file
    with pytest.raises(gpufeed.UsageError) as raised:
        gpufeed.Loader(path, batch_size=8, transform=T.Compose([T.ToTensor(), op]))
    message = str(raised.value)
    assert f"op {position}" in message and words in message and "\n" not in message


def test_a_pil_only_op_is_refused_at_construction(photo_file):
    path, _ = photo_file

    class Posterize:  # a user's op written for PIL images
        def __call__(self, image):
            return image.point(lambda v: v & 0xF0)

    with pytest.raises(gpufeed.UsageError, match=r"op 1 .*Posterize.* fails on a tensor image"):
        gpufeed.Loader(path, batch_size=8, transform=T.Compose([T.PILToTensor(), Posterize()]))


def test_nearest_interpolation_is_refused(photo_file):
    path, _ = photo_file
    nearest = T.Resize(16, interpolation=T.InterpolationMode.NEAREST)
    with pytest.raises(gpufeed.UsageError, match="op 0 .*interpolation"):
        gpufeed.Loader(path, batch_size=8, transform=nearest)


def test_a_tensor_resize_without_antialiasing_is_refused(photo_file):
    # On a tensor antialias=False resizes unfiltered; the Loader resizes as Pillow does.
    path, _ = photo_file
    crop = T.RandomResizedCrop(16, antialias=False)
    with pytest.raises(gpufeed.UsageError, match=r"op 1 .*antialias=False on a tensor") as raised:
        gpufeed.Loader(path, batch_size=8, transform=T.Compose([T.PILToTensor(), crop]))
    assert "\n" not in str(raised.value)
    # On a PIL image the op antialiases whatever it says: fused as it is.
    loader = gpufeed.Loader(path, batch_size=8, transform=T.Compose([crop, T.PILToTensor()]))
    assert loader.transform_plan.startswith("fused into the decode and normalize: RandomResized")
    resize = T.Resize(16, antialias=True)
    fused = gpufeed.Loader(path, batch_size=8, transform=T.Compose([T.PILToTensor(), resize,
                                                                    T.CenterCrop(16)]))
    assert "on the delivered batch" not in fused.transform_plan


def test_ops_are_matched_by_their_class_not_their_name(photo_file):
    path, pictures = photo_file

    class NamedCrop(T.RandomResizedCrop):  # torchvision's op under another name
        label = "crop"

    class Resize:  # a user's op that happens to share torchvision's name: run as it is
        def __call__(self, image):
            return image[:, :16, :16]

    class WiderCrop(T.RandomResizedCrop):  # draws its own boxes: not torchvision's op any more
        @staticmethod
        def get_params(image, scale, ratio):
            return 0, 0, 20, 20

    fused = gpufeed.Loader(path, batch_size=8, transform=T.Compose([NamedCrop(16), T.ToTensor()]))
    assert fused.transform_plan.startswith("fused into the decode and normalize: NamedCrop")
    assert "on the delivered batch" not in fused.transform_plan
    mine = T.Compose([T.PILToTensor(), Resize()])
    loader = gpufeed.Loader(path, batch_size=8, order="sequential", transform=mine)
    assert "per sample: " in loader.transform_plan and "Resize" in loader.transform_plan
    images, indices = delivered(loader)
    expected = torch.stack([mine(Image.fromarray(pictures[i])) for i in indices])
    assert torch.equal(images, expected)
    # The overriding subclass runs as itself on the batch (its fixed box), not as a fused crop.
    wider = gpufeed.Loader(path, batch_size=8, order="sequential",
                           transform=T.Compose([T.PILToTensor(), WiderCrop(16)]))
    assert "per sample: WiderCrop" in wider.transform_plan
    images, indices = delivered(wider)
    crop = WiderCrop(16)
    expected = torch.stack([crop(T.PILToTensor()(Image.fromarray(pictures[i]))) for i in indices])
    assert torch.equal(images, expected)


def test_a_transform_beside_the_keywords_it_sets_is_refused(photo_file):
    path, _ = photo_file
    with pytest.raises(gpufeed.UsageError, match="augment='flip' beside transform="):
        gpufeed.Loader(path, batch_size=8, augment="flip", transform=T.RandomHorizontalFlip())


def test_the_plan_says_what_is_fused_and_what_runs_on_the_batch(photo_file):
    path, _ = photo_file
    loader = gpufeed.Loader(path, batch_size=8, transform=T.Compose([
        T.RandomResizedCrop(24), T.RandomHorizontalFlip(), T.ToTensor(),
        T.RandomErasing(), T.Normalize([0.5] * 3, [0.25] * 3)]))
    plan = loader.transform_plan
    assert plan.startswith("fused into the decode and normalize: RandomResizedCrop")
    assert "per sample: RandomErasing" in plan and plan.endswith("Normalize(mean=[0.5, 0.5, 0.5], "
                                                                 "std=[0.25, 0.25, 0.25])")
    images, _ = delivered(loader)
    assert images.shape == (32, 3, 24, 24)
    # Normalize after RandomErasing ran on the batch: values around (0.5 - 0.5) / 0.25.
    assert images.min() < -1.0 and images.max() > 1.0
    assert os.fspath(loader.path) == path


def test_the_batched_color_jitter_equals_torchvisions_per_sample():
    # The device path's one-kernel ColorJitter: the same draws and arithmetic as the op.
    from gpufeed._batched import batched

    op = T.ColorJitter(0.4, 0.4, 0.4, 0.1)
    images = torch.rand(12, 3, 16, 16)
    generator = torch.random.default_generator
    seeds = [sample_seed(5, 1, i, 2) for i in range(12)]
    out = batched(op)(images, seeds, generator)
    for i, seed in enumerate(seeds):
        generator.manual_seed(seed)
        assert torch.allclose(out[i], op(images[i]), atol=1e-6), i
    assert batched(T.RandomErasing()) is None
    assert batched(op)(images.to(torch.uint8), seeds, generator) is None  # per sample instead


def test_the_in_place_color_jitter_equals_torchvisions():
    # The CPU path's ColorJitter: the op's own draws and blends, without temporaries.
    from gpufeed._batched import one_sample

    for op in (T.ColorJitter(0.4, 0.4, 0.4), T.ColorJitter(0.2, 0, 0.5, 0.1)):
        for i in range(8):
            image = torch.rand(3, 12, 10)
            torch.manual_seed(i)
            ours = one_sample(op)(image)
            torch.manual_seed(i)
            assert torch.equal(ours, op(image)) or torch.allclose(ours, op(image), atol=1e-6)
    assert one_sample(T.ColorJitter(0.4))(torch.zeros(3, 4, 4, dtype=torch.uint8)) is None


def test_the_native_color_program_equals_torchvisions_ops_per_sample():
    # The CPU path's colour steps in one native call: ColorJitter (each adjustment, in the
    # sample's drawn order, a factor of 0 included) then Normalize, against torchvision's ops.
    from gpufeed._transform import plan_transform

    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    for jitter in (T.ColorJitter(0.4, 0.4, 0.4), T.ColorJitter(0, (0, 2), 0),
                   T.ColorJitter((0, 1.5), 0, (0, 3))):
        ops = [T.RandomResizedCrop(16), T.ToTensor(), jitter, T.Normalize(mean, std)]
        plan = plan_transform(T.Compose(ops))
        images = torch.rand(24, 3, 16, 12)
        indices = list(range(100, 124))
        kept = images.clone()
        out = plan.apply(images, indices, 7, 3)
        assert plan.program, "the colour steps run natively"
        assert torch.equal(images, kept), "the delivered batch is left as it was"
        for i, sample in enumerate(indices):
            seed = sample_seed(7, 3, sample, 2)
            torch.manual_seed(seed)
            random.seed(seed)
            expected = T.Normalize(mean, std)(jitter(images[i]))
            # The contrast mean is summed in another order than torch's: last bits, / std.
            assert torch.allclose(out[i], expected, atol=1e-6 / min(std), rtol=0), (jitter, i)
        # An owned batch is written in place, with the same values.
        again = plan.apply(images, indices, 7, 3, owned=True)
        assert again.data_ptr() == images.data_ptr() and torch.equal(again, out)
    # Hue has no native step: those plans run torchvision's ops per sample.
    hue = plan_transform(T.Compose([T.RandomCrop(8), T.ToTensor(), T.ColorJitter(0.4, hue=0.1)]))
    hue.apply(torch.rand(2, 3, 8, 8), [0, 1], 0, 0)
    assert hue.program is False


def test_an_echoed_batch_gets_the_colour_steps_once(photo_file):
    # With echoes a slot is delivered twice: the steps must not write into it.
    path, _ = photo_file
    transform = T.Compose([T.CenterCrop(32), T.ToTensor(), T.ColorJitter(0.4, 0.4, 0.4)])
    loader = gpufeed.Loader(path, batch_size=8, transform=transform, echo=2,
                            reaugment_echoes=False, device="cpu", seed=3)
    batches = [(batch.images.clone(), batch.echoed) for batch in loader.epoch(0)]
    assert [echoed for _, echoed in batches] == [False, True] * 4
    for (fresh, _), (echo, _) in zip(batches[::2], batches[1::2]):
        assert torch.equal(fresh, echo)


def test_a_color_program_with_a_bad_op_code_is_refused_in_one_line():
    from gpufeed import _native

    images = torch.rand(2, 3, 4, 4)
    with pytest.raises(gpufeed.UsageError, match="op code 9 of sample 1 is not a colour step"):
        _native.color_program(images, torch.empty_like(images),
                              torch.tensor([[1], [9]], dtype=torch.uint8),
                              torch.ones((2, 1), dtype=torch.float64),
                              torch.zeros((1, 6), dtype=torch.float32))
    with pytest.raises(gpufeed.UsageError, match="expected images"):
        _native.color_program(images, torch.empty(2, 3, 4, 5),
                              torch.tensor([[1], [1]], dtype=torch.uint8),
                              torch.ones((2, 1), dtype=torch.float64),
                              torch.zeros((1, 6), dtype=torch.float32))


def test_a_transform_without_a_size_is_refused_on_images_of_many_sizes(jpeg_file):
    with pytest.raises(gpufeed.UsageError, match="sets none, so a batch has no one size"):
        gpufeed.Loader(jpeg_file, batch_size=8, transform=T.Compose([T.ToTensor()]))


def test_v2_ops_on_the_batch_are_torchvisions_seeded_per_sample(photo_file):
    v2 = transforms_v2()
    path, _ = photo_file
    jitter = v2.ColorJitter(0.4, 0.4, 0.4)
    head = [v2.RandomResizedCrop(24, scale=(0.5, 1.0)), v2.RandomHorizontalFlip(),
            v2.ToImage(), v2.ToDtype(torch.float32, scale=True)]
    loader = gpufeed.Loader(path, batch_size=8, seed=3, transform=v2.Compose(head + [jitter]))
    images, indices = delivered(loader)
    assert "ColorJitter" in loader.transform_plan
    fused, plain_indices = delivered(gpufeed.Loader(path, batch_size=8, seed=3,
                                                    transform=v2.Compose(head)))
    assert plain_indices == indices
    generator = torch.random.default_generator
    for i, sample in enumerate(indices[:6]):
        generator.manual_seed(sample_seed(3, 0, sample, 4))
        assert torch.allclose(images[i], jitter(fused[i]), atol=1e-6)
