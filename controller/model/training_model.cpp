#include "controller/model/training_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/rates.hpp"

namespace tusk::traffic {

// ---- the collective algorithms -----------------------------------------------------------------

namespace algorithm {

double ring_all_reduce(double bytes, double group) {
  return group <= 1 ? 0 : 2 * (group - 1) / group * bytes;
}
double all_gather(double bytes, double group) {
  return group <= 1 ? 0 : (group - 1) / group * bytes;
}
double reduce_scatter(double bytes, double group) {
  return group <= 1 ? 0 : (group - 1) / group * bytes;
}
double all_to_all(double bytes, double group) {
  return group <= 1 ? 0 : (group - 1) / group * bytes;
}

}  // namespace algorithm

// ---- the published full-mesh accounting --------------------------------------------------------

namespace full_mesh {
namespace {
// The published constants assume 2 bytes per element.
double bf16_scale(double bytes_per_element) {
  return bytes_per_element / 2;
}
}  // namespace

double data_parallel_per_minibatch(double parameters, double group, double bytes_per_element) {
  return bf16_scale(bytes_per_element) * 2 * parameters * group * (group - 1);
}

double fsdp_per_epoch(double minibatches, double parameters, double group, double bytes_per_element) {
  return bf16_scale(bytes_per_element) * 4 * minibatches * parameters * (group - 1);
}

double tensor_parallel_per_epoch(double tokens, double minibatches, double layers, double hidden, double parameters,
                                 double group, double bytes_per_element) {
  return bf16_scale(bytes_per_element) *
         (4 * tokens * layers * hidden * group * (group - 1) + 4 * minibatches * layers * parameters * (group - 1));
}

double pipeline_per_epoch(double tokens, double hidden, double group, double bytes_per_element) {
  return bf16_scale(bytes_per_element) * 4 * tokens * hidden * (group - 1);
}

ThreeD three_d_per_epoch(double minibatches, double tokens, double parameters, double layers, double hidden, double tp,
                         double pp, double dp, double bytes_per_element) {
  const double s = bf16_scale(bytes_per_element);
  const double n = minibatches, t = tokens, p = parameters, l = layers, h = hidden;
  ThreeD result;
  result.backward = s * (2 * n * p * dp * (2 * l * (tp - 1) / pp + (dp - 1)) + 2 * t * h * (pp - 1));
  result.forward = s * (4 * t * h * l * tp * (tp - 1) + 2 * t * h * (pp - 1));
  result.data = s * 2 * n * p * dp * (dp - 1);
  result.tensor = s * (2 * n * p * dp * 2 * l * (tp - 1) / pp + 4 * t * h * l * tp * (tp - 1));
  result.pipeline = s * (2 * t * h * (pp - 1) + 2 * t * h * (pp - 1));
  return result;
}

double inference_activations(double users, double prompt_tokens, double output_tokens, double layers, double hidden,
                             double tp, double bytes_per_element) {
  return bf16_scale(bytes_per_element) * 4 * users * (prompt_tokens + output_tokens) * layers * hidden * tp * (tp - 1);
}

double kv_cache(double users, double prompt_tokens, double layers, double hidden, double bytes_per_element) {
  return bf16_scale(bytes_per_element) * 4 * users * prompt_tokens * layers * hidden;
}

double checkpoint(double parameters, double bytes_per_parameter) {
  return bytes_per_parameter * parameters;
}

double dataset_load(double dataset_bytes, double tp) {
  return dataset_bytes * tp;
}

}  // namespace full_mesh

// ---- the report --------------------------------------------------------------------------------

const char* to_string(Family family) {
  switch (family) {
    case Family::DataParallel:
      return "data parallel";
    case Family::Fsdp:
      return "fsdp";
    case Family::TensorParallel:
      return "tensor parallel";
    case Family::Pipeline:
      return "pipeline";
    case Family::ExpertAllToAll:
      return "expert all-to-all";
    case Family::Checkpoint:
      return "checkpoint";
    case Family::Dataset:
      return "dataset load";
    case Family::InferenceActivations:
      return "inference activations";
    case Family::KvCache:
      return "kv-cache transfer";
  }
  return "?";
}

const char* to_string(Collective collective) {
  switch (collective) {
    case Collective::RingAllReduce:
      return "ring all-reduce";
    case Collective::RingAllGather:
      return "ring all-gather";
    case Collective::RingReduceScatter:
      return "ring reduce-scatter";
    case Collective::AllToAll:
      return "all-to-all";
    case Collective::SendRecv:
      return "send/recv";
    case Collective::StorageWrite:
      return "write to storage";
    case Collective::StorageRead:
      return "read from storage";
  }
  return "?";
}

double network_fraction(Collective collective, const Group& group) {
  if (collective == Collective::StorageWrite || collective == Collective::StorageRead) return 1;
  if (group.in_host || group.size <= 1) return 0;
  const double g = group.size, n = group.hosts, k = group.size / group.hosts;
  switch (collective) {
    case Collective::RingAllReduce:
    case Collective::RingAllGather:
    case Collective::RingReduceScatter:
      return ((n - 1) / n / k) / ((g - 1) / g);
    case Collective::AllToAll:
      return (g - k) / (g - 1);
    case Collective::SendRecv:
      return k <= 1 ? 1 : (n - 1) / (g - 1);
    default:
      return 1;
  }
}

double hosts_spanned(double size, double stride, double gpus_per_host) {
  if (size <= 1 || size * stride <= gpus_per_host) return 1;
  // Ranks `stride` apart: a host holds gpus_per_host / stride of them, or one when stride ≥ a host.
  const double per_host = stride >= gpus_per_host ? 1 : std::floor(gpus_per_host / stride);
  return std::ceil(size / per_host);
}

namespace {

Group make_group(std::string name, double size, double stride, double gpus_per_host) {
  Group group{std::move(name), size, stride, hosts_spanned(size, stride, gpus_per_host), false};
  group.in_host = group.hosts <= 1;
  return group;
}

TrafficRow make_row(std::string kind, Family family, Collective collective, Group group, std::string tensor,
                    double bytes_per_op, double ops_per_step) {
  TrafficRow row;
  row.kind = std::move(kind);
  row.family = family;
  row.collective = collective;
  row.group = std::move(group);
  row.tensor = std::move(tensor);
  row.bytes_per_op = bytes_per_op;
  row.ops_per_step = ops_per_step;
  return row;
}

// Storage traffic always leaves the host.
Group storage_group(std::string name, double ranks, double hosts) {
  return Group{std::move(name), ranks, 1, hosts, false};
}

std::string layout_name(const Layout& l) {
  const int degrees = (l.tp > 1) + (l.pp > 1) + (l.dp > 1);
  std::string ep = l.ep > 1 ? fmt::format(" + EP {}", l.ep) : "";
  if (l.fsdp) {
    if (l.tp == 1 && l.pp == 1) return fmt::format("FSDP (DP {}){}", l.dp, ep);
    return fmt::format("FSDP + model parallel (TP {} × PP {} × DP {}){}", l.tp, l.pp, l.dp, ep);
  }
  if (degrees > 1) return fmt::format("3D (TP {} × PP {} × DP {}){}", l.tp, l.pp, l.dp, ep);
  if (l.tp > 1) return fmt::format("tensor parallel (TP {}){}", l.tp, ep);
  if (l.pp > 1) return fmt::format("pipeline parallel (PP {}){}", l.pp, ep);
  if (l.dp > 1) return fmt::format("data parallel (DP {}){}", l.dp, ep);
  return "one GPU";
}

class Analysis {
 public:
  explicit Analysis(const TrainingSpec& spec) : spec_(spec), m_(spec.model), l_(spec.layout) {}

