# SPDX-License-Identifier: MIT
"""The IPU inference stack from Python.

- ipu.runtime:  run compiled models (.ipuef): Runner, RuntimeConfig,
                DeviceManager (the Model Runtime, as PopRT's poprt.runtime)
- ipu.compiler: compile ONNX models to .ipuef (the options of ipu-compile)
- ipu.ipuef:    read an .ipuef file's metadata and anchors

Errors are ipu.Error (with .code and .code_name); an array that does not
fit its anchor raises ipu.IpuValueError, also a ValueError; a request that
times out raises ipu.IpuTimeoutError, also a TimeoutError; a Runner that is
closed (or closing) refuses requests with ipu.RunnerClosedError, also a
RuntimeError.
"""

from ._ipu import (CompileError, Error, IpuefError, IpuTimeoutError, IpuValueError,
                   RunnerClosedError)

__version__ = "0.3.0"
__all__ = ["Error", "IpuValueError", "IpuTimeoutError", "CompileError", "IpuefError",
           "RunnerClosedError", "__version__"]
