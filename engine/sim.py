"""The turn loop: tokens take turns through their rule system's hooks, every roll and move
is an event, and the event log replays to the identical state.

Over 800 lines: the turn loop, its policies, event-log replay and the cache they share
(traced hook results included) all read the token state; the cache (fields, walks, hook
memo) and the ground policies are the next splits (as sim_flight was).

A :class:`Simulation` is one run of a scenario with one seed. Distance fields live in a
:class:`FieldCache` that is built once per scenario and shared by every run (in a batch,
by every run of a worker process; local workers are forked from a process that has run
the batch's first chunks, Dask workers are sent it pickled): the map does not change
between runs, so neither do the fields, which is what makes thousands of runs cheap.
What is pure is kept there too, never what a roll decides: each field's walk down from a
node for one turn (:class:`Walk`) and its routes, the policies' threat maps and choices,
the ways they take (by every token's cell and profile), a turn's whole start before any
roll (:meth:`Simulation._turn_start`), and the rule hooks' results (start and end of a
turn, a check's effect, a turn's checks, the graph itself) by what the hook *read* of the
token's state (:class:`HookMemo`, :class:`_Traced`): a D6 token's costs read two counters,
so a token with another collision margin shares them. A hook that touches the dice is
made every time. Results are those of a run alone, with a cold cache (tests/test_sim.py).

Moving: a policy names a target field (distances *to* a target from every node); the token
steps down that field, one cell at a time, while its turn's time lasts. Entering the first
cell of a run of terrain that asks a check rolls it; a failed check applies its effect
(:meth:`RuleSystem.apply_check`) and ends the token's move before that cell.

Tokens in the way (engine.occupancy, the scenario's ``tokens_block``): a move whose way down
the shared field meets a blocking token walks a field with those tokens taken away (the
compiled graph less the edges into their anchors, :meth:`Profile.without`; a few such
profiles are kept); a move never ends on an ally's cell. A token larger than one cell moves
its anchor on its own sized graph.
"""

from __future__ import annotations

import dataclasses
import json
import math
import operator
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from engine import sim_flight
from engine.dice import Dice, RollEvent
from engine.errors import TacgridError
from engine.flight.model import state_from_dict
from engine.footprint import covering, fits
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.occupancy import Occupancy, Other, gap_steps, occupancy, token_graph, with_blocked
from engine.scenario import Scenario, TokenSpec
from engine.systems.base import CellCheck, Token, TokenState, exact, jsonable
from engine.walls import doors_of, with_doors

#: The fields of a token state, in order (what :class:`_Traced` logs reads of).
_FIELD_ORDER = tuple(f.name for f in dataclasses.fields(TokenState))
_STATE_FIELDS = frozenset(_FIELD_ORDER)

INF = float("inf")
#: No token in the way.
NOBODY = Occupancy()
_second = operator.itemgetter(1)
#: Policies whose turn starts are kept (Simulation._turn_start): their ways are.
_KEPT_POLICIES = frozenset({"quarry", "pursuer"})


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, not {type(value).__name__}")
    return value


def _state_from_dict(d: dict[str, Any]) -> TokenState:
    """A token state from its logged form; values of the wrong kind raise ValueError."""
    conditions = d.get("conditions", ())
    if not isinstance(conditions, list | tuple):
        raise ValueError("conditions must be a list")
    return TokenState(
        cell=(int(d["cell"][0]), int(d["cell"][1])) if d.get("cell") is not None else None,
        mode=_text(d.get("mode", "walk"), "mode"),
        conditions=frozenset(_text(c, "a condition") for c in conditions),
        encumbrance=_text(d.get("encumbrance", "none"), "encumbrance"),
        progress=exact(d.get("progress", 0)),
        counters=tuple(sorted((k, int(v)) for k, v in (d.get("counters") or {}).items())),
        flight=state_from_dict(d["flight"]) if d.get("flight") is not None else None,
    )


# --------------------------------------------------------------------------- traced reads


class _Tracing(threading.local):
    """The call being traced in this thread (:class:`_Trace`), if any (threads of a Dask
    worker run chunks side by side on one field cache)."""

    trace: _Trace | None = None


_TRACING = _Tracing()
#: The code of ``dataclasses.replace``: its reads copy a field, they do not look at it.
_REPLACE_CODE = dataclasses.replace.__code__


class _Trace:
    """What one rule hook call read of the token state it was given (:class:`_Traced`):
    ``reads`` maps ``(kind, name)`` (kind 0 a field, 1 ``has(name)``, 2 ``counter(name)``)
    to the value read (the given state's); ``copying`` holds the fields
    ``dataclasses.replace`` is copying into a new state just now, each with its changes
    (they are carried along, not looked at); ``base`` is the given state's fields."""

    __slots__ = ("reads", "copying", "dice_used", "base")

    def __init__(self, base: dict[str, Any] | None = None) -> None:
        self.reads: dict[tuple[int, str], Any] = {}
        self.copying: dict[str, tuple[Any, dict[str, Any] | None]] = {}
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
    the speed it ran at). A field that ``dataclasses.replace`` copies into a new state is
    not read: it stays *linked* to the given state, and a later read of it (in any state it
    was copied into) is logged as a read of the given one. A linked ``conditions`` or
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
        trace = _TRACING.trace
        links: frozenset[str] = frozenset()
        deltas = _NO_DELTAS
        if trace is not None and trace.copying:
            got = [(f, ops) for f, (v, ops) in trace.copying.items() if kw.get(f) is v]
            links = frozenset(f for f, _ in got)
            if any(ops for _, ops in got):
                deltas = {f: ops for f, ops in got if ops}
            trace.copying.clear()
        object.__setattr__(self, "_trace", trace)
        object.__setattr__(self, "_links", links)
        object.__setattr__(self, "_deltas", deltas)

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
    """A field of :class:`_Traced`: reading it logs the read (or the copy, when
    ``dataclasses.replace`` reads it) while its trace runs."""

    def get(self: _Traced) -> Any:
        d = self.__dict__
        value = d[name]
        live = _TRACING.trace
        if live is not None and d["_trace"] is live and name in d["_links"]:
            ops = d["_deltas"].get(name)
            if sys._getframe(1).f_code is _REPLACE_CODE:
                live.copying[name] = (value, ops)
            else:  # the given state's value (the field's changes follow from the reads)
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
        #: By (key, id of the token given): (that token, the result) (:meth:`token`).
        self._same: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        #: Tokens kept one object per value (:meth:`canon`), and by their ids.
        self._canon: dict[tuple[Any, ...], Token] = {}
        self._ids: dict[int, Token] = {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A memo shipped to another process (pickling keeps every object once): what is
        kept by object ids is keyed again by the ids the objects have here. A key of
        ``_same`` ends with the id of the token (or state) its entry keeps first; one of
        ``_canon`` holds the id of the token's stats second."""
        self.__dict__.update(state)
        self._same = {(*k[:-1], id(v[0])): v for k, v in self._same.items()}
        self._canon = {(k[0], id(t.stats), *k[2:]): t for k, t in self._canon.items()}
        self._ids = {id(t): t for t in self._ids.values()}

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
        if self._ids.get(id(token)) is token:
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
                id(token.stats),
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
            )
            got = self._canon.get(key)
        except TypeError:
            return token
        if got is None:
            if len(self._canon) >= self.SAME_KEPT:
                self._forget()
            got = self._canon[key] = token
            self._ids[id(token)] = token
        return got

    def is_canon(self, token: Token) -> bool:
        """Whether ``token`` is the one kept for its value (:meth:`canon`)."""
        return self._ids.get(id(token)) is token

    def _forget(self) -> None:
        """Drop every result kept by the token given and every token kept by value."""
        self._canon.clear()
        self._ids.clear()
        self._same.clear()

    def _keep_same(self, key: Any, token: Token, result: Any) -> None:
        if len(self._same) >= self.SAME_KEPT:
            self._forget()
        self._same[key] = (token, result)

    def same(self, key: Any, token: Token) -> tuple[Token, Any] | None:
        """``(token, result)`` of :meth:`token` or :meth:`get` kept for this very token
        (a pure hook's), or None: what they return first, without the call."""
        if _TRACING.trace is not None:
            return None
        got = self._same.get((key, id(token)))
        return got if got is not None and got[0] is token else None

    def state_dict(self, state: TokenState) -> dict[str, Any]:
        """``state.to_dict()``: a new dict each time, worked out once per state object
        kept (a plain state on foot: the dict's lists and dicts are copied, the rest is
        immutable)."""
        key = ("state_dict", id(state))
        got = self._same.get(key)
        if got is None or got[0] is not state:
            made = state.to_dict()
            if type(state) is not TokenState or state.flight is not None:
                return made
            # The dict, and which of its values are lists or dicts (of plain values).
            kept = (made, tuple(k for k, v in made.items() if type(v) in (list, dict)))
            self._keep_same(key, state, kept)  # type: ignore[arg-type]
            got = (state, kept)
        made, inner = got[1]
        out = made.copy()
        for k in inner:
            out[k] = out[k].copy()
        return out

    def moved(self, token: Token, cell: Cell) -> Token:
        """``token.moved(cell=cell)`` (:func:`_moved_to`), the same object for the same
        token and cell (a token kept by value, :meth:`canon`, stays one)."""
        key = ("moved", cell, id(token))
        got = self._same.get(key)
        if got is not None and got[0] is token:
            return got[1]
        moved = _moved_to(token, cell)
        if self._ids.get(id(token)) is token:
            moved = self.canon(moved)
            self._keep_same(key, token, moved)
        return moved

    def get(self, key: Any, token: Token, compute: Any) -> Any:
        """``compute(token)``, or the result of a call whose reads ``token`` repeats. The
        result must not hold the token (it is shared by every token that matches)."""
        if _TRACING.trace is not None:
            return compute(token)
        same = (key, id(token))
        got = self._same.get(same)
        if got is not None and got[0] is token:
            return got[1]
        found, result = self._find(key, token.state)
        if not found:
            (result, _), trace = self._traced_call(token, compute)
            self._keep(key, token, trace, result)
        if self._ids.get(id(token)) is token:
            self._keep_same(same, token, result)
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
        same = (key, id(token))
        got = self._same.get(same)
        if got is not None and got[0] is token:
            return got[1]
        token = self.canon(token)  # an equal token kept: its results serve
        same = (key, id(token))
        got = self._same.get(same)
        if got is not None and got[0] is token:
            return got[1]
        found, recipe = self._find(key, token.state)
        if found:
            if recipe is False:  # a call like this one rolled: it is made every time
                compute = direct or compute
                return compute(token) if dice is None else compute(token, dice)
            made, extra = recipe
            return self._same_result(same, token, _made(token, made), extra)
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
        return self._same_result(same, token, _made(token, made), extra)

    def _same_result(
        self, same: tuple[Any, int], token: Token, made: Token, extra: tuple[Any, ...] | None
    ) -> Any:
        """A pure hook's result on ``token`` (``made``, and ``extra`` values), its token kept
        by value (:meth:`canon`) and the result kept by the token given when that one is."""
        if self._ids.get(id(token)) is not token:
            return made if extra is None else (made, *extra)
        made = self.canon(made)
        result = made if extra is None else (made, *extra)
        self._keep_same(same, token, result)
        return result


class _Shape:
    """The reads a kept hook call made (sorted ``(kind, name)``: :class:`_Trace`), how to
    make them on a state at once, and the results kept by the values read."""

    __slots__ = ("reads", "values", "typed", "kept")

    #: Fields whose values are never numbers (equal values are of one type).
    UNTYPED = frozenset({"cell", "mode", "conditions", "encumbrance", "counters", "flight"})

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


def _moved_to(token: Token, cell: Cell) -> Token:
    """``token.moved(cell=cell)``, made directly (the same object, faster)."""
    if type(token.state) is not TokenState or type(token) is not Token:
        return token.moved(cell=cell)
    state = _new_state(TokenState)
    state.__dict__.update(token.state.__dict__)
    state.__dict__["cell"] = cell
    made = _new_state(Token)
    made.__dict__.update(system=token.system, stats=token.stats, state=state, id=token.id)
    return made


_new_state = object.__new__


# --------------------------------------------------------------------------- fields


#: Most nodes of a field whose distances :class:`Field` also keeps as a list of floats.
_LIST_NODES = 1 << 15


class Field:
    """Distances (ticks) from every node to a target, and the best next step per node.

    Next steps are worked out the first time a node asks and kept: fields are shared by
    every run of a batch, so tokens walking the same ground reuse them.
    """

    __slots__ = ("dist", "_hops", "_steps", "_walks", "_enters", "_routes")

    def __init__(self, dist: np.ndarray, like: Field | None = None) -> None:
        """``like``: a field of the same distances on the same compiled graph (another
        profile's, :class:`_Distances`): its next steps are shared, its walks are not."""
        self.dist = dist
        self._hops: dict[int, tuple[int, float] | None] = {} if like is None else like._hops
        # The distances as Python floats for the walks' lookups (several times quicker than
        # numpy's one by one); on a large graph the array itself (the list would weigh four
        # times the array: 2 MB a field on a 256x256 map).
        self._steps: Any = (
            like._steps if like is not None else dist.tolist() if dist.size <= _LIST_NODES else dist
        )
        self._walks: dict[int, Walk] = {}
        self._enters: dict[int, frozenset[int]] = {}
        self._routes: dict[tuple[int, int], Route] = {}

    def nbytes(self) -> int:
        """What its distances weigh (with their list of floats where it keeps one)."""
        return self.dist.nbytes * (5 if type(self._steps) is list else 1)

    def walk(self, prof: Profile, node: int) -> Walk:
        """One turn's way down the field from ``node`` (:meth:`Simulation._plan`), kept."""
        got = self._walks.get(node)
        if got is None:
            got = self._walks[node] = Walk(prof, Simulation._plan(prof, self, node))
        return got

    def route(self, prof: Profile, node: int, limit_turns: int) -> Route:
        """:meth:`Simulation._route` from ``node``, kept."""
        key = (node, limit_turns)
        got = self._routes.get(key)
        if got is None:
            got = self._routes[key] = Route(prof, self, node, limit_turns)
        return got

    def enters(self, prof: Profile, node: int) -> frozenset[int]:
        """Every cell index the whole way down the field from ``node`` enters (every turn of
        it, the cells a jump passes too), kept."""
        got = self._enters.get(node)
        if got is None:
            g = prof.graph
            out: set[int] = set()
            cur = node
            for _ in range(g.n * g.n_states):
                if self.left(cur) <= 0:
                    break
                step = self.step(prof, cur)
                if step is None:
                    break
                nxt = step[0]
                out.add(nxt % g.n)
                jump = g.jump_at.get((cur, nxt)) if g.jump_at else None
                if jump is not None:
                    out.update(p[0] for p in jump.parts)
                cur = nxt
            got = self._enters[node] = frozenset(out)
        return got

    def left(self, node: int) -> float:
        return self._steps[node]

    def step(self, prof: Profile, node: int) -> tuple[int, float] | None:
        """The out-edge ``(node, ticks)`` that goes furthest down the field, or None."""
        hops = self._hops
        if node in hops:
            return hops[node]
        lists = prof.lists()
        if lists is None:
            return self._step_arrays(prof, node)
        # The arrays' own values as Python numbers (the same float sums and comparisons as
        # numpy's on a few neighbours, without its per-call cost); ties to the first edge,
        # as argmin.
        indptr, indices, data = lists
        lo, hi = indptr[node], indptr[node + 1]
        best: tuple[int, float] | None = None
        if lo < hi:
            steps = self._steps
            k = lo
            low = data[lo] + steps[indices[lo]]
            for j in range(lo + 1, hi):
                total = data[j] + steps[indices[j]]
                if total < low:
                    low, k = total, j
            here = steps[node]
            if math.isfinite(low) and low <= here + 1e-9 * max(1.0, here):
                best = (indices[k], data[k])
        hops[node] = best
        return best

    def _step_arrays(self, prof: Profile, node: int) -> tuple[int, float] | None:
        """:meth:`step` on the arrays (a graph too large to hold as lists)."""
        lo, hi = prof.indptr[node], prof.indptr[node + 1]
        best: tuple[int, float] | None = None
        if lo < hi:
            nbrs = prof.indices[lo:hi]
            w = prof.data[lo:hi]
            total = w + self.dist[nbrs]
            k = int(np.argmin(total))
            here = self.dist[node]
            if np.isfinite(total[k]) and total[k] <= here + 1e-9 * max(1.0, here):
                best = (int(nbrs[k]), float(w[k]))
        self._hops[node] = best
        return best