  TrafficReport run() {
    report_.layout_name = layout_name(l_);
    report_.gpus = l_.gpus();
    report_.hosts = std::ceil(report_.gpus / l_.gpus_per_host);
    if (spec_.data) training(*spec_.data);
    if (spec_.inference) serving(*spec_.inference);
    return std::move(report_);
  }

 private:
  double b() const { return m_.bytes_per_element; }

  void add(TrafficRow row) {
    row.bandwidth_bps = throughput_bps(row.rank_bytes_per_step, report_.window_s);
    row.network_rank_bytes_per_step = row.rank_bytes_per_step * network_fraction(row.collective, row.group);
    if (row.collective == Collective::StorageWrite || row.collective == Collective::StorageRead) {
      report_.storage_rank_bytes_per_step += row.rank_bytes_per_step;
    } else {
      report_.network_rank_bytes_per_step += row.network_rank_bytes_per_step;
      report_.in_host_rank_bytes_per_step += row.rank_bytes_per_step - row.network_rank_bytes_per_step;
    }
    report_.training.push_back(std::move(row));
  }

  double family_bytes(Family family, const std::vector<TrafficRow>& rows, double scale) const {
    double sum = 0;
    for (const auto& row : rows) {
      if (row.family == family) sum += row.all_ranks_bytes_per_step * scale;
    }
    return sum;
  }

