// Checkpoint tensors as a weight store asks for them (gpu/models/weight_store.h names
// `<prefix>.weight`): a quantized linear layer is stored as `<prefix>.qweight`, `.qzeros`,
// `.scales` (and GPTQ's `.g_idx`) for GPTQ/AWQ, or `<prefix>.weight_packed`, `.weight_scale`,
// `.weight_shape` (and `.weight_zero_point`, `.weight_g_idx`) for compressed-tensors, instead, and
// is handed back dequantized to float32 [N, K] (dequantize.h), the whole tensor; the store then
// slices it like any other (a tensor-parallel rank's rows or columns). Layers kept unquantized
// (lm_head, embeddings, norms) are read as they are. Whether a layer is quantized is what the
// checkpoint holds, checked against the config: both `.weight` and the packed tensor, a quantized
// module that modules_to_not_convert or ignore lists, an lm_head that disagrees with
// quantization_config.lm_head, a packed layer no config_groups target names or a dense linear
// layer one does (and ignore does not list) is an error naming the tensor.
// FP8 (quant_method "fp8", or online FP8 of a dense checkpoint): a linear layer whose `.weight` is
// float8_e4m3fn comes back from get_fp8() in the one FP8 form (fp8.h), with its scales
// (fp8_checkpoint.h), and from get() as the dense w_q · s_w in float32. Embeddings and the LM head
// stay dense (as vLLM keeps them), as do the modules ignored_layers names (exactly) or
// modules_to_not_convert contains (as substrings); any other linear layer of an fp8 checkpoint
// stored dense is an error naming it. Online FP8 quantizes every other linear layer at load
// (quantize_per_channel). compressed-tensors float-quantized layers (ct_fp8.h) come from get_fp8()
// the same way, their config group (targets less ignore) saying which linear layers are FP8; a
// checkpoint may mix them with pack-quantized groups, each layer read as its group says.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpu/quant/fp8.h"
#include "gpu/quant/int_weight.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {

// A tensor as read: a view into the checkpoint's mapping, or into its own dequantized copy.
class ResolvedTensor {
 public:
  explicit ResolvedTensor(const TensorView& stored) : view_(stored) {}
  ResolvedTensor(TensorView view, std::vector<float> storage);
  ResolvedTensor(ResolvedTensor&&) = default;  // a moved vector keeps its buffer: view_ stays valid
  ResolvedTensor(const ResolvedTensor&) = delete;
  ResolvedTensor& operator=(const ResolvedTensor&) = delete;
  const TensorView& view() const { return view_; }
  bool dequantized() const { return !storage_.empty(); }

 private:
  TensorView view_;
  std::vector<float> storage_;
};

class CheckpointReader {
 public:
  CheckpointReader(const WeightSet& checkpoint, const QuantConfig& config) : checkpoint_(checkpoint), config_(config) {}

  // The tensor checked against `shape` (SafetensorsError naming it otherwise).
  ResolvedTensor get(const std::string& name, const std::vector<int64_t>& shape);
  // The same checks, for a backend that keeps quantized layers quantized: a `<prefix>.weight` the
  // checkpoint stores quantized comes back in the one integer form (int_weight.h), anything else
  // as nullopt (read it with get(); the name is recorded as read either way).
  std::optional<IntWeight> get_int(const std::string& name, const std::vector<int64_t>& shape);
  // Whether the checkpoint stores `<prefix>.weight` as a quantized layer (no check, no read): a
  // backend sizes its storage by it before it reads.
  bool stores_quantized(const std::string& name) const;
  // For a store that runs FP8 layers in FP8: a linear layer's `<prefix>.weight` in the FP8 form
  // when the checkpoint stores it so (or online FP8 quantizes it), else nullopt (read it with
  // get()). Ask only for linear layers: a dense one an fp8 checkpoint does not exempt is refused.
  std::optional<Fp8Weight> get_fp8(const std::string& name, const std::vector<int64_t>& shape);
  // After the last get(): every quantized layer in the checkpoint must have been read, and
  // quantization_config.lm_head must agree with what was. An AutoGPTQ checkpoint keeps a `bias`
  // beside every quantized layer, zeros where the model has none; one the model did not read must
  // be all zeros, else it throws naming it (the model would be computing without it).
  void finish() const;

 private:
  std::optional<Fp8Weight> get_ct_fp8(const std::string& name, const std::vector<int64_t>& shape);

  const WeightSet& checkpoint_;
  QuantConfig config_;
  std::set<std::string> read_;              // names handed out
  std::set<std::string> quantized_prefixes_;  // "<prefix>." of every quantized layer read
  std::set<std::string> fp8_prefixes_;        // "<prefix>." of every fp8 layer read
  std::map<std::string, std::string> files_;  // "<prefix>." -> the file holding its qweight
};

}  // namespace zinfer::gpu::quant
