"""Reference kernel for sparse MLA prefill with FP8 Q and KV, in plain PyTorch.

It computes exactly the maths that the SM90 kernel implements (spec §4.4) on any device torch
supports, without the GPU kernel's approximations: the QK dot products of the raw FP8 values are
accumulated in fp32, the combined scale `sm_scale * q_scale * kv_scale` is applied after them,
and probabilities stay in fp32 (the GPU kernel rounds them to FP8 before the P·V product).

Cost follows `topk`, not `s_kv`: each query row gathers only the KV rows its indices select.
Extra memory is bounded: query rows are processed in chunks sized from `CHUNK_BYTES`, so the
peak working set is the same whether `s_q` is 256 or 2048.

Callers validate shapes, dtypes and devices first (see `runtime.kernels.sparse_mla`); this
module assumes a valid call and only writes the three output buffers.
"""

from __future__ import annotations

import math

import torch

D_V = 512
"""Value channels: kv channels [0, 512) are the values; with d_qk=576 the rest are RoPE dims."""

CHUNK_BYTES = 32 << 20
"""Target working set of one chunk of query rows, in bytes (the chunk is at least one row)."""


def rows_per_chunk(h_q: int, d_qk: int, topk: int, chunk_bytes: int = CHUNK_BYTES) -> int:
    """Number of query rows processed together so that one chunk's temporaries fit `chunk_bytes`."""
    # Per query row: the gathered KV rows in fp8 and fp32, plus the copies a GEMM library may
    # make of the transposed keys and of the strided value slice; q in fp32; the logits and
    # probabilities (plus mask temporaries); and the fp32 output accumulator.
    keys = topk * d_qk * (1 + 4 + 4) + topk * D_V * 4
    per_row = keys + h_q * d_qk * 4 + h_q * topk * 4 * 3 + h_q * D_V * 4 * 2
    return max(1, chunk_bytes // per_row)


def sparse_mla_reference(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    sm_scale: float,
    q_scale: torch.Tensor,
    kv_scale: torch.Tensor,
    out: torch.Tensor,
    max_logits: torch.Tensor,
    lse: torch.Tensor,
    attn_sink: torch.Tensor | None = None,
    topk_length: torch.Tensor | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> None:
    """Write sparse attention of `q` over the `kv` rows chosen by `indices` into the outputs.

    Shapes: q [s_q, h_q, d_qk] fp8, kv [s_kv, 1, d_qk] fp8, indices [s_q, 1, topk] int32,
    q_scale and kv_scale one-element fp32, attn_sink [h_q] fp32, topk_length [s_q] int32;
    out [s_q, h_q, 512] bf16, max_logits and lse [s_q, h_q] fp32, all on one device.

    A slot j of row s is valid iff `0 <= indices[s, 0, j] < s_kv` and `j < topk_length[s]`
    (when given). A row with no valid slot gets out 0, max_logits -inf and lse +inf, with or
    without a sink. Otherwise max_logits is the largest valid logit, lse the natural-log
    log-sum-exp of the valid logits (the sink excluded), and out the softmax-weighted sum of
    the values, where the sink adds `exp(attn_sink[h] - max)` to the denominator only.
    """
    s_q, h_q, d_qk = q.shape
    s_kv = kv.shape[0]
    topk = indices.shape[2]
    if s_q == 0:
        return
    if s_kv == 0:
        # No row can be selected, so every slot is invalid; there is nothing to gather from.
        out.zero_()
        max_logits.fill_(-math.inf)
        lse.fill_(math.inf)
        return

    device = q.device
    kv_rows_all = kv.reshape(s_kv, d_qk)
    # One fp32 factor applied after the fp32 dot products, as the kernel does.
    scale = (sm_scale * q_scale.reshape(()) * kv_scale.reshape(())).to(torch.float32)
    value_scale = kv_scale.reshape(()).to(torch.float32)
    sink = attn_sink.to(torch.float32) if attn_sink is not None else None
    slots = torch.arange(topk, device=device)
    step = rows_per_chunk(h_q, d_qk, topk, chunk_bytes)

    for start in range(0, s_q, step):
        stop = min(start + step, s_q)
        rows = stop - start
        idx = indices[start:stop, 0, :].to(torch.int64)
        valid = (idx >= 0) & (idx < s_kv)
        if topk_length is not None:
            valid &= slots < topk_length[start:stop, None]
        # Invalid slots read row 0 (always present) and are then zeroed, so a NaN/Inf in an
        # unselected row can never leak through 0 * NaN in the P·V product. Zeroing only the
        # invalid rows costs in proportion to them, not to the whole gathered block.
        safe_idx = torch.where(valid, idx, 0).reshape(-1)
        keys = kv_rows_all.index_select(0, safe_idx).to(torch.float32)
        keys.index_fill_(0, (~valid).reshape(-1).nonzero().squeeze(1), 0.0)
        keys = keys.view(rows, topk, d_qk)

        q_rows = q[start:stop].to(torch.float32)
        logits = torch.bmm(q_rows, keys.transpose(1, 2)).mul_(scale)
        logits.masked_fill_(~valid[:, None, :], -math.inf)

        row_max = logits.amax(dim=-1)
        has_valid = valid.any(dim=-1)[:, None].expand(rows, h_q)
        # A row without valid slots has max -inf; shift by 0 instead so exp() gives 0, not NaN.
        shift = torch.where(has_valid, row_max, 0.0)
        probs = logits.sub_(shift[..., None]).exp_()
        total = probs.sum(dim=-1)

        denom = total
        if sink is not None:
            denom = total + torch.exp(sink[None, :] - shift)
        denom = torch.where(has_valid, denom, 1.0)

        acc = torch.bmm(probs, keys[:, :, :D_V])
        acc.mul_((value_scale / denom)[..., None])
        acc.masked_fill_(~has_valid[..., None], 0.0)

        out[start:stop].copy_(acc)
        max_logits[start:stop].copy_(row_max)
        lse[start:stop].copy_(torch.where(has_valid, torch.log(total) + row_max, math.inf))
