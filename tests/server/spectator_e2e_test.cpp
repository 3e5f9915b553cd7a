// The spectator view's server side end to end (docs/server.md, "Pictures"), against the real server on
// loopback with a WebSocket client written here from the document (raw sockets, no Beast): every view
// request without the spectator key is refused and counted (and viewers beyond the limit); the frames a
// viewer gets show every prop where the server itself judges it (a raycast RPC at the frame's tick hits
// the prop under the point the frame's outline puts it), and those raycasts come back as shots with the
// pose they were judged against; the delay holds frames back; a viewer that stops reading is cut off at its
// byte budget while the match keeps its tick schedule.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/rpc_raycast.hpp"
#include "tests/support/server_fixture.hpp"
#include "world/match/entity.hpp"

namespace shiftcast {
namespace {

using Clock = std::chrono::steady_clock;

// A WebSocket client from RFC 6455, as much as a viewer needs: the upgrade, then unmasked server frames.
class RawViewer {
 public:
  // `receive_buffer` > 0: SO_RCVBUF set before connecting (a slow reader's small window).
  RawViewer(std::uint16_t port, const std::string& target, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    const std::string request =
        "GET " + target +
        " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL);
    while (buffer_.find("\r\n\r\n") == std::string::npos) {
      if (!fill()) return;
    }
    const std::size_t end = buffer_.find("\r\n\r\n");
    std::sscanf(buffer_.c_str(), "HTTP/1.1 %d", &status_);
    buffer_.erase(0, end + 4);
  }
  ~RawViewer() {
    if (fd_ >= 0) ::close(fd_);
  }
  int status() const { return status_; }

  struct Message {
    bool text = false;
    std::string bytes;
  };
  // The next data message, or nothing when the connection closed or 10 s passed.
  std::optional<Message> next() {
    for (;;) {
      if (!need(2)) return std::nullopt;
      const auto b0 = std::uint8_t(buffer_[0]), b1 = std::uint8_t(buffer_[1]);
      std::size_t header = 2;
      std::uint64_t length = b1 & 127;
      if (length == 126) {
        if (!need(4)) return std::nullopt;
        length = (std::uint64_t(std::uint8_t(buffer_[2])) << 8) | std::uint8_t(buffer_[3]);
        header = 4;
      } else if (length == 127) {
        if (!need(10)) return std::nullopt;
        length = 0;
        for (int i = 0; i < 8; ++i)
          length = (length << 8) | std::uint8_t(buffer_[2 + i]);
        header = 10;
      }
      if (!need(header + length)) return std::nullopt;
      const int opcode = b0 & 15;
      const bool fin = (b0 & 0x80) != 0;
      const std::string payload = buffer_.substr(header, length);
      buffer_.erase(0, header + length);
      if (opcode == 8) return std::nullopt;  // close
      if (opcode == 1 || opcode == 2)
        partial_ = {opcode == 1, payload};
      else if (opcode == 0)
        partial_.bytes += payload;  // a continuation of a fragmented message
      else
        continue;  // ping, pong
      if (fin) return partial_;
    }
  }
  // Waits without reading for the server to drop the connection (reset or close), up to `timeout`.
  bool dropped_within(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLRDHUP, 0};
    return ::poll(&p, 1, int(timeout.count())) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

 private:
  bool fill() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 10'000) != 1) return false;
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, std::size_t(n));
    return true;
  }
  bool need(std::size_t n) {
    while (buffer_.size() < n) {
      if (!fill()) return false;
    }
    return true;
  }
  int fd_ = -1;
  int status_ = 0;
  std::string buffer_;
  Message partial_;
};

// A frame read by the document's table, independently of the server's encoder.
struct FrameEntity {
  std::uint32_t id = 0;
  std::uint8_t kind = 0;
  float x = 0, y = 0, z = 0, yaw = 0;
};
struct FrameShot {
  double tick_used = 0;
  std::uint32_t entity = 0;
  bool hit = false, posed = false;
  float x = 0, y = 0, z = 0, yaw = 0;
};
struct Frame {
  double tick = 0;
  double newest = 0;
  std::vector<FrameEntity> entities;
  std::vector<FrameShot> shots;
};

