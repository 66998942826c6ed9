"""The identity memo (engine/sim/idmemo.py): values kept by the very objects they were
worked out from, checked by identity, capped, and keyed again after a pickle round trip
(a warm field cache ships to Dask workers, where every object has another id)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

from engine.sim.idmemo import MISSING, IdMemo


@dataclass(frozen=True)
class Thing:
    """Equal by value, hashable: a memo must still tell two of them apart."""

    name: str


def test_a_value_is_found_by_the_very_objects_and_the_plain_value() -> None:
    a, b = Thing("a"), Thing("b")
    memo: IdMemo[str] = IdMemo()
    memo.put((a, b), ("pace", 1), "ab")
    memo.put_one(a, "x", "a")
    assert memo.get((a, b), ("pace", 1)) == "ab"
    assert memo.one(a, "x") == "a"
    # The one-object form and the tuple form are the same entry.
    assert memo.get((a,), "x") == "a"
    memo.put((b,), "y", "b")
    assert memo.one(b, "y") == "b"
    # Another plain value, other objects, or the objects in another order: no entry.
    assert memo.get((a, b), ("pace", 2)) is None
    assert memo.get((b, a), ("pace", 1)) is None
    assert memo.one(b, "x") is None
    assert len(memo) == 3
    assert sorted(memo.values()) == ["a", "ab", "b"]


def test_an_equal_but_different_object_misses() -> None:
    a = Thing("a")
    twin = Thing("a")
    assert twin == a and hash(twin) == hash(a) and twin is not a
    memo: IdMemo[int] = IdMemo()
    memo.put_one(a, None, 1)
    memo.put((a, a), None, 2)
    assert memo.one(twin) is None and memo.get((twin, a)) is None
    assert memo.one(a) == 1 and memo.get((a, a)) == 2


def test_none_is_a_value_and_a_default_tells_it_from_no_entry() -> None:
    a = Thing("a")
    memo: IdMemo[None] = IdMemo()
    assert memo.one(a, None, MISSING) is MISSING
    memo.put_one(a, None, None)
    assert memo.one(a, None, MISSING) is None
    assert memo.get((a,), None, MISSING) is None


def test_an_entry_keeps_its_objects_alive() -> None:
    memo: IdMemo[str] = IdMemo()
    memo.put_one(Thing("gone"), None, "kept")
    ((kept,), plain, value) = next(memo.entries())
    assert kept == Thing("gone") and plain is None and value == "kept"
    assert memo.one(kept) == "kept"  # its id is still its own


def test_a_stale_id_is_told_apart_by_identity() -> None:
    # An entry whose key names an id the object no longer has (as after unpickling
    # without keying again) is never served to whatever object has that id now.
    a, b = Thing("a"), Thing("b")
    memo: IdMemo[str] = IdMemo()
    memo._kept[id(b)] = ("a's", a)
    memo._kept[(None, id(a), id(b))] = ("ba's", b, a)
    assert memo.one(b) is None and memo.get((a, b)) is None


def test_the_limit_drops_all_or_the_oldest() -> None:
    things = [Thing(str(k)) for k in range(10)]
    whole: IdMemo[int] = IdMemo(4)
    half: IdMemo[int] = IdMemo(4, drop=2)
    for k, t in enumerate(things[:4]):
        whole.put_one(t, None, k)
        half.put((t,), None, k)
    assert len(whole) == len(half) == 4
    whole.put_one(things[4], None, 4)
    half.put_one(things[4], None, 4)
    assert list(whole.values()) == [4]
    assert list(half.values()) == [2, 3, 4]
    assert half.one(things[0]) is None and half.one(things[3]) == 3
    # The least recently used goes first, where each use takes its entry and puts it back.
    recent: IdMemo[int] = IdMemo(3, drop=1)
    for k, t in enumerate(things[:3]):
        recent.put_one(t, None, k)
    assert recent.take_one(things[0]) == 0 and recent.take_one(things[0]) is None
    recent.put_one(things[0], None, 0)
    recent.put_one(things[3], None, 3)
    assert list(recent.values()) == [2, 0, 3] and recent.one(things[1]) is None
    unlimited: IdMemo[int] = IdMemo()
    for k, t in enumerate(things):
        unlimited.put_one(t, k, k)
    assert len(unlimited) == 10
    unlimited.clear()
    assert len(unlimited) == 0 and unlimited.one(things[0], 0) is None


def test_a_pickled_memo_keys_itself_again_by_its_objects_new_ids() -> None:
    a, b, c = Thing("a"), Thing("b"), Thing("c")
    memo: IdMemo[str] = IdMemo(8, drop=4)
    memo.put_one(a, ("pace", 1), "a")
    memo.put((a, b, c), None, "abc")
    memo.put((c, b), frozenset({(1, 2)}), "cb")
    # Shipped with what else holds the objects (pickling keeps each object once).
    there, (a2, b2, c2) = pickle.loads(pickle.dumps((memo, (a, b, c))))
    assert (a2, b2, c2) == (a, b, c) and a2 is not a
    assert {id(a2), id(b2), id(c2)}.isdisjoint({id(a), id(b), id(c)})
    assert (there.limit, there.drop) == (8, 4)
    assert there.one(a2, ("pace", 1)) == "a"
    assert there.get((a2, b2, c2)) == "abc"
    assert there.get((c2, b2), frozenset({(1, 2)})) == "cb"
    # The objects of this process are others there: they miss.
    assert there.one(a, ("pace", 1)) is None and there.get((a, b, c)) is None
    assert [v for _, _, v in there.entries()] == ["a", "abc", "cb"]  # in order
    # Shipped alone, its objects come along with it.
    alone = pickle.loads(pickle.dumps(memo))
    ((a3,), plain, value) = next(alone.entries())
    assert a3 == a and a3 is not a and alone.one(a3, plain) == value == "a"
