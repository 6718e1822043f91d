// The sweep's plots: gnuplot scripts written beside the CSV files (prefill.gp -> prefill.png,
// decode.gp -> decode.png), run with gnuplot when it is on PATH. The scripts read the CSVs by
// relative name, so a results folder can be moved and re-plotted with `gnuplot decode.gp`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zinfer::bench {

// Time of one forward pass vs prompt length, log-log: measured (solid) and the three lines (dashed).
std::string prefill_gnuplot_script(const std::string& terminal, const std::string& title);
// Time per decode step vs users, log-log: one measured curve per context and, in the same colour,
// dashed theoretical lines (dash type by weight format).
std::string decode_gnuplot_script(const std::string& terminal, const std::string& title,
                                  const std::vector<int64_t>& contexts);

// The gnuplot executable found on PATH, or "" when there is none.
std::string find_gnuplot();
// "pngcairo" when this gnuplot has it, else "png", else "" (no PNG terminal).
std::string png_terminal(const std::string& gnuplot);
// Runs `gnuplot script` in `dir`; throws std::runtime_error with the exit status on failure.
void run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& script);

struct PlotRequest {
  std::string out_dir;
  std::string title;              // first line of every plot's title
  bool prefill = false;           // prefill.csv is there
  std::vector<int64_t> contexts;  // decode.csv's contexts (empty: no decode plot)
};

struct PlotOutcome {
  std::vector<std::string> scripts;  // written always
  std::vector<std::string> images;   // written when gnuplot ran
  std::string note;                  // why no image was made, when none was
};

// Writes the scripts and, when gnuplot with a PNG terminal is on PATH, the images.
PlotOutcome make_plots(const PlotRequest& request);

}  // namespace zinfer::bench
