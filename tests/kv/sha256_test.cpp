// SHA-256 against the test vectors of FIPS 180-4's examples, whole and fed in pieces.
#include "actors/kv/sha256.h"

#include <string>

#include <gtest/gtest.h>

namespace zinfer::kv {
namespace {

std::string hex(const Sha256Digest& d) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : d) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::span<const uint8_t> bytes(const std::string& s) {
  return std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(Sha256, StandardVectors) {
  EXPECT_EQ(hex(Sha256::of(bytes(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(Sha256::of(bytes("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(Sha256::of(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(Sha256::of(bytes(std::string(1000000, 'a')))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every length around the padding's edges (55, 56, 63, 64 bytes ...), fed whole and in pieces of
// every size, gives the same digest.
TEST(Sha256, PiecesGiveTheWholesDigest) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += static_cast<char>('a' + i % 26);
  for (size_t len : {0u, 1u, 55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 128u, 200u}) {
    const std::string m = text.substr(0, len);
    const Sha256Digest whole = Sha256::of(bytes(m));
    for (size_t piece = 1; piece <= 70; piece += 3) {
      Sha256 h;
      for (size_t at = 0; at < m.size(); at += piece) h.update(bytes(m.substr(at, piece)));
      EXPECT_EQ(h.finish(), whole) << "length " << len << ", pieces of " << piece;
    }
  }
}

}  // namespace
}  // namespace zinfer::kv
