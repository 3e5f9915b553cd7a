// The shiftcast-level tool: its query CSV parser (exact header, every malformed line reported with its
// number) and answer format (exact floats), then the real binary end to end on a generated .map in a
// temporary directory: import, info, query (every answer row checked against BspTree::trace called
// here on the same level), malformed input (loud failure, no output file), corrupt levels, bench.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "tests/support/seeded_random.hpp"
#include "tests/support/tool_process.hpp"
#include "world/level/compiled_level.hpp"
#include "world/level/map_import.hpp"
#include "world/level/query_csv.hpp"

namespace shiftcast {
namespace {

const std::string kHeader(kQueryCsvHeader);

// ------------------------------------------------------------------------------------------ CSV parsing

TEST(QueryCsv, ParsesEveryKindInOrder) {
  const QueryCsv csv = parse_query_csv(kHeader +
                                       "\n"
                                       "ray,0,0,64,512,0,64,0,0\n"
                                       "sphere,-1.5,2.25,3,4,5,6,8,0\n"
                                       "cylinder,1e3,0,24,0,-0.125,24,15,56\n");
  ASSERT_TRUE(csv.ok()) << csv.errors[0].what;
  ASSERT_EQ(csv.queries.size(), 3u);
  EXPECT_EQ(csv.queries[0].kind, QueryKind::kRay);
  EXPECT_EQ(csv.queries[0].to, (Vec3{512, 0, 64}));
  EXPECT_EQ(csv.queries[1].kind, QueryKind::kSphere);
  EXPECT_EQ(csv.queries[1].from, (Vec3{-1.5f, 2.25f, 3}));
  EXPECT_EQ(csv.queries[1].radius, 8);
  EXPECT_EQ(csv.queries[2].kind, QueryKind::kCylinder);
  EXPECT_EQ(csv.queries[2].from.x, 1000);
  EXPECT_EQ(csv.queries[2].to.y, -0.125f);
  EXPECT_EQ(csv.queries[2].radius, 15);
  EXPECT_EQ(csv.queries[2].height, 56);
  EXPECT_EQ(query_shape(csv.queries[2]).kind, ShapeKind::kCylinder);
  EXPECT_EQ(query_shape(csv.queries[0]).kind, ShapeKind::kPoint);
}

TEST(QueryCsv, AcceptsCrlfABomAndAMissingFinalNewline) {
  const QueryCsv csv =
      parse_query_csv("\xEF\xBB\xBF" + kHeader + "\r\nray,0,0,0,1,1,1,0,0\r\nray,0,0,0,2,2,2,0,0");
  ASSERT_TRUE(csv.ok()) << csv.errors[0].what;
  EXPECT_EQ(csv.queries.size(), 2u);
  EXPECT_TRUE(parse_query_csv(kHeader + "\n").ok());
  EXPECT_TRUE(parse_query_csv(kHeader + "\n").queries.empty());
}

TEST(QueryCsv, RequiresTheExactHeader) {
  for (const std::string header : {"kind,x0,y0,z0,x1,y1,z1,radius", "kind, x0,y0,z0,x1,y1,z1,radius,height",
                                   "Kind,x0,y0,z0,x1,y1,z1,radius,height", "ray,0,0,0,1,1,1,0,0"}) {
    const QueryCsv csv = parse_query_csv(header + "\nray,0,0,0,1,1,1,0,0\n");
    ASSERT_EQ(csv.errors.size(), 1u) << header;
    EXPECT_EQ(csv.errors[0].line, 1);
    EXPECT_NE(csv.errors[0].what.find("expected \"" + kHeader + "\""), std::string::npos)
        << csv.errors[0].what;
  }
  const QueryCsv empty = parse_query_csv("");
  ASSERT_EQ(empty.errors.size(), 1u);
  EXPECT_EQ(empty.errors[0].line, 1);
}

TEST(QueryCsv, ReportsEveryMalformedLineWithItsNumber) {
  const std::string text = kHeader +
                           "\n"
                           "ray,0,0,0,1,1,1,0,0\n"          // 2 ok
                           "ray,0,0,0,1,1,1,0\n"            // 3 eight fields
                           "box,0,0,0,1,1,1,8,0\n"          // 4 unknown kind
                           "sphere,0,0,0,1,1,1,-8,0\n"      // 5 negative radius
                           "sphere,0,0,0,1,1,1,nan,0\n"     // 6 NaN radius
                           "ray,0,0,x,1,1,1,0,0\n"          // 7 bad number
                           "\n"                             // 8 empty line
                           "ray,0,0,0,1,1,1e40,0,0\n"       // 9 out of float range
                           "ray,0,0,0,1,1,inf,0,0\n"        // 10 not finite
                           "cylinder,0,0,0,1,1,1,15,-56\n"  // 11 negative height
                           "ray,+1,0,0,1,1,1,0,0\n"         // 12 '+' is not from_chars syntax
                           "ray,0,0,0,1,1,1,0,0,\n"         // 13 ten fields
                           "ray,,0,0,1,1,1,0,0\n"           // 14 empty field
                           "ray,0,0,0,1,1,1,0,0\n";         // 15 ok
  const QueryCsv csv = parse_query_csv(text);
  const std::vector<std::pair<std::int64_t, std::string>> expected = {
      {3, "8 fields, expected 9"},
      {4, "unknown kind \"box\""},
      {5, "radius \"-8\" is negative"},
      {6, "radius \"nan\" is not finite"},
      {7, "z0 \"x\" is not a number"},
      {8, "empty line"},
      {9, "z1 \"1e40\" is out of float range"},
      {10, "z1 \"inf\" is not finite"},
      {11, "height \"-56\" is negative"},
      {12, "x0 \"+1\" is not a number"},
      {13, "10 fields, expected 9"},
      {14, "x0 is empty"}};
  ASSERT_EQ(csv.errors.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(csv.errors[i].line, expected[i].first);
    EXPECT_NE(csv.errors[i].what.find(expected[i].second), std::string::npos)
        << "line " << expected[i].first << ": " << csv.errors[i].what;
  }
  EXPECT_EQ(csv.queries.size(), 2u);  // the good rows, for callers that want them; the tool refuses
}

TEST(QueryCsv, CapsTheErrorListAndCountsTheRest) {
  std::string text = kHeader + "\n";
  for (int i = 0; i < 80; ++i)
    text += "bad\n";
  const QueryCsv csv = parse_query_csv(text);
  ASSERT_EQ(csv.errors.size(), kMaxQueryCsvErrors + 1);
  EXPECT_EQ(csv.errors[0].line, 2);
  EXPECT_EQ(csv.errors[kMaxQueryCsvErrors - 1].line, std::int64_t(kMaxQueryCsvErrors) + 1);
  EXPECT_EQ(csv.errors.back().line, 0);
  EXPECT_NE(csv.errors.back().what.find("30 more"), std::string::npos) << csv.errors.back().what;
}

float parse_exact(std::string_view text) {
  float value = std::numeric_limits<float>::quiet_NaN();
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, separator);)
    fields.push_back(field);
  return fields;
}

