source scripts/device-unpack.sh
for rep in 1 2; do for A in 2 4; do
  for args in "--n=8448,1536 --k=7168 --m=1,8" "--n=7168 --k=4224,768 --m=1,8" "--n=8448 --k=7168 --m=1 --decode=1 --bm=8 --bn=64 --split-k=7,8,14,28"; do
    echo "== ahead=$A rep=$rep $args"
    MXFP4_DECODE_AHEAD=$A MXFP4_CACHE_DIR=/tmp/c$A timeout 100 $work/bin/mxfp4-bench $args --peers=false 2>&1 | grep -v "^N \|^L2"
  done
done; done > $OUT/decode-ahead.log 2>&1
MXFP4_DECODE_AHEAD=4 MXFP4_CACHE_DIR=/tmp/c4t timeout 200 $work/bin/mxfp4-gpu-tests --gtest_filter='Gemm.Decode*:Seed*:Gemm.SplitK*' > $OUT/gpu-tests-ahead4.log 2>&1
tail -3 $OUT/gpu-tests-ahead4.log
