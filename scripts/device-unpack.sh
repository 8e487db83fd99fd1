# Sourced by the device-*.sh scripts on the GPU machine: sets root (the
# checkout), out ($OUT, where results go back) and work (the unpacked
# carried bundle, dist/gpu-bundle.tar.xz, always fresh), and the kernel cache.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-/tmp/mxfp4-out}
mkdir -p "$out"
work=/tmp/mxfp4-bundle
rm -rf "$work" && mkdir -p "$work"
# The bundle carried: BUNDLE names it (default: the tests bundle).
xz -dc "$root/dist/${BUNDLE:-gpu-bundle.tar.xz}" | tar -C "$work" -xf -
export MXFP4_CACHE_DIR=/tmp/mxfp4-cache
