// Model files: what a valid one gives, what each mistake says and where, and that every file
// shipped in models/ loads.
#include "controller/model/training_model_loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/units.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

using testing::text_of;

// Files below are raw strings that start with a newline so that their first key is on line 1 as
// written; positions in the expected messages can be counted by eye.

std::vector<std::string> model_errors(std::string_view yaml) {
  return testing::errors_thrown<ModelFileInvalid>([&] { load_model_text(text_of(yaml), "m.yaml"); });
}

std::string model_error(std::string_view yaml) {
  return testing::only_error(model_errors(yaml));
}

constexpr std::string_view kValid = R"(
name: small
description: every key once
model:
  parameters: 70.6B
  layers: 80
  hidden: 8192
  kv_hidden: 1024
  bytes_per_element: 2
data:
  tokens: 15T
  sequence_length: 8192
  batch_size: 2048
  epochs: 2
  dataset_size: 60TB
layout:
  tp: 8
  pp: 4
  dp: 64
  gpus: 2048
  gpus_per_host: 8
  micro_batches: 32
step:
  time: 9s
  comm_fraction: 50%
checkpoint:
  every_steps: 500
inference:
  users: 256
  prompt_tokens: 2k
  output_tokens: 512
  replicas: 4
  period: 20s
)";

TEST(ModelFile, ValidFileGivesTheSpec) {
  const auto spec = load_model_text(text_of(kValid), "m.yaml");
  EXPECT_EQ(spec.name, "small");
  EXPECT_EQ(spec.file, "m.yaml");
  EXPECT_DOUBLE_EQ(spec.model.parameters, 70.6e9);
  EXPECT_EQ(spec.model.layers, 80u);
  EXPECT_EQ(spec.model.kv_hidden, 1024u);
  ASSERT_TRUE(spec.data.has_value());
  EXPECT_DOUBLE_EQ(spec.data->tokens_per_epoch, 15e12);
  EXPECT_DOUBLE_EQ(spec.data->tokens_per_step, 2048.0 * 8192);
  EXPECT_EQ(spec.data->epochs, 2u);
  EXPECT_DOUBLE_EQ(spec.data->dataset_bytes.value(), 60e12);
  EXPECT_EQ(spec.layout.tp, 8u);
  EXPECT_EQ(spec.layout.nics_per_host, 8u);  // defaults to gpus_per_host
  EXPECT_EQ(spec.layout.micro_batches, 32u);
  EXPECT_DOUBLE_EQ(spec.step.time_s, 9);
  EXPECT_DOUBLE_EQ(spec.step.comm_fraction, 0.5);
  EXPECT_DOUBLE_EQ(spec.checkpoint->every_steps, 500);
  EXPECT_DOUBLE_EQ(spec.checkpoint->bytes_per_parameter, 8);  // the published default
  ASSERT_TRUE(spec.inference.has_value());
  EXPECT_DOUBLE_EQ(spec.inference->prompt_tokens, 2000);
  EXPECT_EQ(spec.inference->tp, 8u);  // defaults to layout.tp
  EXPECT_DOUBLE_EQ(spec.inference->replicas, 4);
  EXPECT_DOUBLE_EQ(spec.inference->period_s.value(), 20);
}

TEST(ModelFile, DefaultsOfAMinimalFile) {
  const auto spec = load_model_text(text_of(R"(
name: min
model: {parameters: 1e9, layers: 4, hidden: 512}
data: {tokens: 1M, batch_tokens: 1000}
layout: {pp: 2}
step: {time: 1s}
)"),
                                    "m.yaml");
  EXPECT_EQ(spec.model.bytes_per_element, 2u);
  EXPECT_EQ(spec.model.kv_hidden, 512u);
  EXPECT_EQ(spec.layout.micro_batches, 2u);  // defaults to pp
  EXPECT_EQ(spec.layout.gpus_per_host, 8u);
  EXPECT_DOUBLE_EQ(spec.data->minibatches(), 1000);
  EXPECT_DOUBLE_EQ(spec.step.comm_fraction, 1);
  EXPECT_FALSE(spec.checkpoint.has_value());
  EXPECT_FALSE(spec.inference.has_value());
}

