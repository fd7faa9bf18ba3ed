"""gradcli in notebooks: the Jupyter kernel (kernel.py, on ipykernel), its kernelspec (spec.py), running
cells (cells.py) and notebooks (notebook.py). Only the kernel, its install command and `gradcli run
NOTEBOOK.ipynb` import this package; cells.py and notebook.py need none of the Jupyter libraries."""
