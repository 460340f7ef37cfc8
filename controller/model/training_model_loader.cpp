#include "controller/model/training_model_loader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "common/units.hpp"

namespace tusk {
namespace {

using namespace std::chrono_literals;
using traffic::TrainingSpec;
using Value = YamlValue;
using Entry = YamlEntry;
template <typename T>
using Range = YamlReader::Range<T>;

const Range<std::int64_t> kDegree{1, 1'000'000};
const Range<std::int64_t> kPerHost{1, 1024};
const Range<std::int64_t> kWidth{1, 10'000'000};
const Range<std::chrono::milliseconds> kTime{1ms, 1000h};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The values of one mapping, by key, for the checks that relate keys to each other.
struct Section {
  std::optional<Value> self;
  std::vector<Entry> entries;

  const Value* find(std::string_view key) const {
    for (const auto& entry : entries) {
      if (entry.key == key) return &entry.value;
    }
    return nullptr;
  }
};

class ModelFileReader {
 public:
  explicit ModelFileReader(YamlErrors& errors) : read_(errors) {}

  TrainingSpec read(const YAML::Node& node) {
    TrainingSpec spec;
    spec.file = read_.errors().file();
    const Value root = read_.root(node);
    if (node.IsNull()) {
      read_.fail(root, "the model file is empty: expected a mapping with name, model, layout and data or inference");
      return spec;
    }
    const auto entries =
        read_.mapping(root, "a mapping of model-file keys (name, model, data, layout, step, checkpoint, inference)");
    if (!entries) return spec;
    static const std::vector<std::string_view> kKeys{"name",   "description", "model",      "data",
                                                     "layout", "step",        "checkpoint", "inference"};
    const Value* sections[8] = {};
    for (const auto& entry : *entries) {
      if (entry.key == "name") {
        if (auto name = read_.non_empty_string(entry.value)) spec.name = std::move(*name);
      } else if (entry.key == "description") {
        if (auto text = read_.string(entry.value)) spec.description = std::move(*text);
      } else if (const auto at = std::find(kKeys.begin(), kKeys.end(), entry.key); at != kKeys.end()) {
        sections[at - kKeys.begin()] = &entry.value;
      } else {
        read_.unknown_key(entry, kKeys);
      }
    }
    const Value* model = sections[2];
    const Value* data = sections[3];
    const Value* layout = sections[4];
    const Value* step = sections[5];
    const Value* checkpoint = sections[6];
    const Value* inference = sections[7];
    if (!has_key(*entries, "name")) read_.missing(root, "name");
    if (!model) read_.missing(root, "model");
    if (!data && !inference) {
      read_.fail(root, "needs data (to model training) or inference (to model serving), or both");
    }
    if (data && !step) read_.missing(root, "step");

    if (model) read_model(*model, spec.model);
    Section layout_keys;
    if (layout) layout_keys = read_layout(*layout, spec.layout);
    check_layout(layout_keys, spec);
    if (data) {
      spec.data.emplace();
      read_data(*data, *spec.data, spec.layout, layout_keys);
    }
    if (step) read_step(*step, spec.step);
    if (checkpoint) {
      spec.checkpoint.emplace();
      read_checkpoint(*checkpoint, *spec.checkpoint);
    }
    if (inference) {
      spec.inference.emplace();
      read_inference(*inference, *spec.inference, spec);
    }
    return spec;
  }

 private:
  std::optional<Section> section(const Value& value, std::string_view expected) {
    auto entries = read_.mapping(value, expected);
    if (!entries) return std::nullopt;
    return Section{value, std::move(*entries)};
  }

  std::optional<double> count(const Value& value, double min, std::string_view min_text) {
    const auto number = read_.with_units(value, "a count like 70B, 15T or 70e9", parse_large_count);
    if (!number) return std::nullopt;
    if (*number < min) {
      read_.fail(value, fmt::format("{} {} is below the minimum {}", value.name, value.text(), min_text));
      return std::nullopt;
    }
    return number;
  }

  // ---- model -----------------------------------------------------------------------------------

