"""The REPL's own keys: Enter (run or continue), pasting, and indentation by four spaces."""

from __future__ import annotations

from prompt_toolkit.application import get_app
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import Condition, emacs_mode, has_focus, has_selection
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

from gradcli.repl import scan

INDENT = 4


def _run(buffer) -> None:
    # trailing blank lines (the one that ended a block) are not part of the input
    text = buffer.text.rstrip()
    if text != buffer.text:
        buffer.text = text
    buffer.validate_and_handle()


def _new_line(buffer) -> None:
    """A line break, indented like the line before, one level deeper after a ':'."""
    before = buffer.document.current_line_before_cursor
    buffer.insert_text("\n" + " " * scan.indent_after(before))


def key_bindings() -> KeyBindings:
    kb = KeyBindings()
    editing = has_focus(DEFAULT_BUFFER)

    @Condition
    def in_indentation() -> bool:
        # the cursor is in the leading blanks of a line that is not the input's first
        doc = get_app().current_buffer.document
        before = doc.current_line_before_cursor
        return doc.cursor_position_row > 0 and (before == "" or before.isspace())

    @kb.add("enter", filter=editing)
    def _enter(event):
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.complete_state = None          # Enter picks the highlighted completion
            return
        doc = buffer.document
        if scan.enter_action(doc.text, doc.is_cursor_at_the_end) == scan.ACCEPT:
            _run(buffer)
        else:
            _new_line(buffer)

    @kb.add("escape", "enter", filter=editing & emacs_mode)
    def _run_now(event):
        """Meta-Enter (Esc then Enter) runs the input as it is, wherever the cursor is (in Vi mode
        Esc leaves insert mode instead)."""
        _run(event.current_buffer)

    @kb.add(Keys.BracketedPaste, filter=editing)
    def _paste(event):
        """Pasted text goes in exactly as it was copied (no auto-indent); a paste that ends with a
        line break and completes the input runs at once, as one unit."""
        data = event.data.replace("\r\n", "\n").replace("\r", "\n")
        buffer = event.current_buffer
        buffer.insert_text(data)
        doc = buffer.document
        if data.endswith("\n") and doc.is_cursor_at_the_end and scan.enter_action(doc.text) == scan.ACCEPT:
            _run(buffer)

    @kb.add("tab", filter=editing & in_indentation)
    def _indent(event):
        column = event.current_buffer.document.cursor_position_col
        event.current_buffer.insert_text(" " * (INDENT - column % INDENT))

    @kb.add("backspace", filter=editing & in_indentation & ~has_selection)
    @kb.add("s-tab", filter=editing & in_indentation)
    def _dedent(event):
        """Back to the previous indentation level (at the start of a line, backspace joins lines)."""
        buffer = event.current_buffer
        column = buffer.document.cursor_position_col
        if column:
            buffer.delete_before_cursor(column - (column - 1) // INDENT * INDENT)
        elif event.key_sequence[0].key == Keys.ControlH:
            buffer.delete_before_cursor(1)

    return kb
