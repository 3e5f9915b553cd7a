// The contract test: a client written in another language from the schema alone (Python, with the
// bindings `flatc --python` generates from protocol/shiftcast.fbs and Debian's python3-flatbuffers)
// makes raycast RPCs against the real server; its answers must equal the C++ world query's on the same
// level, bit for bit.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "tests/support/server_fixture.hpp"
#include "world/level/compiled_level.hpp"
#include "world/match/world_query.hpp"

namespace shiftcast {
namespace {

// Debian's interpreter, where python3-flatbuffers is installed (a user's PATH may hold another).
constexpr char kPython[] = "/usr/bin/python3";

std::string run_python(const std::string& arguments) {
  const std::string command = std::string(kPython) + " " + SHIFTCAST_SOURCE_DIR +
                              "/tests/contract/raycast_client.py --generated " +
                              SHIFTCAST_PYTHON_PROTOCOL_DIR + " " + arguments + " 2>&1";
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr)
    out += buffer;
  ::pclose(pipe);
  return out;
}

// The value after "key": in the script's one-line JSON (strings are Python reprs of the floats).
std::string json_field(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return {};
  std::size_t begin = at + key.size() + 4;
  if (json[begin] == '"') ++begin;
  const auto end = json.find_first_of("\",}]", begin);
  return json.substr(begin, end - begin);
}

class PythonContractTest : public ServerTest {};

TEST_F(PythonContractTest, APythonClientFromTheSchemaGetsTheWorldQueryAnswer) {
  start();
  LevelResult imported = import_level_file(std::string(SHIFTCAST_SOURCE_DIR) + "/configs/levels/arena.map");
  ASSERT_TRUE(imported.ok());
  CompiledLevelResult arena = compile_level(std::move(imported.level), {}, {});
  ASSERT_TRUE(arena.ok());
  struct Ray {
    Vec3 origin, direction;
  };
  for (const Ray& ray : {Ray{{-500, -40, 30}, {1, 0.25f, 0}}, Ray{{0, 0, 300}, {0.1f, 0.2f, -1}},
                         Ray{{100, 100, 100}, {-1, -1, 0.5f}}}) {
    std::ostringstream args;
    args << "--port " << server_.ports().rpc << " --key-file '" << SHIFTCAST_SOURCE_DIR
         << "/configs/keys/dev-service.key' --match 1 --mask 0 --max-distance 3000 --origin " << ray.origin.x
         << " " << ray.origin.y << " " << ray.origin.z << " --direction " << ray.direction.x << " "
         << ray.direction.y << " " << ray.direction.z;
    const std::string json = run_python(args.str());
    ASSERT_EQ(json.find("error"), std::string::npos) << json;
    const WorldHit want = world_raycast(arena.level.tree, {}, ray.origin, ray.direction, 3000, {.mask = 0});
    EXPECT_EQ(json_field(json, "hit"), want.trace.hit ? "true" : "false") << json;
    EXPECT_EQ(float(std::stod(json_field(json, "fraction"))), want.trace.fraction) << json;
    EXPECT_EQ(std::stoi(json_field(json, "brush")), want.trace.brush) << json;
    EXPECT_GT(std::stod(json_field(json, "tick_used")), 0) << json;
  }
  EXPECT_EQ(server_.stop(), 0);
}

}  // namespace
}  // namespace shiftcast
