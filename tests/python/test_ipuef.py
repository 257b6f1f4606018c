# SPDX-License-Identifier: MIT
"""ipu.ipuef.read gives what ipuef-dump --json prints."""

import json
import subprocess

import pytest

import ipu
import ipu.ipuef


def test_read_equals_ipuef_dump_json(tools, mlp, fused):
    for path in (mlp[0], fused):
        dump = json.loads(subprocess.run([str(tools / "ipuef-dump"), "--json", str(path)],
                                         check=True, capture_output=True, text=True).stdout)
        del dump["file"]
        assert ipu.ipuef.read(path) == dump
        assert ipu.ipuef.read(path.read_bytes()) == dump
        assert ipu.ipuef.anchors(str(path)) == dump["metadata"]["anchors"]


def test_malformed_files(tmp_path, mlp):
    data = bytearray(mlp[0].read_bytes())
    with pytest.raises(ipu.IpuefError) as e:
        ipu.ipuef.read(bytes(data[:40]))
    assert e.value.code_name == "IPUEF_E_TRUNCATED"
    data[-1] ^= 1
    with pytest.raises(ipu.IpuefError, match="[Cc]hecksum|CRC|crc"):
        ipu.ipuef.read(bytes(data))
    (tmp_path / "fifo").mkdir()
    with pytest.raises(ipu.Error):
        ipu.ipuef.read(tmp_path / "fifo")
