#include "gpu/quant/ct_fp8_scheme.h"

#include "gpu/model_config.h"
#include "gpu/quant/config_json.h"

namespace zinfer::gpu::quant {
namespace {

using nlohmann::json;
using config_json::fail;
using config_json::field;
using config_json::lower;

// The QuantizationArgs as the library validates them, each key typed, the strategy inferred from
// group_size when absent (none: tensor, -1: channel, positive: group).
struct Args {
  std::string strategy;
  const json* group_size = nullptr;
  const json* block_structure = nullptr;
  bool dynamic = false;
};

Args read_args(const json& a, const std::string& path, const std::string& o) {
  if (!a.is_object()) fail(o, path + " is not an object");
  config_json::check_args_keys(a, path, o);

  const json* type = field(a, "type");
  if (const std::string t = type ? lower(type->get<std::string>()) : "int"; t != "float")
    fail(o, path + ".type '" + t + "' is not supported for float-quantized (float: FP8; int8 W8A8 is not loaded)");
  const json* bits = field(a, "num_bits");
  if (const int64_t b = bits ? bits->get<int64_t>() : 8; b != 8)
    fail(o, path + ".num_bits " + std::to_string(b) + " is not supported for float-quantized (8: float8_e4m3fn)");
  if (const json* s = field(a, "symmetric"); s && !s->get<bool>())
    fail(o, path + ".symmetric false is not supported (FP8 scales are symmetric: no zero point)");
  if (const json* ao = field(a, "actorder"); ao && !(ao->is_boolean() && !ao->get<bool>()))
    fail(o, path + ".actorder " + ao->dump() + " is not supported for FP8 (null)");
  config_json::check_symmetric_dtypes(a, path, o);

  Args out;
  out.group_size = field(a, "group_size");
  out.block_structure = field(a, "block_structure");
  const json* strategy = field(a, "strategy");
  out.strategy = strategy ? lower(strategy->get<std::string>()) : "";
  if (out.strategy.empty()) {
    const int64_t size = out.group_size ? out.group_size->get<int64_t>() : 0;
    out.strategy = !out.group_size ? "tensor" : size == -1 ? "channel" : "group";
  }
  const int64_t gs = out.group_size ? out.group_size->get<int64_t>() : -1;
  if (gs == 0 || gs < -1) fail(o, path + ".group_size " + std::to_string(gs) + " is not a group size");
  if ((gs > 0) != (out.strategy == "group"))
    fail(o, path + ".group_size " + (out.group_size ? out.group_size->dump() : std::string("null")) +
                " contradicts strategy '" + out.strategy + "'");
  if (const json* d = field(a, "dynamic")) {
    if (!d->is_boolean())
      fail(o, path + ".dynamic " + d->dump() + " is not supported (true or false; 'local' is NVFP4's)");
    out.dynamic = d->get<bool>();
  }
  return out;
}

// block_structure [bn, bk], or the older string "bnxbk".
std::pair<int64_t, int64_t> block_of(const json& b, const std::string& path, const std::string& o) {
  int64_t n = 0, k = 0;
  if (b.is_array() && b.size() == 2 && b[0].is_number_integer() && b[1].is_number_integer()) {
    n = b[0].get<int64_t>(), k = b[1].get<int64_t>();
  } else if (b.is_string()) {
    const std::string s = lower(b.get<std::string>());
    const auto x = s.find('x');
    try {
      size_t used_n = 0, used_k = 0;
      if (x != std::string::npos) {
        n = std::stoll(s.substr(0, x), &used_n);
        k = std::stoll(s.substr(x + 1), &used_k);
      }
      if (used_n != x || used_k != s.size() - x - 1) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
  }
  if (n <= 0 || k <= 0)
    fail(o, path + ".block_structure " + b.dump() + " is not supported (two positive sizes, [128, 128] as written)");
  return {n, k};
}

}  // namespace

void read_ct_fp8_scheme(const json& weights, const json* inputs, CtGroup& g, const std::string& path,
                        const std::string& o) {
  const std::string wp = path + ".weights", ip = path + ".input_activations";
  const Args w = read_args(weights, wp, o);
  if (w.strategy != "tensor" && w.strategy != "channel" && w.strategy != "block")
    fail(o, wp + ".strategy '" + w.strategy + "' is not supported for FP8 weights (tensor, channel, block)");
  if (w.dynamic) fail(o, wp + ".dynamic true is not supported (weights are stored: false)");
  if (w.strategy == "block") {
    if (!w.block_structure) fail(o, wp + ".block_structure is missing (strategy 'block')");
    std::tie(g.block_n, g.block_k) = block_of(*w.block_structure, wp, o);
  } else if (w.block_structure) {
    fail(o, wp + ".block_structure is not supported with strategy '" + w.strategy + "' (block)");
  }
  g.fp8 = true;
  g.bits = 8;
  g.group_size = -1;
  g.sym = true;
  g.per_tensor = w.strategy == "tensor";

  if (inputs == nullptr)
    fail(o, ip + " is missing: FP8 weight-only (W8A16) is not supported (the FP8 layers quantize their "
                 "activations; W8A8 names them)");
  const Args x = read_args(*inputs, ip, o);
  if (x.block_structure) fail(o, ip + ".block_structure is not supported (activations are quantized per token)");
  if (x.strategy == "token") {
    if (!x.dynamic) fail(o, ip + ".dynamic false is not supported with strategy 'token' (per-token scales are dynamic)");
    g.activation = ActivationScheme::kDynamic;
  } else if (x.strategy == "tensor") {
    if (x.dynamic)
      fail(o, ip + ".dynamic true is not supported with strategy 'tensor' (one scale over the whole batch; token "
                   "for dynamic scales, or a static input_scale)");
    g.activation = ActivationScheme::kStatic;
  } else if (x.strategy == "group") {
    if (!x.dynamic) fail(o, ip + ".dynamic false is not supported with strategy 'group' (group scales are dynamic)");
    if (w.strategy != "block" || x.group_size->get<int64_t>() != g.block_k)
      fail(o, ip + ".strategy 'group' with group_size " + x.group_size->dump() + " is not supported beside weights " +
                  (w.strategy == "block" ? "in blocks of " + std::to_string(g.block_k) + " inputs" : "of strategy '" +
                                                                                                         w.strategy + "'") +
                  " (per token and weight block: group_size = block_structure[1])");
    g.activation = ActivationScheme::kDynamic;
  } else {
    fail(o, ip + ".strategy '" + x.strategy + "' is not supported for FP8 activations (token, tensor, group)");
  }
  if (w.strategy == "block" && x.strategy != "group")
    fail(o, ip + ".strategy '" + x.strategy + "' is not supported beside block weights (group with group_size " +
                std::to_string(g.block_k) + ": a block layer quantizes its inputs per token and block)");
}

std::optional<json> ct_fp8_preset(const std::string& name) {
  const char* text = nullptr;
  if (name == "FP8")
    text = R"({"weights": {"num_bits": 8, "type": "float", "strategy": "tensor", "symmetric": true, "dynamic": false},
               "input_activations": {"num_bits": 8, "type": "float", "strategy": "tensor", "symmetric": true,
                                     "dynamic": false}})";
  else if (name == "FP8_DYNAMIC")
    text = R"({"weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": true, "dynamic": false},
               "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "symmetric": true,
                                     "dynamic": true}})";
  else if (name == "FP8_BLOCK")
    text = R"({"weights": {"num_bits": 8, "type": "float", "strategy": "block", "symmetric": true, "dynamic": false,
                           "block_structure": [128, 128]},
               "input_activations": {"num_bits": 8, "type": "float", "strategy": "group", "symmetric": true,
                                     "dynamic": true, "group_size": 128}})";
  if (text == nullptr) return std::nullopt;
  return json::parse(text);
}

}  // namespace zinfer::gpu::quant
