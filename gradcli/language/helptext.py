"""Short help for what a script can reach (`help(torch.ones)`, `x?` in the REPL): a signature read
from gradcli's own definitions and one paragraph in gradcli's words.

Nothing here runs at start-up: the `help` builtin and the REPL import it when asked. Signatures come
from the functions themselves (inspect), without the engine's internal parameters; the builtins,
whose C definitions carry none, have theirs written out below.
"""

from __future__ import annotations

import inspect
from types import FunctionType

from gradcli.engine.tensor import ALL_DIMS
from gradcli.language.stdlib import EXCEPTIONS

# (the channel-wise dropouts: their rank and the input shape each takes)
_CHANNEL_SHAPES = ((1, "(N, C, L)"), (2, "(N, C, H, W)"), (3, "(N, C, D, H, W)"))


# ------------------------------------------------------------------------------- what each does
# One phrase per name; torch.X, Tensor.X and torch.nn.functional.X share it. A trailing `_` (the
# in-place form) and the arc- aliases are derived below.
_WHAT = {
    # creation
    "tensor": "Builds a new tensor holding a copy of `data` (a number or nested lists of numbers); its dtype is "
              "inferred unless given.",
    "Tensor": "The tensor type; calling it builds a float32 tensor.",
    "ones": "A new tensor of the given shape filled with 1.",
    "zeros": "A new tensor of the given shape filled with 0.",
    "full": "A new tensor of the given shape filled with `fill_value`.",
    "empty": "A new tensor of the given shape; gradcli fills it with 0 (PyTorch leaves it uninitialised).",
    "ones_like": "A tensor of 1s with the shape (and by default the dtype) of `input`.",
    "zeros_like": "A tensor of 0s with the shape (and by default the dtype) of `input`.",
    "full_like": "A tensor filled with `fill_value`, shaped like `input`.",
    "empty_permuted": "A new tensor of the given size laid out in memory in `physical_layout`'s order of dims "
                      "(outermost first); gradcli fills it with 0.",
    "new_empty_strided": "A new tensor with the given size and strides (a contiguous layout in some order), this "
                         "tensor's dtype by default; gradcli fills it with 0.",
    "empty_like": "A tensor shaped like `input`, filled with 0 in gradcli.",
    "rand": "Uniform random numbers in [0, 1) of the given shape, from the default generator (the same stream as "
            "PyTorch on the CPU).",
    "randn": "Standard normal random numbers of the given shape, from the default generator.",
    "randint": "Random integers in [low, high) of the given shape.",
    "randperm": "A random permutation of the integers 0 .. n-1.",
    "range": "Deprecated: the values from start to end inclusive, in steps of step, in the default float type unless "
             "dtype is given (torch.arange leaves end out).",
    "normal": "Normal random numbers with the given mean and standard deviation.",
    "rand_like": "Uniform random numbers shaped like `input`.",
    "randn_like": "Standard normal random numbers shaped like `input`.",
    "randint_like": "Random integers shaped like `input`.",
    "bernoulli": "0s and 1s drawn with the probabilities in `input` (or with probability `p`), in PyTorch's order "
                 "under a seed.",
    "multinomial": "Indices drawn from the categories weighted by each row of `input`, with or without "
                   "replacement, bit for bit as PyTorch draws them.",
    "exponential_": "Fills the tensor with exponential random numbers of rate `lambd`, in place.",
    "geometric_": "Fills the tensor with the number of trials up to a first success of probability `p`, in place.",
    "cauchy_": "Fills the tensor with Cauchy random numbers (`median`, `sigma`), in place.",
    "log_normal_": "Fills the tensor with exp of normal random numbers (`mean`, `std`), in place.",
    "poisson": "Counts drawn from Poisson distributions whose rates are the elements of `input`.",
    "arange": "The values from start (0 by default) up to but not including end, in steps of step.",
    "linspace": "`steps` evenly spaced values from start to end, both included.",
    "logspace": "`steps` values base ** e for e evenly spaced from start to end, both included.",
    "tril_indices": "The (row, column) positions of a matrix's lower triangle (up to `offset` above the "
                    "diagonal), as a 2-row tensor.",
    "triu_indices": "The (row, column) positions of a matrix's upper triangle (from `offset` above the "
                    "diagonal), as a 2-row tensor.",
    "eye": "The identity matrix (ones on the diagonal).",
    "new_tensor": "A new tensor from `data` with this tensor's dtype.",
    "new_ones": "A tensor of 1s of the given shape with this tensor's dtype.",
    "new_zeros": "A tensor of 0s of the given shape with this tensor's dtype.",
    "new_full": "A tensor of the given shape filled with a value, with this tensor's dtype.",
    "new_empty": "A tensor of the given shape with this tensor's dtype (filled with 0 in gradcli).",
    "clone": "A copy of the tensor with its own storage; gradients flow back through the copy.",
    "Size": "The type of a tensor's shape: a tuple of ints.",
    "Generator": "A random number generator with its own state.",
    "finfo": "The limits of a floating-point dtype (the default one without an argument): bits, eps, max, min, "
             "tiny, smallest_normal, resolution.",
    "iinfo": "The limits of an integer dtype: bits, max, min.",
    # torch.optim, its schedulers, gradient clipping
    "Optimizer": ("The base of torch.optim's optimisers: param_groups, state, zero_grad, step, state_dict; a script "
                  "subclasses it (super().__init__(params, defaults), then its own step)."),
    "SGD": "Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight decay.",
    "Adam": "Adam: updates scaled by running averages of the gradient and of its square.",
    "AdamW": "Adam with decoupled weight decay (the parameters shrink by lr * weight_decay each step).",
    "RMSprop": "RMSprop: the gradient divided by a running root mean square of it.",
    "Adagrad": "Adagrad: the gradient divided by the root of the sum of all past squared gradients.",
    "Adamax": "Adamax: Adam's running average of the gradient divided by a decaying maximum of its size.",
    "NAdam": "NAdam: Adam with Nesterov momentum (a momentum schedule set by momentum_decay).",
    "RAdam": "RAdam: Adam whose adaptive step is rectified for its variance (plain momentum SGD in the first steps).",
    "Adadelta": "Adadelta: steps scaled by the ratio of running roots of past squared updates and squared gradients.",
    "Rprop": "Rprop: a step size per element, grown while the gradient keeps its sign and shrunk when it flips.",
    "ASGD": "Averaged SGD: SGD with a decaying rate, keeping a running average of the parameters (state 'ax').",
    "LBFGS": ("L-BFGS: quasi-Newton steps from the last history_size gradient changes, over all parameters as one "
              "vector; step(closure) re-evaluates the loss, optionally with a strong-Wolfe line search."),
    "Adafactor": ("Adafactor: steps relative to each parameter's root mean square, scaled by a second moment kept as "
                  "row and column averages for matrices (a full one for vectors), with update clipping at d."),
    "SparseAdam": ("Adam for sparse gradients (an nn.Embedding(sparse=True)'s): the moments and the parameter change "
                   "only at the rows a step's gradient names; a dense gradient is refused, as in PyTorch."),
    "Muon": ("Muon: momentum for 2-D parameters, orthogonalised by a quintic Newton-Schulz iteration in bfloat16, "
             "with decoupled weight decay and a learning rate scaled by the matrix's shape."),
    "StepLR": "Multiplies the learning rate by gamma every step_size epochs.",
    "MultiStepLR": "Multiplies the learning rate by gamma at each epoch listed in milestones.",
    "ExponentialLR": "Multiplies the learning rate by gamma every epoch.",
    "CosineAnnealingLR": "Anneals the learning rate from its start to eta_min along a cosine over T_max epochs.",
    "LambdaLR": "Sets the learning rate to the initial one times lr_lambda(epoch).",
    "MultiplicativeLR": "Multiplies the learning rate by lr_lambda(epoch) every epoch.",
    "ConstantLR": "Multiplies the learning rate by factor for the first total_iters epochs, then restores it.",
    "LinearLR": ("Scales the learning rate by a factor going linearly from start_factor to end_factor over "
                 "total_iters epochs."),
    "PolynomialLR": "Decays the learning rate to 0 as (1 - epoch / total_iters) ** power over total_iters epochs.",
    "OneCycleLR": ("The 1cycle policy: the learning rate rises from max_lr / div_factor to max_lr, then anneals far "
                   "below the start, with the momentum cycled the other way, over total_steps steps."),
    "CosineAnnealingWarmRestarts": ("Cosine annealing from the start lr to eta_min over T_0 epochs, restarting "
                                    "from the top each time, every period T_mult times longer."),
    "SequentialLR": "Runs its schedulers one after another, switching to the next at each epoch in milestones.",
    "ChainedScheduler": "Steps all its schedulers at each step, so their changes to the learning rate combine.",
    "CyclicLR": ("Cycles the learning rate between base_lr and max_lr (triangular, triangular2, exp_range or a "
                 "scale_fn), with the momentum cycled the other way."),
    "ReduceLROnPlateau": "Lowers the learning rate by factor when a metric stops improving for patience epochs.",
    # torch.optim.swa_utils
    "AveragedModel": ("A copy of a model whose parameters keep a running average of the model's: equal weights "
                      "(SWA) by default, or avg_fn / multi_avg_fn (EMA); update_parameters(model), n_averaged."),
    "SWALR": ("Anneals each group's learning rate to swa_lr over anneal_epochs epochs (cos or linear), then keeps "
              "it there."),
    "update_bn": ("One pass over a loader's batches to recompute a model's BatchNorm running statistics (a "
                  "cumulative average over the batches)."),
    "get_ema_multi_avg_fn": "An AveragedModel multi_avg_fn: exponential moving average with decay, lists in place.",
    "get_swa_multi_avg_fn": "An AveragedModel multi_avg_fn: equal-weight (SWA) average, lists in place.",
    "get_ema_avg_fn": "An AveragedModel avg_fn: decay * averaged + (1 - decay) * current.",
    "get_swa_avg_fn": "An AveragedModel avg_fn: averaged + (current - averaged) / (num_averaged + 1).",
    "clip_grad_norm_": "Scales the gradients in place so that their total norm is at most max_norm; returns the norm.",
    "clip_grad_norm": "clip_grad_norm_ under its deprecated name (PyTorch's FutureWarning first).",
    "clip_grad_value_": "Clamps every gradient in place to [-clip_value, clip_value].",
    "get_total_norm": "The norm of the tensors' norms, as clip_grad_norm_ computes it.",
    "clip_grads_with_norm_": "Scales the gradients in place by min(max_norm / (total_norm + 1e-6), 1).",
    "parameters_to_vector": "The parameters flattened and joined into one vector (gradients flow back to them).",
    "vector_to_parameters": "Sets each parameter's data to the next slice of a vector, viewed in its shape.",
    "LRScheduler": "The base of the learning-rate schedulers: step, get_last_lr, last_epoch, state_dict.",
    "_LRScheduler": "LRScheduler under its older name (a subclass adding nothing): a script's scheduler may derive "
                    "from either.",
    # random state
    "manual_seed": "Seeds the default random generator, so later random tensors repeat run after run.",
    "seed": "Seeds the default generator from the operating system and returns the seed.",
    "initial_seed": "The seed the default generator started from.",
    "save": "Saves an object (a state_dict, a checkpoint dict, a tensor, a model) under a file name: gradcli keeps "
            "the file in memory for the session, never on the disk.",
    "load": "Loads what torch.save kept under the name, as a copy of its own (weights_only=True, the default, takes "
            "tensors, numbers, strings and containers only).",
    "get_num_threads": "The thread count PyTorch's kernels would split work over (2, as on the reference machine).",
    "set_num_threads": "Set the thread count whose work split large sums follow (gradcli computes on one thread).",
    "get_rng_state": "The default generator's state, as a uint8 tensor.",
    "set_rng_state": "Restores a state that get_rng_state returned.",
    # grad mode
    "no_grad": "A context (`with torch.no_grad():`) in which no operation is recorded for backward.",
    "enable_grad": "A context that turns recording back on inside no_grad.",
    "set_grad_enabled": "Turns recording on or off; usable as a call or as a context.",
    "is_grad_enabled": "Whether operations are being recorded for backward now.",
    "is_tensor": "Whether the object is a tensor (a Parameter or a sparse tensor is).",
    "attention": "torch.nn.attention: SDPBackend and sdpa_kernel, which choose the kernels scaled_dot_product_attention "
                 "may use in a block.",
    "SDPBackend": "The backends of scaled_dot_product_attention: MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, ...",
    "sdpa_kernel": "A context (or decorator) in which scaled_dot_product_attention may use only the given backends.",
    "gradient": "The derivative estimated by differences along each dim (central inside, edge_order at the ends); "
                "spacing a step, one per dim, or coordinates.",
    "typename": "A tensor's legacy type name (torch.FloatTensor), or the dotted name of any other value's class.",
    "set_default_tensor_type": "Deprecated: set the default float dtype from a legacy type (torch.DoubleTensor) or its "
                               "name; use torch.set_default_dtype.",
    "as_strided": "A view of the tensor's storage with the given sizes and strides (in elements) from an offset; "
                  "checked against the storage's size.",
    "is_storage": "Whether the object is a tensor storage: never, as no storage is reachable from a script.",
    "is_distributed": "Whether a tensor is distributed: never in gradcli.",
    "is_vulkan_available": "Whether PyTorch's Vulkan backend is there: never in gradcli (CPU only).",
    "is_warn_always_enabled": "Whether warn-always mode (torch.set_warn_always) is on.",
    "set_warn_always": "Turns warn-always mode on or off: warnings PyTorch gives once per process then come every "
                       "time.",
    "get_num_interop_threads": "The inter-op thread count (2, as on the reference machine, until set).",
    "set_num_interop_threads": "Sets the inter-op thread count, once (gradcli runs no inter-op work).",
    "native_dropout": "(output, mask): with train True (or None) each element kept with probability 1 - p, the kept "
                      "ones scaled by 1 / (1 - p), as PyTorch draws the mask; else a copy and an all-True mask.",
    "embedding_renorm_": "Scales in place each row of the weight the indices name whose norm_type-norm exceeds "
                          "max_norm down to it (F.embedding's max_norm step); returns the weight.",
    "nuclear_norm": "Deprecated: the sum of the singular values over two dims, as linalg.matrix_norm(A, 'nuc').",
    "frobenius_norm": "Deprecated: the 2-norm over at most two dims (NormBackward1), as linalg.vector_norm(A, 2).",
    "constant_pad_nd": "The tensor padded with `value` (0 by default) by the (before, after) amounts in `pad`, last "
                       "dim first; a negative amount crops.",
    "convolution": "The convolution every conv layer and function computes, with all its arguments given: stride, "
                   "padding, dilation, transposed, output_padding, groups.",
    "native_layer_norm": "layer_norm's output with the mean and reciprocal standard deviation it normalised by: "
                         "(output, mean, rstd).",
    "native_batch_norm": "batch_norm's output with the batch's mean and inverse standard deviation in training "
                         "(empty tensors in evaluation): (output, save_mean, save_invstd).",
    "rnn_tanh_cell": "One step of a tanh RNN cell: tanh(x w_ih^T + b_ih + h w_hh^T + b_hh).",
    "rnn_relu_cell": "One step of a ReLU RNN cell: relu(x w_ih^T + b_ih + h w_hh^T + b_hh).",
    "lstm_cell": "One LSTM step: (h', c') from x, hx = (h, c) and the weights, as nn.LSTMCell computes it.",
    "gru_cell": "One GRU step: h' from x, h and the weights, as nn.GRUCell computes it.",
    "sym_int": "int(a) (PyTorch's helper for symbolic sizes, on a plain number or tensor).",
    "sym_float": "float(a) (PyTorch's helper for symbolic sizes, on a plain number or tensor).",
    "sym_max": "max(a, b) of two numbers, a float when either is one.",
    "sym_min": "min(a, b) of two numbers, a float when either is one.",
    "sym_not": "not a.",
    "sym_sqrt": "math.sqrt(a).",
    "sym_ite": "t if b else f, for a bool b and t, f of one type.",
    "sym_sum": "The sum of the numbers (or tensors) given, as a list or one by one.",
    "inference_mode": "A context like no_grad, whose results can never take part in autograd later.",
    "autocast": "A context (`with torch.autocast('cpu'):`) in which matrix products and convolutions run in "
                "bfloat16 (or float16) and losses in float32: mixed precision.",
    "is_autocast_enabled": "Whether autocast is on for a device type ('cpu'; no argument: CUDA's, off here).",
    "get_autocast_dtype": "The lower precision autocast uses on a device type (bfloat16 on the CPU by default).",
    "set_autocast_enabled": "Turn autocast on or off for a device type, without a `with` block.",
    "set_autocast_dtype": "Set the lower precision autocast uses on a device type.",
    "is_autocast_cpu_enabled": "Deprecated: torch.is_autocast_enabled('cpu').",
    "get_autocast_cpu_dtype": "Deprecated: torch.get_autocast_dtype('cpu').",
    "is_autocast_cache_enabled": "Whether autocast keeps one cast of each weight for a whole region.",
    "set_autocast_cache_enabled": "Turn autocast's cache of weight casts on or off.",
    "clear_autocast_cache": "Drop the weight casts autocast kept.",
    "amp": "torch.amp: autocast and GradScaler, for mixed-precision training.",
    "GradScaler": "Loss scaling for mixed precision: scale(loss).backward(), step(optimizer) (skipped when a "
                  "gradient is inf or nan), update() (the scale backs off or grows).",
    "fuse_conv_bn_eval": "A copy of an eval-mode convolution with the eval-mode batch norm after it folded into "
                         "its weight and bias.",
    "fuse_conv_bn_weights": "The weight and bias of a convolution with a batch norm's running statistics and "
                            "affine map folded in (Parameters).",
    "fuse_linear_bn_eval": "A copy of an eval-mode Linear with the eval-mode batch norm after it folded in.",
    "fuse_linear_bn_weights": "The weight and bias of a Linear with a batch norm folded in (Parameters).",
    "set_multithreading_enabled": "Set whether backward may use several threads (a flag only: gradcli's backward "
                                  "runs on one thread, as PyTorch's CPU backward does).",
    "is_multithreading_enabled": "The flag set_multithreading_enabled sets (True at first).",
    "version": "torch.version: the version strings (torch.version.__version__); torch.backends.cudnn.version(): "
               "None (no cuDNN in a CPU build).",
    "set_float32_matmul_precision": "'highest', 'high' or 'medium': how GPUs may round float32 matrix products "
                                    "(TF32); no effect on the CPU, in PyTorch as here, but it reads back.",
    "get_float32_matmul_precision": "The float32 matmul precision set ('highest' at first).",
    "use_deterministic_algorithms": "Ask for deterministic kernels (warn_only=...): gradcli's are all deterministic; "
                                    "the setting reads back.",
    "are_deterministic_algorithms_enabled": "Whether use_deterministic_algorithms(True) is in force.",
    "is_deterministic_algorithms_warn_only_enabled": "Whether use_deterministic_algorithms(..., warn_only=True) is "
                                                     "in force.",
    "backends": "torch.backends: cudnn, cuda (matmul.allow_tf32, the sdp switches), mkldnn, mkl, openmp, mps, "
                "with the CPU build's answers and flags scripts may set.",
    "cudnn": "torch.backends.cudnn: enabled, benchmark, deterministic, allow_tf32 (set and read back; no cuDNN "
             "in a CPU build: is_available() is False).",
    "matmul": "torch.backends.cuda.matmul: allow_tf32 (tied to the float32 matmul precision) and the reduced-"
              "precision reduction switches.",
    "mkldnn": "torch.backends.mkldnn: is_available() and the enabled flag.",
    "mkl": "torch.backends.mkl: is_available().",
    "openmp": "torch.backends.openmp: is_available().",
    "is_bf16_supported": "torch.cuda.is_bf16_supported(): False (no CUDA device).",
    "flash_sdp_enabled": "Whether the flash attention kernel may be chosen (a switch only, on the CPU).",
    "mem_efficient_sdp_enabled": "Whether the memory-efficient attention kernel may be chosen (a switch only).",
    "math_sdp_enabled": "Whether the math attention kernel may be chosen (a switch only).",
    "enable_flash_sdp": "Switch the flash attention kernel on or off (read back by flash_sdp_enabled).",
    "enable_mem_efficient_sdp": "Switch the memory-efficient attention kernel on or off.",
    "enable_math_sdp": "Switch the math attention kernel on or off.",
    "compile": "torch.compile(fn or module): the same function or module, run as written (nothing is compiled); "
               "its results hang from one CompiledFunctionBackward node, as PyTorch's compiled graph's do.",
    "compiler": "torch.compiler: is_compiling() (always False here), reset(), disable(fn).",
    "is_compiling": "False: a script's code always runs as written.",
    "is_dynamo_compiling": "False: a script's code always runs as written.",
    "reset": "torch.compiler.reset(): nothing to forget (gradcli keeps no compiled code).",
    "disable": "torch.compiler.disable(fn): fn itself (it never runs compiled).",
    "custom_fwd": "Decorate a custom Function's forward for autocast: it notes the autocast state (or, with "
                  "cast_inputs=, casts its floating inputs and runs without autocast).",
    "custom_bwd": "Decorate a custom Function's backward: it runs under the autocast state its forward ran under.",
    "is_autocast_available": "Whether autocast knows a device type ('cpu', 'cuda', ...).",
    "cpu": "torch.cpu: its amp namespace (deprecated spellings of torch.amp's autocast and GradScaler).",
    "is_inference_mode_enabled": "Whether inference mode is on.",
    "set_detect_anomaly": "Turns anomaly detection on or off (backward then checks for nan).",
    "detect_anomaly": "A context in which backward checks every gradient for nan.",
    "is_anomaly_enabled": "Whether anomaly detection is on.",
    "is_anomaly_check_nan_enabled": "Whether anomaly detection checks for nan.",
    "set_anomaly_enabled": "Sets anomaly detection (`enabled`) and its check for nan (`check_nan`), both bools.",
    # autograd
    "backward": "Computes the gradient of this tensor (a scalar, or with `gradient` given) with respect to the "
                "leaves that require grad, and adds it into their .grad.",
    "grad": "Returns the gradients of `outputs` with respect to `inputs` without touching .grad (on a tensor: "
            "the gradient accumulated by backward, or None).",
    "Variable": "The pre-0.4 wrapper; today it returns the tensor itself (optionally requiring grad).",
    "jacobian": "The Jacobian of a function at the given inputs: each output element differentiated by each "
                "input element.",
    "hessian": "The matrix of second derivatives of a scalar function at the given inputs.",
    "vjp": "The function's output and the vector-Jacobian product v^T J.",
    "jvp": "The function's output and the Jacobian-vector product J v.",
    "hvp": "The function's output and the Hessian-vector product H v.",
    "vhp": "The function's output and the vector-Hessian product v^T H.",
    # torch.func (a qualified name's phrase wins over its bare name's)
    "torch.func.grad": "A function returning the gradient of `func` (which returns a scalar tensor) with respect "
                       "to the arguments `argnums` names; nest it for higher derivatives.",
    "grad_and_value": "Like torch.func.grad, a function that returns the gradient and the value of `func` together.",
    "torch.func.vjp": "The output of `func` at `primals` and a function taking cotangents shaped like the output "
                      "to the vector-Jacobian products, one per primal.",
    "jacrev": "A function returning the Jacobian of `func` with respect to the arguments `argnums` names, one "
              "vector-Jacobian product per output element.",
    "torch.func.jvp": "The output of `func` at `primals` and its Jacobian-vector product with `tangents`, in "
                      "forward mode.",
    "jacfwd": "A function returning the Jacobian of `func` in forward mode, one Jacobian-vector product per "
              "input element.",
    "torch.func.hessian": "A function returning the matrix of second derivatives of `func`: jacfwd of jacrev.",
    "pad": "Pads the last dims of a tensor (pairs of amounts, last dim first; negative amounts crop) with a "
           "constant, or by mode='reflect', 'replicate' or 'circular'.",
    "linearize": "torch.func.linearize(func, *primals): (func(*primals), jvp_fn); jvp_fn(*tangents) gives func's "
                 "tangent outputs at primals for tangents shaped like the primals (func runs again on each call).",
    "replace_all_batch_norm_modules_": "torch.func.replace_all_batch_norm_modules_(root): stops every batch norm in "
                                       "root from tracking running statistics (for vmap in training mode); returns root.",
    "stack_module_state": "Stacks the parameters and buffers of several models of one class along a new first dim, "
                          "for vmap over functional_call (model ensembling).",
    "checkpoint": "Runs a function (a model's block) keeping only its inputs; backward runs it again to get the "
                  "tensors its ops saved (use_reentrant=False: saved-tensor hooks; True: one node).",
    "checkpoint_sequential": "Checkpoints a Sequential (or list of functions) in `segments` runs of equal "
                             "length; the last run is not checkpointed.",
    "functional_call": "Calls a module with some of its parameters and buffers replaced by name, for that call "
                       "only (func transforms differentiate with respect to them).",
    "vmap": "A function mapping `func` over a dimension of its inputs (in_dims) and stacking the results "
            "(out_dims); gradcli runs `func` once per element.",
    "gradcheck": "Compares analytic gradients with finite differences; True when they agree, an error otherwise.",
    "gradgradcheck": "Like gradcheck, for second derivatives.",
    "GradcheckError": "The error gradcheck raises when the gradients disagree.",
    # torch.utils.data
    "Dataset": "Base class of map-style datasets: subclasses define __getitem__ (and usually __len__).",
    "TensorDataset": "A dataset whose samples are the tensors' rows at one index (first dimensions must match).",
    "Subset": "The samples of a dataset at a list of indices.",
    "ConcatDataset": "The samples of several datasets one after another (what ds1 + ds2 makes).",
    "SubsetRandomSampler": "The given indices in a random order on each pass.",
    "WeightedRandomSampler": "`num_samples` indices drawn by weight on each pass (one torch.multinomial call).",
    "IterableDataset": "Base class of stream datasets: subclasses define __iter__; a DataLoader batches what it "
                       "yields.",
    "ChainDataset": "The samples of several IterableDatasets, one stream after the other.",
    "StackDataset": "The samples of several datasets of one length side by side: a tuple, or a dict when the "
                    "datasets are given by keyword.",
    "get_worker_info": "Inside a DataLoader worker (num_workers > 0), its WorkerInfo: id, num_workers, seed, dataset; "
                       "None in the main process.",
    "nonzero_static": "nonzero's first `size` positions as a (size, ndim) tensor, rows of `fill_value` (-1) after "
                      "them when there are fewer.",
    "DataLoader": "Iterates a dataset in batches (batch_size, shuffle in PyTorch's order, drop_last, collate_fn, "
                  "generator), in-process.",
    "random_split": "Splits a dataset into Subsets of the given lengths or fractions over one random permutation.",
    "default_collate": "Merges a list of samples into a batch: tensors stacked, numbers as tensors, containers "
                       "collated per field.",
    "default_convert": "What a loader without batching (batch_size=None) makes of each sample: tuples become "
                       "lists, tensors and numbers stay as they are.",
    "Sampler": "Base class of index samplers: an iterable of dataset indices.",
    "SequentialSampler": "The indices 0, 1, ..., len(dataset) - 1 in order.",
    "RandomSampler": "A random permutation of the dataset's indices on each pass (PyTorch's order under a seed).",
    "BatchSampler": "Groups a sampler's indices into lists of batch_size (the last one shorter unless drop_last).",
    # torch.distributions
    "Distribution": "Base class of the distributions: batch_shape, event_shape, sample, rsample, log_prob, entropy, "
                    "argument and sample validation; a script's own distribution derives from it.",
    "ExponentialFamily": "Base class of the exponential-family distributions (Normal, Bernoulli, Exponential).",
    "Normal": "The normal distribution of mean loc and standard deviation scale (rsample: loc + eps * scale).",
    "Laplace": "The Laplace distribution of location loc and scale scale.",
    "Gamma": "The gamma distribution of shape concentration and inverse scale rate (rsample differentiable).",
    "Chi2": "The chi-squared distribution of df degrees of freedom (a Gamma of df / 2 and rate 0.5).",
    "Poisson": "The Poisson distribution of mean rate (counts as floats).",
    "Dirichlet": "The Dirichlet distribution over probability vectors, of the given concentration.",
    "Beta": "The beta distribution on (0, 1) of concentrations concentration1 and concentration0.",
    "StudentT": "Student's t distribution of df degrees of freedom, location loc and scale scale.",
    "Binomial": "The binomial distribution: successes out of total_count trials of probability probs (or logits).",
    "MultivariateNormal": "The multivariate normal of mean loc and covariance_matrix, precision_matrix or its Cholesky "
                          "factor scale_tril (rsample: loc + scale_tril @ eps).",
    "Uniform": "The uniform distribution on [low, high).",
    "Exponential": "The exponential distribution of rate `rate` (mean 1 / rate).",
    "Categorical": "A distribution over the classes 0..K-1 by probs (normalised to sum 1) or logits (normalised "
                   "by logsumexp); samples are class indices.",
    "OneHotCategorical": "A Categorical whose samples are one-hot vectors over the K classes.",
    "Bernoulli": "1 with probability probs (or sigmoid(logits)), else 0.",
    "Independent": "A distribution whose last reinterpreted_batch_ndims batch dims count as event dims "
                   "(log_prob and entropy sum over them).",
    "TransformedDistribution": "A base distribution pushed through a list of transforms (log_prob subtracts their "
                               "log |det J|).",
    "LogNormal": "exp of a Normal(loc, scale) (a TransformedDistribution with ExpTransform).",
    "Gumbel": "The Gumbel (extreme value) distribution of location loc and scale scale.",
    "HalfNormal": "|X| for X ~ Normal(0, scale).",
    "HalfCauchy": "|X| for X ~ Cauchy(0, scale).",
    "Weibull": "The Weibull distribution of scale scale and shape concentration.",
    "Pareto": "The Pareto distribution of scale scale (its minimum) and shape alpha.",
    "LogisticNormal": "The stick-breaking image of a Normal(loc, scale) vector: points of the simplex.",
    "RelaxedBernoulli": "A differentiable relaxation of Bernoulli samples at the given temperature (probs or logits).",
    "LogitRelaxedBernoulli": "The logit of a RelaxedBernoulli sample.",
    "RelaxedOneHotCategorical": "A differentiable relaxation of one-hot samples (Gumbel-softmax) at the given "
                                "temperature.",
    "ExpRelaxedCategorical": "The log of a RelaxedOneHotCategorical sample.",
    "Cauchy": "The Cauchy distribution of median loc and half width scale (rsample: loc + cauchy_() * scale).",
    "Geometric": "The number of failures before the first success of Bernoulli(probs) trials.",
    "MixtureSameFamily": "A mixture of the components of one batched distribution (its rightmost batch dim), "
                         "weighted by a Categorical.",
    "MixtureSameFamilyConstraint": "The support of a MixtureSameFamily: its component's, checked with the "
                                   "components' dim put back.",
    "NegativeBinomial": "The number of successes before total_count failures of Bernoulli(probs) trials.",
    "ContinuousBernoulli": "The continuous Bernoulli distribution on [0, 1] of parameter probs (or logits).",
    "VonMises": "The von Mises (circular normal) distribution of mean direction loc and concentration.",
    "Kumaraswamy": "The Kumaraswamy distribution on [0, 1] of concentrations concentration1 and concentration0.",
    "FisherSnedecor": "The F distribution of df1 and df2 degrees of freedom.",
    "LowRankMultivariateNormal": "The multivariate normal of mean loc and covariance cov_factor @ cov_factor.mT + "
                                 "diag(cov_diag).",
    "Multinomial": "Counts of total_count draws of a Categorical over its classes (probs or logits).",
    "LKJCholesky": "The LKJ distribution over the lower Cholesky factors of dim x dim correlation matrices.",
    "Wishart": "The Wishart distribution over positive-definite p x p matrices (df, and covariance_matrix, "
               "precision_matrix or scale_tril); samples by the Bartlett decomposition.",
    "corr_cholesky": "The constraint: lower Cholesky factors of correlation matrices (unit rows).",
    "Transform": "Base class of the transforms: __call__, inv, log_abs_det_jacobian, domain and codomain; a script's "
                 "own transform defines _call, _inverse and log_abs_det_jacobian.",
    "ComposeTransform": "The transforms of a list applied in order.",
    "IndependentTransform": "A transform whose last reinterpreted_batch_ndims batch dims count as event dims.",
    "ReshapeTransform": "A reshape of the rightmost dims from in_shape to out_shape.",
    "ExpTransform": "The transform y = exp(x).",
    "PowerTransform": "The transform y = x ** exponent on the positive reals.",
    "SigmoidTransform": "The transform y = sigmoid(x), clipped to (0, 1).",
    "SoftplusTransform": "The transform y = log(1 + exp(x)).",
    "TanhTransform": "The transform y = tanh(x).",
    "AbsTransform": "The transform y = |x| (its inverse is the identity).",
    "AffineTransform": "The transform y = loc + scale * x.",
    "SoftmaxTransform": "The transform y = softmax(x) over the last dim (its inverse is log).",
    "LowerCholeskyTransform": "Square matrices to lower-triangular ones with a positive (exponentiated) diagonal.",
    "PositiveDefiniteTransform": "Square matrices to positive-definite ones (L @ L.mT of LowerCholeskyTransform).",
    "CumulativeDistributionTransform": "A distribution's cdf as a transform onto [0, 1].",
    "OneHotCategoricalStraightThrough": "A OneHotCategorical whose rsample passes the gradient of probs straight "
                                        "through the one-hot sample.",
    "CorrCholeskyTransform": "Vectors of length D(D-1)/2 onto Cholesky factors of D x D correlation matrices.",
    "CatTransform": "Transforms applied to consecutive slices of a dim, joined as torch.cat joins them.",
    "StackTransform": "Transforms applied to the slices along a dim, joined as torch.stack joins them.",
    "identity_transform": "The transform that leaves its input as it is (an empty ComposeTransform).",
    "StickBreakingTransform": "The stick-breaking transform of K - 1 reals onto the simplex of K coordinates.",
    "kl_divergence": "KL(p || q) between two distributions, by the formula registered for their classes.",
    "register_kl": "A decorator registering a function as kl_divergence for a pair of distribution classes.",
    "Constraint": "Base class of the constraints: check(value) is True where a value lies in the region.",
    "dependent": "A constraint that depends on the distribution's parameters, never checked as an argument.",
    "dependent_property": "A property that is a dependent constraint on the class (a support computed from the "
                          "parameters).",
    "is_dependent": "Whether a constraint is a dependent one.",
    "independent": "A constraint over the last reinterpreted_batch_ndims dims together.",
    "interval": "The constraint lower_bound <= x <= upper_bound.",
    "half_open_interval": "The constraint lower_bound <= x < upper_bound.",
    "greater_than": "The constraint x > lower_bound.",
    "greater_than_eq": "The constraint x >= lower_bound.",
    "less_than": "The constraint x < upper_bound.",
    "integer_interval": "The constraint: x an integer with lower_bound <= x <= upper_bound.",
    # devices
    "is_available": "Whether the accelerator is available: never in gradcli, which is PyTorch's CPU build.",
    "device_count": "How many accelerator devices there are: 0 in gradcli.",
    "is_initialized": "Whether CUDA was initialised: never in gradcli.",
    "manual_seed_all": "Seeds every CUDA device's generator: nothing to do on a CPU-only build.",
    "seed_all": "Seeds every CUDA device's generator randomly: nothing to do on a CPU-only build.",
    "synchronize": "Waits for CUDA work: fails on a CPU-only build, as PyTorch's.",
    "current_device": "The current CUDA device: fails on a CPU-only build, as PyTorch's.",
    "get_device_name": "A CUDA device's name: fails on a CPU-only build, as PyTorch's.",
    "empty_cache": "Frees cached CUDA memory: nothing to do on a CPU-only build.",
    "is_built": "Whether PyTorch was built with this backend: never in gradcli.",
    "cuda": "Moves a tensor to a CUDA device: fails on a CPU-only build, as PyTorch's.",
    "is_cuda": "Whether the tensor is on a CUDA device: never in gradcli.",
    "set_default_device": "Sets the device factories use: the CPU or 'meta' ('cuda' fails at the first tensor made).",
    "get_default_device": "The device factories use: the CPU unless set_default_device or a `with` block chose meta.",
    "set_default_dtype": "Sets the float dtype (float32 or float64) factories and Python floats give, for the "
                         "session.",
    "get_default_dtype": "The float dtype factories and Python floats give (float32 unless set_default_dtype).",
    "HalfTensor": "The legacy constructor of float16 tensors: from data, or a size (zeros here).",
    "BFloat16Tensor": "The legacy constructor of bfloat16 tensors: from data, or a size (zeros here).",
    "FloatTensor": "The legacy constructor of float32 tensors: from data, or a size (zeros here).",
    "DoubleTensor": "The legacy constructor of float64 tensors: from data, or a size (zeros here).",
    "ByteTensor": "The legacy constructor of uint8 tensors: from data, or a size (zeros here).",
    "CharTensor": "The legacy constructor of int8 tensors: from data, or a size (zeros here).",
    "ShortTensor": "The legacy constructor of int16 tensors: from data, or a size (zeros here).",
    "IntTensor": "The legacy constructor of int32 tensors: from data, or a size (zeros here).",
    "LongTensor": "The legacy constructor of int64 tensors: from data, or a size (zeros here).",
    "BoolTensor": "The legacy constructor of bool tensors: from data, or a size (zeros here).",
    "Function": "Base class of custom autograd Functions: subclasses define static forward and backward "
                "(optionally setup_context) and are called through .apply(...).",
    "once_differentiable": "Decorates a custom Function's backward: it runs without recording, and "
                           "differentiating its result again is an error.",
    "LinAlgError": "The error linear algebra functions raise for singular input.",
    "saved_tensors_hooks": "A context (`with saved_tensors_hooks(pack, unpack):`): each tensor an op saves for "
                           "backward goes through pack, and through unpack when backward reads it.",
    "allow_mutation_on_saved_tensors": "A context manager under which a tensor saved for backward may be changed in "
                                       "place: the backward pass sees the values it was saved with.",
    "save_on_cpu": "A saved_tensors_hooks context that keeps saved tensors on the CPU (where gradcli's are).",
    "disable_saved_tensors_hooks": "A context in which entering saved_tensors_hooks fails with the given message.",
    "dual_level": "A context (`with dual_level():`) for forward-mode AD: tangents live while it lasts.",
    "make_dual": "A view of the tensor carrying a tangent (forward mode); ops give their results tangents.",
    "unpack_dual": "The (primal, tangent) pair of a dual tensor; tangent is None for an ordinary one.",
    "enter_dual_level": "Starts a forward-mode level by hand (dual_level is the context form); returns 0.",
    "exit_dual_level": "Ends the forward-mode level; every tangent made in it is dropped.",
    "UnpackedDualTensor": "The named pair unpack_dual returns: .primal and .tangent.",
    "requires_grad_": "Marks the tensor (a leaf) as requiring grad, in place, and returns it.",
    "retain_grad": "Keeps .grad for this non-leaf tensor after backward.",
    "register_hook": "Registers a function called with the tensor's gradient during backward; it may return a "
                     "replacement.",
    "register_post_accumulate_grad_hook": "Registers a function called with the leaf tensor once backward has "
                                          "added into its .grad.",
    "Node": "The class of every graph node (grad_fn, AccumulateGrad, custom Functions), for isinstance.",
    "increment_version": "Marks tensors as changed in place, so nodes that saved them refuse to run.",
    "register_multi_grad_hook": "One hook over several tensors' gradients: mode 'all' calls fn with all of them "
                                "(None where none came) once this backward has computed them; 'any' with the first.",
    "detach": "A tensor sharing this one's data, cut off from the graph.",
    "requires_grad": "Whether operations on this tensor are recorded for backward.",
    "grad_fn": "The graph node that produced this tensor, or None for a leaf.",
    "is_leaf": "Whether the tensor is a leaf of the graph (made by the user, not by a recorded operation).",
    "output_nr": "Which output of its grad_fn the tensor is (0 for a leaf or a node's only result).",
    "retains_grad": "Whether retain_grad() was called on this non-leaf tensor.",
    "data": "The tensor's values as a tensor outside the graph.",
    # arithmetic
    "add": "Elementwise sum, broadcasting the shapes; `alpha` scales the second operand.",
    "sub": "Elementwise difference, broadcasting the shapes; `alpha` scales the second operand.",
    "mul": "Elementwise product, broadcasting the shapes.",
    "div": "Elementwise true division; `rounding_mode` 'trunc' or 'floor' rounds the quotient.",
    "pow": "Raises each element to the exponent (a number or a tensor).",
    "neg": "The elementwise negation.",
    "negative": "The elementwise negation.",
    "reciprocal": "1 / x for each element.",
    "floor_divide": "Elementwise division rounded towards minus infinity.",
    "remainder": "Elementwise remainder, with the sign of the divisor (Python's %).",
    "lerp": "Linear interpolation: start + weight * (end - start).",
    "addcmul": "input + value * tensor1 * tensor2, in one kernel (one rounding for the multiply-add).",
    "addcdiv": "input + value * tensor1 / tensor2, in one kernel.",
    "abs": "The absolute value of each element.",
    "absolute": "The absolute value of each element.",
    "subtract": "input - alpha * other (sub's other name).", "multiply": "input * other (mul's other name).",
    "divide": "input / other, or rounded with rounding_mode='trunc' or 'floor' (div's other name).",
    "true_divide": "input / other, without rounding (div's other name).",
    "greater": "input > other, elementwise (gt).", "greater_equal": "input >= other, elementwise (ge).",
    "less": "input < other, elementwise (lt).", "less_equal": "input <= other, elementwise (le).",
    "not_equal": "input != other, elementwise (ne).",
    "ravel": "The elements in one dimension: a view of a contiguous tensor, else of a contiguous copy.",
    "positive": "The input itself (unary +); refused for bool tensors.",
    "isposinf": "Whether each element is +inf.", "isneginf": "Whether each element is -inf.",
    "is_signed": "Whether the dtype holds negative numbers.", "is_complex": "Whether the dtype (or tensor) is complex: complex64 or complex128.",
    "imag": "The imaginary part of a complex tensor: a real view that writes through to it.",
    "angle": "The argument (phase) of each complex element, in radians.",
    "complex": "A complex tensor from a real part and an imaginary part of the same float dtype.",
    "polar": "A complex tensor from magnitudes and angles: abs * (cos(angle) + i sin(angle)).",
    "view_as_real": "A complex tensor's real view of shape (..., 2): real and imaginary parts.",
    "view_as_complex": "The complex view of a float tensor whose last dimension is 2.",
    "cfloat": "The tensor as complex64.", "cdouble": "The tensor as complex128.",
    "to_real": "The real dtype of a complex dtype's parts (complex64 -> float32).",
    "to_complex": "The complex dtype of a float dtype's precision (float32 -> complex64).",
    "is_nonzero": "Whether a one-element tensor is not zero (its truth value).",
    "is_same_size": "Whether two tensors have the same shape.",
    "real": "The real part: a real tensor itself; a complex one's a real view that writes through.",
    "new": "The legacy constructor in this tensor's dtype: x.new(2, 3), x.new([1, 2]), x.new().",
    "float_power": "input ** exponent computed in float64 (the base and a tensor exponent cast first).",
    "inner": "The inner product over the last dims (a product for a 0-d operand).",
    "diagflat": "A 2-d tensor with the flattened input on its diagonal (offset: above or below).",
    "sum_to_size": "The sum down to a shape the tensor broadcasts from (the tensor itself when equal).",
    "bitwise_and": "a & b, elementwise, for integer and bool tensors.", "bitwise_or": "a | b, elementwise.",
    "bitwise_xor": "a ^ b, elementwise.", "bitwise_not": "~a, elementwise.",
    "bitwise_left_shift": "a << b, elementwise.", "bitwise_right_shift": "a >> b, elementwise.",
    "sign": "-1, 0 or 1 for each element.",
    "sgn": "The sign of each element.",
    "square": "Each element squared.",
    "sqrt": "The square root of each element.",
    "rsqrt": "1 / sqrt(x) for each element.",
    "exp": "e raised to each element.",
    "exp2": "2 raised to each element.",
    "expm1": "exp(x) - 1, accurate for small x.",
    "log": "The natural logarithm of each element.",
    "log2": "The base-2 logarithm of each element.",
    "log10": "The base-10 logarithm of each element.",
    "log1p": "log(1 + x), accurate for small x.",
    "sin": "The sine of each element (radians).", "cos": "The cosine of each element (radians).",
    "tan": "The tangent of each element (radians).",
    "asin": "The inverse sine of each element.", "acos": "The inverse cosine of each element.",
    "atan": "The inverse tangent of each element.",
    "atan2": "The angle of the point (other, input): the inverse tangent of input / other, in the right quadrant.",
    "asinh": "The inverse hyperbolic sine of each element.",
    "acosh": "The inverse hyperbolic cosine of each element (NaN below 1).",
    "atanh": "The inverse hyperbolic tangent of each element (infinite at -1 and 1, NaN beyond).",
    "sinh": "The hyperbolic sine of each element.", "cosh": "The hyperbolic cosine of each element.",
    "tanh": "The hyperbolic tangent of each element.",
    "sigmoid": "1 / (1 + exp(-x)) for each element.",
    "relu": "max(x, 0) for each element.",
    "erf": "The error function of each element.",
    "erfc": "The complementary error function 1 - erf(x) of each element, accurate where erf is near 1.",
    "erfinv": "The inverse error function of each element (-1 to 1 onto the real line).",
    "lgamma": "The log of the absolute value of the gamma function of each element.",
    "gammaln": "The log of the absolute value of the gamma function of each element; another name for lgamma.",
    "digamma": "The digamma function (the derivative of lgamma) of each element.",
    "psi": "The digamma function (the derivative of lgamma) of each element; another name for digamma.",
    "polygamma": "The n-th derivative of the digamma function of each element (polygamma(0, x) is digamma).",
    "mvlgamma": "The log of the multivariate gamma function of dimension p of each element (each must be > (p - 1) / 2).",
    "multigammaln": "The log of the multivariate gamma function of dimension p; another name for mvlgamma.",
    "i0": "The modified Bessel function of the first kind of order 0 of each element.",
    "i0e": "The exponentially scaled modified Bessel function of order 0: exp(-|x|) * i0(x).",
    "i1": "The modified Bessel function of the first kind of order 1 of each element.",
    "i1e": "The exponentially scaled modified Bessel function of order 1: exp(-|x|) * i1(x).",
    "entr": "The elementwise entropy term -x log(x) (0 at 0, -inf below 0).",
    # torch.fft
    "fft": "The discrete Fourier transform along one dim (n= pads or cuts it first; norm='backward', 'ortho' or "
           "'forward' says which direction divides by n); a real input gives a complex result.",
    "ifft": "The inverse discrete Fourier transform along one dim (divided by n unless norm= says otherwise).",
    "fft2": "The 2-d discrete Fourier transform over the last two dims (s= sizes, dim= other dims).",
    "ifft2": "The inverse 2-d discrete Fourier transform over the last two dims.",
    "fftn": "The n-d discrete Fourier transform over the dims given (all of them by default).",
    "ifftn": "The inverse n-d discrete Fourier transform over the dims given (all of them by default).",
    "rfft": "The Fourier transform of a real signal along one dim: its n // 2 + 1 non-negative frequencies.",
    "irfft": "The real signal of a onesided spectrum (rfft's inverse); n= is the output length, 2 * (size - 1) "
             "by default.",
    "rfft2": "rfft over the last two dims: the last one halved to n // 2 + 1 frequencies.",
    "irfft2": "irfft over the last two dims (the inverse of rfft2; s= gives the output sizes).",
    "rfftn": "rfft over the dims given (all of them by default), the last one halved.",
    "irfftn": "irfft over the dims given (all of them by default): the inverse of rfftn.",
    "hfft": "The real Fourier transform of a Hermitian-symmetric signal given by its first half (n= output length).",
    "ihfft": "The inverse of hfft: the first n // 2 + 1 entries of the inverse transform of a real signal.",
    "hfft2": "hfft over the last two dims.", "ihfft2": "ihfft over the last two dims.",
    "hfftn": "hfft over the dims given (all of them by default).",
    "ihfftn": "ihfft over the dims given (all of them by default).",
    "fftfreq": "The sample frequencies of an n-point transform with sample spacing d: 0, 1, ..., then the negative "
               "ones, divided by n * d.",
    "rfftfreq": "The non-negative sample frequencies of an n-point rfft with sample spacing d.",
    "fftshift": "Rolls the zero frequency to the middle of the dims given (all of them by default).",
    "ifftshift": "Undoes fftshift: rolls the zero frequency back to index 0.",
    "stft": "The short-time Fourier transform of a 1-d signal or a batch of them: frames of n_fft samples, "
            "hop_length apart (n_fft // 4), each times the window (a tensor of win_length points, zero-padded to "
            "n_fft in the middle; none: ones, with a warning) and transformed; center=True pads the signal by "
            "n_fft // 2 first (pad_mode, 'reflect'). Gives (freq, frames) complex values: return_complex=True is "
            "required for a real signal.",
    "istft": "The inverse of stft: each frame's inverse transform, times the window, overlap-added and divided by "
             "the overlap-added squared window (which must not vanish), trimmed as centred or to `length`.",
    "ndtr": "The standard normal cumulative distribution function, (1 + erf(x / sqrt(2))) / 2.",
    "ndtri": "The inverse of the standard normal cumulative distribution function (-inf at 0, inf at 1, nan outside).",
    "log_ndtr": "The log of the standard normal cumulative distribution function, accurate far into the left tail.",
    "erfcx": "The scaled complementary error function exp(x^2) * erfc(x) of each element.",
    "zeta": "The Hurwitz zeta function zeta(x, q) = sum over k of (k + q)^-x; a number on either side; the gradient "
            "for q only, as in PyTorch.",
    "igamma": "The regularized lower incomplete gamma function P(a, x) of two tensors (the gradient for x only, as in "
              "PyTorch).",
    "igammac": "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) of two tensors (the gradient for "
               "x only).",
    "gammainc": "The regularized lower incomplete gamma function P(a, x); another name for igamma.",
    "gammaincc": "The regularized upper incomplete gamma function Q(a, x); another name for igammac.",
    "bessel_j0": "The Bessel function of the first kind of order 0 of each element (no gradient, as in PyTorch).",
    "bessel_j1": "The Bessel function of the first kind of order 1 of each element (no gradient).",
    "bessel_y0": "The Bessel function of the second kind of order 0 of each element (-inf at 0, nan below; no gradient).",
    "bessel_y1": "The Bessel function of the second kind of order 1 of each element (-inf at 0, nan below; no gradient).",
    "modified_bessel_i0": "The modified Bessel function of the first kind of order 0 of each element (no gradient).",
    "modified_bessel_i1": "The modified Bessel function of the first kind of order 1 of each element (no gradient).",
    "modified_bessel_k0": "The modified Bessel function of the second kind of order 0 of each element (inf at 0, nan below; "
                          "no gradient).",
    "modified_bessel_k1": "The modified Bessel function of the second kind of order 1 of each element (inf at 0, nan below; "
                          "no gradient).",
    "scaled_modified_bessel_k0": "exp(x) * modified_bessel_k0(x) for each element (no gradient).",
    "scaled_modified_bessel_k1": "exp(x) * modified_bessel_k1(x) for each element (no gradient).",
    "spherical_bessel_j0": "The spherical Bessel function of the first kind of order 0, sin(x) / x (no gradient).",
    "airy_ai": "The Airy function Ai of each element (no gradient).",
    "chebyshev_polynomial_t": "The Chebyshev polynomial of the first kind T_n(x); x or n may be a number, n is truncated to "
                              "an integer (no gradient).",
    "chebyshev_polynomial_u": "The Chebyshev polynomial of the second kind U_n(x) (no gradient).",
    "chebyshev_polynomial_v": "The Chebyshev polynomial of the third kind V_n(x) (no gradient).",
    "chebyshev_polynomial_w": "The Chebyshev polynomial of the fourth kind W_n(x) (no gradient).",
    "shifted_chebyshev_polynomial_t": "T_n(2x - 1), the Chebyshev polynomial of the first kind on [0, 1] (no gradient).",
    "shifted_chebyshev_polynomial_u": "U_n(2x - 1), the Chebyshev polynomial of the second kind on [0, 1] (no gradient).",
    "shifted_chebyshev_polynomial_v": "V_n(2x - 1), the Chebyshev polynomial of the third kind on [0, 1] (no gradient).",
    "shifted_chebyshev_polynomial_w": "W_n(2x - 1), the Chebyshev polynomial of the fourth kind on [0, 1] (no gradient).",
    "hermite_polynomial_h": "The physicists' Hermite polynomial H_n(x) (nan past degree 128 in float32, 512 in float64; "
                            "no gradient).",
    "hermite_polynomial_he": "The probabilists' Hermite polynomial He_n(x) (nan past degree 128 in float32, 512 in float64; "
                             "no gradient).",
    "laguerre_polynomial_l": "The Laguerre polynomial L_n(x) (no gradient).",
    "legendre_polynomial_p": "The Legendre polynomial P_n(x) (no gradient).",
    "binomial": "Samples from binomial distributions of the given counts and probabilities (PyTorch's CPU sampler).",
    "sinc": "sin(pi x) / (pi x) for each element (1 at 0).",
    "logit": "log(p / (1 - p)) for each element, p first clamped to [eps, 1 - eps] when eps is given.",
    "expit": "The logistic sigmoid 1 / (1 + exp(-x)); another name for sigmoid.",
    "xlogy": "x * log(y) elementwise, 0 where x is 0 (nan where y is nan); either side may be a number.",
    "xlog1py": "x * log1p(y) elementwise, 0 where x is 0; either side may be a number.",
    "logaddexp": "log(exp(x) + exp(y)) elementwise, computed without overflow.",
    "logaddexp2": "log2(2**x + 2**y) elementwise, computed without overflow.",
    "hypot": "sqrt(x**2 + y**2) elementwise, without overflow or underflow in the squares.",
    "copysign": "|input| with the sign of `other` (a tensor or a number), elementwise.",
    "signbit": "True where an element's sign bit is set (negative numbers, -0.0, -nan).",
    "nan_to_num": "nan, +inf and -inf replaced by `nan`, `posinf` and `neginf` (by default 0 and the dtype's "
                  "largest and lowest values).",
    "clamp": "Limits each element to [min, max] (either may be omitted).",
    "clip": "Limits each element to [min, max]; another name for clamp.",
    "clamp_min": "Limits each element from below.", "clamp_max": "Limits each element from above.",
    "maximum": "The elementwise larger of two tensors.", "minimum": "The elementwise smaller of two tensors.",
    "where": "Picks from `input` where the condition holds and from `other` elsewhere (one argument: the indices "
             "of the nonzero elements).",
    "floor": "Rounds each element down.", "ceil": "Rounds each element up.",
    "round": "Rounds each element to the nearest integer (halves to even), or to `decimals` places.",
    "trunc": "Rounds each element towards zero.", "fix": "Rounds each element towards zero.",
    "frac": "The fractional part of each element.",
    "masked_fill": "Replaces the elements where `mask` is True with `value`.",
    "fill_": "Fills the tensor with a value, in place.",
    "zero_": "Fills the tensor with 0, in place.",
    "fill": "A new tensor shaped like `input`, every element `value` (a number or a 0-d tensor).",
    "as_tensor": "`data` as a tensor: a tensor of the given dtype is returned itself (another dtype: converted); "
                 "numbers and nested lists are read as torch.tensor reads them.",
    "asarray": "`obj` as a tensor, sharing a tensor's data unless `copy=True` or another dtype asks for a copy; "
               "`requires_grad` (by default the tensor's own) is set on the result.",
    "scalar_tensor": "A 0-d tensor holding the number `s` (in the default float dtype unless `dtype` is given).",
    "broadcast_tensors": "The tensors expanded to the shape they broadcast to (views; a tensor of that shape is "
                         "returned itself).",
    "broadcast_shapes": "The shape tensors of the given shapes broadcast to, as a torch.Size.",
    "result_type": "The dtype an elementwise operation on the two operands (tensors or numbers) gives.",
    "promote_types": "The dtype an operation on tensors of the two dtypes computes in.",
    "can_cast": "Whether type promotion may cast `from_` to `to` (never a float to an integer, nor to bool).",
    "rsub": "other - alpha * input.",
    "renorm": "Each slice along `dim` whose p-norm exceeds maxnorm, scaled down to that norm.",
    "dist": "The p-norm of input - other (broadcast together); p = 2 by default, 0, inf and -inf too.",
    "ldexp": "input * 2 ** other (exact for an integer exponent).",
    "frexp": "The (mantissa, exponent) pair with input = mantissa * 2 ** exponent, |mantissa| in [0.5, 1); the "
             "exponent int32.",
    "nextafter": "The next floating-point value after input towards other.",
    "isreal": "True where an element is real: everywhere, for gradcli's tensors.",
    "fmax": "The elementwise maximum, ignoring NaN (NaN only where both are NaN).",
    "fmin": "The elementwise minimum, ignoring NaN (NaN only where both are NaN).",
    "conj": "The complex conjugate, is_conj() True (PyTorch's is a lazy view; gradcli's a read-only copy); a real "
            "tensor is its own.",
    "conj_physical": "The complex conjugate, computed: a real tensor is its own (the tensor itself).",
    "resolve_conj": "The tensor with its conjugate bit resolved (a real tensor: itself).",
    "resolve_neg": "The tensor with its negative bit resolved (a real tensor: itself).",
    "is_conj": "Whether the tensor's conjugate bit is set (never, for a real tensor).",
    "is_neg": "Whether the tensor's negative bit is set (never, for a real tensor).",
    "get_device": "The device index: -1 for the CPU.",
    "narrow_copy": "narrow's slice as a new tensor (not a view).",
    "unsafe_chunk": "chunk's pieces, not tracked as views (an in-place change of one is not checked).",
    "unsafe_split": "split's pieces, not tracked as views (an in-place change of one is not checked).",
    "unsafe_split_with_sizes": "split_with_sizes' pieces, not tracked as views.",
    "storage_offset": "The position of the first element in the storage the tensor views, in elements.",
    "data_ptr": "The address of the first element: virtual in gradcli, equal for tensors that share memory.",
    "untyped_storage": "The bytes the tensor's memory holds, with their address and size (read-only in gradcli).",
    "storage": "The tensor's memory as elements of its dtype (deprecated in PyTorch, which warns once).",
    "is_set_to": "Whether two tensors use the same memory with the same offset, sizes and strides.",
    "empty_strided": "A new tensor of the given size laid out with the given strides (those of a contiguous "
                     "layout with its dims in some order); gradcli fills it with 0.",
    "hann_window": "The Hann window of `window_length` points: 0.5 - 0.5 cos(2 pi k / (N - 1)), N one more than "
                   "the length when periodic (the default).",
    "hamming_window": "The Hamming window: alpha - beta cos(2 pi k / (N - 1)) (N one more than the length when "
                      "periodic).",
    "bartlett_window": "The Bartlett (triangular) window: rising from 0 to 1 and back (N one more than the length "
                       "when periodic).",
    "blackman_window": "The Blackman window: 0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1)).",
    "kaiser_window": "The Kaiser window: i0(beta sqrt(1 - ((k - a) / a)^2)) / i0(beta), a = (N - 1) / 2.",
    "copy_": "Copies the values of `src` into this tensor, in place.",
    "uniform_": "Fills the tensor with uniform random numbers, in place.",
    "normal_": "Fills the tensor with normal random numbers, in place.",
    "random_": "Fills the tensor with random integers, in place.",
    # comparison and logic
    "eq": "Elementwise ==, as a bool tensor.", "ne": "Elementwise !=, as a bool tensor.",
    "lt": "Elementwise <, as a bool tensor.", "le": "Elementwise <=, as a bool tensor.",
    "gt": "Elementwise >, as a bool tensor.", "ge": "Elementwise >=, as a bool tensor.",
    **{f"{name}_": f"In place: 1 where this tensor {sign} other, else 0, kept in this tensor's dtype (its gradient "
                   "is zero)." for names, sign in ((("eq",), "=="), (("ne", "not_equal"), "!="),
                                                   (("lt", "less"), "<"), (("le", "less_equal"), "<="),
                                                   (("gt", "greater"), ">"), (("ge", "greater_equal"), ">="))
       for name in names},
    "logical_and": "Elementwise logical and, as a bool tensor.", "logical_or": "Elementwise logical or.",
    "logical_xor": "Elementwise logical exclusive or.", "logical_not": "Elementwise logical not.",
    "isnan": "True where an element is nan.", "isinf": "True where an element is infinite.",
    "isclose": "True where |input - other| <= atol + rtol * |other| (or both equal, or both nan with equal_nan).",
    "allclose": "Whether every element of isclose(input, other, ...) is True, as a Python bool.",
    "equal": "Whether both tensors have the same shape and the same values, as a Python bool.",
    "assert_close": "Fails with PyTorch's AssertionError when actual and expected are not close "
                    "(rtol and atol by dtype unless given).",
    "isfinite": "True where an element is neither infinite nor nan.",
    "all": "Whether every element (along `dim`, if given) is true.",
    "any": "Whether some element (along `dim`, if given) is true.",
    # reductions
    "sum": "The sum of the elements, of all of them or along `dim` (kept as size 1 with keepdim=True).",
    "mean": "The mean of the elements, of all of them or along `dim`.",
    "prod": "The product of the elements, of all of them or along `dim`.",
    "std": "The standard deviation of the elements (Bessel-corrected unless correction=0).",
    "var": "The variance of the elements (Bessel-corrected unless correction=0).",
    "norm": "A vector or matrix norm (2-norm of all elements by default).",
    "vector_norm": "The vector p-norm of the elements.", "matrix_norm": "A matrix norm (Frobenius by default).",
    "max": "The largest element; along `dim`, the values and their indices; with a tensor, the elementwise maximum.",
    "min": "The smallest element; along `dim`, the values and their indices; with a tensor, the elementwise minimum.",
    "amax": "The largest values along the given dims.", "amin": "The smallest values along the given dims.",
    "argmax": "The index of the largest element (flattened, or along `dim`).",
    "argmin": "The index of the smallest element (flattened, or along `dim`).",
    "sort": "The values along `dim` in order (descending=True: largest first) and the indices they came from.",
    "argsort": "The indices that sort the values along `dim`.", "msort": "The values sorted along dim 0.",
    "topk": "The k largest (largest=False: smallest) values along `dim` and their indices.",
    "median": "The lower median of all elements; along `dim`, the medians and their indices.",
    "nanmedian": "median of the elements that are not nan (nan only where every one is).",
    "kthvalue": "The k-th smallest value along `dim` (default the last) and its index.",
    "mode": "The most frequent value along `dim` (the smallest among equally frequent ones) and an index of it.",
    "aminmax": "The smallest and the largest values at once (over `dim` if given), as (min, max).",
    "quantile": "The q-th quantiles (q a float or a 1-d tensor in [0, 1]) of all elements or along `dim`, "
                "between data points as `interpolation` says (linear, lower, higher, midpoint, nearest).",
    "nanquantile": "quantile of the elements that are not nan.",
    "cummax": "The running maximum along `dim` and the index each came from.",
    "cummin": "The running minimum along `dim` and the index each came from.",
    "logcumsumexp": "log(cumsum(exp(x))) along `dim`, computed without overflow.",
    "histc": "A histogram of the elements: counts in `bins` equal bins between min and max (the data's range "
             "when they are equal); elements outside are ignored.",
    "histogramdd": "A histogram of the rows of the input (one column per dim): torch.return_types.histogramdd(hist, "
                   "bin_edges), with `bins` one count, a count per dim or a tensor of edges per dim; `range`, "
                   "`weight` and `density` as histogram's.",
    "histogram": "A histogram of the flattened input: torch.return_types.histogram(hist, bin_edges), with `bins` "
                 "equal bins over `range` (the data's range by default) or the edges in a tensor; `weight` adds "
                 "weights instead of 1s, `density` divides by the total and the bin widths.",
    "cov": "The covariance matrix of the rows (variables) over the columns (observations), optionally weighted "
           "by fweights and aweights, divided by the weights' sum less `correction`.",
    "corrcoef": "The Pearson correlation coefficients of the rows (variables) over the columns (observations).",
    "trapezoid": "The integral of y along `dim` by the trapezoid rule, at sample points x or spacing dx.",
    "trapz": "trapezoid under its older name.",
    "cumulative_trapezoid": "The running integral of y along `dim` by the trapezoid rule (one value fewer than y).",
    "isin": "Whether each element is among test_elements (invert=True: whether it is not), as a bool tensor.",
    "nonzero": "The positions of the nonzero elements, one row each (as_tuple=True: one tensor per dim).",
    "argwhere": "The positions of the nonzero elements, one row each.",
    "count_nonzero": "The number of nonzero elements, over all of them or along the given dims.",
    "unique": "The distinct values in ascending order (or distinct slices along `dim`), with each element's "
              "index among them and their counts when asked.",
    "unique_consecutive": "Each run of equal consecutive values (or slices along `dim`) kept once.",
    "bincount": "How often each of 0, 1, ..., max occurs in a 1-d integer tensor (or the sum of its `weights`).",
    "searchsorted": "For each value, the index where it would go in the sorted boundaries (right=True: after "
                    "equal ones).",
    "bucketize": "For each value, the index of the bucket of the 1-d sorted boundaries it falls in.",
    "logsumexp": "log(sum(exp(x))) along `dim`, computed without overflow.",
    "nansum": "The sum of the elements that are not nan, of all of them or along `dim`.",
    "nanmean": "The mean of the elements that are not nan, of all of them or along `dim`.",
    "var_mean": "The variance and the mean of the elements at once, as a tuple (Bessel-corrected unless "
                "correction=0).",
    "std_mean": "The standard deviation and the mean of the elements at once, as a tuple.",
    "cdist": "The p-norm distance between each row of x1 and each row of x2 (batch dims broadcast).",
    "cumsum": "Running sums along `dim`.", "cumprod": "Running products along `dim`.",
    "softmax": "exp(x) / sum(exp(x)) along `dim`: values in (0, 1) that sum to 1.",
    "log_softmax": "The logarithm of softmax along `dim`, computed stably.",
    "numel": "The number of elements.", "nelement": "The number of elements.",
    # shapes and views
    "reshape": "The same elements in a new shape (a view when possible); -1 stands for the size that fits.",
    "view": "The same storage seen with a new shape; -1 stands for the size that fits.",
    "dim_order": "The dims from outermost to innermost in memory (0, 1, ... for a contiguous tensor); "
                 "ambiguity_check=True (or a list of memory formats) refuses a tensor whose order is not unique.",
    "resize_": "Gives the tensor a new shape in place, its elements laid out contiguously from where it starts in "
               "its storage, which grows when the shape needs more (new elements are 0 in gradcli, uninitialised "
               "in PyTorch); refused for a tensor that requires grad.",
    "resize_as_": "Gives the tensor the shape of `the_template` in place, as resize_ does.",
    "resize": "Deprecated: the elements in the given shape, which must hold as many (a view of a contiguous tensor; "
              "ResizeBackward).",
    "resize_as": "Deprecated: tensor.resize(other.size()).",
    "view_as": "A view with the shape of `other`.", "reshape_as": "The elements in the shape of `other`.",
    "flatten": "The elements of dims start_dim .. end_dim in one dimension.",
    "unflatten": "Splits one dimension into the given sizes.",
    "squeeze": "Removes dimensions of size 1 (all of them, or those given).",
    "unsqueeze": "Inserts a dimension of size 1 at `dim`.",
    "t": "The transpose of a matrix (a 1-d tensor is returned as it is).",
    "T": "The tensor with its dimensions reversed.", "mT": "The transpose of the last two dimensions.",
    "H": "The conjugate transpose of a matrix.", "mH": "The conjugate transpose of the last two dimensions.",
    "adjoint": "The conjugate transpose of the last two dimensions.",
    "transpose": "Swaps two dimensions.", "swapaxes": "Swaps two dimensions.", "swapdims": "Swaps two dimensions.",
    "permute": "Reorders the dimensions.", "movedim": "Moves dimensions to new positions.",
    "tile": "Repeats the tensor along each dimension (leading ones pad the list).",
    "select": "The slice at `index` along `dim`, that dimension removed (as x[:, index]).",
    "moveaxis": "Moves dimensions to new positions.",
    "expand": "A view repeating size-1 dimensions to a larger shape, without copying.",
    "expand_as": "expand to the shape of `other`.", "broadcast_to": "A view broadcast to the given shape.",
    "repeat": "Tiles the tensor the given number of times along each dimension.",
    "cat": "Joins tensors along an existing dimension.", "concat": "Joins tensors along an existing dimension.",
    "concatenate": "Joins tensors along an existing dimension.",
    "stack": "Joins tensors along a new dimension.", "hstack": "Joins tensors column-wise.",
    "vstack": "Joins tensors row-wise.", "row_stack": "Joins tensors row-wise.",
    "split": "Splits into pieces of the given size (or sizes) along `dim`.",
    "split_with_sizes": "Splits into pieces of the given sizes along `dim`.",
    "chunk": "Splits into the given number of pieces along `dim`.",
    "tensor_split": "Splits into `sections` views along `dim` as even as can be (the first ones one longer), or "
                    "at the given indices.",
    "hsplit": "tensor_split along dim 1 (dim 0 of a vector); a number of sections must divide the dim.",
    "vsplit": "tensor_split along dim 0 of a tensor of two or more dims.",
    "dsplit": "tensor_split along dim 2 of a tensor of three or more dims.",
    "atleast_1d": "The tensor (or each of them) with at least 1 dim, 0-d ones reshaped to one element.",
    "atleast_2d": "The tensor (or each of them) with at least 2 dims, leading ones added.",
    "atleast_3d": "The tensor (or each of them) with at least 3 dims (a vector becomes (1, n, 1)).",
    "column_stack": "Joins tensors as columns: vectors become (n, 1), then hstack.",
    "dstack": "Joins tensors depth-wise: atleast_3d of each, then cat along dim 2.",
    "cross": "The cross product of 3-vectors along `dim` (torch.cross without dim: the first dim of length 3).",
    "select_scatter": "A copy of the input with src as its slice at `index` along `dim`.",
    "slice_scatter": "A copy of the input with src as its slice start:end:step along `dim`.",
    "diagonal_scatter": "A copy of the input with src as its diagonal `offset` of dims dim1, dim2.",
    "deg2rad": "Angles in degrees to radians (times pi / 180).", "rad2deg": "Angles in radians to degrees.",
    "heaviside": "The Heaviside step: 0 below zero, 1 above, `values` where the input is zero.",
    "gcd": "The greatest common divisor of integer tensors, elementwise.",
    "lcm": "The least common multiple of integer tensors, elementwise.",
    "masked_select": "The elements where the (broadcast) boolean mask is true, as a 1-d tensor.",
    "combinations": "The r-element combinations of a vector's elements as rows (with_replacement=True: with repeats).",
    "vander": "The Vandermonde matrix of a vector: its powers as columns, highest first unless increasing=True "
              "(torch.linalg.vander: increasing, along a new last dim, of any batch).",
    "unfold": "Tensor.unfold: a view of every window of `size` elements along `dimension`, `step` apart, as a new "
              "last dim; F.unfold: each sliding block of an image batch as a column (im2col).",
    "fold": "Columns of sliding blocks summed back into images (col2im): F.unfold's inverse where blocks overlap "
            "once.",
    "unbind": "The slices along `dim`, as a tuple.",
    "flip": "Reverses the order of elements along the given dims.", "fliplr": "Reverses the columns.",
    "flipud": "Reverses the rows.", "roll": "Shifts elements along dims, wrapping around.",
    "narrow": "A view of `length` elements from `start` along `dim`.",
    "gather": "Picks elements along `dim` at the positions in `index`.",
    "scatter": "A copy with `src`'s elements (or one `value`) written along `dim` at the positions in `index` "
               "(reduce='add' or 'multiply' folds them in instead).",
    "scatter_add": "A copy with `src`'s elements added along `dim` at the positions in `index`.",
    "index_add": "A copy with alpha times `source`'s slices added along `dim` at the indices in `index`.",
    "index_fill": "A copy with the slices along `dim` at the indices in `index` set to `value`.",
    "index_copy": "A copy with `source`'s slices written along `dim` at the indices in `index` (the last of a "
                  "repeated index wins).",
    "index_put": "A copy with `values` written at the places a tuple of index tensors (or masks) picks, as "
                 "`x[indices] = values` (accumulate=True adds them).",
    "index_reduce": "A copy with `source`'s slices folded along `dim` into the slices at `index` by reduce='prod', "
                    "'mean', 'amax' or 'amin' (include_self=False: leaving the slices' own values out).",
    "scatter_reduce": "A copy with `src`'s elements folded along `dim` into the positions in `index` by "
                      "reduce='sum', 'prod', 'mean', 'amax' or 'amin' (include_self=False: without self's values).",
    "masked_scatter": "A copy with `source`'s elements written, in order, where the (broadcast) boolean mask is "
                      "true.",
    "take": "The elements at flat positions `index` of the input read as one vector, in the index's shape.",
    "put": "A copy with `source`'s elements written at flat positions `index` (accumulate=True adds them).",
    "fill_diagonal_": "Sets the main diagonal (all dims equal) to `fill_value` in place; wrap=True restarts it "
                      "below a tall matrix's first square.",
    "unravel_index": "Flat indices as a tuple of coordinate tensors, one per dim of `shape`.",
    "take_along_dim": "Picks elements along `dim` at `indices`, the two broadcast to each other (no dim: from "
                      "the flattened input).",
    "repeat_interleave": "Each element (or slice along `dim`) repeated `repeats` times; a tensor of counts alone "
                         "gives the indices such a repeat takes.",
    "diff": "The n-th forward difference along `dim` (prepend and append put at the ends first).",
    "meshgrid": "Coordinate grids from 1-d tensors, indexing='ij' (matrix) or 'xy' (Cartesian).",
    "cartesian_prod": "Every combination of the inputs' elements, one per row.",
    "block_diag": "A matrix with the inputs down its diagonal and zeros elsewhere.",
    "rot90": "The tensor turned a quarter k times in the plane of `dims`, from the first towards the second.",
    "pixel_shuffle": "(*, C r^2, H, W) to (*, C, H r, W r): each pixel's r x r channels spread over an r x r block.",
    "pixel_unshuffle": "pixel_shuffle's inverse: (*, C, H r, W r) to (*, C r^2, H, W).",
    "PixelShuffle": "pixel_shuffle by upscale_factor as a module (sub-pixel upsampling).",
    "Unfold": "F.unfold as a module: each sliding block of an image batch as a column (im2col).",
    "Fold": "F.fold as a module: columns of sliding blocks summed back into images (col2im).",
    "PixelUnshuffle": "pixel_unshuffle by downscale_factor as a module.",
    "index_select": "The slices along `dim` at the given indices.",
    "tril": "The lower triangle of a matrix, zeros above.", "triu": "The upper triangle of a matrix, zeros below.",
    "diag": "A 1-d tensor as a diagonal matrix, or a matrix's diagonal.",
    "diagonal": "A view of a diagonal of the tensor.",
    "diag_embed": "Matrices with the last dimension of the input on their diagonals.",
    "contiguous": ("The tensor with its elements laid out in order, or in memory_format= (itself when they already "
                   "are)."),
    "is_contiguous": "Whether the elements are laid out in order (or in memory_format=, e.g. torch.channels_last).",
    "stride": "The step in memory, in elements, from one index to the next along each dim (or along `dim`).",
    # linear algebra
    "matmul": "The matrix product, with the rules for 1-d and batched operands (the @ operator).",
    "mm": "The product of two matrices.", "bmm": "Batched matrix products of two 3-d tensors.",
    "mv": "The product of a matrix and a vector.", "dot": "The dot product of two 1-d tensors.",
    "vdot": "The dot product of two 1-d tensors (conjugating the first).",
    "outer": "The outer product of two vectors.", "ger": "The outer product of two vectors.",
    "einsum": "A sum of products over indices named in an equation such as 'ij,jk->ik'.",
    "tensordot": "Sums the products of `a` and `b` over the given dims (the last `dims` of a with the first of b).",
    "kron": "The Kronecker product: each element of `input` times the whole of `other`, as blocks.",
    "det": "The determinant of a square matrix.", "inverse": "The inverse of a square matrix.",
    "inv": "The inverse of a square matrix.",
    "solve": "The solution X of A X = B (torch.solve and Tensor.solve: removed from PyTorch, its RuntimeError).",
    "cholesky": "The Cholesky factor L (lower, or upper=True: U) of a symmetric positive-definite matrix, A = L L^T.",
    "cholesky_inverse": "The inverse of L L^T (upper=True: U^T U) from its triangular Cholesky factor.",
    "solve_triangular": "The solution X of A X = B (left=False: X A = B) for triangular A (upper= says which triangle).",
    "solve_ex": "linalg.solve with an info tensor (0, or the index of a zero pivot) instead of an error for a "
                "singular matrix (check_errors=True: the error).",
    "inv_ex": "linalg.inv with an info tensor (0, or the index of a zero pivot) instead of an error for a singular "
              "matrix (check_errors=True: the error).",
    "cholesky_ex": "linalg.cholesky with an info tensor (0, or the order of the first leading minor that is not "
                   "positive-definite) instead of an error (check_errors=True: the error).",
    "lu_factor": "The LU factorisation with partial pivoting packed in one matrix, with its 1-based int32 pivots "
                 "(torch.return_types.linalg_lu_factor).",
    "lu_factor_ex": "linalg.lu_factor with an info tensor (0, or the index of a zero pivot) instead of an error.",
    "ldl_factor": "The Bunch-Kaufman factorisation of a symmetric matrix, A = P L D L^T P^T: LD (L and the 1 x 1 / "
                  "2 x 2 blocks of D packed, as LAPACK sytrf) and its int32 pivots.",
    "ldl_factor_ex": "linalg.ldl_factor with an info tensor (0, or the index of a zero pivot) instead of an error.",
    "ldl_solve": "The solution X of A X = B from ldl_factor's LD and pivots (sytrs).",
    "lu": "The LU factorisation A = P L U (torch.lu: the packed factors and pivots, deprecated).",
    "lu_solve": "The solution X of A X = B from A's packed LU factors and pivots (left=, adjoint= for X A = B, "
                "A^T X = B; torch.lu_solve(B, LU, pivots): deprecated).",
    "lu_unpack": "P, L and U from packed LU factors and pivots (unpack_data=, unpack_pivots= to skip either).",
    "cholesky_solve": "The solution X of A X = B from A's Cholesky factor L (upper=True: U), A = L L^T.",
    "vecdot": "The dot products of x and y along dim (broadcast; two vectors: their dot product).",
    "cond": "The condition number of a matrix in the norm p (None, 2, -2: by singular values; 1, -1, inf, -inf, "
            "'fro', 'nuc': norm(A) * norm(A^-1)).",
    "tensorinv": "The inverse of a tensor seen as a square matrix (the first `ind` dims as rows), reshaped back.",
    "tensorsolve": "The X with tensordot(A, X, X.ndim) = B (A's dims in `dims` moved last first).",
    "symeig": "Removed from PyTorch (use torch.linalg.eigh): raises PyTorch's RuntimeError.",
    "lstsq": "The least-squares solution of A X = B with the residuals, rank and singular values its driver "
             "fills (torch.lstsq: removed from PyTorch, its RuntimeError).",
    "householder_product": "The product of Householder reflectors (vectors below the diagonal of input, scales tau): "
                           "Q's first n columns.",
    "orgqr": "The product of Householder reflectors from geqrf (torch.linalg.householder_product).",
    "ormqr": "Q other or other Q (left=, transpose= for Q^T) for Q the product of Householder reflectors from geqrf.",
    "geqrf": "A QR factorisation as LAPACK stores it: R on and above the diagonal, Householder vectors below, and "
             "their scales tau.",
    "triangular_solve": "The solution of op(A) X = b for triangular A with a copy of A (deprecated: "
                        "torch.linalg.solve_triangular).",
    "matrix_power": "A square matrix to an integer power n (n = 0: the identity; n < 0: a power of the inverse).",
    "multi_dot": "The product of a list of matrices, multiplied in the cheapest order (a first or last 1-d tensor "
                 "as a vector).",
    "chain_matmul": "The product of the given matrices (deprecated: torch.linalg.multi_dot).",
    "slogdet": "The sign and the log of the absolute value of a square matrix's determinant (sign, logabsdet).",
    "svd": "The singular value decomposition A = U diag(S) Vh (torch.svd: U, S, V), singular values descending.",
    "svdvals": "The singular values of a matrix, descending.",
    "svd_lowrank": ("An approximate rank-q SVD (U, S, V, with A ~ U diag(S) V^T) from random projections refined by "
                    "niter power iterations; M is subtracted from A first."),
    "pca_lowrank": ("Principal components of the rows of A (centred unless center=False) by svd_lowrank: V's columns "
                    "are the directions, S**2 / (m - 1) their variances."),
    "pinv": "The Moore-Penrose pseudo-inverse (singular values below max(atol, rtol * the largest) dropped).",
    "pinverse": "The Moore-Penrose pseudo-inverse (singular values below rcond * the largest dropped).",
    "matrix_rank": "The number of singular values above max(atol, rtol * the largest).",
    "qr": "The QR decomposition A = Q R (mode 'reduced', 'complete' or 'r'; torch.qr: some=).",
    "eigh": "Eigenvalues (ascending) and eigenvectors of a symmetric matrix, read from its UPLO triangle.",
    "eigvalsh": "The eigenvalues (ascending) of a symmetric matrix, read from its UPLO triangle.",
    "eig": "Eigenvalues and eigenvectors of a general square matrix (complex: not available in gradcli; torch.eig: "
           "removed from PyTorch, its RuntimeError).",
    "eigvals": "Eigenvalues of a general square matrix (complex: not available in gradcli).",
    "matrix_exp": "The matrix exponential of a square matrix, sum over k of A^k / k!.",
    "logdet": "The log of a square matrix's determinant (nan where it is negative).",
    "trace": "The sum of a matrix's diagonal.",
    "addmm": "beta * input + alpha * (mat1 @ mat2), the input broadcast to the product (F.linear's kernel).",
    "addmv": "beta * input + alpha * (mat @ vec).",
    "addr": "beta * input + alpha * the outer product of vec1 and vec2.",
    "baddbmm": "beta * input + alpha * (batch1 @ batch2), matrix by matrix.",
    "addbmm": "beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i].",
    # neural network functions
    "softplus": "log(1 + exp(beta * x)) / beta, a smooth relu.",
    "gelu": "x times the normal distribution's CDF at x (or its tanh approximation).",
    "leaky_relu": "x where positive, negative_slope * x elsewhere.", "elu": "x where positive, alpha * (exp(x) - 1) elsewhere.",
    "hardtanh": "Clamps each element to [min_val, max_val].", "relu6": "min(max(x, 0), 6).",
    "silu": "x * sigmoid(x).", "softsign": "x / (1 + |x|).", "logsigmoid": "log(sigmoid(x)), computed stably.",
    "mish": "x * tanh(softplus(x)).",
    "fmod": "The remainder of input / other with the dividend's sign (C's fmod).",
    "selu": "scale * elu(x, alpha) with SELU's fixed alpha and scale.",
    "celu": "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).",
    "glu": "The gated linear unit: the first half of `dim` times sigmoid of the second half.",
    "mse_loss": "The mean squared error between input and target.", "l1_loss": "The mean absolute error.",
    "smooth_l1_loss": "Squared error below `beta`, absolute error above it.",
    "huber_loss": "Squared error below `delta`, delta-scaled absolute error above it.",
    "kl_div": "The Kullback-Leibler divergence of target from input (log-probabilities).",
    "cross_entropy": "The cross-entropy between logits and class targets (log_softmax then nll_loss).",
    "linear_cross_entropy": ("cross_entropy of linear(input, linear_weight, linear_bias): a classifier head and its "
                             "loss in one call (weights of shape (C, *out_features, in_features) for K dimensions)."),
    "nll_loss": "The negative log-likelihood of the target classes given log-probabilities.",
    "binary_cross_entropy": "The binary cross-entropy between probabilities and targets.",
    "binary_cross_entropy_with_logits": "The binary cross-entropy between logits and targets, computed stably.",
    "linear": "x @ weight.T + bias.", "normalize": "Divides by the p-norm along `dim`.",
    "dropout": "Zeros elements at random with probability p during training, scaling the rest by 1 / (1 - p).",
    "embedding": "The rows of `weight` that the integer input names (the padding_idx row gets no gradient).",
    "embedding_bag": ("The rows of `weight` each bag of indices names (bags from `offsets` or a 2-D input's rows), "
                      "summed, averaged or maxed (`mode`), optionally weighted per index."),
    "one_hot": "int64 zeros with a one at each value's position along a new last dimension.",
    "bilinear": "x1ᵀ A x2 + b, one matrix A of `weight` per output feature.",
    "hardsigmoid": "clamp(x + 3, 0, 6) / 6.", "hardswish": "x * clamp(x + 3, 0, 6) / 6.",
    "softmin": "softmax of -x along `dim`.", "tanhshrink": "x - tanh(x).",
    "hardshrink": "0 inside [-lambd, lambd], x elsewhere.",
    "softshrink": "x shrunk towards 0 by lambd (0 inside [-lambd, lambd]).",
    "pairwise_distance": "The p-norm of x1 - x2 + eps along the last dim.",
    "cosine_similarity": "The cosine of the angle between x1 and x2 along `dim` (norms clamped to eps).",
    "margin_ranking_loss": "max(0, -target * (x1 - x2) + margin): ranks x1 above x2 where target is 1.",
    "hinge_embedding_loss": "x where target is 1, max(0, margin - x) where it is -1.",
    "cosine_embedding_loss": "1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.",
    "multilabel_soft_margin_loss": "Per-class logistic loss of logits against 0/1 targets, averaged over classes.",
    "poisson_nll_loss": "The negative log-likelihood of a Poisson target given its (log) rate.",
    "gaussian_nll_loss": "The negative log-likelihood of a Gaussian target given its mean and variance.",
    "triplet_margin_loss": "max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance "
                           "(swap: the negative's distance to the positive when smaller).",
    "triplet_margin_with_distance_loss": "triplet_margin_loss with any distance_function (pairwise_distance by "
                                         "default).",
    "local_response_norm": "Each channel over (k + alpha * the mean square of `size` neighbouring channels) ** beta.",
    "gumbel_softmax": "softmax((logits + Gumbel noise) / tau); hard=True: the one-hot of its argmax with the soft "
                      "sample's gradient.",
    "channel_shuffle": "The channels (dim 1) split into `groups` groups and interleaved.",
    "native_channel_shuffle": "channel_shuffle's kernel (PyTorch has no derivative for it).",
    "rrelu": "x where x > 0, x times a slope drawn uniformly from [lower, upper) elsewhere (training), or the mean "
             "slope (eval).",
    "rrelu_": "rrelu in place.",
    "alpha_dropout": "Dropout for SELU networks: keeps the mean and variance, dropped values set to SELU's "
                     "saturation value (training only).",
    "feature_alpha_dropout": "alpha_dropout of whole channels.",
    "affine_grid": "The (N, H, W, 2) (or (N, D, H, W, 3)) sampling grid of a batch of affine matrices theta, in [-1, 1] "
                   "coordinates.",
    "affine_grid_generator": "affine_grid's kernel: torch.affine_grid_generator(theta, size, align_corners).",
    "grid_sample": "Samples an (N, C, H, W) (or (N, C, D, H, W)) input at the [-1, 1] points of a grid (N, H_out, "
                   "W_out, 2) (or (..., 3)): mode 'bilinear', 'nearest' or 'bicubic' (4-d only), padding_mode "
                   "'zeros', 'border' or 'reflection'; differentiable in the input and the grid.",
    "grid_sampler": "grid_sample's kernel: torch.grid_sampler(input, grid, interpolation_mode, padding_mode, "
                    "align_corners), the modes as numbers (bilinear 0, nearest 1, bicubic 2; zeros 0, border 1, "
                    "reflection 2).",
    "grid_sampler_2d": "grid_sampler of a 4-d input.", "grid_sampler_3d": "grid_sampler of a 5-d input.",
    "ctc_loss": "The connectionist temporal classification loss of (T, N, C) log-probabilities against unaligned "
                "targets (padded (N, S) or concatenated 1-d), given each sequence's input and target length; "
                "blank=, reduction=, zero_infinity=.",
    "pdist": "The p-norm distance of every pair of rows i < j of a 2-d input (the upper triangle of cdist(x, x)).",
    "alpha_dropout_": "alpha_dropout in place.", "feature_alpha_dropout_": "feature_alpha_dropout in place.",
    "feature_dropout": "Dropout of whole channels (one draw per sample and channel): torch.feature_dropout(input, p, "
                       "train).",
    "feature_dropout_": "feature_dropout in place.", "selu_": "selu in place.", "celu_": "celu in place.",
    "soft_margin_loss": "log(1 + exp(-target * x)): the two-class logistic loss for targets of 1 and -1.",
    "multi_margin_loss": "Per sample, the mean over the other classes of max(0, margin - x[y] + x[i]) (squared "
                         "for p=2, times weight[y]).",
    "multilabel_margin_loss": "Per sample, max(0, 1 - x[j] + x[i]) summed over its target classes j (the target's "
                              "entries before a -1) and the other classes i, over the number of classes.",
    "batch_norm": "Normalises each channel (dim 1) by the batch's mean and variance (training) or the running ones.",
    "layer_norm": "Normalises over the trailing normalized_shape dims of each sample, then weight and bias.",
    "group_norm": "Normalises each sample's channel groups by their mean and variance, then weight and bias.",
    "rms_norm": "x / sqrt(mean(x²) + eps) over the trailing normalized_shape dims, then weight (eps=None: the "
                "dtype's machine epsilon).",
    "instance_norm": "batch_norm of each sample and channel on its own (over the spatial dims).",
    "scaled_dot_product_attention": "softmax(q @ k.T * scale + mask) @ v over the last two dims; is_causal, "
                                    "dropout_p, scale (1/sqrt(E) by default).",
    "multi_head_attention_forward": "MultiheadAttention's computation with the weights given: (output, weights).",
    "conv1d": "A 1-d convolution (cross-correlation) of (N, C, L) input with (out, C/groups, k) weight.",
    "conv2d": "A 2-d convolution of (N, C, H, W) input with (out, C/groups, kH, kW) weight; stride, padding "
              "(ints, 'same', 'valid'), dilation, groups.",
    "conv3d": "A 3-d convolution of (N, C, D, H, W) input with (out, C/groups, kD, kH, kW) weight.",
    "conv_transpose1d": "The transposed 1-d convolution (the gradient of conv1d with respect to its input).",
    "conv_transpose2d": "The transposed 2-d convolution (the gradient of conv2d with respect to its input).",
    "conv_transpose3d": "The transposed 3-d convolution (the gradient of conv3d with respect to its input).",
    # torch.nn
    "Parameter": "A tensor that a Module registers as its parameter (requires grad; prints 'Parameter containing:').",
    "Buffer": "A tensor that a Module registers as its buffer when assigned (persistent=False: left out of "
              "state_dict); itself a plain tensor, detached.",
    "Module": "Base class of models: subclasses assign layers and Parameters in __init__ and define forward.",
    "Sequential": "Calls its modules in order, each on the previous one's output.",
    "ModuleList": "A list of modules, registered as submodules.", "ModuleDict": "A dict of modules, registered as submodules.",
    "Identity": "Returns its input (nn.Identity); prune.Identity is the pruning method that prunes nothing.",
    "Linear": "x @ weight.T + bias, weight and bias initialised as PyTorch's.",
    "Bilinear": "x1ᵀ A x2 + b, weights initialised as PyTorch's.",
    "RNNBase": "The base of RNN, LSTM and GRU: parameters weight_ih_l0, weight_hh_l0, bias_ih_l0, ... (_reverse).",
    "RNN": "Elman RNN over a sequence (tanh or relu): (output, h_n); batch_first, bidirectional, dropout.",
    "LSTM": "LSTM over a sequence: (output, (h_n, c_n)); num_layers, batch_first, bidirectional, proj_size.",
    "GRU": "GRU over a sequence: (output, h_n); num_layers, batch_first, bidirectional, dropout.",
    "RNNCellBase": "The base of RNNCell, LSTMCell and GRUCell: weight_ih, weight_hh, bias_ih, bias_hh.",
    "RNNCell": "One RNN step: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu).",
    "LSTMCell": "One LSTM step: (h', c') from x and (h, c).",
    "GRUCell": "One GRU step: h' from x and h.",
    "Embedding": "A table of vectors looked up by index, initialised from a standard normal (max_norm renormalises "
                 "the rows it looks up, in place).",
    "EmbeddingBag": ("Embedding lookups reduced per bag (sum, mean or max) in one op: forward(input, offsets, "
                     "per_sample_weights)."),
    "pad_sequence": "Variable-length sequences stacked into one tensor, padded with padding_value (left or right).",
    "unpad_sequence": "The sequences of a padded batch, each cut to its length: pad_sequence undone.",
    "unpack_sequence": "The sequences of a PackedSequence, as a list of tensors: pack_sequence undone.",
    "invert_permutation": "The permutation that undoes the given one (a PackedSequence's unsorted_indices).",
    "pack_padded_sequence": "A padded batch and its lengths as a PackedSequence (the rows still running at each step).",
    "pad_packed_sequence": "A PackedSequence back as a padded batch and its lengths.",
    "pack_sequence": "Variable-length sequences as a PackedSequence (pad_sequence, then pack_padded_sequence).",
    "PackedSequence": "The packed batch RNN, GRU and LSTM take: (data, batch_sizes, sorted_indices, unsorted_indices).",
    "ParameterList": "A list of Parameters registered under their positions (plain tensors become Parameters).",
    "ParameterDict": "A dict of Parameters registered under string keys (plain tensors become Parameters).",
    "Hardsigmoid": "hardsigmoid as a module.", "Hardswish": "hardswish as a module.",
    "Hardtanh": "hardtanh as a module.", "ReLU6": "relu6 as a module.", "LogSigmoid": "logsigmoid as a module.",
    "Softsign": "softsign as a module.", "Tanhshrink": "tanhshrink as a module.",
    "Softmin": "softmin along `dim` as a module.", "CosineSimilarity": "cosine_similarity as a module.",
    "Hardshrink": "hardshrink as a module.", "Softshrink": "softshrink as a module.",
    "PairwiseDistance": "pairwise_distance as a module.",
    "MarginRankingLoss": "margin_ranking_loss as a module.", "HingeEmbeddingLoss": "hinge_embedding_loss as a module.",
    "CosineEmbeddingLoss": "cosine_embedding_loss as a module.",
    "MultiLabelSoftMarginLoss": "multilabel_soft_margin_loss as a module.",
    "PoissonNLLLoss": "poisson_nll_loss as a module.", "GaussianNLLLoss": "gaussian_nll_loss as a module.",
    "TripletMarginLoss": "triplet_margin_loss as a module.",
    "CTCLoss": "ctc_loss as a module (blank=, reduction=, zero_infinity=).",
    "AdaptiveLogSoftmaxWithLoss": "The adaptive softmax (a head Linear over the shortlist and the clusters, a "
                                  "two-Linear projection per cluster): module(input, target) gives (output, loss); "
                                  "log_prob(input) and predict(input).",
    "LazyLinear": "Linear whose in_features is read off its first input: until then its weight and bias are "
                  "<UninitializedParameter>; the first call gives them their shapes, initialises them as Linear "
                  "does and turns the module into a Linear.",
    **{f"Lazy{kind}{n}d": f"{kind}{n}d whose {what} is read off its first input (see LazyLinear)."
       for kind, what in (("Conv", "in_channels"), ("ConvTranspose", "in_channels"), ("BatchNorm", "num_features"),
                          ("InstanceNorm", "num_features")) for n in (1, 2, 3)},
    "TripletMarginWithDistanceLoss": "triplet_margin_with_distance_loss as a module (its distance a PairwiseDistance "
                                     "submodule by default).",
    "LocalResponseNorm": "local_response_norm as a module.", "Softmax2d": "softmax over the channels (dim -3).",
    "ChannelShuffle": "channel_shuffle as a module.", "RReLU": "rrelu as a module (random slopes in training).",
    "AlphaDropout": "alpha_dropout as a module.", "FeatureAlphaDropout": "feature_alpha_dropout as a module.",
    "SoftMarginLoss": "soft_margin_loss as a module.", "MultiMarginLoss": "multi_margin_loss as a module (its weight "
                                                                          "a buffer).",
    "MultiLabelMarginLoss": "multilabel_margin_loss as a module.",
    "Flatten": "Flattens dims start_dim..end_dim.", "Unflatten": "Splits one dim into the sizes given.",
    "Dropout": "Dropout in training mode, the identity in eval mode.",
    "PReLU": "x where x > 0, a learnt slope times x elsewhere (one slope, or one per channel).",
    "prelu": "x where x > 0, weight * x elsewhere (weight: one value or one per channel).",
    **{f"Dropout{n}d": f"Channel-wise dropout of {shape} inputs." for n, shape in _CHANNEL_SHAPES},
    **{f"dropout{n}d": f"Zeroes whole channels of {shape} inputs." for n, shape in _CHANNEL_SHAPES},
    "BatchNorm1d": "batch_norm over (N, C) or (N, C, L) input; keeps running_mean/running_var buffers.",
    "BatchNorm2d": "batch_norm over (N, C, H, W) input; keeps running_mean/running_var buffers.",
    "BatchNorm3d": "batch_norm over (N, C, D, H, W) input; keeps running_mean/running_var buffers.",
    "InstanceNorm1d": "instance_norm over (N, C, L) or (C, L) input; no weight or running statistics by default.",
    "InstanceNorm2d": "instance_norm over (N, C, H, W) or (C, H, W) input; no weight or running statistics by default.",
    "InstanceNorm3d": "instance_norm over (N, C, D, H, W) or (C, D, H, W) input; no weight or running statistics "
                      "by default.",
    "LayerNorm": "layer_norm over the trailing normalized_shape dims, weight ones and bias zeros.",
    "GroupNorm": "group_norm with num_groups groups, weight ones and bias zeros.",
    "RMSNorm": "rms_norm over the trailing normalized_shape dims, weight ones.",
    "MultiheadAttention": "Attention with num_heads heads: in-projections, scaled_dot_product_attention, "
                          "out_proj; returns (output, averaged weights or None).",
    "TransformerEncoderLayer": "Self-attention and a feed-forward network, each a residual branch with LayerNorm.",
    "TransformerEncoder": "num_layers copies of an encoder layer, then an optional norm.",
    "TransformerDecoderLayer": "Self-attention, attention over memory and a feed-forward network, with LayerNorms.",
    "TransformerDecoder": "num_layers copies of a decoder layer, then an optional norm.",
    "Transformer": "An encoder and a decoder of Transformer layers; generate_square_subsequent_mask(sz) for causal "
                   "masks.",
    "ReLU": "max(x, 0) as a module.", "LeakyReLU": "leaky_relu as a module.", "Tanh": "tanh as a module.",
    "Sigmoid": "sigmoid as a module.", "GELU": "gelu as a module.", "SiLU": "silu as a module.",
    "Mish": "mish as a module.", "GLU": "glu as a module (its dim, -1 by default).",
    "SELU": "selu as a module.", "CELU": "celu as a module.",
    "Softplus": "softplus as a module.", "ELU": "elu as a module.", "Softmax": "softmax along `dim` as a module.",
    "LogSoftmax": "log_softmax along `dim` as a module.", "MSELoss": "mse_loss as a module.",
    "L1Loss": "l1_loss as a module.", "SmoothL1Loss": "smooth_l1_loss as a module.",
    "HuberLoss": "huber_loss as a module.", "KLDivLoss": "kl_div as a module.", "CrossEntropyLoss": "cross_entropy as a module.", "LinearCrossEntropyLoss": "linear_cross_entropy as a module that owns its Linear layer (in_features to num_classes).",
    "LinearCrossEntropyOptions": ("Settings of linear_cross_entropy's chunked path (chunk size, accumulation policy and "
                                  "dtype), a frozen dataclass; gradcli computes the reference path only."), "NLLLoss": "nll_loss as a module.",
    "NLLLoss2d": "NLLLoss under its deprecated name (a FutureWarning).",
    "BCELoss": "binary_cross_entropy as a module.", "BCEWithLogitsLoss": "binary_cross_entropy_with_logits as a module.",
    "Conv1d": "conv1d as a module: weight and bias initialised as PyTorch's, padding_mode zeros, reflect, "
              "replicate or circular.",
    "Conv2d": "conv2d as a module: weight and bias initialised as PyTorch's, padding_mode zeros, reflect, "
              "replicate or circular.",
    "Conv3d": "conv3d as a module, initialised as PyTorch's.",
    "ConvTranspose1d": "conv_transpose1d as a module, initialised as PyTorch's.",
    "ConvTranspose2d": "conv_transpose2d as a module, initialised as PyTorch's.",
    "ConvTranspose3d": "conv_transpose3d as a module, initialised as PyTorch's.",
    "ZeroPad1d": "Pads the last dim with zeros.", "ZeroPad2d": "Pads the last 2 dims with zeros.",
    "ZeroPad3d": "Pads the last 3 dims with zeros.", "ConstantPad1d": "Pads the last dim with a value.",
    "ConstantPad2d": "Pads the last 2 dims with a value.", "ConstantPad3d": "Pads the last 3 dims with a value.",
    "ReflectionPad1d": "Pads the last dim with its reflection.",
    "ReflectionPad2d": "Pads the last 2 dims with their reflection.",
    "ReflectionPad3d": "Pads the last 3 dims with their reflection.",
    "ReplicationPad1d": "Pads the last dim by repeating its edge values.",
    "ReplicationPad2d": "Pads the last 2 dims by repeating their edge values.",
    "ReplicationPad3d": "Pads the last 3 dims by repeating their edge values.",
    "CircularPad1d": "Pads the last dim by wrapping around.", "CircularPad2d": "Pads the last 2 dims by wrapping around.",
    "CircularPad3d": "Pads the last 3 dims by wrapping around.",
    # pooling (torch.nn.functional, torch and torch.nn)
    "max_pool1d": "The largest value of each window along the last dim (return_indices: and where it was).",
    "max_pool2d": "The largest value of each window of the last two dims (return_indices: and where it was).",
    "max_pool1d_with_indices": "max_pool1d's values and the index of each within its row.",
    "max_pool2d_with_indices": "max_pool2d's values and the index of each within its H*W plane.",
    "avg_pool1d": "The mean of each window along the last dim.",
    "avg_pool2d": "The mean of each window of the last two dims (or its sum over divisor_override).",
    "adaptive_avg_pool1d": "Means over output_size windows that cover the last dim.",
    "adaptive_avg_pool2d": "Means over windows that divide the last two dims into output_size.",
    "adaptive_max_pool1d": "Maxima over output_size windows that cover the last dim.",
    "adaptive_max_pool2d": "Maxima over windows that divide the last two dims into output_size.",
    "adaptive_max_pool1d_with_indices": "adaptive_max_pool1d's values and their indices.",
    "adaptive_max_pool2d_with_indices": "adaptive_max_pool2d's values and their indices.",
    "MaxPool1d": "max_pool1d as a module.", "MaxPool2d": "max_pool2d as a module.",
    "AvgPool1d": "avg_pool1d as a module.", "AvgPool2d": "avg_pool2d as a module.",
    "AdaptiveAvgPool1d": "adaptive_avg_pool1d as a module.", "AdaptiveAvgPool2d": "adaptive_avg_pool2d as a module.",
    "AdaptiveMaxPool1d": "adaptive_max_pool1d as a module.", "AdaptiveMaxPool2d": "adaptive_max_pool2d as a module.",
    "max_pool3d": "The largest value of each window of the last three dims (return_indices: and where it was).",
    "max_pool3d_with_indices": "max_pool3d's values and the index of each within its D*H*W volume.",
    "avg_pool3d": "The mean of each window of the last three dims (or its sum over divisor_override).",
    "adaptive_avg_pool3d": "Means over windows that divide the last three dims into output_size.",
    "adaptive_max_pool3d": "Maxima over windows that divide the last three dims into output_size.",
    "adaptive_max_pool3d_with_indices": "adaptive_max_pool3d's values and their indices.",
    "MaxPool3d": "max_pool3d as a module.", "AvgPool3d": "avg_pool3d as a module.",
    "AdaptiveAvgPool3d": "adaptive_avg_pool3d as a module.", "AdaptiveMaxPool3d": "adaptive_max_pool3d as a module.",
    "lp_pool1d": "The p-norm of each window along the last dim: (sum of x**p) ** (1/p), composed as PyTorch's.",
    "lp_pool2d": "The p-norm of each window of the last two dims, composed as PyTorch's (avg_pool2d, pow).",
    "lp_pool3d": "The p-norm of each window of the last three dims, composed as PyTorch's (avg_pool3d, pow).",
    "LPPool1d": "lp_pool1d as a module.", "LPPool2d": "lp_pool2d as a module.", "LPPool3d": "lp_pool3d as a module.",
    "max_unpool1d": "Puts each value back where max_pool1d's indices say, zeros elsewhere.",
    "max_unpool2d": "Puts each value back where max_pool2d's indices say (in each H*W plane), zeros elsewhere.",
    "max_unpool3d": "Puts each value back where max_pool3d's indices say (in each D*H*W volume), zeros elsewhere.",
    "MaxUnpool1d": "max_unpool1d as a module.", "MaxUnpool2d": "max_unpool2d as a module.",
    "MaxUnpool3d": "max_unpool3d as a module.",
    "fractional_max_pool2d": "Max over kH x kW windows at pseudo-random starts (one torch.rand sample per plane and "
                             "dim) giving output_size, or output_ratio of the input's size.",
    "fractional_max_pool3d": "fractional_max_pool2d over the last three dims (kT x kH x kW windows).",
    "fractional_max_pool2d_with_indices": "fractional_max_pool2d's values and indices (into each H*W plane).",
    "fractional_max_pool3d_with_indices": "fractional_max_pool3d's values and indices (into each D*H*W volume).",
    "FractionalMaxPool2d": "fractional_max_pool2d as a module (exactly one of output_size and output_ratio; "
                           "_random_samples a buffer).",
    "FractionalMaxPool3d": "fractional_max_pool3d as a module.",
    "threshold": "value where input <= threshold, input elsewhere (ThresholdBackward0).",
    "threshold_": "threshold in place (ThresholdBackward1).",
    "Threshold": "threshold as a module (threshold, value, inplace).",
    "interpolate": "Resamples the last 1-3 dims to size or by scale_factor: nearest, nearest-exact, linear, "
                   "bilinear, bicubic, trilinear or area.",
    "upsample": "interpolate, deprecated (warns).", "upsample_nearest": "interpolate(mode='nearest'), deprecated.",
    "upsample_bilinear": "interpolate(mode='bilinear', align_corners=True), deprecated.",
    "Upsample": "interpolate as a module (size or scale_factor, mode, align_corners).",
    "UpsamplingNearest2d": "Upsample(mode='nearest') of 4-d input.",
    "UpsamplingBilinear2d": "Upsample(mode='bilinear', align_corners=True) of 4-d input.",
    # torch.nn.init
    "calculate_gain": "The recommended gain for a nonlinearity (PyTorch's table).",
    "constant_": "Fills the tensor with a value, without recording it.",
    "xavier_uniform_": "Uniform in ±gain·sqrt(6 / (fan_in + fan_out)), without recording it.",
    "xavier_normal_": "Normal with std gain·sqrt(2 / (fan_in + fan_out)), without recording it.",
    "kaiming_uniform_": "Uniform in ±gain·sqrt(3 / fan), without recording it.",
    "kaiming_normal_": "Normal with std gain / sqrt(fan), without recording it.",
    "trunc_normal_": "Normal values truncated to [a, b], without recording it.",
    "eye_": "The identity matrix written into a 2-d tensor, without recording it.",
    "dirac_": "A 3-5-d convolution weight that passes its input channels through (per group), without recording it.",
    "orthogonal_": "A (semi-)orthogonal matrix (trailing dims flattened) from the QR of a normal draw, times gain.",
    "sparse_": "Normal values with ceil(sparsity * rows) zeros in each column (rows from torch.randperm).",
    # torch.nn.utils: reparametrizations
    "register_parametrization": "Replaces a parameter or buffer by parametrization(original): the module's class "
                                "becomes Parametrized<Class>, the tensor moves to module.parametrizations[name].",
    "remove_parametrizations": "Undoes register_parametrization: the tensor becomes the parametrized value "
                               "(leave_parametrized=True) or the original.",
    "is_parametrized": "Whether the module (or its tensor `tensor_name`) has a parametrization.",
    "cached": "A with-block within which each parametrized tensor is computed once.",
    "type_before_parametrizations": "The module's class before any parametrization was registered.",
    "transfer_parametrizations_and_params": "Registers one module's parametrizations (and originals) on another.",
    "ParametrizationList": "The parametrizations of one tensor, in order, and the original(s) they start from.",
    "weight_norm": "weight = g * v / ||v||: parametrizations.weight_norm keeps g and v as "
                   "parametrizations.weight.original0 and original1; the deprecated nn.utils.weight_norm as weight_g "
                   "and weight_v, recomputed by a forward pre-hook.",
    "spectral_norm": "weight / sigma, sigma its largest singular value by power iteration: "
                     "parametrizations.spectral_norm (buffers _u, _v), or the deprecated nn.utils.spectral_norm "
                     "(weight_orig; buffers weight_u, weight_v) recomputed by a forward pre-hook in training mode.",
    "orthogonal": "Keeps a matrix (or batch) orthogonal: matrix_exp or cayley of a skew part (square), or householder "
                  "reflectors, times a base buffer that assignment sets.",
    "remove_weight_norm": "Undoes torch.nn.utils.weight_norm: the weight a plain parameter again.",
    "remove_spectral_norm": "Undoes torch.nn.utils.spectral_norm: the weight a plain parameter again.",
    # torch.nn.utils.prune
    "BasePruningMethod": "The base of a pruning method: a subclass sets PRUNING_TYPE ('unstructured', 'structured' "
                         "or 'global') and defines compute_mask(t, default_mask); Cls.apply(module, name, ...) prunes.",
    "PruningContainer": "The pruning methods applied to one tensor, in order (iterate it); its mask is the newest "
                        "method's, computed on what the earlier masks left.",
    "RandomUnstructured": "Pruning method: zeroes `amount` entries (an int, or a fraction) chosen at random.",
    "L1Unstructured": "Pruning method: zeroes the `amount` entries of smallest absolute value.",
    "RandomStructured": "Pruning method: zeroes `amount` channels along `dim`, chosen at random.",
    "LnStructured": "Pruning method: zeroes the `amount` channels along `dim` of smallest L`n` norm.",
    "CustomFromMask": "Pruning method: zeroes where the given mask is 0.",
    "identity": "Prunes nothing, but reparametrizes `name` as pruning does (name_orig, name_mask, a pre-hook).",
    "random_unstructured": "Prunes `amount` random entries of module.name: the parameter moves to name_orig, the mask "
                           "is the buffer name_mask, and name = name_orig * name_mask before each call.",
    "l1_unstructured": "Prunes the `amount` entries of module.name of smallest absolute value (or importance_scores).",
    "random_structured": "Prunes `amount` random channels of module.name along `dim`.",
    "ln_structured": "Prunes the `amount` channels of module.name along `dim` of smallest L`n` norm.",
    "global_unstructured": "Prunes the (module, name) pairs' tensors together: pruning_method (L1Unstructured...) "
                           "chooses over all of them at once.",
    "custom_from_mask": "Prunes module.name where `mask` is 0.",
    "remove": "Makes the pruning of module.name permanent: the pruned values become the parameter `name` again "
              "and name_orig, name_mask and the hook go.",
    "is_pruned": "Whether any pruning hook is on the module or one of its submodules.",
    "skip_init": "The module built without initialising it: its tensors uninitialised, no random numbers drawn.",
    "to_empty": "Every parameter and buffer replaced by an uninitialised tensor of its shape and dtype on `device` "
                "(gradcli fills it with 0): how a model built on the meta device gets memory.",
    "uniform": "nn.init.uniform_'s deprecated name: PyTorch's FutureWarning, then uniform_.",
    "constant": "nn.init.constant_'s deprecated name: PyTorch's FutureWarning, then constant_.",
    "dirac": "nn.init.dirac_'s deprecated name: PyTorch's FutureWarning, then dirac_.",
    "xavier_uniform": "nn.init.xavier_uniform_'s deprecated name: PyTorch's FutureWarning, then xavier_uniform_.",
    "xavier_normal": "nn.init.xavier_normal_'s deprecated name: PyTorch's FutureWarning, then xavier_normal_.",
    "kaiming_uniform": "nn.init.kaiming_uniform_'s deprecated name: PyTorch's FutureWarning, then kaiming_uniform_.",
    "kaiming_normal": "nn.init.kaiming_normal_'s deprecated name: PyTorch's FutureWarning, then kaiming_normal_.",
    "sparse": "nn.init.sparse_'s deprecated name: PyTorch's FutureWarning, then sparse_.",
    "conv1d_input": "torch.nn.grad: the gradient of conv1d's input (of input_size) for grad_output, by convolution_backward.",
    "conv1d_weight": "torch.nn.grad: the gradient of conv1d's weight (of weight_size) for grad_output, by convolution_backward.",
    "conv2d_input": "torch.nn.grad: the gradient of conv2d's input (of input_size) for grad_output, by convolution_backward.",
    "conv2d_weight": "torch.nn.grad: the gradient of conv2d's weight (of weight_size) for grad_output, by convolution_backward.",
    "conv3d_input": "torch.nn.grad: the gradient of conv3d's input (of input_size) for grad_output, by convolution_backward.",
    "conv3d_weight": "torch.nn.grad: the gradient of conv3d's weight (of weight_size) for grad_output, by convolution_backward.",
    "norm_except_dim": "The pow-norm over every dim but dim (kept as size-1 dims); dim=-1: over the whole tensor.",
    # attributes and conversions
    "shape": "The sizes of the dimensions, a torch.Size.", "size": "The sizes of the dimensions (or one of them).",
    "dtype": "The element type (torch.float32, ...); torch.dtype is its type.", "device": "Where the data lives: the CPU, or the meta device (a shape and a dtype, no data).",
    "ndim": "The number of dimensions.", "dim": "The number of dimensions.", "ndimension": "The number of dimensions.",
    "item": "The value of a one-element tensor as a Python number.",
    "tolist": "The values as (nested) Python lists.", "to": "The tensor converted to a dtype or moved to a device ('cpu', 'meta'); a copy only when needed.",
    "type": "The type name (with a dtype: the converted tensor).",
    "type_as": "The tensor in another tensor's dtype (itself when the dtypes agree).", "float": "The tensor as float32.",
    "double": "The tensor as float64.", "half": "The tensor as float16.", "bfloat16": "The tensor as bfloat16.",
    "int": "The tensor as int32.",
    "long": "The tensor as int64.", "bool": "The tensor as bool.", "byte": "The tensor as uint8.",
    "short": "The tensor as int16.", "char": "The tensor as int8.", "is_cpu": "Whether the tensor is on the CPU (False on the meta device).",
    "is_meta": "Whether the tensor is on the meta device: a shape and a dtype, no data (ops give shapes only).",
    "nbytes": "The bytes its elements take.", "itemsize": "The bytes one element takes.", "cpu": "The tensor itself on the CPU; a meta tensor fails: it has no data to copy.",
    "element_size": "The size of one element in bytes.", "is_floating_point": "Whether the dtype is a float type.",
    "is_inference": "Whether the tensor was made in inference mode.",
    **{name: "False: gradcli computes on the CPU, with dense tensors only." for name in (
        "is_mps", "is_xla", "is_xpu", "is_ipu", "is_vulkan", "is_maia", "is_mtia", "is_mkldnn", "is_quantized",
        "is_nested", "is_sparse_csr", "is_pinned", "is_shared")},
    "apply_": "Each element replaced by a function of it, in order, in place (a tensor that needs no gradient).",
    "map_": "Each element replaced by a function of it and another tensor's element there, in place.",
    "layout": "How a tensor keeps its elements: torch.strided (dense) or torch.sparse_coo.",
    "strided": "The layout of dense tensors.", "sparse_coo": "The layout of sparse COO tensors (indices and values).",
    "memory_format": ("The order a dense tensor's elements lie in memory (memory_format= of contiguous, clone, to, "
                      "is_contiguous, empty and the *_like factories): torch.contiguous_format, "
                      "torch.channels_last, torch.channels_last_3d, torch.preserve_format."),
    "contiguous_format": "The memory format of a row-major tensor (the last dim's elements side by side).",
    "channels_last": ("The memory format of a 4-d (N, C, H, W) tensor laid out as N, H, W, C: a pixel's channels "
                      "side by side, as convolutions and pooling keep it."),
    "channels_last_3d": "The memory format of a 5-d (N, C, D, H, W) tensor laid out as N, D, H, W, C.",
    "preserve_format": ("The memory format that keeps the input's: its strides when dense, else its order of "
                        "dims (clone and the *_like factories by default)."),
    "sparse_coo_tensor": ("A sparse COO tensor from indices (sparse_dim x nnz) and values (nnz, ...), of the given "
                          "size or the smallest that holds the indices; uncoalesced as given."),
    "sparse": "torch.sparse: mm (sparse @ dense, a sparse gradient for the sparse matrix), sum and addmm.",
    "to_sparse": "The tensor as a sparse COO tensor of its nonzero elements (or rows, with sparse_dim), coalesced.",
    "to_dense": "A sparse tensor's elements as a dense tensor (a dense tensor itself).",
    "is_sparse": "Whether the tensor is a sparse COO tensor.",
    "is_coalesced": "Whether a sparse tensor's indices are sorted and unique (coalesce() makes them so).",
    "coalesce": "The sparse tensor with sorted, unique indices, the values of repeated ones added.",
    "sparse_dim": "How many of a sparse tensor's dims its indices address.",
    "dense_dim": "How many of a sparse tensor's dims each value has (0 for a plain sparse matrix).",
    "indices": "A coalesced sparse tensor's indices, sparse_dim x nnz.",
    "set_printoptions": "Sets how tensors print: precision, threshold, edgeitems, linewidth, sci_mode or a profile.",
    "default_generator": "The default random generator.",
    "pi": "The constant pi.", "e": "The constant e.", "inf": "Positive infinity.", "nan": "Not a number.",
}

