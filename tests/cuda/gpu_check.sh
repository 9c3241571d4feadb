#!/bin/bash
# The CUDA suite and the GPU benchmark on a GPU machine that has its own PyTorch (nothing
# installed):
#   bash tests/cuda/gpu_check.sh [OUT_DIR]
# Prints the machine, a smoke run of one scenario, then pytest tests/cuda in 8 workers,
# then benchmarks/gpu.py (fsdp_ref against torch, one process per run; results in
# OUT_DIR/bench/gpu_bench.json and .md, rewritten after every run). Each part's output is
# also written to OUT_DIR (default /tmp/gpu-check). Parts and limits by environment:
#   GPU_CHECK_SUITE=0     skip the CUDA suite          GPU_CHECK_BENCH=0  skip the benchmark
#   GPU_BENCH_TIMEOUT=s   the benchmark's limit (420)  GPU_BENCH_ARGS     e.g. "--rounds 1"
set -u
out=${1:-${OUT:-/tmp/gpu-check}}
mkdir -p "$out"
export PYTHONPATH="$PWD/src:$PWD" PYTHONUNBUFFERED=1
{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available())"
  python3 -c "import fsdp_ref; print('import fsdp_ref: ok')"
} 2>&1 | tee "$out/env.txt"
if [ "${GPU_CHECK_SUITE:-1}" != 0 ]; then
  timeout 120 python3 -m tests.cuda.cuda_scenarios default 2>&1 | tail -20 | tee "$out/smoke.txt"
  workers=()
  python3 -c "import xdist" 2>/dev/null && workers=(-n 8)
  timeout 400 python3 -m pytest tests/cuda -q -p no:cacheprovider "${workers[@]}" \
    --junitxml="$out/junit.xml" 2>&1 | tee "$out/pytest.txt" | tail -60
fi
if [ "${GPU_CHECK_BENCH:-1}" != 0 ]; then
  # shellcheck disable=SC2086  # (GPU_BENCH_ARGS is a list of words)
  timeout "${GPU_BENCH_TIMEOUT:-420}" python3 benchmarks/gpu.py --out "$out/bench" \
    ${GPU_BENCH_ARGS:-} 2>&1 | tee "$out/bench.txt" | tail -80
fi
