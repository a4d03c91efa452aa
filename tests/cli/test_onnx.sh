#!/usr/bin/env bash
# `ipusim validate --onnx-tests` on the ONNX backend node tests Debian
# installs (libonnx-testdata): zero failures, the BERT and ResNet-50 ops
# among the passes, and a broken test detected as a failure.
source "$(dirname "$0")/lib.sh"

DATA=${IPUSIM_ONNX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}
if [ ! -d "$DATA" ]; then
    echo "SKIP: $DATA does not exist (install the Debian package libonnx-testdata)"
    exit 0
fi

out=$("$IPUSIM" validate --onnx-tests "$DATA" 2>&1)
rc=$?
check "validate exits 0 (status $rc)" test "$rc" -eq 0
check "header says what ran" grep -q "mode: each graph the compiler lowers is compiled for gc200 and simulated" <<<"$out"
summary=$(tail -n 1 <<<"$out")
echo "$summary"
check "zero failures: $summary" grep -Eq "^[0-9]+ tests: [0-9]+ passed \([0-9]+ simulated on gc200, [0-9]+ on the reference evaluator\), 0 failed, [0-9]+ unsupported$" <<<"$summary"
sim=$(sed -E 's/.*\(([0-9]+) simulated.*/\1/' <<<"$summary")
check "at least 316 tests simulated (got $sim)" test "$sim" -ge 316
# These run compiled on a simulated gc200, not on the reference evaluator.
for t in test_relu test_add test_sub test_mul test_div test_sqrt test_exp test_tanh test_erf test_sigmoid \
         test_softmax_large_number test_layer_normalization_3d_axis0_epsilon_expanded test_reshape_negative_dim \
         test_flatten_axis1 test_unsqueeze_unsorted_axes test_transpose_all_permutations_3 test_concat_3d_axis_1 \
         test_slice_neg_steps test_expand_dim_changed test_reduce_mean_default_axes_keepdims_random \
         test_cast_FLOAT_to_FLOAT16 test_softmax_large_number_expanded test_matmul_4d test_gemm_all_attributes \
         test_gemm_transposeA test_gemm_default_matrix_bias test_conv_with_strides_padding test_basic_conv_with_padding \
         test_maxpool_2d_pads test_averagepool_2d_ceil test_softmax_example test_layer_normalization_4d_axis0 \
         test_reduce_sum_keepdims_random test_reduce_max_do_not_keepdims_random test_reduce_l2_keep_dims_random \
         test_reduce_log_sum_desc_axes test_reduce_prod_keepdims_random test_floor test_ceil \
         test_gather_0 test_gather_negative_indices test_where_example test_equal_bcast test_less test_max_int32 \
         test_add_bcast; do
    check "$t is simulated" grep -Eq "^PASS +$t: .*simulated on gc200 in [0-9]+ cycles" <<<"$out"
done
if grep -q "^FAIL" <<<"$out"; then grep "^FAIL" <<<"$out" | head -20; fi

# Ops the lowering has no direct form for, simulated after the decomposition
# pass (frontends/decompose.h) rewrote them.
for t in test_batchnorm_example test_batchnorm_epsilon test_softmax_axis_0 test_softmax_axis_1 \
         test_max_example test_max_one_input test_min_example test_min_one_input test_pow test_pow_example \
         test_pow_bcast_array test_pow_bcast_scalar test_logsoftmax_axis_0 test_logsoftmax_default_axis \
         test_logsoftmax_large_number test_clip test_clip_splitbounds test_clip_default_max; do
    check "$t is simulated" grep -Eq "^PASS +$t: .*simulated on gc200 in [0-9]+ cycles" <<<"$out"
done
# What stays on the evaluator says why.
check "integer exponents say why" grep -Eq "^PASS-REF +test_pow_types_float32_int64: .*a run-time exponent must be f32" <<<"$out"
check "8-bit Clip says why" grep -Eq "^PASS-REF +test_clip_default_int8_min: .*integer arithmetic is supported on i32 only" <<<"$out"
check "training BatchNorm is simulated" grep -Eq "^PASS +test_batchnorm_example_training_mode: .*simulated on gc200" <<<"$out"
check "an optimizer step is simulated with T compiled in" \
    grep -Eq "^PASS +test_momentum: .*simulated on gc200 in [0-9]+ cycles \(compiled in as constants: 'T'\)" <<<"$out"