  void training(const DataSpec& data) {
    report_.minibatches = data.minibatches();
    report_.tokens_per_epoch = data.tokens_per_epoch;
    report_.tokens_per_step = data.tokens_per_step;
    // Tokens one model replica (one DP rank's TP × PP ranks) processes per step.
    const double replica_tokens = data.tokens_per_step / l_.dp;
    report_.tokens_per_replica_step = replica_tokens;
    report_.window_s = spec_.step.time_s * spec_.step.comm_fraction;

    data_parallel_rows();
    fsdp_rows();
    tensor_parallel_rows(replica_tokens);
    pipeline_rows(data, replica_tokens);
    expert_rows(replica_tokens);
    checkpoint_row();
    dataset_row(data);

    report_.network_rank_bps = throughput_bps(report_.network_rank_bytes_per_step, report_.window_s);
    report_.network_nic_bps = report_.network_rank_bps * l_.gpus_per_host / l_.nics_per_host;
    report_.in_host_rank_bps = throughput_bps(report_.in_host_rank_bytes_per_step, report_.window_s);
    report_.storage_rank_bps = throughput_bps(report_.storage_rank_bytes_per_step, report_.window_s);

    compare_training(data);
  }

  // Gradients, DP: after each step every DP group all-reduces the gradients of the parameters its
  // ranks hold. With TP × PP model parallelism a rank holds P/(TP·PP) of them, so
  // S = b·P/(TP·PP). With expert parallelism the experts are split over EP ranks and replicated
  // only across the DP/EP "expert-data-parallel" group, so the dense and expert gradients are two
  // all-reduces over different groups. Counted as one all-reduce per step (DDP buckets split it
  // into many, with the same bytes).
  void data_parallel_rows() {
    const double tp = l_.tp, pp = l_.pp, dp = l_.dp, ep = l_.ep, world = l_.gpus(), gph = l_.gpus_per_host;
    const bool expert_parallel = m_.experts > 0 && l_.ep > 1;
    if (l_.fsdp || dp <= 1) return;
    const double dense = expert_parallel ? m_.dense_parameters() : m_.parameters;
    const double s = b() * dense / (tp * pp);
    TrafficRow row = make_row(
        expert_parallel ? "dp gradient all-reduce (dense)" : "dp gradient all-reduce", Family::DataParallel,
        Collective::RingAllReduce, make_group("dp", dp, tp, gph),
        expert_parallel ? "gradients of (P − P_experts)/(TP·PP) parameters" : "gradients of P/(TP·PP) parameters", s,
        1);
    row.rank_bytes_per_step = algorithm::ring_all_reduce(s, dp);
    row.all_ranks_bytes_per_step = world * row.rank_bytes_per_step;
    add(row);
    if (expert_parallel && dp / ep > 1) {
      const double se = b() * m_.expert_parameters / (tp * pp * ep);
      TrafficRow expert = make_row("dp gradient all-reduce (experts)", Family::DataParallel, Collective::RingAllReduce,
                                   make_group("expert-dp", dp / ep, tp * ep, gph),
                                   "gradients of P_experts/(TP·PP·EP) parameters", se, 1);
      expert.rank_bytes_per_step = algorithm::ring_all_reduce(se, dp / ep);
      expert.all_ranks_bytes_per_step = world * expert.rank_bytes_per_step;
      add(expert);
    }
  }

  // FSDP (FULL_SHARD, ZeRO-3) over the DP group: per step the parameters are all-gathered for the
  // forward pass, freed, all-gathered again for the backward pass, and the gradients are
  // reduce-scattered; S = b·P/(TP·PP), the unsharded size. One FSDP unit per layer, so each is
  // L/PP collectives of S/(L/PP).
  void fsdp_rows() {
    const double tp = l_.tp, pp = l_.pp, dp = l_.dp, world = l_.gpus(), gph = l_.gpus_per_host;
    if (!l_.fsdp || dp <= 1) return;
    const double s = b() * m_.parameters / (tp * pp);
    const double units = m_.layers / pp;
    const Group group = make_group("dp", dp, tp, gph);
    const char* tensor = "parameters (gradients) of P/(TP·PP), one layer at a time";
    TrafficRow forward =
        make_row("fsdp all-gather (forward)", Family::Fsdp, Collective::RingAllGather, group, tensor, s / units, units);
    forward.rank_bytes_per_step = algorithm::all_gather(s, dp);
    forward.all_ranks_bytes_per_step = world * forward.rank_bytes_per_step;
    forward.note = "with gradient accumulation the all-gathers repeat for every micro-batch";
    TrafficRow backward = forward;
    backward.kind = "fsdp all-gather (backward)";
    backward.note = "parameters freed after the forward pass are gathered again";
    TrafficRow scatter = make_row("fsdp gradient reduce-scatter", Family::Fsdp, Collective::RingReduceScatter, group,
                                  tensor, s / units, units);
    scatter.rank_bytes_per_step = algorithm::reduce_scatter(s, dp);
    scatter.all_ranks_bytes_per_step = world * scatter.rank_bytes_per_step;
    add(forward);
    add(backward);
    add(scatter);
  }

