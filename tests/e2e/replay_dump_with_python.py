"""Replays a tensor-mode acccheck dump with Python's torch, the way the reference tool's run_ut
calls Aten entries (torch.ops.aten.<name>(*args, **kwargs): the overload is chosen from the
arguments), and checks that every deterministic entry reproduces the dumped output statistics.

    PYTHON replay_dump_with_python.py RANK_DIR   → exit 0 when all reproduce (PYTHON: one with torch)

It also proves that Python's torch.load reads the .pt files the dump wrote."""
import json
import math
import os
import sys

import torch

RANDOM = ("rand", "normal", "uniform", "dropout", "bernoulli", "empty", "multinomial", "exponential")


def value(element, data_dir):
    if element is None:
        return None
    if isinstance(element, list):
        return [value(e, data_dir) for e in element]
    kind = element.get("type")
    if kind == "torch.Tensor":
        return torch.load(os.path.join(data_dir, element["data_name"]))
    if kind in ("int", "float", "bool", "str"):
        return element["value"]
    if kind == "torch.dtype":
        return getattr(torch, element["value"].split(".")[1])
    if kind == "torch.device":
        return torch.device(element["value"].replace(":None", ""))
    if kind == "torch.memory_format":
        return getattr(torch, element["format"])
    if kind == "torch.layout":
        return getattr(torch, element["value"].split(".")[1])
    raise ValueError("cannot rebuild element %r" % (element,))


def stats(t):
    f = t.detach().float()
    return [f.max().item(), f.min().item(), f.mean().item(), f.norm().item()]


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-6 + 1e-4 * abs(b)


def main(rank_dir):
    dump = json.load(open(os.path.join(rank_dir, "dump.json")))
    data_dir = os.path.join(rank_dir, "dump_tensor_data")
    checked, failures = 0, []
    for key, entry in dump["data"].items():
        if not key.endswith(".forward") or not key.startswith("Aten."):
            continue
        name = key.split(".")[1]
        if any(r in name for r in RANDOM):
            continue
        args = [value(a, data_dir) for a in entry["input_args"]]
        kwargs = {k: value(v, data_dir) for k, v in entry["input_kwargs"].items()}
        out = getattr(torch.ops.aten, name)(*args, **kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for i, (got, want) in enumerate(zip(outs, entry["output"])):
            if not isinstance(got, torch.Tensor) or want is None or want.get("type") != "torch.Tensor":
                continue
            if got.dtype == torch.bool or got.numel() == 0 or want.get("Mean") is None:
                continue
            expected = [want["Max"], want["Min"], want["Mean"], want["Norm"]]
            if not all(close(g, w) for g, w in zip(stats(got), expected)):
                failures.append("%s output %d: replayed %s, dumped %s" % (key, i, stats(got), expected))
        checked += 1
    print("replayed %d entries with torch.ops.aten; %d output mismatches" % (checked, len(failures)))
    for f in failures:
        print("  " + f)
    return 0 if checked > 0 and not failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