template <typename T>
T read_at(const std::string& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::optional<Frame> read_frame(const std::string& bytes) {
  if (bytes.size() < 24 || bytes[0] != 1 || bytes[1] != 1) return std::nullopt;
  Frame f;
  const auto entities = read_at<std::uint16_t>(bytes, 2);
  const auto contacts = read_at<std::uint16_t>(bytes, 4);
  const auto shots = read_at<std::uint16_t>(bytes, 6);
  if (bytes.size() != 24 + entities * 44u + contacts * 36u + shots * 64u) {
    ADD_FAILURE() << bytes.size() << " bytes for " << entities << " entities, " << contacts << " contacts, "
                  << shots << " shots";
    return std::nullopt;
  }
  f.tick = read_at<double>(bytes, 8);
  f.newest = read_at<double>(bytes, 16);
  for (std::size_t i = 0; i < entities; ++i) {
    const std::size_t at = 24 + i * 44;
    f.entities.push_back({read_at<std::uint32_t>(bytes, at), read_at<std::uint8_t>(bytes, at + 4),
                          read_at<float>(bytes, at + 8), read_at<float>(bytes, at + 12),
                          read_at<float>(bytes, at + 16), read_at<float>(bytes, at + 20)});
  }
  for (std::size_t i = 0; i < shots; ++i) {
    const std::size_t at = 24 + entities * 44u + contacts * 36u + i * 64;
    f.shots.push_back({read_at<double>(bytes, at), read_at<std::uint32_t>(bytes, at + 36),
                       read_at<std::uint8_t>(bytes, at + 40) != 0, read_at<std::uint8_t>(bytes, at + 41) != 0,
                       read_at<float>(bytes, at + 44), read_at<float>(bytes, at + 48),
                       read_at<float>(bytes, at + 52), read_at<float>(bytes, at + 56)});
  }
  return f;
}

// {"type":"outlines","outlines":{"17":[[x0,y0,...],...],...}} read into polygons per id.
void read_outlines(const std::string& json, std::map<std::uint32_t, std::vector<std::vector<double>>>& out) {
  std::size_t at = json.find("\"outlines\":{");
  if (at == std::string::npos) return;
  at += 12;
  while (at < json.size() && json[at] == '"') {
    const std::size_t close = json.find('"', at + 1);
    const auto id = std::uint32_t(std::stoul(json.substr(at + 1, close - at - 1)));
    at = close + 3;  // past ":[
    auto& polygons = out[id];
    while (json[at] == '[') {
      const std::size_t end = json.find(']', at);
      std::vector<double> numbers;
      for (std::size_t p = at + 1; p < end;) {
        std::size_t used = 0;
        numbers.push_back(std::stod(json.substr(p, end - p), &used));
        p += used + 1;
      }
      polygons.push_back(numbers);
      at = end + 1;
      if (json[at] == ',') ++at;
    }
    at += 1;  // the id's closing ]
    if (json[at] == ',') ++at;
  }
}

// Inside a convex polygon given in its own frame and posed by (x, y, yaw); on an edge counts as inside.
bool inside_posed(const std::vector<double>& polygon, const FrameEntity& e, double px, double py) {
  const double c = std::cos(double(e.yaw)), s = std::sin(double(e.yaw));
  const double lx = c * (px - e.x) + s * (py - e.y), ly = -s * (px - e.x) + c * (py - e.y);
  const std::size_t n = polygon.size() / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const double ax = polygon[2 * i], ay = polygon[2 * i + 1];
    const double bx = polygon[2 * ((i + 1) % n)], by = polygon[2 * ((i + 1) % n) + 1];
    if ((bx - ax) * (ly - ay) - (by - ay) * (lx - ax) < -1e-3) return false;
  }
  return true;
}

std::string spectator_arguments() {
  return "--spectator-key-file '" + std::string(SHIFTCAST_SOURCE_DIR) + "/configs/keys/dev-spectator.key'";
}

class SpectatorTest : public ServerTest {
 protected:
  std::string closed(const std::string& reason) {
    return "shiftcast_http_closed_total{reason=\"" + reason + "\"}";
  }
};

