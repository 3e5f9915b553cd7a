// Target: connect tokens as the server opens them. Raw mode feeds ConnectionRequest datagrams; sealed
// mode seals fuzzed plaintext under the fixed token key with the request's associated data, so the
// parser of the authenticated private part (Envelope{ConnectTokenPrivate}) is reached.
// Promise: open_connect_token answers TokenInvalid, TokenExpired, WrongServer or Ok; Ok only for a token
// naming the request's own match, client and expiry, this server, and an expiry still ahead.
//
// Input: u8 mode | [sealed: u32 match, u64 client, u64 expires_at] | bytes.  mode bit 0: sealed.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "protocol/connect_token.hpp"
#include "protocol/envelope.hpp"

namespace {

std::vector<std::uint8_t> request_datagram(std::uint32_t match, std::uint64_t client,
                                           std::uint64_t expires_at, std::span<const std::uint8_t> sealed) {
  using namespace shiftcast;
  flatbuffers::FlatBufferBuilder fbb;
  const TokenNonce n = fixed_nonce(2);
  const auto nonce = fbb.CreateVector(n.data(), n.size());
  const auto s = fbb.CreateVector(sealed.data(), sealed.size());
  const auto body = wire::CreateConnectionRequest(fbb, match, client, expires_at, nonce, s);
  finish_envelope(fbb, wire::Message::ConnectionRequest, body.Union());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  using namespace shiftcast::fuzz;
  Input in(data, size);
  const std::uint8_t mode = in.u8();
  std::vector<std::uint8_t> datagram;
  if (mode & 1) {
    // Mostly the fixed ids (so the inner ones can match), sometimes fuzzed ones.
    const std::uint32_t match = mode & 2 ? in.u32() : kMatch;
    const std::uint64_t client = mode & 4 ? in.u64() : kClient;
    const std::uint64_t expires_at = mode & 8 ? in.u64() : kTokenExpiry;
    const std::vector<std::uint8_t> plain = copy(in.rest());
    datagram = request_datagram(
        match, client, expires_at,
        seal_xchacha(kTokenKey, fixed_nonce(2), plain, token_associated_data(match, client, expires_at)));
  } else {
    datagram = copy(in.rest());
  }
  const EnvelopeView view = verify_envelope(datagram, kMaxRpcFrameBytes);
  if (view.error != wire::ErrorCode::Ok) return 0;
  const auto* request = view.envelope->message_as_ConnectionRequest();
  if (request == nullptr) return 0;
  const OpenedToken opened = open_connect_token(kTokenKey, *request, kServerAddress, kNowUnix);
  switch (opened.error) {
    case wire::ErrorCode::Ok:
      require(opened.expires_at > kNowUnix, "open_connect_token: Ok for an expired token");
      [[fallthrough]];
    case wire::ErrorCode::TokenExpired:
    case wire::ErrorCode::WrongServer:
      require(opened.match_id == request->match_id() && opened.client_id == request->client_id() &&
                  opened.expires_at == request->expires_at(),
              "open_connect_token: opened a token naming other ids than the request's");
      break;
    case wire::ErrorCode::TokenInvalid:
      break;
    default:
      fail("open_connect_token: an error code outside its contract");
  }
  return 0;
}
