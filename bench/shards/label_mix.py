"""Classes a batch holds: for each dataset given, the median number of distinct labels in the
full batches of epoch 0 in chunk order, against the same labels dealt by a random permutation
(the same batch size). Prints one JSON object: {path: {median_labels, random_median_labels,
ratio}}.

    label_mix.py DATASET... [--batch 256] [--seed 0]
"""
import argparse
import json

import numpy as np

import gpufeed


def median_distinct(labels: np.ndarray, batch: int) -> float:
    full = len(labels) // batch * batch
    return float(np.median([len(np.unique(b)) for b in labels[:full].reshape(-1, batch)]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    result = {}
    for path in args.paths:
        loader = gpufeed.Loader(path, batch_size=args.batch, order="chunk", device="cpu",
                                dtype="uint8", workers=2, output="numpy")
        # Copies: a delivered array holds its batch slot while it lives.
        delivered = np.concatenate([np.array(labels) for _, labels in loader.epoch(0)])
        shuffled = np.random.default_rng(args.seed).permutation(delivered)
        chunk, random = median_distinct(delivered, args.batch), median_distinct(shuffled, args.batch)
        result[path] = {"median_labels": chunk, "random_median_labels": random,
                        "ratio": chunk / random}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