# the view-copy functions: the view's elements in a new contiguous tensor, the view's node renamed
_WHAT.update({f"{view}_copy": f"A new contiguous tensor holding what `{view}` would view (no storage shared); its "
                              "node is the view's with `_copy` added, with the same gradient."
              for view in ("alias", "as_strided", "diagonal", "expand", "permute", "select", "slice", "split",
                           "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze", "view",
                           "view_as_real", "view_as_complex")})
_WHAT["detach_copy"] = "A copy of the tensor's elements; PyTorch gives it no derivative (NotImplemented)."

_BUILTINS = {
    "print": ("print(*values, sep=' ', end='\\n')", "Writes the values, separated by sep and followed by end."),
    "len": ("len(obj, /)", "The number of items in a sequence, or the size of a tensor's first dimension."),
    "range": ("range(stop) or range(start, stop[, step])", "The integers from start up to but not including stop."),
    "abs": ("abs(x, /)", "The absolute value."), "min": ("min(iterable) or min(a, b, ...)", "The smallest item."),
    "max": ("max(iterable) or max(a, b, ...)", "The largest item."),
    "sum": ("sum(iterable, /, start=0)", "start plus the items, added from the left."),
    "float": ("float(x=0, /)", "The value as a floating-point number."),
    "complex": ("complex(real=0, imag=0)", "A complex number from a string, or from a real and an imaginary part."),
    "int": ("int(x=0, /) or int(text, base=10)", "The value as an integer (truncating a float)."),
    "bool": ("bool(x=False, /)", "The truth value."), "str": ("str(object='')", "The value as text."),
    "repr": ("repr(obj, /)", "The text an expression of the value shows in the REPL."),
    "round": ("round(number, ndigits=None)", "The number rounded (halves to even)."),
    "list": ("list(iterable=(), /)", "A new list of the items."), "tuple": ("tuple(iterable=(), /)", "A tuple of the items."),
    "enumerate": ("enumerate(iterable, start=0)", "Pairs (index, item) for the items."),
    "zip": ("zip(*iterables, strict=False)", "Tuples of the items at the same position in each iterable."),
    "reversed": ("reversed(sequence, /)", "The items in reverse order."),
    "sorted": ("sorted(iterable, /, *, key=None, reverse=False)", "A new sorted list of the items."),
    "any": ("any(iterable, /)", "Whether some item is true."), "all": ("all(iterable, /)", "Whether every item is true."),
    "divmod": ("divmod(x, y, /)", "The pair (x // y, x % y)."), "pow": ("pow(base, exp, mod=None)", "base ** exp (modulo mod)."),
    "help": ("help(obj)", "Shows the signature of a function, method or builtin and what it does; in the REPL, "
                          "obj? does the same."),
    "dict": ("dict(mapping_or_pairs=(), /, name=value, ...)", "A new dict of the pairs (and the name=value ones)."),
    "set": ("set(iterable=(), /)", "A new set of the items."),
    "frozenset": ("frozenset(iterable=(), /)", "A new frozenset (an unchangeable set) of the items."),
    "chr": ("chr(i, /)", "The one-character string of Unicode code point i."),
    "format": ("format(value, format_spec='', /)", "value formatted as an f-string field {value:format_spec} "
                                                   "gives it (a tensor of one element too)."),
    "hex": ("hex(number, /)", "The integer as a string in base 16, with Python's prefix for it."),
    "oct": ("oct(number, /)", "The integer as a string in base 8, with Python's prefix for it."),
    "bin": ("bin(number, /)", "The integer as a string in base 2, with Python's prefix for it."),
    "ascii": ("ascii(obj, /)", "repr(obj) with every non-ASCII character escaped."),
    "slice": ("slice(stop) or slice(start, stop[, step])", "A slice object, as x[start:stop:step] builds: "
                                                            "x[slice(1, 3)] is x[1:3]."),
    "ord": ("ord(c, /)", "The Unicode code point of a one-character string."),
    "callable": ("callable(obj, /)", "Whether obj can be called."),
    "map": ("map(function, iterable, /, *iterables)", "function applied to the items, one at a time."),
    "filter": ("filter(function, iterable, /)", "The items for which function is true (the true items for None)."),
    "iter": ("iter(iterable) or iter(callable, sentinel)", "An iterator over the items."),
    "next": ("next(iterator[, default])", "The iterator's next item, or default when it is exhausted."),
    "hash": ("hash(obj, /)", "The hash value of obj (equal values hash equal)."),
    "getattr": ("getattr(obj, name[, default])", "obj.name, or default when obj has no such attribute gradcli's "
                                                  "language reaches."),
    "hasattr": ("hasattr(obj, name, /)", "Whether obj.name is an attribute gradcli's language reaches."),
    "setattr": ("setattr(obj, name, value, /)", "obj.name = value, where the language allows it."),
    "delattr": ("delattr(obj, name, /)", "del obj.name, where the language allows it."),
    "vars": ("vars([object])", "The dict of object's attributes, live (obj.__dict__): of a script's object, class "
                               "or function, or a torch.nn module; without an argument, locals()."),
    "locals": ("locals()", "A dict of the variables of the calling frame (at top level, the globals themselves)."),
    "globals": ("globals()", "The dict of the script's global variables, live."),
    "dir": ("dir([object])", "The sorted names of object's attributes, as Python or PyTorch lists them; without an "
                             "argument, the names of the calling frame."),
    "type": ("type(obj, /)", "The class of obj, as the script names it: type(3) is int, type(t) is torch.Tensor; "
                             "type(x).__name__ is its name."),
    "id": ("id(obj, /)", "A number for obj, the same for the whole run: the address gradcli prints for it "
                         "(numbered with --stable-ids)."),
    "isinstance": ("isinstance(obj, class_or_tuple, /)", "Whether obj is an instance of the class (torch.Tensor, "
                                                           "int, ...) or of one of a tuple of classes."),
    "issubclass": ("issubclass(cls, class_or_tuple, /)", "Whether cls is the class, or derives from it (or from "
                                                           "one of a tuple of classes)."),
    "object": ("object()", "The base of every class; `class A(object):` is `class A:`."),
    "super": ("super() or super(type, obj)", "In a method: the methods of the classes after the method's own in "
                                             "the instance's method resolution order."),
    "staticmethod": ("staticmethod(function)", "A decorator: the method takes no self or class argument."),
    "classmethod": ("classmethod(function)", "A decorator: the method takes the class as its first argument."),
    "property": ("property(fget=None, fset=None, fdel=None, doc=None)",
                 "A decorator: a method read (and with .setter, written) as an attribute."),
    "__name__": ("__name__", "'__main__': a script is the main module."),
    "__annotations__": ("__annotations__", "The main module's annotations (`x: int = 1` records 'x'), {} until "
                                           "there are some."),
    "NotImplemented": ("NotImplemented", "What a special method returns for an operand it does not handle, so Python "
                                         "tries the other operand's."),
}
# The exception classes: raised with `raise Kind(message)`, caught with `except Kind as e:`
_BUILTINS.update((kind, (f"{kind}(*args)", "An exception class: raise it, or catch it (and its subclasses) "
                                             "with except."))
                 for kind in EXCEPTIONS)
