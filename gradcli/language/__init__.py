"""The script language: text to tokens (lexer, strings), tokens to a syntax tree (tables, parser,
treebuild, syntax), the tree to closures (scopes, compiler), and what a script can reach (stdlib's
torch, math and random modules, access's attribute allow-lists, bounds on what builtins build, help texts).
Nothing here knows the command line or the REPL; the engine knows nothing of the language."""
