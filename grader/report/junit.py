"""JUnit XML for CI: one testsuite per task (and the integration run), one testcase
per case, plus the build, the forbidden-construct check and performance."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from . import case_names, case_text, perf_line
from ..results import SubmissionResult, TaskResult

_BAD_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _BAD_XML.sub("?", text)


def _case(suite: ET.Element, classname: str, name: str, seconds: float = 0.0) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=_clean(name), time=f"{seconds:.3f}")


def _outcome(case: ET.Element, kind: str, message: str, text: str = "") -> None:
    el = ET.SubElement(case, kind, message=_clean(message[:500]))
    if text:
        el.text = _clean(text)


def _task_suite(root: ET.Element, tr: TaskResult) -> ET.Element:
    suite = ET.SubElement(root, "testsuite", name=_clean(f"task {tr.number}: {tr.title} ({tr.file})"))
    classname = f"scanlab.task{tr.number}"
    check = _case(suite, classname, "file and forbidden constructs")
    if tr.status == "missing":
        _outcome(check, "failure", tr.message)
    elif tr.status == "not_attempted":
        _outcome(check, "skipped", tr.message)
        return suite  # nothing was built or run
    elif tr.status == "forbidden":
        _outcome(check, "failure", tr.message, "\n".join(str(v) for v in tr.violations))
    if tr.build is not None:
        build = _case(suite, classname, "build", tr.build.seconds)
        if not tr.build.ok:
            _outcome(build, "failure", "does not compile", tr.build.errors)
    for c, name in zip(tr.cases, case_names(tr.cases)):
        el = _case(suite, classname, name, c.seconds)
        if not c.passed:
            _outcome(el, "failure", c.status if c.case.hidden else f"{c.status}: {c.summary}",
                     "" if c.case.hidden else case_text(c, name))
    perf = _case(suite, classname, "performance")
    if tr.perf_status in ("not_measured", "not_eligible"):
        _outcome(perf, "skipped", tr.perf_message or tr.perf_status)
    elif tr.perf_status == "failed":
        _outcome(perf, "failure", tr.perf_message)
    else:
        perf.set("time", f"{(tr.perf[0].student_ms or 0) / 1000:.6f}")
        ET.SubElement(perf, "system-out").text = _clean(perf_line(tr))
    return suite


def document(result: SubmissionResult) -> ET.ElementTree:
    root = ET.Element("testsuites", name=_clean(f"scanlab grade: {result.name}"))
    if result.error:
        suite = ET.SubElement(root, "testsuite", name="submission")
        _outcome(_case(suite, "scanlab.submission", "collect"), "failure", result.error)
    for tr in result.tasks:
        _task_suite(root, tr)
    integ = result.integration
    suite = ET.SubElement(root, "testsuite", name="integration (all files together)")
    if integ.status == "not_graded":
        _outcome(_case(suite, "scanlab.integration", "integration"), "skipped", integ.message)
    elif integ.status == "build_failed":
        _outcome(_case(suite, "scanlab.integration", "build"), "failure", "does not compile",
                 integ.build.errors if integ.build else "")
    for c, name in zip(integ.cases, case_names(integ.cases)):
        el = _case(suite, "scanlab.integration", name, c.seconds)
        if not c.passed:
            _outcome(el, "failure", c.status if c.case.hidden else f"{c.status}: {c.summary}",
                     "" if c.case.hidden else case_text(c, name))
    # Counts, per suite and in total.
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in root.iter("testsuite"):
        cases = s.findall("testcase")
        counts = {"tests": len(cases),
                  "failures": sum(1 for c in cases if c.find("failure") is not None),
                  "errors": sum(1 for c in cases if c.find("error") is not None),
                  "skipped": sum(1 for c in cases if c.find("skipped") is not None)}
        s.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")
        for k, v in counts.items():
            s.set(k, str(v))
            totals[k] += v
    # The root has no `skipped` in the common JUnit schema (Jenkins' junit-10.xsd); each
    # testsuite keeps its own count.
    for k, v in totals.items():
        if k != "skipped":
            root.set(k, str(v))
    root.set("time", f"{result.seconds:.3f}")
    return ET.ElementTree(root)


def write(result: SubmissionResult, path: Path) -> None:
    tree = document(result)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
