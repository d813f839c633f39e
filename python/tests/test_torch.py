# SPDX-License-Identifier: Apache-2.0
"""strata.torch: the custom operators against PyTorch's own layer / RMS norm (float64 autograd as
the reference), torch.library.opcheck, torch.compile without graph breaks, gradcheck, and a small
training loop that must reach PyTorch's loss. Skipped where PyTorch is not installed."""
import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import strata  # noqa: E402

DEVICE = "cuda" if strata.backend == "cuda" else "cpu"
if DEVICE == "cuda" and not torch.cuda.is_available():
    pytest.skip("the CUDA build of strata needs a GPU", allow_module_level=True)
import strata.torch as st  # noqa: E402

SEED = int(os.environ.get("STRATA_TEST_SEED", "0")) or torch.seed() % (1 << 31)
TOL = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 1e-2}


def ref_grads(kind, x, w, b, dy, eps):
    x64 = x.detach().double().requires_grad_()
    w64 = w.detach().double().requires_grad_() if w is not None else None
    b64 = b.detach().double().requires_grad_() if b is not None else None
    f = x.shape[-1]
    y = F.layer_norm(x64, (f,), w64, b64, eps) if kind == "layer" else F.rms_norm(x64, (f,), w64, eps)
    ins = [t for t in (x64, w64, b64) if t is not None]
    return y, torch.autograd.grad(y, ins, dy.double())


def rel(a, b):
    # a zero reference (layer norm of one feature: dx is 0) is compared absolutely
    scale = b.norm().item()
    return ((a.double() - b).norm() / (scale if scale > 0 else 1.0)).item()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("kind", ["layer", "rms"])
@pytest.mark.parametrize("shape", [(7, 1), (33, 100), (4, 8, 64), (2, 3, 5, 128), (64, 768), (9, 4096), (3, 20000)])
def test_forward_and_backward_match_float64_autograd(dtype, kind, shape):
    g = torch.Generator(device="cpu").manual_seed(SEED)
    f = shape[-1]
    x = (torch.randn(shape, generator=g) * 2 + 0.5).to(DEVICE, dtype).requires_grad_()
    w = (1 + 0.2 * torch.randn(f, generator=g)).to(DEVICE, dtype).requires_grad_()
    b = torch.randn(f, generator=g).to(DEVICE, dtype).requires_grad_() if kind == "layer" else None
    dy = torch.randn(shape, generator=g).to(DEVICE, dtype)
    y = st.layer_norm(x, w, b, 1e-5) if kind == "layer" else st.rms_norm(x, w, 1e-5)
    ins = [t for t in (x, w, b) if t is not None]
    grads = torch.autograd.grad(y, ins, dy)
    y_ref, grads_ref = ref_grads(kind, x, w, b, dy, 1e-5)
    assert y.shape == x.shape and y.dtype == dtype
    assert rel(y, y_ref) < TOL[dtype]
    for i, (got, want) in enumerate(zip(grads, grads_ref)):
        assert got.shape == want.shape and got.dtype == dtype
        if i == 0 and f <= 2:
            # rows of 1-2 elements: dx is a difference of terms that cancel (RMS norm of one
            # element: rstd * g * (1 - x^2 / (x^2 + eps))); its error scales with the terms
            x64 = x.detach().double()
            mean = x64.mean(-1, keepdim=True) if kind == "layer" else 0
            rstd = ((x64 - mean).pow(2).mean(-1, keepdim=True) + 1e-5).rsqrt()
            terms = (3 * rstd * (dy.double() * w.detach().double()).abs()).max().item()
            assert (got.double() - want).abs().max().item() <= TOL[dtype] * terms
        else:
            assert rel(got, want) < TOL[dtype]


@pytest.mark.parametrize("kind", ["layer", "rms"])
def test_opcheck(kind):
    x = torch.randn(6, 40, device=DEVICE)
    w = torch.rand(40, device=DEVICE) + 0.5
    dy = torch.randn(6, 40, device=DEVICE)
    if kind == "layer":
        b = torch.randn(40, device=DEVICE)
        torch.library.opcheck(torch.ops.strata.layer_norm.default, (x, w.requires_grad_(), b.requires_grad_(), 1e-5))
        torch.library.opcheck(torch.ops.strata.layer_norm_backward.default, (dy, x, w.detach(), 1e-5))
    else:
        torch.library.opcheck(torch.ops.strata.rms_norm.default, (x, w.requires_grad_(), 1e-6))
        torch.library.opcheck(torch.ops.strata.rms_norm_backward.default, (dy, x, w.detach(), 1e-6))


