"""The op tables walked as tables: every row is reachable from a script (torch.* or Tensor.*), and the
two formula vocabularies (backmath.NUMPY, backmath.TENSOR) offer the same names.

(The gradient check generated from each row that has a `forward` lives in test_gradcheck.py.)
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

from conftest import ROOT, run_script
from gradcli.engine import autograd, backmath, distributions, factories, ops
from gradcli.engine.recording import Op
from gradcli.engine.tensor import Tensor

PRELUDE = "import torch\nimport torch.nn.functional as F\n"

# Scripts for the rows that no golden script reaches (the test runs these and the golden scripts first,
# then the engine cases, tests/engine_cases, until every row is reached): mostly the formula steps a
# create_graph backward records, and tensor-argument variants.
EXTRA = [
    # mse_loss's gradient under create_graph (MseLossBackwardBackward0)
    "x = torch.rand(3, requires_grad=True)\n"
    "g, = torch.autograd.grad(F.mse_loss(x, torch.zeros(3)), x, create_graph=True)\ng.sum().backward()",
    # smooth_l1_loss's and huber_loss's gradients under create_graph (SmoothL1LossBackwardBackward0,
    # HuberLossBackwardBackward0)
    "x = torch.rand(3, requires_grad=True)\n"
    "g, = torch.autograd.grad(F.smooth_l1_loss(x, torch.zeros(3), beta=0.5) * x.sum(), x, create_graph=True)\n"
    "g.sum().backward()\n"
    "g, = torch.autograd.grad(F.huber_loss(x, torch.zeros(3), delta=0.5) * x.sum(), x, create_graph=True)\n"
    "g.sum().backward()",
    # binary_cross_entropy's gradient under create_graph (BinaryCrossEntropyBackwardBackward0)
    "x = torch.rand(3) * 0.8 + 0.1\nx.requires_grad_()\n"
    "g, = torch.autograd.grad(F.binary_cross_entropy(x, torch.rand(3)) * x.sum(), x, create_graph=True)\n"
    "g.sum().backward()",
    # soft_margin_loss's gradient under create_graph (SoftMarginLossBackwardBackward0)
    "x = torch.rand(3, requires_grad=True)\n"
    "g, = torch.autograd.grad(F.soft_margin_loss(x, torch.ones(3)) * x.sum(), x, create_graph=True)\n"
    "g.sum().backward()",
    # nll_loss's gradient under create_graph (NllLossBackwardBackward0, NllLoss2DBackwardBackward0)
    "x = torch.rand(2, 3, requires_grad=True)\n"
    "g, = torch.autograd.grad(F.cross_entropy(x, torch.tensor([0, 2])), x, create_graph=True)\n(g * g).sum().backward()\n"
    "y = torch.rand(2, 3, 1, 2, requires_grad=True)\n"
    "g, = torch.autograd.grad(F.nll_loss(y, torch.tensor([[[0, 2]], [[1, 1]]])), y, create_graph=True)\ng.sum().backward()",
    # div by a tensor with a rounding mode (DivBackward2); gather with a 0-d index
    "x = torch.tensor([5., -5.], requires_grad=True)\n"
    "torch.div(x, torch.tensor([2., 3.]), rounding_mode='trunc').sum().backward()\n"
    "torch.gather(torch.tensor([1, 2]), 0, torch.tensor(1))",
    # create_graph through tan (1 + result ** 2: AddBackward1), diagonal, log_softmax, x[0], x[0:2], x[[0, 0]]
    "x = torch.rand(3, 3, requires_grad=True)\n"
    "for y in [x.tan(), x.diagonal(), F.log_softmax(x, 1), x[0], x[0:2], x[[0, 0]]]:\n"
    "    g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)\n"
    "    g.sum().backward()",
    # the complex rows (gradcli.engine.ops.complexops)
    "z = torch.tensor([1+2j, 3j], requires_grad=True)\nx = torch.tensor([1., 2.], requires_grad=True)\n"
    "ys = [z.abs(), z.angle(), torch.complex(x, x).imag, z.conj().imag, z.conj_physical().real, (z / z).real,\n"
    "      torch.dot(z, z).real, z.exp().real, z.log().real, (z.reshape(1, 2) @ z.reshape(2, 1)).real, (z * z).real,\n"
    "      torch.polar(x, x).real, (z ** 3).real, (1 / z).real, z.sqrt().real, torch.vdot(z, z).real,\n"
    "      torch.view_as_complex(torch.stack([x, x], -1)).imag]\n"
    "sum(y.sum() for y in ys).backward()",
    # torch.fft's three rows (gradcli.engine.ops.fft)
    "x = torch.tensor([1., 2., 3., 4.], requires_grad=True)\n"
    "(torch.fft.irfft(torch.fft.rfft(x)) + torch.fft.fft(x.to(torch.cfloat)).real).sum().backward()",
    # an in-place op on a view, then the view used (AsStridedBackward0)
    "x = torch.rand(4, requires_grad=True)\ny = x * 1\nv = y.view(2, 2)\nv.mul_(2)\n(v * v).sum().backward()",
    # clamp_min / clamp_max with a tensor bound that requires grad
    "x = torch.rand(3, requires_grad=True)\nb = torch.rand(3, requires_grad=True)\n"
    "(x.clamp_min(b) + x.clamp_max(b)).sum().backward()",
    # fill_ with a 0-d tensor that requires grad; advanced-index reads and writes
    "x = torch.rand(3, requires_grad=True)\nv = torch.rand((), requires_grad=True)\n"
    "y = (x * 1).fill_(v)\nz = x * 1\nz[[0, 2]] = v * 2\n(y.sum() + z.sum() + x[[0, 1]].sum()).backward()",
    # the deprecated Tensor.resize (PyTorch's Python Function Resize: ResizeBackward)
    "x = torch.rand(6, requires_grad=True)\n(x.resize(2, 3) * 2).sum().backward()",
    # torch.native_dropout (NativeDropoutBackward0)
    "x = torch.rand(6, requires_grad=True)\ntorch.native_dropout(x, 0.5, True)[0].sum().backward()",
    # forward_ad.unpack_dual's primal of a tensor that requires grad (Identity)
    "import torch.autograd.forward_ad as fwAD\nx = torch.rand(3, requires_grad=True)\n"
    "with fwAD.dual_level():\n    p = fwAD.unpack_dual(fwAD.make_dual(x, torch.ones(3))).primal\n"
    "p.sum().backward()",
    # the rows added after FIRST was chosen: inverse hyperbolics and their in-place nodes, the addmm family,
    # celu/mish/glu/shrinks (and their second-order nodes), fmod, norm over a dim, prelu, sorting
    # (ScatterBackward0 under create_graph) and the in-place view ops
    "t = torch.rand(4, requires_grad=True)\n(F.threshold(t, 0.5, 2.0) + F.threshold(t * 1, 0.5, 2.0, inplace=True)).sum().backward()",
    "a = torch.rand(2, 3, requires_grad=True)\nb = torch.rand(2, 3, requires_grad=True) + 0.5\n"
    "m = torch.rand(3, 3, requires_grad=True)\nv = torch.rand(3, requires_grad=True)\n"
    "bb = torch.rand(2, 3, 3, requires_grad=True)\nw = torch.rand(1, requires_grad=True)\n"
    "inplace = [(a + 1.5).acosh_(), (a * 1).asinh_(), (a * 0.5).atanh_()]   # (their backward is refused)\n"
    "ys = [(a + 1.5).acosh(), a.asinh(), (a * 0.5).atanh(), torch.addbmm(m, bb, bb), torch.addmv(v, m, v),\n"
    "      torch.addr(m, v, v), torch.baddbmm(bb, bb, bb), F.celu(a), F.celu(a * 1, inplace=True),\n"
    "      torch.fmod(a, 0.3), torch.fmod(a, b), F.mish(a), F.pairwise_distance(a, b), a.sort(0)[0],\n"
    "      a.sort(stable=True)[0], a.topk(2)[0], (a * 1).squeeze_(), (a * 1).t_(), (a * 1).transpose_(0, 1),\n"
    "      (a * 1).unsqueeze_(0)]\n"
    "sum(y.sum() for y in ys).backward()\n"
    "for y in [F.glu(a, 0), F.hardshrink(a, 0.3), F.softshrink(a, 0.3), F.prelu(a, w), a.sort(1)[0], a.topk(2)[0]]:\n"
    "    g, = torch.autograd.grad((y * y).sum(), a, create_graph=True)\n"
    "    g.sum().backward()",
    # the margin losses of kernels of their own
    "x = torch.rand(3, 4, requires_grad=True)\n"
    "(F.soft_margin_loss(x, torch.ones(3, 4)) + F.multi_margin_loss(x, torch.tensor([0, 3, 1]))\n"
    " + F.multilabel_margin_loss(x, torch.tensor([[0, -1, 0, 0]] * 3))).backward()",
    # rrelu (in training, in place, and its gradient's node under create_graph); channel_shuffle
    "x = torch.rand(3, 4, requires_grad=True) - 0.5\n"
    "y = F.rrelu(x, training=True) + F.rrelu(x * 1, inplace=True) + F.channel_shuffle(x.view(1, 4, 3), 2).view(3, 4)\n"
    "g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)\ng.sum().backward()",
    # pdist, and its gradient's node under create_graph
    "x = torch.rand(4, 3, requires_grad=True)\ng, = torch.autograd.grad(F.pdist(x).sum(), x, create_graph=True)",
    # ctc_loss
    "x = torch.rand(4, 1, 3, requires_grad=True)\n"
    "F.ctc_loss(x.log_softmax(2), torch.tensor([[1, 2]]), (4,), (2,)).backward()",
    # grid_sample's gradients under create_graph (nodes gradcli cannot differentiate again)
    "x = torch.rand(1, 1, 2, 2, requires_grad=True)\ng = torch.rand(1, 1, 2, 2) - 0.5\n"
    "gx, = torch.autograd.grad(F.grid_sample(x, g, align_corners=False).sum(), x, create_graph=True)",
    "x = torch.rand(1, 1, 2, 2, 2, requires_grad=True)\ng = torch.rand(1, 1, 1, 2, 3) - 0.5\n"
    "gx, = torch.autograd.grad(F.grid_sample(x, g, align_corners=False).sum(), x, create_graph=True)",
    # affine_grid
    "t = torch.rand(1, 2, 3, requires_grad=True)\nF.affine_grid(t, (1, 1, 2, 3), align_corners=False).sum().backward()",
    # Tensor.unfold, and its gradient's node under create_graph
    "x = torch.arange(10., requires_grad=True)\nu = x.unfold(0, 3, 2)\n"
    "g, = torch.autograd.grad((u * u).sum(), x, create_graph=True)\n(g * g).sum().backward()",
    # F.unfold and F.fold (each the other's gradient under create_graph)
    "x = torch.rand(1, 2, 4, 4, requires_grad=True)\nu = F.unfold(x, 2)\nf = F.fold(u, 4, 2)\n"
    "g, = torch.autograd.grad((f * f).sum(), x, create_graph=True)\n(g * g).sum().backward()",
    # linalg.cross (and under create_graph, its gradient's LinalgCrossBackward0)
    "a = torch.rand(2, 3, requires_grad=True)\nb = torch.rand(2, 3, requires_grad=True)\n"
    "g, = torch.autograd.grad((torch.linalg.cross(a, b) ** 2).sum(), a, create_graph=True)\ng.sum().backward()",
    # select_scatter, slice_scatter, diagonal_scatter (and their gradients' nodes under create_graph)
    "x = torch.rand(3, 3, requires_grad=True)\ns = torch.rand(3, requires_grad=True)\n"
    "ys = [torch.select_scatter(x, s, 0, 1), torch.slice_scatter(x, s.view(1, 3), 0, 2), torch.diagonal_scatter(x, s)]\n"
    "for y in ys:\n    g, = torch.autograd.grad((y * y).sum(), [x, s], create_graph=True)[:1]\n    g.sum().backward()",
    # the indexed writers and readers of ops.indexed (and their gradients' nodes under create_graph)
    "x = torch.rand(2, 3, requires_grad=True)\ns = torch.rand(2, 2, requires_grad=True)\nv = torch.rand((), requires_grad=True)\n"
    "i = torch.tensor([[0, 1], [1, 1]])\nm = torch.tensor([True, False, True])\n"
    "ys = [x.index_fill(1, torch.tensor([0]), 2.), x.index_fill(1, torch.tensor([2]), v), x.index_copy(1, torch.tensor([2, 0]), s),\n"
    "      x.index_put((torch.tensor([1]),), v), x.take(torch.tensor([0, 5])), x.put(torch.tensor([1, 4]), s[0], True),\n"
    "      x.masked_scatter(m, s.view(-1)), x.scatter_reduce(1, i, s, 'amax'), x.index_reduce(1, torch.tensor([0, 0]), s, 'prod')]\n"
    "for y in ys:\n    g = torch.autograd.grad((y * y).sum(), [x, s, v], create_graph=True, allow_unused=True)\n"
    "    sum(t.sum() for t in g if t is not None).backward()",
    # this session's small functions: the in-place comparisons, torch.fill, rsub, fmax/fmin, ldexp, frexp,
    # nextafter, special.entr, dist, narrow_copy, unsafe_split_with_sizes, renorm
    "x = torch.rand(3, requires_grad=True)\ny = torch.rand(3, requires_grad=True)\n"
    "ys = [(x * 1).eq_(0.5), (x * 1).ne_(y), (x * 1).lt_(0.5), (x * 1).le_(y), (x * 1).gt_(0.5), (x * 1).ge_(y),\n"
    "      (x * 1).eq_(y), (x * 1).ne_(0.5), (x * 1).lt_(y), (x * 1).le_(0.5), (x * 1).gt_(y), (x * 1).ge_(0.5),\n"
    "      torch.fill(x, 2.0), torch.fill(x, y[0]), torch.rsub(x, y), torch.fmax(x, y), torch.fmin(x, y),\n"
    "      torch.ldexp(x, y), torch.frexp(x).mantissa, torch.nextafter(x, y), torch.special.entr(x),\n"
    "      x.narrow_copy(0, 1, 2), x.unsafe_split_with_sizes([1, 2])[1], x.view(1, 3).renorm(2, 0, 0.5)]\n"
    "(sum(t.sum() for t in ys) + torch.dist(x, y)).backward()",
    # deg2rad and rad2deg
    "x = torch.rand(3, requires_grad=True)\n(torch.deg2rad(x) + x.rad2deg()).sum().backward()",
    # masked_select (and its gradient's node under create_graph)
    "x = torch.rand(2, 3, requires_grad=True)\ny = x.masked_select(torch.tensor([True, False, True]))\n"
    "g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)\n(g * g).sum().backward()",
    # the order statistics (and, under create_graph, their gradients' nodes)
    "x = torch.tensor([[3., 1., 2.], [0., -1., 5.]], requires_grad=True)\n"
    "ys = [x.median(), x.nanmedian(), x.median(1)[0], x.nanmedian(0)[0], x.kthvalue(2)[0], x.mode(0)[0],\n"
    "      torch.aminmax(x, dim=1).min, torch.aminmax(x).max, x.cummax(1)[0], x.cummin(0)[0], x.logcumsumexp(1),\n"
    "      torch.quantile(x, 0.3), torch.nanquantile(x, torch.tensor([0.2, 0.7]), dim=1, interpolation='midpoint')]\n"
    "sum(y.sum() for y in ys).backward()\n"
    "for y in [x.median(), x.cummax(1)[0], x.logcumsumexp(0)]:\n"
    "    g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)\n"
    "    g.sum().backward()",
    # the rows added with the special functions, distances, statistics, unique, scatter and pixel shuffles
    "x = torch.tensor([0.5, 2.0, 0.0], requires_grad=True)\ny = torch.tensor([1.5, 0.25, 3.0], requires_grad=True)\n"
    "ys = [torch.xlogy(x, y), torch.xlogy(x, 2.5), torch.xlogy(3, y), torch.special.xlog1py(x, y),\n"
    "      torch.special.xlog1py(x, 1.5), torch.special.xlog1py(2, y), x.copysign(y), x.copysign(-0.0),\n"
    "      torch.erfc(x), torch.hypot(x, y), torch.logaddexp(x, y), torch.logaddexp2(x, y), torch.logit(y * 0.2),\n"
    "      torch.nan_to_num(x), torch.sinc(x), torch.nansum(x), torch.std_mean(y)[0], torch.var_mean(y)[1],\n"
    "      torch.block_diag(x.view(1, 3), y.view(3, 1)), torch.rot90(x.view(1, 3)),\n"
    "      x.index_add(0, torch.tensor([1, 1]), y[:2]), x.scatter(0, torch.tensor([2]), 5.),\n"
    "      x.scatter_add(0, torch.tensor([0]), y[:1]), torch.cdist(x.view(3, 1), y.view(3, 1)),\n"
    "      torch.cdist(x.view(1, 3).expand(30, 3), y.view(1, 3), compute_mode='use_mm_for_euclid_dist'),\n"
    "      F.pixel_shuffle(torch.cat([x, y, x, y]).view(1, 12, 1, 1), 2),\n"
    "      F.pixel_unshuffle(torch.cat([x, y, x, y]).view(1, 3, 2, 2), 2)]\n"
    "sum(z.sum() for z in ys).backward()\n"
    "unique = [torch.unique(y), torch.unique(y.view(1, 3), dim=1), torch.unique_consecutive(y)]   # (no backward)\n"
    "g, = torch.autograd.grad(torch.cdist(x.detach().view(3, 1), y.view(3, 1), p=3).sum(), y, create_graph=True)\n"
    "g.sum()                # (CdistBackwardBackward0: its own backward is refused, as in PyTorch)",
    # the special functions (and the nodes of their second derivatives), the gamma-family samplers' gradients,
    # packed sequences, embedding bags
    "x = torch.tensor([0.5, 1.5, 3.0], dtype=torch.float64, requires_grad=True)\n"
    "ys = [x.lgamma(), x.digamma(), x.polygamma(1), torch.mvlgamma(x + 1, 2), (x * 0.3).erfinv(), x.i0(),\n"
    "      torch.special.i0e(x), torch.special.i1(x), torch.special.i1e(x), (x * 1).polygamma_(1)]\n"
    "g, = torch.autograd.grad(sum(y.sum() for y in ys), x, create_graph=True)\n"
    "g.sum().backward()\n"
    "c = torch.tensor([1.5, 2.0], requires_grad=True)\n"
    "(torch.distributions.Gamma(c, 1.0).rsample().sum() + torch.distributions.Dirichlet(c).rsample()[0]).backward()\n"
    "torch.binomial(c * 2, torch.tensor([0.3, 0.6]))\n"
    "g, = torch.autograd.grad(torch.distributions.Gamma(c, 1.0).rsample().sum(), c, create_graph=True)\n"
    "g.sum()                # (StandardGammaGradBackward0)\n"
    "seqs = torch.nn.utils.rnn.pack_padded_sequence(torch.ones(3, 2, 1, requires_grad=True), [3, 2])\n"
    "seqs.data.sum().backward()\n"
    "torch.nn.functional.embedding_bag(torch.tensor([1, 0]), torch.ones(3, 2, requires_grad=True),\n"
    "                                  torch.tensor([0, 1])).sum().backward()",
    # attention: the flash kernel (4-d inputs) and the math path's safe softmax (a 2-d mask on 3-d inputs)
    "q = torch.rand(1, 2, 3, 4, requires_grad=True)\n"
    "F.scaled_dot_product_attention(q, q, q).sum().backward()\n"
    "r = torch.rand(2, 3, 4, requires_grad=True)\n"
    "F.scaled_dot_product_attention(r, r, r, attn_mask=torch.ones(3, 3, dtype=torch.bool)).sum().backward()",
    # the 3-d poolings (and their second-order nodes), max unpooling
    "v = torch.rand(1, 1, 4, 4, 4, requires_grad=True)\n"
    "p, i = F.max_pool3d(v, 2, return_indices=True)\n"
    "ys = [p, F.avg_pool3d(v, 2), F.adaptive_avg_pool3d(v, 2), F.adaptive_max_pool3d(v, 2), F.max_unpool3d(p, i, 2)]\n"
    "g, = torch.autograd.grad(sum((y * y).sum() for y in ys), v, create_graph=True)\n"
    "g.sum().backward()\n"
    "w = torch.rand(1, 1, 4, 4, requires_grad=True)\n"
    "p2, i2 = F.max_pool2d(w, 2, return_indices=True)\n"
    "F.max_unpool2d(p2, i2, 2).sum().backward()",
    # the Cholesky factor (both spellings), the triangular solve, the inverse from a factor
    "A = torch.tensor([[4., 2.], [2., 3.]], requires_grad=True)\n"
    "L = torch.linalg.cholesky(A)\n"
    "(L.sum() + A.cholesky().sum() + torch.linalg.solve_triangular(L, A, upper=False).sum()\n"
    " + torch.cholesky_inverse(L).sum()).backward()",
    # the log-determinant's two outputs, the matrix exponential
    "A = torch.tensor([[4., 2.], [2., 3.]], requires_grad=True)\n"
    "sign, logabsdet = torch.linalg.slogdet(A)\n"
    "(logabsdet + torch.logdet(A) + torch.linalg.matrix_exp(A).sum()).backward()\n"
    "U, S, Vh = torch.linalg.svd(A)\n"
    "((U @ Vh).sum() + S.sum() + torch.linalg.eigh(A).eigenvalues.sum() + torch.linalg.qr(A).R.sum()\n"
    " + torch.linalg.pinv(A).sum()).backward()",
    # the LU factors (packed, unpacked, as P L U), the solve with them, the solve with a Cholesky factor
    "A = torch.tensor([[4., 2.], [2., 3.]], requires_grad=True)\n"
    "LU, pivots = torch.linalg.lu_factor(A)\n"
    "P, L, U = torch.linalg.lu(A)\n"
    "(LU.sum() + L.sum() + U.sum() + torch.lu_unpack(LU, pivots).U.sum() + torch.linalg.lu_solve(LU, pivots, A).sum()\n"
    " + torch.cholesky_solve(A, torch.linalg.cholesky(A)).sum()).backward()",
    # least squares (solution and residuals), the deprecated triangular solve (solution and copy of A)
    "A = torch.tensor([[4., 2.], [2., 3.], [1., 1.]], requires_grad=True)\n"
    "r = torch.linalg.lstsq(A, A[:, :1].detach(), driver='gelsd')\n"
    "t = torch.triangular_solve(A[:2].detach(), A[:2])\n"
    "(r.solution.sum() + r.residuals.sum() + t.solution.sum() + t.cloned_coefficient.sum()).backward()",
    # Householder reflectors: geqrf (a node without a derivative) and their product
    "h, tau = torch.geqrf(torch.tensor([[4., 2.], [2., 3.], [1., 1.]], requires_grad=True))\n"
    "torch.linalg.householder_product(h.detach().requires_grad_(), tau.detach()).sum().backward()\n"
    "torch.ormqr(h.detach().requires_grad_(), tau.detach(), torch.ones(3, 1)).sum().backward()",
    # weight normalisation: the fused kernel's node, and norm_except_dim over the whole tensor (NormBackward0)
    "import torch.nn.utils.parametrizations as PZ\n"
    "m = PZ.weight_norm(torch.nn.Linear(3, 2))\n"
    "(m.weight.sum() + torch.norm_except_dim(m.weight, 2, -1)).backward()",
    # the normal distribution's special functions (no golden reaches them)
    "x = torch.rand(3, requires_grad=True)\n"
    "(torch.special.ndtri(x * 0.9 + 0.05) + torch.special.log_ndtr(x) + torch.special.erfcx(x)).sum().backward()",
    # zeta's three forms (the order's gradient is not implemented: only its node is reached)
    "q = torch.rand(3, requires_grad=True)\ns = torch.rand(3, requires_grad=True)\n"
    "(torch.special.zeta(torch.tensor([2., 3., 4.]), q + 1) + torch.special.zeta(2.5, q + 1)).sum().backward()\n"
    "torch.special.zeta(s + 2, 1.5)",
    # the angle of real numbers (AngleBackward0 of a real input: a zero gradient)
    "torch.angle(torch.tensor([-2., 0., 3.], requires_grad=True)).sum().backward()",
    # the incomplete gamma functions (their gradient for x)
    "x = torch.rand(3, requires_grad=True)\n"
    "(torch.igamma(torch.tensor([0.5, 2., 3.]), x) + torch.special.gammaincc(torch.tensor([1.5]), x)).sum().backward()",
    # fractional max pooling, 2-d and 3-d, and their backward kernels under create_graph
    "x = torch.rand(1, 2, 5, 6, 4, requires_grad=True)\n"
    "for y in [F.fractional_max_pool2d(x[0], 2, (3, 3)), F.fractional_max_pool3d(x, 2, (2, 3, 2))]:\n"
    "    g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)\n"
    "    g.sum().backward()",
]


# Golden scripts (tests/conformance) that reach, with EXTRA, every row at little cost (a greedy cover, by rows
# per second of CPU): they run first. Only an order: a row they miss is looked for in the whole corpus.
FIRST = [
    "fwad_elementwise", "fwad_nn", "fwad_reduce", "fwad_shape", "grad2_norm", "grad_01_grad_fn_names",
    "nn_06_layers_losses", "nn_07_bilinear", "nn_conv_functional", "nn_embedding_double_backward",
    "nn_hardswish_hardsigmoid", "nn_losses_more", "nn_pad_modes", "nn_pool", "nn_rnn_subclass",
    "numerics_fused", "numerics_matmul", "numerics_sum", "op_create_04_inplace_fills", "op_elem_01_unary_math",
    "op_elem_02_trig_hyperbolic", "op_elem_03_clamp_maximum_where", "op_elem_04_rounding_lerp",
    "op_elem_05_floordiv_remainder", "op_elem_09_create_graph", "op_reduce_01_max_min_return_types",
    "op_reduce_06_create_graph", "op_shape_03_squeeze_expand_repeat", "rng_distributions",
    "view_01_inplace_on_views", "nn_upsample",
]


def _rows() -> set:
    modules = ops.GROUPS + (factories, distributions)
    return {v for module in modules for v in vars(module).values() if v.__class__ is Op}


def _scripts():
    for script in EXTRA:
        yield PRELUDE + script + "\n"
    for name in FIRST:
        path = ROOT / "tests" / "conformance" / f"{name}.grad"
        if path.exists():
            yield path.read_text(encoding="utf-8")
    spec = importlib.util.spec_from_file_location("saved_attrs", ROOT / "tools" / "saved_attrs.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)       # the corpus, as tools/saved_attrs.py walks it in PyTorch
    yield from tool.corpus_scripts(files_first=True)


def test_every_row_is_reachable_from_a_script():
    """Run the engine cases, the golden scripts and EXTRA, collecting the row of every op result the
    forward observer sees (and of every node an op takes as input: nodes made without `apply`, like
    CopySlices, are seen there). A row none of them reaches is dead, or needs a case that reaches it.

    EXTRA and FIRST must reach every row themselves: a row only the whole corpus reaches makes this test walk
    thousands of engine cases (about 50 s of the suite's CPU each time new rows came without an EXTRA line)."""
    from gradcli.engine.observe import Observer
    from gradcli.engine.state import STATE
    seen = set()

    class Rows(Observer):
        def op(self, op, result, inputs):
            seen.add(op)
            for x in inputs:
                if x.__class__ is Tensor and x.grad_fn is not None:
                    seen.add(x.grad_fn.op)

    rows = _rows()
    quick = len(EXTRA) + sum((ROOT / "tests" / "conformance" / f"{name}.grad").exists() for name in FIRST)
    missed_by_quick = None
    previous, STATE.observer = STATE.observer, Rows()
    try:
        for n, script in enumerate(_scripts(), 1):
            run_script(script, "<rows>", seed=0)
            if rows <= seen:
                break                   # every row reached: the rest of the corpus can show nothing more
            if n == quick:
                missed_by_quick = sorted(r.node for r in rows - seen)
    finally:
        STATE.observer = previous
    assert len(rows) > 150
    assert sorted(r.node for r in rows - seen) == []
    assert not missed_by_quick, f"add an EXTRA script that reaches {missed_by_quick}"


def test_extra_scripts_run_clean():
    for script in EXTRA:
        result = run_script(PRELUDE + script + "\n", "<rows>", seed=0)
        assert result.error is None, (script, result.error)


def test_the_formula_vocabularies_offer_the_same_names():
    def names(cls):         # (with the formulas taken from op groups on first use)
        return {name for name in dir(cls) if not name.startswith("_")} | set(cls._LATER)
    numpy_only = names(backmath.NumpyMath) - names(backmath.TensorMath)
    tensor_only = names(backmath.TensorMath) - names(backmath.NumpyMath)
    assert (sorted(numpy_only), sorted(tensor_only)) == ([], [])


def test_formulas_take_what_the_row_saves():
    """Each formula takes (F, g, *saved): as many values as the row's `saves` names (cat and stack's
    formulas also take the input's position); and no name is saved twice."""
    for row in _rows():
        assert len(set(row.saves)) == len(row.saves), row
        formulas = row.backward if row.backward.__class__ is tuple else (row.backward.formula,)
        extra = 0 if row.backward.__class__ is tuple else 1
        for formula in formulas:
            params = inspect.signature(formula).parameters.values()
            assert not any(p.kind is p.VAR_POSITIONAL for p in params), row
            assert len(params) == 2 + extra + len(row.saves), (row, formula)
