"""Training scripts nobody here wrote, written at run time from their own repositories into a
build folder (their code is not kept in this one), and the pack advice applied to them as its
text spells it.

- pytorch/examples `imagenet/main.py` (an ImageFolder with RandomResizedCrop(224) + flip +
  ToTensor + Normalize, a torchvision model, SGD; its own `train()` and `validate()` loops),
  unchanged.
- Lightning's `examples/pytorch/domain_templates/imagenet.py` (a LightningModule over the same
  recipe) at the release the process imports, with two edits said here: it imports the
  standalone `pytorch_lightning` package (the same code as `lightning.pytorch` of the same
  release), and its training crop is 96 px instead of 224.

A repository is a local clone (or mirror) given by path, else cloned from GitHub into the build
folder. The advice is applied where the script makes its training DataLoader: that call is
replaced by `advised_loader(<its dataset>)`, a name the runner gives the module, which
evaluates the advice's own `gpufeed.Loader(...)` text with `dataset` bound to that dataset.
"""

from __future__ import annotations

import os
import subprocess
from typing import Optional

# pytorch/examples' newest commit when this benchmark was written (August 2025).
EXAMPLES_URL = "https://github.com/pytorch/examples"
EXAMPLES_COMMIT = "77f55b912142e11fcfdf5b530231fb9c52f181e8"
LIGHTNING_URL = "https://github.com/Lightning-AI/pytorch-lightning"

# The file each script is written to.
SCRIPTS = {"imagenet": "imagenet_main.py", "lightning": "lightning_imagenet.py"}
# Where each script makes the DataLoader its training steps take, and the dataset it reads.
TRAIN_LOADERS = {
    "imagenet": ("train_loader = torch.utils.data.DataLoader(", "train_dataset"),
    "lightning": ("return torch.utils.data.DataLoader(", "self.train_dataset"),
}


def _git_dir(given: Optional[str], url: str, build: str, name: str) -> str:
    if given:
        return given
    clone = os.path.join(build, name)
    if not os.path.isdir(clone):
        subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", url, clone],
                       check=True)
    return clone


def _show(git_dir: str, revision: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", _dot_git(git_dir), "show", f"{revision}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def _dot_git(git_dir: str) -> str:
    inner = os.path.join(git_dir, ".git")
    return inner if os.path.isdir(inner) else git_dir


def _edit(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise RuntimeError(f"the upstream script changed: {old!r} found {text.count(old)} times")
    return text.replace(old, new)


def write_imagenet(build: str, repository: Optional[str] = None) -> str:
    """pytorch/examples' imagenet/main.py, as it is, into `build`; its path."""
    git_dir = _git_dir(repository, EXAMPLES_URL, build, "pytorch-examples.git")
    path = os.path.join(build, SCRIPTS["imagenet"])
    with open(path, "w") as f:
        f.write(_show(git_dir, EXAMPLES_COMMIT, "imagenet/main.py"))
    return path


def write_lightning(build: str, version: str, repository: Optional[str] = None) -> str:
    """Lightning's ImageNet LightningModule of release `version`, with 96 px training crops,
    into `build`; its path."""
    git_dir = _git_dir(repository, LIGHTNING_URL, build, "pytorch-lightning.git")
    text = _show(git_dir, version, "examples/pytorch/domain_templates/imagenet.py")
    text = text.replace("from lightning.pytorch", "from pytorch_lightning")
    text = _edit(text, "transforms.RandomResizedCrop(224),", "transforms.RandomResizedCrop(96),")
    path = os.path.join(build, SCRIPTS["lightning"])
    with open(path, "w") as f:
        f.write(text)
    return path


def advised(path: str, script: str) -> str:
    """A copy of the script at `path` whose training DataLoader call is replaced by
    `advised_loader(<dataset>)`; its path."""
    start_text, dataset = TRAIN_LOADERS[script]
    with open(path) as f:
        text = f.read()
    start = text.index(start_text)
    open_paren = start + len(start_text) - 1
    depth, end = 0, open_paren
    for end in range(open_paren, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            break
    keep = start_text[:start_text.index("torch.utils.data.DataLoader(")]
    text = text[:start] + f"{keep}advised_loader({dataset})" + text[end + 1:]
    out = path.replace(".py", "_advised.py")
    with open(out, "w") as f:
        f.write(text)
    return out
