// The message structs of zinfer: every message that crosses an actor boundary is declared here and
// nowhere else. Each message struct is a msgpack *map* with named fields (MSGPACK_DEFINE_MAP): a
// reader skips keys it does not know and leaves missing keys at their defaults, so a minor
// protocol version may add fields without breaking older peers. Each struct names its MessageType.
//
// The per-sequence records of the step path (SeqWork, BlockCopy, SeqOutput) and TokenDelta are
// fixed *arrays* instead (MSGPACK_DEFINE, fields in declaration order): a step at 256 sequences
// carries thousands of them, and field names would be most of its bytes and of its decoding time
// (docs/benchmarks/scheduler.md). A minor version may append fields at the end; a reader fills
// missing trailing fields with defaults and ignores extra ones.
//
// The step-path messages (StepPlan, StepResult, TokenDelta, TokenDeltaBatch and their records)
// are encoded and decoded by hand-written code (protocol/step_codec.h) that produces and reads
// exactly the wire format these MSGPACK_DEFINE* lines describe; the macros stay the definition
// of the format, and msgpack-c still handles every other message. A field added here must be
// added there too (tests/protocol/step_codec_test.cpp compares the two byte for byte).
//
// Who sends what (docs/architecture.md has the whole picture):
//   gateway     -> tokenizer    GenerateRequest, TokenizeRequest (answered by TokenizeReply)
//   tokenizer   -> scheduler    TokenizedRequest
//   scheduler   -> executor     StepPlan            executor -> scheduler  StepResult
//   scheduler   -> detokenizer  RequestStart, TokenDeltaBatch (or single TokenDeltas)
//   detokenizer -> gateway      TextDelta
//   anyone      -> scheduler    Abort               (gateway on disconnect, detokenizer on a stop string)
//   anyone      -> anyone       ErrorReply, Ping/Pong, StatsRequest/Stats
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <msgpack.hpp>

