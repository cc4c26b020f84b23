"""Bad input: a clear statement of what was read and skipped, a non-zero exit, never a traceback."""
from __future__ import annotations

import gzip
import io
import json
import os
import tarfile


from ascend_doctor.commands.triage import run_triage
from ascend_doctor.triage.engine import triage_paths

from .conftest import DATA

PLOG = (DATA / "vllm_ascend_12776_plog216.log").read_bytes()  # vllm-ascend#12776


def _run(paths, fmt="text", stdin=None):
    out, err = io.StringIO(), io.StringIO()
    rc = run_triage([str(p) for p in paths], fmt=fmt, out=out, err=err, stdin=stdin)
    return rc, out.getvalue(), err.getvalue()


def test_missing_path():
    rc, out, err = _run(["/nonexistent/dir"])
    assert rc == 2 and out == "" and err.strip() == "ascend-doctor triage: /nonexistent/dir: no such file or directory"


def test_binary_file(tmp_path):
    blob = tmp_path / "core.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    rc, out, err = _run([blob])
    assert rc == 2 and "binary data" in err and "core.bin" in err


def test_empty_dir(tmp_path):
    rc, out, err = _run([tmp_path])
    assert rc == 2 and "no readable log text" in err


def test_unknown_format(tmp_path):
    rc, _, err = _run([tmp_path], fmt="xml")
    assert rc == 2 and "unknown format" in err


def test_clean_log_has_no_incidents(tmp_path):
    # an INFO-only real line (gpustack#3352)
    f = tmp_path / "plog-42_20251118093312000.log"
    f.write_text("[INFO] RUNTIME(42,mindie_llm_backend_connector):2025-11-18-09:33:13.666.211 [runtime_keeper.cc:172] 58 CreateRuntimeImpl: Open libruntime_v100.so success\n")
    rc, out, _ = _run([f])
    assert rc == 0 and "no incidents" in out


def test_200mb_single_line_is_streamed(tmp_path):
    big = tmp_path / "huge.log"
    with open(big, "wb") as fh:
        fh.write(PLOG)  # real errors first
        chunk = b"x" * (1 << 20)
        for _ in range(200):
            fh.write(chunk)  # then one 200 MB line with no newline at all
    report = triage_paths([str(big)])
    assert report.stats.bytes == len(PLOG) + 200 * (1 << 20)
    assert report.stats.lines == 5 and report.stats.truncated_lines == 1
    assert report.incidents and report.incidents[0].verdict.category == "aicore_exec"
    rc, out, _ = _run([big])
    assert "read only up to their first 64 KB" in out


def test_mixed_dir_with_junk_loops_gz_tar_and_gbk(tmp_path):
    d = tmp_path / "logs"
    (d / "debug" / "plog").mkdir(parents=True)
    (d / "debug" / "plog" / "plog-216_20260724025100000.log.gz").write_bytes(gzip.compress(PLOG))
    (d / "junk.bin").write_bytes(b"\x00\x01\x02" * 5000)
    os.symlink(str(d), str(d / "loop"))  # a symlink loop back to the top
    os.symlink(str(d / "gone"), str(d / "dangling"))
    # GBK-encoded Chinese text around a real error line (hosts with a zh_CN locale)
    (d / "console.txt").write_bytes("训练开始\n".encode("gbk") + PLOG.splitlines()[3] + b"\n" + b"\xff\xfe binary junk \x00\n")
    archive = tmp_path / "run_plog.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        data = PLOG
        info = tarfile.TarInfo("run_plog/plog/plog-216_20260724025100000.log")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    rc, out, err = _run([d, archive], fmt="json")
    data = json.loads(out)
    assert rc == 1
    reasons = {os.path.basename(s["path"]): s["reason"] for s in data["stats"]["skipped"]}
    assert reasons["junk.bin"] == "binary data, not a text log"
    assert "symlink loop" in reasons["loop"] and reasons["dangling"] == "broken symbolic link"
    files = {e["file"] for inc in data["incidents"] for e in inc["evidence"]}
    assert any(f.endswith(".log.gz") for f in files) and any("run_plog.tar.gz!/" in f for f in files)
    assert data["stats"]["files"] == 3


def test_unreadable_file(tmp_path, monkeypatch):
    f = tmp_path / "plog-1_20260101000000000.log"
    f.write_bytes(PLOG)
    (tmp_path / "plog-2_20260101000000000.log").write_bytes(PLOG)
    if os.geteuid() != 0:
        f.chmod(0)
    else:  # root opens anything: make the open itself refuse, as it would for a normal user
        import ascend_doctor.triage.sources as sources

        real_plain = sources._plain

        def refusing(path):
            if path == str(f):
                def deny():
                    raise PermissionError(13, "Permission denied", path)
                return deny
            return real_plain(path)

        monkeypatch.setattr(sources, "_plain", refusing)
    rc, out, err = _run([tmp_path], fmt="json")
    data = json.loads(out)
    assert rc == 1 and data["stats"]["files"] == 1  # the readable file is still triaged
    assert {s["reason"] for s in data["stats"]["skipped"]} == {"permission denied"}
    rc, _, err = _run([f])
    assert rc == 2 and "permission denied" in err


def test_truncated_gz_is_read_as_far_as_it_goes(tmp_path):
    f = tmp_path / "plog-216_20260724025100000.log.gz"
    f.write_bytes(gzip.compress(PLOG * 50)[:-40])
    report = triage_paths([str(tmp_path)])
    assert report.incidents and any("read stopped early" in s.reason for s in report.stats.skipped)


def test_no_text_is_exit_2_whatever_the_reason(tmp_path):
    """One rule (docs/inputs.md, "No text"): an empty file, /dev/null, an empty or corrupt .gz
    and an empty stdin all give exit 2 with a one-line reason; none is "no incidents"."""
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    corrupt = tmp_path / "plog.log.gz"
    corrupt.write_bytes(gzip.compress(PLOG)[:20])  # cut inside the first deflate block
    hollow = tmp_path / "hollow.log.gz"
    hollow.write_bytes(gzip.compress(b""))
    cases = {str(empty): "(empty)", "/dev/null": "a device node", str(corrupt): str(corrupt),
             str(hollow): "(empty)"}
    for path, why in cases.items():
        rc, out, err = _run([path])
        assert (rc, out) == (2, ""), path
        assert err.count("\n") == 1 and "no readable log text" in err and why in err, err
    rc, out, err = _run(["-"], stdin=io.BytesIO(b""))
    assert rc == 2 and "(empty)" in err


def test_an_empty_input_beside_real_text_is_not_an_error(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    log = tmp_path / "plog-216_20251118093312000.log"
    log.write_bytes(PLOG)
    rc, out, _ = _run([empty, log])
    assert rc == 1 and out
