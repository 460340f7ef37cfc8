// Reads a model file (models/*.yaml: a model, its data, its parallel layout, the step time, and
// optionally checkpoints and serving) into a traffic::TrainingSpec for `tusk-controller model`.
//
// Like profiles, every problem in a file is collected and reported at once, each as
// `file:line:column: field.path: message`, with a suggestion for a mistyped key.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/yaml_reader.hpp"
#include "controller/model/training_model.hpp"

namespace tusk {

class ModelFileInvalid : public std::runtime_error {
 public:
  explicit ModelFileInvalid(std::vector<YamlError> errors);
  const std::vector<YamlError>& errors() const { return errors_; }

 private:
  std::vector<YamlError> errors_;
};

// A count as the field writes it: "70.6B" (billions), "15T", "16M", "4k", "70e9", "1000". B is a
// synonym of G here, since model files count parameters and tokens, never bytes. Throws
// units::UnitError with a message for the user.
double parse_large_count(std::string_view text);

// Throws ModelFileInvalid, also when the file cannot be read.
traffic::TrainingSpec load_model_file(const std::string& path);

// `file_name` is used only in positions and TrainingSpec::file. Throws ModelFileInvalid.
traffic::TrainingSpec load_model_text(std::string_view yaml_text, const std::string& file_name);

}  // namespace tusk