TEST(QueryCsv, AnswerRowsAreExact) {
  TraceResult r;
  r.hit = true;
  r.fraction = 0.1f + 1e-8f;
  r.end_position = {1.0f / 3.0f, -2048.03125f, 1e-30f};
  r.normal = {0.70710677f, -0.70710677f, 0};
  r.brush = 17;
  const std::string row = format_result_row(r);
  const std::vector<std::string> f = split(row, ',');
  ASSERT_EQ(f.size(), 10u) << row;
  EXPECT_EQ(f[0], "1");
  EXPECT_EQ(parse_exact(f[1]), r.fraction);
  EXPECT_EQ(parse_exact(f[2]), r.end_position.x);
  EXPECT_EQ(parse_exact(f[3]), r.end_position.y);
  EXPECT_EQ(parse_exact(f[4]), r.end_position.z);
  EXPECT_EQ(parse_exact(f[5]), r.normal.x);
  EXPECT_EQ(parse_exact(f[8]), r.start_solid ? 1 : 0);
  EXPECT_EQ(f[9], "17");
  EXPECT_EQ(format_result_row(TraceResult{}), "0,1,0,0,0,0,0,0,0,-1");
}

// ------------------------------------------------------------------------------------------- the tool

#ifdef SHIFTCAST_LEVEL_TOOL

