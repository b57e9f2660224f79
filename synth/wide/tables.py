"""The tables a wide-look frame may show: 6' x 4', 44" x 60", 30" x 22" and 6' x 3', each with markers at its
corners and edge midpoints as in ``calibration/default_table.toml`` (centres a little more than half a marker and
its white margin in from the edges)."""

from __future__ import annotations

from types import MappingProxyType

from calibration.spec import TableSpec, load_table_spec, table_spec_from_dict


def _edge_markers(
    width_mm: float, depth_mm: float, size_mm: float, inset_mm: float, first_id: int, turns: tuple[float, ...]
) -> list[dict[str, float]]:
    """Eight markers, corners and edge midpoints, going round the table from the origin corner."""
    xs = (inset_mm, width_mm / 2.0, width_mm - inset_mm)
    ys = (inset_mm, depth_mm / 2.0, depth_mm - inset_mm)
    spots = [
        (xs[0], ys[0]),
        (xs[1], ys[0]),
        (xs[2], ys[0]),
        (xs[2], ys[1]),
        (xs[2], ys[2]),
        (xs[1], ys[2]),
        (xs[0], ys[2]),
        (xs[0], ys[1]),
    ]
    return [
        {"id": first_id + k, "size_mm": size_mm, "x_mm": x, "y_mm": y, "rotation_deg": turns[k % len(turns)]}
        for k, (x, y) in enumerate(spots)
    ]


def _spec(
    width_mm: float,
    depth_mm: float,
    dictionary: str,
    size_mm: float,
    inset_mm: float,
    first_id: int,
    turns: tuple[float, ...],
) -> TableSpec:
    markers = _edge_markers(width_mm, depth_mm, size_mm, inset_mm, first_id, turns)
    return table_spec_from_dict(
        {
            "table": {"width_mm": width_mm, "depth_mm": depth_mm},
            "markers": {"dictionary": dictionary, "marker": markers},
        }
    )


# Table name -> spec. The 6' x 4' one is the bundled default; the others differ in size, dictionary, ids, marker
# size and marker turns, so nothing downstream can lean on one spec.
TABLES: MappingProxyType[str, TableSpec] = MappingProxyType(
    {
        "6x4": load_table_spec(),
        "44x60": _spec(1524.0, 1118.0, "DICT_4X4_50", 100.0, 65.0, 10, (0.0, 90.0)),
        "30x22": _spec(762.0, 559.0, "DICT_5X5_100", 70.0, 50.0, 20, (0.0, 180.0, 90.0)),
        "6x3": _spec(1829.0, 914.0, "DICT_4X4_50", 90.0, 60.0, 30, (0.0,)),
    }
)


def spec_toml(spec: TableSpec) -> str:
    """A table spec as TOML, in the layout of ``calibration/default_table.toml``."""
    lines = [
        "[table]",
        f"width_mm = {spec.width_mm}",
        f"depth_mm = {spec.depth_mm}",
        "",
        "[markers]",
        f'dictionary = "{spec.dictionary}"',
    ]
    for m in spec.markers:
        lines += ["", "[[markers.marker]]", f"id = {m.id}", f"size_mm = {m.size_mm}"]
        lines += [f"x_mm = {m.x_mm}", f"y_mm = {m.y_mm}", f"rotation_deg = {m.rotation_deg}"]
    return "\n".join(lines) + "\n"
