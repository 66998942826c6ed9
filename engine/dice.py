"""Seeded dice, exact dice distributions and D6 die codes.

The stream
----------
A :class:`Dice` holds one ``random.Random(seed)`` (Mersenne Twister) and never touches the
global ``random``. It reads the generator only through ``getrandbits``, which returns raw
32-bit MT words: that output is fixed by the algorithm, so the same seed gives the same rolls on
every platform and Python version (``randint``'s internals are not promised to stay the same).

A die of ``s`` sides takes the next word ``w``; if ``w < 2**32 - 2**32 % s`` the face is
``w % s + 1``, otherwise the word is thrown away and the next one is tried (rejection keeps
every face exactly equally likely; it rejects fewer than 1 word in 10**7 for dice up to d100).

Words are drawn in blocks into a buffer. Single rolls and the batch paths
(:meth:`Dice.faces_array`, :meth:`Dice.peek_faces`, a check's ``roll_many``) consume the same
words in the same order, so rolling ``n`` checks in one batch gives exactly the results of
rolling them one at a time from the same state, and leaves the stream in the same state.

Every public roll records an event in :attr:`Dice.log`: a :class:`RollEvent` per roll, or one
:class:`BatchEvent` per batch (a batch does not allocate an event per roll; that is what makes
it fast). A check fills in what the roll decided with :meth:`Dice.decide`.

Exact distributions
-------------------
A distribution is a ``dict[int, Fraction]`` from total to probability, summing to exactly 1.
Helpers: :func:`die_dist`, :func:`sum_dist`, :func:`convolve`, :func:`add_constant`,
:func:`keep_highest`, :func:`keep_lowest`, :func:`prob_at_least`, :func:`wild_die_dist`,
:func:`d6_pool_dist`.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from engine.errors import CheckError
from engine.lazy import numpy as np

Dist = dict[int, Fraction]
"""A probability distribution over integer totals; values sum to exactly 1."""

_WORD = 1 << 32
_CHUNK = 4096  # most words drawn per refill for single rolls; any size gives the same stream
#: Words of a new Dice's first refill; each refill after draws twice as many, up to _CHUNK
#: (a run of a few dozen rolls does not pay for thousands of words).
_FIRST = 64

_D6_LIMIT = _WORD - _WORD % 6  # a d6 face's words are those below this (Dice.face)
#: A die code's roll expression by (the code's id, wild): (the code, the expression)
#: (:meth:`Dice.roll_code`), made once per code object.
_EXPRESSIONS: dict[tuple[int, bool], tuple[Any, str]] = {}

WILD_ONE_SETTINGS = ("complication", "remove_highest", "none")
"""Values of the D6 ``wild_one`` setting (RULES.md section 3)."""

WILD_TAIL_ROUNDS = 16
"""The wild die's exact distribution follows up to 16 explosions in a row.

Sixteen sixes in a row on the wild die has probability ``6**-16`` (about 3.6e-13), the first
power of 1/6 below the 1e-12 bound. That tail is kept, not dropped: its whole mass sits on the
smallest value it can produce, ``6 * 16 + 1 = 97``, so every distribution still sums to exactly
1 and ``P(total >= t)`` is exact for every ``t`` up to that value (see :class:`PoolDist`).
"""

WILD_TAIL_MASS = Fraction(1, 6**WILD_TAIL_ROUNDS)
"""Probability mass of the wild die's truncated tail, ``6**-16`` (below 1e-12)."""


# ---------------------------------------------------------------------------------------------
# Exact distributions
# ---------------------------------------------------------------------------------------------


def die_dist(sides: int) -> Dist:
    """One fair die: each face 1..sides with probability 1/sides.

    >>> die_dist(4)[3]
    Fraction(1, 4)
    """
    _check_sides(sides)
    p = Fraction(1, sides)
    return {face: p for face in range(1, sides + 1)}


def convolve(a: Mapping[int, Fraction], b: Mapping[int, Fraction]) -> Dist:
    """Distribution of the sum of two independent totals.

    >>> convolve(die_dist(2), die_dist(2))
    {2: Fraction(1, 4), 3: Fraction(1, 2), 4: Fraction(1, 4)}
    """
    out: Dist = {}
    for x, px in a.items():
        for y, py in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + px * py
    return dict(sorted(out.items()))


