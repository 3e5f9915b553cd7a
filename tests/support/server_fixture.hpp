// ServerTest: each end-to-end test runs the real shiftcast-server in a child process on free loopback
// ports, in a temporary directory of its own (kept when the test fails, with the server's stderr).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/support/rpc_test_client.hpp"
#include "tests/support/server_process.hpp"
#include "tests/support/udp_test_client.hpp"

namespace shiftcast {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        std::filesystem::path(::testing::TempDir()) / ("shiftcast_server_test_" + std::to_string(getpid()) +
                                                       "_" + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "server stderr kept in %s\n", dir_.c_str());
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }
  void start(const std::string& config = test_server_config(), const std::string& arguments = "") {
    const std::string error = server_.start(config, dir_, arguments);
    ASSERT_EQ(error, "");
  }
  ConnectToken token(std::uint64_t client_id, std::uint32_t match_id = 1) {
    RpcTestClient rpc(server_.ports().rpc);
    std::optional<ConnectToken> t = rpc.issue_token(dev_admin_key(), match_id, client_id);
    EXPECT_TRUE(t.has_value());
    return t.value_or(ConnectToken{});
  }
  std::string metrics() { return http_get(server_.ports().http, "/metrics"); }
  double metric(const std::string& series) { return metric_value(metrics(), series); }
  static std::string rejected(const std::string& channel, const std::string& reason) {
    return "shiftcast_rejected_total{channel=\"" + channel + "\",reason=\"" + reason + "\"}";
  }

  ServerProcess server_;
  std::filesystem::path dir_;
};

}  // namespace shiftcast
