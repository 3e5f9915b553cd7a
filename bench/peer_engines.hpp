// The peer libraries shiftcast-peer-bench measures against, each behind the same calls: Bullet 3 (a
// btCollisionWorld with the level as one static btBvhTriangleMeshShape) for rays, sphere sweeps and player
// cylinder sweeps, and Embree 3 for rays only. Both are built from level_mesh(): the brush faces as
// triangles. Header-only: one program uses it.
//
//   BulletLevel bullet(mesh);  bullet.raycast(q);  bullet.sweep(QueryKind::kSphere, q);
//   EmbreeLevel embree(mesh);  embree.raycast(q);
#pragma once

#include <btBulletCollisionCommon.h>
#include <embree3/rtcore.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "bench/query_sets.hpp"
#include "world/level/level_mesh.hpp"

namespace shiftcast::bench {

constexpr float kSphereRadius = 15.0f;
constexpr float kCylinderRadius = 15.0f;
constexpr float kCylinderHeight = 56.0f;
// Bullet's cylinder keeps its default margin: btCylinderShape subtracts the margin from its half extents
// and adds it back as a rounding, so the outer size is exactly r 15 h 56 and only the two rims are
// rounded, by 0.04 units, which moves a contact by at most 0.04·(√2 − 1) ≈ 0.017 units, far below the
// 0.5-unit threshold. A zero margin is allowed but is the case GJK is least tested on.
constexpr btScalar kBulletCylinderMargin = 0.04f;
// The triangle mesh gets no margin: a margin there would inflate every face and make every Bullet
// contact early by that much.
constexpr btScalar kBulletMeshMargin = 0.0f;

// What every engine's answer is reduced to for the comparison.
struct Answer {
  bool hit = false;
  float distance = 0;  // along the motion to the first contact; the motion's length when no hit
};

// Bullet: a collision world (no dynamics) with the level as one static triangle mesh.
class BulletLevel {
 public:
  explicit BulletLevel(const LevelMesh& mesh)
      : dispatcher_(&configuration_), world_(&dispatcher_, &broadphase_, &configuration_) {
    // Copied rather than shared so the layout is btScalar's, whichever precision Bullet was built with.
    vertices_.reserve(3 * mesh.vertices.size());
    for (const Vec3& v : mesh.vertices)
      vertices_.insert(vertices_.end(), {v.x, v.y, v.z});
    indices_.reserve(3 * mesh.triangles.size());
    for (const auto& t : mesh.triangles)
      indices_.insert(indices_.end(), {t[0], t[1], t[2]});
    arrays_ = std::make_unique<btTriangleIndexVertexArray>(int(mesh.triangles.size()), indices_.data(),
                                                           int(3 * sizeof(int)), int(mesh.vertices.size()),
                                                           vertices_.data(), int(3 * sizeof(btScalar)));
    // Quantized AABB compression is Bullet's recommended setting for large static meshes.
    shape_ = std::make_unique<btBvhTriangleMeshShape>(arrays_.get(), true);
    shape_->setMargin(kBulletMeshMargin);
    object_.setCollisionShape(shape_.get());
    object_.setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
    world_.addCollisionObject(&object_);
    world_.updateAabbs();
    cylinder_.setMargin(kBulletCylinderMargin);
  }
  BulletLevel(const BulletLevel&) = delete;
  BulletLevel& operator=(const BulletLevel&) = delete;
  ~BulletLevel() { world_.removeCollisionObject(&object_); }

  Answer raycast(const Query& q) const {
    const btVector3 from(q.from.x, q.from.y, q.from.z);
    const btVector3 to(q.to.x, q.to.y, q.to.z);
    btCollisionWorld::ClosestRayResultCallback result(from, to);
    world_.rayTest(from, to, result);
    return answer(result.hasHit(), result.m_closestHitFraction, q.length);
  }

  Answer sweep(QueryKind kind, const Query& q) const {
    // Bullet's shapes are centred on their transform; shiftcast's cylinder stands on its reference point.
    const float lift = kind == QueryKind::kCylinder ? 0.5f * kCylinderHeight : 0.0f;
    const btVector3 from(q.from.x, q.from.y, q.from.z + lift);
    const btVector3 to(q.to.x, q.to.y, q.to.z + lift);
    const btConvexShape* shape = kind == QueryKind::kCylinder ? static_cast<const btConvexShape*>(&cylinder_)
                                                              : static_cast<const btConvexShape*>(&sphere_);
    btCollisionWorld::ClosestConvexResultCallback result(from, to);
    world_.convexSweepTest(shape, btTransform(btQuaternion::getIdentity(), from),
                           btTransform(btQuaternion::getIdentity(), to), result);
    return answer(result.hasHit(), result.m_closestHitFraction, q.length);
  }

