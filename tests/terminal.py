"""Read raw terminal output the way a terminal would, for the progress tests.

Two views of the same bytes: ``writes`` splits them at every carriage return and
newline (what one physical line received between cursor returns), and ``screen``
replays them on an unbounded line buffer (scrollback included), honouring the few
cursor moves rich uses for a live region. Any other control sequence fails the test
loudly rather than being misread.
"""

from __future__ import annotations

import re

CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")
TOKENS = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+")


def writes(raw: str) -> list[str]:
    """The text written between line returns, control sequences removed."""
    return [CSI.sub("", part) for part in re.split(r"[\r\n]", raw) if CSI.sub("", part).strip()]


def screen(raw: str) -> list[str]:
    """The lines a terminal shows (scrollback included) after replaying ``raw``."""
    lines, row, col = [""], 0, 0
    for token in TOKENS.findall(raw):
        if token == "\n":
            row, col = row + 1, 0
            if row == len(lines):
                lines.append("")
        elif token == "\r":
            col = 0
        elif match := CSI.fullmatch(token):
            row, col = _control(lines, row, col, *match.groups())
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + len(token):]
            col += len(token)
    return [line.rstrip() for line in lines if line.strip()]


def _control(lines: list[str], row: int, col: int, arg: str, final: str) -> tuple[int, int]:
    if final in "mhl":  # colours, cursor shown/hidden: nothing moves
        return row, col
    if final == "K":  # erase in line: 2 the whole line, 0 (or none) from the cursor on
        lines[row] = "" if arg == "2" else lines[row][:col]
        return row, col
    if final == "A":
        return max(0, row - int(arg or 1)), col
    raise AssertionError(f"unexpected control sequence ESC[{arg}{final} in terminal output")