  void read_model(const Value& value, traffic::ModelSpec& model) {
    const auto keys = section(value, "a mapping with parameters, layers, hidden, ...");
    if (!keys) return;
    static const std::vector<std::string_view> kKeys{"parameters",        "layers",  "hidden", "kv_hidden",
                                                     "bytes_per_element", "experts", "top_k",  "expert_parameters",
                                                     "moe_layers"};
    for (const auto& entry : keys->entries) {
      const Value& v = entry.value;
      if (entry.key == "parameters") {
        if (auto n = count(v, 1, "1")) model.parameters = *n;
      } else if (entry.key == "layers") {
        if (auto n = read_.uint32(v, kDegree)) model.layers = *n;
      } else if (entry.key == "hidden") {
        if (auto n = read_.uint32(v, kWidth)) model.hidden = *n;
      } else if (entry.key == "kv_hidden") {
        if (auto n = read_.uint32(v, kWidth)) model.kv_hidden = *n;
      } else if (entry.key == "bytes_per_element") {
        if (auto n = read_.uint32(v, {1, 8})) model.bytes_per_element = *n;
      } else if (entry.key == "experts") {
        if (auto n = read_.uint32(v, {2, 1'000'000})) model.experts = *n;
      } else if (entry.key == "top_k") {
        if (auto n = read_.uint32(v, {1, 1'000'000})) model.top_k = *n;
      } else if (entry.key == "expert_parameters") {
        if (auto n = count(v, 1, "1")) model.expert_parameters = *n;
      } else if (entry.key == "moe_layers") {
        if (auto n = read_.uint32(v, kDegree)) model.moe_layers = *n;
      } else {
        read_.unknown_key(entry, kKeys);
      }
    }
    for (const auto key : {"parameters", "layers", "hidden"}) {
      if (!keys->find(key)) read_.missing(value, key);
    }
    if (const Value* v = keys->find("kv_hidden"); v && model.kv_hidden > model.hidden && model.hidden > 0) {
      read_.fail(*v, fmt::format("kv_hidden {} is more than hidden {}", model.kv_hidden, model.hidden));
    }
    if (model.kv_hidden == 0) model.kv_hidden = model.hidden;
    if (keys->find("experts")) {
      if (!keys->find("top_k")) read_.missing(value, "top_k");
      if (!keys->find("expert_parameters")) read_.missing(value, "expert_parameters");
      if (const Value* v = keys->find("top_k"); v && model.experts > 0 && model.top_k > model.experts) {
        read_.fail(*v, fmt::format("top_k {} is more than experts {}", model.top_k, model.experts));
      }
      if (const Value* v = keys->find("expert_parameters");
          v && model.parameters > 0 && model.expert_parameters >= model.parameters) {
        read_.fail(*v, fmt::format("expert_parameters {} must be less than parameters {}", v->text(),
                                   keys->find("parameters")->text()));
      }
      if (const Value* v = keys->find("moe_layers"); v && model.layers > 0 && model.moe_layers > model.layers) {
        read_.fail(*v, fmt::format("moe_layers {} is more than layers {}", model.moe_layers, model.layers));
      }
      if (model.moe_layers == 0) model.moe_layers = model.layers;
    } else {
      for (const auto key : {"top_k", "expert_parameters", "moe_layers"}) {
        if (const Value* v = keys->find(key)) {
          read_.fail(*v, fmt::format("{} is for mixture-of-experts models: set model.experts too", key));
        }
      }
    }
  }

  // ---- layout ----------------------------------------------------------------------------------

