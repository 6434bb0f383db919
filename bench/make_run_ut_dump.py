"""Writes a synthetic msprobe-layout dump.json for the run_ut benchmarks: N calls of one API.
    python3 bench/make_run_ut_dump.py OUT.json N KIND
KIND: tiny (Torch.add of two float32 [16]), mm256 / mm512 / mm1024 (Torch.mm of two float32 DxD, with backward),
      big (Torch.neg of a float32 4096x4096 tensor: a 16M-element output).
Needs no torch: the dump holds statistics only (run_ut draws random inputs from them)."""
import json
import sys


def tensor(shape, grad=False):
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": shape, "Max": 1.0, "Min": -1.0,
            "Mean": 0.0, "Norm": 1.0, "requires_grad": grad}


def main():
    out, n, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    data = {}
    for i in range(n):
        if kind == "tiny":
            data["Torch.add.%d.forward" % i] = {"input_args": [tensor([16]), tensor([16])], "input_kwargs": {},
                                                "output": [tensor([16])]}
        elif kind in ("mm256", "mm512", "mm1024"):
            d = int(kind[2:])
            data["Torch.mm.%d.forward" % i] = {"input_args": [tensor([d, d], True), tensor([d, d], True)],
                                               "input_kwargs": {}, "output": [tensor([d, d], True)]}
            data["Torch.mm.%d.backward" % i] = {"input": [tensor([d, d])], "output": []}
        elif kind == "big":
            data["Torch.neg.%d.forward" % i] = {"input_args": [tensor([4096, 4096])], "input_kwargs": {},
                                                "output": [tensor([4096, 4096])]}
        else:
            raise SystemExit("unknown kind " + kind)
    with open(out, "w") as f:
        json.dump({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None, "data": data}, f, indent=1)


if __name__ == "__main__":
    main()
