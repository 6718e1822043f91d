// config.json / generation_config.json -> ModelConfig. Field defaults follow each architecture's
// transformers config class so that a minimal config.json reads as transformers reads it.
#include "gpu/model_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace zinfer::gpu {
namespace {

using nlohmann::json;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw ModelConfigError(p.string() + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A present, non-null field, else nullptr.
const json* field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

int64_t get_int(const json& obj, const char* key, int64_t fallback, const std::string& origin) {
  const json* v = field(obj, key);
  if (!v) return fallback;
  if (!v->is_number_integer()) throw ModelConfigError(origin + ": '" + key + "' is not an integer");
  return v->get<int64_t>();
}

int64_t require_int(const json& obj, const char* key, const std::string& origin) {
  const json* v = field(obj, key);
  if (!v) throw ModelConfigError(origin + ": missing '" + key + "'");
  if (!v->is_number_integer() || v->get<int64_t>() <= 0)
    throw ModelConfigError(origin + ": '" + key + "' must be a positive integer");
  return v->get<int64_t>();
}

double get_double(const json& obj, const char* key, double fallback, const std::string& origin) {
  const json* v = field(obj, key);
  if (!v) return fallback;
  if (!v->is_number()) throw ModelConfigError(origin + ": '" + key + "' is not a number");
  return v->get<double>();
}

bool get_bool(const json& obj, const char* key, bool fallback, const std::string& origin) {
  const json* v = field(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw ModelConfigError(origin + ": '" + key + "' is not a boolean");
  return v->get<bool>();
}

// eos_token_id may be one id or a list of ids.
std::vector<int32_t> token_id_list(const json& v, const std::string& origin) {
  std::vector<int32_t> ids;
  if (v.is_number_integer()) {
    ids.push_back(v.get<int32_t>());
  } else if (v.is_array()) {
    for (const auto& x : v) {
      if (!x.is_number_integer()) throw ModelConfigError(origin + ": eos_token_id list holds a non-integer");
      ids.push_back(x.get<int32_t>());
    }
  } else {
    throw ModelConfigError(origin + ": eos_token_id is neither an integer nor a list");
  }
  return ids;
}

void read_rope(const json& config, ModelConfig& c, const std::string& origin) {
  // transformers 5 folds theta and scaling into rope_parameters; Hub checkpoints keep
  // rope_theta and rope_scaling at the top level.
  const json* params = field(config, "rope_parameters");
  const json* scaling = params ? params : field(config, "rope_scaling");
  c.rope_theta = get_double(config, "rope_theta", c.rope_theta, origin);
  if (params) c.rope_theta = get_double(*params, "rope_theta", c.rope_theta, origin);
  if (!scaling) return;
  if (!scaling->is_object()) throw ModelConfigError(origin + ": rope scaling parameters are not an object");
  std::string type = "default";
  const json* t = field(*scaling, "rope_type");
  if (!t) t = field(*scaling, "type");
  if (t) {
    if (!t->is_string()) throw ModelConfigError(origin + ": rope_type is not a string");
    type = t->get<std::string>();
  }
  RopeScaling& r = c.rope_scaling;
  r.type = type;
  if (type == "default") return;
  if (type != "llama3" && type != "linear")
    throw ModelConfigError(origin + ": unsupported rope type '" + type + "' (supported: default, linear, llama3)");
  r.factor = get_double(*scaling, "factor", 0.0, origin);
  if (r.factor <= 0) throw ModelConfigError(origin + ": rope type '" + type + "' needs a positive 'factor'");
  if (type == "llama3") {
    r.low_freq_factor = get_double(*scaling, "low_freq_factor", r.low_freq_factor, origin);
    r.high_freq_factor = get_double(*scaling, "high_freq_factor", r.high_freq_factor, origin);
    r.original_max_position_embeddings =
        get_int(*scaling, "original_max_position_embeddings",
                get_int(config, "original_max_position_embeddings", r.original_max_position_embeddings, origin),
                origin);
    if (!(r.high_freq_factor > r.low_freq_factor) || r.low_freq_factor <= 0 || r.original_max_position_embeddings <= 0)
      throw ModelConfigError(origin + ": llama3 rope parameters need 0 < low_freq_factor < high_freq_factor "
                             "and a positive original_max_position_embeddings");
  }
}

}  // namespace

ModelConfig parse_model_config(const std::string& config_json, const std::string& generation_config_json,
                               const std::string& origin) {
  json config;
  try {
    config = json::parse(config_json);
  } catch (const json::exception& e) {
    throw ModelConfigError(origin + ": not valid JSON: " + e.what());
  }
  if (!config.is_object()) throw ModelConfigError(origin + ": not a JSON object");
  ModelConfig c;

  const json* archs = field(config, "architectures");
  if (!archs || !archs->is_array() || archs->empty() || !(*archs)[0].is_string())
    throw ModelConfigError(origin + ": no 'architectures' list naming the model class");
  c.architecture_name = (*archs)[0].get<std::string>();
  if (c.architecture_name == "LlamaForCausalLM") c.architecture = Architecture::kLlama;
  else if (c.architecture_name == "MistralForCausalLM") c.architecture = Architecture::kMistral;
  else if (c.architecture_name == "Qwen2ForCausalLM") c.architecture = Architecture::kQwen2;
  else if (c.architecture_name == "Qwen3ForCausalLM") c.architecture = Architecture::kQwen3;
  else if (c.architecture_name == "Phi3ForCausalLM") c.architecture = Architecture::kPhi3;
  else
    throw ModelConfigError(origin + ": unsupported architecture '" + c.architecture_name +
                           "' (supported: LlamaForCausalLM, MistralForCausalLM, Phi3ForCausalLM, Qwen2ForCausalLM, "
                           "Qwen3ForCausalLM)");

  c.vocab_size = static_cast<int32_t>(require_int(config, "vocab_size", origin));
  c.hidden_size = static_cast<int32_t>(require_int(config, "hidden_size", origin));
  c.intermediate_size = static_cast<int32_t>(require_int(config, "intermediate_size", origin));
  c.num_hidden_layers = static_cast<int32_t>(require_int(config, "num_hidden_layers", origin));
  c.num_attention_heads = static_cast<int32_t>(require_int(config, "num_attention_heads", origin));
  c.num_key_value_heads =
      static_cast<int32_t>(get_int(config, "num_key_value_heads", c.num_attention_heads, origin));
  if (c.num_key_value_heads <= 0 || c.num_attention_heads % c.num_key_value_heads != 0)
    throw ModelConfigError(origin + ": num_attention_heads (" + std::to_string(c.num_attention_heads) +
                           ") is not a multiple of num_key_value_heads (" + std::to_string(c.num_key_value_heads) + ")");
  if (field(config, "head_dim")) {
    c.head_dim = static_cast<int32_t>(require_int(config, "head_dim", origin));
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      throw ModelConfigError(origin + ": hidden_size is not a multiple of num_attention_heads and no head_dim is given");
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0) throw ModelConfigError(origin + ": head_dim " + std::to_string(c.head_dim) + " is odd");

  c.max_position_embeddings = get_int(config, "max_position_embeddings", c.max_position_embeddings, origin);
  c.rms_norm_eps = get_double(config, "rms_norm_eps", c.rms_norm_eps, origin);
  read_rope(config, c, origin);

  c.hidden_act = "silu";
  if (const json* act = field(config, "hidden_act")) {
    if (!act->is_string()) throw ModelConfigError(origin + ": hidden_act is not a string");
    c.hidden_act = act->get<std::string>();
  }
  if (c.hidden_act != "silu")
    throw ModelConfigError(origin + ": unsupported hidden_act '" + c.hidden_act + "' (supported: silu)");

  c.tie_word_embeddings = get_bool(config, "tie_word_embeddings", false, origin);
  switch (c.architecture) {
    case Architecture::kQwen2:
      c.attention_bias = true;  // Qwen2 always has q/k/v bias, never an o_proj bias
      break;
    case Architecture::kQwen3:
      c.qk_norm = true;
      c.attention_bias = c.o_proj_bias = get_bool(config, "attention_bias", false, origin);
      break;
    case Architecture::kLlama:
      c.attention_bias = c.o_proj_bias = get_bool(config, "attention_bias", false, origin);
      break;
    case Architecture::kMistral:
    case Architecture::kPhi3:
      break;  // no biases
  }
  // Phi-4-mini rotates a part of each head only; the rotary kernels rotate whole heads.
  // transformers 5 may write the factor inside rope_parameters.
  double rotary_fraction = get_double(config, "partial_rotary_factor", 1.0, origin);
  if (const json* params = field(config, "rope_parameters"); params && params->is_object())
    rotary_fraction = get_double(*params, "partial_rotary_factor", rotary_fraction, origin);
  if (rotary_fraction != 1.0)
    throw ModelConfigError(origin + ": unsupported partial_rotary_factor " + std::to_string(rotary_fraction) +
                           " (supported: 1.0)");
  if (get_bool(config, "mlp_bias", false, origin))
    throw ModelConfigError(origin + ": unsupported mlp_bias 'true'");

  if (c.architecture == Architecture::kMistral || c.architecture == Architecture::kPhi3) {
    const int64_t window = get_int(config, "sliding_window", 0, origin);
    if (window < 0) throw ModelConfigError(origin + ": unsupported sliding_window " + std::to_string(window));
    c.sliding_window = static_cast<int32_t>(window);
  } else if ((c.architecture == Architecture::kQwen2 || c.architecture == Architecture::kQwen3) &&
             get_bool(config, "use_sliding_window", false, origin)) {
    // transformers slides the window on layers with index >= max_window_layers.
    const int64_t window = get_int(config, "sliding_window", 0, origin);
    const int64_t first_sliding = get_int(config, "max_window_layers", 28, origin);
    if (window > 0 && first_sliding <= 0) {
      c.sliding_window = static_cast<int32_t>(window);
    } else if (window > 0 && first_sliding < c.num_hidden_layers) {
      throw ModelConfigError(origin + ": unsupported use_sliding_window on layers " + std::to_string(first_sliding) +
                             " and up only (max_window_layers " + std::to_string(first_sliding) + ")");
    }
  }

  const json* dtype = field(config, "dtype");
  if (!dtype) dtype = field(config, "torch_dtype");
  if (dtype) {
    if (!dtype->is_string()) throw ModelConfigError(origin + ": dtype is not a string");
    c.torch_dtype = dtype->get<std::string>();
    if (c.torch_dtype != "float32" && c.torch_dtype != "bfloat16" && c.torch_dtype != "float16")
      throw ModelConfigError(origin + ": unsupported dtype '" + c.torch_dtype + "' (float32, bfloat16, float16)");
  }

  if (const json* q = field(config, "quantization_config")) c.quantization = quant::parse_quant_config(q->dump(), origin);

  // Token ids: generation_config.json wins over config.json, as in transformers' generate.
  if (const json* eos = field(config, "eos_token_id")) c.eos_token_ids = token_id_list(*eos, origin);
  c.bos_token_id = static_cast<int32_t>(get_int(config, "bos_token_id", -1, origin));
  if (!generation_config_json.empty()) {
    const std::string gen_origin = origin + " (generation_config.json)";
    json gen;
    try {
      gen = json::parse(generation_config_json);
    } catch (const json::exception& e) {
      throw ModelConfigError(gen_origin + ": not valid JSON: " + e.what());
    }
    if (!gen.is_object()) throw ModelConfigError(gen_origin + ": not a JSON object");
    if (const json* eos = field(gen, "eos_token_id")) c.eos_token_ids = token_id_list(*eos, gen_origin);
    c.bos_token_id = static_cast<int32_t>(get_int(gen, "bos_token_id", c.bos_token_id, gen_origin));
  }
  for (int32_t id : c.eos_token_ids)
    if (id < 0 || id >= c.vocab_size)
      throw ModelConfigError(origin + ": eos_token_id " + std::to_string(id) + " is outside the vocabulary");
  return c;
}

ModelConfig load_model_config(const std::string& model_dir) {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(model_dir) / "config.json";
  if (!fs::exists(config_path)) throw ModelConfigError(model_dir + ": no config.json");
  const fs::path gen_path = fs::path(model_dir) / "generation_config.json";
  std::string gen = fs::exists(gen_path) ? read_text(gen_path) : std::string();
  return parse_model_config(read_text(config_path), gen, config_path.string());
}

}  // namespace zinfer::gpu
