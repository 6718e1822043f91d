#include "tools/bench/lib/plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "tools/bench/lib/sweep.h"

namespace zinfer::bench {
namespace {

// A gnuplot single-quoted string: a quote inside is written twice.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

// The title's lines joined by gnuplot's "\n" escape.
std::string title_text(const std::string& title) {
  std::string out = "\"";
  for (char c : title) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

// `title` may hold several lines, separated by '\n'.
std::string preamble(const std::string& terminal, const std::string& png, const std::string& title) {
  std::ostringstream s;
  s << "set terminal " << terminal << " size 1100,750" << (terminal == "pngcairo" ? " font ',11'" : "") << "\n"
    << "set output " << quoted(png) << "\n"
    << "set datafile separator ','\n"
    << "set datafile columnheaders\n"
    << "set title " << title_text(title) << " noenhanced\n"
    << "set logscale xy\n"
    << "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
    << "set key outside right top noenhanced\n";
  return s.str();
}

// Dash types of the three lines (w16kv16, w8kv16, w4kv16); measured curves are solid.
constexpr std::array<int, 3> kLineDash = {2, 3, 4};

}  // namespace

std::string prefill_gnuplot_script(const std::string& terminal, const std::string& title) {
  std::ostringstream s;
  s << "# zinfer-bench sweep: time of one prefill forward pass vs prompt length (data: prefill.csv).\n"
    << "# Re-plot with: gnuplot prefill.gp\n"
    << preamble(terminal, "prefill.png", title + "\nprefill: one forward pass of L tokens")
    << "set xlabel 'prompt length L (tokens)'\n"
    << "set ylabel 'time (ms)'\n"
    << "plot 'prefill.csv' using 1:2 with linespoints lw 2 pt 7 lc rgb '#000000' title 'measured'";
  for (size_t f = 0; f < kSweepLineNames.size(); ++f) {
    s << ", \\\n     '' using 1:" << 4 + f << " with lines lw 2 dt " << kLineDash[f] << " lc " << f + 1
      << " title '" << kSweepLineNames[f] << " (theory)'";
  }
  s << "\n";
  return s.str();
}

std::string decode_gnuplot_script(const std::string& terminal, const std::string& title,
                                  const std::vector<int64_t>& contexts) {
  std::ostringstream s;
  s << "# zinfer-bench sweep: time per decode step vs concurrent users, per context length (data: decode.csv).\n"
    << "# Solid: measured; dashed, same colour: theoretical lines (dash type 2 = w16kv16, 3 = w8kv16,\n"
    << "# 4 = w4kv16). Re-plot with: gnuplot decode.gp\n"
    << preamble(terminal, "decode.png", title + "\ndecode: one step, every user adds one token at the given context")
    << "set xlabel 'concurrent users (sequences per step)'\n"
    << "set ylabel 'time per step (ms)'\n"
    << "plot ";
  bool first = true;
  for (size_t i = 0; i < contexts.size(); ++i) {
    const std::string c = std::to_string(contexts[i]);
    const std::string pick = "($1==" + c + " ? $";
    const int colour = static_cast<int>(i) + 1;
    s << (first ? "" : ", \\\n     ") << "'decode.csv' using 2:" << pick << "3 : 1/0) with linespoints lw 2 pt 7 lc "
      << colour << " title 'measured, context " << c << "'";
    first = false;
    for (size_t f = 0; f < kSweepLineNames.size(); ++f) {
      s << ", \\\n     '' using 2:" << pick << 5 + f << " : 1/0) with lines lw 1.5 dt " << kLineDash[f] << " lc "
        << colour << " title '" << kSweepLineNames[f] << ", context " << c << "'";
    }
  }
  s << "\n";
  return s.str();
}

std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string png_terminal(const std::string& gnuplot) {
  // `set terminal` lists the terminals this build has; the executable path came from PATH, and is
  // quoted for the shell.
  std::string cmd = "'";
  for (char c : gnuplot) cmd += c == '\'' ? std::string("'\\''") : std::string(1, c);
  cmd += "' -e 'set terminal' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  std::string listing;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) listing.append(buf, n);
  ::pclose(p);
  auto has = [&](const std::string& name) {
    std::istringstream lines(listing);
    std::string word;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream(line) >> word;
      if (word == name) return true;
    }
    return false;
  };
  if (has("pngcairo")) return "pngcairo";
  if (has("png")) return "png";
  return "";
}

void run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& script) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start gnuplot: fork failed");
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execl(gnuplot.c_str(), gnuplot.c_str(), script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0) throw std::runtime_error("waiting for gnuplot failed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("gnuplot " + script + " in " + dir + " failed (exit status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
}

PlotOutcome make_plots(const PlotRequest& request) {
  PlotOutcome out;
  const std::string gnuplot = find_gnuplot();
  const std::string terminal = gnuplot.empty() ? "" : png_terminal(gnuplot);
  // Scripts are written for pngcairo when gnuplot is missing: the likeliest terminal where it is
  // installed later.
  const std::string script_terminal = terminal.empty() ? "pngcairo" : terminal;
  std::vector<std::pair<std::string, std::string>> plots;  // (script, image)
  if (request.prefill) {
    write_text_file(request.out_dir + "/prefill.gp", prefill_gnuplot_script(script_terminal, request.title));
    plots.emplace_back("prefill.gp", "prefill.png");
  }
  if (!request.contexts.empty()) {
    write_text_file(request.out_dir + "/decode.gp",
                    decode_gnuplot_script(script_terminal, request.title, request.contexts));
    plots.emplace_back("decode.gp", "decode.png");
  }
  for (const auto& [script, image] : plots) out.scripts.push_back(request.out_dir + "/" + script);
  if (gnuplot.empty()) {
    out.note = "gnuplot is not on PATH: wrote the CSV files and gnuplot scripts, no PNG (install gnuplot-nox and run "
               "`gnuplot prefill.gp` / `gnuplot decode.gp` in " + request.out_dir + ")";
    return out;
  }
  if (terminal.empty()) {
    out.note = "gnuplot at " + gnuplot + " has neither the pngcairo nor the png terminal: no PNG written";
    return out;
  }
  for (const auto& [script, image] : plots) {
    const std::string path = request.out_dir + "/" + image;
    std::filesystem::remove(path);  // so that a stale image from an earlier run cannot pass for this one
    run_gnuplot(gnuplot, request.out_dir, script);
    if (!std::filesystem::exists(path)) throw std::runtime_error("gnuplot " + script + " wrote no " + path);
    out.images.push_back(path);
  }
  return out;
}

}  // namespace zinfer::bench
