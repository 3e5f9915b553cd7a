// The test vectors of docs/protocol.md as the token tests read them: a line `<!-- vector: NAME -->` and a
// ```hex block (the bytes, line breaks ignored), or `<!-- json vector: NAME -->` and a ```json block (the
// text as it stands; tests/protocol/test_vectors_test.cpp reads the hex ones alone).
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "tools/token/token_mint.hpp"

namespace shiftcast {

// The block's text (without the fences), empty when the vector is missing.
inline std::string doc_vector_text(const std::string& name) {
  std::ifstream in(std::string(SHIFTCAST_SOURCE_DIR) + "/docs/protocol.md");
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::size_t mark = doc.find("<!-- vector: " + name + " -->\n");
  if (mark == std::string::npos) mark = doc.find("<!-- json vector: " + name + " -->\n");
  if (mark == std::string::npos) return {};
  const std::size_t open = doc.find("```", mark);
  const std::size_t body = doc.find('\n', open) + 1;
  const std::size_t close = doc.find("```", body);
  if (open == std::string::npos || close == std::string::npos) return {};
  return doc.substr(body, close - body);
}

// The fixed inputs of docs/protocol.md's "Test vectors", as a mint request, and the clock they are minted
// at (30 s before the expiry).
inline constexpr std::uint64_t kDocNow = 1'700'000'000;

template <std::size_t N>
std::array<std::uint8_t, N> counting_bytes(std::uint8_t first) {
  std::array<std::uint8_t, N> out;
  for (std::size_t i = 0; i < N; ++i)
    out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

inline MintRequest documented_mint_request() {
  MintRequest r;
  r.token_key = counting_bytes<kKeyBytes>(0x00);
  r.server_address = "127.0.0.1:40000";
  r.server_instance = 0x0123456789abcdefull;
  r.match_id = 7;
  r.client_id = 1001;
  r.expires_at = 1'700'000'030;
  r.nonce = counting_bytes<kTokenNonceBytes>(0x80);
  r.client_to_server = counting_bytes<kKeyBytes>(0x40);
  r.server_to_client = counting_bytes<kKeyBytes>(0x60);
  return r;
}

// The same inputs as shiftcast-token (and mint_token.py) arguments; `key_file` holds the token key's hex.
inline std::string documented_mint_arguments(const std::string& key_file) {
  return "--key-file " + key_file +
         " --server 127.0.0.1:40000 --server-instance 0123456789abcdef --match 7 --client 1001"
         " --expires-at 1700000030 --now 1700000000"
         " --nonce 808182838485868788898a8b8c8d8e8f9091929394959697"
         " --client-to-server-key 404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
         " --server-to-client-key 606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f";
}
inline constexpr char kDocTokenKeyHex[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

inline std::vector<std::uint8_t> doc_vector_bytes(const std::string& name) {
  std::string hex;
  for (char c : doc_vector_text(name))
    if (c != '\n') hex += c;
  return from_hex(hex, hex.size() / 2).value_or(std::vector<std::uint8_t>{});
}

}  // namespace shiftcast
