#include "server/match_recorder.hpp"

#include <spdlog/spdlog.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace shiftcast {

std::unique_ptr<MatchRecorder> MatchRecorder::open(const std::string& directory,
                                                   const RecordingHeader& header, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::string path = (std::filesystem::path(directory) / ("match-" + std::to_string(header.match_id) +
                                                                "-" + std::to_string(seconds) + ".scrp"))
                               .string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    if (error != nullptr) *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<MatchRecorder> r(new MatchRecorder(f, path));
  r->writer_.header(header);
  r->tick_.tick = header.start_tick;
  return r;
}

MatchRecorder::MatchRecorder(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}

MatchRecorder::~MatchRecorder() {
  close();
}

void MatchRecorder::close() {
  if (closed_) return;
  {
    std::lock_guard lock(queue_mutex_);
    drained_.swap(queue_);
    queue_closed_ = true;
  }
  for (const RecordedQuery& q : drained_)
    writer_.query(q);
  drained_.clear();
  flush();
  std::fclose(file_);
  closed_ = true;
  spdlog::info("recording {}: {} bytes, {:.3f} ms writing ({:.3f} ms the longest write), {} queries dropped",
               path_, bytes_written_, flush_seconds_ * 1000, max_flush_seconds_ * 1000, dropped_queries());
}

void MatchRecorder::join(EntityId entity, Vec3 feet, float yaw) {
  tick_.joins.push_back({entity, feet, yaw});
}

void MatchRecorder::leave(EntityId entity) {
  tick_.leaves.push_back(entity);
}

void MatchRecorder::commands(EntityId entity, std::span<const PlayerInput> commands) {
  tick_.commands.push_back({entity, {commands.begin(), commands.end()}});
}

void MatchRecorder::end_tick(const Simulation& sim) {
  if (closed_) return;
  tick_.tick = sim.tick();
  tick_.state_hash = sim.state_hash();
  tick_.invariant_violations = sim.last_tick().invariant_violations;
  tick_.replacements = sim.last_tick().replacements;
  writer_.tick(tick_);
  tick_.joins.clear();
  tick_.leaves.clear();
  tick_.commands.clear();
  {
    std::lock_guard lock(queue_mutex_);
    drained_.swap(queue_);
  }
  for (const RecordedQuery& q : drained_)
    writer_.query(q);
  drained_.clear();
  if (writer_.bytes().size() >= kRecordingFlushBytes) flush();
}

void MatchRecorder::post_query(RecordedQuery query) {
  std::lock_guard lock(queue_mutex_);
  if (queue_closed_) return;
  if (queue_.size() >= kMaxQueuedQueries) {
    ++dropped_queries_;
    return;
  }
  queue_.push_back(std::move(query));
}

std::uint64_t MatchRecorder::dropped_queries() const {
  std::lock_guard lock(queue_mutex_);
  return dropped_queries_;
}

void MatchRecorder::flush() {
  const std::span<const std::uint8_t> bytes = writer_.bytes();
  if (bytes.empty() || write_failed_) {
    writer_.clear();
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  const std::size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file_);
  std::fflush(file_);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  flush_seconds_ += took;
  max_flush_seconds_ = std::max(max_flush_seconds_, took);
  bytes_written_ += written;
  if (written != bytes.size()) {
    // A full disk ends the recording, never the match.
    write_failed_ = true;
    spdlog::warn("recording {}: write failed ({}); recording stopped", path_, std::strerror(errno));
  }
  writer_.clear();
}

}  // namespace shiftcast
