#pragma once

#include <string>

namespace tusk {

// Where a value came from in an input file (1-based, as editors count; line 0: no position).
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
};

}  // namespace tusk
