// The fast path of a fixed-array record's decoder (SeqWork, SeqOutput): a cursor over the frame
// kept in registers, reading the forms that WireWriter and msgpack-c write, with no exception
// set-up and no per-field bookkeeping. Each read returns false, instead of throwing, when the
// next value is in any other form, out of the field's range or cut short; the caller then
// decodes the whole record again through WireReader's checked path, which accepts exactly what
// it accepted before and names the field in its error. So the fast path changes speed only.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "protocol/wire_reader.h"

namespace zinfer::protocol {

// Inlined into the record's reader, so that the cursor stays in registers.
struct FastCursor {
  const uint8_t* p;
  const uint8_t* end;

  explicit FastCursor(const WireReader& r) : p(r.cursor()), end(r.frame_end()) {}

  size_t left() const { return static_cast<size_t>(end - p); }

  // A fixarray header of exactly n fields (what a writer of this version sends).
  [[gnu::always_inline]] bool fixarray(uint32_t n) {
    if (p == end || *p != (0x90 | n)) return false;
    ++p;
    return true;
  }

  // A nil (an absent optional field).
  [[gnu::always_inline]] bool nil() {
    if (p == end || *p != 0xc0) return false;
    ++p;
    return true;
  }

  [[gnu::always_inline]] bool boolean(bool& out) {
    if (p == end || (*p != 0xc2 && *p != 0xc3)) return false;
    out = *p++ == 0xc3;
    return true;
  }

  template <class I>
  [[gnu::always_inline]] bool integer(I& out) {
    static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool>);
    using Limits = std::numeric_limits<I>;
    if (p == end) return false;
    const uint8_t b = *p;
    if (b < 0x80) {
      out = static_cast<I>(b);
      ++p;
      return true;
    }
    uint64_t u;
    int64_t s;
    switch (b) {
      case 0xcc: if (left() < 2) return false; u = p[1]; p += 2; break;
      case 0xcd: if (left() < 3) return false; u = load_be16(p + 1); p += 3; break;
      case 0xce: if (left() < 5) return false; u = load_be32(p + 1); p += 5; break;
      case 0xcf: if (left() < 9) return false; u = load_be64(p + 1); p += 9; break;
      default:
        if constexpr (std::is_unsigned_v<I>) {
          return false;  // a negative value: the checked path says so
        } else {
          if (b >= 0xe0) {
            s = static_cast<int8_t>(b);
            p += 1;
          } else if (b == 0xd0 && left() >= 2) {
            s = static_cast<int8_t>(p[1]);
            p += 2;
          } else if (b == 0xd1 && left() >= 3) {
            s = static_cast<int16_t>(load_be16(p + 1));
            p += 3;
          } else if (b == 0xd2 && left() >= 5) {
            s = static_cast<int32_t>(load_be32(p + 1));
            p += 5;
          } else if (b == 0xd3 && left() >= 9) {
            s = static_cast<int64_t>(load_be64(p + 1));
            p += 9;
          } else {
            return false;
          }
          if (s < static_cast<int64_t>(Limits::min()) || s > static_cast<int64_t>(Limits::max())) return false;
          out = static_cast<I>(s);
          return true;
        }
    }
    if (u > static_cast<uint64_t>(Limits::max())) return false;
    out = static_cast<I>(u);
    return true;
  }

  // float32, or a whole number written as a non-negative integer (as WireWriter::float32 does).
  [[gnu::always_inline]] bool float32(float& out) {
    if (p == end) return false;
    if (*p < 0x80) {
      out = static_cast<float>(*p++);
      return true;
    }
    if (*p != 0xca || left() < 5) return false;
    const uint32_t bits = load_be32(p + 1);
    std::memcpy(&out, &bits, 4);
    p += 5;
    return true;
  }

  // An array of integers into `out` (replacing its contents; its memory is kept).
  template <class I>
  [[gnu::always_inline]] bool int_array(std::vector<I>& out) {
    if (p == end) return false;
    uint32_t n;
    if ((*p & 0xf0) == 0x90) {
      n = *p & 0x0f;
      p += 1;
    } else if (*p == 0xdc && left() >= 3) {
      n = load_be16(p + 1);
      p += 3;
    } else {
      return false;
    }
    if (n > left()) return false;  // every element takes a byte: a larger count is malformed
    out.resize(n);
    I* dst = out.data();
    for (uint32_t i = 0; i < n; ++i) {
      if (!integer(dst[i])) return false;
    }
    return true;
  }

  // Hands the position back to the reader after a fast read that succeeded.
  void commit(WireReader& r) const { r.set_cursor(p); }
};

}  // namespace zinfer::protocol
