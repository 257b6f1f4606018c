# SPDX-License-Identifier: MIT
"""Read .ipuef model files: what ``ipuef-dump --json`` shows, as Python objects."""

from __future__ import annotations

import os
from typing import Any, Dict, Union

from . import _ipu

__all__ = ["read", "anchors"]


def read(source: Union[str, bytes, bytearray, memoryview, "os.PathLike[str]"]) -> Dict[str, Any]:
    """Read and check an .ipuef file (a path, or the file's bytes).

    Returns a dict with the keys of ``ipuef-dump --json`` (except ``file``):
    ``version``, ``size``, ``checksum``, ``blobs``, ``metadata`` (``ipu_version``,
    ``num_tiles``, ``tile_mem``, ``batch_size``, ``programs``, ``anchors``, ...),
    ``tensors`` and ``opaques``.  Every checksum, size and name is verified
    first; a malformed file raises ipu.IpuefError naming what is wrong.
    """
    return _ipu.read_ipuef(source)


def anchors(source: Union[str, bytes, "os.PathLike[str]"]) -> list:
    """The anchors of a model file (``read(source)["metadata"]["anchors"]``)."""
    return read(source)["metadata"]["anchors"]
