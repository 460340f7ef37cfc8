// tusk-controller's command line: validate, plan, run, inventory. Returns the exit code
// (0 pass, 1 threshold failed, 2 usage/profile/config error, 3 agents missing or lost).
#pragma once

namespace tusk {

int controller_main(int argc, char** argv);

}  // namespace tusk
