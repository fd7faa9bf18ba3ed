"""The interactive REPL (`gradcli repl`): a prompt_toolkit front end on the same Session as `gradcli run`.

Modules: shell (running inputs, the error policy), prompt (the prompt_toolkit loop), keys,
completion, highlight, magics, toolbar, history, scan (unfinished input). Only prompt, keys and the
factory functions in completion, highlight and history import prompt_toolkit.
"""
