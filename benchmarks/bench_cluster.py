"""Batches at cluster scale: a Dask cluster of 2 workers against 1 local worker, on work a
cluster is started for.

Rows (each measured against its reference in the same run; exit status 1 if one is missed):

* a sweep of the square chase, ``POINTS`` points x ``POINT_RUNS`` runs (60,000 runs), and
  one batch of ``BATCH_RUNS`` runs, each on a 2-worker Dask cluster (a ``dask scheduler``
  and two ``dask worker`` processes, started as docs/batches.md says, with its quiet
  settings) against the same work on 1 local worker (``--workers 1``), back to back in
  rounds: total CPU (the batch's own process, the scheduler and the workers, all of it, from
  the start of the work to its end) <= 1.10x and wall time <= 0.60x, the median of the
  rounds' ratios. Beside it: the cluster's own idle CPU over as long (its heartbeats and
  monitors, measured just before), for what is the cluster's and what the work's.
* the peak memory (``ru_maxrss``) of the scheduler and of each worker over the sweep, and
  of the batch's own process.

The cluster is started afresh for every round (its peak memory is that round's), and its
workers and scheduler import the engine before the work starts (a cluster is started once for
many batches; the scheduler unpickles every task); the scenario and its field caches are new
to them. Beside each row's CPU: each process's share, and of each worker's the share of its
main thread, the event loop (heartbeats, messages, the shipment's bytes, its drop), the rest
being its task thread's (Linux ``/proc``; zeros elsewhere).

Run: python benchmarks/bench_cluster.py [--rounds N] [--task-stream PNG]
(``--task-stream``: also save the Dask task stream of one sweep as a picture, and of one
60,000-run batch beside it (``-batch`` before the extension): which worker ran what, and
when; the batch's picture starts with the batch, so the warm chunks its own process plays
before the first task, and the shipment, show as the workers' idle start.)

``python benchmarks/bench_cluster.py --learned`` (not part of ``run.py``; no cluster, one
process) counts what the 60,000-run batch's two Dask workers learn twice: the batch's runs
split as a Dask batch splits them (:func:`engine.batch.dask.dask_tasks`), the warm chunks
played by one cache, which ships (``WorkerCache.shipment``) to two others taking the tasks
in turn, against one cache playing them all. The turn starts, plans, ways and descents each
cache learns after the warm chunks are counts, the same on any machine and under any load:
what the two workers learn beyond the one cache is work done twice, which only merging
their learning would save. CPU seconds of each part are printed beside (noisy where the
machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # timing, where this file is loaded by path

from timing import child_json  # noqa: E402

SCENARIO = str(ROOT / "scenarios" / "chase.yaml")
POINTS = 40
POINT_RUNS = 1500
BATCH_RUNS = 60_000
#: Issue 43: a 2-worker Dask cluster against 1 local worker, at most.
CPU_TARGET = 1.10
WALL_TARGET = 0.60
ROUNDS = 3
#: docs/batches.md's quiet cluster, as the environment its processes start with.
QUIET_ENV = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "5s",
}
IDLE_SETTLE = 0.5
IDLE_WINDOW = 2.0


def _vary() -> list[str]:
    """``POINTS`` values of the first pursuer's move: each point its own batch and cache."""
    return ["pursuer1.stats.move=" + ",".join(str(6 + i) for i in range(POINTS))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A scheduler and two workers as their own processes, on loopback, quiet."""

    def __init__(self) -> None:
        port = _free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        env = {**os.environ, **QUIET_ENV, "PYTHONPATH": str(ROOT)}
        run_m = [sys.executable, "-m"]
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.procs = [
            subprocess.Popen(
                [
                    *run_m,
                    "distributed.cli.dask_scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--dashboard-address",
                    "127.0.0.1:0",
                ],
                env=env,
                **quiet,
            )  # fmt: skip
        ]
        for _ in range(2):
            self.procs.append(
                subprocess.Popen(
                    [
                        *run_m,
                        "distributed.cli.dask_worker",
                        self.address,
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--host",
                        "127.0.0.1",
                        "--dashboard-address",
                        "127.0.0.1:0",
                    ],
                    env=env,
                    **quiet,
                )  # fmt: skip
            )

    def ready(self) -> Any:
        from distributed import Client

        client = Client(self.address, timeout=30, set_as_default=False)
        client.wait_for_workers(2, timeout=60)

        def load() -> None:
            import scipy.sparse.csgraph  # noqa: F401

            import engine.batch  # noqa: F401
            import engine.sim  # noqa: F401

        def load_tasks() -> None:
            import engine.batch.work  # noqa: F401

        client.run(load)
        # The scheduler unpickles every task, so it imports the module of the tasks'
        # functions with the first one: started once for many batches, it has it already.
        client.run_on_scheduler(load_tasks)
        return client

    def cpu(self) -> float:
        return sum(self.cpus())

    def cpus(self) -> list[float]:
        """CPU seconds of each process so far: the scheduler's, then each worker's."""
        import psutil

        out = []
        for p in self.procs:
            try:
                t = psutil.Process(p.pid).cpu_times()
            except psutil.Error:
                out.append(0.0)
                continue
            out.append(t.user + t.system)
        return out

    def loops(self) -> list[float]:
        """CPU seconds so far of each worker's main thread, its event loop (the rest of a
        worker's CPU is its task thread's, which plays the runs, and its comms offload
        thread's); zeros where ``/proc`` does not tell threads apart."""
        return [_thread_cpu(p.pid, p.pid) for p in self.procs[1:]]

    def close(self) -> None:
        for p in self.procs[::-1]:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def _thread_cpu(pid: int, tid: int) -> float:
    """CPU seconds so far of thread ``tid`` of process ``pid`` (Linux ``/proc``), else 0."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _work(kind: str, out: str, scheduler: str | None) -> None:
    from engine.batch import run_batch
    from engine.batch.sweep import run_sweep

    where: dict[str, Any] = {"scheduler": scheduler} if scheduler else {"workers": 1}
    if kind == "sweep":
        run_sweep(SCENARIO, vary=_vary(), runs=POINT_RUNS, seed=7, out_dir=out, **where)
    else:
        run_batch(SCENARIO, runs=BATCH_RUNS, seed=7, out_dir=out, **where)


def child(kind: str, mode: str, stream: str | None) -> None:
    """One piece of work in this (fresh) process; prints its CPU, wall and memory as JSON."""
    out = tempfile.mkdtemp(prefix="bench-cluster-")
    if mode == "dask":
        cluster = Cluster()
        try:
            got = _on_cluster(kind, out, stream, cluster)
        finally:
            cluster.close()
        print(json.dumps(got))
        return
    c0, w0 = time.process_time(), time.perf_counter()
    _work(kind, out, None)
    wall = time.perf_counter() - w0
    print(json.dumps({"cpu": time.process_time() - c0, "wall": wall, "own_mb": _maxrss_mb()}))


def _on_cluster(kind: str, out: str, stream: str | None, cluster: Cluster) -> dict[str, Any]:
    """The work on ``cluster``: its CPU (this process's and the cluster's), wall time, the
    cluster's idle CPU over as long, and the peak memory of each process."""
    client = cluster.ready()
    try:
        time.sleep(IDLE_SETTLE)
        c0, own0, w0 = cluster.cpu(), time.process_time(), time.perf_counter()
        time.sleep(IDLE_WINDOW)
        idle_rate = (cluster.cpu() - c0 + time.process_time() - own0) / (time.perf_counter() - w0)
        each0, own0, w0 = cluster.cpus(), time.process_time(), time.perf_counter()
        loops0 = cluster.loops()
        if stream:
            from distributed import get_task_stream

            start = time.time()  # the workers' clocks are this machine's
            with get_task_stream(client=client) as ts:
                _work(kind, out, cluster.address)
            _task_stream_picture(ts.data, stream, start if kind == "batch" else None)
        else:
            _work(kind, out, cluster.address)
        wall = time.perf_counter() - w0
        own = time.process_time() - own0
        each = [b - a for a, b in zip(each0, cluster.cpus(), strict=True)]
        loops = [b - a for a, b in zip(loops0, cluster.loops(), strict=True)]
        got: dict[str, Any] = {
            "cpu": own + sum(each),
            "scheduler_cpu": each[0],
            "workers_cpu": each[1:],
            "workers_loop_cpu": loops,
            "own": own,
            "wall": wall,
            "idle": idle_rate * wall,
            "own_mb": _maxrss_mb(),
            "scheduler_mb": client.run_on_scheduler(_maxrss_mb),
            "workers_mb": sorted(client.run(_maxrss_mb).values()),
        }
        return got
    finally:
        client.close()


def _task_stream_picture(data: list[dict[str, Any]], path: str, start: float | None) -> None:
    """Dask's task stream as a picture: a row per worker, a bar per task (its compute, then
    its transfer or serialization), as the dashboard draws it; from ``start`` (the work's
    start, time.time()) where given, else from the first task."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workers = sorted({d["worker"] for d in data})
    t0 = min(s["start"] for d in data for s in d["startstops"]) if start is None else start
    colours = {"compute": "tab:blue", "transfer": "tab:red", "disk-read": "tab:orange",
               "disk-write": "tab:orange", "deserialize": "tab:gray"}  # fmt: skip
    busy = {w: 0.0 for w in workers}
    fig, ax = plt.subplots(figsize=(10, 2.2))
    for d in data:
        y = workers.index(d["worker"])
        for s in d["startstops"]:
            ax.barh(y, s["stop"] - s["start"], left=s["start"] - t0, height=0.8,
                    color=colours.get(s["action"], "black"))  # fmt: skip
            if s["action"] == "compute":
                busy[d["worker"]] += s["stop"] - s["start"]
    end = max(s["stop"] for d in data for s in d["startstops"]) - t0
    ax.set_xlim(0, end * 1.01)  # from the start given: the workers' idle start shows
    ax.set_yticks(range(len(workers)), [f"worker {i + 1}" for i in range(len(workers))])
    ax.set_xlabel("seconds from the first task" if start is None else "seconds from the start")
    ax.set_title(
        f"Dask task stream: {len(data)} tasks; computing "
        + ", ".join(f"{busy[w] / end:.0%}" for w in workers)
        + " of the span per worker"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"task stream: {path} ({len(data)} tasks over {end:.2f} s)", file=sys.stderr)


def _measure(kind: str, mode: str, stream: str | None = None) -> dict[str, Any]:
    got, err = child_json(
        __file__, ["--child", kind, mode, *(["--task-stream", stream] if stream else [])], ROOT
    )
    if got is None:
        raise RuntimeError(f"{kind} on {mode} failed:\n{err}")
    return got


#: What ``--learned`` counts of a field cache: the memos a run's turns learn into.
LEARNED = ("starts", "plans_by_reads", "ways", "_descents")


def _learned_of(fields: Any) -> dict[str, int]:
    return {name: len(getattr(fields, name)) for name in LEARNED}


def learned() -> int:
    """``--learned``: see the module docstring."""
    from engine.batch import runner, work
    from engine.batch.dask import dask_tasks
    from engine.scenario import load_scenario

    scenario = load_scenario(SCENARIO)
    out = tempfile.mkdtemp(prefix="bench-cluster-")
    plan = runner._plan(SCENARIO, scenario, BATCH_RUNS, 7, out, False, False, None)
    warm, tasks = dask_tasks(plan, BATCH_RUNS, 2)
    chunks = list(tasks)
    key = (os.path.abspath(SCENARIO), ())

    def play(cache: work.WorkerCache, runs: list[int], token: str | None = None) -> float:
        c = time.process_time()
        for start in range(0, len(runs), work.CHUNK):
            items = [(i, work.run_seed(plan.seed, i)) for i in runs[start : start + work.CHUNK]]
            if token is None:
                cache.run_chunk(SCENARIO, (), items)
            else:
                cache.run_shipped(SCENARIO, (), token, items)
        return time.process_time() - c

    one = work.WorkerCache()
    warm_cpu = sum(play(one, c) for c in chunks[:warm])
    at_warm = _learned_of(one.entry(key)[1])  # type: ignore[index]
    c = time.process_time()
    blob = one.shipment(SCENARIO, ())
    dumps = time.process_time() - c
    if blob is None:
        print("--learned: the warm cache does not ship (too big); nothing to compare")
        return 1
    token = f"{work.engine_digest()}/learned"
    copies = [work.WorkerCache(), work.WorkerCache()]
    received = [blob.copy() for _ in copies]  # each worker's own bytes, its arrays made on them
    del blob
    c = time.process_time()
    for copy, got in zip(copies, received, strict=True):
        copy.take_shipment(SCENARIO, (), token, got)
    loads = time.process_time() - c
    del received
    cpu = [0.0, 0.0]
    for k, runs in enumerate(chunks[warm:]):
        cpu[k % 2] += play(copies[k % 2], runs, token)
    twice = [_learned_of(copy.entry((*key, token))[1]) for copy in copies]  # type: ignore[index]
    copies.clear()
    one_cpu = sum(play(one, runs) for runs in chunks[warm:])
    alone = _learned_of(one.entry(key)[1])  # type: ignore[index]
    warm_runs = sum(len(c) for c in chunks[:warm])
    print(
        f"batch of {BATCH_RUNS} runs as Dask splits it for 2 workers: {warm} warm chunks "
        f"({warm_runs} runs, {warm_cpu:.2f} CPU-s), then {len(chunks) - warm} tasks; the "
        f"shipment pickled in {dumps:.2f} CPU-s, taken twice in {loads:.2f}"
    )
    print(
        f"   after the warm chunks: one cache plays the rest in {one_cpu:.2f} CPU-s; two "
        f"shipped copies taking the tasks in turn, {cpu[0]:.2f} + {cpu[1]:.2f} = "
        f"{sum(cpu):.2f} CPU-s ({sum(cpu) / one_cpu:.3f}x)"
    )
    for name in LEARNED:
        single = alone[name] - at_warm[name]
        split = sum(t[name] - at_warm[name] for t in twice)
        print(
            f"   learned after the warm chunks, {name}: one cache {single}, the two copies "
            f"{split} ({split - single:+d}, {split / single - 1:+.0%}; {at_warm[name]} shipped)"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--task-stream")
    parser.add_argument("--child", nargs=2)
    parser.add_argument("--learned", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.task_stream)
        return 0
    if args.learned:
        return learned()
    ok = True
    for kind, name in (
        ("sweep", f"sweep of {POINTS} points x {POINT_RUNS} runs"),
        ("batch", f"batch of {BATCH_RUNS} runs"),
    ):
        rounds = []
        for r in range(args.rounds):
            order = ("local", "dask") if r % 2 == 0 else ("dask", "local")
            got = {m: _measure(kind, m) for m in order}
            rounds.append(got)
        cpu = statistics.median(g["dask"]["cpu"] / g["local"]["cpu"] for g in rounds)
        wall = statistics.median(g["dask"]["wall"] / g["local"]["wall"] for g in rounds)
        less_idle = statistics.median(
            (g["dask"]["cpu"] - g["dask"]["idle"]) / g["local"]["cpu"] for g in rounds
        )  # the cluster's own heartbeats and monitors over as long: not the work's
        met = cpu <= CPU_TARGET and wall <= WALL_TARGET
        ok = ok and met
        one = statistics.median(g["local"]["cpu"] for g in rounds)
        two = statistics.median(g["dask"]["cpu"] for g in rounds)
        one_wall = statistics.median(g["local"]["wall"] for g in rounds)
        two_wall = statistics.median(g["dask"]["wall"] for g in rounds)
        print(
            f"{name}, Dask 2 workers (quiet) vs 1 local worker, median of {len(rounds)} rounds: "
            f"CPU {cpu:.3f}x ({two:.1f} vs {one:.1f} CPU-s; less the cluster's idle CPU "
            f"{less_idle:.3f}x) (target <= {CPU_TARGET:g}x); wall {wall:.3f}x ({two_wall:.1f} vs "
            f"{one_wall:.1f} s) (target <= {WALL_TARGET:g}x) {'ok' if met else 'MISSED'}",
            flush=True,
        )
        last = rounds[-1]["dask"]
        print(
            f"   CPU of the {kind} on the cluster, median of the rounds: the batch's process "
            f"{statistics.median(g['dask']['own'] for g in rounds):.2f}, the scheduler "
            f"{statistics.median(g['dask']['scheduler_cpu'] for g in rounds):.2f}, the workers "
            + " + ".join(
                f"{statistics.median(g['dask']['workers_cpu'][k] for g in rounds):.2f}"
                for k in range(len(last["workers_cpu"]))
            )
            + " CPU-s (of which their event loops "
            + " + ".join(
                f"{statistics.median(g['dask']['workers_loop_cpu'][k] for g in rounds):.2f}"
                for k in range(len(last["workers_loop_cpu"]))
            )
            + ")",
            flush=True,
        )
        print(
            f"   peak memory over the {kind}: scheduler {last['scheduler_mb']:.0f} MB, workers "
            + ", ".join(f"{m:.0f}" for m in last["workers_mb"])
            + f" MB, the batch's process {last['own_mb']:.0f} MB (1 local worker: "
            f"{rounds[-1]['local']['own_mb']:.0f} MB)",
            flush=True,
        )
    if args.task_stream:
        _measure("sweep", "dask", args.task_stream)
        stem, ext = os.path.splitext(args.task_stream)
        _measure("batch", "dask", f"{stem}-batch{ext or '.png'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
