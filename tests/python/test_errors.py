# SPDX-License-Identifier: MIT
"""The one mapping from the C libraries' codes to Python exceptions, by
their class (ipu_err_errno): every layer's NOMEM is a MemoryError, every
timeout a TimeoutError, every bad argument a ValueError; and the ring's
range is the runtime's to check, with its own message."""

import errno

import pytest

import ipu
import ipu.runtime as rt
from ipu import _ipu


# ipu/error.h's IPU_ERR_BASE: the codes count down from it, below every -errno
ERR_BASE = -4096


def all_codes():
    """Every code of ipu/error.h, as (code, exception), by the C name table."""
    out = []
    for code in range(ERR_BASE - 1, ERR_BASE - 400, -1):
        e = _ipu.error_for_code(code)
        if e.code_name != "IPU_E_UNKNOWN":
            out.append((code, e))
    return out


def test_every_code_has_an_exception_with_its_code():
    codes = all_codes()
    assert len(codes) == 113
    for code, e in codes:
        assert isinstance(e, Exception)
        assert e.code == code
        assert str(e) == e.code_name        # no message: the code's name
    e = _ipu.error_for_code(ERR_BASE - 303, "all 4 devices in use")
    assert str(e) == "all 4 devices in use" and e.code_name == "IPURT_E_BUSY"


def test_every_nomem_is_a_memory_error():
    nomem = [e for _, e in all_codes() if e.code_name.endswith("_NOMEM")]
    assert sorted(e.code_name for e in nomem) == [
        "IPUEF_E_NOMEM", "IPURT_E_NOMEM", "IPURT_NPY_E_NOMEM", "IPU_E_NOMEM"]
    for e in nomem:
        assert type(e) is MemoryError, e.code_name


def test_classes_across_layers():
    by_name = {e.code_name: e for _, e in all_codes()}
    for name in ("IPU_E_TIMEOUT", "IPURT_E_TIMEOUT"):
        assert isinstance(by_name[name], ipu.IpuTimeoutError)
        assert isinstance(by_name[name], TimeoutError)
    for name in ("IPU_E_INVAL", "IPURT_E_INVAL", "IPURT_E_SHAPE", "IPURT_E_NAME",
                 "IPURT_NPY_E_INVAL", "IPURT_NPY_E_FORMAT", "IPURT_NPY_E_SHAPE"):
        assert isinstance(by_name[name], ipu.IpuValueError), name
    assert isinstance(by_name["IPUEF_E_CHECKSUM"], ipu.IpuefError)
    assert isinstance(by_name["IPUEF_E_INVAL"], ValueError)
    assert isinstance(by_name["IPURT_E_CLOSED"], ipu.RunnerClosedError)
    for name in ("IPU_E_FAULT", "IPU_E_BUSY", "IPURT_E_DEVICE", "IPU_E_VERIFY",
                 "IPUX_E_CHECKSUM", "IPURT_E_CANCELLED"):
        e = by_name[name]
        assert type(e) is ipu.Error, name
    # a code outside the table keeps its number and reads as unknown
    e = _ipu.error_for_code(ERR_BASE - 98)
    assert type(e) is ipu.Error and e.code == ERR_BASE - 98 and e.code_name == "IPU_E_UNKNOWN"


def test_a_plain_errno_is_its_own_class():
    """No code is a -errno value: the kernel backend's -errno keeps its meaning."""
    e = _ipu.error_for_code(-errno.ENOMEM)
    assert type(e) is MemoryError and e.code == -errno.ENOMEM and e.code_name == "ENOMEM"
    e = _ipu.error_for_code(-errno.ETIMEDOUT)
    assert isinstance(e, ipu.IpuTimeoutError) and e.code_name == "ETIMEDOUT"
    assert isinstance(_ipu.error_for_code(-errno.EINVAL), ipu.IpuValueError)
    assert type(_ipu.error_for_code(-errno.EIO)) is ipu.Error


def test_ring_buffer_size_is_the_runtimes_to_check(mlp):
    path, _, _ = mlp
    with pytest.raises(ipu.IpuValueError, match=r"ring buffer size 1 must be a power of two in 2\.\.1048576"):
        _ipu.Runner(str(path), ring_buffer_size=1)
    with pytest.raises(ipu.IpuValueError, match="ring buffer size 24 "):
        _ipu.Runner(str(path), ring_buffer_size=24)
    # over the range the bindings used to allow (65536), within the runtime's
    with rt.Runner(path, rt.RuntimeConfig(ring_buffer_size_multiplier=16384)) as r:
        assert not r.closed
    with pytest.raises(ipu.IpuValueError, match="2097152"):
        rt.Runner(path, rt.RuntimeConfig(ring_buffer_size_multiplier=262144))
