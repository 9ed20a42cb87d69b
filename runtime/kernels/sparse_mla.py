"""Sparse MLA prefill with FP8 Q and KV: the validated public entry point and its custom ops.

`sparse_mla_q8kv8_prefill_fwd` validates its arguments in the order (and with the messages) of
the upstream SM90 wrapper, allocates or checks the three outputs, and dispatches to one of three
`torch.library` custom ops in the `errcat` namespace, which mutate `out`, `max_logits` and `lse`
in place and have fake implementations so `torch.compile` can trace a call.

Backends (`backend=`):
- `"reference"`: the PyTorch reference kernel (`runtime.kernels.sparse_mla_reference`) on
  whatever single device the inputs share, CPU included. The CUDA-only checks are skipped.
- `"sm90"`: requires CUDA tensors on a compute capability 9.0 GPU (H100/H200). There is no
  dedicated SM90 kernel here yet, so it runs the same reference kernel on that GPU: exact fp32
  maths, without the CUTLASS kernel's speed or its FP8 rounding of probabilities.
- `"auto"`: `"sm90"` when `q` is a CUDA tensor, `"reference"` otherwise.

Importing this module needs no GPU: nothing CUDA-specific is touched until a call asks for it.
"""

import torch

from runtime.errors import (
    AttnSinkNotContiguous,
    AttnSinkNotCuda,
    AttnSinkWithoutTopkLength,
    AttnSinkWrongDevice,
    AttnSinkWrongShapeOrDtype,
    BufferNotContiguous,
    HeadDimMismatch,
    IndicesNotContiguous,
    IndicesNotCuda,
    IndicesNotInt32,
    IndicesWrongDevice,
    IndicesWrongRank,
    IndicesWrongShape,
    KvCacheNotContiguous,
    KvCacheNotCuda,
    KvCacheNotFloat8,
    KvCacheWrongDevice,
    KvCacheWrongRank,
    KvHeadsNotOne,
    OutputBuffersAlias,
    OutputBufferWrongDevice,
    OutputBufferWrongDtype,
    OutputBufferWrongShape,
    QueryHeadsNotMultipleOf64,
    QueryNotContiguous,
    QueryNotCuda,
    QueryNotFloat8,
    QueryWrongRank,
    ScaleNotCuda,
    ScaleNotFloat32,
    ScaleNotScalar,
    ScaleNotTensor,
    ScaleWrongDevice,
    Sm90BackendNeedsHopper,
    TopkLengthNotContiguous,
    TopkLengthNotCuda,
    TopkLengthOutOfRange,
    TopkLengthWrongDevice,
    TopkLengthWrongShapeOrDtype,
    TopkNotMultipleOf128,
    UnknownSparseMlaBackend,
    UnsupportedHeadDim,
    UnsupportedValueDim,
)
from runtime.kernels.sparse_mla_reference import D_V, sparse_mla_reference

__all__ = ["BACKENDS", "sparse_mla_q8kv8_prefill_fwd"]

BACKENDS = ("auto", "reference", "sm90")
"""Accepted values of the `backend` argument."""

_SM90_CAPABILITY = (9, 0)
_MUTATED = ("out", "max_logits", "lse")


# The three ops mirror upstream's dispatch split (sink and length / length only / neither) so a
# dedicated kernel can later register per-device implementations under the same names. Unlike
# upstream they take no shape integers or raw CUDA stream: the reference reads shapes from the
# tensors and runs on torch's current stream.
@torch.library.custom_op("errcat::sparse_mla_q8kv8_prefill_full", mutates_args=_MUTATED)
def _prefill_full_op(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    q_scale: torch.Tensor,
    kv_scale: torch.Tensor,
    attn_sink: torch.Tensor,
    topk_length: torch.Tensor,
    out: torch.Tensor,
    max_logits: torch.Tensor,
    lse: torch.Tensor,
    sm_scale: float,
) -> None:
    sparse_mla_reference(
        q, kv, indices, sm_scale, q_scale, kv_scale, out, max_logits, lse, attn_sink, topk_length
    )