namespace zinfer::protocol {

enum class MessageType : uint16_t {
  kPing = 1,
  kPong = 2,
  kErrorReply = 3,
  kGenerateRequest = 10,
  kTokenizedRequest = 11,
  kAbort = 12,
  kRequestStart = 13,
  kTokenDelta = 14,
  kTextDelta = 15,
  kTokenDeltaBatch = 16,
  kTokenizeRequest = 17,
  kTokenizeReply = 18,
  kStepPlan = 20,
  kStepResult = 21,
  kExecutorInfoRequest = 22,
  kExecutorInfo = 23,
  kStatsRequest = 30,
  kStats = 31,
  kBenchPayload = 40,
};

// One entry of OpenAI's logit_bias: added to the token's logit before sampling.
struct LogitBias {
  int32_t token = 0;
  float bias = 0.0f;
  MSGPACK_DEFINE_MAP(token, bias);
};

// (1.6) A constraint on what a sample may say (structured output): the sampled text must be a
// sentence of the grammar that `actors/grammar` compiles from this source. Who maps which API
// field onto it, and where masks are made, is in docs/structured-output.md.
enum class StructuredKind : uint8_t {
  kJsonSchema = 0,  // text: a JSON Schema (JSON text)
  kJsonObject = 1,  // any JSON object; text unused
  kRegex = 2,       // text: a regular expression the whole output matches
  kChoice = 3,      // the output is exactly one of `choices`
  kGrammar = 4,     // text: a GBNF grammar (llama.cpp's), start rule `root`
};

struct StructuredOutput {
  StructuredKind kind = StructuredKind::kJsonObject;
  std::string text;
  std::vector<std::string> choices;
  // "" = the grammar applies from the first sampled token. Else the text of one token of the
  // vocabulary (a reasoning model's "</think>"): tokens are free until the sample emits it, and
  // the grammar applies to what follows (structured output after the reasoning part).
  std::string begin_after;
  MSGPACK_DEFINE_MAP(kind, text, choices, begin_after);
};

// Sampling settings of one request (OpenAI's names where the concept is the same; vLLM's for
// the fields OpenAI lacks, with vLLM's meaning).
struct SamplingParams {
  int32_t max_tokens = 16;  // 0 = until the context is full (chat requests without max_tokens)
  int32_t min_tokens = 0;
  float temperature = 1.0f;  // 0 = greedy
  float top_p = 1.0f;
  int32_t top_k = -1;        // -1 = off
  int64_t seed = -1;         // -1 = unseeded
  int32_t n = 1;             // parallel samples sharing the prompt's blocks
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  bool logprobs = false;
  int32_t top_logprobs = 0;
  bool skip_special_tokens = true;
  // (1.4) Logits processing, in vLLM's order (gpu/sampling_rules.h): allowed_token_ids, bad
  // words, min_tokens' mask of eos and stop_token_ids, logit_bias, then the penalties; min_p
  // after the temperature. The repetition penalty reads prompt and output tokens, frequency and
  // presence penalties the output tokens only.
  float repetition_penalty = 1.0f;  // > 0; 1 = off
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  float min_p = 0.0f;               // [0, 1]; 0 = off
  std::vector<LogitBias> logit_bias;            // each token at most once
  std::vector<int32_t> allowed_token_ids;       // empty = every token
  std::vector<std::string> bad_words;           // text; the tokenizer stage fills bad_words_token_ids
  std::vector<std::vector<int32_t>> bad_words_token_ids;
  // Keep only the last N prompt tokens (applied by the tokenizer stage); 0 = off, -1 = max_model_len.
  int32_t truncate_prompt_tokens = 0;
  // (1.4) Keep the text of the stop string or stop token that ended a sample (vLLM's name).
  bool include_stop_str_in_output = false;
  // (1.6) Structured output; nil = free text.
  std::optional<StructuredOutput> structured;
  // (1.6) vLLM's prompt_logprobs: -1 = off; k >= 0 = the logprob (and rank) of every prompt token
  // after the first, with the k most likely alternatives at each position. The scheduler then
  // computes the whole prompt (no prefix-cache hit: a cached block has no logits).
  int32_t prompt_logprobs = -1;
  // (1.6) The detokenizer puts the prompt's token ids and text on the request's first TextDelta
  // (echo, return_token_ids, prompt_logprobs).
  bool return_prompt = false;
  MSGPACK_DEFINE_MAP(max_tokens, min_tokens, temperature, top_p, top_k, seed, n, stop,
                     stop_token_ids, ignore_eos, logprobs, top_logprobs, skip_special_tokens,
                     repetition_penalty, frequency_penalty, presence_penalty, min_p, logit_bias,
                     allowed_token_ids, bad_words, bad_words_token_ids, truncate_prompt_tokens,
                     include_stop_str_in_output, structured, prompt_logprobs, return_prompt);
};

// (1.6) A function call an assistant message made (OpenAI's `tool_calls[i]`, type "function").
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text, as OpenAI carries it
  MSGPACK_DEFINE_MAP(id, name, arguments);
};

struct ChatMessage {
  std::string role;
  std::string content;
  // (1.6) Tool use in the history, rendered by the chat template: an assistant's calls, and on a
  // "tool" message the id of the call it answers; `name` is OpenAI's optional participant or
  // function name.
  std::vector<ToolCall> tool_calls;
  std::string tool_call_id;
  std::string name;
  MSGPACK_DEFINE_MAP(role, content, tool_calls, tool_call_id, name);
};

