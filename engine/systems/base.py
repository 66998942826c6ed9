"""The shape every rule system follows.

A rule system is a :class:`RuleSystem` subclass in its own module under
``engine/systems/`` that sets ``SYSTEM = TheClass``. Class-level metadata (its stats,
its settings, units and turn structure) is data; behaviour is a handful of hooks:

* :meth:`RuleSystem.rate` - how far a token gets per turn in a movement mode at a pace;
* :meth:`RuleSystem.rates` / :meth:`RuleSystem.extra_stats` - the system's own figures;
* :meth:`RuleSystem.cell_check` - the check a cell's terrain asks, if any;
* :meth:`RuleSystem.apply_check` - a check result's effect on the token's state;
* :meth:`RuleSystem.start_turn` / :meth:`RuleSystem.end_turn` - per-turn upkeep;
* :meth:`RuleSystem.parse_check` - the ``odds``/``roll`` check syntax.

Token state (cell, mode, conditions, encumbrance, fractional progress) is explicit data
in :class:`TokenState`, never hidden in the system object, so a log can replay it.
"""

from __future__ import annotations

import copyreg
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from engine.errors import ArgumentError, StatError, did_you_mean, literal
from engine.exact import exact, jsonable
from engine.grid import Cell
from engine.sources import clip
from engine.terrain import MODES, Terrain

_new = object.__new__


def _with(obj: Any, name: str, value: Any) -> Any:
    """A frozen dataclass ``obj`` (of no subclass: no ``__post_init__``, no slots) with one
    field changed: its ``__dict__`` filled at once, the object ``dataclasses.replace``
    makes, several times sooner (the frozen ``__init__`` sets each field through
    ``object.__setattr__``)."""
    made = _new(type(obj))
    made.__dict__.update(obj.__dict__)
    made.__dict__[name] = value
    return made


if TYPE_CHECKING:
    # Annotations only: a system's flight rules live apart from it, so that listing the
    # systems imports no engine.flight (issue 20).
    from engine.flight.model import FlightRules, FlightState

# --------------------------------------------------------------------------- values

_TRUE = ("true", "yes", "1", "on")
#: Largest magnitude (and finest fraction, 1/STAT_LIMIT) a numeric stat or setting takes.
STAT_LIMIT = 1_000_000
_FALSE = ("false", "no", "0", "off")


@dataclass(frozen=True)
class Param:
    """A stat or a setting: its name, type, range and default.

    ``kind`` is one of ``int``, ``number`` (exact Fraction), ``bool``, ``choice``,
    ``dice`` (a D6 die code such as ``3D+2``) or ``text``.
    """

    name: str
    kind: str
    default: Any = None
    minimum: Any = None
    maximum: Any = None
    choices: tuple[str, ...] = ()
    help: str = ""
    unit: str = ""

    def allowed(self) -> str:
        if self.kind == "choice":
            return " | ".join(self.choices)
        if self.kind == "bool":
            return "true | false"
        if self.kind == "dice":
            return "a die code such as 3D+2"
        lo = "" if self.minimum is None else f">= {jsonable(self.minimum)}"
        hi = "" if self.maximum is None else f"<= {jsonable(self.maximum)}"
        what = "a whole number" if self.kind == "int" else "a number (7.5 or 15/2)"
        return " ".join(x for x in (what, lo, "and" if lo and hi else "", hi) if x)

    def parse(self, raw: Any, where: str = "", role: str | None = None) -> Any:  # noqa: C901
        """Validate ``raw`` and return it typed; bad values raise one clear line, about the
        argument ``role`` (``"token"``, ``"set"``) where there is one, after ``where``."""

        def fail(problem: str) -> StatError:
            given = " ".join(x for x in (where, f"{self.name}={clip(repr(raw))}") if x)
            return StatError(role=role, given=given, problem=problem)

        def bad() -> StatError:
            return fail(f"expected {self.allowed()}")

        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise bad()
        if self.kind == "choice":
            text = str(raw).strip()
            if text not in self.choices:
                raise fail(f"expected {self.allowed()}{did_you_mean(text[:80], self.choices)}")
            return text
        if self.kind == "dice":
            from engine.dice import DieCode

            try:
                return str(DieCode.parse(str(raw)))
            except ValueError:
                raise bad() from None
        if self.kind == "text":
            return str(raw)
        try:
            value = exact(raw)
        except (ValueError, ZeroDivisionError):
            raise bad() from None
        if self.kind == "int":
            if value.denominator != 1:
                raise bad()
            value = Fraction(int(value))
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            raise bad()
        # No game's figure is near a million, or finer than a millionth; beyond that the
        # exact arithmetic would only grow numbers no search can use.
        if self.maximum is None and abs(value) > STAT_LIMIT:
            raise fail(f"expected {self.allowed()} and at most {STAT_LIMIT}")
        if value.denominator > STAT_LIMIT:
            raise fail("expected at most 6 decimal places")
        return int(value) if self.kind == "int" else value

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.kind,
            "default": jsonable(self.default),
        }
        if self.choices:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["min"] = jsonable(self.minimum)
        if self.maximum is not None:
            out["max"] = jsonable(self.maximum)
        if self.unit:
            out["unit"] = self.unit
        if self.help:
            out["help"] = self.help
        return out


