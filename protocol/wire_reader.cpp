#include "protocol/wire_reader.h"

#include <string>

namespace zinfer::protocol {

namespace {

// Largest containers and strings a frame may declare: the limits open() gave msgpack-c's
// unpacker, so that the structural check accepts what the old decoder accepted.
constexpr uint64_t kMaxContainerElements = 1u << 24;
constexpr uint64_t kMaxStringBytes = 1u << 28;
constexpr uint64_t kMaxExtBytes = 1u << 24;

// Whole size in bytes of a value by its lead byte, for every value whose size the lead byte alone
// gives (ints, floats, nil, bool, fixstr, fixext); 0 for containers, str/bin/ext with a length
// field, and the never-used 0xc1.
struct LeadSizes {
  uint8_t size[256];
  constexpr LeadSizes() : size() {
    for (int b = 0; b < 256; ++b) {
      uint8_t n = 0;
      if (b < 0x80 || b >= 0xe0) n = 1;
      else if (b >= 0xa0 && b < 0xc0) n = static_cast<uint8_t>(1 + (b & 0x1f));
      else if (b == 0xc0 || b == 0xc2 || b == 0xc3) n = 1;
      else if (b == 0xca) n = 5;
      else if (b == 0xcb) n = 9;
      else if (b == 0xcc || b == 0xd0) n = 2;
      else if (b == 0xcd || b == 0xd1) n = 3;
      else if (b == 0xce || b == 0xd2) n = 5;
      else if (b == 0xcf || b == 0xd3) n = 9;
      else if (b >= 0xd4 && b <= 0xd8) n = static_cast<uint8_t>(2 + (1 << (b - 0xd4)));
      size[b] = n;
    }
  }
};
constexpr LeadSizes kLeadSizes;

float float_of_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double double_of_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

}  // namespace

const char* msgpack_type_name(uint8_t b) {
  if (b < 0x80 || b >= 0xe0) return "int";
  if (b < 0x90) return "map";
  if (b < 0xa0) return "array";
  if (b < 0xc0) return "str";
  switch (b) {
    case 0xc0: return "nil";
    case 0xc1: return "never-used byte 0xc1";
    case 0xc2:
    case 0xc3: return "bool";
    case 0xc4:
    case 0xc5:
    case 0xc6: return "bin";
    case 0xca: return "float32";
    case 0xcb: return "float64";
    case 0xd9:
    case 0xda:
    case 0xdb: return "str";
    case 0xdc:
    case 0xdd: return "array";
    case 0xde:
    case 0xdf: return "map";
    default: break;
  }
  if ((b >= 0xcc && b <= 0xd3)) return "int";
  return "ext";  // 0xc7-0xc9, 0xd4-0xd8
}

void WireReader::truncated(size_t wanted) const {
  throw ProtocolError(DecodeErrorKind::kMalformed,
                      "truncated msgpack: " + std::to_string(wanted) + " more byte(s) wanted at offset " +
                          std::to_string(offset()) + ", " + std::to_string(remaining()) + " left");
}

void WireReader::wrong_type(const char* expected, uint8_t byte) const {
  throw ProtocolError(DecodeErrorKind::kWrongPayload, std::string("expected ") + expected + ", got " +
                                                          msgpack_type_name(byte) + " at offset " +
                                                          std::to_string(offset()));
}

void WireReader::out_of_range(uint64_t bits, bool negative) const {
  std::string value = negative ? std::to_string(static_cast<int64_t>(bits)) : std::to_string(bits);
  throw ProtocolError(DecodeErrorKind::kWrongPayload,
                      "integer " + value + " out of the field's range at offset " + std::to_string(offset()));
}

uint32_t WireReader::read_container_header(bool map) {
  if (pos_ == end_) truncated(1);
  const uint8_t b = *pos_;
  const uint8_t fix = map ? 0x80 : 0x90;
  const uint8_t wide16 = map ? 0xde : 0xdc;
  uint32_t n;
  if ((b & 0xf0) == fix) {
    ++pos_;
    n = b & 0x0f;
  } else if (b == wide16) {
    ++pos_;
    n = load_be16(take(2));
  } else if (b == wide16 + 1) {
    ++pos_;
    n = load_be32(take(4));
  } else {
    wrong_type(map ? "map" : "array", b);
  }
  // Every element takes at least one byte: a larger count is a lie, and must not size a vector.
  const uint64_t min_bytes = map ? 2ull * n : n;
  if (min_bytes > remaining()) {
    throw ProtocolError(DecodeErrorKind::kMalformed,
                        std::string(map ? "map" : "array") + " of " + std::to_string(n) + " elements in " +
                            std::to_string(remaining()) + " bytes at offset " + std::to_string(offset()));
  }
  return n;
}


std::string_view WireReader::read_key() {
  if (pos_ == end_) truncated(1);
  const uint8_t b = *pos_;
  if ((b & 0xe0) == 0xa0 || (b >= 0xd9 && b <= 0xdb)) return read_str();
  wrong_type("a str map key", b);
}

bool WireReader::read_bool_slow() {
  const uint8_t b = take_byte();
  if (b == 0xc2) return false;
  if (b == 0xc3) return true;
  --pos_;
  wrong_type("bool", b);
}

std::string_view WireReader::read_str() {
  if (pos_ == end_) truncated(1);
  const uint8_t b = *pos_;
  size_t n;
  if ((b & 0xe0) == 0xa0) {
    ++pos_;
    n = b & 0x1f;
  } else if (b == 0xd9 || b == 0xc4) {
    ++pos_;
    n = *take(1);
  } else if (b == 0xda || b == 0xc5) {
    ++pos_;
    n = load_be16(take(2));
  } else if (b == 0xdb || b == 0xc6) {
    ++pos_;
    n = load_be32(take(4));
  } else {
    wrong_type("str", b);
  }
  const uint8_t* p = take(n);
  return std::string_view(reinterpret_cast<const char*>(p), n);
}

uint64_t WireReader::read_integer_bits(bool& negative) {
  if (pos_ == end_) truncated(1);
  const uint8_t b = *pos_;
  negative = false;
  if (b < 0x80) {
    ++pos_;
    return b;
  }
  if (b >= 0xe0) {
    ++pos_;
    negative = true;
    return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(b)));
  }
  int64_t s;
  switch (b) {
    case 0xcc: ++pos_; return *take(1);
    case 0xcd: ++pos_; return load_be16(take(2));
    case 0xce: ++pos_; return load_be32(take(4));
    case 0xcf: ++pos_; return load_be64(take(8));
    case 0xd0: ++pos_; s = static_cast<int8_t>(*take(1)); break;
    case 0xd1: ++pos_; s = static_cast<int16_t>(load_be16(take(2))); break;
    case 0xd2: ++pos_; s = static_cast<int32_t>(load_be32(take(4))); break;
    case 0xd3: ++pos_; s = static_cast<int64_t>(load_be64(take(8))); break;
    default: wrong_type("int", b);
  }
  // msgpack-c reads a signed format holding a non-negative value as a positive integer.
  negative = s < 0;
  return static_cast<uint64_t>(s);
}