TEST(ModelFile, LargeCountsTakeBillionsAndTrillions) {
  EXPECT_DOUBLE_EQ(parse_large_count("70B"), 70e9);
  EXPECT_DOUBLE_EQ(parse_large_count("70.6B"), 70.6e9);
  EXPECT_DOUBLE_EQ(parse_large_count("70.6 G"), 70.6e9);
  EXPECT_DOUBLE_EQ(parse_large_count("15T"), 15e12);
  EXPECT_DOUBLE_EQ(parse_large_count("16M"), 16e6);
  EXPECT_DOUBLE_EQ(parse_large_count("4k"), 4000);
  EXPECT_DOUBLE_EQ(parse_large_count("70e9"), 70e9);
  EXPECT_DOUBLE_EQ(parse_large_count("1000"), 1000);
  EXPECT_THROW(parse_large_count("-1"), units::UnitError);
  EXPECT_THROW(parse_large_count("70X"), units::UnitError);
  EXPECT_THROW(parse_large_count("1.5"), units::UnitError);
  EXPECT_THROW(parse_large_count("70GB"), units::UnitError);
}

// ---- mistakes, each with its position ----------------------------------------------------------

constexpr std::string_view kHead = R"(
name: m
model:
  parameters: 8B
  layers: 32
  hidden: 4096
)";

// kHead followed by `rest`, whose first line is line 6.
std::string with_head(std::string_view rest) {
  if (!rest.empty() && rest.front() == '\n') rest.remove_prefix(1);
  return std::string(kHead) + std::string(rest);
}

TEST(ModelFileErrors, UnknownKeySuggestsTheNearest) {
  const auto errors = model_errors(R"(
name: m
model:
  paramters: 8B
  layers: 32
  hidden: 4096
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
)");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "m.yaml:3:3: model.paramters: unknown key (did you mean 'parameters'?)");
  EXPECT_EQ(errors[1], "m.yaml:3:3: model: missing required field 'parameters'");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layuot: {tp: 2}
)")),
            "m.yaml:8:1: layuot: unknown key (did you mean 'layout'?)");
}

TEST(ModelFileErrors, DegreesMustBePositive) {
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout:
  tp: 0
)")),
            "m.yaml:9:7: layout.tp: tp 0 is below the minimum 1");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout:
  dp: -4
)")),
            "m.yaml:9:7: layout.dp: dp -4 is below the minimum 1");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout:
  pp: two
)")),
            "m.yaml:9:7: layout.pp: expected an integer, got 'two'");
  // The product is not checked against gpus when a degree is already wrong.
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {tp: 8, pp: 0, dp: 64, gpus: 1024}
)")),
            "m.yaml:8:21: layout.pp: pp 0 is below the minimum 1");
}

TEST(ModelFileErrors, GpuCountMustMatchTheDegrees) {
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout:
  tp: 8
  pp: 4
  dp: 32
  gpus: 2048
)")),
            "m.yaml:12:9: layout.gpus: tp·pp·dp = 8·4·32 = 1024 GPUs, but gpus is 2048");
}

TEST(ModelFileErrors, LayoutMustFitTheModel) {
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {pp: 3}
)")),
            "m.yaml:8:14: layout.pp: model.layers 32 is not a multiple of pp 3");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {tp: 3}
)")),
            "m.yaml:8:14: layout.tp: model.hidden 4096 is not a multiple of tp 3");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {dp: 8, ep: 2}
)")),
            "m.yaml:8:21: layout.ep: ep 2 needs a mixture-of-experts model: set model.experts");
}

constexpr std::string_view kMoeHead = R"(
name: m
model:
  parameters: 46.7B
  layers: 32
  hidden: 4096
  experts: 8
  top_k: 2
  expert_parameters: 45.1B
)";

// kMoeHead followed by `rest`, whose first line is line 9.
std::string with_moe_head(std::string_view rest) {
  if (!rest.empty() && rest.front() == '\n') rest.remove_prefix(1);
  return std::string(kMoeHead) + std::string(rest);
}

TEST(ModelFileErrors, ExpertParallelMustDivideExpertsAndDp) {
  EXPECT_EQ(model_error(with_moe_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {dp: 12, ep: 3}
)")),
            "m.yaml:11:22: layout.ep: ep 3 does not divide model.experts 8");
  EXPECT_EQ(model_error(with_moe_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {dp: 4, ep: 8}
)")),
            "m.yaml:11:21: layout.ep: ep 8 does not divide dp 4: expert-parallel groups are made of DP ranks");
  EXPECT_EQ(model_error(with_moe_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {dp: 8, ep: 8, fsdp: true}
)")),
            "m.yaml:11:21: layout.ep: fsdp with expert parallelism (ep > 1) is not modelled; use one or the other");
}