  Section read_layout(const Value& value, traffic::Layout& layout) {
    auto keys = section(value, "a mapping with tp, pp, dp, ep, fsdp, gpus, gpus_per_host, ...");
    if (!keys) return {};
    static const std::vector<std::string_view> kKeys{
        "tp", "pp", "dp", "ep", "fsdp", "gpus", "gpus_per_host", "nics_per_host", "micro_batches"};
    for (const auto& entry : keys->entries) {
      const Value& v = entry.value;
      if (entry.key == "tp" || entry.key == "pp" || entry.key == "dp") {
        const auto n = read_.uint32(v, kDegree);
        if (!n) {
          degrees_unreadable_ = true;
        } else {
          (entry.key == "tp" ? layout.tp : entry.key == "pp" ? layout.pp : layout.dp) = *n;
        }
      } else if (entry.key == "ep") {
        if (auto n = read_.uint32(v, kDegree)) layout.ep = *n;
      } else if (entry.key == "fsdp") {
        if (auto on = read_.boolean(v)) layout.fsdp = *on;
      } else if (entry.key == "gpus") {
        gpus_ = read_.integer(v, {1, std::numeric_limits<std::int64_t>::max(), "1", "2^63"});
      } else if (entry.key == "gpus_per_host") {
        if (auto n = read_.uint32(v, kPerHost)) layout.gpus_per_host = *n;
      } else if (entry.key == "nics_per_host") {
        if (auto n = read_.uint32(v, kPerHost)) layout.nics_per_host = *n;
      } else if (entry.key == "micro_batches") {
        if (auto n = read_.uint32(v, kDegree)) layout.micro_batches = *n;
      } else {
        read_.unknown_key(entry, kKeys);
      }
    }
    if (!keys->find("nics_per_host")) layout.nics_per_host = layout.gpus_per_host;
    if (!keys->find("micro_batches")) layout.micro_batches = layout.pp;
    return std::move(*keys);
  }

  // Checks between the layout and the model; quiet about values already reported as unreadable.
  void check_layout(const Section& keys, const TrainingSpec& spec) {
    const auto& l = spec.layout;
    const auto& m = spec.model;
    const Value* gpus = keys.find("gpus");
    if (gpus && gpus_ && !degrees_unreadable_ && double(*gpus_) != l.gpus()) {
      read_.fail(*gpus,
                 fmt::format("tp·pp·dp = {}·{}·{} = {:.0f} GPUs, but gpus is {}", l.tp, l.pp, l.dp, l.gpus(), *gpus_));
    }
    if (const Value* ep = keys.find("ep"); ep && l.ep > 1) {
      if (m.experts == 0) {
        read_.fail(*ep, fmt::format("ep {} needs a mixture-of-experts model: set model.experts", l.ep));
      } else if (m.experts % l.ep != 0) {
        read_.fail(*ep, fmt::format("ep {} does not divide model.experts {}", l.ep, m.experts));
      }
      if (l.dp % l.ep != 0) {
        read_.fail(*ep,
                   fmt::format("ep {} does not divide dp {}: expert-parallel groups are made of DP ranks", l.ep, l.dp));
      }
      if (l.fsdp) read_.fail(*ep, "fsdp with expert parallelism (ep > 1) is not modelled; use one or the other");
    }
    if (const Value* pp = keys.find("pp"); pp && m.layers > 0 && m.layers % l.pp != 0) {
      read_.fail(*pp, fmt::format("model.layers {} is not a multiple of pp {}", m.layers, l.pp));
    }
    if (const Value* tp = keys.find("tp"); tp && m.hidden > 0 && m.hidden % l.tp != 0) {
      read_.fail(*tp, fmt::format("model.hidden {} is not a multiple of tp {}", m.hidden, l.tp));
    }
  }

  // ---- data ------------------------------------------------------------------------------------

