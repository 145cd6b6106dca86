"""An imagenet-style training script as the tutorials write it: an ImageFolder of JPEGs,
torchvision transforms, a DataLoader, under gpufeed.profile. Its advice is the other script,
imagenet_style_gpufeed.py: the same transform object, read by gpufeed's Loader.

    python examples/python/imagenet_style.py [FOLDER] [--epochs 1] [--batch 16] [--workers 1]

Without FOLDER it makes a small folder of 320 JPEG photos-like images in two classes.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import torch
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader

import gpufeed

# The recipe: random crop of 35-100% of the image, a flip, colour jitter, ImageNet's statistics.
TRANSFORM = T.Compose([
    T.RandomResizedCrop(64, scale=(0.35, 1.0)),
    T.RandomHorizontalFlip(),
    T.ToTensor(),
    T.ColorJitter(0.4, 0.4, 0.4),
    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


def make_folder(root: str, per_class: int = 160) -> str:
    """Two classes of smooth 160x120 JPEG pictures (a stand-in for photos)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:120, 0:160]
    for c, name in enumerate(("cats", "dogs")):
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(per_class):
            a, b = rng.uniform(1, 4, size=2)
            picture = np.stack([(x * a + 60 * c) % 256, (y * b + i) % 256, (x + y) % 256], -1)
            Image.fromarray(picture.astype(np.uint8)).save(
                os.path.join(root, name, f"{i:04d}.jpg"), quality=90)
    return root


def model_and_optimizer():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, stride=2), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(16, 2))
    return model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def train(batches, model, optimizer) -> int:
    steps = 0
    for images, labels in batches:
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
    return steps


def profile_training(batches, epochs: int, images: int) -> None:
    """The training loop under gpufeed.profile, and what the profile says of it."""
    model, optimizer = model_and_optimizer()
    with gpufeed.profile() as prof:
        for _ in range(epochs):
            steps = train(batches, model, optimizer)
    print(f"trained {steps} steps a epoch on {images} images")
    print(prof.summary())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    folder = args.folder or make_folder(tempfile.mkdtemp(prefix="imagenet-style-"))
    dataset = torchvision.datasets.ImageFolder(folder, transform=TRANSFORM)
    loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers)
    profile_training(loader, args.epochs, len(dataset))


if __name__ == "__main__":
    main()
