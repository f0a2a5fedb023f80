"""The HTML report of ``snakemake --report report.html``: what it holds, and rendering it headless.

Snakemake's report is one self-contained page (scripts, styles and every result inlined as data
URIs). :func:`report_contents` reads the results and menu categories it embeds; :func:`render`
loads it in headless Chromium and returns the DOM after its scripts ran, or saves a screenshot,
optionally after opening one result (a figure) the way a reader's click would.
:func:`report_refusal` is the one line ``snakemake --report`` stops with while the config it names is
not built (``workflow/rules/report.smk``): every config writes to the same paths, so the files there
may be another config's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from dpdl.errors import ArtifactError, DpdlError
from dpdl.io import atomic_path
from dpdl.paths import config_label

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
RENDER_TIMEOUT_S = 120
HEADLESS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=10000")
SCORECARD_MARKER = '<div id="dpdl-scorecard">'  # as rendered; inside the page's scripts it is JSON-escaped
EMBEDDED = {
    name: re.compile(rf"^\s*var {name} = (\{{.*\}});\s*$", re.MULTILINE) for name in ("results", "categories")
}


def report_refusal(rules: list[str], configfiles: list) -> str:
    """Why ``snakemake --report`` writes nothing, and how to build first.

    It names the jobs (their rule names, one per job) of the named config that are not built or out
    of date.
    """
    names = sorted(set(rules))
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (
        f"dpdl: no report written: {len(rules)} jobs of {config_label(configfiles)} are not built "
        f"or out of date (rules {shown}), and the files at their paths may be another config's; "
        "build it first (the same command without --report, or with --report-after-run added: it "
        "builds, then reports)"
    )


def report_contents(path: str | Path) -> dict:
    """The ``results`` (path -> entry with ``data_uri``, ``caption``) and ``categories`` a report embeds."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ArtifactError(
            f"{path}: cannot read the report ({err}); build it with `snakemake --report {path}`"
        ) from err
    contents = {}
    for name, pattern in EMBEDDED.items():
        match = pattern.search(text)
        if match is None:
            raise ArtifactError(f"{path}: no `var {name} = ...` found; not a Snakemake HTML report")
        contents[name] = json.loads(match.group(1))
    return contents


def find_browser() -> str:
    """The first headless-capable Chromium on the PATH."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    raise DpdlError(
        f"no Chromium found (tried {', '.join(BROWSERS)}); install it, e.g. `apt-get install chromium`"
    )


def render(
    report: str | Path,
    *,
    show: str | None = None,
    screenshot: str | Path | None = None,
    size: tuple[int, int] = (1600, 1400),
) -> str:
    """Load ``report`` in headless Chromium; return the DOM after its scripts ran.

    ``show``: a result path (e.g. ``figures/dzoa/fig2.png``) to open first, as clicking its eye
    button would. ``screenshot``: also save a PNG of the page at ``size`` (width, height).
    """
    contents = report_contents(report)
    if show is not None and show not in contents["results"]:
        raise DpdlError(f"{report}: no result {show!r}; it has {', '.join(sorted(contents['results']))}")
    html = Path(report).read_text(encoding="utf-8")
    if show is not None:
        opener = (
            "<script>window.addEventListener('load', () => setTimeout(() => app.setView({content: 'img', "
            f"contentPath: results[{json.dumps(show)}].data_uri, resultPath: "
            f"{json.dumps(show)}}}), 200));</script>"
        )
        html = html.replace("</body>", opener + "</body>")
    command = [find_browser(), *HEADLESS]
    with tempfile.TemporaryDirectory(prefix="dpdl-report-") as folder:
        page = Path(folder) / "report.html"
        page.write_text(html, encoding="utf-8")
        if screenshot is None:
            return _chromium([*command, "--dump-dom", page.as_uri()])
        shot = Path(folder) / "shot.png"
        picture = [*command, f"--window-size={size[0]},{size[1]}", f"--screenshot={shot}"]
        dom = _chromium([*picture, "--dump-dom", page.as_uri()])  # one launch: the DOM and the screenshot
        if not shot.is_file():  # a Chromium that does one of the two a launch: the screenshot in a second
            _chromium([*picture, page.as_uri()])
        if not shot.is_file():
            raise DpdlError(f"Chromium wrote no screenshot of {report}")
        with atomic_path(screenshot) as target:
            shutil.copyfile(shot, target)
    return dom


def page_dom(page: str | Path) -> str:
    """Load a self-contained HTML page (a replication article) in headless Chromium; return its DOM."""
    return _chromium([find_browser(), *HEADLESS, "--dump-dom", Path(page).resolve().as_uri()])


def _chromium(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RENDER_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as err:
        raise DpdlError(f"Chromium did not finish within {RENDER_TIMEOUT_S} s: {' '.join(command)}") from err
    if done.returncode != 0:
        raise DpdlError(f"Chromium failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return done.stdout
