#include "server/agones/allocation_settings.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace shiftcast {

namespace {

const std::string* lookup(const std::map<std::string, std::string>& labels,
                          const std::map<std::string, std::string>& annotations, const char* key) {
  if (auto it = annotations.find(key); it != annotations.end()) return &it->second;
  if (auto it = labels.find(key); it != labels.end()) return &it->second;
  return nullptr;
}

// A whole decimal number within [0, 2^32); nothing for anything else ("", "+1", "1.0", " 1", "-1").
std::optional<std::uint32_t> whole_number(std::string_view text) {
  std::uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

AllocationSpec allocation_spec(const std::map<std::string, std::string>& labels,
                               const std::map<std::string, std::string>& annotations,
                               int default_max_players) {
  AllocationSpec out;
  out.spec.max_players = default_max_players;
  const std::string* level = lookup(labels, annotations, kLevelKey);
  if (level == nullptr || level->empty()) {
    out.error = std::string(kLevelKey) + " is not set: which level to host";
    return out;
  }
  out.spec.level = *level;
  struct Field {
    const char* key;
    std::uint32_t max;
    void (*store)(CreateMatchSpec&, std::uint32_t);
  };
  // The int fields take values up to INT32_MAX here; MatchDirectory::create checks the real ranges.
  constexpr std::uint32_t kIntMax = 0x7fffffff;
  const Field fields[] = {
      {kTickRateKey, kIntMax, [](CreateMatchSpec& s, std::uint32_t v) { s.tick_rate = int(v); }},
      {kSnapshotRateKey, kIntMax, [](CreateMatchSpec& s, std::uint32_t v) { s.snapshot_rate = int(v); }},
      {kMaxPlayersKey, kIntMax, [](CreateMatchSpec& s, std::uint32_t v) { s.max_players = int(v); }},
      {kPropsKey, kIntMax, [](CreateMatchSpec& s, std::uint32_t v) { s.props = int(v); }},
      {kSeedKey, 0xffffffff, [](CreateMatchSpec& s, std::uint32_t v) { s.seed = v; }},
  };
  for (const Field& f : fields) {
    const std::string* text = lookup(labels, annotations, f.key);
    if (text == nullptr) continue;
    const std::optional<std::uint32_t> v = whole_number(*text);
    if (!v || *v > f.max) {
      out.error = std::string(f.key) + " = \"" + *text + "\": not a whole decimal number";
      return out;
    }
    f.store(out.spec, *v);
  }
  // 0 means "the server's" to CreateMatchSpec; from an allocator it is a mistake, refused as such.
  if (lookup(labels, annotations, kTickRateKey) && out.spec.tick_rate == 0) {
    out.error = std::string(kTickRateKey) + " = \"0\": must be positive";
  } else if (lookup(labels, annotations, kSnapshotRateKey) && out.spec.snapshot_rate == 0) {
    out.error = std::string(kSnapshotRateKey) + " = \"0\": must be positive";
  }
  return out;
}

}  // namespace shiftcast
