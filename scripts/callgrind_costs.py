"""Reads a callgrind profile through callgrind_annotate: the program's
totals and each function's costs, for the footprint scripts."""
import re
import subprocess

EVENTS = "Ir D1mr D1mw DLmr DLmw".split()


def load(profile, sort="Ir", events=EVENTS):
    """(totals, {function: costs}); costs in `events`' order, as floats."""
    out = subprocess.run(["callgrind_annotate", "--show=" + ",".join(events), "--sort=" + sort,
                          "--threshold=100", profile], capture_output=True, text=True).stdout
    number = r"([\d,]+|\.)(?: \([^)]*\))?\s+"
    total, functions = None, {}
    for line in out.splitlines():
        m = re.match(r"\s*" + number * len(events) + r"(.*)", line)
        if not m:
            continue
        values = [0.0 if v == "." else float(v.replace(",", "")) for v in m.groups()[:len(events)]]
        name = m.group(len(events) + 1)
        if "PROGRAM TOTALS" in name:
            total = values
        else:
            functions[name.split(" [")[0].replace("???:", "")] = values
    if total is None:
        raise SystemExit(f"no totals in callgrind's profile {profile}")
    return total, functions


def misses(values):
    """(first-level data misses, last-level misses) of one cost row."""
    return values[1] + values[2], values[3] + values[4]
