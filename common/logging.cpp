#include "common/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <stdexcept>

namespace tusk {

void init_logging(const std::string& program, const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    throw std::invalid_argument("unknown log level '" + level +
                                "' (expected trace, debug, info, warn or error)");
  }
  auto logger = spdlog::stderr_logger_mt(program);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %n %^%l%$: %v");
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace tusk