// gateway -> tokenizer. Exactly one of prompt / prompt_ids / messages carries the input.
struct GenerateRequest {
  static constexpr MessageType kType = MessageType::kGenerateRequest;
  uint64_t request_id = 0;
  std::string model;
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  std::vector<ChatMessage> messages;
  bool is_chat = false;
  bool add_generation_prompt = true;
  bool enable_thinking = true;  // Qwen3's chat-template switch
  SamplingParams sampling;
  int32_t priority = 0;         // lower runs first under the priority policy
  int64_t arrival_ns = 0;       // steady-clock time the gateway received it
  // (1.3) Who asks, for the fair-share policy: the OpenAI `user` (later the API key); "" = anonymous.
  std::string tenant;
  // (1.3) The expected number of generated tokens, for the sjf policy; 0 = no prediction, else >= 1.
  int32_t predicted_output_tokens = 0;
  // (1.4) Whether the tokenizer adds the special tokens (bos) to a prompt: -1 = the input's
  // default (yes for prompt text, no for chat, whose template writes them), 0 = no, 1 = yes.
  int32_t add_special_tokens = -1;
  // (1.5) A client's API key, checked by the client endpoint when the gateway requires keys; the
  // gateway clears it before the request goes on into the pipeline.
  std::string api_key;
  // (1.6) The request's `tools` (a JSON array of OpenAI tool definitions, as sent), given to the
  // chat template as `tools`; "" = none.
  std::string tools;
  // (1.6) Chat: vLLM's continue_final_message (the last message is left open, to be continued:
  // the prompt ends where its content ends); a chat template for this request only ("" = the
  // server's; the gateway lets a client send one only when the server trusts them); and the
  // template's extra variables (chat_template_kwargs: a JSON object's text, "" = none; its
  // enable_thinking is also enable_thinking above).
  bool continue_final_message = false;
  std::string chat_template;
  std::string chat_template_kwargs;
  // (1.6) vLLM's cache_salt: the prefix cache shares blocks only between requests with the same
  // salt ("" = none), so that tenants cannot learn each other's prompts from cache hits.
  std::string cache_salt;
  MSGPACK_DEFINE_MAP(request_id, model, prompt, prompt_ids, messages, is_chat,
                     add_generation_prompt, enable_thinking, sampling, priority, arrival_ns, tenant,
                     predicted_output_tokens, add_special_tokens, api_key, tools, continue_final_message,
                     chat_template, chat_template_kwargs, cache_salt);
};

// tokenizer -> scheduler.
struct TokenizedRequest {
  static constexpr MessageType kType = MessageType::kTokenizedRequest;
  uint64_t request_id = 0;
  std::vector<int32_t> prompt_ids;
  SamplingParams sampling;
  int32_t priority = 0;
  int64_t arrival_ns = 0;
  std::string tenant;                   // (1.3) GenerateRequest's
  int32_t predicted_output_tokens = 0;  // (1.3) GenerateRequest's, or a predictor's; 0 = none
  std::string cache_salt;               // (1.6) GenerateRequest's
  MSGPACK_DEFINE_MAP(request_id, prompt_ids, sampling, priority, arrival_ns, tenant, predicted_output_tokens,
                     cache_salt);
};

// Ends a request early: a client's disconnect or cancel, a stop string found by the detokenizer.
struct Abort {
  static constexpr MessageType kType = MessageType::kAbort;
  uint64_t request_id = 0;
  std::string reason;  // "abort" (client), "stop" (stop string), ...
  int32_t index = -1;  // which of the n samples; -1 = all of them
  MSGPACK_DEFINE_MAP(request_id, reason, index);
};

// scheduler -> detokenizer, once per request before its first TokenDelta (same socket, so it
// arrives first): what the detokenizer needs to turn tokens into text.
struct RequestStart {
  static constexpr MessageType kType = MessageType::kRequestStart;
  uint64_t request_id = 0;
  int32_t n = 1;
  int32_t prompt_tokens = 0;
  std::vector<std::string> stop;
  bool skip_special_tokens = true;
  bool logprobs = false;
  // (1.4) The sampling's: a sample the scheduler ends with "stop" on one of these tokens (or an
  // eos) loses the token's text unless include_stop_str_in_output; stop strings stay in the text
  // with it.
  std::vector<int32_t> stop_token_ids;
  bool include_stop_str_in_output = false;
  // (1.6) The prompt's token ids when the sampling asks for them (SamplingParams::return_prompt),
  // else empty.
  std::vector<int32_t> prompt_ids;
  // (1.6) When the request's first work was planned (steady clock, ns, as arrival_ns; 0 =
  // unknown): its queue time ends there (the gateway's vllm:request_queue_time_seconds).
  int64_t scheduled_ns = 0;
  MSGPACK_DEFINE_MAP(request_id, n, prompt_tokens, stop, skip_special_tokens, logprobs, stop_token_ids,
                     include_stop_str_in_output, prompt_ids, scheduled_ns);
};

