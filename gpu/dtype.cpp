// Element types of safetensors files and the float conversions the CPU backend loads weights with.
#include <cmath>
#include <cstring>

#include "gpu/safetensors.h"

namespace zinfer::gpu {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kI32: return "I32";
    case DType::kI8: return "I8";
    case DType::kU8: return "U8";
    case DType::kF8E4M3: return "F8_E4M3";
    case DType::kF8E5M2: return "F8_E5M2";
    case DType::kI64: return "I64";
    case DType::kF64: return "F64";
    case DType::kBool: return "BOOL";
  }
  return "?";
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: return 2;
    case DType::kI8: case DType::kU8: case DType::kF8E4M3: case DType::kF8E5M2: case DType::kBool: return 1;
    case DType::kI64: case DType::kF64: return 8;
  }
  return 0;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

float bf16_to_float(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x0040);  // stay a (quiet) NaN
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate.
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float fp16_to_float(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa == 0) {
    out = sign;
  } else {
    // Subnormal half: value = mantissa * 2^-24, exact in float.
    float f = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -f : f;
  }
  float f;
  std::memcpy(&f, &out, sizeof f);
  return f;
}

uint16_t float_to_fp16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(f)) return sign | 0x7e00u;
  float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7c00u;  // rounds to infinity
  if (a < 6.103515625e-05f) {
    // Subnormal (or zero): a multiple of 2^-24, rounded to nearest even by nearbyint.
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  uint32_t abits = bits & 0x7fffffffu;
  uint32_t exponent = (abits >> 23) - 112;
  uint32_t mantissa = abits & 0x7fffffu;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return sign | static_cast<uint16_t>(half);
}

void to_float32(const TensorView& t, float* out) { to_float32(t, 0, t.numel(), out); }

void to_float32(const TensorView& t, int64_t first, int64_t count, float* out) {
  const size_t begin = static_cast<size_t>(first), n = static_cast<size_t>(count);
  switch (t.dtype) {
    case DType::kF32:
      std::memcpy(out, t.data + 4 * begin, n * sizeof(float));
      return;
    case DType::kBF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, t.data + 2 * (begin + i), 2);
        out[i] = bf16_to_float(bits);
      }
      return;
    case DType::kF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, t.data + 2 * (begin + i), 2);
        out[i] = fp16_to_float(bits);
      }
      return;
    default:
      throw SafetensorsError("tensor '" + t.name + "' in " + t.file + " has dtype " + dtype_name(t.dtype) +
                             "; only F32, F16 and BF16 convert to float32");
  }
}

}  // namespace zinfer::gpu
