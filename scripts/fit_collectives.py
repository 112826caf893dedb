#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fits presets/collectives/fabrics.json: the FabricModel of each link type, on the TRAIN split of
the measured NCCL collectives in ../shared/groundtruth (the split of `flopcast validate`: FNV-1a of
"<file> <identity>" mod 100 < 70). Pure Python, no dependencies.

The model mirrors core/src/collective.cpp (ring in a node; ring / tree / hierarchical across
nodes; min over the LL and Simple protocol families). Each link type gets five parameters:
efficiency, ll_efficiency, base_latency_us, hop_latency_us, simple_latency_us, chosen to minimise
the mean |log(predicted / measured)| over its train rows (Nelder-Mead from several starts).
Scale-up links are fitted on single-node rows first; scale-out links then on multi-node rows with
the scale-up fit held. After a refit: rebuild, `flopcast validate`, review the diff.

usage: scripts/fit_collectives.py [GROUNDTRUTH_DIR] > presets/collectives/fabrics.json
"""
import csv
import json
import math
import os
import sys

GT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../shared/groundtruth")

# GPU name -> (scale-up link, per-direction GB/s, GPUs per node), from presets/hardware.
HARDWARE = {
    "A100-80G-SXM": ("nvlink3", 300),
    "H100-SXM": ("nvlink4", 450),
    "H200-SXM": ("nvlink4", 450),
    "B200-SXM": ("nvlink5", 900),
    "L40S": ("pcie4", 32),
}
# Systems whose scale-out network is known (see cli/validate/loaders.cpp, collective_network).
NETWORK = {
    "h100_dgx": ("ib-ndr", 400 / 8),           # DGX H100: a 400 Gb/s NDR NIC per GPU
    "gcp_a3-megagpu-8g:2-node": ("tcpxo", 200 / 8),  # a3-megagpu-8g: 8 x 200 Gb/s GPUDirect-TCPXO
}
OPS = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
       "alltoall": "all_to_all", "sendrecv": "send_recv"}
IDENTITY = ["gpu", "system_setup", "implementation", "dtype", "op", "num_ranks", "ranks_per_node",
            "num_nodes", "message_bytes"]
PARAMS = ["efficiency", "ll_efficiency", "base_latency_us", "hop_latency_us", "simple_latency_us"]


def fnv1a64(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def is_train(source, row, header):
    ident = " ".join(f"{c}={row[c]}" for c in IDENTITY if c in header)
    return fnv1a64(source + " " + ident) % 100 < 70


def rows():
    files = ["aiconfigurator/aic_collectives.csv", "vidur/vidur_collectives.csv",
             "nccl_tests_logs/a3mega_h100_2node_allreduce.csv"]
    for rel in files:
        path = os.path.join(GT, rel)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            reader = csv.DictReader(f)
            for r in reader:
                if r.get("sanity_flag", "ok") not in ("", "ok") or r["implementation"] != "nccl":
                    continue
                if r["gpu"] not in HARDWARE or r["op"] not in OPS:
                    continue
                nodes = int(r.get("num_nodes") or 1)
                setup = r.get("system_setup", "")
                if "pairwise" in setup:
                    continue  # NVLink bridges between pairs only: not the preset's topology
                if nodes > 1 and setup not in NETWORK:
                    continue  # inter-node network undocumented
                if HARDWARE[r["gpu"]][0].startswith("pcie") and int(r["num_ranks"]) > 2:
                    continue  # PCIe through the CPU root complex: contention not modelled
                if not is_train(os.path.basename(rel), r, reader.fieldnames):
                    continue
                link, bw = HARDWARE[r["gpu"]]
                yield {"op": OPS[r["op"]], "n": int(r["num_ranks"]),
                       "m": int(r.get("ranks_per_node") or r["num_ranks"]), "nodes": nodes,
                       "bytes": float(r["message_bytes"]), "t_us": float(r["measured_time_us"]),
                       "up": link, "up_bw": bw * 1e9,
                       "out": NETWORK.get(setup, (None, 0))[0],
                       "out_bw": NETWORK.get(setup, (None, 0))[1] * 1e9}


def ring_traffic(op, n, s):
    if op == "all_reduce":
        return 2 * (n - 1), 2 * (n - 1) / n * s
    if op in ("all_gather", "reduce_scatter"):
        return n - 1, (n - 1) / n * s
    if op == "all_to_all":
        return 1, (n - 1) / n * s
    return 1, s  # send_recv


def protocol_time(stages, simple):
    base = hops = transfer = 0.0
    for f, bw, steps, nbytes in stages:
        eff = f["efficiency"] if simple else f["ll_efficiency"]
        base = max(base, f["base_latency_us"] + (f["simple_latency_us"] if simple else 0))
        hops += steps * f["hop_latency_us"]
        if nbytes > 0:
            transfer = max(transfer, nbytes / (bw * eff) * 1e6)
    return base + hops + transfer


def predict_us(r, up, out):
    n, m, nodes, s, op = r["n"], r["m"], r["nodes"], r["bytes"], r["op"]
    steps, nbytes = ring_traffic(op, n, s)
    if nodes == 1:
        plans = [[(up, r["up_bw"], steps, nbytes)]]
    elif op == "send_recv":
        plans = [[(up, r["up_bw"], 0, 0), (out, r["out_bw"], 1, s)]]
    else:  # all-reduce: ring, tree, hierarchical (core/src/collective.cpp)
        node_bw = r["out_bw"] * m
        plans = [[(up, r["up_bw"], 0, nbytes), (out, node_bw, steps, nbytes)],
                 [(up, r["up_bw"], 2 * (m - 1), nbytes),
                  (out, node_bw, 2 * math.ceil(math.log2(nodes)), nbytes)],
                 [(up, r["up_bw"], 2 * (m - 1), 2 * (m - 1) / m * s),
                  (out, r["out_bw"], 2 * (nodes - 1), 2 * (nodes - 1) / nodes * s / m)]]
    return min(min(protocol_time(p, True), protocol_time(p, False)) for p in plans)


def loss(sample, up_of, out_of):
    total = 0.0
    for r in sample:
        p = predict_us(r, up_of(r), out_of(r))
        total += abs(math.log(p / r["t_us"]))
    return total / len(sample)


def to_params(x):
    # Efficiencies through a logistic (0..1), latencies through exp: unconstrained search.
    return {"efficiency": 1 / (1 + math.exp(-x[0])), "ll_efficiency": 1 / (1 + math.exp(-x[1])),
            "base_latency_us": math.exp(x[2]), "hop_latency_us": math.exp(x[3]),
            "simple_latency_us": math.exp(x[4])}


def nelder_mead(f, x0, step=0.5, iters=600):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0) for j in range(n)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                pts = [pts[0]] + [[pts[0][j] + 0.5 * (p[j] - pts[0][j]) for j in range(n)]
                                  for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    i = min(range(n + 1), key=lambda k: vals[k])
    return pts[i], vals[i]


def fit(sample, up_of, out_of, which):
    # A deterministic subsample keeps the search fast; every row still counts in the report.
    sample = sample[::max(1, len(sample) // 1200)]
    best = None
    for x0 in ([1.0, 0.0, 1.5, -0.5, 3.0], [2.0, 0.5, 2.0, 0.0, 2.0], [0.5, -0.5, 1.0, -1.0, 4.0]):
        x = x0
        for _ in range(3):  # restart from the optimum until it stops improving
            x, v = nelder_mead(lambda y: loss(sample, *(
                (lambda r: to_params(y), out_of) if which == "up" else (up_of, lambda r: to_params(y)))),
                x)
        if best is None or v < best[1]:
            best = (x, v)
    return to_params(best[0]), best[1]


def median_ape_pct(sample, up_of, out_of):
    apes = sorted(abs(predict_us(r, up_of(r), out_of(r)) / r["t_us"] - 1) * 100 for r in sample)
    return apes[len(apes) // 2]


def main():
    data = list(rows())
    fabrics = {}
    for link in sorted({r["up"] for r in data}):
        sample = [r for r in data if r["up"] == link and r["nodes"] == 1]
        p, _ = fit(sample, None, lambda r: None, "up")
        fabrics[link] = p
        fabrics[link]["train_rows"] = len(sample)
        fabrics[link]["train_median_ape_pct"] = median_ape_pct(sample, lambda r: p, lambda r: None)
    for link in sorted({r["out"] for r in data if r["nodes"] > 1}):
        sample = [r for r in data if r["out"] == link and r["nodes"] > 1]
        up_of = lambda r: fabrics[r["up"]]
        p, _ = fit(sample, up_of, None, "out")
        fabrics[link] = p
        fabrics[link]["train_rows"] = len(sample)
        fabrics[link]["train_median_ape_pct"] = median_ape_pct(sample, up_of, lambda r: p)
    for f in fabrics.values():
        for k, v in f.items():
            if isinstance(v, float):
                f[k] = float(f"{v:.4g}")
    doc = {
        "schema_version": 1,
        "id": "fabrics",
        "name": "Collective fabric models per link type (fitted)",
        "source": "scripts/fit_collectives.py on the train split (70%, flopcast validate's split) of "
                  "../shared/groundtruth: aiconfigurator nccl-tests (A100, H100, H200, B200, L40S), "
                  "vidur torch.distributed NCCL (A100/H100 DGX), the 2 x 8 H100 a3-mega nccl-tests log",
        "notes": "Per link type: Simple-protocol efficiency and LL/LL128 efficiency (fractions of the "
                 "per-direction link bandwidth), base latency per collective, latency per algorithm "
                 "step, extra fixed latency of the Simple protocol. Minimises the mean |log(pred / "
                 "measured)| over all sizes of the link's NCCL rows (custom all-reduce rows and "
                 "pairwise-NVLink systems excluded); scale-out links fitted on multi-node rows with "
                 "the scale-up fit held. ib-ndr: vidur's H100 DGX 2-node send/recv only; tcpxo: the "
                 "a3-mega all-reduce log only. train_median_ape_pct is over all sizes.",
        "fabrics": fabrics,
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