def test_compiled_graph_has_no_break_and_matches_eager():
    torch._dynamo.reset()
    w = torch.rand(256, device=DEVICE, requires_grad=True)
    b = torch.randn(256, device=DEVICE, requires_grad=True)

    def f(x):
        return (st.layer_norm(x * 2, w, b) * 3).sum() + st.rms_norm(x, w).sum()

    compiled = torch.compile(f, fullgraph=True, dynamic=False)
    x = torch.randn(32, 256, device=DEVICE, requires_grad=True)
    eager = f(x)
    (gx_e,) = torch.autograd.grad(eager, [x])
    out = compiled(x)
    (gx_c,) = torch.autograd.grad(out, [x])
    assert torch.allclose(out, eager, rtol=1e-5, atol=1e-4)
    assert torch.allclose(gx_c, gx_e, rtol=1e-5, atol=1e-5)


def test_gradcheck_float32():
    # strata computes in float32 (no float64 kernels): gradcheck in float32 with steps and
    # tolerances to match (float64 autograd is the tighter reference in the test above).
    x = torch.randn(3, 16, device=DEVICE, requires_grad=True)
    w = (torch.rand(16, device=DEVICE) + 0.5).requires_grad_()
    b = torch.randn(16, device=DEVICE, requires_grad=True)
    assert torch.autograd.gradcheck(lambda *a: st.layer_norm(*a, eps=1e-2), (x, w, b), eps=1e-2, atol=2e-2, rtol=2e-2)
    assert torch.autograd.gradcheck(lambda *a: st.rms_norm(*a, eps=1e-2), (x, w), eps=1e-2, atol=2e-2, rtol=2e-2)


def test_weight_gradients_keep_their_bits():
    x = torch.randn(5000, 512, device=DEVICE)
    dy = torch.randn(5000, 512, device=DEVICE)
    w = torch.rand(512, device=DEVICE)
    first = torch.ops.strata.layer_norm_backward(dy, x, w, 1e-5)
    second = torch.ops.strata.layer_norm_backward(dy, x, w, 1e-5)
    assert torch.equal(first[1], second[1]) and torch.equal(first[2], second[2])


def test_empty_tensors_normalize_to_empty_tensors():
    for shape in [(2, 3, 0), (0, 8), (0, 4, 8)]:
        x = torch.randn(shape, device=DEVICE, requires_grad=True)
        y = st.layer_norm(x)
        assert y.shape == x.shape
        (g,) = torch.autograd.grad(y.sum(), [x], allow_unused=True)
        assert g is None or g.shape == x.shape


