// A model of the communication of an AI training job (and, optionally, of serving the model): for
// each kind of communication the bytes a rank sends per step and per epoch, how often, and the
// bandwidth that needs for a given step time; and, side by side, the full-mesh accounting of the
// published AI-datacenter traffic analyses, so that Tusk's numbers can be compared with theirs.
//
// Two accountings, kept apart on purpose:
// - `algorithm::`: the bytes a rank really puts on the wire for one collective of S bytes over G
//   ranks (ring all-reduce 2(G−1)/G·S, all-gather and reduce-scatter (G−1)/G·S, all-to-all
//   (G−1)/G·S, pipeline send/recv S). This is what Tusk replays.
// - `full_mesh::`: the formulas of the published analyses, which count every rank sending its whole
//   tensor to every other rank of the group (hence the G·(G−1) factors). They are printed next to
//   the algorithm's totals for comparison, never used to size traffic.
//
// Everything here is a pure function of the spec (no I/O, no state); sizes are doubles because a
// job's traffic per epoch runs to exabytes, far past what a uint64 of bytes can hold once multiplied
// out, and a model needs three significant digits, not exact bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tusk::traffic {

// ---- the spec ----------------------------------------------------------------------------------

struct ModelSpec {
  double parameters = 0;                // P: every parameter, experts included
  std::uint32_t layers = 0;             // L: transformer layers
  std::uint32_t hidden = 0;             // H: hidden size (model width)
  std::uint32_t kv_hidden = 0;          // width of K (and of V) per layer; GQA: kv heads × head dim
  std::uint32_t bytes_per_element = 2;  // b: 2 for BF16 activations, gradients and weights
  std::uint32_t experts = 0;            // 0: a dense model
  std::uint32_t top_k = 0;              // experts each token is routed to
  double expert_parameters = 0;         // parameters of all experts of all layers together
  std::uint32_t moe_layers = 0;         // layers with experts

  double dense_parameters() const { return parameters - expert_parameters; }
};

struct DataSpec {
  double tokens_per_epoch = 0;  // T
  double tokens_per_step = 0;   // the global batch (one mini-batch), in tokens
  std::uint32_t epochs = 1;
  std::optional<double> dataset_bytes;  // D: bytes read from storage per epoch

  // N: mini-batches (optimizer steps) per epoch; not always whole when T is a round figure.
  double minibatches() const { return tokens_per_epoch / tokens_per_step; }
};

// Ranks are numbered as Megatron-LM numbers them: TP fastest, then DP (expert-parallel groups are
// consecutive DP ranks), then PP. That order decides which groups stay inside a host.
struct Layout {
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  std::uint32_t dp = 1;
  std::uint32_t ep = 1;  // expert parallel: experts split over groups of `ep` DP ranks; divides dp
  bool fsdp = false;     // fully sharded data parallel (ZeRO-3) over the DP group
  std::uint32_t gpus_per_host = 8;
  std::uint32_t nics_per_host = 8;
  std::uint32_t micro_batches = 1;  // per model replica per step (pipeline micro-batches)

  double gpus() const { return double(tp) * pp * dp; }
};

struct StepSpec {
  double time_s = 0;         // one optimizer step
  double comm_fraction = 1;  // share of the step the communication may take (1: spread over it)
};

struct CheckpointSpec {
  double every_steps = 1;
  double bytes_per_parameter = 8;  // the published analyses' 8·P
};

// Serving: U users each sending a prompt of Sin tokens and receiving Sout tokens.
struct InferenceSpec {
  double users = 0;                // U
  double prompt_tokens = 0;        // Sin
  double output_tokens = 0;        // Sout
  std::uint32_t tp = 1;            // Gtp of the serving replicas
  double replicas = 1;             // the users are spread evenly over this many TP groups
  std::optional<double> period_s;  // the U requests are served in this time (for bandwidth)
};

struct TrainingSpec {
  std::string name;
  std::string description;
  std::string file;
  ModelSpec model;
  std::optional<DataSpec> data;  // absent: serving only
  Layout layout;
  StepSpec step;
  std::optional<CheckpointSpec> checkpoint;
  std::optional<InferenceSpec> inference;
};

// ---- the collective algorithms: bytes one rank sends -------------------------------------------

