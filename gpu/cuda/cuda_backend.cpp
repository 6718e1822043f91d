#include "gpu/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/cuda_backend_impl.h"
#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/gemv.h"
#include "gpu/cuda/nccl_group.h"
#include "gpu/quant/fp8_online.h"
#include "gpu/quant/kv_scales.h"
#include "gpu/rope.h"

namespace zinfer::gpu {

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options) {
  return std::make_unique<cuda::CudaBackend>(options);
}

std::unique_ptr<Backend> make_cuda_backend_random(const BackendOptions& options, const ModelConfig& config,
                                                  uint64_t seed) {
  if (options.tensor_parallel_size > 1) return make_cuda_tensor_parallel_backend(options, &config, seed);
  return std::make_unique<cuda::CudaBackend>(options, config, seed);
}

namespace cuda {
namespace {

constexpr int32_t kLastTokenSlots = 1 << 16;

void validate(const ModelConfig& c, const BackendOptions& o) {
  if (o.dtype != "auto" && o.dtype != "bfloat16") {
    throw std::runtime_error("dtype '" + o.dtype + "': the CUDA backend computes in bfloat16 (use dtype auto or bfloat16)");
  }
  if (c.hidden_act != "silu") {
    throw std::runtime_error("hidden_act '" + c.hidden_act + "' is not supported by the CUDA backend (silu only)");
  }
  if (!decode_attention_supports(c.head_dim)) {
    throw std::runtime_error("head_dim " + std::to_string(c.head_dim) +
                             " is not supported by the CUDA backend (supported: multiples of 8 from 8 to 256; tensor-core "
                             "prefill for 64 and 128)");
  }
  if (c.num_key_value_heads <= 0 || c.num_attention_heads % c.num_key_value_heads != 0) {
    throw std::runtime_error("num_attention_heads must be a multiple of num_key_value_heads");
  }
  if (o.block_size <= 0 || o.max_num_seqs <= 0 || o.max_num_batched_tokens <= 0) {
    throw std::runtime_error("block_size, max_num_seqs and max_num_batched_tokens must be positive");
  }
}

}  // namespace

size_t Activations::bytes() const {
  size_t total = 0;
  for (const DeviceBuffer* b : {&residual, &normed, &qkv, &q, &attn, &gate_up, &act, &final_rows, &logits,
                                &partial_acc, &partial_ml, &meta, &sampling_scratch, &results, &last_sampled, &inv_freq, &head_local, &head_gathered, &w4_partials,
                                &w4_counters, &w4_dense, &w4_permuted}) {
    total += b->bytes();
  }
  return total;
}

namespace {
// Makes the rank's device current on this thread (a group's ranks each run on their own thread).
void require_device(int32_t device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    throw std::runtime_error("the CUDA backend found no CUDA device");
  }
  if (device >= count) {
    throw std::runtime_error("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                             " devices)");
  }
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
}

// A group's ranks draw their sampling seeds alike (gpu/tensor_parallel_backend.h).
uint64_t rng_seed(const RankContext& rank) { return rank.group != nullptr ? rank.seed : std::random_device{}(); }
}  // namespace

CudaBackend::CudaBackend(const BackendOptions& o, const RankContext& rank)
    : options_(o), rank_(rank), rng_(rng_seed(rank)) {
  require_device(rank.device);
  init(o, with_quantization(load_model_config(o.model_dir), o), nullptr);
}

CudaBackend::CudaBackend(const BackendOptions& o, const ModelConfig& config, uint64_t seed, const RankContext& rank)
    : options_(o), rank_(rank), rng_(rng_seed(rank)) {
  require_device(rank.device);
  init(o, config, &seed);
}

