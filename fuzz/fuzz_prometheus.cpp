// Target: the load tester's Prometheus text parser (client-sim/prometheus_text.hpp) over any scrape body.
// Promise: the first malformed line stops the parse with "line N: ..."; otherwise every sample has a
// non-empty name, and a parse of the same text is the same (no hidden state).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client-sim/prometheus_text.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shiftcast;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const PrometheusText parsed = parse_prometheus_text(text);
  if (!parsed.error.empty()) {
    fuzz::require(parsed.error.rfind("line ", 0) == 0, "parse_prometheus_text: an error without its line");
    return 0;
  }
  for (const PrometheusSample& s : parsed.samples) {
    fuzz::require(!s.name.empty(), "parse_prometheus_text: a sample without a name");
    for (const auto& [name, value] : s.labels)
      fuzz::require(!name.empty(), "parse_prometheus_text: a label without a name");
  }
  (void)parse_prometheus_value(text.substr(0, 64));
  return 0;
}
