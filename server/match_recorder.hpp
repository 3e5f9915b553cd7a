// MatchRecorder: the server's side of a match recording (world/match/match_recording.hpp, docs/replay.md).
// The match's worker reports what changed the world (joins as spawned, leaves, each player's commands) and
// ends every tick with the state hash; RPC threads hand over the queries they answered through a small
// locked queue, drained into the file by the worker at the end of the next tick. Records are encoded in
// memory and written in blocks of kRecordingFlushBytes, so a tick costs a memcpy, not a disk write; the
// time the writes took is kept (flush_seconds) so the cost is measured, not assumed.
//
//   std::unique_ptr<MatchRecorder> r = MatchRecorder::open(directory, header, &error);   // null: error
//   r->join(entity, feet, yaw);  r->leave(entity);  r->commands(entity, span);   // worker, before step
//   r->end_tick(sim);                                                           // worker, after step
//   r->post_query(q);                                                           // any thread
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "world/match/match_recording.hpp"
#include "world/match/simulation.hpp"

namespace shiftcast {

// Encoded records are written to the file once this many bytes are waiting (and when the match ends).
inline constexpr std::size_t kRecordingFlushBytes = 256 * 1024;
// Queries waiting for the worker beyond this are dropped (and counted): a flood of RPC queries must not
// grow the queue without bound while the worker is behind.
inline constexpr std::size_t kMaxQueuedQueries = 65536;

class MatchRecorder {
 public:
  // Creates DIRECTORY/match-<id>-<unix seconds>.scrp and writes the header.
  static std::unique_ptr<MatchRecorder> open(const std::string& directory, const RecordingHeader& header,
                                             std::string* error);
  ~MatchRecorder();  // close()
  // Worker thread: writes what is left and closes the file (the match ended); later calls do nothing.
  void close();
  MatchRecorder(const MatchRecorder&) = delete;
  MatchRecorder& operator=(const MatchRecorder&) = delete;

  // Worker thread.
  void join(EntityId entity, Vec3 feet, float yaw);
  void leave(EntityId entity);
  void commands(EntityId entity, std::span<const PlayerInput> commands);
  void end_tick(const Simulation& sim);

  // Any thread.
  void post_query(RecordedQuery query);

  const std::string& path() const { return path_; }
  double flush_seconds() const { return flush_seconds_; }  // total time spent in file writes
  double max_flush_seconds() const { return max_flush_seconds_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t dropped_queries() const;

 private:
  MatchRecorder(std::FILE* file, std::string path);
  void flush();

  std::FILE* file_;
  std::string path_;
  RecordingWriter writer_;
  RecordedTick tick_;
  std::vector<RecordedQuery> drained_;
  double flush_seconds_ = 0;
  double max_flush_seconds_ = 0;
  std::uint64_t bytes_written_ = 0;
  bool write_failed_ = false;
  bool closed_ = false;

  mutable std::mutex queue_mutex_;
  std::vector<RecordedQuery> queue_;
  std::uint64_t dropped_queries_ = 0;
  bool queue_closed_ = false;
};

}  // namespace shiftcast
