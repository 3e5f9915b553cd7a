// process_cpu_seconds: the CPU time (user + system) this process has used so far, all threads, from
// getrusage(RUSAGE_SELF). The simulator samples it at the start and end of the load to report its own
// cost (SimReport::sim_cpu_percent), the figure that tells whether the load tester or the server ran out
// of cores on a machine they share.
//
//   const double before = process_cpu_seconds();
//   ... the load ...
//   const double used = process_cpu_seconds() - before;   // seconds of one core
#pragma once

namespace shiftcast {

// 0 when the kernel refuses (never in practice); a difference of two calls is then 0, not garbage.
double process_cpu_seconds();

}  // namespace shiftcast
