"""Multimodal feature transport: a stream-ordered byte pool and the transports that move it.

`memory_pool` holds the device-agnostic pool and consumer protocol, `host` runs it in shared CPU
memory across processes, `cuda_ipc` on a GPU shared by CUDA IPC. Importing this package imports
none of them (and so no torch).
"""

from __future__ import annotations

from typing import Literal

TensorTransportMode = Literal["cuda_ipc", "auto", "default"]
"""How multimodal features travel from the tokenizer to the TP ranks."""


def determine_tensor_transport_mode(
    tokenizer_worker_device: str = "auto", *, nnodes: int = 1
) -> TensorTransportMode:
    """Pick the transport for features produced on `tokenizer_worker_device`.

    CUDA IPC only works within one machine and from a GPU, so a CPU tokenizer worker or a
    multi-node deployment uses the default transport. `nnodes` is passed in: this runtime has
    no distributed state to read it from.
    """
    if tokenizer_worker_device == "cpu":
        return "default"
    if nnodes > 1:
        return "default"
    return "cuda_ipc"
