"""The project's one error tree.

Every error a user can cause is a :class:`TacgridError`. Its message says what was given,
where, and how to fix it; the command line prints it as one line and exits with status 2.
"""

from __future__ import annotations


class TacgridError(ValueError):
    """Root of every user-facing error (bad file, bad argument, bad stat)."""


class MapError(TacgridError):
    """A map file that cannot be read or is not a usable grid."""


class ArgumentError(TacgridError):
    """A command-line argument or an API argument with a bad value.

    Raised with a ``role`` (which argument: ``"start"``, ``"goal"``, ``"turns"``, ...), the
    value as ``given`` and the ``problem``, its message is ``"<role> <given>: <problem>"``,
    and a front end names the argument its own way (:meth:`naming`; the command line by
    its flag, ``--from`` for ``start``: engine.cli). Raised with a message alone, it is
    that message.
    """

    def __init__(
        self, message: str = "", *, role: str | None = None, given: str = "", problem: str = ""
    ) -> None:
        super().__init__(message or f"{role} {given}: {problem}")
        self.role = role
        self.given = given
        self.problem = problem

    def naming(self, name: str) -> str:
        """The message with the argument called ``name`` (the role's own word where it has
        no role)."""
        if self.role is None:
            return str(self)
        return f"{name} {self.given}: {self.problem}"

    def __reduce__(self) -> str | tuple[object, ...]:
        # A role travels with the error when it is pickled (from a batch worker).
        if self.role is None:
            return super().__reduce__()
        return (_argument_error, (type(self), str(self), self.role, self.given, self.problem))


def _argument_error(
    cls: type[ArgumentError], message: str, role: str | None, given: str, problem: str
) -> ArgumentError:
    err = cls.__new__(cls)
    ArgumentError.__init__(err, message, role=role, given=given, problem=problem)
    return err


class StatError(TacgridError):
    """An unknown stat, or a stat value out of range."""


class CheckError(TacgridError):
    """A check expression that cannot be parsed."""


class ScenarioError(TacgridError):
    """A malformed scenario file."""


class WriteError(ArgumentError, OSError):
    """An output file that cannot or must not be written (see :mod:`engine.safeio`).

    Also an :class:`OSError` (with the cause's ``errno`` where there was one, and a short
    ``strerror``), so code that handles failed writes as OS errors still sees them; it
    prints as its one-line message.
    """

    def __init__(self, message: str, errno: int | None = None, reason: str | None = None):
        super().__init__(message)
        self.errno = errno
        self.strerror = reason or message

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class Stopped(KeyboardInterrupt):
    """A stop asked for by a signal: SIGINT (Ctrl-C) or SIGTERM (``kill``), numbered
    ``signum``. A KeyboardInterrupt, so a SIGTERM unwinds as Ctrl-C does: every ``finally``
    runs, :mod:`engine.safeio` removes a file half-written. The command line raises it for
    SIGTERM (``engine.cli.main``), says what was stopped (``message``, or the signal's
    name) and exits with status 128 + ``signum``."""

    def __init__(self, signum: int, message: str = "") -> None:
        super().__init__(message)
        self.signum = signum
        self.message = message


def stop_signal(exc: KeyboardInterrupt) -> tuple[int, str]:
    """The number and name of the signal that stopped a command: a :class:`Stopped` says
    which; any other KeyboardInterrupt is Ctrl-C's SIGINT."""
    import signal  # only when stopped: quick commands start without it

    signum = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
    return signum, signal.Signals(signum).name


def did_you_mean(name: str, choices: list[str] | tuple[str, ...]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or ``""``.

    >>> did_you_mean("whisperspce", ["whisperspace", "d6"])
    " (did you mean 'whisperspace'?)"
    """
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""
