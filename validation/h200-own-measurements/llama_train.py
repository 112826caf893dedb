# Llama-shaped decoder for the single-GPU training measurements (h200_train_power.py,
# h200_train_more.py): RMSNorm, fused QKV with GQA, RoPE, SDPA causal attention (cuDNN/flash),
# gated SiLU MLP, tied embeddings (Llama 3.2). `ckpt`: activation recomputation per block.
import torch, torch.nn as nn, torch.nn.functional as F
import torch.utils.checkpoint
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
# (layers, hidden, heads, KV heads, FFN, vocab) from the models' config.json
cfgs = {"llama-3.2-1b": (16, 2048, 32, 8, 8192, 128256), "llama-3.2-3b": (28, 3072, 24, 8, 8192, 128256)}
