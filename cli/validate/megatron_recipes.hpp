// SPDX-License-Identifier: MIT
// Settings of Megatron-Bridge's performance recipes that its published performance summary does
// not state, by NeMo container, model, GPU and precision.
#pragma once

#include <string>
#include <string_view>

namespace flopcast::cli::validate {

/// The NeMo container version a row's `workload.framework` names ("NeMo 26.06 container",
/// "NeMo 26.04.01 container"): "26.06", "26.04.01"; empty when it names none.
std::string nemo_container(std::string_view framework);

/// Whether the Megatron-Bridge performance recipe the row ran overlaps each micro-batch's
/// expert-parallel all-to-alls with another's compute (`moe_a2a_overlap`, Megatron-Core's
/// `--overlap-moe-expert-parallel-comm`): `model` the row's model name (any case), `gpu` a hardware
/// preset id, `compute` the training GEMM type (`bf16`, `fp8`, `mxfp8`, `fp4`), `global_batch` in
/// sequences.
bool megatron_bridge_ep_overlap(std::string_view container, std::string_view model,
                                std::string_view gpu, std::string_view compute, int global_batch);

}  // namespace flopcast::cli::validate
