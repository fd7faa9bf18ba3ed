"""`gradcli run SCRIPT...`, `gradcli -c CODE` and piped standard input: one script in a fresh session, its
error reported, its exit status; --check-grads and --nan-check after or around it."""

from __future__ import annotations

import sys
import time

from gradcli import deadline
from gradcli.commands.common import Terminal, events_for, fail, read_script, report, timing_footer
from gradcli.errors import EXIT_OK, EXIT_SCRIPT_ERROR, EXIT_USAGE, ScriptError, ScriptExit

def _diagnosis(session, source: str, filename: str, started: float):
    """The session's hook for a line saying why a warning happened, and a function giving the line
    for an error; both import gradcli.diagnostics.why only when called, so plain runs never load it."""
    def units():
        from gradcli.diagnostics.why import Unit
        return [Unit(source, filename)]

    def warning(line, col, category, message):
        from gradcli.language.compiler import NON_LEAF_GRAD_WARNING
        if message != NON_LEAF_GRAD_WARNING:        # the only warning with a note
            return None
        from gradcli.diagnostics.why import warning_note
        return warning_note(session, line, col, category, message, units(), time.perf_counter() - started)

    def error(err: ScriptError):
        if err.exit_status != EXIT_SCRIPT_ERROR:
            return None
        from gradcli.diagnostics.why import error_note
        return error_note(err, session, units(), time.perf_counter() - started)
    session.why = warning
    return error


def run_text(source: str, filename: str, seed, display=None, fmt=None, stable_ids=False, check_grads=False,
             nan_check=False, timeout=None, script_args=()) -> int:
    """Run one script in a fresh session (`script_args`: its sys.argv after its name); report any error; return the
    exit status."""
    from gradcli.session import Session
    started = time.perf_counter()
    events = events_for(fmt)
    try:
        session = Session(seed=seed, display=display, events=events, stable_ids=stable_ids, script_args=script_args)
    except (ValueError, RuntimeError) as e:      # a --seed that manual_seed refuses
        sys.stderr.write(f"gradcli: --seed {seed}: {e}\n")
        return EXIT_USAGE
    why = _diagnosis(session, source, filename, started)
    if timeout:
        from gradcli.language import parser
        parser.load()       # the grammar's tables (built afresh when the cache is cold): not the script's time
    timer = deadline.Deadline(timeout, filename).start()     # --timeout: TimedOut, status 124
    try:
        if nan_check:
            from gradcli.diagnostics.nancheck import run_watched
            run_watched(session, source, filename)
        else:
            session.run_source(source, filename)
    except ScriptExit as e:         # sys.exit(): CPython's status, and the text of a code that is no number
        if e.exit_status:
            if events is None:
                if e.text:
                    sys.stdout.flush()
                    sys.stderr.write(e.text + "\n")
            else:
                events.error(e)
                events.end(False, started, filename)
            return _finalize(session) or e.exit_status
    except ScriptError as e:
        if events is None:
            report(e, why(e))
        else:
            e.why = why(e)
            events.error(e)
            events.end(False, started, filename)
        return _finalize(session) or e.exit_status
    except KeyboardInterrupt:
        if events is not None:
            events.error(ScriptError("KeyboardInterrupt", "", filename))
            events.end(False, started, filename)
        raise
    else:
        stopped = _finalize(session)
        if stopped:
            return stopped
    finally:
        timer.cancel()
        sys.stdout.flush()
        if Terminal.timing:
            timing_footer(time.perf_counter() - started)
    if events is not None:
        events.end(True, started, filename)
    if check_grads:
        return _check_grads(source, filename, session.seeds, timeout)
    return EXIT_OK


def _finalize(session) -> int | None:
    """The script's objects freed as CPython frees `__main__`'s at exit (Session.finalize), within --timeout: its
    exit status when --timeout stops it there (reported as the run's error), else None."""
    try:
        session.finalize()
    except ScriptError as e:
        report(e)
        return e.exit_status
    return None


def _check_grads(source: str, filename: str, seed, timeout) -> int:
    """--check-grads, after the script has run: its replays get --timeout seconds of their own."""
    from gradcli.diagnostics.checks import check_script
    from gradcli.commands.progress import Progress
    try:
        with deadline.Deadline(timeout, filename), Progress(f"{filename}: --check-grads: replaying in float64") as progress:
            return check_script(source, filename, seed, out=progress, progress=progress)
    except deadline.TimedOut as e:
        e.message += ", while --check-grads replayed the script"
        report(e)
        return e.exit_status



def run_notebook(args, path: str, options: dict) -> int:
    """`gradcli run NOTEBOOK.ipynb` (gradcli.kernel.notebook): its code cells in one session, or with --write
    executed on the kernel with the outputs saved into it."""
    for option in ("check_grads", "nan_check"):
        if options.get(option):
            sys.stderr.write(f"gradcli run: --{option.replace('_', '-')} does not apply to a notebook ({path})\n")
            return EXIT_USAGE
    from gradcli.kernel import notebook
    if getattr(args, "write", False):
        from gradcli.commands.kernel import spec_options
        return notebook.write_outputs(path, spec_options(args), allow_errors=args.allow_errors)
    source, name = read_script(path, args.timeout)
    return notebook.run_notebook(source, name, options["seed"], options["display"], options["fmt"],
                                 options["stable_ids"], options["timeout"], allow_errors=args.allow_errors)


def run_scripts(args, options: dict) -> int:
    """`gradcli run`: every script runs, whatever came before; the first failure's status is returned."""
    status = EXIT_OK
    if getattr(args, "write", False) and not all(path.endswith(".ipynb") for path in args.scripts):
        sys.stderr.write("gradcli run: --write writes the outputs of notebooks (.ipynb files), not scripts\n")
        return EXIT_USAGE
    for path in args.scripts:
        if path.endswith(".ipynb"):
            try:
                result = run_notebook(args, path, options)
            except OSError as e:
                sys.stderr.write(f"{e}\n")
                result = EXIT_USAGE
            except ScriptError as e:          # not UTF-8
                fail(e, args.format)
                result = e.exit_status
            status = status or result
            continue
        try:
            source, name = read_script(path, args.timeout)
        except OSError as e:
            if args.format == "jsonl":
                fail(ScriptError("OSError", str(e).removeprefix("gradcli: "), path), args.format)
            else:
                sys.stderr.write(f"{e}\n")
            status = status or EXIT_USAGE
            continue
        except ScriptError as e:          # not UTF-8, or --timeout while reading standard input
            fail(e, args.format)
            status = status or e.exit_status
            continue
        result = run_text(source, name, script_args=args.script_args, **options)
        status = status or result
    return status
