"""Tools that watch a run without changing it: the `why:` notes after an error, `gradcli explain`,
--check-grads, --nan-check, graph views and --format jsonl events. A plain run never imports them."""