def Stat(name: str, kind: str, default: Any = None, **kw: Any) -> Param:  # noqa: N802
    """A token stat (CONTRACT.md's stat names)."""
    return Param(name, kind, default, **kw)


def Setting(name: str, kind: str, default: Any, **kw: Any) -> Param:  # noqa: N802
    """A rule setting; every "(ruling)" of RULES.md is one, with the ruling as default."""
    return Param(name, kind, default, **kw)


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class TokenState:
    """Everything about a token that changes during play. Immutable: moves make new ones."""

    cell: Cell | None = None
    mode: str = "walk"
    conditions: frozenset[str] = frozenset()  # prone, immobile, asphyxiating, stunned, ...
    encumbrance: str = "none"  # none | encumbered | heavy | immobile
    progress: Fraction = Fraction(0)  # fractional progress in `mode`, carried between turns
    # The cell a crossing of more than a turn goes to (RULES.md 0: a climb taller than a
    # turn's climbing), `progress` its share done; None: no such crossing under way.
    toward: Cell | None = None
    counters: tuple[tuple[str, int], ...] = ()  # e.g. consecutive heavy-encumbrance turns
    # A momentum flier's flight (RULES.md 6: heading, speed, altitude, landed); None for a
    # token that walks (or flies the generic way, over air and gaps on the ground graph).
    flight: FlightState | None = None

    def has(self, condition: str) -> bool:
        return condition in self.conditions

    def changed(self, **changes: Any) -> TokenState:
        """This state with ``changes``; the other fields carried over as they are.

        A rule hook makes a new state this way (or with :meth:`with_conditions`,
        :meth:`with_counter`, :meth:`set_counter`, :meth:`Token.moved`): the turn loop's
        hook memo counts a field carried over as not read by the hook
        (``engine/sim/hookmemo.py``). ``dataclasses.replace`` on a state works too, but it
        reads every field it copies, so such a hook's results are kept less widely."""
        return replace(self, **changes)

    def with_conditions(self, *add: str, remove: tuple[str, ...] = ()) -> TokenState:
        return replace(self, conditions=(self.conditions - set(remove)) | set(add))

    def counter(self, name: str) -> int:
        return dict(self.counters).get(name, 0)

    def with_counter(self, name: str, value: int) -> TokenState:
        d = dict(self.counters)
        d[name] = value
        return self._with_counters(tuple(sorted(d.items())))

    def set_counter(self, name: str, value: int) -> TokenState:
        """:meth:`with_counter`, except that a 0 counter is dropped (absent reads 0)."""
        d = {k: v for k, v in self.counters if k != name}
        if value:
            d[name] = value
        return self._with_counters(tuple(sorted(d.items())))

    def _with_counters(self, counters: tuple[tuple[str, int], ...]) -> TokenState:
        """This state with ``counters``. A plain state is copied field by field at once
        (what ``dataclasses.replace`` makes, several times sooner: rules change counters
        every turn); a subclass goes through ``replace``."""
        if type(self) is not TokenState:
            return replace(self, counters=counters)
        return _with(self, "counters", counters)

    def to_dict(self) -> dict[str, Any]:
        return (
            {
                "cell": list(self.cell) if self.cell is not None else None,
                "mode": self.mode,
                "conditions": sorted(self.conditions),
                "encumbrance": self.encumbrance,
                "progress": jsonable(self.progress),
                "counters": dict(self.counters),
            }
            | ({} if self.flight is None else {"flight": self.flight.to_dict()})
            | ({} if self.toward is None else {"toward": list(self.toward)})
        )


