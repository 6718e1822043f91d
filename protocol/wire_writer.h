// Appends msgpack values to a growing byte buffer, for the hand-written encoders of the step-path
// messages (protocol/step_codec.h). Every value gets the smallest encoding, exactly as msgpack-c's
// packer chooses it, so a struct encoded here is byte-identical to msgpack-c's encoding of it
// (tests/protocol/wire_codec_test.cpp checks each value, step_codec_test.cpp whole messages):
//   - integers: a non-negative value of any C++ type takes the unsigned formats (fixint, uint8..64),
//     a negative one negative fixint or int8..64;
//   - float/double: a finite whole number that fits an int64/uint64 is packed as that integer
//     (msgpack-c 4.x does so), anything else as float32/float64 (NaN and infinities included);
//   - str: fixstr, str8, str16, str32 by length; array and map: fix, 16-bit, 32-bit headers.
// The buffer grows by doubling; callers pass a size hint to skip the regrowth.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace zinfer::protocol {

class WireWriter {
 public:
  explicit WireWriter(size_t size_hint = 256) { buf_.resize(std::max<size_t>(size_hint, 64)); }

  void array_header(size_t n) { container_header(n, 0x90, 0xdc); }
  void map_header(size_t n) { container_header(n, 0x80, 0xde); }
  void nil() { *room(1) = static_cast<char>(0xc0); }
  void boolean(bool v) { *room(1) = static_cast<char>(v ? 0xc3 : 0xc2); }