class Walk:
    """A turn's plan down a field from one node (:meth:`Simulation._plan`) and what walking
    it gives when nothing is rolled on the way: per edge, the cell it ends in, whether it
    enters a new cell, and the ticks spent by its end (summed in walking order)."""

    __slots__ = ("edges", "cells", "moved", "spent", "jumps", "checks", "_graph", "_ids", "_upto")

    def __init__(self, prof: Profile, edges: list[tuple[int, int, float]]) -> None:
        g = prof.graph
        self._graph = g
        self._ids = ids = g.terrain_list()
        self._upto: dict[int, tuple[list[tuple[int, float]], list[Cell], tuple[Any, ...]]] = {}
        n = g.n
        cell_of = g.grid.cell_of_index
        self.edges = edges
        self.cells = [cell_of(nxt % n) for _, nxt, _ in edges]
        self.moved = [nxt % n != node % n for node, nxt, _ in edges]
        spent = 0.0
        self.spent: list[float] = []
        for _, _, w in edges:
            spent += w
            self.spent.append(spent)
        jump_at = g.jump_at
        self.jumps = bool(jump_at) and any((a, b) in jump_at for a, b, _ in edges)
        # Whether a cell entered asks a check (:meth:`Simulation._enter` may roll there).
        costs = g.state_costs
        per = n * g.n_par
        self.checks = False
        for (_, nxt, _), moved in zip(edges, self.moved, strict=True):
            if moved:
                c = costs[nxt // per][ids[nxt % n]].check
                if c is not None and c.check is not None:
                    self.checks = True
                    break

    def upto(self, k: int) -> tuple[list[tuple[int, float]], list[Cell], tuple[Any, ...]]:
        """Walking the first ``k`` edges with nothing rolled on the way: the cells entered as
        ``(node, ticks spent)``, the cells of the path after the start, and each entered
        cell's ``(terrain id, layer)`` (:meth:`Simulation._turn_rolls`); kept."""
        got = self._upto.get(k)
        if got is None:
            g = self._graph
            n, per = g.n, g.n * g.n_par
            ids = self._ids
            moved, edges = self.moved, self.edges
            at = [i for i in range(k) if moved[i]]
            entries = [(edges[i][1], self.spent[i]) for i in at]
            cells = tuple((ids[nxt % n], nxt // per) for nxt, _ in entries)
            got = self._upto[k] = (entries, [self.cells[i] for i in at], cells)
        return got


class TurnPlan:
    """A ground turn from a kept start (:meth:`Simulation._plan_of`), as a run that keeps
    no log plays it: the checks its way rolls (``(first entry asking it, CellCheck)``, in
    roll order), the cells it walks (None: it stays), and per sequence of rolled
    ``(degree, success)`` what the turn made (:meth:`Simulation._plan_outcome`)."""

    __slots__ = ("rolls", "path", "outcomes")

    #: Outcomes kept per plan (all of them go beyond this).
    OUTCOMES = 64

    def __init__(self, rolls: tuple[tuple[int, Any], ...], path: tuple[Cell, ...] | None):
        self.rolls = rolls
        self.path = path
        self.outcomes: dict[tuple[tuple[str, bool], ...], Any] = {}

    def keep(self, key: tuple[tuple[str, bool], ...], outcome: Any) -> None:
        if len(self.outcomes) >= self.OUTCOMES:
            self.outcomes.clear()
        self.outcomes[key] = outcome


class Route:
    """The cells a token passes descending a field (:meth:`Simulation._route`), with arrival
    ticks; ``index`` and ``turns`` as arrays (cell index, arrival in turns) for policies."""

    __slots__ = ("cells", "index", "turns")

    def __init__(self, prof: Profile, target: Field, node: int, limit_turns: int) -> None:
        g = prof.graph
        cell = g.cell_of(node)
        spent = 0.0
        out = [(cell, 0.0)]
        limit = limit_turns * g.denominator
        while spent <= limit and target.left(node) > 0:
            step = target.step(prof, node)
            if step is None:
                break
            node, w = step
            spent += w
            out.append((g.cell_of(node), spent))
        self.cells = out
        index = g.grid.index
        self.index = np.array([index(c) for c, _ in out], dtype=np.int64)
        den = g.denominator
        self.turns = np.array([t / den for _, t in out])


class FieldBytes:
    """What the per-cell arrays kept by one field cache's profiles and policies weigh, in
    bytes, counted as they are made (:meth:`FieldCache.trim`): distance fields (each with
    its list of floats where it keeps one, four times the array), fields from cells,
    turns, threat maps, the graphs of profiles with tokens in the way, and the arrays the
    C kernel reads (those of the profiles kept for good are counted once)."""

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = 0


#: A profile's arrays counted nowhere (a profile made outside a field cache).
_UNCOUNTED = FieldBytes()


class Profile:
    """One token profile's graph and the distance fields computed on it (cached)."""

    #: Where the bytes of the fields it keeps are counted (its field cache's).
    weight: FieldBytes = _UNCOUNTED

    def __init__(
        self, graph: MovementGraph, csr: Any = None, penalty: np.ndarray | None = None
    ) -> None:
        self.graph = graph
        if csr is None:
            csr = graph.csr()
        self.csr = csr
        self.rev = csr.T.tocsr()
        self.indptr = csr.indptr
        self.indices = csr.indices
        self.data = csr.data
        n = graph.n
        # Risk-weighted reverse graph: entering a check cell costs its expected delay
        # (1 - p) turns more, so fleeing tokens prefer the sure way when it is close.
        if penalty is None:
            penalty = np.zeros(n * graph.n_states)
            for k, cost in enumerate(graph.costs):
                if cost.check is not None:
                    cells = np.nonzero(graph.model.terrain_ids.ravel() == k)[0]
                    extra = float((1 - cost.check.p_success) * graph.denominator)
                    for s in range(graph.n_states):
                        penalty[cells + s * n] = extra
        self.penalty = penalty
        self.rev_risk = self.rev.copy()
        self.rev_risk.data = self.rev_risk.data + np.repeat(penalty, np.diff(self.rev.indptr))
        self._to: dict[tuple[int, ...], Field] = {}
        self._to_risk: dict[tuple[int, ...], Field] = {}
        #: The same fields by the cells as asked (a tuple or a frozenset of them).
        self._to_cells: dict[tuple[Any, bool], Field] = {}
        self._from: dict[Cell, np.ndarray] = {}
        self._turns_from: dict[Cell, np.ndarray] = {}
        self._lists: tuple[list[int], list[int], list[float]] | None = None
        #: The compiled arrays as engine/_kernel.c reads them (:meth:`_dijkstra`).
        self._kernel_arrays: dict[str, tuple[np.ndarray, ...]] = {}
        #: The same for the risk-weighted reverse graph (its own where penalties differ).
        self._kernel_risk: dict[str, tuple[np.ndarray, ...]] = {}
        #: The distances of every profile on the same compiled graph (FieldCache), or None,
        #: and this profile's ticks over those it keeps (:class:`_Distances`).
        self.shared: _Distances | None = None
        self.scale = 1.0

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the arrays as lists or for the kernel (made again on use)."""
        state = self.__dict__.copy()
        state["_lists"] = None
        state["_kernel_arrays"] = {}
        state["_kernel_risk"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (a field cache shipped to a Dask worker): a profile that shares its
        compiled arrays with the first of its graph (:meth:`share_compiled`; pickling keeps
        each array once) shares that profile's kernel arrays again, as they are kept with
        the graph's distances (``_Distances.compiled``), instead of each making its own."""
        self.__dict__.update(state)
        self.__dict__.setdefault("_kernel_risk", {})
        kept = getattr(self.__dict__.get("shared"), "compiled", None)  # (not yet built: None)
        first = None if kept is None else kept.get(self.scale)
        if first is not None and first[0] is self.csr:
            self._kernel_arrays = first[2]
            if first[3] is self.penalty:
                self._kernel_risk = first[5]

    def compiled(self) -> tuple[Any, ...]:
        """Its compiled arrays, as :meth:`share_compiled` takes them (no profile in it: a
        field cache keeps them without a reference cycle)."""
        return (
            self.csr,
            self.rev,
            self._kernel_arrays,
            self.penalty,
            self.rev_risk,
            self._kernel_risk,
        )

    def share_compiled(self, compiled: tuple[Any, ...]) -> None:
        """Take another profile's compiled arrays (:meth:`compiled`) for this profile's equal
        ones: the forward and reverse graphs and the arrays the C kernel reads, and the
        risk-weighted graph too where the penalties are equal. The other profile is one of
        the same compiled graph at the same scale (:meth:`FieldCache._distances` compared
        the arrays) whose token's state differs in what the graph does not show (a check's
        odds). On a 256x256 map that is 18-37 MB a profile."""
        csr, rev, kernel, penalty, rev_risk, kernel_risk = compiled
        self.csr, self.rev = csr, rev
        self.indptr, self.indices, self.data = csr.indptr, csr.indices, csr.data
        self._kernel_arrays = kernel
        if np.array_equal(self.penalty, penalty):
            self.penalty, self.rev_risk, self._kernel_risk = penalty, rev_risk, kernel_risk

    #: Most edges of a graph :meth:`lists` gives as lists (beyond: None, numpy serves).
    LIST_EDGES = 1 << 18

    def lists(self) -> tuple[list[int], list[int], list[float]] | None:
        """The compiled arrays (``indptr``, ``indices``, ``data``) as lists, made once; None
        for a graph of more than :data:`LIST_EDGES` edges."""
        if self._lists is None:
            if len(self.data) > self.LIST_EDGES:
                return None
            self._lists = (self.indptr.tolist(), self.indices.tolist(), self.data.tolist())
        return self._lists

    def without(self, blocked: frozenset[Cell]) -> Profile:
        """The fields of this profile's token with ``blocked`` anchors taken away (tokens in
        the way), on the same graph: its edges into those anchors (and the jumps over or
        from them) are dropped from the compiled arrays, nothing is rebuilt.

        What the graph of the map with those anchors blocked (engine.occupancy.with_blocked)
        would give everywhere a token can be: the same edges between the other cells, in the
        same order and with the same weights. (That graph keeps some steps *out of* a
        blocked anchor; no way reaches one, so no distance elsewhere depends on them.)"""
        from scipy.sparse import csr_array

        g = self.graph
        n = g.n
        size = n * g.n_states
        grid = g.grid
        idx = sorted({grid.index(c) for c in blocked if grid.in_bounds(c)})
        bad = np.zeros(n, dtype=bool)
        bad[idx] = True
        csr = self.csr
        keep = ~bad[csr.indices % n]
        rows = np.repeat(np.arange(size), np.diff(csr.indptr))
        if g.jumps:
            gone = set(idx)
            for j in g.jumps:
                if j.src % n in gone or any(p[0] in gone for p in j.parts):
                    keep &= ~((rows == j.src) & (csr.indices == j.dst))
        indptr = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows[keep], minlength=size), out=indptr[1:])
        indices = csr.indices[keep]
        masked = csr_array(
            (csr.data[keep], indices, indptr.astype(indices.dtype)), shape=(size, size)
        )
        made = Profile(g, masked, self.penalty)
        made.weight = self.weight
        return made

    def field_to(self, cells: tuple[Cell, ...] | frozenset[Cell], *, risk: bool = False) -> Field:
        """Ticks from every node to the nearest of ``cells`` (any parity), cached."""
        got = self._to_cells.get((cells, risk))
        if got is not None:
            return got
        g = self.graph
        idx = tuple(sorted(g.grid.index(c) for c in cells))
        cache = self._to_risk if risk else self._to
        got = cache.get(idx)
        if got is None:
            shared = self.shared
            like = None
            if shared is not None:
                skey = (self.scale, shared.risk_key(self.penalty) if risk else None, idx)
                like = shared.to.get(skey)
            if like is not None:  # another profile's on the same graph: the same distances
                got = cache[idx] = Field(like.dist, like)
            else:
                base = None if shared is None or risk else shared.base_to.get(idx)
                if base is not None:  # the same ways at another speed: times the scale
                    dist = base * self.scale if self.scale != 1.0 else base.copy()
                else:
                    nodes = [i + s * g.n for i in idx for s in range(g.n_states)]
                    dist = self._dijkstra("rev_risk" if risk else "rev", nodes)
                    if shared is not None and not risk:
                        shared.keep_base_to(idx, dist / self.scale)
                        self.weight.used += dist.nbytes
                got = cache[idx] = Field(dist)
                self.weight.used += got.nbytes()
                if shared is not None:
                    shared.keep_to(skey, got)
        if len(self._to_cells) >= 65536:
            self._to_cells.clear()
        self._to_cells[(cells, risk)] = got
        return got

    def compiled_bytes(self) -> int:
        """What its compiled arrays weigh (forward, reverse and risk-weighted graphs)."""
        return int(self.penalty.nbytes) + sum(
            m.data.nbytes + m.indices.nbytes + m.indptr.nbytes
            for m in (self.csr, self.rev, self.rev_risk)
        )

    def forget_fields(self) -> None:
        """Drop every field kept (:meth:`FieldCache.trim`); they are made again when asked."""
        for kept in (self._to, self._to_risk, self._to_cells, self._from, self._turns_from):
            kept.clear()
        if self.shared is not None:
            self.shared.forget()

    def turns_from(self, cell: Cell) -> np.ndarray:
        """:meth:`field_from` in turns (ticks / the denominator), cached (read-only).

        The same array for every profile on the same compiled graph at the same scale and
        denominator (:class:`_Distances`: equal ticks, so equal turns): the policies' memos
        kept by the arrays' ids (threat maps, safe exits) then serve all of them."""
        got = self._turns_from.get(cell)
        if got is None:
            shared = self.shared
            key = (self.scale, self.graph.denominator, cell)
            got = None if shared is None else shared.turns.get(key)
            if got is None:
                ticks = self._from.get(cell)
                if ticks is None:
                    ticks = self._dist_from(cell)  # the turns are kept, not the ticks too
                got = ticks / self.graph.denominator
                got.setflags(write=False)
                self.weight.used += got.nbytes
                if shared is not None:
                    shared.keep_turns(key, got)
            self._turns_from[cell] = got
        return got

    def _dijkstra(self, which: str, sources: list[int]) -> np.ndarray:
        """Ticks from the nearest of ``sources`` to every node over this profile's ``csr``,
        ``rev`` or ``rev_risk`` arrays (``which``): scipy's Dijkstra (``min_only``), or the
        same distances bit for bit from engine/_kernel.c where it is built, several times
        sooner (a chase makes hundreds of these fields)."""
        from engine import kernel

        matrix = getattr(self, which)
        if not kernel.available():
            from scipy.sparse.csgraph import dijkstra

            return dijkstra(matrix, indices=sources, min_only=True)
        kept = self._kernel_risk if which == "rev_risk" else self._kernel_arrays
        arrays = kept.get(which)
        if arrays is None:
            arrays = kept[which] = _kernel_csr(matrix)
            self.weight.used += sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))
        dist = np.full(matrix.shape[0], INF)
        indptr, indices, data, steps, step = arrays
        kernel.field(indptr, indices, data, np.asarray(sources, np.int64), dist, steps, float(step))
        return dist

    def _dist_from(self, cell: Cell) -> np.ndarray:
        shared = self.shared
        scale = self.scale
        if shared is not None:
            base = shared.from_.get(cell)
            if base is not None:  # the same ways, perhaps at another speed
                if scale == 1.0:
                    return base
                got = base * scale
                got.setflags(write=False)
                self.weight.used += got.nbytes
                return got
        g = self.graph
        dist = self._dijkstra("csr", [g.node(cell)])
        got = dist.reshape(g.n_states, g.n).min(axis=0)
        got.setflags(write=False)
        self.weight.used += got.nbytes
        if shared is not None:
            base = got if scale == 1.0 else got / scale
            base.setflags(write=False)
            shared.keep_from(cell, base)
            if base is not got:
                self.weight.used += base.nbytes
        return got

    def field_from(self, cell: Cell) -> np.ndarray:
        """Ticks from ``cell`` (parity 0) to every cell (best parity), per cell index.

        Cached: a map that does not change gives the same field in every run, so a batch
        soon answers most of these from memory (at most one field per cell).
        """
        got = self._from.get(cell)
        if got is None:
            got = self._from[cell] = self._dist_from(cell)
        return got