_MODULES = {
    "torch": "gradcli's PyTorch: tensors, their operations and autograd.",
    "torch.autograd": "Gradients: grad, backward, Variable, gradcheck, Function, the grad-mode contexts.",
    "torch.autograd.function": "Custom autograd Functions: Function, once_differentiable.",
    "torch.autograd.functional": "Derivatives of whole functions: jacobian, hessian, vjp, jvp, hvp, vhp.",
    "torch.testing": "Comparing results in tests: assert_close.",
    "torch.func": "Function transforms: grad, grad_and_value, vjp, jacrev, jvp, jacfwd, hessian, vmap.",
    "torch.autograd.forward_ad": "Forward-mode AD: dual_level, make_dual, unpack_dual (tangents pushed forward "
                                 "through each op).",
    "torch.autograd.graph": "The graph's nodes and hooks: Node, increment_version, and hooks on the tensors "
                            "the graph saves (saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks).",
    "torch.nn": "Models: Module (subclass it), Parameter, Sequential, ModuleList, ModuleDict, the layers, activations "
                "and losses; the functional and init modules.",
    "torch.nn.init": "Initialisers drawing from PyTorch's random streams: uniform_, normal_, xavier_*, kaiming_*, ...",
    "torch.nn.functional": "Activations, losses and other functions used in neural networks.",
    "torch.linalg": "Linear algebra: norms, determinants and their logs, inverses, solving, Cholesky factors, matrix "
                    "powers, products and exponentials.",
    "torch.random": "The random generator's seed and state.",
    "torch.fft": "Discrete Fourier transforms (fft, ifft, rfft, irfft, hfft, ihfft and their 2-d and n-d forms), "
                 "their sample frequencies (fftfreq, rfftfreq) and fftshift, ifftshift; with autograd.",
    "torch.optim.swa_utils": ("Weight averaging: AveragedModel (SWA, EMA), SWALR, update_bn and the averaging "
                              "functions."),
    "math": "Python's math module: functions of numbers and the constants pi, e, inf, nan.",
    "random": "Python's random module, with CPython's generator: seed, random, randint, choice, shuffle, sample, gauss.",
    "collections": "Python's collections module: defaultdict, Counter, OrderedDict, deque and namedtuple, and its "
                   "abc module.",
    "collections.abc": "Python's abstract classes of containers (Mapping, Sequence, Iterable, Callable, Sized, ...), "
                       "for isinstance and issubclass: `isinstance(batch, Mapping)`.",
    "copy": "Python's copy module: copy and deepcopy of lists, dicts, objects, tensors and models.",
    "typing": "Python's typing module: the names type annotations use, printed as CPython prints them.",
    "dataclasses": "Python's dataclasses module: @dataclass writes a class's __init__, __repr__ and __eq__ from its "
                   "annotated fields.",
    "statistics": "Python's statistics module, in part: mean, fmean, median, mode, stdev, pstdev and variance of a "
                  "list of numbers, CPython's own functions.",
    "warnings": "Python's warnings module: warn, the filters (filterwarnings, simplefilter, resetwarnings) and "
                "catch_warnings; the filters govern PyTorch's warnings too.",
    "sys": "Python's sys module, a safe part: exit, argv, the version and number facts, stdout and stderr (write and "
           "flush only), the recursion limit.",
    "json": "Python's json module: dumps and loads of strings (no files), CPython's encoder and decoder.",
    "heapq": "Python's heapq module: a list kept as a heap (heappush, heappop, ...), nlargest, nsmallest, merge.",
    "bisect": "Python's bisect module: positions in a sorted list (bisect_left, bisect_right) and insort.",
    "pprint": "Python's pprint module: pprint and pformat lay a value's repr out over lines.",
    "textwrap": "Python's textwrap module: wrap, fill, shorten, dedent and indent text.",
    "traceback": "Python's traceback module: print_exc, format_exc, print_exception, format_exception, "
                 "format_exception_only, print_stack and format_stack print a caught exception's traceback as "
                 "CPython 3.11 prints it (the script's frames; no frame or traceback objects).",
    "types": "Python's types module, its SimpleNamespace (hyperparameters as attributes) only.",
    "argparse": "Python's argparse module, CPython's own parser: a script's command-line options (parse_args of a "
                "list, or of sys.argv[1:]), its usage and help text, subcommands, and errors that exit with status "
                "2; no files (fromfile_prefix_chars, FileType).",
    "re": "Python's re module, CPython's regular expressions: compile, match, search, findall, finditer, split, sub "
          "and the flags; Pattern and Match objects.",
    "unicodedata": "Python's unicodedata module: normalize (NFC, NFD, NFKC, NFKD) and each character's category, "
                   "name, digits and other properties from the Unicode database.",
    "abc": "Python's abc module: ABC and abstractmethod (and metaclass=ABCMeta), for base classes whose subclasses "
           "must define some methods.",
    "contextlib": "Python's contextlib module: contextmanager (a generator as a `with` context), nullcontext, "
                  "suppress, ExitStack, redirect_stdout and redirect_stderr.",
    "io": "Python's io module, its in-memory streams: BytesIO (what torch.save writes into and torch.load reads) and "
          "StringIO (text, print(..., file=buf)); no files.",
    "logging": "Python's logging module: getLogger, basicConfig, the levels, StreamHandler, Formatter, Filter and "
               "LoggerAdapter, printing as CPython's does; what a script configures lasts its session; no files.",
    "enum": "Python's enum module: Enum, IntEnum, StrEnum, Flag, IntFlag, auto and unique, CPython's own.",
    "functools": "Python's functools module: reduce, partial, cmp_to_key, wraps and update_wrapper, the caches "
                 "(lru_cache, cache, cached_property), total_ordering, partialmethod and singledispatch.",
    "inspect": "Python's inspect module, on the script's own code: currentframe and getargvalues (a frame's "
               "arguments and variables), signature, Signature, Parameter and BoundArguments, the is... tests, "
               "getdoc and cleandoc.",
}