struct Box {
  Vec3 min;
  Vec3 max;
};

// One axis-aligned brush as .map faces: three integer points per face, ordered so that
// cross(p0 − p1, p2 − p1) points out of the brush (the editors' rule).
std::string map_brush(const Box& b) {
  struct Face {
    Vec3 corner;
    Vec3 u;
    Vec3 v;  // cross(u, v) is the outward normal
  };
  const Face faces[] = {
      {{b.max.x, b.min.y, b.min.z}, {0, 16, 0}, {0, 0, 16}},
      {{b.min.x, b.min.y, b.min.z}, {0, 0, 16}, {0, 16, 0}},
      {{b.min.x, b.max.y, b.min.z}, {0, 0, 16}, {16, 0, 0}},
      {{b.min.x, b.min.y, b.min.z}, {16, 0, 0}, {0, 0, 16}},
      {{b.min.x, b.min.y, b.max.z}, {16, 0, 0}, {0, 16, 0}},
      {{b.min.x, b.min.y, b.min.z}, {0, 16, 0}, {16, 0, 0}},
  };
  std::string text = "{\n";
  const auto point = [](Vec3 p) {
    char s[96];
    std::snprintf(s, sizeof s, "( %d %d %d ) ", int(p.x), int(p.y), int(p.z));
    return std::string(s);
  };
  for (const Face& f : faces) {
    // p1 = corner, p0 = corner + u, p2 = corner + v: cross(p0 − p1, p2 − p1) = cross(u, v).
    text += point(f.corner + f.u) + point(f.corner) + point(f.corner + f.v) +
            "base_wall/concrete 0 0 0 0.5 0.5 0 0 0\n";
  }
  return text + "}\n";
}

// A closed room with a floor, walls, a ceiling and seeded pillars, steps and floating blocks.
std::string generated_map(std::uint32_t seed) {
  std::vector<Box> boxes = {{{-1040, -1040, -16}, {1040, 1040, 0}},  {{-1040, -1040, 512}, {1040, 1040, 528}},
                            {{-1040, -1040, 0}, {-1024, 1040, 512}}, {{1024, -1040, 0}, {1040, 1040, 512}},
                            {{-1024, -1040, 0}, {1024, -1024, 512}}, {{-1024, 1024, 0}, {1024, 1040, 512}}};
  std::mt19937 rng(seed);
  // A multiple of 8 in [8 lo, 8 hi], like an editor grid.
  const auto grid = [&](int lo, int hi) { return float((lo + int(rng() % std::uint32_t(hi - lo + 1))) * 8); };
  for (int i = 0; i < 24; ++i) {  // pillars
    const float x = grid(-120, 110);
    const float y = grid(-120, 110);
    boxes.push_back({{x, y, 0}, {x + grid(2, 12), y + grid(2, 12), grid(4, 60)}});
  }
  for (int i = 0; i < 8; ++i) {  // steps of 16 units
    boxes.push_back({{-512 + 32.0f * i, 600, 0}, {1000, 700, 16.0f * (i + 1)}});
  }
  for (int i = 0; i < 10; ++i) {  // floating blocks
    const float x = grid(-120, 110);
    const float y = grid(-120, 110);
    const float z = grid(10, 50);
    boxes.push_back({{x, y, z}, {x + grid(1, 8), y + grid(1, 8), z + grid(1, 4)}});
  }
  std::string text = "// generated by level_tool_test\n{\n\"classname\" \"worldspawn\"\n";
  for (const Box& b : boxes)
    text += map_brush(b);
  text +=
      "}\n{\n\"classname\" \"info_player_deathmatch\"\n\"origin\" \"-900 -900 24\"\n\"angle\" \"45\"\n}\n";
  return text;
}