#: The most steps of an edge for engine/_kernel.c's bucket queue (buckets a field).
_MOST_STEPS = 1 << 16


def _whole_ticks(data: np.ndarray, nodes: int) -> tuple[np.ndarray, int] | None:
    """A graph's edge ticks as whole numbers (int64) and their greatest common divisor (1
    where all are 0), where every tick is a whole number >= 0 and no path of ``nodes``
    nodes can sum past 2**52 (exact in floating point); else None."""
    if not (
        data.size
        and data.dtype == np.float64
        and bool(np.all(np.isfinite(data)))
        and bool(np.all(data >= 0))
        and bool(np.all(data == np.floor(data)))
        and float(data.max()) * (nodes + 1) < 2.0**52
    ):
        return None
    whole = data.astype(np.int64)
    return whole, int(np.gcd.reduce(whole)) or 1


def _kernel_csr(matrix: Any) -> tuple[Any, ...]:
    """A CSR matrix as engine/_kernel.c's field() reads it: indptr and indices (int64), the
    ticks (float64), and where every tick is a whole multiple of one step (the usual case)
    the ticks in steps (int32) and the step, so a bucket queue runs; else None and 1."""
    data = np.ascontiguousarray(matrix.data, dtype=np.float64)
    steps, step = None, 1.0
    whole = _whole_ticks(data, matrix.shape[0])
    if whole is not None and int(whole[0].max()) // whole[1] <= _MOST_STEPS:
        steps, step = (whole[0] // whole[1]).astype(np.int32), float(whole[1])
    return (
        np.ascontiguousarray(matrix.indptr, dtype=np.int64),
        np.ascontiguousarray(matrix.indices, dtype=np.int64),
        data,
        steps,
        step,
    )


class _Distances:
    """The distance fields of one compiled graph, shared by every profile on it
    (FieldCache): profiles of states whose costs agree but whose checks' odds differ (a D6
    token one penalty die down) have the same fields to cells (risk-weighted ones where
    their penalties agree too) and from cells. Dijkstra on the same arrays gives the same
    distances: sharing them changes nothing but the time.

    A graph whose ticks are whole numbers is kept by its ticks over their greatest common
    divisor (a profile's ``scale``): a token at another speed, every tick three times as
    long, has the same shortest ways, and its distances are the kept ones times its scale,
    exactly (sums of whole numbers far below 2**53 are exact in floating point, in
    Dijkstra's sums as in this product). Fields to cells are kept per scale (``to``: their
    next steps name the profile's own ticks), and by their whole-number distances over the
    scale (``base_to``, not risk-weighted); fields from cells by the latter (``from_``)."""

    __slots__ = ("to", "base_to", "from_", "turns", "_risks", "compiled")

    #: Fields kept (all of them go beyond this).
    KEPT = 4096

    def __init__(self) -> None:
        self.to: dict[tuple[Any, ...], Field] = {}
        self.base_to: dict[tuple[int, ...], np.ndarray] = {}
        self.from_: dict[Cell, np.ndarray] = {}
        #: Turns from cells (Profile.turns_from) by (scale, denominator, cell).
        self.turns: dict[tuple[Any, ...], np.ndarray] = {}
        self._risks: dict[bytes, tuple[np.ndarray, int]] = {}
        #: The compiled arrays of the first profile made on this graph, per scale: the
        #: others at that scale share them (:meth:`Profile.share_compiled`).
        self.compiled: dict[float, tuple[Any, ...]] = {}

    def forget(self) -> None:
        """Drop every field kept (:meth:`FieldCache.trim`)."""
        self.to.clear()
        self.base_to.clear()
        self.from_.clear()
        self.turns.clear()

    def risk_key(self, penalty: np.ndarray) -> int:
        """A small number for a profile's risk penalties (equal arrays, equal numbers)."""
        raw = penalty.tobytes()
        got = self._risks.get(raw)
        if got is None:
            got = self._risks[raw] = (penalty, len(self._risks))
        return got[1]

    def keep_to(self, key: tuple[Any, ...], got: Field) -> None:
        if len(self.to) >= self.KEPT:
            self.to.clear()
        self.to[key] = got

    def keep_base_to(self, idx: tuple[int, ...], dist: np.ndarray) -> None:
        if len(self.base_to) >= self.KEPT:
            self.base_to.clear()
        self.base_to[idx] = dist

    def keep_from(self, cell: Cell, got: np.ndarray) -> None:
        if len(self.from_) >= self.KEPT:
            self.from_.clear()
        self.from_[cell] = got

    def keep_turns(self, key: tuple[Any, ...], got: np.ndarray) -> None:
        if len(self.turns) >= self.KEPT:
            self.turns.clear()
        self.turns[key] = got


def _rekey(key: tuple[Any, ...], value: Any, how: str) -> tuple[Any, ...]:
    """An id-keyed memo's key made again from the objects its entry keeps
    (:attr:`FieldCache._BY_ID`), in a process where they have other ids."""
    if how == "tail":
        kept = value[0]
        return (*key[: len(key) - len(kept)], *map(id, kept))
    if how == "items":
        n = len(key) if isinstance(key, tuple) else 1
        ids = tuple(map(id, value[:n]))
        return ids if isinstance(key, tuple) else ids[0]
    if how == "first":  # (id(token), ...rest) -> (token, profile)
        return (id(value[0]), *key[1:])
    if how == "threat":  # (n, *ids of the arrays) -> (out, arrays)
        return (key[0], *map(id, value[1]))
    if how == "flee":  # (id(mine), id(threat), taken) -> (best, mine, threat)
        return (id(value[1]), id(value[2]), key[2])
    # "pairs": (id(a), id(b)) -> (result, a, b)
    return (id(value[1]), id(value[2]))


def stats_key_of(stats: Any) -> tuple[Any, ...]:
    """A token's stats as a cache key (every name and value, as text)."""
    return tuple(sorted((k, str(v)) for k, v in stats.items()))


def _check_key(check: Any) -> Any:
    """A hashable identity of a cell check (its system check object where hashable)."""
    if check is None:
        return None
    inner = check.check
    try:
        hash(inner)
    except TypeError:
        inner = repr(inner)
    return (check.what, check.target, check.p_success, inner)


class FieldCache:
    """Graphs and fields per token profile, shared across the runs of one scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._profiles: dict[tuple[Any, ...], Profile] = {}
        self._profile_of: dict[tuple[Any, ...], tuple[Token, Profile]] = {}
        self._shared: dict[tuple[Any, ...], Profile] = {}
        #: Distance fields by compiled graph (:meth:`_distances`), shared by its profiles.
        self._by_csr: dict[tuple[Any, ...], list[tuple[tuple[np.ndarray, ...], _Distances]]] = {}
        #: Per (stats, pace, size, doors): the profiles built so far, each with what its
        #: graph build read of the token's state (:meth:`_profile_by_reads`).
        self._by_reads: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], Profile]]] = {}
        #: The same, by the reads' shape (sorted (kind, name)) and then the values read
        #: with their types; ``_by_reads`` keeps those whose values are no key.
        self._by_shape: dict[tuple[Any, ...], dict[tuple[Any, ...], dict[Any, Profile]]] = {}
        #: Profiles with other tokens in the way, by (profile, blocked anchors): the few
        #: most recent (tokens move, so these are rarely asked twice for long).
        self._blocked: dict[tuple[Any, ...], Profile] = {}
        #: Ground moves' ways (Simulation._ground_way), by what they read.
        self.ways: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
        #: The starts of turns seen before (Simulation._turn_start): by every token's and
        #: spec's id and the doors, and by what they read (the token itself, the other
        #: tokens' cells and profiles); each (the objects its key names, the start).
        self.starts: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
        self.starts_by_reads: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
        #: A turn's checks by the ids of the token, graph and cells they were asked for
        #: (Simulation._turn_rolls), with those and the result.
        self.rolls_same: dict[tuple[int, int, int], tuple[Any, Any, Any, Any]] = {}
        #: A check's effect (Simulation._apply_check) by the id of the token (kept by
        #: value), the check and the degree, with that token and the result.
        self.applied: dict[tuple[int, str, str], tuple[Any, Any]] = {}
        #: Turn plans (Simulation._plan_of) by the id of the kept start they follow, with
        #: that start (None: a start not played from a plan).
        self.plans: dict[int, tuple[Any, TurnPlan | None]] = {}
        #: Ways down a field before any roll (:meth:`descent`), by profile, goal and tokens.
        self._descents: dict[tuple[Any, ...], tuple[Profile, Walk, int]] = {}
        #: Policies' pure parts, by the kept arrays they read (:meth:`threat`, ...).
        self._threats: dict[tuple[Any, ...], tuple[np.ndarray, list[np.ndarray]]] = {}
        self._exits: dict[tuple[int, int], tuple[Cell | None, np.ndarray, np.ndarray]] = {}
        self._exit_cells: tuple[list[Cell], np.ndarray] | None = None
        self._flee: dict[tuple[Any, ...], tuple[Cell | None, np.ndarray, np.ndarray]] = {}
        self._meets: dict[tuple[int, int], tuple[Cell, np.ndarray, Route]] = {}
        self._gaps: dict[tuple[Cell, int, Cell, int], int] = {}
        self._turns_json: dict[tuple[MovementGraph, float], Any] = {}
        #: The scenario's tokens as every run starts them (:meth:`start_token`).
        self._start: dict[int, tuple[TokenSpec, Token]] = {}
        self._stats_ids: dict[tuple[Any, ...], int] = {}
        self._stats_same: dict[int, tuple[Any, int]] = {}
        self._sources: dict[str, Any] | None = None
        #: Rule hooks' results by what they read (:class:`HookMemo`), shared like the fields.
        self.hooks = HookMemo()
        #: The system's notes (RuleSystem.notes), and tokens less them by the token's id,
        #: each with the token given (:meth:`less_notes`).
        self.notes: frozenset[str] = frozenset(scenario.system.notes)
        self._less_notes: dict[int, tuple[Token, Token]] = {}
        #: The bytes of the fields and policy maps kept (:meth:`trim`).
        self.weight = FieldBytes()
        #: Fliers' flight rules by stats (engine.sim_flight), shared like the fields.
        self.flight: dict[Any, Any] = {}
        #: The map with doors opened or closed in play, by door state (``Simulation.doors``).
        self._models: dict[tuple[tuple[int, bool], ...], MapModel] = {}

    # ----------------------------------------------------------------- shipping

    #: Memos keyed by object ids, each with how its key is made again from the objects
    #: its entries keep (:func:`_rekey`).
    _BY_ID = {
        "starts": "tail",
        "starts_by_reads": "tail",
        "ways": "tail",
        "rolls_same": "items",
        "applied": "first",
        "plans": "items",
        "_profile_of": "first",
        "_threats": "threat",
        "_exits": "pairs",
        "_flee": "flee",
        "_meets": "pairs",
        "_start": "items",
        "_stats_same": "items",
        "_less_notes": "items",
    }
    #: Kept only in the process that made them: tokens in the way (rarely asked twice),
    #: fliers' rules (they hold functions).
    _LOCAL = ("_blocked", "flight")

    def __getstate__(self) -> dict[str, Any]:
        """The whole warm cache, to ship to another process (Dask workers: engine.batch).

        Pickling keeps every object once, so what one memo shares with another stays
        shared; a memo keyed by object ids (valid in one process) is keyed again on
        arrival (:meth:`__setstate__`) from the objects its entries keep."""
        state = self.__dict__.copy()
        state.update({name: {} for name in self._LOCAL})
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name, how in self._BY_ID.items():
            memo = getattr(self, name)
            setattr(self, name, {_rekey(key, value, how): value for key, value in memo.items()})

    def sources(self) -> dict[str, Any]:
        """:func:`log_sources` of the scenario, worked out for the first run (every run of
        this cache plays the map and scenario as loaded; read-only)."""
        if self._sources is None:
            self._sources = log_sources(self.scenario)
        return self._sources

    def stats_id(self, stats: Any) -> int:
        """A small number for the stats' :func:`stats_key_of` (equal stats, equal numbers):
        cache keys hash it at once."""
        same = self._stats_same.get(id(stats))
        if same is not None and same[0] is stats:  # the very stats object (tokens share it)
            return same[1]
        key = stats_key_of(stats)
        got = self._stats_ids.get(key)
        if got is None:
            got = self._stats_ids[key] = len(self._stats_ids)
        if len(self._stats_same) >= self.SMALL_KEPT:
            self._stats_same.clear()
        self._stats_same[id(stats)] = (stats, got)
        return got

    def start_token(self, spec: TokenSpec, make: Any) -> Token:
        """The token ``make(spec)`` gives at the start of every run (tokens are immutable:
        validating the stats once serves every run), kept per spec of the scenario."""
        got = self._start.get(id(spec))
        if got is None or got[0] is not spec:
            got = self._start[id(spec)] = (spec, make(spec))
        return got[1]

    def model_for(self, doors: tuple[tuple[int, bool], ...] = ()) -> MapModel:
        """The scenario's map with ``doors`` ((door id, open) pairs) set; () = as drawn."""
        if not doors:
            return self.scenario.model
        got = self._models.get(doors)
        if got is None:
            got = self._models[doors] = with_doors(self.scenario.model, dict(doors))
        return got

    #: The bytes of per-cell arrays kept (:class:`FieldBytes`) beyond which :meth:`trim`
    #: drops them all. The square chase (48x36) holds 19-25 MB of them after 1000-3000
    #: runs; a chase on a 256x256 map held 800 MB after 100 runs and went on growing, each
    #: field there 0.5 MB of distances and, before, 2 MB of them as a list of floats.
    FIELD_BYTES = 256 << 20

    def trim(self) -> None:
        """Past :attr:`FIELD_BYTES` of fields and policy maps (:class:`FieldBytes`), drop
        them all: every profile's fields, those shared between profiles, the policies'
        memos that hold them (threat maps, safe exits, flee cells, meeting cells) and the
        profiles with tokens in the way (each a copy of its graph's arrays). Each is a pure
        function of the map and the profile, made again when next asked: the runs are the
        same, only slower for a while (tested). Called at the start of a round."""
        weight = self.weight
        if weight.used <= self.FIELD_BYTES:
            return
        for prof in self._shared.values():
            prof.forget_fields()
        for memo in (self._threats, self._exits, self._flee, self._meets, self._blocked):
            memo.clear()
        weight.used = 0

    #: How many threat maps and safe exits are kept (the oldest half goes beyond this).
    POLICY_KEPT = 4096

    def threat(self, times: list[np.ndarray], n: int | None = None) -> np.ndarray:
        """The elementwise least of ``times`` (turns from each pursuer), +inf where there are
        none: read-only, kept while its inputs (kept arrays: :meth:`Profile.turns_from`)
        are."""
        key = (n, *map(id, times))
        got = self._threats.get(key)
        if got is None:
            if n is None:
                n = self.scenario.model.grid.width * self.scenario.model.grid.height
            if times:
                out = times[0].copy()
                for t in times[1:]:
                    np.minimum(out, t, out=out)
            else:
                out = np.full(n, INF)
            out.setflags(write=False)
            self.weight.used += out.nbytes
            if len(self._threats) >= self.POLICY_KEPT:
                for old in list(self._threats)[: self.POLICY_KEPT // 2]:
                    del self._threats[old]
            got = self._threats[key] = (out, times)
        return got[0]

    def safest_exit(self, mine: np.ndarray, threat: np.ndarray) -> Cell | None:
        """The exit cell reached soonest (``mine``: turns from the quarry) among those
        reached before every pursuer (``threat``), ties to the lower cell; None if none."""
        key = (id(mine), id(threat))
        got = self._exits.get(key)
        if got is None:
            exits, index = self._exit_index()
            m = mine[index].tolist()
            t = threat[index].tolist()
            best = None
            for k, c in enumerate(exits):
                if m[k] < t[k] and (best is None or (m[k], c) < best):
                    best = (m[k], c)
            if len(self._exits) >= self.POLICY_KEPT:
                for old in list(self._exits)[: self.POLICY_KEPT // 2]:
                    del self._exits[old]
            got = self._exits[key] = (None if best is None else best[1], mine, threat)
        return got[0]

    def flee_cell(
        self,
        g: MovementGraph,
        cell: Cell,
        mine: np.ndarray,
        threat: np.ndarray,
        taken: frozenset[Cell],
    ) -> Cell | None:
        """:meth:`Simulation._flee_cell`'s choice from ``mine`` (turns from the quarry, a kept
        array), ``threat`` (:meth:`threat`) and the cells ``taken`` by other tokens; kept."""
        key = (id(mine), id(threat), taken)
        got = self._flee.get(key)
        if got is None:
            ok = mine <= 1 + 1e-12
            if taken:
                ok[[g.grid.index(c) for c in taken]] = False
            reachable = np.flatnonzero(ok)
            best: Cell | None = None
            if len(reachable):
                # The most threat, then the least time, then the lowest index (reachable is
                # in index order, so the first of a tie is the lowest).
                far = threat[reachable]
                reachable = reachable[far == far.max()]
                if len(reachable) > 1:
                    near = mine[reachable]
                    reachable = reachable[near == near.min()]
                best = g.grid.cell_of_index(int(reachable[0]))
                if best == cell:
                    best = None
            if len(self._flee) >= self.POLICY_KEPT:
                for old in list(self._flee)[: self.POLICY_KEPT // 2]:
                    del self._flee[old]
            got = self._flee[key] = (best, mine, threat)
        return got[0]

    #: How many capture distances and move times are kept (all go beyond this).
    SMALL_KEPT = 65536

    def gap(self, a: Cell, size_a: int, b: Cell, size_b: int) -> int:
        """:func:`engine.occupancy.gap_steps` on the scenario's grid, kept."""
        key = (a, size_a, b, size_b)
        got = self._gaps.get(key)
        if got is None:
            got = gap_steps(self.scenario.model.grid, a, size_a, b, size_b)
            if len(self._gaps) >= self.SMALL_KEPT:
                self._gaps.clear()
            self._gaps[key] = got
        return got

    def turns_json(self, g: MovementGraph, spent: float) -> Any:
        """A move event's ``turns``: ``spent`` ticks on ``g`` as exact turns, for JSON
        (an int or an ``"a/b"`` string), kept."""
        key = (g, spent)
        got = self._turns_json.get(key)
        if got is None:
            got = jsonable(g.turns(spent) if not g.euclid else Fraction(spent / g.denominator))
            if len(self._turns_json) >= self.SMALL_KEPT:
                self._turns_json.clear()
            self._turns_json[key] = got
        return got

    def meet(self, mine: np.ndarray, route: Route) -> Cell:
        """:meth:`Simulation._intercept`'s cell: the first of ``route`` (the quarry's, kept
        in its field) that ``mine`` (turns from the pursuer, a kept array) reaches no later
        than the quarry, else its last; kept."""
        key = (id(mine), id(route))
        got = self._meets.get(key)
        if got is None:
            first = np.flatnonzero(mine[route.index] <= route.turns)
            cell = route.cells[int(first[0]) if len(first) else -1][0]
            if len(self._meets) >= self.POLICY_KEPT:
                for old in list(self._meets)[: self.POLICY_KEPT // 2]:
                    del self._meets[old]
            got = self._meets[key] = (cell, mine, route)
        return got[0]

    def _exit_index(self) -> tuple[list[Cell], np.ndarray]:
        if self._exit_cells is None:
            grid = self.scenario.model.grid
            cells = list(self.scenario.exit_cells)
            self._exit_cells = (cells, np.array([grid.index(c) for c in cells], dtype=np.int64))
        return self._exit_cells

    #: How many profiles with tokens in the way are kept.
    BLOCKED_KEPT = 64

    def profile(
        self,
        token: Token,
        pace: str,
        size: int = 1,
        doors: tuple[tuple[int, bool], ...] = (),
        stats_key: int | None = None,
    ) -> Profile:
        """The graph and fields of a size-``size`` token (engine.occupancy: its anchors), on
        the map with ``doors`` set (:meth:`model_for`). ``stats_key``: :meth:`stats_id` of
        the token's stats, where the caller keeps it."""
        # Everything a rule hook may read, except where the token stands: rates and
        # checks can depend on conditions, encumbrance and counters (last round's speed).
        same = (id(token), pace, size, doors)
        got = self._profile_of.get(same)
        if got is not None and got[0] is token:
            return got[1]
        st = token.state
        skey = self.stats_id(token.stats) if stats_key is None else stats_key
        key = (skey, pace, st.mode, st.conditions, st.encumbrance, st.counters, size, doors)
        prof = self._profiles.get(key)
        if prof is None:
            if len(self._profiles) >= self.SMALL_KEPT:
                self._profiles.clear()  # a memo of _profile_by_reads: made again as asked
            prof = self._profiles[key] = self._profile_by_reads(token, skey, pace, size, doors)
        if len(self._profile_of) >= 65536:
            self._profile_of.clear()
        self._profile_of[same] = (token, prof)  # by the very token too (tokens are frozen)
        return prof

    def _profile_by_reads(
        self,
        token: Token,
        skey: int,
        pace: str,
        size: int,
        doors: tuple[tuple[int, bool], ...],
    ) -> Profile:
        """The profile of a state not seen before: the one of a state whose graph build read
        the same values (:class:`_Traced`: the same graph, so the same profile), else a new
        graph. Tokens whose states differ but whose terrain costs and checks come out the
        same share one graph and its fields (the costly part is the fields)."""
        where = (skey, pace, size, doors)
        st = token.state
        shapes = self._by_shape.setdefault(where, {})
        for shape, kept in shapes.items():
            values = _values(st, shape)
            try:
                got = kept.get((values, tuple(map(type, values))))
            except TypeError:  # a value that is no key: the reads kept below
                continue
            if got is not None:
                return got
        entries = self._by_reads.setdefault(where, [])
        for reads, prof in entries:
            if _same_reads(st, reads):
                return prof
        model = self.model_for(doors)
        system = self.scenario.system
        (graph, _), trace = self.hooks._traced_call(
            token, lambda tok: token_graph(model, system, tok, pace, size=size)
        )
        graph.token = _untrace(graph.token)
        graph.search = replace(graph.search, tokens=tuple(_untrace(t) for t in graph.search.tokens))
        signature = (
            graph.signature(),
            tuple(_check_key(c.check) for cs in graph.state_costs for c in cs),
        )
        shared = self._shared.get(signature)
        if shared is None:
            shared = self._shared[signature] = Profile(graph)
            shared.weight = self.weight
            shared.shared, shared.scale = self._distances(shared)
            first = shared.shared.compiled.get(shared.scale)
            if first is None:
                shared.shared.compiled[shared.scale] = shared.compiled()
            else:
                shared.share_compiled(first)
        shape = tuple(sorted(trace.reads))
        values = tuple(trace.reads[r] for r in shape)
        try:
            shapes.setdefault(shape, {})[(values, tuple(map(type, values)))] = shared
        except TypeError:  # kept by its reads, compared one by one
            entries.append((tuple((k, n, v) for (k, n), v in trace.reads.items()), shared))
        return shared

    #: Ground moves' ways kept (:attr:`ways`; all of them go beyond this).
    WAYS_KEPT = 16384

    #: Turn starts kept (:attr:`starts`, :attr:`starts_by_reads`; all of them go beyond
    #: this).
    STARTS_KEPT = 65536

    def keep_start(
        self,
        memo: dict[tuple[Any, ...], Any],
        key: tuple[Any, ...],
        kept: tuple[Any, ...],
        start: Any,
    ) -> None:
        """Keep a turn's start (Simulation._turn_start) with the objects its key names by id
        (kept alive with it, so no other object takes their ids)."""
        if len(memo) >= self.STARTS_KEPT:
            memo.clear()
        memo[key] = (kept, start)

    #: Tokens kept less their notes (:meth:`less_notes`; all of them go beyond this).
    NOTES_KEPT = 65536

    def less_notes(self, token: Token) -> Token:
        """``token`` less the system's notes (:attr:`notes`: its note counters and note
        conditions), kept one object per value (:meth:`HookMemo.canon`); the token itself
        where it has none."""
        got = self._less_notes.get(id(token))
        if got is not None and got[0] is token:
            return got[1]
        names = self.notes
        st = token.state
        if any(c[0] in names for c in st.counters) or not names.isdisjoint(st.conditions):
            st = _plain(st)
            less = self.hooks.canon(
                token.with_state(
                    replace(
                        st,
                        counters=tuple(c for c in st.counters if c[0] not in names),
                        conditions=st.conditions - names,
                    )
                )
            )
        else:
            less = token
        if len(self._less_notes) >= self.NOTES_KEPT:
            self._less_notes.clear()
        self._less_notes[id(token)] = (token, less)
        return less

    def keep_plan(self, start: Any, plan: TurnPlan | None) -> None:
        """Keep a turn's plan (Simulation._plan_of) by its start, kept alive with it."""
        if len(self.plans) >= self.STARTS_KEPT:
            self.plans.clear()
        self.plans[id(start)] = (start, plan)

    #: How many descents are kept (:meth:`descent`; all of them go beyond this).
    DESCENTS_KEPT = 65536

    def descent(
        self,
        prof: Profile,
        cells: tuple[Cell, ...],
        risk: bool,
        cell: Cell,
        occ: Occupancy,
    ) -> tuple[Profile, Walk, int]:
        """:meth:`Simulation._descent`, kept by its arguments where the way needs no field
        with tokens taken away (those profiles are large and rarely asked twice: made
        every time, as :meth:`blocked_fields` keeps them)."""
        key = (prof, cells, risk, cell, occ.blocked, occ.no_stop)
        got = self._descents.get(key)
        if got is None:
            got = Simulation._descent(self, prof, cells, risk, cell, occ)
            if got[0] is prof:
                if len(self._descents) >= self.DESCENTS_KEPT:
                    self._descents.clear()
                self._descents[key] = got
        return got

    def _distances(self, prof: Profile) -> tuple[_Distances, float]:
        """The :class:`_Distances` of ``prof``'s compiled graph and its scale: one per
        distinct set of CSR arrays (compared whole, not only by digest), whole-number ticks
        taken over their greatest common divisor (the scale; else 1)."""
        import hashlib

        csr = prof.csr
        data, scale = csr.data, 1.0
        whole = _whole_ticks(data, csr.shape[0])
        if whole is not None and whole[1] > 1:
            data, scale = (whole[0] // whole[1]).astype(np.float64), float(whole[1])
        arrays = (csr.indptr, csr.indices, data)
        digest = hashlib.blake2b(digest_size=16)
        for a in arrays:
            digest.update(str((a.dtype, a.shape)).encode())
            digest.update(np.ascontiguousarray(a).tobytes())
        key = (csr.shape, digest.digest())
        for kept, got in self._by_csr.get(key, ()):
            if all(
                np.array_equal(a, b) and a.dtype == b.dtype
                for a, b in zip(arrays, kept, strict=True)
            ):
                return got, scale
        got = _Distances()
        self._by_csr.setdefault(key, []).append((arrays, got))
        return got, scale

    def blocked_fields(self, prof: Profile, blocked: frozenset[Cell]) -> Profile:
        """``prof`` with ``blocked`` anchors taken away, on ``prof``'s own graph
        (:meth:`Profile.without`): for walking down fields (the few most recent kept)."""
        key = (id(prof), blocked, "fields")
        got = self._blocked.pop(key, None)
        if got is None:
            got = prof.without(blocked)
            self.weight.used += got.compiled_bytes()
            if len(self._blocked) >= self.BLOCKED_KEPT:
                del self._blocked[next(iter(self._blocked))]
        self._blocked[key] = got  # most recent last
        return got

    def blocked_profile(self, prof: Profile, blocked: frozenset[Cell]) -> Profile:
        """``prof``'s token with ``blocked`` anchors taken away (tokens in the way)."""
        key = (id(prof), blocked)
        got = self._blocked.pop(key, None)
        if got is None:
            g = prof.graph
            got = Profile(MovementGraph(with_blocked(g.model, blocked), g.system, g.token, g.pace))
            got.weight = self.weight
            self.weight.used += got.compiled_bytes()
            if len(self._blocked) >= self.BLOCKED_KEPT:
                del self._blocked[next(iter(self._blocked))]
        self._blocked[key] = got  # most recent last
        return got


# --------------------------------------------------------------------------- the loop


@dataclass
class RunResult:
    run: int
    seed: int
    outcome: str  # capture | escape | timeout
    turns: int
    cell: Cell | None = None
    by: str | None = None
    events: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "seed": self.seed,
            "outcome": self.outcome,
            "turns": self.turns,
            "cell": list(self.cell) if self.cell else None,
            "by": self.by,
            "events": self.events,
        }


@dataclass
class Snapshot:
    tokens: dict[str, Token]
    turn: int
    outcome: str | None
    n_events: int
    dice_state: Any
    waypoint: dict[str, int] = field(default_factory=dict)
    #: The tokens' specs and the turn order (the GM adds, removes and reorders tokens).
    specs: dict[str, TokenSpec] | None = None
    order: list[str] | None = None
    #: Doors opened or closed in play (door id -> open), beside the map as drawn.
    doors: dict[int, bool] | None = None


class Simulation:
    """One seeded run of a scenario, turn by turn, with an event log.

    >>> from engine.scenario import load_scenario  # doctest: +SKIP
    >>> sim = Simulation(load_scenario("scenarios/chase.yaml"), seed=1)  # doctest: +SKIP
    >>> sim.run().outcome  # doctest: +SKIP
    'capture'
    """

    #: This turn's cells entered, ``(node, ticks spent)``, while a system that rolls once a
    #: turn at the hardest cell (D6's round: :meth:`RuleSystem.turn_checks`) waits to roll
    #: until the move is known (:meth:`_roll_turn`); None otherwise.
    _defer: list[tuple[int, float]] | None = None

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        *,
        fields: FieldCache | None = None,
        run: int = 0,
        record: bool | Literal["count"] = True,
    ) -> None:
        self.scenario = scenario
        self.system = scenario.system
        self.seed = seed
        self.run_index = run
        self.dice = Dice(seed)
        self.fields = fields or FieldCache(scenario)
        #: ``record``: True keeps the event log (``events``); "count" only counts the
        #: events the log would hold (a batch's records carry the number, not the log:
        #: building it is about an eighth of a square chase's time); False neither. A run
        #: without the log keeps no notes either (RuleSystem.notes: what the system keeps
        #: for the table and no rule reads, dropped as each turn closes: :meth:`_close_turn`).
        self._count = record == "count"
        self.record = bool(record) and not self._count
        self._counted = 0
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        self.outcome: str | None = None
        self.result_cell: Cell | None = None
        self.result_by: str | None = None
        self.specs = {t.id: t for t in scenario.tokens}
        self.order = [t.id for t in scenario.tokens]
        self.tokens: dict[str, Token] = {}
        self.waypoint: dict[str, int] = {}
        #: Doors opened or closed in play (door id -> open); the map as drawn elsewhere.
        self.doors: dict[int, bool] = {}
        self._skeys: dict[str, tuple[Any, int]] = {}
        #: Each token's last profile at its scenario pace (:meth:`_profile_now`).
        self._now: dict[str, tuple[Token, TokenSpec, Any, Profile]] = {}
        #: Whether the last start of a turn (:meth:`_turn_start`) is one kept in the cache.
        self._kept_start = False
        for spec in scenario.tokens:
            self.tokens[spec.id] = self.fields.start_token(spec, lambda s: self._start_token(s))
        self.pursuers = [
            t.id for t in scenario.tokens if t.policy == "pursuer" or t.side == "pursuer"
        ]
        self.quarries = [
            t.id for t in scenario.tokens if t.policy == "quarry" or t.side == "quarry"
        ]
        if self._count:
            self._counted += 1
        elif self.record:
            self._emit(
                {
                    "type": "start",
                    **self.fields.sources(),
                    "seed": seed,
                    "run": run,
                    "system": self.system.name,
                    "tokens": {
                        tid: self.fields.hooks.state_dict(self.tokens[tid].state)
                        for tid in self.order
                    },
                }
            )

    def _start_token(self, spec: TokenSpec) -> Token:
        """A token of the scenario as a run starts it."""
        tok = self.system.token(spec.stats, token_id=spec.id)
        state = replace(
            tok.state, cell=spec.cell, conditions=tok.state.conditions | set(spec.conditions)
        )
        rules = sim_flight.rules_for(self, tok)
        if rules is not None:
            state = replace(state, flight=sim_flight.start_flight(rules, spec))
        return replace(tok, state=state)

    def _stats_key(self, token: Token) -> int:
        """:meth:`FieldCache.stats_id` of the token's stats, kept while they stay the same."""
        got = self._skeys.get(token.id)
        if got is None or got[0] is not token.stats:
            got = self._skeys[token.id] = (token.stats, self.fields.stats_id(token.stats))
        return got[1]

    # ----------------------------------------------------------------- events

    def _emit(self, event: dict[str, Any]) -> None:
        if self.record:
            self.events.append(event)
        elif self._count:
            self._counted += 1

    @property
    def n_events(self) -> int:
        """The events of the run so far: those logged, or (``record="count"``) counted."""
        return len(self.events) + self._counted

    def snapshot(self) -> Snapshot:
        """Everything needed to undo to this point or fork from it."""
        return Snapshot(
            dict(self.tokens),
            self.turn,
            self.outcome,
            self.n_events,
            self.dice.getstate(),
            dict(self.waypoint),
            dict(self.specs),
            list(self.order),
            dict(self.doors),
        )

    def restore(self, snap: Snapshot) -> None:
        self.tokens = dict(snap.tokens)
        self.turn = snap.turn
        self.outcome = snap.outcome
        del self.events[snap.n_events :]
        if self._count:
            self._counted = snap.n_events
        self.dice.setstate(snap.dice_state)
        self.waypoint = dict(snap.waypoint)
        self.doors = dict(snap.doors or {})
        if snap.specs is not None and snap.order is not None:
            self.specs = dict(snap.specs)
            self.order = list(snap.order)
            self._sides()

    # ----------------------------------------------------------------- the GM's edits

    def _sides(self) -> None:
        """Pursuers and quarries from the specs in turn order (after the GM's edits)."""
        specs = [self.specs[t] for t in self.order]
        self.pursuers = [t.id for t in specs if t.policy == "pursuer" or t.side == "pursuer"]
        self.quarries = [t.id for t in specs if t.policy == "quarry" or t.side == "quarry"]

    def add_token(self, spec: TokenSpec) -> Token:
        """A new token (stats validated by the system: a bad one raises StatError, nothing
        changes); event ``token_add`` with its spec and state."""
        if spec.id in self.specs:
            raise ValueError(f"token id '{spec.id}' is taken; give another")
        tok = self.system.token(spec.stats, token_id=spec.id)
        tok = replace(
            tok,
            state=replace(
                tok.state, cell=spec.cell, conditions=tok.state.conditions | set(spec.conditions)
            ),
        )
        rules = sim_flight.rules_for(self, tok)
        if rules is not None:
            tok = tok.moved(flight=sim_flight.start_flight(rules, spec))
        self.specs[spec.id] = spec
        self.order.append(spec.id)
        self.tokens[spec.id] = tok
        self._sides()
        self._emit(
            {
                "type": "token_add",
                "token": spec.id,
                "side": spec.side,
                "policy": spec.policy,
                "size": spec.size,
                "stats": {k: jsonable(v) for k, v in tok.stats.items()},
                "state": tok.state.to_dict(),
            }
        )
        return tok

    def remove_token(self, tid: str) -> None:
        """Take a token off the map; event ``token_remove``."""
        del self.tokens[tid]
        del self.specs[tid]
        self.order.remove(tid)
        self.waypoint.pop(tid, None)
        self._sides()
        self._emit({"type": "token_remove", "token": tid})

    def edit_token(
        self,
        tid: str,
        stats: dict[str, Any] | None = None,
        conditions: frozenset[str] | None = None,
        side: str | None = None,
    ) -> Token:
        """New stats (validated; a bad one raises StatError, nothing changes), conditions or
        side for a token mid-session; event ``token_edit`` with its stats and state."""
        old = self.tokens[tid]
        spec = self.specs[tid]
        tok = old
        if stats is not None:
            fresh = self.system.token(stats, token_id=tid)
            tok = replace(fresh, state=replace(old.state, encumbrance=fresh.state.encumbrance))
            spec = replace(spec, stats=dict(stats))
        if conditions is not None:
            tok = tok.moved(conditions=frozenset(conditions))
        if side is not None:
            policy = side if spec.policy == spec.side else spec.policy
            spec = replace(spec, side=side, policy=policy)
        self.tokens[tid] = tok
        self.specs[tid] = spec
        self._sides()
        self._emit(
            {
                "type": "token_edit",
                "token": tid,
                "side": spec.side,
                "policy": spec.policy,
                "stats": {k: jsonable(v) for k, v in tok.stats.items()},
                "state": tok.state.to_dict(),
            }
        )
        return tok

    def place_token(self, tid: str, cell: Cell) -> None:
        """The GM puts a token on a cell (no move, no checks); event ``place``."""
        self.tokens[tid] = self.tokens[tid].moved(cell=cell)
        self._emit({"type": "place", "token": tid, "cell": list(cell)})
        self._check_goals(tid)

    def door_key(self) -> tuple[tuple[int, bool], ...]:
        """The doors set in play that differ from the map as drawn, sorted (a cache key)."""
        if not self.doors:
            return ()
        drawn = {w.id: w.open for w in doors_of(self.scenario.model)}
        return tuple(sorted((d, o) for d, o in self.doors.items() if drawn.get(d) != o))

    @property
    def model(self) -> MapModel:
        """The map as it stands now: the scenario's, with the doors set in play."""
        return self.fields.model_for(self.door_key())

    def set_door(self, door: int, is_open: bool) -> None:
        """Open or close a door of the map (MAP-FORMAT.md objects); event ``door``.

        Paths, reach and policies see the door from then on; undo restores it."""
        found = next((w for w in doors_of(self.scenario.model) if w.id == door), None)
        if found is None:
            known = ", ".join(str(w.id) for w in doors_of(self.scenario.model)) or "none"
            raise ValueError(f"door {door}: no such door on this map (its doors: {known})")
        self.doors[door] = bool(is_open)
        self._emit({"type": "door", "door": door, "name": found.name, "open": bool(is_open)})

    def door_open(self, door: int) -> bool:
        """Whether door ``door`` stands open now."""
        for w in self.model.walls:
            if w.id == door:
                return w.open
        raise ValueError(f"door {door}: no such door on this map")

    def set_order(self, order: list[str], why: str = "reorder") -> None:
        """A new turn order (the same tokens); event ``order``."""
        if sorted(order) != sorted(self.order):
            raise ValueError("a turn order must list every token once")
        self.order = list(order)
        self._sides()
        self._emit({"type": "order", "order": list(order), "why": why})

    # ----------------------------------------------------------------- running

    def run(self) -> RunResult:
        while self.outcome is None:
            self.play_turn()
        return self.result()

    def result(self) -> RunResult:
        return RunResult(
            run=self.run_index,
            seed=self.seed,
            outcome=self.outcome or "running",
            turns=self.turn,
            cell=self.result_cell,
            by=self.result_by,
            events=self.n_events,
        )

    def play_turn(self, moves: dict[str, list[Cell]] | None = None) -> None:
        """One round: every token in order takes its turn (``moves`` for human tokens)."""
        if self.outcome is not None:
            return
        self.begin_turn()
        for tid in self.order:
            self.take_turn(tid, moves.get(tid) if moves else None)
            if self.outcome is not None:
                break
        self.end_round()

    def begin_turn(self) -> None:
        """Start the next round (the viewer calls this, then moves tokens one by one)."""
        if self.fields.weight.used > self.fields.FIELD_BYTES:
            self.fields.trim()
        self.turn += 1
        self._emit({"type": "turn", "turn": self.turn})

    def end_round(self) -> None:
        """Close the round: the turn limit ends the run in a timeout."""
        if self.outcome is None and self.turn >= self.scenario.turns:
            self._finish("timeout", None, None)

    def take_turn(self, tid: str, path: list[Cell] | None = None) -> None:
        spec = self.specs[tid]
        if path is None:
            start = self._turn_start(tid, spec)
            if self._kept_start and not self.record:
                got = self.fields.plans.get(id(start))
                if got is not None and got[0] is start:
                    plan = got[1]
                else:
                    plan = self._plan_of(start)
                    self.fields.keep_plan(start, plan)
                if plan is not None:
                    self._play_plan(tid, start, plan)
                    return
            token, pace, per_turn, prof, way = start
        else:
            token, pace, per_turn, prof = self._begin(tid, spec)
            way = None
        self._defer = [] if per_turn else None
        before = token.state.cell
        flight = sim_flight.rules_for(self, token) if token.state.flight is not None else None
        if path is not None:
            token = self._walk_path(tid, token, prof, path, self.occupancy_of(tid))
        elif flight is not None:
            token = sim_flight.fly_turn(self, tid, token, flight)
        elif way is not None:
            token = self._walk_down(tid, token, *way)
        moved = None if flight is not None else token.state.cell != before
        self._end_turn(tid, token, pace, moved)

    def _end_turn(self, tid: str, token: Token, pace: str, moved: bool | None) -> Token:
        """The system's end of ``tid``'s turn (``moved``: whether it left its cell; None for
        a flier), the token kept one object per value, its state logged, the goals checked;
        returns the token as it ends the turn."""
        return self._close_turn(tid, self._ended(tid, token, pace, moved))

    def _close_turn(self, tid: str, token: Token) -> Token:
        """``token`` as ``tid`` ends its turn: kept one object per value (a turn that rolled
        made a new one: the next turns of every token start from what is kept for these
        tokens, :meth:`_turn_start`), its state logged, the goals checked. A run that keeps
        no log keeps no notes either (RuleSystem.notes: no rule reads them): it plays on
        from the token less them, so the turns that follow are those learned for it."""
        token = self.fields.hooks.canon(token)
        if not self.record and self.fields.notes:
            token = self.fields.less_notes(token)
        self.tokens[tid] = token
        if self.record:
            state = self.fields.hooks.state_dict(token.state)
            self.events.append({"type": "state", "token": tid, "state": state})
        elif self._count:
            self._counted += 1
        self._check_goals(tid)
        return token

    def _ended(self, tid: str, token: Token, pace: str, moved: bool | None) -> Token:
        """:meth:`RuleSystem.paced` (where the token walked) and :meth:`RuleSystem.end_turn`
        on ``token``: kept for this very token where they roll nothing."""
        system = self.system
        hooks = self.fields.hooks
        skey = self._stats_key(token)
        key = self._end_key(tid, token, pace, moved)
        got = hooks.same(key, token)
        if got is not None:  # the end of this turn kept for this very token: no roll in it
            return got[1]

        def end(tok: Token, dice: Any) -> Token:
            if moved is not None:
                tok = system.paced(tok, pace, moved)
            return system.end_turn(tok, dice)

        def rolls(tok: Token, dice: Any) -> Token:
            # The end of a turn that rolls (D6: collision damage): the pace remembered
            # is still kept; the end of the turn is made.
            if moved is not None:
                tok = hooks.token(
                    ("paced", tid, skey, pace, moved),
                    tok,
                    lambda t: system.paced(t, pace, moved),
                )
            return system.end_turn(tok, dice)

        token = hooks.token(key, token, end, self.dice, rolls)
        self._log_rolls(tid)
        return token

    def _end_key(self, tid: str, token: Token, pace: str, moved: bool | None) -> tuple[Any, ...]:
        """What :meth:`_ended` keeps the end of a turn by (with the very token)."""
        return ("end", tid, self._stats_key(token), pace, moved)

    # ----------------------------------------------------------------- turn plans

    def _plan_of(self, start: tuple[Any, ...]) -> TurnPlan | None:
        """The plan of a turn from a kept ``start`` (:meth:`_turn_start`): the checks its
        way rolls, in order, and the cells it walks; None where the turn is not played
        from a plan (a flier, a way with jumps, checks rolled cell by cell as it walks)."""
        token, _pace, per_turn, _prof, way = start
        if token.state.flight is not None or token.state.cell is None:
            return None
        if way is None:  # it stays: no move, nothing rolled on the way
            return TurnPlan((), None)
        prof, walk, k = way
        if walk.jumps or not (per_turn or not walk.checks):
            return None
        entries, walked, rolled = walk.upto(k)
        rolls: tuple[tuple[int, Any], ...] = ()
        if per_turn and entries:
            asked = self._turn_rolls(token, prof.graph, entries, rolled)
            rolls = tuple((at, c) for at, c in asked if c.check is not None)
        return TurnPlan(rolls, (token.state.cell, *walked))

    def _play_plan(self, tid: str, start: tuple[Any, ...], plan: TurnPlan) -> None:
        """:meth:`take_turn` from a plan (:meth:`_plan_of`), for a run that keeps no log:
        the plan's checks rolled in order up to the first failure, then what those
        degrees make of the token (kept in the plan by them) and the end of the turn."""
        dice = self.dice
        results: list[tuple[str, bool]] = []
        for _at, check in plan.rolls:
            result = check.check.roll(dice)
            results.append((result.degree, result.success))
            if not result.success:
                break
        log = dice.log
        if self._count:  # each roll's event and its check's
            self._counted += len(log) + len(results)
        log.clear()
        self._defer = None
        key = tuple(results)
        got = plan.outcomes.get(key)
        if got is None:  # new degrees for this plan: the turn is made, and its outcome kept
            got = self._plan_outcome(tid, start, plan, results)
            plan.keep(key, got)
            if self._count:
                self._counted += got[2]
            return
        moved_token, moved, n_move, ended = got
        if self._count:
            self._counted += n_move
        if ended is None:  # an end of the turn that rolls: made every time
            self._end_turn(tid, moved_token, start[1], moved)
            return
        self._close_turn(tid, ended)

    def _plan_outcome(
        self, tid: str, start: tuple[Any, ...], plan: TurnPlan, results: list[tuple[str, bool]]
    ) -> tuple[Token, bool, int, Token | None]:
        """What a plan's rolled ``results`` (degree and success of each check rolled) make
        of the turn, as :meth:`_roll_turn` and :meth:`_moved` make it: the token at the end
        of its move, whether it left its cell, its move events (0 or 1), and the token at
        the end of the turn where that end rolls nothing (None: it rolls, and is made
        every time). The end is made here, on this turn's dice, either way."""
        token, pace = start[0], start[1]
        before = token.state.cell
        hooks = self.fields.hooks
        if plan.path is None:
            moved_token, moved, n_move = token, False, 0
        else:
            path = plan.path
            for (at, check), (degree, success) in zip(plan.rolls, results, strict=False):
                token = self._apply_check(tid, token, check.what, degree)
                if not success:
                    path = path[: at + 1]
                    break
            n_move = 1 if len(path) > 1 else 0
            moved_token = hooks.moved(token, path[-1])
            moved = moved_token.state.cell != before
        ended = self._end_turn(tid, moved_token, pace, moved)
        pure = hooks.same(self._end_key(tid, moved_token, pace, moved), moved_token)
        return moved_token, moved, n_move, (ended if pure is not None else None)

    def _begin(self, tid: str, spec: TokenSpec) -> tuple[Token, str, bool, Profile]:
        """The start of ``tid``'s turn: its token after the system's start of a turn, the
        pace this turn may use on the way to the chosen one (D6: two speed levels a round;
        the token remembers it: its state, logged at the end of the turn), whether the
        system rolls once a turn, and the profile it moves on. Pure hooks, kept as one."""
        system = self.system
        token = self.tokens[tid]
        skey = self._stats_key(token)
        chosen = spec.pace or system.default_pace

        def begin(tok: Token, dice: Any) -> tuple[Token, str, bool]:
            tok = system.start_turn(tok, dice)
            pace = system.turn_pace(tok, chosen)
            return tok, pace, system.turn_checks(tok, [], pace) is not None

        token, pace, per_turn = self.fields.hooks.token(
            ("begin", tid, skey, chosen), token, begin, self.dice
        )
        self._log_rolls(tid)
        prof = self.fields.profile(token, pace, spec.size, self.door_key(), skey)
        return token, pace, per_turn, prof

    def _turn_start(
        self, tid: str, spec: TokenSpec
    ) -> tuple[Token, str, bool, Profile, tuple[Profile, Walk, int] | None]:
        """:meth:`_begin` and the way the token's policy takes this turn (:meth:`_ground_way`;
        None for a flier or where it stays), before anything is rolled.

        All of it is a pure function of the token itself, the other tokens' cells and
        profiles (:meth:`_way_key`: what the policies and the way read of them), the specs
        and the doors, wherever the start of the turn rolled nothing and the way is kept:
        kept in the field cache by those (``starts_by_reads``), and by the ids of every
        token as it stands (``starts``: one lookup, no profile asked, for a turn whose
        tokens were all seen together before). Every key names objects by id, and they
        are kept alive with the start: an id in a key is that very object."""
        self._kept_start = False
        if spec.policy not in _KEPT_POLICIES:
            return self._turn_start_made(tid, spec)
        fields = self.fields
        order, tokens, specs = self.order, self.tokens, self.specs
        key = (
            tid,
            self.door_key(),
            *[id(tokens.get(o)) for o in order],
            *[id(specs[o]) for o in order],
        )
        got = fields.starts.get(key)
        if got is not None:
            self._kept_start = True
            return got[1]
        by_reads = self._start_key(tid)
        if by_reads is not None:
            got = fields.starts_by_reads.get(by_reads[0])
            if got is not None:
                start = got[1]
            else:
                start = self._turn_start_made(tid, spec)
                if not self._start_kept(tid, spec, start):
                    return start
                fields.keep_start(fields.starts_by_reads, by_reads[0], by_reads[1], start)
            kept = (*map(tokens.get, order), *map(specs.get, order))
            fields.keep_start(fields.starts, key, kept, start)
            self._kept_start = True
            return start
        return self._turn_start_made(tid, spec)

    def _turn_start_made(
        self, tid: str, spec: TokenSpec
    ) -> tuple[Token, str, bool, Profile, tuple[Profile, Walk, int] | None]:
        """:meth:`_turn_start` worked out."""
        token, pace, per_turn, prof = self._begin(tid, spec)
        if token.state.flight is not None:
            return token, pace, per_turn, prof, None
        way = self._ground_way(tid, spec, token, prof, per_turn)
        return token, pace, per_turn, prof, way

    def _start_key(self, tid: str) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
        """What :meth:`_turn_start` keeps a start by in ``starts_by_reads``, and the objects
        it names by id; None where a token is in the air or off the map.

        The start of the turn reads the token itself; the way reads the other tokens'
        cells and their profiles' distances (:meth:`_others_read`), not the rest of their
        states (a D6 token's last collision margin, which no rule reads again, or a penalty
        die that changes its odds but not its ways, would otherwise make every later turn
        of the run new)."""
        doors = self.door_key()
        seen = self._others_read(tid, doors, skip_own=True)
        if seen is None:
            return None
        values, objects = seen
        kept = (self.tokens.get(tid), *map(self.specs.__getitem__, self.order), *objects)
        return (tid, doors, *values, *map(id, kept)), kept

    def _others_read(
        self, tid: str, doors: tuple[tuple[int, bool], ...], skip_own: bool = False
    ) -> tuple[list[Any], list[Any]] | None:
        """What ``tid``'s policy and way read of every token as it stands (the mover's own
        too, unless ``skip_own``): values, and objects a key names by id (kept alive with
        it); None where one of those tokens is in the air or off the map.

        Of a token: its cell, and of its profile (:meth:`_profile_now`) only its distances:
        turns from its cell (:meth:`_times_from`), and for a pursuer its quarries' fields to
        cells, risk-weighted by their penalties (:meth:`_intercept`). Those are the same for
        every profile on the same compiled graph (:class:`_Distances`) at the same scale and
        denominator (with equal penalties where they are weighted by them): tokens whose
        states differ in their checks' odds but not their ways (a D6 pursuer one penalty die
        down) are read alike, and a way or a start kept for one serves the others."""
        tokens = self.tokens
        hunts = self.specs[tid].policy == "pursuer"
        values: list[Any] = []
        objects: list[Any] = []
        for oid in self.order:
            if skip_own and oid == tid:
                continue
            tok = tokens.get(oid)
            if tok is None or tok.state.cell is None or tok.state.flight is not None:
                return None
            prof = self._profile_now(oid, doors)
            shared = prof.shared
            if shared is None:  # (not one of a field cache's: the profile itself)
                values.append((tok.state.cell,))
                objects.append(prof)
                continue
            values.append((tok.state.cell, prof.scale, prof.graph.denominator))
            objects.append(shared)
            if hunts and oid in self.quarries:
                objects.append(prof.penalty)
        return values, objects

    def _start_kept(self, tid: str, spec: TokenSpec, start: tuple[Any, ...]) -> bool:
        """Whether :meth:`_turn_start` keeps ``start``: no profile with tokens taken away in
        its way (those are not kept), and the token kept one object per value
        (:meth:`HookMemo.canon`: another token of its value is then the same object, so the
        start serves it) with the start of its turn kept as a pure result of it (it rolled
        nothing)."""
        way, prof = start[4], start[3]
        if way is not None and way[0] is not prof:
            return False
        hooks = self.fields.hooks
        token = self.tokens[tid]
        if not hooks.is_canon(token):
            return False
        chosen = spec.pace or self.system.default_pace
        return hooks.same(("begin", tid, self._stats_key(token), chosen), token) is not None

    # ----------------------------------------------------------------- tokens in the way

    def occupancy_of(self, tid: str) -> Occupancy:
        """What the other tokens take away from ``tid`` this turn (engine.occupancy): under
        the scenario's ``tokens_block``, enemies' footprints block and allies' may be
        passed but not stopped on; a pursuer's quarries never block it (that is the catch);
        a flier in the air is over everyone's heads."""
        setting = self.scenario.tokens_block
        if setting == "none":
            return NOBODY
        mine = self.specs[tid]
        hunts = tid in self.pursuers
        specs = self.specs
        if mine.size <= 1 and all(specs[oid].size <= 1 for oid in self.order):
            # One cell each (engine.occupancy's common case), without the Other records.
            inside = self.scenario.model.grid.in_bounds
            blocked: set[Cell] = set()
            no_stop: set[Cell] = set()
            every = setting == "all"
            for oid in self.order:
                tok = self.tokens.get(oid)
                if oid == tid or tok is None:
                    continue
                st = tok.state
                cell, f = st.cell, st.flight
                if cell is None or not (f is None or f.landed or f.altitude <= 0):
                    continue
                if hunts and oid in self.quarries:
                    continue
                if inside(cell):
                    (blocked if (every or specs[oid].side != mine.side) else no_stop).add(cell)
            if not blocked and not no_stop:
                return NOBODY
            return Occupancy(frozenset(blocked), frozenset(no_stop - blocked))
        others = []
        for oid in self.order:
            tok = self.tokens.get(oid)
            if oid == tid or tok is None or tok.state.cell is None:
                continue
            if not sim_flight.low_enough(tok, 0):
                continue
            spec = self.specs[oid]
            others.append(
                Other(
                    tok.state.cell,
                    spec.size,
                    enemy=spec.side != mine.side,
                    quarry=hunts and oid in self.quarries,
                )
            )
        return occupancy(self.scenario.model.grid, mine.size, others, setting)

    # ----------------------------------------------------------------- policies

    def _ground_way(
        self, tid: str, spec: TokenSpec, token: Token, prof: Profile, per_turn: bool
    ) -> tuple[Profile, Walk, int] | None:
        """The way a ground token's policy takes this turn, before anything is rolled: the
        profile walked, its walk and how many edges of it (:meth:`_descent`), or None (it
        stays). Kept in the field cache (``ways``) by all that the policy and the way
        read (:meth:`_way_key`)."""
        keyed = self._way_key(tid, spec, prof, per_turn)
        if keyed is None:
            return self._find_way(tid, spec, token, prof)
        key, kept = keyed
        ways = self.fields.ways
        got = ways.get(key)
        if got is not None:
            # What the key names by id is kept alive with the way: the same objects.
            return got[1]
        way = self._find_way(tid, spec, token, prof)
        # A way with tokens taken away from the field (a profile of its own) is not kept.
        if way is None or way[0] is prof:
            if len(ways) >= self.fields.WAYS_KEPT:
                ways.clear()
            ways[key] = (kept, way)
        return way

    def _way_key(
        self, tid: str, spec: TokenSpec, prof: Profile, per_turn: bool
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
        """What :meth:`_ground_way` keeps a way by, and the objects it names by id (to be
        kept alive with it); None where it is not kept (a flier about, a token off the
        map, a policy other than quarry or pursuer).

        A quarry's or pursuer's way is a function of: the token's profile this turn and
        whether it rolls once a turn; the doors; every token's spec; and every token's cell
        and the distances of its profile as it stands (:meth:`_others_read`), which is all
        the policies, the tokens in the way and the descent read (:meth:`_find_way`)."""
        if spec.policy not in _KEPT_POLICIES:
            return None
        doors = self.door_key()
        seen = self._others_read(tid, doors)
        if seen is None:
            return None
        values, objects = seen
        kept = (prof, *objects, *map(self.specs.__getitem__, self.order))
        key = (tid, per_turn, doors, *values, *map(id, kept))
        return key, kept

    def _find_way(
        self, tid: str, spec: TokenSpec, token: Token, prof: Profile
    ) -> tuple[Profile, Walk, int] | None:
        """:meth:`_ground_way` worked out: the policy's goal, then the way down to it."""
        occ = self.occupancy_of(tid)
        goal = self._policy_goal(spec, token, prof, occ)
        if goal is None:
            return None
        cells, risk = goal
        cell = token.state.cell
        assert cell is not None
        return self.fields.descent(prof, cells, risk, cell, occ)

    def _policy_goal(
        self, spec: TokenSpec, token: Token, prof: Profile, occ: Occupancy
    ) -> tuple[tuple[Cell, ...], bool] | None:
        """The cells the token's policy makes for this turn, and whether the way there is
        risk-weighted; None: it stays."""
        cell = token.state.cell
        assert cell is not None
        if spec.policy == "quarry":
            goal = self._quarry_goal(spec.id)
            if goal is not None:
                return (goal,), True
            best = self._flee_cell(token, prof, occ)
            return None if best is None else ((best,), False)
        if spec.policy == "pursuer":
            quarry = spec.target or self._nearest(cell, self.quarries)
            if quarry is None:
                return None
            at = self._intercept(spec, token, prof, quarry)
            if spec.size > 1:  # any anchor whose footprint covers the cell
                grid = prof.graph.grid
                near = tuple(a for a in covering(grid, at, spec.size) if fits(grid, a, spec.size))
                return (near or (at,)), False
            return (at,), False
        if spec.policy == "waypoints":
            i = self.waypoint.get(spec.id, 0)
            while i < len(spec.waypoints) and spec.waypoints[i] == cell:
                i += 1
            self.waypoint[spec.id] = i
            if i >= len(spec.waypoints):
                return None
            return (spec.waypoints[i],), False
        return None  # idle, human

    def _nearest(self, cell: Cell, ids: list[str]) -> str | None:
        grid = self.scenario.model.grid
        live = [(grid.steps(cell, self.tokens[q].state.cell), q) for q in ids]  # type: ignore[arg-type]
        return min(live)[1] if live else None

    def _intercept(self, spec: TokenSpec, token: Token, prof: Profile, quarry: str) -> Cell:
        """Where the quarry can be caught soonest: the first cell of its predicted route
        (towards its exit) that this pursuer reaches no later than the quarry does."""
        qtok = self.tokens[quarry]
        qcell = qtok.state.cell
        assert qcell is not None and token.state.cell is not None
        qprof = self._profile_now(quarry)
        if not self.scenario.exit_cells:
            return qcell
        goal = self._quarry_goal(quarry)
        if goal is None:
            return qcell
        qfield = qprof.field_to((goal,), risk=True)
        route = qfield.route(qprof, qprof.graph.node(qcell), 4)
        return self.fields.meet(self._times_from(spec.id), route)

    def _times_from(self, tid: str) -> np.ndarray:
        """Turns from a token's cell to every cell (best parity), as the token stands now:
        its profile's (its state at this moment, the doors as they are), kept in the
        profile. A token whose state changed in place (a failed check, a pace remembered)
        is seen with its new profile by every token that plans after it."""
        return self._profile_now(tid).turns_from(self.tokens[tid].state.cell)  # type: ignore[arg-type]

    def _profile_now(self, tid: str, doors: tuple[tuple[int, bool], ...] | None = None) -> Profile:
        """The profile of token ``tid`` as it stands now, at its scenario pace, on the map
        with ``doors`` (default: as they are in play)."""
        tok, spec = self.tokens[tid], self.specs[tid]
        if doors is None:
            doors = self.door_key()
        # The last answer per token, while the token, its spec and the doors are the same
        # objects (tokens are frozen): the other tokens' profiles are asked every turn.
        got = self._now.get(tid)
        if got is not None and got[0] is tok and got[1] is spec and got[2] == doors:
            return got[3]
        prof = self.fields.profile(
            tok, spec.pace or self.system.default_pace, spec.size, doors, self._stats_key(tok)
        )
        self._now[tid] = (tok, spec, doors, prof)
        return prof

    def _quarry_goal(self, quarry: str) -> Cell | None:
        """The exit cell the quarry reaches soonest among those it reaches before every
        pursuer; None when no exit is safe (then it flees)."""
        exits = self.scenario.exit_cells
        if not exits:
            return None
        mine = self._times_from(quarry)
        threat = self.fields.threat([self._times_from(pid) for pid in self.pursuers])
        return self.fields.safest_exit(mine, threat)

    def _route(
        self, prof: Profile, cell: Cell, target: Field, limit_turns: int
    ) -> list[tuple[Cell, float]]:
        """The cells a token would pass descending ``target``, with arrival ticks (kept in
        the field: :class:`Route`)."""
        return list(target.route(prof, prof.graph.node(cell), limit_turns).cells)

    def _flee_cell(self, token: Token, prof: Profile, occ: Occupancy) -> Cell | None:
        """No safe exit: make for the cell it reaches this turn that keeps the most turns
        between it and its nearest pursuer (ties: the nearer cell, then the lower index);
        never one another token stands on."""
        if not self.pursuers:
            return None
        cell = token.state.cell
        assert cell is not None
        g = prof.graph
        mine = prof.turns_from(cell)
        threat = self.fields.threat([self._times_from(pid) for pid in self.pursuers], g.n)
        taken = (occ.blocked | occ.no_stop) - {cell} if occ else frozenset()
        return self.fields.flee_cell(g, cell, mine, threat, taken)

    # ----------------------------------------------------------------- moving

    def _descend(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        goal: tuple[tuple[Cell, ...], bool],
        occ: Occupancy = NOBODY,
    ) -> Token:
        """Step down the field to ``goal`` while the turn's time lasts. Tokens in the way
        (``occ``): where the way down the open field meets a blocking token, the field with
        the blocking tokens taken away is walked instead (a goal cell a token stands on is
        walked up to); the move never ends on an ally's cell."""
        cells, risk = goal
        cell = token.state.cell
        assert cell is not None
        prof, walk, k = self.fields.descent(prof, cells, risk, cell, occ)
        return self._walk_down(tid, token, prof, walk, k)

    def _walk_down(self, tid: str, token: Token, prof: Profile, walk: Walk, k: int) -> Token:
        """:meth:`_descend` along its way (:meth:`_descent`): the first ``k`` edges of
        ``walk`` on ``prof``, rolling on the way."""
        cell = token.state.cell
        assert cell is not None
        g = prof.graph
        plan = walk.edges if k == len(walk.edges) else walk.edges[:k]
        if not walk.jumps and (
            (self._defer is not None and not self._defer)
            or (self._defer is None and not walk.checks)
        ):
            # One roll a turn, rolled once the move is known, or no cell of the way that asks
            # a check: walking enters every cell of the plan (what the loop below does, read
            # off the kept walk).
            entries, walked, rolled = walk.upto(k)
            if self._defer is not None:
                self._defer.extend(entries)
            path = [cell, *walked]
            spent = walk.spent[k - 1] if k else 0.0
            return self._moved(tid, token, path, spent, g, rolled)
        spent = 0.0
        path = [cell]
        key: tuple[int, int] | None = self._run_key_at(g, cell)
        for node, nxt, w in plan:
            ok, token, key = self._enter(tid, token, prof, node, nxt, key, spent + w)
            path.extend(self._jumped(g, node, nxt, ok))
            if not ok:
                break
            spent += w
            if g.cell_of(nxt) != path[-1]:  # a state change in place (standing) stays put
                path.append(g.cell_of(nxt))
        return self._moved(tid, token, path, spent, g)

    @staticmethod
    def _descent(
        fields: FieldCache,
        prof: Profile,
        cells: tuple[Cell, ...],
        risk: bool,
        cell: Cell,
        occ: Occupancy,
    ) -> tuple[Profile, Walk, int]:
        """:meth:`_descend`'s way before anything is rolled: the profile walked (``prof``,
        or it with the blocking tokens taken away), the turn's walk down the field to
        ``cells`` from ``cell``, and how many of its edges are walked (cut before a token
        in the way and back off an ally's cell). A pure function of its arguments."""
        target = prof.field_to(cells, risk=risk)
        blocked = occ.blocked - {cell}
        stop_at: frozenset[Cell] = frozenset()
        if blocked and Simulation._route_meets(prof, target, cell, blocked):
            stop_at = blocked & frozenset(cells)
            prof = fields.blocked_fields(prof, blocked - stop_at)
            target = prof.field_to(cells, risk=risk)
        walk = target.walk(prof, prof.graph.node(cell))
        k = len(walk.edges)
        if stop_at or occ.no_stop:
            k = Simulation._trim_at(walk, stop_at, occ.no_stop)
        return prof, walk, k

    @staticmethod
    def _plan(prof: Profile, target: Field, node: int) -> list[tuple[int, int, float]]:
        """The edges ``(node, next, ticks)`` down ``target`` that this turn's time pays for
        (before any check is rolled)."""
        g = prof.graph
        budget = float(g.denominator)
        spent = 0.0
        plan: list[tuple[int, int, float]] = []
        while target.left(node) > 0:
            step = target.step(prof, node)
            if step is None:
                break
            nxt, w = step
            # A jump is one edge: it is made whole, in a turn that starts with it if needs be.
            if spent + w > budget + 1e-9 and not (spent == 0 and (node, nxt) in g.jump_at):
                break
            plan.append((node, nxt, w))
            spent += w
            node = nxt
        return plan

    @staticmethod
    def _route_meets(prof: Profile, target: Field, cell: Cell, blocked: frozenset[Cell]) -> bool:
        """Whether the whole way down ``target`` from ``cell`` (every turn of it) enters a
        blocked anchor. If not, that way is also a best one with the tokens in the way (it
        only loses edges), and the shared open field serves."""
        g = prof.graph
        index = g.grid.index
        return not target.enters(prof, g.node(cell)).isdisjoint(index(c) for c in blocked)

    @staticmethod
    def _trim(
        g: MovementGraph,
        plan: list[tuple[int, int, float]],
        stop_at: frozenset[Cell],
        no_stop: frozenset[Cell],
    ) -> list[tuple[int, int, float]]:
        """``plan`` cut before a cell a token stands on (``stop_at``: a goal taken by a
        blocking token) and back to its last cell that is not an ally's."""
        for k, (_, nxt, _) in enumerate(plan):
            if g.cell_of(nxt) in stop_at:
                plan = plan[:k]
                break
        while plan and g.cell_of(plan[-1][1]) in no_stop:
            plan = plan[:-1]
        return plan

    @staticmethod
    def _trim_at(walk: Walk, stop_at: frozenset[Cell], no_stop: frozenset[Cell]) -> int:
        """How many edges of ``walk`` :meth:`_trim` keeps."""
        cells = walk.cells
        k = len(cells)
        if stop_at:
            k = next((i for i in range(k) if cells[i] in stop_at), k)
        while k and cells[k - 1] in no_stop:
            k -= 1
        return k

    @staticmethod
    def _run_key_at(g: MovementGraph, cell: Cell) -> tuple[int, int]:
        """The run a token standing on ``cell`` is in at the start of its turn: a run checked
        once (one climb, one roll) is not checked again when the next turn goes on with it."""
        return (int(g.run_key[g.grid.index(cell)]), 0)

    @staticmethod
    def _jumped(g: MovementGraph, node: int, nxt: int, ok: bool) -> list[Cell]:
        """The cells a jump edge passes before its landing (all of them when it is made; up
        to the first gap cell, where the token falls, when its roll failed; a failed leap
        stops below)."""
        jump = g.jump_at.get((node, nxt)) if g.jump_at else None
        if jump is None:
            return []
        if ok:
            upto = len(jump.parts) - 1
        else:  # into the gap; a failed leap stays below the height
            upto = jump.gap_at + 1 if jump.kind == "gap" else jump.gap_at
        return [g.grid.cell_of_index(part[0]) for part in jump.parts[:upto]]

    def _walk_path(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        path: list[Cell],
        occ: Occupancy = NOBODY,
    ) -> Token:
        """A given path (human moves): walked while the turn's time lasts, up to the first
        token in the way (``occ``), and never to end on an ally's cell."""
        if path and occ:
            blocked = occ.blocked - {path[0]}
            if blocked & set(path[1:]):
                prof = self.fields.blocked_profile(prof, blocked)
            if occ.no_stop:
                _, walked, _ = self._walk(tid, token, prof, path, dry=True)
                end = len(walked)
                while end > 1 and path[end - 1] in occ.no_stop:
                    end -= 1
                path = path[:end]
        token, walked, spent = self._walk(tid, token, prof, path)
        return self._moved(tid, token, walked, spent, prof.graph)

    def _walk(
        self, tid: str, token: Token, prof: Profile, path: list[Cell], *, dry: bool = False
    ) -> tuple[Token, list[Cell], float]:
        """Walk ``path`` while the turn's time lasts: the token, the cells walked and the
        ticks spent. ``dry``: no checks (all pass) and no events, to see how far it goes."""
        enter = self._enter if not dry else _enter_dry
        g = prof.graph
        node = g.node(path[0])
        spent = 0.0
        walked = [path[0]]
        key: tuple[int, int] | None = self._run_key_at(g, path[0])
        i = 0
        while i + 1 < len(path):
            i += 1
            cell = path[i]
            jump = g.jump_along(node, path, i)
            if jump is not None:
                # A jump over the gap ahead: one edge, made whole or not at all.
                if spent + jump.ticks > g.denominator + 1e-9 and spent > 0:
                    break
                ok, token, key = enter(tid, token, prof, node, jump.dst, key, spent + jump.ticks)
                walked.extend(self._jumped(g, node, jump.dst, ok))
                if not ok:
                    break
                spent += jump.ticks
                node = jump.dst
                walked.append(g.cell_of(node))
                i += len(jump.parts) - 1
                continue
            # The cheapest way into the next cell, standing up first where the rules need it.
            step = g.step_from(node, cell)
            if step is None:
                break
            hops = [node, *step]
            ws = []
            for a, b in zip(hops, hops[1:], strict=False):
                ws.append(next(float(t) for v, t in g.neighbours(a) if v == b))
            if spent + sum(ws) > g.denominator + 1e-9:
                break
            ok = True
            for a, b, w in zip(hops, hops[1:], ws, strict=False):
                ok, token, key = enter(tid, token, prof, a, b, key, spent + w)
                if not ok:
                    break
                spent += w
                node = b
            if not ok:
                break
            walked.append(cell)
        return token, walked, spent

    def _enter(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        node: int,
        nxt: int,
        key: tuple[int, int] | None,
        spent: float,
    ) -> tuple[bool, Token, tuple[int, int] | None]:
        """Roll the check of a new run of terrain, or of a run in a new move as the system
        counts moves (a Move action: ``spent`` ticks into the turn, this step included); a
        failure keeps the token out."""
        g = prof.graph
        j = nxt % g.n
        if j == node % g.n:
            # A state change in place (standing up): no cell entered, no check (the
            # system's start_turn/end_turn keep the token's conditions in step).
            return True, token, key
        jump = g.jump_at.get((node, nxt)) if g.jump_at else None
        if jump is not None:
            # One jump, one roll (RULES.md 4); a failure falls into the gap.
            if jump.check is not None and jump.check.check is not None:
                gap = g.grid.cell_of_index(jump.parts[jump.gap_at][0])
                result = jump.check.check.roll(self.dice)
                self._log_rolls(tid)
                self._emit(
                    {
                        "type": "check",
                        "token": tid,
                        "cell": list(gap),
                        "what": jump.check.what,
                        "target": jump.check.target,
                        "degree": result.degree,
                        "success": result.success,
                    }
                )
                token = self._apply_check(tid, token, jump.check.what, result.degree)
                if not result.success:
                    return False, token, key
            return True, token, (int(g.run_key[j]), 0)
        if self._defer is not None:  # one roll a turn: rolled once the move is known
            self._defer.append((nxt, spent))
            return True, token, key
        tid_j = int(g.model.terrain_ids.ravel()[j])
        period = g.check_period[tid_j]
        move = 0 if period is None else math.ceil(g.turns(spent) / period)
        run_key = (int(g.run_key[j]), move)
        cost = g.state_costs[g.state_of(nxt)][tid_j]
        if cost.check is not None and run_key != key and cost.check.check is not None:
            result = cost.check.check.roll(self.dice)
            self._log_rolls(tid)
            cell = g.cell_of(nxt)
            self._emit(
                {
                    "type": "check",
                    "token": tid,
                    "cell": list(cell),
                    "what": cost.check.what,
                    "target": cost.check.target,
                    "degree": result.degree,
                    "success": result.success,
                }
            )
            token = self._apply_check(tid, token, cost.check.what, result.degree)
            if not result.success:
                return False, token, run_key
        return True, token, run_key

    def _roll_turn(
        self,
        tid: str,
        token: Token,
        path: list[Cell],
        spent: float,
        g: MovementGraph,
        rolled: tuple[Any, ...] | None = None,
    ) -> tuple[Token, list[Cell], float]:
        """Roll this turn's checks over the cells it entered, as the system counts them once
        a turn (D6: one roll a round, at the hardest cell crossed: RULES.md 3), each at the
        first cell asking it, in path order; a failure keeps the token out of that cell."""
        entries, self._defer = self._defer or [], None
        for at, check in self._turn_rolls(token, g, entries, rolled) if entries else ():
            if check.check is None:
                continue
            result = check.check.roll(self.dice)
            if self._count:  # the roll's events, counted (:meth:`_log_rolls`)
                log = self.dice.log
                self._counted += len(log)
                log.clear()
            else:
                self._log_rolls(tid)
            if self.record:
                self.events.append(
                    {
                        "type": "check",
                        "token": tid,
                        "cell": list(path[at + 1]),
                        "what": check.what,
                        "target": check.target,
                        "degree": result.degree,
                        "success": result.success,
                    }
                )
            elif self._count:
                self._counted += 1
            token = self._apply_check(tid, token, check.what, result.degree)
            if not result.success:
                return token, path[: at + 1], entries[at - 1][1] if at else 0.0
        return token, path, spent

    def _apply_check(self, tid: str, token: Token, what: str, degree: str) -> Token:
        """:meth:`RuleSystem.apply_check`, kept by what it reads (:class:`HookMemo`), and by
        the very token (one kept by value: :meth:`HookMemo.canon`), check and degree."""
        fields = self.fields
        quick = (id(token), what, degree)
        got = fields.applied.get(quick)
        if got is not None and got[0] is token:
            return got[1]
        hooks = fields.hooks
        key = ("apply_check", tid, self._stats_key(token), what, degree)
        apply = self.system.apply_check
        made = hooks.token(key, token, lambda tok: apply(tok, what, degree))
        if hooks.is_canon(token) and token.id == tid:
            if len(fields.applied) >= fields.STARTS_KEPT:
                fields.applied.clear()
            fields.applied[quick] = (token, made)
        return made

    def _turn_rolls(
        self,
        token: Token,
        g: MovementGraph,
        entries: list[tuple[int, float]],
        cells: tuple[Any, ...] | None = None,
    ) -> list[tuple[int, CellCheck]]:
        """This turn's checks (:meth:`RuleSystem.turn_checks` over the cells entered), each
        with the first entry asking it, in roll order. A pure function of the token, the
        cells (``cells``: their ``(terrain id, layer)``, where the caller has them) and their
        layers: kept in the field cache by what it read (:class:`HookMemo`)."""
        fields = self.fields
        quick = None
        if cells is None:
            ids = g.terrain_list()
            n, per = g.n, g.n * g.n_par
            cells = tuple((ids[nxt % n], nxt // per) for nxt, _ in entries)
        elif fields.hooks.is_canon(token):
            # The cells of a kept walk (Walk.upto) and a token kept by value: this very
            # call's result, kept by identity, before any key is hashed.
            quick = (id(token), id(g), id(cells))
            got = fields.rolls_same.get(quick)
            if got is not None and got[0] is token and got[1] is g and got[2] is cells:
                return got[3]

        def rolls(tok: Token) -> list[tuple[int, CellCheck]]:
            terrains = [g.model.terrains[t] for t, _ in cells]
            asked = self.system.turn_checks(tok, terrains, g.pace) or []

            def asks(k: int, check: CellCheck) -> bool:
                t, layer = cells[k]
                c = g.state_costs[layer][t].check
                return c is not None and (c.what, c.target) == (check.what, check.target)

            placed = [(next((k for k in range(len(cells)) if asks(k, c)), 0), c) for c in asked]
            return sorted(placed, key=lambda x: x[0])

        key = ("turn_checks", token.id, self._stats_key(token), g, cells)
        result = fields.hooks.get(key, token, rolls)
        if quick is not None:
            if len(fields.rolls_same) >= fields.STARTS_KEPT:
                fields.rolls_same.clear()
            fields.rolls_same[quick] = (token, g, cells, result)
        return result

    def _moved(
        self,
        tid: str,
        token: Token,
        path: list[Cell],
        spent: float,
        g: MovementGraph,
        rolled: tuple[Any, ...] | None = None,
    ) -> Token:
        if self._defer is not None:
            token, path, spent = self._roll_turn(tid, token, path, spent, g, rolled)
        if len(path) > 1:
            if self.record:
                self.events.append(
                    {
                        "type": "move",
                        "token": tid,
                        "path": [list(c) for c in path],
                        "turns": self.fields.turns_json(g, spent),
                    }
                )
            elif self._count:
                self._counted += 1
        return self.fields.hooks.moved(token, path[-1])

    def _log_rolls(self, tid: str) -> None:
        """Move the dice's new roll events into the run's log."""
        new = self.dice.log
        if not new:
            return
        if self.record:
            append = self.events.append
            for ev in new:
                if type(ev) is RollEvent:
                    append(ev.logged(tid))
                else:
                    append({"type": "roll", "token": tid, **ev.to_dict()})
        elif self._count:
            self._counted += len(new)
        new.clear()

    # ----------------------------------------------------------------- goals

    def _check_goals(self, moved: str) -> None:
        scenario = self.scenario
        tokens, specs, gap = self.tokens, self.specs, self.fields.gap
        capture, altitude = scenario.capture, scenario.capture_altitude
        low_enough = sim_flight.low_enough
        for q in self.quarries:
            qtok = tokens[q]
            qst = qtok.state
            qc = qst.cell
            if qc is not None:
                q_low = qst.flight is None or low_enough(qtok, altitude)
                q_size = specs[q].size
                for p in self.pursuers:
                    ptok = tokens[p]
                    pst = ptok.state
                    pc = pst.cell
                    if (
                        pc is not None
                        and gap(pc, specs[p].size, qc, q_size) <= capture
                        and q_low
                        and (pst.flight is None or low_enough(ptok, altitude))
                    ):
                        self._finish("capture", qc, p)
                        return
            if qc in scenario.exit_cells:
                self._finish("escape", qc, q)
                return

    def _finish(self, outcome: str, cell: Cell | None, by: str | None) -> None:
        self.outcome = outcome
        self.result_cell = cell
        self.result_by = by
        self._emit(
            {
                "type": "end",
                "outcome": outcome,
                "turn": self.turn,
                "cell": list(cell) if cell else None,
                "by": by,
            }
        )

    # ----------------------------------------------------------------- logs

    def final_states(self) -> dict[str, dict[str, Any]]:
        return {tid: self.tokens[tid].state.to_dict() for tid in self.order}

    def write_log(self, path: str, label: str | None = "--log") -> None:
        """The event log as JSON lines, written whole or not at all (:mod:`engine.safeio`):
        a special file or a link is refused, a full disk leaves no half file."""
        from engine.safeio import write_text

        write_text(
            path, "".join(json.dumps(ev, separators=(",", ":")) + "\n" for ev in self.events), label
        )


def _enter_dry(
    tid: str,
    token: Token,
    prof: Profile,
    node: int,
    nxt: int,
    key: tuple[int, int] | None,
    spent: float,
) -> tuple[bool, Token, tuple[int, int] | None]:
    """:meth:`Simulation._enter` for a dry walk: every check passes, nothing is rolled."""
    return True, token, key


def file_digest(path: str) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes (a scenario's ``digest``);
    a file just loaded is not read again."""
    from engine.sources import file_digest as digest

    return digest(path)


def log_sources(scenario: Scenario) -> dict[str, Any]:
    """What an event log's start event records of the files it was run on.

    The scenario path as given and absolute, the map's absolute path, and a digest of each
    file's bytes: ``tacgrid replay`` finds the files from another folder and refuses to
    replay on a scenario or map that has changed since.
    """
    import os

    return {
        "scenario": scenario.path,
        "scenario_abs": os.path.abspath(scenario.path),
        "digest": scenario.digest,
        "map": scenario.model.path,
        "map_digest": _digest_or_none(scenario.model.path),
    }


def _digest_or_none(path: str) -> str | None:
    try:
        return file_digest(path)
    except (OSError, ValueError, TacgridError):  # a model built in memory has no file
        return None


def replay_states(events: list[dict[str, Any]]) -> tuple[dict[str, TokenState], str | None]:
    """Rebuild every token's state from an event log alone (no rules, no dice)."""
    states: dict[str, TokenState] = {}
    outcome = None
    for ev in events:
        kind = ev.get("type")
        if kind == "start":
            states = {tid: _state_from_dict(s) for tid, s in ev["tokens"].items()}
        elif kind == "move":
            states[ev["token"]] = replace(states[ev["token"]], cell=tuple(ev["path"][-1]))
        elif kind == "flight":
            f = state_from_dict(ev["state"])
            states[ev["token"]] = replace(states[ev["token"]], cell=f.cell, flight=f)
        elif kind == "state":
            states[ev["token"]] = _state_from_dict(ev["state"])
        elif kind in ("token_add", "token_edit"):  # the GM's edits (the viewer)
            states[ev["token"]] = _state_from_dict(ev["state"])
        elif kind == "token_remove":
            states.pop(ev["token"], None)
        elif kind == "place":
            states[ev["token"]] = replace(states[ev["token"]], cell=tuple(ev["cell"]))
        elif kind == "end":
            outcome = ev["outcome"]
    return states, outcome


def replay_doors(events: list[dict[str, Any]]) -> dict[int, bool]:
    """The doors opened or closed in play by the end of an event log (door id -> open)."""
    doors: dict[int, bool] = {}
    for ev in events:
        if ev.get("type") == "door":
            doors[int(ev["door"])] = bool(ev["open"])
    return doors


def read_log(path: str) -> list[dict[str, Any]]:
    from engine.errors import ArgumentError
    from engine.sources import MAX_LOG_BYTES, load_json, read_bytes

    # A regular file within the log cap; each line JSON with finite numbers, shallow.
    data = read_bytes(path, "event log", MAX_LOG_BYTES, ArgumentError)
    events = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        event = load_json(line, f"{path}: line {n}", ArgumentError)
        if not isinstance(event, dict):
            raise ArgumentError(f"{path}: line {n} is not an event; give a log written by tacgrid")
        events.append(event)
    if not events or events[0].get("type") != "start":
        raise ArgumentError(
            f"{path}: not a tacgrid event log (no start event); write one with `tacgrid run ... --log FILE`"
        )
    return events
