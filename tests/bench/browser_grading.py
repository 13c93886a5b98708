"""Grading time of the six Shallot cases on the software seat, and where it goes.

    python tests/bench/browser_grading.py [--json OUT] [--label NAME]

Runs the oracle on all six browser cases, one trial each, one at a time (a software seat
renders on the CPU, so concurrent graders would only slow each other), with
``--seat software``. Reports per case the trial's phases (stage, agent, grade) and, inside
the grade phase, the browser check's own stages:

  launch   Chromium starting                        } browser (inside the observer container)
  seat     the WebGPU adapter probe                  } browser
  ready    opening the page until it is ready        } browser
  steps    input and frame captures                  } browser
  seat-probe  the run's one seat probe container (first browser trial of a run only)
  build    the build container: workspace in, the gate's build command, dist/ out
  observe  the observer container's wall time; `containers` is observe minus the browser
           stages: container start, copying the site in, Python and Playwright start-up,
           frames out
  measure  the host decoding the frames, deciding the predicates, saving PNGs
  grader   the rest of the grade phase

and the wall time of the whole run with the browser's share of it. Images and the
subject's project image are built before timing (a warm-up run of red-box). This is a
report, not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.cases import case_ids, known_cases, load_case  # noqa: E402
from bench.result_models import TrialResult  # noqa: E402
from bench.paths import Project  # noqa: E402
from bench.run import RunRequest, execute  # noqa: E402

BROWSER = ("launch", "seat", "ready", "steps")


def browser_cases() -> list[str]:
    project = Project(ROOT)
    return [case for case in case_ids(project, known_cases(project)) if load_case(project, case).spec.seat != "none"]


def run(cases: list[str], label: str, results: Path) -> tuple[float, list[TrialResult]]:
    request = RunRequest(cases, agent="oracle", label=label, results=results, arms=["with-context"],
                         concurrency=1, seat="software", command_line=["browser_grading.py"])
    started = time.monotonic()
    outcome = execute(request, Project(ROOT), say=lambda line: None)
    return time.monotonic() - started, sorted(outcome.results, key=lambda r: cases.index(r.case))


def rows(results: list[TrialResult]) -> list[dict]:
    table = []
    for result in results:
        check = next((c for c in result.checks if c.kind == "browser"), None)
        stages = dict(check.timings) if check else {}
        stages["containers"] = round(stages.get("observe", 0.0) - sum(stages.get(n, 0.0) for n in BROWSER), 3)
        grade = result.phases.get("grade", 0.0)
        stages["grader"] = round(grade - (check.duration_s if check else 0.0), 3)
        table.append({"case": result.case, "verdict": result.verdict.value, "phases": result.phases,
                      "grade_s": grade, "stages": stages, "trial_s": round(sum(result.phases.values()), 3)})
    return table


def report(rows_: list[dict], wall: float) -> dict:
    totals = {name: round(sum(r["stages"].get(name, 0.0) for r in rows_), 2)
              for name in (*BROWSER, "seat-probe", "build", "containers", "measure", "grader")}
    browser = sum(totals[name] for name in BROWSER)
    grading = sum(r["grade_s"] for r in rows_)
    header = f"{'case':18} {'verdict':8} {'trial s':>8} {'grade s':>8}  " + " ".join(f"{n:>7}" for n in totals)
    print(header)
    for r in rows_:
        print(f"{r['case']:18} {r['verdict']:8} {r['trial_s']:8.1f} {r['grade_s']:8.1f}  "
              + " ".join(f"{r['stages'].get(n, 0.0):7.1f}" for n in totals))
    print(f"{'total':18} {'':8} {sum(r['trial_s'] for r in rows_):8.1f} {grading:8.1f}  "
          + " ".join(f"{totals[n]:7.1f}" for n in totals))
    print(f"\nwall time of all {len(rows_)} oracle trials: {wall:.1f} s")
    print(f"share of grading time: browser {browser / grading:.0%} (launch, seat probe, ready, steps), "
          f"build container {totals['build'] / grading:.0%}, observer container start-up and copies "
          f"{totals['containers'] / grading:.0%}, seat probe {totals['seat-probe'] / grading:.0%}, "
          f"measuring on the host {totals['measure'] / grading:.0%}, the rest {totals['grader'] / grading:.0%}")
    return {"wall_s": round(wall, 2), "grading_s": round(grading, 2), "totals": totals,
            "browser_share": round(browser / grading, 3), "build_share": round(totals["build"] / grading, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="Also write the numbers here.")
    parser.add_argument("--label", default=f"browser-grading-{int(time.time())}")
    parser.add_argument("--results", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench-browser-grading")
    args = parser.parse_args()
    cases = browser_cases()
    print(f"{platform.node()}: {os.cpu_count()} cores; warming up (images, subject, staged states)", flush=True)
    run(["red-box"], f"{args.label}-warmup", args.results)
    wall, results = run(cases, args.label, args.results)
    table = rows(results)
    summary = report(table, wall)
    if args.json:
        args.json.write_text(json.dumps({"cases": table, **summary}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
