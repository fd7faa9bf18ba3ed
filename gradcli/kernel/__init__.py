"""gradcli in notebooks: the Jupyter kernel, its kernelspec, and running cells and notebooks.

kernel.py (on ipykernel), spec.py (the kernelspec), cells.py (one cell on the REPL's Shell), pretty.py and
rich.py (what a cell shows), notebook.py (`gradcli run NOTEBOOK.ipynb`). Only the kernel, its install
command and notebook runs import this package; cells.py and notebook.py need none of the Jupyter libraries."""
