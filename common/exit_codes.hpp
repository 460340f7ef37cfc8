// What tusk-controller exits with: the numbers scripts and schedulers read (tusk-controller(1)'s
// EXIT STATUS). Here, below every controller folder, because commands in many of them end with one;
// tusk-agent's bad options end with kExitUsage too.
#pragma once

namespace tusk {

enum ExitCode : int {
  kExitPass = 0,
  kExitThresholdFailed = 1,
  kExitUsage = 2,
  kExitAgentsMissing = 3,
  kExitReportElsewhere = 4,  // the run finished; its report is not where --out said
  // An interrupted run (SIGINT, SIGTERM) exits 128 + the signal's number, as a shell reports it.
  kExitInterruptedBase = 128,
};

}  // namespace tusk