namespace algorithm {

// Ring all-reduce of S bytes over G ranks: G−1 reduce-scatter steps and G−1 all-gather steps, each
// sending S/G: 2(G−1)/G·S (Patarasuk & Yuan 2009; NCCL's ring). 0 for G = 1.
double ring_all_reduce(double bytes, double group);
// All-gather whose result is S bytes: each rank sends its S/G to G−1 ranks: (G−1)/G·S.
double all_gather(double bytes, double group);
// Reduce-scatter of an S-byte input: (G−1)/G·S.
double reduce_scatter(double bytes, double group);
// All-to-all of a rank's S-byte send buffer, S/G to each rank, itself included: (G−1)/G·S.
double all_to_all(double bytes, double group);

}  // namespace algorithm

// ---- the published full-mesh accounting --------------------------------------------------------
//
// Each formula is written as published, for 2 bytes per element (BF16), with b = 2; for another
// `bytes_per_element` every term scales by b/2 (the checkpoint's 8 bytes per parameter and the
// dataset do not). N mini-batches and T tokens per epoch; results are bytes summed over all ranks.

namespace full_mesh {

// Data parallel: every rank sends its whole gradient (b·P) to every other rank, per mini-batch:
// 2·P·G·(G−1).
double data_parallel_per_minibatch(double parameters, double group, double bytes_per_element = 2);
// FSDP: all-gather of parameters and reduce-scatter of gradients, per epoch: 4·N·P·(G−1).
double fsdp_per_epoch(double minibatches, double parameters, double group, double bytes_per_element = 2);
// Tensor parallel, per epoch: activations 4·T·L·H·G·(G−1) plus 4·N·L·P·(G−1).
double tensor_parallel_per_epoch(double tokens, double minibatches, double layers, double hidden, double parameters,
                                 double group, double bytes_per_element = 2);
// Pipeline, per epoch: activations forward and gradients backward at each of G−1 stage boundaries:
// 4·T·H·(G−1).
double pipeline_per_epoch(double tokens, double hidden, double group, double bytes_per_element = 2);

// 3D parallel per epoch, as published:
//   backward 2·N·P·Gdp·[2·L·(Gtp−1)/Gpp + (Gdp−1)] + 2·T·H·(Gpp−1)
//   forward  4·T·H·L·Gtp·(Gtp−1) + 2·T·H·(Gpp−1)
// and the same bytes regrouped by the parallelism that causes them, which is how the report sets
// them beside the algorithm's rows. Each part reduces to the pure formula above when the other two
// degrees are 1 (data: N × data_parallel_per_minibatch; tensor: tensor_parallel_per_epoch;
// pipeline: pipeline_per_epoch).
struct ThreeD {
  double forward = 0;
  double backward = 0;
  double data = 0;      // 2·N·P·Gdp·(Gdp−1)
  double tensor = 0;    // 2·N·P·Gdp·2·L·(Gtp−1)/Gpp + 4·T·H·L·Gtp·(Gtp−1)
  double pipeline = 0;  // 2·T·H·(Gpp−1) backward + 2·T·H·(Gpp−1) forward

  double total() const { return forward + backward; }
};
ThreeD three_d_per_epoch(double minibatches, double tokens, double parameters, double layers, double hidden, double tp,
                         double pp, double dp, double bytes_per_element = 2);

// Serving U users, Sin prompt and Sout output tokens: tensor-parallel activations
// 4·U·(Sin+Sout)·L·H·Gtp·(Gtp−1).
double inference_activations(double users, double prompt_tokens, double output_tokens, double layers, double hidden,
                             double tp, double bytes_per_element = 2);
// The KV cache moved from prefill to decode: 4·U·Sin·L·H (K and V, 2 bytes each, full width H).
double kv_cache(double users, double prompt_tokens, double layers, double hidden, double bytes_per_element = 2);
// One checkpoint: 8·P.
double checkpoint(double parameters, double bytes_per_parameter = 8);
// Reading a D-byte dataset once: D for DP and PP, D·G for TP, D·Gtp for 3D; that is D·Gtp in every
// case, since only the first pipeline stage reads and each of its TP ranks reads the same samples.
double dataset_load(double dataset_bytes, double tp);

}  // namespace full_mesh

// ---- the report --------------------------------------------------------------------------------

