# SPDX-License-Identifier: MIT
"""Run compiled models (.ipuef) on an IPU device: the Model Runtime.

The names follow PopRT's ``poprt.runtime``::

    from ipu.runtime import Runner, RuntimeConfig

    config = RuntimeConfig()
    config.timeout_ns = 0
    runner = Runner("executable.ipuef", config)
    out = np.zeros([2], dtype=np.float32)
    runner.execute({"X": x, "Y": y}, {"O": out})   # results written into out

With no device named, the in-process device is created to match the model
(its IPU version, tiles and tile memory).  Arrays are passed to the device
as views of their memory, never copied: they must be C-contiguous, of the
anchor's dtype and shape (or a batch multiple), and outputs writable.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _ipu
from ._ipu import Future

__all__ = ["Runner", "RuntimeConfig", "DeviceWaitConfig", "DeviceWaitStrategy",
           "DeviceManager", "Device", "Future", "TensorInfo", "NO_BATCHING_DIM"]

#: batching_dim's "no dynamic batch sizing" value (as in the C runtime).
NO_BATCHING_DIM = _ipu.NO_BATCHING_DIM


class DeviceWaitStrategy(enum.IntEnum):
    """What a Runner does when every suitable device is in use."""
    NO_WAIT = _ipu.WAIT_NONE
    WAIT_WITH_TIMEOUT = _ipu.WAIT_TIMEOUT
    WAIT_FOREVER = _ipu.WAIT_FOREVER


@dataclass
class DeviceWaitConfig:
    """How long to wait for a busy device (timeout in seconds)."""
    strategy: DeviceWaitStrategy = DeviceWaitStrategy.NO_WAIT
    timeout: float = 0.0


@dataclass
class RuntimeConfig:
    """The ModelRunner's settings, with PopRT's names and defaults.

    timeout_ns          a request not done after this long fails with
                        ipu.IpuTimeoutError and the queue is recovered
                        (queued requests are cancelled); 0: wait forever
    validate_io_params  every input and output anchor must be given and
                        shapes are checked; False lets a fused model's
                        request name only its own subgraph's anchors
                        (dtypes and sizes are always checked)
    batching_dim        dynamic batch sizing on this dimension (any batch
                        size); NO_BATCHING_DIM: multiples of the compiled
                        batch along the model's batch dimension
    ring_buffer_size_multiplier
                        requests in flight: 8 x this, rounded up to a power
                        of two (the default 2 gives the C runtime's 16)
    thread_safe         the Runner may be used from several threads at once;
                        it always is (accepted for PopRT scripts)
    check_package_hash  the file's checksums are verified before loading; a
                        file is never loaded unchecked, so False is refused
    device_wait_config  DeviceWaitConfig: waiting for a busy device
    device              a libipu device spec ("model:tiles=64", "/dev/accel/accel0",
                        or several separated by ';'); None: the in-process
                        device made to match the model, then any /dev/accel/accelN
    device_manager      a DeviceManager to take the device from (shared by
                        several Runners); None: a private one
    """
    timeout_ns: int = 0
    validate_io_params: bool = True
    batching_dim: int = NO_BATCHING_DIM
    ring_buffer_size_multiplier: int = 2
    thread_safe: bool = True
    check_package_hash: bool = True
    device_wait_config: DeviceWaitConfig = field(default_factory=DeviceWaitConfig)
    device: Optional[str] = None
    device_manager: Optional["DeviceManager"] = None

    def _runner_kwargs(self) -> Dict[str, Any]:
        if not self.check_package_hash:
            raise ValueError("check_package_hash=False: .ipuef files are always verified "
                             "before they are loaded")
        mult = int(self.ring_buffer_size_multiplier)
        # the ring's own range (2 .. 2^20) is the runtime's to check and report
        if mult < 1:
            raise ValueError(f"ring_buffer_size_multiplier {mult}: must be 1 or more")
        ring = 1
        while ring < 8 * mult:
            ring *= 2
        wait = self.device_wait_config
        timeout = float(wait.timeout)
        if timeout < 0:
            raise ValueError(f"device_wait_config.timeout {timeout}: must be >= 0 seconds")
        batching_dim = self.batching_dim
        if batching_dim is None or batching_dim < 0:
            batching_dim = NO_BATCHING_DIM
        return dict(timeout_ns=int(self.timeout_ns),
                    validate_io_params=bool(self.validate_io_params),
                    batching_dim=int(batching_dim),
                    ring_buffer_size=ring,
                    wait_policy=int(DeviceWaitStrategy(wait.strategy)),
                    wait_timeout_ns=int(round(timeout * 1e9)),
                    device=self.device,
                    device_manager=self.device_manager)


@dataclass(frozen=True)
class TensorInfo:
    """One anchor of a request: what get_execute_inputs/outputs return."""
    name: str
    shape: Tuple[int, ...]
    dtype: str                  # numpy's name: "float32", "float16", ...
    batch_dim: Optional[int]    # the dimension that grows with the batch
    size_in_bytes: int

    def numpy_data_type(self):
        """The anchor's numpy dtype (numpy.dtype)."""
        import numpy
        return numpy.dtype(self.dtype)


class Runner(_ipu.Runner):
    """Runner(model, config=None, custom_ops=None): load a compiled model onto a device.

    model       path of an .ipuef file (str or os.PathLike), or its bytes
    config      RuntimeConfig (None: the defaults)
    custom_ops  paths of the custom-operator plugins the model was compiled
                with: the in-process devices load them (native code run
                in this process; a VM's /dev/accel/accelN has its QEMU's)

    execute(inputs, outputs)        run one request and wait for it
    execute_async(inputs, outputs)  start one; returns a Future to wait()
    get_execute_inputs() / get_execute_outputs()
                                    the anchors a request passes (TensorInfo)
    close()                         refuse new requests (RunnerClosedError)
                                    from then on, let the running ones
                                    finish, cancel what is queued, free
                                    the device

    inputs and outputs map anchor names (for a fused model "graphK/NAME";
    its ``index`` input is filled from them) to numpy arrays.  A wrong
    dtype, shape or name raises ipu.IpuValueError naming the anchor.  The
    GIL is released while the device works, so several threads may share
    one Runner.  Usable as a context manager.
    """

    def __init__(self, model: Union[str, bytes, "os.PathLike[str]"],
                 config: Optional[RuntimeConfig] = None,
                 custom_ops: Optional[Iterable[Union[str, "os.PathLike[str]"]]] = None) -> None:
        self.config = config if config is not None else RuntimeConfig()
        if not isinstance(self.config, RuntimeConfig):
            raise TypeError(f"config must be a RuntimeConfig, not {type(config).__name__}")
        kwargs = self.config._runner_kwargs()
        if custom_ops:
            if isinstance(custom_ops, (str, bytes, os.PathLike)):
                custom_ops = [custom_ops]
            paths = [os.fspath(p) for p in custom_ops]
            for p in paths:
                if not isinstance(p, str) or not p or ":" in p:
                    raise ValueError(f"custom_ops: {p!r} is not a path without ':'")
            kwargs["custom_ops"] = ":".join(paths)
        super().__init__(model, **kwargs)

    def get_execute_inputs(self, subgraph: int = -1, batch: int = 0) -> List[TensorInfo]:
        """The input anchors of a request (subgraph: one model of a fused
        executable; batch: the request's batch size, 0: the compiled one)."""
        return [_info(d) for d in super().get_execute_inputs(subgraph=subgraph, batch=batch)]

    def get_execute_outputs(self, subgraph: int = -1, batch: int = 0) -> List[TensorInfo]:
        """The output anchors of a request (as get_execute_inputs)."""
        return [_info(d) for d in super().get_execute_outputs(subgraph=subgraph, batch=batch)]

    def get_states(self) -> List[TensorInfo]:
        """The model's device-resident states (a decoder's key/value cache)."""
        return [TensorInfo(name=d["name"], shape=tuple(d["shape"]), dtype=d["dtype"],
                           batch_dim=None, size_in_bytes=d["size_in_bytes"])
                for d in super().get_states()]

    def read_state(self, name: str, out: Any = None) -> Any:
        """State `name` as a new numpy array (or copied into `out`)."""
        if out is None:
            import numpy
            info = {s.name: s for s in self.get_states()}.get(name)
            if info is None:
                super().read_state(name, bytearray())   # raises, naming it
            out = numpy.empty(info.shape, dtype=info.dtype)
        super().read_state(name, out)
        return out

    def generate(self, prompt_ids: Sequence[int], max_new_tokens: int = 16,
                 stop_ids: Sequence[int] = (), with_logits: bool = False,
                 temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0,
                 seed: int = 1, host_sampling: bool = False) -> Iterator[Any]:
        """Generation with a decoder compiled with its key/value cache as
        state (inputs input_ids and position_ids, outputs next_token and/or
        logits; Documentation/compiler/generation.md).  Resets the state,
        feeds the prompt T tokens a run of the model's prefill program when
        it has one (ipu-compile --prefill-model; where whole runs fit the
        cache), else one token per step, then yields each new token id
        (with its logits as (token, logits) if with_logits) as soon as it is
        made, until max_new_tokens, a token of stop_ids (yielded too) or the
        end of the cache.  Stop early by leaving the loop.  Greedy (the
        device's next_token) unless temperature > 0: then sampled from
        softmax(logits / temperature) among the top_k most likely tokens
        (0: all), then the fewest whose probabilities add up to top_p, with
        a generator seeded by seed (the same seed, the same tokens, as
        ipurt_generate and ipu-run --generate --seed give).  A model
        compiled with its sampling program draws them on the device (top_k
        1..64, or any for a vocabulary of at most 64, without with_logits):
        a step then streams the token and a few scalars, not the logits;
        else, or with host_sampling, the host draws them from the logits
        with the same sampler: the same tokens.

        The loop is the C runtime's (ipurt_generate, on a thread of its own
        with the GIL released): greedy without with_logits, each step runs
        the model's tokens-only program when it has one, and no logits
        cross from the device.  The device waits while the caller holds a
        token, so between two tokens it is idle (device_counters, the state
        may be read).  One generation runs per Runner: a new generate()
        stops the one before (whose next token raises ipu.Error,
        IPURT_E_CANCELLED), and close() stops one that runs (its next token
        raises RunnerClosedError).  The model's shortcomings (no state, no
        next_token or logits) raise ipu.Error with the runtime's message."""
        if temperature < 0 or top_p < 0 or top_k < 0:
            raise ValueError("temperature, top_k and top_p must not be negative")
        gen = super()._generate(
            [int(t) for t in prompt_ids],
            max_new_tokens=min(max(1, int(max_new_tokens)), 2**32 - 1),
            stop_ids=[int(t) for t in stop_ids], want_logits=bool(with_logits),
            temperature=float(temperature), top_k=min(int(top_k), 2**32 - 1),
            top_p=float(top_p), seed=int(seed) & (2**64 - 1),
            host_sampling=bool(host_sampling))
        try:
            if not with_logits:
                for token, _ in gen:
                    yield token
                return
            import numpy
            for token, logits in gen:
                yield token, (numpy.frombuffer(logits, numpy.float32)
                              if logits is not None else None)
        finally:
            gen.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<ipu.runtime.Runner (closed)>"
        m = self.model_info
        return (f"<ipu.runtime.Runner {m['ipu_version']} {m['num_tiles']} tiles, "
                f"batch {m['batch_size']}>")


def _info(d: Mapping[str, Any]) -> TensorInfo:
    return TensorInfo(name=d["name"], shape=tuple(d["shape"]), dtype=d["dtype"],
                      batch_dim=d["batch_dim"], size_in_bytes=d["size_in_bytes"])


class DeviceManager(_ipu.DeviceManager):
    """DeviceManager(specs=None): the devices a process may use.

    specs lists libipu device specs separated by ';' (e.g.
    "model:tiles=64;model:version=ipu21"); None means one in-process device
    of the default size.  Every /dev/accel/accelN present (the driver's devices) is
    listed too.  acquire() takes one that satisfies a requirement; pass the
    manager as RuntimeConfig.device_manager to let Runners choose among them.
    """

    def __init__(self, specs: Optional[str] = None) -> None:
        super().__init__(specs)

    def acquire(self, num_tiles: int = 1, tile_mem: int = 1, ipu_version: Optional[str] = None,
                wait: Optional[DeviceWaitConfig] = None) -> "Device":
        """Take a free device with at least num_tiles tiles of tile_mem bytes
        (and ipu_version, if given); release() it, or use it in a with block."""
        wait = wait if wait is not None else DeviceWaitConfig()
        return super().acquire(num_tiles=num_tiles, tile_mem=tile_mem, ipu_version=ipu_version,
                               wait_policy=int(DeviceWaitStrategy(wait.strategy)),
                               wait_timeout_ns=int(round(float(wait.timeout) * 1e9)))


Device = _ipu.Device