  // TP (Megatron-LM): per layer two all-reduces of the activations forward (after attention and
  // after the MLP) and two of their gradients backward, each S = b·H × the micro-batch's tokens.
  // A rank runs L/PP layers for each of its replica's micro-batches.
  void tensor_parallel_rows(double replica_tokens) {
    const double tp = l_.tp, pp = l_.pp, world = l_.gpus(), gph = l_.gpus_per_host;
    const double micro = std::max<double>(1, l_.micro_batches);
    if (tp <= 1) return;
    const double s = b() * m_.hidden * replica_tokens / micro;
    const double ops = 4 * (double(m_.layers) / pp) * micro;
    TrafficRow row = make_row("tp activation all-reduce", Family::TensorParallel, Collective::RingAllReduce,
                              make_group("tp", tp, 1, gph), "activations: H × tokens of a micro-batch", s, ops);
    row.rank_bytes_per_step = ops * algorithm::ring_all_reduce(s, tp);
    row.all_ranks_bytes_per_step = world * row.rank_bytes_per_step;
    row.note =
        "2 forward + 2 backward per layer; sequence parallelism (all-gather + reduce-scatter) moves the same bytes; "
        "full activation recomputation adds 2 more per layer";
    add(row);
  }

  // PP: at each stage boundary the activations go forward and their gradients come back, b·H per
  // token. Each TP rank sends 1/TP of the tensor (Megatron's scatter/gather across the TP ranks),
  // so S = b·H × micro-batch tokens / TP. An inner stage sends both ways; with PP = 2 each rank
  // sends one way only.
  void pipeline_rows(const DataSpec& data, double replica_tokens) {
    const double tp = l_.tp, pp = l_.pp, dp = l_.dp, gph = l_.gpus_per_host;
    const double micro = std::max<double>(1, l_.micro_batches);
    if (pp <= 1) return;
    const double s = b() * m_.hidden * replica_tokens / micro / tp;
    const double directions = pp > 2 ? 2 : 1;
    TrafficRow row =
        make_row("pp activation send/recv", Family::Pipeline, Collective::SendRecv, make_group("pp", pp, tp * dp, gph),
                 "activations (gradients): H × micro-batch tokens / TP", s, directions * micro);
    row.rank_bytes_per_step = directions * micro * s;
    row.all_ranks_bytes_per_step = 2 * (pp - 1) * b() * m_.hidden * data.tokens_per_step;
    row.note =
        directions > 1 ? "an inner stage: forward activations out, backward gradients out" : "each stage sends one way";
    add(row);
  }

  // EP: in each MoE layer a rank dispatches each of its tokens to top_k experts and gets them back
  // (combine), forward and again backward: 4 all-to-alls per MoE layer per micro-batch. A rank's
  // send buffer is S = b·H·top_k × its tokens; with TP > 1 the tokens are split over the TP ranks
  // (sequence parallel) and the experts are TP-split too. Routing is assumed uniform.
  void expert_rows(double replica_tokens) {
    const double tp = l_.tp, pp = l_.pp, ep = l_.ep, world = l_.gpus(), gph = l_.gpus_per_host;
    const double micro = std::max<double>(1, l_.micro_batches);
    const bool expert_parallel = m_.experts > 0 && l_.ep > 1;
    if (!expert_parallel) return;
    const double moe_layers = m_.moe_layers > 0 ? m_.moe_layers : m_.layers;
    const double s = b() * m_.hidden * m_.top_k * replica_tokens / tp / micro;
    const double ops = 4 * (moe_layers / pp) * micro;
    TrafficRow row = make_row("ep token all-to-all", Family::ExpertAllToAll, Collective::AllToAll,
                              make_group("ep", ep, tp, gph), "tokens × top_k × H of a micro-batch", s, ops);
    row.rank_bytes_per_step = ops * algorithm::all_to_all(s, ep);
    row.all_ranks_bytes_per_step = world * row.rank_bytes_per_step;
    row.note = "dispatch + combine, forward and backward, per MoE layer; uniform routing";
    add(row);
  }

