# SPDX-License-Identifier: MIT
"""Compile ONNX models to .ipuef executables (our PopRT), in this process.

    import ipu.compiler
    result = ipu.compiler.compile(model_proto, input_shape={"x": [4, 3, 224, 224]},
                                  precision="fp16")
    runner = ipu.runtime.Runner(result.executable)

The options are ipu-compile's (see ``ipu-compile --help`` and
Documentation/compiler/guide.md), with the same checks and messages; the
compiler runs in this process with the GIL released.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _ipu
from ._ipu import CompileError

__all__ = ["compile", "compile_args", "CompileResult", "CompileError"]

ModelSource = Union[str, bytes, bytearray, memoryview, "os.PathLike[str]", Any]


@dataclass
class CompileResult:
    """What compile() produced.

    executable  the .ipuef bytes (None when written to ``output`` only)
    path        the file written (None when only bytes were asked for)
    summary     ipu-compile's --json summary: target, models (inputs,
                outputs, ops), tiles used, memory per tile, compute sets,
                exchanges, modelled cycles
    messages    what the compiler printed on stderr (warnings, -v statistics)
    """
    executable: Optional[bytes]
    path: Optional[str]
    summary: Dict[str, Any]
    messages: str


def _model_bytes(model: Any) -> Optional[bytes]:
    """The serialized model, or None when model is a path."""
    if isinstance(model, (str, os.PathLike)):
        return None
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    raise TypeError("model must be an onnx.ModelProto, its serialized bytes or a path, "
                    f"not {type(model).__name__}")


def _shape_args(input_shape: Optional[Mapping[str, Sequence[int]]]) -> List[str]:
    args: List[str] = []
    for name, dims in (input_shape or {}).items():
        if isinstance(dims, str):
            spec = dims
        else:
            spec = ",".join(str(int(d)) for d in dims)
        args += ["--input-shape", f"{name}={spec}"]
    return args


def compile_args(args: Iterable[str]) -> tuple:
    """Run the compiler with ipu-compile's command-line arguments.

    Returns (exit_status, stdout_text, stderr_text) exactly as the command
    would; raises CompileError for a bad command line.
    """
    return _ipu.compile(list(args))


def compile(model: ModelSource, output: Optional[Union[str, "os.PathLike[str]"]] = None, *,
            input_shape: Optional[Mapping[str, Sequence[int]]] = None,
            batch_size: Optional[int] = None,
            batch_axis: Optional[int] = None,
            precision: Optional[str] = None,
            fp16_skip_op_types: Optional[Iterable[str]] = None,
            fp8_skip_op_names: Optional[Iterable[str]] = None,
            fp8_params: Optional[str] = None,
            num_of_layers_keep_fp16: Optional[int] = None,
            ipu_version: Optional[str] = None,
            tiles: Optional[int] = None,
            tile_mem: Optional[Union[int, str]] = None,
            max_tensor_size: Optional[int] = None,
            export_onnx: Optional[Union[str, "os.PathLike[str]"]] = None,
            check: bool = False,
            fusion: bool = True,
            verbose: bool = False,
            calibration_with_data: Optional[Union[str, "os.PathLike[str]"]] = None,
            calibration_loss_type: Optional[str] = None,
            precision_compare: bool = False,
            precision_compare_json: Optional[Union[str, "os.PathLike[str]"]] = None) -> CompileResult:
    """Compile an ONNX model (onnx.ModelProto, its bytes, or a path).

    output              write the executable there (atomically); None:
                        return its bytes in CompileResult.executable
    input_shape         {"input": [d0, d1, ...]}: static shapes of inputs
    batch_size          the batch of every input whose batch dimension
                        is symbolic or a static 1 (as PopRT's); a model
                        whose outputs do not follow is refused
    batch_axis          which axis is the batch (default 0)
    precision           "fp32" (default), "fp16", "fp8" (Conv/MatMul/Gemm
                        weights and their activation inputs in 8-bit
                        floats, the rest fp16) or "fp8_weight" (weights only)
    fp16_skip_op_types  op types kept in fp32 under fp16
    fp8_skip_op_names   layers (node names) kept in fp16 under fp8
    fp8_params          "IN,W,INSCALE,WSCALE": formats F143/F152 of the
                        activations and weights and their power-of-two
                        scales (WSCALE "auto": per weight; default
                        "F143,F143,0,auto")
    num_of_layers_keep_fp16  keep the N layers most sensitive to fp8 in fp16
    ipu_version         "ipu2" or "ipu21" (1472 tiles x 624 KiB)
    tiles, tile_mem     a custom target instead (tile_mem: bytes or "256KiB")
    max_tensor_size     largest tensor constant folding may create (-1: none)
    export_onnx         also write the converted, optimised ONNX model
    check               run once on the in-process device and compare with
                        the reference evaluator
    fusion              run the fusion passes (default True)
    verbose             per-pass statistics (in CompileResult.messages)
    calibration_with_data   .npz of samples, arrays named by graph input
    calibration_loss_type   "mse", "mae", "snr", "kld" (default) or "cos_dist"
    precision_compare   per-layer error against float32 (the table is in
                        CompileResult.messages)
    precision_compare_json  also write that report as JSON there

    Raises CompileError with the compiler's message when the model or an
    option is refused (the unsupported op and node are named).
    """
    data = _model_bytes(model)
    work = tempfile.mkdtemp(prefix="ipu-compile-")
    try:
        if data is None:
            src = os.fspath(model)
        else:
            # external data is resolved next to the model file
            src = os.path.join(work, "model.onnx")
            with open(src, "wb") as f:
                f.write(data)
        dest = os.fspath(output) if output is not None else os.path.join(work, "executable.ipuef")
        args = ["--input-model", src, "--output", dest, "--json"]
        args += _shape_args(input_shape)
        if batch_size is not None:
            args += ["--batch-size", str(int(batch_size))]
        if batch_axis is not None:
            args += ["--batch-axis", str(int(batch_axis))]
        if precision is not None:
            args += ["--precision", str(precision)]
        if fp16_skip_op_types:
            args += ["--fp16-skip-op-types", ",".join(fp16_skip_op_types)]
        if fp8_skip_op_names:
            args += ["--fp8-skip-op-names", ",".join(fp8_skip_op_names)]
        if fp8_params is not None:
            args += ["--fp8-params", str(fp8_params)]
        if num_of_layers_keep_fp16 is not None:
            args += ["--num-of-layers-keep-fp16", str(int(num_of_layers_keep_fp16))]
        if ipu_version is not None:
            args += ["--ipu-version", str(ipu_version)]
        if tiles is not None or tile_mem is not None:
            if tiles is None or tile_mem is None:
                raise ValueError("tiles and tile_mem go together (a custom target)")
            args += ["--target", f"tiles={int(tiles)},tile-mem={tile_mem}"]
        if max_tensor_size is not None:
            args += ["--max-tensor-size", str(int(max_tensor_size))]
        if export_onnx is not None:
            args += ["--export-onnx", os.fspath(export_onnx)]
        if check:
            args.append("--check")
        if not fusion:
            args.append("--no-fusion")
        if verbose:
            args.append("--verbose")
        if calibration_with_data is not None:
            args += ["--calibration-with-data", os.fspath(calibration_with_data)]
        if calibration_loss_type is not None:
            args += ["--calibration-loss-type", str(calibration_loss_type)]
        if precision_compare:
            args.append("--precision-compare")
        if precision_compare_json is not None:
            args += ["--precision-compare-json", os.fspath(precision_compare_json)]
        status, out, messages = _ipu.compile(args)
        if status != 0:
            raise CompileError(messages.strip() or f"the compiler failed (status {status})")
        summary = json.loads(out) if out.strip() else {}
        executable = None
        if output is None:
            with open(dest, "rb") as f:
                executable = f.read()
        return CompileResult(executable=executable,
                             path=None if output is None else dest,
                             summary=summary, messages=messages)
    finally:
        shutil.rmtree(work, ignore_errors=True)
