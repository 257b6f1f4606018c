# SPDX-License-Identifier: MIT
"""Compile ONNX models to .ipuef executables (our PopRT), in this process.

    import ipu.compiler
    result = ipu.compiler.compile(model_proto, input_shape={"x": [4, 3, 224, 224]},
                                  precision="fp16")
    runner = ipu.runtime.Runner(result.executable)

compile() calls the compiler library (ipu/compiler.h, ipu_compile()) with
the model's bytes or path and the options as values: the executable's bytes
come back from memory, the summary and diagnostics as Python objects.  The
options are ipu-compile's (see ``ipu-compile --help`` and
Documentation/compiler/guide.md), with the same checks and messages; the
compiler runs with the GIL released, so threads may compile at once.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

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
    messages    the compiler's messages (warnings, -v statistics, the
                --check lines, the precision report's table)
    diagnostics the warnings as dicts: severity, model, node, op, message
    """
    executable: Optional[bytes]
    path: Optional[str]
    summary: Dict[str, Any]
    messages: str
    diagnostics: List[Dict[str, Any]] = field(default_factory=list)


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


def _shapes(input_shape: Optional[Mapping[str, Sequence[int]]]) -> Optional[Dict[str, List[int]]]:
    if input_shape is None:
        return None
    out: Dict[str, List[int]] = {}
    for name, dims in input_shape.items():
        if isinstance(dims, str):       # "4,3,224,224", as --input-shape takes it
            dims = dims.split(",")
        out[str(name)] = [int(d) for d in dims]
    return out


_SIZE = re.compile(r"^([0-9]+)(|B|K|KiB|k|KB|M|MiB|MB)$")
_UNIT = {"": 1, "B": 1, "K": 1024, "KiB": 1024, "k": 1024, "KB": 1024,
         "M": 1 << 20, "MiB": 1 << 20, "MB": 1 << 20}


def _size(v: Union[int, str]) -> int:
    """tile_mem as --target takes it: bytes, or "256KiB", "1M"."""
    if isinstance(v, int):
        return v
    m = _SIZE.match(str(v))
    if not m:
        raise ValueError(f"tile_mem '{v}' is not a size (65536, 256KiB, 1MiB)")
    return int(m.group(1)) * _UNIT[m.group(2)]


def _path(p: Optional[Union[str, "os.PathLike[str]"]]) -> Optional[str]:
    return None if p is None else os.fspath(p)


def _join_paths(paths: Iterable[Union[str, "os.PathLike[str]"]], what: str) -> str:
    """Plugin paths as the C layer takes them: one string, ':'-separated."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    out = []
    for p in paths:
        s = os.fspath(p)
        if not isinstance(s, str) or not s or ":" in s:
            raise ValueError(f"{what}: {s!r} is not a path without ':'")
        out.append(s)
    return ":".join(out)


def compile_args(args: Iterable[str]) -> tuple:
    """Run the compiler with ipu-compile's command-line arguments.

    Returns (exit_status, stdout_text, stderr_text) exactly as the command
    would; raises CompileError for a bad command line.
    """
    return _ipu.compile_args(list(args))


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
            precision_compare_json: Optional[Union[str, "os.PathLike[str]"]] = None,
            progress: Optional[Callable[[int, str, int, int], Any]] = None,
            custom_library_so_paths: Optional[Iterable[Union[str, "os.PathLike[str]"]]] = None,
            fp8_scale: Optional[str] = None,
            fp8_auto_skip: Optional[Union[str, float]] = None
            ) -> CompileResult:
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
                        scales (WSCALE "auto": from the largest values,
                        see fp8_scale; default "F143,F143,0,auto")
    fp8_scale           "per-channel" (default: auto weight scales one a
                        weight's output channel) or "per-tensor" (PopRT's)
    num_of_layers_keep_fp16  keep the N layers most sensitive to fp8 in fp16
    fp8_auto_skip       "TARGET" or "TARGET,BUDGET" (or a number): keep in
                        fp16 the layers that bring the output error on the
                        calibration data (max |err| / max |output|) to
                        TARGET, the executable at most BUDGET (default 0.65)
                        x its size with every layer fp16; the choice is in
                        CompileResult.messages (needs calibration_with_data)
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
    custom_library_so_paths  custom-operator plugins (paths of shared
                        libraries, Documentation/compiler/custom-ops.md):
                        native code loaded into this process
    progress            called as progress(model, pass, rewrites, nodes)
                        after each pass ("load", the front end's passes,
                        "check", "lower", "write": rewrites and nodes -1)

    Raises CompileError with the compiler's message when the model or an
    option is refused; its .status is the negative errno class
    (-errno.EINVAL, -errno.ENOTSUP, ...), .node and .op name the node the
    message is about (or None).
    """
    data = _model_bytes(model)
    src = os.fspath(model) if data is None else data
    if (tiles is None) != (tile_mem is None):
        raise ValueError("tiles and tile_mem go together (a custom target)")
    opts: Dict[str, Any] = dict(
        input_shape=_shapes(input_shape), precision=precision, fp8_params=fp8_params,
        ipu_version=ipu_version, export_onnx=_path(export_onnx), check=bool(check),
        fusion=bool(fusion), verbose=bool(verbose),
        calibration_with_data=_path(calibration_with_data),
        calibration_loss_type=calibration_loss_type,
        precision_compare=bool(precision_compare),
        precision_compare_json=_path(precision_compare_json),
        keep_executable=output is None, progress=progress)
    if batch_size is not None:
        opts["batch_size"] = int(batch_size)
    if batch_axis is not None:
        opts["batch_axis"] = int(batch_axis)
    if fp16_skip_op_types:
        opts["fp16_skip_op_types"] = list(fp16_skip_op_types)
    if fp8_skip_op_names:
        opts["fp8_skip_op_names"] = list(fp8_skip_op_names)
    if num_of_layers_keep_fp16 is not None:
        opts["num_of_layers_keep_fp16"] = int(num_of_layers_keep_fp16)
    if tiles is not None:
        opts["tiles"] = int(tiles)
        opts["tile_mem"] = _size(tile_mem)
    if max_tensor_size is not None:
        opts["max_tensor_size"] = int(max_tensor_size)
    if fp8_scale is not None:
        opts["fp8_scale"] = fp8_scale
    if fp8_auto_skip is not None:
        opts["fp8_auto_skip"] = (fp8_auto_skip if isinstance(fp8_auto_skip, str)
                                 else repr(float(fp8_auto_skip)))
    if custom_library_so_paths:
        opts["custom_library_so_paths"] = _join_paths(custom_library_so_paths,
                                                      "custom_library_so_paths")
    executable, path, summary, messages, diagnostics = _ipu.compile(src, _path(output), **opts)
    return CompileResult(executable=executable, path=path, summary=summary,
                         messages=messages, diagnostics=diagnostics)
