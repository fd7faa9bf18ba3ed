"""Attention and the Transformer layers: MultiheadAttention (with its NonDynamicallyQuantizableLinear out
projection), TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder and
Transformer, as torch.nn.modules.activation and torch.nn.modules.transformer define them: parameters in
PyTorch's order and initialisation (so seeded scripts draw PyTorch's numbers), reprs, warnings and checks.
The forward passes are PyTorch's slow paths (gradcli.engine.ops.attention); PyTorch's inference fast path
(eval mode without grad) is a fused kernel gradcli does not run: docs/nn.md says what differs."""

from __future__ import annotations

import numpy as np

from gradcli.engine import factories, init, parameter
from gradcli.engine.ops import attention, shape
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.language.nn.containers import ModuleList
from gradcli.language.nn.layers import Dropout, Linear
from gradcli.language.nn.module import Module
from gradcli.language.nn.normalization import LayerNorm


class NonDynamicallyQuantizableLinear(Linear):
    """The out projection of MultiheadAttention: a Linear under another name."""

    __module__ = "torch.nn.modules.linear"


class MultiheadAttention(Module):
    """nn.MultiheadAttention: packed (or, with kdim/vdim, separate) in-projections, heads attending in
    parallel, an out projection."""

    __module__ = "torch.nn.modules.activation"

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = parameter.make(factories.empty((embed_dim, embed_dim), dtype=dtype, device=device))
            self.k_proj_weight = parameter.make(factories.empty((embed_dim, self.kdim), dtype=dtype, device=device))
            self.v_proj_weight = parameter.make(factories.empty((embed_dim, self.vdim), dtype=dtype, device=device))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = parameter.make(factories.empty((3 * embed_dim, embed_dim), dtype=dtype, device=device))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = parameter.make(factories.empty(3 * embed_dim, dtype=dtype, device=device))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = parameter.make(factories.empty((1, 1, embed_dim), dtype=dtype, device=device))
            self.bias_v = parameter.make(factories.empty((1, 1, embed_dim), dtype=dtype, device=device))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        dt = query._a.dtype
        key_padding_mask = attention.canonical_mask(key_padding_mask, "key_padding_mask",
                                                    attn_mask._a.dtype if attn_mask is not None else None,
                                                    "attn_mask", dt)
        attn_mask = attention.canonical_mask(attn_mask, "attn_mask", None, "", dt, check_other=False)
        if self.batch_first and is_batched:
            # transposed so that `is` between them stays as it was
            if key is value:
                if query is key:
                    query = key = value = shape.transpose(query, 1, 0)
                else:
                    query, key = (shape.transpose(x, 1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (shape.transpose(x, 1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = attention.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            return shape.transpose(out, 1, 0), weights
        return out, weights


# ---------------------------------------------------------------------------------------------- Transformer


# torch.nn.functional as scripts see it (F.relu is what `activation='relu'` gives): a function that makes it on
# first use, put here by gradcli.language.stdlib when it makes torch.nn (this module cannot import stdlib)
functional = None

def generate_square_subsequent_mask(sz, device=None, dtype=None) -> Tensor:
    """Transformer.generate_square_subsequent_mask: -inf above the diagonal, zeros on and below it."""
    full = factories.full((sz, sz), float("-inf"), dtype=dtype, device=device)
    return shape.triu(full, 1)


def _clone(obj, memo: dict):
    """copy.deepcopy of a module, as _get_clones makes its layers: new modules, parameters and buffers with
    the same values (each its own storage), everything else shared."""
    key = id(obj)
    if key in memo:
        return memo[key]
    if isinstance(obj, Module):
        new = object.__new__(type(obj))
        memo[key] = new
        for name, value in obj.__dict__.items():
            new.__dict__[name] = _clone(value, memo)
        if isinstance(new, TransformerDecoderLayer):
            new._set_state()
        return new
    if obj.__class__ is Tensor:
        data = Tensor(obj._a.copy())
        new = parameter.make(data, obj.requires_grad) if parameter.is_parameter(obj) else data
        memo[key] = new
        return new
    if obj.__class__ is dict:
        return {name: _clone(value, memo) for name, value in obj.items()}
    if obj.__class__ in (set, list):
        return obj.__class__(obj)
    return obj


def _clones(module, n) -> ModuleList:
    return ModuleList([_clone(module, {}) for _ in range(n)])


def _activation(activation):
    """_get_activation_fn: 'relu' and 'gelu' name F.relu and F.gelu; anything callable is kept."""
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        return functional().members[activation]
    return activation


def _seq_len(src: Tensor, batch_first: bool) -> int:
    shape_ = src._a.shape
    return shape_[0] if len(shape_) == 2 else shape_[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal, size) -> bool:
    """_detect_is_causal_mask: the hint as given, else whether the mask is the square causal mask."""
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask._a.shape[-2]
        causal = np.triu(np.full((sz, sz), -np.inf, mask._a.dtype), 1)
        return mask._a.shape == causal.shape and bool(np.all(mask._a == causal))
    return is_causal is True


class _Layer(Module):
    """What the encoder and decoder layers share: their sublayers made in PyTorch's order (the attentions,
    linear1, dropout, linear2, then `norms` LayerNorms and as many Dropouts), the self-attention block and the
    feed-forward block (whose last dropout is the layer's last)."""

    _ATTENTIONS = ("self_attn",)
    _NORMS = 2

    def __init__(self, d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first, norm_first, bias, dtype, device=None):
        super().__init__()
        for name in self._ATTENTIONS:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                   device=device, dtype=dtype))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        for i in range(1, self._NORMS + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype))
        for i in range(1, self._NORMS + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self._modules[f"dropout{self._NORMS}"](x)


class TransformerEncoderLayer(_Layer):
    """nn.TransformerEncoderLayer: self-attention, then a feed-forward network, each in a residual branch with
    layer normalisation after it (or before it, norm_first)."""

    __module__ = "torch.nn.modules.transformer"

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-05,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first, norm_first, bias, dtype, device)
        activation = _activation(activation)
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        dt = src._a.dtype
        src_key_padding_mask = attention.canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src_mask._a.dtype if src_mask is not None else None,
            "src_mask", dt)
        src_mask = attention.canonical_mask(src_mask, "src_mask", None, "", dt, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


def _relu_or_gelu(activation) -> int:
    """1 for relu (F.relu or an nn.ReLU), 2 for gelu, 0 otherwise: what PyTorch's fast path reads."""
    from gradcli.language.nn.activations import GELU, ReLU
    members = functional().members
    if activation is members["relu"] or isinstance(activation, ReLU):
        return 1
    if activation is members["gelu"] or isinstance(activation, GELU):
        return 2
    return 0


class TransformerDecoderLayer(_Layer):
    """nn.TransformerDecoderLayer: self-attention, attention over the encoder's memory, a feed-forward
    network, each in a residual branch with layer normalisation."""

    __module__ = "torch.nn.modules.transformer"
    _ATTENTIONS = ("self_attn", "multihead_attn")
    _NORMS = 3

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-05,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first, norm_first, bias, dtype, device)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _set_state(self):
        """PyTorch's __setstate__, which a deep copy runs: an `activation` missing from the instance's own
        attributes (a module activation lives among the submodules) becomes F.relu there, which attribute lookup
        then finds first: a copied decoder layer with a module activation computes relu (repr unchanged)."""
        if "activation" not in self.__dict__:
            self.__dict__["activation"] = functional().members["relu"]

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)