struct TopLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
  MSGPACK_DEFINE_MAP(token, logprob);
};

// (1.6) Prompt logprobs (SamplingParams::prompt_logprobs) of consecutive prompt positions: entry
// i is about the token at position first_position + i, scored by the log-softmax of the raw
// logits of the position before it: its logprob, its rank among the vocabulary (1 = the most
// likely) and the best alternatives there, best first.
struct PromptLogprobs {
  uint64_t id = 0;              // the seq_id (StepResult) or the request_id (TokenDeltaBatch, TextDelta)
  int32_t first_position = 1;   // position 0 has no logits before it
  std::vector<float> logprobs;
  std::vector<int32_t> ranks;
  std::vector<std::vector<TopLogprob>> top_logprobs;  // one list per position
  MSGPACK_DEFINE_MAP(id, first_position, logprobs, ranks, top_logprobs);
};

// (1.6) A StepPlan's request to score the tokens that one sequence's work feeds: the executor
// returns, for each position of the work but its last, the logprob of the next token of the work,
// and for the last position that of `next_token` (the prompt token after the work), unless it
// is -1 (the work ends the prompt: its last position predicts a generated token).
struct PromptScoring {
  uint64_t seq_id = 0;
  int32_t top_logprobs = 0;
  int32_t next_token = -1;
  MSGPACK_DEFINE_MAP(seq_id, top_logprobs, next_token);
};

// scheduler -> detokenizer: the new tokens of one sample of one request (a delta, never the whole
// sequence). finish_reason is empty while the sample runs, else "stop", "length", "abort", "error".
struct TokenDelta {
  static constexpr MessageType kType = MessageType::kTokenDelta;
  uint64_t request_id = 0;
  int32_t index = 0;  // which of the n samples
  std::vector<int32_t> token_ids;
  std::vector<float> logprobs;                       // one per token when requested
  std::vector<std::vector<TopLogprob>> top_logprobs;  // one list per token when requested
  std::string finish_reason;
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;  // total so far for this sample
  int32_t cached_tokens = 0;      // prompt tokens served from the prefix cache
  MSGPACK_DEFINE(request_id, index, token_ids, logprobs, top_logprobs, finish_reason,
                     prompt_tokens, completion_tokens, cached_tokens);
};

// scheduler -> detokenizer: the TokenDeltas of one step in one message (protocol 1.1), so that a
// step costs one message instead of one per running sample. The deltas are in the order the
// scheduler emitted them; a receiver handles them exactly as it would the same TokenDeltas sent
// one by one (and must accept both forms: an external scheduler may send single TokenDeltas).
struct TokenDeltaBatch {
  static constexpr MessageType kType = MessageType::kTokenDeltaBatch;
  std::vector<TokenDelta> deltas;
  // (1.6) The whole prompt's logprobs (id = request_id, from position 1) of requests that asked
  // for them, sent once, in the batch of the request's first TokenDelta and before it.
  std::vector<PromptLogprobs> prompt_logprobs;
  MSGPACK_DEFINE_MAP(deltas, prompt_logprobs);
};

