"""The hook memo: results of pure rule hooks kept by what each call read of the token's
state (:class:`HookMemo`, :class:`_Traced`)."""

from __future__ import annotations

import dataclasses
import operator
import threading
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import Any

from engine.grid import Cell
from engine.sim.idmemo import MISSING, IdMemo
from engine.systems.base import Token, TokenState

#: The fields of a token state, in order (what :class:`_Traced` logs reads of).
_FIELD_ORDER = tuple(f.name for f in dataclasses.fields(TokenState))
_STATE_FIELDS = frozenset(_FIELD_ORDER)

_second = operator.itemgetter(1)

# --------------------------------------------------------------------------- traced reads


class _Tracing(threading.local):
    """The call being traced in this thread (:class:`_Trace`), if any (threads of a Dask
    worker run chunks side by side on one field cache)."""

    trace: _Trace | None = None


_TRACING = _Tracing()


class _Trace:
    """What one rule hook call read of the token state it was given (:class:`_Traced`):
    ``reads`` maps ``(kind, name)`` (kind 0 a field, 1 ``has(name)``, 2 ``counter(name)``)
    to the value read (the given state's); ``base`` is the given state's fields."""

    __slots__ = ("reads", "dice_used", "base")

    def __init__(self, base: dict[str, Any] | None = None) -> None:
        self.reads: dict[tuple[int, str], Any] = {}
        self.dice_used = False
        self.base = base or {}


