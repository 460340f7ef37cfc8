// The traffic model's formulas against numbers worked by hand; the arithmetic is in the comments.
#include "controller/model/training_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "controller/model/training_model_printer.hpp"

namespace tusk::traffic {
namespace {

// ---- the collective algorithms -----------------------------------------------------------------

TEST(CollectiveAlgorithm, RingAllReduceSendsTwiceGMinusOneOverGOfS) {
  EXPECT_DOUBLE_EQ(algorithm::ring_all_reduce(1000, 4), 1500);  // 2·3/4·1000
  EXPECT_DOUBLE_EQ(algorithm::ring_all_reduce(1000, 2), 1000);  // 2·1/2·1000
  EXPECT_DOUBLE_EQ(algorithm::ring_all_reduce(1000, 1), 0);     // alone: nothing to send
}

TEST(CollectiveAlgorithm, AllGatherAndReduceScatterSendGMinusOneOverGOfS) {
  EXPECT_DOUBLE_EQ(algorithm::all_gather(1000, 4), 750);      // 3/4·1000
  EXPECT_DOUBLE_EQ(algorithm::reduce_scatter(1000, 4), 750);  // 3/4·1000
  EXPECT_DOUBLE_EQ(algorithm::all_gather(1000, 1), 0);
}

TEST(CollectiveAlgorithm, AllToAllKeepsOneGthAtHome) {
  EXPECT_DOUBLE_EQ(algorithm::all_to_all(800, 8), 700);  // 7/8·800
  EXPECT_DOUBLE_EQ(algorithm::all_to_all(800, 1), 0);
}

// ---- the published full-mesh formulas ----------------------------------------------------------

TEST(FullMesh, DataParallelPerMinibatch) {
  // 2·P·G·(G−1) = 2·1e9·4·3 = 24e9
  EXPECT_DOUBLE_EQ(full_mesh::data_parallel_per_minibatch(1e9, 4), 24e9);
  // FP32 (4 bytes per element) doubles it: 48e9
  EXPECT_DOUBLE_EQ(full_mesh::data_parallel_per_minibatch(1e9, 4, 4), 48e9);
}

TEST(FullMesh, FsdpPerEpoch) {
  // 4·N·P·(G−1) = 4·10·1e9·7 = 280e9
  EXPECT_DOUBLE_EQ(full_mesh::fsdp_per_epoch(10, 1e9, 8), 280e9);
}

TEST(FullMesh, TensorParallelPerEpoch) {
  // T = 1e6, N = 10, L = 2, H = 100, P = 1e6, G = 4:
  // 4·T·L·H·G·(G−1) = 4·1e6·2·100·4·3 = 9.6e9;  4·N·L·P·(G−1) = 4·10·2·1e6·3 = 2.4e8;  sum 9.84e9
  EXPECT_DOUBLE_EQ(full_mesh::tensor_parallel_per_epoch(1e6, 10, 2, 100, 1e6, 4), 9.84e9);
}

TEST(FullMesh, PipelinePerEpoch) {
  // 4·T·H·(G−1) = 4·1e6·100·3 = 1.2e9
  EXPECT_DOUBLE_EQ(full_mesh::pipeline_per_epoch(1e6, 100, 4), 1.2e9);
}

TEST(FullMesh, ThreeDForwardAndBackward) {
  // N = 10, T = 1e6, P = 1e6, L = 2, H = 100, Gtp = 4, Gpp = 2, Gdp = 3:
  // backward 2·N·P·Gdp·[2·L·(Gtp−1)/Gpp + (Gdp−1)] + 2·T·H·(Gpp−1)
  //        = 2·10·1e6·3·[2·2·3/2 + 2] + 2·1e6·100·1 = 6e7·8 + 2e8 = 6.8e8
  // forward 4·T·H·L·Gtp·(Gtp−1) + 2·T·H·(Gpp−1) = 4·1e6·100·2·4·3 + 2e8 = 9.6e9 + 2e8 = 9.8e9
  const auto d = full_mesh::three_d_per_epoch(10, 1e6, 1e6, 2, 100, 4, 2, 3);
  EXPECT_DOUBLE_EQ(d.backward, 6.8e8);
  EXPECT_DOUBLE_EQ(d.forward, 9.8e9);
  EXPECT_DOUBLE_EQ(d.total(), 1.048e10);
  // By cause: data 2·N·P·Gdp·(Gdp−1) = 2·10·1e6·3·2 = 1.2e8;
  // tensor 2·N·P·Gdp·2·L·(Gtp−1)/Gpp + 4·T·H·L·Gtp·(Gtp−1) = 3.6e8 + 9.6e9 = 9.96e9;
  // pipeline 2·T·H·(Gpp−1) twice = 4e8; and they add up to the total.
  EXPECT_DOUBLE_EQ(d.data, 1.2e8);
  EXPECT_DOUBLE_EQ(d.tensor, 9.96e9);
  EXPECT_DOUBLE_EQ(d.pipeline, 4e8);
  EXPECT_DOUBLE_EQ(d.data + d.tensor + d.pipeline, d.total());
}

TEST(FullMesh, ThreeDReducesToEachPureFormula) {
  const double n = 10, t = 1e6, p = 1e6, l = 2, h = 100;
  EXPECT_DOUBLE_EQ(full_mesh::three_d_per_epoch(n, t, p, l, h, 1, 1, 8).total(),
                   n * full_mesh::data_parallel_per_minibatch(p, 8));
  EXPECT_DOUBLE_EQ(full_mesh::three_d_per_epoch(n, t, p, l, h, 8, 1, 1).total(),
                   full_mesh::tensor_parallel_per_epoch(t, n, l, h, p, 8));
  EXPECT_DOUBLE_EQ(full_mesh::three_d_per_epoch(n, t, p, l, h, 1, 8, 1).total(),
                   full_mesh::pipeline_per_epoch(t, h, 8));
}

TEST(FullMesh, InferenceActivationsAndKvCache) {
  // U = 10, Sin = 100, Sout = 50, L = 2, H = 100, Gtp = 4:
  // 4·U·(Sin+Sout)·L·H·Gtp·(Gtp−1) = 4·10·150·2·100·4·3 = 1.44e7;  4·U·Sin·L·H = 4·10·100·2·100 = 8e5
  EXPECT_DOUBLE_EQ(full_mesh::inference_activations(10, 100, 50, 2, 100, 4), 1.44e7);
  EXPECT_DOUBLE_EQ(full_mesh::kv_cache(10, 100, 2, 100), 8e5);
}

TEST(FullMesh, CheckpointAndDatasetLoad) {
  EXPECT_DOUBLE_EQ(full_mesh::checkpoint(1e9), 8e9);  // 8·P
  const double d = 1e12;
  EXPECT_DOUBLE_EQ(full_mesh::dataset_load(d, 1), 1e12);  // DP: D
  EXPECT_DOUBLE_EQ(full_mesh::dataset_load(d, 8), 8e12);  // TP over G = 8: D·G
  EXPECT_DOUBLE_EQ(full_mesh::dataset_load(d, 1), 1e12);  // PP: D (TP degree 1)
  EXPECT_DOUBLE_EQ(full_mesh::dataset_load(d, 4), 4e12);  // 3D with Gtp = 4: D·Gtp
}

// ---- where the bytes go ------------------------------------------------------------------------

TEST(Locality, HostsSpannedFollowTheRankOrder) {
  EXPECT_DOUBLE_EQ(hosts_spanned(8, 1, 8), 1);    // TP 8 in an 8-GPU host
  EXPECT_DOUBLE_EQ(hosts_spanned(2, 4, 8), 1);    // ranks 0 and 4
  EXPECT_DOUBLE_EQ(hosts_spanned(16, 1, 8), 2);   // 16 consecutive ranks
  EXPECT_DOUBLE_EQ(hosts_spanned(8, 2, 8), 2);    // ranks 0,2,..,14: 4 per host
  EXPECT_DOUBLE_EQ(hosts_spanned(64, 8, 8), 64);  // DP with TP 8: one per host
  EXPECT_DOUBLE_EQ(hosts_spanned(4, 512, 8), 4);  // PP stride TP·DP
}

TEST(Locality, NetworkFractionOfHostAwareCollectives) {
  const Group one_host{"tp", 8, 1, 1, true};
  EXPECT_DOUBLE_EQ(network_fraction(Collective::RingAllReduce, one_host), 0);
  const Group one_per_host{"dp", 4, 8, 4, false};
  EXPECT_DOUBLE_EQ(network_fraction(Collective::RingAllReduce, one_per_host), 1);
  // DP 8 as 2 hosts × 4: all-reduce 2(n−1)/n·S/k = 2·(1/2)·S/4 = S/4 of the ring's 2·7/8·S = 7S/4: 1/7.
  const Group two_by_four{"dp", 8, 1, 2, false};
  EXPECT_DOUBLE_EQ(network_fraction(Collective::RingAllReduce, two_by_four), 1.0 / 7);
  EXPECT_DOUBLE_EQ(network_fraction(Collective::RingAllGather, two_by_four), 1.0 / 7);
  // All-to-all: 4 of the 7 peers are on the other host.
  EXPECT_DOUBLE_EQ(network_fraction(Collective::AllToAll, two_by_four), 4.0 / 7);
  // A pipeline of 8 stages, 4 to a host: 1 of its 7 boundaries crosses hosts.
  EXPECT_DOUBLE_EQ(network_fraction(Collective::SendRecv, two_by_four), 1.0 / 7);
  EXPECT_DOUBLE_EQ(network_fraction(Collective::StorageWrite, one_host), 1);
}

// ---- the report, algorithm accounting ----------------------------------------------------------

const TrafficRow& row_of(const std::vector<TrafficRow>& rows, std::string_view kind) {
  const auto found = std::find_if(rows.begin(), rows.end(), [kind](const TrafficRow& r) { return r.kind == kind; });
  if (found == rows.end()) {
    ADD_FAILURE() << "no row " << kind;
    static const TrafficRow none{};
    return none;
  }
  return *found;
}

const Comparison& comparison_of(const TrafficReport& report, Family family) {
  const auto found = std::find_if(report.comparison.begin(), report.comparison.end(),
                                  [family](const Comparison& c) { return c.family == family; });
  if (found == report.comparison.end()) {
    ADD_FAILURE() << "no comparison for " << to_string(family);
    static const Comparison none{};
    return none;
  }
  return *found;
}

// P = 8e9, L = 8, H = 1000, BF16; TP 2 × PP 2 × DP 4 = 16 GPUs, 4 per host; 2 micro-batches;
// 16000 tokens a step and 1.6e6 an epoch (N = 100); step 2 s, half of it for communication.
TrainingSpec three_d_spec() {
  TrainingSpec spec;
  spec.name = "3d";
  spec.model.parameters = 8e9;
  spec.model.layers = 8;
  spec.model.hidden = 1000;
  spec.model.kv_hidden = 1000;
  spec.layout.tp = 2;
  spec.layout.pp = 2;
  spec.layout.dp = 4;
  spec.layout.gpus_per_host = 4;
  spec.layout.nics_per_host = 4;
  spec.layout.micro_batches = 2;
  spec.data = DataSpec{1.6e6, 16000, 1, std::nullopt};
  spec.step = {2, 0.5};
  return spec;
}

TEST(Analyse, ThreeDDataParallelAllReduce) {
  const auto report = analyse(three_d_spec());
  EXPECT_DOUBLE_EQ(report.gpus, 16);
  EXPECT_DOUBLE_EQ(report.hosts, 4);
  EXPECT_DOUBLE_EQ(report.minibatches, 100);
  EXPECT_DOUBLE_EQ(report.window_s, 1);
  const auto& dp = row_of(report.training, "dp gradient all-reduce");
  // S = b·P/(TP·PP) = 2·8e9/4 = 4e9; ring over DP 4: 2·3/4·4e9 = 6e9 a step; 16 ranks: 9.6e10.
  EXPECT_DOUBLE_EQ(dp.bytes_per_op, 4e9);
  EXPECT_DOUBLE_EQ(dp.ops_per_step, 1);
  EXPECT_DOUBLE_EQ(dp.rank_bytes_per_step, 6e9);
  EXPECT_DOUBLE_EQ(dp.all_ranks_bytes_per_step, 9.6e10);
  EXPECT_DOUBLE_EQ(dp.bandwidth_bps, 48e9);  // 6e9 bytes · 8 over a 1 s window
  // DP ranks are TP = 2 apart: 2 on each of 2 hosts; host-aware: 2·(1/2)·4e9/2 = 2e9 cross hosts.
  EXPECT_DOUBLE_EQ(dp.group.size, 4);
  EXPECT_DOUBLE_EQ(dp.group.hosts, 2);
  EXPECT_FALSE(dp.group.in_host);
  EXPECT_DOUBLE_EQ(dp.network_rank_bytes_per_step, 2e9);
}

TEST(Analyse, ThreeDTensorParallelAllReduceStaysInTheHost) {
  const auto report = analyse(three_d_spec());
  const auto& tp = row_of(report.training, "tp activation all-reduce");
  // Tokens per replica 16000/4 = 4000, 2000 a micro-batch: S = 2·1000·2000 = 4e6;
  // ops = 4 per layer · 8/2 layers · 2 micro-batches = 32; ring over 2: 1·4e6 each: 1.28e8 a step.
  EXPECT_DOUBLE_EQ(tp.bytes_per_op, 4e6);
  EXPECT_DOUBLE_EQ(tp.ops_per_step, 32);
  EXPECT_DOUBLE_EQ(tp.rank_bytes_per_step, 1.28e8);
  EXPECT_TRUE(tp.group.in_host);
  EXPECT_DOUBLE_EQ(tp.network_rank_bytes_per_step, 0);
}

TEST(Analyse, ThreeDPipelineSendRecv) {
  const auto report = analyse(three_d_spec());
  const auto& pp = row_of(report.training, "pp activation send/recv");
  // S = b·H·micro-batch tokens/TP = 2·1000·2000/2 = 2e6; PP 2: each stage sends one way, 2 micro-batches.
  EXPECT_DOUBLE_EQ(pp.bytes_per_op, 2e6);
  EXPECT_DOUBLE_EQ(pp.ops_per_step, 2);
  EXPECT_DOUBLE_EQ(pp.rank_bytes_per_step, 4e6);
  // All ranks: 2·(PP−1)·b·H·tokens per step = 2·1·2·1000·16000 = 6.4e7.
  EXPECT_DOUBLE_EQ(pp.all_ranks_bytes_per_step, 6.4e7);
  EXPECT_DOUBLE_EQ(pp.group.hosts, 2);  // stages TP·DP = 8 ranks apart
  EXPECT_DOUBLE_EQ(pp.network_rank_bytes_per_step, 4e6);
  // Totals: network 2e9 (dp) + 4e6 (pp); NVLink 6e9 − 2e9 (dp) + 1.28e8 (tp).
  EXPECT_DOUBLE_EQ(report.network_rank_bytes_per_step, 2.004e9);
  EXPECT_DOUBLE_EQ(report.in_host_rank_bytes_per_step, 4.128e9);
  EXPECT_DOUBLE_EQ(report.network_nic_bps, 2.004e9 * 8);  // 4 GPUs share 4 NICs, 1 s window
}

TEST(Analyse, ThreeDComparedWithThePublishedFormulas) {
  const auto report = analyse(three_d_spec());
  // Data: 2·N·P·Gdp·(Gdp−1) = 2·100·8e9·4·3 = 1.92e13 against the ring's 9.6e10·100 = 9.6e12: G/2 = 2×.
  const auto& data = comparison_of(report, Family::DataParallel);
  EXPECT_DOUBLE_EQ(*data.full_mesh_bytes, 1.92e13);
  EXPECT_DOUBLE_EQ(data.algorithm_bytes, 9.6e12);
  // Tensor: 2·N·P·Gdp·2·L·(Gtp−1)/Gpp + 4·T·H·L·Gtp·(Gtp−1)
  //       = 2·100·8e9·4·2·8·1/2 + 4·1.6e6·1000·8·2·1 = 5.12e13 + 1.024e11;
  // the algorithm: 16 ranks · 1.28e8 · 100 = 2.048e11.
  const auto& tensor = comparison_of(report, Family::TensorParallel);
  EXPECT_DOUBLE_EQ(*tensor.full_mesh_bytes, 5.12e13 + 1.024e11);
  EXPECT_DOUBLE_EQ(tensor.algorithm_bytes, 2.048e11);
  // Pipeline: 4·T·H·(Gpp−1) = 4·1.6e6·1000·1 = 6.4e9, the same as the algorithm's 6.4e7·100.
  const auto& pipeline = comparison_of(report, Family::Pipeline);
  EXPECT_DOUBLE_EQ(*pipeline.full_mesh_bytes, 6.4e9);
  EXPECT_DOUBLE_EQ(pipeline.algorithm_bytes, 6.4e9);
  ASSERT_TRUE(report.three_d.has_value());
  EXPECT_DOUBLE_EQ(report.three_d->total(), 1.92e13 + 5.12e13 + 1.024e11 + 6.4e9);
}

TEST(Analyse, CheckpointAndDatasetRows) {
  auto spec = three_d_spec();
  spec.checkpoint = CheckpointSpec{10, 8};
  spec.data->dataset_bytes = 1e9;
  const auto report = analyse(spec);
  // Checkpoint: 8·8e9 = 6.4e10 in all, 4e9 a rank, every 10 steps: 4e8 a rank a step.
  const auto& checkpoint = row_of(report.training, "checkpoint write");
  EXPECT_DOUBLE_EQ(checkpoint.bytes_per_op, 4e9);
  EXPECT_DOUBLE_EQ(checkpoint.ops_per_step, 0.1);
  EXPECT_DOUBLE_EQ(checkpoint.rank_bytes_per_step, 4e8);
  EXPECT_DOUBLE_EQ(comparison_of(report, Family::Checkpoint).full_mesh_bytes.value(), 6.4e11);  // 10 checkpoints
  EXPECT_DOUBLE_EQ(comparison_of(report, Family::Checkpoint).algorithm_bytes, 6.4e11);
  // Dataset: a first-stage rank reads D/(DP·N) = 1e9/400 = 2.5e6 a step; all: D·TP = 2e9 an epoch.
  const auto& dataset = row_of(report.training, "dataset read");
  EXPECT_DOUBLE_EQ(dataset.rank_bytes_per_step, 2.5e6);
  EXPECT_DOUBLE_EQ(comparison_of(report, Family::Dataset).full_mesh_bytes.value(), 2e9);
  EXPECT_DOUBLE_EQ(comparison_of(report, Family::Dataset).algorithm_bytes, 2e9);
  // Storage is counted apart from the collectives.
  EXPECT_DOUBLE_EQ(report.storage_rank_bytes_per_step, 4e8 + 2.5e6);
  EXPECT_DOUBLE_EQ(report.network_rank_bytes_per_step, 2.004e9);
}

// P = 1e9, L = 10, BF16, FSDP over DP 4 on one host; 4000 tokens a step, N = 100.
TEST(Analyse, FsdpGathersTwiceAndScattersOnce) {
  TrainingSpec spec;
  spec.model = {1e9, 10, 1000, 1000, 2, 0, 0, 0, 0};
  spec.layout.dp = 4;
  spec.layout.fsdp = true;
  spec.data = DataSpec{4e5, 4000, 1, std::nullopt};
  spec.step = {1, 1};
  const auto report = analyse(spec);
  ASSERT_EQ(report.training.size(), 3u);
  // S = b·P = 2e9, in 10 one-layer units of 2e8; each collective (G−1)/G·S = 1.5e9 a step.
  for (const auto& row : report.training) {
    EXPECT_DOUBLE_EQ(row.bytes_per_op, 2e8) << row.kind;
    EXPECT_DOUBLE_EQ(row.ops_per_step, 10) << row.kind;
    EXPECT_DOUBLE_EQ(row.rank_bytes_per_step, 1.5e9) << row.kind;
  }
  // Published 4·N·P·(G−1) = 4·100·1e9·3 = 1.2e12; the algorithm 4 ranks · 4.5e9 · 100 = 1.8e12.
  const auto& fsdp = comparison_of(report, Family::Fsdp);
  EXPECT_DOUBLE_EQ(*fsdp.full_mesh_bytes, 1.2e12);
  EXPECT_DOUBLE_EQ(fsdp.algorithm_bytes, 1.8e12);
  EXPECT_FALSE(report.three_d.has_value());
}

// P = 10e9 of which 8e9 in 8 experts, top-2, 4 MoE layers of 4, H = 1000; DP 8 with EP 4, 4 GPUs a
// host; 8000 tokens a step, N = 100.
TEST(Analyse, ExpertParallelSplitsGradientsAndAddsAllToAll) {
  TrainingSpec spec;
  spec.model = {10e9, 4, 1000, 1000, 2, 8, 2, 8e9, 4};
  spec.layout.dp = 8;
  spec.layout.ep = 4;
  spec.layout.gpus_per_host = 4;
  spec.layout.nics_per_host = 4;
  spec.data = DataSpec{8e5, 8000, 1, std::nullopt};
  spec.step = {1, 1};
  const auto report = analyse(spec);
  // Dense: S = 2·2e9 = 4e9 over DP 8: 2·7/8·4e9 = 7e9; DP 8 is 2 hosts × 4: 2·(1/2)·4e9/4 = 1e9 network.
  const auto& dense = row_of(report.training, "dp gradient all-reduce (dense)");
  EXPECT_DOUBLE_EQ(dense.rank_bytes_per_step, 7e9);
  EXPECT_DOUBLE_EQ(dense.network_rank_bytes_per_step, 1e9);
  // Experts: S = 2·8e9/4 = 4e9 over DP/EP = 2 ranks 4 apart (two hosts): 2·1/2·4e9 = 4e9, all network.
  const auto& experts = row_of(report.training, "dp gradient all-reduce (experts)");
  EXPECT_DOUBLE_EQ(experts.bytes_per_op, 4e9);
  EXPECT_DOUBLE_EQ(experts.rank_bytes_per_step, 4e9);
  EXPECT_DOUBLE_EQ(experts.network_rank_bytes_per_step, 4e9);
  // All-to-all: 1000 tokens a rank, S = 2·1000·2·1000 = 4e6; 4 per MoE layer · 4 layers = 16;
  // 3/4·4e6 = 3e6 each: 4.8e7 a step, inside the host (EP 4 consecutive ranks).
  const auto& a2a = row_of(report.training, "ep token all-to-all");
  EXPECT_DOUBLE_EQ(a2a.bytes_per_op, 4e6);
  EXPECT_DOUBLE_EQ(a2a.ops_per_step, 16);
  EXPECT_DOUBLE_EQ(a2a.rank_bytes_per_step, 4.8e7);
  EXPECT_TRUE(a2a.group.in_host);
  EXPECT_FALSE(comparison_of(report, Family::ExpertAllToAll).full_mesh_bytes.has_value());
}

// L = 2, H = 100, K/V width 25; 10 users, 100 + 50 tokens, TP 4, 2 replicas, in 1 s.
TEST(Analyse, ServingActivationsAndKvCache) {
  TrainingSpec spec;
  spec.model = {1e6, 2, 100, 25, 2, 0, 0, 0, 0};
  spec.inference = InferenceSpec{10, 100, 50, 4, 2, 1.0};
  const auto report = analyse(spec);
  EXPECT_TRUE(report.training.empty());
  // Per replica: 2·L all-reduces of b·H per token, 5 users × 150 tokens: 2·2·5·150·100·2 = 6e5 bytes
  // reduced; ring over 4: 2·3/4·6e5 = 9e5 a rank; 2 replicas × 4 ranks: 7.2e6.
  const auto& activations = row_of(report.inference, "inference tp all-reduce");
  EXPECT_DOUBLE_EQ(activations.rank_bytes_per_step, 9e5);
  EXPECT_DOUBLE_EQ(activations.all_ranks_bytes_per_step, 7.2e6);
  EXPECT_DOUBLE_EQ(activations.ops_per_step, 204);  // 2·L·(1 prefill + 50 decode passes)
  EXPECT_DOUBLE_EQ(activations.bandwidth_bps, 7.2e6);
  // Published 4·U·(Sin+Sout)·L·H·Gtp·(Gtp−1) = 1.44e7: G/2 = 2× the ring.
  EXPECT_DOUBLE_EQ(*comparison_of(report, Family::InferenceActivations).full_mesh_bytes, 1.44e7);
  // KV: 2·b·Sin·L·kv = 2·2·100·2·25 = 2e4 a request; 10 requests 2e5; a rank: 5·2e4/4 = 2.5e4.
  const auto& kv = row_of(report.inference, "kv-cache transfer");
  EXPECT_DOUBLE_EQ(kv.all_ranks_bytes_per_step, 2e5);
  EXPECT_DOUBLE_EQ(kv.rank_bytes_per_step, 2.5e4);
  // Published 4·U·Sin·L·H = 8e5, full width H: H/kv = 4× more.
  EXPECT_DOUBLE_EQ(*comparison_of(report, Family::KvCache).full_mesh_bytes, 8e5);
}

TEST(Analyse, NoRowsForGroupsOfOne) {
  TrainingSpec spec;
  spec.model = {1e9, 10, 1000, 1000, 2, 0, 0, 0, 0};
  spec.data = DataSpec{1e6, 1e4, 1, std::nullopt};
  spec.step = {1, 1};
  EXPECT_TRUE(analyse(spec).training.empty());
}

// ---- output ------------------------------------------------------------------------------------

TEST(ModelOutput, BytesInDecimalAndBinaryUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(8.69e9), "8.69 GB");
  EXPECT_EQ(format_bytes(123.4e12), "123 TB");
  EXPECT_EQ(format_bytes(1e15), "1.00 PB");
  EXPECT_EQ(format_bytes(1.5e18), "1.50 EB");
  EXPECT_EQ(format_bytes(2.2e21), "2.20 ZB");
  EXPECT_EQ(format_bytes(999.7e3), "1.00 MB");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024 * 1024, true), "1.50 GiB");
  EXPECT_EQ(format_bytes(1e18, true), "888 PiB");
}

