#include "world/level/query_csv.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

namespace shiftcast {
namespace {

constexpr std::size_t kQueryFields = 9;
constexpr const char* kFieldNames[kQueryFields] = {"kind", "x0", "y0",     "z0",    "x1",
                                                   "y1",   "z1", "radius", "height"};
// Spreadsheet programs start UTF-8 CSV files with it; it is not part of the header.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  out += s;
  out += '"';
  return out;
}

// Parses one float field; returns an empty string on success, else what is wrong with it.
std::string parse_float(std::string_view field, const char* name, float& out) {
  if (field.empty()) return std::string(name) + " is empty";
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  if (ec == std::errc::result_out_of_range)
    return std::string(name) + " " + quoted(field) + " is out of float range";
  if (ec != std::errc{} || end != field.data() + field.size()) {
    return std::string(name) + " " + quoted(field) + " is not a number";
  }
  if (!std::isfinite(out)) return std::string(name) + " " + quoted(field) + " is not finite";
  return {};
}

// Parses one data row into `query`; returns an empty string on success, else the first thing wrong.
std::string parse_row(std::string_view line, LevelQuery& query) {
  if (line.empty()) return "empty line";
  std::string_view fields[kQueryFields];
  std::size_t count = 0;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    const std::string_view field =
        line.substr(start, comma == std::string_view::npos ? line.npos : comma - start);
    if (count < kQueryFields) fields[count] = field;
    ++count;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (count != kQueryFields) {
    return std::to_string(count) + " fields, expected " + std::to_string(kQueryFields) + " (" +
           std::string(kQueryCsvHeader) + ")";
  }
  if (fields[0] == "ray") {
    query.kind = QueryKind::kRay;
  } else if (fields[0] == "sphere") {
    query.kind = QueryKind::kSphere;
  } else if (fields[0] == "cylinder") {
    query.kind = QueryKind::kCylinder;
  } else {
    return "unknown kind " + quoted(fields[0]) + " (expected ray, sphere or cylinder)";
  }
  float values[kQueryFields - 1];
  for (std::size_t i = 1; i < kQueryFields; ++i) {
    if (std::string why = parse_float(fields[i], kFieldNames[i], values[i - 1]); !why.empty()) return why;
  }
  query.from = {values[0], values[1], values[2]};
  query.to = {values[3], values[4], values[5]};
  query.radius = values[6];
  query.height = values[7];
  if (query.radius < 0) return "radius " + quoted(fields[7]) + " is negative";
  if (query.height < 0) return "height " + quoted(fields[8]) + " is negative";
  return {};
}

std::uint64_t mix_bits(std::uint64_t hash, std::uint32_t bits) {
  return (hash ^ bits) * kFnvPrime;
}

std::uint64_t mix_float(std::uint64_t hash, float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return mix_bits(hash, bits);
}

void append_float(std::string& out, float value) {
  char buffer[32];
  // Shortest representation that reads back to the same float: the CSV answers are exact.
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, ec == std::errc{} ? end : buffer);
}

}  // namespace

const char* to_string(QueryKind kind) {
  switch (kind) {
    case QueryKind::kRay:
      return "ray";
    case QueryKind::kSphere:
      return "sphere";
    case QueryKind::kCylinder:
      return "cylinder";
  }
  return "unknown";
}

QueryCsv parse_query_csv(std::string_view text) {
  QueryCsv out;
  std::size_t suppressed = 0;
  const auto report = [&](std::int64_t line, std::string what) {
    if (out.errors.size() < kMaxQueryCsvErrors) {
      out.errors.push_back({line, std::move(what)});
    } else {
      ++suppressed;
    }
  };
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  if (text.empty()) {
    report(1, "empty file: expected the header " + quoted(kQueryCsvHeader));
    return out;
  }
  std::int64_t line_number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t newline = text.find('\n', pos);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline;
    std::string_view line = text.substr(pos, end - pos);
    if (line.ends_with('\r')) line.remove_suffix(1);
    pos = newline == std::string_view::npos ? text.size() : newline + 1;
    ++line_number;
    if (line_number == 1) {
      if (line != kQueryCsvHeader) {
        report(1, "header is " + quoted(line.substr(0, 120)) + ", expected " + quoted(kQueryCsvHeader));
      }
      continue;
    }
    LevelQuery query;
    if (std::string why = parse_row(line, query); !why.empty()) {
      report(line_number, std::move(why));
    } else {
      out.queries.push_back(query);
    }
  }
  if (suppressed > 0)
    out.errors.push_back({0, std::to_string(suppressed) + " more malformed lines not listed"});
  return out;
}

Shape query_shape(const LevelQuery& query) {
  switch (query.kind) {
    case QueryKind::kSphere:
      return Shape::sphere(query.radius);
    case QueryKind::kCylinder:
      return Shape::cylinder(query.radius, query.height);
    case QueryKind::kRay:
      break;
  }
  return Shape::point();
}

TraceResult run_query(const BspTree& tree, const LevelQuery& query) {
  return tree.trace(query_shape(query), query.from, query.to);
}

std::string format_result_row(const TraceResult& r) {
  std::string line;
  line.reserve(96);
  line += r.hit ? "1," : "0,";
  const float floats[] = {r.fraction, r.end_position.x, r.end_position.y, r.end_position.z,
                          r.normal.x, r.normal.y,       r.normal.z};
  for (float f : floats) {
    append_float(line, f);
    line += ',';
  }
  line += r.start_solid ? "1," : "0,";
  line += std::to_string(r.brush);
  return line;
}

std::uint64_t mix_result(std::uint64_t hash, const TraceResult& r) {
  hash = mix_bits(hash, (r.hit ? 1u : 0u) | (r.start_solid ? 2u : 0u) | (r.all_solid ? 4u : 0u));
  hash = mix_float(hash, r.fraction);
  for (float f : {r.end_position.x, r.end_position.y, r.end_position.z, r.normal.x, r.normal.y, r.normal.z}) {
    hash = mix_float(hash, f);
  }
  return mix_bits(hash, std::uint32_t(r.brush));
}

}  // namespace shiftcast
