"""torch.stft and torch.istft as PyTorch 2.13 composes them, so their grad_fn chains are PyTorch's: stft pads
the signal (F.pad's node between two ViewBackward0), frames it (AsStridedBackward0), windows the frames
(MulBackward0), transforms them with an FFT primitive (FftR2CBackward0 or FftC2CBackward0, gradcli.engine.ops.fft)
and turns the result in place (TransposeBackward1, SqueezeBackward4); istft runs the inverse primitive
(FftC2RBackward0) over the frames, windows them again, overlap-adds them (UnfoldBackwardBackward0) and divides by
the overlap-added squared window (DivBackward0).

stft is PyTorch's Python function (the centring pad) over its C++ one (the checks, in PyTorch's words, each
message opening with the call as PyTorch prints it); istft is C++ throughout.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import dtypes, signatures, views
from gradcli.engine.recording import is_meta, wrap_dim
from gradcli.engine.ops import arith, complexops, fft, shape
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_AT = " (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:{}.)"
_STFT_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
                   "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to "
                   "reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`." + _AT.format(835))
_REAL_OUTPUT = ("stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex "
                "tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still call "
                "torch.view_as_real on the complex output to recover the old return format." + _AT.format(874))
_ISTFT_NO_WINDOW = ("A window was not provided. A rectangular window will be applied.Please provide the same window "
                    "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`." + _AT.format(1035))
_PADDED = ("The length of signal is shorter than the length parameter. Result is being padded with zeros in the tail. "
           "Please check your center and hop_length settings." + _AT.format(1199))
_COMPLEX_ONESIDED = "Cannot have onesided output if window or input is complex"


# ------------------------------------------------------------------------------------------------ messages

def _type_text(t: Tensor) -> str:
    """The name a tensor's toString() gives its type: the legacy class name, C++'s for the types without one."""
    dt = dtypes.of_array(t._a)
    if dt.category == dtypes.COMPLEX:
        return "CPUComplexDoubleType" if dt is dtypes.complex128 else "CPUComplexFloatType"
    return dt.message


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in t._a.shape) + "]"


def _option(v) -> str:
    """A C++ optional as PyTorch streams it: None, or the value (a bool as 0 or 1)."""
    return "None" if v is None else str(int(v)) if v.__class__ is bool else str(v)


def _window_text(window) -> str:
    return "None" if window is None else f"{_type_text(window)}{{{_sizes(window)}}}"


# ------------------------------------------------------------------------------------------------ stft

_VF_STFT = "_VF.stft"       # (signatures: the C++ function the Python one calls, with the arguments it passes on)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None) -> Tensor:
    """torch.stft: PyTorch's Python step (a centred signal padded by n_fft // 2 on each side, through a 3-d
    view as F.pad takes it), then the C++ function."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    _supported("stft", input, window)
    if center:
        if input.__class__ is not Tensor:
            raise AttributeError(f"'{signatures.type_name(input)}' object has no attribute 'dim'")
        if pad_mode.__class__ is not str:
            raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not {signatures.type_name(pad_mode)}")
        signal_dim = input._a.ndim
        extended = (1,) * (3 - signal_dim) + input._a.shape
        pad = int(n_fft // 2)
        input = shape.functional_pad(shape.view(input, extended), [pad, pad], pad_mode)
        input = shape.view(input, input._a.shape[-signal_dim:] if signal_dim else input._a.shape)
    return _stft(input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)


def _supported(name: str, signal, window) -> None:
    """PyTorch's check that the signal and the window share a device; gradcli refuses meta and sparse tensors by
    name."""
    tensors = [t for t in (signal, window) if t.__class__ is Tensor]
    meta = [is_meta(t._a) for t in tensors]
    if len(tensors) == 2 and meta[0] != meta[1]:
        raise RuntimeError(f"{name} input and window must be on the same device but got self on "
                           f"{'meta' if meta[0] else 'cpu'} and window on {'meta' if meta[1] else 'cpu'}")
    if any(meta) or any(t.__class__.__name__ == "SparseTensor" for t in (signal, window)):
        raise NotImplementedError(f"gradcli does not implement torch.{name} of {'meta' if any(meta) else 'sparse'} "
                                  "tensors")


def _stft(self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align) -> Tensor:
    args = (self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align)
    message = signatures.check(_VF_STFT, args, {})
    if message is not None:
        raise TypeError(message)
    n_fft = int(n_fft._a) if n_fft.__class__ is Tensor else n_fft
    if window is None:
        STATE.warn_once("stft:window", "UserWarning", _STFT_NO_WINDOW)
    hop = n_fft >> 2 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)

    def fail(words: str):
        raise RuntimeError(f"stft({_type_text(self)}{_sizes(self)}, n_fft={n_fft}, hop_length={hop}, "
                           f"win_length={win}, window={_window_text(window)}, normalized={int(normalized)}, "
                           f"onesided={_option(onesided)}, return_complex={_option(return_complex)}, "
                           f"align_to_window={_option(align)}) : {words}")

    x = self._a
    complex_out = return_complex if return_complex is not None else (
        x.dtype.kind == "c" or window is not None and window._a.dtype.kind == "c")
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        STATE.warn_once("stft:real", "UserWarning", _REAL_OUTPUT)
    if x.dtype.kind not in "fcV":
        fail("expected a tensor of floating point or complex values")
    if x.ndim not in (1, 2):
        fail("expected a 1D or 2D tensor")
    signal = shape.unsqueeze(self, 0) if x.ndim == 1 else self
    length = signal._a.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")        # (PyTorch's words: win_length's value)
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window._a.ndim != 1 or window._a.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
             f"{_sizes(window)}")
    left = (n_fft - win) // 2
    if win < n_fft:
        window = _centred_window(window if window is not None else self, n_fft, left, win, window is None)
    if align:           # frames of the window's own length: the signal padded so each window starts at a hop
        signal = shape.constant_pad(signal, (left, n_fft - win - left), 0)
    frames = _frames(signal, n_fft, hop)
    if window is not None:
        frames = arith.mul(frames, window)
    code = 1 if normalized else 0
    if frames._a.dtype.kind == "c":
        if onesided:
            raise RuntimeError(_COMPLEX_ONESIDED)
        out = fft.c2c(frames, (2,), code, True)
    else:
        if frames._a.dtype.kind != "f" or frames._a.dtype.itemsize < 4:
            raise RuntimeError(f"MKL FFT doesn't support tensors of type: "
                               f"{'Half' if frames._a.dtype == np.float16 else 'BFloat16'}")
        out = fft.r2c(frames, (2,), code, True if onesided is None else onesided)
    shape.inplace_view(out, "transpose_", 1, 2)
    if x.ndim == 1:
        shape.inplace_view(out, "squeeze_", 0)
    return out if complex_out else complexops.view_as_real(out)