def test_refusals_name_the_problem():
    x = torch.randn(4, 8, device=DEVICE)
    with pytest.raises(ValueError, match="weight"):
        st.layer_norm(x, torch.ones(7, device=DEVICE))
    with pytest.raises(ValueError, match="contiguous"):
        st.layer_norm(torch.randn(4, 6, 8, device=DEVICE).transpose(1, 2))  # rows not contiguous
    with pytest.raises(TypeError, match="float32, float16 or bfloat16"):
        st.layer_norm(torch.randn(4, 8, device=DEVICE, dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("kind", ["layer", "rms"])
@pytest.mark.parametrize("shape", [(7, 1), (33, 100), (4, 8, 64), (64, 768), (9, 4096), (3, 20000)])
def test_add_norm_forward_and_backward_match_float64_autograd(dtype, kind, shape):
    g = torch.Generator(device="cpu").manual_seed(SEED)
    f = shape[-1]
    x = (torch.randn(shape, generator=g) * 2 + 0.5).to(DEVICE, dtype).requires_grad_()
    r = torch.randn(shape, generator=g).to(DEVICE, dtype).requires_grad_()
    w = (1 + 0.2 * torch.randn(f, generator=g)).to(DEVICE, dtype).requires_grad_()
    b = torch.randn(f, generator=g).to(DEVICE, dtype).requires_grad_() if kind == "layer" else None
    dy, dh = torch.randn(shape, generator=g).to(DEVICE, dtype), torch.randn(shape, generator=g).to(DEVICE, dtype)
    y, h = st.add_layer_norm(x, r, w, b, 1e-5) if kind == "layer" else st.add_rms_norm(x, r, w, 1e-5)
    assert torch.equal(h, x + r)  # the sum rounded as x + r rounds it
    ins = [t for t in (x, r, w, b) if t is not None]
    grads = torch.autograd.grad([y, h], ins, [dy, dh])
    x64, r64 = x.detach().double().requires_grad_(), r.detach().double().requires_grad_()
    w64 = w.detach().double().requires_grad_()
    b64 = b.detach().double().requires_grad_() if b is not None else None
    h64 = x64 + r64
    y64 = F.layer_norm(h64, (f,), w64, b64, 1e-5) if kind == "layer" else F.rms_norm(h64, (f,), w64, 1e-5)
    refs = torch.autograd.grad([y64, h64], [t for t in (x64, r64, w64, b64) if t is not None], [dy.double(), dh.double()])
    assert rel(y, y64) < TOL[dtype]
    for got, want in zip(grads, refs):
        assert got.shape == want.shape and got.dtype == dtype
        if f > 2:
            assert rel(got, want) < TOL[dtype]


def test_add_norm_in_place_updates_the_residual():
    x = torch.randn(40, 1000, device=DEVICE, dtype=torch.bfloat16)
    r = torch.randn(40, 1000, device=DEVICE, dtype=torch.bfloat16)
    w = torch.rand(1000, device=DEVICE, dtype=torch.bfloat16) + 0.5
    want_h = x + r
    want_y = F.rms_norm(want_h.float(), (1000,), w.float(), 1e-6)
    y = st.add_rms_norm_(x, r, w)
    assert torch.equal(r, want_h)
    assert rel(y, want_y.double()) < TOL[torch.bfloat16]
    compiled = torch.compile(lambda a, c: st.add_rms_norm_(a, c, w), fullgraph=True)
    r2 = want_h.clone()
    y2 = compiled(x, r2)
    assert torch.equal(r2, want_h + x) and y2.shape == x.shape


@pytest.mark.parametrize("kind", ["layer", "rms"])
def test_add_norm_opcheck(kind):
    x = torch.randn(6, 40, device=DEVICE)
    r = torch.randn(6, 40, device=DEVICE)
    w = torch.rand(40, device=DEVICE) + 0.5
    if kind == "layer":
        b = torch.randn(40, device=DEVICE)
        torch.library.opcheck(torch.ops.strata.add_layer_norm.default, (x.requires_grad_(), r, w.requires_grad_(), b.requires_grad_(), 1e-5))
        torch.library.opcheck(torch.ops.strata.add_layer_norm_.default, (x.detach(), r.clone(), w.detach(), b.detach(), 1e-5))
    else:
        torch.library.opcheck(torch.ops.strata.add_rms_norm.default, (x.requires_grad_(), r.requires_grad_(), w.requires_grad_(), 1e-6))
        torch.library.opcheck(torch.ops.strata.add_rms_norm_.default, (x.detach(), r.detach().clone(), w.detach(), 1e-6))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("dim", [64, 128, 100])
def test_per_head_rows_of_a_fused_qkv_projection(dtype, dim):
    # q = qkv[..., :heads * dim] viewed as heads: the tokens do not flatten with the heads, the
    # last two dimensions keep their strides (strata's heads_view, no copy)
    g = torch.Generator(device="cpu").manual_seed(SEED + dim)
    tokens, heads = 50, 6
    qkv = torch.randn(2, tokens, 3 * heads * dim, generator=g).to(DEVICE, dtype).requires_grad_()
    w = (1 + 0.2 * torch.randn(dim, generator=g)).to(DEVICE, dtype).requires_grad_()
    q = qkv[..., :heads * dim].view(2, tokens, heads, dim)
    k = qkv[1, :, heads * dim:2 * heads * dim].view(tokens, heads, dim).transpose(0, 1)  # [heads, tokens, dim]
    dq, dk = torch.randn(q.shape, generator=g).to(DEVICE, dtype), torch.randn(k.shape, generator=g).to(DEVICE, dtype)
    yq, yk = st.rms_norm(q, w), st.rms_norm(k, w)
    grads = torch.autograd.grad([yq, yk], [qkv, w], [dq, dk])
    qkv64, w64 = qkv.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    q64 = qkv64[..., :heads * dim].view(2, tokens, heads, dim)
    k64 = qkv64[1, :, heads * dim:2 * heads * dim].view(tokens, heads, dim).transpose(0, 1)
    yq64, yk64 = F.rms_norm(q64, (dim,), w64, 1e-6), F.rms_norm(k64, (dim,), w64, 1e-6)
    refs = torch.autograd.grad([yq64, yk64], [qkv64, w64], [dq.double(), dk.double()])
    assert rel(yq, yq64) < TOL[dtype] and rel(yk, yk64) < TOL[dtype]
    for got, want in zip(grads, refs):
        assert rel(got, want) < TOL[dtype]


def test_two_layer_mlp_trains_as_with_torch_layernorm():
    def train(norm):
        torch.manual_seed(SEED % 1000)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), norm(64), torch.nn.GELU(), torch.nn.Linear(64, 64), norm(64),
                                    torch.nn.GELU(), torch.nn.Linear(64, 1)).to(DEVICE)
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        g = torch.Generator(device="cpu").manual_seed(SEED % 1000)
        data = torch.randn(512, 32, generator=g).to(DEVICE)
        target = (data[:, :4].sum(1, keepdim=True).sin() + 0.1 * data[:, 4:5]).to(DEVICE)
        step = torch.compile(lambda: torch.nn.functional.mse_loss(model(data), target), dynamic=False)
        loss = None
        for _ in range(200):
            opt.zero_grad()
            loss = step()
            loss.backward()
            opt.step()
        return loss.item()

    torch._dynamo.reset()
    ours, theirs = train(st.LayerNorm), train(torch.nn.LayerNorm)
    assert abs(ours - theirs) < 1e-3, (ours, theirs)