  template <class I>
  void integer(I v) {
    static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool>);
    char* p = room(9);
    used_ = static_cast<size_t>(put_integer(p, v) - buf_.data());
  }

  void float32(float v) {
    char* p = room(9);
    used_ = static_cast<size_t>(put_float32(p, v) - buf_.data());
  }

  void float64(double v) {
    char* p = room(9);
    if (v == v) {  // not NaN: a whole number that fits goes as an integer, as msgpack-c does
      if (v >= 0 && v < 18446744073709551616.0 && v == static_cast<double>(static_cast<uint64_t>(v))) {
        used_ = static_cast<size_t>(put_uint(p, static_cast<uint64_t>(v)) - buf_.data());
        return;
      }
      if (v < 0 && v >= -9223372036854775808.0 && v == static_cast<double>(static_cast<int64_t>(v))) {
        used_ = static_cast<size_t>(put_int(p, static_cast<int64_t>(v)) - buf_.data());
        return;
      }
    }
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    p[0] = static_cast<char>(0xcb);
    store_be64(p + 1, bits);
  }

  void str(std::string_view s) {
    const size_t n = s.size();
    char* p;
    if (n < 32) {
      p = room(1 + n);
      *p++ = static_cast<char>(0xa0 | n);
    } else if (n < 256) {
      p = room(2 + n);
      *p++ = static_cast<char>(0xd9);
      *p++ = static_cast<char>(n);
    } else if (n < 65536) {
      p = room(3 + n);
      *p++ = static_cast<char>(0xda);
      store_be16(p, static_cast<uint16_t>(n));
      p += 2;
    } else {
      check_length(n, "string");
      p = room(5 + n);
      *p++ = static_cast<char>(0xdb);
      store_be32(p, static_cast<uint32_t>(n));
      p += 4;
    }
    if (n) std::memcpy(p, s.data(), n);
  }

  // An array of integers: one capacity check for the whole array.
  template <class I>
  void int_array(const std::vector<I>& v) {
    array_header(v.size());
    char* p = room(9 * v.size());
    for (const I x : v) p = put_integer(p, x);
    used_ = static_cast<size_t>(p - buf_.data());
  }

  void float_array(const std::vector<float>& v) {
    array_header(v.size());
    char* p = room(9 * v.size());
    for (const float x : v) p = put_float32(p, x);
    used_ = static_cast<size_t>(p - buf_.data());
  }

  size_t size() const { return used_; }

  // A record's fast path (the step-path codecs): room for at most `max_bytes`, written through
  // the returned cursor with the static put_* helpers below, then end_record(cursor). One
  // capacity check per record instead of one per field; the bytes are the same.
  char* begin_record(size_t max_bytes) {
    if (__builtin_expect(used_ + max_bytes > buf_.size(), 0)) grow(max_bytes);
    return buf_.data() + used_;
  }
  void end_record(char* end) { used_ = static_cast<size_t>(end - buf_.data()); }

  // Each writes one value at p (room checked by the caller) and returns the byte after it.
  static char* put_array_header(char* p, size_t n) { return put_container_header(p, n, 0x90, 0xdc); }
  static char* put_bool(char* p, bool v) {
    *p = static_cast<char>(v ? 0xc3 : 0xc2);
    return p + 1;
  }
  // At most 5 + 9 * v.size() bytes.
  template <class I>
  static char* put_int_array(char* p, const std::vector<I>& v) {
    p = put_array_header(p, v.size());
    for (const I x : v) p = put_integer(p, x);
    return p;
  }

  // The bytes written; the writer is left empty.
  std::string take() {
    buf_.resize(used_);
    used_ = 0;
    return std::move(buf_);
  }

 private:
  // Makes room for n more bytes and counts them as written; returns where they go. A caller that
  // writes fewer sets used_ itself.
  char* room(size_t n) {
    if (__builtin_expect(used_ + n > buf_.size(), 0)) grow(n);
    char* p = buf_.data() + used_;
    used_ += n;
    return p;
  }
  [[gnu::noinline]] void grow(size_t n) { buf_.resize(std::max(buf_.size() * 2, used_ + n)); }

  void container_header(size_t n, uint8_t fix, uint8_t wide16) {
    if (n < 16) {
      *room(1) = static_cast<char>(fix | n);
    } else {
      if (n >= 65536) check_length(n, "container");
      char* p = room(5);
      used_ = static_cast<size_t>(put_container_header(p, n, fix, wide16) - buf_.data());
    }
  }

 public:
  // At most 5 bytes.
  static char* put_container_header(char* p, size_t n, uint8_t fix, uint8_t wide16) {
    if (n < 16) {
      *p = static_cast<char>(fix | n);
      return p + 1;
    }
    if (n < 65536) {
      p[0] = static_cast<char>(wide16);
      store_be16(p + 1, static_cast<uint16_t>(n));
      return p + 3;
    }
    check_length(n, "container");
    p[0] = static_cast<char>(wide16 + 1);
    store_be32(p + 1, static_cast<uint32_t>(n));
    return p + 5;
  }

  static void check_length(size_t n, const char* what) {
    if (n > 0xffffffffu) throw std::length_error(std::string(what) + " too long for msgpack: " + std::to_string(n));
  }

  static void store_be16(char* p, uint16_t v) {
    v = __builtin_bswap16(v);
    std::memcpy(p, &v, 2);
  }
  static void store_be32(char* p, uint32_t v) {
    v = __builtin_bswap32(v);
    std::memcpy(p, &v, 4);
  }
  static void store_be64(char* p, uint64_t v) {
    v = __builtin_bswap64(v);
    std::memcpy(p, &v, 8);
  }

  // At most 9 bytes each.
  static char* put_uint(char* p, uint64_t v) {
    if (v < 0x80) {
      *p++ = static_cast<char>(v);
    } else if (v < 0x100) {
      *p++ = static_cast<char>(0xcc);
      *p++ = static_cast<char>(v);
    } else if (v < 0x10000) {
      *p++ = static_cast<char>(0xcd);
      store_be16(p, static_cast<uint16_t>(v));
      p += 2;
    } else if (v < 0x100000000ull) {
      *p++ = static_cast<char>(0xce);
      store_be32(p, static_cast<uint32_t>(v));
      p += 4;
    } else {
      *p++ = static_cast<char>(0xcf);
      store_be64(p, v);
      p += 8;
    }
    return p;
  }

  static char* put_int(char* p, int64_t v) {
    if (v >= 0) return put_uint(p, static_cast<uint64_t>(v));
    if (v >= -32) {
      *p++ = static_cast<char>(static_cast<int8_t>(v));  // negative fixint
    } else if (v >= -128) {
      *p++ = static_cast<char>(0xd0);
      *p++ = static_cast<char>(static_cast<int8_t>(v));
    } else if (v >= -32768) {
      *p++ = static_cast<char>(0xd1);
      store_be16(p, static_cast<uint16_t>(static_cast<int16_t>(v)));
      p += 2;
    } else if (v >= INT32_MIN) {
      *p++ = static_cast<char>(0xd2);
      store_be32(p, static_cast<uint32_t>(static_cast<int32_t>(v)));
      p += 4;
    } else {
      *p++ = static_cast<char>(0xd3);
      store_be64(p, static_cast<uint64_t>(v));
      p += 8;
    }
    return p;
  }

  template <class I>
  static char* put_integer(char* p, I v) {
    if constexpr (std::is_unsigned_v<I>) {
      return put_uint(p, v);
    } else {
      return put_int(p, v);
    }
  }

  static char* put_float32(char* p, float v) {
    if (v == v) {  // not NaN: a whole number that fits goes as an integer, as msgpack-c does
      if (v >= 0 && v < 18446744073709551616.0f && v == static_cast<float>(static_cast<uint64_t>(v))) {
        return put_uint(p, static_cast<uint64_t>(v));
      }
      if (v < 0 && v >= -9223372036854775808.0f && v == static_cast<float>(static_cast<int64_t>(v))) {
        return put_int(p, static_cast<int64_t>(v));
      }
    }
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    *p++ = static_cast<char>(0xca);
    store_be32(p, bits);
    return p + 4;
  }

 private:
  std::string buf_;
  size_t used_ = 0;
};

}  // namespace zinfer::protocol