# The functions and classes of abc, contextlib and enum, by (module, name) (gradcli.language.pyabc, pycontextlib,
# pyenum; enum's classes are CPython's)
_PYTHON_NAMES = {
    ("typing", "runtime_checkable"): ("runtime_checkable(cls)", "A decorator letting isinstance() and issubclass() "
                                      "test a typing.Protocol class: a value matches when it has every method and "
                                      "attribute the protocol names."),
    ("typing", "get_origin"): ("get_origin(tp)", "What a typing form stands for (list for List[int], Union for "
                               "Optional[int], the class for Box[int]), or None."),
    ("typing", "get_args"): ("get_args(tp)", "A typing form's arguments (Callable's parameters as a list, then its "
                             "result), or ()."),
    ("typing", "final"): ("final(f)", "A decorator marking a method or class final for type checkers; returns it "
                          "unchanged."),
    ("typing", "assert_never"): ("assert_never(arg, /)", "Raises AssertionError: marks code a type checker proves "
                                 "unreachable."),
    ("typing", "NewTypeForm"): ("NewType(name, tp)", "A distinct name for a type, for type checkers; called, it "
                                "returns its argument unchanged."),
    ("abc", "ABC"): ("class ABC", "A base class whose subclasses cannot be instantiated while a method marked "
                                  "@abstractmethod is left undefined."),
    ("abc", "abstractmethod"): ("abstractmethod(funcobj)", "A decorator marking a method abstract: a class of ABC "
                                                           "(or metaclass=ABCMeta) that does not define it has no "
                                                           "instances."),
    ("contextlib", "contextmanager"): ("contextmanager(func)", "A decorator making a generator function a context "
                                                               "manager: the code before its `yield` runs on "
                                                               "entering the `with`, the code after on leaving; "
                                                               "the yielded value is what `as` binds."),
    ("contextlib", "nullcontext"): ("class nullcontext(enter_result=None)", "A context that does nothing; `as` "
                                                                           "binds enter_result."),
    ("contextlib", "suppress"): ("class suppress(*exceptions)", "A context that ignores the given exceptions raised "
                                                                "in its block."),
    ("contextlib", "ExitStack"): ("class ExitStack()", "A stack of contexts and callbacks (enter_context, callback, "
                                                       "push, pop_all, close), left last first when it closes."),
    ("contextlib", "redirect_stdout"): ("class redirect_stdout(new_target)", "A context in which print and "
                                        "sys.stdout write to new_target (an io.StringIO) instead; `as` binds it."),
    ("contextlib", "redirect_stderr"): ("class redirect_stderr(new_target)", "A context in which sys.stderr and "
                                        "warnings write to new_target instead; `as` binds it."),
    ("io", "BytesIO"): ("class BytesIO(initial_bytes=b'')", "A stream of bytes in memory: write, read, seek, tell, "
                                                             "getvalue. torch.save(obj, buf) writes a checkpoint at its "
                                                             "position; after buf.seek(0), torch.load(buf) reads it."),
    ("types", "SimpleNamespace"): ("class SimpleNamespace(**kwargs)", "An object holding the keyword arguments as "
                                                                     "attributes, which the script reads, sets and "
                                                                     "deletes; vars() gives its dict."),
    ("argparse", "ArgumentParser"): ("class ArgumentParser(prog=None, usage=None, description=None, epilog=None, "
                                     "parents=[], formatter_class=HelpFormatter, prefix_chars='-', "
                                     "argument_default=None, conflict_handler='error', add_help=True, "
                                     "allow_abbrev=True, exit_on_error=True)",
                                     "A parser of command-line arguments: add_argument declares each option or "
                                     "positional, parse_args reads a list (or the script's sys.argv[1:]) into a "
                                     "Namespace; -h prints the help, a wrong argument the usage and an error, then "
                                     "exits with status 2."),
    ("argparse", "Namespace"): ("class Namespace(**kwargs)", "What parse_args returns: one attribute per argument "
                                "(args.lr), which the script reads and sets; vars(args) gives its dict, `'lr' in "
                                "args` tests for one."),
    ("argparse", "Action"): ("class Action(option_strings, dest, nargs=None, const=None, default=None, type=None, "
                             "choices=None, required=False, help=None, metavar=None)",
                             "The base of what an argument does when it is found: a script's subclass defines "
                             "__call__(self, parser, namespace, values, option_string=None) and is given as "
                             "action=."),
    ("argparse", "BooleanOptionalAction"): ("class BooleanOptionalAction(option_strings, dest, default=None, ...)",
                                            "An action= making a flag --name and its negation --no-name, which store "
                                            "True and False."),
    ("argparse", "HelpFormatter"): ("class HelpFormatter(prog, indent_increment=2, max_help_position=24, "
                                    "width=None)", "The formatter_class= of a parser's help: text wrapped to the "
                                    "terminal's width (COLUMNS, else 80 when not a terminal)."),
    ("argparse", "RawDescriptionHelpFormatter"): ("class RawDescriptionHelpFormatter(prog, ...)", "A formatter_class= "
                                                  "keeping the description's and epilog's lines as written."),
    ("argparse", "RawTextHelpFormatter"): ("class RawTextHelpFormatter(prog, ...)", "A formatter_class= keeping every "
                                           "help text's lines as written."),
    ("argparse", "ArgumentDefaultsHelpFormatter"): ("class ArgumentDefaultsHelpFormatter(prog, ...)", "A "
                                                    "formatter_class= adding ' (default: ...)' to each argument's "
                                                    "help."),
    ("argparse", "MetavarTypeHelpFormatter"): ("class MetavarTypeHelpFormatter(prog, ...)", "A formatter_class= "
                                               "naming each argument's value by its type's name (int, float)."),
    ("argparse", "ArgumentError"): ("class ArgumentError(argument, message)", "The error of a wrong argument, raised "
                                    "by parse_args of a parser made with exit_on_error=False (argument_name, "
                                    "message)."),
    ("argparse", "ArgumentTypeError"): ("class ArgumentTypeError", "What a type= function raises to reject a value "
                                        "with its own message."),
    ("re", "Pattern"): ("class Pattern", "A compiled regular expression (re.compile): match, fullmatch, search, "
                                         "findall, finditer, split, sub, subn; pattern, flags, groups, groupindex."),
    ("re", "Match"): ("class Match", "What a successful match gives: group, groups, groupdict, start, end, span, "
                                     "expand, m[g]; string, re, pos, endpos, lastindex, lastgroup. Always true."),
    ("re", "error"): ("class error(msg, pattern=None, pos=None)", "The error of a pattern or replacement that is not "
                                                                  "a valid regular expression: msg, pattern, pos, "
                                                                  "lineno, colno."),
    ("re", "RegexFlag"): ("class RegexFlag", "The flags of a pattern (re.I, re.M, re.S, re.X, re.A, ...), combined "
                                             "with |."),
    ("io", "StringIO"): ("class StringIO(initial_value='', newline='\\n')", "A stream of text in memory: write, "
                                                                          "read, readline, seek, tell, getvalue; "
                                                                          "print(..., file=buf) writes into it."),
    ("io", "UnsupportedOperation"): ("class UnsupportedOperation", "The error of a stream method an in-memory stream "
                                                                   "does not offer (fileno, detach); an OSError and "
                                                                   "a ValueError."),
    ("enum", "Enum"): ("class Enum", "The base of enumerations: a class whose attributes are its members, each with "
                                     "a name and a value."),
    ("enum", "IntEnum"): ("class IntEnum", "An enumeration whose members are also ints."),
    ("enum", "StrEnum"): ("class StrEnum", "An enumeration whose members are also strings."),
    ("enum", "Flag"): ("class Flag", "An enumeration whose members combine with |, & and ^ as bit flags."),
    ("enum", "IntFlag"): ("class IntFlag", "A Flag whose members are also ints."),
    ("enum", "auto"): ("class auto", "A member's value chosen by the enumeration (1, 2, 3... by default)."),
    ("functools", "cached_property"): ("class cached_property(func)", "A decorator making a method a property "
                                       "computed on first reading and then kept in the instance's attributes (`del` "
                                       "forgets it)."),
    ("functools", "partialmethod"): ("class partialmethod(func, /, *args, **keywords)", "A method that calls func "
                                     "with some of its arguments already given, as partial does for a function."),
    ("functools", "singledispatchmethod"): ("class singledispatchmethod(func)", "singledispatch for a method: the "
                                            "implementation is chosen by the class of the first argument after self."),
    ("functools", "partial"): ("class partial(func, /, *args, **keywords)", "A function that calls func with some "
                               "of its arguments already given, and the rest from the call."),
    ("_functools", "reduce"): ("reduce(function, iterable[, initial], /)", "Folds the items from the left: "
                               "function(function(a, b), c) and so on, starting from initial if given."),
    ("_functools", "cmp_to_key"): ("cmp_to_key(mycmp)", "A key for sorted/min/max made of an old-style comparison "
                                   "function returning a negative number, zero or a positive number."),
    ("inspect", "currentframe"): ("currentframe()", "The script's frame that calls it: f_back (its caller's), "
                                                      "f_locals, f_globals, f_lineno and f_code (co_name, "
                                                      "co_filename, co_argcount)."),
    ("inspect", "getargvalues"): ("getargvalues(frame)", "ArgInfo(args, varargs, keywords, locals): the names of the "
                                                         "frame's function's arguments and the frame's variables."),
    ("inspect", "signature"): ("signature(obj, *, follow_wrapped=True, globals=None, locals=None, eval_str=False)",
                               "The Signature of a script's function, method or class (its __init__ without self)."),
    ("inspect", "Signature"): ("class Signature(parameters=None, *, return_annotation)", "A callable's parameters "
                                                                                        "(an ordered mapping of "
                                                                                        "Parameter) and return "
                                                                                        "annotation; bind() and "
                                                                                        "bind_partial() match "
                                                                                        "arguments to them."),
    ("inspect", "Parameter"): ("class Parameter(name, kind, *, default, annotation)", "One parameter: its name, kind "
                                                                                     "(POSITIONAL_ONLY ... "
                                                                                     "VAR_KEYWORD), default and "
                                                                                     "annotation (Parameter.empty "
                                                                                     "when it has none)."),
    ("inspect", "BoundArguments"): ("class BoundArguments(signature, arguments)", "What Signature.bind gives: "
                                                                                 "arguments (a dict), args, kwargs "
                                                                                 "and apply_defaults()."),
    ("inspect", "ArgInfo"): ("class ArgInfo(args, varargs, keywords, locals)", "What getargvalues gives, a named "
                                                                               "tuple."),
    ("inspect", "isclass"): ("isclass(object)", "Whether object is a class."),
    ("inspect", "isfunction"): ("isfunction(object)", "Whether object is a function defined with def or lambda."),
    ("inspect", "ismethod"): ("ismethod(object)", "Whether object is a bound method."),
    ("inspect", "isgeneratorfunction"): ("isgeneratorfunction(obj)", "Whether obj is a function whose body has "
                                                                     "yield."),
    ("inspect", "isgenerator"): ("isgenerator(object)", "Whether object is a generator."),
    ("inspect", "isbuiltin"): ("isbuiltin(object)", "Whether object is a builtin function (print, torch.add)."),
    ("inspect", "isroutine"): ("isroutine(object)", "Whether object is a function, method or builtin."),
    ("inspect", "isabstract"): ("isabstract(object)", "Whether object is an abstract class (a method left "
                                                      "@abstractmethod)."),
    ("inspect", "getdoc"): ("getdoc(object)", "The docstring of object, its indentation cleaned (cleandoc)."),
    ("inspect", "cleandoc"): ("cleandoc(doc)", "A docstring with its indentation and blank edge lines removed."),
    ("enum", "unique"): ("unique(enumeration)", "A class decorator refusing an enumeration in which two names "
                                                 "share a value."),
}
# typing's values that help describes by the class gradcli makes them of: (module, class) -> what they are
_TYPED_DICT = ("A TypedDict: a class whose annotations name a dict's keys and their types, for type checkers; "
               "calling it makes a plain dict.")