double WireReader::read_double() {
  if (pos_ == end_) truncated(1);
  const uint8_t b = *pos_;
  if (b == 0xca) {
    ++pos_;
    return float_of_bits(load_be32(take(4)));
  }
  if (b == 0xcb) {
    ++pos_;
    return double_of_bits(load_be64(take(8)));
  }
  if (b < 0x80 || b >= 0xe0 || (b >= 0xcc && b <= 0xd3)) {
    bool negative = false;
    const uint64_t bits = read_integer_bits(negative);
    return negative ? static_cast<double>(static_cast<int64_t>(bits)) : static_cast<double>(bits);
  }
  wrong_type("float", b);
}

float WireReader::read_float_slow() {
  if (pos_ != end_ && *pos_ == 0xca) {
    ++pos_;
    return float_of_bits(load_be32(take(4)));
  }
  if (pos_ != end_ && (*pos_ < 0x80 || *pos_ >= 0xe0 || (*pos_ >= 0xcc && *pos_ <= 0xd3))) {
    // Straight from the integer, as msgpack-c does (not through double: no double rounding).
    bool negative = false;
    const uint64_t bits = read_integer_bits(negative);
    return negative ? static_cast<float>(static_cast<int64_t>(bits)) : static_cast<float>(bits);
  }
  return static_cast<float>(read_double());
}

void WireReader::read_float_array(std::vector<float>& out) {
  const uint32_t n = read_array_header();
  out.resize(n);
  for (uint32_t i = 0; i < n; ++i) out[i] = read_float();
}

