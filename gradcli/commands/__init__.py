"""The subcommands, one module each (run, graph, grad/jacobian/hessian, explain, help, repl), and what
they share (commands.common: the shared options, reading a script, reporting an error)."""

# Commands that live in modules of their own: each module has add_parser(subparsers, script_options)
# and run(args) -> exit status, and imports what it needs only inside run().
COMMAND_MODULES = {"graph": "gradcli.commands.graph",
                   "grad": "gradcli.commands.oneshot", "jacobian": "gradcli.commands.oneshot", "hessian": "gradcli.commands.oneshot",
                   "explain": "gradcli.commands.explain", "help": "gradcli.commands.help", "completion": "gradcli.commands.help",
                   "kernel": "gradcli.commands.kernel"}