_TYPING_VALUES = {
    ("gradcli.language.pytyping", "TypedDictMaker"): _TYPED_DICT,
    ("gradcli.language.pytyping", "TypedDictMeta"): _TYPED_DICT,
    ("gradcli.language.pytyping", "ProtocolBase"): "The base of a protocol: a class naming the methods and attributes "
                                                   "other classes have, without deriving from it; @runtime_checkable "
                                                   "lets isinstance test them.",
}

_PYTHON_MODULE_FILES = {"gradcli.language.pyabc": "abc", "gradcli.language.pycontextlib": "contextlib",
                        "gradcli.language.pytyping": "typing",
                        "gradcli.language.pyinspect": "inspect",
                        "gradcli.language.pyenum": "enum", "_io": "io", "io": "io",
                        "gradcli.language.pylogging": "logging", "gradcli.language.pytraceback": "traceback"}

# statistics' functions: CPython's, so its results and errors (statistics.StatisticsError) are Python's
_STATISTICS = {
    "mean": "The arithmetic mean of the data, computed exactly (as fractions), then rounded once.",
    "fmean": "The arithmetic mean of the data as a float, faster than mean(); optionally weighted.",
    "median": "The middle value of the data, or the mean of the two middle ones.",
    "mode": "The most common value of the data (the first one met among equally common ones).",
    "stdev": "The sample standard deviation: the square root of variance().",
    "pstdev": "The population standard deviation: the square root of the population variance.",
    "variance": "The sample variance of the data (n - 1 in the denominator), about its mean or `xbar`.",
}

