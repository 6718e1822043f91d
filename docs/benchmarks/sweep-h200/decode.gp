# zinfer-bench sweep: time per decode step vs concurrent users, per context length (data: decode.csv).
# Solid: measured; dashed, same colour: theoretical lines (dash type 2 = w16kv16, 3 = w8kv16,
# 4 = w4kv16). Re-plot with: gnuplot decode.gp
set terminal pngcairo size 1100,750 font ',11'
set output 'decode.png'
set datafile separator ','
set datafile columnheaders
set title "llama3-8b-shape (LlamaForCausalLM) on cuda; lines for NVIDIA H200 SXM 141GB: 4800 GB/s, 989.4 TFLOPS (8-bit 1979)\ndecode: one step, every user adds one token at the given context" noenhanced
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key outside right top noenhanced
set xlabel 'concurrent users (sequences per step)'
set ylabel 'time per step (ms)'
plot 'decode.csv' using 2:($1==512 ? $3 : 1/0) with linespoints lw 2 pt 7 lc 1 title 'measured, context 512', \
     '' using 2:($1==512 ? $5 : 1/0) with lines lw 1.5 dt 2 lc 1 title 'w16kv16, context 512', \
     '' using 2:($1==512 ? $6 : 1/0) with lines lw 1.5 dt 3 lc 1 title 'w8kv16, context 512', \
     '' using 2:($1==512 ? $7 : 1/0) with lines lw 1.5 dt 4 lc 1 title 'w4kv16, context 512', \
     'decode.csv' using 2:($1==2048 ? $3 : 1/0) with linespoints lw 2 pt 7 lc 2 title 'measured, context 2048', \
     '' using 2:($1==2048 ? $5 : 1/0) with lines lw 1.5 dt 2 lc 2 title 'w16kv16, context 2048', \
     '' using 2:($1==2048 ? $6 : 1/0) with lines lw 1.5 dt 3 lc 2 title 'w8kv16, context 2048', \
     '' using 2:($1==2048 ? $7 : 1/0) with lines lw 1.5 dt 4 lc 2 title 'w4kv16, context 2048', \
     'decode.csv' using 2:($1==8192 ? $3 : 1/0) with linespoints lw 2 pt 7 lc 3 title 'measured, context 8192', \
     '' using 2:($1==8192 ? $5 : 1/0) with lines lw 1.5 dt 2 lc 3 title 'w16kv16, context 8192', \
     '' using 2:($1==8192 ? $6 : 1/0) with lines lw 1.5 dt 3 lc 3 title 'w8kv16, context 8192', \
     '' using 2:($1==8192 ? $7 : 1/0) with lines lw 1.5 dt 4 lc 3 title 'w4kv16, context 8192'
