"""Facts the profile rules use, each with its public source. The thresholds are the ones the
profiling advisor of msprof-analyze ships; the op-type sequences and the fused replacements are
the pairs its fusion rules name (names only; the rule logic here is our own).
"""
from __future__ import annotations

MSTT = "https://github.com/xiaobingling93-pixel/Ascend-mstt/blob/99c2e0f990a17d328f487062acc9c490f7f6ff26/profiler/msprof_analyze/"

# Kernel op-type sequences that one fused op replaces
# (source: advisor/advisor_backend/common_func_advisor/constant.py, PATTERN_DICT)
FUSION_PATTERNS = (
    (("Add", "DropOutDoMask", "Add"), "bias_dropout_add (one fused dropout+residual kernel)"),
    (("Add", "LayerNorm"), "AddLayerNorm (torch_npu.npu_add_layer_norm)"),
    (("Add", "LayerNormV3"), "AddLayerNorm (torch_npu.npu_add_layer_norm)"),
    (("Cast", "LayerNorm", "Cast"), "LayerNorm in the input dtype"),
    (("Gelu", "Add"), "GeluAdd"),
    (("Slice", "Slice", "Swish", "Mul"), "torch_npu.npu_swiglu"),
    (("Cast", "Square", "ReduceMeanD", "Add", "Rsqrt", "Mul", "Cast", "Mul"), "torch_npu.npu_rms_norm"),
    (("Cast", "Square", "MemSet", "ReduceMean", "Add", "Rsqrt", "Mul", "Cast", "Mul"), "torch_npu.npu_rms_norm"),
    (("Mul", "Slice", "Neg", "Slice", "ConcatD", "Mul"), "torch_npu.npu_rotary_mul"),
    (("Mul", "AsStrided", "Neg", "AsStrided", "ConcatD", "Mul", "Add"), "torch_npu.npu_rotary_mul"),
    (("Cast", "Mul", "MaskedFill", "SoftmaxV2", "Cast"), "torch_npu.npu_scaled_masked_softmax"),
    (("MatMulV2", "Swish", "MatMulV2", "Mul", "MatMulV2"), "a fused FFN (torch_npu.npu_swiglu between the matmuls)"),
)
FUSION_SOURCE = MSTT + "advisor/advisor_backend/common_func_advisor/constant.py"

# torch optimizers whose step torch_npu ships fused (source: advisor/rules/timeline_fusion_ops.yaml)
FUSED_OPTIMIZERS = {
    "Adam": "torch_npu.optim.NpuFusedAdam",
    "AdamW": "torch_npu.optim.NpuFusedAdamW",
    "SGD": "torch_npu.optim.NpuFusedSGD",
    "Adadelta": "torch_npu.optim.NpuFusedAdadelta",
    "Lamb": "torch_npu.optim.NpuFusedLamb",
    "AdamP": "torch_npu.optim.NpuFusedAdamP",
    "BertAdam": "torch_npu.optim.NpuFusedBertAdam",
    "RMSprop": "torch_npu.optim.NpuFusedRMSprop",
    "RMSpropTF": "torch_npu.optim.NpuFusedRMSpropTF",
}
OPTIMIZER_SOURCE = MSTT + "advisor/rules/timeline_fusion_ops.yaml"

# Thresholds (sources: the advisor's rule files named beside each)
FREE_SHARE_WARN = 0.20          # advisor_backend/timeline_advice/op_schedule_advice.py
STARVED_GAP_RATIO = 0.2         # an op is starved when the idle gap before it > 0.2 x its duration
STARVED_OPS_SHARE = 0.2         # ... and more than 20 % of ops are
HOST_BOUND_BUSY = 0.4           # rules/en/fusible_operator.yaml host_threshold
SEQUENCE_REPEATS = 5            # rules/en/fusible_operator.yaml sequence_count_threshold
SEQUENCE_SPAN_SHARE = 0.01      # rules/en/fusible_operator.yaml sequence_duration_threshold
SDMA_MIN_PACKET_MB = 16.0       # rules/en/packet.yaml min_sdma_size
RDMA_MIN_PACKET_MB = 1.0        # rules/en/packet.yaml min_rdma_size
SMALL_PACKET_SHARE = 0.2        # rules/en/packet.yaml min_sdma_ratio / min_rdma_ratio
SDMA_BASELINE_GBPS = 18.0       # rules/en/bandwidth_contention.yaml sdma_baseline
CONTENTION_RATIO = 0.8          # rules/en/bandwidth_contention.yaml threshold
RETRANSMISSION_MS = 4000.0      # rules/en/rdma_analysis.yaml min_retransmission_time
COMPILE_STORM = 20              # prof_common/constant.py MAX_OP_COMPILE_NUM
ALLOC_TOTAL_US = 10000.0        # rules/en/memory.yaml max_total_duration
SLOW_RANK_SPREAD = 0.05         # analyzer/cluster/slow_rank_analyzer.py RATIO_THRESHOLD
RULE_SOURCES = MSTT + "advisor/rules/en/"

# Our own thresholds (the route of docs/profile.md): below half busy the host does not feed the
# device; a kernel under 10 us is "small"; copies above 10 % of the span are worth a finding.
BUSY_DISPATCH_PCT = 50.0
SMALL_OP_US = 10.0
SMALL_RUN = 8
COPY_PCT = 10.0
COMM_PCT = 30.0
DYNAMIC_SHAPES = 8              # distinct input shapes of one op type
SLOW_OUTLIER = 8.0              # time per element vs the median of the same op type
