"""The HTML reports: report.html for one submission (the verdicts, each failing case
with its reproduce command, the timing table and its picture) and class.html for a
batch (score histogram, verdicts per task, bandwidth across the class, a link to every
submission's page). Static pages: no JavaScript, nothing fetched, pictures inline.
"""
from __future__ import annotations

from html import escape
from pathlib import Path

from . import application_lines, failure_texts, fmt_points, headline, problems
from . import plots
from . import why
from .copies import Copies, listing
from ..results import SubmissionResult
from ..classroom.roster import RosterCheck

MAX_FAILURES = 5
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.correct { color: #1a7f37; } .wrong, .build_failed, .forbidden, .missing { color: #c62828; }
.not_implemented { color: #9a6700; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
img.plot { display: block; max-width: 100%; margin: 1em 0; }
.note { color: #666; }
.flag { background: #fff4e5; border-left: 4px solid #e65100; padding: 0.4em 0.8em; }
"""


def _page(title: str, body: list[str]) -> str:
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def _picture(uri: str | None, alt: str, missing: str) -> str:
    if uri is None:
        return f"<p class=\"note\">{escape(missing)}</p>"
    return f"<img class=\"plot\" src=\"{uri}\" alt=\"{escape(alt)}\">"


def submission_page(result: SubmissionResult) -> str:
    m = result.machine
    where = (f"GPU {m.gpu} (cc {m.compute_capability})" if m.on_gpu
             else "CPU emulator (no GPU): performance not measured")
    who = ", ".join(s.name or s.sid or s.email for s in result.identity.students)
    body = [f"<h1>scanlab grade: {escape(result.name)}</h1>",
            f"<p><strong>Score: {escape(headline(result))}</strong><br>"
            + (f"{escape(who)}<br>" if who else "")
            + f"{escape(where)}; seed <code>{result.seed}</code>; graded {escape(result.graded_at)}</p>"]
    if result.error:
        body.append(f"<p class=\"wrong\"><strong>Not gradable:</strong> {escape(result.error)}</p>")
    same = [tr for tr in result.tasks if tr.identical_to_reference]
    if same:
        body.append("<p class=\"flag\" id=\"identical-to-reference\"><strong>Identical to the reference "
                    "solution</strong> (byte for byte): " + escape(", ".join(
                        f"task {tr.number} ({tr.file})" for tr in same)) + "</p>")
    body += ["<h2>Tasks</h2>", "<table>",
             "<tr><th>task</th><th>file</th><th>verdict</th><th>cases passed</th>"
             "<th>correctness</th><th>performance</th><th>note</th></tr>"]
    for tr in result.tasks:
        body.append(
            f"<tr><td>{tr.number}: {escape(tr.title)}</td><td><code>{escape(tr.file)}</code></td>"
            f"<td class=\"{escape(tr.verdict)}\">{escape(tr.verdict.replace('_', ' '))}</td>"
            f"<td>{tr.passed} / {tr.total}</td>"
            f"<td>{tr.correctness_points:.2f} / {tr.correctness_max:g}</td>"
            f"<td>{escape(fmt_points(tr.performance_points, tr.performance_max))}</td>"
            f"<td>{escape(tr.message)}</td></tr>")
    body.append("</table>")
    integ = result.integration
    body.append("<p>Integration (all your files together): "
                + escape(f"{integ.passed}/{integ.total} cases passed" + (f": {integ.message}" if integ.message else "")
                         if integ.status == "graded" else integ.message or integ.status.replace("_", " ")) + "</p>")

    failing = [(tr, failure_texts(tr.cases, MAX_FAILURES)) for tr in result.tasks]
    if any(texts for _, texts in failing):
        body.append("<h2>Failing cases</h2>")
        for tr, texts in failing:
            if texts:
                body += [f"<h3>Task {tr.number}: {escape(tr.name)}</h3>",
                         "<pre>" + escape("\n".join(texts)) + "</pre>"]
    for tr in result.tasks:
        if tr.status == "build_failed" and tr.build:
            body += [f"<h3>Task {tr.number}: does not compile</h3>",
                     "<pre>" + escape(tr.build.errors) + "</pre>"]

    body.append("<h2>Performance</h2>")
    rows = [(tr, p) for tr in result.tasks for p in tr.perf if p.status == "measured"]
    if rows:
        body += ["<table>", "<tr><th>task</th><th>case</th><th>yours (ms)</th><th>reference (ms)</th>"
                 "<th>slowdown</th><th>GB/s</th><th>of copy bandwidth</th><th>note</th></tr>"]
        for tr, p in rows:
            body.append(
                f"<tr><td>{tr.number}</td><td>{escape(f'{p.case.task} {p.case.op} n={p.case.n}')}</td>"
                f"<td>{p.student_ms:.4f}</td><td>{p.reference_ms:.4f}</td>"
                f"<td>{p.slowdown:.2f}x</td><td>{p.gbps or 0:.0f}</td>"
                f"<td>{100 * (p.copy_fraction or 0):.0f}%</td>"
                f"<td>{escape(p.message if p.noisy else '')}</td></tr>")
        body.append("</table>")
        body.append(_picture(plots.performance(result), "GB/s of each timed case: yours, the reference, the baselines",
                             plots.MISSING))
    else:
        notes = sorted({tr.perf_message or tr.perf_status.replace("_", " ") for tr in result.tasks})
        body.append(f"<p class=\"note\">Not measured: {escape('; '.join(notes))}</p>")

    body += why.html_section(result)
    if result.applications:
        body += ["<h2>Applications</h2>", "<pre>" + escape("\n".join(application_lines(result))) + "</pre>"]
    if result.notes or result.missing:
        body += ["<h2>Notes</h2>", "<ul>"]
        body += [f"<li>missing: <code>{escape(n)}</code>"
                 + (f" (found {escape(', '.join(c))})" if c else "") + "</li>"
                 for n, c in result.missing.items()]
        body += [f"<li>{escape(n)}</li>" for n in result.notes if "\n" not in n]
        body.append("</ul>")
    body.append(f"<p class=\"note\">Reproduce this grade: <code>{escape(result.reproduce)}</code></p>")
    return _page(f"scanlab: {result.name}", body)


def class_page(results: list[SubmissionResult], links: dict[str, str], task_names: list[str],
               copies: Copies | None = None, roster: RosterCheck | None = None,
               interrupted: str = "", late: dict[str, str] | None = None) -> str:
    """`links`: submission origin -> the relative URL of its report.html; `copies`,
    `roster`, `interrupted`: as class_summary takes them; `late`: submission name -> how
    late it was and what that cost, in words."""
    pictures = plots.class_pictures(results, task_names)
    n = len(results)
    body = [f"<h1>scanlab: the class ({n} submission{'s' if n != 1 else ''})</h1>"]
    if interrupted:
        body.append(f"<p class=\"flag\"><strong>Interrupted:</strong> {escape(interrupted)}</p>")
    if roster is not None:
        lines = roster.lines()
        body += ["<h2 id=\"roster\">Roster</h2>",
                 "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>" if lines else
                 "<p>Every roster row matches a submission, and every submission a row.</p>"]
    if not pictures:
        body.append(f"<p class=\"note\">{escape(plots.MISSING)}</p>")
    for key, alt in (("scores", "score histogram"), ("verdicts", "verdicts per task"),
                     ("bandwidth", "GB/s per task across the class")):
        if key in pictures:
            body.append(_picture(pictures[key], alt, ""))
    body += ["<h2>Submissions</h2>", "<table>",
             "<tr><th>submission</th><th>student(s)</th><th>score</th><th>problems</th></tr>"]
    for r in sorted(results, key=lambda r: r.name):
        who = ", ".join(s.name or s.sid or s.email for s in r.identity.students) or "-"
        link = links.get(r.origin)
        name = f"<a href=\"{escape(link)}\">{escape(r.name)}</a>" if link else escape(r.name)
        said = problems(r) + ([late[r.name]] if late and late.get(r.name) else []) + \
            (copies.words(r.name) if copies is not None else [])
        body.append(f"<tr><td>{name}</td><td>{escape(who)}</td><td>{r.score:.2f} / {r.max_score:g}</td>"
                    f"<td>{escape('; '.join(said) or '-')}</td></tr>")
    body.append("</table>")
    if copies is not None:
        body += _copies_section(copies)
    return _page("scanlab: class", body)


def _copies_section(copies: Copies) -> list[str]:
    """Who handed in the reference, the untouched handout or another's file."""
    body = ["<h2 id=\"copies\">Copies: identical to the reference, the handout or each other</h2>"]
    rows = listing(copies)
    if rows:
        body += ["<table class=\"copies\">", "<tr><th>submission</th><th>what</th></tr>"]
        body += [f"<tr><td>{escape(n)}</td><td>{escape(w)}</td></tr>" for n, w in rows]
        body.append("</table>")
    else:
        body.append("<p>No file identical to the reference or to another student's.</p>")
    body.append("<p class=\"note\">" + ("Similarity compared with copydetect (the reference included; "
                                           "the handout's lines excluded): similarity.html. " if copies.compared
                                           else "Similarity not compared (<code>batch --similarity</code>). ")
                + "A lead for a person to read, never a verdict.</p>")
    return body


def write(result: SubmissionResult, path: Path) -> None:
    path.write_text(submission_page(result), encoding="utf-8")
