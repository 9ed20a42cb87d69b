"""Sparse MLA FP8 prefill: reference maths, validation order and texts, buffers, custom ops."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest
import torch

from runtime.kernels.sparse_mla import sparse_mla_q8kv8_prefill_fwd
from runtime.kernels.sparse_mla_reference import rows_per_chunk, sparse_mla_reference

FP8 = torch.float8_e4m3fn
Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def _fp8(*shape: int, generator: torch.Generator) -> torch.Tensor:
    # Wider than the upstream tests' 0.05 * randn so that softmax weights are far from uniform.
    return (0.4 * torch.randn(*shape, generator=generator)).to(FP8)


def _indices(s_q: int, topk: int, s_kv: int, generator: torch.Generator) -> torch.Tensor:
    """Rows that exercise every kind of slot: none valid, -1 anywhere, out of range, duplicates."""
    idx = torch.randint(0, s_kv, (s_q, topk), generator=generator)
    idx[0] = -1  # no valid slot at all
    holes = torch.rand(s_q, topk, generator=generator) < 0.3
    idx[1:][holes[1:]] = -1  # -1 scattered through the row, not only at the tail
    if s_q > 2:
        idx[2, ::3] = s_kv  # one past the end
        idx[2, 1::7] = s_kv + 1000
        idx[2, 2::11] = -5
    if s_q > 3:
        idx[3] = torch.randint(0, s_kv, (topk,), generator=generator)  # every slot valid
    return idx.to(torch.int32).view(s_q, 1, topk)


def _dense_attention(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    sm_scale: float,
    q_scale: torch.Tensor,
    kv_scale: torch.Tensor,
    attn_sink: torch.Tensor | None = None,
    topk_length: torch.Tensor | None = None,
) -> Outputs:
    """Straightforward fp64 masked softmax over all KV rows; a row chosen twice counts twice."""
    s_q, _, _ = q.shape
    s_kv, topk = kv.shape[0], indices.shape[2]
    idx = indices[:, 0, :].long()
    valid = (idx >= 0) & (idx < s_kv)
    if topk_length is not None:
        valid &= torch.arange(topk) < topk_length.long()[:, None]
    counts = torch.zeros(s_q, s_kv, dtype=torch.float64)
    counts.scatter_add_(1, torch.where(valid, idx, 0), valid.double())

    scale = sm_scale * float(q_scale) * float(kv_scale)
    keys = kv[:, 0, :].double()
    logits = torch.einsum("shd,td->sht", q.double(), keys) * scale
    chosen = counts[:, None, :] > 0
    masked = logits.masked_fill(~chosen, -math.inf)
    row_max = masked.amax(dim=-1)
    any_valid = chosen.any(dim=-1)
    shift = torch.where(any_valid, row_max, 0.0)
    weights = counts[:, None, :] * torch.exp(masked - shift[..., None])
    total = weights.sum(dim=-1)
    denom = total.clone()
    if attn_sink is not None:
        denom += torch.exp(attn_sink.double()[None, :] - shift)
    out = (
        weights @ (float(kv_scale) * keys[:, :512]) / torch.where(any_valid, denom, 1.0)[..., None]
    )
    out = torch.where(any_valid[..., None], out, 0.0)
    lse = torch.where(any_valid, torch.log(total) + row_max, math.inf)
    return out, row_max, lse


def _assert_matches_dense(got: Outputs, want: Outputs) -> None:
    out, max_logits, lse = got
    want_out, want_max, want_lse = want
    # bf16 rounding is at most 2**-9 relative; the fp32 sums add far less than that.
    torch.testing.assert_close(out.double(), want_out, atol=1e-5, rtol=2**-8)
    torch.testing.assert_close(max_logits.double(), want_max, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse.double(), want_lse, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    ("d_qk", "topk", "length", "sink"),
    [
        (512, 128, False, False),
        (576, 256, False, False),
        (576, 128, True, False),
        (512, 256, True, True),
        (576, 256, True, True),
    ],
)
def test_reference_matches_dense_masked_softmax(
    d_qk: int, topk: int, length: bool, sink: bool
) -> None:
    """The kernel equals an fp64 dense masked softmax for every kind of slot and option."""
    gen = torch.Generator().manual_seed(d_qk + topk + 10 * length + 100 * sink)
    s_q, h_q, s_kv = 7, 64, 300
    q = _fp8(s_q, h_q, d_qk, generator=gen)
    kv = _fp8(s_kv, 1, d_qk, generator=gen)
    indices = _indices(s_q, topk, s_kv, gen)
    q_scale, kv_scale = torch.tensor([1.7]), torch.tensor(0.6)
    topk_length = (
        torch.tensor([topk, topk, topk, topk, 0, 37, 1], dtype=torch.int32) if length else None
    )
    attn_sink = torch.randn(h_q, generator=gen) if sink else None
    sm_scale = 1 / math.sqrt(d_qk)

    got = sparse_mla_q8kv8_prefill_fwd(
        q, kv, indices, sm_scale, q_scale, kv_scale, 512, attn_sink, topk_length
    )
    want = _dense_attention(q, kv, indices, sm_scale, q_scale, kv_scale, attn_sink, topk_length)
    _assert_matches_dense(got, want)
    out, max_logits, lse = got
    assert torch.all(out[0] == 0) and torch.all(max_logits[0] == -math.inf)
    assert torch.all(lse[0] == math.inf)
    if length:
        assert torch.all(out[4] == 0) and torch.all(lse[4] == math.inf)


def test_sink_changes_out_but_not_lse_or_max_logits() -> None:
    """The sink only enlarges the denominator of out; lse and max_logits exclude it."""
    gen = torch.Generator().manual_seed(5)
    q, kv = _fp8(3, 64, 512, generator=gen), _fp8(50, 1, 512, generator=gen)
    indices = torch.randint(0, 50, (3, 1, 128), generator=gen, dtype=torch.int32)
    length = torch.full((3,), 128, dtype=torch.int32)
    one = torch.ones(1)
    plain = sparse_mla_q8kv8_prefill_fwd(q, kv, indices, 0.1, one, one, topk_length=length)
    sink = torch.full((64,), 3.0)
    sunk = sparse_mla_q8kv8_prefill_fwd(q, kv, indices, 0.1, one, one, 512, sink, length)
    assert torch.equal(plain[1], sunk[1]) and torch.equal(plain[2], sunk[2])
    assert sunk[0].float().abs().sum() < plain[0].float().abs().sum()


def test_unselected_rows_are_never_read() -> None:
    """NaN in KV rows that no valid slot selects (row 0 included) cannot reach the outputs."""
    gen = torch.Generator().manual_seed(6)
    q, kv = _fp8(2, 64, 576, generator=gen), _fp8(40, 1, 576, generator=gen)
    indices = torch.randint(20, 40, (2, 1, 128), generator=gen, dtype=torch.int32)
    indices[:, :, ::2] = -1
    one = torch.ones(1)
    clean = sparse_mla_q8kv8_prefill_fwd(q, kv, indices, 0.1, one, one)
    poisoned = kv.clone()
    poisoned[:20] = torch.tensor(float("nan")).to(FP8)
    dirty = sparse_mla_q8kv8_prefill_fwd(q, poisoned, indices, 0.1, one, one)
    for a, b in zip(clean, dirty, strict=True):
        assert torch.equal(a, b)


def test_chunking_does_not_change_results() -> None:
    """One query row per chunk gives the same outputs as the default chunk size."""
    gen = torch.Generator().manual_seed(7)
    q, kv = _fp8(5, 64, 512, generator=gen), _fp8(60, 1, 512, generator=gen)
    indices = _indices(5, 128, 60, gen)
    one = torch.ones(1)
    whole = sparse_mla_q8kv8_prefill_fwd(q, kv, indices, 0.1, one, one)
    rowwise = (
        torch.empty(5, 64, 512, dtype=torch.bfloat16),
        torch.empty(5, 64),
        torch.empty(5, 64),
    )
    sparse_mla_reference(q, kv, indices, 0.1, one, one, *rowwise, chunk_bytes=1)
    for a, b in zip(whole, rowwise, strict=True):
        torch.testing.assert_close(a, b, atol=0, rtol=1e-6)


def test_chunk_size_does_not_depend_on_s_q() -> None:
    """The working set is sized per chunk of rows, so longer prompts only add chunks."""
    rows = rows_per_chunk(h_q=64, d_qk=576, topk=256)
    assert 1 <= rows < 256


def test_empty_prompt_returns_empty_outputs() -> None:
    """s_q = 0 is a no-op that still returns correctly shaped outputs."""
    q = torch.empty(0, 64, 512, dtype=FP8)
    kv = torch.zeros(4, 1, 512, dtype=FP8)
    indices = torch.empty(0, 1, 128, dtype=torch.int32)
    out, max_logits, lse = sparse_mla_q8kv8_prefill_fwd(
        q, kv, indices, 0.1, torch.ones(1), torch.ones(1)
    )
    assert out.shape == (0, 64, 512) and max_logits.shape == lse.shape == (0, 64)


def test_no_kv_rows_means_no_valid_slot() -> None:
    """With s_kv = 0 every index is out of range: out 0, max_logits -inf, lse +inf."""
    q = torch.ones(2, 64, 512, dtype=FP8)
    kv = torch.empty(0, 1, 512, dtype=FP8)
    indices = torch.zeros(2, 1, 128, dtype=torch.int32)
    out, max_logits, lse = sparse_mla_q8kv8_prefill_fwd(
        q, kv, indices, 0.1, torch.ones(1), torch.ones(1)
    )
    assert torch.all(out == 0) and torch.all(max_logits == -math.inf)
    assert torch.all(lse == math.inf)


# --- validation -----------------------------------------------------------------------------

S_Q, H_Q, D_QK, TOPK, S_KV = 2, 64, 512, 128, 16
SENTINEL = 7.0


def _valid_call() -> dict[str, Any]:
    """Arguments of a valid call, with caller buffers filled with a sentinel."""
    return {
        "q": torch.ones(S_Q, H_Q, D_QK, dtype=FP8),
        "kv": torch.ones(S_KV, 1, D_QK, dtype=FP8),
        "indices": torch.zeros(S_Q, 1, TOPK, dtype=torch.int32),
        "sm_scale": 0.1,
        "q_scale": torch.ones(1),
        "kv_scale": torch.ones(1),
        "out": torch.full((S_Q, H_Q, 512), SENTINEL, dtype=torch.bfloat16),
        "max_logits": torch.full((S_Q, H_Q), SENTINEL),
        "lse": torch.full((S_Q, H_Q), SENTINEL),
    }


def _fp8_noncontiguous(*shape: int) -> torch.Tensor:
    return torch.zeros(2 * shape[0], *shape[1:], dtype=FP8)[::2]


def _length(*values: int) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int32)


def _same_max_logits_and_lse() -> dict[str, Any]:
    shared = torch.full((S_Q, H_Q), SENTINEL)
    return {"max_logits": shared, "lse": shared}


def _max_logits_viewing_out() -> dict[str, Any]:
    # Same first byte as out, yet a valid fp32 [s_q, h_q] contiguous buffer.
    out = torch.full((S_Q, H_Q, 512), SENTINEL, dtype=torch.bfloat16)
    max_logits = out.view(-1).view(torch.float32)[: S_Q * H_Q].view(S_Q, H_Q)
    return {"out": out, "max_logits": max_logits}


_GOOD_LENGTH = {"topk_length": _length(TOPK, 3)}
_META = torch.device("meta")
_ALIAS_TEXT = "out, max_logits and lse must not alias each other"

# (id, argument overrides, exact message). Texts are written out in full on purpose: they are
# the strings users paste into search, so any change must show up here.
VALIDATION_CASES: list[tuple[str, Callable[[], dict[str, Any]], str]] = [
    (
        "backend",
        lambda: {"backend": "cuda"},
        "sparse_mla_q8kv8_prefill_fwd backend must be 'auto', 'reference' or 'sm90', got 'cuda'",
    ),
    (
        "q-ndim",
        lambda: {"q": torch.ones(H_Q, D_QK, dtype=FP8)},
        "q must have shape (s_q, h_q, d_qk), got (64, 512)",
    ),
    (
        "kv-ndim",
        lambda: {"kv": torch.ones(S_KV, D_QK, dtype=FP8)},
        "kv must have shape (s_kv, h_kv, d_qk), got (16, 512)",
    ),
    (
        "indices-ndim",
        lambda: {"indices": torch.zeros(S_Q, TOPK, dtype=torch.int32)},
        "indices must have shape (s_q, h_kv, topk), got (2, 128)",
    ),
    ("q-cuda", lambda: {"backend": "sm90"}, "q must be a CUDA tensor"),
    (
        "kv-device",
        lambda: {"kv": torch.ones(S_KV, 1, D_QK, dtype=FP8, device=_META)},
        "kv must be on q's device cpu, got meta",
    ),
    (
        "indices-device",
        lambda: {"indices": torch.zeros(S_Q, 1, TOPK, dtype=torch.int32, device=_META)},
        "indices must be on q's device cpu, got meta",
    ),
    (
        "q-dtype",
        lambda: {"q": torch.ones(S_Q, H_Q, D_QK)},
        "q must be torch.float8_e4m3fn, got torch.float32",
    ),
    (
        "kv-dtype",
        lambda: {"kv": torch.ones(S_KV, 1, D_QK, dtype=torch.bfloat16)},
        "kv must be torch.float8_e4m3fn, got torch.bfloat16",
    ),
    ("q-contiguous", lambda: {"q": _fp8_noncontiguous(S_Q, H_Q, D_QK)}, "q must be contiguous"),
    ("kv-contiguous", lambda: {"kv": _fp8_noncontiguous(S_KV, 1, D_QK)}, "kv must be contiguous"),
    (
        "indices-contiguous",
        lambda: {"indices": torch.zeros(2 * S_Q, 1, TOPK, dtype=torch.int32)[::2]},
        "indices must be contiguous",
    ),
    (
        "kv-d_qk",
        lambda: {"kv": torch.ones(S_KV, 1, 576, dtype=FP8)},
        "kv d_qk must match q d_qk=512, got 576",
    ),
    (
        "h_q-zero",
        lambda: {"q": torch.ones(S_Q, 0, D_QK, dtype=FP8)},
        "sparse_mla_q8kv8_prefill_fwd requires h_q padded to a positive multiple of 64, got 0",
    ),
    (
        "h_q-multiple",
        lambda: {"q": torch.ones(S_Q, 96, D_QK, dtype=FP8)},
        "sparse_mla_q8kv8_prefill_fwd requires h_q padded to a positive multiple of 64, got 96",
    ),
    (
        "h_kv",
        lambda: {"kv": torch.ones(S_KV, 2, D_QK, dtype=FP8)},
        "sparse_mla_q8kv8_prefill_fwd requires h_kv=1, got 2",
    ),
    (
        "d_qk",
        lambda: {
            "q": torch.ones(S_Q, H_Q, 128, dtype=FP8),
            "kv": torch.ones(S_KV, 1, 128, dtype=FP8),
        },
        "sparse_mla_q8kv8_prefill_fwd supports d_qk=512/576, got 128",
    ),
    (
        "indices-shape",
        lambda: {"indices": torch.zeros(3, 1, TOPK, dtype=torch.int32)},
        "indices must have shape (2, 1, topk), got (3, 1, 128)",
    ),
    (
        "indices-heads",
        lambda: {"indices": torch.zeros(S_Q, 2, TOPK, dtype=torch.int32)},
        "indices must have shape (2, 1, topk), got (2, 2, 128)",
    ),
    (
        "indices-dtype",
        lambda: {"indices": torch.zeros(S_Q, 1, TOPK, dtype=torch.int64)},
        "indices must be int32, got torch.int64",
    ),
    (
        "topk-multiple",
        lambda: {"indices": torch.zeros(S_Q, 1, 64, dtype=torch.int32)},
        "Q8KV8 sparse-prefill topk width must be a positive multiple of 128, got 64",
    ),
    (
        "topk-zero",
        lambda: {"indices": torch.zeros(S_Q, 1, 0, dtype=torch.int32)},
        "Q8KV8 sparse-prefill topk width must be a positive multiple of 128, got 0",
    ),
    (
        "topk_length-shape",
        lambda: {"topk_length": _length(1, 2, 3)},
        "topk_length must be int32 with shape (2,), got (3,)/torch.int32",
    ),
    (
        "topk_length-dtype",
        lambda: {"topk_length": torch.tensor([1, 2])},
        "topk_length must be int32 with shape (2,), got (2,)/torch.int64",
    ),
    (
        "topk_length-device",
        lambda: {"topk_length": torch.zeros(S_Q, dtype=torch.int32, device=_META)},
        "topk_length must be on q's device cpu, got meta",
    ),
    (
        "topk_length-contiguous",
        lambda: {"topk_length": torch.zeros(2 * S_Q, dtype=torch.int32)[::2]},
        "topk_length must be contiguous",
    ),
    (
        "topk_length-above",
        lambda: {"topk_length": _length(3, TOPK + 1)},
        "topk_length values must satisfy 0 <= topk_length <= topk (128)",
    ),
    (
        "topk_length-negative",
        lambda: {"topk_length": _length(-1, 3)},
        "topk_length values must satisfy 0 <= topk_length <= topk (128)",
    ),
    ("d_v", lambda: {"d_v": 256}, "sparse_mla_q8kv8_prefill_fwd only supports d_v=512, got 256"),
    (
        "sink-without-length",
        lambda: {"attn_sink": torch.zeros(H_Q)},
        "attn_sink requires topk_length to be provided as well",
    ),
    (
        "sink-shape",
        lambda: {**_GOOD_LENGTH, "attn_sink": torch.zeros(32)},
        "attn_sink must be float32 with shape (64,), got (32,)/torch.float32",
    ),
    (
        "sink-dtype",
        lambda: {**_GOOD_LENGTH, "attn_sink": torch.zeros(H_Q, dtype=torch.float16)},
        "attn_sink must be float32 with shape (64,), got (64,)/torch.float16",
    ),
    (
        "sink-device",
        lambda: {**_GOOD_LENGTH, "attn_sink": torch.zeros(H_Q, device=_META)},
        "attn_sink must be on q's device cpu, got meta",
    ),
    (
        "sink-contiguous",
        lambda: {**_GOOD_LENGTH, "attn_sink": torch.zeros(2 * H_Q)[::2]},
        "attn_sink must be contiguous",
    ),
    ("q_scale-type", lambda: {"q_scale": 1.0}, "q_scale must be a torch.Tensor"),
    ("kv_scale-type", lambda: {"kv_scale": 1.0}, "kv_scale must be a torch.Tensor"),
    (
        "q_scale-device",
        lambda: {"q_scale": torch.ones(1, device=_META)},
        "q_scale must be on q's device cpu, got meta",
    ),
    (
        "kv_scale-dtype",
        lambda: {"kv_scale": torch.ones(1, dtype=torch.float64)},
        "kv_scale must be float32, got torch.float64",
    ),
    (
        "q_scale-numel",
        lambda: {"q_scale": torch.ones(1, 2)},
        "q_scale must be a scalar tensor, got shape (1, 2)",
    ),
    (
        "q_scale-before-kv_scale",
        lambda: {"q_scale": torch.ones(2), "kv_scale": 1.0},
        "q_scale must be a scalar tensor, got shape (2,)",
    ),
    (
        "out-shape",
        lambda: {"out": torch.zeros(S_Q, H_Q, 256, dtype=torch.bfloat16)},
        "out must have shape (2, 64, 512), got (2, 64, 256)",
    ),
    (
        "max_logits-shape",
        lambda: {"max_logits": torch.zeros(S_Q * H_Q)},
        "max_logits must have shape (2, 64), got (128,)",
    ),
    (
        "lse-shape",
        lambda: {"lse": torch.zeros(H_Q, S_Q)},
        "lse must have shape (2, 64), got (64, 2)",
    ),
    (
        "out-dtype",
        lambda: {"out": torch.zeros(S_Q, H_Q, 512)},
        "out must have dtype torch.bfloat16, got torch.float32",
    ),
    (
        "lse-dtype",
        lambda: {"lse": torch.zeros(S_Q, H_Q, dtype=torch.bfloat16)},
        "lse must have dtype torch.float32, got torch.bfloat16",
    ),
    (
        "out-device",
        lambda: {"out": torch.zeros(S_Q, H_Q, 512, dtype=torch.bfloat16, device=_META)},
        "out must be on device cpu, got meta",
    ),
    (
        "max_logits-device",
        lambda: {"max_logits": torch.zeros(S_Q, H_Q, device=_META)},
        "max_logits must be on device cpu, got meta",
    ),
    (
        "out-contiguous",
        lambda: {"out": torch.zeros(S_Q, 512, H_Q, dtype=torch.bfloat16).transpose(1, 2)},
        "out must be contiguous",
    ),
    (
        "lse-contiguous",
        lambda: {"lse": torch.zeros(H_Q, S_Q).t()},
        "lse must be contiguous",
    ),
    ("alias-same-tensor", _same_max_logits_and_lse, _ALIAS_TEXT),
    ("alias-view", _max_logits_viewing_out, _ALIAS_TEXT),
]


@pytest.mark.parametrize(
    ("overrides", "text"),
    [pytest.param(make, text, id=name) for name, make, text in VALIDATION_CASES],
)
def test_validation_message_and_nothing_written(
    overrides: Callable[[], dict[str, Any]], text: str
) -> None:
    """Each invalid call raises ValueError with exactly the upstream text and writes nothing."""
    args = _valid_call()
    args.update(overrides())
    buffers = [args[name] for name in ("out", "max_logits", "lse")]
    before = [b.clone() for b in buffers if b.device.type != "meta"]
    with pytest.raises(ValueError, match=re.escape(text) + "$"):
        sparse_mla_q8kv8_prefill_fwd(**args)
    after = [b for b in buffers if b.device.type != "meta"]
    for old, new in zip(before, after, strict=True):
        assert torch.equal(old, new)


def test_valid_call_passes_validation() -> None:
    """The base call of the validation table is valid, so each case tests only its change."""
    out, _, _ = sparse_mla_q8kv8_prefill_fwd(**_valid_call(), topk_length=_length(TOPK, 3))
    assert out.shape == (S_Q, H_Q, 512)


def test_shape_checks_come_before_cuda_checks() -> None:
    """On the sm90 backend a CPU call still reports a bad ndim first, as upstream does."""
    args = _valid_call() | {"backend": "sm90", "kv": torch.ones(S_KV, D_QK, dtype=FP8)}
    with pytest.raises(ValueError, match=re.escape("kv must have shape (s_kv, h_kv, d_qk)")):
        sparse_mla_q8kv8_prefill_fwd(**args)


# --- buffers, ops and tracing ---------------------------------------------------------------


def test_caller_buffers_are_written_in_place_and_returned() -> None:
    """Caller-provided outputs are filled in place and returned as the very same objects."""
    args = _valid_call()
    out, max_logits, lse = args["out"], args["max_logits"], args["lse"]
    got = sparse_mla_q8kv8_prefill_fwd(**args)
    assert got[0] is out and got[1] is max_logits and got[2] is lse
    assert not torch.any(out == SENTINEL) and not torch.any(lse == SENTINEL)


def test_fresh_outputs_do_not_alias_across_calls() -> None:
    """Without caller buffers every call allocates new, distinct tensors."""
    args = _valid_call()
    for name in ("out", "max_logits", "lse"):
        del args[name]
    first = sparse_mla_q8kv8_prefill_fwd(**args)
    second = sparse_mla_q8kv8_prefill_fwd(**args)
    pointers = {t.data_ptr() for t in (*first, *second)}
    assert len(pointers) == 6


def test_custom_ops_are_registered_and_mutate_outputs() -> None:
    """The three ops exist in the errcat namespace and declare out/max_logits/lse as mutated."""
    for name in (
        "sparse_mla_q8kv8_prefill",
        "sparse_mla_q8kv8_prefill_topk_length",
        "sparse_mla_q8kv8_prefill_full",
    ):
        schema = str(getattr(torch.ops.errcat, name).default._schema)
        for arg in ("out", "max_logits", "lse"):
            assert re.search(rf"Tensor\(\w+!\) {arg}\b", schema), schema
        assert schema.endswith("-> ()")


def test_torch_compile_fullgraph_matches_eager() -> None:
    """A call without topk_length traces in one graph under torch.compile and matches eager."""
    gen = torch.Generator().manual_seed(9)
    q, kv = _fp8(3, 64, 576, generator=gen), _fp8(80, 1, 576, generator=gen)
    indices = _indices(3, 128, 80, gen)
    scales = (torch.tensor([1.3]), torch.tensor([0.8]))

    def call(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor) -> Outputs:
        return sparse_mla_q8kv8_prefill_fwd(q, kv, indices, 0.05, *scales)

    compiled = torch.compile(call, fullgraph=True, backend="aot_eager")
    for a, b in zip(compiled(q, kv, indices), call(q, kv, indices), strict=True):
        assert torch.equal(a, b)


# --- GPU ------------------------------------------------------------------------------------


def _gpu_inputs(length: bool, sink: bool) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(11)
    s_q, h_q, d_qk, topk, s_kv = 9, 128, 576, 256, 1000
    args: dict[str, Any] = {
        "q": _fp8(s_q, h_q, d_qk, generator=gen),
        "kv": _fp8(s_kv, 1, d_qk, generator=gen),
        "indices": _indices(s_q, topk, s_kv, gen),
        "sm_scale": 1 / math.sqrt(d_qk),
        "q_scale": torch.tensor([1.1]),
        "kv_scale": torch.tensor([0.9]),
    }
    if length:
        args["topk_length"] = _length(topk, topk, topk, topk, 0, 37, 1, 200, topk)
    if sink:
        args["attn_sink"] = torch.randn(h_q, generator=gen)
    return args


def _to_cuda(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


@pytest.mark.gpu
@pytest.mark.parametrize(("length", "sink"), [(False, False), (True, False), (True, True)])
def test_gpu_sm90_backend_matches_cpu_reference(length: bool, sink: bool) -> None:
    """The sm90 backend on a GPU gives the CPU reference's results."""
    args = _gpu_inputs(length, sink)
    want = sparse_mla_q8kv8_prefill_fwd(**args, backend="reference")
    got = sparse_mla_q8kv8_prefill_fwd(**_to_cuda(args), backend="sm90")
    assert all(t.is_cuda for t in got)
    torch.testing.assert_close(got[0].cpu().float(), want[0].float(), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(got[1].cpu(), want[1], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(got[2].cpu(), want[2], atol=1e-4, rtol=1e-4)


@pytest.mark.gpu
def test_gpu_caller_buffers_written_in_place() -> None:
    """Caller buffers on the GPU are written in place and returned as the same objects."""
    args = _to_cuda(_gpu_inputs(length=True, sink=True))
    s_q, h_q, _ = args["q"].shape
    out = torch.full((s_q, h_q, 512), SENTINEL, dtype=torch.bfloat16, device="cuda")
    max_logits = torch.full((s_q, h_q), SENTINEL, device="cuda")
    lse = torch.full((s_q, h_q), SENTINEL, device="cuda")
    got = sparse_mla_q8kv8_prefill_fwd(**args, out=out, max_logits=max_logits, lse=lse)
    assert got[0] is out and got[1] is max_logits and got[2] is lse
    fresh = sparse_mla_q8kv8_prefill_fwd(**args)
    for a, b in zip(got, fresh, strict=True):
        assert torch.equal(a, b)


GPU_CASES: list[tuple[str, str, str]] = [
    ("kv", "cpu", "kv must be a CUDA tensor"),
    ("indices", "cpu", "indices must be a CUDA tensor"),
    ("topk_length", "cpu", "topk_length must be a CUDA tensor"),
    ("attn_sink", "cpu", "attn_sink must be a CUDA tensor"),
    ("q_scale", "cpu", "q_scale must be a CUDA tensor"),
    ("kv_scale", "cpu", "kv_scale must be a CUDA tensor"),
    ("out", "cpu", "out must be on device cuda:0, got cpu"),
    ("lse", "cpu", "lse must be on device cuda:0, got cpu"),
]


@pytest.mark.gpu
@pytest.mark.parametrize(("name", "where", "text"), GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_gpu_only_messages(name: str, where: str, text: str) -> None:
    """With q on the GPU, a CPU tensor elsewhere gets the CUDA-only message of its check."""
    args = _to_cuda(_gpu_inputs(length=True, sink=True))
    s_q, h_q, _ = args["q"].shape
    if name == "out":
        args["out"] = torch.empty(s_q, h_q, 512, dtype=torch.bfloat16, device=where)
    elif name == "lse":
        args["lse"] = torch.empty(s_q, h_q, device=where)
    else:
        args[name] = args[name].to(where)
    with pytest.raises(ValueError, match=re.escape(text) + "$"):
        sparse_mla_q8kv8_prefill_fwd(**args, backend="sm90")


@pytest.mark.gpu
def test_gpu_reference_backend_skips_cuda_checks_but_not_device_checks() -> None:
    """backend='reference' runs on the GPU too, and still demands one device for all inputs."""
    args = _to_cuda(_gpu_inputs(length=False, sink=False))
    out, _, _ = sparse_mla_q8kv8_prefill_fwd(**args, backend="reference")
    assert out.is_cuda
    args["kv"] = args["kv"].cpu()
    with pytest.raises(ValueError, match=re.escape("kv must be on q's device cuda:0, got cpu")):
        sparse_mla_q8kv8_prefill_fwd(**args, backend="reference")


@pytest.mark.gpu
def test_gpu_sm90_refuses_other_architectures() -> None:
    """backend='sm90' runs only on compute capability 9.0; elsewhere it says so."""
    args = _to_cuda(_gpu_inputs(length=False, sink=False))
    if torch.cuda.get_device_capability() == (9, 0):
        assert sparse_mla_q8kv8_prefill_fwd(**args, backend="sm90")[0].is_cuda
    else:
        with pytest.raises(RuntimeError, match=re.escape("compute capability 9.0")):
            sparse_mla_q8kv8_prefill_fwd(**args, backend="sm90")
