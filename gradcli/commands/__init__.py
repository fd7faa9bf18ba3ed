"""The subcommands, one module each (run, graph, grad/jacobian/hessian, explain, help, repl), and what
they share (commands.common: the shared options, reading a script, reporting an error)."""
