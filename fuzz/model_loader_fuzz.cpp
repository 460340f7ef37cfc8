// A model file describes a training job; any text must load or be refused with errors, and a
// model that loads must compute its traffic without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "controller/model/training_model.hpp"
#include "controller/model/training_model_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto spec = tusk::load_model_text(text, "fuzz-model.yaml");
    (void)tusk::traffic::analyse(spec);
  } catch (const tusk::ModelFileInvalid&) {
  }
  return 0;
}