TEST(ModelFileErrors, MixtureOfExpertsKeysNeedEachOther) {
  EXPECT_EQ(model_error(with_head(R"(  top_k: 2
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
)")),
            "m.yaml:6:10: model.top_k: top_k is for mixture-of-experts models: set model.experts too");
  EXPECT_EQ(model_error(R"(
name: m
model:
  parameters: 8B
  layers: 32
  hidden: 4096
  experts: 8
  top_k: 2
  expert_parameters: 9B
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
)"),
            "m.yaml:8:22: model.expert_parameters: expert_parameters 9B must be less than parameters 8B");
}

TEST(ModelFileErrors, DataNeedsOneEpochSizeAndOneBatchSize) {
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, samples: 100, sequence_length: 1000, batch_tokens: 1000}
step: {time: 1s}
)")),
            "m.yaml:6:29: data.samples: set tokens or samples, not both");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M}
step: {time: 1s}
)")),
            "m.yaml:6:7: data: needs batch_tokens (tokens per mini-batch) or batch_size (samples per mini-batch)");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_size: 64}
step: {time: 1s}
)")),
            "m.yaml:6:7: data: batch_size needs sequence_length (tokens per sample)");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1k, batch_tokens: 2k}
step: {time: 1s}
)")),
            "m.yaml:6:34: data.batch_tokens: one mini-batch (2000 tokens) is more than the epoch (1000 tokens)");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, sequence_length: 100, batch_size: 100}
step: {time: 1s}
layout: {dp: 8}
)")),
            "m.yaml:6:54: data.batch_size: batch_size 100 is not a multiple of layout.dp 8");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, sequence_length: 100, batch_size: 64}
step: {time: 1s}
layout: {dp: 8, pp: 16}
)")),
            "m.yaml:6:54: data.batch_size: batch_size 64 gives 8 samples per DP replica, not a multiple of "
            "layout.micro_batches 16 (the default, pp)");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: -5, batch_tokens: 1}
step: {time: 1s}
)")),
            "m.yaml:6:16: data.tokens: '-5' is not a count: counts cannot be negative (e.g. 70B)");
}

TEST(ModelFileErrors, StepAndTopLevel) {
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
)")),
            "m.yaml:1:1: missing required field 'step'");
  EXPECT_EQ(model_error(with_head(R"(
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s, comm_fraction: 0}
)")),
            "m.yaml:7:33: step.comm_fraction: comm_fraction must be above 0");
  EXPECT_EQ(model_error(with_head("")),
            "m.yaml:1:1: needs data (to model training) or inference (to model serving), or both");
  EXPECT_EQ(model_error(""),
            "m.yaml:1:1: the model file is empty: expected a mapping with name, model, layout and data or inference");
  EXPECT_EQ(model_error("name: [\n"), "m.yaml:2:1: YAML syntax error: end of sequence flow not found");
}

TEST(ModelFileErrors, EveryMistakeAtOnce) {
  const auto errors = model_errors(R"(
name: m
model: {parameters: 0, layers: 32, hidden: 4096}
data: {tokens: 1M, batch_tokens: 1000}
step: {time: 1s}
layout: {tp: 0, pp: 0}
)");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "m.yaml:2:21: model.parameters: parameters 0 is below the minimum 1");
}

TEST(ModelFile, MissingFileIsReported) {
  try {
    load_model_file("/nonexistent/model.yaml");
    ADD_FAILURE() << "expected ModelFileInvalid";
  } catch (const ModelFileInvalid& invalid) {
    ASSERT_EQ(invalid.errors().size(), 1u);
    EXPECT_EQ(invalid.errors()[0].to_string(),
              "/nonexistent/model.yaml: cannot read the model file: No such file or directory");
  }
}

// ---- the shipped examples ----------------------------------------------------------------------

std::vector<std::filesystem::path> shipped_models() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(tusk::build_paths::source_dir()) / "models")) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(ShippedModels, ThereAreAtLeastThree) {
  EXPECT_GE(shipped_models().size(), 3u);
}

TEST(ShippedModels, EveryOneLoadsAndHasNetworkTraffic) {
  for (const auto& path : shipped_models()) {
    SCOPED_TRACE(path.string());
    try {
      const auto spec = load_model_file(path.string());
      EXPECT_FALSE(spec.name.empty());
      EXPECT_FALSE(spec.description.empty());
      const auto report = traffic::analyse(spec);
      EXPECT_FALSE(report.training.empty());
      EXPECT_GT(report.network_rank_bytes_per_step, 0);
      EXPECT_FALSE(report.comparison.empty());
    } catch (const ModelFileInvalid& error) {
      ADD_FAILURE() << error.what();
    }
  }
}

}  // namespace
}  // namespace tusk