def _why_not_nested(layer) -> str:
    """TransformerEncoder's reason for not using nested tensors (PyTorch warns with it when
    enable_nested_tensor is left True)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """nn.TransformerEncoder: num_layers copies of one encoder layer (equal parameters to begin with), then
    an optional norm."""

    __module__ = "torch.nn.modules.transformer"

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why:
            STATE.warn("UserWarning", f"enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                      f"{why}")
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        dt = src._a.dtype
        src_key_padding_mask = attention.canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", mask._a.dtype if mask is not None else None, "mask", dt)
        mask = attention.canonical_mask(mask, "mask", None, "", dt, check_other=False)
        first = self.layers[0]
        nested = self._takes_nested_path(src, mask, src_key_padding_mask)
        if nested:
            STATE.warn_once("nested-prototype", "UserWarning", "The PyTorch API of nested tensors is in prototype "
                            "stage and will change in the near future. We recommend specifying layout=torch.jagged "
                            "when constructing a nested tensor, as this layout receives active development, has "
                            "better operator coverage, and works with torch.compile. (Triggered internally at "
                            "/__w/pytorch/pytorch/aten/src/ATen/NestedTensorImpl.cpp:177.)")
        output = src
        batch_first = first.self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, batch_first))
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if nested:
            # PyTorch drops the padded positions (a nested tensor) and pads the result back with zeros; the
            # positions kept see what the key padding mask lets them see, as here
            padded = np.isneginf(src_key_padding_mask._a)[..., None]
            output = Tensor(np.where(padded, output._a.dtype.type(0), output._a))
        if self.norm is not None:
            output = self.norm(output)
        return output


    def _takes_nested_path(self, src, mask, key_padding_mask) -> bool:
        """Whether PyTorch's forward converts the batch to a nested tensor (its sparsity fast path): eval mode,
        a batch of sequences with a left-aligned key padding mask and no other mask, nothing requiring grad."""
        first = self.layers[0]
        if not self.use_nested_tensor or first.training or src._a.ndim != 3 or key_padding_mask is None:
            return False
        if mask is not None:
            return False
        if getattr(self, "mask_check", True):
            kept = ~np.isneginf(key_padding_mask._a)
            if np.any(kept[:, 1:] & ~kept[:, :-1]):         # a kept position after a padded one
                return False
        attn = first.self_attn
        weights = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                   first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias, first.linear1.weight,
                   first.linear1.bias, first.linear2.weight, first.linear2.bias)
        return not (STATE.recording and any(t is not None and t.requires_grad for t in weights))


class TransformerDecoder(Module):
    """nn.TransformerDecoder: num_layers copies of one decoder layer, then an optional norm."""

    __module__ = "torch.nn.modules.transformer"

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal,
                                               _seq_len(tgt, self.layers[0].self_attn.batch_first))
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """nn.Transformer: an encoder and a decoder of the layers above, each ending in a LayerNorm; every
    parameter with more than one dim drawn again by xavier_uniform_."""

    __module__ = "torch.nn.modules.transformer"

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-05,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias)
        for name, given, stack, layer, count in (
                ("encoder", custom_encoder, TransformerEncoder, TransformerEncoderLayer, num_encoder_layers),
                ("decoder", custom_decoder, TransformerDecoder, TransformerDecoderLayer, num_decoder_layers)):
            if given is None:
                norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
                given = stack(layer(*args, device=device, dtype=dtype), count, norm)
            setattr(self, name, given)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        batch = 0 if self.batch_first else 1
        if is_batched and src._a.shape[batch] != tgt._a.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src._a.shape[-1] != self.d_model or tgt._a.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
