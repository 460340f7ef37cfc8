#include "common/logging.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <mutex>
#include <stdexcept>

#include "common/printable.hpp"

namespace tusk {

namespace {

// Every line reaches stderr through printable(): a message that quotes a peer's text (an agent's
// event, an error it sent, a stream id) cannot end its line and forge the next one, nor send the
// operator's terminal an escape sequence.
class PrintableSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  PrintableSink() : inner_(std::make_shared<spdlog::sinks::stderr_sink_mt>()) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string text = printable(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg safe(msg.time, msg.source, msg.logger_name, msg.level, text);
    safe.thread_id = msg.thread_id;
    inner_->log(safe);
  }
  void flush_() override { inner_->flush(); }
  void set_pattern_(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

void init_logging(const std::string& program, const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    throw std::invalid_argument("unknown log level '" + level + "' (expected trace, debug, info, warn or error)");
  }
  auto logger = std::make_shared<spdlog::logger>(program, std::make_shared<PrintableSink>());
  spdlog::drop(program);
  spdlog::register_logger(logger);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %n %^%l%$: %v");
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace tusk
