"""`triage --format html` and `oom --format html`: one self-contained page each, rendered in
headless Chromium; the screenshots (kept in the test's output directory) must show the
first failing rank marked and the stranded blocks of the caching pool."""
from __future__ import annotations

import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from . import png

RED = (0xC6, 0x28, 0x28)  # the first failure's diamond
FIRST_ROW = (0xFD, 0xEC, 0xEA)  # the first failing rank's row background
ORANGE = (0xEF, 0x8F, 0x00)  # a symptom
STRANDED = (0xD8, 0x43, 0x15)
ALLOCATED = (0x3B, 0x6F, 0xB6)


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chromium-headless-shell"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):  # CI installs it (.ci/run): there, a missing browser is a failure
        raise AssertionError("headless Chromium is needed (apt-get install chromium; .ci/run installs it)")
    pytest.skip("headless Chromium is not installed (apt-get install chromium): the HTML pages are not rendered here")


def _doctor(*args):
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, timeout=120)


def _screenshot(html: Path, png_path: Path, height: int = 1400) -> bytes:
    proc = subprocess.Popen([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             "--force-color-profile=srgb", "--force-device-scale-factor=0.5",
                             f"--window-size=1280,{height}", f"--screenshot={png_path}", html.as_uri()],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, HOME=str(png_path.parent)))
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # chromium's helper processes too
        _, err = proc.communicate()
    assert png_path.exists(), err[-2000:]
    out = os.environ.get("ASCEND_DOCTOR_SCREENSHOTS")
    if out:
        os.makedirs(out, exist_ok=True)
        shutil.copy(png_path, out)
    print(f"screenshot: {png_path}")
    return png_path.read_bytes()


def _self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    for needle in ("<script", "<link", "<img", "<iframe", " src=", "url(", "@import"):
        assert needle not in page, needle
    assert "default-src 'none'" in page  # and the page forbids any load of its own


def _bands(counts, minimum, gap=4):
    """Runs of pixel rows where the colour covers at least ``minimum`` pixels; runs split by a
    few rows (the mark drawn across the row) count as one."""
    bands = []
    for y, n in enumerate(counts):
        if n < minimum:
            continue
        if bands and y - bands[-1][1] <= gap:
            bands[-1][1] = y
        else:
            bands.append([y, y])
    return [tuple(b) for b in bands]


def test_triage_html_marks_the_first_failing_rank(tmp_path):
    import runtime_sim.host as sim_host

    job = sim_host.run("hccl_timeout", tmp_path / "job")
    proc = _doctor("triage", str(job.log_dir), str(job.console_file), "--format", "html")
    assert proc.returncode == 1, proc.stderr
    page = proc.stdout
    _self_contained(page)
    row = re.search(r'<g class="rank-row first-failing" data-rank="(\d+)">', page)
    assert row and row.group(1) == "3"
    assert page.count('class="rank-row') == 8 and page.count("rank-row first-failing") == 1
    assert 'id="first-failure"' in page and "first failure: Rank 3 stopped taking part" in page
    assert page.count("caused by #1") == 7
    html = tmp_path / "triage.html"
    html.write_text(page)
    shot = _screenshot(html, tmp_path / "triage.png", height=1000)
    # the rendered page: one band in the colour of the first failing rank's row, with the red
    # diamond inside it, and the symptoms' orange marks on other rows
    first_row, red, orange = png.counts_by_row(shot, FIRST_ROW, RED, ORANGE)
    band = _bands(first_row, 150)
    assert len(band) == 1, band
    top, bottom = band[0]
    assert sum(red[top:bottom + 1]) >= 15
    assert sum(orange[:top]) > 0 and sum(orange[bottom + 1:]) > 0


def test_oom_html_shows_the_stranded_blocks(tmp_path):
    from runtime_sim.allocator import load_trace, replay

    trace = load_trace("llm_serving_kv_concat")
    alloc = trace.allocator("", record_history=True)
    result = replay(trace, alloc)
    (tmp_path / "oom.log").write_text(result.error.console_line() + "\n")
    with open(tmp_path / "snapshot.pickle", "wb") as fh:
        pickle.dump(alloc.snapshot(), fh)
    proc = _doctor("oom", "--file", str(tmp_path / "oom.log"), "--snapshot", str(tmp_path / "snapshot.pickle"), "--format", "html")
    assert proc.returncode == 1, proc.stderr
    page = proc.stdout
    _self_contained(page)
    assert "<b>oom_fragmentation</b>" in page and 'id="pool"' in page
    stranded = page.count('class="block stranded"')
    assert stranded >= 5 and page.count('class="segment"') == len(alloc.snapshot()["segments"])
    html = tmp_path / "oom.html"
    html.write_text(page)
    shot = _screenshot(html, tmp_path / "oom.png", height=1000)
    stranded_px, allocated_px = png.counts_by_row(shot, STRANDED, ALLOCATED)
    assert sum(stranded_px) > 200 and sum(allocated_px) > 1000


def test_expandable_segments_strand_nothing(tmp_path):
    """The same trace with expandable segments completes; its snapshot has no stranded block."""
    from runtime_sim.allocator import load_trace, replay

    from ascend_doctor.memory.snapshot import snapshot_facts
    from ascend_doctor.report.html import block_kinds

    trace = load_trace("llm_serving_kv_concat")
    alloc = trace.allocator("expandable_segments:True", record_history=True)
    replay(trace, alloc)
    facts = snapshot_facts(alloc.snapshot())
    assert facts.segments and not any(k == "stranded" for s in facts.segments for _, k in block_kinds(s))