@dataclass(frozen=True)
class Token:
    """A token: validated stats (read-only) plus its state."""

    system: str
    stats: Mapping[str, Any]
    state: TokenState = field(default_factory=TokenState)
    id: str = "token"

    def __getitem__(self, name: str) -> Any:
        return self.stats[name]

    def with_state(self, state: TokenState) -> Token:
        """This token in ``state``: ``replace(token, state=state)``, made at once for a
        plain token (rules do this every turn)."""
        if type(self) is not Token:
            return replace(self, state=state)
        return _with(self, "state", state)

    def moved(self, **changes: Any) -> Token:
        """This token with its state's ``changes`` (:meth:`TokenState.changed`)."""
        return self.with_state(self.state.changed(**changes))


def _reduce_proxy(proxy: MappingProxyType[Any, Any]) -> tuple[Any, ...]:
    """Pickle a read-only mapping (a token's stats) as a read-only copy of its items."""
    return (_read_only, (dict(proxy),))


def _read_only(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


# Tokens keep their stats read-only (a mappingproxy, which pickle refuses on its own). A
# warm field cache ships to Dask workers pickled; pickling the proxy itself, not a copy
# per token, keeps the tokens that share one stats object sharing it there (the caches
# know equal tokens by their stats' identity).
copyreg.pickle(MappingProxyType, _reduce_proxy)


def parse_token_spec(spec: str | Mapping[str, Any]) -> dict[str, Any]:
    """``key=value,key=value``, a YAML/JSON file path, or a mapping -> raw stats dict."""
    if isinstance(spec, Mapping):
        return dict(spec)
    text = spec.strip()
    if (
        text
        and "=" not in text
        and (os.path.exists(text) or text.endswith((".yaml", ".yml", ".json")))
    ):
        return _read_token_file(text)
    out: dict[str, Any] = {}
    if not text:
        return out
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ArgumentError(
                role="token",
                given=f"'{spec}'",
                problem=f"'{part.strip()}' is not key=value; e.g. speed=30,fly=true",
            )
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _read_token_file(text: str) -> dict[str, Any]:
    """The stats in the YAML/JSON file ``text`` names (an error is about ``token``)."""
    from engine.sources import MAX_YAML_BYTES, load_json, load_yaml, read_bytes

    given = clip(text)
    if not os.path.exists(text):
        raise ArgumentError(
            role="token",
            given=given,
            problem="file not found; give key=value,... or a YAML/JSON file",
        )
    # A regular file within the cap; YAML or JSON with size, aliases and depth bounded:
    # any error (a YAML syntax error above all) is one line.
    try:
        # The reader words "PATH: <what> file ...": a NUL for <what> (no path holds
        # one) marks where the message names the argument.
        raw = read_bytes(text, "\0", MAX_YAML_BYTES, ArgumentError)
    except ArgumentError as exc:
        problem = literal(str(exc)).replace("\0", "{token}")
        raise ArgumentError(problem=problem, others=("token",)) from None
    try:
        if text.endswith(".json"):
            data = load_json(raw, given, ArgumentError)
        else:
            data = load_yaml(raw, given, ArgumentError)
    except ArgumentError as exc:  # worded "GIVEN: problem"
        problem = str(exc).removeprefix(f"{given}: ")
        raise ArgumentError(role="token", given=given, problem=problem) from None
    if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
        raise ArgumentError(
            role="token", given=given, problem="expected a mapping of stat names to values"
        )
    return dict(data)


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class CellCheck:
    """What a cell asks of a token: the check, its target, and its exact chance."""

    what: str  # e.g. "athletics (swim)"
    target: str  # the system's own target, e.g. "DC 6"
    p_success: Fraction
    check: Any = None  # the system's check object, for rolling
    #: Where a failure's effect depends on how badly it fails (D6's margin bands, a
    #: Whisperspace extreme failure): ``(degree, what it does, exact chance)`` per failing
    #: degree, worst last; their chances sum to ``1 - p_success``. Empty: one effect.
    failures: tuple[tuple[str, str, Fraction], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "what": self.what,
            "target": self.target,
            "p_success": float(self.p_success),
        }
        if self.failures:
            out["failures"] = [
                {"degree": d, "effect": e, "p": float(p), "p_exact": jsonable(p)}
                for d, e, p in self.failures
            ]
        return out


@dataclass(frozen=True)
class ClimbOdds:
    """A climb priced as one unit, in whole successes (RULES.md 2: Mythmaster skill climbs).

    Each turn one roll: a success (``p``) gains ``per_success`` (the system's unit); a failure
    gains nothing (a delay, not a fall); a slip (``q``, a natural 2) with ``slip`` loses one
    success's progress, and then a re-roll (success ``p``) or, above the foot, a fall.
    """

    per_success: Fraction
    p: Fraction
    q: Fraction
    slip: bool
    #: Each roll takes a whole turn (Mythmaster: climbing "uses all of your actions for the
    #: turn"): the climb starts at a turn boundary, so a path that moved earlier in the turn
    #: waits for the next one, and it ends on one.
    whole_turns: bool = False


@dataclass(frozen=True)
class ClimbRoll:
    """One roll of a climb's turn (:meth:`RuleSystem.climb_turn`), as a check event has it."""

    what: str
    target: str
    degree: str
    success: bool


@dataclass(frozen=True)
class ActSpec:
    """One of a system's actions besides moving that a token may take in a turn (issue 38):
    its name (``--act NAME``, a scenario token's ``acts``), how many of the turn's actions
    it takes, and the seed line it comes from. What it does to the moves around it is the
    system's (:meth:`RuleSystem.with_acts` records it, the rate and check hooks read it)."""

    name: str
    actions: int = 1
    help: str = ""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "actions": self.actions, "help": self.help}