class _Dropped:
    """A counter a hook set to 0 with :meth:`TokenState.set_counter` (dropped, not kept as
    0); one object, compared by identity, also in a recipe shipped to another process."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "_DROP"


_DROP = _Dropped()
#: No field changed in place (:class:`_Traced`'s ``_deltas``); never mutated.
_NO_DELTAS: dict[str, dict[str, Any]] = {}


class _Traced(TokenState):
    """A token state that logs what a rule hook reads of it into the running :class:`_Trace`.

    A rule hook is a deterministic function of what it reads: a token whose state gives the
    same value to every read logged gets the same result (the same graph, the same checks),
    so the field cache shares results by these reads instead of by the whole state (a D6
    token's costs read its ``penalty`` and ``actions`` counters, not its collision margin or
    the speed it ran at). A field that :meth:`TokenState.changed` carries over into a new
    state is not read: it stays *linked* to the given state, and a later read of it (in any
    state it was carried into) is logged as a read of the given one (``dataclasses.replace``
    reads every field it copies, and each is logged as read). A linked ``conditions`` or
    ``counters`` changed name by name (``with_conditions``, ``with_counter``,
    ``set_counter``) stays linked with those changes (``_deltas``): a later ``has`` or
    ``counter`` of a changed name reads the change, not the given state, and the others
    are logged as before; nothing else of the field is read. A hook's resulting state is
    then a recipe: the linked fields come from the state given (with their changes made
    on them), the others are the values the hook made from what it read
    (:class:`HookMemo`). Compares and hashes as a plain state.
    """

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # Made from values (by the memo, or by ``dataclasses.replace`` on a traced state,
        # whose reads were logged): nothing linked.
        object.__setattr__(self, "_trace", _TRACING.trace)
        object.__setattr__(self, "_links", frozenset())
        object.__setattr__(self, "_deltas", _NO_DELTAS)

    def changed(self, **changes: Any) -> TokenState:
        """:meth:`TokenState.changed`: the fields not changed are carried over unread, linked
        to the given state (with their name-by-name changes) while this trace runs."""
        unknown = changes.keys() - _STATE_FIELDS
        if unknown:
            raise TypeError(f"TokenState has no field {', '.join(sorted(unknown))}")
        d = self.__dict__
        live = _TRACING.trace
        new = _new_state(_Traced)
        nd = new.__dict__
        nd.update(d)
        nd.update(changes)
        nd["_trace"] = live
        if live is not None and d["_trace"] is live:
            links = d["_links"] - changes.keys()
            deltas = {f: ops for f, ops in d["_deltas"].items() if f in links and ops}
            nd["_links"] = links
            nd["_deltas"] = deltas or _NO_DELTAS
        else:
            nd["_links"] = frozenset()
            nd["_deltas"] = _NO_DELTAS
        return new

    def _log(self, kind: int, field: str, name: str, value: Any) -> None:
        d = self.__dict__
        live = _TRACING.trace
        if live is not None and d["_trace"] is live and field in d["_links"]:
            ops = d["_deltas"].get(field)
            if ops is None or name not in ops:  # a changed name reads the change
                live.reads[(kind, name)] = value

    def has(self, condition: str) -> bool:
        value = condition in self.__dict__["conditions"]
        self._log(1, "conditions", condition, value)
        return value

    def counter(self, name: str) -> int:
        value = dict(self.__dict__["counters"]).get(name, 0)
        self._log(2, "counters", name, value)
        return value

    def with_conditions(self, *add: str, remove: tuple[str, ...] = ()) -> TokenState:
        value = (self.__dict__["conditions"] - set(remove)) | set(add)
        ops = dict.fromkeys(remove, False)
        ops.update(dict.fromkeys(add, True))
        return self._changed("conditions", value, ops)

    def with_counter(self, name: str, value: int) -> TokenState:
        d = dict(self.__dict__["counters"])
        d[name] = value
        return self._changed("counters", tuple(sorted(d.items())), {name: value})

    def set_counter(self, name: str, value: int) -> TokenState:
        d = {k: v for k, v in self.__dict__["counters"] if k != name}
        if value:
            d[name] = value
        return self._changed("counters", tuple(sorted(d.items())), {name: value or _DROP})

    def _changed(self, field: str, value: Any, ops: dict[str, Any]) -> _Traced:
        """This state with ``field`` at ``value``, made by the name-by-name changes ``ops``
        (kept as changes while the field is linked; a made field is just made)."""
        d = self.__dict__
        new = _new_state(_Traced)
        nd = new.__dict__
        nd.update(d)
        nd[field] = value
        if field in d["_links"]:
            deltas = d["_deltas"]
            old = deltas.get(field)
            nd["_deltas"] = {**deltas, field: {**old, **ops} if old else ops}
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokenState):
            return NotImplemented
        return _plain(self) == _plain(other)

    def __hash__(self) -> int:
        return hash(_plain(self))


def _field(name: str) -> property:
    """A field of :class:`_Traced`: reading it logs the read while its trace runs."""

    def get(self: _Traced) -> Any:
        d = self.__dict__
        value = d[name]
        live = _TRACING.trace
        if live is not None and d["_trace"] is live and name in d["_links"]:
            # The given state's value (the field's changes follow from the reads).
            ops = d["_deltas"].get(name)
            live.reads[(0, name)] = value if ops is None else live.base[name]
        return value

    def put(self: _Traced, value: Any) -> None:
        self.__dict__[name] = value

    return property(get, put)


for _name in _FIELD_ORDER:
    setattr(_Traced, _name, _field(_name))


def _plain(state: TokenState) -> TokenState:
    """``state`` as a plain :class:`TokenState` (no logging)."""
    if type(state) is TokenState:
        return state
    d = state.__dict__
    return TokenState(**{f: d[f] for f in _FIELD_ORDER})


def _untrace(token: Token) -> Token:
    """``token`` with a plain state again (a graph keeps its token)."""
    if type(token.state) is TokenState:
        return token
    return replace(token, state=_plain(token.state))


class _DiceGuard:
    """The dice, as a hook being traced sees them: any use marks the call as not a pure
    function of the token (its result is not kept)."""

    def __init__(self, dice: Any, trace: _Trace) -> None:
        self._dice = dice
        self._trace = trace

    def __getattr__(self, name: str) -> Any:
        self._trace.dice_used = True
        return getattr(self._dice, name)


def _same_reads(state: TokenState, reads: tuple[tuple[int, str, Any], ...]) -> bool:
    """Whether ``state`` gives every logged read the value it gave then (same type too)."""
    for kind, name, value in reads:
        if kind == 0:
            got = getattr(state, name)
        elif kind == 1:
            got = name in state.conditions
        else:
            got = state.counter(name)
        if got is not value and (type(got) is not type(value) or got != value):
            return False
    return True


#: A hook's resulting token as a recipe (:class:`HookMemo`): the values of the fields it
#: made, the fields that are the given state's own (linked), and the linked fields it
#: changed name by name, with the changes (:func:`_change`); None: the token as given.
_Recipe = tuple[dict[str, Any], tuple[str, ...], tuple[tuple[str, Any], ...]] | None


def _change(field: str, value: Any, ops: Any) -> Any:
    """``value`` (a given state's ``conditions`` or ``counters``) with a recipe's changes,
    as the hook's calls made them on it (:class:`_Traced`): ``ops`` as :func:`_ops` keeps
    them."""
    if field == "conditions":
        gone, add = ops
        return (value - gone) | add
    d = dict(value)
    for k, v in ops:
        if v is _DROP:
            d.pop(k, None)
        else:
            d[k] = v
    return tuple(sorted(d.items()))


def _ops(field: str, ops: dict[str, Any]) -> Any:
    """A field's name-by-name changes (the last one of each name) as :func:`_change` makes
    them: conditions removed and added (two sets), counters set in turn."""
    if field == "conditions":
        return (frozenset(k for k, v in ops.items() if not v), {k for k, v in ops.items() if v})
    return tuple(ops.items())


class HookMemo:
    """Results of pure rule hooks, by what the hook read of the token's state (:class:`_Traced`),
    under a key of everything else it reads (the hook, stats, pace, terrains...).

    Per key, the calls kept are grouped by the reads they made (their *shape*: usually one
    per key); within a shape, by the values read. :meth:`get` keeps a plain result (a pace, a
    list of checks); :meth:`token` a resulting token (start and end of a turn, a check's
    effect, the turn's pace remembered) as a recipe on the state it is given. A call that
    touches the dice is not kept."""

    #: Keys kept (the oldest half goes beyond this), shapes per key and results per shape.
    KEYS = 8192
    SHAPES = 16
    PER_SHAPE = 4096

    def __init__(self) -> None:
        self._memo: dict[Any, list[_Shape]] = {}
        # The three below are dropped together past SAME_KEPT (:meth:`_forget`).
        #: Results by key and the very token given (:meth:`token`, :meth:`get`).
        self._same: IdMemo[Any] = IdMemo()
        #: Tokens kept one object per value (:meth:`canon`): by their stats object and the
        #: rest of their value; and which tokens those are (:meth:`is_canon`).
        self._canon: IdMemo[Token] = IdMemo()
        self._ids: IdMemo[bool] = IdMemo()

    def _find(self, key: Any, state: TokenState) -> tuple[bool, Any]:
        shapes = self._memo.get(key)
        if not shapes:
            return False, None
        for shape in shapes:
            values = shape.values(state)
            got = shape.kept.get(values)
            if got is not None:
                # Equal values of another type (1 and 1.0, True) hash alike: told apart here.
                if shape.typed and got[0] != tuple(map(type, values)):
                    continue
                return True, got[1]
        return False, None

    def _keep(self, key: Any, token: Token, trace: _Trace, result: Any) -> None:
        shapes = self._memo.get(key)
        if shapes is None:
            if len(self._memo) >= self.KEYS:
                for old in list(self._memo)[: self.KEYS // 2]:
                    del self._memo[old]
            shapes = self._memo[key] = []
        reads = trace.reads
        # A whole field read decides every has() / counter() read of it.
        whole = {name for kind, name in reads if kind == 0}
        shape_key = tuple(
            sorted(
                (kind, name)
                for kind, name in reads
                if not (kind == 1 and "conditions" in whole)
                and not (kind == 2 and "counters" in whole)
            )
        )
        for shape in shapes:
            if shape.reads == shape_key:
                break
        else:
            if len(shapes) >= self.SHAPES:
                del shapes[0]
            shape = _Shape(shape_key)
            shapes.append(shape)
        values = shape.values(token.state)
        try:
            hash(values)
        except TypeError:
            return  # a value that cannot be a key (not kept: computed every time)
        if len(shape.kept) >= self.PER_SHAPE:
            shape.kept.clear()
        shape.kept.setdefault(values, (tuple(map(type, values)) if shape.typed else None, result))

    @staticmethod
    def _traced_call(token: Token, compute: Any, dice: Any = None) -> tuple[Any, _Trace]:
        st = token.state
        # Read before this trace starts: a state traced further out logs these reads.
        values = {f: getattr(st, f) for f in _FIELD_ORDER}
        trace = _Trace(values)
        outer = _TRACING.trace
        _TRACING.trace = trace
        try:
            state = _Traced(**values)
            object.__setattr__(state, "_links", _STATE_FIELDS)
            traced = Token(token.system, token.stats, state, token.id)
            if dice is None:
                result = compute(traced)
            else:
                result = compute(traced, _DiceGuard(dice, trace))
        finally:
            _TRACING.trace = outer
        return (result, traced), trace

    #: Results kept by the very token given (:meth:`token`, :meth:`get`) and tokens kept
    #: one object per value (:meth:`canon`): all of them go beyond this.
    SAME_KEPT = 1 << 16

    def canon(self, token: Token) -> Token:
        """The token kept for ``token``'s value, the same object for every equal token
        (equal values of one type each, the same stats object): results kept by the token
        given then serve every run that comes to it. A token that is not a plain one (or
        not hashable) is its own."""
        if self._ids.one(token):
            return token
        st = token.state
        if type(token) is not Token or type(st) is not TokenState or st.flight is not None:
            return token
        d = st.__dict__
        cell, progress, counters = d["cell"], d["progress"], d["counters"]
        try:
            # The state's fields as they compare, each with its type (a Fraction by its
            # terms: hashing one costs more than the rest of the key).
            key = (
                token.system,
                token.id,
                cell,
                None if cell is None else tuple(map(type, cell)),
                d["mode"],
                type(d["mode"]),
                d["conditions"],
                type(d["conditions"]),
                d["encumbrance"],
                type(d["encumbrance"]),
                type(progress),
                (progress.numerator, progress.denominator)
                if type(progress) is Fraction
                else progress,
                counters,
                type(counters),
                tuple(map(type, map(_second, counters))),
                d["toward"],
            )
            got = self._canon.one(token.stats, key)
        except TypeError:
            return token
        if got is None:
            if len(self._canon) >= self.SAME_KEPT:
                self._forget()
            got = token
            self._canon.put_one(token.stats, key, token)
            self._ids.put_one(token, None, True)
        return got

    def is_canon(self, token: Token) -> bool:
        """Whether ``token`` is the one kept for its value (:meth:`canon`)."""
        return self._ids.one(token, None, False)

    def _forget(self) -> None:
        """Drop every result kept by the token given and every token kept by value."""
        self._canon.clear()
        self._ids.clear()
        self._same.clear()

    def _keep_same(self, key: Any, token: Any, result: Any) -> None:
        if len(self._same) >= self.SAME_KEPT:
            self._forget()
        self._same.put_one(token, key, result)

    def same(self, key: Any, token: Token) -> tuple[Token, Any] | None:
        """``(token, result)`` of :meth:`token` or :meth:`get` kept for this very token
        (a pure hook's), or None: what they return first, without the call."""
        if _TRACING.trace is not None:
            return None
        got = self._same.one(token, key, MISSING)
        return None if got is MISSING else (token, got)

    def state_dict(self, state: TokenState) -> dict[str, Any]:
        """``state.to_dict()``: a new dict each time, worked out once per state object
        kept (a plain state on foot: the dict's lists and dicts are copied, the rest is
        immutable)."""
        got = self._same.one(state, "state_dict")
        if got is None:
            made = state.to_dict()
            if type(state) is not TokenState or state.flight is not None:
                return made
            # The dict, and which of its values are lists or dicts (of plain values).
            got = (made, tuple(k for k, v in made.items() if type(v) in (list, dict)))
            self._keep_same("state_dict", state, got)
        made, inner = got
        out = made.copy()
        for k in inner:
            out[k] = out[k].copy()
        return out

    def moved(self, token: Token, cell: Cell, mode: str | None = None) -> Token:
        """``token.moved(cell=cell)`` (:func:`_moved_to`), in ``mode`` where given (the
        mode of the terrain it now stands in), the same object for the same token, cell
        and mode (a token kept by value, :meth:`canon`, stays one)."""
        key = ("moved", cell, mode)
        got = self._same.one(token, key)
        if got is not None:
            return got
        moved = _moved_to(token, cell, mode)
        if self._ids.one(token):
            moved = self.canon(moved)
            self._keep_same(key, token, moved)
        return moved

    def get(self, key: Any, token: Token, compute: Any) -> Any:
        """``compute(token)``, or the result of a call whose reads ``token`` repeats. The
        result must not hold the token (it is shared by every token that matches)."""
        if _TRACING.trace is not None:
            return compute(token)
        got = self._same.one(token, key, MISSING)
        if got is not MISSING:
            return got
        found, result = self._find(key, token.state)
        if not found:
            (result, _), trace = self._traced_call(token, compute)
            self._keep(key, token, trace, result)
        if self._ids.one(token):
            self._keep_same(key, token, result)
        return result

    def token(
        self, key: Any, token: Token, compute: Any, dice: Any = None, direct: Any = None
    ) -> Any:
        """``compute(token)`` (``compute(token, dice)`` with ``dice``) for a hook that returns
        the token changed (or a tuple of it and plain values), or the same change by a call
        whose reads ``token`` repeats. ``direct``: what to call instead of ``compute`` (the
        same result) when a call like this one rolled."""
        if _TRACING.trace is not None:
            return compute(token) if dice is None else compute(token, dice)
        got = self._same.one(token, key, MISSING)
        if got is not MISSING:
            return got
        kept = self.canon(token)  # an equal token kept: its results serve
        if kept is not token:  # (the very token was asked just above)
            token = kept
            got = self._same.one(token, key, MISSING)
            if got is not MISSING:
                return got
        found, recipe = self._find(key, token.state)
        if found:
            if recipe is False:  # a call like this one rolled: it is made every time
                compute = direct or compute
                return compute(token) if dice is None else compute(token, dice)
            made, extra = recipe
            return self._same_result(key, token, _made(token, made), extra)
        (result, traced), trace = self._traced_call(token, compute, dice)
        tok, extra = (result[0], result[1:]) if isinstance(result, tuple) else (result, None)
        made = _recipe(tok, traced)
        if trace.dice_used or made is False:
            # The reads up to the roll were the same for any token that repeats them: such
            # a call is made directly from then on.
            self._keep(key, token, trace, False)
            tok = _untrace(tok) if isinstance(tok, Token) else tok
            return tok if extra is None else (tok, *extra)
        assert made is not True
        self._keep(key, token, trace, (made, extra))
        return self._same_result(key, token, _made(token, made), extra)

    def _same_result(
        self, key: Any, token: Token, made: Token, extra: tuple[Any, ...] | None
    ) -> Any:
        """A pure hook's result on ``token`` (``made``, and ``extra`` values), its token kept
        by value (:meth:`canon`) and the result kept by the token given when that one is."""
        if not self._ids.one(token):
            return made if extra is None else (made, *extra)
        made = self.canon(made)
        result = made if extra is None else (made, *extra)
        self._keep_same(key, token, result)
        return result


class _Shape:
    """The reads a kept hook call made (sorted ``(kind, name)``: :class:`_Trace`), how to
    make them on a state at once, and the results kept by the values read."""

    __slots__ = ("reads", "values", "typed", "kept")

    #: Fields whose values are never numbers (equal values are of one type).
    UNTYPED = frozenset(
        {"cell", "mode", "conditions", "encumbrance", "counters", "flight", "toward"}
    )

    def __getstate__(self) -> tuple[Any, Any]:
        """Pickled as its reads and results; :attr:`values` is made again from the reads."""
        return (self.reads, self.kept)

    def __setstate__(self, state: tuple[Any, Any]) -> None:
        reads, kept = state
        self.__init__(reads)  # type: ignore[misc]
        self.kept.update(kept)

    def __init__(self, reads: tuple[tuple[int, str], ...]) -> None:
        self.reads = reads
        self.kept: dict[Any, tuple[Any, Any]] = {}
        self.typed = any(kind == 2 or (kind == 0 and n not in self.UNTYPED) for kind, n in reads)
        self.values: Callable[[TokenState], Any]
        if all(kind == 0 for kind, _ in reads):
            names = [n for _, n in reads]
            if len(names) > 1:
                self.values = operator.attrgetter(*names)
            elif names:
                get = operator.attrgetter(names[0])
                self.values = lambda st: (get(st),)
            else:
                self.values = lambda st: ()
        else:
            self.values = _reader(reads)


def _reader(shape: tuple[tuple[int, str], ...]) -> Callable[[TokenState], tuple[Any, ...]]:
    """:func:`_values` of ``shape`` as a function of the state: a single ``has()`` or
    ``counter()`` read (the usual shape) read straight off a plain state."""
    if len(shape) == 1 and shape[0][0] in (1, 2):
        kind, name = shape[0]
        if kind == 1:

            def has(state: TokenState) -> tuple[Any, ...]:
                if type(state) is TokenState:
                    return (name in state.__dict__["conditions"],)
                return _values(state, shape)

            return has

        def counter(state: TokenState) -> tuple[Any, ...]:
            if type(state) is TokenState:
                for k, v in state.__dict__["counters"]:
                    if k == name:
                        return (v,)
                return (0,)
            return _values(state, shape)

        return counter
    return lambda state: _values(state, shape)


def _values(state: TokenState, shape: tuple[tuple[int, str], ...]) -> tuple[Any, ...]:
    """What ``state`` gives each read of ``shape`` (:class:`_Trace`)."""
    if type(state) is TokenState:  # its counter(): the counters as a dict, read once here
        d = state.__dict__
        counters: dict[str, int] | None = None
        out = []
        for kind, name in shape:
            if kind == 0:
                out.append(d[name])
            elif kind == 1:
                out.append(name in d["conditions"])
            else:
                if counters is None:
                    counters = dict(d["counters"])
                out.append(counters.get(name, 0))
        return tuple(out)
    out = []
    for kind, name in shape:
        if kind == 0:
            out.append(getattr(state, name))
        elif kind == 1:
            out.append(name in state.conditions)
        else:
            out.append(state.counter(name))
    return tuple(out)


def _recipe(result: Any, traced: Token) -> _Recipe | bool:
    """The recipe of a hook's resulting token (False: not a token made from the one given)."""
    if result is traced:
        return None
    if not (
        isinstance(result, Token)
        and result.stats is traced.stats
        and result.id is traced.id
        and result.system is traced.system
    ):
        return False
    st = result.state
    if type(st) is TokenState:
        return ({f: st.__dict__[f] for f in _FIELD_ORDER}, (), ())
    if not isinstance(st, _Traced):
        return False
    d = st.__dict__
    links = d["_links"]
    deltas = d["_deltas"]
    return (
        {f: d[f] for f in _FIELD_ORDER if f not in links},
        tuple(f for f in _FIELD_ORDER if f in links and f not in deltas),
        tuple((f, _ops(f, deltas[f])) for f in _FIELD_ORDER if f in deltas),
    )


def _made(token: Token, recipe: _Recipe) -> Token:
    """``recipe`` (:func:`_recipe`) applied to ``token``."""
    if recipe is None:
        return token
    values, linked, changed = recipe
    if type(token.state) is not TokenState or type(token) is not Token:
        st = token.state
        kept = {f: getattr(st, f) for f in linked}
        kept.update((f, _change(f, getattr(st, f), ops)) for f, ops in changed)
        return replace(token, state=TokenState(**values, **kept))
    std = token.state.__dict__
    # The frozen dataclasses' own __init__ sets each field through object.__setattr__; their
    # __dict__ filled at once is the same object, several times faster.
    state = _new_state(TokenState)
    d = state.__dict__
    d.update(values)
    for f in linked:
        d[f] = std[f]
    for f, ops in changed:
        d[f] = _change(f, std[f], ops)
    made = _new_state(Token)
    made.__dict__.update(system=token.system, stats=token.stats, state=state, id=token.id)
    return made


def _moved_to(token: Token, cell: Cell, mode: str | None = None) -> Token:
    """``token.moved(cell=cell)`` (and ``mode``, where given and new), made directly (the
    same object, faster)."""
    if mode is None or mode == token.state.mode:
        mode = None
    if type(token.state) is not TokenState or type(token) is not Token:
        return token.moved(cell=cell) if mode is None else token.moved(cell=cell, mode=mode)
    state = _new_state(TokenState)
    state.__dict__.update(token.state.__dict__)
    state.__dict__["cell"] = cell
    if mode is not None:
        state.__dict__["mode"] = mode
    made = _new_state(Token)
    made.__dict__.update(system=token.system, stats=token.stats, state=state, id=token.id)
    return made


_new_state = object.__new__
