"""Issue 19, the writing side: tacgrid replaces only regular files, and never half-writes.

Every command that writes (``render --out``, ``view``/``replay --screenshot``, ``run --log``,
``run --out`` with its plots) is pointed at things that are not regular files (``/dev/null``,
a FIFO, a symlink to a file, a folder) and must refuse in one line, leaving them as they
were; and it is run on a full disk (a small tmpfs, mounted here as root; a file-size limit
where mounting is impossible) and must fail in one line, exit 2, leaving no 0-byte or
truncated file and no temporary file; a batch then finishes with ``--resume`` exactly as an
undisturbed batch does. A grep of ``engine/`` proves that only ``engine/safeio.py`` writes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from engine.cli import main
from engine.errors import TacgridError, WriteError
from engine.safeio import AppendFile, check_target, write_text

MAP = str(ROOT / "maps" / "chase.tmx")
CHASE = str(ROOT / "scenarios" / "chase.yaml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def one_line_error(capsys: pytest.CaptureFixture[str], code: int, *expected: str) -> str:
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    for text in expected:
        assert text in err, (text, err)
    return err


def strays(folder: Path) -> list[str]:
    """Temporary files left behind (safeio's, or the old fixed ``PATH.tmp`` names)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".new")))


# =========================================================================== the grep

#: Ways Python code writes a file. Only engine/safeio.py may use them.
WRITERS = [
    r"""\bopen\([^)]*["'](?:[wax]b?|r\+b?|[wa]\+b?)["']""",  # open(p, "w"), "a", "wb", "r+b"
    r"""\bopen\([^)]*mode\s*=\s*["'][wax]""",
    r"\bos\.(?:replace|rename|renames|write|pwrite|writev|ftruncate|truncate|link|symlink)\(",
    r"\bos\.open\([^)]*O_(?:WRONLY|RDWR|CREAT|APPEND|TRUNC)",
    r"\bpygame\.image\.save\(",
    r"\bsavefig\(",
    r"\.write_(?:text|bytes)\(",
    r"\.truncate\(",
    r"\bshutil\.(?:copy\w*|move)\(",
    r"\btempfile\.",
    r"\bnp\.save\w*\(|\.to_(?:csv|parquet|json)\(",
]
#: The sanctioned uses outside safeio, none of them a file: matplotlib renders a chart into
#: memory (engine.report.charts.save_figure; PNGs are encoded in memory by
#: engine.viewer.png); the batch's worker pool writes to the sockets and the wake-up pipe
#: it made itself (engine.batch.pool._write_all, engine.batch.control._Stop.handler),
#: descriptors no path names; a world's pattern matcher (engine.tiled.world) sends its
#: answer down the pipe its parent made.
IN_MEMORY = {
    "engine/report/charts.py": {"fig.savefig(buf, format=fmt, metadata=meta)"},
    "engine/batch/control.py": {'os.write(self.wake, b"\\0")'},
    "engine/batch/pool.py": {"view = view[os.write(fd, view) :]"},
    "engine/tiled/world.py": {"view = view[os.write(wfd, view) :]"},
}


def writers_in(text: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if not line.lstrip().startswith("#") and any(re.search(p, line) for p in WRITERS)
    ]


def test_the_grep_finds_each_kind_of_writer() -> None:
    planted = """
with open(path + ".tmp", "w", encoding="utf-8") as fh:
fh = open(p, "ab")
with open(p, mode="w") as fh:
os.replace(tmp, path)
fd = os.open(runs, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
pygame.image.save(surf, path)
fig.savefig(out)
Path(p).write_text("x")
fh.truncate(10)
"""
    assert len(writers_in(planted)) == len(planted.strip().splitlines())
    assert writers_in('with open(path, "rb") as fh:\nos.open(p, os.O_RDONLY)') == []


def test_only_safeio_writes_files() -> None:
    found = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "engine/safeio.py":
            continue
        for line in writers_in(path.read_text(encoding="utf-8")):
            if line in IN_MEMORY.get(rel, ()):
                continue
            found.append(f"{rel}: {line}")
    assert not found, "files written outside engine/safeio.py:\n" + "\n".join(found)
    charts = (ROOT / "engine" / "report" / "charts.py").read_text()
    assert "buf = io.BytesIO()" in charts and "write_bytes(path, buf.getvalue()" in charts


# =========================================================================== special files


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log = tmp_path_factory.mktemp("log") / "run.jsonl"
    assert main(["run", CHASE, "--run-seed", "1", "--log", str(log), "--json"]) == 0
    return log


def _special(kind: str, folder: Path, name: str) -> tuple[str, object]:
    """A target of ``kind`` and a fingerprint of it to compare after the command."""
    if kind == "devnull":
        return "/dev/null", os.stat("/dev/null").st_rdev
    target = folder / name
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink":
        real = folder / "real-file"
        real.write_bytes(b"keep me\n")
        target.symlink_to(real)
    elif kind == "directory":
        target.mkdir()
    return str(target), kind


def _unchanged(kind: str, target: str, before: object) -> None:
    st = os.lstat(target)
    if kind == "devnull":
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == before
    elif kind == "fifo":
        assert stat.S_ISFIFO(st.st_mode)
    elif kind == "symlink":
        assert stat.S_ISLNK(st.st_mode)
        assert Path(target).read_bytes() == b"keep me\n"
    else:
        assert stat.S_ISDIR(st.st_mode) and not any(Path(target).iterdir())


WRITING_OPTIONS = {
    "run-log": lambda t, log: ["run", CHASE, "--run-seed", "1", "--log", t],
    "render-map": lambda t, log: ["render", MAP, "--out", t],
    "render-scenario": lambda t, log: ["render", CHASE, "--out", t],
    "view-screenshot": lambda t, log: ["view", MAP, "--frames", "1", "--screenshot", t],
    "replay-screenshot": lambda t, log: ["replay", log, "--frames", "1", "--screenshot", t],
}
KINDS = ["devnull", "fifo", "symlink", "directory"]
REASONS = ("not a regular file", "symbolic link", "folder", "images only")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("option", sorted(WRITING_OPTIONS))
def test_writing_options_refuse_special_files(
    option: str, kind: str, tmp_path: Path, log_file: Path, capsys
) -> None:
    target, before = _special(kind, tmp_path, "target.png")
    code = main(WRITING_OPTIONS[option](target, str(log_file)))
    err = one_line_error(capsys, code, target)
    assert any(r in err for r in REASONS), err
    _unchanged(kind, target, before)
    assert strays(tmp_path) == []


def test_dev_null_is_refused_in_the_words_of_the_issue(capsys) -> None:
    code = main(["run", CHASE, "--run-seed", "1", "--log", "/dev/null"])
    one_line_error(capsys, code, "--log /dev/null: not a regular file (a device); give a file path")


@pytest.mark.parametrize("kind", KINDS)
def test_batch_out_refuses_special_files(kind: str, tmp_path: Path, capsys) -> None:
    # --out itself: anything but a folder is refused ...
    if kind != "directory":
        target, before = _special(kind, tmp_path, "out")
        code = main(["run", CHASE, "--runs", "2", "--out", target, "--no-plots"])
        one_line_error(capsys, code, "--out")
        _unchanged(kind, target, before)
    # ... and so is a batch file in it that is not a regular file, before any run.
    for name in ("runs.jsonl", "summary.json", "batch.json", "turns.png"):
        out = tmp_path / f"batch-{name}"
        out.mkdir()
        if kind == "devnull":  # a link to the device, in the folder
            (out / name).symlink_to("/dev/null")
            target, before = str(out / name), "symlink"
        else:
            target, before = _special(kind, out, name)
        code = main(["run", CHASE, "--runs", "2", "--out", str(out)])
        one_line_error(capsys, code, name)
        if kind == "devnull":
            assert os.path.islink(target) and stat.S_ISCHR(os.stat(target).st_mode)
        else:
            _unchanged(kind, target, before)
        assert strays(out) == []
        if name != "summary.json":  # no batch ran
            assert not os.path.lexists(out / "summary.json")


def test_safeio_refuses_and_keeps_the_old_file_mode(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match="symbolic link"):
        link = tmp_path / "l"
        link.symlink_to(tmp_path / "nowhere")  # even a dangling link
        write_text(link, "x")
    assert not (tmp_path / "nowhere").exists()
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    kept.chmod(0o640)
    write_text(kept, "new")
    assert kept.read_text() == "new" and stat.S_IMODE(kept.stat().st_mode) == 0o640
    with pytest.raises(WriteError, match="does not exist"):
        check_target(tmp_path / "no" / "x.txt", "--log")
    err = pytest.raises(OSError, check_target, "/dev/null", "--log").value
    assert isinstance(err, TacgridError)  # the project's error, and still an OSError
    assert strays(tmp_path) == []


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_stop_the_moment_the_temporary_file_is_made_leaves_nothing(
    stop: type[BaseException], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (or any exception) landing just as the temporary file has been created, before
    the writer holds its descriptor: the file is removed, the target keeps its bytes.
    (tempfile.mkstemp made the file before its caller had the name: such a stop left it.)"""
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    real_open = os.open
    made: list[str] = []

    def open_then_stop(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        fd = real_open(path, flags, *args, **kw)
        if os.path.basename(str(path)).startswith(".tacgrid-"):
            made.append(str(path))
            raise stop()  # lands after the system call, as a signal's handler would
        return fd

    monkeypatch.setattr(os, "open", open_then_stop)
    with pytest.raises(stop):
        write_text(kept, "new")
    monkeypatch.undo()
    assert len(made) == 1 and not os.path.exists(made[0])
    assert kept.read_text() == "old" and strays(tmp_path) == []


def test_render_refuses_an_output_not_named_png(tmp_path: Path, capsys) -> None:
    # pygame picks the format by the name (a .tga name wrote a TGA): renders are PNG, so any
    # other name is refused in one line before anything is drawn or written.
    for source in (MAP, CHASE):
        assert main(["render", source, "--out", str(tmp_path / "x.tga")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and ".png" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# =========================================================================== a full disk


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tmpfs of 8 MiB (room for a whole batch with its plots), filled on demand."""
    where = tmp_path_factory.mktemp("tmpfs")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs ({done.stderr.strip() or 'not root'}): the full-disk "
            "cases run under a file-size limit instead (test_a_file_size_limit_...)"
        )
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def disk(tiny: Path) -> Iterator[Path]:
    """An empty folder on the tmpfs; the filler is removed afterwards."""
    folder = tiny / "work"
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder)
        (tiny / "filler").unlink(missing_ok=True)


