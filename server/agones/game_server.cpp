#include "server/agones/game_server.hpp"

#include <charconv>

#include "server/config/json_value.hpp"

namespace shiftcast {

namespace {

// A map<string, string> field; members that are not strings are skipped (the schema says strings).
void read_strings(const JsonValue* object, std::map<std::string, std::string>& out) {
  if (object == nullptr || !object->is_object()) return;
  for (const auto& [key, value] : object->members)
    if (value.is_string()) out[key] = value.text;
}

GameServerRead from_value(const JsonValue& gs) {
  GameServerRead r;
  if (!gs.is_object()) {
    r.error = "the GameServer is not a JSON object";
    return r;
  }
  const JsonValue* state = gs.find("status", "state");
  if (state == nullptr || !state->is_string()) {
    r.error = "the GameServer has no status.state";
    return r;
  }
  r.server.state = state->text;
  if (const JsonValue* name = gs.find("object_meta", "name"); name != nullptr && name->is_string())
    r.server.name = name->text;
  read_strings(gs.find("object_meta", "labels"), r.server.labels);
  read_strings(gs.find("object_meta", "annotations"), r.server.annotations);
  if (const JsonValue* address = gs.find("status", "address"); address != nullptr && address->is_string())
    r.server.address = address->text;
  // status.ports: [{"name": ..., "port": N}]; the port is an int32 in the schema (a JSON number). An entry
  // that is not a name and a port in 1..65535 is skipped.
  if (const JsonValue* ports = gs.find("status", "ports");
      ports != nullptr && ports->kind == JsonValue::Kind::kArray) {
    for (const JsonValue& p : ports->items) {
      const JsonValue* name = p.member("name");
      const JsonValue* port = p.member("port");
      if (name == nullptr || !name->is_string() || port == nullptr || port->kind != JsonValue::Kind::kNumber)
        continue;
      int value = 0;
      const char* end = port->text.data() + port->text.size();
      const auto [at, ec] = std::from_chars(port->text.data(), end, value);
      if (ec == std::errc() && at == end && value >= 1 && value <= 65535) r.server.ports[name->text] = value;
    }
  }
  return r;
}

}  // namespace

GameServerRead read_game_server(std::string_view json) {
  const JsonParse p = parse_json(json);
  if (!p.ok()) return {{}, "not JSON: " + p.error};
  return from_value(p.value);
}

GameServerRead read_watch_line(std::string_view line) {
  const JsonParse p = parse_json(line);
  if (!p.ok()) return {{}, "not JSON: " + p.error};
  if (const JsonValue* error = p.value.member("error"); error != nullptr) {
    const JsonValue* message = error->member("message");
    return {{}, "the stream reports an error: " + (message && message->is_string() ? message->text : "?")};
  }
  const JsonValue* result = p.value.member("result");
  if (result == nullptr) return {{}, "no \"result\" in the stream's object"};
  return from_value(*result);
}

}  // namespace shiftcast
