// QueryService: the RPC's raycasts, sweeps, overlaps and batches as pure functions over a match's
// published history (world/match/tick_history.hpp). No I/O and no locks: any thread may answer queries about
// any match at once, each with its own QueryScratch, and nothing here ever waits for a match's worker.
//
//   QueryScratch scratch;                                       // one per connection (reused buffers)
//   flatbuffers::FlatBufferBuilder fbb;
//   QueryAnswer a = answer_raycast(directory, *request, scratch, fbb);
//   if (!a.error.ok()) reply_error(a.error.code, a.error.detail);
//   else finish_envelope(fbb, a.type, a.reply, request_id);
//
// Every argument is checked before the world sees it (finite, within kMaxQueryCoordinate, sizes positive
// and bounded): a refusal is BadArgument with a detail naming the field. Rewinds resolve through AsOf:
// Now is the newest published tick, Tick any (fractional) tick, ClientView the view tick of a client's
// newest input; a tick outside the kept second is answered at the nearest kept one and the reply's
// RewindInfo.clamp says so. What each query costs the rate limit is server/query_cost.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/shiftcast_generated.h"
#include "server/match_directory.hpp"
#include "server/query_cost.hpp"
#include "world/match/tick_history.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast {

// Coordinates beyond this (units) are refused: float keeps 1/16 unit of precision up to here, and no level
// spans more than a few tens of thousands of units.
inline constexpr float kMaxQueryCoordinate = 1e6f;
// The longest ray: across the whole coordinate cube (its diagonal is 2·sqrt(3)·kMaxQueryCoordinate).
inline constexpr float kMaxQueryDistance = 4e6f;
// A direction shorter than this is zero: normalising it would lose every bit of its meaning.
inline constexpr float kMinQueryDirectionLength = 1e-6f;
// Radii, heights and half extents of query shapes: far beyond any character or prop.
inline constexpr float kMaxQueryShapeSize = 4096.0f;

// Buffers a query needs, owned by the caller (one per connection) so queries never allocate in the
// steady state and no thread-local state exists. Rewinds to whole ticks read the view's entities in
// place; interpolated ones are posed into `entities`, and kept for the next query at the same time (a
// batch of rewound queries poses the world once). Holding the views keeps their addresses from being
// reused by newer ones, so the cache can never be mistaken.
struct QueryScratch {
  std::vector<Entity> entities;
  std::shared_ptr<const WorldView> posed_before;
  std::shared_ptr<const WorldView> posed_after;
  double posed_alpha = -1;
  std::vector<flatbuffers::Offset<wire::BatchResult>> batch_results;
};

struct QueryError {
  wire::ErrorCode code = wire::ErrorCode::Ok;
  std::string detail;
  bool ok() const { return code == wire::ErrorCode::Ok; }
};

// The view(s) a query runs against, and what the reply's RewindInfo says about them.
struct ResolvedAsOf {
  RewindView view;
  QueryError error;  // BadArgument: non-finite tick, unknown client, unknown AsOfKind
};
// `as_of` may be null (Now).
ResolvedAsOf resolve_as_of(const MatchHandle& match, const wire::AsOf* as_of);
wire::RewindClamp to_wire(RewindClamp clamp);

// A finished reply table (not yet an Envelope), or the reason it was refused.
struct QueryAnswer {
  QueryError error;
  wire::Message type = wire::Message::NONE;
  flatbuffers::Offset<void> reply;
};

// The match is looked up in `directory` (UnknownMatch when it does not exist).
QueryAnswer answer_raycast(const MatchDirectory& directory, const wire::RaycastRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb);
QueryAnswer answer_sweep(const MatchDirectory& directory, const wire::SweepRequest& request,
                         QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb);
QueryAnswer answer_overlap(const MatchDirectory& directory, const wire::OverlapRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb);
// The same against a match already found.
QueryAnswer answer_raycast(const MatchHandle& match, const wire::RaycastRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb);
QueryAnswer answer_sweep(const MatchHandle& match, const wire::SweepRequest& request, QueryScratch& scratch,
                         flatbuffers::FlatBufferBuilder& fbb);
QueryAnswer answer_overlap(const MatchHandle& match, const wire::OverlapRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb);

// Each query independently (a refused one gets an RpcError in its BatchResult, the others still run). The
// whole request is refused (BadArgument) when it is empty or holds more than `max_batch` queries.
QueryAnswer answer_batch(const MatchDirectory& directory, const wire::BatchRequest& request, int max_batch,
                         QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb);

}  // namespace shiftcast
