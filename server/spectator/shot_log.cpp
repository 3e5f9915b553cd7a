#include "server/spectator/shot_log.hpp"

namespace shiftcast {

void ShotLog::push(const RecordedQuery& query) {
  if (query.kind != RecordedQueryKind::kRaycast) return;
  std::lock_guard lock(mutex_);
  entries_.push_back({next_++, query});
  if (entries_.size() > kShotLogCapacity) entries_.pop_front();
}

std::vector<RecordedQuery> ShotLog::since(std::uint64_t& cursor) const {
  std::vector<RecordedQuery> out;
  std::lock_guard lock(mutex_);
  for (const Entry& e : entries_) {
    if (e.sequence > cursor) out.push_back(e.query);
  }
  if (!entries_.empty()) cursor = std::max(cursor, entries_.back().sequence);
  return out;
}

}  // namespace shiftcast