void WireReader::skip() {
  // outer[d]: values still to step over at nesting depth d once the container at depth d + 1 is
  // done; `left` is the count of the current depth, kept in a register for the tight loop below.
  uint64_t outer[kMaxDepth + 1];
  int depth = 0;
  uint64_t left = 1;
  const uint8_t* p = pos_;
  const uint8_t* const end = end_;
  for (;;) {
    while (left > 0) {
      if (p == end) {
        pos_ = p;
        truncated(1);
      }
      const uint8_t b = *p;
      --left;
      // The common leads of a step by branches, which the CPU predicts and runs ahead of, rather
      // than by the table, whose load every next position would wait for.
      if (static_cast<size_t>(end - p) >= 9) {
        if (b < 0x80) {
          p += 1;
          continue;
        }
        if (b == 0xcd) {
          p += 3;
          continue;
        }
        if (b == 0xca) {
          p += 5;
          continue;
        }
        if (b == 0xc2 || b == 0xc3 || b >= 0xe0) {
          p += 1;
          continue;
        }
      }
      if (const uint8_t whole = kLeadSizes.size[b]; whole != 0) {
        if (static_cast<size_t>(end - p) < whole) {
          pos_ = p + 1;
          truncated(whole - 1u);
        }
        p += whole;
        continue;
      }
      ++p;
      uint64_t count = 0;                     // of a container just entered
      bool map = false;
      uint64_t size = 0;                      // bytes after the lead (and length) bytes
      if (b < 0xa0) {
        map = b < 0x90;
        count = b & 0x0f;
        if (count == 0) continue;
      } else if (b < 0xc0) {
        size = b & 0x1f;
      } else {
        // Multi-byte lengths: first make sure they are there.
        auto need = [&](size_t n) {
          if (static_cast<size_t>(end - p) < n) {
            pos_ = p;
            truncated(n);
          }
        };
        switch (b) {
          case 0xc0: case 0xc2: case 0xc3: continue;
          case 0xc1:
            pos_ = p - 1;
            throw ProtocolError(DecodeErrorKind::kMalformed,
                                "never-used byte 0xc1 at offset " + std::to_string(offset()));
          case 0xc4: case 0xd9: need(1); size = *p; p += 1; break;
          case 0xc5: case 0xda: need(2); size = load_be16(p); p += 2; break;
          case 0xc6: case 0xdb: need(4); size = load_be32(p); p += 4; break;
          case 0xc7: need(1); size = 1ull + *p; p += 1; break;  // ext: a type byte, then data
          case 0xc8: need(2); size = 1ull + load_be16(p); p += 2; break;
          case 0xc9: need(4); size = 1ull + load_be32(p); p += 4; break;
          case 0xca: size = 4; break;
          case 0xcb: size = 8; break;
          case 0xcc: case 0xd0: size = 1; break;
          case 0xcd: case 0xd1: size = 2; break;
          case 0xce: case 0xd2: size = 4; break;
          case 0xcf: case 0xd3: size = 8; break;
          case 0xd4: size = 2; break;  // fixext 1, 2, 4, 8, 16: a type byte, then data
          case 0xd5: size = 3; break;
          case 0xd6: size = 5; break;
          case 0xd7: size = 9; break;
          case 0xd8: size = 17; break;
          case 0xdc: need(2); count = load_be16(p); p += 2; break;
          case 0xdd: need(4); count = load_be32(p); p += 4; break;
          case 0xde: need(2); count = load_be16(p); p += 2; map = true; break;
          case 0xdf: need(4); count = load_be32(p); p += 4; map = true; break;
          default: break;
        }
        const bool is_container = b >= 0xdc;
        if (is_container && count == 0) continue;
        if (!is_container) {
          const bool is_ext = (b >= 0xc7 && b <= 0xc9) || (b >= 0xd4 && b <= 0xd8);
          if (size > (is_ext ? kMaxExtBytes + 1 : kMaxStringBytes)) {
            pos_ = p;
            throw ProtocolError(DecodeErrorKind::kMalformed,
                                "value of " + std::to_string(size) + " bytes exceeds the limit at offset " +
                                    std::to_string(offset()));
          }
        }
      }
      if (count == 0) {  // a scalar of `size` more bytes
        if (static_cast<uint64_t>(end - p) < size) {
          pos_ = p;
          truncated(static_cast<size_t>(size));
        }
        p += size;
        continue;
      }
      const uint64_t values = map ? 2 * count : count;
      if (count > kMaxContainerElements || values > static_cast<uint64_t>(end - p)) {
        pos_ = p;
        throw ProtocolError(DecodeErrorKind::kMalformed,
                            std::string(map ? "map" : "array") + " of " + std::to_string(count) +
                                " elements in " + std::to_string(remaining()) + " bytes at offset " +
                                std::to_string(offset()));
      }
      if (depth == kMaxDepth) {
        pos_ = p;
        throw ProtocolError(DecodeErrorKind::kMalformed,
                            "containers nested deeper than " + std::to_string(kMaxDepth) + " at offset " +
                                std::to_string(offset()));
      }
      outer[depth++] = left;
      left = values;
    }
    if (depth == 0) break;
    left = outer[--depth];
  }
  pos_ = p;
}

}  // namespace zinfer::protocol
