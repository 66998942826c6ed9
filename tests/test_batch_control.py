"""Batches that stop cleanly, resume, stay bounded and never hang (issues 19 and 22).

Subprocess tests send SIGINT / SIGTERM / SIGKILL to a running ``tacgrid run`` and read
/proc for its worker processes; Dask tests use fake peers on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import batch
from engine.batch import (
    BatchStopped,
    control,
    pool,
    read_runs,
    results,
    run_batch,
    run_seed,
    run_seeds,
    runner,
    work,
)
from engine.batch import dask as batch_dask
from engine.cli import FLAGS, main
from engine.errors import ArgumentError, ScenarioError, Wording
from engine.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "main.py")
CHASE = str(ROOT / "scenarios" / "chase.yaml")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The chase with a one-turn limit: runs of a few milliseconds."""
    d = tmp_path_factory.mktemp("quick")
    text = Path(CHASE).read_text()
    text = text.replace("map: ../maps/chase.tmx", f"map: {ROOT / 'maps' / 'chase.tmx'}")
    text = text.replace("\nturns: 30", "\nturns: 1")
    assert "turns: 1" in text
    path = d / "quick.yaml"
    path.write_text(text)
    return str(path)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "SDL_VIDEODRIVER": "dummy"}


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _lines(path: Path) -> int:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return data.count(b"\n")


def _start(argv: list[str], *, ignore_int: bool = False) -> subprocess.Popen[str]:
    def pre() -> None:  # a shell's background job: SIGINT ignored from the start
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, MAIN, "run", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        preexec_fn=pre if ignore_int else None,
    )


#: ``--workers 3``: the batch's process plays runs, and so do two worker processes it forks
#: (engine.batch.pool._pool_results; 2 per CPU at most).
WORKERS = "3"
FORKED = min(int(WORKERS), 2 * (os.cpu_count() or 1)) - 1


def _wait_mid_batch(
    proc: subprocess.Popen[str], runs: Path, at_least: int = 50, forked: int = FORKED
) -> list[int]:
    """Wait until the batch has runs in and its ``forked`` worker processes are running
    (they start once this process has played the batch's first runs:
    engine.batch.work.WARM_RUNS), and return them; it must still be running."""
    deadline = time.time() + 60
    while (
        time.time() < deadline
        and (_lines(runs) < at_least or len(_children(proc.pid)) < forked)
        and proc.poll() is None
    ):
        time.sleep(0.02)
    assert proc.poll() is None, "the batch finished before it could be stopped"
    assert _lines(runs) >= at_least
    workers = _children(proc.pid)
    assert len(workers) == forked, workers
    return workers


def _prompt(took: float, started: float, what: str = "") -> None:
    """A stop is prompt when it takes less than what the same process took to get going
    (start-up, imports, its first runs and workers), measured in the same round: a busy
    machine slows both alike, where a bound in seconds fails under load. A stop is a small
    part of that; one that waits for something (a chunk, a worker, a lock) takes the rest
    of the batch or never ends."""
    where = f"{what}: " if what else ""
    assert took < started, f"{where}stopping took {took:.2f} s, starting {started:.2f} s"


def _strip(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in ("results", "plots")}


#: Runs of the batches stopped half-way: enough that a stop lands before the last run (the
#: quick scenario's batch of 1000 runs takes some 0.2 s once its process is warm).
FRESH_RUNS = 5000


@pytest.fixture(scope="module")
def fresh(quick: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted batch of the quick scenario: FRESH_RUNS runs, seed 9."""
    out = tmp_path_factory.mktemp("fresh") / "b"
    run_batch(quick, runs=FRESH_RUNS, seed=9, workers=1, out_dir=str(out))
    return out


# --------------------------------------------------------------------------- signals


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_batch_promptly_and_it_resumes(
    sig: int, quick: str, fresh: Path, tmp_path: Path
) -> None:
    out = tmp_path / "b"
    argv = [quick, "--runs", str(FRESH_RUNS), "--seed", "9", "--workers", WORKERS]
    argv += ["--out", str(out)]
    begun = time.monotonic()
    proc = _start([*argv, "--no-plots"], ignore_int=True)
    workers = _wait_mid_batch(proc, out / "runs.jsonl")
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=10)
    _prompt(time.monotonic() - sent, sent - begun)
    assert proc.returncode == 128 + sig
    assert err.count("\n") == 1 and "--resume" in err and "Traceback" not in err, err
    time.sleep(0.2)
    assert not [w for w in workers if _alive(w)], "a worker outlived the batch"
    done = len(read_runs(str(out / "runs.jsonl")))
    assert 0 < done < FRESH_RUNS and not (out / "summary.json").exists()
    assert not (out / "runs.parquet").exists()  # the table comes with the finished batch
    res = subprocess.run(
        [sys.executable, MAIN, "run", *argv, "--resume", "--no-plots", "--json"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert (out / "runs.jsonl").read_bytes() == (fresh / "runs.jsonl").read_bytes()
    assert (out / "runs.parquet").read_bytes() == (fresh / "runs.parquet").read_bytes()
    assert _strip(json.loads(res.stdout)) == _strip(
        json.loads((fresh / "summary.json").read_text())
    )


def test_kill_9_leaves_no_worker_and_the_lock_goes_with_it(quick: str, tmp_path: Path) -> None:
    out = tmp_path / "b"
    argv = [quick, "--runs", "20000", "--seed", "9", "--workers", WORKERS, "--out", str(out)]
    proc = _start([*argv, "--no-plots"])
    try:
        workers = _wait_mid_batch(proc, out / "runs.jsonl")
        # The lock: a second batch into the same folder is one line naming the holder.
        res = subprocess.run(
            [sys.executable, MAIN, "run", quick, "--runs", "5", "--resume", "--out", str(out)],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=60,
        )
        assert res.returncode == 2 and res.stdout == ""
        assert res.stderr.count("\n") == 1 and f"in use by another batch (pid {proc.pid})" in (
            res.stderr
        ), res.stderr
        proc.kill()
        proc.wait()
        deadline = time.time() + 3
        while time.time() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)], "workers outlived kill -9 of the parent"
    finally:
        proc.kill()
    # The lock went with the process: the batch resumes (a short one: extend check below).
    stopped = subprocess.run(
        [sys.executable, MAIN, "run", quick, "--runs", "5", "--seed", "9", "--out", str(out)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert stopped.returncode == 2 and "--resume" in stopped.stderr  # refused, not locked
    assert "in use" not in stopped.stderr


def _running_with(arg: str) -> list[int]:
    """Live processes whose command line holds ``arg`` (a batch's workers are forks of it:
    found even once their parent is gone)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _alive(int(entry)):
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if arg.encode() in cmdline:
                out.append(int(entry))
    return out


def test_stops_at_any_moment_exit_at_once_and_leave_no_worker(quick: str, tmp_path: Path) -> None:
    """A stop once printed its line and never exited: raised inside concurrent.futures'
    code, it had left a future's lock held, the pool's thread waited on it and the exit on
    that thread. Stop `run --workers 2` at moments spread over a batch (as its first worker
    starts, right as a chunk comes back, at random; the batch's process plays runs too, and
    its one worker process plays the rest): each exits within 2 s, in one line, and leaves
    no worker."""
    rng = random.Random(22)
    argv = [quick, "--runs", "20000", "--seed", "9", "--workers", "2", "--no-plots"]
    for k, moment in enumerate(["workers", "chunk", "random"] * 2):
        sig = (signal.SIGINT, signal.SIGTERM)[k % 2]
        runs = tmp_path / f"b{k}" / "runs.jsonl"
        begun = time.monotonic()
        proc = _start([*argv, "--out", str(runs.parent)], ignore_int=True)
        try:
            if moment == "workers":
                deadline = time.time() + 60
                while not _children(proc.pid) and proc.poll() is None and time.time() < deadline:
                    pass
                assert _children(proc.pid), "no worker started"
            else:
                _wait_mid_batch(proc, runs, at_least=1, forked=1)
            if moment == "chunk":  # runs.jsonl grows: the parent has a chunk's results
                size = runs.stat().st_size
                deadline = time.time() + 10
                while runs.stat().st_size == size and time.time() < deadline:
                    pass
            elif moment == "random":
                time.sleep(rng.uniform(0.0, 0.3))
            sent = time.monotonic()
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=10)
            took = time.monotonic() - sent
        finally:
            proc.kill()
            proc.wait()
        what = f"{signal.Signals(sig).name} at {moment}"
        _prompt(took, sent - begun, what)
        assert proc.returncode == 128 + sig, (what, proc.returncode, err)
        assert err.count("\n") == 1 and "--resume" in err and "Traceback" not in err, (what, err)
        deadline = time.time() + 1
        while time.time() < deadline and _running_with(str(runs.parent)):
            time.sleep(0.02)
        assert not _running_with(str(runs.parent)), f"{what}: a worker outlived the batch"


