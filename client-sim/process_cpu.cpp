#include "client-sim/process_cpu.hpp"

#include <sys/resource.h>

namespace shiftcast {

namespace {

constexpr double kMicrosecondsPerSecond = 1e6;

double seconds(const timeval& t) {
  return double(t.tv_sec) + double(t.tv_usec) / kMicrosecondsPerSecond;
}

}  // namespace

double process_cpu_seconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace shiftcast