# --------------------------------------------------------------------------- search state


@dataclass(frozen=True)
class SearchState:
    """The extra search state a system's rules carry along a path (RULES.md 0).

    Each state is one layer of the movement graph: ``tokens[s]`` is the token whose rates
    and checks cost the cells entered in state ``s``, ``modes[s]`` the terrain modes a step
    in that state may enter (None: every mode the token can use), and ``in_place`` the
    edges ``(from, to, turns)`` that change state without leaving the cell (standing up).
    A path starts in ``start``; ``main`` is the state whose costs describe the map.
    """

    names: tuple[str, ...]
    tokens: tuple[Token, ...]
    modes: tuple[frozenset[str] | None, ...]
    in_place: tuple[tuple[int, int, Fraction], ...] = ()
    start: int = 0
    main: int = 0


# --------------------------------------------------------------------------- the base


class RuleSystem:
    """Base class of every rule system. Subclasses set the ClassVars and override hooks.

    The hooks' contract (the turn loop relies on it):

    - **Pure.** A hook's result depends only on its arguments: the token (its stats and
      state), the settings, the terrain and pace it is given, and the dice where it takes
      them. It keeps nothing between calls and changes nothing it was given (tokens and
      states are frozen; a hook returns a new one).
    - **Reads through the state's methods.** The turn loop's hook memo
      (``engine/sim/hookmemo.py``) keeps each result by what the hook *read* of the token's
      state (the fields it looked at, the conditions it asked ``has()`` of, the counters it
      asked ``counter()`` of) and serves it to every state that reads alike. Make a new
      state with :meth:`TokenState.changed`, ``with_conditions``, ``with_counter``,
      ``set_counter`` or :meth:`Token.moved`: they carry the other fields over without
      reading them. ``dataclasses.replace`` on a state is right too, but it reads every
      field it copies, so the result is kept for fewer states.
    - **Dice are an input.** A hook that rolls is made every time; its result is never
      kept.

    ``tests/test_hookmemo.py`` holds every system's hooks to this: states from real runs,
    perturbed field by field, answer the same through the memo as called directly.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    source: ClassVar[str] = ""  # which seed / RULES.md section
    unit: ClassVar[str] = "ft"  # the unit of the system's own distances
    #: True: the token's distances are in the map's unit (generic: speed=30 on a 2 m map is
    #: 30 m), ``unit`` being only the default for a map that names none.
    unit_follows_map: ClassVar[bool] = False
    cell_size: ClassVar[Fraction] = Fraction(5)  # default cell, in `unit`
    turn_name: ClassVar[str] = "turn"
    turn_seconds: ClassVar[Fraction] = Fraction(6)
    actions_per_turn: ClassVar[int] = 1
    paces: ClassVar[tuple[str, ...]] = ("walk",)
    default_pace: ClassVar[str] = "walk"
    fastest_pace: ClassVar[str] = "walk"
    stats: ClassVar[tuple[Param, ...]] = ()
    settings: ClassVar[tuple[Param, ...]] = ()
    #: The actions besides moving a token may take in a turn (:class:`ActSpec`; ``--act``,
    #: a scenario token's ``acts``), priced by :meth:`with_acts`; () = none: the turn is
    #: its move.
    acts: ClassVar[tuple[ActSpec, ...]] = ()
    #: Most of the turn's actions the acts may take together; None: no limit (D6: every
    #: action beyond the first is -1D, none is refused).
    act_limit: ClassVar[int | None] = None
    #: Counters and conditions the rules write for the table and never read (D6: a
    #: collision's margin over Strength and ``injured``; the seed has no wound chart, so
    #: they are the GM's to apply). A logged run (``tacgrid run``, the viewer) keeps them in
    #: the token's state and its log; a run that keeps no log (a batch's) drops them as
    #: each turn closes (``engine.sim.Simulation``), so that turns that differ only in them
    #: are learned once.
    notes: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def describe_check(cls, what: str, target: str) -> tuple[str, str, str]:
        """One of this system's check events in words, for a replay's text: (skill, what it
        is rolled against, detail). The default reads the wording most systems give their
        checks, ``SKILL (DETAIL)`` (``swimming (moderate)``), and takes a target written
        ``EXPRESSION >= N`` as N; a system with another wording reads its own."""
        if ">=" in target:  # "21C: 2d10+9 >= 21", "1d20 + 4 >= 13": the number to reach
            target = target.rsplit(">=", 1)[1].strip()
        skill, sep, rest = what.partition(" (")
        if sep and rest.endswith(")") and skill:
            return skill, target, rest[:-1]
        return what, target, ""

    @classmethod
    def describe_degree(cls, degree: str) -> str:
        """A check's degree of success in words (``critical_success``: critical success)."""
        return degree.replace("_", " ")

    @classmethod
    def describe_effect(cls, what: str, degree: str) -> str:
        """What a check's result does in play, in the seed's terms, for a replay's text
        (D6's ``slip: half distance, -3D rest of round, -1D next``), or "" where the
        degree says it all (a success goes on, a failure stops)."""
        return ""

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.config: dict[str, Any] = {s.name: s.default for s in self.settings}
        for key, value in (settings or {}).items():
            spec = self._setting(key)
            self.config[key] = spec.parse(value, self.name, "set")

    # ----------------------------------------------------------------- metadata

    @classmethod
    def _setting(cls, key: str) -> Param:
        for s in cls.settings:
            if s.name == key:
                return s
        names = [s.name for s in cls.settings]
        listed = ", ".join(names) if names else "none"
        raise StatError(
            role="set",
            given=clip(key),
            problem=f"{cls.name} has no setting '{clip(key)}'"
            f"{did_you_mean(str(key)[:80], names)}; settings: {listed}",
        )

    @classmethod
    def stat_names(cls) -> list[str]:
        return [s.name for s in cls.stats]

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {
            "name": cls.name,
            "title": cls.title,
            "source": cls.source,
            "unit": cls.unit,
            "cell_size": jsonable(cls.cell_size),
            "turn": {
                "name": cls.turn_name,
                "seconds": jsonable(cls.turn_seconds),
                "actions": cls.actions_per_turn,
            },
            "paces": list(cls.paces),
            "default_pace": cls.default_pace,
            "acts": [a.describe() for a in cls.acts],
            "stats": [s.describe() for s in cls.stats],
            "settings": [s.describe() for s in cls.settings],
        }

    # ----------------------------------------------------------------- tokens

    def token(self, spec: str | Mapping[str, Any], *, token_id: str = "token") -> Token:
        """Validate a token's stats (unknown names and bad values raise one line)."""
        raw = parse_token_spec(spec)
        names = self.stat_names()
        stats: dict[str, Any] = {}
        for key in raw:
            if key not in names:
                raise StatError(
                    role="token",
                    given=clip(key),
                    problem=f"{self.name} has no stat '{clip(key)}'"
                    f"{did_you_mean(str(key)[:80], names)}; stats: {', '.join(names)}",
                )
        for s in self.stats:
            if s.name in raw and raw[s.name] is not None:
                stats[s.name] = s.parse(raw[s.name], role="token")
            elif s.default is not None:
                stats[s.name] = s.default
        self.validate(stats)
        tok = Token(system=self.name, stats=MappingProxyType(stats), id=token_id)
        return replace(tok, state=self.initial_state(tok))

    def validate(self, stats: dict[str, Any]) -> None:
        """Cross-stat checks (e.g. "needs speed or phys"); raise StatError."""

    def initial_state(self, token: Token) -> TokenState:
        return TokenState(encumbrance=self.encumbrance(token))

    # ----------------------------------------------------------------- hooks

    def rate(self, token: Token, mode: str, pace: str | None = None) -> Fraction:
        """Distance (in ``unit``) the token covers in ``mode`` in one turn at ``pace``.

        0 means the token cannot use that mode. Terrain ``cost`` divides it further.
        """
        raise NotImplementedError

    def rates(self, token: Token) -> dict[str, Any]:
        """The system's own movement figures (per action; per round and speed for d6)."""
        return {mode: self.rate(token, mode, self.default_pace) for mode in MODES}

    def encumbrance(self, token: Token) -> str:
        return "none"

    def cell_rate(self, token: Token, terrain: Terrain, pace: str | None = None) -> Fraction:
        """Rate (``unit`` per turn) through a cell of this terrain, before its ``cost``.

        Defaults to the rate of the terrain's mode; systems whose rate depends on the
        terrain's difficulty or height (climbing tables) override it.
        """
        return self.rate(token, terrain.move, pace)

    def refusal(self, token: Token, terrain: Terrain, pace: str | None = None) -> str | None:
        """Why the token cannot enter this terrain at all (None when it can)."""
        if terrain.move == "blocked":
            return f"{terrain.name} is blocked"
        if self.cell_rate(token, terrain, pace) <= 0:
            return f"{self.name}: this token cannot {terrain.move} ({terrain.name})"
        return None

    def cell_check(
        self, token: Token, terrain: Terrain, pace: str | None = None
    ) -> CellCheck | None:
        """The check entering a run of this terrain asks at ``pace``, or None."""
        return None

    def search_state(self, token: Token, pace: str) -> SearchState | None:
        """The state a path carries beyond the cell (None: the cell and the diagonal parity
        are all). Systems whose rules remember something along a path override it."""
        return None

    def check_period(self, token: Token, terrain: Terrain, pace: str) -> Fraction | None:
        """How the system counts moves for a run's check: a new move (and a new check on a
        run of this terrain) starts every ``check_period`` turns; None = once per run, however
        many turns it spans (one climb, one roll). Default: once per turn."""
        return Fraction(1)

    def round_paces(self, token: Token, pace: str) -> tuple[str, ...]:
        """The paces of the token's first turns before ``pace`` holds, when the rules limit
        how fast a pace changes (D6: two speed levels a round); () = ``pace`` from the start.
        Searches then cost a cell by the turn it is crossed in (:mod:`engine.timed`)."""
        return ()

    def turn_pace(self, token: Token, pace: str) -> str:
        """The pace this turn's move may use on the way to ``pace`` (:meth:`round_paces`)."""
        return (self.round_paces(token, pace) or (pace,))[0]

    def paced(self, token: Token, pace: str, moved: bool) -> Token:
        """The token after a turn at ``pace`` (``moved``: it left its cell): where the rules
        remember the last turn's pace (D6's current speed). Default: nothing to remember."""
        return token

    def turn_checks(
        self, token: Token, terrains: list[Terrain], pace: str | None = None
    ) -> list[CellCheck] | None:
        """The checks one turn's move over ``terrains`` (in order) asks, when the system rolls
        per turn rather than per run of terrain (D6: one roll at the hardest cell); None = a
        check on each run of terrain, as :meth:`check_period` counts moves."""
        return None

    #: True: :meth:`turn_checks` over a turn's terrains is the same as over them with each
    #: run of one terrain entered in a row given once (D6 rolls once per run or at the
    #: hardest); the loop then keeps a turn's checks by those runs, which many ways share.
    turn_checks_by_runs: ClassVar[bool] = False

    #: True: ``gap`` cells are never entered by a step; a run of them in a straight line is
    #: crossed by one jump edge (:meth:`jump`), with a run-up or standing (RULES.md 4).
    jumps_gaps: ClassVar[bool] = False

    def jump(
        self, token: Token, width: Fraction, run_up: bool, gaps: tuple[Terrain, ...]
    ) -> tuple[str | None, CellCheck | None]:
        """A jump over ``width`` (the system's unit) of the gap cells ``gaps``, with a run-up
        (at least one step straight before, in the jump's direction) or standing: (why it
        cannot be made, or None; the check it asks, or None). Only for ``jumps_gaps``."""
        return (f"{self.name} has no jumping rules", None)

    def leap(
        self, token: Token, rise: Fraction, run_up: bool
    ) -> tuple[str | None, CellCheck | None] | None:
        """A step up onto a walkable cell ``rise`` (the system's unit) higher than the last
        (their ``height``s), with a run-up or standing: None when rises ask nothing (the
        default: a plain step); else (why it cannot be made, or None; its check, or None)."""
        return None

    def on_failure(self, check: CellCheck) -> str:
        """What failing ``check`` does to a move (the path's ``on_failure``): ``delay`` (no
        progress for now; it costs time, and does not count against ``p_no_failure``),
        ``fall``, ``stop`` (the move ends before the cell), or ``by_margin`` (it depends on
        how badly the roll fails: the check's ``failures`` list each band). Default: stop."""
        return "stop"

    def held(self, token: Token) -> str | None:
        """Why the token may not move this turn, in a few words (a round lost to a failed
        roll, unconscious), or None: it moves. Asked after :meth:`start_turn`."""
        return None

    def goes_on(self, check: CellCheck, degree: str, success: bool) -> bool:
        """Whether a roll of ``degree`` on ``check`` lets the token into the cell that asked
        it and on with its move, :meth:`apply_check`'s effects applied (a Whisperspace
        swimmer who fails swims on, slower). Default: a success only."""
        return success

    def end_move(self, token: Token) -> Token:
        """The end of one of the token's moves as the system counts them in a turn
        (:meth:`check_period`: a Whisperspace Move action): the effects that last "the rest
        of that Move action" end. Default: nothing ends."""
        return token

    def failure_share(self, check: CellCheck, degree: str) -> Fraction | None:
        """For a system that rolls once a turn (:meth:`turn_checks`): the share of the move
        the token set out to make that turn which a failed roll of ``degree`` still makes,
        measured in time and rounded down to whole cells (D6's bands: all, half, a
        quarter). Default None: the move ends before the cell that asked the check."""
        return None

    def failure_share_of(self) -> str:
        """What :meth:`failure_share` is a share of: ``planned``, the move the token set
        out to make that turn, or ``speed``, a whole turn's move at its pace (no further
        than it set out to go either way). Default: planned."""
        return "planned"

    def climb_turn(
        self, token: Token, terrain: Terrain, dice: Any
    ) -> tuple[Token, list[ClimbRoll]]:
        """One turn on a climb priced by :meth:`climb_odds`, into a cell of ``terrain``: its
        rolls (each an event in ``dice``'s log, and one :class:`ClimbRoll` each, in order,
        for the turn loop's check events) and the token after them: ``state.progress`` the
        share of the cell climbed so far (1 or more: it is in), condition ``falling`` where
        it falls. Every system whose :meth:`climb_odds` answers overrides it."""
        raise NotImplementedError(f"{self.name} prices climbs by climb_odds but cannot play them")

    def climb_turn_outcomes(
        self, token: Token, terrain: Terrain
    ) -> list[tuple[Token, Fraction]] | None:
        """What :meth:`climb_turn` may make of ``token`` into a cell of ``terrain``, each
        token with its exact chance (for ``tacgrid solve``: docs/solve.md, "Climbs over
        turns"); None where the system does not list them (the solve refuses the climb)."""
        return None

    def climb_odds(
        self, token: Token, terrain: Terrain, pace: str | None = None
    ) -> ClimbOdds | None:
        """How a run of ``terrain`` climbs when it is one climb priced in whole successes
        (:class:`ClimbOdds`); None: the run is priced cell by cell at its rate."""
        return None

    def apply_check(self, token: Token, what: str, degree: str) -> Token:
        """A check result's effect on the token (penalties, conditions, falls)."""
        return token

    def with_acts(self, token: Token, acts: tuple[str, ...]) -> Token:
        """The token with ``acts`` (names of :attr:`acts`) as this turn's other actions,
        recorded in its state for the rate and check hooks: counter ``actions`` (the turn's
        actions they take together) and ``act_<name>`` (how many of each); an earlier
        turn's are replaced. An unknown name, or acts beyond :attr:`act_limit`, raise one
        line about the argument ``act``. A system that prices acts some other way
        overrides it, and its rate, refusal and check hooks read what it records."""
        known = {a.name: a for a in self.acts}
        for name in acts:
            if name not in known:
                raise StatError(role="act", given=clip(str(name)), problem=self._no_act(name))
        total = sum(known[name].actions for name in acts)
        if self.act_limit is not None and total > self.act_limit:
            raise StatError(
                role="act",
                given=", ".join(acts),
                problem=f"these take {total} actions; a {self.name} {self.turn_name} has "
                f"{self.act_limit}",
            )
        counts = {f"act_{a.name}": list(acts).count(a.name) for a in self.acts}
        counts["actions"] = total
        state = token.state
        if all(state.counter(name) == n for name, n in counts.items()):
            return token  # the same acts as the last turn's (or none again)
        for name, n in counts.items():
            state = state.set_counter(name, n)
        return token.with_state(state)

    def _no_act(self, name: str) -> str:
        """Why ``name`` is no act of this system, naming the ones it has."""
        if not self.acts:
            return (
                f"{self.name} declares no actions besides moving (its {self.turn_name} is its move)"
            )
        names = [a.name for a in self.acts]
        return (
            f"{self.name} has no act '{clip(str(name))}'{did_you_mean(str(name)[:80], names)}; "
            f"acts: {', '.join(names)}"
        )

    def act_pace(self, token: Token, pace: str) -> str:
        """The fastest pace no faster than ``pace`` that the token's acts this turn
        (:meth:`with_acts`) leave for moving (Whisperspace: a sprint is 3 Move actions, so
        one other action leaves a run); a faster pace is refused by :meth:`refusal`. The
        pace of a turn, a path or a reach whose pace was not named. Default: ``pace``."""
        return pace

    def start_turn(self, token: Token, dice: Any) -> Token:
        """Upkeep at the start of the token's turn (e.g. encumbrance checks)."""
        return token

    def end_turn(self, token: Token, dice: Any) -> Token:
        return token

    def end_turn_outcomes(self, token: Token) -> list[tuple[Token, Fraction]] | None:
        """What :meth:`end_turn` may make of ``token``, each with its exact chance (what a
        failed check leaves after the turn, for ``tacgrid solve``: docs/solve.md); None
        where it rolls and the system does not list its outcomes. The default: the one
        token where it rolls nothing."""
        from engine.dice import Dice

        dice = Dice(0)
        got = self.end_turn(token, dice)
        return None if dice.log else [(got, Fraction(1))]

    def start_turn_outcomes(self, token: Token) -> list[tuple[Token, Fraction]] | None:
        """What :meth:`start_turn` may make of ``token``, each with its exact chance (a roll
        as the turn starts, for ``tacgrid solve``: docs/solve.md); None where it rolls and
        the system does not list its outcomes. The default: the one token where it rolls
        nothing."""
        from engine.dice import Dice

        dice = Dice(0)
        got = self.start_turn(token, dice)
        return None if dice.log else [(got, Fraction(1))]

    def extra_stats(self, token: Token) -> dict[str, Any]:
        """System-specific figures added to the ``stats`` report."""
        return {}

    @classmethod
    def flies_with_momentum(cls) -> bool:
        """Whether the system has flight rules (RULES.md 6) that the turn loop flies; the
        generic system's fliers cross air and gap cells on the ground graph instead."""
        return cls.flight is not RuleSystem.flight

    def flight(self, token: Token, model: Any) -> FlightRules | None:
        """The token's flight rules on ``model`` (RULES.md 6), or None when this system or
        this token cannot fly."""
        return None

    def flight_rolls(
        self, token: Token, events: tuple[dict[str, Any], ...], dice: Any
    ) -> tuple[Token, bool]:
        """The checks one flight turn asks, rolled now with ``dice`` (each roll an event in
        its log): ``events`` are the flight rules' events of the turn as chosen (a
        Speedpoints ``fall``: a descent faster than is safe). Returns the token after them
        and whether the turn is flown as chosen (False: the flier fell, and the turn loop
        flies what is left of it, :func:`engine.sim.flight.fly_turn`). Default: the
        system's fliers face no check (Mythmaster's seed gives them none)."""
        return token, True

    def flight_refusal(self, token: Token) -> str | None:
        """Why this token cannot fly, in one line (None: it can, or the system says nothing
        more than that it has no flight rules)."""
        return None

    @classmethod
    def parse_check(cls, text: str) -> Any:
        """The system's check for ``odds``/``roll`` (CONTRACT.md's CHECK syntax)."""
        from engine.errors import CheckError

        raise CheckError(role="system", given=cls.name, problem="this system has no checks")

    # ----------------------------------------------------------------- derived

    def per_turn(self, token: Token) -> dict[str, Fraction]:
        """Most cells of each mode crossed in a turn spent wholly moving (default cell)."""
        return {mode: self.rate(token, mode, self.fastest_pace) / self.cell_size for mode in MODES}

    def stats_report(self, token: Token) -> dict[str, Any]:
        """The ``stats`` JSON (CONTRACT.md)."""
        report: dict[str, Any] = {
            "system": self.name,
            "unit": self.unit,
            "cell_size": jsonable(self.cell_size),
            "turn": {"name": self.turn_name, "seconds": jsonable(self.turn_seconds)},
            "stats": jsonable(dict(token.stats)),
            "rates": jsonable(self.rates(token)),
            "per_turn": jsonable(self.per_turn(token)),
            # per_turn is at the fastest pace (CONTRACT.md); paths and reach move at the pace
            # asked, so every pace's figures are given too.
            "per_turn_pace": self.fastest_pace,
            "per_turn_by_pace": jsonable(
                {
                    pace: {m: self.rate(token, m, pace) / self.cell_size for m in MODES}
                    for pace in self.paces
                }
            ),
            "encumbrance": token.state.encumbrance,
            "state": token.state.to_dict(),
            "settings": jsonable(self.config),
        }
        report.update(jsonable(self.extra_stats(token)))
        return report