def fill(tiny: Path, leave: int) -> None:
    """Fill the tmpfs so that only ``leave`` bytes (whole pages) stay free."""
    filler = tiny / "filler"
    filler.unlink(missing_ok=True)
    st = os.statvfs(tiny)
    free = st.f_bavail * st.f_frsize
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))
    st = os.statvfs(tiny)
    assert st.f_bavail * st.f_frsize <= leave


def free_space(tiny: Path) -> None:
    (tiny / "filler").unlink(missing_ok=True)


FULL_DISK_COMMANDS = {
    "run-log": lambda t, log: ["run", CHASE, "--run-seed", "1", "--log", t],
    "render-map": lambda t, log: ["render", MAP, "--out", t],
    "render-scenario": lambda t, log: ["render", CHASE, "--out", t],
    "view-screenshot": lambda t, log: ["view", MAP, "--frames", "1", "--screenshot", t],
    "replay-screenshot": lambda t, log: ["replay", log, "--frames", "1", "--screenshot", t],
}


@pytest.mark.parametrize("old", [False, True], ids=["new-file", "over-an-old-file"])
@pytest.mark.parametrize("command", sorted(FULL_DISK_COMMANDS))
def test_a_full_disk_leaves_no_half_file(
    command: str, old: bool, tiny: Path, disk: Path, log_file: Path, capsys
) -> None:
    target = disk / ("out.jsonl" if command == "run-log" else "out.png")
    if old:
        target.write_bytes(b"the old file\n")
    fill(tiny, 4096)  # one page: smaller than any log or image written here
    code = main(FULL_DISK_COMMANDS[command](str(target), str(log_file)))
    one_line_error(capsys, code, str(target), "No space left on device")
    if old:
        assert target.read_bytes() == b"the old file\n"
    else:
        assert not target.exists()
    assert strays(disk) == []
    assert [p.name for p in disk.iterdir()] == ([target.name] if old else [])
    free_space(tiny)
    assert main(FULL_DISK_COMMANDS[command](str(target), str(log_file))) == 0
    capsys.readouterr()
    data = target.read_bytes()
    assert data.startswith(PNG_MAGIC) if target.suffix == ".png" else data.endswith(b"}\n")


