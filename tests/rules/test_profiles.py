"""Rule profiles: the numbers of each built-in profile, user files, and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import rules

INCH_MM = 25.4


@pytest.mark.parametrize(
    ("name", "engagement_mm", "mode", "cohesion_mm", "large_unit", "multi_contact"),
    [
        ("skirmish", 2 * INCH_MM, "chain", 2 * INCH_MM, 0, False),
        ("legion", 1.0, "leader", 3 * INCH_MM, 0, True),
        ("40k", INCH_MM, "chain", 2 * INCH_MM, 7, False),
        ("killteam", INCH_MM, "none", None, 0, False),
    ],
)
def test_builtin_profile_numbers(
    name: str, engagement_mm: float, mode: str, cohesion_mm: float | None, large_unit: int, multi_contact: bool
) -> None:
    p = rules.load_profile(name)
    assert p.name == name
    assert p.engagement.range_mm == pytest.approx(engagement_mm)
    assert p.cohesion.mode == mode
    if cohesion_mm is not None:
        assert p.cohesion.range_mm == pytest.approx(cohesion_mm)
    assert ("cohesion" in p.limits()) is (cohesion_mm is not None)
    assert p.cohesion.large_unit_size == large_unit
    assert p.multi_contact.enabled is multi_contact
    assert p.contact.gap_mm == 1.0
    assert p.overlap.gap_mm == -1.0
    assert p.calls.close_sigmas == 2.0


@pytest.mark.parametrize(
    ("name", "round_mm"),
    [
        # any size: a generic skirmish is played on whatever bases the models came with
        ("skirmish", ()),
        ("legion", (27, 50, 70, 100, 120, 150)),
        ("40k", (25, 28.5, 32, 40, 50, 60, 80, 90, 100, 130, 160)),
        ("killteam", (25, 28.5, 32, 40, 50, 60)),
    ],
)
def test_builtin_profile_base_sizes(name: str, round_mm: tuple[float, ...]) -> None:
    assert rules.load_profile(name).bases.round_mm == round_mm


def test_user_profile_names_its_base_sizes(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\nextends = "40k"\n[bases]\nround_mm = [28.5, 32]\n')
    assert rules.load_profile(path).bases.round_mm == (28.5, 32.0)


@pytest.mark.parametrize(("size", "needed"), [(1, 1), (6, 1), (7, 2), (20, 2)])
def test_40k_neighbours_needed(size: int, needed: int) -> None:
    assert rules.load_profile("40k").cohesion.neighbours_needed(size) == needed


def test_user_profile_extends_a_builtin(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text('name = "house"\nextends = "legion"\n[engagement]\nrange_mm = 76.2\n')
    p = rules.load_profile(path)
    assert p.name == "house"
    assert p.engagement.range_mm == 76.2
    assert p.cohesion.mode == "leader"
    assert p.multi_contact.enabled


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\n[engagement]\nrange_mm = "far"\n', "range_mm must be a float"),
        ('name = "x"\n[engagment]\nrange_mm = 1\n', "unknown keys"),
        ('name = "x"\n[cohesion]\nmode = "blob"\n', "mode 'blob' is not one of"),
        ('name = "x"\n[cohesion]\nrange = 5\n', "unknown keys"),
        ('name = "x"\nextends = "chess"\n', "not a built-in profile"),
        ('name = "x"\n[overlap]\ngap_mm = 2.0\n', "must be <= 0"),
        ('name = "x"\n[engagement]\nrange_mm = -1\n', "must not be negative"),
        ('name = "x"\n[cohesion]\nneighbours = -5\n', r"\[cohesion\] neighbours must be at least 1, got -5"),
        ('name = "x"\n[cohesion]\nneighbours = 0\n', r"\[cohesion\] neighbours must be at least 1, got 0"),
        ('name = "x"\n[cohesion]\nlarge_unit_neighbours = 0\n', "large_unit_neighbours must be at least 1"),
        ('name = "x"\n[cohesion]\nrange_mm = nan\n', r"\[cohesion\] range_mm must be a finite number, got nan"),
        ('name = "x"\n[calls]\nclose_sigmas = inf\n', r"\[calls\] close_sigmas must be a finite number, got inf"),
        ('name = "x"\n[movement]\nstill_mm = -inf\n', "still_mm must be a finite number"),
        ('name = "x"\n[placement]\noff_table_mm = -3\n', "off_table_mm must not be negative"),
        ('name = "x"\n[placement]\noff_top_mm = -1\n', "off_top_mm must not be negative"),
        ('name = "x"\n[movement]\nclimb_down_move_fraction = -0.5\n', "climb_down_move_fraction must not be negative"),
        ('name = "x"\n[engagement]\nrange_mm = 1' + "0" * 400 + "\n", "range_mm must be a number of at most"),
        ('name = "x"\n[engagement]\nrange_mm = 1e308\n', r"range_mm must be a number of at most 1e\+06 in size"),
        ('name = "x"\n[calls]\nclose_sigmas = 1e300\n', r"close_sigmas must be a number of at most 1e\+06 in size"),
        ('name = "x"\n[cohesion]\nneighbours = 10000000\n', r"neighbours must be a number of at most 1e\+06"),
        ('name = "x"\n[bases]\nround_mm = 25\n', r"\[bases\] round_mm must be a list of lengths in mm, got 25"),
        ('name = "x"\n[bases]\nround_mm = [25, "32"]\n', "round_mm must be a list of lengths in mm"),
        ('name = "x"\n[bases]\nround_mm = [25, true]\n', "round_mm must be a list of lengths in mm"),
        ('name = "x"\n[bases]\nround_mm = [25, 0]\n', "round_mm must list positive lengths"),
        ('name = "x"\n[bases]\nround_mm = [-25]\n', "round_mm must not be negative"),
        ('name = "x"\n[bases]\nround_mm = [nan]\n', "round_mm must be a finite number"),
        ("name = \n", "not valid TOML"),
        ("[engagement]\nrange_mm = 1\n", "missing name"),
    ],
)
def test_bad_profile_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(rules.ProfileError, match=message):
        rules.load_profile(path)


def test_unknown_profile_lists_the_builtins() -> None:
    with pytest.raises(rules.ProfileError, match="40k, killteam, legion, skirmish"):
        rules.load_profile("chess")


def test_missing_profile_file(tmp_path: Path) -> None:
    with pytest.raises(rules.ProfileError, match="no such file; expected a rule profile TOML file"):
        rules.load_profile(tmp_path / "nope.toml")
