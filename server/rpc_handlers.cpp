// RpcConnection's answers to queries, match listings and the admin calls (the stream itself is in
// rpc_connection.cpp, subscriptions in rpc_contacts.cpp). Keys were checked before any of these run
// (RpcConnection::authorize): admin calls reach here only with the admin key.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <limits>

#include "protocol/connect_token.hpp"
#include "server/rpc_connection.hpp"

namespace shiftcast {

namespace {

std::uint16_t clamp16(std::int64_t v) {
  return std::uint16_t(std::clamp<std::int64_t>(v, 0, std::numeric_limits<std::uint16_t>::max()));
}

flatbuffers::Offset<wire::MatchInfo> match_info(flatbuffers::FlatBufferBuilder& fbb, const MatchSummary& s) {
  return wire::CreateMatchInfo(fbb, s.match_id, fbb.CreateString(s.level), clamp16(s.tick_rate), s.tick,
                               clamp16(s.players), clamp16(s.max_players), s.entities);
}

template <std::size_t N>
flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> bytes(flatbuffers::FlatBufferBuilder& fbb,
                                                             const std::array<std::uint8_t, N>& a) {
  return fbb.CreateVector(a.data(), a.size());
}

}  // namespace

void RpcConnection::answer_query(const QueryAnswer& answer, std::uint64_t request_id) {
  if (!answer.error.ok()) return refuse(answer.error.code, request_id, answer.error.detail);
  send(answer.type, answer.reply, request_id);
}

void RpcConnection::list_matches(std::uint64_t request_id) {
  std::vector<flatbuffers::Offset<wire::MatchInfo>> infos;
  for (const std::shared_ptr<MatchHandle>& m : shared_->directory.list())
    infos.push_back(match_info(fbb_, m->health().summary));
  const auto vector = fbb_.CreateVector(infos);
  send(wire::Message::ListMatchesReply, wire::CreateListMatchesReply(fbb_, vector).Union(), request_id);
}

void RpcConnection::match_status(const wire::MatchStatus& request, std::uint64_t request_id) {
  const std::shared_ptr<MatchHandle> m = shared_->directory.find(request.match_id());
  if (m == nullptr) {
    return refuse(wire::ErrorCode::UnknownMatch, request_id, fmt::format("no match {}", request.match_id()));
  }
  const MatchHealth h = m->health();
  const auto info = match_info(fbb_, h.summary);
  const auto reply = wire::CreateMatchStatusReply(fbb_, info, float(h.tick_p50_ms), float(h.tick_p99_ms),
                                                  h.late_ticks, h.contacts, h.invariant_violations);
  send(wire::Message::MatchStatusReply, reply.Union(), request_id);
}

void RpcConnection::create_match(const wire::CreateMatch& request, std::uint64_t request_id) {
  CreateMatchSpec spec;
  spec.level = request.level() ? request.level()->str() : std::string();
  spec.max_players = request.max_players();
  spec.props = request.props();
  spec.seed = request.seed();
  spec.tick_rate = request.tick_rate();
  spec.snapshot_rate = request.snapshot_rate();
  const CreatedMatch created = shared_->directory.create(spec);
  if (created.error != wire::ErrorCode::Ok) return refuse(created.error, request_id, created.detail);
  send(wire::Message::CreateMatchReply, wire::CreateCreateMatchReply(fbb_, created.match_id).Union(),
       request_id);
}

void RpcConnection::end_match(const wire::EndMatch& request, std::uint64_t request_id) {
  const wire::ErrorCode code = shared_->directory.end(request.match_id());
  if (code != wire::ErrorCode::Ok) {
    return refuse(code, request_id, fmt::format("cannot end match {}", request.match_id()));
  }
  send(wire::Message::EndMatchReply, wire::CreateEndMatchReply(fbb_, request.match_id()).Union(), request_id);
}

void RpcConnection::issue_connect_token(const wire::IssueConnectToken& request, std::uint64_t request_id) {
  if (shared_->directory.find(request.match_id()) == nullptr) {
    return refuse(wire::ErrorCode::UnknownMatch, request_id, fmt::format("no match {}", request.match_id()));
  }
  if (request.client_id() == 0)
    return refuse(wire::ErrorCode::BadArgument, request_id, "client_id must be nonzero");
  const std::uint32_t valid = flatbuffers::IsFieldPresent(&request, wire::IssueConnectToken::VT_VALID_SECONDS)
                                  ? request.valid_seconds()
                                  : shared_->settings.token_valid_seconds;
  if (valid < 1 || valid > kMaxTokenValidSeconds) {
    return refuse(wire::ErrorCode::BadArgument, request_id,
                  fmt::format("valid_seconds = {} is outside [1, {}]", valid, kMaxTokenValidSeconds));
  }
  const ConnectToken t = shiftcast::issue_connect_token(
      shared_->settings.keys.token_key, shared_->settings.public_address, request.match_id(),
      request.client_id(), shared_->unix_now() + valid, shared_->settings.keys.server_instance);
  const auto address = fbb_.CreateString(t.server_address);
  const auto nonce = bytes(fbb_, t.nonce);
  const auto sealed = fbb_.CreateVector(t.sealed);
  const auto c2s = bytes(fbb_, t.client_to_server);
  const auto s2c = bytes(fbb_, t.server_to_client);
  const auto reply = wire::CreateIssueConnectTokenReply(fbb_, address, t.match_id, t.client_id, t.expires_at,
                                                        nonce, sealed, c2s, s2c);
  send(wire::Message::IssueConnectTokenReply, reply.Union(), request_id);
}

}  // namespace shiftcast