def _batch(out: Path, *extra: str) -> list[str]:
    return ["run", CHASE, "--runs", "40", "--seed", "3", "--out", str(out), "--json", *extra]


def _comparable(folder: Path) -> dict[str, object]:
    summary = json.loads((folder / "summary.json").read_text())
    summary.pop("results"), summary.pop("plots")
    return {
        "summary": summary,
        "runs": (folder / "runs.jsonl").read_bytes(),
        "turns.png": (folder / "turns.png").read_bytes(),
        "outcomes_map.png": (folder / "outcomes_map.png").read_bytes(),
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("ref") / "batch"
    assert main(_batch(out)) == 0
    return _comparable(out)


def _complete_lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes() if path.exists() else b""
    assert data == b"" or data.endswith(b"\n"), "a torn last line"
    return [json.loads(line) for line in data.splitlines()]


# Free bytes left on the disk, and where the batch is to run out of them.
BATCH_CASES = {"during-the-runs": 3 * 4096, "during-the-plots": 160 * 1024}


@pytest.mark.parametrize("case", sorted(BATCH_CASES))
def test_a_batch_on_a_full_disk_resumes_to_the_same_result(
    case: str, tiny: Path, disk: Path, reference: dict[str, object], capsys
) -> None:
    out = disk / "batch"
    fill(tiny, BATCH_CASES[case])
    code = main(_batch(out))
    one_line_error(capsys, code, "No space left on device")
    assert strays(out) == []
    for png in ("turns.png", "outcomes_map.png"):  # a plot is whole or absent
        if (out / png).exists():
            assert (out / png).read_bytes() == reference[png]
    runs = _complete_lines(out / "runs.jsonl")
    if case == "during-the-runs":
        assert 0 < len(runs) < 40 and not (out / "summary.json").exists()
    else:
        assert len(runs) == 40 and not (out / "outcomes_map.png").exists()
        assert json.loads((out / "summary.json").read_text())["runs"] == 40
    free_space(tiny)
    assert main(_batch(out, "--resume")) == 0
    capsys.readouterr()
    assert _comparable(out) == reference
    assert strays(out) == []


def test_a_failed_append_is_cut_back_to_whole_records(tiny: Path, disk: Path) -> None:
    path = disk / "runs.jsonl"
    fill(tiny, 4096)
    with AppendFile(path, "--out") as log:
        log.append(b"x" * 4000 + b"\n")
        with pytest.raises(WriteError, match="No space left"):
            log.append(b"y" * 200 + b"\n")  # crosses into a page there is no room for
    assert path.read_bytes() == b"x" * 4000 + b"\n"


# ====================================================== without a tmpfs: a file-size limit

_LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG, not death
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
from engine.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_file_size_limit_fails_render_in_one_line(tmp_path: Path) -> None:
    """Runs everywhere (no root needed): a write that fails with EFBIG half-way."""
    out = tmp_path / "big.png"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _LIMITED, "render", MAP, "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGXFSZ, signal.SIG_IGN),
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "File too large" in done.stderr, done.stderr
    assert str(out) in done.stderr
    assert list(tmp_path.iterdir()) == []


# ====================================================== a log replays only on its own files


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the chase scenario and map that a test may change."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "maps").mkdir()
    tmx = Path(MAP).read_text().replace('source="../assets/', f'source="{ROOT}/assets/')
    (tmp_path / "maps" / "chase.tmx").write_text(tmx)
    shutil.copy(CHASE, tmp_path / "scenarios" / "chase.yaml")
    return tmp_path


def test_a_log_replays_only_on_the_files_it_was_run_on(project: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(project)
    assert main(["run", "scenarios/chase.yaml", "--run-seed", "1", "--log", "run.jsonl"]) == 0
    start = json.loads((project / "run.jsonl").read_text().splitlines()[0])
    assert start["scenario"] == "scenarios/chase.yaml"
    assert start["scenario_abs"] == str(project / "scenarios" / "chase.yaml")
    assert start["map"] == str(project / "maps" / "chase.tmx") and len(start["map_digest"]) == 16
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the relative path now names nothing: the absolute one is used
    capsys.readouterr()
    assert main(["replay", "../run.jsonl", "--json"]) == 0
    assert main(["replay", "../run.jsonl", "--frames", "1"]) == 0
    capsys.readouterr()
    with open(project / "maps" / "chase.tmx", "a") as fh:
        fh.write("<!-- edited -->\n")
    for extra in (["--json"], ["--frames", "1"]):
        code = main(["replay", "../run.jsonl", *extra])
        one_line_error(capsys, code, "../run.jsonl", "chase.tmx changed", "--force")
    assert main(["replay", "../run.jsonl", "--json", "--force"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["seed"] == 1 and "warning" in err and "chase.tmx" in err
    with open(project / "scenarios" / "chase.yaml", "a") as fh:
        fh.write("# edited\n")
    code = main(["replay", "../run.jsonl", "--text"])
    one_line_error(capsys, code, "chase.yaml changed", "--force")
