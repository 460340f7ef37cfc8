#include "controller/model/training_model_printer.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "common/units.hpp"

namespace tusk::traffic {
namespace {

using plain_json = nlohmann::json;  // not `json`: the report files alias that as ordered_json

// What every printed number rests on; the JSON carries the same list.
const std::vector<std::string_view> kAssumptions{
    "wire bytes are what one rank sends by the collective algorithm: ring all-reduce 2(G-1)/G*S, "
    "all-gather and reduce-scatter (G-1)/G*S, all-to-all (G-1)/G*S, pipeline send/recv S",
    "ranks are ordered as Megatron-LM orders them (TP fastest, then DP with EP inside it, then PP), "
    "gpus_per_host consecutive ranks to a host",
    "bandwidth = bytes per step / (step time x comm_fraction); all kinds share that window, so the "
    "need of a rank is the sum over the rows (an upper bound: no rank is in every row)",
    "a group with k ranks on each of n hosts uses a host-aware collective (as NCCL does): the network part of "
    "an all-reduce is 2(n-1)/n*S/k per rank, of an all-gather or reduce-scatter (n-1)/n*S/k, of an "
    "all-to-all (G-k)/G*S; the rest stays on NVLink",
    "per NIC = per rank x gpus_per_host / nics_per_host; storage traffic is shown apart (it often uses the "
    "front-end network)",
    "the full-mesh column is the published formulas as printed (2 bytes per element; scaled by "
    "bytes_per_element/2 otherwise), summed over all ranks",
};

std::string bytes_text(double bytes, bool binary) {
  return format_bytes(bytes, binary);
}

std::string rate_text(double bps) {
  return bps > 0 ? units::format_bit_rate(bps) : "-";
}

// "1", "4.00 k", or "1/500" for something that happens once every 500 steps.
std::string ops_text(double ops) {
  if (ops > 0 && ops < 1) return fmt::format("1/{:.0f}", 1 / ops);
  return units::format_count(ops);
}

// Which links carry a row: NVLink only, the network only, both (a group with several ranks on each
// host), or storage.
std::string where(const TrafficRow& row) {
  if (row.collective == Collective::StorageWrite || row.collective == Collective::StorageRead) return "storage";
  if (row.network_rank_bytes_per_step <= 0) return "NVLink";
  return row.network_rank_bytes_per_step < row.rank_bytes_per_step ? "both" : "network";
}

bool is_storage(const TrafficRow& row) {
  return row.collective == Collective::StorageWrite || row.collective == Collective::StorageRead;
}

// "70.6 B", "15.0 T": counts of parameters and tokens as the field writes them.
std::string count_text(double count) {
  if (count < 1e5 && count == std::floor(count)) return fmt::format("{:.0f}", count);
  std::string text = units::format_count(count);
  if (text.size() > 2 && text.ends_with(" G")) text.back() = 'B';
  return text;
}

std::string group_text(const Group& group) {
  if (group.name.find("storage") != std::string::npos) return fmt::format("{:.0f} ranks", group.size);
  if (group.name.find("prefill") == 0) return "prefill->decode";
  if (group.in_host) return fmt::format("{} {:.0f} (1 host)", group.name, group.size);
  const double per_host = group.size / group.hosts;
  if (per_host > 1)
    return fmt::format("{} {:.0f} ({:.0f} hosts x {:g})", group.name, group.size, group.hosts, per_host);
  return fmt::format("{} {:.0f} ({:.0f} hosts)", group.name, group.size, group.hosts);
}

std::string ratio_text(const Comparison& c) {
  if (!c.full_mesh_bytes || c.algorithm_bytes <= 0) return "-";
  return fmt::format("{:.3g}x", *c.full_mesh_bytes / c.algorithm_bytes);
}

plain_json group_json(const Group& group) {
  return {{"name", group.name},
          {"size", group.size},
          {"stride", group.stride},
          {"hosts", group.hosts},
          {"in_host", group.in_host}};
}

plain_json optional_number(std::optional<double> value) {
  return value ? plain_json(*value) : plain_json(nullptr);
}

}  // namespace

std::string format_bytes(double bytes, bool binary) {
  static constexpr std::array<std::string_view, 9> kDecimal{"B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  static constexpr std::array<std::string_view, 9> kBinary{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  const auto& names = binary ? kBinary : kDecimal;
  const double base = binary ? 1024 : 1000;
  if (!std::isfinite(bytes)) return fmt::format("{} B", bytes);
  if (bytes < 0) return fmt::format("-{}", format_bytes(-bytes, binary));
  std::size_t i = 0;
  double scaled = bytes;
  while (i + 1 < names.size() && scaled >= base) {
    scaled /= base;
    ++i;
  }
  // Three significant digits; 999.7 kB would print as "1000 kB": say "1.00 MB" instead.
  auto digits = [](double v) { return v < 9.995 ? 2 : v < 99.95 ? 1 : 0; };
  const double shown = std::round(scaled * std::pow(10, digits(scaled))) / std::pow(10, digits(scaled));
  if (i + 1 < names.size() && shown >= base) {
    scaled /= base;
    ++i;
  }
  if (i == 0 && scaled == std::floor(scaled)) return fmt::format("{:.0f} B", scaled);
  return fmt::format("{:.{}f} {}", scaled, digits(scaled), names[i]);
}

std::string model_text(const TrainingSpec& spec, const TrafficReport& report, bool binary) {
  const ModelSpec& m = spec.model;
  const Layout& l = spec.layout;
  std::string out = fmt::format("model '{}' ({})\n", spec.name, spec.file);
  if (!spec.description.empty()) out += fmt::format("  {}\n", spec.description);
  out += fmt::format("  {} parameters, {} layers, hidden {}", count_text(m.parameters), m.layers, m.hidden);
  if (m.kv_hidden != m.hidden) out += fmt::format(" (K/V {})", m.kv_hidden);
  out += fmt::format(", {} bytes per element\n", m.bytes_per_element);
  if (m.experts > 0) {
    out += fmt::format("  mixture of experts: {} experts, top-{}, {} expert parameters in {} layers\n", m.experts,
                       m.top_k, count_text(m.expert_parameters), m.moe_layers);
  }
  out += fmt::format("  layout: {}: {:.0f} GPUs on {:.0f} hosts, {} GPUs and {} NICs per host\n", report.layout_name,
                     report.gpus, report.hosts, l.gpus_per_host, l.nics_per_host);

  if (spec.data) {
    const DataSpec& d = *spec.data;
    out += fmt::format(
        "  data: {} tokens per epoch, {} tokens per mini-batch ({} per DP replica in {} micro-batch{}) -> N = {} "
        "mini-batches per epoch\n",
        count_text(d.tokens_per_epoch), count_text(d.tokens_per_step), count_text(report.tokens_per_replica_step),
        l.micro_batches, l.micro_batches == 1 ? "" : "es", count_text(report.minibatches));
    const double epoch_s = report.minibatches * spec.step.time_s;
    out +=
        fmt::format("  step: {:g} s; communication window {:g} s ({:g}% of the step); an epoch takes {:.1f} days{}\n",
                    spec.step.time_s, report.window_s, spec.step.comm_fraction * 100, epoch_s / 86400,
                    d.epochs > 1 ? fmt::format(", {} epochs {:.1f} days", d.epochs, d.epochs * epoch_s / 86400) : "");

    out += "\ntraining: wire bytes one rank sends, by the collective algorithm (what Tusk replays)\n";
    constexpr std::string_view kRow = "  {:<33} {:<23} {:<19} {:<7} {:>9} {:>8} {:>9} {:>9} {:>12} {:>11}\n";
    out += fmt::format(kRow, "kind", "group", "algorithm", "where", "per op", "ops/step", "per step", "per epoch",
                       "needs", "network");
    for (const auto& row : report.training) {
      out += fmt::format(kRow, row.kind, group_text(row.group), to_string(row.collective), where(row),
                         bytes_text(row.bytes_per_op, binary), ops_text(row.ops_per_step),
                         bytes_text(row.rank_bytes_per_step, binary),
                         bytes_text(row.rank_bytes_per_step * report.minibatches, binary), rate_text(row.bandwidth_bps),
                         is_storage(row) ? "-" : bytes_text(row.network_rank_bytes_per_step, binary));
    }
    if (report.training.empty()) out += "  (none: every group has one rank)\n";
    out +=
        "  (per op: S of one collective; per step, per epoch: wire bytes per rank; needs: per step over the "
        "window; network: the part of per step that crosses hosts)\n";
    out += fmt::format("  per rank and step: network {} ({}), per NIC {}; NVLink {} ({}); storage {} ({})\n",
                       bytes_text(report.network_rank_bytes_per_step, binary), rate_text(report.network_rank_bps),
                       rate_text(report.network_nic_bps), bytes_text(report.in_host_rank_bytes_per_step, binary),
                       rate_text(report.in_host_rank_bps), bytes_text(report.storage_rank_bytes_per_step, binary),
                       rate_text(report.storage_rank_bps));
  }

  if (spec.inference) {
    const InferenceSpec& i = *spec.inference;
    out += fmt::format("\nserving: a round of {} requests ({} prompt + {} output tokens), TP {}, {} replica{}{}\n",
                       count_text(i.users), count_text(i.prompt_tokens), count_text(i.output_tokens), i.tp,
                       count_text(i.replicas), i.replicas == 1 ? "" : "s",
                       i.period_s ? fmt::format(", in {:g} s", *i.period_s) : "");
    constexpr std::string_view kRow = "  {:<33} {:<23} {:<19} {:<7} {:>9} {:>8} {:>9} {:>12}\n";
    out += fmt::format(kRow, "kind", "group", "algorithm", "where", "per op", "ops", "per round", "needs");
    for (const auto& row : report.inference) {
      out += fmt::format(kRow, row.kind, group_text(row.group), to_string(row.collective), where(row),
                         bytes_text(row.bytes_per_op, binary), ops_text(row.ops_per_step),
                         bytes_text(row.rank_bytes_per_step, binary), rate_text(row.bandwidth_bps));
    }
  }

  out +=
      "\npublished full-mesh accounting beside the algorithm's, all ranks summed (training: per epoch; serving: "
      "per round)\n";
  out += fmt::format("  {:<22} {:>11} {:>11} {:>10}  {}\n", "family", "full mesh", "algorithm", "ratio",
                     "published formula");
  for (const auto& c : report.comparison) {
    out += fmt::format("  {:<22} {:>11} {:>11} {:>10}  {}\n", to_string(c.family),
                       c.full_mesh_bytes ? bytes_text(*c.full_mesh_bytes, binary) : "-",
                       bytes_text(c.algorithm_bytes, binary), ratio_text(c), c.formula);
    if (!c.note.empty()) out += fmt::format("  {:<22} {}\n", "", c.note);
  }
  if (report.three_d) {
    double algorithm = 0;
    for (const auto& c : report.comparison) {
      if (c.family == Family::DataParallel || c.family == Family::TensorParallel || c.family == Family::Pipeline) {
        algorithm += c.algorithm_bytes;
      }
    }
    out += fmt::format("  {:<22} {:>11} {:>11} {:>10}  forward {} + backward {}\n", "3D total",
                       bytes_text(report.three_d->total(), binary), bytes_text(algorithm, binary),
                       algorithm > 0 ? fmt::format("{:.3g}x", report.three_d->total() / algorithm) : "-",
                       bytes_text(report.three_d->forward, binary), bytes_text(report.three_d->backward, binary));
  }
  bool any_note = false;
  for (const auto& row : report.training) any_note |= !row.note.empty();
  for (const auto& row : report.inference) any_note |= !row.note.empty();
  if (any_note) {
    out += "\nnotes\n";
    for (const auto* rows : {&report.training, &report.inference}) {
      for (const auto& row : *rows) {
        if (!row.note.empty()) out += fmt::format("  {}: {}\n", row.kind, row.note);
      }
    }
  }
  out += "\nassumptions\n";
  for (const auto& assumption : kAssumptions) out += fmt::format("  - {}\n", assumption);
  return out;
}

plain_json model_json(const TrainingSpec& spec, const TrafficReport& report) {
  const ModelSpec& m = spec.model;
  const Layout& l = spec.layout;
  const double n = report.minibatches;
  plain_json out;
  out["schema"] = "tusk.model/1";
  out["name"] = spec.name;
  out["description"] = spec.description;
  out["file"] = spec.file;
  out["model"] = {{"parameters", m.parameters},
                  {"layers", m.layers},
                  {"hidden", m.hidden},
                  {"kv_hidden", m.kv_hidden},
                  {"bytes_per_element", m.bytes_per_element},
                  {"experts", m.experts},
                  {"top_k", m.top_k},
                  {"expert_parameters", m.expert_parameters},
                  {"moe_layers", m.moe_layers}};
  out["layout"] = {{"name", report.layout_name},
                   {"tp", l.tp},
                   {"pp", l.pp},
                   {"dp", l.dp},
                   {"ep", l.ep},
                   {"fsdp", l.fsdp},
                   {"gpus", report.gpus},
                   {"hosts", report.hosts},
                   {"gpus_per_host", l.gpus_per_host},
                   {"nics_per_host", l.nics_per_host},
                   {"micro_batches", l.micro_batches}};
  out["data"] = nullptr;
  out["step"] = nullptr;
  out["training"] = plain_json::array();
  out["totals"] = nullptr;
  if (spec.data) {
    out["data"] = {{"tokens_per_epoch", report.tokens_per_epoch},
                   {"tokens_per_step", report.tokens_per_step},
                   {"tokens_per_replica_step", report.tokens_per_replica_step},
                   {"minibatches_per_epoch", n},
                   {"epochs", spec.data->epochs},
                   {"dataset_bytes", optional_number(spec.data->dataset_bytes)}};
    out["step"] = {
        {"time_s", spec.step.time_s}, {"comm_fraction", spec.step.comm_fraction}, {"window_s", report.window_s}};
    for (const auto& row : report.training) {
      out["training"].push_back({{"kind", row.kind},
                                 {"family", to_string(row.family)},
                                 {"algorithm", to_string(row.collective)},
                                 {"group", group_json(row.group)},
                                 {"where", where(row)},
                                 {"tensor", row.tensor},
                                 {"bytes_per_op", row.bytes_per_op},
                                 {"ops_per_step", row.ops_per_step},
                                 {"ops_per_epoch", row.ops_per_step * n},
                                 {"rank_bytes_per_step", row.rank_bytes_per_step},
                                 {"rank_bytes_per_epoch", row.rank_bytes_per_step * n},
                                 {"all_ranks_bytes_per_step", row.all_ranks_bytes_per_step},
                                 {"all_ranks_bytes_per_epoch", row.all_ranks_bytes_per_step * n},
                                 {"bandwidth_bps", row.bandwidth_bps},
                                 {"network_rank_bytes_per_step", row.network_rank_bytes_per_step},
                                 {"note", row.note}});
    }
    out["totals"] = {{"network_rank_bytes_per_step", report.network_rank_bytes_per_step},
                     {"network_rank_bps", report.network_rank_bps},
                     {"network_nic_bps", report.network_nic_bps},
                     {"in_host_rank_bytes_per_step", report.in_host_rank_bytes_per_step},
                     {"in_host_rank_bps", report.in_host_rank_bps},
                     {"storage_rank_bytes_per_step", report.storage_rank_bytes_per_step},
                     {"storage_rank_bps", report.storage_rank_bps}};
  }
  out["inference"] = nullptr;
  if (spec.inference) {
    const InferenceSpec& i = *spec.inference;
    plain_json rows = plain_json::array();
    for (const auto& row : report.inference) {
      rows.push_back({{"kind", row.kind},
                      {"family", to_string(row.family)},
                      {"algorithm", to_string(row.collective)},
                      {"group", group_json(row.group)},
                      {"where", where(row)},
                      {"tensor", row.tensor},
                      {"bytes_per_op", row.bytes_per_op},
                      {"ops_per_round", row.ops_per_step},
                      {"rank_bytes_per_round", row.rank_bytes_per_step},
                      {"network_rank_bytes_per_round", row.network_rank_bytes_per_step},
                      {"all_ranks_bytes_per_round", row.all_ranks_bytes_per_step},
                      {"bandwidth_bps", i.period_s ? plain_json(row.bandwidth_bps) : plain_json(nullptr)},
                      {"note", row.note}});
    }
    out["inference"] = {
        {"users", i.users}, {"prompt_tokens", i.prompt_tokens}, {"output_tokens", i.output_tokens},
        {"tp", i.tp},       {"replicas", i.replicas},           {"period_s", optional_number(i.period_s)},
        {"rows", rows}};
  }
  plain_json comparison = plain_json::array();
  for (const auto& c : report.comparison) {
    comparison.push_back(
        {{"family", to_string(c.family)},
         {"formula", c.formula},
         {"full_mesh_bytes", optional_number(c.full_mesh_bytes)},
         {"algorithm_bytes", c.algorithm_bytes},
         {"per", c.family == Family::InferenceActivations || c.family == Family::KvCache ? "round" : "epoch"},
         {"note", c.note}});
  }
  out["comparison"] = comparison;
  out["three_d"] = nullptr;
  if (report.three_d) {
    out["three_d"] = {{"forward", report.three_d->forward}, {"backward", report.three_d->backward},
                      {"total", report.three_d->total()},   {"data", report.three_d->data},
                      {"tensor", report.three_d->tensor},   {"pipeline", report.three_d->pipeline}};
  }
  out["assumptions"] = kAssumptions;
  return out;
}

}  // namespace tusk::traffic