  // Checkpoint: every rank writes an equal share of bytes_per_parameter·P (distributed
  // checkpointing), once every `every_steps` steps; per step the cost is amortised.
  void checkpoint_row() {
    const double world = l_.gpus();
    if (!spec_.checkpoint) return;
    const double total = full_mesh::checkpoint(m_.parameters, spec_.checkpoint->bytes_per_parameter);
    const double every = spec_.checkpoint->every_steps;
    TrafficRow row = make_row("checkpoint write", Family::Checkpoint, Collective::StorageWrite,
                              storage_group("all ranks -> storage", world, report_.hosts),
                              fmt::format("{:g} bytes per parameter, 1/G each", spec_.checkpoint->bytes_per_parameter),
                              total / world, 1 / every);
    row.rank_bytes_per_step = total / world / every;
    row.all_ranks_bytes_per_step = total / every;
    row.note = "amortised over the steps between checkpoints; a blocking checkpoint needs its share in its stall time";
    add(row);
  }

  // Dataset: each DP replica reads its 1/DP of the data; only the first pipeline stage reads
  // input, and each of its TP ranks reads the same samples: D·TP per epoch in all.
  void dataset_row(const DataSpec& data) {
    const double tp = l_.tp, dp = l_.dp;
    const double n = data.minibatches();
    if (!data.dataset_bytes) return;
    const double d = *data.dataset_bytes;
    TrafficRow row = make_row("dataset read", Family::Dataset, Collective::StorageRead,
                              storage_group("first-stage ranks <- storage", tp * dp, report_.hosts),
                              "D/(DP·N) per step", d / dp / n, 1);
    row.rank_bytes_per_step = d / dp / n;
    row.all_ranks_bytes_per_step = d * tp / n;
    row.note = "received, not sent";
    add(row);
  }

  void compare_training(const DataSpec& data) {
    const double tp = l_.tp, pp = l_.pp, dp = l_.dp, n = data.minibatches(), t = data.tokens_per_epoch;
    const double p = m_.parameters, layers = m_.layers, h = m_.hidden;
    const auto td = full_mesh::three_d_per_epoch(n, t, p, layers, h, tp, pp, dp, b());
    const bool pure = (tp > 1) + (pp > 1) + (dp > 1) <= 1;
    const auto& rows = report_.training;
    auto has = [&rows](Family family) {
      return std::any_of(rows.begin(), rows.end(), [family](const TrafficRow& row) { return row.family == family; });
    };
    auto add = [&](Family family, std::string formula, std::optional<double> full, std::string note) {
      report_.comparison.push_back({family, std::move(formula), full, family_bytes(family, rows, n), std::move(note)});
    };
    if (has(Family::DataParallel)) {
      add(Family::DataParallel, pure ? "2·P·G·(G−1) per mini-batch × N" : "3D: 2·N·P·Gdp·(Gdp−1)", td.data,
          l_.ep > 1 && m_.experts > 0 ? "published without expert parallelism: every parameter over all of DP" : "");
    }
    if (has(Family::Fsdp)) {
      add(Family::Fsdp, "4·N·P·(G−1), G = DP", full_mesh::fsdp_per_epoch(n, p, dp, b()),
          std::string("the algorithm also counts the backward re-gather (3 collectives a step, the formula 2)") +
              (tp * pp > 1 ? "; published for FSDP alone, applied per TP·PP shard group (the same sum)" : ""));
    }
    if (has(Family::TensorParallel)) {
      add(Family::TensorParallel,
          pure ? "4·T·L·H·G·(G−1) + 4·N·L·P·(G−1)" : "3D: 4·N·P·Gdp·L·(Gtp−1)/Gpp + 4·T·H·L·Gtp·(Gtp−1)", td.tensor,
          "the N·P term (weights, gradients) has no counterpart in Megatron TP, which moves only activations");
    }
    if (has(Family::Pipeline)) {
      add(Family::Pipeline, pure ? "4·T·H·(G−1)" : "3D: 4·T·H·(Gpp−1)", td.pipeline, "");
    }
    if (has(Family::ExpertAllToAll)) {
      add(Family::ExpertAllToAll, "(none published)", std::nullopt, "");
    }
    if (has(Family::Checkpoint)) {
      const double checkpoints = n / spec_.checkpoint->every_steps;
      add(Family::Checkpoint, fmt::format("{:g}·P per checkpoint × N/every", spec_.checkpoint->bytes_per_parameter),
          full_mesh::checkpoint(p, spec_.checkpoint->bytes_per_parameter) * checkpoints, "");
    }
    if (has(Family::Dataset)) {
      add(Family::Dataset, "D (DP, PP), D·G (TP), D·Gtp (3D)", full_mesh::dataset_load(*data.dataset_bytes, tp), "");
    }
    if (!pure && !l_.fsdp) report_.three_d = td;
  }