# the methods of io's in-memory streams (BytesIO's take and give bytes, StringIO's text): name -> (arguments,
# paragraph)
_STREAM_METHODS = {
    "write": ("b, /", "Writes at the position, over what is there, and returns the count written."),
    "writelines": ("lines, /", "Writes each item of lines (no separators are added)."),
    "read": ("size=-1, /", "The next size items (all the rest by default); empty at the end."),
    "read1": ("size=-1, /", "As read(size)."),
    "readline": ("size=-1, /", "The next line, with its newline; empty at the end."),
    "readlines": ("hint=-1, /", "The remaining lines, as a list."),
    "readinto": ("buffer, /", "Reads into a writable bytes-like object (which scripts do not have)."),
    "readinto1": ("buffer, /", "As readinto(buffer)."),
    "seek": ("pos, whence=0, /", "Moves the position to pos from the start (whence 0), the position (1) or the "
                                 "end (2); returns the new position."),
    "tell": ("", "The position."),
    "getvalue": ("", "Everything the stream holds, whatever the position."),
    "truncate": ("size=None, /", "Cuts the stream to size items (the position by default); the position stays."),
    "close": ("", "Frees the stream: every later operation is a ValueError."),
    "closed": (None, "Whether the stream was closed."),
    "flush": ("", "Does nothing (in memory there is nothing to flush)."),
    "readable": ("", "True (while open)."), "writable": ("", "True (while open)."),
    "seekable": ("", "True (while open)."), "isatty": ("", "False (while open)."),
    "fileno": ("", "io.UnsupportedOperation: an in-memory stream has no file descriptor."),
    "detach": ("", "io.UnsupportedOperation: an in-memory stream has no underlying stream."),
    "encoding": (None, "None: a StringIO holds text, not encoded bytes."),
    "errors": (None, "None."), "line_buffering": (None, "False."),
    "newlines": (None, "The newlines met so far while reading with newline=None, else None."),
}