  void read_data(const Value& value, traffic::DataSpec& data, const traffic::Layout& layout,
                 const Section& layout_keys) {
    const auto keys = section(value, "a mapping with tokens (or samples), batch_tokens (or batch_size), ...");
    if (!keys) return;
    static const std::vector<std::string_view> kKeys{"tokens",     "samples", "sequence_length", "batch_tokens",
                                                     "batch_size", "epochs",  "dataset_size"};
    std::optional<double> tokens, samples, sequence, batch_tokens, batch_size;
    for (const auto& entry : keys->entries) {
      const Value& v = entry.value;
      if (entry.key == "tokens") {
        tokens = count(v, 1, "1");
      } else if (entry.key == "samples") {
        samples = count(v, 1, "1");
      } else if (entry.key == "sequence_length") {
        if (auto n = read_.uint32(v, kWidth)) sequence = *n;
      } else if (entry.key == "batch_tokens") {
        batch_tokens = count(v, 1, "1");
      } else if (entry.key == "batch_size") {
        batch_size = count(v, 1, "1");
      } else if (entry.key == "epochs") {
        if (auto n = read_.uint32(v, kDegree)) data.epochs = *n;
      } else if (entry.key == "dataset_size") {
        if (auto n = read_.size(v, {1, std::numeric_limits<std::uint64_t>::max(), "1", "16EiB"})) {
          data.dataset_bytes = double(*n);
        }
      } else {
        read_.unknown_key(entry, kKeys);
      }
    }
    const Value* tokens_v = keys->find("tokens");
    const Value* samples_v = keys->find("samples");
    const Value* batch_tokens_v = keys->find("batch_tokens");
    const Value* batch_size_v = keys->find("batch_size");
    if (tokens_v && samples_v) read_.fail(*samples_v, "set tokens or samples, not both");
    if (!tokens_v && !samples_v) read_.fail(value, "needs tokens (per epoch) or samples with sequence_length");
    if (batch_tokens_v && batch_size_v) read_.fail(*batch_size_v, "set batch_tokens or batch_size, not both");
    if (!batch_tokens_v && !batch_size_v) {
      read_.fail(value, "needs batch_tokens (tokens per mini-batch) or batch_size (samples per mini-batch)");
    }
    if ((samples_v || batch_size_v) && !keys->find("sequence_length")) {
      read_.fail(value,
                 fmt::format("{} needs sequence_length (tokens per sample)", samples_v ? "samples" : "batch_size"));
    }
    if (tokens) data.tokens_per_epoch = *tokens;
    if (samples && sequence) data.tokens_per_epoch = *samples * *sequence;
    if (batch_tokens) data.tokens_per_step = *batch_tokens;
    if (batch_size && sequence) data.tokens_per_step = *batch_size * *sequence;
    if (data.tokens_per_epoch > 0 && data.tokens_per_step > data.tokens_per_epoch) {
      read_.fail(batch_tokens_v ? *batch_tokens_v : *batch_size_v,
                 fmt::format("one mini-batch ({:.0f} tokens) is more than the epoch ({:.0f} tokens)",
                             data.tokens_per_step, data.tokens_per_epoch));
    }
    // A mini-batch is split into whole samples per DP replica and whole micro-batches per replica.
    if (batch_size && batch_size_v) {
      const double per_replica = *batch_size / layout.dp;
      if (per_replica != std::floor(per_replica)) {
        read_.fail(*batch_size_v,
                   fmt::format("batch_size {} is not a multiple of layout.dp {}", batch_size_v->text(), layout.dp));
      } else if (std::fmod(per_replica, layout.micro_batches) != 0) {
        read_.fail(*batch_size_v, fmt::format("batch_size {} gives {:.0f} samples per DP replica, not a multiple of "
                                              "layout.micro_batches {}{}",
                                              batch_size_v->text(), per_replica, layout.micro_batches,
                                              layout_keys.find("micro_batches") ? "" : " (the default, pp)"));
      }
    }
  }

  // ---- step, checkpoint, inference -------------------------------------------------------------

  void read_step(const Value& value, traffic::StepSpec& step) {
    const auto keys = section(value, "a mapping with time and comm_fraction");
    if (!keys) return;
    for (const auto& entry : keys->entries) {
      const Value& v = entry.value;
      if (entry.key == "time") {
        if (auto ms = read_.duration(v, kTime)) step.time_s = double(ms->count()) / 1000;
      } else if (entry.key == "comm_fraction") {
        if (auto ratio = read_.ratio(v)) {
          if (*ratio <= 0) {
            read_.fail(v, "comm_fraction must be above 0");
          } else {
            step.comm_fraction = *ratio;
          }
        }
      } else {
        read_.unknown_key(entry, {"time", "comm_fraction"});
      }
    }
    if (!keys->find("time")) read_.missing(value, "time");
  }