def _centred_window(like: Tensor, n_fft: int, left: int, win: int, ones: bool) -> Tensor:
    """A window shorter than n_fft in the middle of n_fft zeros (copied in: CopySlices when it requires grad);
    no window: ones there, in the signal's dtype."""
    out = Tensor(np.zeros(n_fft, like._a.dtype))
    middle = shape.narrow(out, 0, left, win)
    if ones:
        middle.fill_(1)
    else:
        middle.copy_(like)
    return out


def _frames(signal: Tensor, n_fft: int, hop: int) -> Tensor:
    """The (batch, frames, n_fft) windows of a (batch, length) signal, `hop` apart: PyTorch's as_strided view
    over the signal's own strides (AsStridedBackward0), its gradient spread back over the elements it covers."""
    x = signal._a
    count = 1 + (x.shape[1] - n_fft) // hop
    out = np.lib.stride_tricks.as_strided(x, (x.shape[0], count, n_fft),
                                          (x.strides[0], x.strides[1] * hop, x.strides[1]), subok=True)
    where = None
    if signal.requires_grad or getattr(signal, "_fw", None):
        batch, start, k = np.ogrid[:x.shape[0], :count, :n_fft]
        where = (batch * x.shape[1] + start * hop + k).astype(np.intp)
    return shape._view_of(signal, out, views.AS_STRIDED, (where, x.shape))


# ------------------------------------------------------------------------------------------------ istft

