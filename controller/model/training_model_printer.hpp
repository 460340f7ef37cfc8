// `tusk-controller model`: the traffic model of a training job as a table for people and as JSON
// (schema tusk.model/1) for programs.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "controller/model/training_model.hpp"

namespace tusk::traffic {

// Bytes with three significant digits: "8.69 GB", "1.23 EB" (powers of 1000), or with `binary`
// "8.09 GiB", "1.07 EiB" (powers of 1024). Whole numbers of bytes below 1000 (1024) print as "512 B".
std::string format_bytes(double bytes, bool binary = false);

std::string model_text(const TrainingSpec& spec, const TrafficReport& report, bool binary_units);
nlohmann::json model_json(const TrainingSpec& spec, const TrafficReport& report);

}  // namespace tusk::traffic
