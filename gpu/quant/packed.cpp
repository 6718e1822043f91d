#include "gpu/quant/packed.h"

#include <cstring>
#include <sstream>

namespace zinfer::gpu::quant {

void tensor_error(const TensorView& t, const std::string& what) {
  throw SafetensorsError("tensor " + t.name + " in " + t.file + ": " + what);
}

const TensorView& require_2d(const TensorView* t, const char* role) {
  if (t == nullptr) throw SafetensorsError(std::string("quantized linear layer without its ") + role + " tensor");
  if (t->shape.size() != 2) tensor_error(*t, std::string("a ") + role + " tensor must be 2-D");
  return *t;
}

void require_dtype(const TensorView& t, DType dtype) {
  if (t.dtype != dtype)
    tensor_error(t, std::string("dtype ") + dtype_name(t.dtype) + ", expected " + dtype_name(dtype));
}

void require_shape(const TensorView& t, const std::vector<int64_t>& shape) {
  if (t.shape == shape) return;
  auto str = [](const std::vector<int64_t>& s) {
    std::ostringstream o;
    o << '[';
    for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
    return o.str() + "]";
  };
  tensor_error(t, "shape " + str(t.shape) + ", expected " + str(shape));
}

int32_t int32_at(const TensorView& t, int64_t i) {
  int32_t v;
  std::memcpy(&v, t.data + static_cast<size_t>(i) * 4, 4);
  return v;
}

bool all_zero(const TensorView& z) {
  bool zero = true;
  switch (z.dtype) {
    case DType::kF8E4M3:
      for (size_t i = 0; i < z.nbytes; ++i) zero = zero && (std::to_integer<uint8_t>(z.data[i]) & 0x7F) == 0;
      break;
    case DType::kI8:
    case DType::kU8:
      for (size_t i = 0; i < z.nbytes; ++i) zero = zero && z.data[i] == std::byte{0};
      break;
    case DType::kF32:
    case DType::kBF16:
    case DType::kF16: {
      std::vector<float> v(static_cast<size_t>(z.numel()));
      to_float32(z, v.data());
      for (float x : v) zero = zero && x == 0.0f;
      break;
    }
    default:
      tensor_error(z, std::string("dtype ") + dtype_name(z.dtype) + " for a zero point (F8_E4M3, I8, F32, BF16, F16)");
  }
  return zero;
}

std::vector<float> scales_to_float(const TensorView& t) {
  if (t.dtype != DType::kF16 && t.dtype != DType::kBF16 && t.dtype != DType::kF32)
    tensor_error(t, std::string("dtype ") + dtype_name(t.dtype) + ", expected F16 (or BF16, F32) scales");
  std::vector<float> out(static_cast<size_t>(t.numel()));
  to_float32(t, out.data());
  return out;
}

int64_t group_count(const QuantConfig& c, int64_t K, const TensorView& qweight) {
  if (c.group_size == -1) return 1;
  if (K % c.group_size != 0)
    tensor_error(qweight, "quantization_config.group_size " + std::to_string(c.group_size) + " (" + c.origin +
                              ") does not divide its " + std::to_string(K) + " inputs");
  return K / c.group_size;
}

}  // namespace zinfer::gpu::quant