#: A batch whose chunks each send back 1 MB (25 runs of 40 KB), more than a socket holds:
#: a worker sending them waits, half-way through, until the parent reads.
BIG_RESULTS = """
import os, signal, sys, time
from engine.batch import BatchStopped, run_batch

PAD = "x" * 40_000

def big(path, overrides, items):  # a string of its own per run: pickle sends each one
    return [{"run": i, "seed": s, "outcome": "timeout", "turns": 1, "pad": f"{i:08d}{PAD}"}
            for i, s in items]

calls = []

def progress(done, n, counts):
    calls.append(done)
    if len(calls) == 3:
        time.sleep(0.3)  # meanwhile each worker runs its next chunk and blocks sending it
        print(time.time(), flush=True)
        os.kill(os.getpid(), signal.SIGINT)

try:
    run_batch(sys.argv[1], runs=100_000, seed=1, workers=2, out_dir=sys.argv[2],
              chunk_fn=big, progress=progress)
except BatchStopped as stop:
    print(stop.message, flush=True)
"""


def test_a_stop_while_workers_send_large_results_exits_at_once(quick: str, tmp_path: Path) -> None:
    """The workers are killed half-way through sending their results; nothing in the parent
    waits for the rest of those messages, at the stop or at exit."""
    begun = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-c", BIG_RESULTS, quick, str(tmp_path / "b")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    ended = time.time()
    lines = out.splitlines()
    assert proc.returncode == 0 and len(lines) == 2 and err == "", (out, err)
    _prompt(ended - float(lines[0]), float(lines[0]) - begun - 0.3)  # less its sleep
    assert lines[1].startswith("stopped by SIGINT: 50 of 100000 runs")
    assert "run the same command with resume to finish" in lines[1]  # as the API says it
    assert _lines(tmp_path / "b" / "runs.jsonl") == 50


def _send_signal_here(real: Any) -> Any:
    """``real`` (a method of the local pool), after sending this process SIGINT: the
    signal's handler runs inside the pool's code."""
    done: list[int] = []

    def wrapper(*args: Any) -> Any:
        if not done:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler runs at the next bytecode: here, if it raises
                pass
        got = real(*args)
        done.append(1)
        return got

    wrapper.done = done  # type: ignore[attr-defined]
    return wrapper


@pytest.mark.parametrize("where", ["send", "wait", "start"])
def test_a_signal_in_the_pools_own_code_stops_it_between_steps(
    where: str, quick: str, tmp_path: Path, monkeypatch
) -> None:
    """SIGINT landing while the pool starts a worker, hands it a chunk or waits for results
    is raised once that step is done (never half-way through it): the batch stops as from
    anywhere else, its workers killed, its runs so far (the warm chunks) kept."""
    wrapper = _send_signal_here(getattr(pool._Pool, where))
    monkeypatch.setattr(pool._Pool, where, wrapper)
    before = set(_children(os.getpid()))
    t = time.monotonic()
    with pytest.raises(BatchStopped) as stop:
        run_batch(quick, runs=1000, seed=3, workers=2, out_dir=str(tmp_path / "b"))
    assert time.monotonic() - t < 10
    assert wrapper.done, "the handler raised inside the pool's code"
    warm = work._warm_chunks(1000) * batch.CHUNK
    assert stop.value.signum == signal.SIGINT
    assert stop.value.message.startswith(f"stopped by SIGINT: {warm} of 1000 runs are in")
    assert len(read_runs(str(tmp_path / "b" / "runs.jsonl"))) == warm
    assert set(_children(os.getpid())) <= before, "a worker outlived the stop"


