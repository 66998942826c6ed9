"""Tile layers: found in document order (groups flattened, their visibility, opacity,
offsets and ``terrain_layer`` flag inherited), their data decoded and then stubbed out for
pytmx, infinite maps cropped to their painted chunks, and the model's layers built."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from engine.cells import U8, U32, Cells, pure, small, to_numpy
from engine.grid import Cell
from engine.lazy import numpy as np
from engine.mapmodel import TileLayer
from engine.tiled.common import (
    FLAG_MASK,
    GID_MASK,
    MAX_CELLS,
    MAX_CHUNKS,
    MAX_LAYER_CELLS,
    MAX_LAYERS,
    MAX_OFFSET_PIXELS,
    bool_prop,
    fail,
    float_attr,
    int_attr,
    layer_label,
)
from engine.tiled.layerdata import decode_layer_data

if TYPE_CHECKING:
    from engine.tiled.layerdata import Chunk, Gids


@dataclass
class RawLayer:
    element: ET.Element
    name: str
    raw: Gids | None  # (h, w) raw gids, finite maps
    chunks: list[Chunk] = field(default_factory=list)  # infinite
    visible: bool = True
    opacity: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)
    terrain: bool = True


def collect_tile_layers(
    path: str, root: ET.Element, width: int, height: int, infinite: bool
) -> list[RawLayer]:
    """Every tile layer of the map in document order, its data decoded."""
    _check_budget(path, root, width, height, infinite)
    raw_layers: list[RawLayer] = []

    def walk(
        node: ET.Element, visible: bool, opacity: float, off: tuple[float, float], terrain: bool
    ) -> None:
        for child in node:
            if child.tag not in ("layer", "group", "objectgroup", "imagelayer"):
                continue
            vis = visible and child.get("visible", "1") != "0"
            opa = opacity * float_attr(child, "opacity", 1.0)
            o = (off[0] + float_attr(child, "offsetx"), off[1] + float_attr(child, "offsety"))
            if max(abs(o[0]), abs(o[1])) > MAX_OFFSET_PIXELS:  # also 1e308 + 1e308 = inf
                raise fail(
                    path,
                    f"{layer_label(child)} is offset by {o[0]:g},{o[1]:g} px",
                    f"use offsets within +-{MAX_OFFSET_PIXELS} px (Layer Properties in Tiled)",
                )
            flag = bool_prop(child, "terrain_layer")
            ter = terrain and (flag is None or flag)
            # pytmx cannot parse float offsets: it gets rounded ones, we keep the floats.
            for attr in ("offsetx", "offsety"):
                if child.get(attr) is not None:
                    child.set(attr, str(round(float_attr(child, attr))))
            if child.tag == "group":
                walk(child, vis, opa, o, ter)
            elif child.tag == "layer":
                raw_layers.append(
                    _read_layer(path, child, width, height, infinite, vis, opa, o, ter)
                )

    walk(root, True, 1.0, (0.0, 0.0), True)
    return raw_layers


def _check_budget(path: str, root: ET.Element, width: int, height: int, infinite: bool) -> None:
    """Refuse, before anything is decoded, a map whose layers or chunks declare more cells
    than :data:`MAX_LAYER_CELLS` all together (each costs 4 bytes or more)."""
    layers = sum(1 for _ in root.iter("layer"))
    if layers > MAX_LAYERS:
        raise fail(
            path, f"has {layers} tile layers; tacgrid reads at most {MAX_LAYERS}", "merge layers"
        )
    if not infinite:
        cells = layers * width * height
        what = f"{layers} tile layers of {width}x{height}"
    else:
        chunks = list(root.iter("chunk"))
        if len(chunks) > MAX_CHUNKS:
            raise fail(path, f"has {len(chunks)} chunks; tacgrid reads at most {MAX_CHUNKS}")
        cells = 0
        for ch in chunks:
            cw, chh = int_attr(path, ch, "width"), int_attr(path, ch, "height")
            if cw <= 0 or chh <= 0:
                raise fail(path, f"a chunk of bad size {cw}x{chh}", "save it again from Tiled")
            cells += cw * chh
        what = f"{len(chunks)} chunks"
    if cells > MAX_LAYER_CELLS:
        raise fail(
            path,
            f"{what} make {cells} cells; tacgrid reads at most {MAX_LAYER_CELLS} "
            "in all layers together",
            "use fewer or smaller layers",
        )


def _read_layer(
    path: str,
    el: ET.Element,
    width: int,
    height: int,
    infinite: bool,
    visible: bool,
    opacity: float,
    offset: tuple[float, float],
    terrain: bool,
) -> RawLayer:
    label = layer_label(el)
    data = el.find("data")
    lay = RawLayer(
        element=el,
        name=el.get("name", ""),
        raw=None,
        visible=visible,
        opacity=opacity,
        offset=offset,
        terrain=terrain,
    )
    if data is None:
        # An empty layer; pytmx still wants a <data> element to read.
        lay.raw = Cells.zeros((height, width), U32) if not infinite else None
        ET.SubElement(el, "data", encoding="csv").text = "0"
        return lay
    if not infinite and data.find("chunk") is None:
        lw = int_attr(path, el, "width", width)
        lh = int_attr(path, el, "height", height)
        if (lw, lh) != (width, height):
            raise fail(path, f"{label} is {lw}x{lh} but the map is {width}x{height}")
        el.set("width", str(width))  # pytmx needs them, even where the file left them out
        el.set("height", str(height))
    lay.raw, lay.chunks = decode_layer_data(path, data, label, width, height, infinite)
    _stub_data(data)
    return lay


def _stub_data(data: ET.Element) -> None:
    """pytmx gets an empty layer; it would only re-decode what we already have."""
    for child in list(data):
        data.remove(child)
    data.attrib.clear()
    data.set("encoding", "csv")
    data.text = "0"


def crop_infinite(
    path: str,
    root: ET.Element,
    raw_layers: list[RawLayer],
    width: int,
    height: int,
    notes: list[str],
) -> tuple[int, int, Cell]:
    """Crop an infinite map to its painted chunks: its new width, height and the Tiled
    coordinates of cell (0, 0). Each layer gets a full array; the XML says finite now."""
    chunks = [ch for lay in raw_layers for ch in lay.chunks]
    if chunks:
        x0 = min(x for x, _, _ in chunks)
        y0 = min(y for _, y, _ in chunks)
        x1 = max(x + a.shape[1] for x, _, a in chunks)
        y1 = max(y + a.shape[0] for _, y, a in chunks)
    else:
        x0 = y0 = 0
        x1, y1 = max(width, 1), max(height, 1)
    width, height = x1 - x0, y1 - y0
    if width * height > MAX_CELLS:
        raise fail(
            path,
            f"infinite map spans {width}x{height} cells; tacgrid reads at most {MAX_CELLS}",
        )
    if width * height * len(raw_layers) > MAX_LAYER_CELLS:
        raise fail(
            path,
            f"infinite map: {len(raw_layers)} layers of {width}x{height} cells; "
            f"tacgrid reads at most {MAX_LAYER_CELLS} in all layers together",
        )
    for lay in raw_layers:
        lay.raw = _paste(lay.chunks, x0, y0, (height, width))
        lay.element.set("width", str(width))
        lay.element.set("height", str(height))
    root.set("width", str(width))
    root.set("height", str(height))
    root.set("infinite", "0")
    notes.append(
        f"infinite map: cropped to its painted chunks, {width}x{height} cells; "
        f"cell (0,0) is Tiled's ({x0},{y0})"
    )
    return width, height, (x0, y0)


def _paste(chunks: list[Chunk], x0: int, y0: int, shape: tuple[int, int]) -> Gids:
    """An infinite layer's chunks (Tiled's x, y of each) in one (h, w) array whose cell
    (0, 0) is Tiled's (x0, y0); cells no chunk covers are 0."""
    height, width = shape
    if small(height * width) and all(isinstance(a, Cells) for _, _, a in chunks):
        full = Cells.zeros(shape, U32)
        for x, y, a in chunks:
            assert isinstance(a, Cells)
            ah, aw = a.shape
            for r in range(ah):
                at = (y - y0 + r) * width + x - x0
                full.values[at : at + aw] = a.values[r * aw : (r + 1) * aw]
        return full
    out = np.zeros(shape, dtype=np.uint32)
    for x, y, a in chunks:
        ah, aw = a.shape
        out[y - y0 : y - y0 + ah, x - x0 : x - x0 + aw] = to_numpy(a)
    return out


def split_flags(raw: Gids) -> tuple[Gids, Gids]:
    """Raw gids as (gids without flags, uint32; Tiled's flip/rotation bits >> 28, uint8)."""
    if pure(raw):
        assert isinstance(raw, Cells)
        gids = array(U32, [g & GID_MASK for g in raw.values])
        flags = array(U8, [(g & FLAG_MASK) >> 28 for g in raw.values])
        return Cells(gids, raw.shape), Cells(flags, raw.shape)
    arr = to_numpy(raw)
    return (arr & GID_MASK).astype(np.uint32), ((arr & FLAG_MASK) >> 28).astype(np.uint8)


def tile_layer(lay: RawLayer, shape: tuple[int, int]) -> TileLayer:
    """The model's layer: gids and Tiled's flip/rotation bits apart."""
    gids, flags = split_flags(lay.raw if lay.raw is not None else Cells.zeros(shape, U32))
    return TileLayer(
        name=lay.name,
        gids=gids,
        flags=flags,
        visible=lay.visible,
        opacity=lay.opacity,
        offset=lay.offset,
        terrain=lay.terrain,
    )