std::string shortest(float value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

// Random queries of every kind inside and a little outside the room, of every length.
std::string generated_queries(std::uint32_t seed, int count) {
  std::mt19937 rng(seed);
  UniformReal<float> coordinate(-1100, 1100);
  UniformReal<float> height(-40, 560);
  UniformReal<float> unit(0, 1);
  std::string text = std::string(kQueryCsvHeader) + "\n";
  const char* kinds[] = {"ray", "sphere", "cylinder"};
  for (int i = 0; i < count; ++i) {
    const Vec3 from{coordinate(rng), coordinate(rng), height(rng)};
    const Vec3 target{coordinate(rng), coordinate(rng), height(rng)};
    const Vec3 to = from + (target - from) * (i % 11 == 0 ? 0.0f : unit(rng));
    const float radius = i % 3 == 0 ? 0 : (i % 3 == 1 ? 1 + 15 * unit(rng) : 15);
    const float tall = i % 3 == 2 ? 56 : 0;
    text += std::string(kinds[i % 3]) + "," + shortest(from.x) + "," + shortest(from.y) + "," +
            shortest(from.z) + "," + shortest(to.x) + "," + shortest(to.y) + "," + shortest(to.z) + "," +
            shortest(radius) + "," + shortest(tall) + "\n";
  }
  return text;
}

class LevelToolTest : public ToolProcessTest {
 protected:
  ToolRun run(const std::string& arguments) const {
    return ToolProcessTest::run(SHIFTCAST_LEVEL_TOOL, arguments);
  }

  // import → the compiled level's path.
  std::filesystem::path import_generated_map() {
    write_file(dir_ / "room.map", generated_map(11));
    const ToolRun r = run("import " + path("room.map") + " -o " + path("room.level"));
    EXPECT_EQ(r.status, 0) << r.err;
    return dir_ / "room.level";
  }
};

TEST_F(LevelToolTest, ImportWritesALevelAndReportsProgressAndStatistics) {
  write_file(dir_ / "room.map", generated_map(11));
  const ToolRun r = run("import " + path("room.map") + " -o " + path("room.level"));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* step : {"importing", "building BSP", "building navmesh", "writing"}) {
    EXPECT_NE(r.err.find(step), std::string::npos) << step << " missing from stderr:\n" << r.err;
  }
  for (const char* line : {"brushes ", "bsp ", "navmesh ", "file ", "total "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " missing from stdout:\n" << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "room.level.tmp"));

  // The file holds exactly what importing and building here gives.
  const LevelLoadResult loaded = load_compiled_level_file((dir_ / "room.level").string());
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  const LevelResult imported = import_map_file((dir_ / "room.map").string());
  ASSERT_TRUE(imported.ok()) << imported.error.describe();
  EXPECT_EQ(loaded.level.level.brushes.size(), imported.level.brushes.size());
  EXPECT_EQ(loaded.level.level.source_hash, imported.level.source_hash);
  EXPECT_EQ(loaded.level.level.spawns.size(), 1u);
  EXPECT_FALSE(loaded.level.navmesh.empty());
  const BspBuildResult built = build_bsp(imported.level.brushes, {});
  ASSERT_EQ(built.tree.nodes().size(), loaded.level.tree.nodes().size());
  EXPECT_EQ(std::memcmp(built.tree.nodes().data(), loaded.level.tree.nodes().data(),
                        built.tree.nodes().size_bytes()),
            0);
}

