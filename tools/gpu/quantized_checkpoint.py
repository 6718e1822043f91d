"""What the scripts that quantize a bf16 safetensors model folder share (make_gptq_model.py,
make_fp8_model.py): which tensors they quantize, and writing the new folder around the tensors:
the files other than weights copied, the shard index's names, the config's quantization_config."""
import glob, json, os, shutil

LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def is_linear_weight(name):
    return name.endswith(".weight") and any(p in name for p in LINEAR)


def start_folder(src, dst):
    """Creates dst with src's files other than the weights, their index and the config."""
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if not f.endswith(".safetensors") and f != "config.json" and not f.endswith(".index.json"):
            shutil.copy(os.path.join(src, f), dst)


def finish_folder(src, dst, tensor_names, quantization_config):
    """Writes dst's shard index, each linear weight's name replaced by tensor_names(prefix) (prefix:
    the name without "weight"), and src's config with quantization_config."""
    for f in glob.glob(os.path.join(src, "*.index.json")):
        idx = json.load(open(f))
        wm = {}
        for name, file in idx["weight_map"].items():
            for n in (tensor_names(name[: -len("weight")]) if is_linear_weight(name) else [name]):
                wm[n] = file
        idx["weight_map"] = wm
        json.dump(idx, open(os.path.join(dst, os.path.basename(f)), "w"), indent=1)
    cfg = json.load(open(os.path.join(src, "config.json")))
    cfg["quantization_config"] = quantization_config
    json.dump(cfg, open(os.path.join(dst, "config.json"), "w"), indent=1)
