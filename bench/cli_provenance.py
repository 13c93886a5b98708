"""The provenance verbs of `bench`: verify-provenance, keys, compare. Verbs only, like bench/cli.py.

Kept apart from bench/cli.py by concern: these three decide whether a label is
evidence (who signed it, whether it is whole, whether two are comparable), and they
share the options that say which signing keys are trusted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .cli_common import console, err, option_set, project, results_option
from .cli_json import emit, json_option


trust_options = option_set(
    click.option("--key", "keys", multiple=True, type=click.Path(path_type=Path), metavar="PUB",
                 help="A public key (PEM, from `bench keys --export`) whose labels are trusted (repeatable)."),
    click.option("--trusted-keys", type=click.Path(path_type=Path), metavar="FILE",
                 help="A file of trusted public keys (default: trusted-keys.pem in the config directory, if any)."),
)


def _trusted(keys: tuple[Path, ...], trusted_keys: Path | None) -> dict:
    from .keys import trusted_keys as load

    return load(list(keys), trusted_keys)


@click.command("verify-provenance")
@click.argument("target", required=False, metavar="[LABEL|PATH]")
@json_option()
@trust_options
@results_option("Where a LABEL name is looked up; verified whole when no LABEL or PATH is given.")
def verify_provenance(target: str | None, as_json: bool, keys: tuple[Path, ...], trusted_keys: Path | None,
                      results: Path) -> None:
    """Check each label's signature and integrity, recompute hashes, case and goldens, image IDs.

    PATH is a results folder, a label folder or a trial folder; LABEL a label name under --results.

    Exit 0 when every label is signed by a trusted key (yours, --key or the trusted-keys
    file) and nothing differs; 1 naming each difference (an untrusted, missing or broken
    signature is one).
    """
    from .provenance import verify

    report = verify(_verified(target, results), project(), _trusted(keys, trusted_keys))
    if as_json:
        emit(report.as_dict())
    else:
        for line in report.lines():
            console.print(line, markup=False)
    sys.exit(0 if report.ok else 1)


def _verified(target: str | None, results: Path) -> Path:
    """A path as typed when it exists, else a label name under the results folder; no target: all of them."""
    if target is None:
        return results
    if Path(target).exists() or not (results / target).is_dir():
        return Path(target)
    return results / target


@click.group(invoke_without_command=True)
@click.option("--export", "export", type=click.Path(path_type=Path), metavar="FILE",
              help="Write the public key (PEM) to FILE, to hand to whoever verifies your labels.")
@json_option()
@click.pass_context
def keys(ctx: click.Context, export: Path | None, as_json: bool) -> None:
    """Show your signing key (made on first use in the config directory); --export its public half."""
    if ctx.invoked_subcommand:
        return
    from .keys import load_or_create, public_pem

    key = load_or_create()
    pem = public_pem(key.public)
    if export:
        export.write_text(pem)
    if as_json:
        return emit({"fingerprint": key.keyid, "private_key": key.path, "public_key": pem, "exported": export})
    console.print(f"fingerprint {key.keyid}\nprivate key {key.path}", markup=False)
    if export:
        console.print(f"wrote {export}", markup=False)
    else:
        console.print(pem, markup=False, end="")


@keys.command("trust")
@click.argument("public_key", type=click.Path(path_type=Path))
def keys_trust(public_key: Path) -> None:
    """Add PUBLIC_KEY to your trusted-keys file: labels it signed then verify as trusted."""
    from .keys import trust

    for keyid in trust(public_key):
        console.print(f"trusted {keyid}", markup=False)


@click.command("compare")
@click.argument("baseline")
@click.argument("candidate", required=False)
@click.option("--arms", nargs=2, metavar="A B", help="Compare arm A of the label BASELINE with its arm B "
                                                      "(the same as BASELINE:A BASELINE:B).")
@click.option("--allow-drift", is_flag=True,
              help="Compare even when case, goldens, grader image, harness or seat class differ (each is printed).")
@click.option("--allow-unsigned", is_flag=True,
              help="Compare even when a label does not verify (unsigned, untrusted key, changed files; each is printed).")
@trust_options
@json_option()
@results_option("Where label names are looked up (a path works as well).", needs_project=False)
def compare_cmd(baseline: str, candidate: str | None, arms: tuple[str, str] | None, allow_drift: bool,
                allow_unsigned: bool, keys: tuple[Path, ...], trusted_keys: Path | None, as_json: bool,
                results: Path) -> None:
    """Compare two labels, or two arms of one (LABEL --arms A B, or LABEL:A LABEL:B): pass rates, paired tests,
    metrics, guardrail floor.

    Exit 0 when both labels verify, are comparable and every floor holds; 1 when a
    guardrail breaks; 3 when refused as not comparable (a label that does not verify,
    drift, or a side with no valid trial to judge).
    """
    from .compare import compare_labels, sides
    from .compare_tables import tables

    baseline, candidate = sides(baseline, candidate, arms)
    report = compare_labels(baseline, candidate, results, allow_drift, allow_unsigned, _trusted(keys, trusted_keys))
    for warning in report.warnings:
        err.print(f"warning: {warning}", markup=False, soft_wrap=True)
    if as_json:
        emit(report)
    else:
        for table in tables(report):
            console.print(table)
        for line in report.lines():
            console.print(line, markup=False, soft_wrap=True)
    sys.exit(report.exit_code)