void CudaBackend::init(const BackendOptions& o, const ModelConfig& config, const uint64_t* random_seed) {
  const models::TensorParallel tp = rank_.parallel();
  model_config_ = config;
  config_ = models::local_config(config, tp);
  vocab_ = models::shard(config, tp).vocab;
  weights_.set_parallel(tp);
  max_model_len_ = o.max_model_len > 0 ? o.max_model_len : static_cast<int32_t>(config_.max_position_embeddings);
  validate(config_, o);
  max_tokens_ = o.max_num_batched_tokens;
  logit_rows_ = o.max_num_seqs;
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, rank_.device), "cudaGetDeviceProperties");
  num_sms_ = prop.multiProcessorCount;
  check_cuda(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreateWithFlags(&compute_done_, cudaEventDisableTiming), "cudaEventCreate");
  check_cuda(cudaEventCreateWithFlags(&copies_done_, cudaEventDisableTiming), "cudaEventCreate");
  gemm_ = std::make_unique<Gemm>();
  model_ = models::build_model(model_config_, weights_);
  const auto load_start = std::chrono::steady_clock::now();
  if (random_seed != nullptr) {
    weights_.fill_random(*random_seed);
  } else {
    weights_.upload(WeightSet(o.model_dir), model_config_.quantization);
  }
  // Read, converted or quantized, and uploaded: start-up's largest part (online FP8 quantizes here).
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  weights_.fp8().prepare(max_tokens_);  // FP8 layers' workspaces (fp8_linear.h), before the KV cache

  const ModelConfig& c = config_;
  const size_t T = max_tokens_, H = c.hidden_size, D = c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  const size_t Hq = c.num_attention_heads, Hkv = c.num_key_value_heads, R = logit_rows_;
  const size_t bf = sizeof(__nv_bfloat16);
  // A group's ranks all-reduce the residual in place: NCCL's symmetric window makes that fast.
  act_.residual = rank_.group != nullptr ? nccl_symmetric_buffer(rank_.nccl_comm, T * H * 4, "residual stream")
                                         : DeviceBuffer(T * H * 4, "residual stream");
  // Decode steps of up to kGemvMaxRows tokens can all-reduce it through the exchange instead
  // (collective like the window above: every rank takes the same branch).
  if (rank_.group != nullptr && o.tensor_parallel_exchange && rank_.abort_flag != nullptr &&
      ResidualExchange::possible(rank_.nccl_comm, rank_.size())) {
    exchange_ = std::make_unique<ResidualExchange>(rank_.nccl_comm, rank_.rank, rank_.size(), kGemvMaxRows * H,
                                                   rank_.abort_flag);
  }
  act_.normed = DeviceBuffer(T * H * bf, "normed activations");
  act_.qkv = DeviceBuffer(T * (Hq + 2 * Hkv) * D * bf, "qkv activations");
  act_.q = DeviceBuffer(T * Hq * D * bf, "rotated queries");
  act_.attn = DeviceBuffer(T * Hq * D * bf, "attention output");
  act_.gate_up = DeviceBuffer(T * 2 * I * bf, "gate/up activations");
  act_.act = DeviceBuffer(T * I * bf, "mlp activations");
  act_.final_rows = DeviceBuffer(R * H * bf, "final-norm rows");
  // A tensor-parallel rank gathers one row's slices straight into it (Ops::gather_logits): the
  // ranks' slices may overrun the vocabulary by the last one's padding.
  act_.logits = DeviceBuffer(std::max(R * V, static_cast<size_t>(vocab_.count) * rank_.size()) * 4, "logits");
  // Split-K partials for up to max_num_seqs decode tokens with up to 32 splits each.
  max_splits_ = 32;
  act_.partial_acc = DeviceBuffer(R * Hq * max_splits_ * D * 4, "decode attention partials");
  act_.partial_ml = DeviceBuffer(R * Hq * max_splits_ * 2 * 4, "decode attention partials");
  act_.split_counters = DeviceBuffer(R * Hq * 4, "decode attention split counters");
  check_cuda(cudaMemset(act_.split_counters.get(), 0, act_.split_counters.bytes()), "cudaMemset");
  act_.last_sampled = DeviceBuffer(static_cast<size_t>(kLastTokenSlots) * 4, "last sampled tokens");
  check_cuda(cudaMemset(act_.last_sampled.get(), 0, act_.last_sampled.bytes()), "cudaMemset");
  const std::vector<float> inv_freq = rope_inv_freq(c);
  act_.inv_freq = DeviceBuffer(inv_freq.size() * 4, "rope frequencies");
  check_cuda(cudaMemcpy(act_.inv_freq.get(), inv_freq.data(), inv_freq.size() * 4, cudaMemcpyHostToDevice),
             "upload of rope frequencies");
  act_.sampling_scratch = DeviceBuffer(sampling_scratch_bytes(static_cast<int32_t>(R), c.vocab_size), "sampling scratch");
  act_.results = DeviceBuffer((R * (2 + 2 * kMaxTopLogprobs) + 2) * 4, "sampling results");
  results_host_ = PinnedBuffer(act_.results.bytes(), "sampling results");
  if (rank_.group != nullptr) {
    act_.head_local = DeviceBuffer(R * vocab_.count * 4, "the rank's logits");
    act_.head_gathered = DeviceBuffer(R * vocab_.count * rank_.size() * 4, "gathered logits");
  }

  size_t w4_partials = 0, w4_counters = 0, w4_dense = 0, w4_permuted = 0;
  for (const W4Weight& w : weights_.int4_layers()) {
    for (int32_t m = 1; m <= kW4GemmMaxRows; ++m)
      w4_partials = std::max(w4_partials, w4_gemm_workspace_floats(m, w.n, w4_gemm_splits(m, w.n, w.k)));
    w4_counters = std::max(w4_counters, w4_gemm_counters(w.n));
    // The wide kernel's splits, at either tile of x rows and any row count (w4_path_plan.h picks
    // one way per bucket, from 16 rows on): one row count per 128-row tile count.
    for (int64_t m = 1; m <= static_cast<int64_t>(T); m = (m / 128 + 1) * 128)
      for (const int32_t tokens : {128, 256}) {
        const int32_t rows = static_cast<int32_t>(m), splits = w4_gemm_wide_splits(rows, w.n, w.k, tokens);
        if (splits <= 1) continue;
        w4_partials = std::max(w4_partials, w4_gemm_wide_workspace_floats(rows, w.n, splits, tokens));
        w4_counters = std::max(w4_counters, w4_gemm_wide_counters(rows, w.n, tokens));
      }
    w4_dense = std::max(w4_dense, static_cast<size_t>(w.n) * w.k * bf);
    if (w.perm != nullptr) w4_permuted = std::max(w4_permuted, T * w.k * bf);
  }
  if (w4_dense > 0) {
    act_.w4_partials = DeviceBuffer(w4_partials * 4, "int4 split partials");
    act_.w4_counters = DeviceBuffer(w4_counters * 4, "int4 split counters");
    check_cuda(cudaMemset(act_.w4_counters.get(), 0, act_.w4_counters.bytes()), "cudaMemset");
    act_.w4_dense = DeviceBuffer(w4_dense, "int4 layer dequantized");
    act_.w4_permuted = DeviceBuffer(w4_permuted, "act-order inputs");
  }

  tune_linear_layers();
  choose_w4_paths();

  // The KV cache takes what is left under gpu_memory_utilization; fp8 blocks are half the bytes of
  // bf16 ones, so the same memory holds twice the blocks (and the swap pool likewise).
  const bool fp8_kv = o.kv_cache_dtype == KvCacheDtype::kFp8;
  KvGeometry geo{c.num_hidden_layers, o.block_size, c.num_key_value_heads, c.head_dim, fp8_kv ? 1 : 2};
  int32_t blocks = o.num_gpu_blocks;
  if (blocks <= 0) {
    size_t free_bytes = 0, total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const double budget = static_cast<double>(total_bytes) * o.gpu_memory_utilization -
                          static_cast<double>(total_bytes - free_bytes);
    // Leave room for the step's packed inputs and CUDA graphs (a few tens of MB).
    const double reserve = 256.0 * (1 << 20);
    const double per_block = static_cast<double>(geo.bytes_per_block_all_layers());
    blocks = static_cast<int32_t>(std::max(0.0, (budget - reserve) / per_block) - 1);
    // A group's ranks hold the same blocks: as many as the fullest GPU has room for.
    if (rank_.group != nullptr) blocks = static_cast<int32_t>(rank_.group->all_reduce_min(rank_.rank, blocks));
    if (blocks < 1) {
      throw std::runtime_error("no GPU memory is left for the KV cache under gpu_memory_utilization " +
                               std::to_string(o.gpu_memory_utilization) + " (weights " +
                               std::to_string(weights_.bytes() >> 20) + " MiB)");
    }
  }
  const int32_t host_blocks =
      o.num_cpu_blocks > 0
          ? o.num_cpu_blocks
          : static_cast<int32_t>(o.swap_space_bytes / static_cast<int64_t>(geo.bytes_per_block_all_layers()));
  quant::KvScales kv_scales;
  if (fp8_kv && random_seed != nullptr) {  // random weights: no checkpoint to hold scales
    kv_scales.k.assign(static_cast<size_t>(c.num_hidden_layers), 1.0f);
    kv_scales.v = kv_scales.k;
  } else if (fp8_kv) {
    kv_scales = quant::read_kv_scales(WeightSet(o.model_dir), model_config_.num_hidden_layers, o.model_dir,
                                      rank_.rank == 0);
  }
  kv_ = std::make_unique<KvCache>(geo, blocks, host_blocks, std::move(kv_scales.k), std::move(kv_scales.v));

  StepCapacity cap;
  cap.max_tokens = max_tokens_;
  cap.max_seqs = o.max_num_seqs;
  cap.max_blocks_per_seq = (max_model_len_ + o.block_size - 1) / o.block_size;
  cap.block_size = o.block_size;
  cap.num_gpu_blocks = blocks;
  cap.scratch_block = kv_->scratch_block();
  cap.vocab = c.vocab_size;
  cap.tile_queries = kPrefillTileQueries;
  layout_ = std::make_unique<StepLayout>(cap);
  meta_host_ = PinnedBuffer(layout_->total_words * 4, "step inputs");
  act_.meta = DeviceBuffer(layout_->total_words * 4, "step inputs");
  slots_ = std::make_unique<LastTokenSlots>(kLastTokenSlots);
  rules_ = std::make_unique<SamplingRulesState>(o.max_num_seqs, logit_rows_, c.vocab_size);

  const bool speaks = rank_.rank == 0;  // rank 0 speaks for a group (every figure is per GPU)
  if (speaks) {
    std::fprintf(stderr,
                 "zinfer cuda: %s on %s x%d; per GPU: weights %.2f GiB (loaded in %.1f s), activations %.2f GiB; KV "
                 "cache (%s) %d blocks x %d tokens = %lld tokens (%.2f GiB), swap pool %d blocks\n",
                 c.architecture_name.c_str(), prop.name, rank_.size(), weights_.bytes() / 1073741824.0, load_s,
                 act_.bytes() / 1073741824.0, fp8_kv ? "fp8 e4m3" : "bf16", blocks, o.block_size,
                 static_cast<long long>(blocks) * o.block_size,
                 blocks * geo.bytes_per_block_all_layers() / 1073741824.0, kv_->host_blocks());
    if (rank_.group != nullptr) {
      std::fprintf(stderr, "zinfer cuda: tensor parallel %d over NCCL; decode steps all-reduce the residual %s\n",
                   rank_.size(),
                   exchange_ != nullptr ? "through the residual exchange (NCCL window, fused into the GEMVs)"
                                        : "with NCCL's all-reduce");
    }
    if (const std::string note = quant::unused_kv_scales(model_config_.quantization, "bf16", o.model_dir);
        !fp8_kv && !note.empty())
      std::fprintf(stderr, "%s\n", note.c_str());
  }
  choose_decode_linears();
  capture_decode_graphs();
  if (speaks) {
    std::fprintf(stderr,
                 "zinfer cuda: warm-up %.2f s (cuBLASLt tuning %.2f s, decode linear layers chosen in %.2f s, %zu decode "
                 "graphs captured in %.2f s)\n",
                 warm_up_.tuning_s + warm_up_.choice_s + warm_up_.graphs_s, warm_up_.tuning_s, warm_up_.choice_s,
                 graphs_.size(), warm_up_.graphs_s);
  }
}