  void read_checkpoint(const Value& value, traffic::CheckpointSpec& checkpoint) {
    const auto keys = section(value, "a mapping with every_steps and bytes_per_parameter");
    if (!keys) return;
    for (const auto& entry : keys->entries) {
      const Value& v = entry.value;
      if (entry.key == "every_steps") {
        if (auto n = count(v, 1, "1")) checkpoint.every_steps = *n;
      } else if (entry.key == "bytes_per_parameter") {
        if (auto n = read_.uint32(v, {1, 64})) checkpoint.bytes_per_parameter = *n;
      } else {
        read_.unknown_key(entry, {"every_steps", "bytes_per_parameter"});
      }
    }
    if (!keys->find("every_steps")) read_.missing(value, "every_steps");
  }

  void read_inference(const Value& value, traffic::InferenceSpec& inference, const TrainingSpec& spec) {
    const auto keys = section(value, "a mapping with users, prompt_tokens, output_tokens, ...");
    if (!keys) return;
    static const std::vector<std::string_view> kKeys{"users", "prompt_tokens", "output_tokens",
                                                     "tp",    "replicas",      "period"};
    inference.tp = spec.layout.tp;
    for (const auto& entry : keys->entries) {
      const Value& v = entry.value;
      if (entry.key == "users") {
        if (auto n = count(v, 1, "1")) inference.users = *n;
      } else if (entry.key == "prompt_tokens") {
        if (auto n = count(v, 1, "1")) inference.prompt_tokens = *n;
      } else if (entry.key == "output_tokens") {
        if (auto n = count(v, 0, "0")) inference.output_tokens = *n;
      } else if (entry.key == "tp") {
        if (auto n = read_.uint32(v, kDegree)) inference.tp = *n;
      } else if (entry.key == "replicas") {
        if (auto n = count(v, 1, "1")) inference.replicas = *n;
      } else if (entry.key == "period") {
        if (auto ms = read_.duration(v, kTime)) inference.period_s = double(ms->count()) / 1000;
      } else {
        read_.unknown_key(entry, kKeys);
      }
    }
    for (const auto key : {"users", "prompt_tokens", "output_tokens"}) {
      if (!keys->find(key)) read_.missing(value, key);
    }
    if (const Value* tp = keys->find("tp"); tp && spec.model.hidden > 0 && spec.model.hidden % inference.tp != 0) {
      read_.fail(*tp, fmt::format("model.hidden {} is not a multiple of tp {}", spec.model.hidden, inference.tp));
    }
  }

  YamlReader read_;
  std::optional<std::int64_t> gpus_;  // layout.gpus, when readable
  bool degrees_unreadable_ = false;   // a tp, pp or dp already reported: no product to check
};

}  // namespace

ModelFileInvalid::ModelFileInvalid(std::vector<YamlError> errors)
    : std::runtime_error(join_errors(errors)), errors_(std::move(errors)) {}

double parse_large_count(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (!trimmed.empty() && trimmed.front() == '-') {
    throw units::UnitError(fmt::format("'{}' is not a count: counts cannot be negative (e.g. 70B)", text));
  }
  std::string converted(trimmed);
  if (!converted.empty() && converted.back() == 'B') converted.back() = 'G';
  try {
    return double(units::parse_count(converted));
  } catch (const units::UnitError&) {
    throw units::UnitError(
        fmt::format("'{}' is not a count: expected a whole number, optionally with an exponent or a k, M, B (= G), "
                    "T suffix (e.g. 70B, 15T, 70.6e9)",
                    text));
  }
}

traffic::TrainingSpec load_model_text(std::string_view yaml_text, const std::string& file_name) {
  YamlErrors errors(file_name);
  const std::optional<YAML::Node> root = parse_yaml(yaml_text, errors);
  if (!root) throw ModelFileInvalid(errors.take_sorted());
  ModelFileReader reader(errors);
  traffic::TrainingSpec spec = reader.read(*root);
  if (!errors.empty()) throw ModelFileInvalid(errors.take_sorted());
  return spec;
}

traffic::TrainingSpec load_model_file(const std::string& path) {
  YamlErrors errors(path);
  const auto text = read_input_file(errors, "the model file");
  if (!text) throw ModelFileInvalid(errors.take_sorted());
  return load_model_text(*text, path);
}

}  // namespace tusk
