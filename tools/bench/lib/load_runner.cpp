#include "tools/bench/lib/load_runner.h"

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "tools/bench/lib/arrival.h"

namespace zinfer::bench {
namespace {

// A progress bar on stderr, redrawn at most ten times a second; where stderr is a file or a pipe
// (a log), one line per tenth of the requests instead of a redrawn bar.
class Progress {
 public:
  Progress(size_t total, bool enabled) : total_(total), enabled_(enabled), tty_(::isatty(::fileno(stderr)) == 1) {}

  void update(size_t done, size_t failed, double elapsed_s, bool force) {
    if (!enabled_) return;
    if (!tty_) {
      const size_t tenth = total_ ? done * 10 / total_ : 10;
      if (tenth == last_tenth_ && !force) return;
      last_tenth_ = tenth;
      std::fprintf(stderr, "%zu/%zu done, %zu failed, %.1f s\n", done, total_, failed, elapsed_s);
      return;
    }
    if (!force && elapsed_s - last_draw_s_ < 0.1) return;
    last_draw_s_ = elapsed_s;
    const int width = 40;
    const int filled = total_ ? static_cast<int>(width * done / total_) : width;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(width, ' ');
    std::fprintf(stderr, "\r[%s] %zu/%zu done, %zu failed, %.1f s", bar.c_str(), done, total_, failed, elapsed_s);
    if (done == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  size_t total_;
  bool enabled_;
  bool tty_;
  double last_draw_s_ = -1;
  size_t last_tenth_ = 0;
};

}  // namespace

void count_output_tokens(std::vector<RequestRecord>& records, const TokenCodec& codec) {
  for (auto& r : records) {
    if (r.success) r.tokenizer_output_tokens = static_cast<int>(codec.encode(r.generated_text).size());
  }
}

LoadResult run_load(Backend& backend, const std::vector<BenchRequest>& requests, const LoadOptions& opt) {
  if (opt.max_concurrency && *opt.max_concurrency <= 0) {
    throw std::invalid_argument("--max-concurrency must be > 0, got " + std::to_string(*opt.max_concurrency));
  }
  const std::vector<double> offsets = arrival_offsets(requests.size(), opt.request_rate, opt.burstiness, opt.seed);
  LoadResult result;
  result.records.resize(requests.size());

  std::mutex mu;
  std::condition_variable cv;
  size_t in_flight = 0, finished = 0, failed = 0;
  Progress progress(requests.size(), opt.progress);

  const Clock::time_point origin = Clock::now();
  for (size_t i = 0; i < requests.size(); ++i) {
    std::this_thread::sleep_until(origin + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(offsets[i])));
    {
      std::unique_lock lock(mu);
      if (opt.max_concurrency) {
        cv.wait(lock, [&] { return in_flight < static_cast<size_t>(*opt.max_concurrency); });
      }
      ++in_flight;
    }
    BackendRequest req;
    req.index = i;
    req.model = opt.model;
    req.prompt = requests[i].prompt;
    req.prompt_len = requests[i].prompt_len;
    req.max_tokens = requests[i].output_len;
    req.ignore_eos = opt.ignore_eos;
    req.origin = origin;
    backend.submit(std::move(req), [&, i](RequestRecord rec) {
      std::lock_guard lock(mu);
      rec.index = i;
      if (!rec.success) ++failed;
      result.records[i] = std::move(rec);
      --in_flight;
      ++finished;
      progress.update(finished, failed, seconds_since(origin), finished == requests.size());
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return finished == requests.size(); });
  result.duration_s = seconds_since(origin);
  return result;
}

}  // namespace zinfer::bench
