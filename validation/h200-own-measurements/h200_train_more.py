# One-shot measurement on the lent GPU: single-GPU training steps of Llama-3.2-1B/3B-shaped
# models at 8k and 16k tokens and with full activation recomputation (fp32 master weights, bf16
# autocast, fused AdamW, SDPA). Output: $OUT/train_more.json.
import json, os, traceback
import torch, torch.nn.functional as F
from llama_train import LM, cfgs
out = os.environ.get("OUT", "/tmp"); R = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
def save():
    json.dump(R, open(os.path.join(out, "train_more.json"), "w"), indent=1)
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