@torch.library.custom_op("errcat::sparse_mla_q8kv8_prefill_topk_length", mutates_args=_MUTATED)
def _prefill_topk_length_op(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    q_scale: torch.Tensor,
    kv_scale: torch.Tensor,
    topk_length: torch.Tensor,
    out: torch.Tensor,
    max_logits: torch.Tensor,
    lse: torch.Tensor,
    sm_scale: float,
) -> None:
    sparse_mla_reference(
        q, kv, indices, sm_scale, q_scale, kv_scale, out, max_logits, lse, None, topk_length
    )


@torch.library.custom_op("errcat::sparse_mla_q8kv8_prefill", mutates_args=_MUTATED)
def _prefill_op(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    q_scale: torch.Tensor,
    kv_scale: torch.Tensor,
    out: torch.Tensor,
    max_logits: torch.Tensor,
    lse: torch.Tensor,
    sm_scale: float,
) -> None:
    sparse_mla_reference(q, kv, indices, sm_scale, q_scale, kv_scale, out, max_logits, lse)


# The ops only write their mutated arguments, so tracing needs no shape logic: return nothing.
@_prefill_full_op.register_fake
def _prefill_full_fake(*args: object) -> None:
    return None


@_prefill_topk_length_op.register_fake
def _prefill_topk_length_fake(*args: object) -> None:
    return None


@_prefill_op.register_fake
def _prefill_fake(*args: object) -> None:
    return None


def _resolve_backend(backend: str, q: torch.Tensor) -> str:
    if backend not in BACKENDS:
        given = repr(backend)
        raise UnknownSparseMlaBackend(given=given)
    if backend == "auto":
        return "sm90" if isinstance(q, torch.Tensor) and q.is_cuda else "reference"
    return backend


def _check_sm90_device(device: torch.device) -> None:
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) != _SM90_CAPABILITY:
        capability = f"{major}.{minor}"
        raise Sm90BackendNeedsHopper(device=device, capability=capability)


def _check_out_buffer(
    t: torch.Tensor,
    name: str,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    device: torch.device,
) -> None:
    if tuple(t.shape) != shape:
        actual_shape = tuple(t.shape)
        raise OutputBufferWrongShape(name=name, shape=shape, actual_shape=actual_shape)
    if t.dtype != dtype:
        raise OutputBufferWrongDtype(name=name, dtype=dtype, t=t)
    if t.device != device:
        raise OutputBufferWrongDevice(name=name, device=device, t=t)
    if not t.is_contiguous():
        raise BufferNotContiguous(name=name)


def _output(
    t: torch.Tensor | None,
    name: str,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    device: torch.device,
) -> torch.Tensor:
    if t is None:
        return torch.empty(shape, dtype=dtype, device=device)
    _check_out_buffer(t, name, shape, dtype, device)
    return t


def _check_scale(scale: object, name: str, device: torch.device, require_cuda: bool) -> None:
    if not isinstance(scale, torch.Tensor):
        raise ScaleNotTensor(name=name)
    if require_cuda and not scale.is_cuda:
        raise ScaleNotCuda(name=name)
    if scale.device != device:
        raise ScaleWrongDevice(name=name, device=device, scale=scale)
    if scale.dtype != torch.float32:
        raise ScaleNotFloat32(name=name, scale=scale)
    if scale.numel() != 1:
        shape = tuple(scale.shape)
        raise ScaleNotScalar(name=name, shape=shape)
    # A one-element tensor is always contiguous in torch; kept to match upstream's checks.
    if not scale.is_contiguous():
        raise BufferNotContiguous(name=name)


def _check_no_alias(provided: list[torch.Tensor]) -> None:
    # Fresh buffers never alias anything, so only caller-provided ones are compared. Empty
    # buffers own no memory (their data_ptr may be 0 for all), so they cannot clash either.
    # Dynamo cannot compare the data pointers of distinct inputs, so under torch.compile the
    # check is skipped rather than breaking a fullgraph trace.
    if torch.compiler.is_compiling():
        return
    pointers = [t.data_ptr() for t in provided if t.numel() > 0]
    if len(set(pointers)) != len(pointers):
        raise OutputBuffersAlias()