_ISTFT = {"hop_length": None, "win_length": None, "window": None, "center": True, "normalized": False,
          "onesided": None, "length": None, "return_complex": False}


def istft(*args, **kwargs) -> Tensor:
    """torch.istft: the inverse transform of each frame, windowed, overlap-added and divided by the
    overlap-added squared window, trimmed as centred (or to `length`, zero-padded past the frames)."""
    v = signatures.parsed("torch.istft", args, kwargs, _ISTFT)
    self, n_fft, window = v["input"], v["n_fft"], v["window"]
    _supported("istft", self, window)
    n_fft = int(n_fft._a) if n_fft.__class__ is Tensor else n_fft
    center, normalized, onesided, length, return_complex = (v[k] for k in (
        "center", "normalized", "onesided", "length", "return_complex"))
    length = int(length._a) if length.__class__ is Tensor else length
    if window is None:
        STATE.warn_once("istft:window", "UserWarning", _ISTFT_NO_WINDOW)
    hop = n_fft >> 2 if v["hop_length"] is None else int(v["hop_length"])
    win = n_fft if v["win_length"] is None else int(v["win_length"])

    given = onesided

    def fail(words: str):
        raise RuntimeError(f"istft({_type_text(self)}{_sizes(self)}, n_fft={n_fft}, hop_length={hop}, "
                           f"win_length={win}, window={_window_text(window)}, center={int(center)}, "
                           f"normalized={int(normalized)}, onesided={_option(given)}, length={_option(length)}, "
                           f"return_complex={int(return_complex)}) {words}")

    if self._a.dtype.kind != "c":
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    spec = complexops.view_as_real(complexops.resolve_conj(self))
    ndim = spec._a.ndim
    n_frames = spec._a.shape[wrap_dim(-2, ndim)]
    fft_size = spec._a.shape[wrap_dim(-3, ndim)]
    expected = n_fft + hop * (n_frames - 1)
    if spec._a.size == 0:
        fail(": input tensor cannot be empty.")
    if ndim not in (3, 4):
        fail(f": expected a tensor with 3 or 4 dimensions, but got {ndim}")
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided and n_fft // 2 + 1 != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
             f"when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
             f"onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window._a.ndim != 1 or window._a.shape[0] != win):
        fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    full = window if window is not None else Tensor(np.ones(win, spec._a.dtype))
    if win != n_fft:
        left = (n_fft - win) // 2
        full = shape.constant_pad(full, (left, n_fft - win - left), 0)
    if ndim == 3:
        spec = shape.unsqueeze(spec, 0)
    frames = complexops.view_as_complex(shape.transpose(spec, 1, 2))     # (batch, frames, fft_size)
    code = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError(_COMPLEX_ONESIDED)
        frames = fft.c2c(frames, (2,), code, False)
    else:
        if window is not None and window._a.dtype.kind == "c":
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            frames = shape.narrow(frames, -1, 0, n_fft // 2 + 1)
        frames = fft.c2r(frames, (2,), code, n_fft)
    windowed = arith.mul(frames, shape.view(full, 1, 1, n_fft))
    y = shape.unfold_backward(windowed, (windowed._a.shape[0], expected), 1, n_fft, hop)
    squared = shape.expand(arith.power(full, 2), (1, n_frames, n_fft))
    envelope = shape.unfold_backward(squared, (1, expected), 1, n_fft, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else expected
    y, envelope = _slice(y, start, end), _slice(envelope, start, end)
    if envelope._a.size == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    if np.abs(envelope._a).min() < 1e-11:
        fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    y = arith.div(y, envelope)
    if ndim == 3:
        y = shape.squeeze(y, 0)
    if end > expected:
        STATE.warn_once("istft:length", "UserWarning", _PADDED)
        y = shape.constant_pad(y, (0, end - expected), 0)
    return y


def _slice(t: Tensor, start: int, end: int) -> Tensor:
    """t[:, start:end] as ATen's slice clamps it (SliceBackward0)."""
    first, stop, _ = slice(start, end).indices(t._a.shape[1])
    return shape.narrow(t, 1, first, max(stop - first, 0))
