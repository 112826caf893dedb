# One-shot measurement on the lent GPU: board power in compute-bound, memory-bound and idle
# phases (NVML, 50 ms samples), and single-GPU training steps of Llama-3.2-1B/3B-shaped models
# (fp32 master weights, bf16 autocast, fused AdamW, flash SDPA). Output: $OUT/train_power.json.
import json, os, time, threading, traceback
import torch, torch.nn as nn, torch.nn.functional as F
import pynvml
out = os.environ.get("OUT", "/tmp"); R = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
def save():
    json.dump(R, open(os.path.join(out, "train_power.json"), "w"), indent=1)
pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0)
R["power_limit_W"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000
class Sampler:
    def __init__(s): s.v = []; s.run = True; s.t = threading.Thread(target=s.loop); s.t.start()
    def loop(s):
        while s.run:
            s.v.append((pynvml.nvmlDeviceGetPowerUsage(h) / 1000, pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)))
            time.sleep(0.05)
    def stop(s):
        s.run = False; s.t.join(); v = s.v[len(s.v) // 4:]  # drop the ramp
        return {"mean_W": sum(p for p, _ in v) / len(v), "max_W": max(p for p, _ in v), "mean_sm_MHz": sum(c for _, c in v) / len(v), "samples": len(v)}
def phase(name, fn, seconds):
    try:
        torch.cuda.synchronize(); s = Sampler(); t0 = time.time(); n = 0
        while time.time() - t0 < seconds:
            fn(); n += 1
            if n % 8 == 0: torch.cuda.synchronize()
        torch.cuda.synchronize(); R["power_" + name] = s.stop(); R["power_" + name]["iters"] = n
    except Exception:
        R["power_" + name + "_error"] = traceback.format_exc()[-500:]
    save(); print(name, R.get("power_" + name), flush=True)
s = Sampler(); time.sleep(3); R["power_idle"] = s.stop(); print("idle", R["power_idle"], flush=True)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
phase("gemm_bf16", lambda: a @ b, 8)
x = torch.empty(2 * 1024**3, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
phase("hbm_copy", lambda: y.copy_(x), 8)
del x, y, a, b
W = torch.randn(28672, 4096, device="cuda", dtype=torch.bfloat16) * 0.02; v1 = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
phase("gemv_m16", lambda: F.linear(v1, W), 8)   # decode-like: weight streaming at m = 16
del W
# --- training
from llama_train import LM, cfgs
train = []
for name, c in cfgs.items():
    try:
        torch.manual_seed(0)
        with torch.device('cuda'):
            m = LM(*c)
        nparam = sum(p.numel() for p in m.parameters())
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
        for mb in [1, 2, 4]:
            row = {"model": name, "params": nparam, "seq_len": 4096, "micro_batch": mb}
            try:
                tok = torch.randint(0, c[5], (mb, 4097), device="cuda")
                def step():
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        logits = m(tok[:, :-1])
                    loss = F.cross_entropy(logits.float().view(-1, c[5]), tok[:, 1:].reshape(-1))
                    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
                for _ in range(3): step()
                torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
                e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
                s = Sampler(); e0.record()
                for _ in range(6): step()
                e1.record(); torch.cuda.synchronize(); pw = s.stop()
                row["step_ms"] = e0.elapsed_time(e1) / 6; row["tokens_per_s"] = mb * 4096 / (row["step_ms"] / 1e3)
                row["peak_mem_GB"] = torch.cuda.max_memory_allocated() / 1e9; row["power"] = pw
            except Exception:
                row["error"] = traceback.format_exc()[-400:]
            train.append(row); print(row, flush=True); R["train"] = train; save()
        del m, opt; torch.cuda.empty_cache()
    except Exception:
        train.append({"model": name, "error": traceback.format_exc()[-400:]})
R["train"] = train; save(); print("done", flush=True)
