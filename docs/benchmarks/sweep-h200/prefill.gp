# zinfer-bench sweep: time of one prefill forward pass vs prompt length (data: prefill.csv).
# Re-plot with: gnuplot prefill.gp
set terminal pngcairo size 1100,750 font ',11'
set output 'prefill.png'
set datafile separator ','
set datafile columnheaders
set title "llama3-8b-shape (LlamaForCausalLM) on cuda; lines for NVIDIA H200 SXM 141GB: 4800 GB/s, 989.4 TFLOPS (8-bit 1979)\nprefill: one forward pass of L tokens" noenhanced
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key outside right top noenhanced
set xlabel 'prompt length L (tokens)'
set ylabel 'time (ms)'
plot 'prefill.csv' using 1:2 with linespoints lw 2 pt 7 lc rgb '#000000' title 'measured', \
     '' using 1:4 with lines lw 2 dt 2 lc 1 title 'w16kv16 (theory)', \
     '' using 1:5 with lines lw 2 dt 3 lc 2 title 'w8kv16 (theory)', \
     '' using 1:6 with lines lw 2 dt 4 lc 3 title 'w4kv16 (theory)'
