#!/usr/bin/env python3
"""Does the pack advice predict speed on scripts nobody here wrote? pytorch/examples'
imagenet/main.py (224 px crops of 1500x2000 JPEGs) and Lightning's ImageNet LightningModule (96
px crops of 400x300-1200x900 JPEGs), written from their repositories at run time
(upstream_scripts.py), each with a torchvision model on the CPU, batch 16, num_workers=0 (-j 0),
a validation folder of 16 images, under gpufeed.profile around the whole run (main() /
Trainer.fit). The profile's pack recommendation (pack + gpufeed.Loader(...,
transform=dataset.transform)) is applied as its text spells it, and the script runs again.
Target: measured samples/s within 15% of the advice's predicted_samples_per_s.

Each script runs in its own process (glibc's malloc thresholds fixed, as in advice_applied.py):
one unmeasured run of each side first, then --rounds rounds (an even number) that alternate
which side runs first; a round's ratio is its after-run's samples/s over its before-run's
prediction. Medians over the rounds.

    PYTHONPATH=build/ci/python build/venv-torch2/bin/python bench/python/advice_scripts.py \\
        [--examples GIT_DIR] [--lightning GIT_DIR] [--rounds 4] [--epochs 2] \\
        [--scripts imagenet,lightning] [--json out.json]

--examples / --lightning: local clones of pytorch/examples and Lightning-AI/pytorch-lightning
(else they are cloned from GitHub into the work folder).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from advice_applied import same_allocator_state  # noqa: E402
import upstream_scripts  # noqa: E402

# What each script trains on: its images, its model, its images a class folder.
SETUPS = {
    "imagenet": {"photos": 320, "size": "1500x2000", "arch": "mobilenet_v3_small"},
    "lightning": {"photos": 480, "size": "1600x1200", "arch": "mobilenet_v3_small"},
}
VALIDATION_PHOTOS = 16
BATCH = 16


def make_data(root: str, photos: int, size: str) -> str:
    """An ImageFolder tree root/{train,val} of photo-like JPEGs (bench/jpeg/make_photos.py),
    made once."""
    for split, count, seed in (("train", photos, 1), ("val", VALIDATION_PHOTOS, 2)):
        folder = os.path.join(root, split)
        if os.path.isdir(folder):
            continue
        command = [sys.executable, os.path.join(HERE, "..", "jpeg", "make_photos.py"),
                   folder + ".tmp", "--count", str(count), "--seed", str(seed)]
        subprocess.run(command + (["--size", size] if size else []), check=True)
        os.rename(folder + ".tmp", folder)
    return root


def load(path: str, advised_loader=None):
    """The script at `path` as a module (its `__main__` block not run)."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.advised_loader = advised_loader
    spec.loader.exec_module(module)
    return module


def loader_from(action: str, work: str):
    """advised_loader for an advice's `action`: packs the dataset as it says (once), then makes
    the gpufeed.Loader its text spells, with `dataset` the script's training dataset."""
    import gpufeed

    pack_text = action[:action.index(" once, then ")]
    loader_text = action[action.index("gpufeed.Loader("):]

    def advised_loader(dataset):
        names = {"gpufeed": gpufeed, "dataset": dataset}
        with contextlib.chdir(work):
            if not os.path.exists("train.h5"):
                eval(pack_text, names)  # noqa: S307 - the advice's own text, as a user runs it
            return eval(loader_text, names)  # noqa: S307
    return advised_loader


def run_imagenet(path: str, data: str, arch: str, epochs: int, work: str, loader=None) -> dict:
    """main.py's main() under gpufeed.profile, as `python main.py DATA -a ARCH -j 0 -b 16
    --epochs N`."""
    import gpufeed

    module = load(path, loader)
    argv = sys.argv
    sys.argv = [path, data, "-a", arch, "-j", "0", "-b", str(BATCH), "--epochs", str(epochs)]
    try:
        with contextlib.chdir(work), gpufeed.profile() as prof:
            module.main()
    finally:
        sys.argv = argv
    return prof.results().to_dict()


def run_lightning(path: str, data: str, arch: str, epochs: int, work: str, loader=None) -> dict:
    """Trainer.fit of the module under gpufeed.profile, with the trainer defaults of the
    script's LightningCLI (no logger, cudnn benchmark, a progress bar every 10 batches, a
    checkpoint on the best validation accuracy) on the CPU."""
    import pytorch_lightning as pl
    from pytorch_lightning.callbacks import ModelCheckpoint, TQDMProgressBar

    import gpufeed

    module = load(path, loader)
    pl.seed_everything(42, verbose=False)
    model = module.ImageNetLightningModel(data_path=data, arch=arch, batch_size=BATCH, workers=0)
    trainer = pl.Trainer(max_epochs=epochs, accelerator="cpu", devices=1, logger=False,
                         benchmark=True, default_root_dir=work,
                         callbacks=[TQDMProgressBar(refresh_rate=10),
                                    ModelCheckpoint(monitor="val_acc1", mode="max")])
    with gpufeed.profile() as prof:
        trainer.fit(model)
    return prof.results().to_dict()