// A communication group: `size` ranks `stride` apart in the rank order of Layout.
struct Group {
  std::string name;  // "dp", "tp", "pp", "ep", "expert-dp", "all ranks -> storage"
  double size = 1;
  double stride = 1;
  double hosts = 1;      // hosts one group spans
  bool in_host = false;  // every rank of the group on one host (NVLink), not network traffic
};

// How a row's bytes move.
enum class Collective {
  RingAllReduce,
  RingAllGather,
  RingReduceScatter,
  AllToAll,
  SendRecv,
  StorageWrite,
  StorageRead
};
const char* to_string(Collective collective);

// The share of a rank's wire bytes that crosses hosts, when `group` has k = size/hosts ranks on each
// of its n = hosts hosts and the collective is host-aware, as NCCL's are (reduce or gather inside
// the host over NVLink, then each GPU carries 1/k of the data across hosts on its own NIC):
//   all-reduce, all-gather, reduce-scatter: [(n−1)/n / k] / [(G−1)/G]  (1 when k = 1)
//   all-to-all: (G−k)/(G−1), the peers on other hosts
//   send/recv: 1 when k = 1, else (n−1)/(G−1), the stage boundaries that cross hosts
//   storage: 1; a group inside one host: 0.
double network_fraction(Collective collective, const Group& group);

// Which published formula a row is compared with.
enum class Family {
  DataParallel,
  Fsdp,
  TensorParallel,
  Pipeline,
  ExpertAllToAll,
  Checkpoint,
  Dataset,
  InferenceActivations,
  KvCache
};
const char* to_string(Family family);

struct TrafficRow {
  std::string kind;  // "dp gradient all-reduce"
  Family family;
  Collective collective = Collective::RingAllReduce;
  Group group;
  std::string tensor;              // what S is, e.g. "gradients of P/(TP·PP) parameters"
  double bytes_per_op = 0;         // S of one occurrence
  double ops_per_step = 0;         // per rank; fractional for checkpoints
  double rank_bytes_per_step = 0;  // wire bytes the busiest rank sends per step (algorithm)
  double all_ranks_bytes_per_step = 0;
  double bandwidth_bps = 0;                // rank_bytes_per_step over the communication window, in bits/s
  double network_rank_bytes_per_step = 0;  // the part that crosses hosts (network_fraction)
  std::string note;
  // Serving rows: "per step" means per round of U requests.
};

struct Comparison {
  Family family;
  std::string formula;                    // the published formula, as text
  std::optional<double> full_mesh_bytes;  // per epoch (serving: per round of U requests); none: not published
  double algorithm_bytes = 0;             // the same, summed over the rows of this family and over ranks
  std::string note;
};

struct TrafficReport {
  std::string layout_name;  // "3D (TP 8 × PP 4 × DP 64)", "FSDP (DP 1024)"
  double gpus = 0;
  double hosts = 0;
  double minibatches = 0;       // N
  double tokens_per_epoch = 0;  // T
  double tokens_per_step = 0;
  double tokens_per_replica_step = 0;
  double window_s = 0;  // step time × comm_fraction
  std::vector<TrafficRow> training;
  std::vector<TrafficRow> inference;
  std::vector<Comparison> comparison;
  std::optional<full_mesh::ThreeD> three_d;  // when more than one of TP, PP, DP is above 1

  // Per rank per step, summed over the training rows (an upper bound: no rank is in every row):
  // collective bytes that cross hosts (the back-end network), that stay in the host (NVLink), and
  // storage traffic (checkpoints out, the dataset in; often the front-end network).
  double network_rank_bytes_per_step = 0;
  double network_rank_bps = 0;
  double network_nic_bps = 0;  // a host's ranks share its NICs: rank × gpus_per_host / nics_per_host
  double in_host_rank_bytes_per_step = 0;
  double in_host_rank_bps = 0;
  double storage_rank_bytes_per_step = 0;
  double storage_rank_bps = 0;
};

// Hosts a group of `size` ranks `stride` apart spans, with `gpus_per_host` consecutive ranks a host.
double hosts_spanned(double size, double stride, double gpus_per_host);

// The whole model. Rows whose group has one rank (no traffic) are left out.
TrafficReport analyse(const TrainingSpec& spec);

}  // namespace tusk::traffic
