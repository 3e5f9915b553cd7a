// allocation_spec: the match an allocated GameServer's labels and annotations ask for. Oracle: the
// values written into the maps by the test; every malformed value is refused with its key named.
#include "server/agones/allocation_settings.hpp"

#include <gtest/gtest.h>

namespace shiftcast {
namespace {

using Map = std::map<std::string, std::string>;

TEST(AllocationSettings, EveryKeyReachesItsField) {
  const Map annotations{{"shiftcast.dev/level", "oa_dm1"},     {"shiftcast.dev/tick-rate", "32"},
                        {"shiftcast.dev/snapshot-rate", "16"}, {"shiftcast.dev/max-players", "6"},
                        {"shiftcast.dev/props", "12"},         {"shiftcast.dev/seed", "4000000000"}};
  const AllocationSpec a = allocation_spec({}, annotations, 16);
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(a.spec.level, "oa_dm1");
  EXPECT_EQ(a.spec.tick_rate, 32);
  EXPECT_EQ(a.spec.snapshot_rate, 16);
  EXPECT_EQ(a.spec.max_players, 6);
  EXPECT_EQ(a.spec.props, 12);
  EXPECT_EQ(a.spec.seed, 4000000000u);
  EXPECT_EQ(a.spec.id, 0u);  // the SDK client names the reserved id
}

TEST(AllocationSettings, AbsentKeysTakeTheServersDefaults) {
  const AllocationSpec a = allocation_spec({{"shiftcast.dev/level", "arena"}}, {}, 9);
  ASSERT_TRUE(a.ok()) << a.error;
  const CreateMatchSpec defaults;
  EXPECT_EQ(a.spec.level, "arena");
  EXPECT_EQ(a.spec.max_players, 9);
  EXPECT_EQ(a.spec.tick_rate, 0);  // 0: the server's own
  EXPECT_EQ(a.spec.snapshot_rate, 0);
  EXPECT_EQ(a.spec.props, defaults.props);
  EXPECT_EQ(a.spec.seed, defaults.seed);
}

TEST(AllocationSettings, AnAnnotationWinsOverALabel) {
  const AllocationSpec a =
      allocation_spec({{"shiftcast.dev/level", "label-level"}, {"shiftcast.dev/props", "1"}},
                      {{"shiftcast.dev/level", "annotated"}}, 4);
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(a.spec.level, "annotated");
  EXPECT_EQ(a.spec.props, 1);  // the label still counts where no annotation says otherwise
}

TEST(AllocationSettings, MalformedValuesAreRefusedNamingTheKey) {
  struct Case {
    Map annotations;
    std::string expected;
  };
  const Case cases[] = {
      {{}, "shiftcast.dev/level is not set"},
      {{{"shiftcast.dev/level", ""}}, "shiftcast.dev/level is not set"},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/tick-rate", "fast"}},
       "shiftcast.dev/tick-rate = \"fast\""},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/max-players", "-1"}},
       "shiftcast.dev/max-players = \"-1\""},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/props", "1.5"}}, "shiftcast.dev/props = \"1.5\""},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/props", " 3"}}, "shiftcast.dev/props = \" 3\""},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/props", "2147483648"}}, "shiftcast.dev/props"},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/seed", "4294967296"}}, "shiftcast.dev/seed"},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/tick-rate", "0"}}, "shiftcast.dev/tick-rate = \"0\""},
      {{{"shiftcast.dev/level", "a"}, {"shiftcast.dev/snapshot-rate", "0"}}, "shiftcast.dev/snapshot-rate"},
  };
  for (const Case& c : cases) {
    const AllocationSpec a = allocation_spec({}, c.annotations, 4);
    EXPECT_FALSE(a.ok()) << c.expected;
    EXPECT_NE(a.error.find(c.expected), std::string::npos) << a.error;
  }
}

}  // namespace
}  // namespace shiftcast
