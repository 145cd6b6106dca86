"""imagenet_style.py after the advice: the folder packed once, then gpufeed's Loader with the
script's own transform object. RandomResizedCrop and the flip are fused into the JPEG decode,
ToTensor and Normalize into the normalize step; ColorJitter runs on each delivered batch, per
sample, with torchvision's own parameter draws. The model sees the same inputs.

    python examples/python/imagenet_style_gpufeed.py [FOLDER] [--epochs 1] [--batch 16]
"""

from __future__ import annotations

import argparse
import os
import tempfile

import torchvision

import gpufeed
from imagenet_style import TRANSFORM, make_folder, profile_training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="imagenet-style-")
    folder = args.folder or make_folder(os.path.join(work, "photos"))
    dataset = torchvision.datasets.ImageFolder(folder, transform=TRANSFORM)
    path = gpufeed.pack(dataset, os.path.join(work, "train.h5"), store="jpeg")  # once
    loader = gpufeed.Loader(path, batch_size=args.batch, order="random",
                            transform=dataset.transform)
    print(loader.transform_plan)
    profile_training(loader, args.epochs, loader.samples_per_epoch)


if __name__ == "__main__":
    main()
