#!/usr/bin/env bash
# Build llama-cpp-python's wheel once and keep it where .ci/run and `pip install
# --find-links` look for it (no wheel is published for this platform: pip compiles
# llama.cpp, about 15 minutes of two cores; nice'd so that it takes only idle time).
#   bash scripts/engine-wheel.sh            # then: pip install --find-links "$CACHE" -e '.[engine]'
set -euo pipefail
CACHE="${HARNESS_WHEEL_CACHE:-$HOME/.cache/harness/wheels}"
VERSION="0.3.36"   # pyproject.toml's engine extra pins the same
PY="${PYTHON:-$(command -v python || command -v python3)}"
mkdir -p "$CACHE"
if ls "$CACHE"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
  echo "cached: $(ls "$CACHE"/llama_cpp_python-"$VERSION"-*.whl)"
  exit 0
fi
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
nice -n 19 "$PY" -m pip wheel --no-deps -w "$CACHE" "llama-cpp-python==$VERSION"
ls "$CACHE"/llama_cpp_python-"$VERSION"-*.whl
