#include "server/spectator/spectator_frame.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "world/match/prop_model.hpp"

namespace shiftcast {
namespace {

using Point = std::array<float, 2>;
using Outline = std::vector<Point>;

// Little-endian writes: the frame's layout is the document's whatever the host (this one is little-endian;
// the static_assert keeps it honest).
static_assert(std::endian::native == std::endian::little, "the frame is written with memcpy");

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}
void put_vec(std::string& out, Vec3 v) {
  put(out, v.x);
  put(out, v.y);
  put(out, v.z);
}

// Convex hull (Andrew's monotone chain) of points seen from above, counter-clockwise, collinear points
// dropped.
Outline hull_2d(std::vector<Point> points) {
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  if (points.size() < 3) return points;
  const auto cross = [](const Point& o, const Point& a, const Point& b) {
    return (double(a[0]) - o[0]) * (double(b[1]) - o[1]) - (double(a[1]) - o[1]) * (double(b[0]) - o[0]);
  };
  Outline hull(2 * points.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], points[i]) <= 0)
      --k;
    hull[k++] = points[i];
  }
  for (std::size_t i = points.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], points[i]) <= 0)
      --k;
    hull[k++] = points[i];
  }
  hull.resize(k - 1);
  return hull;
}

Outline outline_of(std::span<const Vec3> corners) {
  std::vector<Point> points;
  points.reserve(corners.size());
  for (const Vec3& c : corners)
    points.push_back({c.x, c.y});
  return hull_2d(std::move(points));
}

Outline box_outline(Vec3 half, Vec3 offset) {
  return {{offset.x - half.x, offset.y - half.y},
          {offset.x + half.x, offset.y - half.y},
          {offset.x + half.x, offset.y + half.y},
          {offset.x - half.x, offset.y + half.y}};
}

}  // namespace

float spectator_radius(const Entity& entity) {
  if (entity.kind == EntityKind::kProp) return 0;
  switch (entity.shape.kind) {
    case ShapeKind::kSphere:
    case ShapeKind::kCylinder:
      return entity.shape.radius;
    default:
      return 0;
  }
}

std::vector<Outline> prop_outline(const Entity& prop) {
  std::vector<Outline> out;
  if (prop.model != nullptr && prop.model->concave) {
    for (const std::vector<Vec3>& corners : prop.model->brush_vertices)
      out.push_back(outline_of(corners));
    return out;
  }
  const Shape& shape = prop.model != nullptr ? prop.model->shape : prop.shape;
  switch (shape.kind) {
    case ShapeKind::kBox:
      out.push_back(box_outline(shape.half_extents, shape.offset));
      break;
    case ShapeKind::kHull:
      out.push_back(outline_of(shape.hull_vertices));
      break;
    default:
      break;  // a point, sphere or cylinder prop: drawn by its radius like the others
  }
  return out;
}

std::string encode_spectator_frame(const WorldView& view, std::uint64_t newest_tick,
                                   std::span<const ContactRecord> contacts,
                                   std::span<const SpectatorShot> shots) {
  const std::size_t entity_count = std::min<std::size_t>(view.entities.size(), 65535);
  const std::size_t contact_count = std::min(contacts.size(), kSpectatorMaxContacts);
  const std::size_t shot_count = std::min(shots.size(), kSpectatorMaxShots);
  shots = shots.subspan(shots.size() - shot_count);  // the newest
  std::string out;
  out.reserve(kSpectatorHeaderBytes + entity_count * kSpectatorEntityBytes +
              contact_count * kSpectatorContactBytes + shot_count * kSpectatorShotBytes);
  put(out, kSpectatorFrameKind);
  put(out, kSpectatorFrameVersion);
  put(out, std::uint16_t(entity_count));
  put(out, std::uint16_t(contact_count));
  put(out, std::uint16_t(shot_count));
  put(out, double(view.tick));
  put(out, double(newest_tick));
  for (std::size_t i = 0; i < entity_count; ++i) {
    const Entity& e = view.entities[i];
    put(out, std::uint32_t(e.id));
    put(out, std::uint8_t(e.kind));
    const std::uint8_t flags = (e.asleep ? 1 : 0) | (e.motion == PropMotion::kKinematic ? 2 : 0) |
                               (e.motion == PropMotion::kCrate ? 4 : 0);
    put(out, flags);
    put(out, std::uint16_t(0));
    put_vec(out, e.pose.position);
    put(out, e.pose.yaw);
    put_vec(out, e.velocity);
    put(out, spectator_radius(e));
    put(out, std::uint32_t(e.kind == EntityKind::kProjectile ? e.owner : kNoEntity));
  }
  for (std::size_t i = 0; i < contact_count; ++i) {
    const ContactRecord& r = contacts[i];
    put(out, std::uint32_t(r.contact.a));
    put(out, std::uint32_t(r.contact.b));
    put(out, r.a_kind);
    put(out, r.b_kind);
    put(out, std::uint16_t(0));
    put_vec(out, r.contact.point);
    put_vec(out, r.contact.normal);
  }
  for (const SpectatorShot& s : shots) {
    const RecordedQuery& q = s.query;
    put(out, q.tick_used);
    put_vec(out, q.origin);
    put_vec(out, q.target);
    put(out, q.hit ? q.fraction * q.max_distance : q.max_distance);
    put(out, std::uint32_t(q.hit ? q.entity : kNoEntity));
    put(out, std::uint8_t(q.hit ? 1 : 0));
    put(out, std::uint8_t(s.posed ? 1 : 0));
    put(out, std::uint16_t(0));
    put_vec(out, s.posed ? s.pose.position : Vec3{});
    put(out, s.posed ? s.pose.yaw : 0.0f);
    put(out, s.posed ? s.radius : 0.0f);
  }
  return out;
}

void stamp_newest_tick(std::string& frame, std::uint64_t newest_tick) {
  if (frame.size() < kSpectatorHeaderBytes) return;
  const double value = double(newest_tick);
  std::memcpy(frame.data() + 16, &value, sizeof value);
}

std::string encode_outlines(std::span<const Entity* const> props) {
  std::string out = R"({"type":"outlines","outlines":{)";
  bool first_prop = true;
  for (const Entity* prop : props) {
    if (!first_prop) out += ',';
    first_prop = false;
    out += fmt::format(R"("{}":[)", prop->id);
    bool first_polygon = true;
    for (const Outline& polygon : prop_outline(*prop)) {
      if (!first_polygon) out += ',';
      first_polygon = false;
      out += '[';
      for (std::size_t i = 0; i < polygon.size(); ++i)
        out += fmt::format("{}{},{}", i == 0 ? "" : ",", polygon[i][0], polygon[i][1]);
      out += ']';
    }
    out += ']';
  }
  out += "}}";
  return out;
}

}  // namespace shiftcast
