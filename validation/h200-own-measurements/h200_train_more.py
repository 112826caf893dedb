# One-shot measurement on the lent GPU: board power in compute-bound, memory-bound and idle
# phases (NVML, 50 ms samples), and single-GPU training steps of Llama-3.2-1B/3B-shaped models
# (fp32 master weights, bf16 autocast, fused AdamW, flash SDPA). Output: $OUT/train_power.json.
import json, os, time, threading, traceback
import torch, torch.nn as nn, torch.nn.functional as F
import pynvml
out = os.environ.get("OUT", "/tmp"); R = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
def save():
    json.dump(R, open(os.path.join(out, "train_more.json"), "w"), indent=1)
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
# --- training
class Block(nn.Module):
    def __init__(s, H, NH, KV, FF):
        super().__init__(); s.NH, s.KV, s.D = NH, KV, H // NH
        s.n1 = nn.RMSNorm(H, eps=1e-5); s.qkv = nn.Linear(H, (NH + 2 * KV) * s.D, bias=False); s.o = nn.Linear(NH * s.D, H, bias=False)
        s.n2 = nn.RMSNorm(H, eps=1e-5); s.gu = nn.Linear(H, 2 * FF, bias=False); s.d = nn.Linear(FF, H, bias=False); s.FF = FF
    def forward(s, x, cos, sin):
        B, T, H = x.shape
        q, k, v = s.qkv(s.n1(x)).split([s.NH * s.D, s.KV * s.D, s.KV * s.D], -1)
        q = q.view(B, T, s.NH, s.D).transpose(1, 2); k = k.view(B, T, s.KV, s.D).transpose(1, 2); v = v.view(B, T, s.KV, s.D).transpose(1, 2)
        def rope(t):
            t1, t2 = t[..., : s.D // 2], t[..., s.D // 2 :]
            return torch.cat((t1 * cos - t2 * sin, t2 * cos + t1 * sin), -1)
        a = F.scaled_dot_product_attention(rope(q), rope(k), v, is_causal=True, enable_gqa=True)
        x = x + s.o(a.transpose(1, 2).reshape(B, T, H))
        g, u = s.gu(s.n2(x)).split([s.FF, s.FF], -1)
        return x + s.d(F.silu(g) * u)
class LM(nn.Module):
    def __init__(s, L, H, NH, KV, FF, V):
        super().__init__(); s.emb = nn.Embedding(V, H); s.blocks = nn.ModuleList(Block(H, NH, KV, FF) for _ in range(L)); s.nf = nn.RMSNorm(H, eps=1e-5)
        s.D = H // NH
    ckpt = False
    def forward(s, tok):
        T = tok.shape[1]; pos = torch.arange(T, device=tok.device, dtype=torch.float32)
        inv = 1.0 / (500000 ** (torch.arange(0, s.D, 2, device=tok.device, dtype=torch.float32) / s.D))
        ang = pos[:, None] * inv[None]; cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
        x = s.emb(tok)
        for blk in s.blocks:
            if s.ckpt:
                x = torch.utils.checkpoint.checkpoint(blk, x, cos, sin, use_reentrant=False)
            else:
                x = blk(x, cos, sin)
        return F.linear(s.nf(x), s.emb.weight)  # tied embeddings (Llama 3.2)
cfgs = {"llama-3.2-1b": (16, 2048, 32, 8, 8192, 128256), "llama-3.2-3b": (28, 3072, 24, 8, 8192, 128256)}
RUNS = [("llama-3.2-1b", 8192, 1, False), ("llama-3.2-1b", 8192, 2, False), ("llama-3.2-1b", 4096, 4, True),
        ("llama-3.2-1b", 4096, 8, True), ("llama-3.2-3b", 8192, 1, False), ("llama-3.2-3b", 4096, 4, True),
        ("llama-3.2-3b", 16384, 1, True)]
train = []
built = {}
for name, seq, mb, ck in RUNS:
    c = cfgs[name]
    row = {"model": name, "seq_len": seq, "micro_batch": mb, "recompute_full": ck}
    try:
        if name not in built:
            built.clear(); torch.cuda.empty_cache(); torch.manual_seed(0)
            with torch.device('cuda'):
                m = LM(*c)
            built[name] = (m, torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True))
        m, opt = built[name]
        m.ckpt = ck
        tok = torch.randint(0, c[5], (mb, seq + 1), device="cuda")
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = m(tok[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, c[5]), tok[:, 1:].reshape(-1))
            loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        for _ in range(2): step()
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
        e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(4): step()
        e1.record(); torch.cuda.synchronize()
        row["step_ms"] = e0.elapsed_time(e1) / 4; row["tokens_per_s"] = mb * seq / (row["step_ms"] / 1e3)
        row["peak_mem_GB"] = torch.cuda.max_memory_allocated() / 1e9
    except Exception:
        row["error"] = traceback.format_exc()[-400:]
    torch.cuda.empty_cache()
    train.append(row); print(row, flush=True); R["train"] = train; save()
R["train"] = train; save(); print("done", flush=True)
