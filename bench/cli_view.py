"""`bench view`: browse results locally, or write them as a static site; `bench report`, its alias for one label.

The server binds 127.0.0.1 only: results hold transcripts and workspaces, never meant
for the network. It serves a bundle rendered into a temporary folder by the same
renderer as --bundle, so there is one way pages are made (bench/view/site.py).
"""

from __future__ import annotations

import sys
import tempfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import click

from .cli_common import console, results_option
from .errors import UsageError

DEFAULT_PORT = 7575


@click.command("view")
@click.argument("results_arg", metavar="[RESULTS]", required=False, type=click.Path(path_type=Path))
@click.option("--port", type=int, default=DEFAULT_PORT, show_default=True, help="Port on 127.0.0.1 (0: any free one).")
@click.option("--no-open", is_flag=True, help="Print the URL; open no browser.")
@click.option("--bundle", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write the viewer as a static site into DIR (relative links: opens from file://) and exit.")
@click.option("--label", "labels", multiple=True, help="Show only this label (repeat for more).")
@click.option("--compare", "compares", nargs=2, multiple=True, metavar="BASELINE CANDIDATE",
              help="Also render compare/BASELINE--CANDIDATE.html (labels sharing a case are compared anyway).")
@results_option("Folder holding the label folders (or one label folder).", needs_project=False)
def view_cmd(results_arg: Path | None, port: int, no_open: bool, bundle: Path | None, labels: tuple[str, ...],
             compares: tuple[tuple[str, str], ...], results: Path) -> None:
    """Look at results: all labels, each label's numbers and trials, and compares, in the browser."""
    folder = results_arg or results
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder of results — name one (bench view RESULTS) or run a label first")
    if bundle is not None:
        console.print(f"wrote {write_bundle(folder, bundle, labels, compares) / 'index.html'}")
        return
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
        site = write_bundle(folder, Path(tmp), labels, compares)
        serve(site, port, not no_open)


def write_bundle(results: Path, out: Path, labels: tuple[str, ...] = (),
                 compares: tuple[tuple[str, str], ...] = ()) -> Path:
    from .keys import trusted_keys
    from .view.site import render_site

    render_site(results, out, trusted_keys(), list(labels) or None, list(compares))
    return out


def serve(site: Path, port: int, open_browser: bool) -> None:
    """Serve ``site`` on 127.0.0.1 until Ctrl-C; the URL is always printed, the browser opened when asked."""
    handler = partial(_QuietHandler, directory=str(site))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        console.print(f"bench view at {url} (Ctrl-C stops it)")
        if open_browser and not _open(url):
            console.print("no graphical browser here; open the URL above")
        server.serve_forever()


def _open(url: str) -> bool:
    """Open ``url`` in a graphical browser. Without a display (ssh, CI) Python's webbrowser would fall back to
    a console browser that takes over this terminal, so there the URL alone is printed."""
    import os
    import webbrowser

    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    return webbrowser.open(url)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's signature
        pass


@click.command("report")
@click.argument("label")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Where to write the pages [default: ./bench-report-LABEL].")
@results_option("Where the label name is looked up (a path works as well).", needs_project=False)
def report_cmd(label: str, out: Path | None, results: Path) -> None:
    """LABEL's pages as a static site: `bench view --bundle DIR --label LABEL` under another name."""
    from .comparability import resolve_label

    paths = resolve_label(label, results)
    out = out or Path(f"bench-report-{paths.label}")
    console.print(f"wrote {write_bundle(paths.dir.parent, out, (paths.label,)) / 'index.html'}")
