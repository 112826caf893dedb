# One-shot measurement on the lent GPU: GEMM, HBM, and a CUDA-graphed Llama-3.1-8B-shaped decode
# step and prefill (random bf16 weights, torch kernels). Output: $OUT/results.json.
import json, os, time, math, subprocess, traceback
import torch
import torch.nn.functional as F
from triton.testing import do_bench

out = os.environ.get("OUT", "/tmp")
R = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False
def save():
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(R, f, indent=1)
def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu",
                               "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except Exception as e:
        return str(e)
R["smi_start"] = smi()
t0 = time.time()
# --- HBM
ONLY = os.environ.get("PARTS", "")
try:
    assert not ONLY, "skipped"
    x = torch.empty(2 * 1024**3, dtype=torch.uint8, device=dev)  # 2 GiB
    y = torch.empty_like(x)
    ms = do_bench(lambda: y.copy_(x), warmup=25, rep=200)
    R["hbm_copy_TBps"] = 2 * x.numel() / (ms * 1e-3) / 1e12
    xf = x.view(torch.bfloat16)
    ms = do_bench(lambda: xf.sum(dtype=torch.float32), warmup=25, rep=200)
    R["hbm_read_TBps"] = x.numel() / (ms * 1e-3) / 1e12
    del x, y, xf
except Exception:
    R["hbm_error"] = traceback.format_exc()
save(); print("hbm", R.get("hbm_copy_TBps"), R.get("hbm_read_TBps"), flush=True)
# --- GEMM
gem = []
shapes = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (128256, 4096)]
for (N, K) in ([] if ONLY else shapes):
    W = torch.randn(N, K, device=dev, dtype=torch.bfloat16)
    W8 = W.to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=dev)
    for M in [1, 16, 64, 256, 1024, 4096, 8192]:
        A = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        row = {"m": M, "n": N, "k": K}
        try:
            row["bf16_us"] = 1e3 * do_bench(lambda: F.linear(A, W), warmup=10, rep=60)
        except Exception as e:
            row["bf16_err"] = str(e)[:200]
        try:
            A8 = A.to(torch.float8_e4m3fn)
            row["fp8_us"] = 1e3 * do_bench(lambda: torch._scaled_mm(A8, W8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), warmup=10, rep=60)
        except Exception as e:
            row["fp8_err"] = str(e)[:200]
        gem.append(row)
    del W, W8
R["gemm"] = gem
save(); print("gemm done", time.time() - t0, flush=True)
# --- Llama-3.1-8B-shaped model
L, H, NH, KVH, D, FF, V = 32, 4096, 32, 8, 128, 14336, 128256
G = NH // KVH
g = torch.Generator(device=dev).manual_seed(0)
def w(*s):
    return (torch.randn(*s, device=dev, dtype=torch.bfloat16, generator=g) * 0.02)
layers = [dict(n1=torch.ones(H, device=dev, dtype=torch.bfloat16), qkv=w((NH + 2 * KVH) * D, H), o=w(H, NH * D),
               n2=torch.ones(H, device=dev, dtype=torch.bfloat16), gu=w(2 * FF, H), d=w(H, FF)) for _ in range(L)]
