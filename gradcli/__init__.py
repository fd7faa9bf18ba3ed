"""gradcli: PyTorch-style autograd scripts run on an embedded numpy engine."""

from gradcli.machine import pin_kernels as _pin_kernels

_pin_kernels()

__version__ = "0.1.0"
# The PyTorch release whose behaviour and output gradcli mirrors.
PYTORCH_VERSION = "2.13.0"