 private:
  static Answer answer(bool hit, btScalar fraction, float length) {
    return {hit, hit ? float(fraction) * length : length};
  }

  std::vector<btScalar> vertices_;
  std::vector<int> indices_;
  std::unique_ptr<btTriangleIndexVertexArray> arrays_;
  std::unique_ptr<btBvhTriangleMeshShape> shape_;
  btDefaultCollisionConfiguration configuration_;
  btCollisionDispatcher dispatcher_;
  btDbvtBroadphase broadphase_;
  btCollisionWorld world_;
  btCollisionObject object_;
  // The sphere's whole radius is its margin in Bullet, so it is exact.
  btSphereShape sphere_{kSphereRadius};
  btCylinderShapeZ cylinder_{btVector3(kCylinderRadius, kCylinderRadius, 0.5f * kCylinderHeight)};
};

inline void report_embree_error(void*, RTCError code, const char* message) {
  std::fprintf(stderr, "embree error %d: %s\n", int(code), message ? message : "");
}

// Embree: one triangle geometry, built for fast traversal since the level is static.
class EmbreeLevel {
 public:
  explicit EmbreeLevel(const LevelMesh& mesh) {
    // One build thread, like every query here: the benchmark is single-threaded end to end.
    device_ = rtcNewDevice("threads=1");
    rtcSetDeviceErrorFunction(device_, report_embree_error, nullptr);
    scene_ = rtcNewScene(device_);
    rtcSetSceneBuildQuality(scene_, RTC_BUILD_QUALITY_HIGH);
    RTCGeometry geometry = rtcNewGeometry(device_, RTC_GEOMETRY_TYPE_TRIANGLE);
    // Embree's own buffers, which carry the padding its vector loads need past the last vertex.
    auto* vertices = static_cast<float*>(rtcSetNewGeometryBuffer(
        geometry, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), mesh.vertices.size()));
    for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
      vertices[3 * i + 0] = mesh.vertices[i].x;
      vertices[3 * i + 1] = mesh.vertices[i].y;
      vertices[3 * i + 2] = mesh.vertices[i].z;
    }
    auto* indices = static_cast<unsigned*>(rtcSetNewGeometryBuffer(
        geometry, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), mesh.triangles.size()));
    for (std::size_t i = 0; i < mesh.triangles.size(); ++i) {
      for (int k = 0; k < 3; ++k)
        indices[3 * i + k] = unsigned(mesh.triangles[i][k]);
    }
    rtcCommitGeometry(geometry);
    rtcAttachGeometry(scene_, geometry);
    rtcReleaseGeometry(geometry);
    rtcCommitScene(scene_);
  }
  EmbreeLevel(const EmbreeLevel&) = delete;
  EmbreeLevel& operator=(const EmbreeLevel&) = delete;
  ~EmbreeLevel() {
    rtcReleaseScene(scene_);
    rtcReleaseDevice(device_);
  }

  // The segment as Embree's ray: unit direction, [tnear, tfar] = [0, length], so tfar is the distance.
  Answer raycast(const Query& q) const {
    RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    RTCRayHit rayhit;
    rayhit.ray.org_x = q.from.x;
    rayhit.ray.org_y = q.from.y;
    rayhit.ray.org_z = q.from.z;
    rayhit.ray.tnear = 0.0f;
    rayhit.ray.dir_x = q.direction.x;
    rayhit.ray.dir_y = q.direction.y;
    rayhit.ray.dir_z = q.direction.z;
    rayhit.ray.time = 0.0f;
    rayhit.ray.tfar = q.length;
    rayhit.ray.mask = ~0u;
    rayhit.ray.id = 0;
    rayhit.ray.flags = 0;
    rayhit.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rayhit.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scene_, &context, &rayhit);
    const bool hit = rayhit.hit.geomID != RTC_INVALID_GEOMETRY_ID;
    return {hit, hit ? rayhit.ray.tfar : q.length};
  }

 private:
  RTCDevice device_ = nullptr;
  RTCScene scene_ = nullptr;
};

}  // namespace shiftcast::bench