def sparse_mla_q8kv8_prefill_fwd(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    sm_scale: float,
    q_scale: torch.Tensor,
    kv_scale: torch.Tensor,
    d_v: int = D_V,
    attn_sink: torch.Tensor | None = None,
    topk_length: torch.Tensor | None = None,
    *,
    out: torch.Tensor | None = None,
    max_logits: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
    backend: str = "auto",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sparse MLA prefill attention with FP8-E4M3 Q and KV and per-tensor fp32 scales.

    Each query row `s` attends to the KV rows `indices[s, 0, :]` (slots with an index outside
    `[0, s_kv)` or at or past `topk_length[s]` are skipped). Logits are
    `sm_scale * q_scale * kv_scale * (q · k)` over all `d_qk` channels; values are kv channels
    `[0, 512)`, scaled by `kv_scale`. `attn_sink[h]`, which requires `topk_length`, acts as one
    extra logit with a zero value vector.

    Args:
        q: [s_q, h_q, d_qk] float8_e4m3fn, contiguous; d_qk is 512 or 576, h_q a positive
            multiple of 64.
        kv: [s_kv, 1, d_qk] float8_e4m3fn, contiguous, on q's device.
        indices: [s_q, 1, topk] int32, contiguous; topk a positive multiple of 128.
        sm_scale: softmax scale, e.g. `1 / sqrt(d_qk)`.
        q_scale: one-element fp32 tensor on q's device.
        kv_scale: one-element fp32 tensor on q's device.
        d_v: value width; only 512 is supported.
        attn_sink: optional [h_q] fp32 sink logits.
        topk_length: optional [s_q] int32 count of leading slots to use, each in [0, topk].
            Checking its values reads them on the host (a device sync) and breaks a
            `torch.compile` graph.
        out: optional [s_q, h_q, 512] bf16 buffer to write in place.
        max_logits: optional [s_q, h_q] fp32 buffer to write in place.
        lse: optional [s_q, h_q] fp32 buffer to write in place.
        backend: `"auto"`, `"reference"` or `"sm90"` (see the module docstring).

    Returns:
        `(out, max_logits, lse)`: the caller's buffers where given (the same objects), fresh
        tensors otherwise. `max_logits` is the largest valid logit and `lse` the natural-log
        log-sum-exp of the valid logits, sink excluded; a row with no valid slot gets out 0,
        max_logits -inf and lse +inf.

    Raises:
        ValueError: an argument has the wrong shape, dtype, device or layout, or the outputs
            alias each other; nothing is written then.
        RuntimeError: backend `"sm90"` on a GPU whose compute capability is not 9.0.
    """
    backend = _resolve_backend(backend, q)
    require_cuda = backend == "sm90"

    if q.ndim != 3:
        q_shape = tuple(q.shape)
        raise QueryWrongRank(q_shape=q_shape)
    if kv.ndim != 3:
        kv_shape = tuple(kv.shape)
        raise KvCacheWrongRank(kv_shape=kv_shape)
    if indices.ndim != 3:
        indices_shape = tuple(indices.shape)
        raise IndicesWrongRank(indices_shape=indices_shape)

    if require_cuda:
        if not q.is_cuda:
            raise QueryNotCuda()
        if not kv.is_cuda:
            raise KvCacheNotCuda()
        if not indices.is_cuda:
            raise IndicesNotCuda()
    device = q.device
    if kv.device != device:
        raise KvCacheWrongDevice(device=device, kv=kv)
    if indices.device != device:
        raise IndicesWrongDevice(device=device, indices=indices)

    if q.dtype != torch.float8_e4m3fn:
        raise QueryNotFloat8(q=q)
    if kv.dtype != torch.float8_e4m3fn:
        raise KvCacheNotFloat8(kv=kv)
    if not q.is_contiguous():
        raise QueryNotContiguous()
    if not kv.is_contiguous():
        raise KvCacheNotContiguous()
    if not indices.is_contiguous():
        raise IndicesNotContiguous()

    s_q, h_q, d_qk = q.shape
    _, h_kv, kv_d_qk = kv.shape
    if kv_d_qk != d_qk:
        raise HeadDimMismatch(d_qk=d_qk, kv_d_qk=kv_d_qk)
    if h_q == 0 or h_q % 64 != 0:
        raise QueryHeadsNotMultipleOf64(h_q=h_q)
    if h_kv != 1:
        raise KvHeadsNotOne(h_kv=h_kv)
    if d_qk not in (512, 576):
        raise UnsupportedHeadDim(d_qk=d_qk)
    if tuple(indices.shape[:2]) != (s_q, h_kv):
        indices_shape = tuple(indices.shape)
        raise IndicesWrongShape(s_q=s_q, h_kv=h_kv, indices_shape=indices_shape)
    if indices.dtype != torch.int32:
        raise IndicesNotInt32(indices=indices)
    topk = indices.shape[2]
    if topk == 0 or topk % 128 != 0:
        raise TopkNotMultipleOf128(topk=topk)

    if topk_length is not None:
        if topk_length.dtype != torch.int32 or tuple(topk_length.shape) != (s_q,):
            topk_length_shape = tuple(topk_length.shape)
            raise TopkLengthWrongShapeOrDtype(
                s_q=s_q, topk_length_shape=topk_length_shape, topk_length=topk_length
            )
        if require_cuda and not topk_length.is_cuda:
            raise TopkLengthNotCuda()
        if topk_length.device != device:
            raise TopkLengthWrongDevice(device=device, topk_length=topk_length)
        if not topk_length.is_contiguous():
            raise TopkLengthNotContiguous()
        if bool(((topk_length < 0) | (topk_length > topk)).any()):
            raise TopkLengthOutOfRange(topk=topk)

    if d_v != D_V:
        raise UnsupportedValueDim(d_v=d_v)

    if attn_sink is not None:
        if topk_length is None:
            raise AttnSinkWithoutTopkLength()
        if attn_sink.dtype != torch.float32 or tuple(attn_sink.shape) != (h_q,):
            attn_sink_shape = tuple(attn_sink.shape)
            raise AttnSinkWrongShapeOrDtype(
                h_q=h_q, attn_sink_shape=attn_sink_shape, attn_sink=attn_sink
            )
        if require_cuda and not attn_sink.is_cuda:
            raise AttnSinkNotCuda()
        if attn_sink.device != device:
            raise AttnSinkWrongDevice(device=device, attn_sink=attn_sink)
        if not attn_sink.is_contiguous():
            raise AttnSinkNotContiguous()

    _check_scale(q_scale, "q_scale", device, require_cuda)
    _check_scale(kv_scale, "kv_scale", device, require_cuda)

    provided = [t for t in (out, max_logits, lse) if t is not None]
    out = _output(out, "out", (s_q, h_q, D_V), torch.bfloat16, device)
    max_logits = _output(max_logits, "max_logits", (s_q, h_q), torch.float32, device)
    lse = _output(lse, "lse", (s_q, h_q), torch.float32, device)
    _check_no_alias(provided)

    if require_cuda:
        _check_sm90_device(device)

    if attn_sink is not None and topk_length is not None:
        _prefill_full_op(
            q,
            kv,
            indices,
            q_scale,
            kv_scale,
            attn_sink,
            topk_length,
            out,
            max_logits,
            lse,
            float(sm_scale),
        )
    elif topk_length is not None:
        _prefill_topk_length_op(
            q, kv, indices, q_scale, kv_scale, topk_length, out, max_logits, lse, float(sm_scale)
        )
    else:
        _prefill_op(q, kv, indices, q_scale, kv_scale, out, max_logits, lse, float(sm_scale))
    return out, max_logits, lse
