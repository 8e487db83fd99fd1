# Sourced by the AOT filler's fault scripts (store-faults.sh,
# cache-faults.sh): `dir` ($1) made fresh with a shapes file of two GEMMs,
# `tool` ($2, mxfp4-jit-compile), and `run LABEL ARGS...`, which prints
# "== LABEL ==", the tool's output (stderr first) and "status N".
dir=$1
tool=$2
rm -rf "$dir" && mkdir -p "$dir"
printf '256 512\n512 512\n' > "$dir/shapes"
run() {
  local label=$1
  shift
  echo "== $label =="
  timeout 60 "$tool" "$@" 2>&1
  echo "status $?"
}