// detokenizer -> gateway: text on whole UTF-8 characters, never including a stop string.
struct TextDelta {
  static constexpr MessageType kType = MessageType::kTextDelta;
  uint64_t request_id = 0;
  int32_t index = 0;
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<float> logprobs;
  std::vector<std::vector<TopLogprob>> top_logprobs;
  std::string finish_reason;
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
  // (1.4) What ended a sample with "stop" (vLLM's stop_reason): the stop string matched, or the
  // stop token (one of stop_token_ids); neither for an eos token or another finish reason.
  std::string stop_string;
  int32_t stop_token = -1;
  // (1.6) On the request's first TextDelta only (whichever sample it is for), when the sampling
  // asked (return_prompt, prompt_logprobs): the prompt's token ids and its text (decoded), and its
  // logprobs (id = request_id, positions 1 ..).
  std::vector<int32_t> prompt_token_ids;
  std::string prompt_text;
  std::optional<PromptLogprobs> prompt_logprobs;
  // (1.6) With logprobs or prompt_logprobs: the text of each token this delta names (its tokens,
  // their alternatives, the prompt's), each decoded alone with special tokens kept: the bytes of
  // the token, which need not be whole UTF-8 characters (a byte-level token may hold part of one).
  std::map<int32_t, std::string> token_texts;
  // (1.6) RequestStart's scheduled_ns, on the request's first TextDelta (else 0).
  int64_t scheduled_ns = 0;
  MSGPACK_DEFINE_MAP(request_id, index, text, token_ids, logprobs, top_logprobs, finish_reason,
                     prompt_tokens, completion_tokens, cached_tokens, stop_string, stop_token,
                     prompt_token_ids, prompt_text, prompt_logprobs, token_texts, scheduled_ns);
};

// (1.4) gateway -> tokenizer: encode a prompt or chat messages, or decode token ids, without
// generating (the HTTP API's /tokenize and /detokenize). Answered by a TokenizeReply, or an
// ErrorReply with the same request_id.
struct TokenizeRequest {
  static constexpr MessageType kType = MessageType::kTokenizeRequest;
  uint64_t request_id = 0;
  bool detokenize = false;            // decode `tokens` instead of encoding
  std::string prompt;                 // encode: the text ...
  std::vector<ChatMessage> messages;  // ... or chat messages (is_chat), through the chat template
  bool is_chat = false;
  bool add_generation_prompt = true;
  bool enable_thinking = true;
  int32_t add_special_tokens = -1;    // as GenerateRequest's
  bool return_token_strs = false;     // encode: also each token's string in the vocabulary
  std::vector<int32_t> tokens;        // decode: the ids
  std::string chat_template_kwargs;   // (1.6) as GenerateRequest's
  std::string tools;                  // (1.6) as GenerateRequest's
  bool continue_final_message = false;  // (1.6) as GenerateRequest's
  std::string chat_template;          // (1.6) as GenerateRequest's
  MSGPACK_DEFINE_MAP(request_id, detokenize, prompt, messages, is_chat, add_generation_prompt, enable_thinking,
                     add_special_tokens, return_token_strs, tokens, chat_template_kwargs, tools,
                     continue_final_message, chat_template);
};

// (1.4) tokenizer -> gateway: the answer to a TokenizeRequest.
struct TokenizeReply {
  static constexpr MessageType kType = MessageType::kTokenizeReply;
  uint64_t request_id = 0;
  std::vector<int32_t> tokens;         // encode: the ids
  std::vector<std::string> token_strs; // encode with return_token_strs: one per id
  std::string text;                    // decode: the text
  int32_t max_model_len = 0;
  MSGPACK_DEFINE_MAP(request_id, tokens, token_strs, text, max_model_len);
};

// Any actor's answer to a message it cannot serve. request_id is 0 when the frame did not decode
// far enough to know it. code follows HTTP (400 bad input, 413 too large, 503 overloaded, 500).
struct ErrorReply {
  static constexpr MessageType kType = MessageType::kErrorReply;
  uint64_t request_id = 0;
  int32_t code = 400;
  std::string kind;     // "bad_frame", "unknown_type", "version", "invalid_request", ...
  std::string message;
  MSGPACK_DEFINE_MAP(request_id, code, kind, message);
};

struct Ping {
  static constexpr MessageType kType = MessageType::kPing;
  uint64_t seq = 0;
  int64_t sent_ns = 0;
  MSGPACK_DEFINE_MAP(seq, sent_ns);
};

struct Pong {
  static constexpr MessageType kType = MessageType::kPong;
  uint64_t seq = 0;
  int64_t sent_ns = 0;
  MSGPACK_DEFINE_MAP(seq, sent_ns);
};

// The payload of the runtime benchmark: an opaque blob of a chosen size.
struct BenchPayload {
  static constexpr MessageType kType = MessageType::kBenchPayload;
  uint64_t seq = 0;
  std::string blob;
  MSGPACK_DEFINE_MAP(seq, blob);
};