CudaBackend::~CudaBackend() {
  for (auto& [bucket, exec] : graphs_) cudaGraphExecDestroy(exec);
  if (compute_ != nullptr) cudaStreamSynchronize(compute_);
  if (copy_ != nullptr) cudaStreamSynchronize(copy_);
  if (compute_done_ != nullptr) cudaEventDestroy(compute_done_);
  if (copies_done_ != nullptr) cudaEventDestroy(copies_done_);
  if (compute_ != nullptr) cudaStreamDestroy(compute_);
  if (copy_ != nullptr) cudaStreamDestroy(copy_);
}

CacheGeometry CudaBackend::cache_geometry() const {
  return CacheGeometry{options_.block_size, kv_->device_blocks(), kv_->host_blocks()};
}

void CudaBackend::run_copies(const BatchInput& batch) {
  if (batch.swap_out.empty() && batch.swap_in.empty() && batch.copy.empty()) return;
  // Copies run on the copy stream after the compute work already enqueued (which may still write
  // the blocks being swapped out), and the next forward pass waits for them.
  check_cuda(cudaEventRecord(compute_done_, compute_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(copy_, compute_done_, 0), "cudaStreamWaitEvent");
  kv_->swap_out(batch.swap_out, copy_);
  kv_->swap_in(batch.swap_in, copy_);
  kv_->copy(batch.copy, copy_);
  check_cuda(cudaEventRecord(copies_done_, copy_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(compute_, copies_done_, 0), "cudaStreamWaitEvent");
}

const StepLayout& CudaBackend::step_layout(int32_t pad_to) {
  if (pad_to <= 0) return *layout_;
  auto it = bucket_layouts_.find(pad_to);
  if (it == bucket_layouts_.end()) {
    it = bucket_layouts_.emplace(pad_to, StepLayout(layout_->cap.for_graph_bucket(pad_to))).first;
    if (it->second.total_words > layout_->total_words) {
      throw std::logic_error("a graph bucket's step layout outgrew the step input buffers");
    }
  }
  return it->second;
}

PackedStep CudaBackend::upload_step(const std::vector<SequenceInput>& seqs, int32_t pad_to, PackedRules* rules) {
  auto* words = meta_host_.as<uint32_t>();
  const bool use_tiles = prefill_attention_supports(config_.head_dim);
  PackedStep st = pack_step(seqs, step_layout(pad_to), use_tiles, pad_to, *slots_, rng_(), words);
  if (rules != nullptr) *rules = rules_->pack(seqs, st, words, compute_);
  check_cuda(cudaMemcpyAsync(act_.meta.get(), words, st.words_used * 4, cudaMemcpyHostToDevice, compute_),
             "upload of step inputs");
  return st;
}

std::vector<SampledToken> CudaBackend::step(const BatchInput& batch) {
  for (uint64_t id : batch.finished) {
    slots_->release(id);
    rules_->finish(id);
  }
  run_copies(batch);
  if (batch.seqs.empty()) {
    check_cuda(cudaStreamSynchronize(compute_), "step synchronisation");
    return {};
  }
  bool single_tokens = true;
  for (const SequenceInput& s : batch.seqs) single_tokens &= s.use_last_sampled || s.num_tokens == 1;
  const int32_t pad_to = options_.cuda_graphs && single_tokens
                             ? graph_bucket(static_cast<int32_t>(batch.seqs.size()))
                             : 0;
  PackedRules rules;
  const PackedStep st = upload_step(batch.seqs, pad_to, &rules);

  const int32_t R = static_cast<int32_t>(st.rows.size());
  auto* results = act_.results.as<int32_t>();
  int32_t* bad_ids = results + static_cast<size_t>(logit_rows_) * (2 + 2 * kMaxTopLogprobs);
  check_cuda(cudaMemsetAsync(bad_ids, 0, 4, compute_), "cudaMemsetAsync");
  run_layers_maybe_graph(st);

  const ModelConfig& c = config_;
  const auto* meta = act_.meta.as<int32_t>();
  if (R > 0) {
    run_head(st, nullptr);
    SamplingBatch sb;
    sb.logits = act_.logits.as<float>();
    sb.temperature = reinterpret_cast<const float*>(meta + st.layout->temperature);
    sb.top_p = reinterpret_cast<const float*>(meta + st.layout->top_p);
    sb.top_k = meta + st.layout->top_k;
    sb.seed = reinterpret_cast<const uint64_t*>(meta + st.layout->seed);
    sb.sample_index = meta + st.layout->sample_index;
    sb.num_top = meta + st.layout->num_top;
    sb.num_rows = R;
    sb.vocab = c.vocab_size;
    sb.out_token = results;
    sb.out_logprob = reinterpret_cast<float*>(results + logit_rows_);
    sb.out_top_ids = results + 2 * logit_rows_;
    sb.out_top_logprobs = reinterpret_cast<float*>(results + static_cast<size_t>(logit_rows_) * (2 + kMaxTopLogprobs));
    sb.dest_slot = meta + st.layout->dest_slot;
    sb.last_sampled = act_.last_sampled.as<int32_t>();
    sb.scratch = act_.sampling_scratch.as<float>();
    if (rules.any_min_p) sb.min_p = reinterpret_cast<const float*>(meta + st.layout->min_p);
    if (rules.any_counts) {
      sb.count_row = meta + st.layout->count_row;
      sb.counts = rules_->counts();
    }
    if (rules.any_processed) {
      SamplingRulesBatch rb;
      rb.logits = sb.logits;
      rb.processed = rules_->processed();
      rb.processed_row = meta + st.layout->processed_row;
      rb.repetition = reinterpret_cast<const float*>(meta + st.layout->repetition);
      rb.frequency = reinterpret_cast<const float*>(meta + st.layout->frequency);
      rb.presence = reinterpret_cast<const float*>(meta + st.layout->presence);
      rb.count_row = meta + st.layout->count_row;
      rb.counts = rules_->counts();
      rb.list_index = meta + st.layout->rule_lists;
      rb.lists = rules_->lists();
      rb.num_rows = R;
      rb.vocab = c.vocab_size;
      if (rules.masked_rows > 0) {
        // The forward pass is queued: the grammar masks are computed now, on the CPU, while the
        // device runs it, and their upload is queued behind it, before the rules kernel.
        if (batch.token_masks == nullptr || batch.token_masks->num_rows() != static_cast<size_t>(rules.masked_rows) ||
            batch.token_masks->row_words() * 32 < static_cast<size_t>(c.vocab_size)) {
          throw std::invalid_argument("the step's token masks do not match its " + std::to_string(rules.masked_rows) +
                                      " masked rows and vocabulary of " + std::to_string(c.vocab_size));
        }
        rb.masks = rules_->upload_masks(batch.token_masks->rows(), batch.token_masks->num_rows(),
                                        batch.token_masks->row_words(), compute_);
        rb.mask_row = meta + st.layout->mask_row;
        rb.mask_words = static_cast<int32_t>(batch.token_masks->row_words());
      }
      check_cuda(launch_sampling_rules(rb, compute_), "sampling rules");
      sb.processed = rb.processed;
      sb.processed_row = rb.processed_row;
    }
    check_cuda(launch_sampling(sb, compute_), "sampling");
  }
  check_cuda(cudaMemcpyAsync(results_host_.as<void>(), act_.results.get(), act_.results.bytes(),
                             cudaMemcpyDeviceToHost, compute_),
             "download of sampled tokens");
  check_cuda(cudaStreamSynchronize(compute_), "step");
  const auto* host = results_host_.as<int32_t>();
  if (host[static_cast<size_t>(logit_rows_) * (2 + 2 * kMaxTopLogprobs)] != 0) {
    throw std::runtime_error("a device-side token id was outside the vocabulary");
  }
  std::vector<SampledToken> out(R);
  const auto* logprobs = reinterpret_cast<const float*>(host + logit_rows_);
  const int32_t* top_ids = host + 2 * logit_rows_;
  const auto* top_lps = reinterpret_cast<const float*>(host + static_cast<size_t>(logit_rows_) * (2 + kMaxTopLogprobs));
  rules_->record(host, static_cast<size_t>(R));
  for (int32_t r = 0; r < R; ++r) {
    out[r].seq_id = st.rows[r].seq_id;
    out[r].token = host[r];
    out[r].logprob = logprobs[r];
    for (int32_t k = 0; k < st.rows[r].num_top; ++k) {
      out[r].top.emplace_back(top_ids[r * kMaxTopLogprobs + k], top_lps[r * kMaxTopLogprobs + k]);
    }
  }
  return out;
}

std::vector<float> CudaBackend::forward_logits(const SequenceInput& seq) {
  SequenceInput s = seq;
  s.sample = false;
  const PackedStep st = upload_step({s}, 0);
  auto* results = act_.results.as<int32_t>();
  int32_t* bad_ids = results + static_cast<size_t>(logit_rows_) * (2 + 2 * kMaxTopLogprobs);
  check_cuda(cudaMemsetAsync(bad_ids, 0, 4, compute_), "cudaMemsetAsync");
  make_room_for_exchanges();
  const int32_t exchanges = run_layers(st);
  if (exchange_ != nullptr) exchange_->count(exchanges);
  std::vector<float> logits;
  run_head(st, &logits);
  check_cuda(cudaMemcpy(results_host_.as<void>(), act_.results.get(), act_.results.bytes(), cudaMemcpyDeviceToHost),
             "download of step status");
  if (results_host_.as<int32_t>()[static_cast<size_t>(logit_rows_) * (2 + 2 * kMaxTopLogprobs)] != 0) {
    throw std::runtime_error("a token id was outside the vocabulary");
  }
  return logits;
}

}  // namespace cuda
}  // namespace zinfer::gpu