RUNNERS = {"imagenet": run_imagenet, "lightning": run_lightning}


def facts(results: dict) -> dict:
    """What the model predicted from, and what the run did."""
    pool = next((i for i in results.get("inputs", []) if i.get("diagnosed")), {})
    return {"samples_per_s": results.get("samples_per_s"), "steps": results.get("steps"),
            "input_bound_share": (results.get("profile") or {}).get("input_bound_share"),
            "step_cores": pool.get("step_cores"), "other_cores": pool.get("other_cores"),
            "warm_step_ns": pool.get("warm_step_ns"), "packed_sample": pool.get("packed_sample")}


def pack_advice(results: dict):
    """The profile's pack advice (with its rank among the recommendations, 1: the first), or
    None."""
    for rank, advice in enumerate(results["profile"]["recommendations"], 1):
        if advice["kind"] == "pack":
            return dict(advice, rank=rank)
    return None


def child(args: argparse.Namespace) -> None:
    """One script's rounds, in this process: rows of JSON on stdout."""
    script, setup = args.child, SETUPS[args.child]
    run = RUNNERS[script]
    path = os.path.join(args.work, "scripts", upstream_scripts.SCRIPTS[script])
    advised_path = upstream_scripts.advised(path, script)
    data = os.path.join(args.work, script)
    work = os.path.join(args.work, script + "-run")
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(work, "script-output.txt"), "w")

    runs = []

    def keep(side, results):
        runs.append({"side": side, "results": results})
        with open(os.path.join(work, "results.json"), "w") as f:
            json.dump(runs, f)  # every run's full results, for a closer look
        return results

    def before():
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            results = keep("before", run(path, data, setup["arch"], args.epochs, work))
        advice = pack_advice(results)
        return results, advice

    def after(action):
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            return keep("after", run(advised_path, data, setup["arch"], args.epochs, work,
                                     loader_from(action, work)))

    _, advice = before()  # warm: not measured
    if advice is None:
        raise SystemExit(f"{script}: no pack advice")
    action = advice["action"]
    after(action)  # warm (and the pack, once)
    for r in range(args.rounds):
        started = time.time()
        if r % 2 == 0:
            was, advice = before()
            now = after(action)
        else:
            now = after(action)
            was, advice = before()
        if advice is None or advice["action"] != action:
            raise SystemExit(f"{script}: the advice changed: {advice['action']}")
        row = {"script": script, "round": r, "first": "before" if r % 2 == 0 else "after",
               "advice": action, "rank": advice["rank"],
               "predicted_samples_per_s": advice["predicted_samples_per_s"],
               "before": facts(was), "after": facts(now),
               "load": os.getloadavg()[0], "seconds": time.time() - started}
        row["ratio"] = now["samples_per_s"] / advice["predicted_samples_per_s"]
        print(json.dumps(row), flush=True)


def main() -> None:
    same_allocator_state()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", default="", help="a clone of pytorch/examples")
    parser.add_argument("--lightning", default="", help="a clone of Lightning-AI/pytorch-lightning")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--scripts", default="imagenet,lightning")
    parser.add_argument("--work", default=os.path.join(HERE, "..", "..", "build", "advice-scripts"))
    parser.add_argument("--arch", action="append", default=[], metavar="SCRIPT=MODEL",
                        help="another torchvision model for a script")
    parser.add_argument("--json", default="")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.work = os.path.abspath(args.work)
    for given in args.arch:
        script, model = given.split("=")
        SETUPS[script]["arch"] = model
    if args.child:
        child(args)
        return
    if args.rounds % 2:
        parser.error("--rounds: an even number (each side runs first as often)")
    import pytorch_lightning

    scripts_dir = os.path.join(args.work, "scripts")
    os.makedirs(scripts_dir, exist_ok=True)
    upstream_scripts.write_imagenet(scripts_dir, args.examples or None)
    upstream_scripts.write_lightning(scripts_dir, pytorch_lightning.__version__,
                                     args.lightning or None)
    rows = []
    for script in args.scripts.split(","):
        setup = SETUPS[script]
        make_data(os.path.join(args.work, script), setup["photos"], setup["size"])
        command = [sys.executable, os.path.abspath(__file__), "--child", script, "--work",
                   args.work, "--rounds", str(args.rounds), "--epochs", str(args.epochs)]
        command += [f"--arch={given}" for given in args.arch]
        out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout
        for line in out.splitlines():
            row = json.loads(line)
            rows.append(row)
            print(f"{script} round {row['round']} ({row['first']} first, load "
                  f"{row['load']:.1f}): {row['before']['samples_per_s']:.1f} -> measured "
                  f"{row['after']['samples_per_s']:.1f} samples/s, predicted "
                  f"{row['predicted_samples_per_s']:.1f}: {row['ratio']:.2f}", flush=True)
    for script in args.scripts.split(","):
        ratios = [r["ratio"] for r in rows if r["script"] == script]
        print(f"{script}: measured / predicted samples/s {statistics.median(ratios):.2f} "
              f"[{min(ratios):.2f}-{max(ratios):.2f}] (target 0.85-1.15)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
