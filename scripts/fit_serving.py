#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fits the Tier-1 engine overheads (presets/engines/{vllm,sglang}.json: step_overhead_us,
request_overhead_us) on the TRAIN split of the serving rows, and prints both splits' errors.

    python3 scripts/fit_serving.py build/native-release/cli/flopcast ../shared/groundtruth/e2e

For each engine it minimises the mean |ln(predicted / measured)| over that engine's train rows
(absolute, not squared: a few rows near saturation miss by 10x and would otherwise decide the fit;
the targets are median errors) (every latency metric: TTFT, TPOT, E2E at mean and percentiles) by coordinate descent on
log grids. Candidates reach cli/validate/e2e_serving.cpp through FLOPCAST_SERVING_FIT, so the fit
prices exactly what `flopcast validate` predicts. The split is validate's (70/30 by hash of the
row identity): test rows never enter the fit. Copy the printed values into the profiles by hand.
"""
import csv
import io
import json
import math
import os
import subprocess
import sys

# Rows of each engine: group prefix and, for the SGLang bench, the engine named in the row id.
ENGINES = {"vllm": ("e2e/inference-sim-vllm-h100/", "e2e/sglang-vs-vllm-bench/", "-vllm-"),
           "sglang": (None, "e2e/sglang-vs-vllm-bench/", "-sglang-")}
GRIDS = {"step_overhead_us": [0.0] + [25 * 1.25 ** i for i in range(22)],
         "request_overhead_us": [0.0] + [250 * 1.25 ** i for i in range(26)]}


def rows(flopcast, data, overrides):
    env = dict(os.environ, FLOPCAST_SERVING_FIT=json.dumps(overrides))
    out = subprocess.run([flopcast, "validate", data, "--rows", "/dev/stdout", "--format", "json"],
                         env=env, capture_output=True, text=True, check=False).stdout
    lines = [l for l in out.splitlines() if l.startswith("e2e/") or l.startswith("group,")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def mine(engine, r):
    own, shared, tag = ENGINES[engine]
    if own and r["group"].startswith(own):
        return True
    return r["group"].startswith(shared) and tag in r["row"]


def loss(flopcast, data, overrides, engine, split="train"):
    logs = [math.log(float(r["predicted"]) / float(r["measured"]))
            for r in rows(flopcast, data, overrides) if mine(engine, r) and r["split"] == split]
    return sum(abs(l) for l in logs) / max(1, len(logs)), len(logs)


def main():
    flopcast, data = sys.argv[1], sys.argv[2]
    overrides = {e: {"step_overhead_us": 300.0, "request_overhead_us": 0.0} for e in ENGINES}
    for engine in ENGINES:
        best, n = loss(flopcast, data, overrides, engine)
        print(f"{engine}: {n} train rows, mean |ln error| {best:.4f} at start")
        for _ in range(3):
            for name, grid in GRIDS.items():
                for v in grid:
                    cand = json.loads(json.dumps(overrides))
                    cand[engine][name] = round(v, 1)
                    l, _ = loss(flopcast, data, cand, engine)
                    if l < best - 1e-12:
                        best, overrides = l, cand
        test, m = loss(flopcast, data, overrides, engine, "test")
        print(f"{engine}: {overrides[engine]} train mean |ln| {best:.4f} ({n} rows), "
              f"test mean |ln| {test:.4f} ({m} rows)")
    print(json.dumps(overrides))


if __name__ == "__main__":
    main()
