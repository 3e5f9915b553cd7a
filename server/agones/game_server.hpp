// GameServerView: what shiftcast needs of the Agones GameServer resource (sdk.swagger.json's
// sdkGameServer): its state, labels and annotations, the address and host ports players reach it at. The
// sidecar sends it from GET /gameserver and, one JSON object per line, from the stream of GET
// /watch/gameserver ({"result": GameServer} per change).
//
//   GameServerRead r = read_watch_line(R"({"result":{"status":{"state":"Allocated"}, ...}})");
//   if (r.ok() && r.server.state == "Allocated") ...
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace shiftcast {

struct GameServerView {
  std::string name;   // object_meta.name
  std::string state;  // status.state: Scheduled, RequestReady, Ready, Reserved, Allocated, Shutdown, ...
  std::map<std::string, std::string> labels;       // object_meta.labels
  std::map<std::string, std::string> annotations;  // object_meta.annotations
  std::string address;                             // status.address: the node's, players reach it
  std::map<std::string, int> ports;                // status.ports: name -> host port
};

struct GameServerRead {
  GameServerView server;
  std::string error;  // empty: read; else why the text is not a GameServer
  bool ok() const { return error.empty(); }
};

// A GameServer object (GET /gameserver's body).
GameServerRead read_game_server(std::string_view json);
// One line of the watch stream: {"result": GameServer}, or grpc-gateway's {"error": {...}} (an error).
GameServerRead read_watch_line(std::string_view line);

}  // namespace shiftcast
