#!/bin/bash
# The CUDA suite on a GPU machine that has its own PyTorch (nothing installed):
#   bash tests/cuda/gpu_check.sh [OUT_DIR]
# Prints the machine, a smoke run of one scenario, then pytest tests/cuda in 8 workers;
# each part's output is also written to OUT_DIR (default /tmp/gpu-check).
set -u
out=${1:-${OUT:-/tmp/gpu-check}}
mkdir -p "$out"
export PYTHONPATH="$PWD/src:$PWD" PYTHONUNBUFFERED=1
{
  nvidia-smi -L
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available())"
  python3 -c "import fsdp_ref; print('import fsdp_ref: ok')"
} 2>&1 | tee "$out/env.txt"
timeout 120 python3 -m tests.cuda.cuda_scenarios default 2>&1 | tail -20 | tee "$out/smoke.txt"
workers=()
python3 -c "import xdist" 2>/dev/null && workers=(-n 8)
timeout 400 python3 -m pytest tests/cuda -q -p no:cacheprovider "${workers[@]}" \
  --junitxml="$out/junit.xml" 2>&1 | tee "$out/pytest.txt" | tail -60
