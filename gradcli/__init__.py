"""gradcli: PyTorch-style autograd scripts run on an embedded numpy engine."""

__version__ = "0.1.0"