def _broken_from_50(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    if items[0][0] >= 50:
        raise ScenarioError("broken on purpose")
    return _stub(path, overrides, items)


class _Odd(Exception):
    """Pickles, but cannot be made again from what it pickles to (two arguments, one kept)."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")


def _odd(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    raise _Odd("odd", "on purpose")


def _unpicklable(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    raise ValueError("holds a lock", threading.Lock())


def test_an_error_in_a_workers_chunk_is_raised_here(tmp_path: Path, monkeypatch) -> None:
    """A chunk that raises in a worker process raises the same exception in the batch (the
    worker's traceback as its cause); one that cannot travel arrives as a RuntimeError
    with its text. The runs before it stay, in order."""
    import copyreg

    # Importing distributed (an earlier test's cluster) registers tblib's reducer for every
    # exception class then known, which rebuilds one without its __init__: _Odd would then
    # travel whole. Workers are forked, so they see the table as it is here.
    monkeypatch.delitem(copyreg.dispatch_table, _Odd, raising=False)
    out = tmp_path / "b"
    before = set(_children(os.getpid()))
    with pytest.raises(ScenarioError, match="^broken on purpose$") as err:
        run_batch(CHASE, runs=200, seed=2, workers=2, out_dir=str(out), chunk_fn=_broken_from_50)
    assert "_broken_from_50" in str(err.value.__cause__)
    assert [r["run"] for r in read_runs(str(out / "runs.jsonl"))] in (
        [],
        list(range(25)),
        list(range(50)),
    )
    for fn, text in (
        (_odd, "_Odd: odd: on purpose"),
        (_unpicklable, "ValueError: ('holds a lock'"),
    ):
        with pytest.raises(RuntimeError) as err:
            run_batch(
                CHASE, runs=60, seed=2, workers=2, out_dir=str(tmp_path / fn.__name__), chunk_fn=fn
            )
        assert str(err.value).startswith(text), err.value
    assert set(_children(os.getpid())) <= before, "a worker outlived the error"


@pytest.mark.parametrize("where", ["summary.json", "runs.parquet"])
def test_a_stop_after_the_last_run_says_so_and_resume_writes_the_rest(
    where: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    """SIGINT while the summary or the runs table is being written: all runs are in, and
    the line says so; neither file stays (a summary means a finished batch), nor a
    temporary file; --resume plays no run and writes both, as an uninterrupted batch."""
    out = tmp_path / "b"
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(f"-{where}.tmp"):
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs here, inside the write
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    argv = ["run", CHASE, "--runs", "60", "--seed", "8", "--out", str(out), "--no-plots"]
    assert main([*argv, "--workers", "2"]) == 128 + signal.SIGINT
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert err == (
        f"tacgrid: stopped by SIGINT: all 60 runs are in {out / 'runs.jsonl'}, but not the "
        "summary and runs table; run the same command with --resume to write them\n"
    )
    assert sorted(p.name for p in out.iterdir()) == [".lock", "batch.json", "runs.jsonl"]
    whole = tmp_path / "whole"
    run_batch(CHASE, runs=60, seed=8, out_dir=str(whole))
    # No chunk is left to run (a chunk function that fails would say so).
    done = run_batch(CHASE, runs=60, seed=8, out_dir=str(out), resume=True, chunk_fn=_fail)
    assert _strip(done) == _strip(json.loads((whole / "summary.json").read_text()))
    for name in ("runs.jsonl", "summary.json", "runs.parquet"):
        if name == "summary.json":
            assert _strip(json.loads((out / name).read_text())) == _strip(done)
        else:
            assert (out / name).read_bytes() == (whole / name).read_bytes(), name


def _stop_in_write(monkeypatch: pytest.MonkeyPatch, sig: int, name: str) -> None:
    """Send ``sig`` to this process while safeio writes a file whose name ends ``name``."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(f"-{name}.tmp"):
            os.kill(os.getpid(), sig)  # the handler runs here, inside the write
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_plots_are_written_says_the_batch_is_whole(
    sig: signal.Signals, tmp_path: Path, capsys, monkeypatch
) -> None:
    """Ctrl-C or SIGTERM while `run` writes its plots: one line saying the runs and the
    summary are in, exit status 128 + the signal, no plot and no temporary file left (a
    SIGTERM used to end the process where it stood); --resume plays no run and writes the
    plots, listed in summary.json as an uninterrupted batch lists them."""
    out = tmp_path / "b"
    argv = ["run", CHASE, "--runs", "40", "--seed", "8", "--out", str(out), "--quiet"]
    _stop_in_write(monkeypatch, sig, "outcomes_map.png")
    assert main(argv) == 128 + sig
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert err == (
        f"tacgrid: stopped by {sig.name} while the plots were written: all 40 runs and the "
        f"summary are in {out}; run the same command with --resume to write the plots (no "
        "run is played again)\n"
    )
    names = sorted(p.name for p in out.iterdir())
    assert "outcomes_map.png" not in names and not [n for n in names if n.endswith(".tmp")]
    assert "plots" not in json.loads((out / "summary.json").read_text())
    whole = tmp_path / "whole"
    assert main(["run", CHASE, "--runs", "40", "--seed", "8", "--out", str(whole), "--quiet"]) == 0
    monkeypatch.setattr(work.WorkerCache, "run_chunk", _fail)  # no run is played again
    assert main([*argv, "--resume"]) == 0
    monkeypatch.undo()
    capsys.readouterr()
    for name in ("runs.jsonl", "turns.png", "outcomes_map.png"):
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name
    listed = json.loads((out / "summary.json").read_text())["plots"]
    assert [Path(p).name for p in listed] == [
        Path(p).name for p in json.loads((whole / "summary.json").read_text())["plots"]
    ]


def test_sigterm_in_any_command_removes_the_file_it_was_writing(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """SIGTERM while a command writes its file (here one run's event log): exit status 143
    and one line, the log neither written nor left as a temporary file; the handler is the
    default again once ``main`` returns."""
    log = tmp_path / "one.jsonl"
    _stop_in_write(monkeypatch, signal.SIGTERM, "one.jsonl")
    argv = ["run", CHASE, "--run-seed", "12345", "--log", str(log)]
    assert main(argv) == 128 + signal.SIGTERM
    monkeypatch.undo()
    assert capsys.readouterr().err == "tacgrid: stopped by SIGTERM\n"
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_sigterm_is_left_alone_where_the_caller_handles_it(tmp_path: Path, capsys) -> None:
    """A program that set its own SIGTERM handler and calls ``main`` keeps it."""
    seen: list[int] = []
    old = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        assert main(["systems", "--json"]) == 0
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler has run by now
            pass
    finally:
        signal.signal(signal.SIGTERM, old)
    capsys.readouterr()
    assert seen == [signal.SIGTERM]


def test_a_stop_before_the_first_run_says_so(tmp_path: Path, monkeypatch) -> None:
    real = work.WorkerCache.prepared

    def prepared(*args: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args)

    monkeypatch.setattr(work.WorkerCache, "prepared", prepared)
    with pytest.raises(BatchStopped) as stop:
        run_batch(CHASE, runs=60, seed=8, out_dir=str(tmp_path / "b"))
    assert stop.value.message == (
        "stopped by SIGTERM before the batch started: no run was played; run the same "
        "command again to start it"
    )
    assert [p.name for p in (tmp_path / "b").iterdir()] == [".lock"]


def test_a_stop_once_the_batch_is_whole_does_what_it_would_do_a_moment_later() -> None:
    """Past the batch's last file a stop is noted and sent again when the batch's handlers
    are put back: here Python's own SIGINT handler, a KeyboardInterrupt."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt) as err:
            with control._stop_on_signals() as stop:
                assert stop is not None
                stop.done = True
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):  # the handler ran by now: noted, not raised
                    pass
                noted = stop.signum
    finally:
        signal.signal(signal.SIGINT, old)
    assert noted == signal.SIGINT and not isinstance(err.value, BatchStopped)


# --------------------------------------------------------------------------- the folder


def test_an_existing_batch_is_refused_kept_or_replaced(tmp_path: Path, capsys) -> None:
    out = tmp_path / "b"
    base = ["run", CHASE, "--runs", "30", "--out", str(out), "--no-plots", "--json"]
    assert main([*base, "--seed", "1"]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main([*base, "--seed", "2"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1
    assert "--resume" in cap.err and "--force" in cap.err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # --force whose batch fails before its first runs: the old batch stays, whole.
    with pytest.raises(ScenarioError):
        run_batch(CHASE, runs=30, seed=2, out_dir=str(out), force=True, chunk_fn=_fail)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # --force that runs: replaced.
    assert main([*base, "--seed", "2", "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == 2
    assert json.loads((out / "batch.json").read_text())["seed"] == 2


def _fail(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    raise ScenarioError("broken on purpose")


def test_resume_with_more_runs_extends_to_a_fresh_batch(tmp_path: Path) -> None:
    small = tmp_path / "small"
    run_batch(CHASE, runs=40, seed=4, out_dir=str(small))
    with pytest.raises(ArgumentError, match="40 runs"):
        run_batch(CHASE, runs=20, seed=4, out_dir=str(small), resume=True)
    grown = run_batch(CHASE, runs=90, seed=4, out_dir=str(small), resume=True)
    full = run_batch(CHASE, runs=90, seed=4, out_dir=str(tmp_path / "full"), workers=2)
    assert _strip(grown) == _strip(full) and grown["runs"] == 90
    assert (small / "runs.jsonl").read_bytes() == (tmp_path / "full" / "runs.jsonl").read_bytes()
    # --resume of a finished batch without --runs keeps its size.
    again = run_batch(CHASE, seed=4, out_dir=str(small), resume=True)
    assert _strip(again) == _strip(full)


def test_workers_are_capped_and_the_cap_is_said(tmp_path: Path) -> None:
    notes: list[Wording] = []
    one = run_batch(CHASE, runs=40, seed=3, out_dir=str(tmp_path / "a"))
    capped = run_batch(
        CHASE, runs=40, seed=3, workers=1000, out_dir=str(tmp_path / "b"), note=notes.append
    )
    said_so = "1000: using 2 (the batch has 2 chunks of up to 25 runs to do)"
    assert [n.naming(FLAGS) for n in notes] == [f"--workers {said_so}"]  # the command line
    assert [str(n) for n in notes] == [f"workers {said_so}"]  # an API caller
    assert _strip(one) == _strip(capped)
    said: list[Wording] = []
    cpus = os.cpu_count() or 1
    assert runner._cap_workers(1000, 10**6, said.append) == runner.WORKERS_PER_CPU * cpus
    assert "per CPU" in str(said[0])


def test_absurd_run_counts_are_refused_and_huge_ones_start_at_once(tmp_path: Path) -> None:
    t = time.monotonic()
    with pytest.raises(ArgumentError) as err:
        run_batch(CHASE, runs=10**12, out_dir=str(tmp_path / "x"))
    assert "\n" not in str(err.value) and str(batch.MAX_RUNS) in str(err.value)
    assert not (tmp_path / "x").exists()
    # The largest allowed batch hands out its first chunk at once: no seed is made ahead.
    calls: list[int] = []

    def stop_second(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
        calls.append(len(items))
        if len(calls) == 2:
            raise BatchStopped(signal.SIGTERM)
        return batch.run_chunk(path, overrides, items)

    out = tmp_path / "huge"
    with pytest.raises(BatchStopped) as stop:
        run_batch(CHASE, runs=batch.MAX_RUNS, seed=1, out_dir=str(out), chunk_fn=stop_second)
    assert time.monotonic() - t < 15
    said = stop.value.wording.naming(FLAGS)  # as the command line says it
    assert "25 of 1000000000 runs" in said and "--resume" in said
    assert "with resume to finish" in stop.value.message  # as an API caller reads it
    assert json.loads((out / "batch.json").read_text())["runs"] == batch.MAX_RUNS
    assert [r["seed"] for r in read_runs(str(out / "runs.jsonl"))] == run_seeds(1, 25)
    assert run_seed(1, 10**9 - 1) == int(
        __import__("numpy").random.SeedSequence(1, spawn_key=(10**9 - 1,)).generate_state(1)[0]
    )


def _stub(path: str, overrides: Any, items: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """A run result of the real shape, made instantly: the batch driver alone is measured."""
    return [
        {
            "run": i,
            "seed": s,
            "outcome": ("capture", "escape", "timeout")[s % 3],
            "turns": s % 30,
            "cell": [s % 40, s % 30],
            "by": "pursuer1" if s % 3 == 0 else None,
            "events": 40 + s % 17,
        }
        for i, s in items
    ]


def test_memory_does_not_grow_with_the_runs(tmp_path: Path) -> None:
    peaks = {}
    for n in (1_000, 10_000):
        tracemalloc.start()
        summary = run_batch(CHASE, runs=n, seed=5, out_dir=str(tmp_path / str(n)), chunk_fn=_stub)
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert summary["runs"] == n
    # Holding every result would add ~0.5 KB a run (4.5 MB here); the driver stays flat.
    assert peaks[10_000] < peaks[1_000] + 1_000_000, peaks
    # The summary from running tallies equals one from every result at once.
    records = read_runs(str(tmp_path / "10000" / "runs.jsonl"))
    assert [r["run"] for r in records] == list(range(10_000))
    digest = load_scenario(CHASE).digest
    made = batch.summarise(
        records, seed=5, scenario=CHASE, digest=digest, results_path=summary["results"]
    )
    assert made == json.loads((tmp_path / "10000" / "summary.json").read_text())


# --------------------------------------------------------------------------- the runs table

RUN_COLUMNS = ["run", "seed", "outcome", "turns", "by", "col", "row", "events"]


def _table_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What runs.parquet must hold for these runs.jsonl records."""
    return [
        {
            "run": r["run"], "seed": r["seed"], "outcome": r["outcome"], "turns": r["turns"],
            "by": r["by"], "col": r["cell"][0] if r["cell"] else None,
            "row": r["cell"][1] if r["cell"] else None, "events": r["events"],
        }
        for r in records
    ]  # fmt: skip


def test_a_batch_has_its_runs_table_and_a_stopped_one_resumes_to_the_same(
    tmp_path: Path,
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    whole = tmp_path / "whole"
    run_batch(CHASE, runs=60, seed=8, out_dir=str(whole))
    table = pq.read_table(whole / "runs.parquet")
    assert table.schema.names == RUN_COLUMNS
    types = {f.name: f.type for f in table.schema}
    assert types["outcome"] == types["by"] == pa.string()
    assert all(types[k] == pa.int64() for k in RUN_COLUMNS if k not in ("outcome", "by"))
    assert table.to_pylist() == _table_rows(read_runs(str(whole / "runs.jsonl")))

    def stop_at(n: int) -> Any:
        calls: list[int] = []

        def chunk(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
            calls.append(1)
            if len(calls) == n:
                raise BatchStopped(signal.SIGTERM)
            return batch.run_chunk(path, overrides, items)

        return chunk

    cut = tmp_path / "cut"
    with pytest.raises(BatchStopped):
        run_batch(CHASE, runs=60, seed=8, out_dir=str(cut), chunk_fn=stop_at(2))
    assert not (cut / "runs.parquet").exists()
    run_batch(CHASE, runs=60, seed=8, out_dir=str(cut), resume=True)
    assert (cut / "runs.parquet").read_bytes() == (whole / "runs.parquet").read_bytes()
    # Extending: the 60-run table goes as the extension starts, the 90-run one comes at its end.
    with pytest.raises(BatchStopped):
        run_batch(CHASE, runs=90, seed=8, out_dir=str(cut), resume=True, chunk_fn=stop_at(1))
    assert not (cut / "runs.parquet").exists()
    run_batch(CHASE, runs=90, seed=8, out_dir=str(cut), resume=True)
    fresh = tmp_path / "fresh"
    run_batch(CHASE, runs=90, seed=8, out_dir=str(fresh), workers=2)
    assert (cut / "runs.parquet").read_bytes() == (fresh / "runs.parquet").read_bytes()
    assert pq.read_table(cut / "runs.parquet").num_rows == 90
    # Replacing (--force): the old table stays until the new batch's first runs are in.
    old = (cut / "runs.parquet").read_bytes()
    with pytest.raises(BatchStopped):
        run_batch(CHASE, runs=30, seed=9, out_dir=str(cut), force=True, chunk_fn=stop_at(1))
    assert (cut / "runs.parquet").read_bytes() == old
    with pytest.raises(BatchStopped):
        run_batch(CHASE, runs=60, seed=9, out_dir=str(cut), force=True, chunk_fn=stop_at(2))
    assert not (cut / "runs.parquet").exists()


def test_the_runs_table_streams_in_chunks_and_row_groups(tmp_path: Path, monkeypatch) -> None:
    import pyarrow.parquet as pq

    monkeypatch.setattr(results, "TABLE_CHUNK", 7)
    monkeypatch.setattr(results, "TABLE_GROUP", 20)
    run_batch(CHASE, runs=100, seed=5, out_dir=str(tmp_path / "b"), chunk_fn=_stub)
    table = pq.ParquetFile(tmp_path / "b" / "runs.parquet")
    # Record batches of 7 rows, a row group once 20 or more are in: 21 + 21 + 21 + 21 + 16.
    assert [table.metadata.row_group(i).num_rows for i in range(table.num_row_groups)] == [
        21, 21, 21, 21, 16
    ]  # fmt: skip
    records = read_runs(str(tmp_path / "b" / "runs.jsonl"))
    assert table.read().to_pylist() == _table_rows(records)


# --------------------------------------------------------------------------- run records


def test_records_carry_the_true_event_count_and_run_seed_logs_their_index(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "b"
    run_batch(CHASE, runs=30, seed=6, out_dir=str(out))
    line = read_runs(str(out / "runs.jsonl"))[17]
    assert line["run"] == 17 and line["events"] > 0
    log = tmp_path / "one.jsonl"
    argv = ["run", CHASE, "--run-seed", str(line["seed"]), "--log", str(log), "--json"]
    assert main([*argv, "--seed", "6", "--runs", "30"]) == 0
    one = json.loads(capsys.readouterr().out)
    start = json.loads(log.read_text().splitlines()[0])
    assert one["run"] == 17 and start["run"] == 17
    assert one["events"] == line["events"] == len(log.read_text().splitlines())
    # Found through --out's runs.jsonl too; a seed of no batch has no index.
    assert main([*argv, "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["run"] == 17
    assert main(["run", CHASE, "--run-seed", "12345", "--log", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"] is None
    assert json.loads(log.read_text().splitlines()[0])["run"] is None


def test_progress_line_with_progress_and_quiet(tmp_path: Path, capsys) -> None:
    base = ["run", CHASE, "--runs", "60", "--seed", "2", "--no-plots", "--json"]
    assert main([*base, "--out", str(tmp_path / "a"), "--progress"]) == 0
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines and lines[-1].startswith("60/60 runs") and "runs/s" in lines[-1], err
    assert "ETA" in lines[-1] and "capture" in lines[-1]
    assert main([*base, "--out", str(tmp_path / "b"), "--progress", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- Dask


@pytest.fixture
def peer(request: pytest.FixtureRequest) -> Iterator[int]:
    """A TCP server on 127.0.0.1: ``silent`` accepts and never answers; ``http`` answers
    anything with an HTTP error."""
    mode = request.param
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if mode == "http":
                try:
                    conn.recv(1024)
                    conn.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        for conn in held:
            conn.close()


@pytest.mark.parametrize("peer", ["silent", "http"], indirect=True)
def test_a_peer_that_is_not_a_scheduler_is_one_line_in_bounded_time(
    peer: int, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setattr(batch_dask, "CONNECT_TIMEOUT", 2.0)
    t = time.monotonic()
    argv = ["run", CHASE, "--runs", "5", "--out", str(tmp_path / "b")]
    assert main([*argv, "--scheduler", f"tcp://127.0.0.1:{peer}"]) == 2
    took = time.monotonic() - t
    cap = capsys.readouterr()
    assert took < 3 * 2.0 + 3, f"took {took:.1f} s"
    assert cap.out == "" and cap.err.count("\n") == 1 and "Dask scheduler" in cap.err, cap.err
    assert not (tmp_path / "b" / "runs.jsonl").exists()


@pytest.mark.parametrize("addr", ["ucx://127.0.0.1:8786", "tls://127.0.0.1:8786", "tcp://x"])
def test_unsupported_scheduler_addresses_are_one_line(addr: str, tmp_path: Path, capsys) -> None:
    argv = ["run", CHASE, "--runs", "5", "--out", str(tmp_path / "b"), "--scheduler", addr]
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "tcp://HOST:PORT" in cap.err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def test_the_scheduler_dying_mid_batch_is_one_line_and_resumes(
    quick: str, fresh: Path, tmp_path: Path
) -> None:
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": _env()}
    sched = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
        + ["--port", str(port), "--dashboard-address", "127.0.0.1:0"],
        **quiet,  # type: ignore[call-overload]
    )
    worker = None
    try:
        _wait_listening(port)  # a batch started before it listens is refused at once
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", addr, "--nthreads", "1"]
            + ["--nworkers", "1", "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"],
            **quiet,  # type: ignore[call-overload]
        )
        out = tmp_path / "b"
        argv = [quick, "--runs", str(FRESH_RUNS), "--seed", "9", "--out", str(out)]
        argv += ["--no-plots"]
        proc = _start([*argv, "--scheduler", addr])
        deadline = time.time() + 60
        while time.time() < deadline and _lines(out / "runs.jsonl") < 50 and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None and _lines(out / "runs.jsonl") >= 50, proc.poll()
        sched.kill()
        sched.wait()
        t = time.monotonic()
        _, err = proc.communicate(timeout=90)
        took = time.monotonic() - t
        assert proc.returncode == 2 and err.count("\n") == 1, err
        assert "--resume" in err and "Traceback" not in err
        assert took < 40, f"took {took:.1f} s"
    finally:
        sched.kill()
        if worker is not None:
            worker.kill()
            worker.wait()
    done = subprocess.run(
        [sys.executable, MAIN, "run", *argv, "--resume", "--workers", "2", "--json"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (out / "runs.jsonl").read_bytes() == (fresh / "runs.jsonl").read_bytes()


def test_workers_start_from_the_field_cache_built_once_here(tmp_path: Path) -> None:
    """With local workers the first chunk runs in this process and the workers are forked
    after it: they inherit its scenario and field cache instead of each building its own
    (issue 20), and the results are byte for byte those of one worker."""
    quick_runs = 60
    cache = work.WorkerCache()
    process_keys = work.WORKER_CACHE.keys()
    two = run_batch(
        CHASE, runs=quick_runs, seed=11, workers=2, out_dir=str(tmp_path / "two"), cache=cache
    )
    key = (os.path.abspath(CHASE), ())
    assert cache.keys() == [key]
    entry = cache.entry(key)
    assert entry is not None
    fields = entry[1]
    assert fields._profiles and fields.hooks._memo  # built here, before the fork
    assert work.WORKER_CACHE.keys() == process_keys  # the batch's own cache, not the process's
    one = run_batch(
        CHASE,
        runs=quick_runs,
        seed=11,
        workers=1,
        out_dir=str(tmp_path / "one"),
        cache=work.WorkerCache(),
    )
    assert (tmp_path / "one" / "runs.jsonl").read_bytes() == (
        tmp_path / "two" / "runs.jsonl"
    ).read_bytes()
    assert {k: v for k, v in one.items() if k != "results"} == {
        k: v for k, v in two.items() if k != "results"
    }
    # A chunk function of the caller's is never run here (it may be one that dies).
    cache = work.WorkerCache()
    out = str(tmp_path / "stub")
    run_batch(CHASE, runs=60, seed=11, workers=2, out_dir=out, chunk_fn=_stub, cache=cache)
    assert key not in cache


def test_every_executor_plays_a_job_to_the_plain_runs(tmp_path: Path) -> None:
    """The executor seam: this process alone and pools of local worker processes give a
    job's records chunk by chunk in run order, equal to the plain way (every run played one
    after another from a fresh cache), each warming the cache it is handed, not this
    process's."""
    from engine.batch.pool import LocalPool
    from engine.scenario import load_scenario

    scenario = load_scenario(CHASE)
    runs = 130
    plain = work.WorkerCache().run_chunk(CHASE, (), list(enumerate(run_seeds(4, runs))))
    process_keys = work.WORKER_CACHE.keys()
    executors: list[work.Executor] = [work.InProcess(), LocalPool(2), LocalPool(3)]
    for executor in executors:
        out = str(tmp_path / type(executor).__name__)
        plan = runner._plan(CHASE, scenario, runs, 4, out, False, False, None)
        cache = work.WorkerCache()
        chunks = list(executor.run(work.Job(plan, cache.run_chunk, cache)))
        assert [r for chunk in chunks for r in chunk] == plain, executor
        assert all(chunks) and cache.keys() == [(os.path.abspath(CHASE), ())], executor
    assert work.WORKER_CACHE.keys() == process_keys


def _first_to_make(path: Path) -> bool:
    """Whether this process made ``path`` (an atomic create: of two worker processes that
    ask at once, one only)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def test_the_batchs_process_is_one_of_its_workers(tmp_path: Path, monkeypatch) -> None:
    """With ``workers=K`` the batch's own process plays chunks too, after its warm chunks
    as before them, and forks K - 1 worker processes (each forked one costs CPU a run does
    not: issue 20); every chunk is played once, and the runs are byte for byte one
    worker's. A worker process that dies meanwhile has its chunks played again."""
    log = tmp_path / "played"
    died = tmp_path / "died"
    real = work._play
    here = os.getpid()

    def spy(scenario: Any, fields: Any, items: list[tuple[int, int]]) -> Any:
        if os.getpid() != here and items[0][0] >= 1200 and _first_to_make(died):
            os._exit(9)  # a worker process killed half-way through the batch, once
        results = real(scenario, fields, items)
        with open(log, "a") as fh:  # one short line per chunk: appends do not interleave
            fh.write(f"{os.getpid()} {items[0][0]} {len(items)}\n")
        return results

    monkeypatch.setattr(work, "_play", spy)
    runs = 2400  # chunks enough after the warm ones that every process plays some
    one = tmp_path / "one"
    run_batch(CHASE, runs=runs, seed=5, workers=1, out_dir=str(one))
    for workers in (2, 3):
        log.unlink()
        out = tmp_path / f"w{workers}"
        run_batch(CHASE, runs=runs, seed=5, workers=workers, out_dir=str(out))
        played = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
        starts = sorted(first for _, first, _ in played)
        assert starts == list(range(0, runs, batch.CHUNK)), "a chunk played twice or never"
        warm = work._warm_chunks(runs)
        by_pid = Counter(pid for pid, _, _ in played)
        assert died.exists(), "no worker process died: the retry was not tested"
        died.unlink()
        forked = min(workers, 2 * (os.cpu_count() or 1)) - 1  # engine.batch.runner._cap_workers
        assert here in by_pid and len(by_pid) == forked + 2, by_pid  # one forked again
        after_warm = [pid for pid, first, _ in played if first >= warm * batch.CHUNK]
        assert after_warm.count(here) > 0, "this process played nothing after the fork"
        assert (out / "runs.jsonl").read_bytes() == (one / "runs.jsonl").read_bytes()


def test_a_token_pickles_with_its_stats_read_only() -> None:
    """A warm field cache holds tokens; their stats (a read-only mappingproxy) survive a
    pickle round trip read-only and equal (issue 20: the cache ships to Dask workers)."""
    from types import MappingProxyType

    from engine.systems.base import Token, TokenState

    token = Token("d6", MappingProxyType({"move": 10}), TokenState(cell=(2, 3)), "p1")
    back = pickle.loads(pickle.dumps(token))
    assert back == token and isinstance(back.stats, MappingProxyType)
    with pytest.raises(TypeError):
        back.stats["move"] = 12  # type: ignore[index]
    plain = Token("generic", {"speed": 30})
    assert pickle.loads(pickle.dumps(plain)) == plain


def test_a_shipped_field_cache_gives_the_same_runs(tmp_path: Path) -> None:
    """The scenario and warm field cache a batch ships to Dask workers (engine.batch.work.WorkerCache.shipment),
    taken alone in a worker (take_shipment, run_shipped), give the runs of this process
    byte for byte."""
    seeds = list(enumerate(run_seeds(5, 60)))
    key = (os.path.abspath(CHASE), ())
    here_cache = work.WorkerCache()  # the batch's process
    here = here_cache.run_chunk(CHASE, (), seeds[:20])
    blob = here_cache.shipment(CHASE, ())
    assert blob is not None
    more = here_cache.run_chunk(CHASE, (), seeds[20:])
    cache = work.WORKER_CACHE  # a worker process's, as its tasks find it
    cache.clear()
    token = f"{work.engine_digest()}/t1"
    assert work.take_shipment(CHASE, (), token, blob)
    entry = cache.entry((*key, token))
    assert entry is not None and entry[1]._profiles  # warm as shipped
    rest = work.SeededRuns.of(5, list(range(20, 60)))
    assert pickle.loads(work.run_shipped(CHASE, (), token, rest)) == more
    assert key not in cache  # the scenario was not read again
    later = f"{work.engine_digest()}/t2"  # the next batch's shipment replaces it
    assert work.take_shipment(CHASE, (), later, blob) and cache.keys() == [(*key, later)]
    work.drop_shipment(CHASE, (), later)
    assert not cache
    # A worker with another engine than the client's, or without the shipment, loads the
    # scenario itself.
    assert not work.take_shipment(CHASE, (), "another-engine/t1", blob)
    assert not cache
    assert pickle.loads(work.run_shipped(CHASE, (), "another-engine/t1", rest)) == more
    assert cache.keys() == [key]
    cache.clear()
    assert batch.run_chunk(CHASE, (), seeds) == here + more


def test_a_dask_batchs_last_tasks_shrink_and_cover_every_run_once() -> None:
    """The runs a Dask batch hands out (engine.batch.work._run_indices with ``taper``): every
    run still to do, once and in order (the done ones left out); after the leading chunks
    whole tasks, then tasks that shrink towards the end (at most the runs left over
    ``taper``, never under CHUNK but the very last), so no worker ends alone on a whole
    task. Without ``taper``, the chunks are as before."""
    from types import SimpleNamespace

    from engine.batch.work import _run_indices

    for n, prefix, extra, first, rest, leading, taper in (
        (60_000, 0, set(), 25, 1000, 64, 2),
        (9_001, 40, {41, 77, 5000, 9000}, 25, 700, 3, 3),
        (130, 0, set(), 25, 40, 1, 2),
    ):
        plan: Any = SimpleNamespace(n=n, prefix=prefix, extra=extra)
        chunks = list(_run_indices(plan, first, rest, leading, taper=taper))
        assert [i for c in chunks for i in c] == [i for i in range(prefix, n) if i not in extra]
        sizes = [len(c) for c in chunks]
        assert sizes[:leading] == [first] * leading
        tail = sizes[leading:]
        assert all(a >= b for a, b in zip(tail, tail[1:-1], strict=False))  # shrinking
        assert all(batch.CHUNK <= k <= rest for k in tail[:-1]) and tail[-1] <= rest
        left = len([i for i in range(prefix, n) if i not in extra]) - sum(sizes[:leading])
        for k in tail[:-1]:  # each at most what was left over taper, CHUNK at least
            assert k == max(batch.CHUNK, min(rest, -(-left // taper)))
            left -= k
        if n == 60_000:
            assert tail[0] == rest and tail[-2] < rest // 8
            plain = [len(c) for c in _run_indices(plan, first, rest, leading)]
            assert plain[leading:-1] == [rest] * (len(plain) - leading - 1)
    # The batch's own split (engine.batch.dask.dask_tasks), which bench_cluster.py --learned
    # replays: the warm chunks of dask_warm_chunks, then tasks of at most DASK_CHUNK_MAX.
    from engine.batch.dask import DASK_CHUNK_MAX, dask_tasks, dask_warm_chunks

    for n, workers in ((60_000, 2), (60_000, 5), (3_000, 2), (30, 2)):
        plan = SimpleNamespace(n=n, prefix=0, extra=set())
        warm, made = dask_tasks(plan, n, workers)
        chunks = list(made)
        assert [i for c in chunks for i in c] == list(range(n))
        assert warm == dask_warm_chunks(n)
        assert all(len(c) == min(batch.CHUNK, n // 2) for c in chunks[:warm])
        tasks = [len(c) for c in chunks[warm:]]
        assert max(tasks) <= max(DASK_CHUNK_MAX, batch.CHUNK)
        if (n, workers) == (60_000, 2):
            assert max(tasks) == DASK_CHUNK_MAX and tasks[-1] < DASK_CHUNK_MAX // 8


def test_dask_workers_take_the_shipped_cache(tmp_path: Path) -> None:
    """On Dask the first chunk runs here and its warm cache ships to the workers once: they
    never load the scenario themselves (no cache of their own is left), the shipment is
    dropped at the end, and the runs are those of one local worker."""
    from distributed import Client, LocalCluster

    one = run_batch(CHASE, runs=120, seed=6, workers=1, out_dir=str(tmp_path / "one"))
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster:
        dist = run_batch(
            CHASE,
            runs=120,
            seed=6,
            scheduler=cluster.scheduler_address,
            out_dir=str(tmp_path / "d"),
        )

        def kept_keys() -> list[int]:
            from engine.batch import work as worker_work

            return [len(k) for k in worker_work.WORKER_CACHE.keys()]

        with Client(cluster.scheduler_address) as client:
            kept = client.run(kept_keys)
    assert (tmp_path / "one" / "runs.jsonl").read_bytes() == (
        tmp_path / "d" / "runs.jsonl"
    ).read_bytes()
    assert {k: v for k, v in one.items() if k != "results"} == {
        k: v for k, v in dist.items() if k != "results"
    }
    assert len(kept) == 2 and all(lens == [] for lens in kept.values()), kept


def test_a_dask_batch_drops_its_shipment_before_it_lets_the_cluster_go() -> None:
    """The workers are asked to drop a batch's shipment as its last runs come in, without
    waiting (the summary and runs table are written meanwhile); DaskCluster.settle, called
    before the client closes, waits for the answer, FORGET_WAIT_S at most."""

    class SlowClient:
        def __init__(self, delay: float) -> None:
            self.delay = delay
            self.dropped = threading.Event()

        def run(self, fn: Any, *args: Any, on_error: str) -> None:
            assert fn is work.drop_shipment and on_error == "ignore"
            time.sleep(self.delay)
            self.dropped.set()

    client = SlowClient(0.3)
    cluster = batch_dask.DaskCluster(client, "tcp://127.0.0.1:1")
    t = time.monotonic()
    cluster.forgets.append(batch_dask._forget_shipment(client, ("p", (), "t"), wait=False))
    assert time.monotonic() - t < 0.2 and not client.dropped.is_set()  # not waited for here
    cluster.settle()
    assert client.dropped.is_set() and not cluster.forgets
    stuck = SlowClient(60)  # a worker that never answers holds the batch FORGET_WAIT_S at most
    cluster.forgets.append(batch_dask._forget_shipment(stuck, ("p", (), "t"), wait=False))
    t = time.monotonic()
    cluster.settle(timeout=0.2)
    assert time.monotonic() - t < 2 and not stuck.dropped.is_set() and not cluster.forgets


def _in_process_cluster() -> Any:
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )


@pytest.mark.parametrize("how", ["too-big", "take-fails"])
def test_dask_workers_without_the_shipment_play_the_same_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Where nothing ships (the warm cache pickles too big) or a worker fails to take what
    shipped, the batch goes on: those workers load the scenario themselves, and the runs
    are those of one local worker, byte for byte. (The cluster's workers are threads of
    this process here, so the patches reach them.)"""
    one = run_batch(CHASE, runs=90, seed=3, workers=1, out_dir=str(tmp_path / "one"))
    tried = tmp_path / "tried"  # what the workers tried (they run a copy of the function)
    if how == "too-big":
        monkeypatch.setattr(work, "SHIP_MAX_BYTES", 0)
    else:

        def take_fails(path: str, overrides: Any, token: str, blob: bytes) -> bool:
            with open(tried, "a") as f:
                f.write(f"{len(blob)}\n")
            raise OSError("no room for the shipment")

        monkeypatch.setattr(batch_dask, "take_shipment", take_fails)
    work.WORKER_CACHE.clear()
    with _in_process_cluster() as cluster:
        dist = run_batch(
            CHASE, runs=90, seed=3, scheduler=cluster.scheduler_address, out_dir=str(tmp_path / "d")
        )
    work.WORKER_CACHE.clear()
    assert (tmp_path / "one" / "runs.jsonl").read_bytes() == (
        tmp_path / "d" / "runs.jsonl"
    ).read_bytes()
    assert {k: v for k, v in one.items() if k != "results"} == {
        k: v for k, v in dist.items() if k != "results"
    }
    sizes = tried.read_text().split() if tried.exists() else []
    assert len(sizes) == (2 if how == "take-fails" else 0) and all(int(n) > 0 for n in sizes)


def test_a_dask_task_sends_its_runs_packed() -> None:
    """A Dask task's runs come back as one pickle (a list of records would be measured and
    serialized record by record on the worker's event loop), and the client unpacks them.
    They go out as the batch's seed and their indices in one ``bytes``: the worker makes
    their seeds, the same as the client's."""
    seeds = list(enumerate(run_seeds(5, 30)))
    sent = work.SeededRuns.of(5, list(range(30)))
    assert isinstance(sent.indices, bytes) and sent.items() == seeds
    assert work.SeededRuns.of(5, [3, 7]).items() == [seeds[3], seeds[7]]
    work.WORKER_CACHE.clear()
    plain = batch.run_chunk(CHASE, (), seeds)
    work.WORKER_CACHE.clear()
    packed = batch.run_chunk_packed(CHASE, (), sent)
    work.WORKER_CACHE.clear()
    assert isinstance(packed, bytes)
    assert work._unpacked(packed) == plain
    assert work._unpacked(plain) is plain  # a test's own chunk_fn returns its list


def test_a_scheduler_without_the_engine_is_one_line_that_says_so() -> None:
    """Dask's scheduler unpickles every task: one started where tacgrid's engine does not
    import fails each with "Error during deserialization of the task graph". The batch
    stops with one line that says what to do, not that the cluster is gone (tried by hand
    with a `dask scheduler` started outside the project: the same line)."""
    from types import SimpleNamespace

    plan = SimpleNamespace(tally=SimpleNamespace(n=125), n=500, runs_path="out/runs.jsonl")

    def fails() -> None:
        raise RuntimeError(
            "Error during deserialization of the task graph. This frequently occurs if the "
            "Scheduler and Client have different environments."
        )

    with pytest.raises(ScenarioError) as got:
        batch_dask._dask_call(fails, "tcp://127.0.0.1:8786", plan)  # type: ignore[arg-type]
    line = got.value.naming(FLAGS)  # as the command line prints it
    assert "\n" not in line
    assert "cannot load tacgrid's tasks" in line and "import engine" in line
    assert "125 of 500 runs are in out/runs.jsonl" in line and "--resume" in line
    assert "--" not in str(got.value)  # an API caller gave no flag: "resume"

    def gone() -> None:
        raise OSError("Timed out trying to connect")

    with pytest.raises(ScenarioError, match="the cluster failed mid-batch"):
        batch_dask._dask_call(gone, "tcp://127.0.0.1:8786", plan)  # type: ignore[arg-type]