def add_constant(dist: Mapping[int, Fraction], constant: int) -> Dist:
    """Shift every total by ``constant`` (a modifier or pips).

    >>> add_constant({1: Fraction(1)}, 2)
    {3: Fraction(1, 1)}
    """
    return {total + constant: p for total, p in dist.items()}


def sum_dist(n: int, sides: int) -> Dist:
    """Distribution of the sum of ``n`` dice of ``sides`` sides (``n = 0`` is a sure 0).

    >>> sum_dist(2, 6)[7]
    Fraction(1, 6)
    """
    if n < 0:
        raise ValueError(f"dice count must be >= 0, got {n}")
    counts = _sum_counts(n, sides)
    denom = sides**n
    return {total: Fraction(c, denom) for total, c in counts.items()}


def keep_highest(n: int, sides: int, keep: int = 1) -> Dist:
    """Roll ``n`` dice, add the ``keep`` highest.

    >>> keep_highest(2, 12)[12]  # a Whisperspace bonus die: 23 of 144 pairs have a 12
    Fraction(23, 144)
    """
    return _keep(n, sides, keep, highest=True)


def keep_lowest(n: int, sides: int, keep: int = 1) -> Dist:
    """Roll ``n`` dice, add the ``keep`` lowest.

    >>> keep_lowest(2, 12)[1]
    Fraction(23, 144)
    """
    return _keep(n, sides, keep, highest=False)


def prob_at_least(dist: Mapping[int, Fraction], target: int) -> Fraction:
    """``P(total >= target)``, exactly."""
    return sum((p for total, p in dist.items() if total >= target), Fraction(0))


def total_mass(dist: Mapping[int, Fraction]) -> Fraction:
    """Sum of all probabilities (exactly 1 for every distribution built here)."""
    return sum(dist.values(), Fraction(0))


def _check_sides(sides: int) -> None:
    if not 1 <= sides < _WORD:
        raise ValueError(f"a die needs 1 to 2**32 - 1 sides, got {sides}")


def _keep(n: int, sides: int, keep: int, *, highest: bool) -> Dist:
    _check_sides(sides)
    if not 1 <= keep <= n:
        raise ValueError(f"keep must be 1..{n} of {n} dice, got {keep}")
    denom = sides**n
    if keep == 1:
        # Closed form: P(max <= v) = (v/s)**n, so P(max == v) = v**n - (v-1)**n over s**n.
        if highest:
            return {v: Fraction(v**n - (v - 1) ** n, denom) for v in range(1, sides + 1)}
        return {
            v: Fraction((sides - v + 1) ** n - (sides - v) ** n, denom) for v in range(1, sides + 1)
        }
    # General case: walk the sorted multisets, each weighted by its number of orderings.
    counts: dict[int, int] = {}
    for combo in itertools.combinations_with_replacement(range(1, sides + 1), n):
        orderings = math.factorial(n)
        for _, group in itertools.groupby(combo):
            orderings //= math.factorial(len(list(group)))
        kept = combo[n - keep :] if highest else combo[:keep]
        counts[sum(kept)] = counts.get(sum(kept), 0) + orderings
    return {total: Fraction(c, denom) for total, c in sorted(counts.items())}


# Integer-count arithmetic: the D6 pool distributions have denominators like 6**20, and adding
# integers over a common denominator is far faster than adding Fractions.


@functools.lru_cache(maxsize=256)
def _sum_counts_cached(n: int, sides: int) -> tuple[tuple[int, int], ...]:
    counts: dict[int, int] = {0: 1}
    one = {face: 1 for face in range(1, sides + 1)}
    for _ in range(n):
        counts = _conv_counts(counts, one)
    return tuple(sorted(counts.items()))


def _sum_counts(n: int, sides: int) -> dict[int, int]:
    _check_sides(sides)
    return dict(_sum_counts_cached(n, sides))