TEST(ModelOutput, TextAndJsonCarryBothAccountings) {
  auto spec = three_d_spec();
  const auto report = analyse(spec);
  const std::string text = model_text(spec, report, false);
  EXPECT_NE(text.find("dp gradient all-reduce"), std::string::npos);
  EXPECT_NE(text.find("6.00 GB"), std::string::npos) << text;                     // the DP row's bytes a step
  EXPECT_NE(text.find("19.2 TB"), std::string::npos) << text;                     // the published data-parallel bytes
  EXPECT_NE(model_text(spec, report, true).find("5.59 GiB"), std::string::npos);  // 6e9 bytes
  const auto json = model_json(spec, report);
  EXPECT_EQ(json["schema"], "tusk.model/1");
  ASSERT_EQ(json["training"].size(), 3u);
  EXPECT_DOUBLE_EQ(json["training"][0]["rank_bytes_per_step"].get<double>(), 6e9);
  EXPECT_DOUBLE_EQ(json["training"][0]["rank_bytes_per_epoch"].get<double>(), 6e11);
  EXPECT_DOUBLE_EQ(json["comparison"][0]["full_mesh_bytes"].get<double>(), 1.92e13);
  EXPECT_TRUE(json["inference"].is_null());
}

}  // namespace
}  // namespace tusk::traffic