TEST_F(LevelToolTest, ImportFailuresNameTheProblemAndWriteNothing) {
  write_file(dir_ / "broken.map", "{\n\"classname\" \"worldspawn\"\n{\n( 0 0 0 ) ( 1 0 0 \n}\n");
  ToolRun r = run("import " + path("broken.map") + " -o " + path("broken.level"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("broken.map"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "broken.level"));

  r = run("import " + path("room.fbx") + " -o " + path("x.level"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(".fbx"), std::string::npos) << r.err;

  EXPECT_EQ(run("import " + path("room.map")).status, 2);  // no -o
  EXPECT_EQ(run("import " + path("room.obj") + " -o " + path("x.level") + " --up x").status, 2);
  EXPECT_EQ(run("import " + path("room.obj") + " -o " + path("x.level") + " --scale -1").status, 2);
  EXPECT_EQ(run("frobnicate").status, 2);
}

TEST_F(LevelToolTest, InfoPrintsVersionSourceCountsAndStatistics) {
  const std::filesystem::path level = import_generated_map();
  const ToolRun r = run("info '" + level.string() + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const LevelLoadResult loaded = load_compiled_level_file(level.string());
  ASSERT_TRUE(loaded.ok());
  char hash[20];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(loaded.level.level.source_hash));
  EXPECT_NE(r.out.find("version " + std::to_string(kCompiledLevelVersion)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("room.map"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(hash), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("brushes   " + std::to_string(loaded.level.level.brushes.size()) + " "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(format_stats(loaded.level.bsp_stats)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("navmesh   " + std::to_string(loaded.level.navmesh.size()) + " bytes"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bounds    (-1040 -1040 -16) .. (1040 1040 528)"), std::string::npos) << r.out;
}

TEST_F(LevelToolTest, InfoRejectsCorruptLevelsWithTheReason) {
  const std::filesystem::path level = import_generated_map();
  std::string bytes = read_file(level);
  bytes[bytes.size() / 2] ^= 0x10;
  write_file(dir_ / "corrupt.level", bytes);
  ToolRun r = run("info " + path("corrupt.level"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad checksum"), std::string::npos) << r.err;
  write_file(dir_ / "short.level", bytes.substr(0, 5));
  r = run("info " + path("short.level"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("too small"), std::string::npos) << r.err;
  r = run("info " + path("missing.level"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing.level"), std::string::npos) << r.err;
}

TEST_F(LevelToolTest, QueryAnswersEveryRowLikeBspTreeTrace) {
  const std::filesystem::path level = import_generated_map();
  const std::string queries_text = generated_queries(5, 3000);
  write_file(dir_ / "queries.csv", queries_text);
  const ToolRun r =
      run("query '" + level.string() + "' " + path("queries.csv") + " -o " + path("results.csv"));
  ASSERT_EQ(r.status, 0) << r.err;

  const LevelLoadResult loaded = load_compiled_level_file(level.string());
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  const QueryCsv csv = parse_query_csv(queries_text);
  ASSERT_TRUE(csv.ok());
  ASSERT_EQ(csv.queries.size(), 3000u);

  std::istringstream results(read_file(dir_ / "results.csv"));
  std::string line;
  ASSERT_TRUE(std::getline(results, line));
  EXPECT_EQ(line, kResultCsvHeader);
  int rows = 0;
  int hits = 0;
  int start_solid = 0;
  const Shape kinds[] = {Shape::point(), Shape::sphere(1), Shape::cylinder(15, 56)};
  for (const LevelQuery& q : csv.queries) {
    ASSERT_TRUE(std::getline(results, line)) << "missing row " << rows + 2;
    ++rows;
    // Called directly, with the shape spelled out here rather than through query_shape().
    Shape shape = kinds[int(q.kind)];
    if (q.kind == QueryKind::kSphere) shape = Shape::sphere(q.radius);
    const TraceResult expected = loaded.level.tree.trace(shape, q.from, q.to);
    const std::vector<std::string> f = split(line, ',');
    ASSERT_EQ(f.size(), 10u) << "row " << rows + 1 << ": " << line;
    EXPECT_EQ(f[0], expected.hit ? "1" : "0") << line;
    EXPECT_EQ(parse_exact(f[1]), expected.fraction) << line;
    EXPECT_EQ(parse_exact(f[2]), expected.end_position.x) << line;
    EXPECT_EQ(parse_exact(f[3]), expected.end_position.y) << line;
    EXPECT_EQ(parse_exact(f[4]), expected.end_position.z) << line;
    EXPECT_EQ(parse_exact(f[5]), expected.normal.x) << line;
    EXPECT_EQ(parse_exact(f[6]), expected.normal.y) << line;
    EXPECT_EQ(parse_exact(f[7]), expected.normal.z) << line;
    EXPECT_EQ(f[8], expected.start_solid ? "1" : "0") << line;
    EXPECT_EQ(f[9], std::to_string(expected.brush)) << line;
    hits += expected.hit ? 1 : 0;
    start_solid += expected.start_solid ? 1 : 0;
  }
  EXPECT_FALSE(std::getline(results, line)) << "extra row: " << line;
  EXPECT_EQ(rows, 3000);
  // The query set is worth checking only if it exercises both outcomes.
  EXPECT_GT(hits, 300);
  EXPECT_LT(hits, 2700);
  EXPECT_GT(start_solid, 0);
}

TEST_F(LevelToolTest, MalformedQueriesFailLoudlyAndWriteNothing) {
  const std::filesystem::path level = import_generated_map();
  write_file(dir_ / "bad.csv",
             kHeader + "\nray,0,0,64,100,0,64,0,0\nray,0,0,64,100,0,64,0\nsphere,0,0,0,1,1,1,-1,0\n");
  ToolRun r = run("query '" + level.string() + "' " + path("bad.csv") + " -o " + path("results.csv"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.csv:3: 8 fields"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad.csv:4: radius \"-1\" is negative"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "results.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "results.csv.tmp"));

  write_file(dir_ / "header.csv", "kind,x0,y0,z0,x1,y1,z1,r,h\nray,0,0,64,100,0,64,0,0\n");
  r = run("query '" + level.string() + "' " + path("header.csv") + " -o " + path("results.csv"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("header.csv:1: header is"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "results.csv"));

  r = run("bench '" + level.string() + "' " + path("bad.csv"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.csv:3:"), std::string::npos) << r.err;
}

// The `KIND QUERIES_PER_SECOND` lines of bench's output, by kind; a kind printed twice is counted in
// `repeated`.
std::map<std::string, long long> rate_lines(const std::string& output, int& repeated) {
  std::map<std::string, long long> rates;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string kind = line.substr(0, space);
    const std::string number = line.substr(space + 1);
    if (kind != "ray" && kind != "sphere" && kind != "cylinder") continue;
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) continue;
    repeated += rates.count(kind) ? 1 : 0;
    rates[kind] = std::stoll(number);
  }
  return rates;
}

TEST_F(LevelToolTest, BenchPrintsOneRateLinePerKindAndAChecksum) {
  const std::filesystem::path level = import_generated_map();
  write_file(dir_ / "queries.csv", generated_queries(6, 600));
  const ToolRun r = run("bench '" + level.string() + "' " + path("queries.csv") + " --seconds 0.15");
  ASSERT_EQ(r.status, 0) << r.err;
  int repeated = 0;
  const std::map<std::string, long long> rates = rate_lines(r.out, repeated);
  EXPECT_EQ(repeated, 0) << r.out;
  ASSERT_EQ(rates.size(), 3u) << r.out;
  for (const auto& [kind, per_second] : rates) {
    EXPECT_GT(per_second, 0) << kind;
  }
  EXPECT_NE(r.out.find("checksum"), std::string::npos) << r.out;

  // Only the kinds present get a line; the checksum does not depend on the timing.
  write_file(dir_ / "rays.csv", kHeader + "\nray,0,0,64,100,0,64,0,0\nray,5,5,5,-100,0,64,0,0\n");
  const ToolRun a = run("bench '" + level.string() + "' " + path("rays.csv") + " --seconds 0.02");
  const ToolRun b = run("bench '" + level.string() + "' " + path("rays.csv") + " --seconds 0.04");
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  const std::map<std::string, long long> ray_rates = rate_lines(a.out, repeated);
  EXPECT_EQ(ray_rates.size(), 1u) << a.out;
  EXPECT_EQ(ray_rates.count("ray"), 1u) << a.out;
  const auto checksum_of = [](const std::string& text) { return text.substr(text.find("checksum")); };
  EXPECT_EQ(checksum_of(a.out), checksum_of(b.out));
}

#endif  // SHIFTCAST_LEVEL_TOOL

}  // namespace
}  // namespace shiftcast
