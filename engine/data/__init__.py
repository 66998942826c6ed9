"""The shipped maps, scenarios and tilesets: where they are, and each by its name.

The repository keeps them in its top-level ``maps/``, ``scenarios/`` and ``assets/``
(ARCHITECTURE.md). A wheel carries the same three folders as package data of this package
(pyproject.toml maps ``engine.data.maps`` onto ``maps/`` and so on), laid out as in the
repository, so that a scenario's ``map: ../maps/chase.tmx`` and a map's
``../assets/terrain_square.tsx`` resolve the same way in both. :func:`folder` finds them:
this package's own folder (through :mod:`importlib.resources`) where they are in it, as
after ``pip install .``, else the checkout's root beside ``engine/`` (a source checkout, an
editable install).

Names: a shipped scenario is named by its file's stem (``chase``) or its file name
(``chase.yaml``); a shipped map by its file name (``hex_flat.tmj``) or its stem, where a
stem with several files picks the first of :data:`MAP_SUFFIXES` (``hex_flat``: the .tmx).

Nothing here imports the rest of the engine; :mod:`importlib.resources` is imported only
when a shipped file is looked for, so commands given a file start as before.
"""

from __future__ import annotations

from pathlib import Path

#: The scenario that `tacgrid` (no argument) and `tacgrid view` (no source) open.
DEFAULT_SCENARIO = "chase"
#: Shipped scenario files.
SCENARIO_SUFFIXES = (".yaml",)
#: Shipped map files, in the order a bare stem picks among files sharing it.
MAP_SUFFIXES = (".tmx", ".tmj", ".dd2vtt")
#: The three folders, as the repository names them.
FOLDERS = ("maps", "scenarios", "assets")


def folder() -> Path:
    """The folder holding the shipped ``maps/``, ``scenarios/`` and ``assets/``: this
    package's own where a wheel put them there, else the source checkout's root (and that
    one where neither holds them, so that a file looked for there is named in the error)."""
    from importlib.resources import files

    here = files(__name__)
    # An installed wheel is unpacked on disk: a real folder. (A zipped import would give a
    # zipfile.Path, which the map reader could not open by name: use the checkout's then.)
    if isinstance(here, Path) and (here / "scenarios").is_dir():
        return here
    return Path(__file__).resolve().parent.parent.parent


def _named(sub: str, suffixes: tuple[str, ...]) -> dict[str, Path]:
    """Each file of ``folder()/sub`` with one of ``suffixes``, by its file name and by its
    stem (the first suffix's file where several share a stem), sorted by name."""
    base = folder() / sub
    try:
        found = [p for p in base.iterdir() if p.suffix in suffixes and p.is_file()]
    except OSError:  # no such folder: nothing shipped
        return {}
    found.sort(key=lambda p: (p.stem, suffixes.index(p.suffix)))
    names: dict[str, Path] = {}
    for path in found:
        names.setdefault(path.stem, path)
        names[path.name] = path
    return dict(sorted(names.items()))


def scenarios() -> dict[str, Path]:
    """The shipped scenarios by name (``chase`` and ``chase.yaml``)."""
    return _named("scenarios", SCENARIO_SUFFIXES)


def maps() -> dict[str, Path]:
    """The shipped maps by name (``hex_flat``, ``hex_flat.tmx``, ``hex_flat.tmj``)."""
    return _named("maps", MAP_SUFFIXES)


def default_scenario() -> Path:
    """The scenario `tacgrid` opens with no argument."""
    return folder() / "scenarios" / f"{DEFAULT_SCENARIO}{SCENARIO_SUFFIXES[0]}"


def short_names(names: dict[str, Path]) -> list[str]:
    """The names to list to a user: each file once, by its stem where that picks it, else
    by its file name (``hex_flat``, ``hex_flat.tmj``)."""
    return [n for n, p in names.items() if n == p.stem or names.get(p.stem) != p]