# functions of Python's modules that gradcli writes itself: (module, name) -> (signature, paragraph)
_PYTHON_FUNCTIONS = {
    ("functools", "lru_cache"): ("lru_cache(maxsize=128, typed=False)", "A decorator remembering a function's results "
                                 "for its last maxsize distinct arguments (None: all of them), least recently used "
                                 "first out; cache_info(), cache_clear() and cache_parameters() on the result."),
    ("functools", "cache"): ("cache(user_function, /)", "lru_cache(maxsize=None): a decorator remembering every "
                             "result of a function, keyed by its (hashable) arguments."),
    ("functools", "total_ordering"): ("total_ordering(cls)", "A class decorator adding the comparisons (< <= > >=) a "
                                      "class lacks, derived from the one it defines and __eq__."),
    ("functools", "singledispatch"): ("singledispatch(func)", "A decorator making a generic function: implementations "
                                      "added with .register (by class or by the first parameter's annotation) are "
                                      "chosen by the class of the first argument."),
    ("functools", "wraps"): ("wraps(wrapped)", "A decorator for a wrapper function: it takes the name, qualified "
                             "name, docstring and attributes of wrapped, and __wrapped__."),
    ("functools", "update_wrapper"): ("update_wrapper(wrapper, wrapped)", "What wraps does, called directly: wrapper "
                                      "takes wrapped's name, docstring and attributes; returns wrapper."),
    ("copy", "copy"): ("copy.copy(x)", "A shallow copy: a new list, dict or object holding the same items; a "
                                       "tensor's copy shares its data."),
    ("copy", "deepcopy"): ("copy.deepcopy(x, memo=None)",
                           "A copy of x and of everything it holds, each object copied once; a leaf tensor's "
                           "copy keeps requires_grad and gets a copy of its grad (model copies, best weights)."),
}
_PYTHON_FUNCTIONS.update(((f"method of _io.{cls}", name), (f"{cls}.{name}({args.replace('b, /', arg)})", para))
                          for cls, arg in (("BytesIO", "b, /"), ("StringIO", "s, /"))
                          for name, (args, para) in _STREAM_METHODS.items() if args is not None)
# argparse's methods (gradcli.language.pyargparse), by the class CPython defines each in
_ARGPARSE_METHODS = {
    "_ActionsContainer": {
        "add_argument": ("add_argument(name or flags..., *, action, nargs, const, default, type, choices, required, "
                         "help, metavar, dest)", "Declares a positional (a name) or an option (flags such as '-l', "
                         "'--lr'): how many values it takes (nargs), how each is converted (type=int, float, a "
                         "function), its default and its help text."),
        "add_argument_group": ("add_argument_group(title=None, description=None)", "A group of arguments shown under "
                               "its own heading in the help."),
        "add_mutually_exclusive_group": ("add_mutually_exclusive_group(required=False)", "A group of options of "
                                         "which at most one (exactly one if required) may be given."),
        "set_defaults": ("set_defaults(**kwargs)", "Attributes every Namespace this parser makes gets unless an "
                         "argument sets them (func= for subcommands)."),
        "get_default": ("get_default(dest)", "The default of the argument whose attribute is dest."),
    },
    "ArgumentParser": {
        "parse_args": ("parse_args(args=None, namespace=None)", "Reads the list of strings args (the script's "
                       "sys.argv[1:] when None) and returns a Namespace; a wrong argument prints the usage and an "
                       "error to sys.stderr and exits with status 2."),
        "parse_known_args": ("parse_known_args(args=None, namespace=None)", "parse_args that leaves the arguments it "
                             "does not know: returns (namespace, the list of those)."),
        "parse_intermixed_args": ("parse_intermixed_args(args=None, namespace=None)", "parse_args with positionals "
                                  "and options mixed in any order."),
        "parse_known_intermixed_args": ("parse_known_intermixed_args(args=None, namespace=None)",
                                        "parse_known_args with positionals and options mixed in any order."),
        "add_subparsers": ("add_subparsers(*, title, description, prog, parser_class, action, dest, required, help, "
                           "metavar)", "Subcommands: returns an object whose add_parser(name, ...) makes the parser "
                           "of each."),
        "format_usage": ("format_usage()", "The usage line, as a string."),
        "format_help": ("format_help()", "The whole help text, as a string."),
        "print_usage": ("print_usage(file=None)", "Writes the usage line to file (sys.stdout by default)."),
        "print_help": ("print_help(file=None)", "Writes the help text to file (sys.stdout by default)."),
        "error": ("error(message)", "Writes the usage and 'PROG: error: message' to sys.stderr and exits with status "
                  "2."),
        "exit": ("exit(status=0, message=None)", "Writes message (if any) to sys.stderr and exits with status."),
    },
    "_SubParsersAction": {"add_parser": ("add_parser(name, *, aliases=(), help=None, **kwargs)", "A subcommand's "
                                         "parser, made with ArgumentParser's keywords.")},
    "Action": {"format_usage": ("format_usage()", "The argument's first option string, as usage names it.")},
}
_PYTHON_FUNCTIONS.update(((f"bound method of {cls}", name), written) for cls, methods in _ARGPARSE_METHODS.items()
                         for name, written in methods.items())
# the functions of the Python modules gradcli writes or wraps (gradcli.language.pywarnings, pysys, pyjson, pysorting,
# pytext), by the namespace and name of the Builtin scripts hold (CPython's C functions print as builtins)
_PYTHON_FUNCTIONS.update({
    ("builtins", "warn"): ("warnings.warn(message, category=None, stacklevel=1, source=None)",
                           "Gives a warning (a UserWarning unless category says otherwise) at the line of the call, or "
                           "of its caller stacklevel - 1 calls out, filtered as the warnings' filters say."),
    ("warnings", "filterwarnings"): ("warnings.filterwarnings(action, message='', category=Warning, module='', "
                                     "lineno=0, append=False)",
                                     "Adds a filter: 'ignore', 'error', 'always', 'default', 'module' or 'once' for "
                                     "the warnings whose text matches message (from its start, any case)."),
    ("warnings", "simplefilter"): ("warnings.simplefilter(action, category=Warning, lineno=0, append=False)",
                                   "Adds a filter for every message: simplefilter('ignore') silences warnings."),
    ("warnings", "resetwarnings"): ("warnings.resetwarnings()", "Removes every filter, the default ones too."),
    ("warnings", "formatwarning"): ("warnings.formatwarning(message, category, filename, lineno, line=None)",
                                    "A warning's text as it is shown."),
    ("warnings", "catch_warnings"): ("warnings.catch_warnings(*, record=False, action=None, category=Warning, "
                                     "lineno=0, append=False)",
                                     "A with-block whose filters are put back at its end; with record=True it gives "
                                     "the list of the warnings given inside (message, category, filename, lineno)."),
    ("builtins", "exit"): ("sys.exit(status=None, /)", "Ends the run: status 0 for None, the number itself, or 1 "
                                                       "with the value written to stderr."),
    ("builtins", "getrecursionlimit"): ("sys.getrecursionlimit()", "How deep the script's function calls may nest."),
    ("builtins", "setrecursionlimit"): ("sys.setrecursionlimit(limit, /)", "Lowers that depth for this run (gradcli's "
                                                                            "own limit cannot be raised)."),
    ("json", "dumps"): ("json.dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True, allow_nan=True, "
                        "indent=None, separators=None, default=None, sort_keys=False)",
                        "obj as a JSON string; default(o) is called for what JSON has no form for."),
    ("json", "loads"): ("json.loads(s, *, object_hook=None, parse_float=None, parse_int=None, parse_constant=None, "
                        "object_pairs_hook=None)", "The value a JSON string holds."),
    ("builtins", "heappush"): ("heapq.heappush(heap, item, /)", "Adds item to the heap (a list), keeping it a heap."),
    ("builtins", "heappop"): ("heapq.heappop(heap, /)", "Removes and returns the heap's smallest item."),
    ("builtins", "heapify"): ("heapq.heapify(heap, /)", "Makes the list a heap, in place."),
    ("builtins", "heapreplace"): ("heapq.heapreplace(heap, item, /)", "Pops the smallest item, then pushes item."),
    ("builtins", "heappushpop"): ("heapq.heappushpop(heap, item, /)", "Pushes item, then pops the smallest item."),
    ("heapq", "nlargest"): ("heapq.nlargest(n, iterable, key=None)", "The n largest items, largest first."),
    ("heapq", "nsmallest"): ("heapq.nsmallest(n, iterable, key=None)", "The n smallest items, smallest first."),
    ("heapq", "merge"): ("heapq.merge(*iterables, key=None, reverse=False)",
                         "The items of sorted iterables, in one sorted stream."),
    ("builtins", "bisect_left"): ("bisect.bisect_left(a, x, lo=0, hi=len(a), *, key=None)",
                                  "Where x would go in the sorted a, before any equal items."),
    ("builtins", "bisect_right"): ("bisect.bisect_right(a, x, lo=0, hi=len(a), *, key=None)",
                                   "Where x would go in the sorted a, after any equal items (bisect.bisect too)."),
    ("builtins", "insort_left"): ("bisect.insort_left(a, x, lo=0, hi=len(a), *, key=None)",
                                  "Inserts x into the sorted a, before any equal items."),
    ("builtins", "insort_right"): ("bisect.insort_right(a, x, lo=0, hi=len(a), *, key=None)",
                                   "Inserts x into the sorted a, after any equal items (bisect.insort too)."),
    ("pprint", "pprint"): ("pprint.pprint(object, stream=None, indent=1, width=80, depth=None, *, compact=False, "
                           "sort_dicts=True, underscore_numbers=False)", "Prints object's repr laid out over lines."),
    ("pprint", "pformat"): ("pprint.pformat(object, indent=1, width=80, depth=None, *, compact=False, sort_dicts=True, "
                            "underscore_numbers=False)", "What pprint prints, as a string."),
    ("pprint", "pp"): ("pprint.pp(object, *args, sort_dicts=False, **kwargs)", "pprint, dict keys in their order."),
    ("pprint", "saferepr"): ("pprint.saferepr(object)", "repr(object), a container holding itself shown safely."),
    ("pprint", "isreadable"): ("pprint.isreadable(object)", "Whether eval could rebuild object from its repr."),
    ("pprint", "isrecursive"): ("pprint.isrecursive(object)", "Whether object holds itself."),
    ("textwrap", "wrap"): ("textwrap.wrap(text, width=70, **kwargs)", "The text's words in lines of at most width "
                                                                      "characters, as a list."),
    ("textwrap", "fill"): ("textwrap.fill(text, width=70, **kwargs)", "wrap()'s lines joined by newlines."),
    ("textwrap", "shorten"): ("textwrap.shorten(text, width, **kwargs)", "The text cut to width, ending in "
                                                                         "placeholder=' [...]'."),
    ("textwrap", "dedent"): ("textwrap.dedent(text)", "The text without the whitespace all its lines start with."),
    ("textwrap", "indent"): ("textwrap.indent(text, prefix, predicate=None)", "prefix added before the text's lines."),
})


# logging (gradcli.language.pylogging): its functions, by the name scripts call them by
_LOG_CALL = "(msg, *args, exc_info=None, stack_info=False, stacklevel=1, extra=None)"
_LOG_LEVELS = {"debug": "DEBUG", "info": "INFO", "warning": "WARNING", "error": "ERROR", "critical": "CRITICAL"}
_PYTHON_FUNCTIONS.update({
    ("logging", "basicConfig"): ("logging.basicConfig(*, level=None, format=None, datefmt=None, style='%', "
                                 "stream=None, handlers=None, force=False)",
                                 "Gives the root logger a handler (a StreamHandler on sys.stderr, or on stream, or "
                                 "handlers) with a Formatter of format, datefmt and style, and sets its level; does "
                                 "nothing if the root has a handler already, unless force=True. No filename=: scripts "
                                 "write no files."),
    ("logging", "getLogger"): ("logging.getLogger(name=None)", "The logger called name, the same object every time "
                               "(the root logger without a name); 'a.b' is a child of 'a'. Scripts use "
                               "getLogger(__name__)."),
    ("logging", "getLoggerClass"): ("logging.getLoggerClass()", "logging.Logger, the class of the loggers getLogger "
                                                                "makes."),
    **{("logging", name): (f"logging.{name}{_LOG_CALL}", f"Logs msg % args at level {level} on the root logger, "
                                                         "giving it basicConfig()'s handler first if it has none.")
       for name, level in _LOG_LEVELS.items()},
    ("logging", "warn"): (f"logging.warn{_LOG_CALL}", "logging.warning, deprecated (a DeprecationWarning)."),
    ("logging", "exception"): (f"logging.exception{_LOG_CALL.replace('exc_info=None', 'exc_info=True')}",
                               "Logs msg % args at level ERROR on the root logger, with the exception being handled "
                               "(call it in an `except` block)."),
    ("logging", "log"): ("logging.log(level, msg, *args, **kwargs)", "Logs msg % args at the level (an int) on the "
                                                                     "root logger."),
    ("logging", "disable"): ("logging.disable(level=CRITICAL)", "Drops every record at level or below, whatever the "
                                                                "loggers' levels; disable(NOTSET) undoes it."),
    ("logging", "getLevelName"): ("logging.getLevelName(level)", "The name of a level ('INFO' for 20), the level of "
                                                                 "a name, or 'Level N'."),
    ("logging", "addLevelName"): ("logging.addLevelName(level, levelName)", "Names a level: its records show the "
                                                                           "name."),
    ("logging", "getLevelNamesMapping"): ("logging.getLevelNamesMapping()", "The level names and their numbers, as a "
                                                                            "new dict."),
    ("logging", "makeLogRecord"): ("logging.makeLogRecord(dict)", "A LogRecord whose attributes are the dict's "
                                                                  "items."),
    ("logging", "shutdown"): ("logging.shutdown()", "Flushes the handlers of the session's loggers."),
})

