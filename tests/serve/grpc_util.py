# SPDX-License-Identifier: MIT
"""A KServe v2 gRPC client for the ipu-serve tests and the load test,
built at run time from the server's own .proto (server/grpc/) with
Debian's python3-grpc-tools, plus numpy <-> tensor message helpers."""

import importlib
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROTO = ROOT / "server" / "grpc" / "grpc_predict_v2.proto"
# Triton's ModelStatistics and ModelConfig messages, beside it; the latter's
# ModelConfig is the model_config.proto config.pbtxt is read with
STATS_PROTO = PROTO.parent / "grpc_service_stats.proto"
CONFIG_PROTO = PROTO.parent / "grpc_service_config.proto"
TRITON_DIR = ROOT / "server" / "triton"
SERVICE = "/inference.GRPCInferenceService/"

DT = {np.float32: "FP32", np.float16: "FP16", np.int32: "INT32", np.int64: "INT64",
      np.uint8: "UINT8", np.int8: "INT8", np.bool_: "BOOL"}
NP = {v: k for k, v in DT.items()}
# the typed contents field of each datatype (FP16 has none: raw only)
FIELD = {"FP32": "fp32_contents", "INT32": "int_contents", "INT8": "int_contents",
         "INT64": "int64_contents", "UINT8": "uint_contents", "BOOL": "bool_contents"}


def load(outdir):
    """(pb2, pb2_grpc) modules generated into outdir from the .proto."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO.parent}", f"-I{TRITON_DIR}",
                    f"--python_out={outdir}", f"--grpc_python_out={outdir}", PROTO.name, STATS_PROTO.name,
                    CONFIG_PROTO.name, "model_config.proto"],
                   check=True, capture_output=True, timeout=120)
    sys.path.insert(0, str(outdir))
    return importlib.import_module("grpc_predict_v2_pb2"), importlib.import_module("grpc_predict_v2_pb2_grpc")


def load_stats():
    """The ModelStatistics messages (after load())."""
    return importlib.import_module("grpc_service_stats_pb2")


def config_call(channel):
    """Triton's ModelConfig RPC on channel, and its messages."""
    cp = importlib.import_module("grpc_service_config_pb2")
    return cp, channel.unary_unary(SERVICE + "ModelConfig",
                                   request_serializer=cp.ModelConfigRequest.SerializeToString,
                                   response_deserializer=cp.ModelConfigResponse.FromString)


def statistics_call(channel):
    """Triton's ModelStatistics RPC on channel."""
    sp = load_stats()
    return channel.unary_unary(SERVICE + "ModelStatistics",
                               request_serializer=sp.ModelStatisticsRequest.SerializeToString,
                               response_deserializer=sp.ModelStatisticsResponse.FromString)


def infer_request(pb, model, inputs, raw=True, outputs=None, version="", rid=""):
    """A ModelInferRequest of numpy arrays, as raw_input_contents or typed contents."""
    q = pb.ModelInferRequest(model_name=model, model_version=version, id=rid)
    for name, a in inputs.items():
        t = q.inputs.add(name=name, datatype=DT[a.dtype.type], shape=list(a.shape))
        if raw:
            q.raw_input_contents.append(np.ascontiguousarray(a).tobytes())
        else:
            vals = a.ravel().tolist()
            getattr(t.contents, FIELD[t.datatype]).extend(vals)
    for o in outputs or ():
        q.outputs.add(name=o)
    return q


def outputs_of(r):
    """The response's outputs as numpy arrays, and whether they came raw."""
    out, raw = {}, len(r.raw_output_contents) > 0
    for i, o in enumerate(r.outputs):
        dt = NP[o.datatype]
        if raw:
            a = np.frombuffer(r.raw_output_contents[i], dtype=dt)
        else:
            a = np.array(list(getattr(o.contents, FIELD[o.datatype])), dtype=dt)
        out[o.name] = a.reshape(list(o.shape))
    return out, raw
