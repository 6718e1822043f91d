// A cursor over raw msgpack bytes, for the hand-written decoders of the step-path messages
// (protocol/step_codec.h). It reads one value at a time straight from the frame, with no object
// tree and no allocation of its own; every read is bounds-checked. A value of the wrong msgpack
// type, or an integer out of the target's range, throws ProtocolError kWrongPayload; bytes that
// end too early or are not msgpack throw kMalformed. Nothing reads outside the given bytes.
//
// The conversions follow msgpack-c's, so that both decoders accept the same frames: an integer
// field takes any msgpack integer that fits; a float field takes float32, float64 or an integer
// (msgpack-c packs a whole-number float as an integer); a string takes str or bin.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "protocol/protocol_error.h"

namespace zinfer::protocol {

// Big-endian loads of the msgpack wire (no alignment assumed).
inline uint16_t load_be16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return __builtin_bswap16(v);
}
inline uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

class WireReader {
 public:
  // Deepest nesting of containers skip() accepts (the limit open() gave msgpack-c).
  static constexpr int kMaxDepth = 64;

  explicit WireReader(std::string_view bytes)
      : pos_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(pos_ + bytes.size()),
        begin_(pos_) {}

  bool at_end() const { return pos_ == end_; }
  // Raw access for a record's fast path (fast_cursor.h): where the reader stands and where the
  // frame ends; set_cursor() moves it to a point between the two after a fast read.
  const uint8_t* cursor() const { return pos_; }
  const uint8_t* frame_end() const { return end_; }
  void set_cursor(const uint8_t* p) { pos_ = p; }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }
  size_t offset() const { return static_cast<size_t>(pos_ - begin_); }

  // Container headers: the number of elements (of key/value pairs for a map). A count that
  // cannot fit in the bytes left is kMalformed, so that a caller may reserve() it safely.
  uint32_t read_array_header() {
    if (pos_ != end_ && (*pos_ & 0xf0) == 0x90 && static_cast<size_t>(*pos_ & 0x0f) < remaining()) {
      return *pos_++ & 0x0f;  // fixarray whose elements can fit
    }
    return read_container_header(false);
  }
  uint32_t read_map_header() { return read_container_header(true); }

  // A map key: only a msgpack str (msgpack-c refuses other keys for a struct map).
  std::string_view read_key();

  bool read_bool() {
    if (pos_ != end_ && (*pos_ == 0xc2 || *pos_ == 0xc3)) return *pos_++ == 0xc3;
    return read_bool_slow();
  }
  std::string_view read_str();  // str or bin; the view points into the frame
  float read_float() {
    if (end_ - pos_ >= 5 && *pos_ == 0xca) {
      const uint32_t bits = load_be32(pos_ + 1);
      pos_ += 5;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    // A whole number goes as an integer (msgpack-c's writers, WireWriter::float32): every
    // SeqWork's default temperature and top_p (1.0) arrive as fixint 1.
    if (pos_ != end_ && *pos_ < 0x80) return static_cast<float>(*pos_++);
    return read_float_slow();
  }
  double read_double();

  // Any integral type; range-checked against it. The common leads are read inline (block tables
  // are mostly uint16s); the rest goes through read_integer_bits().
  template <class I>
  I read_int() {
    static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool>);
    using Limits = std::numeric_limits<I>;
    if (end_ - pos_ >= 5) {
      const uint8_t b = *pos_;
      if (b < 0x80) {  // positive fixint
        ++pos_;
        return static_cast<I>(b);
      }
      if (b == 0xcd && static_cast<uint64_t>(Limits::max()) >= 0xffff) {
        const uint16_t v = load_be16(pos_ + 1);
        pos_ += 3;
        return static_cast<I>(v);
      }
      if (b == 0xcc && static_cast<uint64_t>(Limits::max()) >= 0xff) {
        const uint8_t v = pos_[1];
        pos_ += 2;
        return static_cast<I>(v);
      }
    }
    bool negative = false;
    uint64_t bits = read_integer_bits(negative);
    if (!negative) {
      if (bits > static_cast<uint64_t>(Limits::max())) out_of_range(bits, negative);
      return static_cast<I>(bits);
    }
    if constexpr (std::is_unsigned_v<I>) {
      out_of_range(bits, negative);
    } else {
      const auto v = static_cast<int64_t>(bits);
      if (v < static_cast<int64_t>(Limits::min())) out_of_range(bits, negative);
      return static_cast<I>(v);
    }
  }

  // An array of integers into `out` (replacing its contents). The loop keeps its cursor in a
  // register: the common leads inline, the rest through read_int().
  template <class I>
  void read_int_array(std::vector<I>& out) {
    const uint32_t n = read_array_header();
    out.resize(n);
    I* dst = out.data();
    const uint8_t* p = pos_;
    const uint8_t* const end = end_;
    constexpr bool kHoldsUint16 = static_cast<uint64_t>(std::numeric_limits<I>::max()) >= 0xffff;
    for (uint32_t i = 0; i < n; ++i) {
      if (end - p >= 3) {
        const uint8_t b = *p;
        if (b < 0x80) {
          dst[i] = static_cast<I>(b);
          p += 1;
          continue;
        }
        if (kHoldsUint16 && b == 0xcd) {
          dst[i] = static_cast<I>(load_be16(p + 1));
          p += 3;
          continue;
        }
      }
      pos_ = p;
      dst[i] = read_int<I>();
      p = pos_;
    }
    pos_ = p;
  }

  void read_float_array(std::vector<float>& out);

  // Steps over one value of any type, containers included (depth-limited, no recursion).
  void skip();

 private:
  // Reads any msgpack integer; `negative` tells whether `bits` is an int64 below zero.
  uint64_t read_integer_bits(bool& negative);
  const uint8_t* take(size_t n) {
    if (static_cast<size_t>(end_ - pos_) < n) truncated(n);
    const uint8_t* p = pos_;
    pos_ += n;
    return p;
  }
  uint8_t take_byte() {
    if (pos_ == end_) truncated(1);
    return *pos_++;
  }
  uint32_t read_container_header(bool map);
  bool read_bool_slow();
  float read_float_slow();

  [[noreturn]] void truncated(size_t wanted) const;
  [[noreturn]] void wrong_type(const char* expected, uint8_t byte) const;
  [[noreturn]] void out_of_range(uint64_t bits, bool negative) const;

  const uint8_t* pos_;
  const uint8_t* end_;
  const uint8_t* begin_;
};

// What a msgpack lead byte says the value is ("map", "int", "str", ...), for error messages.
const char* msgpack_type_name(uint8_t lead_byte);

}  // namespace zinfer::protocol
