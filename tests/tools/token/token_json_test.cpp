// The minted token's JSON (docs/protocol.md, "Minting tokens"): the documented inputs print the documented
// text exactly; what is printed reads back to the same token; the reader refuses every malformed variant
// (a missing, extra, repeated or mistyped field, bad hex, trailing text) instead of guessing.
#include "tools/token/token_json.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/tools/token/doc_vectors.hpp"
#include "tools/token/token_mint.hpp"

namespace shiftcast {
namespace {

ConnectToken documented_token() {
  const MintResult m = mint_connect_token(documented_mint_request(), kDocNow);
  EXPECT_TRUE(m.ok()) << m.error;
  return m.token.value_or(ConnectToken{});
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(TokenJson, TheDocumentedTokenPrintsTheDocumentedText) {
  const std::string want = doc_vector_text("minted_token_json");
  ASSERT_FALSE(want.empty()) << "docs/protocol.md has no minted_token_json vector";
  EXPECT_EQ(connect_token_json(documented_token()), want);
}

TEST(TokenJson, WhatIsPrintedReadsBack) {
  const ConnectToken token = documented_token();
  const std::optional<ConnectToken> back = connect_token_from_json(connect_token_json(token));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->server_address, token.server_address);
  EXPECT_EQ(back->match_id, token.match_id);
  EXPECT_EQ(back->client_id, token.client_id);
  EXPECT_EQ(back->expires_at, token.expires_at);
  EXPECT_EQ(back->nonce, token.nonce);
  EXPECT_EQ(back->sealed, token.sealed);
  EXPECT_EQ(back->client_to_server, token.client_to_server);
  EXPECT_EQ(back->server_to_client, token.server_to_client);
  EXPECT_EQ(back->server_instance, 0u);  // not in the JSON: clients never need it
  // The request a client builds from it is the documented datagram.
  EXPECT_EQ(build_connection_request(*back), doc_vector_bytes("connection_request"));
  // Whitespace is free; so is field order.
  std::string compact;
  for (char c : connect_token_json(token))
    if (c != '\n' && c != ' ') compact += c;
  EXPECT_TRUE(connect_token_from_json(compact).has_value()) << compact;
  const std::string reordered = replaced(compact, "\"match_id\":7,", "");
  EXPECT_TRUE(connect_token_from_json(replaced(reordered, "{", "{\"match_id\":7,")).has_value());
}

TEST(TokenJson, MalformedTextIsRefused) {
  const std::string good = connect_token_json(documented_token());
  ASSERT_TRUE(connect_token_from_json(good).has_value());
  const std::string key_hex = "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f";
  const std::string bad[] = {
      "",
      "{}",
      good.substr(0, good.size() - 3),                           // truncated
      good + "x",                                                // trailing text
      replaced(good, "\"match_id\": 7,", ""),                    // missing field
      replaced(good, "{", "{\"extra\": 1,"),                     // unknown field
      replaced(good, "{", "{\"match_id\": 7,"),                  // repeated field
      replaced(good, "\"match_id\": 7", "\"match_id\": \"7\""),  // string for a number
      replaced(good, "\"server_address\": \"127.0.0.1:40000\"",
               "\"server_address\": 1"),                              // number for a string
      replaced(good, "\"match_id\": 7", "\"match_id\": 07"),          // not how a number is written
      replaced(good, "\"match_id\": 7", "\"match_id\": 4294967296"),  // past a match id
      replaced(good, "\"match_id\": 7", "\"match_id\": -7"),
      replaced(good, key_hex, key_hex.substr(2)),                  // a key one byte short
      replaced(good, key_hex, "zz" + key_hex.substr(2)),           // not hex
      replaced(good, "808182", "8081"),                            // a nonce one byte short
      replaced(good, "127.0.0.1:40000", "127.0.0.1"),              // not an address
      replaced(good, "127.0.0.1:40000", "127.0.0.1:4\\u0030000"),  // an escape
  };
  for (const std::string& text : bad)
    EXPECT_FALSE(connect_token_from_json(text).has_value()) << text;
}

}  // namespace
}  // namespace shiftcast
