"""Data-parallel training under torchrun: one process per GPU (or per CPU slot with gloo), each
reading its own shard of the file through gpufeed.

    torchrun --standalone --nproc_per_node=2 examples/python/train_ddp.py
    torchrun --standalone --nproc_per_node=8 examples/python/train_ddp.py --data train.h5 \\
        --trace trace.json        # one trace per rank: trace.rank0.json, trace.rank1.json, ...
    pipebench analyze trace.rank*.json   # the ranks side by side, and the straggler named

Before torch 2, --standalone puts every job's rendezvous on localhost:29400: a second job on the
node at once joins the first one's and fails when that one ends ("Broken pipe"). There, give each
job a port of its own: --nnodes=1 --rdzv_backend=c10d --rdzv_endpoint=localhost:0.

Across hosts, with the data in object storage (every host reads it; endpoint and credentials from
the standard AWS variables), a checkpoint every 20 steps and one restart allowed:

    # on each host, NODE_RANK 0 and 1:
    torchrun --nnodes=2 --nproc_per_node=2 --rdzv_backend=c10d --rdzv_endpoint=host-a:29400 \
        --rdzv_id=job1 --max_restarts=1 examples/python/train_ddp.py \
        --data s3://bucket/train.h5 --checkpoint /shared/ckpt.pt --checkpoint-every 20

A restarted job (a rank was killed, torchrun restarted the group) resumes from the checkpoint:
the model, the optimizer and loader.state_dict(), so the epoch goes on from the last checkpoint
and only the steps after it are delivered twice. tests/multihost/two_hosts.sh runs exactly this
on one machine: two network namespaces as two hosts, one rank killed mid-epoch.

gpufeed.Loader takes RANK and WORLD_SIZE from the environment torchrun sets (shard=), and a
"cuda" device follows LOCAL_RANK: every rank reads a disjoint share of each epoch, the same
number of batches everywhere, in an order that depends only on the seed and the epoch.
Without --data, rank 0 writes the embedded synthetic dataset and the others wait for it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import gpufeed


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", help="a gpufeed HDF5 file on a path every rank can read")
    p.add_argument("--samples", type=int, default=8192, help="synthetic samples without --data")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch", type=int, default=64, help="per rank")
    p.add_argument("--workers", type=int, default=2, help="loader threads per rank")
    p.add_argument("--prefetch", type=int, default=4, help="batches prepared ahead per rank")
    p.add_argument("--order", default="random", choices=["random", "chunk", "sequential"])
    p.add_argument("--trace", help="per-rank Chrome trace: NAME.rankR.json")
    p.add_argument("--record", help="write each rank's sample indices to DIR/rankR.json")
    p.add_argument("--checkpoint", help="a path every rank can read: rank 0 saves the model, "
                   "the optimizer and loader.state_dict() there; a (re)started job resumes from it")
    p.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints")
    p.add_argument("--log-steps", help="testing aid: each rank appends 'epoch step indices' per "
                   "step to DIR/rankR.attemptA.log (written as it goes, so a killed rank's steps "
                   "are there too)")
    p.add_argument("--kill-rank", type=int, default=-1,
                   help="testing aid: this rank SIGKILLs itself at --kill-step of the first attempt")
    p.add_argument("--kill-step", type=int, default=0)
    p.add_argument("--stall-rank", type=int, default=-1,
                   help="testing aid: this rank's loader gets --stall injected")
    p.add_argument("--stall", default="read:200@1", help="the injected stall, STAGE:MS@EVERY")
    p.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"],
                   help="auto: a GPU per rank (NCCL) when this node has one for each, else the "
                        "CPU (gloo)")
    return p.parse_args()


def use_cuda(choice: str) -> bool:
    """One GPU per local rank: NCCL cannot run two ranks on one device."""
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    enough = torch.cuda.is_available() and torch.cuda.device_count() >= local_ranks
    if choice == "cuda" and not enough:
        raise SystemExit(f"--device cuda: {local_ranks} ranks on this node need as many GPUs, "
                         f"{torch.cuda.device_count()} visible; use --device cpu or fewer ranks")
    return choice == "cuda" or (choice == "auto" and enough)


def shared_dataset(args: argparse.Namespace, scratch: str) -> str:
    if args.data:
        return args.data
    path = os.path.join(scratch, "train.h5")
    if dist.get_rank() == 0:
        gpufeed.write_synthetic(path, args.samples, (32, 32, 3))
    dist.barrier()
    return path


def save_checkpoint(path: str, epoch: int, step: int, model, optimizer, loader) -> None:
    """Rank 0, between steps (every rank has consumed the same number of batches, so its loader
    state describes the whole job). Written aside and renamed: a crash leaves the previous one."""
    partial = path + ".partial"
    torch.save({"epoch": epoch, "step": step, "model": model.state_dict(),
                "optimizer": optimizer.state_dict(), "data": loader.state_dict()}, partial)
    os.replace(partial, path)


def main() -> None:
    args = parse_args()
    cuda = use_cuda(args.device)
    dist.init_process_group(backend="nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = f"cuda:{local_rank}" if cuda else "cpu"
    if cuda:
        torch.cuda.set_device(local_rank)
    # Rank 0 makes the scratch directory; torchrun's ranks of one node share /tmp.
    scratch = tempfile.gettempdir() if args.data else os.path.join(
        tempfile.gettempdir(), f"gpufeed-ddp-{os.environ.get('TORCHELASTIC_RUN_ID', 'run')}")
    os.makedirs(scratch, exist_ok=True)
    path = shared_dataset(args, scratch)
    if rank == args.stall_rank:  # the Loader reads the testing aid when it is made
        os.environ["GPUFEED_INJECT_STALL"] = args.stall
    loader = gpufeed.Loader(path, batch_size=args.batch, workers=args.workers,
                            prefetch=args.prefetch, device=device, order=args.order,
                            seed=0)  # shard from RANK etc.
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(4),
        torch.nn.Flatten(), torch.nn.Linear(32 * 16, 10)).to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank] if cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    first_epoch, step = 0, 0
    if args.checkpoint and os.path.exists(args.checkpoint):
        saved = torch.load(args.checkpoint, map_location=device)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        loader.load_state_dict(saved["data"])  # refuses a state of another file or order
        first_epoch, step = saved["epoch"], saved["step"]
        if rank == 0:
            print(f"resumed from {args.checkpoint}: epoch {first_epoch} after step {step}")
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    log = None
    if args.log_steps:
        os.makedirs(args.log_steps, exist_ok=True)
        log = os.open(os.path.join(args.log_steps, f"rank{rank}.attempt{attempt}.log"),
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    seen = torch.zeros((), dtype=torch.int64, device=device)
    indices = {}
    # The trace goes to NAME.rankR.json on every rank; watch() times DDP's all-reduces.
    with gpufeed.profile(trace=args.trace) as prof:
        prof.watch(model)
        for epoch in range(first_epoch, args.epochs):
            indices[epoch] = []
            if epoch != first_epoch:
                step = 0
            for batch in loader.epoch(epoch):
                step += 1
                if rank == args.kill_rank and step == args.kill_step and attempt == 0:
                    os.kill(os.getpid(), 9)  # SIGKILL: no clean-up, as a lost host would be
                images, labels = batch
                with prof.step():
                    loss = F.cross_entropy(model(images), labels)
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()  # DDP all-reduces the gradients here
                    optimizer.step()
                seen += labels.numel()
                indices[epoch].extend(batch.indices)
                if log is not None:
                    os.write(log, f"{epoch} {step} {','.join(map(str, batch.indices))}\n".encode())
                if args.checkpoint and args.checkpoint_every and step % args.checkpoint_every == 0:
                    if rank == 0:
                        save_checkpoint(args.checkpoint, epoch, step, model, optimizer, loader)
                    dist.barrier()  # no rank runs ahead of a checkpoint being written
    if args.record:
        os.makedirs(args.record, exist_ok=True)
        with open(os.path.join(args.record, f"rank{rank}.json"), "w") as f:
            json.dump({"world_size": world, "batches": len(loader), "indices": indices}, f)
    dist.all_reduce(seen)
    if rank == 0:
        print(f"{world} ranks trained {args.epochs} epochs of {len(loader)} batches each: "
              f"{int(seen.item())} samples, final loss {loss.item():.4f}")
        print(prof.summary(), end="")
    dist.barrier()
    if rank == 0 and not args.data:
        os.remove(path)
        os.rmdir(scratch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
