"""The GM's acts for a token (issue 38): actions besides moving, taken every turn.

``C`` opens the chooser for the selected token: the panel lists its system's acts
(``tacgrid systems``: each with the actions it takes and the seed's words), numbered;
``1``-``9`` gives the token one more of that act, ``0`` (or ``Backspace``/``Delete``) clears
them, ``C``, ``Enter`` or ``Esc`` closes the chooser. Each change is one undoable
``token_edit`` event (:meth:`Simulation.edit_token` with ``acts``): the token takes them
every turn from then on, as a scenario token's ``acts``, and its reach and hover path are
priced with them at once. An act the system refuses (an unknown one, more actions than a
turn has, a pace of the token's that they leave no room for, a flier's) is the panel's
message; nothing changes.
"""

from __future__ import annotations

from typing import Any

import pygame

from engine.viewer.draw import DIM, TEXT

PICK = (150, 230, 170)
#: The keys that give the numbered act (the number row and the keypad).
_DIGITS = {getattr(pygame, f"K_{n}"): n for n in range(10)} | {
    getattr(pygame, f"K_KP{n}"): n for n in range(10)
}


def acts_text(acts: tuple[str, ...]) -> str:
    """A token's acts as the panel says them: ``attack x2, interact`` (counted, in order)."""
    out: list[str] = []
    for name in dict.fromkeys(acts):
        n = acts.count(name)
        out.append(name + (f" x{n}" if n > 1 else ""))
    return ", ".join(out)


class ActPicker:
    """The chooser's state (open or not) and its keys and panel lines; it works on the
    window's selected token."""

    def __init__(self, viewer: Any) -> None:
        self.v = viewer
        self.open = False

    def toggle(self) -> None:
        """``C``: open the chooser on the selected token (or close it)."""
        v = self.v
        if self.open:
            self.open = False
            return
        if v.selected is None:
            v.message = "select a token, then C gives it acts"
            return
        system = v.sim.system
        if not system.acts:
            v.message = (
                f"{system.name} declares no actions besides moving (its "
                f"{system.turn_name} is its move)"
            )
            return
        self.open = True
        v.message = ""

    def key(self, ev: Any) -> bool:
        """A key while the chooser is open (True: taken). Keys it does not use pass on
        (Tab picks the next token, whose acts the chooser then shows)."""
        v = self.v
        if not self.open:
            return False
        k = ev.key
        if ev.mod & pygame.KMOD_CTRL:
            return False  # undo, redo, save: the window's
        if v.selected is None:
            self.open = False
            return False
        if k in (pygame.K_c, pygame.K_ESCAPE, pygame.K_RETURN, pygame.K_KP_ENTER):
            self.open = False
        elif k in (pygame.K_BACKSPACE, pygame.K_DELETE) or _DIGITS.get(k) == 0:
            self.give(v.selected, ())
        elif k in _DIGITS:
            acts = v.sim.system.acts
            n = _DIGITS[k]
            if n > len(acts):
                v.message = f"{v.sim.system.name} has {len(acts)} acts: 1-{len(acts)}"
            else:
                self.give(v.selected, (*v.sim.specs[v.selected].acts, acts[n - 1].name))
        else:
            return False
        return True

    def give(self, tid: str, acts: tuple[str, ...]) -> bool:
        """``tid`` takes ``acts`` every turn from now on (one undoable event); False, with
        the system's reason as the message, where they are refused."""
        from engine.errors import TacgridError

        v = self.v
        if not acts and not v.sim.specs[tid].acts:
            v.message = f"{tid} takes no other action"
            return False
        try:
            v.table.record(lambda: v.sim.edit_token(tid, acts=acts))
        except TacgridError as exc:
            v.message = str(exc)
            return False
        v.message = (
            f"{tid} takes {acts_text(acts)} each turn" if acts else f"{tid} takes no other action"
        )
        return True

    def lines(self) -> list[tuple[str, tuple[int, int, int]]]:
        """The chooser's lines in the panel: the system's acts, numbered."""
        v = self.v
        if not self.open or v.selected is None:
            return []
        system = v.sim.system
        n = len(system.acts)
        limit = system.act_limit
        out = [
            (f"acts for {v.selected} (1-{n} add, 0 clears, C done)", PICK),
            (
                f"  a {system.turn_name}: {system.actions_per_turn} action"
                + ("s" if system.actions_per_turn != 1 else "")
                + (f", acts take at most {limit}" if limit is not None else ""),
                DIM,
            ),
        ]
        for i, act in enumerate(system.acts, 1):
            took = f"{act.actions} action" + ("s" if act.actions != 1 else "")
            out.append((f"  {i} {act.name} ({took})", TEXT))
            if act.help:
                out.append((f"      {act.help}", DIM))
        return out
