"""A memo keyed by the identities of some objects and a plain value (:class:`IdMemo`)."""

from __future__ import annotations

import enum
from collections.abc import Hashable, Iterator, Sequence
from itertools import islice
from operator import is_
from typing import Any, Generic, TypeVar, overload

V = TypeVar("V")
D = TypeVar("D")


class _Missing(enum.Enum):
    MISSING = 0


#: What :meth:`IdMemo.get` and :meth:`IdMemo.one` give for "no entry" where None is a
#: value kept (a turn with no plan, a quarry with no safe exit).
MISSING = _Missing.MISSING


class IdMemo(Generic[V]):
    """Values kept by the very objects they were worked out from (``objects``: compared by
    identity, not value) and a plain hashable value (``plain``).

    The turn loop asks the same question of the same objects (a token, a start, a kept
    array) many times a run; hashing them by value costs more than the answer, and
    equal-but-different objects are not always interchangeable (a token kept one object
    per value serves later lookups, an equal one does not). So an entry is found by the
    objects' ids and checked by identity. Each entry keeps its objects alive, so no other
    object can take their ids while it lives.

    Ids are valid in one process only: a memo pickles as ``(objects, plain, value)``
    entries, in order, and keys itself again on unpickling from the ids the objects have
    there (pickling the memo together with what else holds the objects keeps them one).

    ``limit``: how many entries are kept (None: no limit; the owner clears it); ``drop``:
    how many of the oldest go when it is full (None: all of them). :meth:`one` is
    :meth:`get` of a single object, without the tuple of them (the commonest case, on the
    hottest paths)."""

    __slots__ = ("_kept", "_find", "limit", "drop")

    def __init__(self, limit: int | None = None, *, drop: int | None = None) -> None:
        # By (plain, *ids of the objects), or a lone object's bare id where plain is None
        # (:func:`_key`): (value, *the objects), one tuple an entry (the memos hold many:
        # fewer objects for the garbage collector to walk).
        self._kept: dict[Any, tuple[Any, ...]] = {}
        self._find = self._kept.get
        self.limit = limit
        self.drop = drop

    @overload
    def get(self, objects: Sequence[object], plain: Hashable = None) -> V | None: ...

    @overload
    def get(self, objects: Sequence[object], plain: Hashable, default: D) -> V | D: ...

    def get(self, objects: Sequence[object], plain: Hashable = None, default: Any = None) -> Any:
        """The value kept for these very ``objects`` and ``plain``, else ``default``."""
        if plain is None and len(objects) == 1:  # (_key, inline: a hot path)
            got = self._find(id(objects[0]))
        else:
            got = self._find((plain, *map(id, objects)))
        if got is not None and all(map(is_, got[1:], objects)):
            return got[0]
        return default

    @overload
    def one(self, obj: object, plain: Hashable = None) -> V | None: ...

    @overload
    def one(self, obj: object, plain: Hashable, default: D) -> V | D: ...

    def one(self, obj: object, plain: Hashable = None, default: Any = None) -> Any:
        """:meth:`get` of the single object ``obj``."""
        got = self._find(id(obj) if plain is None else (plain, id(obj)))
        if got is not None and got[1] is obj:
            return got[0]
        return default

    @overload
    def take_one(self, obj: object, plain: Hashable = None) -> V | None: ...

    @overload
    def take_one(self, obj: object, plain: Hashable, default: D) -> V | D: ...

    def take_one(self, obj: object, plain: Hashable = None, default: Any = None) -> Any:
        """:meth:`one`, its entry taken out (put back with :meth:`put_one`, it is the
        newest: a memo that drops its oldest keeps the ones most recently used)."""
        key = id(obj) if plain is None else (plain, id(obj))
        got = self._find(key)
        if got is not None and got[1] is obj:
            self._kept.pop(key, None)
            return got[0]
        return default

    def put(self, objects: Sequence[object], plain: Hashable, value: V) -> None:
        """Keep ``value`` for ``objects`` (kept alive with it) and ``plain``."""
        if self.limit is not None and len(self._kept) >= self.limit:
            self._make_room()
        self._kept[_key(plain, objects)] = (value, *objects)

    def put_one(self, obj: object, plain: Hashable, value: V) -> None:
        """:meth:`put` for the single object ``obj``."""
        if self.limit is not None and len(self._kept) >= self.limit:
            self._make_room()
        self._kept[id(obj) if plain is None else (plain, id(obj))] = (value, obj)

    def _make_room(self) -> None:
        kept = self._kept
        if self.drop is None:
            kept.clear()
            return
        for old in list(islice(kept, self.drop)):
            kept.pop(old, None)  # (another thread of a Dask worker may have taken it)

    def clear(self) -> None:
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)

    def values(self) -> Iterator[V]:
        """The values kept, oldest first."""
        return (entry[0] for entry in self._kept.values())

    def entries(self) -> Iterator[tuple[tuple[Any, ...], Hashable, V]]:
        """Every entry as ``(objects, plain, value)``, oldest first."""
        return (
            (entry[1:], None if type(key) is int else key[0], entry[0])
            for key, entry in self._kept.items()
        )

    def __getstate__(
        self,
    ) -> tuple[int | None, int | None, list[tuple[tuple[Any, ...], Hashable, V]]]:
        return (self.limit, self.drop, list(self.entries()))

    def __setstate__(
        self, state: tuple[int | None, int | None, list[tuple[tuple[Any, ...], Hashable, V]]]
    ) -> None:
        self.limit, self.drop, entries = state
        self._kept = {_key(plain, objs): (value, *objs) for objs, plain, value in entries}
        self._find = self._kept.get


def _key(plain: Hashable, objects: Sequence[object]) -> Any:
    """An entry's key in :attr:`IdMemo._kept`."""
    if plain is None and len(objects) == 1:
        return id(objects[0])
    return (plain, *map(id, objects))
