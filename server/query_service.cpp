#include "server/query_service.hpp"

#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <span>
#include <utility>

#include "collision/turned_shape.hpp"

namespace shiftcast {

namespace {

QueryError bad(std::string detail) {
  return {wire::ErrorCode::BadArgument, std::move(detail)};
}

QueryError check_coordinate(float v, const char* field, char axis) {
  if (!std::isfinite(v)) return bad(fmt::format("{}.{} is not finite", field, axis));
  if (std::abs(v) > kMaxQueryCoordinate) {
    return bad(
        fmt::format("{}.{} = {} is beyond the coordinate limit {}", field, axis, v, kMaxQueryCoordinate));
  }
  return {};
}

QueryError check_point(const wire::Vec3f* p, const char* field) {
  if (p == nullptr) return bad(fmt::format("{} is missing", field));
  for (const auto& [v, axis] : {std::pair{p->x(), 'x'}, std::pair{p->y(), 'y'}, std::pair{p->z(), 'z'}}) {
    if (QueryError e = check_coordinate(v, field, axis); !e.ok()) return e;
  }
  return {};
}

QueryError check_size(float v, const char* field) {
  if (!std::isfinite(v)) return bad(fmt::format("{} is not finite", field));
  if (!(v > 0.0f)) return bad(fmt::format("{} = {} is not positive", field, v));
  if (v > kMaxQueryShapeSize) {
    return bad(fmt::format("{} = {} is beyond the shape size limit {}", field, v, kMaxQueryShapeSize));
  }
  return {};
}

Vec3 to_vec(const wire::Vec3f& v) {
  return {v.x(), v.y(), v.z()};
}
wire::Vec3f to_wire_vec(Vec3 v) {
  return {v.x, v.y, v.z};
}

// The query shape in the world's terms; `yaw` turns boxes (round shapes look the same at any yaw).
struct QueryShape {
  Shape shape;
  float yaw = 0;
  QueryError error;
};

QueryShape read_shape(const wire::ShapeSpec* spec) {
  QueryShape out;
  if (spec == nullptr) {
    out.error = bad("shape is missing");
    return out;
  }
  if (!std::isfinite(spec->yaw())) {
    out.error = bad("shape.yaw is not finite");
    return out;
  }
  out.yaw = spec->yaw();
  switch (spec->kind()) {
    case wire::ShapeKind::Point:
      out.shape = Shape::point();
      break;
    case wire::ShapeKind::Sphere:
      out.error = check_size(spec->radius(), "shape.radius");
      out.shape = Shape::sphere(spec->radius());
      break;
    case wire::ShapeKind::Cylinder:
      out.error = check_size(spec->radius(), "shape.radius");
      if (out.error.ok()) out.error = check_size(spec->height(), "shape.height");
      out.shape = Shape::cylinder(spec->radius(), spec->height());
      break;
    case wire::ShapeKind::Box: {
      const wire::Vec3f* h = spec->half_extents();
      if (h == nullptr) {
        out.error = bad("shape.half_extents is missing");
        break;
      }
      out.error = check_size(h->x(), "shape.half_extents.x");
      if (out.error.ok()) out.error = check_size(h->y(), "shape.half_extents.y");
      if (out.error.ok()) out.error = check_size(h->z(), "shape.half_extents.z");
      out.shape = Shape::box(to_vec(*h));
      break;
    }
    default:
      out.error = bad(fmt::format("shape.kind {} is not a ShapeKind", int(spec->kind())));
  }
  return out;
}

QueryFilter read_filter(const wire::QueryFilter* f) {
  if (f == nullptr) return {};  // the schema's defaults: every layer, no ignored entity, the level
  return {.mask = f->mask(), .ignore = f->ignore_entity(), .level = f->level()};
}

// The entities of `view`: a whole tick's in place, an interpolated time's posed once into the scratch.
std::span<const Entity> entities_of(const RewindView& view, QueryScratch& scratch) {
  if (view.before == nullptr) return {};
  if (view.after == nullptr || view.after == view.before || view.alpha == 0.0) return view.before->entities;
  if (scratch.posed_before != view.before || scratch.posed_after != view.after ||
      scratch.posed_alpha != view.alpha) {
    view.entities(scratch.entities);
    scratch.posed_before = view.before;
    scratch.posed_after = view.after;
    scratch.posed_alpha = view.alpha;
  }
  return scratch.entities;
}

flatbuffers::Offset<wire::RewindInfo> rewind_info(flatbuffers::FlatBufferBuilder& fbb,
                                                  const RewindView& view) {
  return wire::CreateRewindInfo(fbb, view.tick_used, to_wire(view.clamp));
}

flatbuffers::Offset<wire::QueryHit> query_hit(flatbuffers::FlatBufferBuilder& fbb, const WorldHit& h) {
  const wire::Vec3f end = to_wire_vec(h.trace.end_position);
  const wire::Vec3f normal = to_wire_vec(h.trace.normal);
  return wire::CreateQueryHit(fbb, h.trace.hit, h.trace.fraction, &end, &normal, h.trace.start_solid,
                              h.trace.all_solid, h.trace.brush, h.entity);
}

// The arguments were checked, so the world refusing them means a check here is missing: still a typed
// refusal, never a reply made of a refused answer.
QueryError world_status(QueryStatus status) {
  switch (status) {
    case QueryStatus::kOk:
      return {};
    case QueryStatus::kNonFiniteInput:
      return bad("the world refused the query: non-finite input");
    case QueryStatus::kInvalidShape:
      return bad("the world refused the query: invalid shape");
  }
  return bad("the world refused the query");
}

QueryAnswer refused(QueryError error) {
  QueryAnswer a;
  a.error = std::move(error);
  return a;
}

template <typename Reply>
QueryAnswer answered(wire::Message type, flatbuffers::Offset<Reply> reply) {
  QueryAnswer a;
  a.type = type;
  a.reply = reply.Union();
  return a;
}

// The recording hook (docs/replay.md): what the query was, the tick it was judged at and what it saw.
RecordedQuery recorded(RecordedQueryKind kind, const RewindView& view, const QueryFilter& filter) {
  RecordedQuery q;
  q.kind = kind;
  q.tick_used = view.tick_used;
  q.layers = filter.mask;
  q.ignore = filter.ignore;
  q.include_level = filter.level;
  return q;
}

void set_shape(RecordedQuery& q, const QueryShape& s) {
  q.yaw = s.yaw;
  q.shape_kind = std::uint8_t(s.shape.kind);
  q.shape_offset = s.shape.offset;
  q.shape_radius = s.shape.radius;
  q.shape_height = s.shape.height;
  q.shape_half_extents = s.shape.half_extents;
}

void set_hit(RecordedQuery& q, const WorldHit& h) {
  q.hit = h.trace.hit;
  q.entity = h.entity;
  q.brush = h.trace.brush;
  q.fraction = h.trace.fraction;
  q.point = h.trace.end_position;
  q.normal = h.trace.normal;
}

QueryError unknown_match(std::uint32_t id) {
  return {wire::ErrorCode::UnknownMatch, fmt::format("no match {}", id)};
}

}  // namespace

wire::RewindClamp to_wire(RewindClamp clamp) {
  switch (clamp) {
    case RewindClamp::kNone:
      return wire::RewindClamp::None;
    case RewindClamp::kTooOld:
      return wire::RewindClamp::TooOld;
    case RewindClamp::kInFuture:
      return wire::RewindClamp::InFuture;
    case RewindClamp::kEmpty:
      return wire::RewindClamp::Empty;
  }
  return wire::RewindClamp::Empty;
}

ResolvedAsOf resolve_as_of(const MatchHandle& match, const wire::AsOf* as_of) {
  ResolvedAsOf r;
  const wire::AsOfKind kind = as_of == nullptr ? wire::AsOfKind::Now : as_of->kind();
  switch (kind) {
    case wire::AsOfKind::Now: {
      // The newest view itself, not at(its tick): no window to race with a publish in between.
      std::shared_ptr<const WorldView> latest = match.history().latest();
      if (latest == nullptr) return r;  // nothing published yet: RewindView's default says kEmpty
      r.view.tick_used = double(latest->tick);
      r.view.alpha = 0;
      r.view.clamp = RewindClamp::kNone;
      r.view.before = latest;
      r.view.after = std::move(latest);
      return r;
    }
    case wire::AsOfKind::Tick:
      if (!std::isfinite(as_of->tick())) {
        r.error = bad("as_of.tick is not finite");
        return r;
      }
      r.view = match.history().at(as_of->tick());
      return r;
    case wire::AsOfKind::ClientView: {
      const std::optional<double> tick = match.client_view_tick(as_of->client_id());
      if (!tick) {
        r.error = bad(fmt::format("unknown client {}", as_of->client_id()));
        return r;
      }
      r.view = match.history().at(*tick);
      return r;
    }
  }
  r.error = bad(fmt::format("as_of.kind {} is not an AsOfKind", int(kind)));
  return r;
}

QueryAnswer answer_raycast(const MatchHandle& match, const wire::RaycastRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb) {
  if (QueryError e = check_point(request.origin(), "origin"); !e.ok()) return refused(std::move(e));
  if (QueryError e = check_point(request.direction(), "direction"); !e.ok()) return refused(std::move(e));
  const Vec3 origin = to_vec(*request.origin());
  const Vec3 direction = to_vec(*request.direction());
  if (!(length(to_double(direction)) >= double(kMinQueryDirectionLength))) {
    return refused(bad(fmt::format("direction is zero (shorter than {})", kMinQueryDirectionLength)));
  }
  const float max_distance = request.max_distance();
  if (!std::isfinite(max_distance)) return refused(bad("max_distance is not finite"));
  if (!(max_distance > 0.0f) || max_distance > kMaxQueryDistance) {
    return refused(bad(fmt::format("max_distance = {} is outside (0, {}]", max_distance, kMaxQueryDistance)));
  }
  ResolvedAsOf at = resolve_as_of(match, request.as_of());
  if (!at.error.ok()) return refused(std::move(at.error));

  const WorldHit hit = world_raycast(match.level_tree(), entities_of(at.view, scratch), origin, direction,
                                     max_distance, read_filter(request.filter()));
  if (QueryError e = world_status(hit.trace.status); !e.ok()) return refused(std::move(e));
  if (match.records_queries()) {
    RecordedQuery q = recorded(RecordedQueryKind::kRaycast, at.view, read_filter(request.filter()));
    q.origin = origin;
    q.target = direction;
    q.max_distance = max_distance;
    set_hit(q, hit);
    match.record_query(q);
  }
  const auto hit_offset = query_hit(fbb, hit);
  const auto rewind = rewind_info(fbb, at.view);
  return answered(wire::Message::RaycastReply, wire::CreateRaycastReply(fbb, hit_offset, rewind));
}

QueryAnswer answer_sweep(const MatchHandle& match, const wire::SweepRequest& request, QueryScratch& scratch,
                         flatbuffers::FlatBufferBuilder& fbb) {
  if (QueryError e = check_point(request.from(), "from"); !e.ok()) return refused(std::move(e));
  if (QueryError e = check_point(request.to(), "to"); !e.ok()) return refused(std::move(e));
  QueryShape shape = read_shape(request.shape());
  if (!shape.error.ok()) return refused(std::move(shape.error));
  ResolvedAsOf at = resolve_as_of(match, request.as_of());
  if (!at.error.ok()) return refused(std::move(at.error));

  // A sweep keeps the shape's orientation, so a turned box is the hull of its turned corners.
  const TurnedShape turned(shape.shape, shape.yaw);
  const WorldHit hit =
      world_sweep(match.level_tree(), entities_of(at.view, scratch), turned.shape(), to_vec(*request.from()),
                  to_vec(*request.to()), read_filter(request.filter()));
  if (QueryError e = world_status(hit.trace.status); !e.ok()) return refused(std::move(e));
  if (match.records_queries()) {
    RecordedQuery q = recorded(RecordedQueryKind::kSweep, at.view, read_filter(request.filter()));
    q.origin = to_vec(*request.from());
    q.target = to_vec(*request.to());
    set_shape(q, shape);
    set_hit(q, hit);
    match.record_query(q);
  }
  const auto hit_offset = query_hit(fbb, hit);
  const auto rewind = rewind_info(fbb, at.view);
  return answered(wire::Message::SweepReply, wire::CreateSweepReply(fbb, hit_offset, rewind));
}

QueryAnswer answer_overlap(const MatchHandle& match, const wire::OverlapRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb) {
  if (QueryError e = check_point(request.position(), "position"); !e.ok()) return refused(std::move(e));
  QueryShape shape = read_shape(request.shape());
  if (!shape.error.ok()) return refused(std::move(shape.error));
  ResolvedAsOf at = resolve_as_of(match, request.as_of());
  if (!at.error.ok()) return refused(std::move(at.error));

  const WorldOverlap overlap =
      world_overlap(match.level_tree(), entities_of(at.view, scratch), shape.shape,
                    Pose{to_vec(*request.position()), shape.yaw}, read_filter(request.filter()));
  if (QueryError e = world_status(overlap.status); !e.ok()) return refused(std::move(e));
  if (match.records_queries()) {
    RecordedQuery q = recorded(RecordedQueryKind::kOverlap, at.view, read_filter(request.filter()));
    q.origin = to_vec(*request.position());
    set_shape(q, shape);
    q.hit = overlap.brush != kNoBrush || !overlap.entities.empty();
    q.brush = overlap.brush;
    q.overlapped = overlap.entities;
    match.record_query(q);
  }
  const auto entities = fbb.CreateVector(overlap.entities);
  const auto rewind = rewind_info(fbb, at.view);
  return answered(wire::Message::OverlapReply,
                  wire::CreateOverlapReply(fbb, overlap.brush, entities, rewind));
}

QueryAnswer answer_raycast(const MatchDirectory& directory, const wire::RaycastRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb) {
  const std::shared_ptr<MatchHandle> match = directory.find(request.match_id());
  if (match == nullptr) return refused(unknown_match(request.match_id()));
  return answer_raycast(*match, request, scratch, fbb);
}

QueryAnswer answer_sweep(const MatchDirectory& directory, const wire::SweepRequest& request,
                         QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb) {
  const std::shared_ptr<MatchHandle> match = directory.find(request.match_id());
  if (match == nullptr) return refused(unknown_match(request.match_id()));
  return answer_sweep(*match, request, scratch, fbb);
}

QueryAnswer answer_overlap(const MatchDirectory& directory, const wire::OverlapRequest& request,
                           QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb) {
  const std::shared_ptr<MatchHandle> match = directory.find(request.match_id());
  if (match == nullptr) return refused(unknown_match(request.match_id()));
  return answer_overlap(*match, request, scratch, fbb);
}

namespace {

int members_set(const wire::BatchQuery& q) {
  return int(q.raycast() != nullptr) + int(q.sweep() != nullptr) + int(q.overlap() != nullptr);
}

// One BatchQuery's answer. Consecutive queries of one match share the directory lookup.
QueryAnswer answer_one(const MatchDirectory& directory, const wire::BatchQuery& q,
                       std::shared_ptr<MatchHandle>& match, QueryScratch& scratch,
                       flatbuffers::FlatBufferBuilder& fbb) {
  if (members_set(q) != 1) return refused(bad("a batch query sets exactly one of raycast, sweep, overlap"));
  const std::uint32_t id = q.raycast() ? q.raycast()->match_id()
                           : q.sweep() ? q.sweep()->match_id()
                                       : q.overlap()->match_id();
  if (match == nullptr || match->id() != id) match = directory.find(id);
  if (match == nullptr) return refused(unknown_match(id));
  if (q.raycast()) return answer_raycast(*match, *q.raycast(), scratch, fbb);
  if (q.sweep()) return answer_sweep(*match, *q.sweep(), scratch, fbb);
  return answer_overlap(*match, *q.overlap(), scratch, fbb);
}

}  // namespace

QueryAnswer answer_batch(const MatchDirectory& directory, const wire::BatchRequest& request, int max_batch,
                         QueryScratch& scratch, flatbuffers::FlatBufferBuilder& fbb) {
  const auto* queries = request.queries();
  if (queries == nullptr || queries->size() == 0) return refused(bad("empty batch"));
  if (queries->size() > std::uint32_t(std::max(0, max_batch))) {
    return refused(
        bad(fmt::format("a batch of {} queries is over the limit of {}", queries->size(), max_batch)));
  }
  std::vector<flatbuffers::Offset<wire::BatchResult>>& results = scratch.batch_results;
  results.clear();
  std::shared_ptr<MatchHandle> match;
  for (const wire::BatchQuery* q : *queries) {
    QueryAnswer a = answer_one(directory, *q, match, scratch, fbb);
    if (!a.error.ok()) {
      const auto detail = fbb.CreateString(a.error.detail);
      const auto error = wire::CreateRpcError(fbb, a.error.code, detail);
      results.push_back(wire::CreateBatchResult(fbb, 0, 0, 0, error));
    } else if (a.type == wire::Message::RaycastReply) {
      results.push_back(wire::CreateBatchResult(fbb, flatbuffers::Offset<wire::RaycastReply>(a.reply.o)));
    } else if (a.type == wire::Message::SweepReply) {
      results.push_back(wire::CreateBatchResult(fbb, 0, flatbuffers::Offset<wire::SweepReply>(a.reply.o)));
    } else {
      results.push_back(
          wire::CreateBatchResult(fbb, 0, 0, flatbuffers::Offset<wire::OverlapReply>(a.reply.o)));
    }
  }
  const auto vector = fbb.CreateVector(results);
  return answered(wire::Message::BatchReply, wire::CreateBatchReply(fbb, vector));
}

}  // namespace shiftcast
