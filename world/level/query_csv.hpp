// Query files for `shiftcast-level query` and `bench`: a CSV of rays and shape sweeps in, a CSV of trace
// answers out, so any tool (a spreadsheet, a Python script, another engine) can ask a compiled level
// questions and compare the answers.
//
//   kind,x0,y0,z0,x1,y1,z1,radius,height          the header, exactly (kQueryCsvHeader)
//   ray,0,0,64,512,0,64,0,0                       segment p0→p1 of a point
//   sphere,0,0,64,512,0,64,8,0                    sphere of `radius` centred on the moving point
//   cylinder,0,0,24,512,0,24,15,56                upright cylinder, the moving point at its bottom centre
//
// Every row has nine fields; numbers are decimal (from_chars syntax: no spaces, no leading '+');
// coordinates must be finite; radius and height must be finite and >= 0 (rays ignore both, spheres
// ignore height). Lines end in \n or \r\n; only the file's final newline may end in nothing else.
// Parsing is all-or-nothing: every malformed line is reported with its 1-based line number, and a caller
// that gets any error should write no answers at all (a partial answer file lines up with the wrong
// questions).
//
// Answers (format_result_row) are `hit,fraction,x,y,z,nx,ny,nz,start_solid,brush` with hit and
// start_solid as 0/1, x,y,z the backed-off end position, brush −1 when none, and every float written in
// its shortest form that reads back to the same float, so the answers are exact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collision/bsp_tree.hpp"

namespace shiftcast {

inline constexpr std::string_view kQueryCsvHeader = "kind,x0,y0,z0,x1,y1,z1,radius,height";
inline constexpr std::string_view kResultCsvHeader = "hit,fraction,x,y,z,nx,ny,nz,start_solid,brush";

enum class QueryKind : std::uint8_t { kRay, kSphere, kCylinder };
inline constexpr int kQueryKinds = 3;

const char* to_string(QueryKind kind);  // "ray", "sphere", "cylinder": the CSV spelling

struct LevelQuery {
  QueryKind kind = QueryKind::kRay;
  Vec3 from{};
  Vec3 to{};
  float radius = 0;
  float height = 0;
};

struct QueryCsvError {
  std::int64_t line = 0;  // 1-based; line 1 is the header
  std::string what;
};

struct QueryCsv {
  std::vector<LevelQuery> queries;  // in file order
  std::vector<QueryCsvError> errors;

  bool ok() const { return errors.empty(); }
};

// At most this many errors are collected; a file that is wrong throughout does not produce a report
// longer than itself. `QueryCsv::errors` then ends with a line-0 entry saying how many more there were.
inline constexpr std::size_t kMaxQueryCsvErrors = 50;

QueryCsv parse_query_csv(std::string_view text);

Shape query_shape(const LevelQuery& query);
// BspTree::trace with the query's shape from `from` to `to` (rays too, so their fraction is the exact
// parametric one along the segment).
TraceResult run_query(const BspTree& tree, const LevelQuery& query);

// One answer line, without the newline.
std::string format_result_row(const TraceResult& result);

// FNV-1a over every answer's fields (hit, start_solid, the bits of fraction, end position and normal,
// brush): equal checksums mean bit-identical answers.
std::uint64_t mix_result(std::uint64_t hash, const TraceResult& result);
inline constexpr std::uint64_t kResultHashSeed = 0xcbf29ce484222325ull;

}  // namespace shiftcast
