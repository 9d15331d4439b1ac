#!/usr/bin/env python3
"""Prints a JUnit XML file as Markdown for a GitHub Actions job summary.

Reads the file with Debian's python3-junitparser (scripts/deps.sh installs
it): totals per suite, then every test case that did not pass with its
message.
"""
import sys

from junitparser import Error, Failure, JUnitXml, Skipped


def main(path):
    xml = JUnitXml.fromfile(path)
    suites = [xml] if xml._tag == "testsuite" else list(xml)
    print("## Test results\n")
    print("| suite | tests | passed | failed | errors | skipped | time |")
    print("|---|---|---|---|---|---|---|")
    problems = []
    for s in suites:
        counts = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
        for c in s:
            kind = "passed"
            for r in c.result:
                if isinstance(r, Failure):
                    kind = "failure"
                elif isinstance(r, Error):
                    kind = "error"
                elif isinstance(r, Skipped):
                    kind = "skipped"
            counts[kind] += 1
            if kind in ("failure", "error"):
                msg = ""
                for r in c.result:
                    msg = (r.message or r.text or "").strip().splitlines()[0:1]
                    msg = msg[0] if msg else ""
                problems.append((s.name, c.classname, c.name, kind, msg))
        total = sum(counts.values())
        print(f"| {s.name} | {total} | {counts['passed']} | {counts['failure']} | {counts['error']} | {counts['skipped']} | {s.time or 0:.0f} s |")
    if problems:
        print("\n### Failed\n")
        print("| suite | test | result | message |")
        print("|---|---|---|---|")
        for suite, cls, name, kind, msg in problems:
            msg = msg.replace("|", "\\|")
            print(f"| {suite} | `{cls}.{name}` | {kind} | {msg} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: junit-summary.py JUNIT.xml")
    main(sys.argv[1])
