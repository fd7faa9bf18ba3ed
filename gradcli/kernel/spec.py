"""The kernelspec: the command Jupyter runs to start a gradcli kernel, written or installed.

The command is this Python with the kernel's options; it is written into a folder (a temporary one for
`gradcli run --write`) or installed with jupyter_client where Jupyter looks for kernels."""

from __future__ import annotations

import json
import os
import sys
import tempfile

NAME = "gradcli"
DISPLAY_NAME = "gradcli"


def kernel_json(options: list, python: str | None = None, display_name: str = DISPLAY_NAME) -> dict:
    """kernel.json: `options` are the kernel's command-line options (["--timeout", "10", ...])."""
    return {
        "argv": [python or sys.executable, "-m", "gradcli.kernel", "-f", "{connection_file}", *options],
        "display_name": display_name,
        "language": "gradcli",
        # Jupyter interrupts with SIGINT, which a running cell turns into KeyboardInterrupt (gradcli.kernel.kernel)
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def write(folder: str, options: list, name: str = NAME, display_name: str = DISPLAY_NAME) -> str:
    """Write FOLDER/kernels/NAME/kernel.json (FOLDER is then a Jupyter data folder); returns the spec's folder."""
    where = os.path.join(folder, "kernels", name)
    os.makedirs(where, exist_ok=True)
    with open(os.path.join(where, "kernel.json"), "w", encoding="utf-8") as f:
        json.dump(kernel_json(options, display_name=display_name), f, indent=1)
        f.write("\n")
    return where


def install(options: list, user: bool = False, prefix: str | None = None, name: str = NAME,
            display_name: str = DISPLAY_NAME) -> str:
    """Install the kernelspec with jupyter_client (for the user, in a prefix, or system-wide); returns
    the folder it went to."""
    from jupyter_client.kernelspec import KernelSpecManager
    with tempfile.TemporaryDirectory(prefix="gradcli-kernelspec-") as scratch:
        source = write(scratch, options, name, display_name)
        return KernelSpecManager().install_kernel_spec(source, kernel_name=name, user=user, prefix=prefix)
