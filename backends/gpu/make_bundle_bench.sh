#!/usr/bin/env bash
# Writes the PTX of the WAVE benchmark kernels (backends/gpu/bench/*.wave) into DIR/bench/,
# where bench.py reads it, and checks that each file assembles when ptxas is at hand.
# Usage: backends/gpu/make_bundle_bench.sh DIR [WAVE_BINARY]   (default: target/release/wave)
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [WAVE_BINARY]" >&2
    exit 2
fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$1"
wave="${2:-$root/target/release/wave}"
if [ ! -x "$wave" ]; then
    echo "error: $wave is not an executable wave binary (build it with: cargo build --release -p wave-cli)" >&2
    exit 2
fi
ptxas="${WAVE_PTXAS:-$(command -v ptxas || true)}"

mkdir -p "$dir/bench"
for source in "$root"/backends/gpu/bench/*.wave; do
    name="$(basename "$source" .wave)"
    out="$dir/bench/$name.ptx"
    "$wave" emit --target ptx --sm 90 "$source" -o "$out"
    if [ -n "$ptxas" ]; then
        "$ptxas" -arch=sm_90 "$out" -o /dev/null
        echo "$out (assembles with ptxas -arch=sm_90)"
    else
        echo "$out"
    fi
done