def _conv_counts(a: Mapping[int, int], b: Mapping[int, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for x, cx in a.items():
        for y, cy in b.items():
            out[x + y] = out.get(x + y, 0) + cx * cy
    return out


# ---------------------------------------------------------------------------------------------
# D6 die codes and the wild die
# ---------------------------------------------------------------------------------------------

_CODE_RE = re.compile(r"^\s*(\d+)\s*[dD]\s*(?:([+-])\s*(\d+))?\s*$")


#: Die codes read so far, by their text (:meth:`DieCode.parse`).
_PARSED: dict[str, DieCode] = {}


@dataclass(frozen=True, order=True)
class DieCode:
    """A D6 die code ``XD+Y``: X six-sided dice plus Y pips (Y may be negative).

    Three pips make one die (seed 003: "1D = 3 pips"), so a code is written with 0-2 pips:
    ``DieCode.parse("2D+4")`` reads as ``3D+1``. Negative pips stay as written (``2D-1``).

    >>> DieCode.parse("3D+2").pips_total  # seed 003: Strength 3D+2 carries 11 medium items
    11
    """

    dice: int
    pips: int = 0

    @classmethod
    def parse(cls, text: str) -> DieCode:
        """Read ``3D+2``, ``4D``, ``2D-1`` (case and spaces do not matter)."""
        if cls is DieCode and type(text) is str:
            got = _PARSED.get(text)
            if got is None:
                got = cls._parse(text)
                if len(_PARSED) < 4096:
                    _PARSED[text] = got  # codes are frozen: one per text serves
            return got
        return cls._parse(text)

    @classmethod
    def _parse(cls, text: str) -> DieCode:
        m = _CODE_RE.match(text)
        if m is None:
            raise CheckError(
                f"die code '{text}': expected dice then D then optional +/- pips, e.g. 3D+2"
            )
        dice = int(m.group(1))
        pips = int(m.group(3) or 0) * (-1 if m.group(2) == "-" else 1)
        return cls.normalised(dice, pips)

    @classmethod
    def normalised(cls, dice: int, pips: int) -> DieCode:
        """A code with pips of 3 or more carried into whole dice (3 pips = 1D)."""
        if pips >= 3:
            dice, pips = dice + pips // 3, pips % 3
        return cls(dice, pips)

    @classmethod
    def from_pips(cls, pips: int) -> DieCode:
        """The code worth ``pips`` pips: ``from_pips(11) == DieCode(3, 2)`` (3D+2)."""
        if pips < 0:
            raise ValueError(f"pips must be >= 0, got {pips}")
        return cls(pips // 3, pips % 3)

    @property
    def pips_total(self) -> int:
        """The code's worth in pips: 3 per die plus the pips."""
        return 3 * self.dice + self.pips

    def minus_dice(self, n: int) -> DieCode:
        """The code with ``n`` fewer dice, never below 0D (the pips stay)."""
        return DieCode(max(0, self.dice - n), self.pips)

    def with_actions(self, actions: int) -> DieCode:
        """The code after the multi-action penalty: -1D per action beyond the first.

        >>> str(DieCode.parse("4D").with_actions(2))  # seed 003: Rhen walks and fires
        '3D'
        """
        if actions < 1:
            raise ValueError(f"actions must be >= 1, got {actions}")
        return self.minus_dice(actions - 1)

    def __str__(self) -> str:
        if self.pips == 0:
            return f"{self.dice}D"
        return f"{self.dice}D{self.pips:+d}"


def wild_die_dist() -> Dist:
    """The wild die alone: 1-5 as rolled, a 6 rolls again and adds, repeatedly.

    ``P(6k + r) = 6**-(k+1)`` for ``r`` in 1..5. Exact for the first :data:`WILD_TAIL_ROUNDS`
    explosions; the remaining mass :data:`WILD_TAIL_MASS` (``6**-16``, below 1e-12) sits on
    97, the least any longer chain can total. The distribution sums to exactly 1.
    """
    return dict(_wild_counts_dist())


@functools.lru_cache(maxsize=1)
def _wild_counts_dist() -> tuple[tuple[int, Fraction], ...]:
    counts = _wild_counts()
    denom = 6**WILD_TAIL_ROUNDS
    return tuple((v, Fraction(c, denom)) for v, c in sorted(counts.items()))


def _wild_counts() -> dict[int, int]:
    """Wild die weights over ``6**WILD_TAIL_ROUNDS`` (the tail lumped on its least value)."""
    k_max = WILD_TAIL_ROUNDS
    counts = {6 * k + r: 6 ** (k_max - k - 1) for k in range(k_max) for r in range(1, 6)}
    counts[6 * k_max + 1] = 1
    return counts


@dataclass(frozen=True)
class PoolDist:
    """The exact distribution of a D6 pool's total, with what its truncation cost.

    ``tail_mass`` is the probability of outcomes the wild die's truncation approximated
    (``6**-16`` with a wild die, else 0). Those outcomes are counted at totals of at least
    ``exact_up_to``, as are the real ones, so ``P(total >= t)`` (and with it every check
    against a number ``t <= exact_up_to``) is exact; ``exact_up_to`` is None when nothing is
    truncated.
    """

    dist: Mapping[int, Fraction]
    tail_mass: Fraction
    exact_up_to: int | None


def d6_pool_dist(code: DieCode, *, wild: bool = True, wild_one: str = "complication") -> PoolDist:
    """Exact distribution of a D6 pool total (see :meth:`Dice.roll_code` for the rules).

    With ``wild`` one die of the pool is the wild die. ``wild_one``: ``complication`` and
    ``none`` leave a 1 on it counted as 1; ``remove_highest`` removes that 1 and the highest
    other die from the total. A pool of 0D totals its pips.

    >>> d6_pool_dist(DieCode(1), wild=True).dist[7]  # a 6, then a 1
    Fraction(1, 36)
    """
    if wild_one not in WILD_ONE_SETTINGS:
        raise ValueError(f"wild_one must be one of {', '.join(WILD_ONE_SETTINGS)}")
    items, tail, exact_up_to = _pool_cached(code.dice, code.pips, wild, wild_one)
    return PoolDist(dict(items), tail, exact_up_to)


@functools.lru_cache(maxsize=256)
def _pool_cached(
    dice: int, pips: int, wild: bool, wild_one: str
) -> tuple[tuple[tuple[int, Fraction], ...], Fraction, int | None]:
    if dice <= 0:
        return ((pips, Fraction(1)),), Fraction(0), None
    if not wild:
        counts = _sum_counts(dice, 6)
        denom = 6**dice
        tail, exact_up_to = Fraction(0), None
    else:
        k_max = WILD_TAIL_ROUNDS
        regular = _sum_counts(dice - 1, 6)
        wild_counts = _wild_counts()
        denom = 6 ** (dice - 1 + k_max)
        if wild_one == "remove_highest":
            # Wild 1 (probability 1/6): the total is the other dice less their highest.
            del wild_counts[1]
            counts = _conv_counts(regular, wild_counts)
            lift = 6 ** (k_max - 1)  # 1/6 * c / 6**(n-1) == c * 6**(K-1) / 6**(n-1+K)
            for total, c in sum_minus_max_counts(dice - 1).items():
                counts[total] = counts.get(total, 0) + c * lift
        else:
            counts = _conv_counts(regular, wild_counts)
        tail = WILD_TAIL_MASS
        exact_up_to = 6 * k_max + 1 + (dice - 1) + pips
    items = tuple(sorted((total + pips, Fraction(c, denom)) for total, c in counts.items()))
    return items, tail, exact_up_to


def sum_minus_max_counts(n: int) -> dict[int, int]:
    """Counts over ``6**n`` of (sum of n d6) - (their highest); n = 0 gives 0."""
    states: dict[tuple[int, int], int] = {(0, 0): 1}  # (highest so far, sum) -> count
    for _ in range(n):
        nxt: dict[tuple[int, int], int] = {}
        for (high, total), c in states.items():
            for face in range(1, 7):
                key = (max(high, face), total + face)
                nxt[key] = nxt.get(key, 0) + c
        states = nxt
    out: dict[int, int] = {}
    for (high, total), c in states.items():
        out[total - high] = out.get(total - high, 0) + c
    return out


# ---------------------------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RollEvent:
    """One roll: what was rolled, the faces in the order drawn, the total, what it decided.

    ``kept``/``dropped`` name the faces a keep-highest/lowest or a wild-die removal kept and
    dropped; ``wild`` is the wild die's chain of faces (first face, then each re-roll);
    ``note`` flags things like a complication.
    """

    expression: str
    faces: tuple[int, ...]
    total: int
    decided: str = ""
    kept: tuple[int, ...] = ()
    dropped: tuple[int, ...] = ()
    wild: tuple[int, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "expression": self.expression,
            "faces": list(self.faces),
            "total": self.total,
            "decided": self.decided,
            "kept": list(self.kept),
            "dropped": list(self.dropped),
            "wild": list(self.wild),
            "note": self.note,
        }

    def logged(self, token: str) -> dict[str, Any]:
        """A run's ``roll`` event for ``token`` (the turn loop logs every roll)."""
        return {"type": "roll", "token": token, **self.to_dict()}


@dataclass(frozen=True)
class BatchEvent:
    """A batch of ``count`` rolls of one check, summarised as counts of each decision."""

    expression: str
    count: int
    counts: tuple[tuple[str, int], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: expression, count and ``counts`` as a name -> count mapping."""
        return {
            "batch": True,
            "expression": self.expression,
            "count": self.count,
            "counts": dict(self.counts),
        }


Event = RollEvent | BatchEvent

_new = object.__new__


def _event(
    expression: str,
    faces: tuple[int, ...],
    total: int,
    decided: str = "",
    kept: tuple[int, ...] = (),
    dropped: tuple[int, ...] = (),
    wild: tuple[int, ...] = (),
    note: str = "",
) -> RollEvent:
    """``RollEvent(...)``, made directly: the frozen dataclass's own __init__ sets each field
    through object.__setattr__; its __dict__ filled at once is the same event, faster."""
    event = _new(RollEvent)
    d = event.__dict__
    d["expression"] = expression
    d["faces"] = faces
    d["total"] = total
    d["decided"] = decided
    d["kept"] = kept
    d["dropped"] = dropped
    d["wild"] = wild
    d["note"] = note
    return event


# ---------------------------------------------------------------------------------------------
# The seeded generator
# ---------------------------------------------------------------------------------------------


def _faces_from_words(words: np.ndarray, sides: int) -> np.ndarray:
    """Accepted words to faces 1..sides, as :meth:`Dice.face` maps one word."""
    faces = (words % np.uint32(sides)).astype(np.int64)
    faces += 1
    return faces


class Dice:
    """A seeded dice roller; every roll it makes is recorded in :attr:`log`.

    ``seed`` is any int (``random.Random`` seeds with its absolute value, so ``-5`` and ``5``
    give the same stream); record it with the run so the run can be replayed.

    >>> d = Dice(7)
    >>> e = d.roll(2, 10, 3)
    >>> Dice(7).roll(2, 10, 3) == e  # same seed, same rolls
    True
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.log: list[Event] = []
        self._rng = random.Random(seed)
        #: The words drawn and not yet thrown away, read from ``_pos`` on: as a numpy array
        #: (``_buf``, for the batch paths) or as Python ints (``_words``, for :meth:`face`,
        #: without numpy's per-item cost), or both; each made from the other when asked.
        self._buf: np.ndarray | None = None
        self._words: list[int] | None = []
        self._pos = 0
        self._block = _FIRST

    def events(self) -> list[Event]:
        """Every event recorded so far, oldest first (the list itself, not a copy)."""
        return self.log

    def getstate(self) -> tuple[object, bytes, int]:
        """The stream's position (generator state and unread words), for undo and forks."""
        return (self._rng.getstate(), self._array().tobytes(), self._pos)

    def setstate(self, state: tuple[object, bytes, int]) -> None:
        """Return to a position saved by :meth:`getstate`: the same rolls follow."""
        rng_state, buf, pos = state
        self._rng.setstate(rng_state)  # type: ignore[arg-type]
        self._buf = np.frombuffer(buf, dtype=np.uint32).copy()
        self._words = None
        self._pos = pos

    # -- the word stream ------------------------------------------------------------------

    def _array(self) -> np.ndarray:
        """The buffer as a uint32 array (made from the Python ints where only they are)."""
        buf = self._buf
        if buf is None:
            buf = self._buf = np.array(self._words, dtype=np.uint32)
        return buf

    def _draw(self, m: int) -> bytes:
        """``m`` new MT words, little-endian. ``getrandbits(32 m)`` is m MT words, the first
        drawn in the lowest bits: the same sequence m calls of getrandbits(32) give."""
        self._block = min(2 * self._block, _CHUNK)
        return self._rng.getrandbits(32 * m).to_bytes(4 * m, "little")

    def _ensure(self, n: int) -> None:
        """Make at least ``n`` unconsumed words available in the buffer (as an array)."""
        buf = self._array()
        avail = len(buf) - self._pos
        if avail >= n:
            return
        raw = self._draw(max(n - avail, self._block))
        new = np.frombuffer(raw, dtype="<u4").astype(np.uint32)
        self._buf = np.concatenate((buf[self._pos :], new))
        self._words = None
        self._pos = 0

    def _read_words(self) -> list[int]:
        """The buffer as Python ints, refilled first (as :meth:`_ensure` would, a block of
        words) when every word of it is read: called when ``_words`` runs out."""
        if self._buf is not None and self._pos < len(self._buf):
            words = self._buf.tolist()
        else:
            m = self._block
            words = list(struct.unpack(f"<{m}I", self._draw(m)))
            self._buf = None
            self._pos = 0
        self._words = words
        return words

    def face(self, sides: int) -> int:
        """Draw one die face. Low level: records nothing, so callers record the roll."""
        limit = _WORD - _WORD % sides
        words = self._words
        while True:
            if words is None or self._pos >= len(words):
                words = self._read_words()
            pos = self._pos
            word = words[pos]
            self._pos = pos + 1
            if word < limit:
                return word % sides + 1

    def _d6(self, n: int) -> list[int]:
        """``n`` faces of a d6: what ``n`` calls of ``face(6)`` draw, in one loop."""
        out: list[int] = []
        words = self._words
        pos = self._pos
        while len(out) < n:
            if words is None or pos >= len(words):
                self._pos = pos
                words = self._read_words()
                pos = self._pos
            word = words[pos]
            pos += 1
            if word < _D6_LIMIT:
                out.append(word % 6 + 1)
        self._pos = pos
        return out

    def _scan(self, count: int, sides: int) -> tuple[np.ndarray, int]:
        """The words of the next ``count`` accepted faces, and how many words they span.

        Consumes nothing. Rejected words (rarer than 1 in 10**7) are skipped over, exactly as
        :meth:`face` skips them.
        """
        _check_sides(sides)
        limit = _WORD - _WORD % sides
        need = count
        while True:
            self._ensure(need)
            words = self._array()[self._pos : self._pos + need]
            if limit == _WORD:
                return words[:count], count
            ok = words < limit
            if need == count and ok.all():
                return words, count
            idx = np.flatnonzero(ok)
            if len(idx) >= count:
                return words[idx[:count]], int(idx[count - 1]) + 1
            need += count - len(idx) + 16  # a rejected word: look a little further

    def peek_faces(self, count: int, sides: int) -> np.ndarray:
        """The next ``count`` faces as an int64 array, without consuming them.

        Batch code peeks more faces than it may need, works out how many it used, then calls
        :meth:`skip_faces` with that number. Low level: records nothing.
        """
        if count <= 0:
            return np.empty(0, dtype=np.int64)
        words, _ = self._scan(count, sides)
        return _faces_from_words(words, sides)

    def skip_faces(self, count: int, sides: int) -> None:
        """Consume the next ``count`` faces (as drawn by :meth:`face` ``count`` times)."""
        if count <= 0:
            return
        # _scan may refill (the buffer starts again at 0): read the position after it.
        used = self._scan(count, sides)[1]
        self._pos += used

    def faces_array(self, count: int, sides: int) -> np.ndarray:
        """Draw ``count`` faces at once: the same faces ``count`` calls of :meth:`face` give.

        Low level: records nothing; batch callers record a :class:`BatchEvent`.
        """
        if count <= 0:
            return np.empty(0, dtype=np.int64)
        words, used = self._scan(count, sides)
        self._pos += used
        return _faces_from_words(words, sides)

    # -- recorded rolls -------------------------------------------------------------------

    def record(self, event: Event) -> Event:
        """Append an event to the log and return it."""
        self.log.append(event)
        return event

    def decide(self, event: RollEvent, decided: str) -> RollEvent:
        """Fill in what ``event`` decided, replacing it in the log; returns the new event."""
        # Spelled out rather than dataclasses.replace, which costs more than the roll itself.
        new = _event(
            event.expression,
            event.faces,
            event.total,
            decided,
            event.kept,
            event.dropped,
            event.wild,
            event.note,
        )
        for i in range(len(self.log) - 1, -1, -1):
            if self.log[i] is event:
                self.log[i] = new
                return new
        raise ValueError("decide(): the event is not in this Dice's log")

    def record_batch(self, expression: str, count: int, counts: Mapping[str, int]) -> BatchEvent:
        """Record one :class:`BatchEvent` for ``count`` rolls decided as ``counts``."""
        event = BatchEvent(expression, count, tuple(counts.items()))
        self.log.append(event)
        return event

    def roll(
        self,
        n: int,
        sides: int,
        modifier: int = 0,
        *,
        keep_highest: int = 0,
        keep_lowest: int = 0,
        decided: str = "",
    ) -> RollEvent:
        """Roll ``n`` dice of ``sides`` sides plus ``modifier``, optionally keeping the
        highest or lowest few; record and return the event.

        >>> Dice(1).roll(2, 12, 3, keep_highest=1).expression
        '2d12kh1+3'
        """
        if n < 1:
            raise ValueError(f"roll needs at least 1 die, got {n}")
        _check_sides(sides)
        if keep_highest and keep_lowest:
            raise ValueError("keep_highest and keep_lowest exclude each other")
        faces = tuple(self.face(sides) for _ in range(n))
        expression = f"{n}d{sides}"
        kept: tuple[int, ...] = ()
        dropped: tuple[int, ...] = ()
        if keep_highest or keep_lowest:
            keep = keep_highest or keep_lowest
            if not 1 <= keep <= n:
                raise ValueError(f"keep must be 1..{n}, got {keep}")
            order = sorted(faces, reverse=bool(keep_highest))
            kept, dropped = tuple(order[:keep]), tuple(order[keep:])
            expression += f"{'kh' if keep_highest else 'kl'}{keep}"
            base = sum(kept)
        else:
            base = sum(faces)
        if modifier:
            expression += f"{modifier:+d}"
        event = RollEvent(expression, faces, base + modifier, decided, kept, dropped)
        self.log.append(event)
        return event

    def roll_code(
        self,
        code: DieCode,
        *,
        wild: bool = True,
        wild_one: str = "complication",
        decide: Callable[[int], str] | None = None,
    ) -> RollEvent:
        """Roll a D6 die code; record and return the event.

        The regular dice are drawn first, then the wild die: while it shows 6 it is rolled
        again and added. A first wild face of 1 is, by ``wild_one``: ``complication`` (the
        total stands; the event's note says ``complication``), ``remove_highest`` (the 1 and
        the highest other die leave the total), ``none`` (just a 1). A 0D code totals its pips.
        ``decide``: what the roll decided, from its total (the event is recorded decided, as
        :meth:`decide` after the roll would leave it).
        """
        if wild_one not in WILD_ONE_SETTINGS:
            raise ValueError(f"wild_one must be one of {', '.join(WILD_ONE_SETTINGS)}")
        n = code.dice
        # Kept by the code object (codes are frozen, and a check rolls the same one each
        # time): a code's own hash is worked out in Python, per roll.
        got = _EXPRESSIONS.get((id(code), wild))
        if got is not None and got[0] is code:
            expression = got[1]
        else:
            expression = str(code) if wild else f"{code} no wild"
            if len(_EXPRESSIONS) >= 4096:
                _EXPRESSIONS.clear()
            _EXPRESSIONS[(id(code), wild)] = (code, expression)
        if n <= 0:
            total = code.pips
            event = _event(expression, (), total, decide(total) if decide else "")
        elif not wild:
            faces = tuple(self._d6(n))
            total = sum(faces) + code.pips
            event = _event(expression, faces, total, decide(total) if decide else "")
        else:
            # The regular dice, then the wild die, in one draw; while the wild die shows 6
            # it is rolled again.
            drawn = self._d6(n)
            first = last = drawn[-1]
            while last == 6:
                last = self.face(6)
                drawn.append(last)
            faces = tuple(drawn)
            chain = faces[n - 1 :]
            total = sum(faces) + code.pips
            note = ""
            kept: tuple[int, ...] = ()
            dropped: tuple[int, ...] = ()
            if first == 1 and wild_one == "complication":
                note = "complication"
            elif first == 1 and wild_one == "remove_highest":
                rest = sorted(faces[: n - 1], reverse=True)
                dropped = (1, *rest[:1])
                kept = tuple(rest[1:])
                total = sum(kept) + code.pips
                note = "wild 1: removed with the highest other die"
            decided = decide(total) if decide else ""
            event = _event(expression, faces, total, decided, kept, dropped, chain, note)
        self.log.append(event)
        return event