TEST_F(SpectatorTest, EveryViewRequestWithoutTheKeyIsRefusedAndCounted) {
  start(test_server_config(), spectator_arguments());
  const std::uint16_t http = server_.ports().http;
  const std::string key = dev_spectator_key();
  int status = 0;
  http_get(http, "/matches/1", &status);
  EXPECT_EQ(status, 403);
  http_get(http, "/api/matches/1/plan", &status);
  EXPECT_EQ(status, 403);
  http_get(http, "/api/matches/1/plan?key=" + key + "x", &status);
  EXPECT_EQ(status, 403);
  EXPECT_EQ(RawViewer(http, "/api/matches/1/live").status(), 403);
  EXPECT_EQ(RawViewer(http, "/api/matches/1/live?key=nope").status(), 403);
  EXPECT_EQ(metric(closed("spectator_refused")), 5);
  EXPECT_EQ(metric(rejected("http", "unauthorized")), 5);

  // With the key: the page, the plan (400 for a height that is no number or outside the level), 404 for a
  // match that is not there.
  const std::string page = http_get(http, "/matches/1?key=" + key, &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(page.find("<canvas"), std::string::npos);
  http_get(http, "/matches/7?key=" + key, &status);
  EXPECT_EQ(status, 404);
  const std::string plan = http_get(http, "/api/matches/1/plan?key=" + key, &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(plan.find("\"solid\":[["), std::string::npos) << plan.substr(0, 300);
  http_get(http, "/api/matches/1/plan?z=abc&key=" + key, &status);
  EXPECT_EQ(status, 400);
  http_get(http, "/api/matches/1/plan?z=1e9&key=" + key, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(metric(closed("bad_parameter")), 2);
  RawViewer viewer(http, "/api/matches/1/live?key=" + key);
  EXPECT_EQ(viewer.status(), 101);
  const auto hello = viewer.next();
  ASSERT_TRUE(hello && hello->text);
  EXPECT_NE(hello->bytes.find(R"("type":"hello","match":1)"), std::string::npos) << hello->bytes;

  // The dashboard needs no key and shows aggregate health only: no entity positions, no links.
  const std::string matches = http_get(http, "/api/matches", &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(matches.find(R"("spectator":false)"), std::string::npos) << matches;
  EXPECT_NE(matches.find(R"("matches":[{"id":1,"level":"arena")"), std::string::npos) << matches;
  EXPECT_NE(matches.find(R"("unauthorized":5)"), std::string::npos) << matches;
  EXPECT_EQ(http_get(http, "/api/matches?key=" + key).find(R"("spectator":true)") != std::string::npos, true);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(SpectatorTest, ViewersBeyondTheLimitAreRefusedAndCounted) {
  start(test_server_config(), spectator_arguments() + " --max-viewers 2");
  const std::string target = "/api/matches/1/live?key=" + dev_spectator_key();
  RawViewer first(server_.ports().http, target), second(server_.ports().http, target);
  EXPECT_EQ(first.status(), 101);
  EXPECT_EQ(second.status(), 101);
  EXPECT_EQ(RawViewer(server_.ports().http, target).status(), 503);
  EXPECT_EQ(metric(closed("too_many_viewers")), 1);
  ASSERT_TRUE(first.next().has_value()) << "the admitted viewers keep their feed";
  ASSERT_TRUE(second.next().has_value());
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(SpectatorTest, WithoutAConfiguredKeyTheViewsAreOff) {
  start();
  int status = 0;
  http_get(server_.ports().http, "/matches/1?key=" + dev_spectator_key(), &status);
  EXPECT_EQ(status, 403);
  EXPECT_EQ(RawViewer(server_.ports().http, "/api/matches/1/live?key=" + dev_spectator_key()).status(), 403);
  http_get(server_.ports().http, "/", &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(SpectatorTest, FramesShowEveryPropWhereTheServerJudgesIt) {
  start(test_server_config("props = 40\n"), spectator_arguments());
  RawViewer viewer(server_.ports().http, "/api/matches/1/live?key=" + dev_spectator_key());
  ASSERT_EQ(viewer.status(), 101);
  std::map<std::uint32_t, std::vector<std::vector<double>>> outlines;
  std::optional<Frame> frame;
  for (int frames = 0; frames < 5;) {
    const auto m = viewer.next();
    ASSERT_TRUE(m.has_value()) << "the feed stopped";
    if (m->text) {
      read_outlines(m->bytes, outlines);
      continue;
    }
    frame = read_frame(m->bytes);
    ASSERT_TRUE(frame.has_value()) << "a frame the document's table does not describe";
    ++frames;
  }
  // Each prop: a ray straight down through the middle of its outline, at the frame's tick, over RPC. The
  // server's answer must be a prop whose outline, as the frame placed it, holds that point.
  RpcTestClient rpc(server_.ports().rpc);
  std::map<std::uint32_t, FrameEntity> by_id;
  for (const FrameEntity& e : frame->entities)
    by_id[e.id] = e;
  int props = 0;
  std::map<std::uint32_t, int> hits_sent;  // entity the server hit -> rays
  for (const FrameEntity& e : frame->entities) {
    if (e.kind != std::uint8_t(EntityKind::kProp)) continue;
    ASSERT_TRUE(outlines.contains(e.id)) << "prop " << e.id << " has no outline";
    const std::vector<double>& polygon = outlines[e.id].front();
    double lx = 0, ly = 0;
    for (std::size_t i = 0; i < polygon.size(); i += 2) {
      lx += polygon[i] / double(polygon.size() / 2);
      ly += polygon[i + 1] / double(polygon.size() / 2);
    }
    const double c = std::cos(double(e.yaw)), s = std::sin(double(e.yaw));
    const double px = e.x + c * lx - s * ly, py = e.y + s * lx + c * ly;
    const RayReply r = raycast(rpc, 1, Vec3{float(px), float(py), 4000.0f}, Vec3{0, 0, -1}, 8000, kLayerProp,
                               wire::AsOfKind::Tick, frame->tick, /*level=*/false);
    ASSERT_EQ(r.error, wire::ErrorCode::Ok);
    ASSERT_EQ(r.clamp, wire::RewindClamp::None) << "the frame's tick is no longer kept";
    ASSERT_TRUE(r.hit) << "prop " << e.id << " at " << px << ", " << py;
    ASSERT_TRUE(by_id.contains(r.entity));
    bool holds = false;
    for (const auto& p : outlines[r.entity])
      holds = holds || inside_posed(p, by_id[r.entity], px, py);
    EXPECT_TRUE(holds) << "prop " << e.id << ": the server hit " << r.entity << " at " << px << ", " << py
                       << ", outside its outline in the frame";
    ++hits_sent[r.entity];
    ++props;
  }
  EXPECT_EQ(props, 40);

  // Those rays come back as shots in the next frames, each with the pose it was judged against: the
  // frame's own pose of the prop it hit (the rays asked for the frame's tick).
  std::map<std::uint32_t, int> hits_seen;
  for (int frames = 0; frames < 40 && hits_seen != hits_sent; ++frames) {
    const auto m = viewer.next();
    ASSERT_TRUE(m.has_value());
    if (m->text) continue;
    const std::optional<Frame> later = read_frame(m->bytes);
    ASSERT_TRUE(later.has_value());
    for (const FrameShot& shot : later->shots) {
      EXPECT_EQ(shot.tick_used, frame->tick);
      ASSERT_TRUE(shot.hit && shot.posed);
      const FrameEntity& judged = by_id[shot.entity];
      EXPECT_EQ(shot.x, judged.x);
      EXPECT_EQ(shot.y, judged.y);
      EXPECT_EQ(shot.yaw, judged.yaw);
      ++hits_seen[shot.entity];
    }
  }
  EXPECT_EQ(hits_seen, hits_sent);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(SpectatorTest, AViewerThatStopsReadingIsCutOffAndTheTicksKeepTime) {
  start(test_server_config("props = 200\n"), spectator_arguments() + " --spectator-byte-budget 65536");
  const std::string target = "/api/matches/1/live?key=" + dev_spectator_key();
  RawViewer reading(server_.ports().http, target);
  RawViewer stalled(server_.ports().http, target, 4096);
  ASSERT_EQ(stalled.status(), 101);
  ASSERT_EQ(reading.status(), 101);
  // 200 props are about 9 KB a frame at 20 frames a second: the budget and the sockets' buffers fill
  // within seconds. The server drops the stalled viewer; the one that reads keeps getting frames.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  int frames = 0;
  bool dropped = false;
  while (!dropped && Clock::now() < deadline) {
    const auto m = reading.next();
    ASSERT_TRUE(m.has_value()) << "the reading viewer lost its feed";
    frames += m->text ? 0 : 1;
    dropped = stalled.dropped_within(std::chrono::milliseconds(0));
  }
  ASSERT_TRUE(dropped) << "the stalled viewer is still connected after 30 s";
  for (int more = 0; more < 5; ++more)
    ASSERT_TRUE(reading.next().has_value());
  EXPECT_EQ(metric("shiftcast_spectator_cut_total{reason=\"slow\"}"), 1);
  EXPECT_EQ(metric("shiftcast_spectator_viewers"), 1);
  EXPECT_EQ(metric("shiftcast_late_ticks_total{match=\"1\"}"), 0);
  EXPECT_GT(frames, 0);
  EXPECT_EQ(server_.stop(), 0);
}

TEST_F(SpectatorTest, TheDelayHoldsEveryFrameBack) {
  // One second at 64 Hz: every frame shows a tick at least 64 ticks (less the one the match may be in
  // the middle of) behind the match's newest when it left.
  start(test_server_config(), spectator_arguments() + " --spectator-delay-ms 1000");
  RawViewer viewer(server_.ports().http, "/api/matches/1/live?key=" + dev_spectator_key());
  ASSERT_EQ(viewer.status(), 101);
  const auto hello = viewer.next();
  ASSERT_TRUE(hello && hello->text);
  EXPECT_NE(hello->bytes.find(R"("delay_ms":1000)"), std::string::npos) << hello->bytes;
  for (int frames = 0; frames < 5;) {
    const auto m = viewer.next();
    ASSERT_TRUE(m.has_value());
    if (m->text) continue;
    const std::optional<Frame> f = read_frame(m->bytes);
    ASSERT_TRUE(f.has_value());
    EXPECT_GE(f->newest - f->tick, 63) << "tick " << f->tick << ", newest " << f->newest;
    ++frames;
  }
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
