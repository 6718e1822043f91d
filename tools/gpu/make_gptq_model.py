"""Quantizes a bf16 safetensors model folder (e.g. one `zinfer make-model` wrote) into a GPTQ checkpoint
(AutoGPTQ's format: qweight int32 [K/8, N], qzeros int32 [groups, N/8] holding zero - 1, scales fp16
[groups, N], g_idx int32 [K]) by round-to-nearest, 4 bits, symmetric, group 128 by default: the
benchmark model for W4A16 at a real model's shapes (weights are random; speed does not depend on
them). Runs on the GPU machine with torch.
  python3 tools/gpu/make_gptq_model.py SRC DST [--group-size 128] [--desc-act]"""
import argparse, glob, os
import torch
from safetensors.torch import load_file, save_file
from quantized_checkpoint import finish_folder, is_linear_weight, start_folder

ap = argparse.ArgumentParser()
ap.add_argument("src"); ap.add_argument("dst")
ap.add_argument("--group-size", type=int, default=128)
ap.add_argument("--desc-act", action="store_true")
a = ap.parse_args()
start_folder(a.src, a.dst)
dev = "cuda"
shifts = (torch.arange(8, device=dev, dtype=torch.int32) * 4)

def pack_rows(q):  # [K, N] values < 16 -> [K/8, N] int32, row k at bits 4 (k % 8)
    K, N = q.shape
    q = q.view(K // 8, 8, N).to(torch.int64) << shifts.view(1, 8, 1).to(torch.int64)
    return _to_i32(q.sum(1))

def _to_i32(v):  # values in [0, 2^32) as int32 bit patterns
    v = v & 0xFFFFFFFF
    return torch.where(v >= 2**31, v - 2**32, v).to(torch.int32)

def pack_cols(z):  # [G, N] -> [G, N/8], column n at bits 4 (n % 8)
    G, N = z.shape
    z = z.view(G, N // 8, 8).to(torch.int64) << shifts.view(1, 1, 8).to(torch.int64)
    return _to_i32(z.sum(2))

gs = a.group_size
for path in sorted(glob.glob(os.path.join(a.src, "*.safetensors"))):
    out = {}
    for name, t in load_file(path, device=dev).items():
        if not is_linear_weight(name):
            out[name] = t.contiguous(); continue
        W = t.float()  # [N, K]
        N, K = W.shape
        g = gs if gs > 0 else K
        G = K // g
        Wg = W.view(N, G, g)
        scale = (Wg.abs().amax(2) / 7).clamp(min=1e-8).half().float()  # [N, G]
        q = torch.clamp(torch.round(Wg / scale.unsqueeze(2)) + 8, 0, 15).to(torch.int32).view(N, K)
        g_idx = torch.arange(K, device=dev, dtype=torch.int32) // g
        if a.desc_act:  # a random act order: input k lands in group perm[k] // g
            perm = torch.randperm(K, device=dev)
            g_idx = (perm // g).to(torch.int32)
            # requantize with the permuted grouping
            scale = torch.zeros(N, G, device=dev)
            for j in range(G):
                cols = (g_idx == j).nonzero().squeeze(1)
                scale[:, j] = (W[:, cols].abs().amax(1) / 7).clamp(min=1e-8).half().float()
            q = torch.clamp(torch.round(W / scale[:, g_idx.long()]) + 8, 0, 15).to(torch.int32)
        prefix = name[: -len("weight")]
        out[prefix + "qweight"] = pack_rows(q.t().contiguous())
        out[prefix + "qzeros"] = pack_cols(torch.full((G, N), 7, device=dev, dtype=torch.int32))
        out[prefix + "scales"] = scale.t().contiguous().half()
        out[prefix + "g_idx"] = g_idx
    save_file({k: v.cpu() for k, v in out.items()}, os.path.join(a.dst, os.path.basename(path)))
finish_folder(a.src, a.dst, lambda p: [p + s for s in ("qweight", "qzeros", "scales", "g_idx")],
              {"quant_method": "gptq", "bits": 4, "group_size": gs, "desc_act": a.desc_act, "sym": True,
               "checkpoint_format": "gptq"})
print("wrote", a.dst)
