"""A Dask batch's shipment packed with its arrays' data apart (engine.batch.work.pack_shipment,
unpack_shipment): the same value as a plain pickle gives, its arrays made on the bytes as a
worker received them (moved to an aligned start, never copied again), and the runs played
from it the same runs."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.batch import work

ROOT = Path(__file__).resolve().parents[1]
CHASE = str(ROOT / "scenarios" / "chase.yaml")


def _value() -> dict[str, Any]:
    """Arrays of several dtypes and odd sizes (the next one's data would start unaligned
    without the padding), one read-only, one Fortran-ordered, one not contiguous (pickled
    inside the pickle), one met twice; and things that are not arrays."""
    rng = np.random.default_rng(5)
    shared = rng.random(1728)
    frozen = rng.integers(0, 9, 77).astype(np.int8)
    frozen.setflags(write=False)
    return {
        "fields": [rng.random(1728), rng.random(3457), shared, shared],
        "csr": (rng.integers(0, 1 << 30, 25_033).astype(np.int32), rng.random(25_033)),
        "odd": rng.integers(0, 255, 13).astype(np.uint8),
        "frozen": frozen,
        "fortran": np.asfortranarray(rng.random((7, 5))),
        "strided": rng.random(40)[::3],
        "plain": ("chase", 3, 2.5, b"bytes", None),
    }


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
        assert a.flags.writeable == b.flags.writeable
        assert np.array_equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b


def _arrays(value: dict[str, Any]) -> list[np.ndarray]:
    return [*value["fields"], *value["csr"], value["odd"], value["frozen"], value["fortran"]]


def test_a_packed_shipment_unpacks_as_a_plain_pickle_does() -> None:
    value = _value()
    blob = work.pack_shipment(value)
    plain = pickle.loads(pickle.dumps(value, protocol=5))
    got = work.unpack_shipment(blob)
    _same(got, plain)
    assert got["fields"][2] is got["fields"][3]  # one array met twice stays one
    for a in _arrays(got):
        assert a.ctypes.data % work.SHIP_ALIGN == 0
        assert np.shares_memory(a, blob)  # made on the shipment's bytes, not copied out
    # Aligned as made: taken again in this process (threads as workers take one blob), the
    # same value, the blob unchanged.
    assert blob.ctypes.data % work.SHIP_ALIGN == 0
    before = blob.copy()
    _same(work.unpack_shipment(blob), plain)
    assert np.array_equal(blob, before)


@pytest.mark.parametrize("offset", [0, 1, 5, 8, 29, 63])
def test_a_shipment_received_at_any_offset_is_moved_aligned_and_not_copied(offset: int) -> None:
    """As Dask hands a task the bytes it received: writable, starting wherever its message
    put them. The data is moved within them to an aligned start, then used in place."""
    value = _value()
    packed = work.pack_shipment(value)
    room = np.zeros(packed.nbytes + 2 * work.SHIP_ALIGN, np.uint8)
    base = -room.ctypes.data % work.SHIP_ALIGN + offset
    received = room[base : base + packed.nbytes]
    received[:] = packed
    got = work.unpack_shipment(received)
    _same(got, pickle.loads(pickle.dumps(value, protocol=5)))
    for a in _arrays(got):
        assert a.ctypes.data % work.SHIP_ALIGN == 0
        assert np.shares_memory(a, received)


def test_read_only_shipment_bytes_are_copied_once_into_memory_of_their_own() -> None:
    value = _value()
    frozen = bytes(work.pack_shipment(value))
    got = work.unpack_shipment(frozen)
    _same(got, pickle.loads(pickle.dumps(value, protocol=5)))
    for a in _arrays(got):
        assert a.ctypes.data % work.SHIP_ALIGN == 0
    got["fields"][0][0] = -1.0  # writable where the original was
    assert work.unpack_shipment(frozen)["fields"][0][0] == value["fields"][0][0]


def test_a_shipment_taken_as_a_worker_receives_it_plays_the_same_runs() -> None:
    """The chase's warm cache, shipped (WorkerCache.shipment) and taken from bytes received
    at an odd offset: the runs after it are those of the cache that shipped it, byte for
    byte; its fields' distances are views of the received bytes."""
    seeds = list(enumerate(work.run_seeds(9, 40)))
    here = work.WorkerCache()
    here.run_chunk(CHASE, (), seeds[:15])
    packed = here.shipment(CHASE, ())
    assert packed is not None
    room = np.zeros(packed.nbytes + 2 * work.SHIP_ALIGN, np.uint8)
    base = -room.ctypes.data % work.SHIP_ALIGN + 29
    received = room[base : base + packed.nbytes]
    received[:] = packed
    del packed
    there = work.WorkerCache()
    token = f"{work.engine_digest()}/daskloop"
    assert there.take_shipment(CHASE, (), token, received)
    entry = there.entry((os.path.abspath(CHASE), (), token))
    assert entry is not None
    fields = [d for p in entry[1]._profiles.values() for d in _dists(p)]
    assert fields and all(np.shares_memory(d, received) for d in fields)
    # Fields searched only as far as their walks needed are searched on in place, on the
    # received bytes, as the runs need: the same runs.
    assert there.run_shipped(CHASE, (), token, seeds[15:]) == here.run_chunk(CHASE, (), seeds[15:])


def _dists(profile: Any) -> list[np.ndarray]:
    """The distance arrays of a profile's fields kept in the cache, as they are (a field
    grown as its walks need is not grown by this: ``Field._dist``, not ``Field.dist``)."""
    out = []
    for v in vars(profile).values():
        items = v.values() if isinstance(v, dict) else ()
        for f in items:
            d = getattr(f, "_dist", None)
            if isinstance(d, np.ndarray) and d.size > 64:
                out.append(d)
    return out