  // Serving: one round is U requests, each a prefill of Sin tokens and Sout decode passes, spread
  // evenly over the replicas; rows are per rank of one replica for one such round.
  void serving(const InferenceSpec& inference) {
    const double tp = inference.tp, gph = l_.gpus_per_host, replicas = inference.replicas;
    const double users = inference.users, sin = inference.prompt_tokens, sout = inference.output_tokens;
    const double layers = m_.layers, h = m_.hidden;
    const double kv_width = m_.kv_hidden > 0 ? m_.kv_hidden : m_.hidden;
    auto bandwidth = [&inference](double bytes) {
      return inference.period_s ? throughput_bps(bytes, *inference.period_s) : 0;
    };
    std::vector<TrafficRow>& rows = report_.inference;

    // TP activations: 2 all-reduces per layer per forward pass (attention, MLP) of b·H per token;
    // a replica's U/replicas·(Sin + Sout) tokens pass all L layers.
    if (tp > 1) {
      const double reduced = 2 * layers * (users / replicas) * (sin + sout) * h * b();
      const double passes = 1 + sout;
      TrafficRow row = make_row("inference tp all-reduce", Family::InferenceActivations, Collective::RingAllReduce,
                                make_group("tp", tp, 1, gph), "activations: H × tokens of a forward pass",
                                reduced / (2 * layers * passes), 2 * layers * passes);
      row.rank_bytes_per_step = algorithm::ring_all_reduce(reduced, tp);
      row.all_ranks_bytes_per_step = replicas * tp * row.rank_bytes_per_step;
      row.bandwidth_bps = bandwidth(row.rank_bytes_per_step);
      row.network_rank_bytes_per_step = row.rank_bytes_per_step * network_fraction(row.collective, row.group);
      row.note = "one prefill pass and Sout decode passes; bytes per op is their mean";
      rows.push_back(row);
    }

    // KV cache (disaggregated serving): the prefill replica's K and V, 2·b·Sin·L·kv_hidden per
    // request, go to a decode replica on another host; each TP rank sends its share of the heads.
    {
      const double per_user = 2 * b() * sin * layers * kv_width;
      TrafficRow row = make_row("kv-cache transfer", Family::KvCache, Collective::SendRecv,
                                Group{"prefill -> decode", 2, 1, 2, false},
                                "K and V of the prompt: 2 × Sin × L × kv_hidden", per_user / tp, users / replicas);
      row.rank_bytes_per_step = users / replicas * per_user / tp;
      row.all_ranks_bytes_per_step = users * per_user;
      row.bandwidth_bps = bandwidth(row.rank_bytes_per_step);
      row.network_rank_bytes_per_step = row.rank_bytes_per_step;
      row.note = kv_width < h ? "kv_hidden < H (grouped-query attention); the published formula uses H" : "";
      rows.push_back(row);
    }

    for (const auto& row : rows) {
      if (row.family == Family::InferenceActivations) {
        report_.comparison.push_back({row.family, "4·U·(Sin+Sout)·L·H·Gtp·(Gtp−1)",
                                      full_mesh::inference_activations(users, sin, sout, layers, h, tp, b()),
                                      row.all_ranks_bytes_per_step, "per round of U requests"});
      } else {
        report_.comparison.push_back({row.family, "4·U·Sin·L·H", full_mesh::kv_cache(users, sin, layers, h, b()),
                                      row.all_ranks_bytes_per_step, "per round of U requests"});
      }
    }
  }

  const TrainingSpec& spec_;
  const ModelSpec& m_;
  const Layout& l_;
  TrafficReport report_;
};

}  // namespace

TrafficReport analyse(const TrainingSpec& spec) {
  return Analysis(spec).run();
}

}  // namespace tusk::traffic