# traceback (gradcli.language.pytraceback)
_PYTHON_FUNCTIONS.update({
    ("traceback", "print_exc"): ("traceback.print_exc(limit=None, file=None, chain=True)",
                                 "Prints the exception being handled with its traceback, as Python would had it "
                                 "not been caught, to file (sys.stderr by default)."),
    ("traceback", "format_exc"): ("traceback.format_exc(limit=None, chain=True)",
                                  "What print_exc prints, as one string."),
    ("traceback", "print_exception"): ("traceback.print_exception(exc, /, value=<implicit>, tb=<implicit>, "
                                       "limit=None, file=None, chain=True)",
                                       "Prints an exception: its traceback (the frames from the try down to where it "
                                       "was raised), its type and message, after the exceptions it was chained to."),
    ("traceback", "format_exception"): ("traceback.format_exception(exc, /, value=<implicit>, tb=<implicit>, "
                                        "limit=None, chain=True)",
                                        "The lines print_exception prints, each ending in a newline."),
    ("traceback", "format_exception_only"): ("traceback.format_exception_only(exc, /, value=<implicit>)",
                                             "The exception's last line ('KeyError: 'x''), and its notes."),
    ("traceback", "print_stack"): ("traceback.print_stack(f=None, limit=None, file=None)",
                                   "Prints the frames of the script that led to this call, outermost first."),
    ("traceback", "format_stack"): ("traceback.format_stack(f=None, limit=None)",
                                    "The lines print_stack prints."),
})
# its classes and their methods, by their qualified names
_PYTHON_NAMES.update({
    ("logging", "Logger"): ("class Logger(name, level=NOTSET)", "A named channel of records: logger.info('epoch %d', "
                            "e) makes a record if the level lets it through and hands it to its handlers and its "
                            "ancestors'. getLogger(name) gives the one of a name."),
    ("logging", "RootLogger"): ("class RootLogger(level)", "The class of logging.root, the logger at the top of the "
                                                           "hierarchy."),
    ("logging", "Handler"): ("class Handler(level=NOTSET)", "Where records go: a subclass defines emit(record); "
                             "setLevel, setFormatter and addFilter choose which records and how they read."),
    ("logging", "StreamHandler"): ("class StreamHandler(stream=None)", "A handler writing each record's text and a "
                                   "newline to a stream: sys.stderr by default, sys.stdout or an io.StringIO."),
    ("logging", "NullHandler"): ("class NullHandler(level=NOTSET)", "A handler that drops every record."),
    ("logging", "Formatter"): ("class Formatter(fmt=None, datefmt=None, style='%', validate=True, *, defaults=None)",
                               "Turns a record into text: fmt's fields ('%(levelname)s', '{name}', '$message') "
                               "filled from the record's attributes; datefmt is asctime's strftime format."),
    ("logging", "Filter"): ("class Filter(name='')", "Lets through the records of the logger called name and its "
                            "descendants (all records for '')."),
    ("logging", "Filterer"): ("class Filterer()", "The base of loggers and handlers: their filters."),
    ("logging", "LoggerAdapter"): ("class LoggerAdapter(logger, extra=None)", "A logger with context: each record it "
                                   "logs gets extra's items as attributes (process(msg, kwargs) adds them)."),
    ("logging", "LogRecord"): ("class LogRecord(name, level, pathname, lineno, msg, args, exc_info, func=None, "
                               "sinfo=None)", "One logged event: its logger's name, level, message and arguments, "
                               "where and when it was logged."),
    ("logging", "PercentStyle"): ("class PercentStyle(fmt, *, defaults=None)", "A Formatter's %-style fields."),
    ("logging", "StrFormatStyle"): ("class StrFormatStyle(fmt, *, defaults=None)", "A Formatter's {}-style fields."),
    ("logging", "StringTemplateStyle"): ("class StringTemplateStyle(fmt, *, defaults=None)", "A Formatter's $-style "
                                                                                           "fields."),
    **{("logging", f"{cls}.{name}"): (f"{cls}.{name}{_LOG_CALL}", f"Logs msg % args at level {level} if the "
                                      "logger lets it through.")
       for name, level in _LOG_LEVELS.items() for cls in ("Logger", "LoggerAdapter")},
    **{("logging", f"{cls}.warn"): (f"{cls}.warn{_LOG_CALL}", "warning, deprecated (a DeprecationWarning).")
       for cls in ("Logger", "LoggerAdapter")},
    **{("logging", f"{cls}.exception"): (f"{cls}.exception{_LOG_CALL.replace('exc_info=None', 'exc_info=True')}",
                                         "Logs msg % args at level ERROR with the exception being handled.")
       for cls in ("Logger", "LoggerAdapter")},
    **{("logging", f"{cls}.log"): (f"{cls}.log(level, msg, *args, **kwargs)", "Logs msg % args at the level (an "
                                                                            "int) if the logger lets it through.")
       for cls in ("Logger", "LoggerAdapter")},
    **{("logging", f"{cls}.setLevel"): (f"{cls}.setLevel(level)", "Sets the level (an int or a name such as "
                                        "'INFO'): records below it are dropped.") for cls in ("Logger", "LoggerAdapter")},
    ("logging", "Handler.setLevel"): ("Handler.setLevel(level)", "Sets the level (an int or a name): the handler "
                                                                 "drops records below it."),
    ("logging", "Logger.getEffectiveLevel"): ("Logger.getEffectiveLevel()", "The level in force: the logger's own, or "
                                              "its nearest ancestor's that is set."),
    ("logging", "LoggerAdapter.getEffectiveLevel"): ("LoggerAdapter.getEffectiveLevel()", "The level in force of its "
                                                                                          "logger."),
    ("logging", "Logger.isEnabledFor"): ("Logger.isEnabledFor(level)", "Whether a record of the level would be made."),
    ("logging", "LoggerAdapter.isEnabledFor"): ("LoggerAdapter.isEnabledFor(level)", "Whether its logger would make "
                                                                                     "a record of the level."),
    ("logging", "Logger.addHandler"): ("Logger.addHandler(hdlr)", "Adds a handler (once)."),
    ("logging", "Logger.removeHandler"): ("Logger.removeHandler(hdlr)", "Removes a handler if it is there."),
    ("logging", "Logger.hasHandlers"): ("Logger.hasHandlers()", "Whether the logger or an ancestor it propagates to "
                                                                "has a handler."),
    ("logging", "LoggerAdapter.hasHandlers"): ("LoggerAdapter.hasHandlers()", "Whether its logger has handlers."),
    ("logging", "Logger.getChild"): ("Logger.getChild(suffix)", "The logger called name.suffix."),
    ("logging", "Logger.handle"): ("Logger.handle(record)", "Hands a record to the handlers (unless the logger is "
                                                            "disabled or a filter drops it)."),
    ("logging", "Logger.callHandlers"): ("Logger.callHandlers(record)", "Hands a record to the handlers of the "
                                         "logger and its ancestors while they propagate; to sys.stderr if none."),
    ("logging", "Logger.findCaller"): ("Logger.findCaller(stack_info=False, stacklevel=1)", "(file name, line, "
                                       "function name, stack) of the script's line that logs."),
    ("logging", "Logger.makeRecord"): ("Logger.makeRecord(name, level, fn, lno, msg, args, exc_info, func=None, "
                                       "extra=None, sinfo=None)", "A LogRecord, with extra's items as attributes."),
    ("logging", "LoggerAdapter.process"): ("LoggerAdapter.process(msg, kwargs)", "The message and keyword arguments "
                                           "to log: kwargs with the adapter's extra (a subclass may change the message)."),
    ("logging", "Filterer.addFilter"): ("addFilter(filter)", "Adds a filter (a Filter, an object with a filter "
                                        "method, or a function of a record returning whether to keep it)."),
    ("logging", "Filterer.removeFilter"): ("removeFilter(filter)", "Removes a filter if it is there."),
    ("logging", "Filterer.filter"): ("filter(record)", "Whether every filter keeps the record."),
    ("logging", "Filter.filter"): ("Filter.filter(record)", "Whether the record's logger is the filter's name or a "
                                                            "descendant."),
    ("logging", "Handler.setFormatter"): ("Handler.setFormatter(fmt)", "The Formatter that turns records into text."),
    ("logging", "Handler.format"): ("Handler.format(record)", "The record's text, by the handler's formatter (or "
                                                              "'%(message)s')."),
    ("logging", "Handler.emit"): ("Handler.emit(record)", "Writes the record somewhere: what a subclass defines."),
    ("logging", "Handler.handle"): ("Handler.handle(record)", "Emits the record if the filters keep it."),
    ("logging", "Handler.handleError"): ("Handler.handleError(record)", "Reports on sys.stderr a record that could "
                                                                        "not be emitted; the run goes on."),
    ("logging", "Handler.flush"): ("Handler.flush()", "Flushes what the handler wrote."),
    ("logging", "Handler.close"): ("Handler.close()", "Marks the handler closed."),
    ("logging", "Handler.get_name"): ("Handler.get_name()", "The handler's name (its name attribute)."),
    ("logging", "Handler.set_name"): ("Handler.set_name(name)", "Names the handler."),
    ("logging", "Handler.acquire"): ("Handler.acquire()", "Does nothing (scripts run in one thread)."),
    ("logging", "Handler.release"): ("Handler.release()", "Does nothing (scripts run in one thread)."),
    ("logging", "Handler.createLock"): ("Handler.createLock()", "Does nothing (scripts run in one thread)."),
    ("logging", "StreamHandler.emit"): ("StreamHandler.emit(record)", "Writes the record's text and the terminator "
                                                                      "to the stream."),
    ("logging", "StreamHandler.flush"): ("StreamHandler.flush()", "Flushes the stream."),
    ("logging", "StreamHandler.setStream"): ("StreamHandler.setStream(stream)", "Writes to stream from now on; "
                                             "returns the old one (None if it is the same)."),
    ("logging", "NullHandler.emit"): ("NullHandler.emit(record)", "Does nothing."),
    ("logging", "NullHandler.handle"): ("NullHandler.handle(record)", "Does nothing."),
    ("logging", "NullHandler.createLock"): ("NullHandler.createLock()", "Does nothing."),
    ("logging", "Formatter.format"): ("Formatter.format(record)", "The record's text: the message (msg % args), the "
                                      "format's fields, then the exception and stack it carries."),
    ("logging", "Formatter.formatTime"): ("Formatter.formatTime(record, datefmt=None)", "The record's time: "
                                          "time.strftime(datefmt), or '2024-01-31 12:00:00,123'."),
    ("logging", "Formatter.formatException"): ("Formatter.formatException(ei)", "The text of an exc_info tuple's "
                                               "exception: its traceback, as traceback.print_exception writes it."),
    ("logging", "Formatter.formatMessage"): ("Formatter.formatMessage(record)", "The format's fields filled from "
                                                                                "the record."),
    ("logging", "Formatter.formatStack"): ("Formatter.formatStack(stack_info)", "The stack's text (as it is)."),
    ("logging", "Formatter.usesTime"): ("Formatter.usesTime()", "Whether the format shows asctime."),
    ("logging", "LogRecord.getMessage"): ("LogRecord.getMessage()", "The message: str(msg) % args."),
    ("logging", "PercentStyle.format"): ("format(record)", "The format's fields filled from the record."),
    ("logging", "PercentStyle.usesTime"): ("usesTime()", "Whether the format shows asctime."),
    ("logging", "PercentStyle.validate"): ("validate()", "Checks the format has fields of the style (ValueError if "
                                                         "not)."),
    ("logging", "StrFormatStyle.validate"): ("validate()", "Checks the format's {}-fields (ValueError if they are "
                                                           "wrong or missing)."),
    ("logging", "StringTemplateStyle.usesTime"): ("usesTime()", "Whether the format shows $asctime."),
    ("logging", "StringTemplateStyle.validate"): ("validate()", "Checks the format has $-fields (ValueError if not)."),
})
# re's functions and the methods of its Pattern and Match objects, and unicodedata's functions
# (gradcli.language.pyre)
_RE_FUNCTIONS = {
    "compile": ("pattern, flags=0", "The pattern compiled into a Pattern object (kept in a cache: compiling the same "
                                    "pattern again gives the same object)."),
    "match": ("pattern, string, flags=0", "A Match if the pattern matches at the start of the string, else None."),
    "fullmatch": ("pattern, string, flags=0", "A Match if the pattern matches the whole string, else None."),
    "search": ("pattern, string, flags=0", "A Match for the first place in the string the pattern matches, or None."),
    "findall": ("pattern, string, flags=0", "Every non-overlapping match as a list: the matched texts, the group's "
                                            "text for a pattern with one group, tuples of the groups' for more."),
    "finditer": ("pattern, string, flags=0", "An iterator over the Match of every non-overlapping match."),
    "split": ("pattern, string, maxsplit=0, flags=0", "The string split where the pattern matches (the groups' "
                                                      "texts kept between the pieces), at most maxsplit times."),
    "sub": ("pattern, repl, string, count=0, flags=0", "The string with each match replaced by repl: a string, "
                                                       "where \\1 and \\g<name> stand for groups, or a function "
                                                       "given the Match."),
    "subn": ("pattern, repl, string, count=0, flags=0", "sub's result and the number of replacements made, as a "
                                                        "tuple."),
    "escape": ("pattern", "The string with every character that has a meaning in a pattern escaped."),
    "purge": ("", "Empties the cache of compiled patterns."),
}
_PYTHON_FUNCTIONS.update(((("re", name), (f"re.{name}({args})", para)) for name, (args, para) in _RE_FUNCTIONS.items()))
_PATTERN_METHODS = {
    "match": ("string, pos=0, endpos=sys.maxsize", "A Match if the pattern matches at pos, else None."),
    "fullmatch": ("string, pos=0, endpos=sys.maxsize", "A Match if the pattern matches all of string[pos:endpos]."),
    "search": ("string, pos=0, endpos=sys.maxsize", "A Match for the first place in string[pos:endpos] the pattern "
                                                    "matches, or None."),
    "findall": ("string, pos=0, endpos=sys.maxsize", "Every non-overlapping match as a list (the groups' texts when "
                                                     "it has groups)."),
    "finditer": ("string, pos=0, endpos=sys.maxsize", "An iterator over the Match of every non-overlapping match."),
    "split": ("string, maxsplit=0", "The string split where the pattern matches, at most maxsplit times."),
    "sub": ("repl, string, count=0", "The string with each match replaced by repl (a string or a function)."),
    "subn": ("repl, string, count=0", "sub's result and the number of replacements, as a tuple."),
}
_MATCH_METHODS = {
    "group": ("[group1, ...]", "The text of one group (0, the default: the whole match), or a tuple of several; "
                               "None for a group that did not take part."),
    "groups": ("default=None", "The texts of every group, as a tuple (default for those that did not take part)."),
    "groupdict": ("default=None", "The texts of the named groups, as a dict."),
    "start": ("group=0", "Where the group's text starts in the string (-1 if it did not take part)."),
    "end": ("group=0", "Where the group's text ends in the string (-1 if it did not take part)."),
    "span": ("group=0", "(start, end) of the group."),
    "expand": ("template", "The template with its group references (\\1, \\g<name>) replaced by the groups' "
                           "texts, as sub does."),
}
_PYTHON_FUNCTIONS.update(((("method of re.Pattern", name), (f"Pattern.{name}({args})", para))
                          for name, (args, para) in _PATTERN_METHODS.items()))
_PYTHON_FUNCTIONS.update(((("method of re.Match", name), (f"Match.{name}({args})", para))
                          for name, (args, para) in _MATCH_METHODS.items()))
_UNICODEDATA = {
    "normalize": ("form, unistr, /", "The string in normal form 'NFC', 'NFD' (accents as separate combining "
                                     "characters), 'NFKC' or 'NFKD'."),
    "is_normalized": ("form, unistr, /", "Whether the string is in the normal form."),
    "category": ("chr, /", "The character's general category: 'Lu', 'Ll', 'Nd', 'Mn' (a combining mark), ..."),
    "name": ("chr, default=<unrepresentable>, /", "The character's Unicode name (ValueError, or default, if it has "
                                                  "none)."),
    "lookup": ("name, /", "The character with this Unicode name (KeyError if none)."),
    "decimal": ("chr, default=<unrepresentable>, /", "The character's decimal value, as an int."),
    "digit": ("chr, default=<unrepresentable>, /", "The character's digit value, as an int."),
    "numeric": ("chr, default=<unrepresentable>, /", "The character's numeric value, as a float ('½': 0.5)."),
    "combining": ("chr, /", "The character's canonical combining class (0: not combining)."),
    "east_asian_width": ("chr, /", "The character's East Asian width: 'F', 'H', 'W', 'Na', 'A' or 'N'."),
    "mirrored": ("chr, /", "1 if the character is mirrored in bidirectional text ('('), else 0."),
    "bidirectional": ("chr, /", "The character's bidirectional class: 'L', 'R', 'AN', ... or ''."),
    "decomposition": ("chr, /", "The character's decomposition mapping, as a string of hex code points, or ''."),
}
_PYTHON_FUNCTIONS.update(((("builtins", name), (f"unicodedata.{name}({args})", para))
                          for name, (args, para) in _UNICODEDATA.items()))
# Python's dataclasses functions, as scripts hold them (gradcli.language.pydataclasses)
_DATACLASSES = {
    "dataclass": ("dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, frozen=False)",
                  "A class decorator: __init__, __repr__, __eq__ (and with order=True the comparisons, with "
                  "frozen=True read-only fields) from the class's annotated fields."),
    "field": ("field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None, compare=True)",
              "A field's default, or the function that makes it (default_factory=list), and what the generated "
              "methods do with it."),
    "fields": ("fields(class_or_instance)", "A dataclass's fields, in order: each with name, type and default."),
    "asdict": ("asdict(obj, *, dict_factory=dict)", "A dataclass instance as a dict of its fields, recursively."),
    "astuple": ("astuple(obj, *, tuple_factory=tuple)", "A dataclass instance as a tuple of its fields, recursively."),
    "replace": ("replace(obj, /, **changes)", "A new instance of the dataclass with some fields changed."),
    "is_dataclass": ("is_dataclass(obj)", "Whether obj is a dataclass or an instance of one."),
}


_GENERIC = "Part of gradcli's torch, with PyTorch's meaning."


def what(name: str) -> str:
    """The paragraph for a bare name (`sum`, `add_`, `arccos`)."""
    if name in _WHAT:
        return _WHAT[name]
    if name.startswith("arc"):                      # arccos: acos
        return what("a" + name[3:])
    if name.endswith("_") and len(name) > 1:        # add_: add, in place
        base = what(name[:-1])
        if base != _GENERIC:
            return f"In place: {_first_lower(base)} The tensor itself is changed and returned."
    return _GENERIC


def _first_lower(text: str) -> str:
    return text[:1].lower() + text[1:]


# ------------------------------------------------------------------------------------ signatures
def _defined(function):
    """The function itself for the stand-in of one whose module loads on first use (stdlib._later)."""
    target = getattr(function, "target", None) if function.__class__ is FunctionType else None
    return target() if target is not None else function


def signature(function, name: str, method: bool = False) -> str:
    """`name(params)` from the definition: `self` and the engine's own parameters (underscored, `out`,
    a catch-all **kw) left out."""
    function = _defined(function)
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError):
        return f"{name}(...)"
    shown = []
    star = False
    for p in sig.parameters.values():
        if p.name.startswith("_") or p.name == "out" or (method and p.name == "self"):
            continue
        if p.kind == p.VAR_KEYWORD and p.name in ("kw", "kwargs"):
            continue
        if p.kind == p.KEYWORD_ONLY and not star:
            shown.append("*")
            star = True
        if p.kind == p.VAR_POSITIONAL:
            star = True
        p = p.replace(annotation=p.empty)
        if p.default is ALL_DIMS:                       # "every dim", which PyTorch's signatures write as None
            p = p.replace(default=None)
        elif p.default is not p.empty and p.default.__class__ not in _LITERALS:
            p = p.replace(default=_NOT_GIVEN)           # an engine sentinel: "not given"
        shown.append(str(p))
    return f"{name}({', '.join(shown)})"


class _NotGiven:
    def __repr__(self) -> str:
        return "..."


_NOT_GIVEN = _NotGiven()
_LITERALS = (type(None), bool, int, float, str, tuple)


def _forwarded(function) -> str | None:
    """The Tensor method a `torch.X(input, *args, **kwargs)` wrapper forwards to, by its name."""
    function = _defined(function)
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if [p.kind for p in params] == [inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL,
                                    inspect.Parameter.VAR_KEYWORD]:
        return getattr(function, "__name__", None)
    return None


# --------------------------------------------------------------------------------------- lookup
def _qualified_names() -> dict:
    """id(object) -> its public name (`torch.ones`, `torch.nn.functional.relu`), first name wins."""
    from gradcli.language import stdlib
    names: dict = {}

    def walk(module, prefix):
        for name, value in module.members.items():
            if value.__class__ is stdlib.ScriptModule:
                names.setdefault(id(value), prefix + name)
                walk(value, prefix + name + ".")
            elif callable(value) or value.__class__.__name__ == "torch.dtype":
                names.setdefault(id(getattr(value, "func", value) if isinstance(value, stdlib.Builtin) else value),
                                 prefix + name)
    names[id(stdlib.TORCH)] = "torch"
    names[id(stdlib.MATH)] = "math"
    names[id(stdlib.STATISTICS)] = "statistics"
    walk(stdlib.TORCH, "torch.")
    walk(stdlib.MATH, "math.")
    for name, value in stdlib.STATISTICS.members.items():     # Bounded: help() reads the function it stands for
        names[id(getattr(value, "original", value))] = "statistics." + name
    return names


# Parameters written out for the functions whose definitions take *args, **kwargs (to tell a keyword from a
# positional argument, as PyTorch's messages do)
_WRITTEN = {"logit": "eps=None", "logit_": "eps=None", "nan_to_num": "nan=0.0, posinf=None, neginf=None",
            "nan_to_num_": "nan=0.0, posinf=None, neginf=None",
            "var_mean": "input, dim=None, *, correction=None, keepdim=False",
            "std_mean": "input, dim=None, *, correction=None, keepdim=False",
            **{name: "window_length, periodic=True, *, dtype=None, device=None, requires_grad=False"
               for name in ("hann_window", "bartlett_window", "blackman_window")},
            "hamming_window": "window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, device=None, "
                              "requires_grad=False",
            "kaiser_window": "window_length, periodic=True, beta=12.0, *, dtype=None, device=None, requires_grad=False"}


# gradcli.language.pyfunctools' wrappers of a script's function, by class name -> what help() adds to its docstring
_WRAPPED_BY = {"_lru_cache_wrapper": "Its results are cached by functools.lru_cache: cache_info(), cache_clear()",
               "_SingleDispatch": "A generic function of functools.singledispatch: register(), dispatch(), registry"}


def text_for(obj, builtins: dict | None = None) -> str:
    """The help shown for `obj`: a signature line and a paragraph, indented."""
    from gradcli.language import stdlib
    from gradcli.language.bounds import Bounded
    from gradcli.language.compiler import ScriptFunction
    from gradcli.engine.tensor import Tensor
    if builtins:
        for name, value in builtins.items():
            if value is obj and name in _BUILTINS:
                sig, para = _BUILTINS[name]
                return _format(sig, para)
    takes_out = False
    if isinstance(obj, stdlib.Builtin):     # as scripts hold functions: the function itself describes it
        written = _PYTHON_FUNCTIONS.get((obj.namespace, obj.name))
        if written is not None:
            return _format(*written)
        from gradcli.language import outkeyword
        takes_out = f"{obj.namespace}.{obj.name}" in outkeyword.table()
        obj = obj.func
    elif isinstance(obj, Bounded):          # collections.Counter, ...: the class it stands for
        obj = obj.original
    made = _WRAPPED_BY.get(obj.__class__.__name__) if obj.__class__.__module__.endswith("pyfunctools") else None
    if made is not None and obj.wrapped.__class__ is ScriptFunction:     # the function lru_cache... wraps
        fn = obj.wrapped
        return _format(f"{fn.name}({', '.join(fn.parameters())})",
                       f"{fn.doc or 'A function defined in this session.'} ({made}.)")
    if obj.__class__ is ScriptFunction:
        return _format(f"{obj.name}({', '.join(obj.parameters())})", obj.doc or "A function defined in this session.")
    if obj.__class__ is stdlib.ScriptModule:
        members = ", ".join(sorted(n for n in obj.members if not n.startswith("_")))
        return _format(f"module {obj.name}", f"{_MODULES.get(obj.name, '')} Names: {members}.".strip())
    if obj.__class__ is Tensor:
        return _format(f"Tensor of shape {list(obj.shape)}, {obj.dtype}",
                       "A tensor. help(x.NAME) or x.NAME? describes one of its methods.")
    function, owner = getattr(obj, "__func__", None), getattr(obj, "__self__", None)
    if function is not None and owner.__class__ is Tensor:
        name = function.__name__
        if name in _WRITTEN:
            return _format(f"Tensor.{name}({_WRITTEN[name]})", what(name))
        return _format(signature(function, f"Tensor.{name}", method=True), what(name))
    if obj.__class__.__name__ == "torch.dtype":
        return _format(repr(obj), "A dtype: the type of a tensor's elements, given as dtype=.")
    if obj.__class__.__name__ == "torch.memory_format":
        return _format(repr(obj), what(repr(obj).removeprefix("torch.")))
    kind = _TYPING_VALUES.get((obj.__class__.__module__, obj.__class__.__qualname__))
    if kind is not None:        # typing's values gradcli makes that help names by what they are
        return _format(repr(obj), kind)
    if obj.__class__ in stdlib.OPAQUE_CLASSES:
        return _format(repr(obj), "A type annotation (typing): it prints and compares as typing's does; none of its "
                                  "attributes is in the language.")
    if getattr(obj, "__module__", None) == "gradcli.language.pydataclasses" and \
            getattr(obj, "__name__", None) in _DATACLASSES:
        return _format(*_DATACLASSES[obj.__name__])
    module = getattr(obj, "__module__", None)
    written = _PYTHON_NAMES.get((_PYTHON_MODULE_FILES.get(module, module), getattr(obj, "__qualname__", None)))
    if written is not None:
        return _format(*written)
    if module == "collections.abc" and isinstance(obj, type):
        return _format(f"class {obj.__name__}", "One of Python's abstract classes, for isinstance and issubclass "
                                                "(the values that have its methods, or that Python registers as it: dict as a "
                                                "Mapping); a "
                                                "script's class does not derive from it in gradcli's language.")
    qualified = _qualified_names().get(id(obj))
    if qualified is None:
        if isinstance(obj, type):
            return _format(f"class {obj.__name__}", "A type of values scripts use.")
        return _format(stdlib.type_name(obj), "A value; help() describes functions, methods, modules and builtins.")
    bare = qualified.rsplit(".", 1)[1]
    if qualified.startswith("math."):
        return _format(signature(obj, qualified), "Python's math function of this name.")
    if qualified.startswith("statistics.") and bare in _STATISTICS:
        return _format(qualified + str(inspect.signature(obj)), _STATISTICS[bare])
    method = _forwarded(obj)
    if bare in _WRITTEN:
        written = _WRITTEN[bare]
        sig = f"{qualified}({written if written.startswith('input') else 'input, ' + written})"
    elif method is not None and hasattr(Tensor, method):
        sig = signature(getattr(Tensor, method), qualified, method=True).replace("(", "(input, ", 1).replace(", )", ")")
    else:
        sig = signature(obj, qualified)
    if takes_out:       # PyTorch's out= (gradcli.language.outkeyword), which gradcli's own functions never list
        sig = sig[:-1] + (", out=None)" if "*" in sig else ("*, out=None)" if sig.endswith("()") else ", *, out=None)"))
    return _format(sig, _WHAT.get(qualified) or what(bare))


def constant_text(module: str, name: str, value) -> str:
    """The help for a module's constant (`torch.pi?`)."""
    paragraph = what(name) if name in _WHAT else "A constant of the module."
    return _format(f"{module}.{name} = {value!r}", paragraph)


# Tensor attributes whose name means something else in torch
_ATTRIBUTES = {"grad": "The gradient backward accumulated into this tensor, or None."}


def method_text(name: str) -> str:
    """The help for the Tensor method or attribute `name` (from `x.name?`, without reading it)."""
    from gradcli.engine.tensor import Tensor
    member = inspect.getattr_static(Tensor, name, None)
    if callable(member):
        return _format(signature(member, f"Tensor.{name}", method=True), what(name))
    return _format(f"Tensor.{name}", _ATTRIBUTES.get(name) or what(name))


def _format(signature_line: str, paragraph: str) -> str:
    import textwrap
    body = textwrap.fill(paragraph, width=96, initial_indent="    ", subsequent_indent="    ")
    return f"{signature_line}\n{body}\n"


USAGE = "help(obj) describes a function, a tensor method, a module or a builtin; in the REPL, obj? does too.\n"
