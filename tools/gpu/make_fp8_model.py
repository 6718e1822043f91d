"""Quantizes a bf16 safetensors model folder (e.g. one `zinfer make-model` wrote) into an FP8 W8A8
checkpoint as the Hub ships them, so that benchmarks load FP8 weights instead of quantizing online
at every start (weights are random; speed does not depend on them). Runs on the GPU machine with torch.
  --scheme channel  compressed-tensors float-quantized: `weight` e4m3 [N, K] and `weight_scale`
                    float32 [N, 1] (w = q · s, s = amax of the row / 448), activations dynamic per
                    token (llm-compressor's FP8_DYNAMIC); lm_head stays bf16.
  --scheme block    quant_method "fp8" with weight_block_size [128, 128]: `weight` e4m3 and
                    `weight_scale_inv` float32 [ceil(N/128), ceil(K/128)] (w = q · s per block),
                    activations dynamic per 1 x 128 group (the DeepSeek-V3 / Qwen3-FP8 format).
  python3 tools/gpu/make_fp8_model.py SRC DST [--scheme channel|block]"""
import argparse, glob, os
import torch
from safetensors.torch import load_file, save_file
from quantized_checkpoint import finish_folder, is_linear_weight, start_folder

ap = argparse.ArgumentParser()
ap.add_argument("src"); ap.add_argument("dst")
ap.add_argument("--scheme", choices=("channel", "block"), default="channel")
a = ap.parse_args()
start_folder(a.src, a.dst)
E4M3_MAX = 448.0
scale_name = "weight_scale" if a.scheme == "channel" else "weight_scale_inv"


def quantize(W):  # [N, K] float32 -> (e4m3 codes, scales)
    if a.scheme == "channel":
        s = (W.abs().amax(1, keepdim=True) / E4M3_MAX).clamp(min=1e-12)
        return (W / s).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), s
    N, K = W.shape
    B = 128
    Np, Kp = (N + B - 1) // B * B, (K + B - 1) // B * B
    P = torch.zeros(Np, Kp, device=W.device)
    P[:N, :K] = W
    blocks = P.view(Np // B, B, Kp // B, B)
    s = (blocks.abs().amax((1, 3)) / E4M3_MAX).clamp(min=1e-12)  # [N/128, K/128]
    q = (blocks / s[:, None, :, None]).clamp(-E4M3_MAX, E4M3_MAX).view(Np, Kp)[:N, :K]
    return q.contiguous().to(torch.float8_e4m3fn), s


for path in sorted(glob.glob(os.path.join(a.src, "*.safetensors"))):
    out = {}
    for name, t in load_file(path, device="cuda").items():
        if not is_linear_weight(name):
            out[name] = t.contiguous(); continue
        q, s = quantize(t.float())
        out[name] = q
        out[name[: -len("weight")] + scale_name] = s.float().contiguous()
    save_file({k: v.cpu() for k, v in out.items()}, os.path.join(a.dst, os.path.basename(path)))
if a.scheme == "channel":
    config = {
        "quant_method": "compressed-tensors", "format": "float-quantized", "quantization_status": "compressed",
        "ignore": ["lm_head"],
        "config_groups": {"group_0": {
            "targets": ["Linear"], "format": "float-quantized",
            "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False},
            "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "symmetric": True,
                                  "dynamic": True}}}}
else:
    config = {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3",
              "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]}
finish_folder(a.src, a.dst, lambda prefix: [prefix + "weight", prefix + scale_name], config)
