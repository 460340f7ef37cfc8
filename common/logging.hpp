// Process-wide logging: one spdlog logger on stderr, named after the program.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace tusk {

// level: "trace", "debug", "info", "warn", "error". Throws std::invalid_argument on another word.
void init_logging(const std::string& program, const std::string& level);

}  // namespace tusk