// ---- scheduler <-> executor -------------------------------------------------------------------

// (1.4) A sequence's logits processing (gpu::SamplingRules), sent with its first sampling work
// and kept by the executor until the sequence is listed in StepPlan::finished: static per
// request, so a step does not carry it again.
struct SamplingRules {
  float repetition_penalty = 1.0f;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  float min_p = 0.0f;
  std::vector<LogitBias> logit_bias;
  std::vector<int32_t> allowed_token_ids;
  std::vector<std::vector<int32_t>> bad_words;  // token sequences
  int32_t min_tokens = 0;
  std::vector<int32_t> min_tokens_stop_ids;     // eos (unless ignore_eos) and stop_token_ids
  std::vector<int32_t> prompt_ids;              // for repetition_penalty; empty when it is off
  std::vector<int32_t> output_ids;              // tokens the sequence generated before
  // (1.6) The request's structured output: the executor masks the tokens that leave the grammar
  // (its matcher replays output_ids first, after a recompute).
  std::optional<StructuredOutput> structured;
  MSGPACK_DEFINE_MAP(repetition_penalty, frequency_penalty, presence_penalty, min_p, logit_bias,
                     allowed_token_ids, bad_words, min_tokens, min_tokens_stop_ids, prompt_ids, output_ids,
                     structured);
};

// One sequence's share of a step: `token_ids` are the new tokens it contributes (a prefill chunk,
// or the one decode token); they occupy positions [start_pos, start_pos + size). When
// `use_last_sampled` is set, token_ids is empty and the executor feeds the token it sampled for
// this sequence in the previous step (decode inputs stay on the device; shared/DESIGN.md "Overlap").
struct SeqWork {
  uint64_t seq_id = 0;
  std::vector<int32_t> token_ids;
  bool use_last_sampled = false;
  int32_t num_tokens = 0;        // == token_ids.size(), or 1 with use_last_sampled
  int32_t start_pos = 0;
  std::vector<int32_t> block_table;  // physical blocks of logical blocks block_table_start, ...
  bool sample = false;           // sample a token after the last of these tokens
  float temperature = 1.0f;
  float top_p = 1.0f;
  int32_t top_k = -1;
  int64_t seed = -1;             // with a seed, the n-th sampled token uses (seed, n)
  int32_t sample_index = 0;      // how many tokens this sequence sampled before
  int32_t top_logprobs = 0;
  // block_table holds the entries from this index on; the executor keeps entries [0, start) from
  // the sequence's earlier work (protocol 1.2). 0 = the whole table, what a scheduler that keeps
  // no record of what it sent always gives. A decode step that adds no block sends no entry.
  int32_t block_table_start = 0;
  // (1.4) Set on the sequence's first work that samples, when its request processes logits
  // (SamplingRules above); nil otherwise.
  std::optional<SamplingRules> rules;
  MSGPACK_DEFINE(seq_id, token_ids, use_last_sampled, num_tokens, start_pos, block_table,
                 sample, temperature, top_p, top_k, seed, sample_index, top_logprobs, block_table_start,
                 rules);
};

struct BlockCopy {
  int32_t src = 0;
  int32_t dst = 0;
  MSGPACK_DEFINE(src, dst);
};

// scheduler -> executor. Copies run before the forward pass, in this order: swap_out (device ->
// host), swap_in (host -> device), copy (device -> device, copy-on-write).
struct StepPlan {
  static constexpr MessageType kType = MessageType::kStepPlan;
  uint64_t step_id = 0;
  std::vector<SeqWork> seqs;
  std::vector<BlockCopy> swap_out;
  std::vector<BlockCopy> swap_in;
  std::vector<BlockCopy> copy;
  std::vector<uint64_t> finished;  // sequences whose per-sequence executor state can be dropped
  // (1.6) Works of this plan whose tokens are scored (prompt_logprobs), after the step.
  std::vector<PromptScoring> prompt_scoring;
  MSGPACK_DEFINE_MAP(step_id, seqs, swap_out, swap_in, copy, finished, prompt_scoring);
};

