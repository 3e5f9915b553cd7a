// process_cpu_seconds against the kernel's other account of the same time, the process CPU clock.
#include "client-sim/process_cpu.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <cmath>

namespace shiftcast {
namespace {

// getrusage and CLOCK_PROCESS_CPUTIME_ID round differently (the former to the tick on some kernels).
constexpr double kClockAgreementSeconds = 0.02;
constexpr double kBurnSeconds = 0.05;

double cpu_clock_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

TEST(ProcessCpu, AgreesWithTheProcessCpuClockAndGrowsWithWork) {
  const double before = process_cpu_seconds();
  const double clock_before = cpu_clock_seconds();
  EXPECT_NEAR(before, clock_before, kClockAgreementSeconds);
  // Burn CPU until the process clock says kBurnSeconds passed: getrusage must see it too.
  volatile double sink = 0;
  while (cpu_clock_seconds() - clock_before < kBurnSeconds) {
    for (int i = 0; i < 10000; ++i)
      sink = sink + std::sqrt(double(i));
  }
  const double used = process_cpu_seconds() - before;
  EXPECT_NEAR(used, cpu_clock_seconds() - clock_before, kClockAgreementSeconds);
  EXPECT_GT(used, 0);
}

}  // namespace
}  // namespace shiftcast