# One test per op of BERT and ResNet-50 (and the decomposed LayerNorm).
for t in test_matmul_4d test_gemm_default_vector_bias test_gemm_transposeB test_conv_with_strides_padding \
         test_conv_with_autopad_same test_batchnorm_example test_relu test_maxpool_2d_pads \
         test_averagepool_2d_pads test_flatten_axis1 test_add_bcast test_sub_bcast test_mul_bcast \
         test_div_bcast test_sqrt test_pow_bcast_scalar test_erf test_tanh test_softmax_axis_2 \
         test_layer_normalization_3d_axis_negative_1_epsilon \
         test_layer_normalization_3d_axis_negative_1_epsilon_expanded test_reduce_mean_keepdims_random \
         test_transpose_all_permutations_3 test_reshape_negative_dim test_gather_negative_indices \
         test_cast_FLOAT_to_FLOAT16 test_concat_3d_axis_negative_2 test_slice_neg_steps \
         test_unsqueeze_unsorted_axes test_squeeze_negative_axes test_where_long_example test_equal_bcast \
         test_expand_dim_changed test_constant test_shape_start_1_end_negative_1; do
    check "$t passes" grep -Eq "^PASS(-REF)? +$t:" <<<"$out"
done

# Fused graphs give the same results, and so does the reference evaluator alone.
expect 0 " 0 failed" -- "$IPUSIM" validate --onnx-tests "$DATA" --fuse --quiet
expect 0 "^[0-9]+ tests: [0-9]+ passed, 0 failed" -- "$IPUSIM" validate --onnx-tests "$DATA" --reference --quiet

# Unsupported is reported as such, not as a failure.
expect 0 "UNSUPPORTED test_nonmaxsuppression_center_point_box_format: .*unsupported op 'NonMaxSuppression'" -- \
    "$IPUSIM" validate --onnx-tests "$DATA" --filter nonmaxsuppression_center

# A test whose expected output is wrong fails, and the command with it.
if [ -d "$DATA/test_relu" ]; then
    mkdir -p "$WORK/node/test_relu"
    cp -r "$DATA/test_relu/." "$WORK/node/test_relu/"
    cp "$DATA/test_relu/test_data_set_0/input_0.pb" "$WORK/node/test_relu/test_data_set_0/output_0.pb"
    expect 1 "FAIL +test_relu: output 'y': [0-9]+ of 60 elements outside tolerance" -- \
        "$IPUSIM" validate --onnx-tests "$WORK/node"
    expect 1 "0 passed \(0 simulated on gc200, 0 on the reference evaluator\), 1 failed, 0 unsupported" -- \
        "$IPUSIM" validate --onnx-tests "$WORK/node"
fi

# Each line says whether the test ran on the simulator.  A graph input read
# through Shape stays an input (only its shape folds): the expanded
# LayerNorm (Shape -> ... -> Reshape(X, ...)) is simulated on X, not
# compiled with X as a constant; a graph whose outputs all fold at import
# has nothing to simulate and says so.
unlabelled=$(grep -E "^(PASS|PASS-REF) " <<<"$out" |
             grep -Ev "^(PASS +[^ ]+: .*, simulated on gc200 in [0-9]+ cycles|PASS-REF +[^ ]+: .*, not simulated: run on the host reference evaluator \()")
check "every passing line says whether it was simulated: ${unlabelled:0:200}" test -z "$unlabelled"
for t in test_layer_normalization_3d_axis0_epsilon_expanded test_layer_normalization_4d_axis_negative_2_expanded; do
    check "$t is simulated on its input X" \
        grep -Eq "^PASS +$t: .*simulated on gc200 in [0-9]+ cycles$" <<<"$out"
done
check "inputs a shape depends on are named as constants" \
    grep -Eq "^PASS +test_expand_dim_changed: .*simulated on gc200 in [0-9]+ cycles \(compiled in as constants: 'new_shape'\)$" <<<"$out"
for t in test_shape test_size test_constant; do
    check "$t folds at import and is not counted as simulated" grep -Eq \
        "^PASS-REF +$t: .*not simulated: run on the host reference evaluator \(every output folds to a constant at import: nothing to simulate\)" <<<"$out"
done

expect 1 "nosuch: cannot open" -- "$IPUSIM" validate --onnx-tests "$WORK/nosuch"
expect 2 "nothing to validate" -- "$IPUSIM" validate

finish
