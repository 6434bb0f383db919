#!/usr/bin/python3
"""The smallest defect each precision standard catches.

For each probe (an example model and dtype, an operator, a direction and a fault kind) this plants
the fault in npu-sim at growing magnitudes, replays the dump with run_ut, compares against the cpu
run and records the smallest magnitude at which every API the fault changes is flagged error (the
APIs a fault changes are those whose npu-sim metrics differ from a healthy npu-sim run: replay is
deterministic). Prints a Markdown table for bench/RESULTS.md and docs/detection.md.

  bench/detection_sensitivity.py [BUILD_DIR] [--quick]

Standard library only (Debian's /usr/bin/python3); about 5 minutes on 2 cores (--quick: 1).
"""
import csv
import os
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(next((a for a in sys.argv[1:] if not a.startswith("--")), "build"))
QUICK = "--quick" in sys.argv
ACCCHECK = os.path.join(BUILD, "acccheck")
TRAIN = os.path.join(BUILD, "examples", "acccheck-example-train")
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAMP = "20260101000000"

DECADES = [1e-7, 3e-7, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]
FRACTIONS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0]
ULPS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096]

# (model, dtype, op, direction, kind, magnitudes, what the magnitude is)
PROBES = [
    ("transformer", "fp32", "aten::gelu", "forward", "rel_noise", DECADES, "relative noise"),
    ("transformer", "bf16", "aten::gelu", "forward", "rel_noise", DECADES, "relative noise"),
    ("transformer", "fp32", "aten::_softmax", "forward", "bias", DECADES, "relative bias"),
    ("transformer", "bf16", "aten::_softmax", "forward", "bias", DECADES, "relative bias"),
    ("transformer", "fp32", "aten::_log_softmax", "forward", "bias", DECADES, "relative bias"),
    ("transformer", "fp32", "aten::masked_fill_", "forward", "ulp_shift", ULPS, "ULPs"),
    ("transformer", "fp32", "aten::mm", "forward", "ulp_shift", ULPS, "ULPs"),
    ("transformer", "bf16", "aten::mm", "forward", "ulp_shift", ULPS, "ULPs"),
    ("transformer", "fp32", "aten::mm", "backward", "rel_noise", DECADES, "relative noise"),
    ("transformer", "fp32", "aten::add", "forward", "ulp_shift", ULPS, "ULPs"),
    ("transformer", "bf16", "aten::add", "forward", "ulp_shift", ULPS, "ULPs"),
    ("mlp", "fp32", "aten::tanh", "forward", "rel_noise", DECADES, "relative noise"),
    ("mlp", "fp32", "aten::tanh_backward", "backward", "bias", DECADES, "relative bias"),
    ("mlp", "fp32", "aten::addmm", "forward", "ulp_shift", ULPS, "ULPs"),
    ("mlp", "bf16", "aten::addmm", "forward", "ulp_shift", ULPS, "ULPs"),
    ("mlp", "bf16", "aten::sub", "forward", "bias", DECADES, "relative bias"),
    ("cnn", "fp32", "aten::relu", "forward", "zero", FRACTIONS, "fraction zeroed"),
    ("cnn", "fp32", "aten::convolution_overrideable", "forward", "rel_noise", DECADES, "relative noise"),
    ("cnn", "bf16", "aten::native_batch_norm", "forward", "bias", DECADES, "relative bias"),
    ("cnn", "fp32", "aten::max_pool2d_with_indices", "forward", "nan", FRACTIONS, "fraction NaN"),
    ("fixture:model-dumps/cnn", "fp32", "aten::convolution_overrideable", "forward", "rel_noise", DECADES,
     "relative noise"),
]
if QUICK:
    PROBES = PROBES[:3]


def run(args, **kw):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(args), r.stderr[-2000:]))
    return r


def details(d):
    return os.path.join(d, "accuracy_checking_details_%s.csv" % STAMP)


def rows(path):
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