struct SeqOutput {
  uint64_t seq_id = 0;
  int32_t token = -1;
  float logprob = 0.0f;
  std::vector<TopLogprob> top_logprobs;
  MSGPACK_DEFINE(seq_id, token, logprob, top_logprobs);
};

// (1.6) A sequence the executor cannot go on with while the rest of its step ran (its structured
// output does not compile): the scheduler fails that sequence's request alone, with `message`.
struct SeqError {
  uint64_t seq_id = 0;
  std::string message;
  MSGPACK_DEFINE_MAP(seq_id, message);
};

// executor -> scheduler: one output per SeqWork that asked to sample, in plan order.
struct StepResult {
  static constexpr MessageType kType = MessageType::kStepResult;
  uint64_t step_id = 0;
  std::vector<SeqOutput> outputs;
  int64_t forward_us = 0;
  std::string error;  // non-empty when the step failed; the scheduler fails its requests
  // (1.6) Sequences failed on their own (their outputs are still there, and are dropped).
  std::vector<SeqError> seq_errors;
  // (1.6) One entry per PromptScoring of the plan (id = seq_id).
  std::vector<PromptLogprobs> prompt_logprobs;
  MSGPACK_DEFINE_MAP(step_id, outputs, forward_us, error, seq_errors, prompt_logprobs);
};

// scheduler -> executor at start-up: what does the loaded model and its cache look like?
struct ExecutorInfoRequest {
  static constexpr MessageType kType = MessageType::kExecutorInfoRequest;
  uint64_t seq = 0;
  MSGPACK_DEFINE_MAP(seq);
};

struct ExecutorInfo {
  static constexpr MessageType kType = MessageType::kExecutorInfo;
  std::string backend;               // "cpu", "cuda"
  int32_t block_size = 16;
  int32_t num_gpu_blocks = 0;
  int32_t num_cpu_blocks = 0;
  int32_t max_model_len = 0;
  int32_t vocab_size = 0;
  std::vector<int32_t> eos_token_ids;
  std::string error;                 // non-empty when the executor could not load its model
  MSGPACK_DEFINE_MAP(backend, block_size, num_gpu_blocks, num_cpu_blocks, max_model_len, vocab_size,
                     eos_token_ids, error);
};

// ---- statistics ------------------------------------------------------------------------------

struct StatsRequest {
  static constexpr MessageType kType = MessageType::kStatsRequest;
  uint64_t seq = 0;
  MSGPACK_DEFINE_MAP(seq);
};

struct Stats {
  static constexpr MessageType kType = MessageType::kStats;
  int32_t running = 0;
  int32_t waiting = 0;
  int32_t swapped = 0;
  double kv_usage = 0.0;         // fraction of device blocks in use
  double prefix_hit_rate = 0.0;  // prompt tokens served from cache / prompt tokens looked up
  int64_t num_preemptions = 0;
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
  int64_t steps = 0;
  int32_t num_gpu_blocks = 0;
  int32_t free_gpu_blocks = 0;
  int32_t num_cpu_blocks = 0;
  int32_t free_cpu_blocks = 0;
  // (1.6) Tokens per step (vLLM's vllm:iteration_tokens_total): how many steps had at most
  // kIterationTokenBuckets[i] tokens (not cumulative; one more entry for larger), and their sum.
  std::vector<int64_t> iteration_tokens;
  int64_t iteration_tokens_sum = 0;
  MSGPACK_DEFINE_MAP(running, waiting, swapped, kv_usage, prefix_hit_rate, num_preemptions,
                     prompt_tokens, generation_tokens, steps, num_gpu_blocks, free_gpu_blocks,
                     num_cpu_blocks, free_cpu_blocks, iteration_tokens, iteration_tokens_sum);
};

// The upper bounds of Stats::iteration_tokens' buckets (vLLM's).
inline constexpr int64_t kIterationTokenBuckets[] = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};

}  // namespace zinfer::protocol

MSGPACK_ADD_ENUM(zinfer::protocol::StructuredKind);