emb = w(V, H); nf = torch.ones(H, device=dev, dtype=torch.bfloat16); head = w(V, H)
def rope(t, cos, sin):  # t [..., D]
    t1, t2 = t[..., : D // 2], t[..., D // 2 :]
    return torch.cat((t1 * cos - t2 * sin, t2 * cos + t1 * sin), dim=-1)
def mlp(h, p):
    gu = F.linear(h, p["gu"]); a = F.silu(gu[..., :FF]) * gu[..., FF:]
    return F.linear(a, p["d"])
def decode_step(tok, kc, vc, pos, cos, sin):
    b = tok.shape[0]
    x = F.embedding(tok, emb)  # [b, H]
    for i, p in enumerate(layers):
        h = F.rms_norm(x, (H,), p["n1"], 1e-5)
        qkv = F.linear(h, p["qkv"])
        q = qkv[:, : NH * D].view(b, NH, D); k = qkv[:, NH * D : (NH + KVH) * D].view(b, KVH, D)
        v = qkv[:, (NH + KVH) * D :].view(b, KVH, D)
        q = rope(q, cos, sin); k = rope(k, cos, sin)
        kc[i][:, :, pos] = k; vc[i][:, :, pos] = v
        a = F.scaled_dot_product_attention(q.view(b, KVH, G, D), kc[i], vc[i])  # grouped heads as query rows
        x = x + F.linear(a.reshape(b, NH * D), p["o"])
        x = x + mlp(F.rms_norm(x, (H,), p["n2"], 1e-5), p)
    return F.linear(F.rms_norm(x, (H,), nf, 1e-5), head)
dec = []
cos = torch.ones(D // 2, device=dev, dtype=torch.bfloat16); sin = torch.zeros(D // 2, device=dev, dtype=torch.bfloat16)
for (b, ctx) in [(1, 1024)] if ONLY else [(1, 1024), (1, 8192), (8, 2048), (16, 1024), (16, 4096), (32, 2048), (64, 1024), (64, 4096), (128, 2048), (256, 1024)]:
    row = {"batch": b, "context": ctx}
    try:
        kc = [torch.randn(b, KVH, ctx, D, device=dev, dtype=torch.bfloat16) for _ in range(L)]
        vc = [torch.randn(b, KVH, ctx, D, device=dev, dtype=torch.bfloat16) for _ in range(L)]
        tok = torch.zeros(b, dtype=torch.long, device=dev)
        pos = ctx - 1
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                decode_step(tok, kc, vc, pos, cos, sin)
        torch.cuda.current_stream().wait_stream(s)
        e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(); e0.record()
        for _ in range(5):
            decode_step(tok, kc, vc, pos, cos, sin)
        e1.record(); torch.cuda.synchronize(); row["eager_ms"] = e0.elapsed_time(e1) / 5
        cg = torch.cuda.CUDAGraph()
        with torch.cuda.graph(cg):
            decode_step(tok, kc, vc, pos, cos, sin)
        for _ in range(3):
            cg.replay()
        torch.cuda.synchronize()
        ts = []
        for _ in range(20):
            e0.record(); cg.replay(); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1))
        ts.sort(); row["graph_ms_median"] = ts[len(ts) // 2]; row["graph_ms_min"] = ts[0]
        # attention alone, one layer, times L
        qq = torch.randn(b, KVH, G, D, device=dev, dtype=torch.bfloat16)
        row["attn_all_layers_ms"] = L * do_bench(lambda: F.scaled_dot_product_attention(qq, kc[0], vc[0]), warmup=10, rep=50)
        del kc, vc, cg
    except Exception:
        row["error"] = traceback.format_exc()[-600:]
    torch.cuda.empty_cache()
    dec.append(row); print(row, flush=True)
# kernels per decode step (batch 1): how many launches the graph replays
try:
    from torch.profiler import profile, ProfilerActivity
    kc = [torch.zeros(1, KVH, 1024, D, device=dev, dtype=torch.bfloat16) for _ in range(L)]; vc = [t.clone() for t in kc]
    tok = torch.zeros(1, dtype=torch.long, device=dev)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        decode_step(tok, kc, vc, 1023, cos, sin); torch.cuda.synchronize()
    ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    R["decode_kernels_b1"] = len(ev)
    agg = {}
    for e in ev:
        k = e.name[:60]; agg.setdefault(k, [0, 0.0]); agg[k][0] += 1; agg[k][1] += e.device_time
    R["decode_kernel_table_b1"] = sorted(([k, n, t] for k, (n, t) in agg.items()), key=lambda r: -r[2])[:30]
    del kc, vc
except Exception:
    R["profile_error"] = traceback.format_exc()[-600:]
R["decode"] = dec; R["smi_after_decode"] = smi()
save()
# --- prefill, batch 1
def prefill(x, T, mode):
    for p in layers:
        h = F.rms_norm(x, (H,), p["n1"], 1e-5)
        qkv = F.linear(h, p["qkv"])
        q = qkv[:, : NH * D].view(T, NH, D).transpose(0, 1)
        k = qkv[:, NH * D : (NH + KVH) * D].view(T, KVH, D).transpose(0, 1)
        v = qkv[:, (NH + KVH) * D :].view(T, KVH, D).transpose(0, 1)
        q = rope(q, cos, sin); k = rope(k, cos, sin)
        if mode == "gqa":
            a = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True, enable_gqa=True)
        else:
            a = F.scaled_dot_product_attention(q[None], k.repeat_interleave(G, 0)[None], v.repeat_interleave(G, 0)[None], is_causal=True)
        x = x + F.linear(a[0].transpose(0, 1).reshape(T, NH * D), p["o"])
        x = x + mlp(F.rms_norm(x, (H,), p["n2"], 1e-5), p)
    return F.linear(F.rms_norm(x[-1:], (H,), nf, 1e-5), head)
pre = []
for T in [512, 2048, 8192]:
    row = {"tokens": T}
    x = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
    for mode in ["gqa", "expand"]:
        try:
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
                prefill(x, T, mode); torch.cuda.synchronize()
                row[mode + "_ms"] = do_bench(lambda: prefill(x, T, mode), warmup=2, rep=200)
        except Exception as e:
            row[mode + "_err"] = str(e)[:300]
    pre.append(row); print(row, flush=True)
R["prefill"] = pre; R["smi_end"] = smi(); R["seconds"] = time.time() - t0
save(); print("done", R["seconds"], flush=True)