def api_of(name):
    for d in (".forward", ".backward"):
        if d in name:
            return name[: name.index(d)]
    return name


def metrics_by_api(path):
    out = {}
    for r in rows(path)[1:]:
        out.setdefault(api_of(r[0]), []).append((r[0], tuple(r[4:])))
    return out


def run_ut(dump, device, out, faults=None):
    args = [ACCCHECK, "run_ut", "-api_info", dump, "--device", device, "-n", "2", "-o", out, "--timestamp", STAMP]
    if faults:
        args += ["--device-config", faults]
    run(args)


def main():
    with tempfile.TemporaryDirectory(prefix="acccheck-sensitivity-") as work:  # removed afterwards (~11 MB)
        sensitivity(work)


def sensitivity(work):
    baselines = {}
    table = []
    for model, dtype, op, direction, kind, magnitudes, unit in PROBES:
        key = (model, dtype)
        if key not in baselines:
            d = os.path.join(work, "%s-%s" % key)
            if model.startswith("fixture:"):
                dump = os.path.join(SOURCE, "tests", "fixtures", model[8:], "dump.json")
            else:
                run([ACCCHECK, "dump", "--dump-path", d + "/dump", "--step", "1", "--", TRAIN, "--model", model,
                     "--dtype", dtype, "--steps", "2"])
                dump = d + "/dump/step1/rank/dump.json"
            run_ut(dump, "cpu", d + "/cpu")
            run_ut(dump, "npu-sim", d + "/healthy")
            baselines[key] = (dump, d + "/cpu", metrics_by_api(details(d + "/healthy")))
        dump, cpu, healthy = baselines[key]
        caught, missed, standard, apis = None, None, "", set()
        for m in magnitudes:
            t = tempfile.mkdtemp(dir=work)
            with open(t + "/faults.yaml", "w") as f:
                f.write('seed: 7\nfaults:\n  - {op: "%s", direction: %s, kind: %s, %s}\n' %
                        (op, direction, kind, "fraction: %g" % m if kind in ("zero", "nan") else "magnitude: %g" % m))
            run_ut(dump, "npu-sim", t + "/npu", t + "/faults.yaml")
            faulty = metrics_by_api(details(t + "/npu"))
            defective = {a for a, v in faulty.items() if healthy.get(a) != v}
            if not defective:
                missed = m
                continue
            run([ACCCHECK, "compare", "-npu", details(t + "/npu"), "-gpu", details(cpu), "-o", t + "/cmp",
                 "--timestamp", STAMP])
            result = rows(os.path.join(t, "cmp", "api_precision_compare_result_%s.csv" % STAMP))[1:]
            flagged = {r[0] for r in result if "error" in (r[1], r[2])}
            det = rows(os.path.join(t, "cmp", "api_precision_compare_details_%s.csv" % STAMP))
            algo = det[0].index("比对算法")
            standard = ", ".join(sorted({r[algo] for r in det[1:] if api_of(r[0]) in defective and r[algo].strip()}))
            apis = defective
            if defective <= flagged:
                caught = m
                break
            missed = m
        name = model if not model.startswith("fixture:") else "msprobe cnn dump"
        table.append((standard or "?", name, dtype, op, direction, kind, unit,
                      "%g" % caught if caught is not None else "not caught (≤ %g)" % magnitudes[-1],
                      "%g" % missed if missed is not None else "—", ", ".join(sorted(apis))[:80]))
        print("  %-28s %-12s %-5s %-32s %-8s %-10s caught at %s" % (table[-1][0], name, dtype, op, direction, kind,
                                                                   table[-1][7]), file=sys.stderr, flush=True)
    print("| standard | model | dtype | operator | direction | fault | smallest caught | largest missed | APIs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for t in table:
        print("| %s | %s | %s | `%s` | %s | %s (%s) | %s | %s | %s |" % (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
                                                                    t[8], t[9]))


if __name__ == "__main__":
    main()
