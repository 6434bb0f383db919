"""What the benchmark standard's max-rel excuse (docs/compat.md fix be) costs in recall and saves in
false alarms, on convolutions computed the way run_ut judges them (bench/RESULTS.md, "Detection power").

  /usr/bin/python3 bench/max_rel_excuse_sim.py [TRIALS]

Per trial: random inputs as run_ut draws them (uniform, post-ReLU activations and centred weights),
a float64 benchmark, a "GPU" (LibTorch's float32 convolution) and a healthy "NPU" (float32, the input
channels in two blocks added afterwards: npu-sim's accumulation order). The five benchmark metrics
of precision-standards.md §5.2 (float32: small value 2^-20, ratio floor 2^-14) are computed for both,
and the NPU is judged against the GPU with the reference's rule (RMSE, mean-rel ratios <= 2, max-rel
<= 10) and with the excuse (a max-rel ratio above 10 passes when the NPU's largest absolute error is
at most F times the GPU's). Faults: the healthy NPU output with one element, or 1 % of them,
multiplied by (1 + r) — the sparse defects only the max-rel ratio can see.
"""
import sys

import torch

F = torch.nn.functional
SMALL, FLOOR = 2.0**-20, 2.0**-14


def metrics(d, b):
    b, d = b.double().flatten(), d.double().flatten()
    a = b.abs()
    normal = a > SMALL
    ae = (d - b).abs()
    re = ae / (a + 2.220446049250313e-16)
    n, k = b.numel(), int((~normal).sum())
    mse = float(((ae * normal) ** 2).mean()) * (n / (n - k + 1e-4) + 1e-4)
    return dict(max_rel=float(re[normal].max()) if normal.any() else 0.0,
                mean_rel=float(re[normal].mean()) if normal.any() else 0.0,
                rmse=mse**0.5, max_abs=float(ae.max()))


def flagged(npu, gpu, excuse):
    ratio = lambda x, y: abs(x) / max(abs(y), FLOOR)
    if ratio(npu["rmse"], gpu["rmse"]) > 2 or ratio(npu["mean_rel"], gpu["mean_rel"]) > 2:
        return True
    if ratio(npu["max_rel"], gpu["max_rel"]) <= 10:
        return False
    return not (excuse > 0 and gpu["max_abs"] > 0 and npu["max_abs"] <= excuse * gpu["max_abs"])


def sparse_fault(out, share, r, gen):
    flat = out.clone().flatten()
    count = max(1, int(flat.numel() * share))
    flat[torch.randint(0, flat.numel(), (count,), generator=gen)] *= 1 + r
    return flat.view_as(out)


def run(shape, cout, k, pad, trials, gen):
    excuses = (0, 1, 2)
    cases = ["healthy"] + [f"{what} r={r:g}" for r in (1e-4, 1e-3, 1e-2) for what in ("1 element", "1 % of them")]
    counts = {(c, e): 0 for c in cases for e in excuses}
    for _ in range(trials):
        x = torch.rand(shape, generator=gen) * 2.0
        w = (torch.rand((cout, shape[1], k, k), generator=gen) - 0.5) * 0.5
        bench = F.conv2d(x.double(), w.double(), padding=pad)
        gpu = metrics(F.conv2d(x, w, padding=pad), bench)
        h = shape[1] // 2
        healthy = F.conv2d(x[:, :h], w[:, :h], padding=pad) + F.conv2d(x[:, h:], w[:, h:], padding=pad)
        outputs = {"healthy": healthy}
        for r in (1e-4, 1e-3, 1e-2):
            outputs[f"1 element r={r:g}"] = sparse_fault(healthy, 0.0, r, gen)
            outputs[f"1 % of them r={r:g}"] = sparse_fault(healthy, 0.01, r, gen)
        for case, out in outputs.items():
            npu = metrics(out, bench)
            for e in excuses:
                counts[(case, e)] += flagged(npu, gpu, e)
    print(f"conv2d input {tuple(shape)}, {cout} out channels, {k}x{k} kernel, {trials} trials: share flagged")
    print(f"  {'NPU output':<22} {'reference':>10} {'excuse 1x':>10} {'excuse 2x':>10}")
    for c in cases:
        print(f"  {c:<22} " + " ".join(f"{counts[(c, e)] / trials:>10.3f}" for e in excuses))


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    run((2, 96, 1, 1), 96, 1, 0, trials * 3, gen)   # shufflenet's 1x1 convolutions on 1x1 maps
    run((2, 16, 15, 15), 16, 3, 1, trials, gen)     # squeezenet-sized 3x3
    run((2, 32, 8, 8), 64, 3, 1, trials, gen)


if __name__ == "__main__":
    main()
