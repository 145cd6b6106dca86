"""Train an image classifier from a gpufeed file, with the profiler watching the loop.

    python examples/python/train.py                    # the embedded synthetic dataset, CPU
    python examples/python/train.py --data train.h5 --device cuda --model resnet18 \\
        --dtype bfloat16 --channels-last --echo auto --report run.html

Runs as it is: without --data it writes pipebench's embedded dataset (8192 synthetic 64x64x3
images, 10 classes) to a temporary file. --model resnet18 needs torchvision; the default is a
small CNN that needs nothing but torch. At the end it prints gpufeed's diagnosis of the loop:
device utilization, what the idle time went to, and what to change.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import torch
import torch.nn.functional as F

import gpufeed


class SmallCNN(torch.nn.Module):
    """Three conv blocks and a linear head: enough compute to be a real training step."""

    def __init__(self, channels: int, classes: int) -> None:
        super().__init__()
        layers = []
        for width in (32, 64, 128):
            layers += [
                torch.nn.Conv2d(channels, width, 3, padding=1, bias=False),
                torch.nn.BatchNorm2d(width),
                torch.nn.ReLU(inplace=True),
                torch.nn.MaxPool2d(2),
            ]
            channels = width
        self.features = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


def make_model(name: str, channels: int, classes: int) -> torch.nn.Module:
    if name == "resnet18":
        import torchvision  # only this model needs it

        return torchvision.models.resnet18(num_classes=classes)
    return SmallCNN(channels, classes)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", help="a gpufeed HDF5 file (default: a synthetic one)")
    p.add_argument("--samples", type=int, default=8192, help="synthetic samples without --data")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--model", default="cnn", choices=["cnn", "resnet18"])
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--workers", type=int, default=0, help="loader threads (0: all cores)")
    p.add_argument("--echo", default="1", help="1, a factor like 2, or auto")
    p.add_argument("--augment", default="none", help="none, flip, crop-flip (jpeg files)")
    p.add_argument("--size", type=int, default=None, help="decode size of jpeg files")
    p.add_argument("--dtype", default="float32", help="float32, float16 or bfloat16 (CUDA)")
    p.add_argument("--channels-last", action="store_true", help="NHWC batches and weights")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--report", help="write the profiler's HTML report here")
    p.add_argument("--trace", help="write a Chrome trace here (Perfetto, pipebench analyze)")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    with tempfile.TemporaryDirectory() as scratch:
        path = args.data or gpufeed.write_synthetic(os.path.join(scratch, "train.h5"),
                                                    args.samples)
        loader = gpufeed.Loader(
            path,
            batch_size=args.batch,
            workers=args.workers,
            device=device,
            dtype=args.dtype,
            echo=int(args.echo) if args.echo.isdigit() else args.echo,
            augment=args.augment,
            size=args.size,
            output_layout="nhwc" if args.channels_last else "nchw",
        )
        train(loader, args, device)


def train(loader: gpufeed.Loader, args: argparse.Namespace, device: str) -> None:
    height, width, channels = loader.sample_shape
    model = make_model(args.model, channels, args.classes).to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    low_precision = args.dtype != "float32"
    autocast_dtype = getattr(torch, args.dtype) if low_precision else None
    device_type = "cuda" if device.startswith("cuda") else "cpu"
    print(f"{loader}: {height}x{width}x{channels} samples, model {args.model} on {device}")
    model.train()
    with gpufeed.profile(report=args.report, trace=args.trace) as prof:
        for epoch in range(args.epochs):
            start = time.perf_counter()
            total = torch.zeros((), device=device)  # summed on the device: no sync per step
            steps = 0
            for images, labels in loader.epoch(epoch):
                with prof.step():
                    if args.channels_last:
                        images = images.permute(0, 3, 1, 2)  # NCHW view of NHWC memory
                    with torch.autocast(device_type, dtype=autocast_dtype,
                                        enabled=low_precision):
                        loss = F.cross_entropy(model(images), labels)
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    optimizer.step()
                    total += loss.detach()
                steps += 1
            seconds = time.perf_counter() - start
            print(f"epoch {epoch}: {steps} steps, mean loss {total.item() / steps:.4f}, "
                  f"{steps * args.batch / seconds:.0f} samples/s")
    print(prof.summary(), end="")


if __name__ == "__main__":
    main()
